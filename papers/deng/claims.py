"""How we measure the Deng et al. statements of inventory.yaml ("WiFi, LTE, or Both?
Measuring Multi-Homed Wireless Internet Performance", IMC 2014,
shared/seeds/deng-imc2014-wifi-lte-or-both.txt).

Our runs: campaign ``deng`` (campaign.yaml, scale standard): ten emulated locations
(profiles.yaml deng-*: lte-better, wifi-better, wifi-much-faster, lte-much-faster,
comparable, lte-low-rtt, wifi-faster, bloated-lte; ``run_facts.faster_path`` is the
path with the higher configured rate) × HTTP downloads of 10 KB, 100 KB, 1 MB ×
single-path TCP over each network (cubic) and MPTCP (MP-2) with WiFi or LTE as the
primary subflow, decoupled ("TCP Reno for each subflow", footnote 5: reno) and coupled
(lia); one run per configuration, five at ``comparable`` and ``wifi-much-faster``.
Backup mode (WiFi primary, LTE backup): five 1 MB runs at ``wifi-better``, five 4 MB
runs with the WiFi link down from 2 s (``backup-failover``); five 28-s downloads with LTE
primary and WiFi backup whose client LTE interface is unplugged from 3 s to 20 s
(``backup-unplug``, Fig. 15g). A run's throughput is the paper's: flow bytes ÷ download
time (``goodput_mbit``).

The unit of the paper's CDFs (Fig. 8, 13, 14) and of Fig. 7's "short flows" finding is
the emulated LOCATION: each location is summarised by the median of its pairs of runs
(one pair at six locations, five at two), and the paper's statistic (the CDF's median)
is taken over the ten locations (n = 10). Fig. 7a and 7b are one location each: their
claims use that location's five runs per configuration.
"""
from __future__ import annotations

import numpy as np
import polars as pl

from findings import stats
from findings.claim import READING
from findings.measure import Facts, Measure, join_notes, values
from papers.registry import check, claim, condition
from papers._common import by, derived_number, group, keep, sel

P = "deng"
KB10, KB100, MB1 = 10_000, 100_000, 1_000_000
SIZE = {KB10: "10 KB", KB100: "100 KB", MB1: "1 MB"}
DISPARITY, COMPARABLE = "wifi-much-faster", "comparable"  # Fig. 7a, Fig. 7b
MP_VARIANTS = (("reno", "wifi"), ("reno", "lte"), ("lia", "wifi"), ("lia", "lte"))

CONFIG = ("paper: Linux MPTCP v0.88 (kernel 3.11), Full-MPTCP mode, a laptop tethered to a WiFi phone and an LTE "
          "phone, a single-homed server at MIT, 20 live locations in 7 US cities; per run TCP over LTE, TCP over "
          "WiFi, MPTCP with LTE and with WiFi as the primary subflow; throughput of a flow size = bytes "
          "acknowledged ÷ time (§3.4.2), downlink shown; decoupled = Reno per subflow, coupled (LIA); ours: "
          "campaign deng (standard), "
          "ten emulated locations (profiles.yaml deng-*: fixed rate, RTT, drop-tail queue, 0.5-1 % loss on WiFi, "
          "chosen within the paper's spread: it prints no per-location table), HTTP downloads (nginx + wget) of "
          "10 KB, 100 KB and 1 MB as separate flows, throughput = file bytes ÷ time from the first SYN to the last "
          "byte, TCP cubic, upstream MPTCP (kernel 6.18) with reno (decoupled) and the lab's BPF LIA (coupled), "
          "one run per configuration (five at comparable and wifi-much-faster)")
POOLING = ("; the paper pools 7 of its 20 locations' 10 runs per configuration into its CDFs (140 points per "
           "configuration with up- and downlink); ours pools 8 emulated locations: each location summarised by the "
           "median of its pairs of runs (1 pair, 5 at comparable and wifi-much-faster), the CDF's median taken over "
           "the 10 locations (n = 10)")
EMULATED = ("our locations are emulated links with fixed rates and delays (profiles.yaml deng-*), not live WiFi and "
            "LTE whose rate changes between the runs compared: the paper's |x − y| ÷ y between runs taken minutes "
            "apart includes that variation, ours only the configuration's effect and little run-to-run noise")
CC_MISMATCH = (EMULATED + "; reno and LIA differ only once a subflow leaves slow start (10-100 KB flows hardly do on "
               "our links); the lab's LIA is a BPF re-implementation on upstream MPTCP, not v0.88's")
CHECK_FASTER = ("lab-deng-faster-path",)
# a statistic over our emulated locations rests on their set having the paper's spread (the
# paper's 20 locations "have similar variability in network conditions" as its crowd-sourced
# data, Fig. 6): the faster network as configured, and the shares of Fig. 3 and Fig. 4
CHECK_LOCATIONS = ("lab-deng-faster-path", "deng-lte-faster-downlink", "deng-lte-lower-rtt", "deng-lte-beats-wifi",
                   "deng-tput-diff-over-10mbps")


# --------------------------------------------------------------- selections

def _runs(f: Facts) -> tuple[pl.DataFrame, str]:
    """The flow-level runs (no outages, no stalled emulator)."""
    r, note = f.of(P)
    return r.filter(pl.col("size_bytes").is_in(list(SIZE))), note


def _faster(f: Facts) -> pl.DataFrame:
    """Per location (scenario): the network with the higher configured rate."""
    mp = sel(f.runs.filter(pl.col("paper") == P), mode="MP-2").filter(pl.col("faster_path").is_not_null())
    return mp.group_by("scenario").agg(faster=pl.col("faster_path").first())


def _pairs(table: pl.DataFrame, cc: str | None = None) -> pl.DataFrame:
    d = table.filter((pl.col("paper") == P) & ~pl.col("stalled").fill_null(False))
    return sel(d, congestion_control=cc) if cc else d


def _primary_pairs(f: Facts, cc: str | None = None) -> pl.DataFrame:
    """MP-2 pairs differing only in the primary network (``rel_diff_pct`` = |LTE − WiFi| ÷ WiFi,
    ``ratio`` = LTE ÷ WiFi), with the faster-primary ÷ slower-primary ratio and |LTE − WiFi|."""
    pp = _pairs(f.primary_pairs, cc).join(_faster(f), on="scenario", how="left")
    return pp.with_columns(
        fast_over_slow=pl.when(pl.col("faster") == "lte").then(pl.col("ratio"))
        .when(pl.col("faster") == "wifi").then(1 / pl.col("ratio")),
        abs_diff_mbit=(pl.col("lte_goodput_mbit") - pl.col("wifi_goodput_mbit")).abs())


def _cc_pairs(f: Facts) -> pl.DataFrame:
    """MP-2 pairs differing only in congestion control (``rel_diff_pct`` = r_cwnd), both primaries."""
    return _pairs(f.cc_pairs)


def by_location(df: pl.DataFrame, column: str) -> tuple[np.ndarray, str]:
    """One value per location: the median of its pairs' (or runs') ``column``; and how many each had."""
    d = df.filter(pl.col(column).is_not_null() & pl.col(column).is_not_nan()) if df.height else df
    if not d.height:
        return np.zeros(0), ""
    g = d.group_by("scenario").agg(v=pl.col(column).median(), k=pl.len()).sort("scenario")
    return g["v"].to_numpy().astype(float), ", ".join(f"{s} {k}" for s, k in g.select("scenario", "k").iter_rows())


def _at(df: pl.DataFrame, size: int) -> pl.DataFrame:
    return sel(df, size_bytes=size)


def _loc_note(what: str, *parts: tuple[str, str]) -> str:
    return f"{what} per location: " + "; ".join(f"{label}: {n}" for label, n in parts if n)


# --------------------------------------------------------------- Fig. 7 (TCP vs MPTCP)

def _config_key(df: pl.DataFrame) -> pl.DataFrame:
    return df.with_columns(cfg=pl.when(pl.col("mode") == "MP-2")
                           .then(pl.concat_str([pl.lit("mp_"), pl.col("congestion_control"), pl.lit("_"),
                                                pl.col("primary_path")]))
                           .otherwise(pl.col("mode")))


def mptcp_worse_short(f: Facts) -> Measure:
    """Per location and repetition: the best MPTCP variant's throughput ÷ the best TCP's; per
    location the median over its repetitions; the median over the locations, per size."""
    r, note = _runs(f)
    r = _config_key(r.filter(pl.col("mode").is_in(["SP-wifi", "SP-lte", "MP-2"])))
    mp_cols = [f"mp_{cc}_{p}" for cc, p in MP_VARIANTS]
    groups, dropped, counts = [], 0, []
    for size in (KB10, KB100):
        d = _at(r, size)
        if not d.height:
            continue
        w = d.pivot(on="cfg", index=["scenario", "repetition"], values="goodput_mbit", aggregate_function="first")
        need = ["SP-wifi", "SP-lte", *mp_cols]
        if any(c not in w.columns for c in need):
            continue
        full = w.drop_nulls(subset=need)
        dropped += w.height - full.height
        full = full.with_columns(x=pl.max_horizontal(mp_cols) / pl.max_horizontal("SP-wifi", "SP-lte"))
        x, n = by_location(full, "x")
        counts.append((SIZE[size], n))
        groups.append(group(SIZE[size], x=x))
    return Measure(keep(*groups), stats.median("x"),
                   missing="needs deng runs at 10 KB and 100 KB: SP-wifi, SP-lte and the four MP-2 variants",
                   note=join_notes(note, _loc_note("repetitions", *counts),
                                   f"{dropped} repetition(s) without all six configurations left out"
                                   if dropped else ""))


def mptcp_worse_disparity(f: Facts) -> Measure:
    """Fig. 7a: at the large-disparity location, the best MPTCP variant's median ÷ the best TCP's
    median, per size (five runs per configuration)."""
    r, note = _runs(f)
    loc = sel(r, scenario=DISPARITY)
    groups = []
    for (size,), g in by(loc, "size_bytes"):
        roles = {"sp_wifi": values(sel(g, mode="SP-wifi"), "goodput_mbit"),
                 "sp_lte": values(sel(g, mode="SP-lte"), "goodput_mbit")}
        for cc, p in MP_VARIANTS:
            roles[f"mp_{cc}_{p}"] = values(sel(g, mode="MP-2", congestion_control=cc, primary_path=p), "goodput_mbit")
        groups.append(group(SIZE.get(size, str(size)), **roles))
    mp_roles = tuple(f"mp_{cc}_{p}" for cc, p in MP_VARIANTS)

    def best_mp_over_best_tcp(s):
        mp = np.max([stats.med(s[k]) for k in mp_roles], axis=0)
        return mp / np.maximum(stats.med(s["sp_wifi"]), stats.med(s["sp_lte"]))
    stat = stats.boot(best_mp_over_best_tcp, ("sp_wifi", "sp_lte", *mp_roles),
                      "the best MPTCP variant's median ÷ the better TCP's median")
    return Measure(keep(*groups), stat, note=note,
                   missing=f"needs deng runs at {DISPARITY}: SP-wifi, SP-lte and the four MP-2 variants")


def mptcp_better_long(f: Facts) -> Measure:
    """Fig. 7b: at the comparable-links location, MPTCP (WiFi primary, decoupled) ÷ the better
    TCP at 1 MB (medians of five runs)."""
    r, note = _runs(f)
    g = _at(sel(r, scenario=COMPARABLE), MB1)
    grp = group("1 MB", mp=values(sel(g, mode="MP-2", congestion_control="reno", primary_path="wifi"), "goodput_mbit"),
                sp_wifi=values(sel(g, mode="SP-wifi"), "goodput_mbit"),
                sp_lte=values(sel(g, mode="SP-lte"), "goodput_mbit"))
    stat = stats.boot(lambda s: stats.med(s["mp"]) / np.maximum(stats.med(s["sp_wifi"]), stats.med(s["sp_lte"])),
                      ("mp", "sp_wifi", "sp_lte"), "median MPTCP(WiFi, decoupled) ÷ the better TCP's median")
    return Measure(keep(grp), stat, note=note,
                   missing=f"needs deng 1 MB runs at {COMPARABLE}: SP-wifi, SP-lte, MP-2 reno with WiFi primary")


# --------------------------------------------------------------- Fig. 8-12 (primary subflow)

def primary_10kb(f: Facts) -> Measure:
    """Fig. 8 at 10 KB: median over locations of r = |LTE − WiFi| ÷ WiFi (decoupled)."""
    x, n = by_location(_at(_primary_pairs(f, "reno"), KB10), "rel_diff_pct")
    return Measure(keep(group("10 KB", x=x)), stats.median("x"), note=_loc_note("pairs (reno)", ("10 KB", n)),
                   missing="needs deng MP-2 reno runs with WiFi and with LTE as primary at 10 KB")


def primary_greatest_small(f: Facts) -> Measure:
    pp = _primary_pairs(f, "reno")
    a, na = by_location(_at(pp, KB10), "rel_diff_pct")
    b, nb = by_location(_at(pp, MB1), "rel_diff_pct")
    return Measure(keep(group("10 KB − 1 MB", a=a, b=b)), stats.median_diff("a", "b"),
                   note=_loc_note("pairs (reno)", ("10 KB", na), ("1 MB", nb)),
                   missing="needs deng MP-2 reno runs with each primary at 10 KB and 1 MB")


def primary_faster_network(f: Facts) -> Measure:
    pp = _primary_pairs(f, "reno")
    groups, counts = [], []
    for size in SIZE:
        x, n = by_location(_at(pp, size), "fast_over_slow")
        counts.append((SIZE[size], n))
        groups.append(group(SIZE[size], x=x))
    return Measure(keep(*groups), stats.median("x"), note=_loc_note("pairs (reno)", *counts),
                   missing="needs deng MP-2 reno runs with each primary at locations with configured rates")


def absdiff_larger_large(f: Facts) -> Measure:
    pp = _primary_pairs(f, "reno")
    a, na = by_location(_at(pp, MB1), "abs_diff_mbit")
    b, nb = by_location(_at(pp, KB100), "abs_diff_mbit")
    return Measure(keep(group("1 MB − 100 KB", a=a, b=b)), stats.median_diff("a", "b"),
                   note=_loc_note("pairs (reno)", ("1 MB", na), ("100 KB", nb)),
                   missing="needs deng MP-2 reno runs with each primary at 100 KB and 1 MB")


def ratio_larger_small(f: Facts) -> Measure:
    pp = _primary_pairs(f, "reno")
    a, na = by_location(_at(pp, KB100), "fast_over_slow")
    b, nb = by_location(_at(pp, MB1), "fast_over_slow")
    return Measure(keep(group("100 KB − 1 MB", a=a, b=b)), stats.median_diff("a", "b"),
                   note=_loc_note("pairs (reno)", ("100 KB", na), ("1 MB", nb)),
                   missing="needs deng MP-2 reno runs with each primary at 100 KB and 1 MB")


# --------------------------------------------------------------- Fig. 13, 14 (congestion control)

def network_1mb(f: Facts) -> Measure:
    """Fig. 14c 'Network' at 1 MB: r_network of coupled and of decoupled pairs, pooled."""
    x, n = by_location(_at(_primary_pairs(f), MB1), "rel_diff_pct")
    return Measure(keep(group("1 MB", x=x)), stats.median("x"), note=_loc_note("pairs (lia and reno)", ("1 MB", n)),
                   missing="needs deng MP-2 runs (lia and reno) with each primary at 1 MB")


def cc_1mb(f: Facts) -> Measure:
    x, n = by_location(_at(_cc_pairs(f), MB1), "rel_diff_pct")
    return Measure(keep(group("1 MB", x=x)), stats.median("x"), note=_loc_note("pairs (both primaries)", ("1 MB", n)),
                   missing="needs deng MP-2 runs with lia beside reno at 1 MB")


def cc_greatest_large(f: Facts) -> Measure:
    cp = _cc_pairs(f)
    a, na = by_location(_at(cp, MB1), "rel_diff_pct")
    b, nb = by_location(_at(cp, KB10), "rel_diff_pct")
    return Measure(keep(group("1 MB − 10 KB", a=a, b=b)), stats.median_diff("a", "b"),
                   note=_loc_note("pairs (both primaries)", ("1 MB", na), ("10 KB", nb)),
                   missing="needs deng MP-2 runs with lia beside reno at 10 KB and 1 MB")


# Fig. 14's caption medians (r_network, r_cwnd in %), per size: a group's own number where the
# paper prints one per size
FIG14 = {KB10: (60, 16), KB100: (43, 16), MB1: (25, 34)}


def _cc_vs_network(f: Facts, sizes: tuple[int, ...], cc_first: bool) -> Measure:
    cp, pp = _cc_pairs(f), _primary_pairs(f)
    groups, counts = [], []
    for size in sizes:
        c, nc = by_location(_at(cp, size), "rel_diff_pct")
        n_, nn = by_location(_at(pp, size), "rel_diff_pct")
        counts += [(f"CC {SIZE[size]}", nc), (f"Network {SIZE[size]}", nn)]
        net, cc = FIG14[size]
        number = (derived_number(cc - net, f"{cc - net:g} points (Fig. 14 medians: CC {cc} % − Network {net} %)")
                  if cc_first else
                  derived_number(net - cc, f"{net - cc:g} points (Fig. 14 medians: Network {net} % − CC {cc} %)"))
        g = group(SIZE[size], a=c, b=n_) if cc_first else group(SIZE[size], a=n_, b=c)
        if g is not None:
            g.number = number
        groups.append(g)
    return Measure(keep(*groups), stats.median_diff("a", "b"), note=_loc_note("pairs", *counts),
                   missing="needs deng MP-2 runs with lia and reno, each with both primaries")


# --------------------------------------------------------------- Fig. 15 (Backup mode)

def backup_no_data(f: Facts) -> Measure:
    r, note = f.of(P)
    b = sel(r, mode="backup", primary_path="wifi")
    return Measure(keep(group("WiFi primary, LTE backup, 1 MB", x=values(b, "cell_share_pct"))),
                   stats.mean("x", bounds=stats.SHARE_PCT),
                   note=note, missing="needs deng backup-mode runs (WiFi primary, LTE backup) without outages")


def _failover_share(f: Facts, runs: pl.DataFrame, down_s: int) -> np.ndarray:
    """Per run: 100 × the bytes the LTE (backup) path delivered from ``down_s`` seconds after the
    first SYN on ÷ the bytes the file still lacked then (the WiFi link is down from 2 s after
    the emulator's start, a fraction of a second before the SYN)."""
    d = f.delivery.join(runs.select("run_id", "size_bytes"), on="run_id", how="inner")
    if not d.height:
        return np.zeros(0)
    per = d.group_by("run_id").agg(
        before=pl.col("payload_bytes").filter(pl.col("second") < down_s).sum(),
        backup=pl.col("payload_bytes").filter((pl.col("second") >= down_s) & (pl.col("side") == "cell")).sum(),
        size=pl.col("size_bytes").first())
    per = per.with_columns(left=pl.col("size") - pl.col("before")).filter(pl.col("left") > 0)
    return values(per.with_columns(x=100 * pl.col("backup") / pl.col("left")).sort("run_id"), "x")


def backup_failover(f: Facts) -> Measure:
    r, note = f.of(P, outages=True)
    runs = sel(r, scenario="backup-failover", mode="backup")
    if not runs.height:
        return Measure(missing="needs deng backup-failover runs (backup mode, WiFi down from 2 s)", note=note)
    x = _failover_share(f, runs, 2)
    return Measure(keep(group("WiFi down from 2 s, 4 MB", x=x)), stats.mean("x"), note=note,
                   missing="needs per-second delivery (run_delivery) of the backup-failover runs")


UNPLUG = "backup-unplug"  # Fig. 15g: LTE primary, WiFi backup, the LTE interface unplugged mid-flow


def _unplug_share(f: Facts, runs: pl.DataFrame) -> np.ndarray:
    """Per run: 100 × the client's new-data bytes per second (every path) while the
    unplugged interface was away ÷ those before the unplug. Seconds count from the first SYN of the
    run's main connection, which follows the workload's start (the schedule's clock) by a
    fraction of a second, so each window keeps a second's margin: before = the whole
    seconds s with s + 1 ≤ at − 1; away = those with s ≥ at + 1 (the unplug's first second
    left out, for the sender to notice) and s + 1 ≤ replug − 1. Runs with an empty window,
    or nothing before the unplug, are not samples."""
    d = f.delivery.join(runs.select("run_id", "unplug_at_s", "replug_at_s"), on="run_id", how="inner")
    if not d.height:
        return np.zeros(0)
    at, rp, s = pl.col("unplug_at_s"), pl.col("replug_at_s"), pl.col("second")
    per = d.group_by("run_id").agg(
        before=pl.col("payload_bytes").filter(s + 1 <= at - 1).sum(),
        away=pl.col("payload_bytes").filter((s >= at + 1) & (s + 1 <= rp - 1)).sum(),
        n_before=(at.first() - 1).floor(), n_away=(rp.first() - 2).floor() - (at.first() + 1).ceil() + 1)
    per = per.filter((pl.col("n_before") >= 1) & (pl.col("n_away") >= 1) & (pl.col("before") > 0))
    x = 100 * (pl.col("away") / pl.col("n_away")) / (pl.col("before") / pl.col("n_before"))
    return values(per.with_columns(x=x).sort("run_id"), "x")


def unplug_stall(f: Facts) -> Measure:
    r, note = f.of(P)
    runs = sel(r, scenario=UNPLUG, mode="backup").filter(pl.col("unplug_at_s").is_not_null())
    if not runs.height:
        return Measure(missing=f"needs deng {UNPLUG} runs (backup mode, LTE primary, its interface unplugged and "
                               "re-plugged mid-flow)", note=note)
    return Measure(keep(group("LTE unplugged 3-20 s, WiFi backup", x=_unplug_share(f, runs))),
                   stats.mean("x", "mean over runs of 100 × the bytes per second while unplugged ÷ before"), note=note,
                   missing=f"needs per-second delivery (run_delivery) of the {UNPLUG} runs")


# --------------------------------------------------------------- claims

LOC = "median over the 10 locations of each location's median over its pairs of runs"

CLAIMS = [
    claim(P, "deng-mptcp-worse-short",
          statistic="per location and repetition the best of the four MPTCP variants' throughput ÷ the better "
                    "single-path TCP's (flow bytes ÷ download time), per location the median over its repetitions; "
                    "the median over the 8 locations, at 10 KB and at 100 KB",
          config=CONFIG + POOLING + "; Fig. 7 shows throughput against flow size at 2 locations, the finding is "
                                    "stated for short flows in general",
          measure=mptcp_worse_short,
          mismatch=EMULATED + "; upstream MPTCP's connection set-up and scheduler differ from v0.88's"),
    claim(P, "deng-mptcp-better-long",
          statistic="median throughput of MPTCP (WiFi primary, decoupled) ÷ the better single-path TCP's median, "
                    "1 MB, at the comparable-links location (5 runs each)",
          config=CONFIG + "; Fig. 7b: one location with roughly comparable links (the paper prints no rates) -> "
                          "ours: comparable (WiFi 8 Mbit/s 35 ms, LTE 7 Mbit/s 60 ms), 1 MB (the paper's largest "
                          "size, its curve reaches it), 5 runs per configuration",
          measure=mptcp_better_long,
          mismatch=EMULATED + "; at 1 MB a flow spends much of its time in slow start on our links, so the second "
                              "subflow adds less than in a long transfer"),
    claim(P, "deng-mptcp-worse-disparity",
          statistic="the best MPTCP variant's median throughput ÷ the better single-path TCP's median, per size, at "
                    "the large-disparity location (5 runs each)",
          config=CONFIG + "; Fig. 7a: one location with 'a large disparity in link speeds' (rates not printed) -> "
                          "ours: wifi-much-faster (WiFi 20 Mbit/s 20 ms, LTE 3 Mbit/s 80 ms), 5 runs per "
                          "configuration",
          measure=mptcp_worse_disparity,
          mismatch=EMULATED + "; which network is the fast one at the paper's Fig. 7a location is not stated"),
    claim(P, "deng-primary-10kb-60",
          statistic=f"{LOC}, of r = |MPTCP_LTE − MPTCP_WiFi| ÷ MPTCP_WiFi (pairs by repetition), decoupled, 10 KB",
          config=CONFIG + POOLING + "; §3.4 (Fig. 8) is decoupled only: our reno pairs",
          measure=primary_10kb, mismatch=EMULATED),
    claim(P, "deng-primary-greatest-small",
          statistic=f"{LOC} of r = |MPTCP_LTE − MPTCP_WiFi| ÷ MPTCP_WiFi (decoupled) at 10 KB minus the same at 1 MB",
          config=CONFIG + POOLING + "; §3.4 (Fig. 8) is decoupled only: our reno pairs",
          measure=primary_greatest_small, mismatch=EMULATED),
    claim(P, "deng-primary-faster-network",
          statistic=f"{LOC}, of MPTCP throughput with the faster network (higher configured rate) as primary ÷ with "
                    "the slower one (decoupled), per size",
          config=CONFIG + "; Fig. 9/10 show one trace (throughput over the first 2 s) at one location of each kind; "
                          "ours: every location, the throughput of whole 10 KB, 100 KB and 1 MB flows, decoupled "
                          "(reno, §3.4), per location the median over its pairs, the median over the 8 locations",
          measure=primary_faster_network, checks=CHECK_LOCATIONS,
          mismatch=EMULATED + "; where the faster network also has the longer RTT the primary's handshake favours "
                              "the other network for the shortest flows"),
    claim(P, "deng-absdiff-larger-large",
          statistic=f"{LOC} of |MPTCP_LTE − MPTCP_WiFi| in Mbit/s (decoupled) at 1 MB minus the same at 100 KB",
          config=CONFIG + "; Fig. 11a/12a: one location of each kind, throughput against flow size read off one "
                          "1 MB transfer's ACKs; ours: whole 100 KB and 1 MB flows at all 8 locations (per location "
                          "the median over its pairs), decoupled (reno, §3.4)",
          measure=absdiff_larger_large, mismatch=EMULATED),
    claim(P, "deng-ratio-larger-small",
          statistic=f"{LOC} of the faster-primary ÷ slower-primary MPTCP throughput (decoupled) at 100 KB minus the "
                    "same at 1 MB",
          config=CONFIG + "; Fig. 11b/12b: one location of each kind, the ratio against flow size read off one 1 MB "
                          "transfer's ACKs; ours: whole 100 KB and 1 MB flows at all 8 locations (per location the "
                          "median over its pairs), decoupled (reno, §3.4); the ratio is faster ÷ slower so that "
                          "'larger difference' reads the same at LTE- and WiFi-faster locations",
          measure=ratio_larger_small, checks=CHECK_LOCATIONS, mismatch=EMULATED),
    claim(P, "deng-cc-1mb-34",
          statistic=f"{LOC}, of r_cwnd = |MPTCP_decoupled − MPTCP_coupled| ÷ MPTCP_coupled (pairs by primary and "
                    "repetition, both primaries), 1 MB",
          config=CONFIG + POOLING, measure=cc_1mb, mismatch=CC_MISMATCH),
    claim(P, "deng-network-1mb-25",
          statistic=f"{LOC}, of r_network = |MPTCP_LTE − MPTCP_WiFi| ÷ MPTCP_WiFi (pairs by congestion control and "
                    "repetition, coupled and decoupled pooled as Fig. 14's 'Network' curve), 1 MB",
          config=CONFIG + POOLING, measure=network_1mb, mismatch=EMULATED),
    claim(P, "deng-cc-greatest-large",
          statistic=f"{LOC} of r_cwnd (both primaries) at 1 MB minus the same at 10 KB",
          config=CONFIG + POOLING, measure=cc_greatest_large, mismatch=CC_MISMATCH),
    claim(P, "deng-cc-beats-network-1mb",
          statistic=f"{LOC} of r_cwnd minus the same of r_network (Fig. 14c's 'CC' and 'Network' curves), 1 MB",
          config=CONFIG + POOLING, measure=lambda f: _cc_vs_network(f, (MB1,), cc_first=True),
          mismatch=CC_MISMATCH),
    claim(P, "deng-network-beats-cc-10kb",
          statistic=f"{LOC} of r_network minus the same of r_cwnd (Fig. 14a/b's 'Network' and 'CC' curves), at "
                    "10 KB and at 100 KB",
          config=CONFIG + POOLING, measure=lambda f: _cc_vs_network(f, (KB10, KB100), cc_first=False),
          mismatch=CC_MISMATCH),
    claim(P, "deng-backup-no-data", basis=READING,
          basis_reason="'no data' on the backup path is read as a share of exactly 0 %",
          statistic="mean over runs of the share of the download's payload bytes sent on the LTE (backup) path "
                    "(server trace)",
          config="paper: Backup mode of MPTCP v0.88, one ~19-s flow per primary choice, a packet raster per "
                 "interface (Fig. 15c: LTE primary, WiFi backup; 15d: WiFi primary, LTE backup); ours: backup mode "
                 "(the LTE endpoint flagged backup) at wifi-better (WiFi 8 Mbit/s 30 ms, LTE 2 Mbit/s 70 ms), WiFi "
                 "primary, LTE backup (Fig. 15d's case only), lia, 1 MB downloads, 5 runs",
          measure=backup_no_data,
          mismatch="upstream MPTCP's scheduler may put a reinjection on the backup subflow, v0.88's did not show one"),
    claim(P, "deng-backup-failover", basis=READING,
          basis_reason="'all traffic moves to LTE' is read as 100 % of what was left (± the declared 20 %: [80, 120] on a share that cannot exceed 100)",
          statistic="mean over runs of 100 × the bytes the LTE (backup) path delivered from 2 s after the first SYN "
                    "on ÷ the bytes the file still lacked then (client's bytes received per second and path)",
          config="paper: Backup mode of MPTCP v0.88, one long flow per case, the primary interface set to "
                 "'multipath off' mid-flow (Fig. 15e: LTE at 7-9 s; 15f: WiFi at 11 s) or unplugged (15h: WiFi at "
                 "6 s); ours: backup-failover (wifi-better's links), backup mode, WiFi primary, LTE backup, lia, 4 MB "
                 "downloads, the WiFi link down from 2 s after the emulator starts (about 1.7 s after the SYN) to "
                 "60 s, 5 runs: a link failure the kernel learns of from retransmission timeouts, not an interface "
                 "the kernel is told is gone",
          measure=backup_failover,
          mismatch="with the link simply failing (no 'multipath off'), upstream MPTCP moves to the backup only "
                   "after the WiFi subflow's retransmission timeouts mark it stale"),
    claim(P, "deng-backup-unplug-stall", basis=READING,
          basis_reason="Fig. 15g's halt (one Window Update, no data until the re-plug) is read as exactly 0 % of the rate before the unplug, as deng-backup-no-data reads Fig. 15c/d; set after a verification run showed upstream slows down (75 %) rather than halts, because a direction '< 1' could not tell a halt from a slowed failover (papers/deng/inventory.yaml notes)",
          statistic="mean over runs of 100 × the client's new-data bytes per second (all paths) from 1 s after the "
                    "unplug to 1 s before the re-plug ÷ those before the unplug (whole seconds after the first SYN, "
                    "a second's margin at each end; client's bytes received per second and path); 0 %: nothing "
                    "arrives while the interface is away (the paper's halt)",
          config="paper: Backup mode of MPTCP v0.88 (kernel 3.11, its fullmesh path manager, which hears of an "
                 "address removed from an interface), LTE primary and WiFi backup, each network a phone tethered by "
                 "USB to a laptop, one long flow, the LTE phone's USB cable pulled at t = 3 s and plugged back at "
                 "t = 68 s (Fig. 15g, one trace); ours: scenario backup-unplug (wifi-better's links: WiFi 8 Mbit/s "
                 "30 ms, LTE 2 Mbit/s 70 ms), backup mode, LTE primary, WiFi (the backup endpoint) faster than LTE "
                 "so that a failover can show as more data per second than before the unplug and a halt as none; "
                 "upstream MPTCP (kernel 6.18) with the lab's BPF LIA, a 28-s iperf3 -R download; 3 s after the "
                 "workload starts the client's LTE veth is moved out of the client's namespace (its address and "
                 "routes go with it) and its MPTCP endpoint deleted (what an address manager such as "
                 "NetworkManager or mptcpd does: upstream's path manager has no netdevice notifier), 20 s after "
                 "it the veth comes back with its address, routes and endpoint (capture/ifevents.py); the "
                 "emulated LTE link stays up; 5 runs. A moved veth is not a USB tether: no USB or "
                 "driver events, no DHCP, the same address comes back; the gap is 17 s, not 65 s (17 s is "
                 "several times what a failover takes: the path manager closes the subflow at once, a subflow is "
                 "marked stale after 4 retransmission timeouts)",
          measure=unplug_stall,
          mismatch="the paper's halt was a behaviour of the out-of-tree v0.88 kernel its authors could not explain "
                   "('still under investigation'); upstream MPTCP closes the unplugged address's subflows when its "
                   "endpoint goes and sends on the remaining backup subflow, so it may not halt at all"),
]


# --------------------------------------------------------------- lab checks

def _sp_by_location(f: Facts, size: int, wifi_col: str = "goodput_mbit", lte_col: str = "goodput_mbit") -> pl.DataFrame:
    """Per location: the median ``wifi_col`` of its SP-wifi runs and ``lte_col`` of its SP-lte runs
    at ``size`` (columns ``wifi``, ``lte``; locations with both)."""
    r, _ = _runs(f)
    d = _at(r, size)
    empty = pl.DataFrame(schema={"scenario": pl.Utf8, "wifi": pl.Float64, "lte": pl.Float64})
    if not d.height:
        return empty
    w = sel(d, mode="SP-wifi").group_by("scenario").agg(wifi=pl.col(wifi_col).drop_nans().median())
    c = sel(d, mode="SP-lte").group_by("scenario").agg(lte=pl.col(lte_col).drop_nans().median())
    return w.join(c, on="scenario", how="inner").drop_nulls().sort("scenario") if w.height and c.height else empty


def faster_is_faster(f: Facts) -> Measure:
    t = _sp_by_location(f, MB1, "goodput_mbit").join(_faster(f), on="scenario", how="inner").sort("scenario")
    t = t.with_columns(x=pl.when(pl.col("faster") == "lte").then(pl.col("lte") / pl.col("wifi"))
                       .otherwise(pl.col("wifi") / pl.col("lte")))
    stat = stats.boot(lambda s: np.min(s["x"], axis=1), ("x",), "the smallest over the locations")
    return Measure(keep(group("1 MB, every location", x=values(t, "x"))), stat,
                   note="locations: " + ", ".join(f"{s} ({fp} {x:.2f}×)" for s, fp, x in
                                                  t.select("scenario", "faster", "x").iter_rows()),
                   missing="needs deng SP-wifi and SP-lte 1 MB runs at locations with configured rates")


def _design_share(t: pl.DataFrame, label: str, text: str) -> Measure:
    """100 × the share of our locations with ``x`` (1/0 per location): a property of our set
    of emulated locations (the design, not a sample of locations: findings.stats.design),
    each location judged by its runs (whose classification the lab check
    lab-deng-faster-path holds to a margin)."""
    return Measure(keep(group(label, x=values(t, "x"))), stats.design(lambda s: 100 * np.mean(s["x"], axis=1),
                                                                       ("x",), text),
                   note=f"{label}: " + ", ".join(sel(t, x=1.0)["scenario"].to_list()),
                   missing="needs deng SP-wifi and SP-lte runs at every location")


def lte_faster_share(f: Facts) -> Measure:
    t = _sp_by_location(f, MB1)
    t = t.with_columns(x=(pl.col("lte") > pl.col("wifi")).cast(pl.Float64))
    return _design_share(t, "LTE faster at", "100 × the share of the locations where LTE is faster for 1 MB")


def tput_gap_both_ways(f: Facts) -> Measure:
    """The largest 1 MB TCP throughput gap over our locations in each direction (WiFi ahead,
    LTE ahead); the smaller of the two, so 'larger than 10 Mbit/s in either direction'
    holds when it exceeds 10. A property of our set of locations (findings.stats.design)."""
    t = _sp_by_location(f, MB1).with_columns(x=pl.col("wifi") - pl.col("lte"))
    stat = stats.design(lambda s: np.minimum(np.max(s["x"], axis=1), -np.min(s["x"], axis=1)), ("x",),
                        "the smaller of the largest WiFi − LTE and the largest LTE − WiFi gap over the locations "
                        "(Mbit/s)")
    return Measure(keep(group("1 MB downloads, every location", x=values(t, "x"))), stat,
                   missing="needs deng SP-wifi and SP-lte 1 MB runs at every location")


def lte_lower_rtt_share(f: Facts) -> Measure:
    t = _sp_by_location(f, KB10, "rtt_wifi_mean_ms", "rtt_cell_mean_ms")
    t = t.with_columns(x=(pl.col("lte") < pl.col("wifi")).cast(pl.Float64))
    return _design_share(t, "LTE lower RTT at", "100 × the share of the locations where LTE has the lower 10 KB RTT")


SPREAD = ("ours: the 10 emulated locations (profiles.yaml deng-*), each judged by its single-path TCP runs; a property of "
          "our set of locations, chosen to have the paper's spread (calibration.yaml): every statistic over "
          "locations rests on it")
CONDITIONS = [
    condition(P, "deng-lte-beats-wifi", statistic="100 × the share of our locations where 1 MB TCP over LTE is faster "
                                                  "than over WiFi", config=SPREAD, measure=lte_faster_share,
              mismatch="ten locations give the share in steps of 10 points"),
    condition(P, "deng-lte-faster-downlink", statistic="100 × the share of our locations where 1 MB TCP over LTE is "
                                                       "faster than over WiFi (downloads)", config=SPREAD,
              measure=lte_faster_share, mismatch="ten locations give the share in steps of 10 points"),
    condition(P, "deng-lte-lower-rtt", statistic="100 × the share of our locations where a 10 KB TCP download's mean "
                                                 "RTT is lower over LTE than over WiFi (the paper: ping RTTs)",
              config=SPREAD, measure=lte_lower_rtt_share, mismatch="ten locations give the share in steps of 10 points"),
    condition(P, "deng-tput-diff-over-10mbps", statistic="the smaller of the largest 1 MB TCP throughput gap with WiFi "
                                                         "ahead and the largest with LTE ahead, over our locations "
                                                         "(Mbit/s)", config=SPREAD, measure=tput_gap_both_ways,
              mismatch="the gaps are our locations' configured rates as TCP reaches them"),
]

CHECKS = [
    check(P, "lab-deng-faster-path",
          quote="Figure 9 shows traces collected at a location where LTE has much higher throughput than WiFi.",
          where="§3.4.1, Fig. 9, 10", phrase="more-than", value=1.0, unit="×",
          says="at a location of each kind the faster network (by which the claims label the primary) is the "
               "faster one for TCP",
          statistic="per location the median 1 MB single-path TCP throughput over the network with the higher "
                    "configured rate (run_facts.faster_path) ÷ over the other; the smallest over the 10 locations",
          config="paper: which network is faster is measured (1 MB TCP transfers, Cell vs WiFi); ours: the "
                 "claims label a location by its configured rates; a lab check that every location's configured "
                 "faster network is also the faster one for a 1 MB TCP download",
          measure=faster_is_faster,
          mismatch="loss on our WiFi links and the longer RTT of some faster links can make the configured "
                   "faster network the slower one for a 1 MB flow"),
]

CLAIMS += CONDITIONS
