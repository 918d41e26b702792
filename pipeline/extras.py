"""The parts of the package beyond the pipeline's own stack, and the one message that
says what to install for each. ``pip install mptcp-lab`` installs the pipeline (polars,
DuckDB, Altair's specs, pyshark): under 300 MB, most of it polars and DuckDB. The rest
are extras (pyproject.toml): ``figures`` (vl-convert, 90 MB: a chart as SVG, PNG or
offline HTML), ``compare`` (numpy and vl-convert: the findings' statistics),
``capture`` (numpy: D-ITG's schedules), ``lab`` (all of it, with the workflow and the
notebooks)."""
from __future__ import annotations

import importlib.util


def missing(module: str, extra: str, task: str) -> str | None:
    """None when ``module`` can be imported; else the one line that says ``task`` needs
    ``extra`` and how to install it."""
    if importlib.util.find_spec(module) is not None:
        return None
    return (f"{task} needs the package's '{extra}' extra ({module} is not installed): "
            f"pip install 'mptcp-lab[{extra}]'")
