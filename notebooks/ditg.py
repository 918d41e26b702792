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
# # MPTCP latency for cloud applications (D-ITG over Dummynet)
#
# Application-level packet latency (D-ITG: receive time − send time per packet) for
# Netflix-, Google-Maps- and Google-Docs-like traffic, standard TCP over path P1
# (`SP-wifi`) vs MPTCP over P1 + P2. Against the RTT with equal RTTs on both paths
# (Fig. 3), the RTT of P2 with P1 fixed at 10 ms (Fig. 4, 5: 100 and 10 Mbit/s) and the
# loss rate (Fig. 6–9). RTT, loss and rate per path come from each run's meta.json
# (`run_config`); a run's latency is its mean packet latency (`run_metrics.app_latency_ms`)
# and the paper's metric is "the mean of the average packet latency in all test runs".
# The TCP baseline of an MPTCP configuration is TCP with the same P1 (RTT, loss, rate).

# %% tags=["parameters"]
import os

DB = os.environ.get("MPTCP_LAB_DB", "../results/lab.duckdb")
FIGURES = os.environ.get("MPTCP_LAB_FIGURES", "../results/figures/ditg")

# %%
os.environ["MPTCP_LAB_DB"], os.environ["MPTCP_LAB_FIGURES"] = DB, FIGURES
os.environ["MPTCP_LAB_NOTEBOOK"] = "ditg"
import altair as alt
import polars as pl
from IPython.display import Markdown, display

from findings import verdict_lines
from labfig.db import left_out, mptcp_cc, usable
from labfig import estimates, findings_of, query, render, shown

MP_CC = mptcp_cc("ditg", ("lia", "cubic"))  # the paper's MPTCP congestion control first; never pooled
USABLE = (usable("ditg") + " AND app_latency_ms IS NOT NULL"
          f" AND (transport <> 'MPTCP' OR congestion_control = '{MP_CC}')")
display(Markdown(left_out("ditg")))
# Per MPTCP configuration (app, P1, P2) and its TCP baseline (same app and P1): mean of
# the per-run mean latencies, and the runs each mean is over.
cmp = query(f"""
    WITH mp AS (SELECT app, rtt_wifi_ms, loss_wifi, rate_wifi_mbit, rtt_cell_ms, loss_cell, symmetric_rtt,
                       avg(app_latency_ms) AS mptcp_ms, count(*) AS mptcp_runs,
                       1.96 * coalesce(stddev_samp(app_latency_ms) / sqrt(count(*)), 0) AS mptcp_ci
                FROM run_facts WHERE {USABLE} AND mode = 'MP-2' GROUP BY ALL),
    tcp AS (SELECT app, rtt_wifi_ms, loss_wifi, rate_wifi_mbit, avg(app_latency_ms) AS tcp_ms, count(*) AS tcp_runs,
                   1.96 * coalesce(stddev_samp(app_latency_ms) / sqrt(count(*)), 0) AS tcp_ci
            FROM run_facts WHERE {USABLE} AND mode = 'SP-wifi' GROUP BY ALL)
    SELECT mp.*, tcp.tcp_ms, tcp.tcp_runs, tcp.tcp_ci,
           100 * rel_change(mp.mptcp_ms, tcp.tcp_ms) AS change_pct
    FROM mp LEFT JOIN tcp USING (app, rtt_wifi_ms, loss_wifi, rate_wifi_mbit)
    ORDER BY app, rate_wifi_mbit DESC, rtt_wifi_ms, rtt_cell_ms, loss_wifi, loss_cell""")
cmp

# %%
def bars(d, x, x_title):
    long = pl.concat([
        d.select("app", x, pl.lit("TCP").alias("transport"), pl.col("tcp_ms").alias("value"),
                 (pl.col("tcp_ms") - pl.col("tcp_ci")).alias("lo"), (pl.col("tcp_ms") + pl.col("tcp_ci")).alias("hi"),
                 pl.col("tcp_runs").alias("n")),
        d.select("app", x, pl.lit("MPTCP").alias("transport"), pl.col("mptcp_ms").alias("value"),
                 (pl.col("mptcp_ms") - pl.col("mptcp_ci")).alias("lo"),
                 (pl.col("mptcp_ms") + pl.col("mptcp_ci")).alias("hi"), pl.col("mptcp_runs").alias("n"))])
    base = alt.Chart(long).encode(x=alt.X(f"{x}:O", title=x_title), xOffset=alt.XOffset("transport:N"),
                                  color=alt.Color("transport:N", title="transport"))
    return (alt.layer(base.mark_bar().encode(y=alt.Y("value:Q", title="mean packet latency (ms)"),
                                             tooltip=["app", "transport", x, "n", alt.Tooltip("value:Q", format=".1f")]),
                      base.mark_errorbar().encode(y="lo:Q", y2="hi:Q", color=alt.value("black")))
            .properties(width=200, height=180)
            .facet(column=alt.Column("app:N", title=None)).resolve_scale(y="independent"))


LOSS_FREE = (pl.col("loss_wifi") == 0) & (pl.col("loss_cell") == 0)
sym = cmp.filter(LOSS_FREE & pl.col("symmetric_rtt") & (pl.col("rate_wifi_mbit") == 100)
                 & pl.col("tcp_ms").is_not_null()).with_columns(pl.col("rtt_wifi_ms").alias("rtt_ms"))
render(sym, lambda d: bars(d, "rtt_ms", "RTT on both paths (ms)"), "latency_vs_rtt_symmetric",
       "Packet latency vs RTT, symmetric paths, no loss, 100 Mbit/s (Fig. 3)",
       caption="Mean D-ITG packet latency (95 % CI), TCP on P1 vs MPTCP on P1+P2 with equal RTTs.",
       paper_ref="MPTCP cloud latency study, Fig. 3")
asym = cmp.filter(LOSS_FREE & (pl.col("rtt_wifi_ms") == 10) & pl.col("tcp_ms").is_not_null()).with_columns(
    pl.format("{} Mbit/s, P2 {} ms", pl.col("rate_wifi_mbit").cast(pl.Int64), pl.col("rtt_cell_ms").cast(pl.Int64))
    .alias("p2"))
render(asym, lambda d: bars(d, "p2", "path rate and RTT of P2 (P1: 10 ms)"), "latency_vs_rtt_asymmetric",
       "Packet latency vs RTT of P2, P1 fixed at 10 ms, no loss (Fig. 4, 5)",
       caption="Mean D-ITG packet latency (95 % CI); TCP uses P1 only and is the baseline for every P2 RTT.",
       paper_ref="MPTCP cloud latency study, Fig. 4, 5")
lossy = cmp.filter(~LOSS_FREE & pl.col("tcp_ms").is_not_null()).with_columns(
    pl.format("RTT {}/{} ms, loss {}/{} %", pl.col("rtt_wifi_ms").cast(pl.Int64), pl.col("rtt_cell_ms").cast(pl.Int64),
              (100 * pl.col("loss_wifi")).round(1), (100 * pl.col("loss_cell")).round(1)).alias("setting"))
render(lossy, lambda d: bars(d, "setting", "P1/P2 RTT and loss"), "latency_vs_loss",
       "Packet latency with packet loss on P1, P2 or both (Fig. 6–9)",
       caption="Mean D-ITG packet latency (95 % CI); TCP on P1 with P1's loss.",
       paper_ref="MPTCP cloud latency study, Fig. 6, 7, 8, 9")

# %% [markdown]
# ## MPTCP against TCP, relative (the paper's percentages)
# 100 × (MPTCP ÷ TCP − 1) per configuration; black diamonds and bars: the paper's
# statements (§IV–V: Netflix below −40 % and Maps −20 to −30 % with equal RTTs; Docs no
# difference; +200 % (Netflix) and +800 % (Maps) at P2 = 400 ms; ≈ −25 % / −35 % with
# 4 % loss on both 40 ms paths).

# %%
def setting(r):
    if r["loss_wifi"] == 0 and r["loss_cell"] == 0 and r["symmetric_rtt"] and r["rate_wifi_mbit"] == 100:
        return f"equal RTT {r['rtt_wifi_ms']:g} ms"
    if r["loss_wifi"] == 0 and r["loss_cell"] == 0 and r["rtt_wifi_ms"] == 10:
        return f"P2 {r['rtt_cell_ms']:g} ms ({r['rate_wifi_mbit']:g} Mbit/s)"
    return f"{r['rtt_wifi_ms']:g}/{r['rtt_cell_ms']:g} ms, loss {100 * r['loss_wifi']:g}/{100 * r['loss_cell']:g} %"


rel = cmp.filter(pl.col("change_pct").is_not_null()).with_columns(
    pl.struct(pl.all()).map_elements(setting, return_dtype=pl.Utf8).alias("setting"),
    pl.col("change_pct").alias("value"), pl.lit(None, pl.Float64).alias("lo"), pl.lit(None, pl.Float64).alias("hi"),
    pl.col("mptcp_runs").alias("n"))
PAPER = pl.DataFrame([
    ("netflix", "equal RTT 10 ms", -40.0, None, None, "§IV: reduction > 40 % at every RTT"),
    ("netflix", "equal RTT 40 ms", -40.0, None, None, "§IV: reduction > 40 % at every RTT"),
    ("netflix", "equal RTT 100 ms", -40.0, None, None, "§IV: reduction > 40 % at every RTT"),
    ("maps", "equal RTT 10 ms", -25.0, -30.0, -20.0, "§IV: reduction 20–30 %"),
    ("maps", "equal RTT 40 ms", -25.0, -30.0, -20.0, "§IV: reduction 20–30 %"),
    ("maps", "equal RTT 100 ms", -25.0, -30.0, -20.0, "§IV: reduction 20–30 %"),
    ("docs", "equal RTT 10 ms", 0.0, None, None, "§IV: no significant difference"),
    ("docs", "equal RTT 40 ms", 0.0, None, None, "§IV: no significant difference"),
    ("netflix", "P2 40 ms (100 Mbit/s)", 0.0, None, None, "§IV: on par with TCP"),
    ("maps", "P2 40 ms (100 Mbit/s)", 0.0, None, None, "§IV: roughly the same as TCP"),
    ("netflix", "P2 400 ms (100 Mbit/s)", 200.0, None, None, "§IV: increase of more than 200 %"),
    ("maps", "P2 400 ms (100 Mbit/s)", 800.0, None, None, "§IV: increase of more than 800 %"),
    ("netflix", "40/40 ms, loss 4/4 %", -25.0, None, None, "§V: reduction around 25 %"),
    ("maps", "40/40 ms, loss 4/4 %", -35.0, None, None, "§V: reduction close to 35 %"),
], schema=["app", "setting", "paper", "paper_lo", "paper_hi", "paper_note"], orient="row")
render(rel, lambda d: estimates(d, x="setting", x_title="configuration", y_title="MPTCP vs TCP latency (%)",
                                color="app", color_title="application", facet="app", width=260,
                                paper=PAPER.filter(pl.col("setting").is_in(d["setting"].unique().to_list()))),
       "relative_change", "MPTCP vs TCP latency, relative, with the paper's statements (§IV, §V)",
       caption="100 × (MPTCP ÷ TCP mean latency − 1) per configuration; black: the paper's numbers.",
       paper_ref="MPTCP cloud latency study, §IV–V")

# %%
for r in rel.iter_rows(named=True):
    app, s = r["app"], r["setting"]
    if s.startswith("equal RTT"):
        cid = {"netflix": "ditg-netflix-symmetric", "maps": "ditg-maps-symmetric", "docs": "ditg-docs-symmetric"}[app]
        shown(cid, f"RTT {r['rtt_wifi_ms']:g} ms", -r["change_pct"] if app != "docs" else r["change_pct"])
    elif s == "P2 400 ms (100 Mbit/s)" and app in ("netflix", "maps"):
        shown(f"ditg-asymmetric-{app}", f"{app}, P1 10 / P2 400 ms", r["change_pct"])
    elif s == "P2 40 ms (100 Mbit/s)" and app in ("netflix", "maps"):
        shown("ditg-asymmetric-40ms-on-par", f"{app}, P1 10 / P2 40 ms", r["change_pct"])
    elif s == "40/40 ms, loss 4/4 %" and app in ("netflix", "maps"):
        shown(f"ditg-lossy-both-{app}", "RTT 40 ms, 4 % loss on both", -r["change_pct"])
    elif app == "netflix" and r["loss_wifi"] == 0 and r["loss_cell"] > 0 and r["symmetric_rtt"]:
        shown("ditg-lossy-p2-netflix", f"RTT {r['rtt_wifi_ms']:g} ms, P2 loss {100 * r['loss_cell']:g} %",
              -r["change_pct"])
slow = rel.filter(pl.col("setting").str.starts_with("P2 400 ms"))
for app in ("netflix", "maps"):
    inc = {row["rate_wifi_mbit"]: row["change_pct"] for row in slow.filter(pl.col("app") == app).iter_rows(named=True)}
    if 10.0 in inc and 100.0 in inc:
        shown("ditg-10mbit-smaller-effect", f"{app}, P1 10 / P2 400 ms", inc[10.0] - inc[100.0])
rel.select("app", "setting", "mptcp_ms", "tcp_ms", "change_pct", "mptcp_runs", "tcp_runs")

# %% [markdown]
# ## Findings: the paper's claims and ours
# Each claim is data in `findings/claims/ditg.py`, evaluated by the `findings` package
# (the code that writes `results/findings.csv`): our value with a seeded 95 % bootstrap
# CI over runs, the verdict from the CI against the paper's band.

# %%
FINDINGS = findings_of("ditg", DB)
display(Markdown(verdict_lines(FINDINGS)))
FINDINGS.select("id", "group", "paper_value", "our_value", "ci_low", "ci_high", "unit", "n_runs", "verdict")
