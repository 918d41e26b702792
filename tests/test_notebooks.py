"""Every paper notebook executes (nbclient) on a database without that paper's
runs and draws its explanatory empty states instead of crashing.  (Execution on a
populated database is covered by tests/test_report.py.)"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ["chen", "cs244", "deng", "ditg", "ferlin"]


def synthetic_db(path: Path, papers: str) -> Path:
    """notebooks/labfig/synthetic.py: a database conforming to pipeline.schema.TABLES."""
    subprocess.run([sys.executable, "-m", "labfig.synthetic", str(path), papers],
                   cwd=ROOT / "notebooks", check=True, capture_output=True)
    return path


@pytest.fixture(scope="module")
def empty_db(tmp_path_factory):
    return synthetic_db(tmp_path_factory.mktemp("db") / "empty.duckdb", "")


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_notebook_executes_on_empty_database(nb, empty_db, tmp_path):
    ipynb = tmp_path / f"{nb}.ipynb"
    subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--to", "ipynb", "--output", str(ipynb),
                    str(ROOT / "notebooks" / f"{nb}.py")], check=True)
    figs = tmp_path / "figures"
    r = subprocess.run([sys.executable, str(ROOT / "rules/scripts/execute_notebook.py"), str(ipynb),
                        "--db", str(empty_db), "--figures", str(figs), "--out", str(tmp_path / "out.ipynb")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    manifest = json.loads((figs / "manifest.json").read_text())
    assert manifest["figures"], "every notebook draws at least one figure"
    for f in manifest["figures"]:
        assert f["empty"], f"{f['name']} should be an empty state on an empty database"
        for ext in ("svg", "png", "html"):
            assert (figs / f["files"][ext]).stat().st_size > 500
