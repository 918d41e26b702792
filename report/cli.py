"""The ``mptcp-lab`` console script: the pipeline's commands (``pipeline.cli``: analyze,
tables, load, plot, show, describe, reference) and ``compare``, which groups runs by a
label and estimates with the findings' statistics (``findings.compare``) and draws with
the figure helpers (``labfig.compare``). The pipeline imports nothing above it
(tests/test_layers.py), so the command lives here, at the top, and hands every other
command to ``pipeline.cli.main``.

    mptcp-lab compare --db lab.duckdb --by cc [--metric rtt_ms ...] [--base reno] [-o cc.svg]
    python -m report.cli compare ...     (the same without the console script installed)
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pipeline import cli as pipeline_cli
from pipeline.extras import missing
from pipeline.labels import RULE, is_key

HELP = "runs grouped by a label: per value, n and each metric's mean with its 95-percent interval (-> SVG/HTML)"
EPILOG = """\
examples:
  mptcp-lab analyze mine/*.pcap --labels labels.csv --db lab.duckdb   (labels.csv: run,cc then a row per run)
  mptcp-lab compare --db lab.duckdb --by cc
  mptcp-lab compare --db lab.duckdb --by cc --metric download_time_s --metric rtt_ms -o cc.svg

Metrics (a run's value, from the derived layer; docs/pipeline.md):
{metrics}

Runs the findings leave out (stalled: run_config.usable false) are left out and counted.
Every value is compared with the first (or --base): the difference and the ratio of the
means, with their intervals (Welch). An interval over fewer than {min_runs} runs is printed,
marked * and warned about: the lab checks its intervals' coverage at n >= {min_runs}.

Exit status: 0; 1 when no run of the database carries the label KEY; 2 for a bad
argument (--by, --metric, --base, -o) or a database that cannot be read.
"""


def _prog() -> str:
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return f"{script} compare" if script.startswith("mptcp-lab") else "python -m report.cli compare"


def _list_compare(sub: argparse._SubParsersAction) -> None:
    """``compare`` in the pipeline's command list (its arguments are its own: ``compare_main``)."""
    sub.add_parser("compare", help=HELP + " (mptcp-lab compare --help)")


def compare_parser() -> argparse.ArgumentParser:
    from findings.compare import METRICS  # here: analyze's start-up pays for none of the findings
    from findings.stats import MIN_RUNS

    metrics = "\n".join(f"  {m.name:<16} {m.title}: {m.source}" for m in METRICS.values())
    p = argparse.ArgumentParser(prog=_prog(), description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=EPILOG.format(metrics=metrics, min_runs=MIN_RUNS))
    p.add_argument("--db", required=True, help="the lab's DuckDB file (read only)")
    p.add_argument("--by", required=True, metavar="KEY", help="the label to group runs by (run_labels.key)")
    p.add_argument("--metric", action="append", choices=list(METRICS), metavar="METRIC",
                   help=f"a metric to compare (repeatable; default: all): {', '.join(METRICS)}")
    p.add_argument("--base", metavar="VALUE", help="the value the others are compared with (default: the first)")
    p.add_argument("-o", "--output", metavar="FIG", help="the figure: .svg, .html, .png or .json")
    return p


def compare_main(argv: list[str]) -> int:
    """``compare``: the comparison as text on stdout, warnings on stderr, the figure to -o."""
    from findings import compare as estimates
    from labfig import compare as figure
    from pipeline import derived, runplots

    a = compare_parser().parse_args(argv)
    if not is_key(a.by):
        return _error(f"--by {a.by!r}: not a label key (an identifier: {RULE})", 2)
    if a.output and Path(a.output).suffix.lower() not in runplots.FORMATS:
        return _error(f"-o {a.output}: unknown figure format (use {', '.join(runplots.FORMATS)})", 2)
    if not Path(a.db).is_file():
        return _error(f"{a.db}: no such database (mptcp-lab analyze ... --label KEY=VALUE --db {a.db} makes one)", 2)
    try:
        con = derived.connect(a.db)
    except Exception as e:  # not a DuckDB file, a store too old for the views, locked by a writer
        return _error(f"{a.db}: cannot be read as the lab's database ({_first_line(e)})", 2)
    try:
        df = estimates.run_values(con, a.by)
        keys = estimates.label_keys(con) if df.is_empty() else []
    except estimates.CompareError as e:
        return _error(f"{a.db}: {e}", 1)
    except Exception as e:  # a table of the lab's missing (a store an older version wrote, never upgraded)
        return _error(f"{a.db}: cannot be read as the lab's database ({_first_line(e)})", 2)
    finally:
        con.close()
    if df.is_empty():
        known = f"its runs' labels: {', '.join(keys)}" if keys else "no run of it has a label"
        return _error(f"{a.db}: no run is labelled {a.by!r} ({known})", 1)
    try:
        c = estimates.compare(df, a.by, a.metric, a.base)
    except estimates.CompareError as e:
        return _error(str(e), 2 if isinstance(e, estimates.BadArgument) else 1)
    print(estimates.table(c))
    for w in estimates.warnings(c):
        print(w, file=sys.stderr)
    return _draw(figure.chart(c), a.output) if a.output else 0


def _draw(chart, out: str) -> int:
    from pipeline import runplots  # (altair: for a figure only)

    if chart is None:
        return _error(f"-o {out}: no group has a value of any metric asked for: nothing to draw", 1)
    try:
        runplots.save(chart, out)
    except runplots.OutputError as e:
        return _error(str(e), 2)
    print(f"wrote {out}", file=sys.stderr)
    return 0


def _error(message: str, status: int) -> int:
    print(f"error: {message}", file=sys.stderr)
    return status


def _first_line(e: BaseException) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def main(argv: list[str] | None = None) -> int:
    """``mptcp-lab``: ``compare`` here, every other command the pipeline's."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["compare"]:
        if need := missing("numpy", "compare", "compare"):
            return _error(need, 2)
        return compare_main(argv[1:])
    return pipeline_cli.main(argv, extra=_list_compare)


if __name__ == "__main__":
    sys.exit(main())
