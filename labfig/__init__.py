"""Helpers the paper notebooks share: read the DuckDB file through the derived layer
(``pipeline.derived``), pre-aggregate in SQL (box-plot quantiles, CCDF points) so Altair
stays far below its 5,000-row limit, draw our numbers with the papers' beside them
(marks labelled "paper"), save charts as SVG + PNG + interactive HTML, draw an
explanatory empty state, and record the numbers a notebook prints for a claim. The
claims and verdicts are the ``findings`` package (one definition for the notebooks and
results/findings.csv).

Inputs come from the environment (papermill parameters override them):
``MPTCP_LAB_DB`` (the DuckDB file) and ``MPTCP_LAB_FIGURES`` (where figures go).
"""
from labfig.charts import boxplot, ccdf_chart, empty_state, estimates, render, save
from labfig.compare import checks_of, findings_of, shown
from labfig.db import connect, left_out, query, runs_of, usable

__all__ = [
    "connect", "query", "runs_of", "usable", "left_out", "boxplot", "ccdf_chart", "empty_state", "estimates", "render", "save",
    "shown", "findings_of", "checks_of",
]
