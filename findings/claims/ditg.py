"""MPTCP latency for cloud applications (Netflix, Google Maps, Google Docs) with D-ITG over
Dummynet (shared/seeds/mptcp-cloud-latency-ditg.txt).

Our runs: campaign ``ditg``: standard TCP (CUBIC) over P1 only (mode SP-wifi, path
``wifi`` = P1) vs MPTCP over P1 + P2 (MP-2, path ``lte`` = P2), D-ITG traffic profiles
netflix / maps / docs, each path's RTT, loss and rate configured per scenario (read back
from meta.json: ``run_config``). The paper's metric: "The mean of the average packet
latency in all test runs" (``run_metrics.app_latency_ms`` per run, then the mean over
runs). The TCP baseline of an MPTCP group is the TCP runs with the same P1 (RTT, loss,
rate) and profile, as in the paper ("traffic was only sent on P1").

Where MPTCP's latency comes out above TCP's (issue 11 investigated it): not a definition
or sign error — ``app_latency_ms`` equals ITGDec's own "Average delay" of every run (150
runs, within 0.5 µs), the relative difference is 100 × (1 − MPTCP ÷ TCP) of the means over
runs, and the TCP baseline is TCP over P1 alone, as the paper. What we measured instead
is in ``MISMATCH_*`` below and in each claim's ``mismatch``; the probe runs are
``capture/campaigns/probes/ditg-restart.yaml``.
"""
from __future__ import annotations

import polars as pl

from ..claim import Above, Below, Between, Claim, NoSignificantDifference, Point
from ..measure import Facts, Measure, join_notes, values
from ..stats import mean
from ._common import by, group, keep, one_mptcp_cc, sel

P = "ditg"
LAT = "app_latency_ms"
CONFIG = ("paper: Linux MPTCP v0.88.7 with coupled LIA, checksums, fullmesh, 100 MiB buffers; TCP CUBIC on P1; "
          "Dummynet paths of 100 Mbit/s (some tests 10 Mbit/s) with 100-slot queues; 3-minute tests repeated 30 "
          "times; ours: campaign ditg, linkem paths with the same rates and queues, upstream MPTCP with the lab's "
          "BPF LIA (cubic runs only when no lia run exists; never pooled), 6-s tests (meta.json duration_s)")
SCHEDULER = ("upstream's default scheduler instead of v0.88's shortest-RTT-first; 6-s tests instead of 3 minutes; "
             "our D-ITG profiles approximate the paper's traffic captures (Fig. 2)")
# Measured on the standard-scale runs (means of 5 runs per group) and on the probe
# campaign (capture/campaigns/probes/ditg-restart.yaml, 3 runs per group, 40 ms RTTs).
MISMATCH_PACED = (
    "our Netflix profile paces each 0.5-1.5 MiB block at 2000 pkt/s (23 Mbit/s), under a quarter of a 100-Mbit/s "
    "path, so TCP over P1 keeps up and its latency is mostly the one-way delay (Netflix 7.9 ms at a 10 ms RTT): a "
    "second path has little queueing to remove. Over 10-Mbit/s paths, where a block exceeds one path, MPTCP is "
    "46 % (Netflix, 50.0 vs 93.0 ms) and 43 % (Maps, 14.6 vs 25.6 ms) lower, as the paper finds at 100 Mbit/s")
MISMATCH_UPSTREAM = (
    "upstream MPTCP gains nothing after idle and loses at start-up (probe, 40 ms RTTs, 3 runs per group): after "
    "each OFF period each subflow restarts with at most 5 segments in its first RTT where TCP restarts with 10 "
    "(Linux's slow start after idle), so two subflows open no faster than one TCP, and later ON periods have about "
    "TCP's latency (MPTCP 50.0-53.7 ms, TCP 52.2; with net.ipv4.tcp_slow_start_after_idle=0 25.1-26.9 vs "
    "23.1); the gap is the connection's first ON period (MPTCP 48-115 ms, TCP 28-43 ms), 23-45 % of the packets "
    "of our 6-s tests but about 1/60 of the paper's 3-min tests; cubic instead of lia gives the same (57.7 vs "
    "55.9 ms), so it is not our LIA")
MISMATCH_CLOSED_LOOP = (
    "ITGSend's TCP sender blocks on a full socket buffer and skips what it would have sent meanwhile (lab check "
    "lab-ditg-same-offered-load): with 4 % loss on P1 at 40 ms TCP carried 395 Netflix / 356 Maps packets per 6-s "
    "run, MPTCP with 4 % on both paths 679 / 538 and with 4 % on P1 only 1626 / 1332 (loss-free TCP: 1777 / "
    "1090). The TCP mean is over a quarter of the traffic and leaves out the waiting of what was never sent, so "
    "the ratio compares different loads, not the paper's same application traffic")


def _runs(f: Facts) -> tuple[pl.DataFrame, str]:
    r, note = f.of(P)
    r, used = one_mptcp_cc(r, ("lia", "cubic"))  # the paper's MPTCP: coupled LIA (Table I)
    return r.filter(pl.col(LAT).is_not_null()), join_notes(note, used)


def _tcp(r: pl.DataFrame, app: str, rtt: float, loss: float, rate: float) -> pl.DataFrame:
    return sel(r, mode="SP-wifi", app=app, rtt_wifi_ms=rtt, loss_wifi=loss, rate_wifi_mbit=rate)


def _vs_tcp(f: Facts, apps, where: pl.Expr, label, column: str = LAT) -> tuple[list, str]:
    """Per app and MPTCP configuration (P1, P2): the MPTCP runs and their TCP baseline."""
    r, note = _runs(f)
    mp = sel(r, mode="MP-2").filter(where)
    groups = []
    for (app, rtt1, loss1, rate1, rtt2, loss2), g in by(mp.filter(pl.col("app").is_in(apps)), "app", "rtt_wifi_ms",
                                                        "loss_wifi", "rate_wifi_mbit", "rtt_cell_ms", "loss_cell"):
        groups.append(group(label(app, rtt1, loss1, rate1, rtt2, loss2), mp=values(g, column),
                            tcp=values(_tcp(r, app, rtt1, loss1, rate1), column)))
    return keep(*groups), note


def _reduction(s):
    return 100 * (1 - mean(s["mp"]) / mean(s["tcp"]))


def _increase(s):
    return 100 * (mean(s["mp"]) / mean(s["tcp"]) - 1)


LOSS_FREE = (pl.col("loss_wifi") == 0) & (pl.col("loss_cell") == 0)
SYMMETRIC = pl.col("symmetric_rtt").fill_null(False)
MBIT100 = (pl.col("rate_wifi_mbit") == 100) & (pl.col("rate_cell_mbit") == 100)
MBIT10 = (pl.col("rate_wifi_mbit") == 10) & (pl.col("rate_cell_mbit") == 10)


def symmetric(app: str, stat) -> callable:
    def m(f: Facts) -> Measure:
        groups, note = _vs_tcp(f, (app,), LOSS_FREE & SYMMETRIC & MBIT100,
                               lambda a, r1, l1, b1, r2, l2: f"RTT {r1:g} ms")
        return Measure(groups, stat, note=note,
                       missing=f"needs loss-free ditg {app} runs at 100 Mbit/s: MP-2 with equal path RTTs and TCP "
                               "(SP-wifi) at that RTT")
    return m


def asymmetric(apps, rtt2: float) -> callable:
    def m(f: Facts) -> Measure:
        groups, note = _vs_tcp(f, apps, LOSS_FREE & MBIT100 & (pl.col("rtt_wifi_ms") == 10)
                               & (pl.col("rtt_cell_ms") == rtt2),
                               lambda a, r1, l1, b1, r2, l2: f"{a}, P1 {r1:g} / P2 {r2:g} ms")
        return Measure(groups, _increase, note=note,
                       missing=f"needs loss-free ditg MP-2 runs at 100 Mbit/s with P1 10 ms, P2 {rtt2:g} ms, and TCP "
                               "over P1 (10 ms)")
    return m


def slow_paths_smaller_effect(f: Facts) -> Measure:
    r, note = _runs(f)
    groups = []
    for app in ("netflix", "maps"):
        roles = {}
        for tag, rate in (("100", 100.0), ("10", 10.0)):
            mp = sel(r, mode="MP-2", app=app, rtt_wifi_ms=10.0, rtt_cell_ms=400.0, rate_wifi_mbit=rate,
                     rate_cell_mbit=rate).filter(LOSS_FREE)
            roles[f"mp{tag}"] = values(mp, LAT)
            roles[f"tcp{tag}"] = values(_tcp(r, app, 10.0, 0.0, rate), LAT)
        groups.append(group(f"{app}, P1 10 / P2 400 ms", **roles))

    def diff(s):
        inc = {t: mean(s[f"mp{t}"]) / mean(s[f"tcp{t}"]) - 1 for t in ("100", "10")}
        return 100 * (inc["10"] - inc["100"])
    return Measure(keep(*groups), diff, note=note,
                   missing="needs loss-free ditg runs with P1 10 ms / P2 400 ms at 100 and at 10 Mbit/s (MP-2) "
                           "and TCP over P1 at both rates")


def lossy_p2(f: Facts) -> Measure:
    r, note = _runs(f)
    mp = sel(r, mode="MP-2", app="netflix").filter(SYMMETRIC & MBIT100 & (pl.col("loss_wifi") == 0)
                                                   & (pl.col("loss_cell") > 0))
    groups = [group(f"RTT {rtt:g} ms, P2 loss {100 * l2:g} %", mp=values(g, LAT),
                    tcp=values(_tcp(r, "netflix", rtt, 0.0, 100.0), LAT))
              for (rtt, l2), g in by(mp, "rtt_wifi_ms", "loss_cell")]
    return Measure(keep(*groups), _reduction, note=note,
                   missing="needs ditg netflix MP-2 runs with equal RTTs and loss on P2 only, and TCP over the "
                           "loss-free P1")


def lossy_both(app: str) -> callable:
    def m(f: Facts) -> Measure:
        groups, note = _vs_tcp(f, (app,), SYMMETRIC & MBIT100 & (pl.col("rtt_wifi_ms") == 40)
                               & (pl.col("loss_wifi") == 0.04) & (pl.col("loss_cell") == 0.04),
                               lambda a, r1, l1, b1, r2, l2: f"RTT {r1:g} ms, 4 % loss on both")
        return Measure(groups, _reduction, note=note,
                       missing=f"needs ditg {app} MP-2 runs with 40 ms and 4 % loss on both paths and TCP over P1 "
                               "(40 ms, 4 %)")
    return m


CLAIMS = [
    Claim("ditg-netflix-symmetric", P,
          "We observe a substantial reduction in packet latency with MPTCP for Netflix traffic. In absolute terms, "
          "the reduction increased with increased RTT, however, the relative reduction was fairly constant: It "
          "was more than 40% for all considered RTTs, and, it was around 50% for several RTTs.", "§IV, Fig. 3",
          paper_band=Above(40), paper_value="> 40 % lower latency with MPTCP at every RTT (≈ 50 % at several)",
          statistic="100 × (1 − MPTCP ÷ TCP mean latency), loss-free, equal RTTs, 100 Mbit/s, per RTT",
          unit="%", config=CONFIG, measure=symmetric("netflix", _reduction), 
          mismatch=join_notes(MISMATCH_PACED, MISMATCH_UPSTREAM, SCHEDULER)),
    Claim("ditg-maps-symmetric", P,
          "We also observe a reduction in packet latency with MPTCP for Google Maps traffic. Again, the absolute "
          "reduction increased with increasing RTT while there was no correlation between the relative "
          "reduction and the RTT. Instead, the relative reduction varied between 20% and 30%.", "§IV, Fig. 3",
          paper_band=Between(20, 30), paper_value="20–30 % lower latency with MPTCP at every RTT",
          statistic="100 × (1 − MPTCP ÷ TCP mean latency), loss-free, equal RTTs, 100 Mbit/s, per RTT",
          unit="%", config=CONFIG, measure=symmetric("maps", _reduction), 
          mismatch=join_notes(MISMATCH_PACED, MISMATCH_UPSTREAM, SCHEDULER)),
    Claim("ditg-docs-symmetric", P,
          "As regards the Google Docs traffic, we did not observe any significant difference in packet latency "
          "with MPTCP.", "§IV, Fig. 3", paper_band=NoSignificantDifference(),
          paper_value="no significant difference (95 % CIs overlap)",
          statistic="100 × (MPTCP ÷ TCP mean latency − 1), loss-free, equal RTTs, 100 Mbit/s, per RTT", unit="%",
          config=CONFIG, measure=symmetric("docs", _increase),
          mismatch="measured on the Docs runs (Poisson arrivals, 8 packets/s, profile of de5c14f): TCP holds a packet "
                   "sent less than an RTT after the previous one until the previous one is acknowledged, the pattern "
                   "of Nagle's algorithm, while MPTCP sends it at once: at 40 ms such packets "
                   "take 44.6 ms (median) over TCP and 20.4 ms over MPTCP, the others 20.4 ms over both; a difference "
                   "of upstream MPTCP's send path from TCP's, not of the scheduler"),
    Claim("ditg-asymmetric-netflix", P,
          "In the Netflix tests, MPTCP went from providing a latency performance on par vid standard TCP, when "
          "the RTT on P2 was 40 ms, to an increase of packet latency of more than 200%, when the RTT on P2 was "
          "400 ms.", "§IV, Fig. 4", paper_band=Above(200),
          paper_value="> +200 % latency vs TCP with P1 10 ms, P2 400 ms",
          statistic="100 × (MPTCP ÷ TCP-over-P1 mean latency − 1), loss-free, 100 Mbit/s, P1 10 ms, P2 400 ms",
          unit="%", config=CONFIG, measure=asymmetric(("netflix",), 400.0), mismatch=SCHEDULER),
    Claim("ditg-asymmetric-maps", P,
          "The drop in latency performance was even worse for the Google Maps traffic. In these tests, MPTCP "
          "went from offering roughly the same latency as standard TCP, when ... the RTT on P2 was 40 ms, to an "
          "increase of packet latency of more than 800%, when the RTT on P2 was 400 ms.", "§IV, Fig. 4",
          paper_band=Above(800), paper_value="> +800 % latency vs TCP with P1 10 ms, P2 400 ms",
          statistic="100 × (MPTCP ÷ TCP-over-P1 mean latency − 1), loss-free, 100 Mbit/s, P1 10 ms, P2 400 ms",
          unit="%", config=CONFIG, measure=asymmetric(("maps",), 400.0), mismatch=SCHEDULER),
    Claim("ditg-asymmetric-40ms-on-par", P,
          "MPTCP went from providing a latency performance on par vid standard TCP, when the RTT on P2 was 40 ms "
          "[Netflix] ... MPTCP went from offering roughly the same latency as standard TCP, when ... the RTT on "
          "P2 was 40 ms [Google Maps]", "§IV, Fig. 4", paper_band=NoSignificantDifference(),
          paper_value="on par with TCP at P1 10 ms, P2 40 ms (Netflix, Maps)",
          statistic="100 × (MPTCP ÷ TCP-over-P1 mean latency − 1), loss-free, 100 Mbit/s, P1 10 ms, P2 40 ms, "
                    "per app", unit="%", config=CONFIG, measure=asymmetric(("netflix", "maps"), 40.0),
          mismatch=join_notes(MISMATCH_PACED, "any packet sent on P2 waits its 20 ms one-way delay where TCP over P1 "
                                        "waits 5 ms", MISMATCH_UPSTREAM)),
    Claim("ditg-10mbit-smaller-effect", P,
          "Also, since the queueing delays constituted a larger part of the experienced packet latency, the "
          "impact of path asymmetry for MPTCP was smaller in these tests than in the 100-Mbps tests.",
          "§IV, Fig. 5", paper_band=Below(0),
          paper_value="smaller latency increase from P2's long RTT at 10 Mbit/s than at 100 Mbit/s",
          statistic="relative latency increase of MPTCP over TCP (P1 10 ms, P2 400 ms) at 10 Mbit/s minus the "
                    "same at 100 Mbit/s, per app", unit="points", config=CONFIG,
          measure=slow_paths_smaller_effect, mismatch=SCHEDULER),
    Claim("ditg-lossy-p2-netflix", P,
          "However, we also observe that Netflix traffic saw substantial reductions in packet latency with MPTCP "
          "in the tests with only packet loss on P2, even when the packet-loss rate was as high as 4%.",
          "§V, Fig. 6", paper_band=Above(0),
          paper_value="MPTCP lower latency than TCP with loss on P2 only, up to 4 % ('substantial'; no number)",
          statistic="100 × (1 − MPTCP ÷ TCP-over-P1 mean latency), equal RTTs, loss on P2 only, per RTT and "
                    "loss", unit="%", config=CONFIG, measure=lossy_p2,
          mismatch=join_notes("both carried the same traffic here (1676 vs 1777 packets per run)", MISMATCH_UPSTREAM,
                              "4 % loss on P2 adds to it (MPTCP 122 ms with, 66 ms without; TCP over the clean P1 "
                              "42 ms)")),
    Claim("ditg-lossy-both-netflix", P,
          "For example, MPTCP provided a relative reduction in packet latency of around 25% for Netflix in the "
          "test with a 40 ms RTT and a 4% packet-loss rate on both paths.", "§V, Fig. 6",
          paper_band=Point(25), paper_value="≈ 25 % lower latency (40 ms, 4 % loss on both paths)",
          statistic="100 × (1 − MPTCP ÷ TCP-over-P1 mean latency), 40 ms, 4 % loss on both (TCP: 4 % on P1)",
          unit="%", config=CONFIG, measure=lossy_both("netflix"), band=Above(0),
          band_reason="'around 25 %' gives no interval, and the paper notes 'a fairly large variability between "
                      "the repetitions in these tests' (§V); we test the direction, a reduction",
          mismatch=MISMATCH_CLOSED_LOOP),
    Claim("ditg-lossy-both-maps", P,
          "In the corresponding test for Google Maps traffic, the relative reduction was close to 35%.",
          "§V, Fig. 7", paper_band=Point(35), paper_value="≈ 35 % lower latency (40 ms, 4 % loss on both paths)",
          statistic="100 × (1 − MPTCP ÷ TCP-over-P1 mean latency), 40 ms, 4 % loss on both (TCP: 4 % on P1)",
          unit="%", config=CONFIG, measure=lossy_both("maps"), band=Above(0),
          band_reason="'close to 35 %' gives no interval, and the paper notes 'a fairly large variability "
                      "between the repetitions in these tests' (§V); we test the direction, a reduction",
          mismatch=MISMATCH_CLOSED_LOOP),
]

def offered_load(f: Facts) -> Measure:
    groups, note = _vs_tcp(f, ("netflix", "maps"), pl.lit(True),
                           lambda a, r1, l1, b1, r2, l2: f"{a}, P1 {r1:g} ms {100 * l1:g} % / P2 {r2:g} ms "
                                                         f"{100 * l2:g} %, {b1:g} Mbit/s", column="app_packets")
    return Measure(groups, _increase, note=note,
                   missing="needs ditg netflix/maps MP-2 runs and their TCP baselines with D-ITG packet counts")


CHECKS = [
    # ITGSend writes over a blocking TCP socket: when the connection cannot carry the
    # profile, the generator waits and the packets it would have sent in the meantime
    # are never sent, so MPTCP and TCP runs of a comparison can carry different loads
    # and their mean latencies are over different traffic. The paper compares the same
    # application traffic over both (§III).
    Claim("lab-ditg-same-offered-load", P,
          "To obtain relevant traffic profiles for D-ITG, we used Wireshark and captured TCP traffic from repeated "
          "real sessions ... In order to evaluate MPTCP, each test was run with both MPTCP and the default Linux "
          "TCP", "§III", paper_band=NoSignificantDifference(),
          paper_value="the same application traffic (D-ITG profile) over TCP and MPTCP",
          statistic="100 × (MPTCP ÷ TCP mean D-ITG packets sent per run − 1), per compared configuration",
          unit="%", config=CONFIG, measure=offered_load,
          mismatch="ITGSend's TCP sender blocks on a full socket buffer and does not send what it would have "
                   "sent meanwhile: a connection that falls behind the profile is offered less traffic, and the "
                   "latency of what was never sent is in no mean", kind="lab-check"),
]
