"""Checks that the virtual environment holds every package pyproject.toml asks for
(dependencies and the ``lab`` and ``test`` extras), at a version the bound allows.

    .venv/bin/python scripts/check-python.py

Run by the Makefile right after ``pip install``: a package that failed to install, or
one a later ``pip install`` downgraded, stops the set-up here with its name, not in
the middle of the test suite.
"""
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
extras = project.get("optional-dependencies", {})
reqs = [Requirement(r) for r in project["dependencies"] + extras.get("lab", []) + extras.get("test", [])]
bad = []
for r in reqs:
    if r.marker is not None and not r.marker.evaluate():
        continue
    try:
        v = metadata.version(r.name)
    except metadata.PackageNotFoundError:
        bad.append(f"{r.name}: not installed (wants {r})")
        continue
    if r.specifier and not r.specifier.contains(v, prereleases=True):
        bad.append(f"{r.name}: {v} installed, pyproject.toml wants {r}")
if bad:
    print("error: the virtual environment is incomplete:\n  " + "\n  ".join(bad), file=sys.stderr)
    print("       remove .venv and run make again", file=sys.stderr)
    sys.exit(1)
