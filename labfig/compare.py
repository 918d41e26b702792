"""Our numbers beside the paper's (the verdicts per claim are in ``labfig.findings``)."""
from __future__ import annotations

import polars as pl


def fmt_mean_se(mean: float | None, se: float | None, digits: int = 1) -> str:
    if mean is None:
        return "–"
    return f"{mean:.{digits}f} ± {se or 0:.{digits}f}"


def side_by_side(paper: pl.DataFrame, ours: pl.DataFrame, on: list[str],
                 paper_col: str = "paper", ours_col: str = "ours") -> pl.DataFrame:
    """Join the paper's typed-in values with ours on ``on`` (missing ours -> '–')."""
    out = paper.join(ours, on=on, how="left")
    return out.with_columns(pl.col(ours_col).fill_null("–")).select(on + [paper_col, ours_col])
