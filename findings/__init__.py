"""The papers' claims checked against the lab's runs.

Each paper's claims live with the paper (``papers/<paper>/inventory.yaml``: what the
paper says; ``papers/<paper>/claims.py``: how we measure it); this package is the
engine: ``inventory`` (the paper's number -> its band, one set of reading rules),
``claim`` (the two verdicts and the multiple-group rule), ``stats`` (the statistics and
their interval methods), ``measure`` (the derived tables a claim reads), ``evaluate``
(the tables and their Markdown: ``findings(db, claims)`` judges the claims it is handed).
Everything reads the derived layer of ``pipeline.derived``. The engine knows no paper:
the papers plug in from above (``papers.registry``: every paper's rows in inventory
order; ``papers.judge``; the command ``python -m papers findings``).
"""
from .claim import VERDICTS, Claim
from .evaluate import COLUMNS, GROUP_COLUMNS, findings, markdown, write_csv

__all__ = ["COLUMNS", "GROUP_COLUMNS", "VERDICTS", "Claim", "findings", "markdown", "write_csv"]
