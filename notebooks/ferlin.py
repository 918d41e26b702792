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
# 32 MiB bulk downloads over pairs of 2G/3G/WLAN-like paths. We reproduce default
# MPTCP's side of the paper (DRePaS is an out-of-tree scheduler we do not have): the
# completion-time CDF per scenario (Fig. 7), MPTCP's goodput relative to single-path
# TCP over the reference path (Fig. 4), and the relative subflow contribution (Fig. 9,
# Table I): bytes of the second-named technology's path ÷ bytes of the reference path
# (`run_metrics.contribution`: 3G/WLAN, 2G/WLAN, 2G/3G as Table I labels them). The
# paper's Table I (MPTCP row) is drawn as black diamonds and rules.

# %% tags=["parameters"]
import os

DB = os.environ.get("MPTCP_LAB_DB", "../results/lab.duckdb")
FIGURES = os.environ.get("MPTCP_LAB_FIGURES", "../results/figures/ferlin")

# %%
os.environ["MPTCP_LAB_DB"], os.environ["MPTCP_LAB_FIGURES"] = DB, FIGURES
os.environ["MPTCP_LAB_NOTEBOOK"] = "ferlin"
import polars as pl
from IPython.display import Markdown, display

from findings import verdict_lines
from labfig import ccdf_chart, estimates, findings_of, query, render, shown
from labfig.db import cdf_sql, left_out, mptcp_cc, usable

MP_CC = mptcp_cc("ferlin", ("olia", "reno"))  # the paper's MPTCP congestion control first; never pooled
USABLE = (usable("ferlin") + f" AND (transport <> 'MPTCP' OR congestion_control = '{MP_CC}')")
display(Markdown(left_out("ferlin")))
SCENARIOS = ["2G+WLAN", "3G+WLAN", "2G+3G"]
CFG = "CASE WHEN mode LIKE 'MP%' THEN 'MPTCP' ELSE 'TCP over the reference path' END"
ct = query(cdf_sql("download_time_s", f"SELECT scenario, {CFG} AS config, download_time_s FROM run_facts "
                                      f"WHERE {USABLE}", ["scenario", "config"]))
# Table I, MPTCP row: mean completion time (s)
PAPER_CT = pl.DataFrame([("2G+WLAN", 74.8), ("2G+3G", 50.2), ("3G+WLAN", 21.1)], schema=["scenario", "x"],
                        orient="row").with_columns(pl.lit(0.5).alias("paper"),
                                                   pl.format("Table I: MPTCP mean {} s", "x").alias("paper_note"))
render(ct, lambda d: ccdf_chart(d, x_title="completion time of 32 MiB (s)", color="config", facet="scenario",
                                color_title="configuration", log_x=False, log_y=False, y="cdf", y_title="CDF",
                                facet_sort=SCENARIOS, paper=PAPER_CT),
       "completion_time_cdf", "Completion time CDF (Ferlin Fig. 7)",
       caption="CDF over runs of the download completion time (client trace), per path pair; black: the paper's "
               "mean completion time of default MPTCP (Table I), placed at the median.",
       paper_ref="Ferlin et al. Fig. 7, Table I")

# %% [markdown]
# ## MPTCP relative to single-path TCP (Fig. 4)
# 100 × (MPTCP ÷ TCP over the reference path mean goodput − 1): the paper: "3G
# contributes on average by up to +30% to the WLAN path, while 2G hurts the WLAN
# performance up to -25%".

# %%
rel = query(f"""
    SELECT scenario, 100 * rel_change(avg(goodput_mbit) FILTER (WHERE mode = 'MP-2'),
                                      avg(goodput_mbit) FILTER (WHERE mode = 'SP-wifi')) AS value,
           count(*) FILTER (WHERE mode = 'MP-2') AS n
    FROM run_facts WHERE {USABLE} GROUP BY scenario ORDER BY scenario""").with_columns(
    pl.lit("MPTCP").alias("config"), pl.lit(None, pl.Float64).alias("lo"), pl.lit(None, pl.Float64).alias("hi"))
PAPER_REL = pl.DataFrame([("2G+WLAN", -25.0, -25.0, 0.0, "Fig. 4: 2G hurts WLAN, up to −25 %"),
                          ("3G+WLAN", 30.0, 0.0, 30.0, "Fig. 4: 3G adds up to +30 % to WLAN")],
                         schema=["scenario", "paper", "paper_lo", "paper_hi", "paper_note"], orient="row")
render(rel.filter(pl.col("value").is_not_null()),
       lambda d: estimates(d, x="scenario", x_title="path pair", y_title="MPTCP vs TCP goodput (%)", color="config",
                           x_sort=SCENARIOS, paper=PAPER_REL),
       "goodput_vs_tcp", "MPTCP goodput relative to TCP over the reference path (Ferlin Fig. 4)",
       caption="100 × (MPTCP ÷ TCP mean goodput − 1) per path pair; black: the paper's Fig. 4 ranges.",
       paper_ref="Ferlin et al. Fig. 4")
for r in rel.iter_rows(named=True):
    if r["value"] is not None:
        cid = "ferlin-3g-aggregation" if r["scenario"] == "3G+WLAN" else "ferlin-2g-hurts"
        shown(cid, r["scenario"], r["value"])
rel

# %% [markdown]
# ## Relative subflow contribution (Fig. 9, Table I)

# %%
contrib = query(f"""SELECT scenario, 'MPTCP' AS config, avg(contribution) AS value, count(*) AS n,
                           avg(contribution) - 1.96 * coalesce(stddev_samp(contribution) / sqrt(count(*)), 0) AS lo,
                           avg(contribution) + 1.96 * coalesce(stddev_samp(contribution) / sqrt(count(*)), 0) AS hi
                    FROM run_facts WHERE {USABLE} AND mode = 'MP-2' AND contribution IS NOT NULL
                    GROUP BY scenario ORDER BY scenario""")
PAPER_CONTRIB = pl.DataFrame([("2G+WLAN", 0.27, "Table I: 2G/WLAN 0.27"), ("2G+3G", 0.074, "Table I: 2G/3G 0.074"),
                              ("3G+WLAN", 0.857, "Table I: 3G/WLAN 0.857")],
                             schema=["scenario", "paper", "paper_note"], orient="row")
render(contrib, lambda d: estimates(d, x="scenario", x_title="path pair", color="config", x_sort=SCENARIOS,
                                    y_title="second path's bytes ÷ reference path's (log)", log_y=True,
                                    paper=PAPER_CONTRIB),
       "relative_contribution", "Relative subflow contribution, default MPTCP (Ferlin Fig. 9, Table I)",
       caption="Mean over connections (95 % CI) of 3G/WLAN, 2G/WLAN, 2G/3G bytes; black: Table I, MPTCP row.",
       paper_ref="Ferlin et al. Fig. 9, Table I")
c = dict(zip(contrib["scenario"], contrib["value"]))
if "3G+WLAN" in c and "2G+WLAN" in c:
    shown("ferlin-3g-contributes-more", "3G+WLAN − 2G+WLAN", c["3G+WLAN"] - c["2G+WLAN"])
if "2G+WLAN" in c and "2G+3G" in c:
    shown("ferlin-2g-contributes-least", "2G+WLAN − 2G+3G", c["2G+WLAN"] - c["2G+3G"])
contrib

# %% [markdown]
# ## Application delay (Fig. 8)
# The paper: "The application delay is mainly due to in-order delivery". Ours: the
# receiver's in-order-delivery (out-of-order) delay, connection mean per run.

# %%
delay = query(f"""SELECT scenario, avg(ofo_mean_ms) AS ofo_mean_ms, count(*) AS runs
                  FROM run_facts WHERE {USABLE} AND mode = 'MP-2' AND ofo_mean_ms IS NOT NULL
                  GROUP BY scenario ORDER BY scenario""")
d = dict(zip(delay["scenario"], delay["ofo_mean_ms"]))
if "2G+WLAN" in d and "2G+3G" in d:
    shown("ferlin-app-delay-2g-wlan", "2G+WLAN ÷ 2G+3G", d["2G+WLAN"] / d["2G+3G"])
delay

# %% [markdown]
# ## Findings: the paper's claims and ours
# Each claim is data in `findings/claims/ferlin.py`, evaluated by the `findings` package
# (the code that writes `results/findings.csv`): our value with a seeded 95 % bootstrap
# CI over runs, the verdict from the CI against the paper's band.

# %%
FINDINGS = findings_of("ferlin", DB)
display(Markdown(verdict_lines(FINDINGS)))
FINDINGS.select("id", "group", "paper_value", "our_value", "ci_low", "ci_high", "unit", "n_runs", "verdict")
