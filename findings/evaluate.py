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

from capture.scales import NOT_EVIDENCE
from pipeline import derived

from .claim import (AGREE, DIRECTION_ONLY, DISAGREE, INCONCLUSIVE, LAB_CHECK, NO_DATA, NO_DIRECTION, NOT_COMPARABLE,
                    NOT_REPRODUCIBLE, OUTCOME, UNDERPOWERED, VERDICTS, Claim, PaperNumber, direction, finite, holds,
                    interval_used, magnitude)
from .measure import Facts, Group, Measure
from . import hosts
from .provenance import runs_per_group
from .stats import LEVEL, MIN_RUNS, RESAMPLES, Estimate, estimate, seed_of

# the checks a row or group rests on, joined: "; " as a check group's label may hold ", "
CHECK_SEP = "; "
COLUMNS = ["id", "paper", "kind", "basis", "basis_reason", "claim", "source", "says", "paper_value", "paper_text",
           "band_low", "band_high", "tolerance", "paper_direction", "statistic", "unit", "config", "checks", "group",
           "our_value", "ci_low", "ci_high", "ci_level", "n", "n_groups", "runs_per_group", "planned_n",
           "magnitude_verdict", "direction_verdict", "underpowered", "not_comparable_groups", "reason", "detail", "data"]
FLOATS = ("paper_value", "band_low", "band_high", "our_value", "ci_low", "ci_high", "ci_level")
SCHEMA = {c: pl.Utf8 for c in COLUMNS} | {c: pl.Float64 for c in FLOATS} | {
    "n": pl.Int64, "n_groups": pl.Int64, "underpowered": pl.Boolean}
# ci_low, ci_high: the interval the verdict was decided with, at ci_level (claim.interval_used:
# 0.95; the Bonferroni level 1 − 0.05/k for disagree; 0.90 for a "no difference" claim's agree).
# n: runs in the group that decides (the smallest role); runs_per_group: over every compared
# group; planned_n: the runs per group its plan asks (findings.plans; beyond the budget: the row
# says "undecidable here"); data: the paper's campaigns as captured (findings.provenance); checks: every check
# some group rests on; not_comparable_groups: the groups left unjudged, each with the
# checks that fail there
GROUP_COLUMNS = ["id", "paper", "kind", "group", "value", "ci_low", "ci_high", "ci_level", "ci_low_adj", "ci_high_adj",
                 "ci_level_adj", "n", "planned_n", "checks", "magnitude_verdict", "direction_verdict"]
GROUP_SCHEMA = {c: pl.Utf8 for c in GROUP_COLUMNS} | {c: pl.Float64 for c in (
    "value", "ci_low", "ci_high", "ci_level", "ci_low_adj", "ci_high_adj", "ci_level_adj")} | {"n": pl.Int64}
# a group's ci_low/ci_high/ci_level: the interval its own verdicts were decided with (as in
# the findings); ci_*_adj: its interval at the Bonferroni level of the claim's groups


def _fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float) and math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.3g}" if abs(x) < 1e4 else f"{x:.0f}"


def ci_text(value: float | None, lo: float | None, hi: float | None) -> str:
    return f"{_fmt(value)} [{_fmt(lo)}, {_fmt(hi)}]"


def _row(c: Claim, magnitude_v: str, direction_v: str, reason: str, est: Estimate | None = None, n_groups: int = 0,
         group: str = "", detail: str = "", underpowered: bool = False, ns: list[int] | None = None,
         checks: tuple[str, ...] | None = None, excluded: str = "", number: PaperNumber | None = None) -> dict:
    b = number.band if number else c.band
    d = c.direction
    lo, hi, level = est.shown(interval_used(c, magnitude_v, direction_v)) if est else (None, None, None)
    return {"id": c.id, "paper": c.paper, "kind": c.kind, "basis": c.basis, "basis_reason": c.basis_reason,
            "claim": c.entry.quote, "source": c.entry.where,
            "says": c.entry.says, "paper_value": finite(number.value if number else c.entry.paper_value),
            "paper_text": f"{group}: {number.text}" if number else c.entry.paper_text,
            "band_low": b.low if b else None, "band_high": b.high if b else None,
            "tolerance": b.rule if number else c.tolerance, "paper_direction": d.text(c.unit) if d else "", "statistic": c.statistic,
            "unit": c.unit, "config": c.config, "checks": CHECK_SEP.join(c.checks if checks is None else checks),
            "group": group,
            "our_value": finite(est.value) if est else None, "ci_low": finite(lo), "ci_high": finite(hi),
            "ci_level": level, "n": est.n if est else None, "n_groups": n_groups,
            "runs_per_group": runs_per_group(ns or []), "planned_n": c.plan.cell() if c.plan else "",
            "magnitude_verdict": magnitude_v,
            "direction_verdict": direction_v, "underpowered": underpowered, "not_comparable_groups": excluded,
            "reason": reason, "detail": detail}  # data: per paper, added by evaluate


def group_estimates(c: Claim, m: Measure, resamples: int = RESAMPLES) -> tuple[list[tuple[Group, Estimate]], list[str]]:
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
        out.append((g, est))
    return out, short


def group_checks(c: Claim, g: Group) -> tuple[str, ...]:
    """The checks a compared group rests on: the claim's (every group's) and its own."""
    return tuple(dict.fromkeys((*c.checks, *g.checks)))


def failing(ids: tuple[str, ...], checks: dict[str, dict]) -> list[str]:
    """Of ``ids``, the checks that do not hold here, each with its verdict and reason. An
    id ``check@group`` names one compared group of a check (a paper's statement computed
    per table or carrier: the group a claim's runs share conditions with)."""
    out = []
    for k in ids:
        cid, _, label = k.partition("@")
        r = checks.get(cid)
        if r is not None and label:
            g = r.get("_groups", {}).get(label)
            r = None if g is None else {"magnitude_verdict": g["magnitude_verdict"], "direction_verdict": g["direction_verdict"],
                                        "reason": f"{label}: {ci_text(g['value'], g['ci_low'], g['ci_high'])}"}
        if r is None:
            out.append(f"{k}: unknown check" if checks.get(cid) is None else f"{k}: no such group of the check")
        elif not holds(r):
            v = r["magnitude_verdict"] if r["magnitude_verdict"] != DIRECTION_ONLY else f"direction {r['direction_verdict']}"
            out.append(f"{k} ({v}{': ' + _short(r['reason']) if r['reason'] else ''})")
    return out


def _short(text: str, n: int = 160) -> str:
    return text if len(text) <= n else text[:n].rsplit(" ", 1)[0] + " …"


def evaluate_claim(c: Claim, facts: Facts | None, checks: dict[str, dict] | None = None,
                   resamples: int = RESAMPLES) -> tuple[dict, list[dict]]:
    """One row and its per-group rows. ``checks``: the rows of every check (None: ``c`` is a
    check itself, whose groups rest on nothing)."""
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
    numbers = {g.label: g.number for g in m.groups if g.number is not None}
    rests_on = {g.label: group_checks(c, g) for g in m.groups}
    all_checks = tuple(dict.fromkeys(k for ids in rests_on.values() for k in ids))
    gated = {g.label: failing(rests_on[g.label], checks) for g, _ in done} if checks is not None else {}
    parts, grows = [], []
    # groups measured with fewer runs than the plan asks (findings.plans): coverage unchecked there
    below = {g.label: e.n for g, e in done if not gated.get(g.label) and c.plan is not None
             and c.plan.short_of(g.label, e.n)}
    for g, e in done:
        if gated.get(g.label):
            mv = dv = NOT_COMPARABLE
        elif g.label in below:
            mv = DIRECTION_ONLY if magnitude(c, [(g.label, e)], numbers)[0] == DIRECTION_ONLY else UNDERPOWERED
            dv = NO_DIRECTION if c.direction is None else UNDERPOWERED
        else:
            mv, _ = magnitude(c, [(g.label, e)], numbers)
            dv, _ = direction(c, [(g.label, e)])
        lo, hi, level = e.shown(interval_used(c, mv, dv))
        parts.append(f"{g.label}: {ci_text(e.value, lo, hi)} ({level_text(level)}), n = {e.n}, magnitude {mv}, "
                     f"direction {dv}")
        grows.append({"id": c.id, "paper": c.paper, "kind": c.kind, "group": g.label, "value": finite(e.value),
                      "ci_low": finite(lo), "ci_high": finite(hi), "ci_level": level, "ci_low_adj": finite(e.lo_adj),
                      "ci_high_adj": finite(e.hi_adj), "ci_level_adj": e.level_adj, "n": e.n,
                      "planned_n": c.plan.cell(g.label) if c.plan else "", "checks": CHECK_SEP.join(rests_on[g.label]),
                      "magnitude_verdict": mv, "direction_verdict": dv})
    if short:
        parts.append(f"not computed (fewer than {MIN_RUNS} runs or no value): " + ", ".join(short))
    if m.note:
        parts.append(m.note)
    detail = "; ".join(parts)
    if not done or short:
        why = f"every compared group needs ≥ {MIN_RUNS} runs ({', '.join(short)})" if short else "no group"
        return _row(c, NO_DATA, NO_DATA, why, detail=detail, checks=all_checks), grows
    excluded = "; ".join(f"{g.label}: {', '.join(gated[g.label])}" for g, _ in done if gated.get(g.label))
    judged = [(g.label, e) for g, e in done if not gated.get(g.label)]
    if not judged:
        e0 = done[0][1]
        return _row(c, NOT_COMPARABLE, NOT_COMPARABLE,
                    f"the conditions its groups were measured under do not hold here: {excluded}", e0, len(done),
                    done[0][0].label, detail, ns=[e.n for _, e in done], checks=all_checks, excluded=excluded), grows
    ns = [e.n for _, e in judged]
    if below:
        mv, dv, label, reason = _short_of_plan(c, judged, below, numbers)
        est = dict(judged)[label]
    else:
        mv, mg = magnitude(c, judged, numbers)
        dv, dg = direction(c, judged)
        label = mg or dg or judged[0][0]
        est = dict(judged)[label]
        # the intervals were made at the Bonferroni level of every computed group (gated or not)
        reason = _reason(c, mv, dv, label, est, numbers.get(label))
    if excluded:
        reason = join_sentences(f"judged on the {len(judged)} of {len(done)} groups whose conditions hold here; not "
                                f"comparable: {excluded}", reason)
    return _row(c, mv, dv, reason, est, len(judged), label, detail, underpowered=mv == UNDERPOWERED, ns=ns,
                checks=all_checks, excluded=excluded, number=numbers.get(label)), grows


def _short_of_plan(c: Claim, judged: list[tuple[str, Estimate]], below: dict[str, int],
                   numbers: dict[str, PaperNumber]) -> tuple[str, str, str, str]:
    """(magnitude, direction, deciding group, reason) of a claim some of whose groups have
    fewer runs than its plan: those decide nothing (their intervals' coverage was checked
    only at the planned n), so only a disagreement of the others stands; otherwise the
    claim is underpowered, and says its plan."""
    full = [(g, e) for g, e in judged if g not in below]
    mv, mg = magnitude(c, full, numbers) if full else (UNDERPOWERED, "")
    dv, dg = direction(c, full) if full else (UNDERPOWERED, "")
    if mv != DISAGREE:
        mv, mg = (DIRECTION_ONLY if magnitude(c, judged, numbers)[0] == DIRECTION_ONLY else UNDERPOWERED), ""
    if dv not in (DISAGREE, NO_DIRECTION):
        dv, dg = UNDERPOWERED, ""
    label = mg or dg or next(iter(below))
    where = ", ".join(f"{g} ({n} runs)" for g, n in list(below.items())[:3]) + (", ..." if len(below) > 3 else "")
    reason = c.plan.text(c.paper, below.get(label), label)
    if not c.plan.undecidable:
        reason = join_sentences(reason, f"fewer runs than planned in {where}: coverage is checked at the planned n, "
                                        f"so these groups decide nothing")
    if DISAGREE in (mv, dv):
        reason = join_sentences(_reason(c, mv, dv, label, dict(judged)[label], numbers.get(label)), reason)
    return mv, dv, label, reason


def join_sentences(*parts: str) -> str:
    return ". ".join(p.rstrip(". ") for p in parts if p)


def level_text(level: float) -> str:
    """A confidence level in words: "95 %", "90 %", or the Bonferroni level and its groups."""
    if abs(level - 0.95) < 1e-9 or abs(level - 0.90) < 1e-9:
        return f"{100 * level:.0f} %"
    return f"{100 * level:.4g} % (Bonferroni, {round(0.05 / (1 - level))} groups)"


def _reason(c: Claim, mv: str, dv: str, label: str, e: Estimate, number: PaperNumber | None = None) -> str:
    b = number.band if number else c.band
    lo, hi, level = e.shown(interval_used(c, mv, dv))
    ours = f"{label}: our {level_text(level)} CI {ci_text(e.value, lo, hi)}"
    if mv in (AGREE, DIRECTION_ONLY) and dv in (AGREE, NO_DIRECTION):
        return ""
    if mv == DIRECTION_ONLY:
        lead = f"{ours} ({'every group on the paper’s side' if dv == AGREE else dv})"
    elif mv == UNDERPOWERED:
        eff = number.effect if number else c.effect
        lead = (f"{ours} is wider ({_fmt(hi - lo)}) than the paper's effect ({_fmt(eff)}): more runs are "
                f"needed to decide")
        if c.plan is not None:
            lead = join_sentences(lead, c.plan.text(c.paper, e.n, label))
    elif mv == "disagree":
        lead = f"{ours} lies outside the band [{_fmt(b.low)}, {_fmt(b.high)}]"
    elif mv == AGREE:
        lead = f"magnitude agrees; direction {dv} ({ours})"
    else:
        lead = f"{ours} overlaps the band's edge [{_fmt(b.low)}, {_fmt(b.high)}]"
        if c.plan is not None:  # whether more runs would decide, planned before the capture
            lead = join_sentences(lead, c.plan.text(c.paper, e.n, label))
    return lead + (f". Likely why: {c.mismatch}" if c.mismatch and "disagree" in (mv, dv) else "")


def evaluate(claims: list[Claim], facts: Facts | None, resamples: int = RESAMPLES) -> tuple[pl.DataFrame, pl.DataFrame,
                                                                                          pl.DataFrame]:
    """(findings, lab checks, per-group estimates of both). The checks (lab checks and the
    papers' condition statements) first: every finding's groups are gated by them; the
    condition statements are inventory entries, so their rows are findings rows too."""
    check_rows, done = {}, {}
    for c in claims:
        if c.is_check:
            done[c.id] = evaluate_claim(c, facts, None, resamples)
            check_rows[c.id] = {**done[c.id][0], "_groups": {g["group"]: g for g in done[c.id][1]}}
    rows, group_rows = [], []
    for c in claims:
        row, g = done[c.id] if c.id in done else evaluate_claim(c, facts, check_rows, resamples)
        group_rows += g
        if c.kind != LAB_CHECK:
            rows.append(row)
    check_rows = {k: {c: v for c, v in r.items() if c != "_groups"} for k, r in check_rows.items()
                  if r["kind"] == LAB_CHECK}
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
    return {**row, "id": f"{hosts.ID}:{r['host']}", "paper": r["paper"], "kind": LAB_CHECK,
            "basis": OUTCOME, "basis_reason": "",
            "claim": f"runs captured on {r['host']} behave as the other hosts' runs of the same configurations",
            "source": "lab (issue 26)", "says": "", "paper_text": "", "tolerance": f"±{hosts.TOLERANCE:.0%}",
            "band_low": 1 - hosts.TOLERANCE, "band_high": 1 + hosts.TOLERANCE, "paper_direction": "",
            "statistic": f"mean over its runs of {r['what'] or 'value'} ÷ the other hosts' median on the same "
                         "configuration", "unit": "×", "config": "", "checks": "", "group": r["host"],
            "our_value": r["value"], "ci_low": r["ci_low"], "ci_high": r["ci_high"],
            "ci_level": LEVEL if r["ci_low"] is not None else None, "n": r["shared_runs"],
            "n_groups": 1, "runs_per_group": str(r["shared_runs"]), "planned_n": "", "magnitude_verdict": verdict,
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
    q = facts.runs.filter(pl.col("scale").is_in(NOT_EVIDENCE))
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


def findings(db, claims: list[Claim], resamples: int = RESAMPLES) -> tuple[pl.DataFrame, pl.DataFrame,
                                                                           pl.DataFrame]:
    """(findings, lab checks, per-group estimates) of ``db`` for ``claims`` (the papers hand
    the engine their claims: ``papers.judge``)."""
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
    level = float(r["ci_level"]) if r.get("ci_level") not in (None, "") else 0.95
    lvl = f" ({level_text(level)} CI)" if abs(level - 0.95) > 1e-9 else ""
    return f"{ci_text(r['our_value'], r['ci_low'], r['ci_high'])}{unit}{lvl}"


def band_text(r: dict) -> str:
    if r["band_low"] is None:
        return "–"
    return f"[{_fmt(r['band_low'])}, {_fmt(r['band_high'])}]"


def markdown(table: pl.DataFrame) -> str:
    """The verdict table: per row the paper's number and band, ours with its CI, n, both verdicts."""
    lines = ["| paper | claim | source | paper | band | ours [CI: 95 % unless named] | n | magnitude | direction |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in table.iter_rows(named=True):
        lines.append(f"| {r['paper']} | `{r['id']}` | {r['source']} | {r['paper_text']} | {band_text(r)} | "
                     f"{ours_text(r)} | {r['n'] or '–'} | **{r['magnitude_verdict']}** | {r['direction_verdict']} |")
    return "\n".join(lines)


def counts_table(table: pl.DataFrame) -> str:
    """Markdown: per paper, the rows and the count of each magnitude verdict."""
    present = [v for v in VERDICTS if v in set(table["magnitude_verdict"].to_list())]
    head = ("| paper | rows | " + " | ".join(present) + " | direction agrees | independent agree / disagree "
            "(basis outcome) |")
    lines = [head, "|---|---|" + "---|" * (len(present) + 2)]
    for paper in [*sorted(table["paper"].unique().to_list()), None]:
        t = table if paper is None else table.filter(pl.col("paper") == paper)
        cells = [str(t.filter(pl.col("magnitude_verdict") == v).height) for v in present]
        dirs = t.filter(pl.col("direction_verdict") == AGREE).height
        ind = independent(t)
        indep = f"{ind.filter(pl.col('magnitude_verdict') == AGREE).height} / {ind.filter(pl.col('magnitude_verdict') == DISAGREE).height}"
        name = "**all**" if paper is None else paper
        lines.append(f"| {name} | {t.height} | " + " | ".join(cells) + f" | {dirs} | {indep} |")
    return "\n".join(lines)


def ungated_failures(findings_t: pl.DataFrame, checks_t: pl.DataFrame, groups_t: pl.DataFrame) -> list[str]:
    """Checks (lab checks and condition statements) that do not hold here and gate no
    compared group of any finding: a failing condition must say which verdicts it
    withholds, else it is a finding about the emulator that nobody reads. A check whose
    failing is one of its groups' (``check@group``) is gated only where a finding's group
    names that group (or the whole check), not where it names another of its groups."""
    rows = [*checks_t.to_dicts(), *findings_t.filter(pl.col("kind") != "finding").to_dicts()]
    named = {k.strip() for ks in groups_t.filter(pl.col("kind") == "finding")["checks"].drop_nulls().to_list()
             for k in ks.split(CHECK_SEP) if k.strip()}
    out = []
    for r in rows:
        if r["magnitude_verdict"] in (NOT_REPRODUCIBLE, NO_DATA) or holds(r) or r["id"] in named:
            continue
        bad = [f"{r['id']}@{g['group']}" for g in groups_t.filter((pl.col("id") == r["id"]) & (pl.col("kind") != "finding"))
               .to_dicts() if g["magnitude_verdict"] not in (NOT_REPRODUCIBLE, NO_DATA) and not holds(g)]
        if bad:
            out += [k for k in bad if k not in named]
        elif not any(k.partition("@")[0] == r["id"] for k in named):
            out.append(r["id"])
    return sorted(out)


def independent(table: pl.DataFrame) -> pl.DataFrame:
    """Rows whose decisive magnitude verdict is evidence about MPTCP: basis outcome (our
    links were not sized from the number, no word read as a number), agree or disagree."""
    return table.filter((pl.col("basis") == OUTCOME) & pl.col("magnitude_verdict").is_in([AGREE, DISAGREE]))


def counts(table: pl.DataFrame) -> str:
    c = table.group_by("magnitude_verdict").len().sort("magnitude_verdict")
    return ", ".join(f"{v} {n}" for v, n in c.iter_rows())


__all__ = ["COLUMNS", "GROUP_COLUMNS", "evaluate", "evaluate_claim", "findings", "write_csv", "markdown",
           "counts", "counts_table", "independent", "ungated_failures"]
