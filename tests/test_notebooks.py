"""The paper notebooks: every notebook executes (nbclient) on a database without that
paper's runs and draws its explanatory empty states instead of crashing; on the
synthetic database (every campaign's configurations, 5 runs each) every number a
notebook prints for a claim equals the findings computation on the same database, and
the deciding group's equals findings.csv. (The report on a populated database is
tests/test_report.py.)"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from findings.claims import ALL
from findings.evaluate import group_estimates, load_facts

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ["chen", "cs244", "deng", "ditg", "ferlin"]


def synthetic_db(path: Path, papers: str, reps: int = 3) -> Path:
    """labfig/synthetic.py: a database conforming to pipeline.schema.TABLES."""
    subprocess.run([sys.executable, "-m", "labfig.synthetic", str(path), papers, str(reps)], check=True,
                   capture_output=True)
    return path


def execute(nb: str, db: Path, tmp_path: Path) -> Path:
    ipynb = tmp_path / f"{nb}.ipynb"
    subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--to", "ipynb", "--output", str(ipynb),
                    str(ROOT / "notebooks" / f"{nb}.py")], check=True)
    figs = tmp_path / f"figures-{nb}"
    r = subprocess.run([sys.executable, "-m", "labfig.execute", str(ipynb),
                        "--db", str(db), "--figures", str(figs), "--out", str(tmp_path / f"{nb}.out.ipynb")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    return figs


@pytest.fixture(scope="module")
def empty_db(tmp_path_factory):
    return synthetic_db(tmp_path_factory.mktemp("db") / "empty.duckdb", "")


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_notebook_executes_on_empty_database(nb, empty_db, tmp_path):
    figs = execute(nb, empty_db, tmp_path)
    manifest = json.loads((figs / "manifest.json").read_text())
    assert manifest["figures"], "every notebook draws at least one figure"
    for f in manifest["figures"]:
        assert f["empty"], f"{f['name']} should be an empty state on an empty database"
        for ext in ("svg", "png", "html"):
            assert (figs / f["files"][ext]).stat().st_size > 500


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("full")
    db = synthetic_db(tmp / "syn.duckdb", ",".join(NOTEBOOKS), reps=5)
    out = tmp / "findings.csv"
    subprocess.run([sys.executable, "-m", "findings", "--db", str(db), "--out", str(out)], check=True,
                   capture_output=True)
    return db, {r["id"]: r for r in csv.DictReader(out.open())}


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_numbers_a_notebook_prints_for_claims_are_the_findings(nb, full, tmp_path):
    db, table = full
    figs = execute(nb, db, tmp_path)
    shown = json.loads((figs / "shown.json").read_text())
    assert len(shown) >= 3, "every notebook prints its numbers for the paper's claims"
    facts, why = load_facts(db)
    assert facts is not None, why
    claims = {c.id: c for c in ALL}
    for s in shown:
        c = claims[s["id"]]
        assert c.paper == nb, s
        est = dict(group_estimates(c.measure(facts), c.id))
        e = est.get(s["group"])
        assert e is not None and not isinstance(e, str), (s, list(est))
        assert s["value"] == pytest.approx(e.value, rel=1e-9, abs=1e-12), s
        row = table[s["id"]]
        if row["group"] == s["group"]:
            assert s["value"] == pytest.approx(float(row["our_value"]), rel=1e-9, abs=1e-12), s
    decided = {s["id"] for s in shown if table[s["id"]]["group"] == s["group"]}
    assert decided, "at least one printed number is the one findings.csv shows"
