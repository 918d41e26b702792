"""The paper notebooks (papers/<paper>/notebook.py): every notebook executes (nbclient) on
a database without that paper's runs and draws its explanatory empty states instead of
crashing; on the synthetic database (every paper's standard-scale grid, 5 runs each) it
draws its figures from the findings' own tables (findings.csv, findings-groups.csv),
which it shows as they are. Notebooks never recompute a claim (tests/test_layers.py).
(The report on a populated database is tests/test_report.py.)"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from papers import PAPERS

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = list(PAPERS)


def synthetic_db(path: Path, papers: str, reps: int = 5) -> Path:
    """papers/synthetic.py: a database conforming to pipeline.schema.TABLES."""
    subprocess.run([sys.executable, "-m", "papers.synthetic", str(path), papers, str(reps)], check=True,
                   capture_output=True)
    return path


def execute(nb: str, db: Path, tmp_path: Path, findings: Path | None = None) -> tuple[Path, Path]:
    ipynb = tmp_path / f"{nb}.ipynb"
    subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--to", "ipynb", "--output", str(ipynb),
                    str(PAPERS[nb].notebook_file)], check=True)
    figs, out = tmp_path / f"figures-{nb}", tmp_path / f"{nb}.out.ipynb"
    r = subprocess.run([sys.executable, "-m", "report.execute", str(ipynb), "--db", str(db), "--figures", str(figs),
                        "--out", str(out)] + (["--findings", str(findings)] if findings else []),
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    return figs, out


@pytest.fixture(scope="module")
def empty_db(tmp_path_factory):
    return synthetic_db(tmp_path_factory.mktemp("db") / "empty.duckdb", "")


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_notebook_executes_on_empty_database(nb, empty_db, tmp_path):
    figs, _ = execute(nb, empty_db, tmp_path)
    manifest = json.loads((figs / "manifest.json").read_text())
    assert manifest["figures"], "every notebook draws at least one figure"
    for f in manifest["figures"]:
        assert f["empty"], f"{f['name']} should be an empty state on an empty database"
        for ext in ("svg", "png", "html"):
            assert (figs / f["files"][ext]).stat().st_size > 500


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("full")
    db = synthetic_db(tmp / "syn.duckdb", ",".join(NOTEBOOKS))
    subprocess.run([sys.executable, "-m", "papers", "findings", "--db", str(db), "--out", str(tmp / "findings.csv"),
                    "--checks", str(tmp / "lab-checks.csv"), "--groups", str(tmp / "findings-groups.csv")],
                   check=True, capture_output=True)
    return db, tmp


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_notebook_draws_the_findings_own_rows(nb, full, tmp_path):
    """On a database with every run of the paper's grid, the notebook's figures are not
    empty, and its verdict table lists every statement of the paper's inventory with the
    verdicts of findings.csv."""
    import csv
    db, fdir = full
    figs, out = execute(nb, db, tmp_path, findings=fdir)
    manifest = json.loads((figs / "manifest.json").read_text())
    drawn = [f for f in manifest["figures"] if not f["empty"]]
    assert len(drawn) >= 2 and any(f["name"] == "claims" for f in drawn), [f["name"] for f in manifest["figures"]]
    text = "\n".join(o.get("data", {}).get("text/markdown", "") for c in nbformat.read(out, 4).cells
                     if c.cell_type == "code" for o in c.get("outputs", []))
    rows = [r for r in csv.DictReader((fdir / "findings.csv").open()) if r["paper"] == nb]
    for r in rows:
        assert f"`{r['id']}`" in text, r["id"]
        assert f"**{r['magnitude_verdict']}**" in text
