"""How we measure the D-ITG study's statements of inventory.yaml: MPTCP latency for cloud
applications (Netflix, Google Maps, Google Docs) over Dummynet paths
(shared/seeds/mptcp-cloud-latency-ditg.txt).

Our runs: campaign ``ditg`` at the standard scale (campaign.yaml): standard TCP (CUBIC)
over P1 only (mode SP-wifi; path ``wifi`` = P1) and MPTCP over P1 + P2 (MP-2, the lab's
BPF LIA; path ``lte`` = P2), D-ITG profiles netflix / maps / docs, five runs per
configuration; each path's RTT, loss and rate read back from meta.json (``run_facts``).
Per run the paper's "average packet latency" is ITGDec's average delay
(``app_latency_ms``); per configuration the paper's metric is "The mean of the average
packet latency in all test runs" (the mean over runs), and its relative reduction with
MPTCP is 100 × (1 − MPTCP ÷ TCP) (``findings.stats.reduction`` / ``increase``). The TCP
baseline of an MPTCP configuration is TCP over P1 with P1's RTT, loss and rate, as in
the paper ("traffic was only sent on P1").

D-ITG protocol (capture/README.md, D-ITG): the send and receive buffers are the paper's
100 MiB (Table I). The traffic is a schedule drawn once per repetition from the
profile's model (``capture.ditg_schedule``, seeded by campaign seed, profile and
repetition) and replayed by ITGSend (``-Ft``/``-Fs``/``-z``), so the TCP and MPTCP runs of
a repetition are offered the same packets: lab checks ``lab-ditg-same-offered-load*``
compare, per repetition pair, the schedule files' hash (``app_schedule_sha256``) and the
packets ITGSend generated (``app_sent_packets``), with no tolerance. Each test drains:
ITGSend's close waits (SO_LINGER) until every byte is acknowledged, up to four times
the test plus 20 s, so ITGRecv no longer drops what is still queued when the schedule ends (the
earlier protocol's lossy Netflix runs received 37-47 % of their packets, and their means
measured the test's length). A packet that never arrives would be the latest and
longest-delayed, so a run's mean is a lower bound unless every packet arrived: the lab
checks ``lab-ditg-delivered-<configuration>`` require the received share (packets with a
latency ÷ packets generated) of each configuration's MPTCP runs and TCP baseline to be
100 % (± 0.1 %); each compared group rests on these checks' groups of its own configurations
(``conditions``). Each row's note still gives the share received, per role.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from findings import stats
from findings.measure import Facts, Measure, join_notes, values
from papers.registry import check, claim
from papers._common import group, keep, one_mptcp_cc, sel

P = "ditg"
LAT = "app_latency_ms"
MP_CC = ("lia", "cubic")  # the paper's coupled LIA (Table I); never pooled with another

PAPER = ("paper: Linux MPTCP v0.88.7 (coupled LIA, checksums, fullmesh, the shortest-RTT-first scheduler), 100 MiB "
         "send and receive buffers (Table I), TCP CUBIC over P1 only; two Dummynet paths of 100 Mbit/s (Fig. 5: 10 "
         "Mbit/s) with 100-slot queues, RTTs 10-400 ms, loss 0-4 %; D-ITG traffic rebuilt from Netflix, Google Maps "
         "and Google Docs captures; each test 3 minutes, repeated 30 times; metric: the mean over runs of each run's "
         "average packet latency (ITGSend to ITGRecv)")
OURS = ("ours: campaign ditg, standard scale: linkem paths with the same rates and 100-packet queues, upstream MPTCP "
        "(two subflows, one per path) with the lab's BPF LIA and the default scheduler, 100 MiB buffers, TCP CUBIC over "
        "P1 (path wifi); D-ITG profiles modelled on the paper's Fig. 2, one schedule per repetition replayed for TCP and "
        "MPTCP, each test drained until every packet arrived; 5 runs per configuration; tests of 48 s (Netflix), 30 s "
        "(Maps), 15 s (Docs)")
DIFFERS = ("differs: 5 runs of 48/30/15-s tests instead of 30 of 3 minutes (the first ON period of a connection holds "
           "about 5 % of the packets, the paper's about 1/60); upstream MPTCP's default scheduler, not v0.88's "
           "shortest-RTT-first; linkem instead of Dummynet; profiles that approximate the paper's reconstructed traffic")


def config(what: str) -> str:
    """The paper's configuration and protocol, ours, what differs; ``what``: the configurations of this row."""
    return f"{PAPER}; {OURS}; this row: {what}; {DIFFERS}"


SCHEDULER = ("upstream MPTCP's default scheduler is not v0.88's shortest-RTT-first, to which the paper attributes its "
             "asymmetric-path results; our D-ITG profiles approximate the paper's traffic captures (Fig. 2)")
PACED = ("our Netflix profile paces each 0.5-1.5 MiB block at 2000 packets/s (23 Mbit/s), under a quarter of a "
         "100-Mbit/s path, so TCP over P1 mostly keeps up and its latency is mostly the one-way delay: a second path "
         "has little queueing to remove (earlier 6-s campaign: over 10-Mbit/s paths, where a block exceeds one path, "
         "MPTCP was 43-46 % lower, as the paper finds at 100 Mbit/s)")
RESTART = ("upstream MPTCP restarts each subflow after idle with a smaller window than TCP's 10 segments (Linux's slow "
           "start after idle; probe capture/campaigns/probes/ditg-restart.yaml, 40 ms RTTs): two subflows open no "
           "faster than one TCP after each OFF period")
DOCS = ("measured on earlier Docs runs (Poisson, 8 packets/s): TCP holds a packet sent less than an RTT after the "
        "previous one until the previous one is acknowledged (the pattern of Nagle's algorithm) while MPTCP sends it at "
        "once (at 40 ms such packets took 44.6 ms median over TCP, 20.4 ms over MPTCP): a difference of upstream "
        "MPTCP's send path from TCP's, not of the scheduler")
LOSSY = ("with 4 % random loss a 48-s test holds few loss events per run and the paper itself notes 'a fairly large "
         "variability between the repetitions'; the traffic still queued when a lossy test's schedule ends is in its "
         "mean (the test drains), and how long it queued depends on the test's length")


# ------------------------------------------------------------------ configurations

@dataclass(frozen=True)
class Cfg:
    """An MPTCP configuration (P1 = path wifi, P2 = path lte); its TCP baseline is TCP over P1."""

    rtt1: float
    rtt2: float
    loss1: float = 0.0
    loss2: float = 0.0
    rate: float = 100.0

    @property
    def text(self) -> str:
        def path(r, l):
            return f"{r:g} ms" + (f" {100 * l:g} %" if l else "")
        rate = "" if self.rate == 100 else f", {self.rate:g} Mbit/s"
        return f"P1 {path(self.rtt1, self.loss1)} / P2 {path(self.rtt2, self.loss2)}{rate}"


SYM40 = Cfg(40, 40)
ASYM20, ASYM40, ASYM400 = Cfg(10, 20), Cfg(10, 40), Cfg(10, 400)
ASYM400_10M = Cfg(10, 400, rate=10)
LOSS_P1, LOSS_P2, LOSS_BOTH = Cfg(40, 40, 0.04, 0), Cfg(40, 40, 0, 0.04), Cfg(40, 40, 0.04, 0.04)
TCP10 = "TCP over P1 10 ms"

# every MPTCP configuration of the standard scale and its profiles: the offered-load checks
SYMMETRIC_PAIRS = [(SYM40, ("netflix", "maps", "docs")), (LOSS_P1, ("netflix", "maps")),
                   (LOSS_P2, ("netflix", "maps")), (LOSS_BOTH, ("netflix", "maps"))]
ASYMMETRIC_PAIRS = [(ASYM20, ("netflix", "maps")), (ASYM40, ("netflix", "maps")), (ASYM400, ("netflix", "maps")),
                    (ASYM400_10M, ("netflix",))]


# the labels of the lab checks' groups (one rule, used by the checks and by the claims'
# groups that rest on them: ``check@label`` names one group of a check, findings.evaluate)
def _pair_label(app: str, c: Cfg) -> str:
    return f"{app}, {c.text}"


def _mp_label(app: str, c: Cfg) -> str:
    return f"{app}, MPTCP {c.text}"


def _tcp_label(app: str, c: Cfg) -> str:
    return f"{app}, TCP over P1 ({c.text.split(' / ')[0]})"


def _p1_label(rtt: float) -> str:
    return f"P1 {rtt:g} ms (TCP and MPTCP)"


def _p2_label(rtt: float) -> str:
    return f"P2 {rtt:g} ms (MPTCP)"


def conditions(app: str, c: Cfg, mp: bool = True, tcp: bool = True) -> tuple[str, ...]:
    """The lab checks of the conditions one profile's runs over ``c`` were measured under,
    each the check's own group of that configuration (a failing group of another
    configuration gates nothing here): the paths' RTTs, the configured loss, the same
    offered traffic for TCP and MPTCP (when both are compared) and every packet delivered,
    per role compared (``mp``: MPTCP over ``c``; ``tcp``: its baseline, TCP over P1)."""
    rtt = "lab-ditg-rtt-sym40" if c.rtt1 == c.rtt2 == 40 else "lab-ditg-rtt-asym"
    ids = [f"{rtt}@{_p1_label(c.rtt1)}"] + ([f"{rtt}@{_p2_label(c.rtt2)}"] if mp else [])
    ids += ["lab-ditg-loss-p1"] if c.loss1 else []
    ids += ["lab-ditg-loss-p2"] if c.loss2 and mp else []
    if mp and tcp:
        offered = "lab-ditg-same-offered-load" + ("" if any(c == x for x, _ in SYMMETRIC_PAIRS) else "-asym")
        ids.append(f"{offered}@{_pair_label(app, c)}")
    key = next(k for k, (x, _) in DELIVERED.items() if x == c)
    ids += [f"lab-ditg-delivered-{key}@{_mp_label(app, c)}"] if mp else []
    ids += [f"lab-ditg-delivered-{key}@{_tcp_label(app, c)}"] if tcp else []
    return tuple(ids)


def _eq(col: str, x: float) -> pl.Expr:
    return (pl.col(col) - x).abs() < 1e-9


def _runs(f: Facts, latency: bool = True) -> tuple[pl.DataFrame, str]:
    """The campaign's usable runs of a D-ITG profile (with a latency, unless ``latency``
    is false), MPTCP of one congestion control, and per profile only the longest test
    (the standard scale's; a database holding shorter tests of another scale never pools
    them)."""
    r, note = f.of(P)
    r, used = one_mptcp_cc(r, MP_CC)
    r = r.filter(pl.col("app").is_not_null())
    if latency:
        r = r.filter(pl.col(LAT).is_not_null())
    if "duration_s" in r.columns and r["duration_s"].drop_nulls().len():
        longest = r.group_by("app").agg(pl.col("duration_s").max().alias("_dmax"))
        r2 = r.join(longest, on="app").filter(pl.col("duration_s").is_null() | (pl.col("duration_s") == pl.col("_dmax")))
        if r2.height < r.height:
            note = join_notes(note, f"{r.height - r2.height} run(s) of shorter tests left out")
        r = r2.drop("_dmax")
    return r, join_notes(note, used)


def _mp(r: pl.DataFrame, app: str, c: Cfg) -> pl.DataFrame:
    return sel(r, mode="MP-2", app=app).filter(
        _eq("rtt_wifi_ms", c.rtt1) & _eq("rtt_cell_ms", c.rtt2) & _eq("loss_wifi", c.loss1)
        & _eq("loss_cell", c.loss2) & _eq("rate_wifi_mbit", c.rate) & _eq("rate_cell_mbit", c.rate))


def _tcp(r: pl.DataFrame, app: str, c: Cfg) -> pl.DataFrame:
    """TCP over P1 with P1's RTT, loss and rate (the paper: 'traffic was only sent on P1')."""
    return sel(r, mode="SP-wifi", app=app).filter(
        _eq("rtt_wifi_ms", c.rtt1) & _eq("loss_wifi", c.loss1) & _eq("rate_wifi_mbit", c.rate))


def _received(label: str, **frames: pl.DataFrame) -> str:
    """The share of generated packets received, per role: Σ app_packets ÷ Σ app_sent_packets."""
    parts = []
    for role, d in frames.items():
        d = d.filter(pl.col("app_sent_packets").is_not_null() & (pl.col("app_sent_packets") > 0))
        if d.height:
            parts.append(f"{role} {100 * d['app_packets'].sum() / d['app_sent_packets'].sum():.1f} %")
    return f"{label}: {', '.join(parts)}" if parts else ""


def _received_note(notes: list[str]) -> str:
    notes = [n for n in notes if n]
    return ("packets received ÷ generated (ITGSend): " + "; ".join(notes)) if notes else ""


def vs_tcp(cases: list[tuple[str, str, Cfg]], stat: stats.Stat, missing: str):
    """Per case (label, profile, MPTCP configuration): MPTCP's per-run latency and its TCP baseline's."""
    def m(f: Facts) -> Measure:
        r, note = _runs(f)
        groups, rec = [], []
        for label, app, c in cases:
            mp, tcp = _mp(r, app, c), _tcp(r, app, c)
            groups.append(group(label, checks=conditions(app, c), mp=values(mp, LAT), tcp=values(tcp, LAT)))
            rec.append(_received(label, MPTCP=mp, TCP=tcp))
        return Measure(keep(*groups), stat, missing=missing, note=join_notes(note, _received_note(rec)))
    return m


REDUCTION = stats.reduction("mp", "tcp", "100 × (1 − MPTCP mean latency ÷ TCP-over-P1 mean latency)")
INCREASE = stats.increase("mp", "tcp", "100 × (MPTCP mean latency ÷ TCP-over-P1 mean latency − 1)")


def _m(a: np.ndarray) -> np.ndarray:
    return np.mean(a, axis=1)


def maps_worse(f: Facts) -> Measure:
    r, note = _runs(f)
    roles = {"mp_maps": _mp(r, "maps", ASYM400), "tcp_maps": _tcp(r, "maps", ASYM400),
             "mp_netflix": _mp(r, "netflix", ASYM400), "tcp_netflix": _tcp(r, "netflix", ASYM400)}
    g = group(f"Maps − Netflix, {ASYM400.text}", checks=conditions("maps", ASYM400) + conditions("netflix", ASYM400),
              **{k: values(v, LAT) for k, v in roles.items()})
    stat = stats.boot(lambda s: 100 * (_m(s["mp_maps"]) / _m(s["tcp_maps"]) - _m(s["mp_netflix"]) / _m(s["tcp_netflix"])),
                      tuple(roles), "Maps' 100 × (MPTCP ÷ TCP − 1) minus Netflix's (means over runs)")
    rec = _received(ASYM400.text, **{k.replace("_", " "): v for k, v in roles.items()})
    return Measure(keep(g), stat, note=join_notes(note, _received_note([rec])),
                   missing="needs ditg MP-2 runs over P1 10 / P2 400 ms and TCP over P1 (10 ms), Netflix and Maps")


def smaller_at_10mbit(f: Facts) -> Measure:
    r, note = _runs(f)
    roles = {"mp10": _mp(r, "netflix", ASYM400_10M), "tcp10": _tcp(r, "netflix", ASYM400_10M),
             "mp100": _mp(r, "netflix", ASYM400), "tcp100": _tcp(r, "netflix", ASYM400)}
    g = group("Netflix, P1 10 / P2 400 ms: 10 − 100 Mbit/s",
              checks=conditions("netflix", ASYM400_10M) + conditions("netflix", ASYM400),
              **{k: values(v, LAT) for k, v in roles.items()})
    stat = stats.boot(lambda s: 100 * (_m(s["mp10"]) / _m(s["tcp10"]) - _m(s["mp100"]) / _m(s["tcp100"])),
                      tuple(roles), "100 × (MPTCP ÷ TCP − 1) at 10 Mbit/s minus the same at 100 Mbit/s")
    rec = [_received("10 Mbit/s", MPTCP=roles["mp10"], TCP=roles["tcp10"]),
           _received("100 Mbit/s", MPTCP=roles["mp100"], TCP=roles["tcp100"])]
    return Measure(keep(g), stat, note=join_notes(note, _received_note(rec)),
                   missing="needs ditg Netflix runs over P1 10 / P2 400 ms (MP-2) and TCP over P1 (10 ms), at 10 and "
                           "at 100 Mbit/s")


def longer_at_10mbit(f: Facts) -> Measure:
    r, note = _runs(f)
    tcp = conditions("netflix", ASYM400_10M, mp=False) + conditions("netflix", ASYM400, mp=False)
    mp = conditions("netflix", ASYM400_10M, tcp=False) + conditions("netflix", ASYM400, tcp=False)
    groups = [group(f"Netflix, {TCP10}: 10 ÷ 100 Mbit/s", checks=tcp, a=values(_tcp(r, "netflix", ASYM400_10M), LAT),
                    b=values(_tcp(r, "netflix", ASYM400), LAT)),
              group("Netflix, MPTCP P1 10 / P2 400 ms: 10 ÷ 100 Mbit/s", checks=mp,
                    a=values(_mp(r, "netflix", ASYM400_10M), LAT), b=values(_mp(r, "netflix", ASYM400), LAT))]
    return Measure(keep(*groups), stats.mean_ratio("a", "b", "mean latency at 10 Mbit/s ÷ at 100 Mbit/s"), note=note,
                   missing="needs ditg Netflix runs (TCP over P1 10 ms; MP-2 over 10/400 ms) at 10 and 100 Mbit/s")


def p1_gain_grows(f: Facts) -> Measure:
    r, note = _runs(f)
    groups, rec = [], []
    for app in ("netflix", "maps"):
        roles = {"mp4": _mp(r, app, LOSS_P1), "tcp4": _tcp(r, app, LOSS_P1), "mp0": _mp(r, app, SYM40),
                 "tcp0": _tcp(r, app, SYM40)}
        groups.append(group(f"{app}, 40 ms: 4 % − 0 % loss on P1",
                            checks=conditions(app, LOSS_P1) + conditions(app, SYM40),
                            **{k: values(v, LAT) for k, v in roles.items()}))
        rec.append(_received(f"{app} 4 % on P1", MPTCP=roles["mp4"], TCP=roles["tcp4"]))
    # reduction at 4 % minus at 0 %: 100 × ((1 − mp4/tcp4) − (1 − mp0/tcp0))
    stat = stats.boot(lambda s: 100 * (_m(s["mp0"]) / _m(s["tcp0"]) - _m(s["mp4"]) / _m(s["tcp4"])),
                      ("mp4", "tcp4", "mp0", "tcp0"),
                      "100 × (1 − MPTCP ÷ TCP) with 4 % loss on P1 minus the same loss-free (means over runs)")
    return Measure(keep(*groups), stat, note=join_notes(note, _received_note(rec)),
                   missing="needs ditg runs at 40 ms with 4 % loss on P1 only and loss-free (MP-2 and TCP over P1)")


LOSS_CASES = [(LOSS_P1, "4 % on P1"), (LOSS_P2, "4 % on P2"), (LOSS_BOTH, "4 % on both")]


def rtt_dominates(f: Facts) -> Measure:
    r, note = _runs(f)
    groups = []
    for app in ("netflix", "maps"):
        for c, where in LOSS_CASES:
            roles = {"long": _mp(r, app, ASYM400), "short": _mp(r, app, ASYM20), "loss": _mp(r, app, c),
                     "clean": _mp(r, app, SYM40)}
            on = sum((conditions(app, x, tcp=False) for x in (ASYM400, ASYM20, c, SYM40)), ())
            groups.append(group(f"{app}: P2 20 → 400 ms vs {where} at 40 ms", checks=on,
                                **{k: values(v, LAT) for k, v in roles.items()}))
    stat = stats.boot(lambda s: 100 * (_m(s["long"]) / _m(s["short"]) - _m(s["loss"]) / _m(s["clean"])),
                      ("long", "short", "loss", "clean"),
                      "100 × (MPTCP mean, P2 400 ÷ 20 ms − 1) minus 100 × (MPTCP mean, 4 % loss ÷ loss-free − 1)")
    return Measure(keep(*groups), stat, note=note,
                   missing="needs ditg MP-2 runs over P1 10 / P2 20 and 400 ms, and over 40/40 ms loss-free and with "
                           "4 % loss")


# ------------------------------------------------------------------ claims

def _sym(app: str) -> list[tuple[str, str, Cfg]]:
    return [(f"{app}, RTT 40 ms", app, SYM40)]


# Every claim's compared groups name the lab checks of their own configurations
# (``conditions``, ``group(checks=...)``): the claims themselves rest on no whole check, so a check
# failing in one configuration (one profile's offered load, one configuration's delivery)
# withholds only the groups measured there.


SYM_TEXT = "equal loss-free paths of 40 ms, 100 Mbit/s (sym-rtt40; the paper: every RTT of 10-400 ms, Fig. 3)"
MARGIN_20 = ("declared before our data: 20 %, the smallest change the paper itself calls a reduction (Maps' 'relative "
             "reduction varied between 20% and 30%', §IV); the paper gives no number for 'no significant difference' "
             "/ 'on par' (its 95 % CIs over 30 runs), so a difference under 20 % is not what it reports as one")

CLAIMS = [
    claim(P, "ditg-intensity-ordering",
          statistic="100 × (1 − MPTCP ÷ TCP-over-P1 mean latency), per profile (Netflix, Maps)",
          config=config(f"Netflix and Maps over {SYM_TEXT}"),
          measure=vs_tcp(_sym("netflix") + _sym("maps"), REDUCTION, "needs ditg sym-rtt40 runs (MP-2 and TCP)"),
          mismatch=join_notes(PACED, RESTART, SCHEDULER)),
    claim(P, "ditg-reduced-despite-loss",
          statistic="100 × (1 − MPTCP ÷ TCP-over-P1 mean latency), TCP with P1's loss, per profile and loss placement",
          config=config("4 % loss at 40 ms on P1 only, on P2 only (Netflix; the paper: Maps 'more or less the same' "
                        "there) and on both paths, 100 Mbit/s (the paper: 1-4 % at 10/40/100 ms, Fig. 6-8); TCP "
                        "baselines: TCP over P1 with 4 % (P1, both) or loss-free (P2)"),
          measure=vs_tcp([("netflix, 4 % on P1", "netflix", LOSS_P1), ("maps, 4 % on P1", "maps", LOSS_P1),
                          ("netflix, 4 % on P2", "netflix", LOSS_P2), ("netflix, 4 % on both", "netflix", LOSS_BOTH),
                          ("maps, 4 % on both", "maps", LOSS_BOTH)], REDUCTION,
                         "needs ditg loss-rtt40-* runs (MP-2) and their TCP baselines"),
          mismatch=join_notes(LOSSY, RESTART, SCHEDULER)),
    claim(P, "ditg-reduced-despite-small-rtt-diff",
          statistic="100 × (1 − MPTCP ÷ TCP-over-P1 mean latency), per profile",
          config=config("loss-free, 100 Mbit/s, MPTCP over P1 10 / P2 20 ms (asym-rtt10-20), TCP over P1 10 ms "
                        "(sym-rtt10), Netflix and Maps"),
          measure=vs_tcp([(f"{a}, {ASYM20.text}", a, ASYM20) for a in ("netflix", "maps")], REDUCTION,
                         "needs ditg asym-rtt10-20 (MP-2) and sym-rtt10 (TCP) runs"),
          mismatch=join_notes("any packet sent on P2 waits its 10 ms one-way delay where TCP over P1 waits 5 ms",
                              PACED, RESTART, SCHEDULER)),
    claim(P, "ditg-netflix-symmetric", statistic="100 × (1 − MPTCP ÷ TCP-over-P1 mean latency), Netflix",
          config=config(f"Netflix over {SYM_TEXT}"),
          measure=vs_tcp(_sym("netflix"), REDUCTION, "needs ditg Netflix sym-rtt40 runs (MP-2 and TCP)"),
          mismatch=join_notes(PACED, RESTART, SCHEDULER)),
    claim(P, "ditg-maps-symmetric", statistic="100 × (1 − MPTCP ÷ TCP-over-P1 mean latency), Maps",
          config=config(f"Maps over {SYM_TEXT}"),
          measure=vs_tcp(_sym("maps"), REDUCTION, "needs ditg Maps sym-rtt40 runs (MP-2 and TCP)"),
          mismatch=join_notes(PACED, RESTART, SCHEDULER)),
    claim(P, "ditg-docs-symmetric", statistic="100 × (MPTCP ÷ TCP-over-P1 mean latency − 1), Docs",
          config=config(f"Docs over {SYM_TEXT}"),
          measure=vs_tcp(_sym("docs"), INCREASE, "needs ditg Docs sym-rtt40 runs (MP-2 and TCP)"),
          margin=20.0, margin_reason=MARGIN_20, mismatch=DOCS),
    claim(P, "ditg-asymmetric-40ms-on-par", statistic="100 × (MPTCP ÷ TCP-over-P1 mean latency − 1), per profile",
          config=config("loss-free, 100 Mbit/s, MPTCP over P1 10 / P2 40 ms (asym-rtt10-40), TCP over P1 10 ms "
                        "(sym-rtt10), Netflix and Maps"),
          measure=vs_tcp([(f"{a}, {ASYM40.text}", a, ASYM40) for a in ("netflix", "maps")], INCREASE,
                         "needs ditg asym-rtt10-40 (MP-2) and sym-rtt10 (TCP) runs"),
          margin=20.0, margin_reason=MARGIN_20,
          mismatch=join_notes("any packet sent on P2 waits its 20 ms one-way delay where TCP over P1 waits 5 ms",
                              PACED, RESTART, SCHEDULER)),
    claim(P, "ditg-asymmetric-netflix", statistic="100 × (MPTCP ÷ TCP-over-P1 mean latency − 1), Netflix",
          config=config("loss-free, 100 Mbit/s, MPTCP over P1 10 / P2 400 ms (asym-rtt10-400), TCP over P1 10 ms "
                        "(sym-rtt10), Netflix"),
          measure=vs_tcp([(f"netflix, {ASYM400.text}", "netflix", ASYM400)], INCREASE,
                         "needs ditg Netflix asym-rtt10-400 (MP-2) and sym-rtt10 (TCP) runs"), mismatch=SCHEDULER),
    claim(P, "ditg-asymmetric-maps", statistic="100 × (MPTCP ÷ TCP-over-P1 mean latency − 1), Maps",
          config=config("loss-free, 100 Mbit/s, MPTCP over P1 10 / P2 400 ms (asym-rtt10-400), TCP over P1 10 ms "
                        "(sym-rtt10), Maps"),
          measure=vs_tcp([(f"maps, {ASYM400.text}", "maps", ASYM400)], INCREASE,
                         "needs ditg Maps asym-rtt10-400 (MP-2) and sym-rtt10 (TCP) runs"), mismatch=SCHEDULER),
    claim(P, "ditg-asymmetric-maps-worse",
          statistic="Maps' 100 × (MPTCP ÷ TCP-over-P1 mean latency − 1) minus Netflix's, P1 10 / P2 400 ms",
          config=config("loss-free, 100 Mbit/s, MPTCP over P1 10 / P2 400 ms, TCP over P1 10 ms, Maps and Netflix "
                        "(the paper: at P2 = 400 ms > 800 % vs > 200 %)"),
          measure=maps_worse, mismatch=SCHEDULER),
    claim(P, "ditg-10mbit-similar", statistic="100 × (MPTCP ÷ TCP-over-P1 mean latency − 1), 10 Mbit/s",
          config=config("loss-free 10-Mbit/s paths, MPTCP over P1 10 / P2 400 ms (asym10m-rtt10-400), TCP over P1 10 "
                        "ms (sym10m-rtt10), Netflix (the paper: P2 10-400 ms, all profiles, Fig. 5)"),
          measure=vs_tcp([(f"netflix, {ASYM400_10M.text}", "netflix", ASYM400_10M)], INCREASE,
                         "needs ditg Netflix asym10m-rtt10-400 (MP-2) and sym10m-rtt10 (TCP) runs"),
          mismatch=SCHEDULER),
    claim(P, "ditg-10mbit-longer-latency",
          statistic="mean latency at 10 Mbit/s ÷ at 100 Mbit/s, for TCP over P1 (10 ms) and for MPTCP (10/400 ms)",
          config=config("loss-free, Netflix: TCP over P1 10 ms (sym10m-rtt10 vs sym-rtt10) and MPTCP over P1 10 / P2 "
                        "400 ms (asym10m-rtt10-400 vs asym-rtt10-400) at 10 and 100 Mbit/s (the paper: P2 10-400 ms, "
                        "all profiles, Fig. 4 vs 5)"),
          measure=longer_at_10mbit,
          mismatch="our Netflix profile's 23-Mbit/s blocks exceed a 10-Mbit/s path, so the queue fills"),
    claim(P, "ditg-10mbit-smaller-effect",
          statistic="100 × (MPTCP ÷ TCP-over-P1 mean latency − 1) at 10 Mbit/s minus the same at 100 Mbit/s, "
                    "P1 10 / P2 400 ms, Netflix",
          config=config("loss-free, MPTCP over P1 10 / P2 400 ms and TCP over P1 10 ms, at 10 and 100 Mbit/s, "
                        "Netflix (the paper: P2 10-400 ms, all profiles, Fig. 4 vs 5)"),
          measure=smaller_at_10mbit,
          mismatch=join_notes(SCHEDULER, "at 10 Mbit/s our TCP over P1 queues most of each Netflix block, so its "
                                         "latency grows more than MPTCP's")),
    claim(P, "ditg-lossy-p1-gain-grows",
          statistic="100 × (1 − MPTCP ÷ TCP-over-P1 mean latency) with 4 % loss on P1 minus the same loss-free, per "
                    "profile",
          config=config("40 ms on both paths, 100 Mbit/s: 4 % loss on P1 only (loss-rtt40-p1-4pct) against "
                        "loss-free (sym-rtt40), TCP over P1 with P1's loss, Netflix and Maps (the paper: 0-4 % on P1 "
                        "at 10/40/100 ms, all three profiles, Fig. 6-8)"),
          measure=p1_gain_grows,
          mismatch=join_notes(LOSSY, RESTART, SCHEDULER)),
    claim(P, "ditg-lossy-p2-netflix", statistic="100 × (1 − MPTCP ÷ TCP-over-P1 mean latency), Netflix",
          config=config("40 ms on both paths, 100 Mbit/s, 4 % loss on P2 only (loss-rtt40-p2-4pct), TCP over the "
                        "loss-free P1 (sym-rtt40), Netflix (the paper: 1-4 % at 10/40/100 ms, Fig. 6)"),
          measure=vs_tcp([("netflix, 4 % on P2", "netflix", LOSS_P2)], REDUCTION,
                         "needs ditg Netflix loss-rtt40-p2-4pct (MP-2) and sym-rtt40 (TCP) runs"),
          mismatch=join_notes(LOSSY, PACED, RESTART, SCHEDULER)),
    claim(P, "ditg-lossy-p2-maps-docs", statistic="100 × (MPTCP ÷ TCP-over-P1 mean latency − 1), Maps",
          config=config("40 ms on both paths, 100 Mbit/s, 4 % loss on P2 only (loss-rtt40-p2-4pct), TCP over the "
                        "loss-free P1 (sym-rtt40), Maps only: the standard scale runs no lossy Docs tests (the paper: "
                        "Maps and Docs, 1-4 % at 10/40/100 ms, Fig. 7-8)"),
          measure=vs_tcp([("maps, 4 % on P2", "maps", LOSS_P2)], INCREASE,
                         "needs ditg Maps loss-rtt40-p2-4pct (MP-2) and sym-rtt40 (TCP) runs"),
          margin=20.0, margin_reason=MARGIN_20,
          mismatch=join_notes(LOSSY, RESTART, SCHEDULER)),
    claim(P, "ditg-lossy-both-reductions",
          statistic="100 × (1 − MPTCP ÷ TCP-over-P1 mean latency), TCP with P1's 4 %, per profile",
          config=config("40 ms and 4 % loss on both paths (loss-rtt40-both-4pct), TCP over P1 with 40 ms and 4 % "
                        "(loss-rtt40-p1-4pct), Netflix and Maps (the paper: 1-4 % at 10/40/100 ms, Fig. 6-7)"),
          measure=vs_tcp([(f"{a}, 4 % on both", a, LOSS_BOTH) for a in ("netflix", "maps")], REDUCTION,
                         "needs ditg loss-rtt40-both-4pct (MP-2) and loss-rtt40-p1-4pct (TCP) runs"),
          mismatch=join_notes(LOSSY, RESTART, SCHEDULER)),
    claim(P, "ditg-lossy-both-netflix", statistic="100 × (1 − MPTCP ÷ TCP-over-P1 mean latency), Netflix",
          config=config("40 ms and 4 % loss on both paths (loss-rtt40-both-4pct), TCP over P1 with 40 ms and 4 % "
                        "(loss-rtt40-p1-4pct), Netflix: the paper's configuration"),
          measure=vs_tcp([("netflix, 4 % on both", "netflix", LOSS_BOTH)], REDUCTION,
                         "needs ditg Netflix loss-rtt40-both-4pct (MP-2) and loss-rtt40-p1-4pct (TCP) runs"),
          mismatch=join_notes(LOSSY, RESTART, SCHEDULER)),
    claim(P, "ditg-lossy-both-maps", statistic="100 × (1 − MPTCP ÷ TCP-over-P1 mean latency), Maps",
          config=config("40 ms and 4 % loss on both paths (loss-rtt40-both-4pct), TCP over P1 with 40 ms and 4 % "
                        "(loss-rtt40-p1-4pct), Maps: the paper's configuration"),
          measure=vs_tcp([("maps, 4 % on both", "maps", LOSS_BOTH)], REDUCTION,
                         "needs ditg Maps loss-rtt40-both-4pct (MP-2) and loss-rtt40-p1-4pct (TCP) runs"),
          mismatch=join_notes(LOSSY, RESTART, SCHEDULER)),
    claim(P, "ditg-lossy-asym-rtt-dominates",
          statistic="100 × (MPTCP mean latency with P2 400 ms ÷ with P2 20 ms − 1) (P1 10 ms, loss-free) minus 100 × "
                    "(MPTCP mean latency with 4 % loss ÷ loss-free − 1) (40/40 ms), per profile and loss placement",
          config=config("MPTCP only: P1 10 / P2 20 and 400 ms loss-free (asym-rtt10-20, asym-rtt10-400) and 40/40 ms "
                        "loss-free and with 4 % on P1, on P2 or on both (sym-rtt40, loss-rtt40-*), Netflix and Maps; "
                        "the paper's statement is about Fig. 9's asymmetric lossy paths (P1 10 ms, P2 longer, with "
                        "loss), which the standard scale does not run"),
          measure=rtt_dominates,
          mismatch=join_notes("the two effects are measured at different base RTTs (10 and 40 ms) and without Fig. "
                              "9's combined configurations", LOSSY, SCHEDULER)),
]


# ------------------------------------------------------------------ lab checks

def _rtt_ratio(d: pl.DataFrame, side: str) -> np.ndarray:
    """Per run: the mean Karn RTT sample of one path side ÷ its configured RTT."""
    d = d.filter(pl.col(f"rtt_{side}_mean_ms").is_not_null() & (pl.col(f"rtt_{side}_ms") > 0))
    return values(d.with_columns(x=pl.col(f"rtt_{side}_mean_ms") / pl.col(f"rtt_{side}_ms")), "x")


def _loss_free_100(r: pl.DataFrame) -> pl.DataFrame:
    return r.filter(_eq("loss_wifi", 0) & _eq("rate_wifi_mbit", 100)
                    & (pl.col("loss_cell").is_null() | _eq("loss_cell", 0))
                    & (pl.col("rate_cell_mbit").is_null() | _eq("rate_cell_mbit", 100)))


# the median over runs: a run whose path queued (a slow-start burst into the 100-packet
# queue) or whose long path carried a handful of samples must not decide the emulator's
# delay (the mean's bootstrap-t interval explodes on such skewed run values)
RTT_STAT = stats.boot(lambda s: stats.med(s["x"]), ("x",), "median over runs of (mean Karn RTT ÷ configured RTT)")


def rtt_sym40(f: Facts) -> Measure:
    r, note = _runs(f)
    r = _loss_free_100(r).filter(_eq("rtt_wifi_ms", 40))
    mp = sel(r, mode="MP-2").filter(_eq("rtt_cell_ms", 40))
    tcp = sel(r, mode="SP-wifi")
    groups = [group(_p1_label(40), x=_rtt_ratio(pl.concat([tcp, mp], how="diagonal_relaxed"), "wifi")),
              group(_p2_label(40), x=_rtt_ratio(mp, "cell"))]
    return Measure(keep(*groups), RTT_STAT, note=note, missing="needs loss-free 100-Mbit/s ditg runs over 40-ms paths")


def rtt_asym(f: Facts) -> Measure:
    r, note = _runs(f)
    r = _loss_free_100(r).filter(_eq("rtt_wifi_ms", 10))
    mp = sel(r, mode="MP-2")
    groups = [group(_p1_label(10), x=_rtt_ratio(r, "wifi"))]
    groups += [group(_p2_label(x), x=_rtt_ratio(mp.filter(_eq("rtt_cell_ms", x)), "cell"))
               for x in (20, 40, 400)]
    return Measure(keep(*groups), RTT_STAT, note=note, missing="needs loss-free 100-Mbit/s ditg runs with P1 at 10 ms")


def _retx_rows(d: pl.DataFrame, side: str) -> np.ndarray:
    """Per run (retransmission rate × bytes, bytes) of one path side: pooled, the rate
    weighted by the bytes the path carried (a run whose path carried few packets counts
    little; run_facts has the side's bytes, not its packet count)."""
    d = d.filter(pl.col(f"loss_{side}_pct").is_not_null() & (pl.col(f"bytes_{side}") > 0))
    return d.select(num=pl.col(f"loss_{side}_pct") * pl.col(f"bytes_{side}").cast(pl.Float64),
                    den=pl.col(f"bytes_{side}").cast(pl.Float64)).to_numpy().reshape(-1, 2)


def loss_p1(f: Facts) -> Measure:
    r, note = _runs(f)
    tcp = sel(r, mode="SP-wifi").filter(_eq("loss_wifi", 0.04))
    return Measure(keep(group("TCP over P1, 4 %", p=_retx_rows(tcp, "wifi"))),
                   stats.pooled("p", percent=False, text="P1 retransmission rate (%), weighted by P1 bytes over runs"),
                   note=note, missing="needs ditg TCP runs with 4 % loss on P1 (loss-rtt40-p1-4pct)")


def loss_p2(f: Facts) -> Measure:
    r, note = _runs(f)
    mp = sel(r, mode="MP-2").filter(_eq("loss_cell", 0.04))
    return Measure(keep(group("MPTCP's P2 subflow, 4 %", p=_retx_rows(mp, "cell"))),
                   stats.pooled("p", percent=False, text="P2 retransmission rate (%), weighted by P2 bytes over runs"),
                   note=note, missing="needs ditg MP-2 runs with 4 % loss on P2 (loss-rtt40-p2-4pct, -both-4pct)")


def _pair_values(mp: pl.DataFrame, tcp: pl.DataFrame) -> np.ndarray:
    """Per pair of an MPTCP and a TCP run of one repetition (campaign seed, repetition):
    100 × (MPTCP's generated packets ÷ TCP's − 1) when both replayed the same schedule
    file (sha256), 100 when they did not (not the same traffic, whatever the counts)."""
    cols = [pl.col("campaign_seed").fill_null(-1), "repetition", "app_schedule_sha256", "app_sent_packets"]
    j = mp.select(cols).join(tcp.select(cols), on=["campaign_seed", "repetition"], suffix="_tcp")
    j = j.filter(pl.col("app_sent_packets_tcp") > 0)
    return values(j.with_columns(x=pl.when(pl.col("app_schedule_sha256") == pl.col("app_schedule_sha256_tcp"))
                                 .then(100 * (pl.col("app_sent_packets") / pl.col("app_sent_packets_tcp") - 1))
                                 .otherwise(100.0)), "x")


def offered_load(pairs_of) -> callable:
    """Per MPTCP configuration and profile: the pairs of its runs with their TCP baseline's
    of one repetition (``_pair_values``); the note names runs that generated fewer
    packets than their schedule holds."""
    def m(f: Facts) -> Measure:
        r, note = _runs(f, latency=False)
        r = r.filter(pl.col("app_sent_packets").is_not_null() & pl.col("app_schedule_sha256").is_not_null())
        groups = [group(_pair_label(app, c), x=_pair_values(_mp(r, app, c), _tcp(r, app, c)))
                  for c, apps in pairs_of for app in apps]
        short = r.filter(pl.col("app_sent_packets") != pl.col("app_schedule_packets"))
        if short.height:
            note = join_notes(note, f"{short.height} run(s) generated other than their schedule's packets: "
                                    + ", ".join(short["run_id"].head(5).to_list()))
        return Measure(keep(*groups), stats.mean("x", "mean over repetition pairs of 100 × (MPTCP ÷ TCP packets "
                                                       "generated by ITGSend − 1); 100 for a pair of two different "
                                                       "schedules"), note=note,
                       missing="needs ditg runs that replayed a schedule (result.schedule_sha256, sent_packets): "
                               "captures before the replayed schedules have none")
    return m


def _delivered_rows(d: pl.DataFrame) -> np.ndarray:
    """Per run (packets received with a latency, packets ITGSend generated)."""
    d = d.filter(pl.col("app_sent_packets").is_not_null() & (pl.col("app_sent_packets") > 0))
    return d.select(num=pl.col("app_packets").fill_null(0).cast(pl.Float64),
                    den=pl.col("app_sent_packets").cast(pl.Float64)).to_numpy().reshape(-1, 2)


def delivered(c: Cfg, apps: tuple[str, ...]) -> callable:
    """Per profile, MPTCP over ``c`` and its TCP baseline: Σ received ÷ Σ generated, in %."""
    def m(f: Facts) -> Measure:
        r, note = _runs(f, latency=False)
        groups = []
        for app in apps:
            groups += [group(_mp_label(app, c), p=_delivered_rows(_mp(r, app, c))),
                       group(_tcp_label(app, c), p=_delivered_rows(_tcp(r, app, c)))]
        rel = pl.concat([_mp(r, a, c) for a in apps] + [_tcp(r, a, c) for a in apps], how="diagonal_relaxed")
        late = rel.filter(pl.col("app_drained").eq(False))
        if late.height:
            note = join_notes(note, f"{late.height} run(s) did not drain within their limit: "
                                    + ", ".join(late["run_id"].unique().head(5).to_list()))
        return Measure(keep(*groups), stats.pooled("p", text="packets received (with a latency) ÷ packets ITGSend "
                                                           "generated, pooled over runs, %"), note=note,
                       missing=f"needs ditg runs over {c.text} (MP-2) and their TCP baseline with ITGSend's generated "
                               "packet count")
    return m


OFFERED_QUOTE = ("To obtain relevant traffic profiles for D-ITG, we used Wireshark and captured TCP traffic from "
                 "repeated real sessions ... In order to evaluate MPTCP, each test was run with both MPTCP and the "
                 "default Linux TCP")
OFFERED_MARGIN = ("declared with the replayed schedules, before their data: TCP and MPTCP of a repetition replay the "
                  "same schedule file (one draw per campaign seed, profile and repetition) and ITGSend sends exactly "
                  "its packets (-z), so any difference is a defect: a margin of 0")
OFFERED_CONFIG = ("ours: one schedule per campaign seed, profile and repetition (capture.ditg_schedule: numpy's PCG64 "
                  "seeded by a hash of the three), replayed by ITGSend -Ft/-Fs/-z; the schedule files' sha256 "
                  "(result.schedule_sha256) and the packets generated, from ITGDec on ITGSend's log "
                  "(result.sent_packets); 100 MiB send buffers; the paper: the same D-ITG profile over TCP and MPTCP")
DELIVERED_QUOTE = ("the latency a packet experienced from being sent by the ITGSend application on the Server until it "
                   "was received by the ITGRecv application on the Client, i.e., the application-level packet "
                   "latency, was measured")
DELIVERED_CONFIG = ("ours: each test drains after its schedule (ITGSend's close waits, SO_LINGER, until every byte is "
                    "acknowledged, up to 4 × the test + 20 s); received = packets with a latency (ITGDec on "
                    "ITGRecv's log, app_latency), generated = ITGDec on ITGSend's log (result.sent_packets)")
DELIVERED_TOLERANCE = ("declared with the draining protocol, before its data: TCP delivers every byte it accepted, so a "
                       "test that drained received 100 %; a packet missing is one still queued at the drain limit, "
                       "the longest-delayed of its run, and leaves the run's mean latency low by at least its share × "
                       "the limit. 0.1 % (one packet in a thousand) is the most a group may miss")
# every MPTCP configuration the claims compare (with its TCP baseline) and its profiles
DELIVERED = {"sym40": (SYM40, ("netflix", "maps", "docs")), "asym20": (ASYM20, ("netflix", "maps")),
             "asym40": (ASYM40, ("netflix", "maps")), "asym400": (ASYM400, ("netflix", "maps")),
             "asym400-10m": (ASYM400_10M, ("netflix",)), "loss-p1": (LOSS_P1, ("netflix", "maps")),
             "loss-p2": (LOSS_P2, ("netflix", "maps")), "loss-both": (LOSS_BOTH, ("netflix", "maps"))}
RTT_CONFIG = ("ours: linkem delay per path (rtt_ms = 2 × one-way delay, campaign.yaml), 100-packet queues; a lab check "
              "of the emulator: the mean Karn-filtered RTT sample (server trace) of loss-free 100-Mbit/s runs within "
              "± 20 % of the configured RTT (queueing at 100 Mbit/s adds at most 100 × 1500 B ÷ 100 Mbit/s = 12 ms, and "
              "little on average); the paper's RTTs are its configured Dummynet delays")
LOSS_CONFIG = ("ours: 4 % random loss on the data direction of the path (campaign.yaml); a lab check of the emulator: "
               "the retransmission rate (server trace: retransmitted ÷ data packets) within ± 20 % of the configured "
               "loss (it also counts spurious retransmissions and retransmissions lost again)")

RTT_TOLERANCE = ("a lab check of the emulator: the measured RTT within ± 20 % of the configured one (the declared "
                 "tolerance of findings/inventory.py; queueing adds to the configured delay)")
LOSS_TOLERANCE = ("a lab check of the emulator: the retransmission rate within ± 20 % of the configured 4 % (the "
                  "declared tolerance of findings/inventory.py; spurious retransmissions count too)")

CHECKS = [
    check(P, "lab-ditg-same-offered-load", quote=OFFERED_QUOTE, where="§III", phrase="no-difference", unit="%",
          says="TCP and MPTCP of a test carry the same application traffic",
          statistic="100 × (MPTCP ÷ TCP packets generated by ITGSend − 1) per repetition pair of one schedule file "
                    "(100 for two different schedules), mean over pairs, per configuration over 40-ms paths (loss-free "
                    "and lossy)",
          config=OFFERED_CONFIG, measure=offered_load(SYMMETRIC_PAIRS), margin=0.0, margin_reason=OFFERED_MARGIN,
          mismatch="a run whose ITGSend stopped before its schedule's end (a write blocked past its limit) generates "
                   "fewer packets; runs of two different schedules are not the same traffic"),
    check(P, "lab-ditg-same-offered-load-asym", quote=OFFERED_QUOTE, where="§III", phrase="no-difference", unit="%",
          says="TCP and MPTCP of a test carry the same application traffic",
          statistic="100 × (MPTCP ÷ TCP packets generated by ITGSend − 1) per repetition pair of one schedule file "
                    "(100 for two different schedules), mean over pairs, per configuration with P1 at 10 ms (100 and "
                    "10 Mbit/s)",
          config=OFFERED_CONFIG, measure=offered_load(ASYMMETRIC_PAIRS), margin=0.0, margin_reason=OFFERED_MARGIN,
          mismatch="a run whose ITGSend stopped before its schedule's end (a write blocked past its limit) generates "
                   "fewer packets; runs of two different schedules are not the same traffic"),
    check(P, "lab-ditg-rtt-sym40", quote="The bar graphs in Figure 3 show the mean of the average packet latencies in "
                                         "the symmetrical-path tests, i.e., the tests with the same RTTs on both network "
                                         "paths", where="§IV, Fig. 3; §V, Fig. 6-8", phrase="exact", value=1.0,
          precision=0.2, precision_reason=RTT_TOLERANCE, unit="×", says="both paths at the configured RTT (here 40 ms)",
          statistic="mean Karn RTT ÷ configured RTT per run, median over runs, per path",
          config=RTT_CONFIG, measure=rtt_sym40, mismatch="queueing in our 100-packet queues adds to the configured RTT"),
    check(P, "lab-ditg-rtt-asym", quote="the tests in which P1 had a fixt RTT of 10 ms while P2 had an RTT that was "
                                        "larger than the one of P1", where="§IV, Fig. 4-5", phrase="exact", value=1.0,
          precision=0.2, precision_reason=RTT_TOLERANCE, unit="×", says="P1 at 10 ms, P2 at the configured longer RTT",
          statistic="mean Karn RTT ÷ configured RTT per run, median over runs, per path and RTT",
          config=RTT_CONFIG, measure=rtt_asym, mismatch="queueing in our 100-packet queues adds to the configured RTT"),
    check(P, "lab-ditg-loss-p1", quote="MPTCP provided a relative reduction in packet latency of around 25% for "
                                       "Netflix in the test with a 40 ms RTT and a 4% packet-loss rate on both paths.",
          where="§V, Fig. 6-7", phrase="exact", value=4.0, precision=0.8, precision_reason=LOSS_TOLERANCE, unit="%",
          says="4 % packet loss on P1",
          statistic="P1 retransmission rate of TCP-over-P1 runs with 4 % loss, weighted by the bytes P1 carried "
                    "(server trace)",
          config=LOSS_CONFIG, measure=loss_p1,
          mismatch="spurious retransmissions and retransmissions lost again add to the 4 % of data packets dropped"),
    check(P, "lab-ditg-loss-p2", quote="even when the packet-loss rate was as high as 4%", where="§V, Fig. 6-7",
          phrase="exact", value=4.0, precision=0.8, precision_reason=LOSS_TOLERANCE, unit="%",
          says="4 % packet loss on P2",
          statistic="P2 retransmission rate of MPTCP runs with 4 % loss on P2 (only P2, or both), weighted by the "
                    "bytes P2 carried (server trace)",
          config=LOSS_CONFIG, measure=loss_p2,
          mismatch="MPTCP's P2 subflow may carry few packets per run; spurious retransmissions add to the drops"),
] + [
    check(P, f"lab-ditg-delivered-{key}", quote=DELIVERED_QUOTE, where="§III", phrase="exact", value=100.0,
          precision=0.1, precision_reason=DELIVERED_TOLERANCE, unit="%",
          says="every packet ITGSend sent is received by ITGRecv: its latency is measured",
          statistic=f"packets received ÷ packets generated, pooled over runs, per profile: MPTCP over {c.text} and "
                    "TCP over its P1",
          config=DELIVERED_CONFIG, measure=delivered(c, apps),
          mismatch="a test that did not drain within its limit (a stalled connection) misses its latest packets")
    for key, (c, apps) in DELIVERED.items()
]
