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
# # Chen et al., IMC 2013: MPTCP over WiFi and cellular
#
# *"A Measurement-based Study of MultiPath TCP Performance over Wireless Networks"*: HTTP
# downloads over single-path TCP on WiFi or on a cellular carrier (SP-WiFi, SP-cellular) and
# over MPTCP with both (MP-2; MP-4 adds the server's second address), with coupled (LIA),
# olia and uncoupled New Reno (reno) congestion control. We draw the download-time box
# plots (Fig. 2, 4, 9), the share of the traffic on the cellular path (Fig. 3, 5, 10), the
# per-packet RTT (Fig. 12) and out-of-order delay (Fig. 13) distributions, the connection
# means of Table 6 and the single-path loss and RTT of Tables 2-5. Our runs: campaign
# `chen` at the standard scale, emulated links (`papers/chen/profiles.yaml`); the scenario
# names the carrier: `att`, `verizon`, `sprint` (home WiFi + that carrier), `coffee-att`
# (a loaded coffee-shop hotspot + AT&T), `att-4path` (AT&T's links again, for MP-4; drawn
# as AT&T). Five runs per configuration: AT&T 8 KB-8 MB (SP-WiFi, SP-cellular, MP-2
# lia/olia/reno, MP-4 lia) and MP-2 lia at 16 MB; Verizon and Sprint 64 KB and 4 MB
# (SP and MP-2 lia), Sprint SP-WiFi and MP-2 lia at 8 MB; the coffee shop at 4 MB.
# Congestion controls are never pooled. Every number of a claim below is the findings'
# own (`findings.csv`, `findings-groups.csv`); this notebook draws them and the runs
# behind them, and computes no claim itself. The paper's statements:
# `papers/chen/inventory.yaml`.

# %% tags=["parameters"]
import os

DB = os.environ.get("MPTCP_LAB_DB", "../../results/lab.duckdb")
FIGURES = os.environ.get("MPTCP_LAB_FIGURES", "../../results/figures/chen")

# %%
os.environ["MPTCP_LAB_DB"], os.environ["MPTCP_LAB_FIGURES"] = DB, FIGURES
os.environ["MPTCP_LAB_NOTEBOOK"] = "chen"
import math

import altair as alt
import polars as pl
from IPython.display import Markdown, display

from labfig import left_out, query, render, usable
from labfig.db import ccdf_sql, quantiles_sql
from labfig.verdicts import VERDICT_COLOR, checks_table, claims_figure, tables, verdict_table

display(Markdown(left_out("chen")))
ROWS, GROUPS = tables("chen")

PANEL_W = 500
USABLE = usable("chen")
CARRIER = "CASE scenario WHEN 'att-4path' THEN 'att' ELSE scenario END"  # att-4path: AT&T's links, for MP-4
CONFIG = ("CASE mode WHEN 'SP-wifi' THEN 'SP-WiFi' WHEN 'SP-lte' THEN 'SP-cellular' "
          "ELSE mode || ' ' || coalesce(congestion_control, '?') END")
CARRIERS = {"att": "AT&T LTE + home WiFi", "verizon": "Verizon LTE + home WiFi",
            "sprint": "Sprint 3G + home WiFi", "coffee-att": "AT&T LTE + coffee-shop WiFi"}
CONFIGS = ["SP-WiFi", "SP-cellular", "MP-2 lia", "MP-2 olia", "MP-2 reno", "MP-4 lia"]
CONFIG_COLOR = alt.Scale(domain=CONFIGS, range=["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"])
MP_CONFIGS = [c for c in CONFIGS if c.startswith("MP")]
MP_COLOR = alt.Scale(domain=MP_CONFIGS, range=CONFIG_COLOR.range[2:])
SIZES = ["8 KB", "64 KB", "512 KB", "2 MB", "4 MB", "8 MB", "16 MB", "32 MB"]
SIZE_RANGE = dict(zip(SIZES, ["#a6cee3", "#1f78b4", "#33a02c", "#b2df8a", "#ff7f00", "#e31a1c", "#6a3d9a",
                               "#b15928"]))
VERDICT = alt.Scale(domain=list(VERDICT_COLOR), range=list(VERDICT_COLOR.values()))
SIZE_RE = r"(\d+ [KM]B)"
CCDF_TICKS = [1, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6]  # log CCDF axes
LOG_TICKS = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]  # ms, log axes


def est(*ids: str) -> pl.DataFrame:
    """The claims' group estimates (findings-groups.csv), as the findings computed them."""
    return GROUPS.filter(pl.col("id").is_in(list(ids)))


def sizes_of(d: pl.DataFrame, col: str = "size") -> list[str]:
    have = set(d[col].to_list()) if d.height else set()
    return [s for s in SIZES if s in have]


def size_color(sizes: list[str]) -> alt.Scale:
    """File sizes' colours, the same in every figure (the legend lists only the sizes drawn)."""
    return alt.Scale(domain=sizes, range=[SIZE_RANGE[s] for s in sizes])


def halo_text(data, **kw):
    """Text with a white halo (readable over lines and dots); ``kw``: mark_text options and
    the encodings as ``enc``."""
    enc = kw.pop("enc")
    base = alt.Chart(data)
    return alt.layer(base.mark_text(stroke="white", strokeWidth=3, strokeJoin="round", **kw).encode(**enc),
                     base.mark_text(**kw).encode(**enc))


def finite(x) -> bool:
    return x is not None and not (isinstance(x, float) and (math.isnan(x) or math.isinf(x)))


# the runs the figures use, per carrier, configuration and size
_n = query(f"""SELECT {CARRIER} AS carrier, {CONFIG} AS configuration, size_label AS size, count(*) AS runs
               FROM run_facts WHERE {USABLE} GROUP BY ALL""")
_sizes = sizes_of(_n)
_rows = ["| carrier | configuration | " + " | ".join(_sizes) + " |", "|---|---|" + "---|" * len(_sizes)]
for (c, cfg), g in sorted(_n.group_by("carrier", "configuration"),
                          key=lambda kv: (list(CARRIERS).index(kv[0][0]) if kv[0][0] in CARRIERS else 99,
                                          CONFIGS.index(kv[0][1]) if kv[0][1] in CONFIGS else 99)):
    have = dict(zip(g["size"].to_list(), g["runs"].to_list()))
    _rows.append(f"| {c} | {cfg} | " + " | ".join(str(have.get(z, "")) for z in _sizes) + " |")
display(Markdown("\n".join(_rows) if _n.height else "_no chen runs in this database_"))

# %% [markdown]
# ## The paper's statements and ours
# Magnitude: our 95 % interval against the band of the paper's number; direction: against
# the sign or order the paper states; *not comparable* when a lab check the claim rests on
# fails (our emulated path is not the paper's: the lab checks at the end); *underpowered*
# when our interval is wider than the paper's effect; *not reproducible here* for the
# live networks' own characteristics (they are our emulator's configuration) and the
# simultaneous-SYN patch.

# %%
display(Markdown(verdict_table("chen")))

# %% [markdown]
# ## Download time per carrier, size and configuration (Fig. 2, 4, 9)
# Download time: "from when the client sends out the first SYN to the server to the time it
# receives the last data packet" (§3.3, client trace). One panel per carrier (Fig. 2:
# AT&T, Verizon, Sprint; Fig. 6: the coffee shop); boxes span the quartiles, the black
# tick is the median, the whiskers min and max (the paper's convention), dots are the
# runs; MP-4 only with AT&T (scenario `att-4path`). Under each panel: the claims' group
# estimates of MP-2 (lia)'s median ÷ the faster single path's median with their 95 %
# intervals (`chen-close-to-best`; `chen-coffee-close-to-best` for the coffee shop),
# filled by their magnitude verdict, against the paper's "at least close to the best
# single-path performance" (its band: below 1.2).

# %%
DT_RUNS = f"""
    SELECT run_id, {CARRIER} AS carrier, {CONFIG} AS config, size_bytes, size_label AS size, download_time_s
    FROM run_facts WHERE {USABLE} AND size_bytes > 0 AND download_time_s > 0"""
dt_runs = query(DT_RUNS + " ORDER BY ALL")
dt_box = query(quantiles_sql("download_time_s", DT_RUNS, ["carrier", "config", "size_bytes", "size"]))
dt_est = (est("chen-close-to-best", "chen-coffee-close-to-best")
          .with_columns(carrier=pl.col("group").str.extract(r"^(\S+) "), size=pl.col("group").str.extract(SIZE_RE),
                        verdict=pl.col("magnitude")))
CLOSE = pl.DataFrame({"y": [1.0, 1.2], "label": ["1 = the faster single path",
                                                 "paper: < 1.2 (\"at least close to the best single path\")"]})


def dt_panel(carrier: str) -> alt.VConcatChart:
    d, b = dt_runs.filter(pl.col("carrier") == carrier), dt_box.filter(pl.col("carrier") == carrier)
    sizes = sizes_of(d)
    configs = [c for c in CONFIGS if c in set(d["config"].to_list())]
    width = max(PANEL_W, 26 * len(sizes) * len(configs))
    x = alt.X("size:N", sort=sizes, scale=alt.Scale(domain=sizes, type="band"), title="file size", axis=alt.Axis(labelAngle=0))
    xo = alt.XOffset("config:N", scale=alt.Scale(domain=configs, type="band"), bandPosition=0.5)
    xob = alt.XOffset("config:N", scale=alt.Scale(domain=configs, type="band"))  # bars fill their band
    color = alt.Color("config:N", scale=CONFIG_COLOR, title="configuration")
    vals = d["download_time_s"].to_list()
    ys = alt.Scale(type="log", domain=[min(vals) / 1.4, max(vals) * 1.4], nice=False)
    y = alt.Y("download_time_s:Q", scale=ys, title="download time (s, log)")
    tip = ["config:N", "size:N", "n:Q", alt.Tooltip("median:Q", format=".3g", title="median (s)"),
           alt.Tooltip("q1:Q", format=".3g"), alt.Tooltip("q3:Q", format=".3g")]
    whisker = alt.Chart(b).mark_rule().encode(x=x, xOffset=xo, y=alt.Y("lo:Q", scale=ys), y2="hi:Q",
                                              color=color)
    box = alt.Chart(b).mark_bar(opacity=0.45, size=16).encode(x=x, xOffset=xob, y="q1:Q", y2="q3:Q", color=color, tooltip=tip)
    med = alt.Chart(b).mark_tick(color="black", thickness=2, size=18).encode(x=x, xOffset=xo, y="median:Q", tooltip=tip)
    dots = alt.Chart(d).mark_point(size=22, opacity=0.9, filled=True).encode(
        x=x, xOffset=xo, y=y, color=color,
        tooltip=["run_id:N", "config:N", alt.Tooltip("download_time_s:Q", format=".3g", title="download time (s)")])
    top = alt.layer(whisker, box, med, dots).properties(
        width=width, height=240, title=alt.TitleParams(CARRIERS.get(carrier, carrier), anchor="start"))
    e = dt_est.filter(pl.col("carrier") == carrier)
    ys = [0.8, 1.3] + [v for v in e["ci_low"].to_list() + e["ci_high"].to_list() if finite(v) and v > 0]
    # a log axis when one wide interval would flatten the others (and the 1 and 1.2 lines) to a line
    wide = max(ys) / min(ys) > 4
    ry = alt.Scale(domain=[min(ys) * 0.95, max(ys) * 1.05], nice=False, **({"type": "log"} if wide else {}))
    ytitle = ["MP-2 ÷ faster SP", "(medians, log)" if wide else "(medians)"]
    rules = alt.Chart(CLOSE).mark_rule(strokeDash=[5, 4], color="black").encode(
        y=alt.Y("y:Q", scale=ry, title=ytitle, axis=alt.Axis(format="~g")))
    # the paper's 1.2 labelled above its line, the 1 below its own: the two lines are close
    rule_text = [halo_text(CLOSE.filter(pl.col("y") == y), align="left", baseline=bl, dy=dy, fontSize=10,
                           enc=dict(x=alt.value(4), y=alt.Y("y:Q", scale=ry), text="label:N"))
                 for y, bl, dy in ((1.2, "bottom", -2), (1.0, "top", 2))]
    layers = [rules, *rule_text]
    if e.height:
        fill = alt.Fill("verdict:N", scale=VERDICT, title="claim group's magnitude verdict")
        stroke = alt.Stroke("verdict:N", scale=VERDICT, title="claim group's magnitude verdict")
        tip_e = ["id:N", "group:N", alt.Tooltip("value:Q", format=".3g"), alt.Tooltip("ci_low:Q", format=".3g"),
                 alt.Tooltip("ci_high:Q", format=".3g"), "n:Q", "magnitude:N"]
        layers += [alt.Chart(e).mark_rule(strokeWidth=2).encode(x=x, y=alt.Y("ci_low:Q", scale=ry), y2="ci_high:Q",
                                                                stroke=stroke),
                   alt.Chart(e).mark_point(shape="square", size=70, filled=True, strokeWidth=0).encode(
                       x=x, y=alt.Y("value:Q", scale=ry), fill=fill, tooltip=tip_e)]
    cid = "chen-coffee-close-to-best" if carrier == "coffee-att" else "chen-close-to-best"
    bottom = alt.layer(*layers).properties(
        width=width, height=110,
        title=alt.TitleParams(f"claim {cid}: median ± 95 % CI" if e.height else f"claim {cid}: no estimate",
                              fontSize=11, anchor="start", fontWeight="normal"))
    return alt.vconcat(top, bottom, spacing=4)


def dt_chart(d):
    return alt.vconcat(*[dt_panel(c) for c in CARRIERS if c in set(d["carrier"].to_list())], spacing=24).resolve_scale(xOffset="independent", x="independent")


render(dt_runs, dt_chart, "download_time",
       "Download time per carrier, file size and configuration (Chen Fig. 2, 4, 9)",
       caption="Box plots (quartiles, median tick, min-max whiskers) and runs per configuration, one panel per "
               "carrier, log scale; below each: the claims' MP-2 ÷ faster-single-path estimates with 95 % CIs.",
       paper_ref="Chen et al. IMC'13 Fig. 2, 4, 6, 9",
       empty_msg="No chen runs with a download time in this database (campaign chen: SP-wifi, SP-lte, MP-2, "
                 "MP-4 downloads).",
       runs_by=["carrier", "config", "size"])

# %% [markdown]
# ## Share of the traffic on the cellular path (Fig. 3, 5, 10)
# Per MPTCP connection: payload bytes on the cellular subflows ÷ all payload bytes (server
# trace, `run_facts.cell_share_pct`); one dot per run. Squares with bars: the claims'
# group estimates (the median over runs with its 95 % interval): `chen-cell-share-4mb`
# (AT&T 4 MB, MP-2 and MP-4 lia), `chen-cell-share-large` (AT&T ≥ 8 MB, every
# configuration) and `chen-sprint-mostly-wifi` (Sprint). The paper: with AT&T the cellular
# share "reaches 50 %" at 4 MB (Fig. 5) and is over 50 % at 8-32 MB (Fig. 10); Sprint 3G
# carries little (Fig. 3). With AT&T the paper's Fig. 3 / 5 / 10 are this panel; the
# coffee shop is Fig. 7.

# %%
share_runs = query(f"""
    SELECT run_id, {CARRIER} AS carrier, {CONFIG} AS config, size_bytes, size_label AS size, cell_share_pct,
           'run' AS what
    FROM run_facts WHERE {USABLE} AND transport = 'MPTCP' AND size_bytes > 0 AND cell_share_pct IS NOT NULL
    ORDER BY ALL""")
SHARE_RE = r"^(MP-\d)(?: (olia|reno))? (\S+) (\d+ [KM]B)$"
share_est = (est("chen-cell-share-4mb", "chen-cell-share-large", "chen-sprint-mostly-wifi")
             .with_columns(pl.col("group").str.extract_groups(SHARE_RE).alias("g"))
             .unnest("g").rename({"1": "mode", "2": "cc", "3": "carrier", "4": "size"})
             .with_columns(config=pl.col("mode") + " " + pl.col("cc").fill_null("lia"),
                           what=pl.lit("claim's median [95 % CI]")))
SHARE_PAPER = {"att": "paper: 50 % at 4 MB (Fig. 5), over 50 % at 8-32 MB (Fig. 10)",
               "sprint": "paper: below 50 %, mostly WiFi (Fig. 3, the claim's band)"}


def share_panel(carrier: str) -> alt.LayerChart:
    d, e = share_runs.filter(pl.col("carrier") == carrier), share_est.filter(pl.col("carrier") == carrier)
    sizes = sizes_of(d)
    configs = [c for c in MP_CONFIGS if c in set(d["config"].to_list())]
    width = max(PANEL_W, 30 * len(sizes) * len(configs))
    x = alt.X("size:N", sort=sizes, scale=alt.Scale(domain=sizes, type="band"), title="file size", axis=alt.Axis(labelAngle=0))
    xo = alt.XOffset("config:N", scale=alt.Scale(domain=configs, type="band"), bandPosition=0.5)
    y = alt.Scale(domain=[0, 100])
    color = alt.Color("config:N", scale=MP_COLOR, title="configuration")
    shape = alt.Shape("what:N", scale=alt.Scale(domain=["run", "claim's median [95 % CI]"], range=["circle", "square"]),
                      title=None)
    layers = [alt.Chart(d).mark_point(size=30, opacity=0.7).encode(
        x=x, xOffset=xo, y=alt.Y("cell_share_pct:Q", scale=y, title="traffic on the cellular path (%)"),
        color=color, shape=shape,
        tooltip=["run_id:N", "config:N", alt.Tooltip("cell_share_pct:Q", format=".3g", title="cellular share (%)")])]
    if e.height:
        tip = ["id:N", "group:N", alt.Tooltip("value:Q", format=".3g"), alt.Tooltip("ci_low:Q", format=".3g"),
               alt.Tooltip("ci_high:Q", format=".3g"), "n:Q", "magnitude:N"]
        layers += [alt.Chart(e).mark_rule(strokeWidth=2.5).encode(x=x, xOffset=xo, y=alt.Y("ci_low:Q", scale=y),
                                                                  y2="ci_high:Q", color=color),
                   alt.Chart(e).mark_point(size=90, filled=True, stroke="black", strokeWidth=1).encode(
                       x=x, xOffset=xo, y=alt.Y("value:Q", scale=y), color=color, shape=shape, tooltip=tip)]
    if carrier in SHARE_PAPER:
        p = pl.DataFrame({"y": [50.0], "label": [SHARE_PAPER[carrier]]})
        layers += [alt.Chart(p).mark_rule(strokeDash=[5, 4], color="black").encode(y=alt.Y("y:Q", scale=y)),
                   halo_text(p, align="left", baseline="bottom", dy=-3, fontSize=11,
                             enc=dict(x=alt.value(4), y=alt.Y("y:Q", scale=y), text="label:N"))]
    return alt.layer(*layers).properties(width=width, height=230,
                                         title=alt.TitleParams(CARRIERS.get(carrier, carrier), anchor="start"))


def share_chart(d):
    return alt.vconcat(*[share_panel(c) for c in CARRIERS if c in set(d["carrier"].to_list())], spacing=20).resolve_scale(xOffset="independent", x="independent")


render(share_runs, share_chart, "cellular_share",
       "Share of the traffic on the cellular path per carrier (Chen Fig. 3, 5, 7, 10)",
       caption="Dots: MPTCP runs; squares with bars: the claims' medians with 95 % CIs; dashed: the paper's 50 %.",
       paper_ref="Chen et al. IMC'13 Fig. 3, 5, 7, 10",
       empty_msg="No chen MPTCP run with a cellular share in this database (MP-2 or MP-4 runs, server trace).",
       runs_by=["carrier", "config", "size"])

# %% [markdown]
# ## Packet RTT per path and carrier (Fig. 12)
# Per data packet of MPTCP (MP-2, lia: the paper's "default coupled congestion
# controller") connections of 512 KB and more, the RTT from the server's trace (data
# packet to the ACK covering it, retransmitted packets left out: `dl_rtt_samples`), CCDF
# per carrier (row), path (column) and file size (colour), log-log as the paper's. The
# paper's marks (§5.1) labelled: WiFi's minimum of about 15 ms and "90 % of packet RTTs
# are less than 50 ms for file sizes larger than 4 MB"; AT&T's minimum of about 40 ms
# and "more than 70 %" between 50 and 200 ms (shaded); Verizon's minimum 32 ms and
# RTTs "up to two seconds"; Sprint's minimum of about 50 ms and "more than 98 % of the
# RTT samples larger than 100 ms". They describe the live networks: our links' delays
# are configured from them (the inventory lists them as not reproducible here), so they
# show how close the emulation is.

# %%
RTT_SRC = f"""
    SELECT {CARRIER} AS carrier, CASE WHEN s.path ILIKE 'wifi%' THEN 'WiFi path' ELSE 'cellular path' END AS path,
           r.size_bytes, r.size_label AS size, s.rtt_ms
    FROM dl_rtt_samples s JOIN run_facts r USING (run_id)
    WHERE {usable('chen', 'r')} AND r.mode = 'MP-2' AND r.congestion_control = 'lia' AND r.size_bytes >= 512000
      AND r.scenario IN ('att', 'verizon', 'sprint') AND s.rtt_ms > 0"""
rtt_ccdf = query(ccdf_sql("rtt_ms", RTT_SRC, ["carrier", "path", "size_bytes", "size"]))
# the paper's marks: (carrier, path, kind, x, x2, y, text)
RTT_MARKS = pl.DataFrame(
    [(c, "WiFi path", "vrule", 15.0, None, None, "paper: min ≈ 15 ms") for c in ("att", "verizon", "sprint")]
    + [(c, "WiFi path", "point", 50.0, None, 0.10, "paper: 90 % < 50 ms (> 4 MB)") for c in ("att", "verizon", "sprint")]
    + [("att", "cellular path", "vrule", 40.0, None, None, "paper: min ≈ 40 ms"),
       ("att", "cellular path", "band", 50.0, 200.0, None, "paper: > 70 % in 50-200 ms"),
       ("verizon", "cellular path", "vrule", 32.0, None, None, "paper: min 32 ms"),
       ("verizon", "cellular path", "vrule", 2000.0, None, None, "paper: up to 2 s"),
       ("sprint", "cellular path", "vrule", 50.0, None, None, "paper: min ≈ 50 ms"),
       ("sprint", "cellular path", "point", 100.0, None, 0.98, "paper: > 98 % above 100 ms"),
       ("sprint", "cellular path", "vrule", 2000.0, None, None, "paper: up to 2 s (16-32 MB)")],
    schema={"carrier": pl.Utf8, "path": pl.Utf8, "kind": pl.Utf8, "x": pl.Float64, "x2": pl.Float64,
            "y": pl.Float64, "text": pl.Utf8}, orient="row")


def marks_layers(m: pl.DataFrame, xs, ys, height: int, labels_at: str = "bottom") -> list:
    """The paper's marks of one panel: vertical rules and shaded bands labelled at the
    bottom (``labels_at``: where the lines leave room) or top, points labelled beside them."""
    top = labels_at == "top"
    out = []
    rules = m.filter(pl.col("kind") == "vrule")
    if rules.height:
        out.append(alt.Chart(rules).mark_rule(strokeDash=[5, 4], color="black").encode(x=alt.X("x:Q", scale=xs)))
        for right, part in ((False, rules.filter(pl.col("x") < 1000)), (True, rules.filter(pl.col("x") >= 1000))):
            if part.height:  # near the right edge: the label left of its rule
                out.append(halo_text(part, align="right" if right else "left", baseline="top" if top else "bottom",
                                     dx=-3 if right else 3, fontSize=10,
                                     enc=dict(x=alt.X("x:Q", scale=xs), y=alt.value(4 if top else height - 4),
                                              text="text:N")))
    bands = m.filter(pl.col("kind") == "band")
    if bands.height:
        out += [alt.Chart(bands).mark_rect(color="#9ecae1", opacity=0.3).encode(x=alt.X("x:Q", scale=xs), x2="x2:Q"),
                halo_text(bands, align="left", baseline="top" if top else "bottom", dx=3, fontSize=10,
                          enc=dict(x=alt.X("x:Q", scale=xs), y=alt.value(18 if top else height - 18), text="text:N"))]
    pts = m.filter(pl.col("kind") == "point")
    if pts.height:
        out += [alt.Chart(pts).mark_point(shape="diamond", filled=True, size=80, color="black").encode(
                    x=alt.X("x:Q", scale=xs), y=alt.Y("y:Q", scale=ys), tooltip=["text:N"]),
                halo_text(pts, align="left", baseline="middle", dx=8, fontSize=10,
                          enc=dict(x=alt.X("x:Q", scale=xs), y=alt.Y("y:Q", scale=ys), text="text:N"))]
    return out


def rtt_chart(d):
    xs_all = d["x"].to_list() + [12.0, 2500.0]
    xs = alt.Scale(type="log", domain=[min(xs_all) / 1.2, max(xs_all) * 1.2], nice=False)
    y_lo = max(min(d.filter(pl.col("ccdf") > 0)["ccdf"].to_list() + [1e-3]) / 1.5, 1e-6)
    ys = alt.Scale(type="log", domain=[y_lo, 1.0], nice=False)
    sizes = sizes_of(d)
    color = alt.Color("size:N", scale=size_color(sizes), sort=sizes, title="file size")
    rows = []
    for c in [c for c in ("att", "verizon", "sprint") if c in set(d["carrier"].to_list())]:
        row = []
        for p in ("WiFi path", "cellular path"):
            g = d.filter((pl.col("carrier") == c) & (pl.col("path") == p) & (pl.col("ccdf") > 0))
            lines = alt.Chart(g).mark_line(interpolate="step-after", clip=True).encode(
                x=alt.X("x:Q", scale=xs, title="packet RTT (ms, log)", axis=alt.Axis(values=LOG_TICKS)),
                y=alt.Y("ccdf:Q", scale=ys, title="CCDF P(RTT > x) (log)", axis=alt.Axis(values=CCDF_TICKS)), color=color, detail="size:N",
                tooltip=["size:N", alt.Tooltip("x:Q", format=".3g", title="RTT (ms)"),
                         alt.Tooltip("ccdf:Q", format=".3g", title="P(RTT > x)"), "n:Q"])
            m = RTT_MARKS.filter((pl.col("carrier") == c) & (pl.col("path") == p))
            title = f"{CARRIERS[c]}: " + ("the WiFi path" if p == "WiFi path" else
                                          f"the {CARRIERS[c].split(' + ')[0]} path")
            row.append(alt.layer(*marks_layers(m, xs, ys, 230), lines).properties(
                width=PANEL_W, height=230, title=alt.TitleParams(title, anchor="start")))
        rows.append(alt.hconcat(*row))
    return alt.vconcat(*rows, spacing=20)


render(rtt_ccdf, rtt_chart, "rtt_ccdf", "Packet RTT CCDF per carrier and path, MP-2 (lia) ≥ 512 KB (Chen Fig. 12)",
       caption="CCDF of per-packet RTT (server trace, no retransmissions), one line per file size, log-log; dashed "
               "rules, shading and diamonds: the paper's marks of §5.1.",
       paper_ref="Chen et al. IMC'13 Fig. 12, §5.1",
       empty_msg="No RTT samples of chen MP-2 (lia) runs of 512 KB or more with AT&T, Verizon or Sprint "
                 "(dl_rtt_samples).")

# %% [markdown]
# ## Out-of-order delay per carrier (Fig. 13)
# For every data packet reaching the client: the time until its data sequence number is in
# order at the MPTCP level (`dl_ofo_samples`, §3.3); in-order packets count with delay 0 in
# every fraction, so each line starts, at the left edge, at the share of packets that wait
# at all. MP-2 (lia) connections of 4 MB and more, one line per size; log x (the paper's
# "time axis ... in log scale"). The paper's marks (§5.2) labelled: with AT&T and Verizon
# "75 % of the packets are delivered in order" (so 25 % wait); with Sprint "75 % of the
# packets are out-of-order" and "more than 20 % of the packets have out-of-order delay
# larger than 150 ms". Squares with bars: the claims' pooled estimates with their 95 %
# intervals, filled by their magnitude verdict: `chen-lte-in-order` (drawn as 1 − the
# in-order share) and `chen-3g-out-of-order` at the left edge (delay > 0),
# `chen-3g-ofo-over-150ms` at 150 ms.

# %%
OFO_SRC = f"""
    SELECT r.scenario AS carrier, r.size_bytes, r.size_label AS size, o.ofo_delay_ms
    FROM dl_ofo_samples o JOIN run_facts r USING (run_id)
    WHERE {usable('chen', 'r')} AND r.mode = 'MP-2' AND r.congestion_control = 'lia' AND r.size_bytes >= 4000000
      AND r.scenario IN ('att', 'verizon', 'sprint')"""
OFO_X0 = 0.1  # ms: where the claims' shares of packets that wait (delay > 0) are drawn
OFO_EDGE = OFO_X0 / 1.3  # the left edge of the log axis
# in-order packets (delay 0) count in every fraction; on the log axis a group's CCDF point at
# delay 0 (its last one) is drawn at the left edge, the line stepping down from there
ofo_ccdf = (query(ccdf_sql("ofo_delay_ms", OFO_SRC, ["carrier", "size_bytes", "size"]))
            .sort("carrier", "size_bytes", "x", pl.col("ccdf").neg())
            .filter((pl.col("x") > 0) | (pl.col("ccdf") == pl.col("ccdf").filter(pl.col("x") <= 0).min()
                                         .over("carrier", "size_bytes")))
            .with_columns(x=pl.when(pl.col("x") > 0).then(pl.col("x")).otherwise(pl.lit(OFO_EDGE))))
OFO_MARKS = pl.DataFrame(
    [("att", "hrule", None, 0.25, "paper: 75 % in order (25 % wait)"),
     ("verizon", "hrule", None, 0.25, "paper: 75 % in order (25 % wait)"),
     ("sprint", "hrule", None, 0.75, "paper: 75 % out of order"),
     ("sprint", "point", 150.0, 0.20, "paper: > 20 % wait > 150 ms"),
     ("sprint", "vrule", 150.0, None, "150 ms")],
    schema={"carrier": pl.Utf8, "kind": pl.Utf8, "x": pl.Float64, "y": pl.Float64, "text": pl.Utf8}, orient="row")
OFO_WHAT = {"chen-lte-in-order": "in order", "chen-3g-out-of-order": "out of order",
            "chen-3g-ofo-over-150ms": "wait > 150 ms"}
ofo_est = pl.concat([
    est("chen-lte-in-order").with_columns(x=pl.lit(OFO_X0), y=1 - pl.col("value") / 100,
                                          y_lo=1 - pl.col("ci_high") / 100, y_hi=1 - pl.col("ci_low") / 100),
    est("chen-3g-out-of-order").with_columns(x=pl.lit(OFO_X0), y=pl.col("value") / 100,
                                             y_lo=pl.col("ci_low") / 100, y_hi=pl.col("ci_high") / 100),
    est("chen-3g-ofo-over-150ms").with_columns(x=pl.lit(150.0), y=pl.col("value") / 100,
                                               y_lo=pl.col("ci_low") / 100, y_hi=pl.col("ci_high") / 100),
]).with_columns(carrier=pl.col("group").str.extract(r"^(\S+)"), verdict=pl.col("magnitude"),
                label=pl.format("ours: {} % {} [{}, {}] ({})", pl.col("value").round(1),
                                pl.col("id").replace_strict(OFO_WHAT, default=""), pl.col("ci_low").round(1),
                                pl.col("ci_high").round(1), pl.col("id")))


def ofo_chart(d):
    xs = alt.Scale(type="log", domain=[OFO_EDGE, max(d["x"].to_list() + [200.0]) * 1.3], nice=False)
    ys = alt.Scale(domain=[0, 1])
    sizes = sizes_of(d)
    color = alt.Color("size:N", scale=size_color(sizes), sort=sizes, title="file size")
    panels = []
    for c in [c for c in ("att", "verizon", "sprint") if c in set(d["carrier"].to_list())]:
        g = d.filter(pl.col("carrier") == c)
        lines = alt.Chart(g).mark_line(interpolate="step-after", clip=True).encode(
            x=alt.X("x:Q", scale=xs, title="out-of-order delay (ms, log)", axis=alt.Axis(values=LOG_TICKS)),
            y=alt.Y("ccdf:Q", scale=ys, title="P(delay > x)"), color=color, detail="size:N",
            tooltip=["size:N", alt.Tooltip("x:Q", format=".3g", title="delay (ms)"),
                     alt.Tooltip("ccdf:Q", format=".3g", title="P(delay > x)"), "n:Q"])
        m = OFO_MARKS.filter(pl.col("carrier") == c)
        layers = marks_layers(m.filter(pl.col("kind") != "hrule"), xs, ys, 220, labels_at="top")
        h = m.filter(pl.col("kind") == "hrule")
        if h.height:
            layers += [alt.Chart(h).mark_rule(strokeDash=[5, 4], color="black").encode(y=alt.Y("y:Q", scale=ys)),
                       halo_text(h, align="right", baseline="bottom", dy=-2, fontSize=10,
                                 enc=dict(x=alt.value(PANEL_W - 4), y=alt.Y("y:Q", scale=ys), text="text:N"))]
        e = ofo_est.filter(pl.col("carrier") == c)
        if e.height:
            tip = ["id:N", "group:N", alt.Tooltip("value:Q", format=".3g", title="value (%)"),
                   alt.Tooltip("ci_low:Q", format=".3g"), alt.Tooltip("ci_high:Q", format=".3g"), "n:Q", "magnitude:N"]
            layers += [alt.Chart(e).mark_rule(strokeWidth=2.5).encode(
                           x=alt.X("x:Q", scale=xs), y=alt.Y("y_lo:Q", scale=ys), y2="y_hi:Q",
                           stroke=alt.Stroke("verdict:N", scale=VERDICT, title="claim's magnitude verdict")),
                       alt.Chart(e).mark_point(shape="square", size=80, filled=True, strokeWidth=0).encode(
                           x=alt.X("x:Q", scale=xs), y=alt.Y("y:Q", scale=ys),
                           fill=alt.Fill("verdict:N", scale=VERDICT, title="claim's magnitude verdict"), tooltip=tip),
                       halo_text(e.filter(pl.col("x") == OFO_X0), align="left", baseline="bottom", dx=-4, dy=-10,
                                 fontSize=10, enc=dict(x=alt.X("x:Q", scale=xs), y=alt.Y("y_hi:Q", scale=ys),
                                                       text="label:N")),
                       halo_text(e.filter(pl.col("x") != OFO_X0), align="left", baseline="top", dx=7, dy=3,
                                 fontSize=10, enc=dict(x=alt.X("x:Q", scale=xs), y=alt.Y("y:Q", scale=ys),
                                                       text="label:N"))]
        panels.append(alt.layer(*layers, lines).properties(
            width=PANEL_W, height=220, title=alt.TitleParams(CARRIERS[c], anchor="start")))
    return alt.vconcat(*panels, spacing=20)


render(ofo_ccdf, ofo_chart, "ofo_ccdf", "Out-of-order delay CCDF per carrier, MP-2 (lia) ≥ 4 MB (Chen Fig. 13)",
       caption="CCDF of the MPTCP-level out-of-order delay at the client (in-order packets count as 0), one line per "
               "size; dashed and diamonds: the paper's marks; squares: the claims' pooled estimates (95 % CI).",
       paper_ref="Chen et al. IMC'13 Fig. 13, §5.2",
       empty_msg="No out-of-order samples of chen MP-2 (lia) runs of 4 MB or more with AT&T, Verizon or Sprint "
                 "(dl_ofo_samples).")

# %% [markdown]
# ## Connection means: out-of-order delay and RTT (Table 6)
# Top: each MP-2 (lia) run's mean out-of-order delay over its packets (circles,
# `run_facts.ofo_mean_ms`); squares with bars (over the runs they summarise): the claims'
# estimates, the mean over runs with its 95 % interval, `chen-ofo-att-4mb` and
# `chen-ofo-sprint-4mb` (their values and magnitude verdicts in the subtitle); black, right
# of them: Table 6's mean ± standard error over the paper's connections, labelled, where we
# ran that carrier and size. Bottom: each run's mean RTT per path (Table 6's "flow mean")
# against Table 6's. Log axes (an interval reaching below the axis is cut at its bottom).
# The ratio Sprint ÷ AT&T (`chen-ofo-sprint-vs-att`) and the fall with size
# (`chen-lte-ofo-decreases-with-size`) are in the claims chart below.

# %%
T6 = [  # metric, path, size, mean, s.e. (Table 6)
    ("OFO", "AT&T", "4 MB", 30.9, 3.2), ("OFO", "AT&T", "8 MB", 26.8, 4.0), ("OFO", "AT&T", "16 MB", 16.7, 1.4),
    ("OFO", "AT&T", "32 MB", 13.1, 1.6), ("OFO", "Verizon", "4 MB", 36.7, 5.6), ("OFO", "Verizon", "8 MB", 67.7, 11.7),
    ("OFO", "Verizon", "16 MB", 61.3, 12.9), ("OFO", "Verizon", "32 MB", 50.2, 8.9),
    ("OFO", "Sprint", "4 MB", 91.3, 12.6), ("OFO", "Sprint", "8 MB", 126.9, 29.9),
    ("OFO", "Sprint", "16 MB", 301.7, 44.3), ("OFO", "Sprint", "32 MB", 204.5, 29.8),
    ("RTT", "AT&T", "4 MB", 110.0, 6.7), ("RTT", "AT&T", "8 MB", 102.0, 6.4), ("RTT", "AT&T", "16 MB", 114.1, 7.5),
    ("RTT", "AT&T", "32 MB", 99.6, 6.5), ("RTT", "Verizon", "4 MB", 228.0, 26.9),
    ("RTT", "Verizon", "8 MB", 399.2, 46.1), ("RTT", "Verizon", "16 MB", 360.4, 44.3),
    ("RTT", "Verizon", "32 MB", 296.1, 31.7), ("RTT", "Sprint", "4 MB", 202.9, 14.4),
    ("RTT", "Sprint", "8 MB", 262.5, 24.6), ("RTT", "Sprint", "16 MB", 480.4, 40.6),
    ("RTT", "Sprint", "32 MB", 346.2, 28.1), ("RTT", "WiFi", "4 MB", 56.2, 6.7), ("RTT", "WiFi", "8 MB", 43.4, 6.4),
    ("RTT", "WiFi", "16 MB", 29.4, 7.5), ("RTT", "WiFi", "32 MB", 30.0, 6.5),
]
PAPER_T6 = pl.DataFrame(T6, schema=["metric", "path", "size", "mean", "se"], orient="row").with_columns(
    lo=pl.col("mean") - pl.col("se"), hi=pl.col("mean") + pl.col("se"),
    label=pl.format("{} ± {}", pl.col("mean"), pl.col("se")), source=pl.lit("Table 6"))
PATH_NAME = "CASE scenario WHEN 'att' THEN 'AT&T' WHEN 'verizon' THEN 'Verizon' ELSE 'Sprint' END"
T6_RUNS = f"""
    SELECT run_id, 'OFO' AS metric, {PATH_NAME} AS path, size_label AS size, ofo_mean_ms AS ms FROM run_facts
    WHERE {USABLE} AND mode = 'MP-2' AND congestion_control = 'lia' AND size_bytes >= 4000000
      AND scenario IN ('att', 'verizon', 'sprint') AND ofo_mean_ms IS NOT NULL
    UNION ALL
    SELECT run_id, 'RTT', {PATH_NAME}, size_label, rtt_cell_mean_ms FROM run_facts
    WHERE {USABLE} AND mode = 'MP-2' AND congestion_control = 'lia' AND size_bytes >= 4000000
      AND scenario IN ('att', 'verizon', 'sprint') AND rtt_cell_mean_ms > 0
    UNION ALL
    SELECT run_id, 'RTT', 'WiFi', size_label, rtt_wifi_mean_ms FROM run_facts
    WHERE {USABLE} AND mode = 'MP-2' AND congestion_control = 'lia' AND size_bytes >= 4000000
      AND scenario IN ('att', 'verizon', 'sprint') AND rtt_wifi_mean_ms > 0"""
t6_runs = query(T6_RUNS + " ORDER BY ALL")
t6_est = (est("chen-ofo-att-4mb", "chen-ofo-sprint-4mb")
          .with_columns(path=pl.col("group").str.extract(r"^(\S+)").replace({"att": "AT&T", "sprint": "Sprint"}),
                        size=pl.col("group").str.extract(SIZE_RE), verdict=pl.col("magnitude")))
PATHS_T6 = ["WiFi", "AT&T", "Verizon", "Sprint"]
PATH_COLOR = alt.Scale(domain=PATHS_T6, range=["#1f77b4", "#d62728", "#e377c2", "#8c564b"])


def runs_vs_table(d: pl.DataFrame, value: str, paper: pl.DataFrame, e: pl.DataFrame, paths: list[str],
                  path_scale: alt.Scale, log: bool, y_title: str, title: str, subtitle: str, est_what: str,
                  slot: int) -> alt.LayerChart:
    """Per size (x) and path (offset): the runs' values (circles, left of the slot), the
    estimates ``e`` of claims or lab checks (squares with their 95 % CI, over the runs) and
    the paper's table cells (black mean ± s.e., right of the slot, labelled)."""
    sizes = sizes_of(d)
    paths = [p for p in paths if p in set(d["path"].to_list())]
    x = alt.X("size:N", sort=sizes, scale=alt.Scale(domain=sizes, type="band"), title="file size",
              axis=alt.Axis(labelAngle=0))
    # two sub-slots per path: ours (runs, estimates), then the paper's
    band = alt.Scale(domain=[f"{p} {w}" for p in paths for w in ("ours", "paper")], type="band")
    xo_ours = xo_paper = alt.XOffset("slot:N", scale=band, bandPosition=0.5)
    d = d.with_columns(slot=pl.col("path") + " ours")
    e = e.with_columns(slot=pl.col("path") + " ours")
    paper = paper.with_columns(slot=pl.col("path") + " paper")
    if log:  # a log axis draws positive values; an interval reaching below the axis is cut at its bottom
        d = d.filter(pl.col(value) > 0)
    vals = d[value].to_list() + paper["lo"].to_list() + paper["hi"].to_list() + [
        v for v in e["ci_low"].to_list() + e["ci_high"].to_list() if finite(v) and (v > 0 or not log)]
    lo, hi = min(vals), max(vals)
    ys = (alt.Scale(type="log", domain=[max(lo, 1.0) / 1.3, hi * 1.3], nice=False) if log
          else alt.Scale(domain=[min(0.0, lo * 1.1), max(hi, 0.1) * 1.1], nice=False))
    e = e.with_columns(ci_draw=pl.max_horizontal("ci_low", pl.lit(max(lo, 1.0) / 1.3)) if log else pl.col("ci_low"))
    axis = alt.Axis(values=LOG_TICKS) if log else alt.Undefined
    color = alt.Color("path:N", scale=path_scale, title="path")
    shape = alt.Shape("what:N", title=None, scale=alt.Scale(domain=["run", est_what], range=["circle", "square"]))
    layers = [alt.Chart(d.with_columns(what=pl.lit("run"))).mark_point(size=28, opacity=0.75).encode(
        x=x, xOffset=xo_ours, y=alt.Y(f"{value}:Q", scale=ys, title=y_title, axis=axis), color=color, shape=shape,
        tooltip=["run_id:N", "path:N", alt.Tooltip(f"{value}:Q", format=".3g", title=y_title)])]
    if e.height:
        tip = ["id:N", "group:N", alt.Tooltip("value:Q", format=".3g"), alt.Tooltip("ci_low:Q", format=".3g"),
               alt.Tooltip("ci_high:Q", format=".3g"), "n:Q", "magnitude:N"]
        e = e.with_columns(what=pl.lit(est_what))
        layers += [alt.Chart(e).mark_rule(strokeWidth=3).encode(
                       x=x, xOffset=xo_ours, y=alt.Y("ci_draw:Q", scale=ys), y2="ci_high:Q", color=color),
                   alt.Chart(e).mark_point(size=90, filled=True, stroke="black", strokeWidth=1, opacity=1).encode(
                       x=x, xOffset=xo_ours, y=alt.Y("value:Q", scale=ys), color=color, shape=shape, tooltip=tip)]
    if paper.height:
        tip = ["path:N", "size:N", "source:N", alt.Tooltip("label:N", title="paper (mean ± s.e.)")]
        layers += [alt.Chart(paper).mark_rule(color="black", strokeWidth=1.5).encode(
                       x=x, xOffset=xo_paper, y=alt.Y("lo:Q", scale=ys), y2="hi:Q"),
                   alt.Chart(paper).mark_tick(color="black", thickness=2, size=12).encode(
                       x=x, xOffset=xo_paper, y=alt.Y("mean:Q", scale=ys), tooltip=tip),
                   halo_text(paper, align="left", baseline="middle", dx=7, fontSize=10,
                             enc=dict(x=x, xOffset=xo_paper, y=alt.Y("mean:Q", scale=ys), text="label:N"))]
    return alt.layer(*layers).properties(
        width=max(PANEL_W, slot * len(sizes) * len(paths)), height=280,
        title=alt.TitleParams(title, subtitle=subtitle or alt.Undefined, anchor="start", fontSize=12))


def est_text(e: pl.DataFrame, unit: str) -> str:
    """The estimates as text: id (group): value [95 % CI], magnitude verdict."""
    def f(v):
        return "–" if not finite(v) else f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"
    return "; ".join(f"{r['id']} ({r['group']}): {f(r['value'])}{unit} [{f(r['ci_low'])}, {f(r['ci_high'])}], "
                     f"{r['magnitude']}" for r in e.iter_rows(named=True))


def on_runs(paper: pl.DataFrame, d: pl.DataFrame) -> pl.DataFrame:
    """The paper's cells at the paths and sizes we ran."""
    return paper.join(d.select("path", "size").unique(), on=["path", "size"], how="semi")


def t6_panel(metric: str, d: pl.DataFrame) -> alt.LayerChart:
    d = d.filter(pl.col("metric") == metric)
    paper = on_runs(PAPER_T6.filter(pl.col("metric") == metric), d)
    if metric == "OFO":
        return runs_vs_table(d, "ms", paper, t6_est, PATHS_T6, PATH_COLOR, True,
                             "mean out-of-order delay per connection (ms, log)",
                             "Out-of-order delay: runs, claims (squares, 95 % CI), Table 6 (black, mean ± s.e.)",
                             "claims: " + est_text(t6_est, " ms") if t6_est.height else "", "claim's mean [95 % CI]", 70)
    return runs_vs_table(d, "ms", paper, t6_est.clear(), PATHS_T6, PATH_COLOR, True,
                         "mean RTT per connection and path (ms, log)",
                         "RTT per path: runs and Table 6 (black, mean ± s.e.)", "", "claim's mean [95 % CI]", 70)


def t6_chart(d):
    return alt.vconcat(*[t6_panel(m, d) for m in ("OFO", "RTT") if d.filter(pl.col("metric") == m).height],
                       spacing=20).resolve_scale(xOffset="independent", x="independent")


render(t6_runs, t6_chart, "table6_ofo_rtt", "Per-connection out-of-order delay and RTT, MP-2 (lia) ≥ 4 MB (Chen Table 6)",
       caption="Dots: runs' means; black: Table 6's mean ± s.e. (labelled); squares with bars: the claims' means "
               "with 95 % CIs (chen-ofo-att-4mb, chen-ofo-sprint-4mb).",
       paper_ref="Chen et al. IMC'13 Table 6",
       empty_msg="No chen MP-2 (lia) runs of 4 MB or more with AT&T, Verizon or Sprint in this database.",
       runs_by=["metric", "path", "size"])

# %% [markdown]
# ## The claims, group by group
# Each panel: every compared group's estimate and 95 % interval (colour: its magnitude
# verdict), the paper's band (shaded) and number (dashed). Congestion controls are never
# pooled: a group names its configuration.

# %%
claims_figure("chen", "Chen", width=PANEL_W)

# %% [markdown]
# ## The paths: single-path loss and RTT against Tables 2-5 (lab checks)
# Each single-path (cubic) run's loss rate (retransmitted ÷ sent data packets) and mean
# RTT (server trace, §3.3) per path and size (circles). Squares with bars (over the runs
# they summarise): the lab checks' estimates (mean over runs, 95 % interval): the
# conditions the claims rest on; their verdicts are in the table below, and a failing check
# makes a claim that rests on it *not comparable*. Black, right of them: the paper's mean ±
# standard error over its connections, labelled: home WiFi and AT&T from Table 3 (≤ 4 MB)
# and Table 5 (8 MB), the coffee-shop WiFi from Table 4, Verizon and Sprint from Table 2
# (64 KB; the table has no 4 MB column); "~" is the paper's "negligible (< 0.03 %)", drawn
# as 0-0.03 %. Home WiFi pools the att, verizon and sprint scenarios and AT&T LTE the att
# and coffee-att ones (the same emulated link), as the checks do.

# %%
SP_PATH = ("CASE WHEN mode = 'SP-wifi' AND scenario = 'coffee-att' THEN 'coffee-shop WiFi' "
           "WHEN mode = 'SP-wifi' THEN 'home WiFi' WHEN scenario IN ('att', 'coffee-att') THEN 'AT&T LTE' "
           "WHEN scenario = 'verizon' THEN 'Verizon LTE' ELSE 'Sprint 3G' END")
sp_runs = query(f"""
    SELECT run_id, {SP_PATH} AS path, size_label AS size, 'loss' AS metric,
           CASE WHEN mode = 'SP-wifi' THEN loss_wifi_pct ELSE loss_cell_pct END AS v
    FROM run_facts WHERE {USABLE} AND mode IN ('SP-wifi', 'SP-lte') AND size_bytes > 0
    UNION ALL
    SELECT run_id, {SP_PATH}, size_label, 'rtt', CASE WHEN mode = 'SP-wifi' THEN rtt_wifi_mean_ms ELSE rtt_cell_mean_ms END
    FROM run_facts WHERE {USABLE} AND mode IN ('SP-wifi', 'SP-lte') AND size_bytes > 0
    ORDER BY ALL""").filter(pl.col("v").is_not_null())
NEG = None  # the paper's "~": negligible, < 0.03 %
TABLES = [  # path, size, table, loss %, s.e., RTT ms, s.e.
    ("home WiFi", "8 KB", "Table 3", 1.0, 0.5, 22.3, 0.2), ("home WiFi", "64 KB", "Table 3", 1.6, 0.4, 38.7, 6.9),
    ("home WiFi", "512 KB", "Table 3", 1.4, 0.2, 33.9, 2.7), ("home WiFi", "4 MB", "Table 3", 2.1, 0.2, 23.9, 0.3),
    ("home WiFi", "8 MB", "Table 5", 1.6, 0.3, 25.9, 0.5),
    ("AT&T LTE", "8 KB", "Table 3", NEG, None, 60.8, 0.5), ("AT&T LTE", "64 KB", "Table 3", NEG, None, 64.9, 0.5),
    ("AT&T LTE", "512 KB", "Table 3", NEG, None, 73.2, 2.1), ("AT&T LTE", "4 MB", "Table 3", NEG, None, 140.9, 1.1),
    ("AT&T LTE", "8 MB", "Table 5", NEG, None, 154.5, 2.7),
    ("coffee-shop WiFi", "4 MB", "Table 4", 2.9, 0.4, 21.3, 0.4),
    ("Verizon LTE", "64 KB", "Table 2", NEG, None, 92.41, 13.23),
    ("Sprint 3G", "64 KB", "Table 2", 0.37, 0.16, 381.29, 50.80),
]
_t = pl.DataFrame(TABLES, schema={"path": pl.Utf8, "size": pl.Utf8, "table": pl.Utf8, "loss": pl.Float64,
                                  "loss_se": pl.Float64, "rtt": pl.Float64, "rtt_se": pl.Float64}, orient="row")
PAPER_SP = pl.concat([
    _t.select("path", "size", source="table", metric=pl.lit("loss"), mean=pl.col("loss").fill_null(0.0),
              lo=(pl.col("loss") - pl.col("loss_se")).fill_null(0.0), hi=(pl.col("loss") + pl.col("loss_se")).fill_null(0.03),
              label=pl.when(pl.col("loss").is_null()).then(pl.lit("~"))
              .otherwise(pl.format("{} ± {}", pl.col("loss"), pl.col("loss_se")))),
    _t.select("path", "size", source="table", metric=pl.lit("rtt"), mean="rtt", lo=pl.col("rtt") - pl.col("rtt_se"),
              hi=pl.col("rtt") + pl.col("rtt_se"), label=pl.format("{} ± {}", pl.col("rtt"), pl.col("rtt_se")))])
CHECK_PATH = {"lab-chen-wifi-loss": ("home WiFi", "loss"), "lab-chen-wifi-rtt-4mb": ("home WiFi", "rtt"),
              "lab-chen-lte-loss": ("AT&T LTE", "loss"), "lab-chen-att-rtt-4mb": ("AT&T LTE", "rtt"),
              "lab-chen-verizon-rtt-64kb": ("Verizon LTE", "rtt"), "lab-chen-sprint-rtt-64kb": ("Sprint 3G", "rtt")}
sp_est = (GROUPS.filter(pl.col("id").is_in(list(CHECK_PATH)))
          .with_columns(path=pl.col("id").replace_strict({k: v[0] for k, v in CHECK_PATH.items()}),
                        metric=pl.col("id").replace_strict({k: v[1] for k, v in CHECK_PATH.items()}),
                        size=pl.col("group").str.extract(SIZE_RE), verdict=pl.col("magnitude")))
SP_PATHS = ["home WiFi", "coffee-shop WiFi", "AT&T LTE", "Verizon LTE", "Sprint 3G"]
SP_COLOR = alt.Scale(domain=SP_PATHS, range=["#1f77b4", "#17becf", "#d62728", "#e377c2", "#8c564b"])


def sp_panel(metric: str, d: pl.DataFrame) -> alt.LayerChart:
    d = d.filter(pl.col("metric") == metric)
    paper = on_runs(PAPER_SP.filter(pl.col("metric") == metric), d)
    e = sp_est.filter(pl.col("metric") == metric)
    name = "Loss rate" if metric == "loss" else "RTT"
    return runs_vs_table(d, "v", paper, e, SP_PATHS, SP_COLOR, metric == "rtt",
                         "mean RTT per run (ms, log)" if metric == "rtt" else "loss rate per run (%)",
                         f"{name}: runs, lab checks (squares, 95 % CI), the paper's tables (black, mean ± s.e.)",
                         "the checks' verdicts: the table below", "lab check's mean [95 % CI]", 40)


def sp_chart(d):
    return alt.vconcat(*[sp_panel(m, d) for m in ("loss", "rtt") if d.filter(pl.col("metric") == m).height],
                       spacing=20).resolve_scale(xOffset="independent", x="independent")


render(sp_runs, sp_chart, "single_path_loss_rtt", "Single-path loss and RTT per path and size (Chen Tables 2-5)",
       caption="Dots: single-path runs; black: the paper's tables (mean ± s.e., labelled; ~ = < 0.03 %); squares "
               "with bars: the lab checks' estimates with 95 % CIs.",
       paper_ref="Chen et al. IMC'13 Tables 2, 3, 4, 5",
       empty_msg="No chen single-path (SP-wifi, SP-lte) runs in this database.",
       runs_by=["metric", "path", "size"])

# %% [markdown]
# ## Lab checks: the emulated paths against the paper's tables

# %%
display(Markdown(checks_table("chen")))
