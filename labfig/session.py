"""The lab a notebook draws from, opened once by its first cell (``open_lab``): the
DuckDB file, the folder its figures go to, the folder of the workflow's findings tables
(if any) and the notebook's name. Everything in ``labfig`` reads it from here: the
notebook hands its parameters over explicitly, nothing travels through the environment."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl


@dataclass(frozen=True)
class Lab:
    notebook: str  # the paper's id ("chen"), or "explore"
    db: Path
    figures: Path
    findings: Path | None = None  # holds findings.csv, lab-checks.csv, findings-groups.csv
    # (findings, lab checks, group estimates) computed by the caller when there is no
    # findings folder (a notebook run outside the workflow: papers.notebook computes them)
    tables: tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame] | None = None


_current: Lab | None = None


def open_lab(notebook: str, db: str | Path, figures: str | Path, findings: str | Path | None = None,
             tables: tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame] | None = None) -> Lab:
    """Make ``db`` (and ``figures``, ``findings``) the lab this process draws from."""
    global _current
    _current = Lab(notebook, Path(db).resolve(), Path(figures).resolve(),
                   Path(findings).resolve() if findings else None, tables)
    return _current


def lab() -> Lab:
    if _current is None:
        raise RuntimeError("no lab opened: call labfig.open_lab(notebook, db, figures) first (a notebook's first cell)")
    return _current


def opened() -> Lab | None:
    return _current
