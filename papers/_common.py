"""Small helpers the papers' claim modules share (selection by keys, group building)."""
from __future__ import annotations

from typing import Iterator

import numpy as np
import polars as pl

from findings.claim import PaperNumber
from findings.inventory import Band, declared_tolerance
from findings.measure import Group, choose_cc

def one_mptcp_cc(df: pl.DataFrame, prefer: tuple[str, ...]) -> tuple[pl.DataFrame, str]:
    """The single-path runs and the MPTCP runs of one congestion control: the first of
    ``prefer`` (the paper's first) that the runs have. Congestion controls are never
    pooled; the note says which one the row used."""
    cc = choose_cc(set(df.filter(pl.col("transport") == "MPTCP")["congestion_control"].drop_nulls().to_list()), prefer)
    # no congestion control recorded at all: the MPTCP runs without one are the only group
    same_cc = pl.col("congestion_control").is_null() if cc is None else pl.col("congestion_control") == cc
    keep_ = (pl.col("transport") != "MPTCP") | same_cc
    return df.filter(keep_), (f"MPTCP runs with {cc}" if cc else "")


def by(df: pl.DataFrame, *keys: str) -> Iterator[tuple[tuple, pl.DataFrame]]:
    """Groups of ``df`` by ``keys``, in sorted key order (nulls last)."""
    if not df.height:
        return
    for key, g in sorted(df.group_by(list(keys)), key=lambda kv: tuple((x is None, x) for x in kv[0])):
        yield key, g


def group(label: str, *, checks: tuple[str, ...] = (), **roles: np.ndarray) -> Group | None:
    """A compared group resting on ``checks`` (``Group.checks``), or None when none of its
    roles has a run."""
    if not any(len(v) for v in roles.values()):
        return None
    return Group(label, {k: np.asarray(v, dtype=float) for k, v in roles.items()}, checks=tuple(checks))


def keep(*groups: Group | None) -> list[Group]:
    return [g for g in groups if g is not None]


def sel(df: pl.DataFrame, **eq) -> pl.DataFrame:
    """Rows of ``df`` whose columns equal the given values (None: is null)."""
    for k, v in eq.items():
        df = df.filter(pl.col(k).is_null() if v is None else pl.col(k) == v)
    return df


def derived_number(value: float, text: str, no_effect: float = 0.0) -> PaperNumber:
    """A group's own number derived from numbers the paper prints without a spread (a
    difference of two caption medians): its band by the inventory's declared tolerance."""
    tol, why = declared_tolerance(value, no_effect)
    return PaperNumber(value, text, Band(value - tol, value + tol, f"derived from the paper's numbers; {why}"),
                       abs(value - no_effect))
