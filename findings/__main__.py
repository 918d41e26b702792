"""python -m findings: write the findings table (and the lab checks) of a lab database."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .evaluate import counts, findings, markdown, write_csv
from .stats import RESAMPLES


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m findings",
        description="The papers' claims against the lab's runs: our value with a seeded 95 % bootstrap CI over "
                    "runs, the paper's band, and a verdict (agree / disagree / inconclusive / not reproducible "
                    "here / no data).")
    ap.add_argument("--db", required=True, help="the lab's DuckDB file (results/lab.duckdb)")
    ap.add_argument("--out", required=True, help="findings CSV to write (results/findings.csv)")
    ap.add_argument("--checks", help="also write the lab checks (emulated links vs the papers' networks) here")
    ap.add_argument("--markdown", help="also write the verdict table as Markdown here")
    ap.add_argument("--resamples", type=int, default=RESAMPLES, help=f"bootstrap resamples (default {RESAMPLES})")
    a = ap.parse_args(argv)
    if a.resamples < 2000:
        ap.error("--resamples: at least 2000")
    if not Path(a.db).is_file():
        print(f"error: {a.db}: no such database", file=sys.stderr)
        return 2
    t = findings(a.db, resamples=a.resamples)
    write_csv(t, a.out)
    print(f"{a.out}: {t.height} findings; {counts(t)}")
    if a.checks:
        c = findings(a.db, kind="lab-check", resamples=a.resamples)
        write_csv(c, a.checks)
        print(f"{a.checks}: {c.height} lab checks; {counts(c)}")
    if a.markdown:
        Path(a.markdown).write_text(markdown(t) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
