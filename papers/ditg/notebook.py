# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # MPTCP latency for cloud applications (D-ITG over emulated paths)
#
# Application-level packet latency (D-ITG: ITGSend to ITGRecv, per packet) of Netflix-,
# Google-Maps- and Google-Docs-like traffic: standard TCP (CUBIC) over path P1 only
# (mode `SP-wifi`) against MPTCP over P1 + P2 (`MP-2`, coupled LIA). The paper's figures:
# equal RTTs on both paths (Fig. 3), P1 at 10 ms and P2 longer (Fig. 4 at 100 Mbit/s,
# Fig. 5 at 10 Mbit/s), loss on P1, P2 or both (Fig. 6-8). A run's latency is ITGDec's
# average packet delay (`run_facts.app_latency_ms`); the paper's metric is "the mean of
# the average packet latency in all test runs" and the TCP baseline of an MPTCP
# configuration is TCP over P1 with P1's RTT, loss and rate.
#
# Every number of a claim below is the findings' own (`findings.csv`,
# `findings-groups.csv`): this notebook draws those group estimates with their
# intervals and, beside them, the runs behind them; it computes no claim itself. Where a
# figure puts claims of opposite sign conventions on one axis it only re-expresses the
# claims' estimates and interval ends: a reduction r (%) is a latency ratio MPTCP ÷ TCP
# of 1 − r/100, an increase i (%) one of 1 + i/100. The paper's statements:
# `papers/ditg/inventory.yaml`.

# %% tags=["parameters"]
import os

DB = os.environ.get("MPTCP_LAB_DB", "../../results/lab.duckdb")  # `make lab` gives its kernels one
FIGURES = "../../results/figures/ditg"
FINDINGS = None  # the workflow's findings folder; None: the findings are computed from DB

# %%
from papers.lab import open_paper

open_paper("ditg", DB, FIGURES, FINDINGS)
import math
import re
import textwrap

import altair as alt
import polars as pl
from IPython.display import Markdown, display

from labfig import left_out, query, render, usable
from labfig.db import mptcp_cc
from labfig.verdicts import checks_table, claims_figure, tables, verdict_table

display(Markdown(left_out("ditg")))

APP = {"netflix": "Netflix", "maps": "Google Maps", "docs": "Google Docs"}
APPS = list(APP.values())
TCP, MPTCP = "TCP over P1", "MPTCP over P1 + P2"
TRANSPORT = {"SP-wifi": TCP, "MP-2": MPTCP}
T_COLOR = alt.Scale(domain=[TCP, MPTCP], range=["#4c78a8", "#f58518"])
APP_COLOR = {"Netflix": "#e45756", "Google Maps": "#54a24b", "Google Docs": "#b279a2"}

# The runs the claims use (claims.py `_runs`): usable runs with a latency, MPTCP of one
# congestion control (the paper's LIA first, never pooled) and, per profile, only the
# longest test (the standard scale's 48/30/15 s).
MP_CC = mptcp_cc("ditg", ("lia", "cubic"))
RUNS = query(f"""
    WITH r AS (
        SELECT run_id, mode, app, repetition, campaign_seed, rtt_wifi_ms AS rtt1, rtt_cell_ms AS rtt2,
               loss_wifi AS loss1, coalesce(loss_cell, 0) AS loss2, rate_wifi_mbit AS rate, duration_s,
               app_latency_ms AS latency_ms, app_sent_packets AS generated, app_packets AS received,
               max(duration_s) OVER (PARTITION BY app) AS longest
        FROM run_facts
        WHERE {usable('ditg')} AND app_latency_ms IS NOT NULL AND app IS NOT NULL
          AND mode IN ('SP-wifi', 'MP-2') AND (mode <> 'MP-2' OR congestion_control = '{MP_CC}'))
    SELECT * EXCLUDE (longest) FROM r WHERE duration_s IS NULL OR duration_s = longest
    ORDER BY app, mode, rtt1, rtt2, loss1, loss2, rate, repetition""").with_columns(
    transport=pl.col("mode").replace_strict(TRANSPORT, default=pl.col("mode")),
    application=pl.col("app").replace_strict(APP, default=pl.col("app")))
MP = pl.col("mode") == "MP-2"


def pct(loss: float) -> str:
    return f"{100 * loss:g} %"


def cfg_text(rtt1, loss1, rtt2, loss2, rate) -> str:
    """An MPTCP configuration as claims.py's ``Cfg.text`` names it (the group labels)."""
    def path(r, l):
        return f"{r:g} ms" + (f" {pct(l)}" if l else "")
    return f"P1 {path(rtt1, loss1)} / P2 {path(rtt2, loss2)}" + ("" if rate == 100 else f", {rate:g} Mbit/s")


# %% [markdown]
# ## The paper's statements and ours
# Magnitude: our interval against the band of the paper's number (the interval shown is the
# one the verdict was decided with: 95 %, the Bonferroni level for *disagree*, 90 % for "no
# difference"; its level is in the `ci_level` column); direction: against
# the sign or order the paper states; *not comparable* when a lab check the claim rests on
# fails; *underpowered* when our interval is wider than the paper's effect.

# %%
display(Markdown(verdict_table("ditg")))

# %%
# The claims' group estimates, re-expressed on one axis per figure (never recomputed).
ROWS, GROUPS = tables("ditg")
KIND = {  # the sign convention of each claim's statistic (claims.py: REDUCTION, INCREASE, mean_ratio)
    **{c: "reduction" for c in ("ditg-netflix-symmetric", "ditg-maps-symmetric", "ditg-reduced-despite-small-rtt-diff",
                                "ditg-reduced-despite-loss", "ditg-lossy-p2-netflix", "ditg-lossy-both-netflix",
                                "ditg-lossy-both-maps")},
    **{c: "increase" for c in ("ditg-docs-symmetric", "ditg-asymmetric-40ms-on-par", "ditg-asymmetric-netflix",
                               "ditg-asymmetric-maps", "ditg-10mbit-similar", "ditg-lossy-p2-maps-docs")},
    "ditg-10mbit-longer-latency": "ratio"}
# the paper's words where it gives no number (a direction only), for the figures' labels
WORDS = {"ditg-reduced-despite-small-rtt-diff": "paper: minor impact, MPTCP lower (no number)",
         "ditg-reduced-despite-loss": "paper: MPTCP lower despite loss (no number)",
         "ditg-lossy-p2-netflix": "paper: substantial reduction (no number)",
         "ditg-10mbit-similar": "paper: as at 100 Mbit/s (no number)",
         "ditg-10mbit-longer-latency": "paper: longer at 10 Mbit/s (no number)"}


def _finite(x) -> bool:
    return x is not None and not (isinstance(x, float) and (math.isnan(x) or math.isinf(x)))


def conv(x, kind: str, to: str):
    """A claim's number in the figure's unit: 'reduction' (%, MPTCP lower > 0) or 'ratio' (MPTCP ÷ TCP)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    if to == "reduction":
        return {"reduction": x, "increase": -x}.get(kind)
    return {"reduction": 1 - x / 100, "increase": 1 + x / 100, "ratio": x}[kind]


def interval(a, b, kind, to):
    a, b = conv(a, kind, to), conv(b, kind, to)
    return (None, None) if a is None or b is None else (min(a, b), max(a, b))


def estimates_of(cid: str, to: str) -> list[dict]:
    """One dict per group of claim ``cid``: its estimate and interval in the figure's unit,
    the paper's number and band in the same unit, and the label of the paper's mark."""
    r = ROWS.filter(pl.col("id") == cid)
    if not r.height:
        return []
    r, kind = r.row(0, named=True), KIND[cid]
    plo, phi = interval(r["band_low"], r["band_high"], kind, to)
    pv = conv(r["paper_value"], kind, to)
    text = r["paper_text"] or ""
    if _finite(r["paper_value"]):
        op = (re.match(r"^\s*([<>≈])", text) or [None, ""])[1]
        op = {">": "<", "<": ">"}.get(op, op) if to == "reduction" and kind == "increase" else op
        if to == "ratio" and kind == "reduction":
            op = {">": "<", "<": ">"}.get(op, op)
        label = f"paper: {text}" + (f" (ratio {op} {pv:.3g})" if to == "ratio" and kind != "ratio" else "")
    elif _finite(r["band_low"]) and _finite(r["band_high"]):
        label, pv = "paper: no difference (± 20 % margin)", None
    else:
        label, plo, phi = WORDS.get(cid, f"paper: {text}"), None, None
    out = []
    for g in GROUPS.filter(pl.col("id") == cid).iter_rows(named=True):
        lo, hi = interval(g["ci_low"], g["ci_high"], kind, to)
        app = re.match(r"(?i)^(netflix|maps|docs)", g["group"])
        out.append(dict(claim=cid, group=g["group"], app=APP.get(app[1].lower()) if app else None,
                        value=conv(g["value"], kind, to), lo=lo, hi=hi, n=g["n"], verdict=g["magnitude_verdict"],
                        paper=pv, paper_lo=plo, paper_hi=phi, paper_label=label))
    apps = {d["app"] for d in out}
    if len(apps) == 1 and None not in apps:  # the paper's number is one application's: the label says whose
        for d in out:
            d["paper_label"] = f"{d['app']}: {d['paper_label']}"
    return out


EST_SCHEMA = {"claim": pl.Utf8, "group": pl.Utf8, "app": pl.Utf8, "value": pl.Float64, "lo": pl.Float64,
              "hi": pl.Float64, "n": pl.Int64, "verdict": pl.Utf8, "paper": pl.Float64, "paper_lo": pl.Float64,
              "paper_hi": pl.Float64, "paper_label": pl.Utf8}


def estimates_frame(rows: list[dict], **extra: pl.DataType) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={**EST_SCHEMA, **extra}, orient="row") if rows else \
        pl.DataFrame(schema={**EST_SCHEMA, **extra})


def domain(e: pl.DataFrame, log: bool, also: tuple = (), room: float = 0.0) -> list[float]:
    """The axis domain of a figure's estimates and the paper's numbers; ``room``: extra share
    of the range on the high side for the labels."""
    xs = [v for c in ("value", "lo", "hi", "paper", "paper_lo", "paper_hi") if c in e.columns
          for v in e[c].to_list() if _finite(v) and (v > 0 or not log)] + [v for v in also if _finite(v)]
    if not xs:
        return [0.5, 2.0] if log else [-1.0, 1.0]
    lo, hi = min(xs), max(xs)
    if log:
        return [lo / 1.6, hi * 1.6 * (hi / lo) ** room]
    pad = (hi - lo) * 0.1 or 1.0
    return [lo - pad, hi + pad + (hi - lo) * room]


def clip_band(e: pl.DataFrame, dom: list[float]) -> pl.DataFrame:
    """The paper's open-ended bands (> 40 %: up to infinity) drawn to the edge of the axis;
    ``label_at``: where the paper's label goes (its number, else its band's upper end)."""
    def c(col):
        return pl.when(pl.col(col).is_null()).then(None).otherwise(pl.col(col).clip(dom[0], dom[1]))
    return e.with_columns(paper_lo=c("paper_lo"), paper_hi=c("paper_hi"),
                          label_at=pl.coalesce(pl.col("paper"), pl.col("paper_hi").clip(dom[0], dom[1])))


def est_title(e: pl.DataFrame, text: str, **kw) -> alt.TitleParams:
    """The estimates panel's title, or what is missing when the findings have none for it."""
    if not e.height:
        return alt.TitleParams("No claim estimate for these configurations in the findings (see the verdict table)",
                               color="#b22222")
    return alt.TitleParams(text, **kw)


def app_color(apps: list[str], title: str | None = "application", legend: bool = True) -> alt.Color:
    return alt.Color("app:N", title=title, scale=alt.Scale(domain=apps, range=[APP_COLOR[a] for a in apps]),
                     legend=alt.Legend() if legend else None)


def ratio_axis(title, dom: list[float]) -> alt.Axis:
    """A log axis of latency ratios with round ticks inside the domain (1 = no change)."""
    ticks = [0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10, 20, 30, 50, 100, 200, 500]
    return alt.Axis(title=title, values=[t for t in ticks if dom[0] <= t <= dom[1]], format="~g")


TIP = ["claim:N", "group:N", alt.Tooltip("value:Q", format=".3g", title="our estimate"),
       alt.Tooltip("lo:Q", format=".3g", title="CI low"), alt.Tooltip("hi:Q", format=".3g", title="CI high"),
       "n:Q", alt.Tooltip("verdict:N", title="magnitude verdict"), alt.Tooltip("paper_label:N", title="paper")]


def columns_estimates(e: pl.DataFrame, x: alt.X, axis: alt.Axis, dom: list[float], log: bool, apps: list[str],
                      bars: bool, legend: bool, side: str = "right", ref: tuple[float, str] | None = None,
                      offset: bool = True):
    """Vertical: per category of ``x`` (and per application beside each other when more than
    one) the claims' estimates (bar or point) with their intervals, the paper's band
    (shaded), number (black tick) and label; a label shared by the groups of one category
    is written once, centred."""
    scale = alt.Scale(domain=dom, type="log" if log else "linear", nice=False, clamp=True)
    off = {"xOffset": alt.XOffset("app:N", scale=alt.Scale(domain=apps))} if offset and len(apps) > 1 else {}
    half = 12 if off else 22

    def Y(field):  # every layer on one scale and axis (no merged axis titles)
        return alt.Y(field, scale=scale, axis=axis)

    e = clip_band(e, dom)
    base = alt.Chart(e).encode(x=x, **off)
    layers = []
    if ref is not None:
        r = alt.Chart(pl.DataFrame({"y": [ref[0]], "t": [ref[1]]}))
        layers += [r.mark_rule(color="#555", strokeDash=[4, 3]).encode(y=Y("y:Q")),
                   r.mark_text(align="left", x=3, dy=-6, fontSize=10, color="#555").encode(y=Y("y:Q"), text="t:N")]
    layers.append(base.transform_filter("isValid(datum.paper_lo) && isValid(datum.paper_hi)").mark_bar(
        color="#9ecae1", opacity=0.45, size=2 * half + 6).encode(y=Y("paper_lo:Q"), y2="paper_hi:Q",
                                                                tooltip=["paper_label:N"]))
    ours = (base.mark_bar(opacity=0.85, size=2 * half - 4) if bars else base.mark_point(filled=True, size=90))
    ours = ours.encode(y=Y("value:Q"), color=app_color(apps, legend=legend), tooltip=TIP)
    layers.append(ours.encode(y2=alt.datum(1.0 if log else 0.0)) if bars else ours)
    layers.append(base.mark_rule(strokeWidth=2, color="black").encode(y=Y("lo:Q"), y2="hi:Q", tooltip=TIP))
    layers += [base.mark_tick(color="black", thickness=1.5, size=10).encode(y=Y(f"{c}:Q"), tooltip=TIP)
               for c in ("lo", "hi")]
    layers.append(base.transform_filter("isValid(datum.paper)").mark_tick(
        color="black", thickness=2.5, size=2 * half + 6).encode(y=Y("paper:Q"), tooltip=["paper_label:N"]))
    lab = e.filter(pl.col("label_at").is_not_null())
    xf = x.to_dict()["field"]
    shared = lab.group_by(xf, "paper_label").agg(pl.len().alias("k"), pl.col("label_at").max())
    one = lab.join(shared.filter(pl.col("k") == 1).select(xf, "paper_label"), on=[xf, "paper_label"])
    many = shared.filter(pl.col("k") > 1)
    if many.height:
        layers.append(alt.Chart(many).mark_text(baseline="bottom", dy=-3, fontSize=10).encode(
            x=x, y=Y("label_at:Q"), text="paper_label:N"))
    order = x.to_dict().get("sort")
    edge = (order[-1] if side == "right" else order[0]) if isinstance(order, list) and order else None
    for flip in (False, True):  # labels at the plot's edge go to the other side (inside the plot)
        part = one.filter((pl.col(xf) == edge) == flip) if edge is not None else (one if not flip else one.clear())
        right = (side == "right") != flip
        if part.height:
            if flip:  # turned inward, toward the neighbouring category: wrapped narrow
                part = part.with_columns(pl.col("paper_label").map_elements(
                    lambda t: "\n".join(textwrap.wrap(t, 18)), return_dtype=pl.Utf8))
            layers.append(alt.Chart(part).mark_text(
                align="left" if right else "right", baseline="middle", fontSize=10, lineBreak="\n",
                dx=(half + 8) * (1 if right else -1)).encode(x=x, **off, y=Y("label_at:Q"), text="paper_label:N"))
    return alt.layer(*layers)


def rows_estimates(e: pl.DataFrame, row: str, row_sort: list[str], axis: alt.Axis, dom: list[float], log: bool,
                   apps: list[str], bars: bool, ref: tuple[float, str] | None = None, width: int = 520):
    """Horizontal: one row per group, the claim's estimate (bar from the no-effect value, or
    point) with its interval, the paper's band (shaded), number (black tick) and label
    (at its number or band; the paper's words at our estimate where it gives no number)."""
    scale = alt.Scale(domain=dom, type="log" if log else "linear", nice=False, clamp=True)

    def X(field):
        return alt.X(field, scale=scale, axis=axis)

    e = clip_band(e, dom).with_columns(label_x=pl.coalesce("label_at", "value"))
    base = alt.Chart(e).encode(y=alt.Y(f"{row}:N", sort=row_sort, title=None, axis=alt.Axis(labelLimit=420)))
    layers = []
    if ref is not None:
        r = alt.Chart(pl.DataFrame({"x": [ref[0]], "t": [ref[1]]}))
        layers += [r.mark_rule(color="#555", strokeDash=[4, 3]).encode(x=X("x:Q")),
                   r.mark_text(align="left", dx=3, y=-6, fontSize=10, color="#555").encode(x=X("x:Q"), text="t:N")]
    layers.append(base.transform_filter("isValid(datum.paper_lo) && isValid(datum.paper_hi)").mark_bar(
        color="#9ecae1", opacity=0.45, size=24).encode(x=X("paper_lo:Q"), x2="paper_hi:Q", tooltip=["paper_label:N"]))
    ours = base.mark_bar(opacity=0.85, size=14) if bars else base.mark_point(filled=True, size=90)
    ours = ours.encode(x=X("value:Q"), tooltip=TIP, color=alt.Color(
        "app:N", title="application", scale=alt.Scale(domain=apps, range=[APP_COLOR[a] for a in apps]),
        legend=alt.Legend(orient="bottom", direction="horizontal")))
    layers.append(ours.encode(x2=alt.datum(1.0 if log else 0.0)) if bars else ours)
    layers.append(base.mark_rule(strokeWidth=2, color="black").encode(x=X("lo:Q"), x2="hi:Q", tooltip=TIP))
    layers += [base.mark_tick(color="black", thickness=1.5, size=10).encode(x=X(f"{c}:Q"), tooltip=TIP)
               for c in ("lo", "hi")]
    layers.append(base.transform_filter("isValid(datum.paper)").mark_tick(color="black", thickness=2.5, size=24)
                  .encode(x=X("paper:Q"), tooltip=["paper_label:N"]))
    layers.append(base.mark_text(align="left", baseline="bottom", dx=5, dy=-7, fontSize=10).encode(
        x=X("label_x:Q"), text="paper_label:N"))
    return alt.layer(*layers).properties(width=width, height=34 * max(2, e.height))


# %% [markdown]
# ## Equal RTTs on both paths (Fig. 3)
# Top: each run's mean packet latency, TCP over P1 against MPTCP over two equal loss-free
# 100-Mbit/s paths (the standard scale runs them at 40 ms; the paper at 10-400 ms).
# Bottom: MPTCP's latency reduction, the claims' group estimates with their
# intervals (`ditg-netflix-symmetric`, `ditg-maps-symmetric`, `ditg-docs-symmetric`; Docs'
# increase drawn as a negative reduction), and the paper's numbers (§IV): Netflix > 40 %,
# Maps 20-30 %, Docs "no significant difference" (shaded: our declared ± 20 % margin).

# %%
LOSS_FREE = (pl.col("loss1") == 0) & (pl.col("loss2") == 0)
sym = RUNS.filter(LOSS_FREE & (pl.col("rate") == 100) & (~MP | (pl.col("rtt2") == pl.col("rtt1"))))
sym = sym.join(sym.filter(MP).select("app", "rtt1").unique(), on=["app", "rtt1"])  # the RTTs MPTCP ran at
RTTS3 = sorted(sym["rtt1"].unique().to_list())


def where3(app: str, rtt: float) -> str:
    return f"{app} · {rtt:g} ms" if len(RTTS3) > 1 else app


sym = sym.with_columns(where=pl.struct("application", "rtt1").map_elements(
    lambda s: where3(s["application"], s["rtt1"]), return_dtype=pl.Utf8))
ORDER3 = [where3(a, r) for a in APPS for r in RTTS3]
e3 = []
for cid in ("ditg-netflix-symmetric", "ditg-maps-symmetric", "ditg-docs-symmetric"):
    for d in estimates_of(cid, "reduction"):
        rtt = re.search(r"RTT (\d+(?:\.\d+)?) ms", d["group"])
        d["where"] = where3(d["app"], float(rtt[1]) if rtt else float("nan"))
        e3.append(d)
E3 = estimates_frame(e3, where=pl.Utf8)
APPS3 = [a for a in APPS if a in sym["application"].to_list() + E3["app"].to_list()]


def fig3(d):
    # six or more categories do not fit side by side at 0°: slanted, they do not overlap
    x = alt.X("where:N", sort=ORDER3, axis=alt.Axis(labelAngle=0 if len(ORDER3) <= 4 else -30, labelLimit=200),
              title=("application · RTT on both paths" if len(RTTS3) > 1 else
                     f"application (RTT {RTTS3[0]:g} ms on both paths, no loss, 100 Mbit/s)"))
    runs = alt.Chart(d).mark_point(filled=True, size=55, opacity=0.75).encode(
        x=x, xOffset=alt.XOffset("transport:N", scale=alt.Scale(domain=[TCP, MPTCP])),
        y=alt.Y("latency_ms:Q", title=["mean packet latency", "per run (ms)"], scale=alt.Scale(zero=True)),
        color=alt.Color("transport:N", scale=T_COLOR, title="runs"),
        tooltip=["run_id:N", "transport:N", "application:N", alt.Tooltip("rtt1:Q", title="RTT (ms)"),
                 alt.Tooltip("latency_ms:Q", format=".1f", title="mean latency (ms)")]
    ).properties(width=560, height=230, title="Each run's mean packet latency")
    dom = domain(E3, False, (0.0,))
    est = columns_estimates(E3, x, alt.Axis(title=["latency reduction with MPTCP", "vs TCP over P1 (%)"]), dom,
                            False, APPS3, True, legend=False, ref=(0.0, "no change"), offset=False).properties(
        width=560, height=260,
        title=est_title(E3, "MPTCP's reduction: the claims' estimates (CI) and the paper's numbers"))
    return alt.vconcat(runs, est).resolve_scale(color="independent")


render(sym, fig3, "fig3_equal_rtt",
       "Packet latency, TCP over P1 vs MPTCP over two equal loss-free paths (Fig. 3)",
       caption="Top: runs (dots). Bottom: the claims' reductions with intervals (bars, error bars); "
               "shaded and black: the paper's band and number, labelled.",
       paper_ref="Fig. 3, §IV",
       empty_msg="No ditg runs over equal loss-free 100-Mbit/s paths with both TCP and MPTCP (campaign ditg, "
                 "scenario sym-rtt40).",
       runs_by=["application", "transport", "rtt1"])

# %% [markdown]
# ## P2 longer than P1 (Fig. 4)
# P1 at 10 ms, P2 at 20, 40 and 400 ms, loss-free, 100 Mbit/s; TCP over P1 (10 ms) is
# the baseline at every P2 RTT. Top: each run's mean latency (log axis). Bottom: the
# latency ratio MPTCP ÷ TCP on a log axis (1 = no change; 3 = +200 %, 9 = +800 %), the
# claims' group estimates with intervals: P2 20 ms `ditg-reduced-despite-small-rtt-diff`,
# 40 ms `ditg-asymmetric-40ms-on-par`, 400 ms `ditg-asymmetric-netflix` and
# `ditg-asymmetric-maps`; the paper (§IV): minor impact up to 20 ms (no number), on par at
# 40 ms (shaded: our declared ± 20 % margin), more than +200 % (Netflix) and +800 % (Maps)
# at 400 ms.

# %%
asym = RUNS.filter((pl.col("rtt1") == 10) & LOSS_FREE & (pl.col("rate") == 100)
                   & (~MP | (pl.col("rtt2") > pl.col("rtt1"))))
asym = asym.join(asym.filter(MP).select("app").unique(), on="app")  # profiles with an asymmetric MPTCP run
asym = asym.with_columns(where=pl.when(MP).then(pl.format("MPTCP, P2 {} ms", pl.col("rtt2").cast(pl.Int64)))
                         .otherwise(pl.lit("TCP over P1 (10 ms)")))
P2_RTTS = sorted(asym.filter(MP)["rtt2"].unique().to_list())
ORDER4 = ["TCP over P1 (10 ms)"] + [f"MPTCP, P2 {r:g} ms" for r in P2_RTTS]
e4 = []
for cid in ("ditg-reduced-despite-small-rtt-diff", "ditg-asymmetric-40ms-on-par", "ditg-asymmetric-netflix",
            "ditg-asymmetric-maps"):
    for d in estimates_of(cid, "ratio"):
        m = re.search(r"P2 (\d+(?:\.\d+)?) ms", d["group"])
        d["p2"] = f"{float(m[1]):g}" if m else None
        e4.append(d)
E4 = estimates_frame(e4, p2=pl.Utf8)
APPS4 = [a for a in APPS if a in asym["application"].to_list() + E4["app"].to_list()]
P2_ORDER = [f"{r:g}" for r in sorted({float(p) for p in E4["p2"].drop_nulls().to_list()} | set(P2_RTTS))]


def fig4(d):
    runs = alt.Chart(d).mark_point(filled=True, size=55, opacity=0.75).encode(
        x=alt.X("where:N", sort=ORDER4, title="transport and P2's RTT (P1: 10 ms)", axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("application:N", scale=alt.Scale(domain=APPS4)),
        y=alt.Y("latency_ms:Q", title=["mean packet latency", "per run (ms, log)"], scale=alt.Scale(type="log")),
        color=alt.Color("application:N", title="application",
                        scale=alt.Scale(domain=APPS4, range=[APP_COLOR[a] for a in APPS4])),
        tooltip=["run_id:N", "transport:N", "application:N", alt.Tooltip("rtt2:Q", title="P2 RTT (ms)"),
                 alt.Tooltip("latency_ms:Q", format=".1f", title="mean latency (ms)")]
    ).properties(width=560, height=230, title="Each run's mean packet latency")
    dom = domain(E4, True, (1.0,))
    x = alt.X("p2:N", sort=P2_ORDER, title="P2's RTT (ms; P1: 10 ms)", axis=alt.Axis(labelAngle=0))
    est = columns_estimates(E4, x, ratio_axis(["latency ratio MPTCP ÷ TCP over P1", "(log; 1 = no change)"], dom),
                            dom, True, APPS4, False, legend=True, side="left", ref=(1.0, "no change")).properties(
        width=560, height=300,
        title=est_title(E4, "MPTCP ÷ TCP: the claims' estimates (CI) and the paper's numbers"))
    return alt.vconcat(runs, est).resolve_scale(color="shared")


render(asym, fig4, "fig4_asymmetric_rtt",
       "Packet latency with P2's RTT above P1's (10 ms), loss-free, 100 Mbit/s (Fig. 4)",
       caption="Top: runs (log). Bottom: the claims' MPTCP ÷ TCP latency ratios with intervals (log axis); "
               "shaded and black: the paper's band and number, labelled.",
       paper_ref="Fig. 4, §IV",
       empty_msg="No ditg runs with P1 at 10 ms and a longer P2 (MPTCP: asym-rtt10-20/-40/-400) with their TCP "
                 "baseline over P1 (sym-rtt10).",
       runs_by=["application", "transport", "rtt1", "rtt2"])

# %% [markdown]
# ## 10 Mbit/s against 100 Mbit/s (Fig. 5)
# Netflix (the standard scale runs the 10-Mbit/s tests for Netflix only), P1 10 ms, P2
# 400 ms. Top: each run's mean latency at both rates. Bottom: the claims' ratios (log
# axis) with intervals: MPTCP ÷ TCP at 100 Mbit/s (`ditg-asymmetric-netflix`) and at
# 10 Mbit/s (`ditg-10mbit-similar`), and each transport's latency at 10 ÷ 100 Mbit/s
# (`ditg-10mbit-longer-latency`). The paper (§IV) gives no number for Fig. 5: "similar
# results", longer latencies at 10 Mbit/s, a smaller impact of the asymmetry
# (`ditg-10mbit-smaller-effect`, in the subtitle).

# %%
RATE = {100.0: "100 Mbit/s", 10.0: "10 Mbit/s"}
slow_cfg = RUNS.filter(MP & (pl.col("rate") == 10) & LOSS_FREE).select("app", "rtt1", "rtt2").unique()
r5 = RUNS.filter(LOSS_FREE & pl.col("rate").is_in(list(RATE)))
r5 = pl.concat([r5.filter(MP).join(slow_cfg, on=["app", "rtt1", "rtt2"]),
                r5.filter(~MP).join(slow_cfg.select("app", "rtt1").unique(), on=["app", "rtt1"])])
APPS5 = [APP[a] for a in APP if a in r5["app"].to_list()]
r5 = r5.with_columns(rate_label=pl.col("rate").replace_strict(RATE, default="?"),
                     where=pl.when(MP).then(pl.format("MPTCP, P1 {} / P2 {} ms", pl.col("rtt1").cast(pl.Int64),
                                                      pl.col("rtt2").cast(pl.Int64)))
                     .otherwise(pl.format("TCP over P1 ({} ms)", pl.col("rtt1").cast(pl.Int64))))
if len(APPS5) > 1:
    r5 = r5.with_columns(where=pl.format("{}: {}", pl.col("application"), pl.col("where")))
ORDER5 = r5.sort("app", "mode", "rtt2", descending=[False, True, False])["where"].unique(maintain_order=True).to_list()
ROW5 = {("ditg-asymmetric-netflix", None): "MPTCP ÷ TCP over P1, 100 Mbit/s",
        ("ditg-10mbit-similar", None): "MPTCP ÷ TCP over P1, 10 Mbit/s",
        ("ditg-10mbit-longer-latency", "TCP"): "TCP over P1 (10 ms): 10 ÷ 100 Mbit/s",
        ("ditg-10mbit-longer-latency", "MPTCP"): "MPTCP (P1 10 / P2 400 ms): 10 ÷ 100 Mbit/s"}
e5 = []
for cid in ("ditg-asymmetric-netflix", "ditg-10mbit-similar", "ditg-10mbit-longer-latency"):
    for d in estimates_of(cid, "ratio"):
        who = "TCP" if "TCP over" in d["group"] else "MPTCP" if cid == "ditg-10mbit-longer-latency" else None
        d["row"] = f"{ROW5[(cid, who)]}  [{cid}]"
        e5.append(d)
E5 = estimates_frame(e5, row=pl.Utf8)
smaller = GROUPS.filter(pl.col("id") == "ditg-10mbit-smaller-effect")
SMALLER = ("ditg-10mbit-smaller-effect: " + "; ".join(
    f"{g['group']}: {g['value']:+.0f} points [{g['ci_low']:+.0f}, {g['ci_high']:+.0f}] (n = {g['n']})"
    for g in smaller.iter_rows(named=True)) + "; the paper: smaller at 10 Mbit/s (< 0)") if smaller.height else \
    "ditg-10mbit-smaller-effect: no estimate in this database"


def fig5(d):
    runs = alt.Chart(d).mark_point(filled=True, size=55, opacity=0.75).encode(
        x=alt.X("where:N", sort=ORDER5, axis=alt.Axis(labelAngle=0, labelLimit=260),
                title=f"{APPS5[0]}: transport and paths" if len(APPS5) == 1 else "configuration"),
        xOffset=alt.XOffset("rate_label:N", scale=alt.Scale(domain=list(RATE.values()))),
        y=alt.Y("latency_ms:Q", title=["mean packet latency", "per run (ms, log)"], scale=alt.Scale(type="log")),
        color=alt.Color("rate_label:N", title="rate of both paths",
                        scale=alt.Scale(domain=list(RATE.values()), range=["#4c78a8", "#e45756"])),
        tooltip=["run_id:N", "application:N", "where:N", "rate_label:N",
                 alt.Tooltip("latency_ms:Q", format=".1f", title="mean latency (ms)")]
    ).properties(width=560, height=230, title="Each run's mean packet latency")
    dom = domain(E5, True, (1.0,), room=0.15)
    est = rows_estimates(E5, "row", [f"{v}  [{k[0]}]" for k, v in ROW5.items()],
                         ratio_axis("latency ratio (log; 1 = no change)", dom), dom, True, APPS5, False,
                         ref=(1.0, "no change"), width=560).properties(
        title=est_title(E5, "Ratios: the claims' estimates (CI) and the paper's statements",
                        subtitle=SMALLER, subtitleFontSize=10))
    return alt.vconcat(runs, est).resolve_scale(color="independent")


render(r5, fig5, "fig5_10_vs_100_mbit",
       "10 Mbit/s vs 100 Mbit/s paths, P1 10 ms / P2 400 ms (Fig. 5 against Fig. 4)",
       caption="Top: runs at both rates (log). Bottom: the claims' latency ratios with intervals (log axis); "
               "black: the paper's number where it gives one, its words where it gives none.",
       paper_ref="Fig. 5, §IV",
       empty_msg="No 10-Mbit/s ditg runs (MPTCP asym10m-rtt10-400 and TCP sym10m-rtt10) in this database.",
       runs_by=["application", "transport", "rate"])

# %% [markdown]
# ## Loss on P1, on P2 or on both, 40 ms (Fig. 6-8)
# Both paths 40 ms, 100 Mbit/s; 4 % random loss on P1 only, P2 only or both (the paper:
# 1-4 % at 10, 40 and 100 ms; the standard scale runs 4 % at 40 ms, Netflix and Maps).
# TCP's baseline has P1's loss, so the loss-free TCP runs are drawn under "no loss" and
# "on P2", the lossy ones under "on P1" and "on both". Top: each run's mean latency, one
# row per application. Bottom: MPTCP's reduction, the claims' group estimates with
# intervals: no loss `ditg-netflix-symmetric` / `ditg-maps-symmetric`, on P1
# `ditg-reduced-despite-loss`, on P2 `ditg-lossy-p2-netflix` / `ditg-lossy-p2-maps-docs`
# (an increase, drawn as a negative reduction), on both `ditg-lossy-both-netflix` /
# `ditg-lossy-both-maps`; the paper (§V): about 25 % (Netflix) and 35 % (Maps) with 4 %
# on both paths at 40 ms. `ditg-lossy-p1-gain-grows` (the gain with loss on P1 minus the
# loss-free gain) is in the claims chart below.

# %%
RTT_LOSS = 40.0


def placement(l1: float, l2: float) -> str:
    if not l1 and not l2:
        return "no loss"
    if l1 and l2:
        return f"{pct(l1)} on both" if l1 == l2 else f"P1 {pct(l1)}, P2 {pct(l2)}"
    return f"{pct(l1 or l2)} on {'P1' if l1 else 'P2'}"


lr = RUNS.filter((pl.col("rtt1") == RTT_LOSS) & (pl.col("rate") == 100))
mp_loss = lr.filter(MP & (pl.col("rtt2") == RTT_LOSS))
places = mp_loss.select("app", "loss1", "loss2").unique()
places = places.join(places.filter((pl.col("loss1") > 0) | (pl.col("loss2") > 0)).select("app").unique(), on="app")
r68 = pl.concat([mp_loss.join(places, on=["app", "loss1", "loss2"]),
                 lr.filter(~MP).drop("loss2").join(places, on=["app", "loss1"]).select(mp_loss.columns)])
r68 = r68.with_columns(where=pl.struct("loss1", "loss2").map_elements(
    lambda s: placement(s["loss1"], s["loss2"]), return_dtype=pl.Utf8))
ORDER68 = [placement(a, b) for a, b in sorted(places.select("loss1", "loss2").unique().rows(),
                                                key=lambda t: (bool(t[0]) and bool(t[1]), bool(t[1]), t[0], t[1]))]
APPS68 = [a for a in APPS if a in r68["application"].to_list()]
PICK68 = {"no loss": {"netflix": "ditg-netflix-symmetric", "maps": "ditg-maps-symmetric"},
          "on P1": {"netflix": "ditg-reduced-despite-loss", "maps": "ditg-reduced-despite-loss"},
          "on P2": {"netflix": "ditg-lossy-p2-netflix", "maps": "ditg-lossy-p2-maps-docs"},
          "on both": {"netflix": "ditg-lossy-both-netflix", "maps": "ditg-lossy-both-maps"}}
e68 = []
for cid in sorted({c for v in PICK68.values() for c in v.values()}):
    for d in estimates_of(cid, "reduction"):
        m = re.search(r"(\d+(?:\.\d+)?) % on (P1|P2|both)", d["group"])
        d["where"] = f"{m[1]} % on {m[2]}" if m else "no loss"
        app = next((k for k, v in APP.items() if v == d["app"]), None)
        if PICK68.get("no loss" if not m else f"on {m[2]}", {}).get(app) == cid and d["app"] in APPS68:
            d["row"] = f"{d['where']} · {d['app']}"
            e68.append(d)
E68 = estimates_frame(e68, where=pl.Utf8, row=pl.Utf8)
ROWS68 = [f"{w} · {a}" for w in ORDER68 + sorted(set(E68["where"].to_list()) - set(ORDER68)) for a in APPS68]


def fig68(d):
    runs = alt.Chart(d).mark_point(filled=True, size=50, opacity=0.75).encode(
        x=alt.X("where:N", sort=ORDER68, title=f"packet loss (both paths {RTT_LOSS:g} ms, 100 Mbit/s)",
                axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("transport:N", scale=alt.Scale(domain=[TCP, MPTCP])),
        # loss-free runs (tens of ms) and 4 % loss (seconds) on one axis: log, or the former are a flat line
        y=alt.Y("latency_ms:Q", title=["mean packet latency", "per run (ms, log)"], scale=alt.Scale(type="log")),
        color=alt.Color("transport:N", scale=T_COLOR, title="runs"),
        tooltip=["run_id:N", "transport:N", "application:N", "where:N",
                 alt.Tooltip("latency_ms:Q", format=".1f", title="mean latency (ms)")]
    ).properties(width=560, height=170).facet(
        row=alt.Row("application:N", sort=APPS68, title=None,
                    header=alt.Header(labelFontSize=12, labelFontWeight="bold", labelAngle=-90)),
        title="Each run's mean packet latency").resolve_scale(y="independent")
    dom = domain(E68, False, (0.0,), room=0.3)
    est = rows_estimates(E68, "row", ROWS68, alt.Axis(title="latency reduction with MPTCP vs TCP over P1 (%)"), dom,
                         False, APPS68, True, ref=(0.0, "no change"), width=560).properties(
        title=est_title(E68, "MPTCP's reduction: the claims' estimates (CI) and the paper's numbers"))
    return alt.vconcat(runs, est).resolve_scale(color="independent")


render(r68, fig68, "fig6_8_loss",
       "Packet latency with 4 % loss on P1, P2 or both, 40-ms paths (Fig. 6-8)",
       caption="Top: runs per application. Bottom: the claims' reductions with intervals; shaded and black: "
               "the paper's band and number, labelled (its words where it gives no number).",
       paper_ref="Fig. 6, 7, 8, §V",
       empty_msg="No lossy ditg runs over 40-ms paths (MPTCP loss-rtt40-p1/p2/both-4pct with TCP baselines "
                 "sym-rtt40 and loss-rtt40-p1-4pct).",
       runs_by=["application", "transport", "loss1", "loss2"])

# %% [markdown]
# ## The offered load: packets generated and received (lab checks)
# TCP and MPTCP of one repetition replay one schedule (drawn once per campaign seed,
# profile and repetition: capture/ditg_schedule.py), so ITGSend generates them the same
# packets (`app_sent_packets`, from ITGDec on ITGSend's log); the claims compare their
# latencies on that premise (lab checks `lab-ditg-same-offered-load` and `-asym`: the same
# schedule file and packet count per pair, no tolerance) and on every packet arriving
# (`lab-ditg-delivered-*`: each test drains after its schedule). Per MPTCP configuration
# the checks use, its runs beside the TCP-over-P1 runs of the same profile and P1 (the
# baseline's runs appear under every configuration they are the baseline of). Left:
# packets generated per run (log); middle: the share of them ITGRecv received (captures
# before the drain lost what was still queued when ITGSend ended); right: the checks'
# group estimates, 100 × (MPTCP ÷ TCP generated − 1) per repetition pair, with
# intervals against the margin of 0.

# %%
mp_cfg = RUNS.filter(MP).select("app", "rtt1", "loss1", "rate", "rtt2", "loss2").unique()
load = pl.concat([RUNS.filter(MP).join(mp_cfg, on=list(mp_cfg.columns)),
                  RUNS.filter(~MP).drop("rtt2", "loss2").join(mp_cfg, on=["app", "rtt1", "loss1", "rate"])
                  .select(RUNS.columns)], how="vertical_relaxed")
load = load.filter(pl.col("generated").is_not_null()).with_columns(
    cfg=pl.struct("rtt1", "loss1", "rtt2", "loss2", "rate").map_elements(
        lambda s: cfg_text(s["rtt1"], s["loss1"], s["rtt2"], s["loss2"], s["rate"]), return_dtype=pl.Utf8),
    received_pct=pl.when(pl.col("generated") > 0).then(100 * pl.col("received") / pl.col("generated")))
load = load.with_columns(row=pl.format("{}, {}", pl.col("application"), pl.col("cfg")),
                         key=pl.format("{}, {}", pl.col("app"), pl.col("cfg")))
chk = GROUPS.filter(pl.col("id").str.starts_with("lab-ditg-same-offered-load")).rename(
    {"group": "key", "ci_low": "lo", "ci_high": "hi", "magnitude_verdict": "verdict"})
keys = set(chk["key"].to_list())
if keys:  # the configurations the checks compare (claims.py SYMMETRIC_PAIRS, ASYMMETRIC_PAIRS)
    load = load.filter(pl.col("key").is_in(keys))
ROW_ORDER = (load.with_columns(o=pl.col("app").replace_strict({a: i for i, a in enumerate(APP)}, default=9))
             .sort("o", "rate", "rtt1", "loss1", "rtt2", "loss2", descending=[False, True, False, False, False, False])
             ["row"].unique(maintain_order=True).to_list())
row_of = dict(zip(load["key"].to_list(), load["row"].to_list()))
chk = chk.with_columns(row=pl.col("key").replace_strict(row_of, default=None)).filter(pl.col("row").is_not_null())


def load_chart(d):
    y = alt.Y("row:N", sort=ROW_ORDER, title=None, axis=alt.Axis(labelLimit=360))
    yo = alt.YOffset("transport:N", sort=[TCP, MPTCP])
    color = alt.Color("transport:N", scale=T_COLOR, title="runs")
    tip = ["run_id:N", "transport:N", "row:N", "repetition:Q", "generated:Q", "received:Q",
           alt.Tooltip("received_pct:Q", format=".1f", title="received (%)")]
    gen = alt.Chart(d).mark_point(filled=True, size=40, opacity=0.7).encode(
        y=y, yOffset=yo, color=color, tooltip=tip,
        x=alt.X("generated:Q", title="packets generated by ITGSend per run (log)", scale=alt.Scale(type="log"))
    ).properties(width=500, height=26 * max(1, len(ROW_ORDER)), title="Offered load")
    rec = alt.Chart(d).mark_point(filled=True, size=40, opacity=0.7).encode(
        y=alt.Y("row:N", sort=ROW_ORDER, axis=None), yOffset=yo, color=color, tooltip=tip,
        x=alt.X("received_pct:Q", title="packets received ÷ generated per run (%)", scale=alt.Scale(zero=False))
    ).properties(width=500, height=26 * max(1, len(ROW_ORDER)), title="Share of the generated packets received")
    panels = [gen, rec]
    if chk.height:
        xs = [v for v in chk["lo"].to_list() + chk["hi"].to_list() if _finite(v)] + [-1.5, 1.5]
        sc = alt.Scale(domain=[min(xs) - 0.5, max(xs) + 0.5], nice=False)
        cbase = alt.Chart(chk).encode(y=alt.Y("row:N", sort=ROW_ORDER, axis=None))
        ctip = ["id:N", "key:N", alt.Tooltip("value:Q", format=".3g"), alt.Tooltip("lo:Q", format=".3g"),
                alt.Tooltip("hi:Q", format=".3g"), "n:Q", "verdict:N"]
        margin = alt.Chart(pl.DataFrame({"a": [0.0], "t": ["declared margin: 0 (one schedule per pair)"]}))
        panels.append(alt.layer(
            margin.mark_rule(color="#9ecae1", strokeWidth=3).encode(x=alt.X("a:Q", scale=sc), tooltip=["t:N"]),
            margin.mark_text(align="center", baseline="bottom", y=-4, fontSize=10).encode(
                x=alt.value(250), text="t:N"),
            cbase.mark_rule(strokeWidth=2, color="black").encode(
                x=alt.X("lo:Q", scale=sc, title=["MPTCP ÷ TCP generated packets − 1 (%),",
                                                 "lab check estimate (CI)"]), x2="hi:Q", tooltip=ctip),
            cbase.mark_point(filled=True, size=70, color="#6f42c1").encode(x=alt.X("value:Q", scale=sc),
                                                                         tooltip=ctip),
        ).properties(width=500, height=26 * max(1, len(ROW_ORDER)), title="Lab check: same offered load"))
    return alt.hconcat(*panels, spacing=12)


render(load, load_chart, "offered_load",
       "Packets generated by ITGSend and the share received, TCP vs MPTCP per configuration",
       caption="Dots: runs (TCP over P1 under each configuration it is the baseline of); right: the lab checks' "
               "estimates with intervals against the margin of 0.",
       paper_ref="§III (the same D-ITG profile over TCP and MPTCP)",
       empty_msg="No ditg runs with ITGSend's generated packet count (result.sent_packets) in this database.",
       runs_by=["application", "transport", "cfg"])

# %% [markdown]
# ## The claims, group by group
# Each panel: every compared group's estimate and interval in the claim's own unit
# (colour: its magnitude verdict), the paper's band (shaded) and number (dashed).

# %%
claims_figure("ditg", "D-ITG", width=520)

# %% [markdown]
# ## Lab checks: the emulated paths and the offered load against the paper's set-up

# %%
display(Markdown(checks_table("ditg")))
