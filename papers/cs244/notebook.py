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
# Throughput of TCP over WiFi, TCP over 3G and MPTCP over both against the socket buffer
# size, TCP over the 3G link against its delay (CS244 Fig. 4, Padhye's model), and the
# handover (WiFi taken down and brought back). Links as CS244 configured them: WiFi
# 2 Mbit/s, 5 ms, 3 % loss; 3G 2 Mbit/s, 75 ms, 2 % loss. Each run is a 40-s `iperf3 -R`
# download and its throughput is the paper's: "throughput samples beginning 10 seconds
# after start ... over a period of 30 seconds" (the client's bytes received per second,
# `run_delivery`). Every number of a claim below is the findings' own (`findings.csv`,
# `findings-groups.csv`); this notebook draws them and the runs behind them, and
# computes no claim itself. The paper's statements: `papers/cs244/inventory.yaml`.

# %% tags=["parameters"]
import os

DB = os.environ.get("MPTCP_LAB_DB", "../../results/lab.duckdb")  # `make lab` gives its kernels one
FIGURES = "../../results/figures/cs244"
FINDINGS = None  # the workflow's findings folder; None: the findings are computed from DB

# %%
from papers.lab import open_paper

open_paper("cs244", DB, FIGURES, FINDINGS)
import altair as alt
import polars as pl
from IPython.display import Markdown, display

from labfig import left_out, query, render, usable
from labfig.db import per_second_sql
from labfig.verdicts import checks_table, claims_figure, tables, verdict_table

display(Markdown(left_out("cs244")))

# %% [markdown]
# ## The paper's statements and ours
# Magnitude: our interval against the band of the paper's number (the interval shown is the
# one the verdict was decided with: 95 %, the Bonferroni level for *disagree*, 90 % for "no
# difference"; its level is in the `ci_level` column); direction: against
# the sign or order the paper states; *not comparable* when a lab check the claim rests on
# fails; *underpowered* when our interval is wider than the paper's effect.

# %%
display(Markdown(verdict_table("cs244")))

# %% [markdown]
# ## Throughput against the buffer size (CS244 Fig. 3)
# Dots: each run's 10-40 s throughput; bars: the claims' group estimates (mean over runs
# with its interval), from `cs244-wifi-full`, `cs244-3g-low` and `cs244-mptcp-range`;
# the paper's numbers as CS244's text states them (black).

# %%
LABEL = {"SP-wifi": "TCP over WiFi", "SP-lte": "TCP over 3G", "MP-2": "MPTCP (LIA)"}
CLAIM_OF = {"cs244-wifi-full": "TCP over WiFi", "cs244-3g-low": "TCP over 3G", "cs244-mptcp-range": "MPTCP (LIA)"}
runs = query(f"""
    SELECT r.run_id, r.mode, (r.buffer_bytes // 1000) || ' KB' AS buffer, r.buffer_bytes,
           sum(d.payload_bytes) FILTER (WHERE d.second >= 10 AND d.second < 40) * 8 / 30 / 1e6 AS mbit
    FROM run_facts r JOIN run_delivery d USING (run_id)
    WHERE {usable('cs244')} AND r.scenario LIKE 'buf%' AND (r.mode <> 'MP-2' OR r.congestion_control = 'lia')
    GROUP BY ALL ORDER BY r.buffer_bytes""").with_columns(
    configuration=pl.col("mode").replace_strict(LABEL, default=pl.col("mode")))
BUFFERS = runs.unique("buffer_bytes", maintain_order=True)["buffer"].to_list()
_, groups = tables("cs244")
est = (groups.filter(pl.col("id").is_in(list(CLAIM_OF)))
       .with_columns(configuration=pl.col("id").replace_strict(CLAIM_OF), buffer=pl.col("group")))
PAPER = pl.DataFrame([(2.5, "CS244: MPTCP up to 2.5 Mbit/s (largest buffers)"),
                      (2.0, "CS244: TCP over WiFi close to the 2 Mbit/s cap; MPTCP from 2 Mbit/s (smallest buffers)"),
                      (0.5, "CS244: TCP over 3G never much above 0.5 Mbit/s")], schema=["mbit", "note"], orient="row")


def sweep_chart(d):
    color = alt.Color("configuration:N", sort=list(LABEL.values()), title="configuration")
    x = alt.X("buffer:N", title="receive/send buffer", sort=BUFFERS, axis=alt.Axis(labelAngle=0))
    off = alt.XOffset("configuration:N", sort=list(LABEL.values()))
    y = alt.Y("mbit:Q", title="throughput 10-40 s after the start (Mbit/s)", scale=alt.Scale(domain=[0, 3]))
    dots = alt.Chart(d).mark_point(opacity=0.45, size=25).encode(
        x=x, xOffset=off, y=y, color=color, tooltip=["run_id", alt.Tooltip("mbit:Q", format=".3g")])
    bars = alt.Chart(est).mark_rule(strokeWidth=2).encode(
        x=x, xOffset=off, y=alt.Y("ci_low:Q", title="throughput 10-40 s after the start (Mbit/s)"), y2="ci_high:Q",
        color=color)
    means = alt.Chart(est).mark_point(filled=True, size=80, shape="square").encode(
        x=x, xOffset=off, y=alt.Y("value:Q", title="throughput 10-40 s after the start (Mbit/s)"), color=color,
        tooltip=["configuration:N", "buffer:N", alt.Tooltip("value:Q", format=".3g"),
                 alt.Tooltip("ci_low:Q", format=".3g"), alt.Tooltip("ci_high:Q", format=".3g"), "n:Q",
                 "magnitude_verdict:N"])
    paper = alt.Chart(PAPER).mark_rule(strokeDash=[5, 4], color="black").encode(y="mbit:Q")
    labels = alt.Chart(PAPER).mark_text(align="left", dx=4, dy=-7, fontSize=11).encode(
        y="mbit:Q", x=alt.value(0), text="note:N")
    return alt.layer(paper, labels, dots, bars, means).properties(width=560, height=320)


render(runs, sweep_chart, "throughput_vs_buffer", "Throughput vs buffer size (CS244 Fig. 3, Raiciu Fig. 9)",
       caption="Dots: runs; squares with bars: the claims' means and intervals; dashed: CS244's numbers.",
       paper_ref="CS244 Fig. 3; Raiciu et al. NSDI'12 Fig. 9",
       runs_by=["configuration", "buffer"])

# %% [markdown]
# ## The claims, group by group
# Each panel: every compared group's estimate and interval (colour: its magnitude
# verdict), the paper's band (shaded) and number (dashed).

# %%
claims_figure("cs244", "CS244", width=500)

# %% [markdown]
# ## Handover over two paths
# Throughput per path and second in the two-path handover runs (MPTCP, WiFi down from 14
# to 21 s after the emulator starts, ~0.3 s before the SYN): CS244 "the transition to and
# from different links would work properly".

# %%
timeline = query(per_second_sql(f"""
    SELECT r.run_id, d.second, CASE d.side WHEN 'wifi' THEN 'WiFi' ELSE '3G' END AS path,
           d.payload_bytes * 8 / 1e6 AS mbit
    FROM run_facts r JOIN run_delivery d USING (run_id)
    WHERE {usable('cs244', outages=True)} AND r.scenario = 'handover'"""))


def handover_chart(d):
    band = alt.Chart(pl.DataFrame({"a": [14], "b": [21], "what": ["WiFi down"]})).mark_rect(
        opacity=0.15, color="grey").encode(x="a:Q", x2="b:Q", tooltip=["what:N"])
    lines = alt.Chart(d).mark_line(interpolate="step-after", opacity=0.6).encode(
        x=alt.X("second:Q", title="time since the first SYN (s)"),
        y=alt.Y("mbit:Q", title="throughput (Mbit/s)"), color=alt.Color("path:N", title="path"),
        detail="run_id:N")
    return alt.layer(band, lines).properties(width=500, height=240)


render(timeline, handover_chart, "handover", "Handover over two paths: throughput while WiFi is down",
       caption="Each line one run and path, 0 in a second the path delivered nothing; grey: the WiFi outage.", paper_ref="CS244 Fig. 2",
       empty_msg="No handover run in the database (campaign cs244, scenario handover).")

# %% [markdown]
# ## Handover over three paths (CS244 Fig. 2, as CS244 ran it)
# Throughput per path and second in the three-path runs (MPTCP over Ethernet, WiFi and
# 3G; Ethernet down from 7 to 28 s, WiFi from 14 to 21 s after the emulators start, 0.4-0.8 s
# before the SYN). CS244: "initially when they are all up, Ethernet gets the highest
# throughput, followed by WiFi and 3G ... Both links shortly recover their initial
# throughput." The claims `cs244-handoff-eth-highest`, `cs244-handoff-recover` and
# `cs244-raiciu-video-*` read these runs.

# %%
PATH3 = {"eth": "Ethernet", "wifi": "WiFi", "lte": "3G"}
timeline3 = query(per_second_sql(f"""
    SELECT r.run_id, d.second, d.path, d.payload_bytes * 8 / 1e6 AS mbit
    FROM run_facts r JOIN run_delivery d USING (run_id)
    WHERE {usable('cs244', outages=True)} AND r.scenario = 'handover3'""")).with_columns(
    path=pl.col("path").replace_strict(PATH3, default=pl.col("path")))


def handover3_chart(d):
    down = pl.DataFrame({"a": [7, 14], "b": [28, 21], "what": ["Ethernet down", "WiFi down"]})
    band = alt.Chart(down).mark_rect(opacity=0.12, color="grey").encode(x="a:Q", x2="b:Q", tooltip=["what:N"])
    lines = alt.Chart(d).mark_line(interpolate="step-after", opacity=0.6).encode(
        x=alt.X("second:Q", title="time since the first SYN (s)"),
        y=alt.Y("mbit:Q", title="throughput (Mbit/s)"),
        color=alt.Color("path:N", title="path", sort=list(PATH3.values())), detail="run_id:N")
    return alt.layer(band, lines).properties(width=500, height=240)


render(timeline3, handover3_chart, "handover3",
       "Handover over Ethernet, WiFi and 3G: throughput per path (CS244 Fig. 2)",
       caption="Each line one run and path; grey: Ethernet down (7-28 s), darker where WiFi is down too (14-21 s).",
       paper_ref="CS244 Fig. 2",
       empty_msg="No three-path handover run in the database (campaign cs244, scenario handover3).")

# %% [markdown]
# ## Lab checks: the emulated links against CS244's configuration

# %%
display(Markdown(checks_table("cs244")))
