"""The papers' claims judged on a lab database: the registry's claims (every paper's, or
one paper's) handed to the findings engine (``findings.evaluate``), which knows no paper."""
from __future__ import annotations

import polars as pl

from findings.evaluate import findings as judge
from findings.stats import RESAMPLES

from .registry import all_claims, paper_claims


def findings(db, paper: str | None = None, resamples: int = RESAMPLES) -> tuple[pl.DataFrame, pl.DataFrame,
                                                                                 pl.DataFrame]:
    """(findings, lab checks, per-group estimates) of ``db``, every paper or one."""
    return judge(db, all_claims() if paper is None else paper_claims(paper), resamples)
