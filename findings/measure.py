"""What a claim's computation returns, and the selections the claims share.

A claim's ``measure(facts)`` picks runs from the derived layer (``pipeline.derived``:
``run_facts``, ``primary_pairs``, ``cc_pairs``, ``run_delivery``) and returns the
compared groups: per group, the per-run values of each role (``{"mp": [...],
"sp_wifi": [...]}``) and the paper's statistic over them (a ``findings.stats.Stat``,
which also chooses the interval method). Nothing here re-derives a run-level quantity.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import duckdb
import numpy as np
import polars as pl

from pipeline.frames import frame

from .provenance import by_paper

if TYPE_CHECKING:  # pragma: no cover
    from .claim import PaperNumber
from .stats import Stat


@dataclass
class Group:
    label: str  # e.g. "att, 4 MB" or "RTT 40 ms"
    samples: dict[str, np.ndarray]  # role -> per-run values (rows: runs or pairs)
    # the conditions this group's runs were measured under: ids of lab checks or of the
    # paper's condition statements (the table or figure the claim's number comes from);
    # the group is judged only when every one of them holds (findings.evaluate)
    checks: tuple[str, ...] = ()
    # the paper's own number for this group, where it prints one per group (claim.PaperNumber)
    number: "PaperNumber | None" = None


@dataclass
class Measure:
    groups: list[Group] = field(default_factory=list)
    statistic: Stat | None = None
    missing: str = ""  # why there is no group to compute (required when groups is empty)
    note: str = ""  # what was left out (stalled runs, ...) or which configuration was used


class Facts:
    """The derived tables a claim reads, loaded once per database."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        # the paper a run belongs to is the study its campaign declares (run_config.study:
        # the derived layer's one rule, which knows no paper by name)
        def with_paper(df: pl.DataFrame) -> pl.DataFrame:
            return df.with_columns(paper=pl.col("study") if "study" in df.columns else pl.lit(None, pl.Utf8))
        self.runs = with_paper(frame(con, "SELECT * FROM run_facts ORDER BY run_id"))
        self.primary_pairs = with_paper(frame(con, "SELECT * FROM primary_pairs ORDER BY lte_run"))
        self.cc_pairs = with_paper(frame(con, "SELECT * FROM cc_pairs ORDER BY decoupled_run"))
        self.outage_delivery = frame(con, "SELECT * FROM outage_delivery ORDER BY run_id, down_s")
        self.delivery = frame(con, "SELECT * FROM run_delivery ORDER BY run_id, second, side")
        self.rtt = frame(con, "SELECT * FROM run_rtt ORDER BY run_id, side")
        self.provenance = by_paper(con)

    def window_goodput(self, t0: float, t1: float, side: str | None = None) -> pl.DataFrame:
        """Per run: Mbit/s of new data the client received in the seconds [t0, t1) after
        the first SYN (one path side, or both): ``run_id``, ``window_mbit``."""
        d = self.delivery.filter((pl.col("second") >= t0) & (pl.col("second") < t1))
        if side is not None:
            d = d.filter(pl.col("side") == side)
        return d.group_by("run_id").agg(window_mbit=pl.col("payload_bytes").sum() * 8 / (t1 - t0) / 1e6)

    def of(self, paper: str, outages: bool = False) -> tuple[pl.DataFrame, str]:
        """One paper's runs that can be used: stalled runs are left out (and counted);
        runs with scheduled link outages only when ``outages`` (handover claims)."""
        r = self.runs.filter(pl.col("paper") == paper)
        r = r.filter(pl.col("has_outages").fill_null(False) == outages)
        stalled = r.filter(pl.col("stalled").fill_null(False))
        note = f"{stalled.height} stalled run(s) left out" if stalled.height else ""
        return r.filter(pl.col("usable")), note


def values(df: pl.DataFrame, column: str) -> np.ndarray:
    """Per-run values of one column (runs without a value are not samples)."""
    return df[column].drop_nulls().drop_nans().to_numpy().astype(float) if df.height else np.zeros(0)


def pairs(df: pl.DataFrame, num: str, den: str) -> np.ndarray:
    """Per-run (numerator, denominator) rows for pooled fractions."""
    d = df.filter(pl.col(num).is_not_null() & pl.col(den).is_not_null() & (pl.col(den) > 0))
    return d.select(num, den).to_numpy().astype(float).reshape(-1, 2)


def choose_cc(have: set[str], prefer: tuple[str, ...]) -> str | None:
    """The one MPTCP congestion control a paper's rows and figures use, of those its runs
    ``have``: the first of ``prefer`` (the paper's own first), else the first by name.
    Congestion controls are never pooled (papers._common.one_mptcp_cc, labfig.db.mptcp_cc)."""
    return next((c for c in prefer if c in have), min(have) if have else None)


def join_notes(*notes: str) -> str:
    return "; ".join(n for n in notes if n)
