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
# out-of-order delay CCDF (Fig. 13) and the loss/RTT tables (Tables 2–6). Every
# run-level number comes from the derived layer (`pipeline/derived.py`: `run_facts`),
# whose definitions quote §3.3. Our paths are emulated (campaign `chen`: scenario =
# carrier, `att`, `verizon`, `sprint`); the paper's were AT&T/Verizon/Sprint and Comcast
# WiFi in the wild. The paper's published numbers are drawn beside ours as black
# diamonds labelled "paper".
#
# MPTCP runs are shown per congestion control (never pooled). The paper's default was
# coupled (LIA); until the campaign has `lia` runs, the claims use uncoupled reno (the
# paper's Fig. 4/9 baseline).

# %% tags=["parameters"]
import os

DB = os.environ.get("MPTCP_LAB_DB", "../results/lab.duckdb")
FIGURES = os.environ.get("MPTCP_LAB_FIGURES", "../results/figures/chen")

# %%
os.environ["MPTCP_LAB_DB"], os.environ["MPTCP_LAB_FIGURES"] = DB, FIGURES
os.environ["MPTCP_LAB_NOTEBOOK"] = "chen"
import polars as pl
from IPython.display import Markdown, display

from findings import verdict_lines
from labfig import boxplot, ccdf_chart, checks_of, estimates, findings_of, query, render, shown
from labfig.db import ccdf_sql, left_out, mean_se_sql, quantiles_sql
from labfig.db import usable as usable_runs

def usable(a: str = "") -> str:
    """SQL: this paper's runs the claims use (stalled runs and handover runs left out), table alias ``a``."""
    return usable_runs("chen", a)


def config(a: str = "") -> str:
    """SQL: the configuration label the paper uses: SP-<path>, or MP-n (<congestion control>)."""
    p = f"{a}." if a else ""
    return (f"CASE WHEN {p}mode LIKE 'MP%' THEN {p}mode || ' (' || coalesce({p}congestion_control, '?') || ')' "
            f"ELSE {p}mode END")


USABLE, CONFIG = usable(), config()
runs = query("SELECT scenario, mode, congestion_control, size_label, count(*) AS runs FROM run_facts "
             "WHERE paper = 'chen' GROUP BY ALL ORDER BY ALL")
display(Markdown(f"{left_out('chen')} Database: `{DB}`."))
runs

# %%
SIZE_ORDER = query("SELECT DISTINCT size_bytes, size_label FROM run_facts WHERE paper = 'chen' AND size_bytes > 0 "
                   "ORDER BY size_bytes")["size_label"].to_list()
CONFIG_ORDER = sorted(query(f"SELECT DISTINCT {CONFIG} AS config FROM run_facts WHERE paper = 'chen'")["config"]
                      .to_list())
# The MPTCP runs the claims use: coupled (lia) when the campaign has them, else reno (findings.claims.chen).
MP_CC = {m: (query(f"SELECT count(*) AS n FROM run_facts WHERE {USABLE} AND mode = '{m}' "
                   f"AND congestion_control = 'lia'")["n"][0] and "lia") or "reno" for m in ("MP-2", "MP-4")}
MP_CC

# %% [markdown]
# ## Download time (Fig. 2, 4, 9)
# From the client's first SYN to the last data packet it receives (client trace).
# Boxes span the quartiles, the tick is the median, whiskers are min and max (the
# paper's convention).

# %%
dl = query(quantiles_sql("download_time_s", f"SELECT {CONFIG} AS config, size_bytes, size_label AS size, "
                                            f"download_time_s FROM run_facts WHERE {USABLE}",
                         ["config", "size_bytes", "size"]))
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
# ### MPTCP against the best single path
# Median MP-2 download time ÷ the faster single path's median, per carrier and size
# (claims `chen-close-to-best`, `chen-small-wifi-best`, `chen-large-beats-best`).

# %%
med = query(f"""
    SELECT scenario, size_bytes, size_label,
           median(download_time_s) FILTER (WHERE mode = 'MP-2' AND congestion_control = '{MP_CC["MP-2"]}') AS mp2,
           median(download_time_s) FILTER (WHERE mode = 'MP-4' AND congestion_control = '{MP_CC["MP-4"]}') AS mp4,
           median(download_time_s) FILTER (WHERE mode = 'SP-wifi') AS sp_wifi,
           median(download_time_s) FILTER (WHERE mode = 'SP-lte') AS sp_cell
    FROM run_facts WHERE {USABLE} AND scenario IN ('att', 'verizon', 'sprint') AND size_bytes > 0
    GROUP BY ALL ORDER BY scenario, size_bytes""").with_columns(
    (pl.col("mp2") / pl.min_horizontal("sp_wifi", "sp_cell")).alias("mp2_vs_best_sp"),
    (pl.col("sp_wifi") / pl.min_horizontal("sp_cell", "mp2")).alias("sp_wifi_vs_best_other"),
    (pl.col("mp4") / pl.col("mp2")).alias("mp4_vs_mp2"))
for r in med.iter_rows(named=True):
    g = f"{r['scenario']} {r['size_label']}"
    shown("chen-close-to-best", g, r["mp2_vs_best_sp"])
    if r["size_bytes"] <= 64_000:
        shown("chen-small-wifi-best", g, r["sp_wifi_vs_best_other"])
    if r["scenario"] == "att" and r["size_bytes"] >= 8_000_000:
        shown("chen-large-beats-best", g, r["mp2_vs_best_sp"])
        shown("chen-mp4-beats-mp2", g, r["mp4_vs_mp2"])
med

# %% [markdown]
# ## Fraction of traffic on the cellular path (Fig. 3, 5, 10)
# Per MPTCP connection: payload bytes on the cellular subflows ÷ all payload bytes
# (`run_metrics.cell_share_pct`: the sender's trace). The paper: the cellular share
# "reaches 50 % ... when the file size is 4MB" (Fig. 5) and is "over 50 %" in all
# configurations at 8–32 MB (Fig. 10).

# %%
share = query(quantiles_sql("cell_share_pct", f"SELECT {CONFIG} AS config, size_bytes, size_label AS size, "
                                              f"cell_share_pct FROM run_facts WHERE {USABLE} AND scenario = 'att' "
                                              f"AND mode LIKE 'MP%'", ["config", "size_bytes", "size"]))
PAPER_SHARE = pl.DataFrame([(c, s, 50.0, "Fig. 5: reaches 50 % at 4 MB" if s == "4 MB" else "Fig. 10: over 50 %")
                            for c in CONFIG_ORDER if c.startswith("MP") for s in ("4 MB", "8 MB", "16 MB", "32 MB")
                            if s in SIZE_ORDER],
                           schema=["config", "size", "paper", "paper_note"], orient="row")
render(
    share,
    lambda d: boxplot(d, x="config", x_title="configuration", y_title="traffic on the cellular path (%)",
                      facet="size", facet_sort=SIZE_ORDER, paper=PAPER_SHARE),
    "cellular_share", "Fraction of traffic on the cellular path, AT&T (Chen Fig. 3/5/10)",
    caption="Per MPTCP connection, share of payload bytes carried by the cellular subflows; paper: 50 % at 4 MB "
            "(Fig. 5), over 50 % at 8–32 MB (Fig. 10).",
    paper_ref="Chen et al. IMC'13 Fig. 3, 5, 10",
)
for r in share.iter_rows(named=True):
    mode, cc = r["config"].split(" (")[0], r["config"].split("(")[-1].rstrip(")")
    if cc == MP_CC.get(mode):
        if mode == "MP-2" and r["size_bytes"] == 4_000_000:
            shown("chen-cell-share-4mb", f"MP-2 att {r['size']}", r["median"])
        if r["size_bytes"] >= 8_000_000:
            shown("chen-cell-share-large", f"{mode} att {r['size']}", r["median"])

# %% [markdown]
# ## Packet RTT distribution per path (Fig. 12)
# Karn-filtered RTT samples from the server trace of MPTCP connections of 512 KB and
# more (`dl_rtt_samples`), per path: WiFi, or the carrier of the cellular path. Paper
# marks (§5.1): "90% of packet RTTs are less than 50 ms" on WiFi (> 4 MB), Sprint has
# "more than 98% of the RTT samples larger than 100 ms".

# %%
rtt_source = f"""
    SELECT CASE WHEN s.path ILIKE 'wifi%' THEN 'WiFi' ELSE r.scenario END AS path, r.size_bytes,
           r.size_label AS size, s.rtt_ms
    FROM dl_rtt_samples s JOIN run_facts r USING (run_id)
    WHERE {usable('r')} AND r.transport = 'MPTCP' AND r.size_bytes >= 512000"""
rtt_ccdf = query(ccdf_sql("rtt_ms", rtt_source, ["path", "size_bytes", "size"]))
PAPER_RTT = pl.DataFrame([("WiFi", 50.0, 0.10, "§5.1: 90 % of WiFi RTTs < 50 ms (> 4 MB)"),
                          ("sprint", 100.0, 0.98, "§5.1: > 98 % of Sprint RTTs > 100 ms")],
                         schema=["path", "x", "paper", "paper_note"], orient="row")
render(
    rtt_ccdf,
    lambda d: ccdf_chart(d, x_title="packet RTT (ms, log)", color="size", color_title="file size",
                         facet="path", color_sort=SIZE_ORDER, paper=PAPER_RTT),
    "rtt_ccdf", "Packet RTT CCDF per path (Chen Fig. 12)",
    caption="CCDF of per-packet RTT (server trace, Karn's rule) per path, one line per file size; log-log.",
    paper_ref="Chen et al. IMC'13 Fig. 12",
)

# %% [markdown]
# ## Out-of-order delay (Fig. 13)
# For every data packet reaching the client: time until its data sequence number is
# in order at the MPTCP level (in-order packets count with delay 0). The paper: with
# AT&T and Verizon "75% of the packets are delivered in order"; with Sprint "75% of the
# packets are out-of-order" and "more than 20% ... larger than 150 ms" (the diamond).

# %%
ofo_source = f"""
    SELECT r.scenario AS carrier, {config('r')} AS config, r.size_bytes, r.size_label AS size, o.ofo_delay_ms
    FROM dl_ofo_samples o JOIN run_facts r USING (run_id)
    WHERE {usable('r')} AND r.mode = 'MP-2' AND r.size_bytes >= 4000000"""
ofo_ccdf = query(ccdf_sql("ofo_delay_ms", ofo_source, ["carrier", "config", "size_bytes", "size"]))
PAPER_OFO = pl.DataFrame([("sprint", 150.0, 0.20, "§5.2: > 20 % of packets wait > 150 ms (Sprint)")],
                         schema=["carrier", "x", "paper", "paper_note"], orient="row")
render(
    ofo_ccdf,
    lambda d: ccdf_chart(d, x_title="out-of-order delay (ms, log)", color="size", strokedash="config",
                         color_title="file size", facet="carrier", log_y=False, color_sort=SIZE_ORDER, paper=PAPER_OFO),
    "ofo_ccdf", "Out-of-order delay CCDF, MP-2, 4 MB and more (Chen Fig. 13)",
    caption="CCDF of MPTCP out-of-order delay at the client (zeros count in the denominator), per carrier.",
    paper_ref="Chen et al. IMC'13 Fig. 13",
)

# %%
in_order = query(f"""
    SELECT scenario, 100.0 * sum(ofo_in_order) / sum(ofo_packets) AS in_order_pct,
           100.0 * sum(ofo_over_150ms) / sum(ofo_packets) AS over_150ms_pct, count(*) AS runs
    FROM run_facts WHERE {USABLE} AND mode = 'MP-2' AND congestion_control = '{MP_CC["MP-2"]}'
      AND size_bytes >= 4000000 AND ofo_packets > 0
    GROUP BY scenario ORDER BY scenario""")
for r in in_order.iter_rows(named=True):
    if r["scenario"] in ("att", "verizon"):
        shown("chen-lte-in-order", r["scenario"], r["in_order_pct"])
    if r["scenario"] == "sprint":
        shown("chen-3g-out-of-order", "sprint", 100 - r["in_order_pct"])
        shown("chen-3g-ofo-over-150ms", "sprint", r["over_150ms_pct"])
in_order.with_columns(pl.Series("paper", ["75 % in order" if s != "sprint" else "25 % in order, > 20 % over 150 ms"
                                          for s in in_order["scenario"]], dtype=pl.Utf8))

# %% [markdown]
# ## Loss and RTT of single-path connections (Tables 2, 3, 5)
# Mean ± standard error over connections (runs) of the per-run loss rate (pooled over
# the path's subflows) and mean RTT (server trace), with the paper's numbers beside
# ours: WiFi (Comcast) and AT&T from Table 3 (≤ 4 MB) and Table 5 (> 4 MB), Verizon and
# Sprint from Table 2.

# %%
T3_T5 = [  # path, size, loss %, se, rtt ms, se   (Table 3: 8 KB–4 MB; Table 5: 8–32 MB)
    ("WiFi", "8 KB", 1.0, 0.5, 22.3, 0.2), ("WiFi", "64 KB", 1.6, 0.4, 38.7, 6.9),
    ("WiFi", "512 KB", 1.4, 0.2, 33.9, 2.7), ("WiFi", "4 MB", 2.1, 0.2, 23.9, 0.3),
    ("WiFi", "8 MB", 1.6, 0.3, 25.9, 0.5), ("WiFi", "16 MB", 1.9, 0.3, 24.9, 0.4),
    ("WiFi", "32 MB", 2.0, 0.3, 23.5, 0.3),
    ("att", "8 KB", 0.0, 0.0, 60.8, 0.5), ("att", "64 KB", 0.0, 0.0, 64.9, 0.5),
    ("att", "512 KB", 0.0, 0.0, 73.2, 2.1), ("att", "4 MB", 0.0, 0.0, 140.9, 1.1),
    ("att", "8 MB", 0.0, 0.0, 154.5, 2.7), ("att", "16 MB", 0.0, 0.0, 144.5, 4.1),
    ("att", "32 MB", 0.0, 0.0, 146.4, 4.3),
    # Table 2 (64 KB, 512 KB, 2 MB, 16 MB): Verizon, Sprint
    ("verizon", "64 KB", 0.0, 0.0, 92.41, 13.23), ("verizon", "512 KB", 0.0, 0.0, 204.65, 20.45),
    ("verizon", "2 MB", 0.31, 0.13, 422.56, 28.34), ("verizon", "16 MB", 1.75, 0.20, 624.66, 54.55),
    ("sprint", "64 KB", 0.37, 0.16, 381.29, 50.80), ("sprint", "512 KB", 8.76, 4.8, 972.4, 84.08),
    ("sprint", "2 MB", 3.93, 0.34, 1209.81, 178.68), ("sprint", "16 MB", 1.64, 0.01, 703.81, 81.96),
]
PAPER_SP = pl.DataFrame(T3_T5, schema=["path", "size", "loss", "loss_se", "rtt", "rtt_se"], orient="row")
sp_source = f"""
    SELECT CASE WHEN mode = 'SP-wifi' THEN 'WiFi' ELSE scenario END AS path, size_bytes, size_label AS size,
           CASE WHEN mode = 'SP-wifi' THEN loss_wifi_pct ELSE loss_cell_pct END AS loss_pct,
           CASE WHEN mode = 'SP-wifi' THEN rtt_wifi_mean_ms ELSE rtt_cell_mean_ms END AS rtt_ms
    FROM run_facts WHERE {USABLE} AND mode LIKE 'SP-%' AND scenario IN ('att', 'verizon', 'sprint')"""
sp = {m: query(mean_se_sql(m, sp_source, ["path", "size_bytes", "size"]))
      .with_columns((pl.col("mean") - pl.col("se")).alias("lo"), (pl.col("mean") + pl.col("se")).alias("hi"))
      .rename({"mean": "value"}) for m in ("loss_pct", "rtt_ms")}
for metric, col, unit in (("loss_pct", "loss", "loss rate (%)"), ("rtt_ms", "rtt", "RTT (ms, log)")):
    paper = PAPER_SP.select("path", "size", pl.col(col).alias("paper"),
                            (pl.col(col) - pl.col(f"{col}_se")).alias("paper_lo"),
                            (pl.col(col) + pl.col(f"{col}_se")).alias("paper_hi"),
                            pl.lit("Chen Tables 2, 3, 5 (mean ± s.e.)").alias("paper_note"))
    paper = paper.filter(pl.col("size").is_in(sp[metric]["size"].unique().to_list()))
    render(sp[metric],
           lambda d, unit=unit, paper=paper, metric=metric: estimates(
               d, x="size", x_title="file size", y_title=unit, color="path", color_title="path",
               x_sort=SIZE_ORDER, log_y=metric == "rtt_ms", paper=paper, width=420),
           f"single_path_{metric}", f"Single-path {unit.split(' (')[0]} per size (Chen Tables 2, 3, 5)",
           caption="Mean ± standard error over runs (server trace), ours (coloured) and the paper's (black).",
           paper_ref="Chen et al. IMC'13 Tables 2, 3, 5")
sp["loss_pct"]

# %% [markdown]
# ## MPTCP RTT and out-of-order delay (Table 6)
# RTT: mean over connections of each path's mean RTT (Table 6 "flow mean"); OFO: mean
# over connections of the connection-mean out-of-order delay, MP-2, 4–32 MB.

# %%
T6 = [  # what, path/carrier, size, mean, se
    ("RTT", "att", "4 MB", 110.0, 6.7), ("RTT", "att", "8 MB", 102.0, 6.4), ("RTT", "att", "16 MB", 114.1, 7.5),
    ("RTT", "att", "32 MB", 99.6, 6.5), ("RTT", "verizon", "4 MB", 228.0, 26.9),
    ("RTT", "verizon", "8 MB", 399.2, 46.1), ("RTT", "verizon", "16 MB", 360.4, 44.3),
    ("RTT", "verizon", "32 MB", 296.1, 31.7), ("RTT", "sprint", "4 MB", 202.9, 14.4),
    ("RTT", "sprint", "8 MB", 262.5, 24.6), ("RTT", "sprint", "16 MB", 480.4, 40.6),
    ("RTT", "sprint", "32 MB", 346.2, 28.1), ("RTT", "WiFi", "4 MB", 56.2, 6.7), ("RTT", "WiFi", "8 MB", 43.4, 6.4),
    ("RTT", "WiFi", "16 MB", 29.4, 7.5), ("RTT", "WiFi", "32 MB", 30.0, 6.5),
    ("OFO", "att", "4 MB", 30.9, 3.2), ("OFO", "att", "8 MB", 26.8, 4.0), ("OFO", "att", "16 MB", 16.7, 1.4),
    ("OFO", "att", "32 MB", 13.1, 1.6), ("OFO", "verizon", "4 MB", 36.7, 5.6), ("OFO", "verizon", "8 MB", 67.7, 11.7),
    ("OFO", "verizon", "16 MB", 61.3, 12.9), ("OFO", "verizon", "32 MB", 50.2, 8.9),
    ("OFO", "sprint", "4 MB", 91.3, 12.6), ("OFO", "sprint", "8 MB", 126.9, 29.9),
    ("OFO", "sprint", "16 MB", 301.7, 44.3), ("OFO", "sprint", "32 MB", 204.5, 29.8),
]
PAPER_T6 = pl.DataFrame(T6, schema=["metric", "path", "size", "paper", "se"], orient="row").with_columns(
    (pl.col("paper") - pl.col("se")).alias("paper_lo"), (pl.col("paper") + pl.col("se")).alias("paper_hi"),
    pl.lit("Chen Table 6 (mean ± s.e.)").alias("paper_note"))
t6_source = f"""
    SELECT 'RTT' AS metric, 'WiFi' AS path, size_bytes, size_label AS size, rtt_wifi_mean_ms AS x
    FROM run_facts WHERE {USABLE} AND mode = 'MP-2' AND congestion_control = '{MP_CC["MP-2"]}' AND size_bytes >= 4000000
    UNION ALL
    SELECT 'RTT', scenario, size_bytes, size_label, rtt_cell_mean_ms
    FROM run_facts WHERE {USABLE} AND mode = 'MP-2' AND congestion_control = '{MP_CC["MP-2"]}' AND size_bytes >= 4000000
    UNION ALL
    SELECT 'OFO', scenario, size_bytes, size_label, ofo_mean_ms
    FROM run_facts WHERE {USABLE} AND mode = 'MP-2' AND congestion_control = '{MP_CC["MP-2"]}' AND size_bytes >= 4000000"""
t6 = (query(mean_se_sql("x", t6_source, ["metric", "path", "size_bytes", "size"]))
      .with_columns((pl.col("mean") - pl.col("se")).alias("lo"), (pl.col("mean") + pl.col("se")).alias("hi"))
      .rename({"mean": "value"}))
render(t6, lambda d: estimates(d, x="size", x_title="file size", y_title="ms (log)", color="path",
                               color_title="path / carrier", facet="metric", log_y=True, x_sort=SIZE_ORDER,
                               paper=PAPER_T6.filter(pl.col("size").is_in(d["size"].unique().to_list()))),
       "table6_rtt_ofo", "MPTCP RTT per path and out-of-order delay per carrier (Chen Table 6)",
       caption="Mean ± standard error over MP-2 connections (4 MB and more), ours and the paper's Table 6.",
       paper_ref="Chen et al. IMC'13 Table 6")
ratio = query(f"""SELECT avg(ofo_mean_ms) FILTER (WHERE scenario = 'sprint')
                        / avg(ofo_mean_ms) FILTER (WHERE scenario = 'att') AS sprint_vs_att
                 FROM run_facts WHERE {USABLE} AND mode = 'MP-2' AND congestion_control = '{MP_CC["MP-2"]}'
                   AND size_bytes = 4000000""")
shown("chen-ofo-sprint-vs-att", "4 MB", ratio["sprint_vs_att"][0])
t6

# %% [markdown]
# ## Findings: the paper's claims and ours
# Each claim is data in `findings/claims/chen.py` (the paper's words and place, its
# band, the configuration), evaluated by the `findings` package, the same code that
# writes `results/findings.csv`: our value is the paper's statistic with a seeded 95 %
# bootstrap CI over runs, and the verdict follows from the CI against the band.

# %%
FINDINGS = findings_of("chen", DB)
display(Markdown(verdict_lines(FINDINGS)))
FINDINGS.select("id", "paper_value", "our_value", "ci_low", "ci_high", "unit", "n_runs", "verdict", "reason")

# %% [markdown]
# ### Lab checks: do our emulated links look like the paper's networks?
# Not findings: these compare what we configured (loss, queues) with the paper's
# measured path characteristics.

# %%
CHECKS = checks_of("chen", DB)
display(Markdown(verdict_lines(CHECKS)))
