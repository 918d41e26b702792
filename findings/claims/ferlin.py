"""Ferlin, Dreibholz, Alay, "Multi-Path Transport over Heterogeneous Wireless Networks: Does
it really pay off?" (DRePaS) (shared/seeds/ferlin-drepas-heterogeneous.txt).

Our runs: campaign ``ferlin``: 32 MiB downloads over the pairs 3G+WLAN, 2G+WLAN, 2G+3G
(scenario names). The lab's path ``wifi`` carries the paper's reference path (WLAN;
3G in 2G+3G: "MPTCP opens the first subflow on WLAN for 3G+WLAN and 2G+WLAN, and
first on 3G for 2G+3G"), path ``lte`` the other one; single-path TCP runs over the
reference path (SP-wifi). Only default MPTCP's side of the paper: DRePaS is an
out-of-tree scheduler the lab does not have.
"""
from __future__ import annotations

import polars as pl


from ..claim import Above, Below, Between, Claim, Point
from ..measure import Facts, Measure, join_notes, values
from ..stats import mean
from ._common import group, keep, one_mptcp_cc, sel

P = "ferlin"
CONFIG = ("paper: Linux MPTCP v0.88.8 with OLIA, TCP Reno, Android WLAN buffers (1 MiB send, 2 MiB receive, "
          "auto-tuning), a live UMTS network and a busy public WLAN in Oslo, ~50 downloads of 32 MiB per "
          "scenario over 4 weeks; ours: campaign ferlin, synthetic delivery traces for the varying rates "
          "(profiles.yaml ferlin-*), upstream MPTCP with the lab's BPF OLIA (reno runs only when no olia run "
          "exists; never pooled)")
EMULATED = ("our 2G/3G/WLAN paths are synthetic delivery traces and drop-tail queues sized after the paper's "
            "RTTs and Table I, not the live networks")
DREPAS = ("DRePaS is the paper's own scheduler for the out-of-tree v0.88 kernel; upstream Linux has no "
          "implementation of it, so the comparisons against DRePaS cannot be made here")


def _runs(f: Facts) -> tuple[pl.DataFrame, str]:
    r, note = f.of(P)
    r, used = one_mptcp_cc(r, ("olia", "reno"))  # the paper's MPTCP: OLIA (§III)
    return r, join_notes(note, used)


def _vs_tcp(f: Facts, scenario: str) -> Measure:
    r, note = _runs(f)
    g = group(scenario, mp=values(sel(r, scenario=scenario, mode="MP-2"), "goodput_mbit"),
              tcp=values(sel(r, scenario=scenario, mode="SP-wifi"), "goodput_mbit"))
    return Measure(keep(g), lambda s: 100 * (mean(s["mp"]) / mean(s["tcp"]) - 1), note=note,
                   missing=f"needs ferlin {scenario} runs: MP-2 and TCP over the reference path (SP-wifi)")


def two_g_hurts(f: Facts) -> Measure:
    parts = [_vs_tcp(f, s) for s in ("2G+WLAN", "2G+3G")]
    return Measure([g for m in parts for g in m.groups], parts[0].statistic, note=parts[0].note,
                   missing="needs ferlin 2G+WLAN or 2G+3G runs: MP-2 and TCP over the reference path (SP-wifi)")


def _contribution_diff(f: Facts, a: str, b: str) -> Measure:
    r, note = _runs(f)
    mp = sel(r, mode="MP-2")
    g = group(f"{a} − {b}", a=values(sel(mp, scenario=a), "contribution"), b=values(sel(mp, scenario=b), "contribution"))
    return Measure(keep(g), lambda s: mean(s["a"]) - mean(s["b"]), note=note,
                   missing=f"needs ferlin MP-2 runs in {a} and {b}")


def app_delay(f: Facts) -> Measure:
    r, note = _runs(f)
    mp = sel(r, mode="MP-2")
    g = group("2G+WLAN ÷ 2G+3G", a=values(sel(mp, scenario="2G+WLAN"), "ofo_mean_ms"),
              b=values(sel(mp, scenario="2G+3G"), "ofo_mean_ms"))
    return Measure(keep(g), lambda s: mean(s["a"]) / mean(s["b"]), note=note,
                   missing="needs ferlin MP-2 runs in 2G+WLAN and 2G+3G with out-of-order samples")


CLAIMS = [
    Claim("ferlin-2g-hurts", P,
          "For example, in the 2G+WLAN and 2G+3G scenarios, we observed that the 2G path actually hurts the "
          "overall performance whereas there was a positive aggregation benefit in the 3G+WLAN case.",
          "§IV, Fig. 4", paper_band=Below(0),
          paper_value="MPTCP below single-path TCP over the better path with 2G (Fig. 4: 2G hurts WLAN up to −25 %)",
          statistic="100 × (MPTCP ÷ TCP-over-the-reference-path mean goodput − 1), per 2G scenario", unit="%",
          config=CONFIG, measure=two_g_hurts,
          mismatch=f"{EMULATED}; upstream MPTCP has no opportunistic retransmission and penalisation as v0.88 had"),
    Claim("ferlin-3g-aggregation", P,
          "It can be observed that 3G contributes on average by up ... to +30% to the WLAN path, while 2G hurts "
          "the WLAN performance up to -25%.", "§IV, Fig. 4",
          paper_band=Between(0, 30, "'up to +30 %': a gain, of at most 30 %"),
          paper_value="MPTCP over 3G+WLAN up to +30 % above TCP over WLAN",
          statistic="100 × (MPTCP ÷ TCP-over-WLAN mean goodput − 1), 3G+WLAN", unit="%", config=CONFIG,
          measure=lambda f: _vs_tcp(f, "3G+WLAN"),
          mismatch=f"{EMULATED}: our 3G trace averages more than our WLAN trace (sized from Table I), so adding "
                   "3G can more than double WLAN's goodput"),
    Claim("ferlin-3g-contributes-more", P,
          "TABLE I MEAN RELATIVE PATH CONTRIBUTION AND COMPLETION TIME ... MPTCP 0.27 [2G/WLAN] 0.074 [2G/3G] "
          "0.857 [3G/WLAN]", "§VI-C, Fig. 9, Table I", paper_band=Point(0.587),
          paper_value="3G/WLAN 0.857 − 2G/WLAN 0.27 = 0.587 (MPTCP row)",
          statistic="mean 3G ÷ WLAN bytes (3G+WLAN) minus mean 2G ÷ WLAN bytes (2G+WLAN), MP-2", unit="",
          config=CONFIG, measure=lambda f: _contribution_diff(f, "3G+WLAN", "2G+WLAN"), band=Above(0),
          band_reason="Table I gives means without spread from a live network; the claim is the ordering "
                      "(3G contributes more to WLAN than 2G does)",
          mismatch=EMULATED),
    Claim("ferlin-2g-contributes-least", P,
          "Finally, 9(c) shows that the 2G path contributes little to 3G, confirming our observations in "
          "Figures 7(c) and 8(c), where the effect of HOL blocking was less visible.",
          "§VI-C, Fig. 9c, Table I", paper_band=Point(0.196),
          paper_value="2G/WLAN 0.27 − 2G/3G 0.074 = 0.196 (Table I, MPTCP row)",
          statistic="mean 2G ÷ WLAN bytes (2G+WLAN) minus mean 2G ÷ 3G bytes (2G+3G), MP-2", unit="",
          config=CONFIG, measure=lambda f: _contribution_diff(f, "2G+WLAN", "2G+3G"), band=Above(0),
          band_reason="Table I gives means without spread from a live network; the claim is the ordering "
                      "(2G contributes less beside 3G than beside WLAN)",
          mismatch=EMULATED),
    Claim("ferlin-app-delay-2g-wlan", P,
          "Here, it is visible that the interaction between a path with low RTTs (average of 50 ms in WLAN) and "
          "a path with high RTTs (average of 1.4 s due to bufferbloat in 2G) considerably affects application "
          "performance. The impact is less visible in 2G+3G, since 3G has also shown high RTTs (caused by "
          "bufferbloat). The application delay is mainly due to in-order delivery.",
          "§VI-B, Fig. 8", paper_band=Above(1.0),
          paper_value="larger application delay in 2G+WLAN than in 2G+3G (Fig. 8a vs 8c)",
          statistic="mean connection-mean in-order-delivery (out-of-order) delay, 2G+WLAN ÷ 2G+3G, MP-2",
          unit="×", config=CONFIG + "; application delay measured as the receiver's in-order-delivery delay "
                                    "(the paper: 'mainly due to in-order delivery'); no application send times",
          measure=app_delay, mismatch=EMULATED),
    Claim("ferlin-mptcp-vs-drepas", P,
          "One can see that in the scenarios including the 2G path, the DRePaS completion time was considerably "
          "lower compared to MPTCP.", "§VI-B, Fig. 7, 8; Table I", paper_band=Point(1.85),
          paper_value="2G+WLAN: MPTCP 74.8 s vs DRePaS 40.4 s (×1.85); application delay +0.8 s (Fig. 8a)",
          statistic="–", unit="×", config=CONFIG, not_reproducible=DREPAS),
]

CHECKS = []
