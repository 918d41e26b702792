"""CS244 "MPTCP Wireless Performance" (Lim & Valdez), a Mininet reproduction of Raiciu et
al. NSDI'12 Fig. 9 (shared/seeds/cs244-mptcp-wireless-reproduction.txt).

Our runs: campaign ``cs244``: TCP over WiFi (SP-wifi), TCP over 3G (SP-lte) and MPTCP
over both (MP-2), per socket buffer size (scenarios ``buf<N>k``; the buffer read back
from the applied net.ipv4.tcp_rmem), links as CS244 configured them (WiFi 2 Mbit/s, 5 ms,
3 %; 3G 2 Mbit/s, 75 ms, 2 %), plus the ``handover`` run (links taken down and up).
CS244 measured steady-state iperf throughput (samples from 10 s after the start, for
30 s); ours is the steady-state goodput of a download (``run_metrics.steady_goodput_mbit``:
the second half of the transfer).
"""
from __future__ import annotations

import numpy as np
import polars as pl

from ..claim import Above, Below, Between, Claim, Point
from ..measure import Facts, Measure, join_notes, pairs, values
from ..stats import mean, pooled
from ._common import by, group, keep, one_mptcp_cc, sel

P = "cs244"
CONFIG = ("paper: MPTCP kernel (commit 3f087b2, coupled LIA) in Mininet on EC2, WiFi 2 Mbit/s 5 ms 3 % loss, "
          "3G 2 Mbit/s 75 ms 2 % loss, buffers 50–500 KB, iperf throughput 10–40 s after the start; ours: "
          "campaign cs244, the same links in linkem, upstream MPTCP with the lab's BPF LIA (cubic runs only "
          "when no lia run exists; never pooled), steady-state goodput of a download")
MP_CC = ("lia", "cubic", "reno")  # the paper's coupled LIA first
RATE = "steady_goodput_mbit"
LAB_TOLERANCE = ("a lab check of the emulator, not a claim: the configured drop rate, measured as the "
                 "retransmission rate, within ± 20 % (retransmission counts include spurious ones)")


def _sweep(f: Facts) -> tuple[pl.DataFrame, str]:
    r, note = f.of(P)
    r, used = one_mptcp_cc(r, MP_CC)
    return r.filter(pl.col("buffer_bytes").is_not_null() & pl.col(RATE).is_not_null()), join_notes(note, used)


def beats_tcp(f: Facts) -> Measure:
    r, note = _sweep(f)
    groups = [group(f"{b // 1000} KB", mp=values(sel(g, mode="MP-2"), RATE),
                    sp_wifi=values(sel(g, mode="SP-wifi"), RATE), sp_cell=values(sel(g, mode="SP-lte"), RATE))
              for (b,), g in by(r, "buffer_bytes")]
    return Measure(keep(*groups), lambda s: mean(s["mp"]) / np.maximum(mean(s["sp_wifi"]), mean(s["sp_cell"])),
                   missing="needs cs244 runs with a buffer size and a steady-state goodput (MP-2, SP-wifi, SP-lte)",
                   note=note)


def grows(f: Facts) -> Measure:
    r, note = _sweep(f)
    mp = sel(r, mode="MP-2")
    bufs = sorted(mp["buffer_bytes"].unique().to_list())
    if len(bufs) < 2:
        return Measure(missing="needs cs244 MP-2 runs at two or more buffer sizes", note=note)
    g = group(f"{bufs[-1] // 1000} KB vs {bufs[0] // 1000} KB",
              large=values(sel(mp, buffer_bytes=bufs[-1]), RATE), small=values(sel(mp, buffer_bytes=bufs[0]), RATE))
    return Measure(keep(g), lambda s: mean(s["large"]) / mean(s["small"]), note=note)


def tcp_3g_low(f: Facts) -> Measure:
    r, note = _sweep(f)
    groups = [group(f"{b // 1000} KB", x=values(g, RATE)) for (b,), g in by(sel(r, mode="SP-lte"), "buffer_bytes")]
    return Measure(keep(*groups), lambda s: mean(s["x"]),
                   missing="needs cs244 TCP-over-3G (SP-lte) runs with a buffer size", note=note)


def tcp_wifi_full(f: Facts) -> Measure:
    r, note = _sweep(f)
    groups = [group(f"{b // 1000} KB", x=values(g, RATE)) for (b,), g in by(sel(r, mode="SP-wifi"), "buffer_bytes")]
    return Measure(keep(*groups), lambda s: mean(s["x"]),
                   missing="needs cs244 TCP-over-WiFi (SP-wifi) runs with a buffer size", note=note)


def handover(f: Facts) -> Measure:
    r, note = f.of(P, outages=True)
    r, used = one_mptcp_cc(r, MP_CC)
    note = join_notes(note, used)
    runs = r["run_id"].to_list()
    d = f.outage_delivery.filter(pl.col("run_id").is_in(runs))
    per_run = d.group_by("run_id").agg(pl.col("seconds_with_data").sum(), pl.col("outage_seconds").sum(),
                                       pl.col("came_back").sum(), pl.col("comeback_checkable").sum())
    groups = keep(group("delivery during outages", x=pairs(per_run, "seconds_with_data", "outage_seconds")),
                  group("link back in use within 5 s", x=pairs(per_run, "came_back", "comeback_checkable")))
    return Measure(groups, lambda s: 100 * pooled(s["x"]),
                   missing="needs cs244 MP-2 handover runs (scenario handover: links taken down and up)", note=note)


CLAIMS = [
    Claim("cs244-mptcp-beats-tcp", P,
          "Our primary result displayed in Figure 3 indicates that by exploiting multiple interfaces, MPTCP "
          "provides higher throughput than TCP on either interface alone, though it requires larger buffers to "
          "reach its full potential.",
          "CS244 'Results', Fig. 3; Raiciu et al. NSDI'12 Fig. 9", paper_band=Above(1.0),
          paper_value="MPTCP above both TCPs at every buffer size (CS244 Fig. 3: MPTCP 2–2.5, TCP-WiFi ≈ 2, "
                      "TCP-3G ≤ 0.5 Mbit/s)",
          statistic="mean MPTCP steady-state goodput ÷ the better TCP's, per buffer size", unit="×",
          config=CONFIG, measure=beats_tcp,
          mismatch="at small buffers MPTCP's shared receive window limits the 3G subflow (152 ms RTT), so "
                   "MPTCP ≈ TCP over WiFi; upstream MPTCP's scheduler differs from the 2012 kernel's"),
    Claim("cs244-mptcp-grows-with-buffer", P,
          "we were still able to see how MPTCP was able to achieve increasing performance with larger buffers "
          "as described in the original paper",
          "CS244 'Results', Fig. 3", paper_band=Between(1.25, 1.625, "CS244 2 → 2.5, Raiciu 2 → 3.25 Mbit/s"),
          paper_value="MPTCP 2 → 2.5 Mbit/s from 50 to 500 KB (CS244; ×1.25), 2 → 3.25 (Raiciu; ×1.6)",
          statistic="mean MPTCP steady-state goodput at the largest buffer ÷ at the smallest", unit="×",
          config=CONFIG, measure=grows, band=Above(1.0),
          band_reason="the claim is growth ('increasing performance with larger buffers'); how much depends on "
                      "the 3G path's throughput, which the two sources already disagree on (0.5 vs 1.2–2 Mbit/s)",
          mismatch="with 2–3 % random loss each subflow is loss-limited (Padhye's model) before the buffer "
                   "limits it"),
    Claim("cs244-3g-low", P,
          "in ours TCP over 3G never seems to get much higher than 0.5Mbps throughput, even with large buffers",
          "CS244 'Results', Fig. 3, 4", paper_band=Below(0.5, inclusive=True),
          paper_value="TCP over 3G ≤ 0.5 Mbit/s at every buffer (CS244; Raiciu's real 3G: 1.2 → 2 Mbit/s)",
          statistic="mean TCP-over-3G steady-state goodput, per buffer size", unit="Mbit/s", config=CONFIG,
          measure=tcp_3g_low,
          mismatch="cubic here vs the Reno-era kernel of CS244 at 152 ms RTT and 2 % loss: Padhye's Reno "
                   "model gives ≈ 0.5–0.7 Mbit/s, close to the threshold"),
    Claim("cs244-wifi-full", P,
          "In our results as in the original, TCP over WiFi achieves close to full bandwidth across all buffer "
          "sizes.",
          "CS244 'Results', Fig. 3", paper_band=Point(2.0),
          paper_value="≈ 2 Mbit/s, the WiFi link's cap, at every buffer size",
          statistic="mean TCP-over-WiFi steady-state goodput, per buffer size", unit="Mbit/s", config=CONFIG,
          measure=tcp_wifi_full, band=Above(1.8, inclusive=True),
          band_reason="'close to full bandwidth' of a 2 Mbit/s link: we accept 90 % of the cap (TCP/IP "
                      "headers alone take 3.5 % of a 1500-byte frame)",
          mismatch="3 % random loss at 12 ms RTT: the Mathis bound is ≈ 6.8 Mbit/s, so the link rate should "
                   "limit; a shortfall points at our linkem rate shaping or loss bursts"),
    Claim("cs244-handover", P,
          "Although our methodology for the wireless handoff was significantly different than the one shown in "
          "the video, we were able to show that the transition to and from different links would work properly.",
          "CS244 'Wireless Handoff', Fig. 2; Raiciu et al.'s handover video",
          paper_band=Above(100, inclusive=True),
          paper_value="data keeps flowing while a link is down; 'Both links shortly recover their initial "
                      "throughput' (no number)",
          statistic="seconds of each outage (first second left out) in which the client received data, and "
                    "outages after which the link carried data again within 5 s, pooled over handover runs",
          unit="%", config=CONFIG + "; handover: 8 MB download, WiFi down 8–16 s, 3G down 20–28 s",
          measure=handover,
          mismatch="an outage in linkem drops every packet, so the sender must time out on that subflow; "
                   "upstream MPTCP reinjects after its retransmission timer"),
]

def _loss_check(cid: str, mode: str, column: str, path: str, configured: float) -> Claim:
    return Claim(cid, P, "The 3G and WiFi links were capped at 2Mbps with delays of 75ms and 5ms, and drop rates "
                         "of 2% and 3% respectively.", "CS244 'Link Configuration'",
                 paper_band=Point(configured), band=Between(0.8 * configured, 1.2 * configured),
                 band_reason=LAB_TOLERANCE, paper_value=f"{path} drop rate {configured:g} %",
                 statistic=f"mean retransmission rate of TCP-over-{path} runs (server trace)", unit="%",
                 config=f"ours: {configured:g} % random loss each way (profiles.yaml cs244-*)", kind="lab-check",
                 measure=lambda f: Measure(keep(group(mode, x=values(sel(f.of(P)[0], mode=mode), column))),
                                           lambda s: mean(s["x"]), missing=f"needs cs244 {mode} runs"),
                 mismatch=f"spurious retransmissions (lost ACKs: loss is set on both directions) add to the "
                          f"{configured:g} % of data packets dropped")


CHECKS = [_loss_check("lab-cs244-wifi-loss", "SP-wifi", "loss_wifi_pct", "WiFi", 3.0),
          _loss_check("lab-cs244-3g-loss", "SP-lte", "loss_cell_pct", "3G", 2.0)]
