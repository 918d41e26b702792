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
# # Ferlin, Dreibholz, Alay: multi-path transport over heterogeneous wireless (DRePaS)
#
# 32 MiB bulk downloads over three pairs of paths, 3G+WLAN, 2G+WLAN and 2G+3G (§III,
# §VI), with MPTCP (OLIA, the paper's; ours the lab's BPF OLIA) and with single-path TCP
# (Reno) over the reference path, the one MPTCP opens its first subflow on: WLAN in
# 3G+WLAN and 2G+WLAN, 3G in 2G+3G (the testbed's path `wifi`; the other technology is
# path `lte`). Only default MPTCP's side of the paper: DRePaS is an out-of-tree
# scheduler for MPTCP v0.88 that the lab does not have. Figures: MPTCP's goodput relative
# to TCP over the reference path (Fig. 4), the completion-time CDF per scenario (Fig. 7,
# Table I), the relative path contribution (Fig. 9, Table I) and one 2G+WLAN transfer
# second by second. Every number of a claim below is the findings' own (`findings.csv`,
# `findings-groups.csv`); this notebook draws them and the runs behind them, and
# computes no claim itself. The paper's statements: `papers/ferlin/inventory.yaml`.

# %% tags=["parameters"]
import os

DB = os.environ.get("MPTCP_LAB_DB", "../../results/lab.duckdb")  # `make lab` gives its kernels one
FIGURES = "../../results/figures/ferlin"
FINDINGS = None  # the workflow's findings folder; None: the findings are computed from DB

# %%
from papers.lab import open_paper

open_paper("ferlin", DB, FIGURES, FINDINGS)
import altair as alt
import polars as pl
from IPython.display import Markdown, display

from labfig import left_out, query, render, usable
from labfig.db import cdf_sql, mptcp_cc
from labfig.verdicts import checks_table, claims_figure, tables, verdict_table

# the MPTCP runs the claims use: one congestion control, the paper's OLIA first (never pooled;
# papers._common.one_mptcp_cc, the same rule as mptcp_cc)
MP_CC = mptcp_cc("ferlin", ("olia", "reno"))
USABLE = usable("ferlin") + (f" AND (transport <> 'MPTCP' OR congestion_control = '{MP_CC}')" if MP_CC else "")
SCENARIOS = ["2G+WLAN", "3G+WLAN", "2G+3G"]  # the paper's order: Fig. 7 and 9 (a), (b), (c)
REF = {"3G+WLAN": "WLAN", "2G+WLAN": "WLAN", "2G+3G": "3G"}  # path wifi: the first subflow's
OTHER = {"3G+WLAN": "3G", "2G+WLAN": "2G", "2G+3G": "2G"}  # path lte
MPTCP = f"MPTCP ({(MP_CC or 'olia').upper()})"
TCP = "TCP (Reno) over the reference path"
CONFIGS = [MPTCP, TCP]
COLOR = alt.Scale(domain=CONFIGS, range=["#1f77b4", "#ff7f0e"])
CFG_SQL = f"CASE WHEN mode = 'MP-2' THEN '{MPTCP}' ELSE '{TCP}' END"
_, GROUPS = tables("ferlin")

display(Markdown(left_out("ferlin")))

# %% [markdown]
# ## The paper's statements and ours
# Magnitude: our interval against the band of the paper's number (the interval shown is the
# one the verdict was decided with: 95 %, the Bonferroni level for *disagree*, 90 % for "no
# difference"; its level is in the `ci_level` column); direction: against
# the sign or order the paper states; *not comparable* when a lab check the claim rests on
# fails; *underpowered* when our interval is wider than the paper's effect. The DRePaS
# rows are *not reproducible here* (the scheduler is not in upstream Linux).

# %%
display(Markdown(verdict_table("ferlin")))


# %%
def estimates_of(claim_of: dict[str, list[str]]) -> pl.DataFrame:
    """Per scenario the group estimate of the first claim (of the listed ones) that has one
    for it: the findings' value and interval, with the claim id and its verdicts."""
    out = []
    for scenario, ids in claim_of.items():
        for cid in ids:
            g = GROUPS.filter((pl.col("id") == cid) & pl.col("group").str.starts_with(scenario))
            if g.height:
                out.append(g.head(1).with_columns(scenario=pl.lit(scenario)))
                break
    if not out:
        return pl.DataFrame(schema={"scenario": pl.String, "id": pl.String, "group": pl.String, "value": pl.Float64,
                                    "ci_low": pl.Float64, "ci_high": pl.Float64, "n": pl.Int64,
                                    "magnitude_verdict": pl.String, "direction_verdict": pl.String})
    return pl.concat(out, how="diagonal_relaxed").select("scenario", "id", "group", "value", "ci_low", "ci_high",
                                                          "n", "magnitude_verdict", "direction_verdict")


EST_TIP = ["id:N", "group:N", alt.Tooltip("value:Q", format=".3g"), alt.Tooltip("ci_low:Q", format=".3g"),
           alt.Tooltip("ci_high:Q", format=".3g"), "n:Q", "magnitude_verdict:N", "direction_verdict:N"]

# %% [markdown]
# ## MPTCP relative to single-path TCP (Fig. 4)
# The paper: "3G contributes on average by up to +30% to the WLAN path, while 2G hurts the
# WLAN performance up to -25%" (§IV); with 2G in the pair "the 2G path actually hurts the
# overall performance". Top: each run's goodput (32 MiB ÷ download time), MPTCP and TCP
# over the reference path. Bottom: the claims' group estimates of 100 × (mean MPTCP
# goodput ÷ mean TCP goodput − 1) with their intervals (`ferlin-2g-hurts-wlan-25`
# for 2G+WLAN, `ferlin-2g-hurts` for 2G+3G, `ferlin-3g-aggregation` for 3G+WLAN), and the
# paper's "up to" numbers (dashed, shaded from 0).

# %%
goodput = query(f"""
    SELECT run_id, scenario, {CFG_SQL} AS configuration, goodput_mbit, download_time_s
    FROM run_facts WHERE {USABLE} AND mode IN ('MP-2', 'SP-wifi') AND goodput_mbit IS NOT NULL
    ORDER BY ALL""").with_columns(scenario_ref=pl.col("scenario") + " (TCP over " +
                                  pl.col("scenario").replace_strict(REF, default="?") + ")")
REL = estimates_of({"2G+WLAN": ["ferlin-2g-hurts-wlan-25", "ferlin-2g-hurts"], "2G+3G": ["ferlin-2g-hurts"],
                    "3G+WLAN": ["ferlin-3g-aggregation"]})
PAPER_REL = pl.DataFrame([("2G+WLAN", -25.0, "Fig. 4:\nup to −25 %"),
                          ("3G+WLAN", 30.0, "Fig. 4:\nup to +30 %"),
                          ("2G+3G", None, "paper: below 0\n(2G hurts),\nno number")],
                         schema={"scenario": pl.String, "paper": pl.Float64, "note": pl.String}, orient="row")


def fig4(d):
    x = alt.X("scenario:N", title="path pair", sort=SCENARIOS, scale=alt.Scale(paddingInner=0.35),
              axis=alt.Axis(labelAngle=0))
    color = alt.Color("configuration:N", scale=COLOR, title="configuration")
    dots = alt.Chart(d).mark_point(size=45, opacity=0.8, filled=True).encode(
        x=x, xOffset=alt.XOffset("configuration:N", sort=CONFIGS),
        y=alt.Y("goodput_mbit:Q", title="goodput of the 32 MiB download (Mbit/s)", scale=alt.Scale(zero=True)),
        color=color, tooltip=["run_id", "scenario_ref:N", alt.Tooltip("goodput_mbit:Q", format=".3g"),
                              alt.Tooltip("download_time_s:Q", format=".1f", title="download time (s)")])
    top = dots.properties(width=560, height=220, title="each run's goodput")
    y = alt.Y("value:Q", title="MPTCP vs TCP over the reference path (%; 0: equal)")
    missing = pl.DataFrame({"scenario": [s for s in SCENARIOS if s not in REL["scenario"].to_list()]},
                           schema={"scenario": pl.String}).with_columns(zero=pl.lit(0.0), t=pl.lit("no estimate"))
    layers = [alt.Chart(pl.DataFrame({"y": [0.0]})).mark_rule(color="grey").encode(y=alt.Y("y:Q")),
              alt.Chart(missing).mark_text(fontSize=11, dy=-10, color="#b22222").encode(x=x, y="zero:Q", text="t:N")]
    p = PAPER_REL.filter(pl.col("paper").is_not_null()).with_columns(zero=pl.lit(0.0))
    layers += [alt.Chart(p).mark_bar(color="black", opacity=0.07, size=110).encode(x=x, y="zero:Q", y2="paper:Q"),
               alt.Chart(p).mark_tick(color="black", strokeDash=[5, 3], thickness=2, size=110).encode(
                   x=x, y="paper:Q", tooltip=["note:N"]),
               # two lines (Fig. 4: / up to ...), right-aligned just left of the estimate, above the paper's line
               alt.Chart(p).mark_text(fontSize=10, align="right", baseline="top", dx=-8, dy=-31, lineBreak="\n").encode(
                   x=x, y="paper:Q", text="note:N"),
               alt.Chart(PAPER_REL.filter(pl.col("paper").is_null()).with_columns(zero=pl.lit(0.0))).mark_text(
                   fontSize=10, align="right", baseline="top", dx=-8, dy=5, lineBreak="\n").encode(
                   x=x, y="zero:Q", text="note:N")]
    if REL.height:
        layers += [alt.Chart(REL).mark_rule(strokeWidth=2.5, color="#1f77b4").encode(
                       x=x, y=alt.Y("ci_low:Q", title="MPTCP vs TCP over the reference path (%; 0: equal)"),
                       y2="ci_high:Q",
                       tooltip=EST_TIP),
                   alt.Chart(REL).mark_point(shape="square", filled=True, size=80, color="#1f77b4").encode(
                       x=x, y=y, tooltip=EST_TIP),
                   alt.Chart(REL).mark_text(align="left", dx=10, fontSize=10, color="#1f77b4").encode(
                       x=x, y=y, text=alt.Text("value:Q", format="+.0f"))]
    bottom = alt.layer(*layers).properties(
        width=560, height=260, title="the claims' estimates: 100 × (mean MPTCP ÷ mean TCP goodput − 1), CI")
    return alt.vconcat(top, bottom).resolve_scale(x="shared")


render(goodput, fig4, "goodput_vs_tcp", "MPTCP goodput relative to TCP over the reference path (Ferlin Fig. 4)",
       caption="Top: runs (blue MPTCP, orange TCP over WLAN, WLAN, 3G for 2G+WLAN, 3G+WLAN, 2G+3G). Bottom: the "
               "claims' group estimates with intervals (ferlin-2g-hurts-wlan-25, ferlin-2g-hurts, "
               "ferlin-3g-aggregation); dashed and shaded: the paper's 'up to' numbers.",
       paper_ref="Ferlin et al. Fig. 4, §IV",
       empty_msg="No usable ferlin run with a goodput (campaign ferlin: MP-2 and SP-wifi runs of 32 MiB).",
       runs_by=["scenario", "configuration"])

# %% [markdown]
# ## Completion time (Fig. 7, Table I)
# Per scenario: the CDF over our runs of the 32 MiB download time (client trace), for MPTCP
# and for TCP over the reference path (a curve only for a configuration with at least two
# runs); the dashed black rule: Table I's mean completion time of default MPTCP; the blue
# band: our MPTCP mean with its interval, the group estimate of the claim
# `ferlin-ct-2g-wlan-mptcp`, `ferlin-ct-3g-wlan-mptcp` or `ferlin-ct-2g-3g-mptcp`.
# The paper's Fig. 7 compares MPTCP with DRePaS; we have no DRePaS curve.

# %%
ct = query(cdf_sql("download_time_s", f"SELECT scenario, {CFG_SQL} AS configuration, download_time_s "
                                      f"FROM run_facts WHERE {USABLE} AND mode IN ('MP-2', 'SP-wifi')",
                   ["scenario", "configuration"]))
CT_EST = estimates_of({"2G+WLAN": ["ferlin-ct-2g-wlan-mptcp"], "3G+WLAN": ["ferlin-ct-3g-wlan-mptcp"],
                       "2G+3G": ["ferlin-ct-2g-3g-mptcp"]})
TABLE_CT = {"2G+WLAN": 74.8, "3G+WLAN": 21.1, "2G+3G": 50.2}  # Table I, MPTCP row (s)
PANEL = {"2G+WLAN": "7(a)", "3G+WLAN": "7(b)", "2G+3G": "7(c)"}


def cdf_chart(scenario):
    def build(d):
        n = dict(zip(d["configuration"], d["n"]))
        labels = {c: f"{c if c == MPTCP else 'TCP over ' + REF[scenario]} (n = {n[c]})" for c in CONFIGS if c in n}
        d = d.with_columns(curve=pl.col("configuration").replace_strict(labels))
        # the step starts at 0 just before the shortest run
        d = pl.concat([d.group_by("configuration", "curve").agg(pl.col("x").min(), pl.lit(0.0).alias("cdf")),
                       d.select("configuration", "curve", "x", "cdf")],
                      how="diagonal_relaxed").sort("curve", "x", "cdf")
        color = alt.Color("curve:N", title="configuration", sort=list(labels.values()),
                          legend=alt.Legend(orient="bottom", direction="horizontal"),
                          scale=alt.Scale(domain=list(labels.values()),
                                          range=[COLOR.range[CONFIGS.index(c)] for c in labels]))
        est = CT_EST.filter(pl.col("scenario") == scenario).with_columns(
            label=pl.format("ours: MPTCP mean {} s [{}, {}]", pl.col("value").round(1), pl.col("ci_low").round(1),
                            pl.col("ci_high").round(1)), at=pl.lit(0.05))
        # the x range: our runs, our interval and the paper's mean, with room for the labels
        xs_all = d["x"].to_list() + est["ci_low"].to_list() + est["ci_high"].to_list() + [TABLE_CT[scenario]]
        lo, hi = min(xs_all), max(xs_all)
        pad = 0.06 * (hi - lo) or 1.0
        xscale = alt.Scale(domain=[max(0.0, lo - pad), hi + pad], nice=False)
        x = alt.X("x:Q", title="completion time of the 32 MiB download (s)", scale=xscale)
        yscale = alt.Scale(domain=[0, 1.1])
        y = alt.Y("cdf:Q", title="CDF over runs", scale=yscale)
        right = TABLE_CT[scenario] > (lo + hi) / 2  # the paper's label to the left of its rule when on the right
        layers = []
        if est.height:
            est_right = est["value"][0] > (lo + hi) / 2
            layers += [alt.Chart(est).mark_rect(color="#1f77b4", opacity=0.13).encode(
                           x=alt.X("ci_low:Q", scale=xscale), x2="ci_high:Q", tooltip=EST_TIP),
                       alt.Chart(est).mark_rule(color="#1f77b4", strokeWidth=1.5).encode(
                           x=alt.X("value:Q", scale=xscale), tooltip=EST_TIP),
                       alt.Chart(est).mark_text(align="right" if est_right else "left", dx=-4 if est_right else 4,
                                                fontSize=10, color="#1f77b4").encode(
                           x=alt.X("value:Q", scale=xscale), y=alt.Y("at:Q", scale=yscale), text="label:N")]
        paper = pl.DataFrame({"x": [TABLE_CT[scenario]], "label": [f"Table I: MPTCP mean {TABLE_CT[scenario]} s"],
                              "at": [1.05]})
        layers += [alt.Chart(paper).mark_rule(color="black", strokeDash=[5, 3], strokeWidth=1.5).encode(
                       x=alt.X("x:Q", scale=xscale), tooltip=["label:N"]),
                   alt.Chart(paper).mark_text(align="right" if right else "left", dx=-4 if right else 4,
                                              fontSize=10).encode(
                       x=alt.X("x:Q", scale=xscale), y=alt.Y("at:Q", scale=yscale), text="label:N")]
        layers += [alt.Chart(d).mark_line(interpolate="step-after", strokeWidth=2).encode(x=x, y=y, color=color),
                   alt.Chart(d.filter(pl.col("cdf") > 0)).mark_point(filled=True, size=30).encode(
                       x=x, y=y, color=color,
                       tooltip=["curve:N", alt.Tooltip("x:Q", format=".1f", title="download time (s)"),
                                alt.Tooltip("cdf:Q", format=".2f")])]
        return alt.layer(*layers).properties(width=560, height=260)
    return build


for s in SCENARIOS:
    d = ct.filter((pl.col("scenario") == s) & (pl.col("n") >= 2))
    display(render(d, cdf_chart(s), f"completion_time_cdf_{s.replace('+', '_').lower()}",
           f"{s}: completion time CDF (Ferlin Fig. {PANEL[s]}, Table I)",
           caption=f"{s}: CDF over runs of the 32 MiB download time, MPTCP and TCP over {REF[s]}; dashed: Table I's "
                   f"MPTCP mean ({TABLE_CT[s]} s); blue band: our MPTCP mean and interval (claim group estimate).",
           paper_ref=f"Ferlin et al. Fig. {PANEL[s]}, Table I",
           empty_msg=f"Fewer than two usable {s} runs of either configuration (campaign ferlin, MP-2 or SP-wifi, "
                     f"32 MiB): no CDF to draw. Table I's MPTCP mean for {s} is {TABLE_CT[s]} s."))

# %% [markdown]
# ## Relative path contribution (Fig. 9, Table I)
# "the average contribution of a subflow relative to the best subflow" (§VI-C), Table I's
# columns 2G/WLAN, 3G/WLAN, 2G/3G. Per path pair, left to right: each MPTCP run's payload
# bytes of the smaller subflow ÷ those of the larger (the claims' per-run value; open
# circles), the claims' group estimate (mean over runs with its interval; square) of
# `ferlin-contrib-2g-wlan-mptcp`, `ferlin-contrib-3g-wlan-mptcp` or `ferlin-contrib-2g-3g-mptcp`,
# and Table I's MPTCP row (black line, labelled).

# %%
contrib = query(f"""
    SELECT run_id, scenario, bytes_wifi::DOUBLE / 2^20 AS mib_ref, bytes_cell::DOUBLE / 2^20 AS mib_other,
           least(bytes_wifi, bytes_cell)::DOUBLE / greatest(bytes_wifi, bytes_cell) AS contribution
    FROM run_facts WHERE {USABLE} AND mode = 'MP-2' AND greatest(bytes_wifi, bytes_cell) > 0
    ORDER BY ALL""")
CONTRIB_EST = estimates_of({"2G+WLAN": ["ferlin-contrib-2g-wlan-mptcp"], "3G+WLAN": ["ferlin-contrib-3g-wlan-mptcp"],
                            "2G+3G": ["ferlin-contrib-2g-3g-mptcp"]})
TABLE_CONTRIB = pl.DataFrame([("2G+WLAN", 0.27, "Table I: 0.27"), ("3G+WLAN", 0.857, "Table I: 0.857"),
                              ("2G+3G", 0.074, "Table I: 0.074")], schema=["scenario", "paper", "note"], orient="row")


LABEL_EXPR = "datum.value + ' (' + " + repr({s: f"{OTHER[s]}/{REF[s]}" for s in SCENARIOS}) + "[datum.value] + ')'"


SLOTS = ["MPTCP run", "our mean, CI (claim)", "Table I, MPTCP (paper)"]
SLOT_COLOR = alt.Scale(domain=SLOTS, range=["#6baed6", "#08306b", "black"])


def fig9(d):
    # each path pair's band in three slots: the runs, the claim's estimate, Table I's number
    x = alt.X("scenario:N", title="path pair (Table I's column)", sort=SCENARIOS, scale=alt.Scale(paddingInner=0.4),
              axis=alt.Axis(labelAngle=0, labelExpr=LABEL_EXPR))
    off = alt.XOffset("slot:N", sort=SLOTS, scale=alt.Scale(domain=SLOTS))
    color = alt.Color("slot:N", scale=SLOT_COLOR, title=None, legend=alt.Legend(orient="bottom"))
    y = alt.Y("contribution:Q", title="smaller subflow's bytes ÷ larger subflow's",
              scale=alt.Scale(domain=[0, 1.05], nice=False))
    paper = TABLE_CONTRIB.with_columns(slot=pl.lit(SLOTS[2]))
    layers = [alt.Chart(d.with_columns(slot=pl.lit(SLOTS[0]))).mark_point(size=45, opacity=0.7).encode(
                  x=x, xOffset=off, y=y, color=color,
                  tooltip=["run_id", alt.Tooltip("contribution:Q", format=".3f"),
                           alt.Tooltip("mib_ref:Q", format=".1f", title="MiB on the reference path"),
                           alt.Tooltip("mib_other:Q", format=".1f", title="MiB on the other path")]),
              alt.Chart(paper).mark_tick(strokeDash=[4, 2], thickness=2.5, size=36).encode(
                  x=x, xOffset=off, y=alt.Y("paper:Q"), color=color, tooltip=["note:N"]),
              alt.Chart(paper).mark_text(fontSize=10, align="left", dx=20).encode(
                  x=x, xOffset=off, y="paper:Q", text="note:N")]
    if CONTRIB_EST.height:
        est = CONTRIB_EST.with_columns(slot=pl.lit(SLOTS[1]))
        layers += [alt.Chart(est).mark_rule(strokeWidth=2.5).encode(
                       x=x, xOffset=off, y=alt.Y("ci_low:Q"), y2="ci_high:Q", color=color, tooltip=EST_TIP),
                   alt.Chart(est).mark_point(shape="square", filled=True, size=80).encode(
                       x=x, xOffset=off, y=alt.Y("value:Q"), color=color, tooltip=EST_TIP)]
    return alt.layer(*layers).properties(width=660, height=320)


render(contrib, fig9, "relative_contribution",
       "Relative path contribution, default MPTCP (Ferlin Fig. 9, Table I)",
       caption="Per path pair, left to right: MPTCP runs (smaller ÷ larger subflow's payload bytes), the claims' "
               "mean with its interval, Table I's MPTCP row (2G/WLAN 0.27, 3G/WLAN 0.857, 2G/3G 0.074).",
       paper_ref="Ferlin et al. Fig. 9, Table I",
       empty_msg="No usable ferlin MPTCP run with payload bytes per path (campaign ferlin, MP-2, 32 MiB).",
       runs_by=["scenario"])

# %% [markdown]
# ## One 2G+WLAN transfer, second by second (§VI-C: "MPTCP continuously uses the 2G path")
# The MPTCP run of 2G+WLAN with the median download time (of the usable ones): the
# client's new data bytes per second on each path (`run_delivery`), from the first SYN to
# the end of the download. The two paths have their own y scale (our 2G trace averages
# ~1/20 of the WLAN trace's rate); red ticks under the 2G panel mark whole seconds in
# which 2G delivered nothing. The claim `ferlin-mptcp-uses-2g-throughout` counts these
# seconds over all 2G runs (its group estimates: the subtitle and the claims chart below).

# %%
trace = query(f"""
    WITH pick AS (
        SELECT run_id, download_time_s FROM run_facts
        WHERE {USABLE} AND scenario = '2G+WLAN' AND mode = 'MP-2' AND download_time_s >= 1
          AND run_id IN (SELECT run_id FROM run_delivery)
        ORDER BY download_time_s, run_id
        LIMIT 1 OFFSET (SELECT (count(*) - 1) // 2 FROM run_facts
                        WHERE {USABLE} AND scenario = '2G+WLAN' AND mode = 'MP-2' AND download_time_s >= 1
                          AND run_id IN (SELECT run_id FROM run_delivery))),
    grid AS (
        SELECT p.run_id, p.download_time_s, s.side,
               unnest(generate_series(0, floor(p.download_time_s)::BIGINT)) AS second
        FROM pick p, (VALUES ('wifi'), ('cell')) s(side))
    SELECT g.run_id, g.second, g.download_time_s,
           CASE g.side WHEN 'wifi' THEN 'WLAN (reference path)' ELSE '2G' END AS path,
           coalesce(d.payload_bytes, 0)::DOUBLE * 8 / 1e6 AS mbit
    FROM grid g LEFT JOIN run_delivery d ON d.run_id = g.run_id AND d.second = g.second AND d.side = g.side
    ORDER BY path DESC, second""")
USES_2G = estimates_of({"2G+WLAN": ["ferlin-mptcp-uses-2g-throughout"], "2G+3G": ["ferlin-mptcp-uses-2g-throughout"]})


def trace_chart(d):
    run, end = d["run_id"][0], d["download_time_s"][0]
    d = d.with_columns(second_end=pl.col("second") + 1, zero=pl.lit(0.0))
    xscale = alt.Scale(domain=[0, float(end) + 1], nice=False)
    endrule = pl.DataFrame({"x": [end], "t": [f"download complete ({end:.1f} s)"]})
    est = USES_2G.filter(pl.col("scenario") == "2G+WLAN")
    sub = [f"run {run} (the median download time of the 2G+WLAN MPTCP runs)"] + (
        [f"claim ferlin-mptcp-uses-2g-throughout, 2G+WLAN: 2G delivered data in {est['value'][0]:.0f} % "
         f"[{est['ci_low'][0]:.0f}, {est['ci_high'][0]:.0f}] of the transfer's whole seconds (mean over "
         f"{est['n'][0]} runs, CI)"] if est.height else [])

    def panel(path, color, height, first):
        p = d.filter(pl.col("path") == path)
        x = alt.X("second:Q", scale=xscale, title=None if first else "time since the first SYN (s)")
        y = alt.Y("mbit:Q", title=f"{path.split(' ')[0]} (Mbit/s)")
        layers = [alt.Chart(p).mark_rect(color=color, opacity=0.75, stroke="white", strokeWidth=0.3).encode(
                      x=x, x2="second_end:Q", y=y, y2="zero:Q",
                      tooltip=[alt.Tooltip("second:Q", title="second"),
                               alt.Tooltip("mbit:Q", format=".3f", title="Mbit/s")]),
                  alt.Chart(endrule).mark_rule(color="grey", strokeDash=[4, 3]).encode(
                      x=alt.X("x:Q", scale=xscale), tooltip=["t:N"])]
        if path == "2G":
            idle = p.filter((pl.col("mbit") == 0) & (pl.col("second") < int(end))).with_columns(
                t=pl.lit("no 2G data in this second"), mid=pl.col("second") + 0.5)
            layers.append(alt.Chart(idle).mark_tick(color="#b22222", thickness=2, size=10).encode(
                x=alt.X("mid:Q", scale=xscale), y=alt.value(height - 2), tooltip=["second:Q", "t:N"]))
        title = alt.TitleParams(path, subtitle=sub, anchor="start") if first else alt.TitleParams(path, anchor="start")
        return alt.layer(*layers).properties(width=640, height=height, title=title)

    return alt.vconcat(panel("WLAN (reference path)", "#2ca02c", 170, True),
                       panel("2G", "#9467bd", 130, False)).resolve_scale(y="independent")


render(trace, trace_chart, "throughput_trace_2g_wlan",
       "2G+WLAN, MPTCP: throughput per path and second (one run)",
       caption="Client's new data per second on WLAN (top) and 2G (bottom), each with its own scale; red ticks: "
               "seconds with no 2G data; dashed: end of the download. The run with the median download time.",
       paper_ref="Ferlin et al. §VI-C, Fig. 9(a) ('MPTCP continuously uses the 2G path')",
       empty_msg="No usable 2G+WLAN MPTCP run with per-second delivery records (campaign ferlin, MP-2, "
                 "run_delivery).")

# %% [markdown]
# ## The claims, group by group
# Each panel: every compared group's estimate and interval (colour: its magnitude
# verdict), the paper's band (shaded) and number (dashed).

# %%
claims_figure("ferlin", "Ferlin", width=520)

# %% [markdown]
# ## Lab checks: the emulated paths against the paper's conditions
# The paper's path properties (WLAN ~50 ms, 2G ~1.4 s RTT; 2G slowest; WLAN lossiest)
# measured on our MPTCP runs; a claim resting on a failed check is *not comparable*.

# %%
display(Markdown(checks_table("ferlin")))
