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
# # Ferlin et al. — multi-path over heterogeneous wireless (DRePaS)
#
# 32 MiB bulk downloads over pairs of 2G/3G/WLAN-like paths.  We reproduce default
# MPTCP's side of the paper (DRePaS is an out-of-tree scheduler we do not have):
# the completion-time CDF per scenario (Fig. 7) and the relative subflow
# contribution — bytes of the weaker subflow ÷ bytes of the best one, per connection
# (Fig. 9, Table I).  The scenario name says which technologies the two emulated
# paths stand for (capture/ names them `wifi` and `lte`).

# %% tags=["parameters"]
import os

DB = os.environ.get("MPTCP_LAB_DB", "../results/lab.duckdb")
FIGURES = os.environ.get("MPTCP_LAB_FIGURES", "../results/figures/ferlin")

# %%
os.environ["MPTCP_LAB_DB"], os.environ["MPTCP_LAB_FIGURES"] = DB, FIGURES
os.environ["MPTCP_LAB_NOTEBOOK"] = "ferlin"
import altair as alt
import polars as pl
from IPython.display import Markdown, display

from labfig import query, render, runs_of
from labfig.db import cdf_sql

RUNS = runs_of("ferlin")
CFG = "CASE WHEN r.mode LIKE 'MP%' THEN 'MPTCP' ELSE 'TCP ' || substr(r.mode, 4) END"
ct_src = f"""SELECT r.scenario, {CFG} AS config, c.download_time_s
             FROM connections c JOIN runs r USING (run_id)
             WHERE c.vantage = 'client' AND c.direction = 'down' AND r.run_id IN ({RUNS})"""
ct = query(cdf_sql("download_time_s", ct_src, ["scenario", "config"]))
render(ct, lambda d: alt.Chart(d).mark_line(interpolate="step-after").encode(
           x=alt.X("x:Q", title="completion time of 32 MiB (s)"), y=alt.Y("cdf:Q", title="CDF"),
           color=alt.Color("config:N", title="configuration"),
           tooltip=["scenario", "config", alt.Tooltip("x:Q", format=".1f"), alt.Tooltip("cdf:Q", format=".2f")])
       .properties(width=220, height=180).facet(column=alt.Column("scenario:N", title=None)),
       "completion_time_cdf", "Completion time CDF (Ferlin Fig. 7)",
       caption="CDF over runs of the download completion time (client trace), per path pair.",
       paper_ref="Ferlin et al. Fig. 7, Table I")

# %%
contrib_src = f"""
    WITH s AS (
        SELECT s.run_id, s.conn_id, s.vantage, s.path, sum(s.payload_bytes) AS bytes
        FROM subflows s WHERE s.direction = 'down' GROUP BY ALL),
    v AS (SELECT *, dense_rank() OVER (PARTITION BY run_id, conn_id ORDER BY vantage = 'server' DESC) AS k FROM s)
    SELECT r.scenario, r.run_id, min(bytes)::DOUBLE / nullif(max(bytes), 0) AS contribution
    FROM v JOIN runs r USING (run_id)
    WHERE k = 1 AND r.mode LIKE 'MP%' AND r.run_id IN ({RUNS})
    GROUP BY r.scenario, r.run_id, v.conn_id HAVING count(*) >= 2"""
contrib = query(f"""SELECT scenario, avg(contribution) AS mean, count(*) AS n,
                           1.96 * coalesce(stddev_samp(contribution) / sqrt(count(*)), 0) AS ci95
                    FROM ({contrib_src}) GROUP BY scenario ORDER BY scenario""")
contrib = contrib.with_columns((pl.col("mean") - pl.col("ci95")).clip(0).alias("lo"),
                               (pl.col("mean") + pl.col("ci95")).alias("hi"))
render(contrib, lambda d: alt.layer(
           alt.Chart(d).mark_bar().encode(x=alt.X("scenario:N", title="path pair"),
                                          y=alt.Y("mean:Q", title="weaker subflow's bytes ÷ best subflow's"),
                                          tooltip=["scenario", "n", alt.Tooltip("mean:Q", format=".3f")]),
           alt.Chart(d).mark_errorbar().encode(x="scenario:N", y="lo:Q", y2="hi:Q"))
       .properties(width=300, height=220),
       "relative_contribution", "Relative subflow contribution, default MPTCP (Ferlin Fig. 9)",
       caption="Mean over connections of the weaker subflow's payload relative to the best subflow's (95 % CI).",
       paper_ref="Ferlin et al. Fig. 9, Table I")

# %% [markdown]
# ## Beside the paper (Table I, default MPTCP row)

# %%
PAPER = pl.DataFrame({"scenario": ["2G+WLAN", "2G+3G", "3G+WLAN"],
                      "paper contribution": [0.27, 0.074, 0.857],
                      "paper completion (s)": [74.8, 50.2, 21.1]})
mean_ct = query(f"SELECT scenario, avg(download_time_s) AS ours_completion_s FROM ({ct_src}) "
                f"WHERE config = 'MPTCP' GROUP BY scenario")
cmp = (PAPER.join(contrib.select("scenario", pl.col("mean").alias("ours contribution")), on="scenario", how="left")
       .join(mean_ct, on="scenario", how="left"))
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

FINDINGS = findings(connect(DB), paper="ferlin")
display(Markdown(verdict_lines(FINDINGS)))
FINDINGS.select("claim", "source", "paper_value", "our_value", "unit", "tolerance", "verdict", "reason",
                "stable", "detail")
