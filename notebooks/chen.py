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
# # Chen et al., IMC 2013 — MPTCP over WiFi and cellular
#
# *"A Measurement-based Study of MultiPath TCP Performance over Wireless Networks"*.
# We reproduce the download-time box plots (Fig. 2, 4, 9), the share of traffic the
# cellular path carries (Fig. 3, 5, 10), the per-path RTT CCDF (Fig. 12), the
# out-of-order delay CCDF (Fig. 13) and the loss/RTT tables (Tables 2–6), with the
# metric definitions of §3.3 (download time and OFO delay from the client trace, loss
# and RTT from the server trace).  Our paths are emulated (capture/ campaign `chen`),
# the paper's were AT&T/Verizon/Sprint and Comcast WiFi in the wild: we compare
# *shapes and orderings*, and list the paper's numbers beside ours.
#
# The notebook reads only the DuckDB file (`MPTCP_LAB_DB`).

# %% tags=["parameters"]
import os

DB = os.environ.get("MPTCP_LAB_DB", "../results/lab.duckdb")
FIGURES = os.environ.get("MPTCP_LAB_FIGURES", "../results/figures/chen")

# %%
os.environ["MPTCP_LAB_DB"], os.environ["MPTCP_LAB_FIGURES"] = DB, FIGURES
os.environ["MPTCP_LAB_NOTEBOOK"] = "chen"
import polars as pl
from IPython.display import Markdown, display

from labfig import query, render, runs_of
from labfig.charts import boxplot, ccdf_chart
from labfig.compare import fmt_mean_se
from labfig.db import SIZE_LABEL_SQL, ccdf_sql, mean_se_sql, quantiles_sql

RUNS = runs_of("chen")
runs = query(f"SELECT mode, congestion_control, size_bytes, count(*) AS runs FROM runs "
             f"WHERE run_id IN ({RUNS}) GROUP BY ALL ORDER BY ALL")
display(Markdown(f"**{runs['runs'].sum() if runs.height else 0} runs** of campaign `chen` in `{DB}`."))
runs

# %%
# The configuration label the paper uses: SP-<path>, or MP-n (<congestion control>).
CONFIG = ("CASE WHEN r.mode LIKE 'MP%' THEN r.mode || ' (' || coalesce(r.congestion_control, '?') || ')' "
          "ELSE r.mode END")
sizes = query(f"SELECT DISTINCT size_bytes, {SIZE_LABEL_SQL} AS size FROM runs "
              f"WHERE run_id IN ({RUNS}) AND size_bytes > 0 ORDER BY size_bytes")
SIZE_ORDER = sizes["size"].to_list()
CONFIG_ORDER = sorted(query(f"SELECT DISTINCT {CONFIG} AS config FROM runs r WHERE run_id IN ({RUNS})")["config"].to_list())

# %% [markdown]
# ## Download time (Fig. 2, 4, 9)
# From the client's first SYN to the last data packet it receives (client trace).
# Boxes span the quartiles, the tick is the median, whiskers are min and max (the
# paper's convention).

# %%
dl_source = f"""
    SELECT {CONFIG} AS config, r.size_bytes, {SIZE_LABEL_SQL.replace('size_bytes', 'r.size_bytes')} AS size,
           c.download_time_s
    FROM connections c JOIN runs r USING (run_id)
    WHERE c.vantage = 'client' AND c.direction = 'down' AND r.run_id IN ({RUNS})"""
dl = query(quantiles_sql("download_time_s", dl_source, ["config", "size_bytes", "size"]))
render(
    dl,
    lambda d: boxplot(d, x="config", x_title="configuration", y_title="download time (s, log)",
                      facet="size", log_y=True, facet_sort=SIZE_ORDER, x_sort=CONFIG_ORDER
                      ).resolve_scale(y="independent"),
    "download_time", "Download time per file size (Chen Fig. 2/4/9)",
    caption="Box plots of download time (client trace) per configuration, one panel per file size.",
    paper_ref="Chen et al. IMC'13 Fig. 2, 4, 9",
)

# %% [markdown]
# ## Fraction of traffic on the cellular path (Fig. 3, 5, 10)
# Per MPTCP connection: payload bytes on non-WiFi subflows ÷ all payload bytes
# (server trace, the sender's view; client trace when the server's is missing).

# %%
share_source = f"""
    WITH s AS (
        SELECT s.run_id, s.conn_id, s.vantage,
               sum(s.payload_bytes) FILTER (WHERE s.path NOT ILIKE 'wifi%') AS cell,
               sum(s.payload_bytes) AS total
        FROM subflows s WHERE s.direction = 'down' GROUP BY ALL),
    best AS (SELECT *, row_number() OVER (PARTITION BY run_id, conn_id
                                          ORDER BY vantage = 'server' DESC) AS k FROM s)
    SELECT {CONFIG} AS config, r.size_bytes, {SIZE_LABEL_SQL.replace('size_bytes', 'r.size_bytes')} AS size,
           100.0 * coalesce(cell, 0) / total AS cell_pct
    FROM best JOIN runs r USING (run_id)
    WHERE k = 1 AND total > 0 AND r.mode LIKE 'MP%' AND r.run_id IN ({RUNS})"""
share = query(quantiles_sql("cell_pct", share_source, ["config", "size_bytes", "size"]))
render(
    share,
    lambda d: boxplot(d, x="config", x_title="configuration",
                      y_title="traffic on cellular path (%)", facet="size", facet_sort=SIZE_ORDER),
    "cellular_share", "Fraction of traffic on the cellular path (Chen Fig. 3/5/10)",
    caption="Per MPTCP connection, share of payload bytes carried by the cellular (non-WiFi) subflows.",
    paper_ref="Chen et al. IMC'13 Fig. 3, 5, 10",
)

# %% [markdown]
# ## Packet RTT distribution per path (Fig. 12)
# Karn-filtered RTT samples from the server trace of MPTCP connections, grouped by
# path and file size (the paper shows sizes of 512 KB and above), log–log CCDF.

# %%
rtt_source = f"""
    SELECT s.path, r.size_bytes, {SIZE_LABEL_SQL.replace('size_bytes', 'r.size_bytes')} AS size, s.rtt_ms
    FROM rtt_samples s JOIN runs r USING (run_id)
    WHERE s.direction = 'down' AND r.mode LIKE 'MP%' AND r.size_bytes >= 524288 AND r.run_id IN ({RUNS})"""
rtt_ccdf = query(ccdf_sql("rtt_ms", rtt_source, ["path", "size_bytes", "size"]))
render(
    rtt_ccdf,
    lambda d: ccdf_chart(d, x_title="packet RTT (ms, log)", color="size", color_title="file size",
                         facet="path", color_sort=SIZE_ORDER),
    "rtt_ccdf", "Packet RTT CCDF per path (Chen Fig. 12)",
    caption="CCDF of per-packet RTT (server trace, Karn's rule) per path, one line per file size; log-log.",
    paper_ref="Chen et al. IMC'13 Fig. 12",
)

# %% [markdown]
# ## Out-of-order delay (Fig. 13)
# For every data packet reaching the client: time until its data sequence number is
# in order at the MPTCP level (in-order packets count with delay 0).  Time axis log.

# %%
ofo_source = f"""
    SELECT {CONFIG} AS config, r.size_bytes, {SIZE_LABEL_SQL.replace('size_bytes', 'r.size_bytes')} AS size,
           o.ofo_delay_ms
    FROM ofo_samples o JOIN runs r USING (run_id)
    WHERE o.direction = 'down' AND r.mode LIKE 'MP%' AND r.run_id IN ({RUNS})"""
ofo_ccdf = query(ccdf_sql("ofo_delay_ms", ofo_source, ["config", "size_bytes", "size"]))
render(
    ofo_ccdf,
    lambda d: ccdf_chart(d, x_title="out-of-order delay (ms, log)", color="size",
                         color_title="file size", facet="config", log_y=False, color_sort=SIZE_ORDER),
    "ofo_ccdf", "Out-of-order delay CCDF (Chen Fig. 13)",
    caption="CCDF of MPTCP out-of-order delay at the client (zeros count in the denominator).",
    paper_ref="Chen et al. IMC'13 Fig. 13",
)

# %% [markdown]
# ## Loss and RTT of single-path connections (Tables 2–5)
# Mean ± standard error over connections of the per-subflow loss rate and mean RTT
# (server trace).  The paper's numbers (typed in from Table 3, small flows, and
# Table 5, large flows; WiFi = Comcast, LTE = AT&T) are beside ours.

# %%
PAPER_SP = pl.DataFrame(
    [
        # path, size, loss %, loss se, rtt ms, rtt se   (Table 3: 8 KB–4 MB; Table 5: 8–32 MB)
        ("wifi", "8 KB", 1.0, 0.5, 22.3, 0.2), ("wifi", "64 KB", 1.6, 0.4, 38.7, 6.9),
        ("wifi", "512 KB", 1.4, 0.2, 33.9, 2.7), ("wifi", "4 MB", 2.1, 0.2, 23.9, 0.3),
        ("wifi", "8 MB", 1.6, 0.3, 25.9, 0.5), ("wifi", "16 MB", 1.9, 0.3, 24.9, 0.4),
        ("wifi", "32 MB", 2.0, 0.3, 23.5, 0.3),
        ("lte", "8 KB", 0.0, 0.0, 60.8, 0.5), ("lte", "64 KB", 0.0, 0.0, 64.9, 0.5),
        ("lte", "512 KB", 0.0, 0.0, 73.2, 2.1), ("lte", "4 MB", 0.0, 0.0, 140.9, 1.1),
        ("lte", "8 MB", 0.0, 0.0, 154.5, 2.7), ("lte", "16 MB", 0.0, 0.0, 144.5, 4.1),
        ("lte", "32 MB", 0.0, 0.0, 146.4, 4.3),
    ],
    schema=["path", "size", "paper_loss_pct", "paper_loss_se", "paper_rtt_ms", "paper_rtt_se"],
    orient="row",
)
sp_source = f"""
    SELECT s.path, r.size_bytes, {SIZE_LABEL_SQL.replace('size_bytes', 'r.size_bytes')} AS size,
           100 * s.loss_rate AS loss_pct, s.rtt_mean_ms
    FROM subflows s JOIN runs r USING (run_id)
    WHERE s.vantage = 'server' AND s.direction = 'down' AND r.mode LIKE 'SP-%' AND r.run_id IN ({RUNS})"""
loss = query(mean_se_sql("loss_pct", sp_source, ["path", "size_bytes", "size"]))
rtt = query(mean_se_sql("rtt_mean_ms", sp_source, ["path", "size_bytes", "size"]))
ours_sp = (
    loss.rename({"mean": "loss_pct", "se": "loss_se", "n": "n"})
    .join(rtt.rename({"mean": "rtt_ms", "se": "rtt_se"}).drop("n"), on=["path", "size_bytes", "size"], how="full",
          coalesce=True)
)
table_sp = PAPER_SP.join(ours_sp, on=["path", "size"], how="full", coalesce=True).select(
    "path", "size",
    pl.struct("paper_loss_pct", "paper_loss_se").map_elements(
        lambda r: fmt_mean_se(r["paper_loss_pct"], r["paper_loss_se"]), return_dtype=pl.Utf8).alias("paper loss %"),
    pl.struct("loss_pct", "loss_se").map_elements(
        lambda r: fmt_mean_se(r["loss_pct"], r["loss_se"], 2), return_dtype=pl.Utf8).alias("our loss %"),
    pl.struct("paper_rtt_ms", "paper_rtt_se").map_elements(
        lambda r: fmt_mean_se(r["paper_rtt_ms"], r["paper_rtt_se"]), return_dtype=pl.Utf8).alias("paper RTT ms"),
    pl.struct("rtt_ms", "rtt_se").map_elements(
        lambda r: fmt_mean_se(r["rtt_ms"], r["rtt_se"]), return_dtype=pl.Utf8).alias("our RTT ms"),
    pl.col("n").alias("our connections"),
)
table_sp

# %% [markdown]
# ## MPTCP RTT and out-of-order delay (Table 6)
# RTT: mean over subflows of their mean RTT (per path); OFO: mean over connections of
# the mean out-of-order delay.  Paper: AT&T/WiFi rows of Table 6.

# %%
PAPER_T6 = pl.DataFrame(
    [("lte", "RTT", "4 MB", 110.0, 6.7), ("lte", "RTT", "8 MB", 102.0, 6.4),
     ("lte", "RTT", "16 MB", 114.1, 7.5), ("lte", "RTT", "32 MB", 99.6, 6.5),
     ("wifi", "RTT", "4 MB", 56.2, 6.7), ("wifi", "RTT", "8 MB", 43.4, 6.4),
     ("wifi", "RTT", "16 MB", 29.4, 7.5), ("wifi", "RTT", "32 MB", 30.0, 6.5),
     ("connection", "OFO", "4 MB", 30.9, 3.2), ("connection", "OFO", "8 MB", 26.8, 4.0),
     ("connection", "OFO", "16 MB", 16.7, 1.4), ("connection", "OFO", "32 MB", 13.1, 1.6)],
    schema=["path", "metric", "size", "paper_mean", "paper_se"], orient="row",
)
mp_rtt = query(mean_se_sql("rtt_mean_ms", f"""
    SELECT s.path, 'RTT' AS metric, {SIZE_LABEL_SQL.replace('size_bytes', 'r.size_bytes')} AS size, s.rtt_mean_ms
    FROM subflows s JOIN runs r USING (run_id)
    WHERE s.vantage = 'server' AND s.direction = 'down' AND r.mode LIKE 'MP%' AND r.run_id IN ({RUNS})""", ["path", "metric", "size"]))
mp_ofo = query(mean_se_sql("ofo_ms", f"""
    SELECT 'connection' AS path, 'OFO' AS metric, {SIZE_LABEL_SQL.replace('size_bytes', 'r.size_bytes')} AS size,
           avg(o.ofo_delay_ms) AS ofo_ms
    FROM ofo_samples o JOIN runs r USING (run_id)
    WHERE o.direction = 'down' AND r.mode LIKE 'MP%' AND r.run_id IN ({RUNS}) GROUP BY o.run_id, o.conn_id, r.size_bytes""",
    ["path", "metric", "size"]))
ours_t6 = pl.concat([mp_rtt, mp_ofo])
table6 = PAPER_T6.join(ours_t6, on=["path", "metric", "size"], how="full", coalesce=True).select(
    "metric", "path", "size",
    pl.struct("paper_mean", "paper_se").map_elements(
        lambda r: fmt_mean_se(r["paper_mean"], r["paper_se"]), return_dtype=pl.Utf8).alias("paper (ms)"),
    pl.struct("mean", "se").map_elements(
        lambda r: fmt_mean_se(r["mean"], r["se"]), return_dtype=pl.Utf8).alias("ours (ms)"),
    pl.col("n").alias("our n"),
)
table6

# %% [markdown]
# ## Findings: the paper's claims and ours
# Each claim is one computation in `labfig/findings.py`, the same definition that
# writes `results/findings.csv` (Snakemake rule `findings`): the paper's words and
# number, ours, the tolerance that decides the verdict (agree / disagree / no data),
# why we differ when we do, and whether the verdict is expected to hold run to run.

# %%
from labfig.db import connect
from labfig.findings import findings, verdict_lines

FINDINGS = findings(connect(DB), paper="chen")
display(Markdown(verdict_lines(FINDINGS)))
FINDINGS.select("claim", "source", "paper_value", "our_value", "unit", "tolerance", "verdict", "reason",
                "stable", "detail")
