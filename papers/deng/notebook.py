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
# # Deng et al., IMC 2014: "WiFi, LTE, or Both?"
#
# How MPTCP over WiFi and LTE compares with single-path TCP over the better network (Fig. 7),
# how much the network of the **primary subflow** (Fig. 8-10) and the congestion control
# (coupled LIA vs decoupled Reno, Fig. 13, 14) change a flow's throughput, and what Backup
# mode does when the primary network fails (Fig. 15). Our runs: campaign `deng`, eight
# emulated locations (`profiles.yaml` deng-*), HTTP downloads of 10 KB, 100 KB and 1 MB,
# single-path TCP over each network and MPTCP with WiFi or LTE as the primary subflow,
# decoupled (`reno`, the paper's footnote 5) and coupled (`lia`); one run per configuration,
# five at `comparable` and `wifi-much-faster`. A run's throughput is the paper's: flow bytes
# ÷ download time (`run_facts.goodput_mbit`). Every number of a claim below is the findings'
# own (`findings.csv`, `findings-groups.csv`); this notebook draws them and the runs behind
# them, and computes no claim itself. The paper's statements: `papers/deng/inventory.yaml`.

# %% tags=["parameters"]
import os

DB = os.environ.get("MPTCP_LAB_DB", "../../results/lab.duckdb")  # `make lab` gives its kernels one
FIGURES = "../../results/figures/deng"
FINDINGS = None  # the workflow's findings folder; None: the findings are computed from DB

# %%
from papers.lab import open_paper

open_paper("deng", DB, FIGURES, FINDINGS)
import math

import altair as alt
import polars as pl
from IPython.display import Markdown, display

from labfig import left_out, query, render, usable
from labfig.charts import empty_state
from labfig.marks import halo_text
from labfig.db import quantiles_sql
from labfig.verdicts import VERDICT_COLOR, checks_table, claims_figure, tables, verdict_table

display(Markdown(left_out("deng")))
ROWS, GROUPS = tables("deng")
SIZES = ["10 KB", "100 KB", "1 MB"]
SIZE_COLOR = alt.Scale(domain=SIZES, range=["#1b9e77", "#d95f02", "#7570b3"])
PANEL_W = 500


def _fmt(x):
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return "–"
    return f"{x:.3g}"


def est(cid: str) -> pl.DataFrame:
    """The claim's group estimates (findings-groups.csv), as the findings computed them."""
    return GROUPS.filter(pl.col("id") == cid)


def claim_line(cid: str) -> list[str]:
    """Two lines of text: the claim's group estimates with their intervals; the paper's
    number and the verdicts."""
    r = ROWS.filter(pl.col("id") == cid)
    g = est(cid)
    if not r.height or not g.height:
        return [f"claim {cid}: no estimate in this database"]
    r = r.row(0, named=True)
    unit = r["unit"] or ""
    unit = unit if unit in ("%", "×") else f" {unit}"
    parts = [f"{x['group']} {_fmt(x['value'])}{unit} [{_fmt(x['ci_low'])}, {_fmt(x['ci_high'])}]"
             for x in g.iter_rows(named=True)]
    verdict = f"magnitude {r['magnitude_verdict']}" + (
        f", direction {r['direction_verdict']}" if r["direction_verdict"] != "no direction" else "")
    paper = r["paper_text"] or ""
    return [f"claim {cid} (n = {g['n'].max()}): " + "; ".join(parts),
            (f"paper: {paper}; " if paper and len(paper) < 60 else "") + verdict]


# %% [markdown]
# ## The paper's statements and ours
# Magnitude: our interval against the band of the paper's number (the interval shown is the
# one the verdict was decided with: 95 %, the Bonferroni level for *disagree*, 90 % for "no
# difference"; its level is in the `ci_level` column); direction: against
# the sign or order the paper states; *not comparable* when a lab check the claim rests on
# fails; *underpowered* when our interval is wider than the paper's effect; *not reproducible
# here* for the live-network measurements (§2), energy (§3.6.2) and the app replays (§4-5).

# %%
display(Markdown(verdict_table("deng")))

# %% [markdown]
# ## MPTCP against single-path TCP per flow size (Fig. 7)
# Fig. 7a is a location with "a large disparity in link speeds" (ours: `wifi-much-faster`,
# WiFi 20 Mbit/s, LTE 3 Mbit/s), where MPTCP is worse than the better TCP at every size;
# Fig. 7b one with comparable links (ours: `comparable`, WiFi 8, LTE 7 Mbit/s), where MPTCP
# (WiFi, decoupled) beats it at the large sizes. Top: each run's throughput (dots, five
# runs per configuration, shifted a little sideways per configuration so they do not
# overlap) and the line through each configuration's median run. Bottom: the claims' group
# estimates, the best MPTCP variant's median ÷ the better TCP's median with its
# interval (`deng-mptcp-worse-disparity` per size, `deng-mptcp-better-long` at 1 MB),
# coloured by the direction verdict.

# %%
CONFIGS = ["TCP over WiFi", "TCP over LTE", "MPTCP(WiFi, decoupled)", "MPTCP(LTE, decoupled)",
           "MPTCP(WiFi, coupled)", "MPTCP(LTE, coupled)"]
CONFIG_COLOR = alt.Scale(domain=CONFIGS, range=["#1f77b4", "#d62728", "#17becf", "#ff7f0e", "#6a51a3", "#8c564b"])
CONFIG_DASH = alt.Scale(domain=CONFIGS, range=[[1, 0], [1, 0], [6, 3], [6, 3], [2, 2], [2, 2]])
LOC7 = {"wifi-much-faster": "Fig. 7a: large disparity (wifi-much-faster)",
        "comparable": "Fig. 7b: comparable links (comparable)"}
CLAIM7 = {"wifi-much-faster": ("deng-mptcp-worse-disparity", "paper: MPTCP below the better TCP at every size"),
          "comparable": ("deng-mptcp-better-long", "paper: MPTCP (WiFi, decoupled) above it at large sizes")}
CFG_SQL = """CASE WHEN mode = 'SP-wifi' THEN 'TCP over WiFi' WHEN mode = 'SP-lte' THEN 'TCP over LTE'
                  ELSE 'MPTCP(' || CASE primary_path WHEN 'wifi' THEN 'WiFi' ELSE 'LTE' END || ', '
                       || CASE congestion_control WHEN 'reno' THEN 'decoupled' ELSE 'coupled' END || ')' END"""
RUNS7 = f"""
    SELECT run_id, scenario, size_bytes / 1000.0 AS size_kb, size_label, {CFG_SQL} AS configuration, goodput_mbit
    FROM run_facts
    WHERE {usable('deng')} AND scenario IN ('wifi-much-faster', 'comparable') AND size_bytes IN (10000, 100000, 1000000)
      AND goodput_mbit IS NOT NULL
      AND (mode IN ('SP-wifi', 'SP-lte') OR (mode = 'MP-2' AND congestion_control IN ('reno', 'lia')))"""
# sideways shift (a factor on the log size axis) per configuration, so the dots of one size do not overlap
DODGE = pl.DataFrame({"configuration": CONFIGS, "dodge": [1.22 ** (i - 2.5) for i in range(len(CONFIGS))]})
runs7 = query(RUNS7).join(DODGE, on="configuration").with_columns(x=pl.col("size_kb") * pl.col("dodge"))
box7 = query(quantiles_sql("goodput_mbit", RUNS7, ["scenario", "size_kb", "configuration"])).join(
    DODGE, on="configuration").with_columns(x=pl.col("size_kb") * pl.col("dodge"))
est7 = pl.concat([est(cid).with_columns(scenario=pl.lit(loc), note=pl.lit(note))
                  for loc, (cid, note) in CLAIM7.items()]).with_columns(
    size_kb=pl.col("group").replace_strict({"10 KB": 10.0, "100 KB": 100.0, "1 MB": 1000.0}, default=None))
X7 = alt.Scale(type="log", domain=[6, 1600])


def fig7_location(loc: str) -> tuple[alt.LayerChart, alt.LayerChart]:
    d, m = runs7.filter(pl.col("scenario") == loc), box7.filter(pl.col("scenario") == loc)
    color = alt.Color("configuration:N", scale=CONFIG_COLOR, title="configuration")
    x = alt.X("x:Q", scale=X7, title="flow size (KB, log)", axis=alt.Axis(values=[10, 100, 1000]))
    dots = alt.Chart(d).mark_point(size=30, opacity=0.6).encode(
        x=x, y=alt.Y("goodput_mbit:Q", scale=alt.Scale(type="log"), title="throughput (Mbit/s, log)"),
        color=color, tooltip=["run_id", "configuration", alt.Tooltip("goodput_mbit:Q", format=".3g")])
    lines = alt.Chart(m).mark_line(strokeWidth=2).encode(
        x=x, y="median:Q", color=color, strokeDash=alt.StrokeDash("configuration:N", scale=CONFIG_DASH, legend=None),
        tooltip=["configuration", alt.Tooltip("median:Q", format=".3g", title="median run"), "n:Q"])
    top = alt.layer(lines, dots).properties(width=PANEL_W, height=280, title=LOC7[loc])
    cid, note = CLAIM7[loc]
    e = est7.filter(pl.col("scenario") == loc)
    one = pl.DataFrame({"y": [1.0], "label": ["= the better TCP (ratio 1)"]})
    xr = alt.X("size_kb:Q", scale=X7, title="flow size (KB, log)", axis=alt.Axis(values=[10, 100, 1000]))
    rule = alt.Chart(one).mark_rule(strokeDash=[5, 4], color="black").encode(y="y:Q")
    rule_label = alt.Chart(one).mark_text(align="left", x=4, dy=-6, fontSize=10).encode(y="y:Q", text="label:N")
    layers = [rule, rule_label]
    ys = [1.0] + [v for v in e["ci_low"].to_list() + e["ci_high"].to_list() if v is not None and math.isfinite(v)]
    y_scale = alt.Scale(domain=[min(0.0, min(ys)), max(ys) * 1.1], nice=False)
    rule = rule.encode(y=alt.Y("y:Q", scale=y_scale, title="best MPTCP ÷ better TCP"))
    layers = [rule, rule_label]
    if e.height:
        vcolor = alt.Color("direction_verdict:N", title="claim's direction verdict",
                           scale=alt.Scale(domain=list(VERDICT_COLOR), range=list(VERDICT_COLOR.values())))
        layers += [
            alt.Chart(e).mark_rule(strokeWidth=2).encode(
                x=xr, y=alt.Y("ci_low:Q", scale=y_scale), y2="ci_high:Q", color=vcolor),
            alt.Chart(e).mark_point(filled=True, size=70, shape="square").encode(
                x=xr, y="value:Q", color=vcolor,
                tooltip=["id:N", "group:N", alt.Tooltip("value:Q", format=".3g"), alt.Tooltip("ci_low:Q", format=".3g"),
                         alt.Tooltip("ci_high:Q", format=".3g"), "n:Q", "direction_verdict:N"])]
    title = alt.TitleParams(f"claim {cid} (medians of 5 runs)", subtitle=note, fontSize=11, anchor="start")
    bottom = alt.layer(*layers).properties(width=PANEL_W, height=130, title=title)
    return top, bottom


def fig7_chart(_):
    tops, bottoms = zip(*[fig7_location(loc) for loc in LOC7])
    return alt.vconcat(alt.hconcat(*tops), alt.hconcat(*bottoms)).resolve_scale(color="independent",
                                                                                   strokeDash="independent")


render(runs7, fig7_chart, "tcp_vs_mptcp_per_size", "MPTCP vs single-path TCP per flow size (Deng Fig. 7)",
       caption="Dots: runs; lines: each configuration's median run; bottom: the claims' ratio estimates with "
               "intervals.",
       paper_ref="Deng et al. IMC'14 Fig. 7a, 7b",
       empty_msg="No deng runs at wifi-much-faster or comparable (SP-wifi, SP-lte, MP-2 with reno and lia).",
       runs_by=["scenario", "configuration", "size_label"])

# %% [markdown]
# ## Relative difference between LTE and WiFi as the primary subflow (Fig. 8)
# r = |MPTCP_LTE − MPTCP_WiFi| ÷ MPTCP_WiFi, decoupled (`primary_pairs`, reno: pairs of runs
# that differ only in the primary network). The unit of our CDF is the emulated location, as
# in the claims: each location's value is the median of its pairs (one pair at six
# locations, five at `comparable` and `wifi-much-faster`), one dot per location. Dashed: the
# paper's medians per size; square with bar: the claim `deng-primary-10kb-60`'s estimate (the
# median over the locations, interval).

# %%
PRIMARY_LOC = f"""
    SELECT scenario, size_bytes, size_label AS size, median(rel_diff_pct) AS x, count(*) AS pairs
    FROM primary_pairs WHERE {usable('deng', outages=True)} AND congestion_control = 'reno'
      AND size_bytes IN (10000, 100000, 1000000) AND rel_diff_pct IS NOT NULL
    GROUP BY ALL"""


def per_location_cdf(source: str, by: str = "size") -> pl.DataFrame:
    """Each location's value with its rank in its group (``cdf`` = rank ÷ locations) and a
    starting point at CDF 0, for a step line; the locations kept for the tooltips."""
    d = query(f"""SELECT *, row_number() OVER (PARTITION BY {by} ORDER BY x, scenario)::DOUBLE
                             / count(*) OVER (PARTITION BY {by}) AS cdf
                  FROM ({source}) ORDER BY {by}, x""")
    if not d.height:
        return d
    start = d.group_by(by).agg(pl.all().sort_by("x").first()).with_columns(
        cdf=pl.lit(0.0), scenario=pl.lit("(start)"), pairs=pl.lit(None, dtype=d["pairs"].dtype))
    return pl.concat([start.select(d.columns), d]).sort(by, "cdf")


LABEL_Y = {"10 KB": 0.97, "100 KB": 0.89, "1 MB": 0.81}


def paper_marks(medians: dict[str, float], prefix: str = "paper") -> pl.DataFrame:
    return pl.DataFrame({"size": list(medians), "x": list(medians.values()),
                         "y": [LABEL_Y[s] for s in medians], "y0": [0.0] * len(medians),
                         "label": [f"{prefix} {s}: median {v:g} %" for s, v in medians.items()]})


def estimate_marks(cids: list[str]) -> pl.DataFrame:
    """The claims' group estimates (median over the locations, interval), one row each."""
    bands = ROWS.select("id", "paper_value", "band_low", "band_high", "paper_text")
    frames = [est(cid).join(bands, on="id", how="left").with_columns(
                  size=pl.col("group"), row=pl.format("{} · {}", pl.col("id"), pl.col("group")),
                  label=pl.format("ours {} % [{}, {}], n = {} locations; magnitude {}",
                                                    pl.col("value").round(0).cast(pl.Int64),
                                                    pl.col("ci_low").round(0).cast(pl.Int64),
                                                    pl.col("ci_high").round(0).cast(pl.Int64), pl.col("n"),
                                                    pl.col("magnitude_verdict")))
              for cid in cids if est(cid).height]
    return pl.concat(frames) if frames else pl.DataFrame()


def cdf_panel(d: pl.DataFrame, paper: pl.DataFrame, ests: pl.DataFrame, x_title: str, title: str | None = None,
              x_max: float | None = None) -> alt.VConcatChart:
    """Per-location CDF per flow size (colour), the paper's medians as labelled dashed rules in
    the size's colour; below, on the same x axis, the claims' estimates with their interval."""
    xs = [v for v in d["x"].to_list() + paper["x"].to_list() if v is not None]
    if ests.height:
        xs += [v for v in ests["ci_high"].to_list() if v is not None and math.isfinite(v)]
    dom = [0, x_max or max(xs) * 1.08]
    scale = alt.Scale(domain=dom, clamp=True, nice=False)
    x = alt.X("x:Q", title=x_title, scale=scale)
    color = alt.Color("size:N", scale=SIZE_COLOR, title="flow size")
    half = alt.Chart(pl.DataFrame({"y": [0.5], "t": ["CDF 0.5 (the median)"]}))
    layers = [half.mark_rule(color="#bbbbbb").encode(y="y:Q"),
              half.mark_text(align="right", baseline="bottom", dy=-2, fontSize=9, color="#888888").encode(
                  y="y:Q", x=alt.value(PANEL_W - 2), text="t:N"),
              alt.Chart(paper).mark_rule(strokeDash=[6, 4], strokeWidth=1.5).encode(x=x, y="y0:Q", y2="y:Q",
                                                                                   color=color),
              alt.Chart(d).mark_line(interpolate="step-after", strokeWidth=2).encode(
                  x=x, y=alt.Y("cdf:Q", title="CDF over the emulated locations", scale=alt.Scale(domain=[0, 1])),
                  color=color),
              alt.Chart(d.filter(pl.col("scenario") != "(start)")).mark_point(filled=True, size=45).encode(
                  x=x, y="cdf:Q", color=color,
                  tooltip=["scenario:N", "size:N", alt.Tooltip("x:Q", format=".3g", title="location's value (%)"),
                           alt.Tooltip("pairs:Q", title="pairs of runs")]),
              halo_text(paper, dict(x=x, y="y:Q", text="label:N"), 4, dict(color=color), align="left", dx=4,
                        fontSize=11, fontWeight="bold")]
    cdf = alt.layer(*layers).properties(width=PANEL_W, height=280, **({"title": alt.TitleParams(
        title, anchor="start")} if title else {}))
    if not ests.height:
        return alt.vconcat(cdf)
    xe = alt.X("value:Q", scale=scale, title=None)
    y = alt.Y("row:N", title=None, sort=None)
    band = ests.filter(pl.col("band_low").is_not_null() & pl.col("band_high").is_not_null()).with_columns(
        band=pl.format("paper {}: band [{}, {}]", pl.col("paper_text"), pl.col("band_low"), pl.col("band_high")))
    strip_layers = []
    if band.height:
        strip_layers += [
            alt.Chart(band).mark_bar(color="#9ecae1", opacity=0.45, height=22).encode(
                x=alt.X("band_low:Q", scale=scale, title=None), x2="band_high:Q", y=y, tooltip=["band:N"]),
            alt.Chart(band).mark_tick(color="black", thickness=2, size=22).encode(
                x=alt.X("paper_value:Q", scale=scale, title=None), y=y, tooltip=["band:N"])]
    strip = alt.layer(
        *strip_layers,
        alt.Chart(ests).mark_rule(strokeWidth=3).encode(x=alt.X("ci_low:Q", scale=scale, title=None), x2="ci_high:Q",
                                                        y=y, color=color),
        alt.Chart(ests).mark_point(shape="square", filled=True, size=90, stroke="black", strokeWidth=1).encode(
            x=xe, y=y, color=color,
            tooltip=["id:N", "group:N", alt.Tooltip("value:Q", format=".3g"), alt.Tooltip("ci_low:Q", format=".3g"),
                     alt.Tooltip("ci_high:Q", format=".3g"), "n:Q", "magnitude_verdict:N", "direction_verdict:N"]),
        halo_text(ests, dict(x=alt.X("ci_low:Q", scale=scale, title=None), y=y, text="label:N"), 4,
                  dict(color=alt.value("black")), align="left", dx=6, dy=-9, fontSize=10),
    ).properties(width=PANEL_W, height=34 * ests.height,
                 title=alt.TitleParams("the claim's estimate (median over the locations, interval); shaded: the "
                                       "paper's band, black tick: its number", fontSize=11, fontWeight="normal",
                                       anchor="start"))
    return alt.vconcat(cdf, strip, spacing=6)


fig8 = per_location_cdf(PRIMARY_LOC)
render(fig8, lambda d: cdf_panel(d, paper_marks({"10 KB": 60, "100 KB": 49, "1 MB": 28}),
                                 estimate_marks(["deng-primary-10kb-60"]),
                                 "r = |MPTCP_LTE − MPTCP_WiFi| ÷ MPTCP_WiFi, decoupled (%)"),
       "primary_rel_diff_cdf", "LTE vs WiFi as the primary subflow: r (Deng Fig. 8)",
       caption="CDF over the 8 emulated locations of each location's median r (decoupled); dashed: the paper's "
               "medians (60 / 49 / 28 %); square: the claim's estimate with its interval.",
       paper_ref="Deng et al. IMC'14 Fig. 8",
       empty_msg="No pairs of deng MP-2 reno runs that differ only in the primary network (primary_pairs).")

# %% [markdown]
# ## Throughput over time per subflow, for each primary choice (Fig. 9, 10)
# The bytes the client received per second on each path (`run_delivery`) and in total, in
# the 1 MB decoupled downloads at `lte-better` (the paper's Fig. 9: LTE the faster network)
# and `wifi-better` (Fig. 10: WiFi the faster one), with WiFi and with LTE as the primary
# subflow; one line per run and series. Throughput in a second = its bytes ÷ its length (the
# last second only as long as the download lasted). The paper plots the average since the
# first SYN over 2 s; its claim (the faster network as primary gives the higher throughput)
# is `deng-primary-faster-network`, over all eight locations.

# %%
PATH_NAME = {"wifi": "WiFi subflow", "cell": "LTE subflow"}
SERIES = ["WiFi subflow", "LTE subflow", "MPTCP (total)"]
timeline = query(f"""
    WITH r AS (
        SELECT run_id, scenario, primary_path, repetition, download_time_s,
               printf('%s: WiFi %g Mbit/s, RTT %d ms; LTE %g Mbit/s, RTT %d ms', scenario, rate_wifi_mbit,
                      round(rtt_wifi_ms)::INT, rate_cell_mbit, round(rtt_cell_ms)::INT) AS location
        FROM run_facts
        WHERE {usable('deng')} AND mode = 'MP-2' AND congestion_control = 'reno' AND size_bytes = 1000000
          AND scenario IN ('lte-better', 'wifi-better')),
    last AS (SELECT d.run_id, max(d.second) AS s_max FROM run_delivery d JOIN r USING (run_id) GROUP BY ALL),
    grid AS (SELECT r.*, unnest(generate_series(0, last.s_max)) AS second FROM r JOIN last USING (run_id)),
    cells AS (SELECT g.*, p.side, coalesce(d.payload_bytes, 0)::BIGINT AS bytes
              FROM grid g CROSS JOIN (VALUES ('wifi'), ('cell')) p(side)
              LEFT JOIN run_delivery d ON d.run_id = g.run_id AND d.second = g.second AND d.side = p.side),
    series AS (SELECT *, side AS series FROM cells
               UNION ALL
               SELECT run_id, scenario, primary_path, repetition, download_time_s, location, second, 'total',
                      sum(bytes)::BIGINT, 'total' FROM cells GROUP BY ALL)
    SELECT run_id, scenario, location, repetition,
           CASE primary_path WHEN 'wifi' THEN 'WiFi as the primary subflow' ELSE 'LTE as the primary subflow' END
             AS primary_choice,
           CASE series WHEN 'wifi' THEN 'WiFi subflow' WHEN 'cell' THEN 'LTE subflow' ELSE 'MPTCP (total)' END AS series,
           second, bytes,
           8 * bytes / 1e6 / CASE WHEN download_time_s > second AND download_time_s < second + 1
                                  THEN download_time_s - second ELSE 1 END AS mbit
    FROM series ORDER BY ALL""")


def steps(d: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Per-second values as a step line: each second's value from its start to its end (a
    closing point one second after the last)."""
    if not d.height:
        return d
    last = d.sort("second").group_by(keys).agg(pl.all().last()).with_columns(pl.col("second") + 1)
    return pl.concat([d, last.select(d.columns)]).sort(*keys, "second")


def timeline_chart(d):
    d = steps(d, ["run_id", "series"])
    panels = []
    for loc in d.sort("scenario")["location"].unique(maintain_order=True):
        row = []
        for choice in ["WiFi as the primary subflow", "LTE as the primary subflow"]:
            p = d.filter((pl.col("location") == loc) & (pl.col("primary_choice") == choice))
            fig = "Fig. 9" if loc.startswith("lte-better") else "Fig. 10"
            row.append(alt.Chart(p).mark_line(interpolate="step-after", strokeWidth=2, opacity=0.8).encode(
                x=alt.X("second:Q", title="time since the first SYN (s)", scale=alt.Scale(domainMin=0)),
                y=alt.Y("mbit:Q", title="throughput in that second (Mbit/s)"),
                color=alt.Color("series:N", title="series", sort=SERIES,
                                scale=alt.Scale(domain=SERIES, range=["#1f77b4", "#d62728", "black"])),
                detail="run_id:N",
                tooltip=["run_id", "series", "second:Q", "bytes:Q", alt.Tooltip("mbit:Q", format=".3g")])
                .properties(width=PANEL_W - 60, height=200,
                            title=alt.TitleParams(f"{fig} · {choice}", subtitle=loc, anchor="start")))
        panels.append(alt.hconcat(*row).resolve_scale(y="shared"))
    lines = claim_line("deng-primary-faster-network")
    return alt.vconcat(alt.vconcat(*panels).properties(title=alt.TitleParams(
        "1 MB decoupled downloads; the claim over the 8 locations: MPTCP with the faster network as primary ÷ with "
        "the slower one", subtitle=lines, anchor="start", fontSize=12)))


render(timeline, timeline_chart, "throughput_over_time",
       "Throughput per second and subflow (Deng Fig. 9, 10)",
       caption="Client's bytes received per second per path (run_delivery) and in total, 1 MB MP-2 reno runs at "
               "lte-better and wifi-better; one line per run.",
       paper_ref="Deng et al. IMC'14 Fig. 9, 10",
       empty_msg="No 1 MB MP-2 reno runs at lte-better or wifi-better with per-second delivery (run_delivery).")

# %% [markdown]
# ## Congestion control and primary network: r_cwnd and r_network (Fig. 13, 14)
# r_cwnd = |MPTCP_decoupled − MPTCP_coupled| ÷ MPTCP_coupled (`cc_pairs`, pairs that differ
# only in congestion control, both primaries; Fig. 13 and Fig. 14's "CC" curves) and
# r_network = |MPTCP_LTE − MPTCP_WiFi| ÷ MPTCP_WiFi (`primary_pairs`, coupled and decoupled
# pooled; Fig. 14's "Network" curves). Each location's value is the median of its pairs, one
# dot per location; both panels share the x axis, so a size's curve can be compared between
# them (the paper: "Network" to the right of "CC" at 10 KB and 100 KB, "CC" to the right at
# 1 MB). Dashed and labelled: the paper's medians; squares with bars: the claims' estimates
# at 1 MB (`deng-cc-1mb-34`, `deng-network-1mb-25`). The differences between the two curves
# (`deng-cc-beats-network-1mb`, `deng-network-beats-cc-10kb`) are in the claims' chart below.

# %%
CC_LOC = f"""
    SELECT scenario, size_bytes, size_label AS size, median(rel_diff_pct) AS x, count(*) AS pairs
    FROM cc_pairs WHERE {usable('deng', outages=True)} AND size_bytes IN (10000, 100000, 1000000)
      AND rel_diff_pct IS NOT NULL
    GROUP BY ALL"""
NETWORK_LOC = f"""
    SELECT scenario, size_bytes, size_label AS size, median(rel_diff_pct) AS x, count(*) AS pairs
    FROM primary_pairs WHERE {usable('deng', outages=True)} AND congestion_control IN ('reno', 'lia')
      AND size_bytes IN (10000, 100000, 1000000) AND rel_diff_pct IS NOT NULL
    GROUP BY ALL"""
cc_loc, net_loc = per_location_cdf(CC_LOC), per_location_cdf(NETWORK_LOC)
both = pl.concat([cc_loc.with_columns(curve=pl.lit("cc")), net_loc.with_columns(curve=pl.lit("network"))]) \
    if cc_loc.height and net_loc.height else cc_loc if cc_loc.height else net_loc


def fig13_14_chart(_):
    x_max = max(both["x"].max() * 1.08, 70)
    panels = []
    for frame, medians, cid, title, x_title in [
            (cc_loc, {"10 KB": 16, "100 KB": 16, "1 MB": 34}, "deng-cc-1mb-34",
             "Fig. 13 / Fig. 14 'CC': decoupled vs coupled congestion control",
             "r_cwnd = |MPTCP_decoupled − MPTCP_coupled| ÷ MPTCP_coupled (%)"),
            (net_loc, {"10 KB": 60, "100 KB": 43, "1 MB": 25}, "deng-network-1mb-25",
             "Fig. 14 'Network': LTE vs WiFi as the primary, coupled and decoupled pooled",
             "r_network = |MPTCP_LTE − MPTCP_WiFi| ÷ MPTCP_WiFi (%)")]:
        if not frame.height:  # said, not dropped: the reader looks for the paper's panel
            panels.append(empty_state(f"{title}: no data", "No location has a pair of runs for this curve "
                                      "(cc_pairs: MP-2 runs differing only in congestion control; primary_pairs: "
                                      "only in the primary network) at 10 KB, 100 KB or 1 MB.", width=PANEL_W))
            continue
        panels.append(cdf_panel(frame, paper_marks(medians, "paper"), estimate_marks([cid]), x_title, title,
                                x_max=x_max))
    return alt.vconcat(*panels, spacing=24)


render(both, fig13_14_chart, "cc_and_network_rel_diff_cdf",
       "r_cwnd and r_network per flow size (Deng Fig. 13, 14)",
       caption="CDFs over the 8 emulated locations of each location's median r_cwnd (top) and r_network (bottom) "
               "per flow size; dashed: the paper's medians; squares: the claims' 1 MB estimates with intervals.",
       paper_ref="Deng et al. IMC'14 Fig. 13, 14",
       empty_msg="No pairs of deng MP-2 runs differing only in congestion control (cc_pairs) or only in the "
                 "primary network (primary_pairs).")

# %% [markdown]
# ## Backup mode (Fig. 15)
# Backup mode (the paper's Fig. 15d, f, g): the bytes the client received per second on
# each path, one line per run. Top: WiFi primary, LTE backup, 1 MB downloads at
# `wifi-better` without an outage (`deng-backup-no-data`: the backup carries no data);
# middle: the same with 4 MB downloads at `backup-failover` and the WiFi link down from
# 2 s after the emulator starts (about 1.7 s after the first SYN) to 60 s (grey;
# `deng-backup-failover`: the LTE backup carries the rest of the file; our link simply
# fails, no "multipath off", so the kernel learns of it from retransmission timeouts);
# bottom: LTE primary, WiFi backup, 28-s downloads at `backup-unplug` whose client LTE
# interface is taken away from 3 s to 20 s after the workload starts (grey;
# `deng-backup-unplug-stall`: the paper's connection halted until the re-plug).

# %%
backup = query(f"""
    WITH r AS (SELECT run_id, scenario, primary_path, download_time_s FROM run_facts
               WHERE {usable('deng', outages=True)} AND mode = 'backup'),
    last AS (SELECT d.run_id, max(d.second) AS s_max FROM run_delivery d JOIN r USING (run_id) GROUP BY ALL),
    grid AS (SELECT r.*, unnest(generate_series(0, last.s_max)) AS second FROM r JOIN last USING (run_id))
    SELECT g.run_id, g.scenario, g.second,
           CASE p.side WHEN 'wifi' THEN 'WiFi' ELSE 'LTE' END AS network,
           CASE WHEN (p.side = 'wifi') = (g.primary_path = 'wifi') THEN 'primary' ELSE 'backup' END AS role,
           CASE p.side WHEN 'wifi' THEN 'WiFi' ELSE 'LTE' END
             || CASE WHEN (p.side = 'wifi') = (g.primary_path = 'wifi') THEN ' (primary)' ELSE ' (backup)' END AS path,
           coalesce(d.payload_bytes, 0)::BIGINT AS bytes,
           8 * coalesce(d.payload_bytes, 0)::DOUBLE / 1e6
             / CASE WHEN g.download_time_s > g.second AND g.download_time_s < g.second + 1
                    THEN g.download_time_s - g.second ELSE 1 END AS mbit
    FROM grid g CROSS JOIN (VALUES ('wifi'), ('cell')) p(side)
    LEFT JOIN run_delivery d ON d.run_id = g.run_id AND d.second = g.second AND d.side = p.side
    ORDER BY ALL""")
outages = query(f"""
    SELECT DISTINCT c.scenario, o.path, o.down_s, o.up_s
    FROM run_config c JOIN run_outages o USING (run_id)
    WHERE {usable('deng', 'c', outages=True)} AND c.mode = 'backup' AND o.direction = 'down'
      AND o.path IN ('wifi', 'lte')
    UNION ALL
    SELECT DISTINCT scenario, unplug_path, unplug_at_s, replug_at_s
    FROM run_config WHERE {usable('deng', outages=True)} AND mode = 'backup' AND unplug_at_s IS NOT NULL
    ORDER BY ALL""") if backup.height else pl.DataFrame()
BACKUP_CASES = {"wifi-better": ("Fig. 15d: 1 MB at wifi-better, no outage", "deng-backup-no-data"),
                "backup-failover": ("Fig. 15f: 4 MB at backup-failover, WiFi link down from 2 s",
                                    "deng-backup-failover"),
                "backup-unplug": ("Fig. 15g: LTE primary, its interface unplugged from 3 s to 20 s",
                                  "deng-backup-unplug-stall")}


def backup_chart(d):
    d = steps(d, ["run_id", "network", "role", "path"])
    panels = []
    for scen, (title, cid) in BACKUP_CASES.items():
        p = d.filter(pl.col("scenario") == scen)
        if not p.height:
            continue
        x_end = p["second"].max()
        layers = []
        o = outages.filter(pl.col("scenario") == scen) if outages.height else outages
        if o.height:
            name = pl.col("path").replace_strict({"wifi": "WiFi", "lte": "LTE"}, default=pl.col("path"))
            # outages count from the emulator's start, unplugs from the workload's
            what, since = (("interface unplugged", "the workload's start") if scen == "backup-unplug"
                           else ("link down", "the emulator's start"))
            band = o.with_columns(b=pl.min_horizontal(pl.col("up_s"), pl.lit(float(x_end))),
                                  label=pl.format(f"{{}} {what} (from {{}} s after {since})", name, pl.col("down_s")),
                                  what=pl.format(f"{{}} {what} from {{}} s to {{}} s after {since}",
                                                 name, pl.col("down_s"), pl.col("up_s")))
            layers += [alt.Chart(band).mark_rect(color="grey", opacity=0.18).encode(x="down_s:Q", x2="b:Q",
                                                                                    tooltip=["what:N"]),
                       alt.Chart(band).mark_text(align="left", baseline="top", dx=4, y=4, fontSize=11,
                                                 color="#555555").encode(
                           x="down_s:Q", text="label:N")]
        layers.append(alt.Chart(p).mark_line(interpolate="step-after", strokeWidth=2, opacity=0.7).encode(
            x=alt.X("second:Q", title="time since the first SYN (s)", scale=alt.Scale(domain=[0, x_end])),
            y=alt.Y("mbit:Q", title="throughput in that second (Mbit/s)"),
            color=alt.Color("network:N", title="path", sort=["WiFi", "LTE"],
                            scale=alt.Scale(domain=["WiFi", "LTE"], range=["#1f77b4", "#d62728"])),
            strokeDash=alt.StrokeDash("role:N", title="subflow", sort=["primary", "backup"],
                                      scale=alt.Scale(domain=["primary", "backup"], range=[[1, 0], [5, 3]])),
            detail="run_id:N",
            tooltip=["run_id", "path", "second:Q", "bytes:Q", alt.Tooltip("mbit:Q", format=".3g")]))
        panels.append(alt.layer(*layers).properties(
            width=PANEL_W + 100, height=200,
            title=alt.TitleParams(title, subtitle=claim_line(cid), anchor="start")))
    return alt.vconcat(*panels)


render(backup, backup_chart, "backup_mode", "Backup mode: throughput per path and second (Deng Fig. 15)",
       caption="Client's bytes received per second on each path (run_delivery), backup mode (solid: the primary "
               "subflow's path, dashed: the backup's); grey: the WiFi outage, or the time the LTE interface was "
               "unplugged (seconds after the workload's start, a fraction of a second before the first SYN).",
       paper_ref="Deng et al. IMC'14 Fig. 15d, 15f, 15g",
       empty_msg="No deng backup-mode runs (wifi-better 1 MB, backup-failover 4 MB, backup-unplug 28 s) with "
                 "per-second delivery.")

# %% [markdown]
# ## The claims, group by group
# Each panel: every compared group's estimate and interval (colour: its magnitude
# verdict), the paper's band (shaded) and number (dashed). Claims stated only as a direction
# (MPTCP worse or better, one size more affected than another) have no band: their verdict is
# the direction's.

# %%
claims_figure("deng", "Deng", width=PANEL_W)

# %% [markdown]
# ## Lab checks: the emulated locations against the paper's conditions

# %%
display(Markdown(checks_table("deng")))
