"""Write results/report/index.html: every notebook and figure, linked (used by rules/report.smk).

    python -m report.page --template report/index.html.j2 --db results/lab.duckdb \
        --figures results/figures --notebooks results/report/notebooks/*.html --out results/report/index.html

Links are relative, so the results folder can be moved or served as is.
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import shutil
import sys
from pathlib import Path

import duckdb
import jinja2
import polars as pl

from findings.claim import VERDICTS
from findings.evaluate import band_text, ours_text
from findings.provenance import campaigns

from papers import PAPERS
from pipeline.derived import runs_study_sql, study_of

TITLES = {p.id: p.title for p in PAPERS.values()}


def rel(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


ISSUE_FIELDS = ("campaign", "study", "run_id", "what", "reason")


def run_issues(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Runs in the database that were repeated, left out or did not complete, and why."""
    rows = con.execute(f"""
        SELECT coalesce(campaign, '?'), {runs_study_sql(con)}, run_id, stalled, attempt, worst_late_ms, complete
        FROM runs WHERE meta_json IS NOT NULL ORDER BY 1, 3""").fetchall()
    out = []
    for camp, study, run, stalled, attempt, late, complete in rows:
        if stalled:
            out.append({"campaign": camp, "study": study, "run_id": run, "what": "left out",
                        "reason": f"the emulator stalled (a frame {float(late or 'nan'):.1f} ms late) on every attempt"})
        elif attempt and attempt > 1:
            out.append({"campaign": camp, "study": study, "run_id": run, "what": "repeated",
                        "reason": f"kept attempt {attempt}: the earlier one(s) had an emulator stall"})
        if complete is False:
            out.append({"campaign": camp, "study": study, "run_id": run, "what": "incomplete (kept)",
                        # complete is false only where the workload kept its run (D-ITG's sender
                        # stopped at its time limit, capture/workloads.py); a failed one raised
                        "reason": "the transfer did not complete in its time limit (a result, not a fault)"})
    return out


def status_issues(files: list[Path]) -> list[dict]:
    """Runs a capture could not make (no folder, so not in the database)."""
    out = []
    for f in files:
        if not f.exists():  # a campaign not captured (yet)
            continue
        try:
            st = json.loads(f.read_text())
        except (OSError, ValueError) as e:
            out.append({"campaign": f.parent.name, "study": study_of(f.parent.name), "run_id": "",
                        "what": "status unreadable", "reason": f"{f}: {e}"})
            continue
        camp = st.get("campaign") or f.parent.name
        study = study_of(camp, st.get("study"))
        for run, err in sorted((st.get("failed") or {}).items()):
            out.append({"campaign": camp, "study": study, "run_id": run, "what": "failed", "reason": str(err)[:300]})
        for run, sig in sorted((st.get("interrupted") or {}).items()):
            out.append({"campaign": camp, "study": study, "run_id": run, "what": "interrupted", "reason": str(sig)})
    return out


def copy(src: Path, dest: Path) -> None:
    """``src`` to ``dest`` atomically (a reader never sees half a file)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    shutil.copyfile(src, tmp)
    os.replace(tmp, dest)


def figures_of(src: Path, dest: Path, out_dir: Path) -> list[dict]:
    """A notebook's figures (its manifest.json in ``src``), copied into the report's own
    folder (``dest``) so that ``results/report/`` copied alone keeps every image; each
    figure's files as links relative to the page."""
    manifest = src / "manifest.json"
    figs = json.loads(manifest.read_text())["figures"] if manifest.exists() else []
    for f in figs:
        for k, v in f["files"].items():
            if (src / v).is_file():
                copy(src / v, dest / v)
            f[k] = rel(dest / v, out_dir)
    return figs


def write_issues(issues: list[dict], out: Path) -> None:
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    with tmp.open("w", newline="") as fh:
        w = csv.DictWriter(fh, ISSUE_FIELDS)
        w.writeheader()
        w.writerows(issues)
    os.replace(tmp, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--template", type=Path, required=True)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--figures", type=Path, required=True)
    ap.add_argument("--notebooks", type=Path, nargs="+", required=True)
    ap.add_argument("--findings", type=Path, help="results/findings.csv: the papers' claims against ours")
    ap.add_argument("--status", type=Path, nargs="*",
                    help="campaign-status.json files of the captures (failed runs are only there)")
    ap.add_argument("--source", default="", help="where the runs come from, in words (the workflow says: the "
                    "committed reference, or captures made here at which scale)")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    out_dir = a.out.parent
    out_dir.mkdir(parents=True, exist_ok=True)

    con = duckdb.connect(str(a.db), read_only=True)
    n_runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    camps = con.execute("SELECT coalesce(campaign, '?') || ': ' || count(*) FROM runs "
                        "GROUP BY campaign ORDER BY campaign").fetchall()
    # what the findings rest on: per campaign, its scale(s), seed(s), dates, commit, host, stalled runs
    data = campaigns(con)
    n_problems = con.execute("SELECT count(*) FROM problems").fetchone()[0]
    problems = [dict(zip(("reason", "n", "example"), r)) for r in con.execute("""
        SELECT regexp_replace(reason, '[0-9]+', 'N', 'g') AS kind, count(*), min(source || ': ' || reason)
        FROM problems GROUP BY kind ORDER BY 2 DESC LIMIT 20""").fetchall()]
    problem_rows = [dict(zip(("run_id", "source", "reason"), r)) for r in con.execute(
        "SELECT coalesce(run_id, ''), source, reason FROM problems ORDER BY ALL").fetchall()]
    issues = run_issues(con) + status_issues(a.status or [])
    con.close()
    write_issues(issues, out_dir / "run-issues.csv")

    notebooks = [{"name": html.stem, "title": TITLES.get(html.stem, html.stem), "html": rel(html, out_dir),
                  "figures": figures_of(a.figures / html.stem, out_dir / "figures" / html.stem, out_dir)}
                 for html in a.notebooks]
    findings = list(csv.DictReader(a.findings.open())) if a.findings and a.findings.exists() else []
    if findings:  # beside the page too: the report folder is whole on its own
        copy(a.findings, out_dir / "findings.csv")
    for r in findings:
        r["ours"] = ours_text({**r, **{k: float(r[k]) if r[k] else None for k in ("our_value", "ci_low", "ci_high")}})
        r["band"] = band_text({k: float(r[k]) if r[k] else None for k in ("band_low", "band_high")})
    counts = []
    if findings:
        t = pl.DataFrame(findings).select("paper", "magnitude_verdict", "direction_verdict", "basis")
        verdicts = [v for v in VERDICTS if v in set(t["magnitude_verdict"].to_list())]
        for paper in [*sorted(set(t["paper"].to_list())), None]:
            sub = t if paper is None else t.filter(pl.col("paper") == paper)
            counts.append({"paper": paper or "all", "rows": sub.height,
                           "cells": [sub.filter(pl.col("magnitude_verdict") == v).height for v in verdicts],
                           "direction": sub.filter(pl.col("direction_verdict") == "agree").height,
                           "independent": " / ".join(str(sub.filter((pl.col("basis") == "outcome")
                                                                    & (pl.col("magnitude_verdict") == v)).height)
                                                     for v in ("agree", "disagree"))})
    else:
        verdicts = []

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(a.template.parent),
                             autoescape=jinja2.select_autoescape(["html", "j2"]))
    page = env.get_template(a.template.name).render(
        generated=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        db=a.db.as_posix(), n_runs=n_runs, campaigns=", ".join(c for (c,) in camps) or "none",
        source=a.source, n_problems=n_problems, problems=problems, problem_rows=problem_rows, issues=issues,
        data=data, notebooks=notebooks, findings=findings,
        counts=counts, verdicts=verdicts,
        findings_csv="findings.csv" if findings else None)
    tmp = a.out.with_suffix(".tmp")
    tmp.write_text(page)
    tmp.replace(a.out)
    print(f"wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
