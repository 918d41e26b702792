"""The papers' claims checked against the lab's runs.

``findings.claims``: one module per paper, each claim as data (the paper's words and
place, its band, the comparator, the configuration); ``findings.stats``: the seeded
bootstrap; ``findings.evaluate``: the table (``results/findings.csv``) and its Markdown.
Everything reads the derived layer of ``pipeline.derived``.

    python -m findings --db results/lab.duckdb --out results/findings.csv --checks results/lab-checks.csv
"""
from .claim import VERDICTS, Claim
from .claims import CHECKS, CLAIMS, PAPERS
from .evaluate import COLUMNS, findings, markdown, verdict_lines, write_csv

__all__ = ["CHECKS", "CLAIMS", "COLUMNS", "PAPERS", "VERDICTS", "Claim", "findings", "markdown", "verdict_lines",
           "write_csv"]
