"""How we measure the CS244 statements of inventory.yaml (a Mininet reproduction of
Raiciu et al., NSDI'12 Fig. 9, shared/seeds/cs244-mptcp-wireless-reproduction.txt).

Our runs: campaign ``cs244`` (campaign.yaml): TCP over WiFi (SP-wifi), TCP over 3G
(SP-lte) and MPTCP over both (MP-2, coupled LIA) at the buffer sizes of the scenarios
``buf<N>k`` (the buffer read back from the applied net.ipv4.tcp_rmem), each a 40-s
``iperf3 -R`` download; the throughput is the paper's: "throughput samples beginning 10
seconds after start ... continuing over a period of 30 seconds", the client's bytes
received per second (``run_delivery``) summed over seconds 10-40 ÷ 30 s. Per buffer
and mode the paper's bar is the mean over runs. ``padhye-d6``: Fig. 4's TCP over the
3G link at a 5 ms link delay; ``handover``: MP-2 with WiFi down from 14 to 21 s;
``handover3``: CS244's Fig. 2 run, MP-3 over Ethernet (path eth), WiFi and 3G with
Ethernet down from 7 to 28 s and WiFi from 14 to 21 s, read per path and second
(``run_delivery``'s path: what bwm-ng reads per interface).
"""
from __future__ import annotations

import copy
import math

import numpy as np
import polars as pl

from findings import stats
from findings.claim import READING
from findings.measure import Facts, Measure, join_notes, pairs, values
from papers.registry import check, claim
from papers._common import by, group, keep, one_mptcp_cc, sel

P = "cs244"
CONFIG = ("paper: MPTCP kernel 3f087b2 in Mininet on EC2, WiFi 2 Mbit/s 5 ms 3 % loss, 3G 2 Mbit/s 75 ms 2 % loss, "
          "each behind a 10 Mbit/s 1 ms Ethernet hop, buffers 50-500 KB via net.core.{r,w}mem_max and "
          "net.ipv4.tcp_rmem, iperf throughput 10-40 s after the start, congestion control not named; ours: campaign "
          "cs244, the same links in linkem (the hop folded into the delays), upstream MPTCP with the lab's BPF LIA, "
          "TCP cubic, iperf3 -R for 40 s, the buffers 50 and 500 KB (the paper's sweep: 50-500 KB), five runs each")
MP_CC = ("lia", "cubic", "reno")  # the MPTCP kernel's default (coupled) first
WINDOW = (10, 40)  # "beginning 10 seconds after start ... over a period of 30 seconds"
CHECKS_LINKS = ("lab-cs244-wifi-loss", "lab-cs244-3g-loss")
EMULATED = "emulated links in linkem and upstream MPTCP, where CS244 ran Mininet (netem) and the 2012 MPTCP kernel"


def _runs(f: Facts) -> tuple[pl.DataFrame, str]:
    """The buffer-sweep runs with their 10-40 s throughput (``window_mbit``)."""
    r, note = f.of(P)
    r, used = one_mptcp_cc(r, MP_CC)
    w = f.window_goodput(*WINDOW)
    r = r.join(w, on="run_id", how="left").filter(pl.col("buffer_bytes").is_not_null())
    return r, join_notes(note, used)


def _sweep(r: pl.DataFrame) -> pl.DataFrame:
    return r.filter(pl.col("scenario").str.starts_with("buf"))


def _per_buffer(f: Facts, mode: str) -> list:
    r, _ = _runs(f)
    return [group(f"{b // 1000} KB", x=values(g, "window_mbit")) for (b,), g in by(sel(_sweep(r), mode=mode),
                                                                                    "buffer_bytes")]


def beats_tcp(f: Facts) -> Measure:
    r, note = _runs(f)
    groups = [group(f"{b // 1000} KB", mp=values(sel(g, mode="MP-2"), "window_mbit"),
                    sp_wifi=values(sel(g, mode="SP-wifi"), "window_mbit"),
                    sp_cell=values(sel(g, mode="SP-lte"), "window_mbit"))
              for (b,), g in by(_sweep(r).filter(pl.col("buffer_bytes") <= 500_000), "buffer_bytes")]
    stat = stats.boot(lambda s: np.mean(s["mp"], axis=1) / np.maximum(np.mean(s["sp_wifi"], axis=1),
                                                                            np.mean(s["sp_cell"], axis=1)),
                      ("mp", "sp_wifi", "sp_cell"), "mean MPTCP ÷ the better TCP's mean")
    return Measure(keep(*groups), stat, note=note,
                   missing="needs cs244 MP-2, SP-wifi and SP-lte runs of the buffer sweep with a 10-40 s throughput")


def grows(f: Facts) -> Measure:
    r, note = _runs(f)
    mp = sel(_sweep(r), mode="MP-2").filter(pl.col("buffer_bytes") <= 500_000)
    bufs = sorted(mp["buffer_bytes"].unique().to_list())
    if len(bufs) < 2:
        return Measure(missing="needs cs244 MP-2 runs at two or more buffer sizes", note=note)
    g = group(f"{bufs[-1] // 1000} KB ÷ {bufs[0] // 1000} KB", a=values(sel(mp, buffer_bytes=bufs[-1]), "window_mbit"),
              b=values(sel(mp, buffer_bytes=bufs[0]), "window_mbit"))
    return Measure(keep(g), stats.mean_ratio("a", "b"), note=note)


def mptcp_range(f: Facts) -> Measure:
    r, note = _runs(f)
    groups = [group(f"{b // 1000} KB", x=values(g, "window_mbit"))
              for (b,), g in by(sel(_sweep(r), mode="MP-2").filter(pl.col("buffer_bytes") <= 500_000), "buffer_bytes")]
    return Measure(keep(*groups), stats.mean("x"), note=note, missing="needs cs244 MP-2 runs of the buffer sweep")


RAICIU_TOP_MBIT = 3.25  # Raiciu et al.'s MPTCP at the largest buffer, as CS244 restates it ("2-3.25 Mbit/s")


def below_original(f: Facts) -> Measure:
    """Our MPTCP at the sweep's largest buffer ÷ Raiciu's printed 3.25 Mbit/s."""
    r, note = _runs(f)
    mp = sel(_sweep(r), mode="MP-2").filter(pl.col("buffer_bytes") <= 500_000)
    if not mp.height:
        return Measure(missing="needs cs244 MP-2 runs of the buffer sweep", note=note)
    top = mp["buffer_bytes"].max()
    g = group(f"{top // 1000} KB ÷ Raiciu's {RAICIU_TOP_MBIT:g} Mbit/s",
              x=values(sel(mp, buffer_bytes=top), "window_mbit") / RAICIU_TOP_MBIT)
    return Measure(keep(g), stats.mean("x", f"mean MPTCP throughput ÷ {RAICIU_TOP_MBIT:g} Mbit/s"), note=note)


def single_path(mode: str, max_buffer: int = 500_000):
    def m(f: Facts) -> Measure:
        r, note = _runs(f)
        groups = [group(f"{b // 1000} KB", x=values(g, "window_mbit"))
                  for (b,), g in by(sel(_sweep(r), mode=mode).filter(pl.col("buffer_bytes") <= max_buffer),
                                    "buffer_bytes")]
        return Measure(keep(*groups), stats.mean("x"), note=note, missing=f"needs cs244 {mode} runs of the sweep")
    return m


def tcp_3g_1000k(f: Facts) -> Measure:
    r, note = _runs(f)
    lte = sel(_sweep(r), mode="SP-lte")
    g = group("1000 KB − 500 KB", a=values(sel(lte, buffer_bytes=1_000_000), "window_mbit"),
              b=values(sel(lte, buffer_bytes=500_000), "window_mbit"))
    return Measure(keep(g), stats.mean_diff("a", "b"), note=note,
                   missing="needs cs244 SP-lte runs at 1000 KB (buf1000k) and 500 KB")


def _padhye(f: Facts) -> tuple[pl.DataFrame, pl.DataFrame, str]:
    """TCP over the 3G link (2 %, 500 KB) at the short delay (padhye-d6) and at 75 ms (buf500k)."""
    r, note = _runs(f)
    lte = sel(r, mode="SP-lte", buffer_bytes=500_000)
    return sel(lte, scenario="padhye-d6"), sel(lte, scenario="buf500k"), note


def padhye_flat_cap(f: Facts) -> Measure:
    short, _, note = _padhye(f)
    return Measure(keep(group("5 ms link delay", x=values(short, "window_mbit"))), stats.mean("x"), note=note,
                   missing="needs cs244 padhye-d6 runs (TCP over the 3G link at a 5 ms delay)")


def delay_strong(f: Facts) -> Measure:
    short, long_, note = _padhye(f)
    g = group("75 ms ÷ 5 ms", a=values(long_, "window_mbit"), b=values(short, "window_mbit"))
    return Measure(keep(g), stats.mean_ratio("a", "b"), note=note,
                   missing="needs cs244 SP-lte runs at 500 KB: padhye-d6 (5 ms) and buf500k (75 ms)")


def padhye_model_mbit(rtt_s: float, p: float = 0.02, mss: int = 1448, b: int = 2, rto_s: float = 1.0) -> float:
    """Padhye et al. (SIGCOMM '98) full model, the one CS244 Fig. 4 draws: throughput in
    Mbit/s of a Reno flow with RTT ``rtt_s``, loss ``p``, ``b`` packets per ACK, RTO ``rto_s``
    (Linux's minimum RTO is 200 ms; 1 s is the classic T0 the model's plots use)."""
    denom = rtt_s * math.sqrt(2 * b * p / 3) + rto_s * min(1.0, 3 * math.sqrt(3 * b * p / 8)) * p * (1 + 32 * p * p)
    return mss * 8 / denom / 1e6


def below_model(f: Facts) -> Measure:
    short, long_, note = _padhye(f)
    groups = []
    for label, g in (("5 ms", short), ("75 ms", long_)):
        if not g.height:
            continue
        rtt = g["rtt_cell_ms"].drop_nulls().first()
        model = min(2.0, padhye_model_mbit(rtt / 1000)) if rtt else None  # the link's 2 Mbit/s cap
        if model:
            groups.append(group(f"{label} (model {model:.2f} Mbit/s)", x=values(g, "window_mbit") / model))
    return Measure(keep(*groups), stats.mean("x"), note=join_notes(note, "the model capped at the link's 2 Mbit/s"),
                   missing="needs cs244 SP-lte runs at 500 KB with a configured RTT")


def _handover(f: Facts) -> tuple[pl.DataFrame, str]:
    r, note = f.of(P, outages=True)
    r, used = one_mptcp_cc(r, MP_CC)
    return sel(r, scenario="handover", mode="MP-2"), join_notes(note, used)


def _window(f: Facts, runs: pl.DataFrame, t0: float, t1: float, side: str | None = None) -> np.ndarray:
    """Per run: the window's throughput; 0 for a run whose trace has per-second rows but
    none in the window (nothing arrived), no sample for a run without any."""
    w = f.window_goodput(t0, t1, side)
    have = f.delivery.select("run_id").unique()
    r = runs.select("run_id").join(have, on="run_id", how="semi").join(w, on="run_id", how="left")
    return values(r.with_columns(pl.col("window_mbit").fill_null(0.0)), "window_mbit")


def _on_path(f: Facts, path: str) -> Facts:
    """``f`` with the per-second delivery of one path only: its ``window_goodput`` is then
    that path's throughput (the one definition of a window's throughput)."""
    g = copy.copy(f)
    g.delivery = f.delivery.filter(pl.col("path") == path)
    return g


# CS244 Fig. 2's schedule (handover3), in whole seconds [t0, t1) after the first SYN.
# The outages' clock starts with each path's emulator, 0.4-0.8 s before the SYN (they
# start one after another), so second s covers about [s + 0.5, s + 1.5) of the schedule;
# each window lies inside one phase for any offset below 1 s and leaves out the first
# second after a link drops (for the sender to notice, as outage_delivery does).
# Ethernet returns at 28 s, but its subflow retries only when its retransmission timer,
# backed off over 21 s of silence (to ~14 s), fires: about 7 s later. The window after
# the outages starts 10 s after the link returns (CS244: "shortly"; the flow lasts 50 s).
ALL_UP = (1, 6)      # every link up (0-7 s), the handshake's second left out
ETH_DOWN = (8, 13)   # Ethernet down, WiFi and 3G up (7-14 s)
CELL_ONLY = (15, 20)  # only 3G up (14-21 s)
BACK = (38, 48)      # every link up again (WiFi back at 21 s, Ethernet at 28 s)
PATHS3 = ("eth", "wifi", "lte")
PATH_NAME = {"eth": "Ethernet", "wifi": "WiFi", "lte": "3G"}


def _handover3(f: Facts) -> tuple[pl.DataFrame, str]:
    r, note = f.of(P, outages=True)
    r, used = one_mptcp_cc(r, MP_CC)
    return sel(r, scenario="handover3", mode="MP-3"), join_notes(note, used)


def _by_path(f: Facts, runs: pl.DataFrame, window: tuple[int, int]) -> pl.DataFrame:
    """Per run (sorted), the window's throughput on each of eth, wifi and lte and on all
    paths (``total``); 0 where a run with per-second rows has none there."""
    have = f.delivery.select("run_id").unique()
    r = runs.select("run_id").join(have, on="run_id", how="semi")
    for p in (*PATHS3, None):
        w = (f if p is None else _on_path(f, p)).window_goodput(*window)
        r = r.join(w.rename({"window_mbit": p or "total"}), on="run_id", how="left")
    return r.with_columns(pl.exclude("run_id").fill_null(0.0)).sort("run_id")


def _span(w: tuple[int, int]) -> str:
    return f"{w[0]}-{w[1]} s"


def eth_highest(f: Facts) -> Measure:
    runs, note = _handover3(f)
    d = _by_path(f, runs, ALL_UP)
    g = group(f"all links up ({_span(ALL_UP)})", eth=values(d, "eth"), wifi=values(d, "wifi"), cell=values(d, "lte"))
    stat = stats.boot(lambda s: np.mean(s["eth"], axis=1) / np.maximum(np.mean(s["wifi"], axis=1),
                                                                        np.mean(s["cell"], axis=1)),
                      ("eth", "wifi", "cell"), "mean Ethernet ÷ the higher of WiFi's and 3G's means")
    return Measure(keep(g) if runs.height else [], stat, note=note, missing=MISSING3)


def eth_bulk(f: Facts) -> Measure:
    runs, note = _handover3(f)
    d = _by_path(f, runs, ALL_UP)
    g = group(f"all links up ({_span(ALL_UP)})", x=pairs(d, "eth", "total"))
    return Measure(keep(g) if runs.height else [], stats.pooled("x", text="Ethernet's bytes ÷ all bytes, pooled"),
                   note=note, missing=MISSING3)


def migrate(f: Facts) -> Measure:
    runs, note = _handover3(f)
    d = _by_path(f, runs, ETH_DOWN)
    g = group(f"Ethernet down ({_span(ETH_DOWN)})", a=values(d, "wifi"), b=values(d, "lte"))
    return Measure(keep(g) if runs.height else [], stats.mean_ratio("a", "b"), note=note, missing=MISSING3)


def cell_only(f: Facts) -> Measure:
    runs, note = _handover3(f)
    g = group(f"only 3G up ({_span(CELL_ONLY)}) ÷ all up ({_span(ALL_UP)})",
              a=values(_by_path(f, runs, CELL_ONLY), "total"), b=values(_by_path(f, runs, ALL_UP), "total"))
    return Measure(keep(g) if runs.height else [], stats.mean_ratio("a", "b"), note=note, missing=MISSING3)


def resume(f: Facts) -> Measure:
    runs, note = _handover3(f)
    g = group(f"all links up again ({_span(BACK)}) ÷ before ({_span(ALL_UP)})",
              a=values(_by_path(f, runs, BACK), "total"), b=values(_by_path(f, runs, ALL_UP), "total"))
    return Measure(keep(g) if runs.height else [], stats.increase("a", "b"), note=note, missing=MISSING3)


MISSING3 = "needs cs244 handover3 runs (MP-3: Ethernet down 7-28 s, WiFi down 14-21 s)"


def handover(f: Facts) -> Measure:
    runs, note = _handover(f)
    # WiFi is down from 14 to 21 s after the emulator's start (~0.3 s before the SYN):
    # seconds 15-20 after the SYN lie wholly inside the outage
    g = group("WiFi down (15-20 s)", x=_window(f, runs, 15, 20))
    return Measure(keep(g) if runs.height else [], stats.mean("x"), note=note,
                   missing="needs cs244 handover runs (MP-2, WiFi down 14-21 s)")


def wifi_over_3g(f: Facts) -> Measure:
    runs, note = _handover(f)
    g = group("both links up (5-14 s)", a=_window(f, runs, 5, 14, "wifi"), b=_window(f, runs, 5, 14, "cell"))
    return Measure(keep(g) if runs.height else [], stats.mean_ratio("a", "b"), note=note,
                   missing="needs cs244 handover runs")


def recover(f: Facts) -> Measure:
    runs, note = _handover3(f)
    after, before = _by_path(f, runs, BACK), _by_path(f, runs, ALL_UP)
    groups = [group(f"{PATH_NAME[p]} {_span(BACK)} ÷ {_span(ALL_UP)}", a=values(after, p), b=values(before, p))
              for p in ("eth", "wifi")]
    return Measure(keep(*groups) if runs.height else [], stats.increase("a", "b"), note=note, missing=MISSING3)


WINDOW_TEXT = "throughput 10-40 s after the start (client's bytes received ÷ 30 s)"
CONFIG3 = (CONFIG + "; handover3: MP-3 (lia) over Ethernet (10 Mbit/s, 1 ms + the 1-ms hop, 0 %), WiFi and 3G, 50-s "
           "iperf3 -R, Ethernet down 7-28 s and WiFi down 14-21 s after the emulators start (0.4-0.8 s before the "
           "SYN), "
           "per path: the client's new bytes per second on it (bwm-ng per interface in CS244); windows in whole "
           "seconds after the first SYN, each inside one phase of the schedule")
OUTAGE3 = ("a link is taken down by linkem dropping every frame (the interface stays up, so its subflow stays and "
           "retransmits with exponential backoff), where CS244 switched interfaces off in Mininet (the 2013 kernel's "
           "path manager closed and reopened the subflows); upstream MPTCP's scheduler and reinjection and the lab's "
           "BPF LIA against the 2012 kernel's")
RECOVER_MARGIN = 25.0
RECOVER_REASON = ("CS244 shows one trace and gives no number ('shortly recover their initial throughput'); declared: "
                  "within a quarter of the throughput before the outage, fixed before our handover runs existed")

CLAIMS = [
    claim(P, "cs244-mptcp-beats-tcp", statistic=f"mean MPTCP {WINDOW_TEXT} ÷ the better TCP's mean, per buffer",
          config=CONFIG, measure=beats_tcp, checks=CHECKS_LINKS,
          mismatch="at small buffers MPTCP's shared receive window limits the 3G subflow (152 ms RTT); upstream "
                   "MPTCP's scheduler and LIA implementation differ from the 2012 kernel's"),
    claim(P, "cs244-mptcp-grows-with-buffer", statistic=f"mean MPTCP {WINDOW_TEXT} at 500 KB ÷ at 50 KB",
          config=CONFIG, measure=grows, checks=CHECKS_LINKS,
          mismatch="with 2-3 % random loss each subflow is loss-limited before the buffer limits it"),
    claim(P, "cs244-mptcp-range", statistic=f"mean MPTCP {WINDOW_TEXT}, per buffer", config=CONFIG,
          measure=mptcp_range, checks=CHECKS_LINKS, mismatch=EMULATED),
    claim(P, "cs244-mptcp-below-original",
          statistic=f"mean MPTCP {WINDOW_TEXT} at the sweep's largest buffer (500 KB) ÷ Raiciu et al.'s printed "
                    "3.25 Mbit/s", config=CONFIG + "; Raiciu's side is the number CS244 restates, not a run",
          measure=below_original, checks=CHECKS_LINKS,
          mismatch="our MPTCP is emulated from CS244's links; Raiciu's 3.25 Mbit/s came from real WiFi and 3G "
                   "(goodput, where CS244 and we measure throughput)"),
    claim(P, "cs244-wifi-full", statistic=f"mean TCP-over-WiFi {WINDOW_TEXT}, per buffer", config=CONFIG,
          measure=single_path("SP-wifi"), checks=CHECKS_LINKS,
          mismatch="3 % random loss at a 12 ms RTT: the Mathis bound (≈ 6.8 Mbit/s) is above the link's rate, so "
                   "the rate should limit"),
    claim(P, "cs244-3g-low", statistic=f"mean TCP-over-3G {WINDOW_TEXT}, per buffer", config=CONFIG,
          measure=single_path("SP-lte"), checks=CHECKS_LINKS,
          mismatch="cubic here against CS244's unnamed (Reno-era) default; Padhye's Reno model gives 0.5-0.7 "
                   "Mbit/s at 152 ms and 2 %"),
    claim(P, "cs244-3g-1000k", statistic=f"mean TCP-over-3G {WINDOW_TEXT} at 1000 KB minus at 500 KB",
          config=CONFIG, measure=tcp_3g_1000k, checks=CHECKS_LINKS, margin=0.25,
          margin_reason="CS244 reads its Fig. 3 to a quarter Mbit/s (every number it gives is a multiple of "
                        "0.25); a change smaller than that is 'no better'"),
    claim(P, "cs244-padhye-below-model", statistic=f"mean TCP-over-3G {WINDOW_TEXT} ÷ Padhye's model at the "
                                                   "configured RTT and 2 % loss (capped at 2 Mbit/s), per delay",
          config=CONFIG + "; Fig. 4: TCP over the 3G link at 500 KB, link delays 5 ms (padhye-d6) and 75 ms (buf500k)",
          measure=below_model, checks=("lab-cs244-3g-loss",), mismatch=EMULATED),
    claim(P, "cs244-padhye-flat-cap", statistic=f"mean TCP {WINDOW_TEXT} over the 3G link at a 5 ms delay",
          config=CONFIG + "; Fig. 4's short-delay point", measure=padhye_flat_cap, checks=("lab-cs244-3g-loss",),
          mismatch=EMULATED),
    claim(P, "cs244-delay-strong-effect", statistic=f"mean TCP {WINDOW_TEXT} over the 3G link at 75 ms ÷ at 5 ms",
          config=CONFIG + "; Fig. 4", measure=delay_strong, checks=("lab-cs244-3g-loss",), mismatch=EMULATED),
    claim(P, "cs244-handover", statistic="mean MPTCP throughput while WiFi is down (seconds 15-20 after the SYN)",
          config=CONFIG + "; handover: MP-2, 40-s iperf3, WiFi down 14-21 s (CS244 also took its Ethernet link "
                          "down 7-28 s: the three-path runs, handover3, are read by cs244-handoff-eth-highest, "
                          "cs244-handoff-recover and cs244-raiciu-video-*)", measure=handover,
          mismatch="an outage in linkem drops every packet; upstream MPTCP moves data to the other subflow after "
                   "the WiFi subflow's retransmission timer fires"),
    claim(P, "cs244-handoff-wifi-over-3g", statistic="WiFi ÷ 3G mean throughput of the MPTCP subflows with both "
                                                     "links up (seconds 5-14)", config=CONFIG + "; handover runs",
          measure=wifi_over_3g, checks=CHECKS_LINKS, mismatch=EMULATED),
    claim(P, "cs244-handoff-eth-highest", statistic=f"Ethernet's mean throughput ÷ the higher of WiFi's and 3G's "
                                                    f"with every link up (seconds {_span(ALL_UP)})",
          config=CONFIG3, measure=eth_highest, checks=CHECKS_LINKS, mismatch=OUTAGE3),
    claim(P, "cs244-handoff-recover", statistic=f"per path (Ethernet, WiFi): 100 × (mean throughput with every link up "
                                                f"again, seconds {_span(BACK)}, ÷ before the outages, "
                                                f"{_span(ALL_UP)} − 1)",
          config=CONFIG3, measure=recover, margin=RECOVER_MARGIN, margin_reason=RECOVER_REASON, mismatch=OUTAGE3),
    claim(P, "cs244-raiciu-video-eth-bulk", basis=READING,
          basis_reason="'the bulk of the bandwidth' is read as more than half of the bytes",
          statistic=f"100 × Ethernet's bytes ÷ all bytes with every link up (seconds "
                                                      f"{_span(ALL_UP)}), pooled over runs",
          config=CONFIG3 + "; the video's set-up (a screensaver over real links) is not replayable: CS244's "
                           "three-path handover stands for it",
          measure=eth_bulk, checks=CHECKS_LINKS, mismatch=OUTAGE3),
    claim(P, "cs244-raiciu-video-migrate", statistic=f"WiFi ÷ 3G mean throughput with Ethernet down (seconds "
                                                     f"{_span(ETH_DOWN)}); finite only where 3G carries some",
          config=CONFIG3 + "; CS244's three-path handover stands for the video's", measure=migrate,
          checks=CHECKS_LINKS, mismatch=OUTAGE3),
    claim(P, "cs244-raiciu-video-3g-only", statistic=f"mean total throughput with only 3G up (seconds {_span(CELL_ONLY)}) "
                                                     f"÷ with every link up ({_span(ALL_UP)})",
          config=CONFIG3 + "; CS244's three-path handover stands for the video's", measure=cell_only,
          checks=CHECKS_LINKS, mismatch=OUTAGE3),
    claim(P, "cs244-raiciu-video-resume", statistic=f"100 × (mean total throughput with every link up again, seconds "
                                                    f"{_span(BACK)}, ÷ before the outages, {_span(ALL_UP)} − 1)",
          config=CONFIG3 + "; CS244's three-path handover stands for the video's", measure=resume,
          margin=RECOVER_MARGIN,
          margin_reason="the video gives no number ('resumes its previous value'); the margin of "
                        "cs244-handoff-recover (CS244's words for the same run), declared before our three-path "
                        "runs existed: within a quarter of the throughput before the outages",
          mismatch=OUTAGE3),
]


def _loss_check(cid: str, mode: str, column: str, path: str, configured: float):
    return check(P, cid, quote="The 3G and WiFi links were capped at 2Mbps with delays of 75ms and 5ms, and drop "
                               "rates of 2% and 3% respectively.", where="CS244 'Link Configuration'",
                 phrase="exact", value=configured, precision=0.2 * configured, unit="%",
                 precision_reason="a lab check of the emulator: the retransmission rate within ± 20 % of the "
                                  "configured drop rate (it counts spurious retransmissions too)",
                 says=f"{path} drop rate {configured:g} %",
                 statistic=f"mean retransmission rate of TCP-over-{path} runs (server trace)",
                 config=f"ours: {configured:g} % random loss each way (profiles.yaml cs244-*); a lab check of the "
                        "emulator: the retransmission rate within ± 20 % of the configured drop rate (it counts "
                        "spurious retransmissions too)",
                 measure=lambda f: Measure(keep(group(mode, x=values(sel(f.of(P)[0], mode=mode), column))),
                                           stats.mean("x"), missing=f"needs cs244 {mode} runs"),
                 mismatch=f"spurious retransmissions (lost ACKs: loss is on both directions) add to the "
                          f"{configured:g} % of data packets dropped")


CHECKS = [_loss_check("lab-cs244-wifi-loss", "SP-wifi", "loss_wifi_pct", "WiFi", 3.0),
          _loss_check("lab-cs244-3g-loss", "SP-lte", "loss_cell_pct", "3G", 2.0)]
