"""Helpers the paper notebooks share: read the DuckDB file through the derived layer
(``pipeline.derived``), pre-aggregate in SQL (box-plot quantiles, CCDF points) so Altair
stays far below its 5,000-row limit, draw our numbers with the papers' beside them
(marks labelled "paper"), save charts as SVG + PNG + interactive HTML, and draw an
explanatory empty state. The claims and verdicts are the ``findings`` package's (one
definition for the notebooks and results/findings.csv).

A notebook opens its lab first (``open_lab(notebook, db, figures, findings)``: its
parameters, handed over explicitly); every helper reads the opened lab.
"""
from labfig.charts import boxplot, ccdf_chart, empty_state, estimates, render, save
from labfig.db import connect, left_out, query, runs_of, usable
from labfig.session import open_lab

__all__ = [
    "open_lab", "connect", "query", "runs_of", "usable", "left_out", "boxplot", "ccdf_chart", "empty_state",
    "estimates", "render", "save",
]
