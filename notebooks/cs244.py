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
# # Raiciu et al. NSDI'12 Fig. 9, as reproduced by CS244 (Lim & Valdez)
#
# Throughput of TCP over WiFi, TCP over 3G and MPTCP over both, against the socket
# buffer size (50–500 KB), and the handover check (links taken down and brought back).
# Links as in the CS244 reproduction: WiFi 2 Mbit/s, 5 ms, 3 % loss; 3G 2 Mbit/s,
# 75 ms, 2 % loss. CS244 measured steady-state iperf throughput ("samples beginning 10
# seconds after start ... over a period of 30 seconds"); ours is the steady-state
# goodput of a download, `run_metrics.steady_goodput_mbit` (the second half of the
# transfer, see `pipeline/derived.py`). The buffer size is read from each run's
# meta.json (`run_config.buffer_bytes`). The papers' numbers (read off their Fig. 3/9,
# as the CS244 text states them) are the black diamonds.

# %% tags=["parameters"]
import os

DB = os.environ.get("MPTCP_LAB_DB", "../results/lab.duckdb")
FIGURES = os.environ.get("MPTCP_LAB_FIGURES", "../results/figures/cs244")

# %%
os.environ["MPTCP_LAB_DB"], os.environ["MPTCP_LAB_FIGURES"] = DB, FIGURES
os.environ["MPTCP_LAB_NOTEBOOK"] = "cs244"
import altair as alt
import polars as pl
from IPython.display import Markdown, display

from findings import verdict_lines
from labfig.db import left_out, mptcp_cc, usable
from labfig import checks_of, estimates, findings_of, query, render, shown

MP_CC = mptcp_cc("cs244", ("lia", "cubic", "reno"))  # the paper's MPTCP congestion control first; never pooled
USABLE = (usable("cs244") + f" AND (transport <> 'MPTCP' OR congestion_control = '{MP_CC}')")
display(Markdown(left_out("cs244")))
LABEL = {"SP-wifi": "TCP-WiFi", "SP-lte": "TCP-3G", "MP-2": "MPTCP"}
goodput = query(f"""
    SELECT mode, buffer_bytes, (buffer_bytes // 1000) || ' KB' AS buffer, avg(steady_goodput_mbit) AS value,
           count(*) AS n, 1.96 * coalesce(stddev_samp(steady_goodput_mbit) / sqrt(count(*)), 0) AS ci95
    FROM run_facts WHERE {USABLE} AND buffer_bytes IS NOT NULL AND steady_goodput_mbit IS NOT NULL
    GROUP BY ALL ORDER BY mode, buffer_bytes""")
goodput = goodput.with_columns(
    pl.col("mode").replace_strict(LABEL, default=pl.col("mode")).alias("configuration"),
    (pl.col("value") - pl.col("ci95")).alias("lo"), (pl.col("value") + pl.col("ci95")).alias("hi"))
BUFFERS = goodput.unique("buffer_bytes").sort("buffer_bytes")["buffer"].to_list()
goodput

# %%
# CS244's Fig. 3 as its text states it, and Raiciu et al.'s Fig. 9 as CS244 describes it.
PAPER = pl.DataFrame([
    ("TCP-WiFi", "50 KB", 2.0, "CS244 and Raiciu: TCP-WiFi ≈ 2 Mbit/s at all buffers"),
    ("TCP-WiFi", "500 KB", 2.0, "CS244 and Raiciu: TCP-WiFi ≈ 2 Mbit/s at all buffers"),
    ("TCP-3G", "50 KB", 0.5, "CS244: TCP-3G never much above 0.5 Mbit/s"),
    ("TCP-3G", "500 KB", 0.5, "CS244: TCP-3G never much above 0.5 Mbit/s"),
    ("TCP-3G", "50 KB", 1.2, "Raiciu: ≈ 1.2 Mbit/s at the smallest buffer"),
    ("TCP-3G", "500 KB", 2.0, "Raiciu: full bandwidth at larger buffers"),
    ("MPTCP", "50 KB", 2.0, "CS244 and Raiciu: MPTCP from 2 Mbit/s"),
    ("MPTCP", "500 KB", 2.5, "CS244: MPTCP up to 2.5 Mbit/s"),
    ("MPTCP", "500 KB", 3.25, "Raiciu: MPTCP up to 3.25 Mbit/s"),
], schema=["configuration", "buffer", "paper", "paper_note"], orient="row")
render(goodput, lambda d: estimates(d, x="buffer", x_title="receive/send buffer size", color="configuration",
                                    y_title="steady-state goodput (Mbit/s)", x_sort=BUFFERS,
                                    color_sort=list(LABEL.values()),
                                    paper=PAPER.filter(pl.col("buffer").is_in(BUFFERS)), width=420),
       "goodput_vs_buffer", "Goodput vs buffer size (Raiciu Fig. 9 / CS244 Fig. 3)",
       caption="Mean steady-state goodput with a 95 % CI (1.96 s.e.) per buffer size; black: the papers' values.",
       paper_ref="Raiciu et al. NSDI'12 Fig. 9; CS244 reproduction Fig. 3")

# %% [markdown]
# ## Our numbers for the claims
# MPTCP ÷ the better TCP per buffer, MPTCP's growth from the smallest to the largest
# buffer, and each TCP's mean goodput per buffer.

# %%
wide = goodput.pivot(on="configuration", index=["buffer_bytes", "buffer"], values="value").sort("buffer_bytes")
for r in wide.iter_rows(named=True):
    b = f"{r['buffer_bytes'] // 1000} KB"
    if all(r.get(k) is not None for k in LABEL.values()):
        shown("cs244-mptcp-beats-tcp", b, r["MPTCP"] / max(r["TCP-WiFi"], r["TCP-3G"]))
    if r.get("TCP-3G") is not None:
        shown("cs244-3g-low", b, r["TCP-3G"])
    if r.get("TCP-WiFi") is not None:
        shown("cs244-wifi-full", b, r["TCP-WiFi"])
mp = wide.filter(pl.col("MPTCP").is_not_null()) if "MPTCP" in wide.columns else wide.clear()
if mp.height >= 2:
    shown("cs244-mptcp-grows-with-buffer", f"{mp['buffer_bytes'][-1] // 1000} KB vs {mp['buffer_bytes'][0] // 1000} KB",
          mp["MPTCP"][-1] / mp["MPTCP"][0])
wide

# %% [markdown]
# ## Handover (CS244 Fig. 2; Raiciu et al.'s video)
# MPTCP download while WiFi, then 3G, is taken down and brought back up (scenario
# `handover`). Packets delivered to the client per second and path (client trace);
# the grey bands are the outages. CS244: "the transition to and from different links
# would work properly".

# %%
timeline = query(f"""
    WITH h AS (SELECT run_id FROM run_facts WHERE {usable('cs244', outages=True)} AND has_outages
               AND congestion_control = '{MP_CC}' ORDER BY run_id LIMIT 1),
    t0 AS (SELECT c.run_id, c.start_s FROM dl_connections c JOIN main_connections USING (run_id, trace, vantage, conn_id)
           WHERE c.vantage = 'client' AND c.run_id IN (SELECT run_id FROM h))
    SELECT o.path, floor(o.arrival_s - t0.start_s) AS second, count(*) AS packets
    FROM dl_ofo_samples o JOIN t0 USING (run_id) GROUP BY ALL ORDER BY ALL""")
outages = query(f"""SELECT path, down_s, up_s FROM outage_delivery
                    WHERE run_id = (SELECT min(run_id) FROM run_facts WHERE {usable('cs244', outages=True)} AND has_outages
                                    AND congestion_control = '{MP_CC}')""")


def handover_chart(d):
    lines = alt.Chart(d).mark_line(interpolate="step-after").encode(
        x=alt.X("second:Q", title="time since the first SYN (s)"),
        y=alt.Y("packets:Q", title="data packets delivered per second"),
        color=alt.Color("path:N", title="path"))
    bands = alt.Chart(outages).mark_rect(opacity=0.15, color="grey").encode(x="down_s:Q", x2="up_s:Q")
    return alt.layer(bands, lines).properties(width=420, height=220)


render(timeline, handover_chart, "handover", "Handover: delivery per path while links go down and up (CS244 Fig. 2)",
       caption="Packets delivered to the client per second and path in one handover run; grey: the outages.",
       paper_ref="CS244 Fig. 2; Raiciu et al. handover video",
       empty_msg="No handover run in the database (campaign cs244, scenario handover).")
handover = query(f"""
    SELECT 100.0 * sum(seconds_with_data) / nullif(sum(outage_seconds), 0) AS delivery_during_outages_pct,
           100.0 * sum(came_back) / nullif(sum(comeback_checkable), 0) AS links_back_within_5s_pct
    FROM outage_delivery WHERE run_id IN (SELECT run_id FROM run_facts WHERE {usable('cs244', outages=True)} AND has_outages
                                          AND congestion_control = '{MP_CC}')""")
if handover.height:
    shown("cs244-handover", "delivery during outages", handover["delivery_during_outages_pct"][0])
    shown("cs244-handover", "link back in use within 5 s", handover["links_back_within_5s_pct"][0])
handover

# %% [markdown]
# ## Findings: the paper's claims and ours
# Each claim is data in `findings/claims/cs244.py`, evaluated by the `findings` package
# (the code that writes `results/findings.csv`): our value with a seeded 95 % bootstrap
# CI over runs, the verdict from the CI against the paper's band.

# %%
FINDINGS = findings_of("cs244", DB)
display(Markdown(verdict_lines(FINDINGS)))
FINDINGS.select("id", "group", "paper_value", "our_value", "ci_low", "ci_high", "unit", "n_runs", "verdict")

# %% [markdown]
# ### Lab checks: the emulated links against CS244's configuration

# %%
display(Markdown(verdict_lines(checks_of("cs244", DB))))
