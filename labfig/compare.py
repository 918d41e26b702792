"""Our numbers beside the paper's: the numbers a notebook prints for a claim (recorded so a
test can check they equal results/findings.csv), and the paper's findings section."""
from __future__ import annotations

import json
import math

import polars as pl

from .charts import figures_dir

SHOWN = "shown.json"


def fmt_mean_se(mean: float | None, se: float | None, digits: int = 1) -> str:
    if mean is None:
        return "–"
    return f"{mean:.{digits}f} ± {se or 0:.{digits}f}"


def shown(claim_id: str, group: str, value: float | None) -> float | None:
    """Record a number this notebook prints for a claim (``group``: the claim's group label,
    as the findings table names it); tests/test_notebooks.py checks that each equals the
    findings computation on the same database. Returns ``value`` for printing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return value
    path = figures_dir() / SHOWN
    data = json.loads(path.read_text()) if path.exists() else []
    data = [d for d in data if (d["id"], d["group"]) != (claim_id, group)]
    data.append({"id": claim_id, "group": group, "value": float(value)})
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)
    return value


def findings_of(paper: str, db: str) -> pl.DataFrame:
    """The paper's rows of the findings table, computed from the same database."""
    from findings import findings

    return findings(db, paper=paper)


def checks_of(paper: str, db: str) -> pl.DataFrame:
    from findings import findings

    return findings(db, paper=paper, kind="lab-check")
