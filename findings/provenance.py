"""What a database's runs are: per campaign, how many, at which scale and seed, when,
on which host and from which commit — from each run's meta.json as the pipeline lifted it
into the runs table's columns.

One query, read by the findings (a ``data`` column on every row), the notebooks (each
figure's caption) and the report (its first screen), so the three say the same thing.
"""
from __future__ import annotations

import duckdb

from pipeline.derived import runs_study_sql

FIELDS = ("campaign", "study", "runs", "scales", "seeds", "first", "last", "stalled", "commits", "hosts")

SQL = """
SELECT coalesce(campaign, '?'), any_value({study}), count(*),
       coalesce(string_agg(DISTINCT scale, ', '), 'none: runs made alone'),
       coalesce(string_agg(DISTINCT campaign_seed::VARCHAR, ', '), '–'),
       min(started_at)[:10], max(started_at)[:10], count(*) FILTER (WHERE stalled),
       coalesce(string_agg(DISTINCT left(repo_commit, 7), ', '), '–'),
       coalesce(string_agg(DISTINCT host, ', '), '–')
FROM runs GROUP BY ALL ORDER BY 1"""


def campaigns(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """One dict per campaign (``FIELDS``); empty when the database has no ``runs`` table."""
    try:
        return [dict(zip(FIELDS, r)) for r in con.execute(SQL.format(study=runs_study_sql(con))).fetchall()]
    except duckdb.Error:
        return []


def describe(c: dict) -> str:
    """One campaign in words: 'ferlin: 150 runs, standard scale, seed 2015, captured
    2026-11-26 on lab-1 from commit 8feb289'."""
    when = c["first"] if c["first"] == c["last"] else f"{c['first']} to {c['last']}"
    scale = c["scales"] if c["scales"].startswith("none") else f"{c['scales']} scale"
    text = (f"{c['campaign']}: {c['runs']} runs, {scale}, seed {c['seeds']}, captured {when or '?'}"
            f" on {c['hosts']} from commit {c['commits']}")
    return text + (f" ({c['stalled']} stalled)" if c["stalled"] else "")


def by_paper(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """study (paper) -> its campaigns described, '; '-joined."""
    out: dict[str, list[str]] = {}
    for c in campaigns(con):
        p = c["study"]
        if p:
            out.setdefault(p, []).append(describe(c))
    return {p: "; ".join(v) for p, v in out.items()}


def runs_per_group(ns: list[int]) -> str:
    """'5' or '5–10': the runs behind each compared group (the smallest role of each)."""
    if not ns:
        return ""
    lo, hi = min(ns), max(ns)
    return str(lo) if lo == hi else f"{lo}–{hi}"
