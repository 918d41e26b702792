"""Small helpers the paper notebooks share: read the DuckDB file, pre-aggregate in
SQL (box-plot quantiles, CCDF points) so Altair stays far below its 5,000-row limit,
save charts as SVG + PNG + interactive HTML, draw an explanatory empty state, and
print our numbers beside the paper's.  The papers' claims and our verdicts are
``labfig.findings`` (one definition for the notebooks and results/findings.csv).

Notebooks run with ``notebooks/`` as working directory, so ``import labfig`` works
without path tricks.  Inputs come from the environment (papermill parameters
override them): ``MPTCP_LAB_DB`` (the DuckDB file) and ``MPTCP_LAB_FIGURES``
(where figures go).
"""
from labfig.db import connect, query, runs_of
from labfig.charts import (
    boxplot,
    ccdf_chart,
    empty_state,
    render,
    save,
)
from labfig.compare import side_by_side

__all__ = [
    "connect", "query", "runs_of", "boxplot", "ccdf_chart", "empty_state", "render", "save",
    "side_by_side",
]
