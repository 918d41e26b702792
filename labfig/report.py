"""Write results/report/index.html: every notebook and figure, linked (used by rules/report.smk).

    python -m labfig.report --template report/index.html.j2 --db results/lab.duckdb \
        --figures results/figures --notebooks results/report/notebooks/*.html --out results/report/index.html

Links are relative, so the results folder can be moved or served as is.
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import sys
from pathlib import Path

import duckdb
import jinja2

TITLES = {
    "chen": "Chen et al., IMC 2013 — MPTCP over WiFi + cellular",
    "cs244": "Raiciu et al. NSDI 2012 Fig. 9 (CS244 reproduction)",
    "deng": "Deng et al., IMC 2014 — WiFi, LTE, or both?",
    "ditg": "MPTCP latency for cloud apps (D-ITG)",
    "ferlin": "Ferlin et al. — heterogeneous wireless paths (DRePaS)",
}


def rel(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--template", type=Path, required=True)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--figures", type=Path, required=True)
    ap.add_argument("--notebooks", type=Path, nargs="+", required=True)
    ap.add_argument("--findings", type=Path, help="results/findings.csv: the papers' claims against ours")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    out_dir = a.out.parent
    out_dir.mkdir(parents=True, exist_ok=True)

    con = duckdb.connect(str(a.db), read_only=True)
    n_runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    camps = con.execute("SELECT coalesce(campaign, '?') || ': ' || count(*) FROM runs "
                        "GROUP BY campaign ORDER BY campaign").fetchall()
    n_problems = con.execute("SELECT count(*) FROM problems").fetchone()[0]
    con.close()

    notebooks = []
    for html in a.notebooks:
        name = html.stem
        manifest = a.figures / name / "manifest.json"
        figs = json.loads(manifest.read_text())["figures"] if manifest.exists() else []
        for f in figs:
            for k, v in f["files"].items():
                f[k] = rel(a.figures / name / v, out_dir)
        notebooks.append({"name": name, "title": TITLES.get(name, name), "html": rel(html, out_dir),
                          "figures": figs})

    findings = list(csv.DictReader(a.findings.open())) if a.findings and a.findings.exists() else []
    for r in findings:
        r["ours"] = "–" if not r["our_value"] else (
            f"{float(r['our_value']):.3g} [{float(r['ci_low']):.3g}, {float(r['ci_high']):.3g}] {r['unit']}"
            + (f" ({r['group']})" if r.get("group") else ""))

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(a.template.parent),
                             autoescape=jinja2.select_autoescape(["html", "j2"]))
    page = env.get_template(a.template.name).render(
        generated=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        db=a.db.as_posix(), n_runs=n_runs, campaigns=", ".join(c for (c,) in camps) or "none",
        n_problems=n_problems, notebooks=notebooks, findings=findings,
        findings_csv=rel(a.findings, out_dir) if findings else None)
    tmp = a.out.with_suffix(".tmp")
    tmp.write_text(page)
    tmp.replace(a.out)
    print(f"wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
