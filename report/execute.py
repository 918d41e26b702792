"""Execute one paper notebook against a DuckDB file (used by rules/notebooks.smk).

    python -m report.execute NOTEBOOK.ipynb|NOTEBOOK.py --db FILE --figures DIR --out EXECUTED.ipynb [-p NAME=VALUE ...]

The notebook gets its inputs as parameters, papermill's way: a cell tagged
``injected-parameters`` right after the cell tagged ``parameters`` sets ``DB``,
``FIGURES`` (and ``FINDINGS`` with ``--findings``), which its first cell hands to the
lab it opens (``papers.lab.open_paper``, ``labfig.open_lab``). It imports the installed
packages, runs in its own folder and writes its figures and ``manifest.json`` into the
figure folder, which is emptied first so no stale figure survives. ``-p NAME=VALUE``
sets another parameter the same way (``explore``'s run id).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient


def inject_parameters(nb: nbformat.NotebookNode, params: dict[str, str]) -> None:
    """Insert ``NAME = 'VALUE'`` assignments after the ``parameters`` cell (papermill's convention)."""
    if not params:
        return
    cells = nb.cells
    at = next((i + 1 for i, c in enumerate(cells) if "parameters" in c.get("metadata", {}).get("tags", [])), 0)
    src = "# Injected parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in params.items())
    cells.insert(at, nbformat.v4.new_code_cell(src, metadata={"tags": ["injected-parameters"]}))


def _param(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebook", type=Path)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--figures", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--findings", type=Path, help="the folder holding findings.csv and findings-groups.csv of the "
                                                  "same database (else the notebook computes them)")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("-p", "--param", type=_param, action="append", default=[], metavar="NAME=VALUE",
                    help="set a parameter of the notebook (a string), e.g. -p RUN=mp2-linkem")
    args = ap.parse_args(argv)

    if args.figures.exists():
        shutil.rmtree(args.figures)
    args.figures.mkdir(parents=True)
    os.environ.setdefault("LC_ALL", "C.UTF-8")

    if args.notebook.suffix == ".py":  # a jupytext percent script, as committed (papers/*/notebook.py, explore.py)
        nb = jupytext.read(args.notebook)
    else:
        nb = nbformat.read(args.notebook, as_version=4)
    given = {"DB": str(args.db.resolve()), "FIGURES": str(args.figures.resolve())}
    if args.findings:
        given["FINDINGS"] = str(args.findings.resolve())
    inject_parameters(nb, {**given, **dict(args.param)})
    client = NotebookClient(
        nb,
        timeout=args.timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(args.notebook.resolve().parent)}},
    )
    try:
        client.execute()
    finally:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_suffix(".tmp")
        nbformat.write(nb, tmp)
        tmp.replace(args.out)
    manifest = args.figures / "manifest.json"
    if not manifest.exists():  # a notebook that drew nothing still gets a manifest
        manifest.write_text(json.dumps({"notebook": args.notebook.stem, "figures": []}, indent=2))
    print(f"executed {args.notebook} -> {args.out}; figures in {args.figures}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
