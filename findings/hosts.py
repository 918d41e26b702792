"""Hosts checked before their runs are pooled: runs of one configuration captured on
different machines must behave alike, or a misconfigured node biases a finding silently.

Per paper whose runs come from more than one host, each host's runs are set against
the other hosts' runs of the same configuration (campaign, scenario, mode, congestion
control, size, workload, primary path): the per-run ratio of the host's value to the
median of the others' on that configuration, where the value is the run's goodput
(downloads) or its mean application latency (D-ITG runs). The check is the mean of
those ratios with its 95 % interval (``stats.mean``, coverage checked at n = 5):

* consistent: the interval lies within 1 ± ``TOLERANCE``;
* differs: it lies wholly outside — the paper's computed rows become "not comparable";
* inconclusive: it overlaps an edge, or fewer than ``MIN_RUNS`` shared runs.

``TOLERANCE`` is ours, not a paper's: the emulator holds a configured rate and delay
to well under 1 % (capture/linkem/README.md), so a tenth more or less goodput on the same
emulated paths is the machine, not the links.
"""
from __future__ import annotations

import polars as pl

from .stats import MIN_RUNS, estimate, mean, seed_of

TOLERANCE = 0.10
CONFIG = ("campaign", "scenario", "mode", "congestion_control", "size_bytes", "workload", "primary_path")
CONSISTENT, DIFFERS, INCONCLUSIVE = "consistent", "differs", "inconclusive"
ID = "host-consistency"


def _value(runs: pl.DataFrame) -> pl.DataFrame:
    cols = set(runs.columns)
    goodput = pl.col("goodput_mbit") if "goodput_mbit" in cols else pl.lit(None, pl.Float64)
    latency = pl.col("app_latency_ms") if "app_latency_ms" in cols else pl.lit(None, pl.Float64)
    return runs.with_columns(
        value=pl.coalesce(goodput, latency),
        what=pl.when(goodput.is_not_null()).then(pl.lit("goodput")).otherwise(pl.lit("application latency")),
        config=pl.concat_str([pl.col(c).cast(pl.Utf8).fill_null("") if c in cols else pl.lit("") for c in CONFIG],
                             separator="|"),
    ).filter(pl.col("value").is_not_null(), pl.col("value") > 0, pl.col("host").is_not_null())


def check(runs: pl.DataFrame, paper: str) -> list[dict]:
    """One row per host of ``paper``'s runs (``runs``: run_facts with ``host``), empty
    when they all come from one host."""
    if "host" not in runs.columns:
        return []
    r = _value(runs)
    hosts = sorted(r["host"].unique().to_list())
    if len(hosts) < 2:
        return []
    rows = []
    for h in hosts:
        mine = r.filter(pl.col("host") == h)
        others = (r.filter(pl.col("host") != h).group_by("config")
                  .agg(ref=pl.col("value").median(), ref_runs=pl.len()))
        shared = mine.join(others, on="config", how="inner")
        ratios = (shared["value"] / shared["ref"]).to_numpy().astype(float)
        row = {"paper": paper, "host": h, "runs": mine.height, "shared_runs": len(ratios),
               "configs": shared["config"].n_unique(), "what": ", ".join(sorted(set(shared["what"]))),
               "value": None, "ci_low": None, "ci_high": None}
        if len(ratios) < MIN_RUNS:
            rows.append({**row, "verdict": INCONCLUSIVE,
                         "reason": f"{len(ratios)} of its runs share a configuration with another host "
                                   f"(at least {MIN_RUNS} needed)"})
            continue
        e = estimate({"x": ratios}, mean("x"), seed_of(ID, paper, h))
        lo, hi = 1 - TOLERANCE, 1 + TOLERANCE
        verdict = (CONSISTENT if lo <= e.lo and e.hi <= hi else
                   DIFFERS if e.hi < lo or e.lo > hi else INCONCLUSIVE)
        rows.append({**row, "value": float(e.value), "ci_low": float(e.lo), "ci_high": float(e.hi),
                     "verdict": verdict,
                     "reason": (f"{row['what']} {e.value:.3g}× [{e.lo:.3g}, {e.hi:.3g}] the other hosts' on "
                                f"{row['configs']} shared configuration(s), {len(ratios)} runs; band "
                                f"[{lo:.2f}, {hi:.2f}]")})
    return rows


def differing(rows: list[dict]) -> dict[str, str]:
    """{paper: why its computed rows are not comparable} for papers with a host that differs."""
    out: dict[str, list[str]] = {}
    for r in rows:
        if r["verdict"] == DIFFERS:
            out.setdefault(r["paper"], []).append(f"host {r['host']}: {r['reason']}")
    return {p: "runs pooled from hosts that differ (lab check host-consistency): " + "; ".join(v)
            for p, v in out.items()}

