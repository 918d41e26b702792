"""Labels a researcher gives runs: what the lab cannot read off a capture (the congestion
control a phone ran, the site, the firmware) and ``compare --by KEY`` groups runs by.

Three places give them, each checked here once: ``--label KEY=VALUE`` (``analyze``,
``tables``: every run of the call), ``--labels FILE.csv`` (a header ``run,KEY,...``, then
one row per run id, the id the pipeline gives the run: meta.json ``run_id``, else the
run folder's name, else a loose pcap's file name without its suffix) and meta.json's
``labels`` object. A run's labels are ``run_labels`` rows (``pipeline.schema``), written
with its ``runs`` row. The command line wins over meta.json (the row keeps meta.json's
value in ``overrides``); a run's row of the labels file wins over ``--label``. A key is an
identifier (letters, digits and ``_``, not starting with a digit); a value is text.
"""
from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass, field

import polars as pl

from . import schema
from .inputs import not_regular

KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RULE = "letters, digits and _, not starting with a digit"
ORIGINS = ("--label", "--labels", "meta.json")


class LabelError(ValueError):
    """A bad ``--label`` or ``--labels``: the message is one line naming the argument."""


def is_key(key: str) -> bool:
    return bool(KEY.fullmatch(key))


def parse(text: str) -> tuple[str, str]:
    """(key, value) of one ``--label KEY=VALUE``."""
    key, sep, value = text.partition("=")
    key, value, where = key.strip(), value.strip(), f"--label {text!r}"
    if not sep:
        raise LabelError(f"{where}: expected KEY=VALUE (there is no '=')")
    if not key:
        raise LabelError(f"{where}: the key is empty; expected KEY=VALUE")
    if not is_key(key):
        raise LabelError(f"{where}: the key {key!r} is not an identifier ({RULE})")
    if not value:
        raise LabelError(f"{where}: the value is empty; expected KEY=VALUE")
    return key, value


def _rows_of(path: str) -> list[list[str]]:
    where = f"--labels {path}"
    what = not_regular(path)
    if what:  # a FIFO would be waited on forever
        raise LabelError(f"{where}: is {what}, not a CSV file")
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = [[c.strip() for c in r] for r in csv.reader(f)]
    except FileNotFoundError:
        raise LabelError(f"{where}: no such file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise LabelError(f"{where}: cannot be read as CSV ({str(e).splitlines()[0] if str(e) else e})") from None
    return [r for r in rows if any(r)]  # blank lines are no runs


def read_file(path: str) -> dict[str, dict[str, str]]:
    """``--labels FILE.csv`` as {run id: {key: value}}; an empty cell gives that run no
    such label."""
    where = f"--labels {path}"
    rows = _rows_of(path)
    if not rows:
        raise LabelError(f"{where}: empty; expected a header run,KEY,... then one row per run")
    head, *body = rows
    if head[0] != "run":
        raise LabelError(f"{where}: the first column is {head[0]!r}, not 'run' (a header run,KEY,... then one "
                         "row per run id)")
    keys = head[1:]
    if not keys:
        raise LabelError(f"{where}: no label column after 'run' (a header run,KEY,...)")
    bad = [k for k in keys if not is_key(k)]
    if bad:
        raise LabelError(f"{where}: the column {bad[0]!r} is not an identifier ({RULE})")
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise LabelError(f"{where}: the column {twice[0]!r} is there twice")
    out: dict[str, dict[str, str]] = {}
    for n, cells in enumerate(body, start=2):
        if len(cells) > len(head):
            raise LabelError(f"{where}: row {n} has {len(cells)} cells, the header {len(head)}")
        if not cells[0]:
            raise LabelError(f"{where}: row {n} names no run")
        if cells[0] in out:
            raise LabelError(f"{where}: run {cells[0]!r} has two rows (row {n})")
        out[cells[0]] = {k: v for k, v in zip(keys, cells[1:]) if v}
    return out


@dataclass
class Labels:
    """The labels one call gives: ``given`` (``--label``: every run of the call) and
    ``by_run`` (``--labels FILE``: per run id, winning over ``given`` for its run)."""

    given: dict[str, str] = field(default_factory=dict)
    by_run: dict[str, dict[str, str]] = field(default_factory=dict)
    file: str = ""

    def for_run(self, run_id: str) -> dict[str, tuple[str, str]]:
        """{key: (value, origin)} the command line gives ``run_id``."""
        out = {k: (v, "--label") for k, v in self.given.items()}
        out.update({k: (v, "--labels") for k, v in self.by_run.get(run_id, {}).items()})
        return out

    def unmatched(self, run_ids: set[str]) -> list[str]:
        """The labels file's runs that are no run of ``run_ids`` (a misspelt id, or a run
        the call did not analyse)."""
        return sorted(set(self.by_run) - set(run_ids))


def read(items: list[str], file: str | None) -> Labels:
    """A call's ``--label`` items and ``--labels`` file (``LabelError`` for the first bad one)."""
    given: dict[str, str] = {}
    for it in items:
        k, v = parse(it)
        if given.get(k, v) != v:
            raise LabelError(f"--label {it!r}: the key {k!r} was given another value ({given[k]!r})")
        given[k] = v
    return Labels(given, read_file(file) if file else {}, file or "")


def _text(v) -> str | None:
    """A label value of meta.json as text (None: not a string, number or true/false)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int) or isinstance(v, float) and math.isfinite(v):
        return json.dumps(v)
    if isinstance(v, str) and v.strip():
        return v.strip()
    return None


def from_meta(meta: dict) -> tuple[dict[str, str], list[str]]:
    """meta.json's ``labels`` as {key: value}, and what was left out and why."""
    doc = meta.get("labels")
    if not isinstance(doc, dict):
        return {}, []
    out, bad = {}, []
    for k, v in doc.items():
        text = _text(v)
        if not is_key(str(k)) or text is None:
            bad.append(str(k))
            continue
        out[k] = text
    if not bad:
        return out, []
    return out, [f"labels {', '.join(map(repr, bad[:3]))}{' ...' if len(bad) > 3 else ''} left out (a key is an "
                 f"identifier: {RULE}; a value a non-empty string, a number or true/false)"]


def rows(run_id: str, meta_labels: dict[str, str], given: dict[str, tuple[str, str]] | None = None) -> pl.DataFrame:
    """The ``run_labels`` rows of one run: meta.json's labels, the command line's
    (``given``: {key: (value, origin)}) over them, keeping the value replaced."""
    given = given or {}
    out = [{"run_id": run_id, "key": k, "value": v, "origin": "meta.json", "overrides": None}
           for k, v in meta_labels.items() if k not in given]
    out += [{"run_id": run_id, "key": k, "value": v, "origin": o, "overrides": meta_labels.get(k)}
            for k, (v, o) in given.items()]
    out.sort(key=lambda r: r["key"])
    return schema.conform("run_labels", pl.DataFrame(out, schema=schema.TABLES["run_labels"]))


def of_runs(runs: pl.DataFrame) -> pl.DataFrame:
    """``run_labels`` rows from stored ``runs`` rows' meta.json (tables and stores written
    before run_labels existed)."""
    parts = []
    for run_id, text in runs.select("run_id", "meta_json").iter_rows():
        try:
            doc = json.loads(text) if text else {}
        except (ValueError, RecursionError):
            continue
        found, _ = from_meta(doc) if isinstance(doc, dict) else ({}, [])
        if found:
            parts.append(rows(run_id, found))
    return pl.concat(parts) if parts else schema.empty("run_labels")
