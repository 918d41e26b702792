"""JupyterLab on the project's notebooks with the lab's database (``make lab``).

    python -m labfig.lab [--db FILE] [JUPYTER-LAB-OPTIONS ...]

The database is ``--db``, else ``$MPTCP_LAB_DB``, else ``results/lab.duckdb`` (what
``make reproduce-all`` writes), else ``results/samples.duckdb``, analysed from the
committed sample runs (``data/samples``) when it does not exist yet; the notebooks'
kernels get it as ``MPTCP_LAB_DB``. jupytext (installed with the lab) opens the
notebooks' ``.py`` files as notebooks on a double click (``config/jupyter``: its
"Jupytext Notebook" is the default viewer of Python files) and saves edits back to the
``.py`` (paired with an ``.ipynb`` next to it, which git ignores). Other options go to
``jupyter lab`` as they are (``--no-browser``, ``--port 8899``, ...).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def database(given: str | None) -> Path:
    if given or os.environ.get("MPTCP_LAB_DB"):
        db = Path(given or os.environ["MPTCP_LAB_DB"]).resolve()
        if not db.is_file():
            raise SystemExit(f"error: {db}: no such database (python -m pipeline analyze ... --db {db} makes one)")
        return db
    main = ROOT / "results" / "lab.duckdb"
    if main.is_file():
        return main
    samples = ROOT / "results" / "samples.duckdb"
    if not samples.is_file():
        runs = sorted(p for p in (ROOT / "data" / "samples").iterdir() if (p / "meta.json").is_file())
        print(f"no {main.relative_to(ROOT)} yet (make reproduce-all writes it): analysing the {len(runs)} sample "
              f"runs into {samples.relative_to(ROOT)}", file=sys.stderr)
        samples.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pipeline", "analyze", "-q", *map(str, runs), "--db", str(samples)],
                       check=True)
    return samples


def command(extra: list[str]) -> list[str]:
    jupyter = shutil.which("jupyter", path=str(Path(sys.executable).parent)) or "jupyter"
    # the repository: papers/<paper>/notebook.py (one per paper) and notebooks/explore.py
    cmd = [jupyter, "lab", f"--ServerApp.root_dir={ROOT}"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    return cmd + extra


def environment(db: Path) -> dict[str, str]:
    env = dict(os.environ, MPTCP_LAB_DB=str(db))
    conf = str(ROOT / "config" / "jupyter")
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(x for x in (conf, os.environ.get("JUPYTER_CONFIG_PATH")) if x)
    return env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog="other options go to jupyter lab")
    ap.add_argument("--db", help="the lab's DuckDB file (default: results/lab.duckdb, else the samples')")
    a, extra = ap.parse_known_args(argv)
    db = database(a.db)
    print(f"JupyterLab on {ROOT} with MPTCP_LAB_DB={db}: papers/<paper>/notebook.py per paper, "
          "notebooks/explore.py explores one run",
          file=sys.stderr)
    cmd = command(extra)
    os.execve(cmd[0], cmd, environment(db))


if __name__ == "__main__":
    sys.exit(main())
