"""Calibration runs: a slice of a paper's campaign with some link-profile settings changed,
captured, analysed and judged against the paper's conditions, so a profile can be sized
to the conditions of the claims that use it and the runs that sized it recorded beside
it (``papers/<paper>/calibration.yaml``).

    python -m papers calibrate papers/chen/campaign.yaml --only '^t6-sprint_MP-2-lia_4MB_wifi_r[1-3]$' \\
        --set chen-3g-sprint-t6.rtt_ms=60 --set chen-3g-sprint-t6.queue_bytes=40000 \\
        --checks 'lab-chen-t6-|chen-fig12-sprint' --out /tmp/cal/sprint-60

``--set PROFILE.KEY=VALUE`` (``PROFILE.down.KEY`` for one direction; VALUE is YAML) changes
the campaign's named profile for these runs only: the campaign's profiles file is copied
with the change into ``--out`` (the source tree is never written). The runs are the
campaign's own (same run ids, seeds and order), captured into ``--out/raw``, analysed
into ``--out/lab.duckdb``; the paper's findings and lab checks whose id matches
``--checks`` are printed per group and appended, with the settings, to
``--out/calibration-runs.yaml``: what to copy into the paper's calibration.yaml.
"""
from __future__ import annotations

import argparse
import datetime as dt
import re
import subprocess
import sys
from pathlib import Path

import yaml

from capture.campaign import run_campaign
from capture.spec import CampaignError, _profiles_path, load_profiles
from capture.util import REPO
from findings import evaluate

from .judge import findings


def override(profiles: dict, setting: str) -> None:
    """Apply one ``PROFILE.KEY=VALUE`` (or ``PROFILE.down.KEY=VALUE``) to ``profiles``."""
    key, sep, raw = setting.partition("=")
    parts = key.split(".")
    if not sep or len(parts) < 2 or parts[0] not in profiles:
        known = ", ".join(sorted(profiles))
        raise CampaignError(f"--set {setting!r}: expected PROFILE.KEY=VALUE with a profile of the campaign ({known})")
    node = profiles[parts[0]]
    for p in parts[1:-1]:
        node = node.setdefault(p, {})
    value = yaml.safe_load(raw)
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value


def _absolute_traces(profiles: dict, base: Path) -> None:
    for prof in profiles.values():
        for part in (prof, prof.get("down"), prof.get("up")):
            if isinstance(part, dict) and "trace" in part and not Path(part["trace"]).is_absolute():
                part["trace"] = str((base / part["trace"]).resolve())


def prepare(campaign: Path, settings: list[str], out: Path) -> Path:
    """The campaign with the changed profiles, written into ``out``; returns its path."""
    doc = yaml.safe_load(campaign.read_text())
    src = _profiles_path(doc, campaign.resolve().parent)
    profiles = load_profiles(src)
    for s in settings:
        override(profiles, s)
    _absolute_traces(profiles, src.parent)
    # inline links' traces are relative to the campaign's folder, which the copy leaves
    _absolute_traces({f"{n}.{p}": link for n, sc in doc["scenarios"].items() for p, link in sc.items()
                      if isinstance(link, dict)}, campaign.resolve().parent)
    out.mkdir(parents=True, exist_ok=True)
    (out / "profiles.yaml").write_text(yaml.safe_dump(profiles, sort_keys=False))
    doc["profiles_file"] = str((out / "profiles.yaml").resolve())
    path = out / "campaign.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    return path


def judged(db: Path, paper: str, pattern: str) -> list[dict]:
    """The paper's rows (findings and lab checks) matching ``pattern``, with their groups.
    Calibration slices have fewer runs per group than a verdict needs (findings.stats.
    MIN_RUNS): they size a link, they are not evidence, so groups of two runs or more
    are computed here (and never written into a findings table)."""
    floor, evaluate.MIN_RUNS = evaluate.MIN_RUNS, 2
    try:
        t, checks, groups = findings(str(db), paper=paper)
    finally:
        evaluate.MIN_RUNS = floor
    rows = []
    for r in [*t.to_dicts(), *checks.to_dicts()]:
        if not re.search(pattern, r["id"]):
            continue
        gs = groups.filter(groups["id"] == r["id"]).to_dicts()
        rows.append({"id": r["id"], "band": [r["band_low"], r["band_high"]], "verdict": r["magnitude_verdict"],
                     "groups": {g["group"]: {"value": g["value"], "ci": [g["ci_low"], g["ci_high"]], "n": g["n"],
                                             "verdict": g["magnitude_verdict"]} for g in gs}})
    return rows


def other_settings(out: Path, settings: list[str]) -> list[str] | None:
    """The settings the runs already in ``out`` were captured with, when they are not
    ``settings`` (None: nothing there yet, or the same settings: resuming adds runs).
    Finished runs without a record are taken as other settings (unknown)."""
    log = out / "calibration-runs.yaml"
    records = (yaml.safe_load(log.read_text()) or []) if log.is_file() else []
    for r in records:
        if sorted(r.get("settings") or []) != sorted(settings):
            return list(r.get("settings") or [])
    if not records and any((out / "raw").glob("*/*/.done")):
        return ["unrecorded"]
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m papers calibrate", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("campaign", type=Path)
    ap.add_argument("--only", required=True, help="regex: the campaign's runs to capture")
    ap.add_argument("--set", dest="settings", action="append", default=[], metavar="PROFILE.KEY=VALUE")
    ap.add_argument("--checks", default=".", help="regex: the findings and lab checks to print")
    ap.add_argument("--scale", default="standard")
    ap.add_argument("--out", type=Path, required=True, help="a folder of its own for this calibration run")
    ap.add_argument("--note", default="", help="why this setting (kept in the record)")
    a = ap.parse_args(argv)
    clash = other_settings(a.out, a.settings)
    if clash is not None:
        print(f"error: {a.out} holds runs captured with other settings ({', '.join(clash) or 'none'}); the "
              f"capture would keep them as done and judge them as these: give this calibration a folder of "
              f"its own (--out)", file=sys.stderr)
        return 2
    try:
        camp = prepare(a.campaign, a.settings, a.out)
        doc = yaml.safe_load(camp.read_text())
        summary = run_campaign(camp, a.out / "raw", only=a.only, scale=a.scale)
    except CampaignError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    runs = sorted(p.parent for p in (a.out / "raw" / doc["name"]).glob("*/.done"))
    if not runs:
        print("error: no run finished", file=sys.stderr)
        return 1
    db = a.out / "lab.duckdb"
    r = subprocess.run([sys.executable, "-m", "pipeline", "analyze", *map(str, runs), "--db", str(db)],
                       cwd=REPO, capture_output=True, text=True)
    if r.returncode not in (0,):
        print(r.stderr[-2000:], file=sys.stderr)
    rows = judged(db, doc.get("study") or doc["name"], a.checks)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    record = {"when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "commit": commit,
              "settings": a.settings, "runs": a.only, "captured": len(runs), "failed": summary["failed"],
              "note": a.note, "measured": rows}
    log = a.out / "calibration-runs.yaml"
    old = yaml.safe_load(log.read_text()) if log.is_file() else []
    log.write_text(yaml.safe_dump([*old, record], sort_keys=False, allow_unicode=True, width=120))
    for row in rows:
        for g, v in row["groups"].items():
            print(f"{row['id']:45s} {g:40s} {v['value']:10.4g} [{v['ci'][0]:.4g}, {v['ci'][1]:.4g}] n={v['n']} "
                  f"band {row['band']} {v['verdict']}")
    return 0

