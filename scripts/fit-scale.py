#!/usr/bin/env python3
"""Fit each campaign's standard scale to the plans: every repetition count the standard
scale sets per scenario (``{repetitions: N}``) or per workload (``repetitions_by_workload``)
is lowered, one at a time, to the smallest of 5, 8, 10, 15, 20 at which a capture at that
scale still gives every planned group its runs (``papers.coverage.shortfalls`` on a
synthetic database of the scale, as tests/test_plans.py checks). Counts are never raised
(a group short of its plan is for a person to place: it fails that test). Writes the
campaign.yaml files in place (atomically) and prints what changed.

    .venv/bin/python scripts/fit-scale.py [chen,cs244,...] [--dry-run]

Why: issue 41's budget (the standard scale within four hours on this 2-core box) is spent
on the runs the plans ask, and no more; the plans are fixed before the capture.
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

import duckdb

from findings.measure import Facts
from papers import PAPERS
from papers.coverage import shortfalls
from papers.registry import all_claims
from papers.synthetic import build

TRY = (5, 8, 10, 15, 20)
BY_WORKLOAD = re.compile(r"repetitions_by_workload: \{([^}]*)\}")
PER_SCENARIO = re.compile(r"\{repetitions: (\d+)\}")


def standard_block(lines: list[str]) -> range:
    """The line numbers of the ``standard:`` scale under ``scales:``."""
    top = next(i for i, ln in enumerate(lines) if ln.rstrip() == "scales:")
    start = next(i for i in range(top + 1, len(lines)) if lines[i].rstrip() == "  standard:")
    end = next((i for i in range(start + 1, len(lines))
                if lines[i].strip() and not lines[i].startswith("   ") and not lines[i].lstrip().startswith("#")),
               len(lines))
    return range(start + 1, end)


def knobs(lines: list[str]) -> list[tuple[int, int, int, str]]:
    """(line, start, end, label) of every repetition count in the standard scale."""
    out, scenario = [], ""
    for i in standard_block(lines):
        ln = lines[i]
        if re.match(r"^      [\w.+-]+:", ln):  # a scenario filter's first line (its name)
            scenario = ln.strip().split(":")[0]
        m = BY_WORKLOAD.search(ln)
        if m:
            for e in re.finditer(r"([\w.+-]+): (\d+)", m.group(1)):
                s = m.start(1) + e.start(2)
                out.append((i, s, s + len(e.group(2)), f"{scenario} {e.group(1)}"))
        for m in PER_SCENARIO.finditer(ln):
            out.append((i, m.start(1), m.end(1), scenario))
    return out


def short(paper: str, text: str) -> list[str]:
    """The planned groups a capture of ``text`` (the paper's campaign.yaml) leaves short."""
    with tempfile.TemporaryDirectory() as d:  # the trial text is read in place of the file: nothing is written
        db = build(Path(d) / "s.duckdb", papers=(paper,), reps=None, campaigns={paper: text})
        con = duckdb.connect(str(db), read_only=True)
        try:
            return shortfalls([c for c in all_claims() if c.paper == paper], Facts(con))
        finally:
            con.close()


def fit(paper: str, dry_run: bool) -> list[str]:
    f = PAPERS[paper].campaign_file
    lines = f.read_text().splitlines(keepends=True)
    if short(paper, "".join(lines)):
        raise SystemExit(f"{f}: the standard scale already leaves planned groups short; place them first "
                         "(python -m pytest tests/test_plans.py)")
    changed = []
    for j in range(len(knobs(lines))):
        i, s, e, label = knobs(lines)[j]  # again after each change: a shorter number moves the rest of its line
        now = int(lines[i][s:e])
        for k in (v for v in TRY if v < now):
            trial = lines[:i] + [lines[i][:s] + str(k) + lines[i][e:]] + lines[i + 1:]
            if not short(paper, "".join(trial)):
                lines = trial
                changed.append(f"{paper}: {label}: {now} -> {k}")
                break
    if changed and not dry_run:
        tmp = f.with_name(f".{f.name}.tmp")
        tmp.write_text("".join(lines))
        tmp.replace(f)
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("papers", nargs="?", default="chen,cs244,deng,ditg,ferlin", help="comma-separated (default: all)")
    ap.add_argument("--dry-run", action="store_true", help="print what would change, write nothing")
    a = ap.parse_args(argv)
    for p in a.papers.split(","):
        for line in fit(p, a.dry_run) or [f"{p}: nothing to lower"]:
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
