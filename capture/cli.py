"""Command line: ``python -m capture {run,sample,check,validate,sweep}``."""
from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
from pathlib import Path

from pipeline.extras import missing

from .scales import SCALES, raw_dir
from .util import LINKEM, REPO, Interrupted, linkem_available, signals_raise

SAMPLES_CAMPAIGN = REPO / "capture" / "campaigns" / "samples.yaml"


def _prereqs() -> list[str]:
    errs = []
    if os.geteuid() != 0:
        errs.append("must run as root (network namespaces)")
    for t in ("ip", "tc", "tcpdump", "mergecap", "ethtool", "mptcpize", "nginx", "wget", "ss", "iperf3"):
        if not shutil.which(t) and not os.path.exists(f"/usr/sbin/{t}"):
            errs.append(f"missing tool: {t} (scripts/setup-system.sh installs it)")
    return errs


def cmd_run(a) -> int:
    from .campaign import run_campaign
    from .spec import CampaignError
    try:
        if not a.dry_run:
            errs = _prereqs()
            if errs:
                print("error: " + "; ".join(errs), file=sys.stderr)
                return 2
        with signals_raise():
            s = run_campaign(a.campaign, a.out, flat=a.flat, only=a.only, dry_run=a.dry_run,
                             progress=not a.no_progress, scale=getattr(a, "scale", None),
                             run_ids=getattr(a, "run", None), seed=getattr(a, "seed", None))
    except CampaignError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Interrupted as e:
        print(f"interrupted ({e}); namespaces cleaned up, the current run will be redone; "
              "campaign-status.json says what finished and what is missing", file=sys.stderr)
        return 130
    if a.dry_run:
        print(json.dumps(s, indent=1))
        return 0
    print(f"{s['campaign']} ({s.get('scale') or 'no scales'}): {len(s['ok'])} ran, {s['skipped_done']} already done, "
          f"{len(s['failed'])} failed in {s.get('wall_s', 0):.0f} s (estimated {s['estimated_s']:.0f} s)")
    for rid, tries in s["repeated"].items():
        print(f"  repeated {rid} {len(tries)}x after emulator stalls (worst "
              f"{max(t['worst_late_ms'] for t in tries):.1f} ms late)", file=sys.stderr)
    for rid, worst in s["stalled"].items():
        print(f"  STALLED {rid}: kept with a frame {worst:.1f} ms late (flagged in meta.json and the tables)",
              file=sys.stderr)
    for rid, err in s["failed"].items():
        print(f"  FAILED {rid}: {err}", file=sys.stderr)
    return 1 if s["failed"] else 0


def cmd_sample(a) -> int:
    a.campaign, a.flat, a.only, a.dry_run = str(SAMPLES_CAMPAIGN), True, None, False
    out = Path(a.out)
    if a.force:
        from .experiment import DONE
        for d in out.glob("*/"):
            (d / DONE).unlink(missing_ok=True)
    return cmd_run(a)


def cmd_check(a) -> int:
    from .kernel import check
    from .spec import CampaignError, load
    rc = 0
    for c in a.campaign or []:
        try:
            load(c)
            print(f"{c}: ok", file=sys.stderr)
        except CampaignError as e:
            print(f"error: {e}", file=sys.stderr)
            rc = 2
    k = check()
    rep = {"prerequisites_missing": _prereqs(),
           "linkem": {"path": str(LINKEM.relative_to(REPO)), "built": linkem_available()},
           "kernel": k}
    print(json.dumps(rep, indent=2))
    if rep["prerequisites_missing"] or not k.get("mptcp", {}).get("enabled"):
        rc = rc or 1
    return rc


def cmd_validate(a) -> int:
    from .estimate import plan
    from .spec import CampaignError, load, scales_of
    rc = 0
    total = {}
    for c in a.campaign:
        try:
            doc = load(c, a.scale)
            parts = []
            for sc in ([a.scale] if a.scale else scales_of(doc)):
                pl = plan(c, sc)
                parts.append(f"{sc or 'single scale'}: {pl['runs']} runs, ~{pl['estimated_s'] / 60:.1f} min")
                total[sc] = total.get(sc, 0) + pl["estimated_s"]
            print(f"{c}: ok ({'; '.join(parts)})")
        except CampaignError as e:
            print(f"error: {e}", file=sys.stderr)
            rc = 2
    if len(a.campaign) > 1:
        print("estimated total: " + "; ".join(f"{k or 'single scale'} ~{v / 60:.1f} min" for k, v in total.items()))
    return rc


def _hms(s: float) -> str:
    return f"{s / 86400:.1f} d" if s >= 2 * 86400 else f"{s / 3600:.1f} h" if s >= 3600 else f"{s / 60:.0f} min"


def cmd_estimate(a) -> int:
    from .estimate import makespan_s, run_times
    from .spec import CampaignError
    hosts = tuple(sorted(set(a.hosts)))
    if hosts[0] < 1:
        print("error: --hosts: at least 1", file=sys.stderr)
        return 2
    head = f"{'campaign':14s} {'scale':9s} {'runs':>7s} {'capture time':>13s}" + "".join(
        f" {f'{n} host' + ('s' if n > 1 else ''):>10s}" for n in hosts)
    print(head)
    pooled: list[float] = []

    def row(name: str, scale: str, runs: list[float]) -> str:
        return (f"{name:14s} {scale:9s} {len(runs):7,d} {_hms(sum(runs)):>13s}" +
                "".join(f" {_hms(makespan_s(runs, n)):>10s}" for n in hosts))

    for c in a.campaign:
        try:
            name, runs = run_times(c, a.scale)
        except CampaignError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        pooled += runs
        print(row(name, str(a.scale or "-"), runs))
    if len(a.campaign) > 1:
        print(row("all together", "", pooled))
    print("Wall time: each host runs one capture at a time (a capture needs a node of its own), longest "
          "runs first; per-run times from the duration model (capture/estimate.py), set-up and teardown included.")
    return 0


def cmd_scales(a) -> int:
    if a.raw_dir:
        if a.raw_dir not in SCALES:
            print(f"error: unknown scale {a.raw_dir!r} (one of {', '.join(SCALES)})", file=sys.stderr)
            return 2
        print(raw_dir(a.raw_dir))
        return 0
    for s in SCALES.values():
        print(f"{s.name:9s} {'verdicts' if s.evidence else 'figures only':13s} {raw_dir(s.name):14s} {s.what}")
    return 0


def cmd_sweep(a) -> int:
    from .topology import sweep
    removed = sweep(all_owners=a.all)
    print("\n".join(removed) if removed else "nothing to sweep")
    return 0


def main(argv=None) -> int:
    if need := missing("numpy", "capture", "python -m capture"):
        print(f"error: {need}", file=sys.stderr)
        return 2
    p = argparse.ArgumentParser(prog="python -m capture", description=__doc__ + "\nMPTCP measurement testbed "
                                "(network namespaces, linkem/tbf links, nginx+wget or D-ITG, tcpdump both ends).")
    p.add_argument("-v", "--verbose", action="store_true", help="log every command")
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="run a campaign YAML (resumable, randomized order)")
    r.add_argument("campaign")
    r.add_argument("--out", default="data/raw", help="output root; runs go to OUT/<campaign>/<run_id>/")
    r.add_argument("--flat", action="store_true", help="put runs directly in OUT/<run_id>/")
    r.add_argument("--only", help="regex: run only matching run ids")
    r.add_argument("--run", action="append", metavar="RUN_ID",
                   help="run exactly this run (repeatable; the workflow runs one run per job)")
    r.add_argument("--dry-run", action="store_true", help="validate and list the runs to do")
    r.add_argument("--scale", choices=SCALES, default=None,
                   help="campaign scale (the YAML's scales.<scale> block; default: quick when the YAML has one)")
    r.add_argument("--seed", type=int, default=None,
                   help="replace the campaign's seed (the emulator's losses and jitter, the run order, the "
                        "served files, D-ITG's generator): the YAML's seed repeats a capture exactly, a new "
                        "seed is an independent replicate (give it its own --out)")
    r.add_argument("--no-progress", action="store_true")
    r.set_defaults(fn=cmd_run)

    s = sub.add_parser("sample", help="make the committed sample captures (capture/campaigns/samples.yaml)")
    s.add_argument("--out", default="data/samples")
    s.add_argument("--force", action="store_true", help="redo samples that already exist")
    s.add_argument("--no-progress", action="store_true")
    s.set_defaults(fn=cmd_sample)

    c = sub.add_parser("check", help="kernel facts and prerequisites as JSON (and validate campaigns)")
    c.add_argument("campaign", nargs="*")
    c.set_defaults(fn=cmd_check)

    v = sub.add_parser("validate", help="validate campaign YAML files")
    v.add_argument("campaign", nargs="+")
    v.add_argument("--scale", choices=SCALES, default=None, help="only this scale (default: every scale)")
    v.set_defaults(fn=cmd_validate)

    e = sub.add_parser("estimate", help="runs, capture time and wall time on N hosts of campaign files",
                       description="How long campaigns take: runs, total capture time, and the wall time when "
                                   "their runs are spread over N hosts (one capture per host at a time).",
                       epilog="example: python -m capture estimate papers/*/campaign.yaml --scale paper "
                              "--hosts 1 8 32")
    e.add_argument("campaign", nargs="+", help="campaign YAML file(s)")
    e.add_argument("--scale", help="scale to plan (quick, standard, paper; default: the file's only scale)")
    e.add_argument("--hosts", type=int, nargs="+", default=[1, 8, 32], metavar="N",
                   help="numbers of hosts to plan for (default: 1 8 32)")
    e.set_defaults(fn=cmd_estimate)
    sc = sub.add_parser("scales", help="what each campaign scale means (capture/scales.py)")
    sc.add_argument("--raw-dir", metavar="SCALE", help="print only where SCALE's captures go")
    sc.set_defaults(fn=cmd_scales)
    w = sub.add_parser("sweep", help="delete namespaces left by crashed runs (prefix mpl-)")
    w.add_argument("--all", action="store_true", help="also namespaces of live runs")
    w.set_defaults(fn=cmd_sweep)

    argv = sys.argv[1:] if argv is None else list(argv)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if a.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s")
    return a.fn(a)
