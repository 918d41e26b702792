"""Our numbers beside the paper's, and a verdict per finding."""
from __future__ import annotations

from dataclasses import dataclass

import polars as pl


@dataclass
class Finding:
    """One claim of a paper, where it is stated, and whether our data agree."""

    claim: str
    source: str  # e.g. "Chen et al. §4.1, Fig. 4"
    ours: str  # what we measured, in words/numbers
    agrees: bool | None  # None: our database has no runs to decide
    why: str = ""  # why we differ, when we do

    @property
    def verdict(self) -> str:
        return {True: "agrees", False: "differs", None: "no data"}[self.agrees]


def findings_table(findings: list[Finding]) -> pl.DataFrame:
    """The findings as a table (one row each) for display in the notebook."""
    return pl.DataFrame(
        {
            "finding (paper)": [f.claim for f in findings],
            "where": [f.source for f in findings],
            "ours": [f.ours for f in findings],
            "verdict": [f.verdict for f in findings],
            "why it differs": [f.why for f in findings],
        }
    )


def fmt_mean_se(mean: float | None, se: float | None, digits: int = 1) -> str:
    if mean is None:
        return "–"
    return f"{mean:.{digits}f} ± {se or 0:.{digits}f}"


def side_by_side(paper: pl.DataFrame, ours: pl.DataFrame, on: list[str],
                 paper_col: str = "paper", ours_col: str = "ours") -> pl.DataFrame:
    """Join the paper's typed-in values with ours on ``on`` (missing ours -> '–')."""
    out = paper.join(ours, on=on, how="left")
    return out.with_columns(pl.col(ours_col).fill_null("–")).select(on + [paper_col, ours_col])
