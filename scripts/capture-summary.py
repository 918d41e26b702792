"""The table data/reference/README.md (and data/replicate/README.md) gives per campaign,
computed from the committed tables alone: runs, MPTCP runs by congestion control, the
commit(s) the runs name, the capture window, the host's busy share (median / 90th
percentile) with and without the run's own work, and the runs repeated after a stall.

    .venv/bin/python scripts/capture-summary.py data/reference [--check]

--check: exit 1 unless the runs capture alike and, in every campaign, the host's busy share
less the run's own has a median below 5 % and a 90th percentile below 20 % (issue 40's quiet
host). Alike: every run names one commit or, where a later commit added runs (a supplement
when a scale grew), every configuration's runs have one fingerprint (``fingerprint``: link
profiles and emulator settings, sysctls, MPTCP endpoints, routes' metrics, the linkem and
congestion-control builds, kernel and tools) whatever commit they name: the supplement ran
the same experiment, only more of it.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import polars as pl

from capture.spec import configuration

QUIET_MEDIAN, QUIET_P90 = 5.0, 20.0


def runs(folder: Path) -> pl.DataFrame:
    """Every run of the campaign folders below ``folder``, with its meta.json's finish time."""
    parts = [pl.read_parquet(f) for f in sorted(folder.glob("*/runs.parquet"))]
    if not parts:
        raise SystemExit(f"error: {folder}: no <campaign>/runs.parquet below it")
    t = pl.concat(parts, how="diagonal_relaxed")
    done = [json.loads(m).get("finished_at") if m else None for m in t["meta_json"].to_list()]
    return t.with_columns(finished_at=pl.Series(done, dtype=pl.Utf8))


def fingerprint(meta: dict) -> str:
    """What a run's experiment was, from its meta.json, without what differs between runs of one
    configuration (seed, repetition, times, namespace names, counters, the commit itself)."""
    paths = {p: {k: v.get(k) for k in ("profile", "down", "up", "emulator", "client_addr", "server_addr")}
             for p, v in (meta.get("paths") or {}).items()}
    mp = {side: {k: v.get(k) for k in ("endpoints", "limits")} for side, v in (meta.get("mptcp_config") or {}).items()}
    keep = {k: meta.get(k) for k in ("campaign", "scenario", "mode", "transport", "congestion_control", "scheduler",
                                     "path_manager", "primary_path", "workload", "size_bytes", "duration_s", "scale",
                                     "link_profiles", "sysctls_applied", "route_metrics", "snaplen")}
    return _digest({**keep, "paths": paths, "mptcp": mp, "toolchain": toolchain(meta)})


def toolchain(meta: dict) -> str:
    """The builds (linkem, congestion controls), kernel and tools a run ran with."""
    builds = {k: v for k, v in (meta.get("builds") or {}).items() if k != "host"}
    tools = {k: v for k, v in (meta.get("tools") or {}).items() if k != "repo_commit"}
    kernel = ((meta.get("kernel") or {}).get("kernel") or {}).get("release")
    return _digest({"builds": builds, "tools": tools, "kernel": kernel})


def _digest(doc: dict) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()[:16]


def unlike(t: pl.DataFrame) -> list[str]:
    """Where runs naming more than one commit did not capture alike: a campaign whose runs
    ran with different builds, kernel or tools, and a configuration whose runs differ in
    their experiment."""
    if t["repo_commit"].drop_nulls().n_unique() <= 1:
        return []
    metas = [json.loads(m) if m else {} for m in t["meta_json"].to_list()]
    seen = pl.DataFrame({"campaign": t["campaign"], "cfg": [configuration(r) for r in t["run_id"].to_list()],
                         "commit": t["repo_commit"], "fp": [fingerprint(m) for m in metas],
                         "tc": [toolchain(m) for m in metas]})
    differ = (pl.col("commit").n_unique() > 1) & (pl.col("kinds").n_unique() > 1)  # over one group's runs
    camps = seen.rename({"tc": "kinds"}).group_by("campaign").agg(differ.alias("bad"), pl.col("commit").n_unique())
    cfgs = seen.rename({"fp": "kinds"}).group_by("campaign", "cfg").agg(differ.alias("bad"), pl.col("commit").n_unique())
    return ([f"{c}: its runs name {n} commits and ran with different builds, kernel or tools (meta.json)"
             for c, _, n in camps.filter("bad").sort("campaign").iter_rows()]
            + [f"{c}/{k}: its runs name {n} commits and differ in their experiment (meta.json)"
               for c, k, _, n in cfgs.filter("bad").sort("campaign", "cfg").iter_rows()])


def _mptcp(t: pl.DataFrame) -> str:
    mp = t.filter(pl.col("mode").str.starts_with("MP") | (pl.col("mode") == "backup"))
    # ties (chen: 30 olia, 30 reno) sorted by name, or group_by's order decides and the table changes
    by = mp.group_by("congestion_control").len().sort(["len", "congestion_control"], descending=[True, False])
    return ", ".join(f"{n} {cc}" for cc, n in by.iter_rows()) or "–"


def _q(s: pl.Series, q: float) -> str:
    v = s.drop_nulls()
    return "–" if v.is_empty() else f"{v.quantile(q, 'linear'):.1f}"


def table(t: pl.DataFrame) -> tuple[str, list[str]]:
    """The Markdown table, and what fails the quiet-host and one-commit rules."""
    rows = ["| campaign | runs | MPTCP runs (congestion control) | commit | captured (UTC) | capture window | "
            "host busy % (median / p90) | busy less the run's own % (median / p90) | repeated after a stall |",
            "|---|---|---|---|---|---|---|---|---|"]
    bad = []
    commits = sorted(set(t["repo_commit"].drop_nulls()))
    if not commits:
        bad.append("no run names its commit")
    bad += unlike(t)
    for camp in sorted(set(t["campaign"])):
        c = t.filter(pl.col("campaign") == camp)
        start = c["started_at"].str.to_datetime(time_zone="UTC").min()
        end = c["finished_at"].str.to_datetime(time_zone="UTC").max()
        window = (end - start).total_seconds() / 60 if start and end else float("nan")
        others = c["host_others_pct"].drop_nulls()
        if others.is_empty() or others.median() >= QUIET_MEDIAN or others.quantile(0.9, "linear") >= QUIET_P90:
            bad.append(f"{camp}: the host was not quiet (busy less the run's own: median {_q(others, 0.5)} %, "
                       f"p90 {_q(others, 0.9)} %)")
        cs = ", ".join(x[:7] for x in sorted(set(c["repo_commit"].drop_nulls())))
        repeated = int((c["attempt"].fill_null(1) > 1).sum())
        rows.append(f"| {camp} | {c.height} | {_mptcp(c)} | {cs} | {start:%Y-%m-%d %H:%M}–{end:%Y-%m-%d %H:%M} | "
                    f"{window:.1f} min | {_q(c['host_busy_pct'], 0.5)} / {_q(c['host_busy_pct'], 0.9)} | "
                    f"{_q(others, 0.5)} / {_q(others, 0.9)} | {repeated} |")
    return "\n".join(rows), bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="a folder of per-campaign table folders (data/reference)")
    ap.add_argument("--check", action="store_true", help="exit 1 unless the runs capture alike and the host was quiet")
    a = ap.parse_args(argv)
    text, bad = table(runs(a.folder))
    print(text)
    for b in bad:
        print(f"not as asked: {b}", file=sys.stderr)
    return 1 if a.check and bad else 0


if __name__ == "__main__":
    sys.exit(main())
