"""How we measure the Chen et al. statements of inventory.yaml ("A Measurement-based Study
of MultiPath TCP Performance over Wireless Networks", IMC 2013,
shared/seeds/chen-imc2013-mptcp-wireless.txt).

Our runs: campaign ``chen`` (campaign.yaml, scale ``standard``): HTTP downloads (nginx +
wget) over emulated links (profiles.yaml chen-*), five runs per configuration. The
scenario names the cellular carrier: ``att`` (home WiFi + AT&T LTE), ``verizon`` (home
WiFi + Verizon LTE), ``sprint`` (home WiFi + Sprint 3G EVDO), ``coffee-att`` (the loaded
coffee-shop hotspot + AT&T LTE); ``att-4path`` is AT&T's links again, for the 4-path
(MP-4) runs, and is read here as carrier ``att``. Single-path runs (SP-wifi, SP-lte)
use cubic; MPTCP runs use coupled LIA (the paper's default "coupled") unless the claim
compares congestion controls (then also olia and uncoupled New Reno, ``reno``);
congestion controls are never pooled.

The paper's summaries: download times and traffic shares are box plots (Fig. 2-10), so
a configuration's value is the median over runs; Table 6's out-of-order delay is the
mean over connections of each connection's mean; Fig. 13's fractions of packets pool
the packets of every connection of a carrier.
"""
from __future__ import annotations

import numpy as np
import polars as pl

from findings import stats
from findings.measure import Facts, Group, Measure, join_notes, pairs, values
from findings.registry import check, claim
from findings.stats import med

P = "chen"
LIA = "lia"  # the paper's "coupled" (MPTCP's default, RFC 6356)
KB8, KB64, KB512, MB4, MB8, MB16 = 8_000, 64_000, 512_000, 4_000_000, 8_000_000, 16_000_000
SP = ("SP-wifi", "SP-lte")

CONFIG = ("paper: Linux MPTCP v0.86 (kernel 3.5.7), live Comcast home WiFi (or a loaded coffee-shop hotspot) with "
          "AT&T LTE, Verizon LTE or Sprint 3G EVDO, Apache + wget HTTP downloads of 8 KB-32 MB, WiFi the default "
          "path, coupled congestion control unless stated (olia and uncoupled New Reno beside it in Fig. 4 and 9), "
          "ssthresh 64 KB, no metrics cache, 8 MB receive buffer, subflow penalisation removed, IW 10, SACK, 20 "
          "runs per configuration per day period and location over several weeks; ours: campaign chen at the "
          "standard scale, the same sysctls (profile chen2013), upstream MPTCP (kernel 6.18, default scheduler, "
          "in-kernel path manager) with the lab's BPF lia/olia and reno, single-path TCP cubic, nginx + wget, "
          "emulated links (profiles.yaml chen-*: home WiFi 20 Mbit/s 19 ms 2.1 % loss; AT&T LTE 8 Mbit/s 60 ms "
          "100 kB queue; Verizon 5 Mbit/s 75 ms 750 kB queue; Sprint 1.5 Mbit/s 300 ms ± 10 ms 200 kB queue "
          "0.5 % loss; coffee-shop WiFi 6 Mbit/s 20 ms ± 5 ms 3.5 % loss), five runs per configuration. "
          "Differs: stationary emulated links without cross traffic or time-of-day variation; sizes 8 KB-8 MB "
          "(AT&T; plus MP-2 at 16 MB), 64 KB and 4 MB (Verizon, Sprint; plus Sprint MP-2 and SP-wifi at 8 MB), "
          "4 MB (coffee shop), where the paper has 64 KB-16 MB (Fig. 2) and 8 KB-32 MB (Fig. 4, 9); five runs "
          "where the paper has dozens")
EMULATED = ("emulated links with fixed rates, delays, random loss and drop-tail queues (profiles.yaml chen-*) "
            "instead of the paper's live networks; upstream MPTCP's default scheduler and path manager differ from "
            "v0.86's")

# lab checks a claim's conditions rest on (CHECKS below)
W_LOSS, W_RTT = "lab-chen-wifi-loss", "lab-chen-wifi-rtt-4mb"
A_LOSS, A_RTT = "lab-chen-lte-loss", "lab-chen-att-rtt-4mb"
V_RTT, S_RTT = "lab-chen-verizon-rtt-64kb", "lab-chen-sprint-rtt-64kb"
WIFI = (W_LOSS, W_RTT)
# AT&T's loss-free path (< 0.1 %, Table 3) conditions where MPTCP routes the traffic (the
# share claims); the download-time and reordering claims rest on the paths' RTTs and the
# WiFi loss (our AT&T path loses ~0.25 % in slow start: drop-tail overflow at the queue
# that gives Table 3's 141 ms)
HOME_ATT = (W_LOSS, W_RTT, A_RTT)
SHARE_ATT = (*HOME_ATT, A_LOSS)
HOME_SPRINT = (W_LOSS, W_RTT, S_RTT)
EVERY = (*HOME_ATT, V_RTT, S_RTT)


# ------------------------------------------------------------------ selection

def _carrier(df: pl.DataFrame) -> pl.DataFrame:
    return df.with_columns(carrier=pl.when(pl.col("scenario") == "att-4path").then(pl.lit("att"))
                           .otherwise(pl.col("scenario")))


def _runs(f: Facts) -> tuple[pl.DataFrame, pl.DataFrame, str]:
    """(the runs that can be used, every run of the paper including stalled ones, note).
    The second decides which compared groups exist (a configuration the campaign ran),
    so a group whose runs all stalled shows as a group with too few runs, not as none."""
    r, note = f.of(P)
    design = f.runs.filter((pl.col("paper") == P) & ~pl.col("has_outages").fill_null(False))
    return _carrier(r), _carrier(design), note


def _cfg(df: pl.DataFrame, carrier: str, mode: str, size: int, cc: str = LIA) -> pl.DataFrame:
    """One configuration's runs: single-path runs whatever their (cubic) congestion control, MPTCP runs of ``cc``."""
    d = df.filter((pl.col("carrier") == carrier) & (pl.col("mode") == mode) & (pl.col("size_bytes") == size))
    return d if mode in SP else d.filter(pl.col("congestion_control") == cc)


def _sizes(design: pl.DataFrame, carrier: str, mode: str, cc: str = LIA) -> list[int]:
    """The sizes at which the campaign ran one configuration, ascending."""
    d = design.filter((pl.col("carrier") == carrier) & (pl.col("mode") == mode) & (pl.col("size_bytes") > 0))
    if mode not in SP:
        d = d.filter(pl.col("congestion_control") == cc)
    return sorted(d["size_bytes"].unique().to_list())


def _size(b: int) -> str:
    return f"{b // 1_000_000} MB" if b % 1_000_000 == 0 else f"{b // 1000} KB"


def _group(r: pl.DataFrame, design: pl.DataFrame, label: str, column: str, **roles) -> Group | None:
    """A compared group of per-run values of ``column``, one role per configuration
    ``(carrier, mode, size[, cc])``; None when the campaign did not run one of them."""
    if any(not _cfg(design, *spec).height for spec in roles.values()):
        return None
    return Group(label, {k: values(_cfg(r, *spec), column) for k, spec in roles.items()})


def _keep(*groups: Group | None) -> list[Group]:
    return [g for g in groups if g is not None]


# ------------------------------------------------------------------ statistics

def _best(s: stats.Samples, keys=("sp_wifi", "sp_cell")) -> np.ndarray:
    """Per resample: the faster single path's median download time (of the single paths the group has)."""
    return np.min(np.stack([med(s[k]) for k in keys if k in s]), axis=0)


MP_OVER_BEST = stats.boot(lambda s: med(s["mp"]) / _best(s), ("mp", "sp_wifi", "sp_cell"),
                          "median MPTCP download time ÷ the faster single path's median")
WIFI_OVER_OTHERS = stats.boot(lambda s: med(s["sp_wifi"]) / np.minimum(med(s["sp_cell"]), med(s["mp"])),
                              ("sp_wifi", "sp_cell", "mp"),
                              "median SP-WiFi download time ÷ the faster of SP-cellular and MP-2")


def _gain_growth(s: stats.Samples) -> np.ndarray:
    """(MP ÷ best single path) at the large size ÷ the same at the small size."""
    return (med(s["mp_l"]) / _best(s, ("wifi_l", "cell_l"))) / (med(s["mp_s"]) / _best(s, ("wifi_s", "cell_s")))


# ------------------------------------------------------------------ download time: MPTCP vs single paths

def _mp_vs_best(f: Facts, carriers, sizes=None, modes=("MP-2",)) -> tuple[list[Group], str]:
    """Per carrier, size and MPTCP mode (lia): MPTCP and both single paths' download times,
    where the campaign ran all three."""
    r, design, note = _runs(f)
    groups = []
    for c in carriers:
        for mode in modes:
            for b in _sizes(design, c, mode):
                if sizes is not None and not sizes(b):
                    continue
                label = f"{c} {_size(b)}" if modes == ("MP-2",) else f"{mode} {c} {_size(b)}"
                groups.append(_group(r, design, label, "download_time_s", mp=(c, mode, b),
                                     sp_wifi=(c, "SP-wifi", b), sp_cell=(c, "SP-lte", b)))
    return _keep(*groups), join_notes(note, "MPTCP runs with lia (coupled)")


def close_to_best(f: Facts) -> Measure:
    groups, note = _mp_vs_best(f, ("att", "verizon", "sprint"))
    return Measure(groups, MP_OVER_BEST, note=note,
                   missing="needs chen att/verizon/sprint runs with SP-wifi, SP-lte and MP-2 (lia) at one size")


def coffee_close_to_best(f: Facts) -> Measure:
    groups, note = _mp_vs_best(f, ("coffee-att",))
    return Measure(groups, MP_OVER_BEST, note=note,
                   missing="needs chen coffee-att runs with SP-wifi, SP-lte and MP-2 (lia)")


def large_beats_best(f: Facts) -> Measure:
    groups, note = _mp_vs_best(f, ("att",), sizes=lambda b: b >= MB8, modes=("MP-2", "MP-4"))
    return Measure(groups, MP_OVER_BEST, note=note,
                   missing="needs chen att runs of 8 MB or more with SP-wifi, SP-lte and MP-2/MP-4 (lia)")


def mp2_beats_sp_small(f: Facts) -> Measure:
    groups, note = _mp_vs_best(f, ("att",), sizes=lambda b: KB512 <= b <= MB4)
    return Measure(groups, MP_OVER_BEST, note=note,
                   missing="needs chen att runs at 512 KB and 4 MB with SP-wifi, SP-lte and MP-2 (lia)")


def large_poor_cellular(f: Facts) -> Measure:
    r, design, note = _runs(f)
    groups = []
    for b in _sizes(design, "sprint", "MP-2"):
        if b < MB4:
            continue
        roles = dict(mp=("sprint", "MP-2", b), sp_wifi=("sprint", "SP-wifi", b))
        if _cfg(design, "sprint", "SP-lte", b).height:
            roles["sp_cell"] = ("sprint", "SP-lte", b)
        groups.append(_group(r, design, f"sprint {_size(b)}" + ("" if "sp_cell" in roles else " (vs SP-wifi)"),
                             "download_time_s", **roles))
    return Measure(_keep(*groups), MP_OVER_BEST,
                   note=join_notes(note, "MPTCP runs with lia; at 8 MB the campaign runs SP-wifi only (Sprint 3G "
                                         "at 1.5 Mbit/s needs > 40 s for 8 MB), so the best single path there is "
                                         "SP-wifi"),
                   missing="needs chen sprint runs of 4 MB or more with MP-2 (lia) and SP-wifi")


def small_wifi_best(f: Facts) -> Measure:
    r, design, note = _runs(f)
    groups = [_group(r, design, f"{c} {_size(b)}", "download_time_s", sp_wifi=(c, "SP-wifi", b),
                     sp_cell=(c, "SP-lte", b), mp=(c, "MP-2", b))
              for c in ("att", "verizon", "sprint") for b in _sizes(design, c, "SP-wifi") if b <= KB64]
    return Measure(_keep(*groups), WIFI_OVER_OTHERS, note=join_notes(note, "MPTCP runs with lia"),
                   missing="needs chen runs of 64 KB or less with SP-wifi, SP-lte and MP-2 (lia)")


def coffee_wifi_not_best(f: Facts) -> Measure:
    r, design, note = _runs(f)
    groups = [_group(r, design, f"coffee-att {_size(b)}", "download_time_s", sp_wifi=("coffee-att", "SP-wifi", b),
                     sp_cell=("coffee-att", "SP-lte", b), mp=("coffee-att", "MP-2", b))
              for b in _sizes(design, "coffee-att", "SP-wifi")]
    return Measure(_keep(*groups), WIFI_OVER_OTHERS, note=join_notes(note, "MPTCP runs with lia"),
                   missing="needs chen coffee-att runs with SP-wifi, SP-lte and MP-2 (lia)")


def lte_gain_grows(f: Facts) -> Measure:
    """Per LTE carrier: the smallest size of Fig. 2 (64 KB) against the largest size at
    which the campaign ran all three configurations."""
    r, design, note = _runs(f)
    groups = []
    for c in ("att", "verizon"):
        full = [b for b in _sizes(design, c, "MP-2")
                if _cfg(design, c, "SP-wifi", b).height and _cfg(design, c, "SP-lte", b).height]
        large = max(full, default=None)
        if large is None or KB64 not in full or large <= KB64:
            continue
        groups.append(_group(r, design, f"{c} {_size(large)} vs 64 KB", "download_time_s",
                             mp_l=(c, "MP-2", large), wifi_l=(c, "SP-wifi", large), cell_l=(c, "SP-lte", large),
                             mp_s=(c, "MP-2", KB64), wifi_s=(c, "SP-wifi", KB64), cell_s=(c, "SP-lte", KB64)))
    stat = stats.boot(_gain_growth, ("mp_l", "wifi_l", "cell_l", "mp_s", "wifi_s", "cell_s"),
                      "(MP-2 ÷ best single path median) at the large size ÷ at 64 KB")
    return Measure(_keep(*groups), stat, note=join_notes(note, "MPTCP runs with lia"),
                   missing="needs chen att/verizon runs with SP-wifi, SP-lte and MP-2 (lia) at 64 KB and a larger "
                           "size")


def lte_beats_wifi(f: Facts) -> Measure:
    r, design, note = _runs(f)
    groups = [_group(r, design, f"{c} {_size(b)}", "download_time_s", a=(c, "SP-lte", b), b=(c, "SP-wifi", b))
              for c in ("att", "verizon") for b in _sizes(design, c, "SP-lte") if b >= KB512]
    return Measure(_keep(*groups), stats.median_ratio("a", "b"), note=note,
                   missing="needs chen att/verizon SP-lte and SP-wifi runs of 512 KB or more")


def wifi_beats_3g(f: Facts) -> Measure:
    r, design, note = _runs(f)
    groups = [_group(r, design, f"sprint {_size(b)}", "download_time_s", a=("sprint", "SP-wifi", b),
                     b=("sprint", "SP-lte", b)) for b in _sizes(design, "sprint", "SP-lte")]
    return Measure(_keep(*groups), stats.median_ratio("a", "b"), note=note,
                   missing="needs chen sprint SP-wifi and SP-lte runs")


# ------------------------------------------------------------------ number of subflows, congestion control

def mp4_beats_mp2(f: Facts) -> Measure:
    r, design, note = _runs(f)
    groups = [_group(r, design, f"att {_size(b)}", "download_time_s", a=("att", "MP-4", b), b=("att", "MP-2", b))
              for b in _sizes(design, "att", "MP-4") if b >= MB4]
    return Measure(_keep(*groups), stats.median_ratio("a", "b"), note=join_notes(note, "lia (coupled) runs"),
                   missing="needs chen att MP-4 and MP-2 (lia) runs of 4 MB or more")


def mp4_gain_grows(f: Facts) -> Measure:
    r, design, note = _runs(f)
    both = [b for b in _sizes(design, "att", "MP-4") if b <= MB4 and _cfg(design, "att", "MP-2", b).height]
    if len(both) < 2:
        return Measure(missing="needs chen att MP-4 and MP-2 (lia) runs at two sizes of 4 MB or less", note=note)
    s, l_ = both[0], both[-1]
    g = _group(r, design, f"att {_size(l_)} − {_size(s)}", "download_time_s", mp4_l=("att", "MP-4", l_),
               mp2_l=("att", "MP-2", l_), mp4_s=("att", "MP-4", s), mp2_s=("att", "MP-2", s))
    stat = stats.boot(lambda x: 100 * ((1 - med(x["mp4_l"]) / med(x["mp2_l"])) - (1 - med(x["mp4_s"]) / med(x["mp2_s"]))),
                      ("mp4_l", "mp2_l", "mp4_s", "mp2_s"),
                      "MP-4's gain over MP-2, 100 × (1 − median MP-4 ÷ median MP-2), at the large size minus at "
                      "the small size")
    return Measure(_keep(g), stat, note=join_notes(note, "lia (coupled) runs"))


def _cc_groups(f: Facts, pairs_, sizes) -> tuple[list[Group], str]:
    """AT&T MP-2: per size and pair of congestion controls (a, b), the two download times."""
    r, design, note = _runs(f)
    groups = []
    for b in _sizes(design, "att", "MP-2", pairs_[0][1]):
        if not sizes(b):
            continue
        for a, base in pairs_:
            groups.append(_group(r, design, f"{a} vs {base}, att {_size(b)}", "download_time_s",
                                 a=("att", "MP-2", b, a), b=("att", "MP-2", b, base)))
    return _keep(*groups), note


def cc_small_flows(f: Facts) -> Measure:
    groups, note = _cc_groups(f, (("lia", "reno"), ("olia", "reno")), lambda b: b <= KB512)
    stat = stats.boot(lambda s: 100 * (med(s["a"]) / med(s["b"]) - 1), ("a", "b"),
                      "100 × (median download time ÷ reno's median − 1)")
    return Measure(groups, stat, note=note, missing="needs chen att MP-2 runs ≤ 512 KB with lia, olia and reno")


OLIA_GAIN = stats.boot(lambda s: 100 * (1 - med(s["a"]) / med(s["b"])), ("a", "b"),
                       "100 × (1 − olia's median download time ÷ lia's median)")


def olia_vs_coupled(f: Facts) -> Measure:
    groups, note = _cc_groups(f, (("olia", "lia"),), lambda b: b >= MB8)
    return Measure(groups, OLIA_GAIN, note=note, missing="needs chen att MP-2 runs of 8 MB or more with lia and olia")


def olia_4mb_similar(f: Facts) -> Measure:
    groups, note = _cc_groups(f, (("olia", "lia"),), lambda b: b == MB4)
    return Measure(groups, OLIA_GAIN, note=note, missing="needs chen att MP-2 runs of 4 MB with lia and olia")


def reno_beats_coupled(f: Facts) -> Measure:
    groups, note = _cc_groups(f, (("reno", "lia"), ("reno", "olia")), lambda b: b >= MB4)
    return Measure(groups, stats.median_ratio("a", "b"), note=note,
                   missing="needs chen att MP-2 runs of 4 MB or more with reno, lia and olia")


# ------------------------------------------------------------------ traffic share on the cellular path

def _share_groups(f: Facts, specs) -> tuple[list[Group], str]:
    """Median cellular share per (carrier, mode, cc) configuration and size (``specs``:
    (carrier, mode, cc, size filter))."""
    r, design, note = _runs(f)
    groups = []
    for c, mode, cc, sizes in specs:
        for b in _sizes(design, c, mode, cc):
            if sizes(b):
                label = f"{mode}{'' if cc == LIA else ' ' + cc} {c} {_size(b)}"
                groups.append(_group(r, design, label, "cell_share_pct", x=(c, mode, b, cc)))
    return _keep(*groups), note


def cell_share_4mb(f: Facts) -> Measure:
    groups, note = _share_groups(f, [("att", m, LIA, lambda b: b == MB4) for m in ("MP-2", "MP-4")])
    return Measure(groups, stats.median("x"), note=join_notes(note, "lia (coupled) runs"),
                   missing="needs chen att MP-2/MP-4 (lia) runs of 4 MB")


def cell_share_large(f: Facts) -> Measure:
    specs = [("att", "MP-2", cc, lambda b: b >= MB8) for cc in ("lia", "olia", "reno")]
    groups, note = _share_groups(f, specs + [("att", "MP-4", LIA, lambda b: b >= MB8)])
    return Measure(groups, stats.median("x"), note=note,
                   missing="needs chen att MP-2/MP-4 runs of 8 MB or more")


def sprint_mostly_wifi(f: Facts) -> Measure:
    groups, note = _share_groups(f, [("sprint", "MP-2", LIA, lambda b: b <= MB4)])
    return Measure(groups, stats.median("x"), note=join_notes(note, "lia (coupled) runs; the paper's small flows: "
                                                                    "8 KB-4 MB"),
                   missing="needs chen sprint MP-2 (lia) runs of 4 MB or less")


def offload_grows(f: Facts) -> Measure:
    """Per LTE carrier: MP-2's median cellular share at the largest size of 4 MB or less
    that the campaign ran minus at 64 KB (the sizes both carriers have)."""
    r, design, note = _runs(f)
    groups = []
    for c in ("att", "verizon"):
        sizes = [b for b in _sizes(design, c, "MP-2") if KB64 <= b <= MB4]
        if KB64 in sizes and sizes[-1] > KB64:
            groups.append(_group(r, design, f"{c} {_size(sizes[-1])} − 64 KB", "cell_share_pct",
                                 a=(c, "MP-2", sizes[-1]), b=(c, "MP-2", KB64)))
    return Measure(_keep(*groups), stats.median_diff("a", "b"), note=join_notes(note, "lia (coupled) runs"),
                   missing="needs chen att/verizon MP-2 (lia) runs at 64 KB and a larger size")


def coffee_more_cell_share(f: Facts) -> Measure:
    r, design, note = _runs(f)
    groups = [_group(r, design, f"{_size(b)}: coffee shop − home", "cell_share_pct", a=("coffee-att", "MP-2", b),
                     b=("att", "MP-2", b)) for b in _sizes(design, "coffee-att", "MP-2")]
    return Measure(_keep(*groups), stats.median_diff("a", "b"), note=join_notes(note, "lia (coupled) runs"),
                   missing="needs chen MP-2 (lia) runs of one size in coffee-att and att")


# ------------------------------------------------------------------ out-of-order delay

def _ofo_runs(f: Facts) -> tuple[pl.DataFrame, pl.DataFrame, str]:
    r, design, note = _runs(f)
    r = r.with_columns(ofo_out=pl.col("ofo_packets") - pl.col("ofo_in_order"))
    return r, design, join_notes(note, "MP-2 runs with lia (coupled), as the paper's §5 traces")


def _pooled(f: Facts, carriers, num: str) -> tuple[list[Group], str]:
    """Per carrier: (packets counted by ``num``, packets) of every MP-2 (lia) run of 4 MB or
    more (Fig. 13 pools the packets of the §4 connections larger than 512 KB)."""
    r, design, note = _ofo_runs(f)
    groups = []
    for c in carriers:
        sizes = [b for b in _sizes(design, c, "MP-2") if b >= MB4]
        if not sizes:
            continue
        runs = pl.concat([_cfg(r, c, "MP-2", b) for b in sizes])
        groups.append(Group(f"{c} ({', '.join(_size(b) for b in sizes)})", {"packets": pairs(runs, num, "ofo_packets")}))
    return groups, join_notes(note, "sizes ≥ 4 MB pooled per carrier")


def lte_in_order(f: Facts) -> Measure:
    groups, note = _pooled(f, ("att", "verizon"), "ofo_in_order")
    return Measure(groups, stats.pooled("packets", text="packets in order ÷ packets, pooled over runs"), note=note,
                   missing="needs chen att/verizon MP-2 (lia) runs of 4 MB or more with out-of-order samples")


def sprint_out_of_order(f: Facts) -> Measure:
    groups, note = _pooled(f, ("sprint",), "ofo_out")
    return Measure(groups, stats.pooled("packets", text="packets out of order ÷ packets, pooled over runs"),
                   note=note, missing="needs chen sprint MP-2 (lia) runs of 4 MB or more with out-of-order samples")


def sprint_ofo_over_150(f: Facts) -> Measure:
    groups, note = _pooled(f, ("sprint",), "ofo_over_150ms")
    return Measure(groups, stats.pooled("packets", text="packets with out-of-order delay > 150 ms ÷ packets, "
                                                        "pooled over runs"),
                   note=note, missing="needs chen sprint MP-2 (lia) runs of 4 MB or more with out-of-order samples")


def ofo_sprint_vs_att(f: Facts) -> Measure:
    r, design, note = _ofo_runs(f)
    groups = [_group(r, design, _size(b), "ofo_mean_ms", a=("sprint", "MP-2", b), b=("att", "MP-2", b))
              for b in _sizes(design, "sprint", "MP-2") if b >= MB4]
    return Measure(_keep(*groups), stats.mean_ratio("a", "b"), note=note,
                   missing="needs chen sprint and att MP-2 (lia) runs of one size ≥ 4 MB with out-of-order samples")


def ofo_mean(carrier: str):
    def m(f: Facts) -> Measure:
        r, design, note = _ofo_runs(f)
        g = _group(r, design, f"{carrier} 4 MB", "ofo_mean_ms", x=(carrier, "MP-2", MB4))
        return Measure(_keep(g), stats.mean("x"), note=note,
                       missing=f"needs chen {carrier} MP-2 (lia) runs of 4 MB with out-of-order samples")
    return m


def lte_ofo_decreases(f: Facts) -> Measure:
    r, design, note = _ofo_runs(f)
    sizes = _sizes(design, "att", "MP-2")
    large = [b for b in sizes if b >= MB16]
    if not large:
        return Measure(missing="needs chen att MP-2 (lia) runs of 16 MB or more", note=note)
    groups = [_group(r, design, f"att {_size(b)} − {_size(large[0])}", "ofo_mean_ms", a=("att", "MP-2", b),
                     b=("att", "MP-2", large[0])) for b in sizes if b in (MB4, MB8)]
    return Measure(_keep(*groups), stats.mean_diff("a", "b"),
                   note=join_notes(note, "AT&T only: the campaign runs Verizon at 4 MB only"),
                   missing="needs chen att MP-2 (lia) runs at 4 or 8 MB and at 16 MB")


# ------------------------------------------------------------------ the claims

DT = "median download time (client: first SYN to last data packet)"
SHARE = "median over runs of the cellular share of payload bytes (server trace)"
OFO_CONFIG = (CONFIG + "; out-of-order delay per packet at the client (arrival to in-order data sequence), as §3.3; "
              "Table 6/Fig. 13 pool the paper's 4-32 MB connections, ours are 4 and 8 MB (Sprint), 4, 8 and 16 MB "
              "(AT&T), 4 MB (Verizon)")
OFO_MISMATCH = ("our cellular paths are emulated with a fixed base RTT and a drop-tail queue (Sprint also ± 10 ms "
                "jitter), not the live networks' varying RTTs (Fig. 12); reordering delay follows the RTT "
                "difference between the subflows, which our queues set")
SCHED = ("upstream MPTCP's default scheduler fills the lowest-RTT subflow first; the split follows our emulated "
         "rates, queues and WiFi loss")

CLAIMS = [
    claim(P, "chen-close-to-best", statistic=f"MP-2 (lia) {DT} ÷ the faster single path's, per carrier and size",
          config=CONFIG, measure=close_to_best, checks=EVERY, mismatch=EMULATED),
    claim(P, "chen-large-beats-best", statistic=f"MPTCP (lia) {DT} ÷ the faster single path's, AT&T, per mode "
                                                "(MP-2, MP-4) and size ≥ 8 MB",
          config=CONFIG + "; Fig. 9's 8-32 MB: ours 8 MB (the largest size with single-path runs)",
          measure=large_beats_best, checks=HOME_ATT,
          mismatch=f"{EMULATED}; our LTE (8 Mbit/s) and WiFi (20 Mbit/s, 2.1 % loss) rates are read off the "
                   "paper's tables and Fig. 11, not measured"),
    claim(P, "chen-large-poor-cellular", statistic=f"MP-2 (lia) {DT} ÷ the faster single path's, Sprint, per size "
                                                   "≥ 4 MB (at 8 MB: ÷ SP-wifi's)",
          config=CONFIG + "; Fig. 2's Sprint 2 and 16 MB: ours 4 and 8 MB", measure=large_poor_cellular,
          checks=HOME_SPRINT,
          mismatch="our 3G path has a fixed 300 ms base RTT and a 200 kB queue, not Sprint's RTT variations of "
                   "seconds (§4); upstream MPTCP retransmits a stuck 3G segment on WiFi sooner than v0.86 may"),
    claim(P, "chen-lte-gain-grows-with-size",
          statistic=f"(MP-2 (lia) {DT} ÷ the faster single path's) at the largest size with single-path runs ÷ the "
                    "same at 64 KB, per LTE carrier",
          config=CONFIG + "; AT&T 8 MB vs 64 KB, Verizon 4 MB vs 64 KB", measure=lte_gain_grows,
          checks=HOME_ATT, mismatch=EMULATED),
    claim(P, "chen-small-wifi-best", statistic=f"SP-wifi {DT} ÷ the faster of SP-cellular's and MP-2 (lia)'s, per "
                                               "carrier and size ≤ 64 KB",
          config=CONFIG + "; AT&T 8 and 64 KB, Verizon and Sprint 64 KB", measure=small_wifi_best, checks=EVERY,
          mismatch="MP-2 with WiFi as its first subflow sends a small file almost wholly on WiFi, so it ties with "
                   "SP-wifi; 2.1 % random WiFi loss in a 45-packet transfer slows single runs at random"),
    claim(P, "chen-offload-grows-with-size",
          statistic=f"MP-2 (lia) {SHARE} at 4 MB minus at 64 KB, per LTE carrier (percentage points)",
          config=CONFIG + "; Fig. 3's 64 KB-16 MB: ours 64 KB and 4 MB", measure=offload_grows,
          checks=SHARE_ATT, mismatch=SCHED),
    claim(P, "chen-sprint-mostly-wifi", statistic=f"MP-2 (lia) {SHARE}, Sprint, per size ≤ 4 MB",
          config=CONFIG + "; Sprint 64 KB and 4 MB", measure=sprint_mostly_wifi, checks=HOME_SPRINT, mismatch=SCHED),
    claim(P, "chen-lte-beats-wifi", statistic=f"SP-lte {DT} ÷ SP-wifi's, per LTE carrier and size ≥ 512 KB",
          config=CONFIG + "; AT&T 512 KB, 4 and 8 MB; Verizon 4 MB", measure=lte_beats_wifi,
          checks=HOME_ATT,
          mismatch="which single path is faster follows our configured rates and WiFi loss (cubic over 2.1 % "
                   "random loss at 20 ms against a loss-free 8 or 5 Mbit/s LTE link)"),
    claim(P, "chen-wifi-beats-3g", statistic=f"SP-wifi {DT} ÷ SP-lte's (Sprint 3G), per size",
          config=CONFIG + "; Sprint 64 KB and 4 MB", measure=wifi_beats_3g, checks=HOME_SPRINT, mismatch=EMULATED),
    claim(P, "chen-mp2-beats-sp-small", statistic=f"MP-2 (lia) {DT} ÷ the faster single path's, AT&T, 512 KB and "
                                                  "4 MB",
          config=CONFIG + "; Fig. 4's sizes where the trend shows (512 KB, 4 MB)", measure=mp2_beats_sp_small,
          checks=HOME_ATT, mismatch=EMULATED),
    claim(P, "chen-mp4-beats-mp2", statistic=f"MP-4 ÷ MP-2 {DT} (lia), AT&T, per size ≥ 4 MB",
          config=CONFIG + "; Fig. 9's 4-32 MB: ours 4 and 8 MB; MP-4: the server's second address adds two "
                          "subflows over the same two emulated links (scenario att-4path)",
          measure=mp4_beats_mp2, checks=HOME_ATT,
          mismatch="our links carry no other users' traffic: two subflows sharing an emulated bottleneck get no "
                   "more than one once out of slow start, while in the wild extra subflows take a larger share "
                   "from background flows"),
    claim(P, "chen-mp4-gain-grows-with-size",
          statistic="MP-4's gain over MP-2, 100 × (1 − median MP-4 ÷ median MP-2 download time) (lia), AT&T, at "
                    "4 MB minus at 8 KB (percentage points)",
          config=CONFIG + "; Fig. 4's 8 KB and 4 MB (scenario att-4path for MP-4)", measure=mp4_gain_grows,
          checks=HOME_ATT,
          mismatch="as chen-mp4-beats-mp2: without cross traffic the extra subflows gain only through their slow "
                   "starts"),
    claim(P, "chen-cc-small-flows",
          statistic="100 × (median MP-2 download time with lia or olia ÷ with reno − 1), AT&T, per size ≤ 512 KB",
          config=CONFIG + "; Fig. 4: MP-2 with lia, olia, reno at 8, 64, 512 KB", measure=cc_small_flows,
          checks=HOME_ATT, margin=5.0,
          margin_reason="the paper calls olia 'similar' to coupled at 4 MB while it calls a 5 % difference at 8 MB "
                        "an improvement ('reduces the download latencies ... by 5%'), so in its own usage "
                        "differences under 5 % are 'not much difference'",
          mismatch="the lab's lia and olia are BPF re-implementations on upstream MPTCP; at these sizes the "
                   "transfer mostly ends in slow start, where the three do not differ"),
    claim(P, "chen-olia-vs-coupled",
          statistic="100 × (1 − olia's median MP-2 download time ÷ lia's), AT&T, 8 MB",
          config=CONFIG + "; Fig. 9's 8 MB (the paper's 6 % at 16 MB and 10 % at 32 MB are not run at the standard "
                          "scale: 16 MB has lia runs only)", measure=olia_vs_coupled, checks=HOME_ATT,
          mismatch="the lab's lia and olia are BPF re-implementations on upstream MPTCP; without cross traffic "
                   "olia's better load balancing in the network (the paper's reason, §4.2) has little to act on"),
    claim(P, "chen-olia-4mb-similar", statistic="100 × (1 − olia's median MP-2 download time ÷ lia's), AT&T, 4 MB",
          config=CONFIG + "; Fig. 9's 4 MB", measure=olia_4mb_similar, checks=HOME_ATT, margin=5.0,
          margin_reason="the paper calls olia 'similar' to coupled at 4 MB while it calls a 5 % difference at 8 MB "
                        "an improvement, so in its own usage differences under 5 % are 'similar'",
          mismatch="the lab's lia and olia are BPF re-implementations on upstream MPTCP"),
    claim(P, "chen-reno-beats-coupled-large",
          statistic="reno's median MP-2 download time ÷ lia's and ÷ olia's, AT&T, per size ≥ 4 MB",
          config=CONFIG + "; Fig. 9's 4-32 MB: ours 4 and 8 MB", measure=reno_beats_coupled, checks=HOME_ATT,
          mismatch="uncoupled reno is more aggressive than the coupled controllers only where the subflows "
                   "compete; our WiFi's random loss limits every controller alike"),
    claim(P, "chen-cell-share-4mb", statistic=f"{SHARE}, MP-2 and MP-4 (lia), AT&T, 4 MB",
          config=CONFIG + "; Fig. 5's 4 MB", measure=cell_share_4mb, checks=SHARE_ATT, mismatch=SCHED),
    claim(P, "chen-cell-share-large", statistic=f"{SHARE}, per configuration (MP-2 lia/olia/reno, MP-4 lia) and "
                                                "size ≥ 8 MB, AT&T",
          config=CONFIG + "; Fig. 10's 8-32 MB: ours 8 MB (MP-2 lia also 16 MB); MP-4 with lia only",
          measure=cell_share_large, checks=SHARE_ATT, mismatch=SCHED),
    claim(P, "chen-coffee-wifi-not-best",
          statistic=f"SP-wifi {DT} ÷ the faster of SP-lte's and MP-2 (lia)'s, coffee-shop hotspot + AT&T",
          config=CONFIG + "; Fig. 6's 8 KB-4 MB: ours 4 MB; the hotspot is emulated (chen-wifi-coffee: 6 Mbit/s, "
                          "3.5 % loss, ± 5 ms jitter, from Table 4) instead of 15-20 live customers",
          measure=coffee_wifi_not_best, checks=(A_LOSS,),
          mismatch="our hotspot's load is a lower rate and higher random loss, not other customers' traffic"),
    claim(P, "chen-coffee-close-to-best", statistic=f"MP-2 (lia) {DT} ÷ the faster single path's, coffee-shop "
                                                    "hotspot + AT&T",
          config=CONFIG + "; Fig. 6's 8 KB-4 MB: ours 4 MB; emulated hotspot (chen-wifi-coffee)",
          measure=coffee_close_to_best, checks=(A_LOSS,),
          mismatch="our hotspot's load is a lower rate and higher random loss, not other customers' traffic"),
    claim(P, "chen-coffee-more-cell-share",
          statistic=f"MP-2 (lia) {SHARE} with the coffee-shop hotspot minus with the home WiFi (AT&T), per size "
                    "(percentage points)",
          config=CONFIG + "; Fig. 7 vs Fig. 5 at 4 MB", measure=coffee_more_cell_share, checks=(W_LOSS, A_LOSS),
          mismatch=SCHED),
    claim(P, "chen-lte-in-order", statistic="packets with out-of-order delay 0 ÷ all packets at the client, pooled "
                                            "over MP-2 (lia) runs ≥ 4 MB, per LTE carrier",
          config=OFO_CONFIG, measure=lte_in_order, checks=(*HOME_ATT, V_RTT), mismatch=OFO_MISMATCH),
    claim(P, "chen-3g-out-of-order", statistic="packets with out-of-order delay > 0 ÷ all packets at the client, "
                                               "pooled over MP-2 (lia) runs ≥ 4 MB, Sprint",
          config=OFO_CONFIG, measure=sprint_out_of_order, checks=HOME_SPRINT, mismatch=OFO_MISMATCH),
    claim(P, "chen-3g-ofo-over-150ms", statistic="packets with out-of-order delay > 150 ms ÷ all packets at the "
                                                 "client, pooled over MP-2 (lia) runs ≥ 4 MB, Sprint",
          config=OFO_CONFIG, measure=sprint_ofo_over_150, checks=HOME_SPRINT, mismatch=OFO_MISMATCH),
    claim(P, "chen-ofo-sprint-vs-att",
          statistic="mean over Sprint MP-2 (lia) runs of the per-connection mean out-of-order delay ÷ the same for "
                    "AT&T, per size",
          config=OFO_CONFIG + "; Table 6's 4 and 8 MB", measure=ofo_sprint_vs_att, checks=(*HOME_ATT, S_RTT),
          mismatch=OFO_MISMATCH),
    claim(P, "chen-ofo-sprint-4mb", statistic="mean over MP-2 (lia) runs of the per-connection mean out-of-order "
                                              "delay, Sprint, 4 MB",
          config=OFO_CONFIG + "; Table 6's Sprint 4 MB cell", measure=ofo_mean("sprint"), checks=HOME_SPRINT,
          mismatch=OFO_MISMATCH),
    claim(P, "chen-ofo-att-4mb", statistic="mean over MP-2 (lia) runs of the per-connection mean out-of-order "
                                           "delay, AT&T, 4 MB",
          config=OFO_CONFIG + "; Table 6's AT&T 4 MB cell", measure=ofo_mean("att"), checks=HOME_ATT,
          mismatch=OFO_MISMATCH),
    claim(P, "chen-lte-ofo-decreases-with-size",
          statistic="mean per-connection mean out-of-order delay of AT&T MP-2 (lia) runs at 4 MB and at 8 MB, each "
                    "minus at 16 MB",
          config=OFO_CONFIG + "; Table 6's AT&T 4, 8 vs 16 MB (Verizon: 4 MB only at the standard scale, not "
                              "computed)", measure=lte_ofo_decreases, checks=HOME_ATT, mismatch=OFO_MISMATCH),
]


# ------------------------------------------------------------------ lab checks

def _sp_mean(carriers: tuple[str, ...], mode: str, column: str, sizes):
    """Per size: the mean over single-path runs of ``column``, pooling the scenarios of
    ``carriers`` (scenarios whose link for this mode is the same profile: a single-path
    WiFi run does not use the cellular link, and coffee-att's LTE is AT&T's)."""
    def m(f: Facts) -> Measure:
        r, design, note = _runs(f)
        groups = []
        for b in sorted({b for c in carriers for b in _sizes(design, c, mode) if sizes(b)}):
            have = [c for c in carriers if _cfg(design, c, mode, b).height]
            runs = pl.concat([_cfg(r, c, mode, b) for c in have])
            groups.append(Group(f"{mode} {_size(b)} ({', '.join(have)})", {"x": values(runs, column)}))
        return Measure(groups, stats.mean("x"), note=note,
                       missing=f"needs chen {mode} runs in {'/'.join(carriers)} ({column})")
    return m


HOME_WIFI = ("att", "verizon", "sprint")  # the scenarios whose WiFi is chen-wifi-home
ATT_LTE = ("att", "coffee-att")  # the scenarios whose LTE is chen-lte-att


TABLE3 = ("Table 3: Small flow path characteristics: loss rates and RTTs (sample mean Fstandard error) for single-path "
          "TCP connections.")
TABLE2 = ("Table 2: Baseline path characteristics: loss rates and RTTs (sample mean + standard error) of single-path "
          "TCP on a per connection basis across file sizes.")
SP_CONFIG = ("single-path TCP (cubic) runs of the campaign, server trace; loss = retransmitted ÷ sent data packets "
             "(§3.3), RTT = the mean of the run's Karn samples (data packet to the ACK covering it, no "
             "retransmissions, §3.3); the paper's tables: per-connection values, mean ± s.e. over connections")

CHECKS = [
    check(P, W_LOSS, quote=TABLE3 + " ... WiFi 1-040.5 1-6+0.4 1-440.2 2-1£0.2", where="§4.1.1, Table 3 (4 MB)",
          phrase="mean-se", value=2.1, se=0.2, unit="%", says="home WiFi loss at 4 MB: 2.1 ± 0.2 %",
          statistic="mean loss rate of single-path home-WiFi runs of 4 MB (the att, verizon and sprint scenarios: the same "
                    "WiFi link)",
          config=SP_CONFIG + "; ours: chen-wifi-home, 2.1 % random loss on data (calibrated to this check) plus the 75 kB queue's overflows",
          measure=_sp_mean(HOME_WIFI, "SP-wifi", "loss_wifi_pct", lambda b: b == MB4),
          mismatch="the configured 2.1 % random loss plus overflows of our 75 kB WiFi queue"),
    check(P, A_LOSS, quote="we observe that the loss rates over 3G /4G networks are generally lower than 0.1%",
          where="§2.1; Tables 3 and 5 (AT&T '~' < 0.03 %, 0.1 ± 0.1 % at 4 MB)", phrase="less-than", value=0.1,
          unit="%", says="AT&T LTE loses less than 0.1 % of data packets",
          statistic="mean loss rate of single-path AT&T LTE runs (att and coffee-att: the same LTE link), per size "
                    "≥ 512 KB (smaller transfers do not fill the queue)",
          config=SP_CONFIG + "; ours: chen-lte-att, no random loss, 100 kB drop-tail queue",
          measure=_sp_mean(ATT_LTE, "SP-lte", "loss_cell_pct", lambda b: b >= KB512),
          mismatch="cubic overflows our drop-tail LTE queue; live LTE hides such losses with local retransmissions "
                   "(§2.1)"),
    check(P, A_RTT, quote=TABLE3 + " ... AT&T 60-8+0.5 64-940.5 73-242.1  140-9+1.1", where="§4.1.1, Table 3 (4 MB)",
          phrase="mean-se", value=140.9, se=1.1, unit="ms", says="AT&T LTE RTT at 4 MB: 140.9 ± 1.1 ms",
          statistic="mean RTT of single-path AT&T LTE runs of 4 MB (the att and coffee-att scenarios: the same LTE link)",
          config=SP_CONFIG + "; ours: chen-lte-att, 60 ms base RTT, 8 Mbit/s, 100 kB queue (sized for this RTT)",
          measure=_sp_mean(ATT_LTE, "SP-lte", "rtt_cell_mean_ms", lambda b: b == MB4),
          mismatch="the queueing delay is cubic's standing queue in our 100 kB drop-tail buffer"),
    check(P, W_RTT, quote=TABLE3 + " ... WiFi 22-3+0.2 38-7+6.9 33:94+2.7 23-940.3", where="§4.1.1, Table 3 (4 MB)",
          phrase="mean-se", value=23.9, se=0.3, unit="ms", says="home WiFi RTT at 4 MB: 23.9 ± 0.3 ms",
          statistic="mean RTT of single-path home-WiFi runs of 4 MB (the att, verizon and sprint scenarios: the same "
                    "WiFi link)",
          config=SP_CONFIG + "; ours: chen-wifi-home, 19 ms base RTT (calibrated to this check), 20 Mbit/s, 75 kB queue",
          measure=_sp_mean(HOME_WIFI, "SP-wifi", "rtt_wifi_mean_ms", lambda b: b == MB4),
          mismatch="queueing in our 75 kB WiFi queue adds to the 19 ms base RTT"),
    check(P, V_RTT, quote=TABLE2 + " ... Verizon 92-41+13.23", where="§4, Table 2 (64 KB)", phrase="mean-se",
          value=92.41, se=13.23, unit="ms", says="Verizon LTE RTT at 64 KB: 92.41 ± 13.23 ms",
          statistic="mean RTT of single-path Verizon runs of 64 KB",
          config=SP_CONFIG + "; ours: chen-lte-verizon, 75 ms base RTT (calibrated to this check), 5 Mbit/s, 750 kB "
                             "queue (Table 2 has no 4 MB column; 64 KB is the size we run)",
          measure=_sp_mean(("verizon",), "SP-lte", "rtt_cell_mean_ms", lambda b: b == KB64),
          mismatch="a 64 KB transfer barely fills our queue: its RTT is near the base RTT, where the live "
                   "network's small-flow RTT was 92 ms"),
    check(P, S_RTT, quote=TABLE2 + " ... Sprint 381-29+£50.80", where="§4, Table 2 (64 KB)", phrase="mean-se",
          value=381.29, se=50.80, unit="ms", says="Sprint 3G RTT at 64 KB: 381.29 ± 50.80 ms",
          statistic="mean RTT of single-path Sprint runs of 64 KB",
          config=SP_CONFIG + "; ours: chen-3g-sprint, 300 ms base RTT (calibrated to this check) ± 10 ms jitter, 1.5 Mbit/s, 200 kB queue, "
                             "0.5 % loss (Table 2 has no 4 MB column; 64 KB is the size we run)",
          measure=_sp_mean(("sprint",), "SP-lte", "rtt_cell_mean_ms", lambda b: b == KB64),
          mismatch="our 3G RTT is the 150 ms base plus the queue a 64 KB transfer builds at 1.5 Mbit/s"),
]
