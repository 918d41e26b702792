"""python -m papers findings: write the findings table (and the lab checks) of a lab database."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from findings.evaluate import counts, markdown, write_csv
from findings.stats import RESAMPLES

from .judge import findings


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m papers findings",
        description="The papers' claims against the lab's runs: every statement of each paper's claim inventory "
                    "with our value, its 95 %% interval over runs (a method whose coverage at n = 5 is checked), "
                    "the band of the paper's number, a magnitude and a direction verdict (agree / disagree / "
                    "inconclusive / underpowered / not comparable / not reproducible here / no data).")
    ap.add_argument("--db", required=True, help="the lab's DuckDB file (results/lab.duckdb)")
    ap.add_argument("--out", required=True, help="findings CSV to write (results/findings.csv)")
    ap.add_argument("--checks", help="also write the lab checks (emulated links vs the papers' networks) here")
    ap.add_argument("--groups", help="also write every compared group's estimate (the figures draw these) here")
    ap.add_argument("--markdown", help="also write the verdict table as Markdown here")
    ap.add_argument("--resamples", type=int, default=RESAMPLES, help=f"bootstrap resamples (default {RESAMPLES})")
    a = ap.parse_args(argv)
    if a.resamples < 2000:
        ap.error("--resamples: at least 2000")
    if not Path(a.db).is_file():
        print(f"error: {a.db}: no such database", file=sys.stderr)
        return 2
    t, c, g = findings(a.db, resamples=a.resamples)
    write_csv(t, a.out)
    print(f"{a.out}: {t.height} findings; magnitude: {counts(t)}")
    if a.checks:
        write_csv(c, a.checks)
        print(f"{a.checks}: {c.height} lab checks; {counts(c)}")
    if a.groups:
        write_csv(g, a.groups)
        print(f"{a.groups}: {g.height} group estimates")
    if a.markdown:
        Path(a.markdown).write_text(markdown(t) + "\n")
    return 0

