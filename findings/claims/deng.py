"""Deng et al., "WiFi, LTE, or Both? Measuring Multi-Homed Wireless Internet Performance",
IMC 2014 (shared/seeds/deng-imc2014-wifi-lte-or-both.txt).

Our runs: campaign ``deng``: two emulated locations (``lte-better``: LTE faster;
``wifi-better``: WiFi faster, profiles.yaml deng-*), flow sizes 10 KB, 100 KB, 1 MB,
single-path TCP over each network, MPTCP (MP-2) with WiFi or LTE as the primary
subflow, decoupled congestion control = reno per subflow (footnote 5: "the decoupled
congestion control uses TCP Reno for each subflow"), coupled = lia. Throughput of a run
= flow size ÷ download time (``run_metrics.goodput_mbit``).
"""
from __future__ import annotations

import numpy as np
import polars as pl

from ..claim import Above, Below, Claim, Point
from ..measure import Facts, Measure, join_notes, values
from ..stats import median
from ._common import NEEDS_COUPLED, by, group, keep, sel

P = "deng"
KB10, KB100, MB1 = 10_000, 100_000, 1_000_000
CONFIG = ("paper: Linux MPTCP v0.88, Full-MPTCP mode, a laptop tethered to a WiFi and an LTE phone at 20 "
          "locations, 10 runs per configuration, decoupled (Reno per subflow) and coupled congestion control; "
          "ours: campaign deng, two emulated locations (LTE faster / WiFi faster), reno as decoupled, lia as "
          "coupled")
EMULATED = ("our two emulated locations have fixed rates and delays (profiles.yaml deng-*, read off the "
            "paper's figures) instead of 20 live locations with their own variability")


def mptcp_worse_short(f: Facts) -> Measure:
    r, note = f.of(P)
    groups = []
    for (scen, size, label), g in by(r.filter((pl.col("size_bytes") > 0) & (pl.col("size_bytes") <= KB100)),
                                     "scenario", "size_bytes", "size_label"):
        roles = {"sp_wifi": values(sel(g, mode="SP-wifi"), "goodput_mbit"),
                 "sp_lte": values(sel(g, mode="SP-lte"), "goodput_mbit")}
        for (prim, cc), m in by(sel(g, mode="MP-2"), "primary_path", "congestion_control"):
            roles[f"mp_{prim}_{cc}"] = values(m, "goodput_mbit")
        if len(roles) > 2:
            groups.append(group(f"{scen} {label}", **roles))

    def best_mptcp_over_best_tcp(s):
        mp = np.max([median(v) for k, v in s.items() if k.startswith("mp_")], axis=0)
        return mp / np.maximum(median(s["sp_wifi"]), median(s["sp_lte"]))
    return Measure(keep(*groups), best_mptcp_over_best_tcp,
                   missing="needs deng runs ≤ 100 KB: SP-wifi, SP-lte and MP-2", note=note)


def _pair_diff(df: pl.DataFrame, a: int, b: int, label: str):
    """Paired relative differences at size ``a`` and at size ``b`` (statistic: median a − median b)."""
    return group(label, a=values(sel(df, size_bytes=a), "rel_diff_pct"),
                 b=values(sel(df, size_bytes=b), "rel_diff_pct"))


def _median_a_minus_b(s):
    return median(s["a"]) - median(s["b"])


def primary_greatest_small(f: Facts) -> Measure:
    pp = f.primary_pairs.filter((pl.col("paper") == P) & ~pl.col("stalled"))
    used = sorted(pp["congestion_control"].drop_nulls().unique().to_list())
    pp = sel(pp, congestion_control="reno")  # §3.4: "we only run MPTCP using decoupled congestion control"
    return Measure(keep(_pair_diff(pp, KB10, MB1, "10 KB − 1 MB")), _median_a_minus_b,
                   missing="needs deng MP-2 reno runs with WiFi and with LTE as primary at 10 KB and 1 MB",
                   note=f"pairs of runs by scenario, size, repetition; decoupled (reno) only (of {', '.join(used)})"
                   if used else "")


def primary_faster_network(f: Facts) -> Measure:
    r, note = f.of(P)
    faster = {s: g["faster_path"].drop_nulls().first() for (s,), g in by(sel(r, mode="MP-2"), "scenario")}
    groups = []
    for (scen, size, label), g in by(sel(r, mode="MP-2", congestion_control="reno").filter(pl.col("size_bytes") > 0),
                                     "scenario", "size_bytes", "size_label"):
        fast = faster.get(scen)
        if fast is None:
            continue
        slow = "wifi" if fast == "lte" else "lte"
        groups.append(group(f"{scen} {label} ({fast} faster)", fast=values(sel(g, primary_path=fast), "goodput_mbit"),
                            slow=values(sel(g, primary_path=slow), "goodput_mbit")))
    return Measure(keep(*groups), lambda s: median(s["fast"]) / median(s["slow"]),
                   missing="needs deng MP-2 reno runs with each primary path in scenarios whose paths have "
                           "configured rates", note=join_notes(note, "decoupled (reno)"))


def cc_greatest_large(f: Facts) -> Measure:
    cp = f.cc_pairs.filter((pl.col("paper") == P) & ~pl.col("stalled"))
    return Measure(keep(_pair_diff(cp, MB1, KB10, "1 MB − 10 KB")) if cp.height else [],
                   _median_a_minus_b, missing=NEEDS_COUPLED + " (deng MP-2 lia beside reno at 10 KB and 1 MB)")


def _cc_vs_network(f: Facts, size: int, cc_first: bool) -> Measure:
    cp = sel(f.cc_pairs.filter((pl.col("paper") == P) & ~pl.col("stalled")), size_bytes=size)
    # Fig. 14 'Network' covers both congestion controls (r_network for coupled and for decoupled)
    pp = sel(f.primary_pairs.filter((pl.col("paper") == P) & ~pl.col("stalled")), size_bytes=size)
    if not cp.height:
        return Measure(missing=NEEDS_COUPLED + f" (deng MP-2 lia beside reno at {size // 1000} KB)")
    g = group(cp["size_label"][0], cc=values(cp, "rel_diff_pct"), network=values(pp, "rel_diff_pct"))
    if cc_first:
        return Measure(keep(g), lambda s: median(s["cc"]) - median(s["network"]))
    return Measure(keep(g), lambda s: median(s["network"]) - median(s["cc"]))


CLAIMS = [
    Claim("deng-lte-beats-wifi", P,
          "Cellular networks outperform WiFi around 40% of the time in our data set (Figure 3), a proportion "
          "considerably higher than we had hypothesized.", "§1 finding 1; §2.2, Fig. 3",
          paper_band=Point(40), paper_value="LTE faster than WiFi in 40 % of 1606 crowd-sourced runs",
          statistic="–", unit="%", config="paper: Cell vs WiFi app, 750 users, 16 countries, 180 days",
          not_reproducible="a property of live networks sampled by 750 users in 16 countries; in the lab which "
                           "network is faster is whatever the link profiles configure (one location each way)"),
    Claim("deng-mptcp-worse-short", P,
          "For short flows (100 KB or lower), MPTCP performs worse than TCP (Figure 7b).",
          "§1 finding 2; §3.3, Fig. 7", paper_band=Below(1.0),
          paper_value="best MPTCP variant below the best single-path TCP for ≤ 100 KB (< 1)",
          statistic="the best MPTCP configuration's median throughput ÷ the faster single path's, per location "
                    "and size ≤ 100 KB", unit="×", config=CONFIG, measure=mptcp_worse_short,
          mismatch=f"{EMULATED}; upstream MPTCP opens the second subflow after the first handshake as v0.88 did"),
    Claim("deng-primary-greatest-small", P,
          "We see that using different networks for the primary subflow has the greatest effect on smaller flow "
          "sizes.", "§3.4, Fig. 8", paper_band=Point(32),
          paper_value="median relative difference 60 % (10 KB), 49 % (100 KB), 28 % (1 MB): 10 KB − 1 MB = 32 points",
          statistic="median |MPTCP_LTE − MPTCP_WiFi| ÷ MPTCP_WiFi over paired runs at 10 KB minus the same at "
                    "1 MB (decoupled)", unit="points", config=CONFIG, measure=primary_greatest_small,
          band=Above(0),
          band_reason="the paper's medians pool 20 live locations whose link mix our two emulated locations "
                      "cannot sample; the claim is the ordering ('the greatest effect on smaller flow sizes')",
          mismatch=EMULATED),
    Claim("deng-primary-faster-network", P,
          "Because of the smaller SYN-ACK RTT and higher throughput on the first primary subflow, the MPTCP "
          "connection using LTE for the primary subflow (Figure 9b) has a higher average throughput than the "
          "MPTCP connection using WiFi for the primary subflow (Figure 9a). Similarly, Figure 10 shows traces "
          "collected at a location where WiFi has higher throughput than LTE. Here, using WiFi as the primary "
          "subflow for MPTCP results in higher throughput.", "§3.4.1, Fig. 9, 10; §3.4.2, Fig. 11b, 12b",
          paper_band=Point(1.5),
          paper_value="faster network as primary: ×2.2 (100 KB), ×1.5 (1 MB) at the LTE-faster location (Fig. 11b)",
          statistic="median throughput with the faster network as primary ÷ with the slower one, per location "
                    "and size (decoupled)", unit="×", config=CONFIG, measure=primary_faster_network,
          band=Above(1.0),
          band_reason="the paper gives ratios at one location only (Fig. 11b); the claim is the direction: the "
                      "faster network as primary gives the higher throughput",
          mismatch=EMULATED),
    Claim("deng-cc-greatest-large", P,
          "Thus, using different congestion control algorithms has more impact on larger flows.",
          "§3.5, Fig. 13, 14", paper_band=Point(18),
          paper_value="median r_cwnd 16 % (10 KB), 16 % (100 KB), 34 % (1 MB): 1 MB − 10 KB = 18 points",
          statistic="median |MPTCP_decoupled − MPTCP_coupled| ÷ MPTCP_coupled at 1 MB minus the same at 10 KB",
          unit="points", config=CONFIG + "; needs MP-2 runs with lia beside reno", measure=cc_greatest_large,
          band=Above(0),
          band_reason="the medians pool 7 live locations; the claim is the ordering (more impact on larger flows)",
          mismatch=EMULATED + "; the lab's LIA is a BPF re-implementation on upstream MPTCP"),
    Claim("deng-cc-beats-network-1mb", P,
          "For large flow sizes, throughput is more affected by the choice of congestion control (decoupled or "
          "coupled) algorithms. For example: in Figure 14c, \u201cCC\u201d is to the right of \u201cNetwork\u201d.",
          "§3.5, Fig. 14c", paper_band=Point(9),
          paper_value="1 MB: median r_cwnd 34 % vs r_network 25 % (9 points)",
          statistic="median r_cwnd − median r_network at 1 MB", unit="points",
          config=CONFIG + "; needs MP-2 runs with lia beside reno",
          measure=lambda f: _cc_vs_network(f, MB1, cc_first=True), band=Above(0),
          band_reason="the medians pool 7 live locations; the claim is which choice matters more",
          mismatch=EMULATED + "; the lab's LIA is a BPF re-implementation on upstream MPTCP"),
    Claim("deng-network-beats-cc-10kb", P,
          "For small flow sizes, throughput is more affected by the choice of network for the primary subflow. "
          "For example, in Figure 14a and 14b, \u201cNetwork\u201d is to the right of \u201cCC\u201d.",
          "§3.5, Fig. 14a", paper_band=Point(44),
          paper_value="10 KB: median r_network 60 % vs r_cwnd 16 % (44 points)",
          statistic="median r_network − median r_cwnd at 10 KB", unit="points",
          config=CONFIG + "; needs MP-2 runs with lia beside reno",
          measure=lambda f: _cc_vs_network(f, KB10, cc_first=False), band=Above(0),
          band_reason="the medians pool 7 live locations; the claim is which choice matters more",
          mismatch=EMULATED + "; the lab's LIA is a BPF re-implementation on upstream MPTCP"),
    Claim("deng-backup-energy", P,
          "However, we find that for MPTCP in Backup Mode, if LTE is set to the backup interface, very little "
          "energy can be saved for flows that last shorter than 15 seconds (Section 3.6).", "§3.6.2, Fig. 16",
          paper_band=Point(15), paper_value="LTE tail energy ≈ 15 s after a SYN or FIN", statistic="–",
          unit="s", config="paper: a power monitor on each tethered phone",
          not_reproducible="energy needs a power monitor on a phone's radio; the lab's namespaces have no "
                           "radio state machine (LTE tail energy) to measure"),
]

CHECKS = []
