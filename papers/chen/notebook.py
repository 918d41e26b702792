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
# plots (Fig. 2, 4, 6, 9), the share of the traffic on the cellular path (Fig. 3, 5, 7,
# 10), the per-packet RTT (Fig. 12) and out-of-order delay (Fig. 13) distributions, the
# connection means of Table 6 and the path conditions of Tables 2-6.
#
# The paper measured each figure on other days, under the path conditions of the table
# beside it, and those tables describe different links; so our campaign `chen` (standard
# scale, emulated links: `papers/chen/profiles.yaml`) has scenarios per table
# (`papers/chen/conditions.py` `SCENARIOS`), and each figure below is drawn from its own
# table's runs: **Table 2** (Fig. 2-3): `fig2-{att,verizon,sprint}-{64kb,512kb,2mb}`, WiFi +
# each carrier, SP-WiFi, SP-cellular and MP-2 (lia), one size each; **Table 3** (Fig.
# 4-5): `att` (8 KB-4 MB; SP, MP-2 lia/olia/reno) and `att-4path` (MP-4 lia);
# **Table 4** (Fig. 6-7): `coffee-att`, a loaded coffee-shop hotspot + AT&T (4 MB);
# **Table 5** (Fig. 9-10): `att-large` (4 and 8 MB; SP, MP-2 lia/olia/reno) and
# `att-large-4path` (MP-4 lia); **Table 6** (Fig. 12-13): `t6-{att,verizon,sprint}`, MP-2
# lia at 4, 8 and 16 MB. Five runs per configuration. Congestion controls are never
# pooled. Every number of a claim below is the findings' own (`findings.csv`,
# `findings-groups.csv`); this notebook draws them and the runs behind them, and computes
# no claim itself. The paper's statements: `papers/chen/inventory.yaml`.

# %% tags=["parameters"]
import os

DB = os.environ.get("MPTCP_LAB_DB", "../../results/lab.duckdb")  # `make lab` gives its kernels one
FIGURES = "../../results/figures/chen"
FINDINGS = None  # the workflow's findings folder; None: the findings are computed from DB

# %%
from papers.lab import open_paper

open_paper("chen", DB, FIGURES, FINDINGS)
from functools import partial

import polars as pl
from IPython.display import Markdown, display

from labfig import left_out, query, render, usable
from labfig.db import ccdf_sql, quantiles_sql
from labfig.verdicts import claims_figure, verdict_table
from papers.chen import conditions as cond
from papers.chen.figures import (  # the charts' code and constants
    CARRIER, CONFIG, DT_CLAIM, OFO_EDGE, PANEL_W, SHARE_EST, TABLE, by_scenario, cell_checks, cell_labelled,
    checks_md, dt_chart, fig12_ids, labelled, ofo_chart, ofo_claim_points, rtt_chart, runs_md, share_chart, sp_chart,
    statements_md, t6_chart)

display(Markdown(left_out("chen")))
USABLE = usable("chen")

# the runs per table, carrier, configuration and size
_n = query(f"""SELECT {TABLE} AS tbl, {CARRIER} AS carrier, {CONFIG} AS configuration, size_label AS size,
                      count(*) AS runs
               FROM run_facts WHERE {USABLE} GROUP BY ALL""")
display(Markdown(runs_md(_n)))

# %% [markdown]
# ## The paper's statements and ours
# Magnitude: our interval against the band of the paper's number (the interval shown is the
# one the verdict was decided with: 95 %, the Bonferroni level for *disagree*, 90 % for "no
# difference"; its level is in the `ci_level` column); direction: against
# the sign or order the paper states; *not comparable* when a condition a compared group
# rests on fails (its table's loss and RTT cells at its size, or the paper's words about
# those paths, at the end of this notebook: our emulated path is not the paper's);
# *underpowered* when our interval is wider than the paper's effect; *not reproducible
# here* for the live networks' own characteristics (they are our emulator's
# configuration) and the simultaneous-SYN patch. Rows of kind *condition* are the paper's
# statements about its paths, computed per table cell.

# %%
display(Markdown(verdict_table("chen")))

# %% [markdown]
# ## Download time per table, carrier, size and configuration (Fig. 2, 4, 6, 9)
# Download time: "from when the client sends out the first SYN to the server to the time it
# receives the last data packet" (§3.3, client trace). One panel per figure and carrier,
# each from the runs of the table measured beside that figure: Fig. 2 (Table 2: AT&T,
# Verizon, Sprint at 64 KB, 512 KB, 2 MB), Fig. 4 (Table 3: AT&T 8 KB-4 MB, MP-4 from
# `att-4path`), Fig. 6 (Table 4: the coffee shop at 4 MB), Fig. 9 (Table 5: AT&T 4 and 8 MB,
# MP-4 from `att-large-4path`). Boxes span the quartiles, the black tick is the median, the
# whiskers min and max (the paper's convention), dots are the runs. Under each panel: the
# claims' group estimates of MPTCP (lia)'s median ÷ the faster single path's median with
# their intervals, filled by their magnitude verdict: `chen-close-to-best` (Fig. 2,
# the paper's "at least close to the best single-path performance", band below 1.2),
# `chen-mp2-beats-sp-small` (Fig. 4, 512 KB and 4 MB: MP-2 faster than either single path),
# `chen-coffee-close-to-best` (Fig. 6) and `chen-large-beats-best` (Fig. 9, ≥ 8 MB, MP-2
# and MP-4: faster than the best single path).

# %%
DT_RUNS = f"""
    SELECT run_id, {TABLE} AS tbl, {CARRIER} AS carrier, {CONFIG} AS config, size_bytes, size_label AS size,
           download_time_s
    FROM run_facts WHERE {USABLE} AND {TABLE} IN ('t2', 't3', 't4', 't5') AND size_bytes > 0 AND download_time_s > 0"""
dt_runs = query(DT_RUNS + " ORDER BY ALL")
dt_box = query(quantiles_sql("download_time_s", DT_RUNS, ["tbl", "carrier", "config", "size_bytes", "size"]))
dt_est = labelled(*[c for c, _ in DT_CLAIM.values()])

render(dt_runs, partial(dt_chart, box=dt_box, ests=dt_est), "download_time",
       "Download time per table's runs, carrier, file size and configuration (Chen Fig. 2, 4, 6, 9)",
       caption="Box plots (quartiles, median tick, min-max whiskers) and runs per configuration, one panel per figure "
               "and carrier from the runs of the table beside that figure, log scale; below each: the claims' "
               "MPTCP ÷ faster-single-path estimates with intervals.",
       paper_ref="Chen et al. IMC'13 Fig. 2, 4, 6, 9",
       empty_msg="No chen runs of Table 2-5's scenarios with a download time in this database (campaign chen: "
                 "fig2-*, att, att-4path, coffee-att, att-large, att-large-4path).",
       runs_by=["tbl", "carrier", "config", "size"])

# %% [markdown]
# ## Share of the traffic on the cellular path (Fig. 3, 5, 7, 10)
# Per MPTCP connection: payload bytes on the cellular subflows ÷ all payload bytes (server
# trace, `run_facts.cell_share_pct`); one dot per run, one panel per figure and carrier
# from the runs of its table (as the download times above). Squares with bars: the claims'
# group estimates (the median over runs with its interval): `chen-sprint-mostly-wifi`
# (Fig. 3, Sprint), `chen-cell-share-4mb` (Fig. 5, AT&T 4 MB, MP-2 and MP-4 lia) and
# `chen-cell-share-large` (Fig. 10, AT&T ≥ 8 MB, every configuration). The paper: Sprint 3G
# carries little (Fig. 3); with AT&T the cellular share "reaches 50 %" at 4 MB (Fig. 5) and
# is over 50 % at 8-32 MB (Fig. 10). The growth with size (`chen-offload-grows-with-size`)
# and the coffee shop's larger share (`chen-coffee-more-cell-share`, Fig. 7 against Fig. 5)
# are differences between panels: the claims chart below.

# %%
share_runs = query(f"""
    SELECT run_id, {TABLE} AS tbl, {CARRIER} AS carrier, {CONFIG} AS config, size_bytes, size_label AS size,
           cell_share_pct, 'run' AS what
    FROM run_facts WHERE {USABLE} AND {TABLE} IN ('t2', 't3', 't4', 't5') AND transport = 'MPTCP' AND size_bytes > 0
      AND cell_share_pct IS NOT NULL
    ORDER BY ALL""")
share_est = (labelled("chen-sprint-mostly-wifi", "chen-cell-share-4mb", "chen-cell-share-large")
             .with_columns(what=pl.lit(SHARE_EST)))

render(share_runs, partial(share_chart, ests=share_est), "cellular_share",
       "Share of the traffic on the cellular path per table's runs and carrier (Chen Fig. 3, 5, 7, 10)",
       caption="Dots: MPTCP runs; squares with bars: the claims' medians with intervals; dashed: the paper's 50 %.",
       paper_ref="Chen et al. IMC'13 Fig. 3, 5, 7, 10",
       empty_msg="No chen MPTCP run of Table 2-5's scenarios with a cellular share in this database (MP-2 or MP-4 "
                 "runs, server trace).",
       runs_by=["tbl", "carrier", "config", "size"])

# %% [markdown]
# ## Packet RTT per path and carrier (Fig. 12)
# Per data packet of the MPTCP connections of Table 6's runs (`t6-*`: MP-2 with lia, the
# paper's "default coupled congestion controller", at 4, 8 and 16 MB), the RTT from the
# server's trace (data packet to the ACK covering it, retransmitted packets left out:
# `dl_rtt_samples`), CCDF per carrier (row), path (column) and file size (colour), log-log
# as the paper's. The paper's marks (§5.1) in black: WiFi's minimum of about 15 ms and "90 %
# of packet RTTs are less than 50 ms for file sizes larger than 4 MB"; AT&T's minimum of
# about 40 ms and "more than 70 %" between 50 and 200 ms (shaded); Verizon's minimum 32 ms
# and RTTs "up to two seconds"; Sprint's minimum of about 50 ms and "more than 98 % of the
# RTT samples larger than 100 ms". These statements are conditions (`chen-fig12-*`,
# computed per Table 6 cell, gating the claims of Fig. 13): their estimates and verdicts per
# size are under each panel's title, and where one is a point of the CCDF it is drawn as a
# square in its size's colour with its interval (WiFi's 90th percentile at 0.1;
# Sprint's share above 100 ms at 100 ms). WiFi's conditions pool the three carriers' runs
# (as the checks do), so each WiFi panel shows the same estimates.

# %%
RTT_SRC = f"""
    SELECT {by_scenario(0, 'r')} AS carrier,
           CASE WHEN s.path ILIKE 'wifi%' THEN 'WiFi path' ELSE 'cellular path' END AS path,
           r.size_bytes, r.size_label AS size, s.rtt_ms
    FROM dl_rtt_samples s JOIN run_facts r USING (run_id)
    WHERE {usable('chen', 'r')} AND {by_scenario(1, 'r')} = 't6' AND r.mode = 'MP-2'
      AND r.congestion_control = 'lia' AND s.rtt_ms > 0"""
rtt_ccdf = query(ccdf_sql("rtt_ms", RTT_SRC, ["carrier", "path", "size_bytes", "size"]))
FIG12_IDS = fig12_ids()
fig12_est = cell_labelled(*FIG12_IDS)

render(rtt_ccdf, partial(rtt_chart, ids=FIG12_IDS, ests=fig12_est), "rtt_ccdf",
       "Packet RTT CCDF per carrier and path, Table 6's MP-2 (lia) runs (Chen Fig. 12)",
       caption="CCDF of per-packet RTT (server trace, no retransmissions), one line per file size, log-log; dashed "
               "rules, shading and diamonds: the paper's marks of §5.1; squares: the chen-fig12-* conditions' "
               "estimates (CI) where they are points of the CCDF; subtitles: each condition's estimate and "
               "verdict per size.",
       paper_ref="Chen et al. IMC'13 Fig. 12, §5.1",
       empty_msg="No RTT samples of chen Table 6 runs (t6-att, t6-verizon, t6-sprint: MP-2 with lia) in this "
                 "database (dl_rtt_samples).")

# %% [markdown]
# ## Out-of-order delay per carrier (Fig. 13)
# For every data packet reaching the client: the time until its data sequence number is in
# order at the MPTCP level (`dl_ofo_samples`, §3.3); in-order packets count with delay 0 in
# every fraction, so each line starts, at the left edge, at the share of packets that wait
# at all. Table 6's MP-2 (lia) connections (`t6-*`: 4, 8 and 16 MB), one line per size; log
# x (the paper's "time axis ... in log scale"). The paper's marks (§5.2) labelled: with AT&T
# and Verizon "75 % of the packets are delivered in order" (so 25 % wait); with Sprint "75 %
# of the packets are out-of-order" and "more than 20 % of the packets have out-of-order
# delay larger than 150 ms". Squares with bars: the claims' estimates, pooled over the
# sizes, with their intervals, filled by their magnitude verdict: `chen-lte-in-order`
# (drawn as 1 − the in-order share) and `chen-3g-out-of-order` at the left edge (delay >
# 0), `chen-3g-ofo-over-150ms` at 150 ms.

# %%
OFO_SRC = f"""
    SELECT {by_scenario(0, 'r')} AS carrier, r.size_bytes, r.size_label AS size, o.ofo_delay_ms
    FROM dl_ofo_samples o JOIN run_facts r USING (run_id)
    WHERE {usable('chen', 'r')} AND {by_scenario(1, 'r')} = 't6' AND r.mode = 'MP-2'
      AND r.congestion_control = 'lia'"""
# in-order packets (delay 0) count in every fraction; on the log axis a group's CCDF point at
# delay 0 (its last one) is drawn at the left edge, the line stepping down from there
ofo_ccdf = (query(ccdf_sql("ofo_delay_ms", OFO_SRC, ["carrier", "size_bytes", "size"]))
            .sort("carrier", "size_bytes", "x", pl.col("ccdf").neg())
            .filter((pl.col("x") > 0) | (pl.col("ccdf") == pl.col("ccdf").filter(pl.col("x") <= 0).min()
                                         .over("carrier", "size_bytes")))
            .with_columns(x=pl.when(pl.col("x") > 0).then(pl.col("x")).otherwise(pl.lit(OFO_EDGE))))
ofo_est = ofo_claim_points()

render(ofo_ccdf, partial(ofo_chart, ests=ofo_est), "ofo_ccdf",
       "Out-of-order delay CCDF per carrier, Table 6's MP-2 (lia) runs (Chen Fig. 13)",
       caption="CCDF of the MPTCP-level out-of-order delay at the client (in-order packets count as 0), one line per "
               "size; dashed and diamonds: the paper's marks; squares: the claims' estimates pooled over the sizes "
               "(CI).",
       paper_ref="Chen et al. IMC'13 Fig. 13, §5.2",
       empty_msg="No out-of-order samples of chen Table 6 runs (t6-att, t6-verizon, t6-sprint: MP-2 with lia) in "
                 "this database (dl_ofo_samples).")

# %% [markdown]
# ## Connection means: out-of-order delay and RTT (Table 6)
# Top: each Table 6 run's (MP-2, lia) mean out-of-order delay over its packets (circles,
# `run_facts.ofo_mean_ms`); squares with bars (over the runs they summarise): the claims'
# estimates, the mean over runs with its interval, `chen-ofo-att-4mb` and
# `chen-ofo-sprint-4mb` (their values and magnitude verdicts in the subtitle); black, right
# of them: Table 6's mean ± standard error over the paper's connections, labelled, where we
# ran that carrier and size. Bottom: each run's mean RTT per path (Table 6's "flow mean")
# against Table 6's, with the lab checks of those cells (`lab-chen-t6-<path>-rtt-<size>`,
# squares: the mean over runs with its interval; WiFi pools the three carriers'
# runs). Log axes (an interval reaching below the axis is cut at its bottom). The ratio
# Sprint ÷ AT&T (`chen-ofo-sprint-vs-att`) and the fall with size
# (`chen-lte-ofo-decreases-with-size`) are in the claims chart below.

# %%
PATH_NAME = f"CASE {CARRIER} " + " ".join(f"WHEN '{k}' THEN '{v}'" for k, v in cond.PATH_NAMES.items()) + " END"
T6_WHERE = f"{USABLE} AND {TABLE} = 't6' AND mode = 'MP-2' AND congestion_control = 'lia' AND size_bytes > 0"
T6_RUNS = f"""
    SELECT run_id, 'OFO' AS metric, {PATH_NAME} AS path, size_label AS size, ofo_mean_ms AS ms FROM run_facts
    WHERE {T6_WHERE} AND ofo_mean_ms IS NOT NULL
    UNION ALL
    SELECT run_id, 'RTT', {PATH_NAME}, size_label, rtt_cell_mean_ms FROM run_facts
    WHERE {T6_WHERE} AND rtt_cell_mean_ms > 0
    UNION ALL
    SELECT run_id, 'RTT', 'WiFi', size_label, rtt_wifi_mean_ms FROM run_facts
    WHERE {T6_WHERE} AND rtt_wifi_mean_ms > 0"""
t6_runs = query(T6_RUNS + " ORDER BY ALL")
t6_est = labelled("chen-ofo-att-4mb", "chen-ofo-sprint-4mb").with_columns(
    path=pl.col("carrier").replace_strict(cond.PATH_NAMES, default=None))
# the lab checks of the tables' cells (conditions.CELLS: one check per table, path, metric and
# size; the cell that is an inventory entry of its own under that entry's id)
cell_est = cell_checks()

render(t6_runs, partial(t6_chart, claims=t6_est, checks=cell_est), "table6_ofo_rtt",
       "Per-connection out-of-order delay and RTT, Table 6's MP-2 (lia) runs (Chen Table 6)",
       caption="Dots: runs' means; black: Table 6's mean ± s.e. (labelled); squares with bars: the claims' means "
               "(chen-ofo-att-4mb, chen-ofo-sprint-4mb) and the lab checks' (RTT) with intervals.",
       paper_ref="Chen et al. IMC'13 Table 6",
       empty_msg="No chen Table 6 runs (t6-att, t6-verizon, t6-sprint: MP-2 with lia) in this database.",
       runs_by=["metric", "path", "size"])

# %% [markdown]
# ## The claims, group by group
# Each panel: every compared group's estimate and interval (colour: its magnitude
# verdict), the paper's band (shaded) and number (dashed). Congestion controls are never
# pooled: a group names its configuration, and its table.

# %%
claims_figure("chen", "Chen", width=PANEL_W)

# %% [markdown]
# ## The paths: single-path loss and RTT against Tables 2-5 (lab checks)
# One row per table, from the runs of that table's scenarios: each single-path (cubic) run's
# loss rate (retransmitted ÷ sent data packets) and mean RTT (server trace, §3.3) per path
# and size (circles). Squares with bars (over the runs they summarise): the lab checks'
# estimates, the mean over runs with its interval (`lab-chen-t<N>-<path>-<metric>-<size>`,
# one per cell of the paper's table): the conditions the claims rest on, a compared group
# resting on the cells of its table at its size for each path it uses; a failing check
# makes it *not comparable*. Black, right of them: the paper's cell, mean ± standard error
# over its connections, labelled; "~" is the paper's "negligible (< 0.03 %)", drawn as
# 0-0.03 %. Table 4's WiFi is the coffee-shop hotspot; the AT&T path of Table 4 is the
# `coffee-att` runs' LTE. Cells of sizes the campaign does not run (Table 2's 16 MB, Table
# 5's 16 and 32 MB, Table 4's small flows) have no runs and gate nothing: they are in the
# tables below.

# %%
SP_WHERE = f"{USABLE} AND mode IN ('SP-wifi', 'SP-lte') AND {TABLE} IN ('t2', 't3', 't4', 't5') AND size_bytes > 0"
SP_PATH = f"CASE WHEN mode = 'SP-wifi' THEN 'wifi' WHEN {CARRIER} = 'coffee-att' THEN 'att' ELSE {CARRIER} END"
sp_runs = (query(f"""
    SELECT run_id, {TABLE} AS tbl, {SP_PATH} AS p, size_label AS size, 'loss' AS metric,
           CASE WHEN mode = 'SP-wifi' THEN loss_wifi_pct ELSE loss_cell_pct END AS v
    FROM run_facts WHERE {SP_WHERE}
    UNION ALL
    SELECT run_id, {TABLE}, {SP_PATH}, size_label, 'rtt',
           CASE WHEN mode = 'SP-wifi' THEN rtt_wifi_mean_ms ELSE rtt_cell_mean_ms END
    FROM run_facts WHERE {SP_WHERE}
    ORDER BY ALL""").filter(pl.col("v").is_not_null())
           .with_columns(path=pl.col("p").replace_strict(cond.PATH_NAMES, default=None)))

render(sp_runs, partial(sp_chart, checks=cell_est), "single_path_loss_rtt",
       "Single-path loss and RTT per table, path and size (Chen Tables 2-5)",
       caption="One row per table, from its scenarios' runs. Dots: single-path runs; black: the paper's cells (mean "
               "± s.e., labelled; ~ = < 0.03 %); squares with bars: the lab checks' estimates with intervals.",
       paper_ref="Chen et al. IMC'13 Tables 2, 3, 4, 5",
       empty_msg="No chen single-path (SP-wifi, SP-lte) runs of Table 2-5's scenarios in this database.",
       runs_by=["tbl", "metric", "path", "size"])

# %% [markdown]
# ## Lab checks: the emulated paths against the paper's Tables 2-6
# One table per table of the paper, laid out as the paper's: per path and metric, per size,
# the paper's cell (mean ± standard error; "~": negligible, < 0.03 %) and ours (the mean
# over the runs of that table's scenarios [interval], n runs) with the lab check's
# verdict: *agree* when our interval lies within the paper's mean ± 1.96 standard errors
# (below 0.03 % for "~"), *disagree* when it lies outside, *inconclusive* when it straddles
# an edge; "not run" where the campaign has no runs of that size. Where a row has several
# groups, *disagree* needs the wider multiple-group (Bonferroni) interval outside the band:
# it is shown where it differs. Tables 2-5: single-path
# (cubic) runs; Table 6: the subflows of MP-2 (lia) runs (WiFi pools the three carriers').
# Below each: the paper's words about those paths (the inventory's condition rows, computed
# per cell of the runs they describe), with ours per cell and the verdict; a failing one
# makes the groups measured on that cell *not comparable* too.

# %%
for _t in cond.TABLES:
    display(Markdown(f"### {cond.TABLES[_t]} ({cond.FIGURES[_t]})\n\n{checks_md(_t, cell_est)}\n\n"
                     f"The paper's words about these paths:\n\n{statements_md(_t)}"))
