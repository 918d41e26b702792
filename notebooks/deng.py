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
# How the choice of network for the **primary subflow** changes MPTCP throughput:
# throughput over time per subflow for each primary-path choice (Fig. 9/10), and the
# CDF of the relative throughput difference |MPTCP_LTE − MPTCP_WiFi| / MPTCP_WiFi per
# flow size (Fig. 8; 10 KB, 100 KB, 1 MB).  Throughput of a run = flow size ÷
# download time (client trace); runs are paired by scenario, size, congestion control
# and repetition.

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

from labfig import query, render, runs_of
from labfig.db import SIZE_LABEL_SQL, cdf_sql

RUNS = runs_of("deng")
query(f"SELECT scenario, mode, primary_path, congestion_control, count(*) AS runs FROM runs "
      f"WHERE run_id IN ({RUNS}) GROUP BY ALL ORDER BY ALL")

# %% [markdown]
# ## Throughput over time per subflow (Fig. 9, 10)
# Average throughput from the first SYN to time *t* (the paper's definition), per
# subflow and for the whole connection, from the client trace: each data packet's
# arrival (`ofo_samples`, one row per packet) weighted by its subflow's mean payload
# per packet.  One panel per primary-path choice; the largest flow of each scenario,
# first repetition.

# %%
timeline = query(f"""
    WITH pick AS (
        SELECT run_id, scenario, primary_path,
               row_number() OVER (PARTITION BY scenario, primary_path ORDER BY size_bytes DESC,
                                  congestion_control, repetition, run_id) AS k
        FROM runs WHERE mode LIKE 'MP%' AND run_id IN ({RUNS})),
    runs1 AS (SELECT * FROM pick WHERE k = 1),
    conn AS (SELECT run_id, min(start_s) AS t0 FROM connections WHERE vantage = 'client' AND direction = 'down' GROUP BY run_id),
    per_pkt AS (SELECT run_id, subflow_id, payload_bytes / greatest(data_packets, 1) AS bpp
                FROM subflows WHERE vantage = 'client' AND direction = 'down'),
    pk AS (
        SELECT r.scenario, 'primary: ' || r.primary_path AS primary_choice, o.path,
               o.arrival_s - c.t0 AS t, p.bpp
        FROM ofo_samples o JOIN runs1 r USING (run_id) JOIN conn c USING (run_id)
        JOIN per_pkt p ON p.run_id = o.run_id AND p.subflow_id = o.subflow_id
        WHERE o.direction = 'down'),
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
        .facet(column=alt.Column("primary_choice:N", title=None), row=alt.Row("scenario:N", title="scenario")))


render(timeline, timeline_chart, "throughput_over_time",
       "Throughput over time per subflow and primary path (Deng Fig. 9/10)",
       caption="Average throughput since the first SYN, per subflow and in total, for WiFi vs LTE as the primary subflow.",
       paper_ref="Deng et al. IMC'14 Fig. 9, 10")

# %% [markdown]
# ## Relative throughput difference by flow size (Fig. 8)

# %%
reldiff_src = f"""
    WITH t AS (
        SELECT r.scenario, r.size_bytes, r.congestion_control, r.repetition, r.primary_path,
               8 * r.size_bytes / c.download_time_s / 1e6 AS mbps
        FROM connections c JOIN runs r USING (run_id)
        WHERE c.vantage = 'client' AND c.direction = 'down' AND c.download_time_s > 0 AND r.mode LIKE 'MP%'
          AND r.size_bytes > 0 AND r.run_id IN ({RUNS}))
    SELECT {SIZE_LABEL_SQL.replace('size_bytes', 'l.size_bytes')} AS size, l.size_bytes,
           100 * abs(l.mbps - w.mbps) / w.mbps AS rel_diff_pct
    FROM t l JOIN t w ON l.scenario = w.scenario AND l.size_bytes = w.size_bytes
        AND l.congestion_control IS NOT DISTINCT FROM w.congestion_control AND l.repetition = w.repetition
    WHERE l.primary_path = 'lte' AND w.primary_path = 'wifi'"""
reldiff = query(cdf_sql("rel_diff_pct", reldiff_src, ["size", "size_bytes"]))
SIZE_ORDER = reldiff.unique("size_bytes").sort("size_bytes")["size"].to_list()
render(reldiff,
       lambda d: alt.Chart(d).mark_line(interpolate="step-after").encode(
           x=alt.X("x:Q", title="relative throughput difference |LTE−WiFi primary| / WiFi primary (%)"),
           y=alt.Y("cdf:Q", title="CDF"),
           color=alt.Color("size:N", title="flow size", sort=SIZE_ORDER)).properties(width=420, height=240),
       "relative_difference_cdf", "Relative difference, LTE vs WiFi primary (Deng Fig. 8)",
       caption="CDF over paired runs of |MPTCP_LTE − MPTCP_WiFi| / MPTCP_WiFi, per flow size.",
       paper_ref="Deng et al. IMC'14 Fig. 8")

# %% [markdown]
# ## Beside the paper (Fig. 8 caption: median relative difference)

# %%
medians = query(f"SELECT size, size_bytes, median(rel_diff_pct) AS ours_pct, count(*) AS pairs "
                f"FROM ({reldiff_src}) GROUP BY ALL ORDER BY size_bytes")
PAPER = pl.DataFrame({"size": ["10 KB", "100 KB", "1 MB"], "paper median (%)": [60.0, 49.0, 28.0]})
cmp = PAPER.join(medians.select("size", "ours_pct", "pairs"), on="size", how="left")
cmp

# %% [markdown]
# ## Findings: the paper's claims and ours
# Each claim is one computation in `labfig/findings.py`, the same definition that
# writes `results/findings.csv` (Snakemake rule `findings`): the paper's words and
# number, ours, the tolerance that decides the verdict (agree / disagree / no data),
# why we differ when we do, and whether the verdict is expected to hold run to run.

# %%
from labfig.db import connect
from labfig.findings import findings, verdict_lines

FINDINGS = findings(connect(DB), paper="deng")
display(Markdown(verdict_lines(FINDINGS)))
FINDINGS.select("claim", "source", "paper_value", "our_value", "unit", "tolerance", "verdict", "reason",
                "stable", "detail")
