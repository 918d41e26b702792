"""Run a campaign: its runs (capture.spec) one after another in the campaign's
randomized order, resumable (a finished run is never redone, a half run is redone)."""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

from tqdm import tqdm

from .estimate import estimate_s
from .experiment import DONE, run_one
from .spec import expand, load
from .topology import sweep
from .util import log


def run_campaign(path: str | Path, out: str | Path, flat: bool = False, only: str | None = None,
                 dry_run: bool = False, progress: bool = True, scale: str | None = None) -> dict:
    """Run a campaign at ``scale``; finished runs (DONE marker) are skipped, half runs redone."""
    path = Path(path)
    doc = load(path, scale)
    specs = expand(doc, base_dir=path.resolve().parent, scale=scale)
    if only:
        specs = [s for s in specs if re.search(only, s.run_id)]
    root = Path(out) if flat else Path(out) / doc["name"]
    todo, done = [], []
    for s in specs:
        (done if (root / s.run_id / DONE).exists() else todo).append(s)
    summary = {"campaign": doc["name"], "scale": specs[0].scale if specs else scale, "total": len(specs),
               "skipped_done": len(done), "estimated_s": round(sum(estimate_s(s) for s in todo), 1),
               "todo": [s.run_id for s in todo], "ok": [], "failed": {}}
    if dry_run:
        return summary
    root.mkdir(parents=True, exist_ok=True)
    (root / "campaign.yaml").write_text(path.read_text()) if not flat else None
    sweep()
    t0 = time.monotonic()
    bar = tqdm(total=len(specs), initial=len(done), unit="run", disable=not progress,
               desc=doc["name"], dynamic_ncols=True)
    try:
        for s in todo:
            bar.set_postfix_str(s.run_id[-40:])
            try:
                run_one(s, root / s.run_id)
                summary["ok"].append(s.run_id)
            except Exception as e:  # a failed run is reported and redone next time
                summary["failed"][s.run_id] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
                log.error("run %s failed: %s", s.run_id, summary["failed"][s.run_id])
            bar.update(1)
    finally:
        bar.close()
        summary["wall_s"] = round(time.monotonic() - t0, 1)
    (root / "campaign-status.json").write_text(json.dumps(summary, indent=1) + "\n") if not flat else None
    return summary
