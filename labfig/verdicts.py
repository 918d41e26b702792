"""The findings as the notebooks show them: the paper's rows (its number and band, ours
with the interval, both verdicts) and every compared group's estimate, drawn against
the paper's band. The notebooks never recompute a claim's statistic: the rows and
group estimates are the findings' own (``results/findings.csv`` and
``results/findings-groups.csv`` of the same database, the opened lab's ``findings``
folder, or the tables the lab was opened with when a notebook runs outside the workflow).
"""
from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import altair as alt
import polars as pl

from findings.evaluate import COLUMNS, GROUP_COLUMNS, SCHEMA, GROUP_SCHEMA, band_text, ours_text

from .charts import render
from .session import lab

VERDICT_COLOR = {"agree": "#1a7f37", "disagree": "#b22222", "inconclusive": "#777777", "underpowered": "#b8860b",
                 "not comparable": "#6f42c1", "direction only": "#1f6feb", "no direction": "#777777"}


FILES = ("findings.csv", "lab-checks.csv", "findings-groups.csv")


@lru_cache(maxsize=None)
def _read(findings_dir: Path) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    rows, checks = (pl.read_csv(findings_dir / f, schema_overrides=SCHEMA).select(COLUMNS) for f in FILES[:2])
    groups = pl.read_csv(findings_dir / FILES[2], schema_overrides=GROUP_SCHEMA).select(GROUP_COLUMNS)
    return rows, checks, groups


def _tables() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(findings, lab checks, group estimates) of the opened lab."""
    now = lab()
    if now.findings and all((now.findings / f).is_file() for f in FILES):
        return _read(now.findings)
    if now.tables is None:
        raise RuntimeError(f"no findings tables for {now.db}: open the lab with its findings folder "
                           "(findings.csv, lab-checks.csv, findings-groups.csv) or with the tables computed")
    return now.tables


def tables(paper: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The paper's findings rows and group estimates."""
    rows, _, groups = _tables()
    return rows.filter(pl.col("paper") == paper), groups.filter(pl.col("paper") == paper)


def checks_table(paper: str) -> str:
    """Markdown: the paper's lab checks (our emulated set-up against the paper's conditions)."""
    _, checks, _ = _tables()
    lines = ["| lab check | the paper | band | ours [CI: 95 % unless named] | n | verdict |", "|---|---|---|---|---|---|"]
    for r in checks.filter(pl.col("paper") == paper).iter_rows(named=True):
        lines.append(f"| `{r['id']}`: {r['says']} ({r['source']}) | {r['paper_text']} | {band_text(r)} | "
                     f"{ours_text(r)} | {r['n'] or '–'} | **{r['magnitude_verdict']}** |")
    return "\n".join(lines) if len(lines) > 2 else "_no lab checks for this paper_"


def verdict_table(paper: str) -> str:
    """Markdown: every statement of the paper's inventory with its number, band, ours and
    both verdicts (and why, where they are not agree)."""
    rows, _ = tables(paper)
    lines = ["| claim | the paper | band | ours [CI: 95 % unless named] | n | magnitude | direction | basis | why |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows.iter_rows(named=True):
        why = (r["reason"] or "").replace("|", "/")
        lines.append(f"| `{r['id']}`: {r['says']} ({r['source']}) | {r['paper_text']} | {band_text(r)} | "
                     f"{ours_text(r)} | {r['n'] or '–'} | **{r['magnitude_verdict']}** | {r['direction_verdict']} | "
                     f"{r['basis']} | {why} |")
    return "\n".join(lines)


def _wrap(text: str, n: int) -> list[str]:
    out, cur = [], ""
    for word in text.split():
        if cur and len(cur) + len(word) + 1 > n:
            out.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}".strip()
    return out + [cur] if cur else out


def _finite(x):
    return x is not None and not (isinstance(x, float) and (math.isnan(x) or math.isinf(x)))


def claims_chart(paper: str, ids: list[str], width: int = 320, log: bool = False) -> alt.VConcatChart | None:
    """One panel per claim: each group's estimate with the interval its verdict was decided
    with (findings ``ci_level``: 95 %, Bonferroni for disagree, 90 % for "no difference"; coloured by the
    group's magnitude verdict), the paper's band (shaded) and number (diamond). None when
    none of the claims has a group estimate."""
    rows, groups = tables(paper)
    panels = []
    for cid in ids:
        r = rows.filter(pl.col("id") == cid)
        g = groups.filter(pl.col("id") == cid)
        if not r.height or not g.height:
            continue
        r = r.row(0, named=True)
        ref = float(r["paper_direction"].split()[1].rstrip("%×")) if r["paper_direction"] else None
        xs = [v for v in g["ci_low"].to_list() + g["ci_high"].to_list() + [r["band_low"], r["band_high"],
                                                                            r["paper_value"], ref] if _finite(v)]
        lo, hi = min(xs), max(xs)
        pad = (hi - lo) * 0.08 or abs(hi) * 0.1 or 1.0
        dom = [lo - pad, hi + pad]
        if log:
            dom = [max(min(v for v in xs if v > 0) / 1.3, 1e-9), hi * 1.3]
        unit = r["unit"] or ""
        x_title = _wrap(r["statistic"] + (f" ({unit})" if unit else ""), 80)
        scale = alt.Scale(domain=dom, type="log" if log else "linear", nice=False)
        base = alt.Chart(g.with_columns(pl.col("magnitude_verdict").alias("verdict"))).encode(
            y=alt.Y("group:N", title=None, sort=None))
        layers = []
        if _finite(r["band_low"]) or _finite(r["band_high"]):
            b = pl.DataFrame({"lo": [r["band_low"] if _finite(r["band_low"]) else dom[0]],
                              "hi": [r["band_high"] if _finite(r["band_high"]) else dom[1]],
                              "label": [f"paper's band {band_text(r)}"]})
            layers.append(alt.Chart(b).mark_rect(color="#9ecae1", opacity=0.35).encode(
                x=alt.X("lo:Q", scale=scale, title=x_title), x2="hi:Q", tooltip=["label:N"]))
        layers.append(base.mark_rule(strokeWidth=2).encode(
            x=alt.X("ci_low:Q", scale=scale, title=x_title), x2="ci_high:Q",
            color=alt.Color("verdict:N", scale=alt.Scale(domain=list(VERDICT_COLOR), range=list(VERDICT_COLOR.values())),
                            legend=alt.Legend(title="group's magnitude verdict"))))
        layers.append(base.mark_point(filled=True, size=60).encode(
            x=alt.X("value:Q", scale=scale), color="verdict:N",
            tooltip=["group:N", alt.Tooltip("value:Q", format=".3g"), alt.Tooltip("ci_low:Q", format=".3g"),
                     alt.Tooltip("ci_high:Q", format=".3g"), alt.Tooltip("ci_level:Q", format=".4g", title="level"), "n:Q",
                     "magnitude_verdict:N", "direction_verdict:N"]))
        if ref is not None:  # the paper's sign or order: "< 1" against its reference value
            if dom[0] <= ref <= dom[1]:
                dv = pl.DataFrame({"x": [ref], "label": [f"the paper's direction: {r['paper_direction']}"]})
                layers.append(alt.Chart(dv).mark_rule(color="#1f6feb", strokeDash=[2, 2]).encode(
                    x=alt.X("x:Q", scale=scale), tooltip=["label:N"]))
        if _finite(r["paper_value"]):
            pv = pl.DataFrame({"x": [r["paper_value"]], "label": [f"paper: {r['paper_text']}"]})
            layers.append(alt.Chart(pv).mark_rule(color="black", strokeDash=[4, 3]).encode(x=alt.X("x:Q", scale=scale)))
            layers.append(alt.Chart(pv).mark_text(align="left", dx=4, dy=-6, fontSize=11, baseline="bottom").encode(
                x=alt.X("x:Q", scale=scale), y=alt.value(0), text="label:N"))
        # whole titles, wrapped: a cut one drops the words a reader needs ("§5.2 (opening); )")
        title = alt.TitleParams(_wrap(f"{cid}: {r['says']}", 90), fontSize=12, anchor="start",
                                subtitle=_wrap(f"magnitude: {r['magnitude_verdict']}; direction: "
                                               f"{r['direction_verdict']} (n = {r['n']}; {r['source']})", 100))
        panels.append(alt.layer(*layers).properties(width=width, height=max(40, 22 * g.height), title=title))
    if not panels:
        return None
    return alt.vconcat(*panels).resolve_scale(x="independent", color="shared")


def claims_figure(paper: str, label: str, width: int = 500):
    """The notebook figure ``claims``: ``claims_chart`` of every claim of ``paper`` with an
    estimate of ours, or an empty state saying there is none."""
    rows, _ = tables(paper)
    ids = rows.filter(pl.col("our_value").is_not_null())["id"].to_list()
    chart = claims_chart(paper, ids, width=width)
    return render(pl.DataFrame({"n": [len(ids)]}) if chart is not None else pl.DataFrame(), lambda _: chart,
                  "claims", f"{label}: the claims' group estimates against the paper's bands",
                  caption="Per claim and group: our estimate with the interval its verdict was decided with (95 %; "
                          "the Bonferroni level for disagree; 90 % for \"no difference\") (colour: the group's "
                          "magnitude verdict); shaded: the paper's band; dashed: its number; dotted: its direction.",
                  empty_msg="No claim of this paper has a group estimate in this database.")
