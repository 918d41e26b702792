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
# (`SP-wifi`) vs MPTCP over P1 + P2.  Against the RTT of P2 with P1 fixed
# (asymmetric, Fig. 4/5) or equal on both (symmetric, Fig. 3), and against the loss
# rate (Fig. 6–9).  RTT and loss per path come from each run's meta.json (the
# emulator configuration).  Bars: mean of per-run mean latency, 95 % CI.

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

from labfig import query, render, runs_of
from labfig.db import path_loss_sql, path_rtt_sql

RUNS = runs_of("ditg")
per_run = query(f"""
    WITH r AS (
        SELECT run_id, CASE WHEN mode LIKE 'MP%' THEN 'MPTCP' ELSE 'TCP' END AS transport,
               regexp_replace(workload, '^ditg-', '') AS app,
               {path_rtt_sql('wifi')} AS rtt1_ms, {path_rtt_sql('lte')} AS rtt2_ms,
               {path_loss_sql('wifi')} AS loss1, {path_loss_sql('lte')} AS loss2, mode
        FROM runs WHERE run_id IN ({RUNS}))
    SELECT r.*, avg(a.delay_ms) AS latency_ms, count(*) AS packets
    FROM r JOIN app_latency a USING (run_id) GROUP BY ALL""")
# A TCP run uses P1 only; it is the baseline of every MPTCP run with the same P1.
per_run = per_run.with_columns(
    pl.when(pl.col("transport") == "TCP").then(None).otherwise(pl.col("rtt2_ms")).alias("rtt2_ms"))
per_run.head()

# %%
def summarise(d, by):
    return (d.group_by(by).agg(pl.col("latency_ms").mean().alias("mean_ms"),
                               (1.96 * pl.col("latency_ms").std().fill_null(0) / pl.len().sqrt()).alias("ci95"),
                               pl.len().alias("runs"))
            .with_columns((pl.col("mean_ms") - pl.col("ci95")).alias("lo"),
                          (pl.col("mean_ms") + pl.col("ci95")).alias("hi")).sort(by))


def bars(d, x, x_title):
    base = alt.Chart(d).encode(x=alt.X(f"{x}:O", title=x_title),
                               xOffset=alt.XOffset("transport:N"),
                               color=alt.Color("transport:N", title="transport"))
    return (alt.layer(base.mark_bar().encode(y=alt.Y("mean_ms:Q", title="mean packet latency (ms)"),
                                             tooltip=["app", "transport", x, "runs",
                                                      alt.Tooltip("mean_ms:Q", format=".1f")]),
                      base.mark_errorbar().encode(y="lo:Q", y2="hi:Q", color=alt.value("black")))
            .properties(width=200, height=180)
            .facet(column=alt.Column("app:N", title=None)).resolve_scale(y="independent"))


lossless = per_run.filter((pl.col("loss1") == 0) & (pl.col("loss2") == 0))
# symmetric: MPTCP with rtt1 == rtt2 (TCP baseline at the same P1 RTT)
sym_mp = lossless.filter((pl.col("transport") == "MPTCP") & (pl.col("rtt1_ms") == pl.col("rtt2_ms")))
sym_tcp = lossless.filter(pl.col("transport") == "TCP")
sym = summarise(pl.concat([sym_mp, sym_tcp]).with_columns(pl.col("rtt1_ms").alias("rtt_ms")),
                ["app", "transport", "rtt_ms"])
render(sym, lambda d: bars(d, "rtt_ms", "RTT on both paths (ms)"), "latency_vs_rtt_symmetric",
       "Packet latency vs RTT, symmetric paths, no loss (Fig. 3)",
       caption="Mean D-ITG packet latency, TCP on P1 vs MPTCP on P1+P2 with equal RTTs.",
       paper_ref="MPTCP cloud latency study, Fig. 3")

# %%
p1 = per_run.filter(pl.col("transport") == "MPTCP")["rtt1_ms"].min() if per_run.height else None
asym_mp = lossless.filter((pl.col("transport") == "MPTCP") & (pl.col("rtt1_ms") == p1))
asym_tcp = lossless.filter((pl.col("transport") == "TCP") & (pl.col("rtt1_ms") == p1))
asym = summarise(pl.concat([asym_mp.with_columns(pl.col("rtt2_ms").alias("rtt_p2_ms")),
                            *[asym_tcp.with_columns(pl.lit(v).alias("rtt_p2_ms"))
                              for v in asym_mp["rtt2_ms"].unique().to_list()]]),
                 ["app", "transport", "rtt_p2_ms"]) if asym_mp.height else pl.DataFrame()
render(asym, lambda d: bars(d, "rtt_p2_ms", f"RTT on P2 (ms), P1 fixed at {p1:g} ms"),
       "latency_vs_rtt_asymmetric", "Packet latency vs RTT of P2, asymmetric paths, no loss (Fig. 4/5)",
       caption="Mean D-ITG packet latency; TCP uses P1 only and is repeated as the baseline for every P2 RTT.",
       paper_ref="MPTCP cloud latency study, Fig. 4, 5")

# %%
lossy = per_run.with_columns(
    pl.format("P1 {}% / P2 {}%", (100 * pl.col("loss1")).round(1), (100 * pl.col("loss2").fill_null(0)).round(1))
    .alias("loss_setting"),
    pl.when(pl.col("rtt1_ms") == pl.col("rtt2_ms")).then(pl.lit("symmetric"))
    .when(pl.col("transport") == "TCP").then(pl.lit("P1 only")).otherwise(pl.lit("asymmetric")).alias("paths"))
vs_loss = summarise(lossy.filter(pl.col("paths") != "asymmetric"), ["app", "transport", "loss_setting"])
render(vs_loss, lambda d: bars(d, "loss_setting", "packet loss rate on P1 / P2"),
       "latency_vs_loss", "Packet latency vs loss rate, equal RTTs (Fig. 6–8)",
       caption="Mean D-ITG packet latency per loss setting, TCP on P1 vs MPTCP with equal path RTTs.",
       paper_ref="MPTCP cloud latency study, Fig. 6, 7, 8")
vs_loss_asym = summarise(lossy.filter(pl.col("paths") == "asymmetric"), ["app", "transport", "loss_setting"])
render(vs_loss_asym, lambda d: bars(d, "loss_setting", "packet loss rate on P1 / P2 (P2 RTT longer)"),
       "latency_vs_loss_asymmetric", "Packet latency vs loss rate, longer RTT on P2 (Fig. 9)",
       caption="Mean D-ITG packet latency per loss setting, MPTCP with a longer RTT on P2.",
       paper_ref="MPTCP cloud latency study, Fig. 9")

# %% [markdown]
# ## Beside the paper (§IV–V, read from the text)

# %%
def rel(app, d):
    t = d.filter((pl.col("app") == app) & (pl.col("transport") == "TCP"))["mean_ms"].mean()
    m = d.filter((pl.col("app") == app) & (pl.col("transport") == "MPTCP"))["mean_ms"].mean()
    return None if t is None or m is None else 100 * (m - t) / t


PAPER = pl.DataFrame({
    "app": ["netflix", "maps", "docs"],
    "paper: MPTCP vs TCP, symmetric, no loss": ["−40 to −50 %", "−20 to −30 %", "no significant difference"],
    "paper: P2 RTT 400 ms vs P1 10 ms": ["> +200 %", "> +800 %", "≈ same (all on P1)"],
})
ours = pl.DataFrame({
    "app": ["netflix", "maps", "docs"],
    "ours: symmetric": [rel(a, sym) if sym.height else None for a in ["netflix", "maps", "docs"]],
    "ours: asymmetric (largest P2 RTT)": [
        rel(a, asym.filter(pl.col("rtt_p2_ms") == asym["rtt_p2_ms"].max())) if asym.height else None
        for a in ["netflix", "maps", "docs"]],
})
cmp = PAPER.join(ours, on="app")
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

FINDINGS = findings(connect(DB), paper="ditg")
display(Markdown(verdict_lines(FINDINGS)))
FINDINGS.select("claim", "source", "paper_value", "our_value", "unit", "tolerance", "verdict", "reason",
                "stable", "detail")
