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
# Goodput of TCP over WiFi, TCP over 3G and MPTCP over both, against the socket
# buffer size (50–500 KB).  Links as in the CS244 reproduction: WiFi 2 Mbit/s, 5 ms,
# 3 % loss; 3G 2 Mbit/s, 75 ms, 2 % loss.  Goodput here = file bytes ÷ download time
# (client trace); error bars are 95 % confidence intervals of the mean over
# repetitions.  The buffer size is read from each run's meta.json (applied
# `net.ipv4.tcp_rmem`, or a `<n>k` scenario name).

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

from labfig import query, render, runs_of
from labfig.db import BUFFER_SQL

RUNS = runs_of("cs244")
LABEL = {"SP-wifi": "TCP-WiFi", "SP-lte": "TCP-3G", "MP-2": "MPTCP"}
goodput = query(f"""
    WITH g AS (
        SELECT r.mode, {BUFFER_SQL} / 1000 AS buffer_kb,
               8 * coalesce(nullif(r.size_bytes, 0), c.payload_bytes) / c.download_time_s / 1e6 AS mbps
        FROM connections c JOIN runs r USING (run_id)
        WHERE c.vantage = 'client' AND c.direction = 'down' AND c.download_time_s > 0 AND r.run_id IN ({RUNS}))
    SELECT mode, buffer_kb, avg(mbps) AS mbps, count(*) AS n,
           1.96 * coalesce(stddev_samp(mbps) / sqrt(count(*)), 0) AS ci95
    FROM g WHERE buffer_kb IS NOT NULL GROUP BY ALL ORDER BY mode, buffer_kb""")
goodput = goodput.with_columns(
    pl.col("mode").replace_strict(LABEL, default=pl.col("mode")).alias("configuration"),
    (pl.col("mbps") - pl.col("ci95")).alias("lo"), (pl.col("mbps") + pl.col("ci95")).alias("hi"))
goodput

# %%
def goodput_chart(d):
    base = alt.Chart(d).encode(
        x=alt.X("buffer_kb:O", title="receive/send buffer size (KB)"),
        xOffset=alt.XOffset("configuration:N", sort=list(LABEL.values())),
        color=alt.Color("configuration:N", title="configuration", sort=list(LABEL.values())))
    bars = base.mark_bar().encode(
        y=alt.Y("mbps:Q", title="goodput (Mbit/s)"),
        tooltip=["configuration", "buffer_kb", alt.Tooltip("mbps:Q", format=".2f"), "n"])
    err = base.mark_errorbar().encode(y="lo:Q", y2="hi:Q", color=alt.value("black"))
    return alt.layer(bars, err).properties(width=420, height=240)


render(goodput, goodput_chart, "goodput_vs_buffer",
       "Goodput vs buffer size (Raiciu Fig. 9 / CS244 Fig. 3)",
       caption="Mean goodput with 95 % CI per buffer size for TCP over WiFi, TCP over 3G and MPTCP over both.",
       paper_ref="Raiciu et al. NSDI'12 Fig. 9; CS244 reproduction Fig. 3")

# %% [markdown]
# ## Beside the paper
# Read off the figures (no tables in either source): Raiciu et al.: MPTCP 2–3.25
# Mbit/s rising with buffer size, TCP-WiFi ≈ 2 Mbit/s throughout, TCP-3G ≈ 1.2 Mbit/s
# at 50 KB up to ≈ 2 Mbit/s.  CS244: MPTCP 2–2.5 Mbit/s, TCP-3G never above ≈ 0.5 Mbit/s.

# %%
PAPER = pl.DataFrame({
    "configuration": ["TCP-WiFi", "TCP-3G", "MPTCP"],
    "Raiciu NSDI'12 (Mbit/s)": ["≈2 at all buffers", "≈1.2 → ≈2", "2 → 3.25"],
    "CS244 (Mbit/s)": ["≈2 at all buffers", "≤0.5", "2 → 2.5"],
})
ours = (goodput.group_by("configuration")
        .agg(pl.col("mbps").sort_by("buffer_kb").first().alias("smallest"),
             pl.col("mbps").sort_by("buffer_kb").last().alias("largest"))
        .with_columns(pl.format("{} → {}", pl.col("smallest").round(2), pl.col("largest").round(2)).alias("ours (Mbit/s)"))
        .select("configuration", "ours (Mbit/s)"))
PAPER.join(ours, on="configuration", how="left")

# %% [markdown]
# ## Findings: the paper's claims and ours
# Each claim is one computation in `labfig/findings.py`, the same definition that
# writes `results/findings.csv` (Snakemake rule `findings`): the paper's words and
# number, ours, the tolerance that decides the verdict (agree / disagree / no data),
# why we differ when we do, and whether the verdict is expected to hold run to run.

# %%
from labfig.db import connect
from labfig.findings import findings, verdict_lines

FINDINGS = findings(connect(DB), paper="cs244")
display(Markdown(verdict_lines(FINDINGS)))
FINDINGS.select("claim", "source", "paper_value", "our_value", "unit", "tolerance", "verdict", "reason",
                "stable", "detail")
