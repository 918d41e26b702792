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
# # Deng et al., IMC 2014 — WiFi, LTE, or both?
#
# How the choice of network for the **primary subflow** (and of coupled vs decoupled
# congestion control) changes MPTCP throughput: throughput over time per subflow for
# each primary-path choice (Fig. 9/10), MPTCP against single-path TCP per flow size
# (Fig. 7), and the CDF of the relative throughput difference between the two primary
# choices (Fig. 8) and between the two congestion controls (Fig. 13, 14). Throughput of
# a run = flow size ÷ download time; pairs of runs differ only in the compared setting
# (`primary_pairs`, `cc_pairs` in `pipeline/derived.py`). Decoupled = reno per subflow
# (the paper's footnote 5), coupled = lia. The paper's medians are the black diamonds.

# %% tags=["parameters"]
import os

DB = os.environ.get("MPTCP_LAB_DB", "../results/lab.duckdb")
FIGURES = os.environ.get("MPTCP_LAB_FIGURES", "../results/figures/deng")

# %%
os.environ["MPTCP_LAB_DB"], os.environ["MPTCP_LAB_FIGURES"] = DB, FIGURES
os.environ["MPTCP_LAB_NOTEBOOK"] = "deng"
import altair as alt
import polars as pl
from IPython.display import Markdown, display

from findings import verdict_lines
from labfig import ccdf_chart, estimates, findings_of, query, render, shown
from labfig.db import cdf_sql, left_out, usable

USABLE = usable("deng")
display(Markdown(left_out("deng")))
query("SELECT scenario, mode, primary_path, congestion_control, count(*) AS runs FROM run_facts "
      "WHERE paper = 'deng' GROUP BY ALL ORDER BY ALL")

# %% [markdown]
# ## Throughput over time per subflow (Fig. 9, 10)
# Average throughput from the first SYN to time *t* (the paper's definition), per
# subflow and for the whole connection, from the client trace: each data packet's
# arrival (`dl_ofo_samples`) weighted by its subflow's mean payload per packet. One
# panel per primary-path choice; the largest flow of each location, first repetition.

# %%
timeline = query(f"""
    WITH pick AS (
        SELECT run_id, scenario, primary_path,
               row_number() OVER (PARTITION BY scenario, primary_path ORDER BY size_bytes DESC,
                                  congestion_control, repetition, run_id) AS k
        FROM run_facts WHERE {USABLE} AND mode = 'MP-2'),
    runs1 AS (SELECT * FROM pick WHERE k = 1),
    conn AS (SELECT c.run_id, c.start_s AS t0 FROM dl_connections c
             JOIN main_connections USING (run_id, trace, vantage, conn_id) WHERE c.vantage = 'client'),
    per_pkt AS (SELECT run_id, subflow_id, payload_bytes / greatest(data_packets, 1) AS bpp
                FROM dl_subflows WHERE vantage = 'client'),
    pk AS (
        SELECT r.scenario, 'primary: ' || r.primary_path AS primary_choice, o.path,
               o.arrival_s - c.t0 AS t, p.bpp
        FROM dl_ofo_samples o JOIN runs1 r USING (run_id) JOIN conn c USING (run_id)
        JOIN per_pkt p ON p.run_id = o.run_id AND p.subflow_id = o.subflow_id),
    series AS (
        SELECT scenario, primary_choice, path AS series, t, sum(bpp) OVER w AS bytes FROM pk
        WINDOW w AS (PARTITION BY scenario, primary_choice, path ORDER BY t)
        UNION ALL
        SELECT scenario, primary_choice, 'MPTCP (total)', t, sum(bpp) OVER w FROM pk
        WINDOW w AS (PARTITION BY scenario, primary_choice ORDER BY t)),
    thin AS (SELECT *, row_number() OVER (PARTITION BY scenario, primary_choice, series ORDER BY t) AS i,
                    count(*) OVER (PARTITION BY scenario, primary_choice, series) AS n FROM series)
    SELECT scenario, primary_choice, series, t AS time_s, 8 * bytes / t / 1e6 AS mbps
    FROM thin WHERE t > 0 AND (i % greatest(1, n // 150) = 0 OR i = n)
    ORDER BY ALL""")


def timeline_chart(d):
    return (alt.Chart(d).mark_line().encode(
        x=alt.X("time_s:Q", title="time since first SYN (s)"),
        y=alt.Y("mbps:Q", title="average throughput since start (Mbit/s)"),
        color=alt.Color("series:N", title="subflow path / total"),
        tooltip=["series", alt.Tooltip("time_s:Q", format=".2f"), alt.Tooltip("mbps:Q", format=".2f")])
        .properties(width=260, height=180)
        .facet(column=alt.Column("primary_choice:N", title=None), row=alt.Row("scenario:N", title="location")))


render(timeline, timeline_chart, "throughput_over_time",
       "Throughput over time per subflow and primary path (Deng Fig. 9/10)",
       caption="Average throughput since the first SYN, per subflow and in total, for WiFi vs LTE as the primary subflow.",
       paper_ref="Deng et al. IMC'14 Fig. 9, 10")

# %% [markdown]
# ## MPTCP vs single-path TCP per flow size (Fig. 7)
# Median throughput per configuration and flow size; the paper: "For short flows (100 KB
# or lower), MPTCP performs worse than TCP".

# %%
cfg = ("CASE WHEN mode = 'MP-2' THEN 'MPTCP(' || primary_path || ', ' || congestion_control || ')' "
       "ELSE 'TCP ' || substr(mode, 4) END")
tput = query(f"""SELECT scenario, size_bytes, size_label, {cfg} AS configuration, median(goodput_mbit) AS value,
                        quantile_cont(goodput_mbit, 0.25) AS lo, quantile_cont(goodput_mbit, 0.75) AS hi,
                        count(*) AS n
                 FROM run_facts WHERE {USABLE} AND mode IN ('MP-2', 'SP-wifi', 'SP-lte') AND goodput_mbit IS NOT NULL
                 GROUP BY ALL ORDER BY ALL""")
SIZES = tput.unique("size_bytes").sort("size_bytes")["size_label"].to_list()
render(tput, lambda d: estimates(d, x="size_label", x_title="flow size", y_title="throughput (Mbit/s, log)",
                                 color="configuration", facet="scenario", x_sort=SIZES, log_y=True),
       "throughput_vs_size", "MPTCP and TCP throughput per flow size (Deng Fig. 7)",
       caption="Median throughput (flow size ÷ download time) with the inter-quartile range, per location.",
       paper_ref="Deng et al. IMC'14 Fig. 7")
for (scen, size, label), g in tput.filter(pl.col("size_bytes") <= 100_000).group_by(
        ["scenario", "size_bytes", "size_label"], maintain_order=True):
    mp = g.filter(pl.col("configuration").str.starts_with("MPTCP"))["value"]
    sp = g.filter(pl.col("configuration").str.starts_with("TCP"))
    if mp.len() and sp.height == 2:
        shown("deng-mptcp-worse-short", f"{scen} {label}", mp.max() / sp["value"].max())
faster = dict(query(f"SELECT scenario, any_value(faster_path) AS f FROM run_facts WHERE {USABLE} AND mode = 'MP-2' "
                    f"GROUP BY scenario").iter_rows())
for r in query(f"""SELECT scenario, size_label,
                       median(goodput_mbit) FILTER (WHERE primary_path = 'wifi') AS wifi,
                       median(goodput_mbit) FILTER (WHERE primary_path = 'lte') AS lte
                   FROM run_facts WHERE {USABLE} AND mode = 'MP-2' AND congestion_control = 'reno' AND size_bytes > 0
                   GROUP BY ALL""").iter_rows(named=True):
    f = faster.get(r["scenario"])
    if f and r["wifi"] and r["lte"]:
        shown("deng-primary-faster-network", f"{r['scenario']} {r['size_label']} ({f} faster)",
              r[f] / r["wifi" if f == "lte" else "lte"])
tput

# %% [markdown]
# ## Relative difference, LTE vs WiFi as the primary subflow (Fig. 8) and coupled vs decoupled (Fig. 13)
# CDF over paired runs of |MPTCP_LTE − MPTCP_WiFi| / MPTCP_WiFi (decoupled) per flow
# size, and of |MPTCP_decoupled − MPTCP_coupled| / MPTCP_coupled. The paper's medians:
# 60 / 49 / 28 % (Fig. 8) and 16 / 16 / 34 % (Fig. 13) for 10 KB / 100 KB / 1 MB.

# %%
PAIRS = f"""
    SELECT 'primary: LTE vs WiFi (Fig. 8)' AS comparison, size_bytes, size_label AS size, rel_diff_pct
    FROM primary_pairs WHERE {usable('deng', outages=True)} AND congestion_control = 'reno'
    UNION ALL
    SELECT 'congestion control: decoupled vs coupled (Fig. 13)', size_bytes, size_label, rel_diff_pct
    FROM cc_pairs WHERE {usable('deng', outages=True)}"""
pairs = query(PAIRS)
cdf = query(cdf_sql("rel_diff_pct", PAIRS, ["comparison", "size_bytes", "size"]))
PAPER_MEDIANS = pl.DataFrame(
    [("primary: LTE vs WiFi (Fig. 8)", "10 KB", 60.0), ("primary: LTE vs WiFi (Fig. 8)", "100 KB", 49.0),
     ("primary: LTE vs WiFi (Fig. 8)", "1 MB", 28.0),
     ("congestion control: decoupled vs coupled (Fig. 13)", "10 KB", 16.0),
     ("congestion control: decoupled vs coupled (Fig. 13)", "100 KB", 16.0),
     ("congestion control: decoupled vs coupled (Fig. 13)", "1 MB", 34.0)],
    schema=["comparison", "size", "x"], orient="row").with_columns(
    pl.lit(0.5).alias("paper"), pl.format("median {} % at {}", "x", "size").alias("paper_note"))
render(cdf, lambda d: ccdf_chart(d, x_title="relative throughput difference (%)", color="size", facet="comparison",
                                 color_title="flow size", log_x=False, log_y=False, color_sort=SIZES, y="cdf",
                                 y_title="CDF", paper=PAPER_MEDIANS),
       "relative_difference_cdf", "Relative throughput difference: primary network and congestion control "
                                  "(Deng Fig. 8, 13)",
       caption="CDF over paired runs of the relative throughput difference; black: the paper's medians.",
       paper_ref="Deng et al. IMC'14 Fig. 8, 13, 14")

# %%
medians = (pairs.group_by("comparison", "size_bytes", "size").agg(pl.col("rel_diff_pct").median().alias("ours_pct"),
                                                                  pl.len().alias("pairs"))
           .sort("comparison", "size_bytes")) if pairs.height else pairs
m = {(r["comparison"][:7], r["size_bytes"]): r["ours_pct"] for r in medians.iter_rows(named=True)}
if ("primary", 10_000) in m and ("primary", 1_000_000) in m:
    shown("deng-primary-greatest-small", "10 KB − 1 MB", m[("primary", 10_000)] - m[("primary", 1_000_000)])
if ("congest", 10_000) in m and ("congest", 1_000_000) in m:
    shown("deng-cc-greatest-large", "1 MB − 10 KB", m[("congest", 1_000_000)] - m[("congest", 10_000)])
medians

# %% [markdown]
# ## Findings: the paper's claims and ours
# Each claim is data in `findings/claims/deng.py`, evaluated by the `findings` package
# (the code that writes `results/findings.csv`): our value with a seeded 95 % bootstrap
# CI over runs or pairs of runs, the verdict from the CI against the paper's band.

# %%
FINDINGS = findings_of("deng", DB)
display(Markdown(verdict_lines(FINDINGS)))
FINDINGS.select("id", "group", "paper_value", "our_value", "ci_low", "ci_high", "unit", "n_runs", "verdict")
