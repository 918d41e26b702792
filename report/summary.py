"""The main job's last lines: what the findings rest on, their verdicts, every failed,
repeated or left-out run, and whether a failed capture touches a verdict.

    python -m report.summary --results results [--source "..."] [--check] [--where [--since=NS]]

The workflow prints the summary when it succeeds (``onsuccess`` in the Snakefile);
``make reproduce-all`` then runs ``--check``, whose exit status tells a script whether
the verdicts are whole: 0 when every planned run was captured (or the runs that failed
belong to papers with no verdict), 3 when a paper whose rows are judged lost runs.
With ``--where`` it ends with where the report is, also when Snakemake had nothing to do
(and ran no ``onsuccess``): then, given the make's start (``--since``), it says "up to date"
first.
"""
from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from pathlib import Path

from pipeline.derived import study_of

AFFECTED = 3
LOST = ("failed", "interrupted")
# verdicts that are a judgement on runs (a lost run could have moved them)
JUDGED = ("agree", "disagree", "inconclusive", "underpowered", "direction only", "no data")


def _rows(path: Path) -> list[dict]:
    try:
        with path.open(newline="") as fh:
            return list(csv.DictReader(fh))
    except OSError:
        return []


def affected(findings: list[dict], issues: list[dict]) -> dict[str, list[str]]:
    """paper -> its runs lost to a failed or interrupted capture, for the papers that have a
    judged row: their groups have fewer runs than planned, so a verdict may differ."""
    judged = {r["paper"] for r in findings if r.get("magnitude_verdict") in JUDGED}
    out: dict[str, list[str]] = {}
    for i in issues:
        p = i.get("study") or study_of(i.get("campaign"))
        if i.get("what") in LOST and p in judged:
            out.setdefault(p, []).append(i.get("run_id") or "?")
    return out


def summary(results: Path, source: str = "") -> tuple[list[str], int]:
    """(lines, exit status) for a results folder (findings.csv, report/run-issues.csv)."""
    lines = [f"data: {source}"] if source else []
    findings_csv, issues_csv, report = results / "findings.csv", results / "report" / "run-issues.csv", \
        results / "report" / "index.html"
    findings = _rows(findings_csv)
    if findings:
        c = Counter(r["magnitude_verdict"] for r in findings)
        lines.append(f"findings: {len(findings)} rows: " + ", ".join(f"{n} {v}" for v, n in c.most_common())
                     + f" ({findings_csv})")
        ind = Counter(r["magnitude_verdict"] for r in findings if r.get("basis") == "outcome"
                      and r["magnitude_verdict"] in ("agree", "disagree"))
        lines.append(f"independent decisive verdicts (basis outcome): {ind['agree']} agree, {ind['disagree']} disagree")
    issues = _rows(issues_csv)
    if issues_csv.exists():
        c = Counter(r["what"] for r in issues)
        lines.append("runs: " + ", ".join(f"{n} {w}" for w, n in c.most_common())
                     + f" ({issues_csv}; the report lists them with reasons)" if issues
                     else "runs: every run completed at its first attempt")
    hit = affected(findings, issues)
    if hit:
        lines.append("VERDICTS AFFECTED: captures failed in " + "; ".join(
            f"{p} ({len(r)} run(s): {', '.join(r[:3])}{', …' if len(r) > 3 else ''})" for p, r in sorted(hit.items()))
            + ": their groups have fewer runs than planned (a group below 5 runs says 'no data'); rerun the same"
              " command: the capture resumes where it stopped")
    elif any(i["what"] in LOST for i in issues):
        lines.append("captures failed only in papers without judged rows: no verdict is affected")
    if report.exists():
        lines.append(report_line(results))
    return lines, AFFECTED if hit else 0


def report_line(results: Path) -> str:
    """Where the results folder's report is, and how many findings (rows of findings.csv) it shows."""
    report = results / "report" / "index.html"
    if not report.exists():
        return f"report: none ({report} not written)"
    n = len(_rows(results / "findings.csv"))
    return f"report: {report} ({n} finding{'' if n == 1 else 's'})"


def closing(results: Path, since_ns: int | None = None) -> list[str]:
    """`make reproduce-all`'s last lines: "up to date" when the report is older than ``since_ns``
    (the make's start, ns since the epoch: every job of the workflow leads to the report, so
    Snakemake had nothing to do), then where the report is."""
    try:
        old = since_ns is not None and (results / "report" / "index.html").stat().st_mtime_ns < since_ns
    except OSError:
        old = False
    return (["up to date: nothing to redo"] if old else []) + [report_line(results)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m report.summary", description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=Path("results"), help="the workflow's results folder")
    ap.add_argument("--source", default="", help="where the runs come from, in words")
    ap.add_argument("--check", action="store_true",
                    help=f"print only when verdicts are affected; exit {AFFECTED} then, else 0")
    ap.add_argument("--where", action="store_true",
                    help="end with where the report is and its number of findings (on standard output)")
    ap.add_argument("--since", default="", metavar="NS",
                    help="with --where: say 'up to date' first when the report is older than this time "
                         "(ns since the epoch; the Makefile passes its start); not a number: ignored")
    a = ap.parse_args(argv)
    lines, status = summary(a.results, a.source)
    end = closing(a.results, int(a.since) if a.since.isdigit() else None) if a.where else []
    for ln in end[:-1]:  # "up to date", before the rest
        print(ln, flush=True)
    if not a.check:
        print("\n".join(ln for ln in lines if not (a.where and ln.startswith("report: "))), file=sys.stderr)
    elif status:
        print(next(ln for ln in lines if ln.startswith("VERDICTS AFFECTED")), file=sys.stderr)
    for ln in end[-1:]:
        print(ln, flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
