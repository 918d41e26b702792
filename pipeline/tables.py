"""Traces and runs -> the tables of ``schema.TABLES``.

A *trace* is one pcap seen from one vantage point; a *run* is a folder holding a
client trace, a server trace, ``meta.json`` and emulator logs (as ``capture/``
writes them). Each metric is computed only from the vantage its definition names.
"""
from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import polars as pl

from . import ditg, flows, labels, metadoc, metrics, owd, sanity, schema, seqgraph, streamed
from .assemble import (OWD_HALF, Measures, Tables, assemble, connection_starts, problem, sending_receiving,
                       vantage_from_name, which_vantage)
from .inputs import not_regular, sort_pcaps
from .procs import MachineFault, stop_if_interrupted
from .spill import Spill
from .extract import DEFAULT_DECODER, ExtractError, read_packets
from .labels import Labels


def analyze_trace(
    pcap: str | os.PathLike,
    run_id: str,
    vantage: str | None = None,
    path_map: dict[str, str] | None = None,
    decoder: str = DEFAULT_DECODER,
    decoded: Callable[[], None] | None = None,
    paired: bool = False,
) -> tuple[Tables, list[dict]]:
    """All tables one trace contributes, and its problems (never raises on bad input;
    ``extract.DecoderUnavailable`` when ``decoder`` cannot run here). ``decoded`` is
    called once the capture is read and checked (the CLI then starts preparing its
    database: until then the decoder and the checks have both cores). ``paired``: the
    other end's trace is analysed too, so this one's side of the one-way delay matching
    is kept."""
    source = str(pcap)
    problems: list[dict] = []
    if decoder == "native":
        try:
            got = streamed.analyze(pcap, run_id, vantage, path_map, decoded, paired=paired)
        except ExtractError as e:
            return {}, [problem(run_id, source, "extract", str(e))]
        except MachineFault:  # the machine's problem, not this file's: the call stops (cli)
            raise
        except Exception as e:  # a defect of ours: this file gets a row, the others go on
            stop_if_interrupted()
            return {}, [_internal(run_id, source, e)]
        if got is not None:
            return got
    try:
        # only the columns the trace needs, narrowed as the capture is decoded
        ex = read_packets(pcap, decoder, compact=flows.compact)
    except ExtractError as e:
        return {}, [problem(run_id, source, "extract", str(e))]
    problems += [problem(run_id, source, "extract", w) for w in ex.warnings]
    try:
        return _analyze_packets(ex, run_id, source, pcap, vantage, path_map, problems, decoded, paired)
    except MachineFault:
        raise
    except Exception as e:  # a defect of ours: this file gets a row, the others go on
        stop_if_interrupted()
        return {}, problems + [_internal(run_id, source, e)]


def _internal(run_id: str, source: str, e: Exception) -> dict:
    return problem(run_id, source, "metrics", f"internal error while analysing it ({type(e).__name__}: {e}); "
                                              "please report this with the file")


def _analyze_packets(ex, run_id: str, source: str, pcap, vantage: str | None,
                     path_map: dict[str, str] | None, problems: list[dict],
                     decoded: Callable[[], None] | None = None, paired: bool = False) -> tuple[Tables, list[dict]]:
    # Each stage is handed the one before's table, no reference kept here: build_trace
    # frees the columns it does not keep as soon as it is done with them.
    checked = sanity.check(_take_packets(ex))
    if decoded:
        decoded()
    problems += [problem(run_id, source, "extract", n) for n in checked.notes]
    # The path map names the client's addresses, which settles who is client.
    frames = checked.frames
    tr = flows.build_trace(_take_packets(checked), frozenset(path_map or ()))
    tr.time_unusable = checked.time_unusable
    problems += [problem(run_id, source, "metrics", n) for n in tr.notes]

    v, said = which_vantage(tr.subflows, vantage, pcap)
    problems += [problem(run_id, source, "metrics", n) for n in said]
    out = trace_tables(tr, run_id, source, v, path_map or {}, problems, paired)
    # packets read in timestamp order (sanity): the rows name the capture's own frames
    return {k: sanity.restore_frames(t, frames) for k, t in out.items()}, problems


def _take_packets(holder) -> pl.DataFrame:
    packets, holder.packets = holder.packets, None
    return packets


def _in_background(fn, *args) -> Future:
    """``fn(*args)`` started in a thread of its own."""
    pool = ThreadPoolExecutor(1, thread_name_prefix=fn.__name__)
    try:
        return pool.submit(fn, *args)
    finally:
        pool.shutdown(wait=False)  # the thread ends with its one task


def trace_tables(tr: flows.Trace, run_id: str, source: str, vantage: str | None,
                 path_map: dict[str, str], problems: list[dict], paired: bool = False) -> Tables:
    """Rows per subflow/connection and direction that carried data. Loss and RTT come
    only from the sender's trace of a direction, OFO delay and completion time only
    from the receiver's (``vantage`` names whose trace this is)."""
    return assemble(measure(tr, vantage, paired), tr.subflows, run_id, source, vantage, path_map, problems,
                    tr.time_unusable)


def measure(tr: flows.Trace, vantage: str | None, paired: bool = False) -> Measures:
    p, sf = tr.packets, tr.subflows
    sending, receiving = sending_receiving(vantage)
    data = metrics.retransmissions(p)
    # The time-sequence rows (the biggest table) are built in a thread while the
    # metrics below are computed: polars releases the GIL, and its operations on one
    # trace leave a second core mostly idle.
    seq = _in_background(seqgraph.seq_packets, p, data)
    m = Measures(counts=metrics.loss_rate(data), share=metrics.traffic_share(p), dl=metrics.download_time(p, sf),
                 seq=pl.DataFrame())
    # impossible timestamps: the time-based metrics' tables, empty
    timed_p, timed_data = (p.clear(), data.clear()) if tr.time_unusable else (p, data)
    # the sender's data rows, copied once with the columns the two RTTs read
    sent = timed_data.lazy().filter(pl.col("direction").is_in(sending)).select(
        "frame", "stream", "direction", "down", "time_s", "rel_seq", "end", "retx").collect() if sending else None
    acks = metrics.acks_of(timed_p) if sending else None  # both RTTs read it: made once
    if sending:
        m.rtt = metrics.rtt_samples(timed_p, sent, acks)
        m.ack_rtt = metrics.ack_rtt_samples(timed_p, sent, acks).select("stream", "direction", "rtt_ms")
    del sent, acks
    if receiving:
        m.ofo = metrics.ofo_delays(timed_p.filter(pl.col("direction").is_in(receiving)))
    del timed_p, timed_data
    if receiving and not tr.time_unusable:
        starts = connection_starts(m.dl)
        m.delivered = metrics.delivered_per_second(data.filter(pl.col("direction").is_in(receiving)),
                                                   starts.filter(pl.col("start_s").is_not_null()))
    if paired and not tr.time_unusable:
        m.owd_data = data
    m.seq = seq.result()
    return m


_JSON_NAMES = {str: "a string", int: "an integer", dict: "an object", list: "a list", float: "a number",
               bool: "true/false", type(None): "null"}


def read_meta(run_dir: Path) -> tuple[dict, list[dict]]:
    """meta.json as a dict whose known fields have the right types, and the problems
    found (run_id left None: the caller knows it). A missing file is no problem; an
    empty, malformed or mistyped one is, and what cannot be used is left out."""
    f = run_dir / "meta.json"
    if not f.exists():
        return {}, []
    src = str(f)

    def bad(reason: str) -> tuple[dict, list[dict]]:
        return {}, [problem(None, src, "load", f"{reason}; the run's facts (mode, size, paths...) left empty")]

    what = not_regular(f)
    if what:
        return bad(f"meta.json is {what}, not a regular file")
    try:
        text = f.read_text(errors="replace")
    except OSError as e:
        return bad(f"cannot read meta.json ({e.strerror or e})")
    if not text.strip():
        return bad("meta.json is empty")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        return bad(f"meta.json is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})")
    except RecursionError:
        return bad("meta.json nests deeper than Python's JSON reader goes")
    if not isinstance(doc, dict):
        return bad(f"meta.json holds {_JSON_NAMES.get(type(doc), type(doc).__name__)}, not an object")
    # every field through meta.json's one declaration (pipeline/meta.schema.yaml)
    meta, why = metadoc.check(doc)
    problems = [problem(None, src, "load", f"meta.json: {w}; left empty") for w in why]
    if "started_at" in meta:
        try:
            _day_start(meta)  # dated in the local time zone too: year 1 or 9999 may not be
        except ValueError:
            problems.append(problem(None, src, "load", f"meta.json: started_at {meta['started_at'][:40]!r} is not an "
                                                       "ISO 8601 time; left empty (D-ITG times cannot be dated)"))
            meta.pop("started_at")
        except (OverflowError, OSError):
            problems.append(problem(None, src, "load", f"meta.json: started_at {meta['started_at'][:40]!r} is out of "
                                                       "the range of dates this host can convert; left empty (D-ITG "
                                                       "times cannot be dated)"))
            meta.pop("started_at")
    if "paths" in meta:
        meta["paths"], why = metadoc.valid_paths(meta["paths"])
        if why:
            problems.append(problem(None, src, "load", f"meta.json: paths: {why}; those paths left unlabelled"))
    if "labels" in meta:
        meta["labels"], why = labels.from_meta(meta)
        problems += [problem(None, src, "load", f"meta.json: {w}") for w in why]
    if not meta.get("run_id", "x").strip() or "/" in meta.get("run_id", ""):
        problems.append(problem(None, src, "load", f"meta.json: run_id {meta['run_id']!r} is not usable as a run id; "
                                                   "the folder name is used"))
        meta.pop("run_id")
    return meta, problems


def run_identity(run_dir: Path, meta: dict) -> str:
    return meta.get("run_id") or run_dir.resolve().name or str(run_dir)


def runs_row(meta: dict, run_id: str) -> pl.DataFrame:
    row = {c: meta.get(c) for c in schema.TABLES["runs"]}
    row.update(metadoc.health_columns(meta))
    row.update(metadoc.run_columns(meta))
    row["run_id"] = run_id
    row["meta_json"] = json.dumps(meta, sort_keys=True, default=str)
    return schema.conform("runs", pl.DataFrame([row], schema_overrides={c: pl.Utf8 for c in row if row[c] is None}))


def meta_tables(meta: dict, run_id: str, given: dict[str, tuple[str, str]] | None = None,
                loose: bool = False) -> Tables:
    """What a run's meta.json gives the store: its runs row, configured paths and outages,
    and its labels (``given``: the command line's, {key: (value, origin)}, over meta.json's).
    ``loose``: a pcap with no meta.json, whose runs row then holds none (no run folder's row)."""
    paths, outages = metadoc.path_rows(meta)
    runs = runs_row(meta, run_id)
    return {"runs": runs.with_columns(meta_json=pl.lit(None, pl.Utf8)) if loose else runs,
            "run_labels": labels.rows(run_id, labels.from_meta(meta)[0], given),
            "run_paths": schema.conform("run_paths", pl.DataFrame(
                [{**r, "run_id": run_id} for r in paths], schema=schema.TABLES["run_paths"])),
            "run_outages": schema.conform("run_outages", pl.DataFrame(
                [{**r, "run_id": run_id} for r in outages], schema=schema.TABLES["run_outages"]))}


def meta_tables_of(runs: pl.DataFrame) -> Tables:
    """``meta_tables`` of stored runs rows, from their ``meta_json`` (tables written before
    these columns and tables existed); the runs rows keep their own values where set."""
    parts = []
    for r in runs.iter_rows(named=True):
        try:
            doc = json.loads(r["meta_json"]) if r["meta_json"] else {}
        except (ValueError, RecursionError):
            doc = {}
        meta, _ = metadoc.check(doc) if isinstance(doc, dict) else ({}, [])
        t = meta_tables(meta, r["run_id"])
        lifted = t["runs"].row(0, named=True)
        t["runs"] = schema.conform("runs", pl.DataFrame([{**{k: v for k, v in r.items() if v is not None},
                                                          **{k: lifted[k] for k in metadoc.lifted_columns()
                                                             if r.get(k) is None}}],
                                                        schema=schema.TABLES["runs"]))
        parts.append(t)
    return merge(parts) if parts else {n: schema.empty(n) for n in ("runs", "run_paths", "run_outages", "run_labels")}


LINKEM_COLUMNS = {"direction": pl.Utf8, "packet_id": pl.Int64, "size_bytes": pl.Int64, "arrival_s": pl.Float64,
                  "departure_s": pl.Float64, "dropped": pl.Int64, "reason": pl.Utf8}
# Columns linkem added later: a log written before one existed loads with it null.
LINKEM_LATER_COLUMNS = {"attempts": pl.Int64}


def link_truth(run_dir: Path, run_id: str) -> tuple[pl.DataFrame, list[dict]]:
    """The emulator's per-packet logs, ``linkem-<path>.csv``, one per path. A log that
    cannot be read, or rows that are not linkem's, become problems rows."""
    frames, problems = [], []
    for f in sorted(run_dir.glob("linkem-*.csv")):
        what = not_regular(f)
        if what:
            problems.append(problem(run_id, str(f), "load", f"emulator log is {what}, not a regular file; skipped"))
            continue
        try:  # as text: one bad cell loses its row, not the log
            raw = pl.read_csv(f, infer_schema=False)
        except Exception as e:  # polars' errors carry pages of hints: keep the first line
            problems.append(problem(run_id, str(f), "load", f"unreadable emulator log: {_first_line(e)}"))
            continue
        missing = [c for c in LINKEM_COLUMNS if c not in raw.columns]
        if missing:
            problems.append(problem(run_id, str(f), "load", f"not a linkem log: no column {', '.join(missing)}"))
            continue
        df = _typed_linkem(raw)
        # a forwarded frame was sent at least once; a dropped one may never have been (queue,
        # outage); times are finite (a NaN compares above every number in polars)
        good = (~pl.col("_bad_cell") & pl.col("direction").is_in(schema.DIRECTIONS) & pl.col("packet_id").is_not_null()
                & pl.col("arrival_s").is_finite() & pl.col("dropped").is_in([0, 1])
                & (pl.col("departure_s").is_null()
                   | (pl.col("departure_s").is_finite() & (pl.col("departure_s") >= pl.col("arrival_s"))))
                & (pl.col("attempts").is_null() | (pl.col("attempts") >= 1 - pl.col("dropped"))))
        n_bad = df.filter(~good.fill_null(False)).height
        if n_bad:
            problems.append(problem(run_id, str(f), "load", f"{n_bad} of {df.height} rows are not valid linkem "
                                                            "records (direction, times, dropped flag, attempts); "
                                                            "skipped"))
        # linkem writes rows as packets complete, not in arrival order
        df = df.filter(good.fill_null(False)).drop("_bad_cell").sort("direction", "packet_id")
        frames.append(df.with_columns(
            run_id=pl.lit(run_id), path=pl.lit(f.stem.removeprefix("linkem-")),
            dropped=pl.col("dropped").cast(pl.Boolean),
        ))
    df = pl.concat([schema.conform("link_truth", d) for d in frames]) if frames else schema.empty("link_truth")
    return df, problems


def _typed_linkem(raw: pl.DataFrame) -> pl.DataFrame:
    """A linkem log read as text, typed: ``_bad_cell`` marks rows with a cell that is not
    its column's type (each such row is left out and counted, the others kept)."""
    types = {c: t for c, t in {**LINKEM_COLUMNS, **LINKEM_LATER_COLUMNS}.items() if c in raw.columns}
    typed = [pl.col(c).str.strip_chars().cast(t, strict=False) for c, t in types.items() if t != pl.Utf8]
    bad = [pl.col(c).is_not_null() & pl.col(c).str.strip_chars().cast(t, strict=False).is_null()
           for c, t in types.items() if t != pl.Utf8]
    df = raw.with_columns(_bad_cell=pl.any_horizontal(bad) if bad else pl.lit(False)).with_columns(typed)
    return df.with_columns(pl.lit(None, t).alias(c) for c, t in LINKEM_LATER_COLUMNS.items() if c not in df.columns)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:200]


def analyze_run(run_dir: str | os.PathLike, path_map: dict[str, str] | None = None,
                decoder: str = DEFAULT_DECODER, decoded: Callable[[], None] | None = None,
                given: Labels | None = None, pcaps: list[Path] | None = None) -> Tables:
    """Every table of one run folder (client.pcap, server.pcap, meta.json, logs);
    ``decoded`` as in ``analyze_trace``; ``given``: the labels the command line gives
    (over meta.json's); ``pcaps``: the folder's traces to read (default: the ones
    ``sort_pcaps`` picks; `analyze client.pcap server.pcap` names two)."""
    run_dir = Path(run_dir)
    meta, problems = read_meta(run_dir)
    run_id = run_identity(run_dir, meta)
    for pr in problems:
        pr["run_id"] = run_id
    pm = {**metadoc.path_map_from_meta(meta), **(path_map or {})}
    try:
        list(run_dir.iterdir())
    except OSError as e:
        problems.append(problem(run_id, str(run_dir), "extract", f"cannot list the run folder ({e.strerror or e})"))
    pcaps, left_out = sort_pcaps(run_dir) if pcaps is None else (list(pcaps), [])
    for f in left_out:
        problems.append(problem(run_id, str(f), "extract", "left out: a pcap named after neither end (client*, "
                                                           "server*) beside the ends' own traces"))
    parts: list[Tables] = []
    halves: dict[str, list[tuple[str, pl.DataFrame]]] = {}
    ends = [vantage_from_name(f) for f in pcaps]
    paired = ends.count("client") == 1 and ends.count("server") == 1
    if not pcaps:
        problems.append(problem(run_id, str(run_dir), "extract", "no .pcap or .pcapng file in the run folder"))
    for f in pcaps:
        t, pr = analyze_trace(f, run_id, vantage_from_name(f), pm, decoder, decoded, paired)
        v = next(iter(t["connections"]["vantage"].drop_nulls()), None) if "connections" in t else None
        h = t.pop(OWD_HALF, None)
        if h is not None and v is not None:
            halves.setdefault(v, []).append((str(f), h))
        parts.append(t)
        problems += pr
    lt, pr = link_truth(run_dir, run_id)
    problems += pr
    out = merge(parts)
    if len(halves.get("client", ())) == 1 and len(halves.get("server", ())) == 1:
        out["owd_samples"], pr = _owd_samples(run_id, halves["client"][0], halves["server"][0], meta)
        problems += pr
    if (run_dir / "ditg-recv.txt").exists():
        out["app_latency"], pr = ditg.read(run_dir / "ditg-recv.txt", run_id, _day_start(meta))
        problems += pr
    out.update(meta_tables(meta, run_id, given.for_run(run_id) if given else None))
    out["link_truth"] = lt
    out["problems"] = problems_table(problems)
    return complete(out)


def _owd_samples(run_id: str, client: tuple[str, pl.DataFrame], server: tuple[str, pl.DataFrame],
                 meta: dict) -> tuple[pl.DataFrame, list[dict]]:
    """The run's one-way delays from its two ends' traces (``owd``)."""
    # the lab's ends are namespaces of one host: one clock
    same_clock = isinstance(meta.get("namespaces"), dict) and bool(meta["namespaces"])
    spilled = any(isinstance(h, owd.Spilled) for h in (client[1], server[1]))
    m, notes = owd.pair(client[1], server[1], same_clock, Spill.until_exit() if spilled else None)
    traces = {True: (server[0], client[0]), False: (client[0], server[0])}
    m = m.with_columns(trace=pl.when(pl.col("down")).then(pl.lit(traces[True][0])).otherwise(pl.lit(traces[False][0])),
                       recv_trace=pl.when(pl.col("down")).then(pl.lit(traces[True][1]))
                       .otherwise(pl.lit(traces[False][1])),
                       subflow_id=pl.col("stream"), run_id=pl.lit(run_id))
    if isinstance(m, pl.DataFrame):
        m = m.sort("sent_s")
    return schema.conform("owd_samples", m), [problem(run_id, client[0], "metrics", n) for n in notes]


def analyze_pcap(pcap: Path, vantage: str | None = None, path_map: dict[str, str] | None = None,
                 decoder: str = DEFAULT_DECODER, decoded: Callable[[], None] | None = None,
                 given: Labels | None = None) -> tuple[Tables, set[tuple[str, str]]]:
    """One pcap given alone: its tables (run facts from a meta.json beside it, if
    any) and the (run, source) keys they replace in the store; ``decoded`` as in
    ``analyze_trace``. Labelled (``given``: the command line's labels, or meta.json's
    beside it), its run gets a runs row and its labels, as a run folder does (the
    caller replaces that run's stored ones: ``store.Keys.facts``)."""
    meta, problems = read_meta(pcap.parent)
    # A run folder's trace (a meta.json beside it, or named as one end: client.pcap)
    # belongs to the folder's run; any other pcap is a run of its own.
    in_run = bool(meta) or pcap.stem in schema.VANTAGES
    run_id = meta.get("run_id") or (pcap.parent.resolve().name if in_run else pcap.stem) or str(pcap)
    for pr in problems:
        pr["run_id"] = run_id
    t, pr = analyze_trace(pcap, run_id, vantage, {**metadoc.path_map_from_meta(meta), **(path_map or {})}, decoder,
                          decoded)
    t["problems"] = problems_table(problems + pr)
    from_cli = given.for_run(run_id) if given else {}
    if from_cli or meta.get("labels"):
        t.update(meta_tables(meta, run_id, from_cli, loose=not meta))
    # the meta.json beside it is re-read: its earlier problems rows are replaced (by none once fixed)
    keys = {(run_id, str(pcap))} | ({(run_id, str(pcap.parent / "meta.json"))} if in_run else set())
    return complete(t), keys


def _parse_time(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(str(text).replace("Z", "+00:00"))


def _day_start(meta: dict) -> float:
    """Epoch seconds of local midnight on the run's start day (D-ITG logs times of day)."""
    started = meta.get("started_at")
    if not started:
        return 0.0
    day = _parse_time(started).astimezone()
    return day.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()


def merge(parts: list[Tables]) -> Tables:
    out: Tables = {}
    for name in schema.TABLES:
        frames = [t[name] for t in parts if name in t]
        if frames:
            out[name] = schema.concat(frames)
    return out


def problems_table(rows: list[dict]) -> pl.DataFrame:
    return schema.conform("problems", pl.DataFrame(rows, schema=schema.TABLES["problems"])) if rows else schema.empty("problems")


def complete(t: Tables) -> Tables:
    """Every table present (empty where a run has none), in schema order."""
    return {name: t.get(name, schema.empty(name)) for name in schema.TABLES}
