"""Wall time of `snakemake --cores 2 reproduce_all` from the committed sample pcaps.

    python benchmarks/reproduce_bench.py [--cores 2] [--keep]

Runs into a fresh results folder (capture off), so every stage runs: per-run tables,
the DuckDB load, every notebook and figure, the report.  Prints the total and each
rule's time from Snakemake's benchmark-free job log.  Target: under 3 minutes on 2 cores.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 180


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="keep the results folder")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="reproduce-bench-"))
    res = tmp / "results"
    runs = sorted((ROOT / "data/samples").glob("*/meta.json"))
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "snakemake", "--cores", str(a.cores), "reproduce_all",
                        "--config", "capture=false", f"results_dir={res}"],
                       cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        print(r.stderr[-4000:], file=sys.stderr)
        print(f"reproduce_all FAILED after {wall:.1f} s", file=sys.stderr)
        return 1
    jobs = re.findall(r"^(?:local)?rule (\w+):", r.stdout + r.stderr, re.M)
    counts = {j: jobs.count(j) for j in dict.fromkeys(jobs)}
    print(f"sample runs:           {len(runs)}")
    print(f"cores:                 {a.cores}")
    print("jobs:                  " + ", ".join(f"{k}×{v}" for k, v in counts.items()))
    print(f"reproduce_all wall:    {wall:.1f} s  (target < {TARGET_S} s: {'ok' if wall < TARGET_S else 'MISSED'})")
    print(f"figures:               {len(list((res / 'figures').glob('*/*.svg')))} charts")
    if a.keep:
        print(f"results kept in {res}")
    else:
        shutil.rmtree(tmp)
    return 0 if wall < TARGET_S else 2


if __name__ == "__main__":
    sys.exit(main())
