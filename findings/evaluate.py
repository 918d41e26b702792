"""Claims -> the findings table (one row per inventory entry), its per-group estimates
and the lab checks: our value, its 95 % interval, the magnitude and direction verdicts,
and why.

Evaluation only: the claims are data (``papers/<paper>/claims.py`` with
``inventory.yaml``), the statistics and interval methods are in ``findings.stats``,
the run-level quantities in ``pipeline.derived``.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import duckdb
import polars as pl

from pipeline import derived

from .claim import (AGREE, DIRECTION_ONLY, DISAGREE, INCONCLUSIVE, NO_DATA, NO_DIRECTION, NOT_COMPARABLE,
                    NOT_REPRODUCIBLE, UNDERPOWERED, Claim, direction, finite, magnitude)
from .measure import Facts, Measure
from . import hosts
from .provenance import runs_per_group
from .stats import MIN_RUNS, RESAMPLES, Estimate, estimate, seed_of

COLUMNS = ["id", "paper", "kind", "claim", "source", "says", "paper_value", "paper_text", "band_low", "band_high",
           "tolerance", "direction", "statistic", "unit", "config", "checks", "group", "our_value", "ci_low",
           "ci_high", "n", "n_groups", "runs_per_group", "magnitude_verdict", "direction_verdict", "underpowered", "reason",
           "detail", "data"]
FLOATS = ("paper_value", "band_low", "band_high", "our_value", "ci_low", "ci_high")
SCHEMA = {c: pl.Utf8 for c in COLUMNS} | {c: pl.Float64 for c in FLOATS} | {
    "n": pl.Int64, "n_groups": pl.Int64, "underpowered": pl.Boolean}
# n: runs in the group that decides (the smallest role); runs_per_group: over every compared
# group; data: the paper's campaigns as captured (findings.provenance)
GROUP_COLUMNS = ["id", "paper", "kind", "group", "value", "ci_low", "ci_high", "ci_low_adj", "ci_high_adj", "n",
                 "magnitude", "direction"]
GROUP_SCHEMA = {c: pl.Utf8 for c in GROUP_COLUMNS} | {c: pl.Float64 for c in (
    "value", "ci_low", "ci_high", "ci_low_adj", "ci_high_adj")} | {"n": pl.Int64}


def _fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float) and math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.3g}" if abs(x) < 1e4 else f"{x:.0f}"


def ci_text(value: float | None, lo: float | None, hi: float | None) -> str:
    return f"{_fmt(value)} [{_fmt(lo)}, {_fmt(hi)}]"


def _row(c: Claim, magnitude_v: str, direction_v: str, reason: str, est: Estimate | None = None, n_groups: int = 0,
         group: str = "", detail: str = "", underpowered: bool = False, ns: list[int] | None = None) -> dict:
    b = c.band
    d = c.direction
    return {"id": c.id, "paper": c.paper, "kind": c.kind, "claim": c.entry.quote, "source": c.entry.where,
            "says": c.entry.says, "paper_value": finite(c.entry.paper_value),
            "paper_text": c.entry.paper_text, "band_low": b.low if b else None, "band_high": b.high if b else None,
            "tolerance": c.tolerance, "direction": d.text(c.unit) if d else "", "statistic": c.statistic,
            "unit": c.unit, "config": c.config, "checks": ", ".join(c.checks), "group": group,
            "our_value": finite(est.value) if est else None, "ci_low": finite(est.lo) if est else None,
            "ci_high": finite(est.hi) if est else None, "n": est.n if est else None, "n_groups": n_groups,
            "runs_per_group": runs_per_group(ns or []), "magnitude_verdict": magnitude_v,
            "direction_verdict": direction_v, "underpowered": underpowered,
            "reason": reason, "detail": detail}  # data: per paper, added by evaluate


def group_estimates(c: Claim, m: Measure, resamples: int = RESAMPLES) -> tuple[list[tuple[str, Estimate]], list[str]]:
    """Per compared group with at least MIN_RUNS runs in every role: its estimate (the
    95 %, Bonferroni and 90 % intervals); and the groups left out, with why."""
    sized = [(g, min((len(v) for v in g.samples.values()), default=0)) for g in m.groups]
    usable = [g for g, n in sized if n >= MIN_RUNS]
    out, short = [], [f"{g.label} (n = {n})" for g, n in sized if n < MIN_RUNS]
    for g in usable:
        est = estimate(g.samples, m.statistic, seed_of(c.id, g.label), groups=len(usable), resamples=resamples)
        if any(math.isnan(x) for x in (est.value, est.lo, est.hi)):
            short.append(f"{g.label} (no value: {_fmt(est.value)})")
            continue
        out.append((g.label, est))
    return out, short


def evaluate_claim(c: Claim, facts: Facts | None, checks: dict[str, dict] | None = None,
                   resamples: int = RESAMPLES) -> tuple[dict, list[dict]]:
    """One row and its per-group rows."""
    if c.not_reproducible:
        return _row(c, NOT_REPRODUCIBLE, NOT_REPRODUCIBLE, c.not_reproducible), []
    if facts is None or c.measure is None:
        return _row(c, NO_DATA, NO_DATA, "the database cannot be read as a lab database"), []
    try:
        m = c.measure(facts)
    except Exception as e:  # one claim must never take the table down with it
        return _row(c, NO_DATA, NO_DATA, f"computation failed: {type(e).__name__}: {e}"), []
    if not m.groups:
        return _row(c, NO_DATA, NO_DATA, m.missing or "no runs for this claim", detail=m.note), []
    done, short = group_estimates(c, m, resamples)
    parts = []
    grows = []
    for label, e in done:
        mv, _ = magnitude(c, [(label, e)])
        dv, _ = direction(c, [(label, e)])
        parts.append(f"{label}: {ci_text(e.value, e.lo, e.hi)}, n = {e.n}, magnitude {mv}, direction {dv}")
        grows.append({"id": c.id, "paper": c.paper, "kind": c.kind, "group": label, "value": finite(e.value),
                      "ci_low": finite(e.lo), "ci_high": finite(e.hi), "ci_low_adj": finite(e.lo_adj),
                      "ci_high_adj": finite(e.hi_adj), "n": e.n, "magnitude": mv, "direction": dv})
    if short:
        parts.append(f"not computed (fewer than {MIN_RUNS} runs or no value): " + ", ".join(short))
    if m.note:
        parts.append(m.note)
    detail = "; ".join(parts)
    if not done or short:
        why = f"every compared group needs ≥ {MIN_RUNS} runs ({', '.join(short)})" if short else "no group"
        return _row(c, NO_DATA, NO_DATA, why, detail=detail), grows
    ns = [e.n for _, e in done]
    mv, mg = magnitude(c, done)
    dv, dg = direction(c, done)
    label = mg or dg or done[0][0]
    est = dict(done)[label]
    reason = _reason(c, mv, dv, label, est, len(done))
    failing = [f"{k} ({checks[k]['magnitude_verdict']}{': ' + checks[k]['reason'] if checks[k]['reason'] else ''})"
               for k in c.checks if checks is not None and k in checks and checks[k]["magnitude_verdict"] != AGREE]
    missing = [k for k in c.checks if checks is not None and k not in checks]
    if failing or missing:
        why = "; ".join([f"lab check {f}" for f in failing] + [f"lab check {k}: unknown" for k in missing])
        return _row(c, NOT_COMPARABLE, NOT_COMPARABLE, f"the conditions it rests on do not hold here: {why}",
                    est, len(done), label, detail, ns=ns), grows
    return _row(c, mv, dv, reason, est, len(done), label, detail, underpowered=mv == UNDERPOWERED, ns=ns), grows


def _reason(c: Claim, mv: str, dv: str, label: str, e: Estimate, k: int) -> str:
    b = c.band
    ours = f"{label}: our 95 % CI {ci_text(e.value, e.lo, e.hi)}"
    if mv in (AGREE, DIRECTION_ONLY) and dv in (AGREE, NO_DIRECTION):
        return ""
    if mv == DIRECTION_ONLY:
        lead = f"{ours} ({'every group on the paper’s side' if dv == AGREE else dv})"
    elif mv == UNDERPOWERED:
        lead = (f"{ours} is wider ({_fmt(e.hi - e.lo)}) than the paper's effect ({_fmt(c.effect)}): more runs are "
                f"needed to decide")
    elif mv == "disagree":
        lo, hi = (e.lo_adj, e.hi_adj) if k > 1 else (e.lo, e.hi)
        lead = (f"{label}: our CI {ci_text(e.value, lo, hi)}{' (Bonferroni, ' + str(k) + ' groups)' if k > 1 else ''} "
                f"lies outside the band [{_fmt(b.low)}, {_fmt(b.high)}]")
    elif mv == AGREE:
        lead = f"magnitude agrees; direction {dv} ({ours})"
    else:
        lead = f"{ours} overlaps the band's edge [{_fmt(b.low)}, {_fmt(b.high)}]"
    return lead + (f". Likely why: {c.mismatch}" if c.mismatch and "disagree" in (mv, dv) else "")


def evaluate(claims: list[Claim], facts: Facts | None, resamples: int = RESAMPLES) -> tuple[pl.DataFrame, pl.DataFrame,
                                                                                          pl.DataFrame]:
    """(findings, lab checks, per-group estimates of both)."""
    check_rows, group_rows = {}, []
    for c in claims:
        if c.kind == "lab-check":
            row, g = evaluate_claim(c, facts, None, resamples)
            check_rows[c.id] = row
            group_rows += g
    rows = []
    for c in claims:
        if c.kind != "lab-check":
            row, g = evaluate_claim(c, facts, check_rows, resamples)
            rows.append(row)
            group_rows += g
    quick = quick_papers(facts)
    data = facts.provenance if facts is not None else {}
    host_rows = host_checks(facts, {c.paper for c in claims})
    differ = hosts.differing(host_rows)
    rows = [{**(figures_only(r) if r["paper"] in quick else
                hosts_differ(r, differ[r["paper"]]) if r["paper"] in differ else r),
             "data": data.get(r["paper"], "")} for r in rows]
    checks = [{**(figures_only(r) if r["paper"] in quick else r), "data": data.get(r["paper"], "")}
              for r in [*check_rows.values(), *map(host_check_row, host_rows)]]
    return (pl.DataFrame(rows, schema=SCHEMA), pl.DataFrame(checks, schema=SCHEMA),
            pl.DataFrame(group_rows, schema=GROUP_SCHEMA))


def host_checks(facts: Facts | None, papers: set[str]) -> list[dict]:
    """Per paper with runs from several hosts: each host against the others (findings.hosts)."""
    if facts is None or "host" not in facts.runs.columns:
        return []
    out = []
    for p in sorted(papers):
        runs, _ = facts.of(p)
        out += hosts.check(runs, p)
    return out


def host_check_row(r: dict) -> dict:
    """A host's check as a lab-check row of the checks table."""
    verdict = {hosts.CONSISTENT: AGREE, hosts.DIFFERS: DISAGREE}.get(r["verdict"], INCONCLUSIVE)
    row = {c: None for c in COLUMNS}
    return {**row, "id": f"{hosts.ID}:{r['host']}", "paper": r["paper"], "kind": "lab-check",
            "claim": f"runs captured on {r['host']} behave as the other hosts' runs of the same configurations",
            "source": "lab (issue 26)", "says": "", "paper_text": "", "tolerance": f"±{hosts.TOLERANCE:.0%}",
            "band_low": 1 - hosts.TOLERANCE, "band_high": 1 + hosts.TOLERANCE, "direction": "",
            "statistic": f"mean over its runs of {r['what'] or 'value'} ÷ the other hosts' median on the same "
                         "configuration", "unit": "×", "config": "", "checks": "", "group": r["host"],
            "our_value": r["value"], "ci_low": r["ci_low"], "ci_high": r["ci_high"], "n": r["shared_runs"],
            "n_groups": 1, "runs_per_group": str(r["shared_runs"]), "magnitude_verdict": verdict,
            "direction_verdict": NO_DIRECTION, "underpowered": False, "reason": r["reason"], "detail": ""}


def hosts_differ(r: dict, why: str) -> dict:
    """A computed row of a paper whose hosts differ: our value stays, the verdicts say why none."""
    if r["magnitude_verdict"] in (NOT_REPRODUCIBLE, NO_DATA):
        return r
    return {**r, "magnitude_verdict": NOT_COMPARABLE, "direction_verdict": NOT_COMPARABLE,
            "underpowered": False, "reason": why}


QUICK_SCALE = ("quick scale: figures only — one or two runs per configuration check a testbed and draw "
               "the figures, they are not evidence (make reproduce-all SCALE=standard captures the scale the "
               "verdicts need; without SCALE the committed standard-scale reference is judged)")


def quick_papers(facts: Facts | None) -> set[str]:
    """Papers with any quick-scale run in the database: their rows are not judged."""
    if facts is None or "scale" not in facts.runs.columns:
        return set()
    q = facts.runs.filter(pl.col("scale") == "quick")
    return {p for p in q["paper"].unique().to_list() if p}


def figures_only(r: dict) -> dict:
    """A computed row of quick-scale data: our value stays, the verdicts say why none."""
    if r["magnitude_verdict"] in (NOT_REPRODUCIBLE, NO_DATA):
        return r
    return {**r, "magnitude_verdict": NOT_COMPARABLE, "direction_verdict": NOT_COMPARABLE,
            "underpowered": False, "reason": QUICK_SCALE}


def load_facts(db: str | os.PathLike | duckdb.DuckDBPyConnection) -> tuple[Facts | None, str]:
    """The derived tables of ``db`` (None and the reason when it is not a lab database)."""
    try:
        con = db if isinstance(db, duckdb.DuckDBPyConnection) else duckdb.connect(str(db), read_only=True)
    except (duckdb.Error, OSError) as e:
        return None, f"cannot open {db}: {str(e).splitlines()[0]}"
    try:
        derived.install(con, temp=True)
        return Facts(con), ""
    except derived.StaleStore as e:
        return None, f"the database cannot be read as a lab database: {e}"
    except duckdb.Error as e:
        return None, f"the database cannot be read as a lab database: {str(e).splitlines()[0]}"
    finally:
        if con is not db:
            con.close()


def findings(db, paper: str | None = None, resamples: int = RESAMPLES) -> tuple[pl.DataFrame, pl.DataFrame,
                                                                                 pl.DataFrame]:
    """(findings, lab checks, per-group estimates) of ``db``, every paper or one."""
    from .registry import all_claims, paper_claims

    claims = all_claims() if paper is None else paper_claims(paper)
    facts, why = load_facts(db)
    t, checks, groups = evaluate(claims, facts, resamples)
    if facts is None:
        fix = pl.when(pl.col("magnitude_verdict") == NO_DATA).then(pl.lit(why)).otherwise(pl.col("reason"))
        t, checks = t.with_columns(fix.alias("reason")), checks.with_columns(fix.alias("reason"))
    return t, checks, groups


def write_csv(table: pl.DataFrame, out: str | os.PathLike) -> Path:
    """Atomically: a reader never sees half a file."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    table.write_csv(tmp)
    tmp.replace(out)
    return out


def ours_text(r: dict) -> str:
    if r["our_value"] is None:
        return "–"
    unit = r["unit"] if r["unit"] == "×" else f" {r['unit']}" if r["unit"] else ""
    return f"{ci_text(r['our_value'], r['ci_low'], r['ci_high'])}{unit}"


def band_text(r: dict) -> str:
    if r["band_low"] is None:
        return "–"
    return f"[{_fmt(r['band_low'])}, {_fmt(r['band_high'])}]"


def markdown(table: pl.DataFrame) -> str:
    """The verdict table: per row the paper's number and band, ours with its CI, n, both verdicts."""
    lines = ["| paper | claim | source | paper | band | ours [95 % CI] | n | magnitude | direction |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in table.iter_rows(named=True):
        lines.append(f"| {r['paper']} | `{r['id']}` | {r['source']} | {r['paper_text']} | {band_text(r)} | "
                     f"{ours_text(r)} | {r['n'] or '–'} | **{r['magnitude_verdict']}** | {r['direction_verdict']} |")
    return "\n".join(lines)


def counts_table(table: pl.DataFrame) -> str:
    """Markdown: per paper, the rows and the count of each magnitude verdict."""
    from .claim import VERDICTS
    present = [v for v in VERDICTS if v in set(table["magnitude_verdict"].to_list())]
    head = "| paper | rows | " + " | ".join(present) + " | direction agrees |"
    lines = [head, "|---|---|" + "---|" * (len(present) + 1)]
    for paper in [*sorted(table["paper"].unique().to_list()), None]:
        t = table if paper is None else table.filter(pl.col("paper") == paper)
        cells = [str(t.filter(pl.col("magnitude_verdict") == v).height) for v in present]
        dirs = t.filter(pl.col("direction_verdict") == AGREE).height
        name = "**all**" if paper is None else paper
        lines.append(f"| {name} | {t.height} | " + " | ".join(cells) + f" | {dirs} |")
    return "\n".join(lines)


def counts(table: pl.DataFrame) -> str:
    c = table.group_by("magnitude_verdict").len().sort("magnitude_verdict")
    return ", ".join(f"{v} {n}" for v, n in c.iter_rows())


__all__ = ["COLUMNS", "GROUP_COLUMNS", "evaluate", "evaluate_claim", "findings", "write_csv", "markdown",
           "counts", "counts_table"]
