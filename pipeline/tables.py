"""Traces and runs -> the tables of ``schema.TABLES``.

A *trace* is one pcap seen from one vantage point; a *run* is a folder holding a
client trace, a server trace, ``meta.json`` and emulator logs (as ``capture/``
writes them). Each metric is computed only from the vantage its definition names.
"""
from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import polars as pl

from . import ditg, flows, metrics, mptcp, schema
from .extract import ExtractError, read_packets

Tables = dict[str, pl.DataFrame]


def problem(run_id: str | None, source: str, stage: str, reason: str) -> dict:
    return {"run_id": run_id, "source": source, "stage": stage, "reason": reason}


def vantage_from_name(path: str | os.PathLike) -> str | None:
    stem = Path(path).stem.lower()
    for v in schema.VANTAGES:
        if v in stem:
            return v
    return None


def path_map_from_meta(meta: dict) -> dict[str, str]:
    """``{client address: path label}`` from meta.json's ``paths``.

    Accepts ``{"wifi": "10.0.1.2"}`` or ``{"wifi": {"client_addr": "10.0.1.2"}}``.
    """
    out = {}
    for label, v in (meta.get("paths") or {}).items():
        addrs = v if isinstance(v, (str, list)) else v.get("client_addr") or v.get("client_addrs") or []
        for a in [addrs] if isinstance(addrs, str) else addrs:
            out[a] = label
    return out


def analyze_trace(
    pcap: str | os.PathLike,
    run_id: str,
    vantage: str | None = None,
    path_map: dict[str, str] | None = None,
) -> tuple[Tables, list[dict]]:
    """All tables one trace contributes, and its problems (never raises on bad input)."""
    source = str(pcap)
    problems: list[dict] = []
    try:
        ex = read_packets(pcap)
    except ExtractError as e:
        return {}, [problem(run_id, source, "extract", str(e))]
    problems += [problem(run_id, source, "extract", w) for w in ex.warnings]
    try:
        # The path map names the client's addresses, which settles who is client.
        tr = flows.build_trace(ex.packets, frozenset(path_map or ()))
    except Exception as e:  # a malformed trace must not stop the other files
        return {}, problems + [problem(run_id, source, "metrics", f"could not analyse: {type(e).__name__}: {e}")]
    problems += [problem(run_id, source, "metrics", n) for n in tr.notes]

    inferred = flows.vantage_from_handshakes(tr.subflows)
    v = vantage or vantage_from_name(pcap) or inferred
    if v is None:
        problems.append(problem(run_id, source, "metrics",
                                "cannot tell whether this is the client's or the server's capture "
                                "(no complete handshake; name it client*/server* or pass --vantage); "
                                "vantage-specific metrics left empty"))
    elif inferred is not None and inferred != v:
        problems.append(problem(run_id, source, "metrics",
                                f"treated as the {v}'s capture, but handshake timing suggests the {inferred}'s"))
    return trace_tables(tr, run_id, source, v, path_map or {}, problems), problems


def trace_tables(tr: flows.Trace, run_id: str, source: str, vantage: str | None,
                 path_map: dict[str, str], problems: list[dict]) -> Tables:
    p, sf = tr.packets, tr.subflows
    sf = sf.with_columns(path=pl.col("client_addr").replace_strict(path_map, default=pl.col("client_addr")))
    ids = {"run_id": run_id, "trace": source}

    data = metrics.retransmissions(p)
    counts = metrics.loss_rate(data)
    share = metrics.traffic_share(p)
    rtt = metrics.rtt_samples(p, data) if vantage == "server" else None
    ofo = metrics.ofo_delays(p) if vantage == "client" else None
    dl = metrics.download_time(p, sf)

    sub = (
        sf.join(counts, on="stream", how="left")
        .join(share.drop("conn_id"), on="stream", how="left")
        .with_columns(
            pl.col("data_packets").fill_null(0),
            pl.col("retransmitted_packets").fill_null(0),
            pl.col("payload_bytes").fill_null(0),
            loss_rate=pl.col("loss_rate") if vantage == "server" else pl.lit(None, pl.Float64),
            subflow_id=pl.col("stream"),
            start_s=pl.coalesce("t_syn", "t_first"),
            vantage=pl.lit(vantage),
            **{k: pl.lit(v) for k, v in ids.items()},
        )
    )
    if rtt is not None and rtt.height:
        stats = rtt.group_by("stream").agg(
            pl.len().cast(pl.Int64).alias("rtt_samples"),
            pl.col("rtt_ms").min().alias("rtt_min_ms"),
            pl.col("rtt_ms").mean().alias("rtt_mean_ms"),
            pl.col("rtt_ms").median().alias("rtt_median_ms"),
            pl.col("rtt_ms").max().alias("rtt_max_ms"),
        )
        sub = sub.join(stats, on="stream", how="left")
    elif vantage == "server":
        sub = sub.with_columns(rtt_samples=pl.lit(0, pl.Int64))

    conn_kind = sf.group_by("conn_id").agg(
        transport=pl.when((pl.col("kind") != "tcp").any()).then(pl.lit("mptcp")).otherwise(pl.lit("tcp")),
        mptcp_version=pl.col("mp_version").drop_nulls().first(),
        client_addr=pl.col("client_addr").sort_by(pl.col("is_primary").not_()).first(),
        server_addr=pl.col("server_addr").sort_by(pl.col("is_primary").not_()).first(),
        server_port=pl.col("server_port").first().cast(pl.Int32),
        n_subflows=pl.len().cast(pl.Int32),
        handshake_captured=pl.col("handshake_captured").filter(pl.col("is_primary")).first().fill_null(False),
    )
    conn_bytes = share.group_by("conn_id").agg(pl.col("payload_bytes").sum())
    conns = (
        conn_kind.join(conn_bytes, on="conn_id", how="left")
        .join(dl, on="conn_id", how="left")
        .with_columns(
            pl.col("payload_bytes").fill_null(0),
            download_time_s=pl.col("download_time_s") if vantage == "client" else pl.lit(None, pl.Float64),
            vantage=pl.lit(vantage),
            **{k: pl.lit(v) for k, v in ids.items()},
        )
        .sort("conn_id")
    )
    if vantage == "client":
        for r in conns.filter(pl.col("download_time_s").is_null()).iter_rows(named=True):
            problems.append(problem(run_id, source, "metrics",
                                    f"connection {r['conn_id']}: first SYN not captured, download time unknown"))

    path_of = sf.select("stream", "path")
    out: Tables = {
        "connections": schema.conform("connections", conns),
        "subflows": schema.conform("subflows", sub),
    }
    if rtt is not None:
        out["rtt_samples"] = schema.conform(
            "rtt_samples",
            rtt.join(sf.select("stream", "conn_id", "path"), on="stream", how="left")
            .with_columns(subflow_id=pl.col("stream"), **{k: pl.lit(v) for k, v in ids.items()}),
        )
    if ofo is not None:
        idsn = sf.select("conn_id", "server_idsn").unique("conn_id")
        ofo = ofo.join(path_of, on="stream", how="left").join(idsn, on="conn_id", how="left")
        dsn = mptcp.absolute_dsn(ofo["dsn_rel"].to_numpy(), ofo["server_idsn"].fill_null(0).to_numpy())
        never = ofo.filter(pl.col("ofo_delay_ms").is_null()).height
        if never:
            problems.append(problem(run_id, source, "metrics",
                                    f"{never} packets never became in order (a gap in the trace); their OFO delay is empty"))
        out["ofo_samples"] = schema.conform(
            "ofo_samples",
            ofo.with_columns(dsn=pl.Series(dsn, dtype=pl.UInt64), subflow_id=pl.col("stream"),
                             **{k: pl.lit(v) for k, v in ids.items()}),
        )
    return out


def read_meta(run_dir: Path) -> dict:
    f = run_dir / "meta.json"
    return json.loads(f.read_text()) if f.exists() else {}


def health_columns(meta: dict) -> dict:
    """The runs table's host-health columns from meta.json (capture/health.py)."""
    st, host, cpu = meta.get("stalls") or {}, meta.get("host") or {}, meta.get("run_cpu") or {}
    return {"stalled": st.get("stalled"), "worst_late_ms": st.get("worst_late_ms"),
            "late_packets": st.get("late_packets"), "late_intervals": st.get("late_intervals"),
            "worst_reader_lag_ms": st.get("worst_reader_lag_ms"), "steal_pct": host.get("steal_pct"),
            "host_busy_pct": host.get("busy_pct"), "run_cpu_s": cpu.get("cpu_s")}


def runs_row(meta: dict, run_id: str) -> pl.DataFrame:
    row = {c: meta.get(c) for c in schema.TABLES["runs"]}
    row.update(health_columns(meta))
    row["run_id"] = run_id
    row["meta_json"] = json.dumps(meta, sort_keys=True)
    return schema.conform("runs", pl.DataFrame([row], schema_overrides={c: pl.Utf8 for c in row if row[c] is None}))


def link_truth(run_dir: Path, run_id: str) -> tuple[pl.DataFrame, list[dict]]:
    """The emulator's per-packet logs, ``linkem-<path>.csv``, one per path."""
    frames, problems = [], []
    for f in sorted(run_dir.glob("linkem-*.csv")):
        try:
            # linkem writes rows as packets complete, not in arrival order
            df = pl.read_csv(f, schema_overrides={"reason": pl.Utf8, "departure_s": pl.Float64}).sort(
                "direction", "packet_id")
            frames.append(df.with_columns(
                run_id=pl.lit(run_id), path=pl.lit(f.stem.removeprefix("linkem-")),
                dropped=pl.col("dropped").cast(pl.Boolean),
            ))
        except Exception as e:
            problems.append(problem(run_id, str(f), "load", f"unreadable emulator log: {e}"))
    df = pl.concat([schema.conform("link_truth", d) for d in frames]) if frames else schema.empty("link_truth")
    return df, problems


def analyze_run(run_dir: str | os.PathLike, path_map: dict[str, str] | None = None) -> Tables:
    """Every table of one run folder (client.pcap, server.pcap, meta.json, logs)."""
    run_dir = Path(run_dir)
    meta = read_meta(run_dir)
    run_id = meta.get("run_id") or run_dir.name
    pm = {**path_map_from_meta(meta), **(path_map or {})}
    pcaps = sorted(f for f in run_dir.iterdir() if f.suffix in (".pcap", ".pcapng"))
    # The testbed keeps per-interface pcaps beside each end's merged one: use the merged.
    merged = [f for f in pcaps if f.stem in schema.VANTAGES]
    pcaps = merged or pcaps
    parts: list[Tables] = []
    problems: list[dict] = []
    if not pcaps:
        problems.append(problem(run_id, str(run_dir), "extract", "no .pcap or .pcapng file in the run folder"))
    for f in pcaps:
        t, pr = analyze_trace(f, run_id, vantage_from_name(f), pm)
        parts.append(t)
        problems += pr
    lt, pr = link_truth(run_dir, run_id)
    problems += pr
    out = merge(parts)
    if (run_dir / "ditg-recv.txt").exists():
        out["app_latency"] = ditg.read(run_dir / "ditg-recv.txt", run_id, _day_start(meta))
    out["runs"] = runs_row(meta, run_id)
    out["link_truth"] = lt
    out["problems"] = problems_table(problems)
    return complete(out)


def _day_start(meta: dict) -> float:
    """Epoch seconds of local midnight on the run's start day (D-ITG logs times of day)."""
    started = meta.get("started_at")
    if not started:
        return 0.0
    day = dt.datetime.fromisoformat(str(started).replace("Z", "+00:00")).astimezone()
    return day.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()


def merge(parts: list[Tables]) -> Tables:
    out: Tables = {}
    for name in schema.TABLES:
        frames = [t[name] for t in parts if name in t]
        if frames:
            out[name] = pl.concat(frames)
    return out


def problems_table(rows: list[dict]) -> pl.DataFrame:
    return schema.conform("problems", pl.DataFrame(rows, schema=schema.TABLES["problems"])) if rows else schema.empty("problems")


def complete(t: Tables) -> Tables:
    """Every table present (empty where a run has none), in schema order."""
    return {name: t.get(name, schema.empty(name)) for name in schema.TABLES}
