"""Claims -> the findings table: our value, its 95 % CI, the verdict, and why.

Evaluation only: the claims are data (``findings.claims``), the statistics are in
``findings.stats``, the run-level quantities in ``pipeline.derived``.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import duckdb
import polars as pl

from pipeline import derived

from .claim import AGREE, DISAGREE, INCONCLUSIVE, NO_DATA, NOT_REPRODUCIBLE, Claim, num
from .measure import Facts, Measure
from .stats import MIN_RUNS, RESAMPLES, Estimate, bootstrap, seed_of

COLUMNS = ["id", "paper", "kind", "claim", "source", "paper_value", "config", "statistic", "group", "our_value",
           "ci_low", "ci_high", "unit", "tolerance", "verdict", "reason", "n_runs", "detail"]
SCHEMA = {c: pl.Utf8 for c in COLUMNS} | {"our_value": pl.Float64, "ci_low": pl.Float64,
                                          "ci_high": pl.Float64, "n_runs": pl.Int64}


def _fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.3g}" if abs(x) < 1e4 else f"{x:.0f}"


def ci_text(value: float | None, lo: float | None, hi: float | None) -> str:
    return f"{_fmt(value)} [{_fmt(lo)}, {_fmt(hi)}]"


def _row(c: Claim, verdict: str, reason: str, value=None, lo=None, hi=None, n=0, detail="", group="") -> dict:
    return {"id": c.id, "paper": c.paper, "kind": c.kind, "claim": c.quote, "source": c.source,
            "paper_value": c.paper_value, "config": c.config, "statistic": c.statistic, "group": group,
            "our_value": value, "ci_low": lo, "ci_high": hi, "unit": c.unit, "tolerance": c.tolerance,
            "verdict": verdict, "reason": reason, "n_runs": n, "detail": detail}


def evaluate_claim(c: Claim, facts: Facts | None, resamples: int = RESAMPLES) -> dict:
    """One row: the deciding group's value and CI, the verdict over all groups."""
    if c.not_reproducible:
        return _row(c, NOT_REPRODUCIBLE, c.not_reproducible)
    if facts is None or c.measure is None:
        return _row(c, NO_DATA, "the database cannot be read as a lab database")
    try:
        m = c.measure(facts)
    except Exception as e:  # one claim must never take the table down with it
        return _row(c, NO_DATA, f"computation failed: {type(e).__name__}: {e}")
    if not m.groups:
        return _row(c, NO_DATA, m.missing or "no runs for this claim", detail=m.note)
    done, short = [], []
    for label, est in group_estimates(m, c.id, resamples):
        if isinstance(est, str):
            short.append(f"{label} ({est})")
        else:
            done.append((label, est, c.verdict_band.verdict(est.lo, est.hi)))
    parts = [f"{label}: {ci_text(e.value, e.lo, e.hi)}, n = {e.n}, {v}" for label, e, v in done]
    if short:
        parts.append(f"not computed (fewer than {MIN_RUNS} runs or no value): " + ", ".join(short))
    if m.note:
        parts.append(m.note)
    detail = "; ".join(parts)
    if not done:
        return _row(c, NO_DATA, f"too few runs: every compared group needs ≥ {MIN_RUNS} runs "
                                f"({', '.join(short)}); the standard scale has 5", detail=detail)
    verdicts = [v for _, _, v in done]
    if DISAGREE in verdicts:
        label, est, _ = next(x for x in done if x[2] == DISAGREE)
        verdict = DISAGREE
        reason = (f"{label}: our 95 % CI {ci_text(est.value, est.lo, est.hi)} lies outside the band"
                  + (f". Likely why: {c.mismatch}" if c.mismatch else ""))
    elif all(v == AGREE for v in verdicts):
        label, est, _ = min(done, key=lambda x: c.verdict_band.margin(x[1].lo, x[1].hi))
        verdict, reason = AGREE, ""
    else:
        label, est, _ = next(x for x in done if x[2] == INCONCLUSIVE)
        verdict = INCONCLUSIVE
        reason = (f"{label}: our 95 % CI {ci_text(est.value, est.lo, est.hi)} overlaps the band's edge "
                  f"(n = {est.n} runs)")
    n_runs = min(e.n for _, e, _ in done)
    return _row(c, verdict, reason, est.value, est.lo, est.hi, n_runs, detail=detail, group=label)


def group_estimates(m: Measure, claim_id: str, resamples: int = RESAMPLES) -> list[tuple[str, Estimate | str]]:
    """Per compared group: its estimate, or why it has none (fewer than MIN_RUNS runs, no value)."""
    out: list[tuple[str, Estimate | str]] = []
    for g in m.groups:
        n = min((len(v) for v in g.samples.values()), default=0)
        if n < MIN_RUNS:
            out.append((g.label, f"n = {n}"))
            continue
        est = bootstrap(g.samples, m.statistic, seed_of(claim_id, g.label), resamples)
        if math.isnan(est.value) or math.isnan(est.lo):
            out.append((g.label, f"no value: {_fmt(est.value)}"))
            continue
        out.append((g.label, est))
    return out


def evaluate(claims: list[Claim], facts: Facts | None, resamples: int = RESAMPLES) -> pl.DataFrame:
    return pl.DataFrame([evaluate_claim(c, facts, resamples) for c in claims], schema=SCHEMA)


def load_facts(db: str | os.PathLike | duckdb.DuckDBPyConnection) -> tuple[Facts | None, str]:
    """The derived tables of ``db`` (None and the reason when it is not a lab database)."""
    try:
        con = db if isinstance(db, duckdb.DuckDBPyConnection) else duckdb.connect(str(db), read_only=True)
    except (duckdb.Error, OSError) as e:
        return None, f"cannot open {db}: {str(e).splitlines()[0]}"
    try:
        derived.install(con, temp=True)
        return Facts(con), ""
    except duckdb.Error as e:
        return None, f"the database cannot be read as a lab database: {str(e).splitlines()[0]}"
    finally:
        if con is not db:
            con.close()


def findings(db, paper: str | None = None, kind: str = "finding", resamples: int = RESAMPLES) -> pl.DataFrame:
    """The findings table (``kind='finding'``) or the lab checks (``'lab-check'``) of ``db``."""
    from .claims import ALL

    claims = [c for c in ALL if c.kind == kind and (paper is None or c.paper == paper)]
    facts, why = load_facts(db)
    t = evaluate(claims, facts, resamples)
    if facts is None:
        t = t.with_columns(pl.when(pl.col("verdict") == NO_DATA).then(pl.lit(why)).otherwise(pl.col("reason"))
                           .alias("reason"))
    return t


def write_csv(table: pl.DataFrame, out: str | os.PathLike) -> Path:
    """Atomically: a reader never sees half a file."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    table.write_csv(tmp)
    tmp.replace(out)
    return out


def markdown(table: pl.DataFrame) -> str:
    """The verdict table: paper, claim, the paper's value, ours with its CI, n, verdict."""
    lines = ["| paper | claim | source | paper | ours [95 % CI] | n | verdict |", "|---|---|---|---|---|---|---|"]
    for r in table.iter_rows(named=True):
        ours = "–" if r["our_value"] is None else f"{ci_text(r['our_value'], r['ci_low'], r['ci_high'])} {r['unit']}"
        lines.append(f"| {r['paper']} | `{r['id']}` | {r['source']} | {r['paper_value']} | {ours} | "
                     f"{r['n_runs'] or '–'} | **{r['verdict']}** |")
    return "\n".join(lines)


def verdict_lines(table: pl.DataFrame) -> str:
    """Markdown, one bullet per row: verdict, the paper's words, the numbers, and why."""
    out = []
    for r in table.iter_rows(named=True):
        ours = "–" if r["our_value"] is None else ci_text(r["our_value"], r["ci_low"], r["ci_high"])
        line = (f"- **{r['verdict']}** — *“{r['claim']}”* ({r['source']}). Paper: {r['paper_value']}. "
                f"Ours: {ours} {r['unit']} ({r['statistic']}; n = {r['n_runs']}). Rule: {r['tolerance']}.")
        if r["reason"]:
            line += f" Why: {r['reason']}."
        out.append(line)
    return "\n".join(out) if out else "_no rows for this paper_"


def counts(table: pl.DataFrame) -> str:
    c = table.group_by("verdict").len().sort("verdict")
    return ", ".join(f"{v} {n}" for v, n in c.iter_rows())


__all__ = ["COLUMNS", "evaluate", "evaluate_claim", "findings", "write_csv", "markdown", "verdict_lines",
           "counts", "num", "AGREE", "DISAGREE", "INCONCLUSIVE", "NO_DATA", "NOT_REPRODUCIBLE"]
