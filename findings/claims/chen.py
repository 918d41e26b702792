"""Chen et al., "A Measurement-based Study of MultiPath TCP Performance over Wireless
Networks", IMC 2013 (shared/seeds/chen-imc2013-mptcp-wireless.txt).

Our runs: campaign ``chen`` (capture/campaigns/chen.yaml). Scenario = the cellular
carrier of the paper: ``att`` (WiFi + AT&T LTE), ``verizon`` (WiFi + Verizon LTE),
``sprint`` (WiFi + Sprint 3G EVDO), each over emulated links (profiles.yaml chen-*).
The paper's MPTCP ran coupled congestion control (LIA) unless a figure says otherwise
(Fig. 4 and 9 also show olia and uncoupled New Reno "reno"); ours use LIA runs when the
database has them, else uncoupled reno, never cubic (not a configuration of the paper),
and never pool congestion controls.
"""
from __future__ import annotations

import numpy as np
import polars as pl

from ..claim import Above, Below, Between, Claim, NoSignificantDifference, Point
from ..measure import Facts, Measure, join_notes, pairs, values
from ..stats import median, pooled
from ._common import COUPLED_FIRST, NEEDS_COUPLED, by, group, keep, sel

P = "chen"
CARRIERS = ("att", "verizon", "sprint")
LTE = ("att", "verizon")
MB4, MB8, KB64, KB512 = 4_000_000, 8_000_000, 64_000, 512_000
EMULATED = ("emulated links with fixed rates, delays and random loss (profiles.yaml chen-*) instead of the "
            "paper's live Comcast WiFi and carrier networks")
CONFIG_BASE = ("paper: Linux MPTCP v0.86, coupled congestion control (LIA) unless stated, WiFi as the default "
               "path, ssthresh 64 KB, no metrics cache, 8 MB receive buffer, 20 runs per configuration in the "
               "wild; ours: campaign chen (same sysctls, profile chen2013), upstream MPTCP, MP runs with lia if "
               "present, else uncoupled reno")


def _mp(r: pl.DataFrame, mode: str = "MP-2") -> tuple[pl.DataFrame, str]:
    cc = next((c for c in COUPLED_FIRST if sel(r, mode=mode, congestion_control=c).height), None)
    if cc is None:
        return r.clear(), ""
    return sel(r, mode=mode, congestion_control=cc), f"{mode} runs with {cc}"


def _ratio_to_best_sp(mp_key: str):
    return lambda s: median(s[mp_key]) / np.minimum(median(s["sp_wifi"]), median(s["sp_cell"]))


def close_to_best(f: Facts) -> Measure:
    r, note = f.of(P)
    mp, used = _mp(r)
    groups = []
    for (scen, size, label), g in by(r.filter(pl.col("scenario").is_in(CARRIERS) & (pl.col("size_bytes") > 0)),
                                     "scenario", "size_bytes", "size_label"):
        groups.append(group(f"{scen} {label}", mp=values(sel(mp, scenario=scen, size_bytes=size), "download_time_s"),
                            sp_wifi=values(sel(g, mode="SP-wifi"), "download_time_s"),
                            sp_cell=values(sel(g, mode="SP-lte"), "download_time_s")))
    return Measure(keep(*groups), _ratio_to_best_sp("mp"),
                   missing="needs chen runs (att/verizon/sprint) with SP-wifi, SP-lte and MP-2 download times",
                   note=join_notes(note, used))


def small_wifi_best(f: Facts) -> Measure:
    r, note = f.of(P)
    mp, used = _mp(r)
    groups = []
    small = r.filter(pl.col("scenario").is_in(CARRIERS) & (pl.col("size_bytes") > 0)
                     & (pl.col("size_bytes") <= KB64))
    for (scen, size, label), g in by(small, "scenario", "size_bytes", "size_label"):
        groups.append(group(f"{scen} {label}", sp_wifi=values(sel(g, mode="SP-wifi"), "download_time_s"),
                            sp_cell=values(sel(g, mode="SP-lte"), "download_time_s"),
                            mp=values(sel(mp, scenario=scen, size_bytes=size), "download_time_s")))
    return Measure(keep(*groups),
                   lambda s: median(s["sp_wifi"]) / np.minimum(median(s["sp_cell"]), median(s["mp"])),
                   missing="needs chen runs ≤ 64 KB with SP-wifi, SP-lte and MP-2", note=join_notes(note, used))


def large_beats_best(f: Facts) -> Measure:
    r, note = f.of(P)
    mp, used = _mp(r)
    groups = []
    for (size, label), g in by(sel(r, scenario="att").filter(pl.col("size_bytes") >= MB8), "size_bytes", "size_label"):
        groups.append(group(f"att {label}", mp=values(sel(mp, scenario="att", size_bytes=size), "download_time_s"),
                            sp_wifi=values(sel(g, mode="SP-wifi"), "download_time_s"),
                            sp_cell=values(sel(g, mode="SP-lte"), "download_time_s")))
    return Measure(keep(*groups), _ratio_to_best_sp("mp"),
                   missing="needs chen att runs of 8 MB or more (standard scale: 8 MB) with SP-wifi, SP-lte, MP-2",
                   note=join_notes(note, used))


def _share(f: Facts, sizes, modes=("MP-2",)) -> tuple[list, str]:
    r, note = f.of(P)
    groups, used = [], []
    for mode in modes:
        mp, u = _mp(r, mode)
        used.append(u)
        for (size, label), g in by(sel(mp, scenario="att").filter(sizes), "size_bytes", "size_label"):
            groups.append(group(f"{mode} att {label}", share=values(g, "cell_share_pct")))
    return keep(*groups), join_notes(note, *used)


def cell_share_4mb(f: Facts) -> Measure:
    groups, note = _share(f, pl.col("size_bytes") == MB4)
    return Measure(groups, lambda s: median(s["share"]), missing="needs chen att MP-2 runs of 4 MB", note=note)


def cell_share_large(f: Facts) -> Measure:
    groups, note = _share(f, pl.col("size_bytes") >= MB8, modes=("MP-2", "MP-4"))
    return Measure(groups, lambda s: median(s["share"]),
                   missing="needs chen att MP-2/MP-4 runs of 8 MB or more", note=note)


def mp4_beats_mp2(f: Facts) -> Measure:
    r, note = f.of(P)
    mp2, u2 = _mp(r, "MP-2")
    mp4, u4 = _mp(r, "MP-4")
    groups = []
    for (size, label), _ in by(sel(r, scenario="att").filter(pl.col("size_bytes") >= MB8), "size_bytes", "size_label"):
        groups.append(group(f"att {label}", mp4=values(sel(mp4, scenario="att", size_bytes=size), "download_time_s"),
                            mp2=values(sel(mp2, scenario="att", size_bytes=size), "download_time_s")))
    return Measure(keep(*groups), lambda s: median(s["mp4"]) / median(s["mp2"]),
                   missing="needs chen att MP-2 and MP-4 runs of 8 MB or more", note=join_notes(note, u2, u4))


def _ofo_fraction(f: Facts, carriers, column: str) -> Measure:
    r, note = f.of(P)
    mp, used = _mp(r)
    groups = []
    for (scen,), g in by(mp.filter(pl.col("scenario").is_in(carriers) & (pl.col("size_bytes") >= MB4)), "scenario"):
        groups.append(group(scen, packets=pairs(g, column, "ofo_packets")))
    return Measure(keep(*groups), lambda s: 100 * pooled(s["packets"]),
                   missing=f"needs chen MP-2 runs of 4 MB or more with out-of-order samples in {'/'.join(carriers)}",
                   note=join_notes(note, used, "sizes ≥ 4 MB (Fig. 13, Table 6)"))


def lte_in_order(f: Facts) -> Measure:
    return _ofo_fraction(f, LTE, "ofo_in_order")


def sprint_out_of_order(f: Facts) -> Measure:
    m = _ofo_fraction(f, ("sprint",), "ofo_in_order")
    m.statistic = lambda s: 100 - 100 * pooled(s["packets"])
    return m


def sprint_ofo_over_150(f: Facts) -> Measure:
    return _ofo_fraction(f, ("sprint",), "ofo_over_150ms")


def ofo_sprint_vs_att(f: Facts) -> Measure:
    r, note = f.of(P)
    mp, used = _mp(r)
    g = group("4 MB", sprint=values(sel(mp, scenario="sprint", size_bytes=MB4), "ofo_mean_ms"),
              att=values(sel(mp, scenario="att", size_bytes=MB4), "ofo_mean_ms"))
    return Measure(keep(g), lambda s: np.mean(s["sprint"], axis=1) / np.mean(s["att"], axis=1),
                   missing="needs chen MP-2 runs of 4 MB in att and sprint with out-of-order samples",
                   note=join_notes(note, used))


def olia_vs_coupled(f: Facts) -> Measure:
    r, note = f.of(P)
    groups = []
    for (size, label), g in by(sel(r, scenario="att", mode="MP-2").filter(pl.col("size_bytes") >= MB8),
                               "size_bytes", "size_label"):
        lia, olia = sel(g, congestion_control="lia"), sel(g, congestion_control="olia")
        if lia.height or olia.height:
            groups.append(group(f"att {label}", lia=values(lia, "download_time_s"),
                                olia=values(olia, "download_time_s")))
    return Measure(keep(*groups), lambda s: 100 * (1 - median(s["olia"]) / median(s["lia"])),
                   missing=NEEDS_COUPLED + " (chen att MP-2, 8 MB or more)", note=note)


def cc_small_flows(f: Facts) -> Measure:
    r, note = f.of(P)
    groups = []
    small = sel(r, scenario="att", mode="MP-2").filter((pl.col("size_bytes") > 0) & (pl.col("size_bytes") <= KB512))
    for (size, label), g in by(small, "size_bytes", "size_label"):
        for cc in ("lia", "olia"):
            c = sel(g, congestion_control=cc)
            if c.height:
                groups.append(group(f"{cc} vs reno, att {label}", cc=values(c, "download_time_s"),
                                    reno=values(sel(g, congestion_control="reno"), "download_time_s")))
    return Measure(keep(*groups), lambda s: 100 * (median(s["cc"]) / median(s["reno"]) - 1),
                   missing=NEEDS_COUPLED + " (chen att MP-2 ≤ 512 KB, beside reno)", note=note)


def _sp_path(f: Facts, scenarios, mode: str, column: str, sizes) -> Measure:
    r, note = f.of(P)
    groups = []
    for (scen,), g in by(r.filter(pl.col("scenario").is_in(scenarios) & (pl.col("mode") == mode) & sizes), "scenario"):
        groups.append(group(scen, x=values(g, column)))
    return Measure(keep(*groups), lambda s: np.mean(s["x"], axis=1),
                   missing=f"needs chen {mode} runs in {'/'.join(scenarios)}", note=note)


CLAIMS = [
    Claim("chen-close-to-best", P,
          "We find that MPTCP is robust in achieving performance at least close to the best single-path "
          "performance, across a wide range of network environments.",
          "§1 (contributions); §4, Fig. 2",
          paper_band=Below(1.0, inclusive=True),
          paper_value="MPTCP's download time 'almost the same as those using the best single-path TCP' (§4); no number",
          statistic="MP-2 median download time ÷ the faster single path's median, per carrier and size",
          unit="×", config=CONFIG_BASE, measure=close_to_best,
          band=Below(1.25, inclusive=True),
          band_reason="'at least close to' has no number in the paper; we read 'close' as at most a quarter "
                      "slower, a threshold fixed before the standard-scale data existed",
          mismatch=f"{EMULATED}; upstream's default scheduler and path manager differ from v0.86's"),
    Claim("chen-small-wifi-best", P,
          "For small flows, i.e., file sizes of 64 KB or smaller, single-path TCP over WiFi performs the best, "
          "and MPTCP does not provide much gain over using the cellular path.",
          "§4, Fig. 2", paper_band=Below(1.0, inclusive=True),
          paper_value="SP-WiFi fastest for ≤ 64 KB (no number)",
          statistic="SP-wifi median download time ÷ the faster of SP-cellular and MP-2, per carrier and size ≤ 64 KB",
          unit="×", config=CONFIG_BASE, measure=small_wifi_best,
          mismatch="MP-2 with WiFi as primary sends a 64 KB file almost entirely on WiFi, so it ties with "
                   "SP-WiFi; 1.7 % random WiFi loss in a 45-packet transfer makes single runs slow at random"),
    Claim("chen-large-beats-best", P,
          "We observe that: (1) WiFi is no longer the best path and MPTCP always outperforms the best "
          "single-path TCP",
          "§4.2, Fig. 9 (AT&T, 8–32 MB)", paper_band=Below(1.0),
          paper_value="MPTCP faster than the best single path for 8, 16, 32 MB (< 1)",
          statistic="MP-2 median download time ÷ the faster single path's median, AT&T, per size ≥ 8 MB",
          unit="×", config=CONFIG_BASE, measure=large_beats_best,
          mismatch=f"{EMULATED}; our LTE (8 Mbit/s) and WiFi (20 Mbit/s, 1.7 % loss) rates are read off the "
                   "paper's figures, not measured"),
    Claim("chen-cell-share-4mb", P,
          "we see a clear trend that the fraction of packets carried by the cellular flows reaches 50% and "
          "starts to dominate the packet delivery when the file size is 4MB",
          "§4.1.1, Fig. 5 (AT&T)", paper_band=Above(50, inclusive=True),
          paper_value="≥ 50 % of the traffic on the cellular path at 4 MB",
          statistic="median cellular share of payload bytes (server trace), MP-2, AT&T, 4 MB",
          unit="%", config=CONFIG_BASE, measure=cell_share_4mb,
          mismatch="upstream's default scheduler fills the lowest-RTT subflow first; the split depends on our "
                   "emulated rates and queues"),
    Claim("chen-cell-share-large", P,
          "Figure 10 shows that in all configurations, over 50% of traffic is now routed through the cellular "
          "path instead of WiFi.",
          "§4.2, Fig. 10 (AT&T, 8–32 MB)", paper_band=Above(50),
          paper_value="> 50 % on the cellular path, every configuration, 8–32 MB",
          statistic="median cellular share of payload bytes (server trace), per mode and size ≥ 8 MB, AT&T",
          unit="%", config=CONFIG_BASE, measure=cell_share_large,
          mismatch="upstream's default scheduler fills the lowest-RTT subflow first; the split depends on our "
                   "emulated rates and queues"),
    Claim("chen-mp4-beats-mp2", P, "(2) 4-path MPTCP always outperforms its 2-path counterpart",
          "§4.2, Fig. 9 (AT&T, 8–32 MB); §4.1, Fig. 4", paper_band=Below(1.0),
          paper_value="MP-4 faster than MP-2 at every size (< 1)",
          statistic="MP-4 ÷ MP-2 median download time, AT&T, per size ≥ 8 MB", unit="×",
          config=CONFIG_BASE + "; MP-4: the server's second interface (another subnet) adds two subflows",
          measure=mp4_beats_mp2,
          mismatch="our links carry no other users' traffic: two subflows sharing an emulated bottleneck get "
                   "no more than one, while in the wild extra subflows take a larger share from background "
                   "flows"),
    Claim("chen-lte-in-order", P,
          "MPTCP with AT&T 4G, and MPTCP with Verizon 4G in general do not suffer much from out-of-order "
          "packets. 75% of the packets are delivered in order (in terms of global data sequence numbers).",
          "§5.2, Fig. 13", paper_band=Above(75, inclusive=True),
          paper_value="75 % of packets in order (AT&T, Verizon)",
          statistic="packets with out-of-order delay 0 ÷ all packets at the client, pooled over MP-2 runs "
                    "≥ 4 MB, per carrier", unit="%", config=CONFIG_BASE, measure=lte_in_order,
          mismatch="our emulated LTE has a deep drop-tail queue (bufferbloat) but no radio-level variability; "
                   "the cellular share and its RTT set how many WiFi packets wait"),
    Claim("chen-3g-out-of-order", P,
          "MPTCP with Sprint 3G exhibits a different pattern. 75% of the packets are out-of-order when they "
          "arrive at the receive buffer.",
          "§5.2, Fig. 13", paper_band=Above(75, inclusive=True),
          paper_value="75 % of packets out of order (Sprint 3G)",
          statistic="packets with out-of-order delay > 0 ÷ all packets at the client, pooled over MP-2 runs "
                    "≥ 4 MB, Sprint", unit="%", config=CONFIG_BASE, measure=sprint_out_of_order,
          mismatch="our 3G path has a fixed 150 ms base RTT, 10 ms jitter and a 200 kB queue, not Sprint's "
                   "300–800 ms RTT variations"),
    Claim("chen-3g-ofo-over-150ms", P,
          "Here, we see more than 20% of the packets have out-of-order delay larger than 150 ms, even without "
          "including the one-way network delay.",
          "§5.2, Fig. 13 (Sprint)", paper_band=Above(20),
          paper_value="> 20 % of packets wait more than 150 ms (Sprint 3G)",
          statistic="packets with out-of-order delay > 150 ms ÷ all packets at the client, pooled over MP-2 "
                    "runs ≥ 4 MB, Sprint", unit="%", config=CONFIG_BASE, measure=sprint_ofo_over_150,
          mismatch="our 3G path has a fixed 150 ms base RTT, 10 ms jitter and a 200 kB queue, not Sprint's "
                   "300–800 ms RTT variations"),
    Claim("chen-ofo-sprint-vs-att", P,
          "Table 6: Statistics on MPTCP RTT (flow mean +standard errors) and out-of-order (OFO) delay "
          "(connection mean +standard errors) over different carriers. [4 MB: Sprint 91.3±12.6, AT&T 30.9±3.2]",
          "§5.2, Table 6", paper_band=Between(66.6 / 37.17, 116.0 / 24.63,
                                               "Table 6 at 4 MB, Sprint 91.3 ± 12.6 ÷ AT&T 30.9 ± 3.2 ms: the "
                                               "ratio over both 95 % intervals (mean ± 1.96 s.e.)"),
          paper_value="Sprint ÷ AT&T mean OFO delay at 4 MB = 2.95 (91.3 ± 12.6 vs 30.9 ± 3.2 ms)",
          statistic="mean over Sprint MP-2 runs of the connection-mean OFO delay ÷ the same for AT&T, 4 MB",
          unit="×", config=CONFIG_BASE, measure=ofo_sprint_vs_att,
          mismatch="our 3G and LTE paths are emulated (fixed base RTT, jitter, drop-tail queue), not Sprint's "
                   "and AT&T's networks"),
    Claim("chen-olia-vs-coupled", P,
          "In particular, we observe that MPTCP-olia performs similarly to MPTCP-coupled for file size of 4 MB, "
          "and reduces the download latencies of files of sizes 8 MB, 16 MB, and 32 MB by 5%, 6%, and 10%, "
          "respectively",
          "§4.2, Fig. 9 (AT&T)", paper_band=Between(5, 10, "5 %, 6 %, 10 % at 8, 16, 32 MB"),
          paper_value="olia 5 %, 6 %, 10 % faster than coupled at 8, 16, 32 MB",
          statistic="100 × (1 − olia ÷ lia median download time), MP-2, AT&T, per size ≥ 8 MB", unit="%",
          config=CONFIG_BASE + "; this claim needs MP-2 runs with congestion_control lia and olia",
          measure=olia_vs_coupled, band=Above(0),
          band_reason="the paper's per-size numbers have no spread and its summary is 'MPTCP-olia consistently "
                      "performs slightly better than MPTCP-coupled'; we test that direction at every size",
          mismatch="the lab's LIA and OLIA are BPF re-implementations on upstream MPTCP, whose scheduler "
                   "differs from v0.86's"),
    Claim("chen-cc-small-flows", P,
          "In terms of different MPTCP congestion controllers, we do not see much difference between coupled, "
          "olia, and reno for small flows (except for 4 MB).",
          "§4.1.1 'Effect of congestion controllers', Fig. 4 (AT&T)", paper_band=NoSignificantDifference(),
          paper_value="no marked difference between coupled, olia and reno at 8–512 KB",
          statistic="100 × (lia or olia ÷ reno median download time − 1), MP-2, AT&T, per size ≤ 512 KB",
          unit="%", config=CONFIG_BASE + "; this claim needs MP-2 runs with lia and olia beside reno",
          measure=cc_small_flows,
          mismatch="the lab's LIA and OLIA are BPF re-implementations on upstream MPTCP"),
    Claim("chen-simultaneous-syn", P,
          "the simultaneous-SYN MPTCP on average reduces the download time by 14% for 512 KB files and 5% for "
          "2 MB files, respectively",
          "§4.1.2, Fig. 8", paper_band=Point(14), paper_value="−14 % (512 KB), −5 % (2 MB)",
          statistic="–", unit="%", config="paper: v0.86 modified to send the second subflow's SYN at once",
          not_reproducible="upstream Linux MPTCP opens an additional subflow only after the first subflow's "
                           "handshake (the MP_JOIN needs the keys exchanged on it) and has no option to send the "
                           "SYNs simultaneously; the paper modified the kernel to do so"),
]

CHECKS = [
    Claim("lab-chen-wifi-loss", P, "we observe that the loss rates over 3G/4G networks are generally lower than "
          "0.1%, while those of WiFi vary from 1% to 3%.", "§2.1; Tables 3, 5",
          paper_band=Between(1, 3), paper_value="WiFi loss 1–3 %",
          statistic="mean loss rate of single-path WiFi runs ≥ 512 KB (server trace), per carrier scenario",
          unit="%", config="ours: chen-wifi-home, 1.7 % random loss on data (profiles.yaml)",
          measure=lambda f: _sp_path(f, CARRIERS, "SP-wifi", "loss_wifi_pct", pl.col("size_bytes") >= KB512),
          mismatch="the configured 1.7 % plus losses at our 75 kB WiFi queue", kind="lab-check"),
    Claim("lab-chen-lte-loss", P, "we observe that the loss rates over 3G/4G networks are generally lower than "
          "0.1%, while those of WiFi vary from 1% to 3%.", "§2.1; Tables 3, 5 (AT&T ≈ 0)",
          paper_band=Below(0.1), paper_value="cellular loss < 0.1 %",
          statistic="mean loss rate of single-path AT&T LTE runs (server trace)", unit="%",
          config="ours: chen-lte-att, no random loss, 180 kB drop-tail queue",
          measure=lambda f: _sp_path(f, ("att",), "SP-lte", "loss_cell_pct", pl.col("size_bytes") > 0),
          mismatch="slow start overflows our drop-tail LTE queue; live LTE hides such losses with local "
                   "retransmissions (§2.1)", kind="lab-check"),
    Claim("lab-chen-att-rtt-4mb", P, "Table 3: Small flow path characteristics ... RTT (ms) AT&T ... 140.9±1.1 "
          "[4 MB]", "§4.1, Table 3", paper_band=Between.mean_se(140.9, 1.1, "AT&T 4 MB"),
          paper_value="AT&T LTE RTT at 4 MB: 140.9 ± 1.1 ms",
          statistic="mean RTT of single-path AT&T runs of 4 MB (server trace, Karn)", unit="ms",
          config="ours: chen-lte-att, 60 ms base RTT, 8 Mbit/s, 180 kB queue: bufferbloat from the queue",
          measure=lambda f: _sp_path(f, ("att",), "SP-lte", "rtt_cell_mean_ms", pl.col("size_bytes") == MB4),
          mismatch="the queueing delay depends on cubic filling our 180 kB drop-tail queue", kind="lab-check"),
    Claim("lab-chen-wifi-rtt-4mb", P, "Table 3: Small flow path characteristics ... RTT (ms) WiFi ... 23.9±0.3 "
          "[4 MB]", "§4.1, Table 3", paper_band=Between.mean_se(23.9, 0.3, "WiFi 4 MB"),
          paper_value="WiFi RTT at 4 MB: 23.9 ± 0.3 ms",
          statistic="mean RTT of single-path WiFi runs of 4 MB, AT&T scenario (server trace, Karn)", unit="ms",
          config="ours: chen-wifi-home, 20 ms base RTT, 20 Mbit/s, 75 kB queue",
          measure=lambda f: _sp_path(f, ("att",), "SP-wifi", "rtt_wifi_mean_ms", pl.col("size_bytes") == MB4),
          mismatch="queueing in our 75 kB WiFi queue adds to the 20 ms base RTT", kind="lab-check"),
]
