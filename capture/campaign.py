"""Run a campaign: its runs (capture.spec) one after another in the campaign's
randomized order, resumable (a finished run is never redone, a half run is redone).

A run whose emulator stalled (capture/health.py) is repeated up to the campaign's
``stall_retry.repeats`` times; ``campaign-status.json`` in the campaign's folder
says which runs ran, failed, were repeated and are still stalled, which run an
interruption (SIGINT, SIGTERM: a time limit) stopped, and which runs are still missing.
It accumulates over invocations (the workflow runs one run per invocation, maybe
several at once) and is written even when an invocation is interrupted.
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import time
from pathlib import Path

from tqdm import tqdm

from .estimate import estimate_s
from .experiment import DONE, run_one
from .spec import CampaignError, RunSpec, expand, load
from .topology import sweep
from .util import block_signals, log, unblock_signals


def run_repeating_stalls(spec: RunSpec, run_dir: Path) -> dict:
    """One run; while the emulator stalled (worst lateness > ``spec.stall_ms``) it is
    repeated, at most ``spec.stall_repeats`` times. The last attempt is kept (its
    meta.json lists the earlier ones); returns its meta."""
    attempts: list[dict] = []
    while True:
        meta = run_one(spec, run_dir, attempts)
        st = meta.get("stalls") or {}
        if not st.get("stalled") or len(attempts) >= spec.stall_repeats:
            return meta
        attempts.append({"attempt": meta["attempt"], "started_at": meta["started_at"],
                         "worst_late_ms": st["worst_late_ms"], "worst_late_at_s": st["worst_late_at_s"],
                         "late_intervals": st["late_intervals"], "steal_pct": meta["host"].get("steal_pct")})
        log.warning("run %s: the emulator stalled (a frame %.1f ms late, > %.1f ms): repeating it (%d of at most %d)",
                    spec.run_id, st["worst_late_ms"], spec.stall_ms, len(attempts), spec.stall_repeats)


def merge_status(file: Path, summary: dict, missing: list[str]) -> dict:
    """Fold one invocation's summary into ``campaign-status.json`` (under a lock, written
    atomically): runs ok / failed (with the error) / repeated (earlier attempts) /
    still stalled after the repeats (worst lateness, ms) / interrupted (by which signal),
    over every invocation; ``missing``: the campaign's runs with no finished folder now."""
    file.parent.mkdir(parents=True, exist_ok=True)
    with open(file.with_name(f".{file.name}.lock"), "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        try:
            old = json.loads(file.read_text())
        except (OSError, ValueError):
            old = {}
        ran = set(summary["ok"]) | set(summary["failed"]) | set(summary.get("interrupted", {}))
        st = {"campaign": summary["campaign"], "scale": summary["scale"], "total": summary["total"],
              "seed": summary.get("seed"),
              "ok": sorted((set(old.get("ok", [])) - ran) | set(summary["ok"])),
              "failed": {**{k: v for k, v in old.get("failed", {}).items() if k not in ran}, **summary["failed"]},
              "repeated": {**{k: v for k, v in old.get("repeated", {}).items() if k not in ran}, **summary["repeated"]},
              "stalled": {**{k: v for k, v in old.get("stalled", {}).items() if k not in ran}, **summary["stalled"]},
              "interrupted": {**{k: v for k, v in old.get("interrupted", {}).items() if k not in ran},
                              **summary.get("interrupted", {})},
              "missing": sorted(missing),
              "updated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        tmp = file.with_name(f".{file.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(st, indent=1) + "\n")
        os.replace(tmp, file)
    return st


def _same_seed(root: Path, seed: int | None) -> None:
    """Refuse to mix seeds in one folder: a finished run of another seed would be kept
    as if it were of this one."""
    try:
        old = json.loads((root / "campaign-status.json").read_text()).get("seed")
    except (OSError, ValueError, AttributeError):
        return
    if old is not None and seed is not None and old != seed:
        raise CampaignError(f"{root}: holds runs of seed {old}, not {seed}: a replicate with another seed "
                            "needs its own --out")


def run_campaign(path: str | Path, out: str | Path, flat: bool = False, only: str | None = None,
                 dry_run: bool = False, progress: bool = True, scale: str | None = None,
                 run_ids: list[str] | None = None, seed: int | None = None) -> dict:
    """Run a campaign at ``scale``; finished runs (DONE marker) are skipped, half runs
    redone. ``only``: a regex on run ids; ``run_ids``: exactly these runs (unknown
    ids are an error); ``seed``: replaces the campaign's seed (an independent replicate;
    give it its own ``out``)."""
    path = Path(path)
    doc = load(path, scale)
    specs = all_specs = expand(doc, base_dir=path.resolve().parent, scale=scale, seed=seed)
    if only:
        specs = [s for s in specs if re.search(only, s.run_id)]
    if run_ids:
        known = {s.run_id for s in specs}
        unknown = [r for r in run_ids if r not in known]
        if unknown:
            raise CampaignError(f"{path}: no run {unknown[0]!r} at scale {specs[0].scale if specs else scale}")
        specs = [s for s in specs if s.run_id in set(run_ids)]
    root = Path(out) if flat else Path(out) / doc["name"]
    _same_seed(root, specs[0].campaign_seed if specs else None)
    todo, done = [], []
    for s in specs:
        (done if (root / s.run_id / DONE).exists() else todo).append(s)
    summary = {"campaign": doc["name"], "scale": specs[0].scale if specs else scale, "total": len(specs),
               "seed": specs[0].campaign_seed if specs else seed,
               "skipped_done": len(done), "estimated_s": round(sum(estimate_s(s) for s in todo), 1),
               "todo": [s.run_id for s in todo], "ok": [], "failed": {}, "repeated": {}, "stalled": {}}
    if dry_run:
        return summary
    root.mkdir(parents=True, exist_ok=True)
    (root / "campaign.yaml").write_text(path.read_text()) if not flat else None
    sweep()
    t0 = time.monotonic()
    bar = tqdm(total=len(specs), initial=len(done), unit="run", disable=not progress,
               desc=doc["name"], dynamic_ncols=True)
    current = None
    try:
        for s in todo:
            current = s.run_id
            bar.set_postfix_str(s.run_id[-40:])
            try:
                meta = run_repeating_stalls(s, root / s.run_id)
                summary["ok"].append(s.run_id)
                if meta["earlier_attempts"]:
                    summary["repeated"][s.run_id] = meta["earlier_attempts"]
                if (meta.get("stalls") or {}).get("stalled"):
                    summary["stalled"][s.run_id] = meta["stalls"]["worst_late_ms"]
            except Exception as e:  # a failed run is reported and redone next time
                summary["failed"][s.run_id] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
                log.error("run %s failed: %s", s.run_id, summary["failed"][s.run_id])
            bar.update(1)
        current = None
    except BaseException as e:  # SIGINT/SIGTERM (a time limit): recorded below, then passed on
        if current is not None:
            summary["interrupted"] = {current: f"{type(e).__name__}: {e}".rstrip(": ")}
        raise
    finally:
        bar.close()
        summary["wall_s"] = round(time.monotonic() - t0, 1)
        if not flat:
            # a second signal must not stop the status half-way (it is written atomically anyway)
            mask = block_signals()
            try:
                missing = [s.run_id for s in all_specs if not (root / s.run_id / DONE).exists()]
                merge_status(root / "campaign-status.json", summary, missing)
            finally:
                unblock_signals(mask)
    return summary
