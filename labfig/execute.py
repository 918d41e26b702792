"""Execute one paper notebook against a DuckDB file (used by rules/notebooks.smk).

    python -m labfig.execute NOTEBOOK.ipynb --db FILE --figures DIR --out EXECUTED.ipynb

The notebook reads its inputs from the environment (``MPTCP_LAB_DB``,
``MPTCP_LAB_FIGURES``), imports the installed packages (``labfig``, ``findings``), runs in
its own folder and writes its figures, ``manifest.json`` and ``shown.json`` (the numbers
it printed for claims) into the figure folder, which is emptied first so no stale
figure survives.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebook", type=Path)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--figures", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args(argv)

    if args.figures.exists():
        shutil.rmtree(args.figures)
    args.figures.mkdir(parents=True)
    os.environ["MPTCP_LAB_DB"] = str(args.db.resolve())
    os.environ["MPTCP_LAB_FIGURES"] = str(args.figures.resolve())
    os.environ.setdefault("LC_ALL", "C.UTF-8")

    nb = nbformat.read(args.notebook, as_version=4)
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
