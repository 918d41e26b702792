"""Which runs a write to the store keeps apart (``pipeline.store``): a loose pcap named
like a run folder's run, and a run written under an id the store holds for traces in
another folder, each stored beside the other under an id of its own, with a row."""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from . import schema

if TYPE_CHECKING:
    import duckdb

    from .store import Keys

TRACE_TABLES = ("connections", "subflows", "rtt_samples", "ofo_samples", "seq_packets", "delivered_1s",
                "owd_samples")
# a run's own rows (Keys.facts: what a pcap given alone with labels replaces)
FACT_TABLES = ("runs", "run_paths", "run_outages", "run_labels")


def _loose_id(run_id: str, trace: str) -> str:
    return f"{run_id} (loose pcap {trace})"


def _is_loose_namesake(run_id: str, trace: str) -> bool:
    """A pcap outside any run folder whose name is the run id (``mp2-linkem.pcap``):
    analysed alone it takes its stem as run id, the id of a run folder of that name."""
    return Path(trace).stem == run_id and Path(trace).parent.name != run_id


def keep_loose_pcaps_apart(con: duckdb.DuckDBPyConnection, tables: dict[str, pl.DataFrame],
                            keys: Keys) -> tuple[dict[str, pl.DataFrame], Keys]:
    """A loose pcap named like a run folder's run is no part of that run: stored beside it
    under its own id, never merged into it nor deleted with it (whichever comes first)."""
    rows: list[dict] = []
    # the run folder comes second: the loose pcap's stored rows move to their own id (the
    # stored traces of every run being written, in one query: a reference load writes ~700 runs)
    stored = con.execute("SELECT DISTINCT run_id, trace FROM connections WHERE run_id IN (SELECT unnest($1)) UNION "
                         "SELECT DISTINCT run_id, source FROM problems WHERE run_id IN (SELECT unnest($1))",
                         [sorted(keys.runs)]).fetchall() if keys.runs else []
    for run_id, trace in sorted(stored, key=lambda r: (r[0], r[1] or "")):
        if trace is None or not _is_loose_namesake(run_id, trace):
            continue
        new = _loose_id(run_id, trace)
        for t, col in [*((t, "trace") for t in TRACE_TABLES), ("owd_samples", "recv_trace"),
                       ("problems", "source")]:
            con.execute(f'UPDATE "{t}" SET run_id = ? WHERE run_id = ? AND "{col}" = ?', [new, run_id, trace])
        for t in reversed(FACT_TABLES):  # its own runs row and labels (a labelled loose pcap's: no meta_json)
            con.execute(f'UPDATE "{t}" SET run_id = ? WHERE run_id = ? AND EXISTS (SELECT 1 FROM runs '
                        'WHERE run_id = ? AND meta_json IS NULL)', [new, run_id, run_id])
    # the loose pcap comes second: its rows take their own id when a run folder holds the name
    for run_id, trace in sorted(keys.traces):
        if not _is_loose_namesake(run_id, trace):
            continue
        if not con.execute("SELECT count(*) FROM runs WHERE run_id = ? AND meta_json IS NOT NULL",  # a folder's
                           [run_id]).fetchall()[0][0]:
            continue
        new = _loose_id(run_id, trace)
        keys = replace(keys, facts={new if r == run_id else r for r in keys.facts})
        tables = {n: df.with_columns(run_id=pl.when(pl.col("run_id") == run_id).then(pl.lit(new))
                                     .otherwise(pl.col("run_id")))
                  if "run_id" in df.collect_schema().names() and schema.rows(df) else df
                  for n, df in tables.items()}
        rows.append({"run_id": new, "source": trace, "stage": "load",
                     "reason": f"named like run {run_id!r} (a run folder's) but not in its folder: stored as its "
                               "own run, under this id"})
    if rows:
        tables = {**tables, "problems": pl.concat([tables["problems"], schema.conform(
            "problems", pl.DataFrame(rows, schema=schema.TABLES["problems"]))])}
    return tables, keys


def _folder(trace: str) -> str:
    """The folder a trace lies in: a run folder's, or a loose pcap's."""
    return os.path.dirname(os.path.normpath(os.path.abspath(trace)))


def _origins(pairs) -> dict[str, set[str]]:
    """run id -> the folders its traces lie in (the run's identity beyond its name)."""
    out: dict[str, set[str]] = {}
    for run_id, trace in pairs:
        if run_id is not None and trace:
            out.setdefault(run_id, set()).add(_folder(trace))
    return out


def rename_run(tables: dict[str, pl.DataFrame], old: str, new: str) -> dict[str, pl.DataFrame]:
    """``tables`` with run ``old``'s rows under ``new``."""
    return {n: df.with_columns(run_id=pl.when(pl.col("run_id") == old).then(pl.lit(new)).otherwise(pl.col("run_id")))
            if "run_id" in df.collect_schema().names() else df for n, df in tables.items()}


def other_id(run_id: str, folder: str, taken: set[str]) -> str:
    """An id for a run named like another one: its name and the folder above its own
    (``run1@campaign-b``), numbered on if that is taken too."""
    above = Path(folder).parent.name or Path(folder).name or "other"
    new, k = f"{run_id}@{above}", 2
    while new in taken:
        new, k = f"{run_id}@{above}-{k}", k + 1
    return new


def keep_runs_apart(con: duckdb.DuckDBPyConnection, tables: dict[str, pl.DataFrame],
                     keys: Keys) -> tuple[dict[str, pl.DataFrame], Keys]:
    """A run is its traces' folder, not only its name: a run written under an id the store
    holds for traces in other folders (``campaign-a/run1`` then ``campaign-b/run1``; two
    folders' ``x/client.pcap``) is another run, stored beside it under ``other_id`` with a
    row saying so; the same folder written again still replaces itself."""
    ids = sorted(keys.runs | {r for r, _ in keys.traces})
    if not ids:
        return tables, keys
    conn = tables["connections"]
    conn = conn.select("run_id", "trace").unique()
    incoming = _origins((conn.collect() if isinstance(conn, pl.LazyFrame) else conn).iter_rows())
    # the ids themselves, and those earlier writes gave namesakes (``other_id``: name@...)
    stored = _origins(con.execute("SELECT DISTINCT run_id, trace FROM connections WHERE run_id IN (SELECT unnest($1)) "
                                  "OR split_part(run_id, '@', 1) IN (SELECT unnest($1))", [ids]).fetchall())
    rows = []
    taken = set(ids) | {r for (r,) in con.execute("SELECT DISTINCT run_id FROM runs UNION "
                                                     "SELECT DISTINCT run_id FROM connections").fetchall()}
    for run_id in ids:
        mine, theirs = incoming.get(run_id, set()), stored.get(run_id, set())
        if not mine or not theirs or mine & theirs:
            continue
        # this folder stored earlier as a namesake: that run is the one it replaces
        again = [r for r, o in sorted(stored.items()) if r.startswith(f"{run_id}@") and o & mine]
        new = again[0] if again else other_id(run_id, sorted(mine)[0], taken)
        taken.add(new)
        tables = rename_run(tables, run_id, new)
        keys = replace(keys, runs={new if r == run_id else r for r in keys.runs},
                       traces={(new if r == run_id else r, t) for r, t in keys.traces},
                       facts={new if r == run_id else r for r in keys.facts})
        rows.append({"run_id": new, "source": sorted(mine)[0], "stage": "load",
                     "reason": f"run id {run_id!r} is another run's in the database (traces in "
                               f"{sorted(theirs)[0]}): stored beside it as {new!r}"})
    if rows:
        tables = {**tables, "problems": pl.concat([tables["problems"], schema.conform(
            "problems", pl.DataFrame(rows, schema=schema.TABLES["problems"]))], how="vertical_relaxed")}
    return tables, keys
