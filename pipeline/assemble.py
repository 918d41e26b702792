"""A trace's measures -> its rows of the tables (``assemble``), and what both ways of
measuring a trace share: held whole (``tables.measure``) or spilled piece by piece
(``streamed.measure``). Its own module so that ``streamed`` and ``tables`` both build
on it and neither imports the other back.
"""
from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from . import mptcp, owd, schema

# table name -> its rows: a DataFrame, or a LazyFrame over a spill (a streamed trace's
# per-packet tables; ``store`` writes them piece by piece)
Tables = dict[str, pl.DataFrame | pl.LazyFrame]

# A trace's side of the one-way delay matching (``owd.half``): not a table of its own,
# ``tables.analyze_run`` pairs the two ends' and drops it.
OWD_HALF = "_owd_half"


def problem(run_id: str | None, source: str, stage: str, reason: str) -> dict:
    return {"run_id": run_id, "source": source, "stage": stage, "reason": reason}


# ----------------------------------------------------------------------- vantage


def vantage_from_name(path: str | os.PathLike) -> str | None:
    stem = Path(path).stem.lower()
    for v in schema.VANTAGES:
        if v in stem:
            return v
    return None


def vantage_from_handshakes(sf: pl.DataFrame) -> str | None:
    """Client or server capture, from handshake timing.

    At the SYN's sender the SYN -> SYN/ACK gap is a round trip and SYN/ACK -> third
    ACK is immediate; at its receiver it is the other way round. The SYN's sender is
    the client unless the stream is ``reversed``. Majority over subflows; a tie (half the
    handshakes each way, e.g. a busy server whose ACKs wait as long as the round trip) is
    broken by the summed margins (seconds of round trip each way), and stays None only
    when those cancel too (``handshakes_complete`` tells that case from no handshake).
    """
    t = complete_handshakes(sf)
    if t.height == 0:
        return None
    margin = (t["t_synack"] - t["t_syn"]) - (t["t_ack3"] - t["t_synack"])  # > 0: at the SYN's sender
    votes = ((margin > 0) ^ t["reversed"]).cast(pl.Int32)
    if votes.sum() * 2 != t.height:
        return "client" if votes.sum() * 2 > t.height else "server"
    total = (margin * pl.Series([-1.0 if r else 1.0 for r in t["reversed"].to_list()])).sum()
    # within a capture's microsecond resolution the margins cancel: no side
    return "client" if total > 1e-6 else "server" if total < -1e-6 else None


def complete_handshakes(sf: pl.DataFrame) -> pl.DataFrame:
    """The subflows whose SYN, SYN/ACK and third ACK the capture holds."""
    return sf.filter(pl.col("t_syn").is_not_null(), pl.col("t_synack").is_not_null(), pl.col("t_ack3").is_not_null())


def which_vantage(sf: pl.DataFrame, vantage: str | None, pcap) -> tuple[str | None, list[str]]:
    """Whose capture this is (given, from its name, else from handshake timing), and
    notes when that cannot be told or the timing disagrees."""
    inferred = vantage_from_handshakes(sf)
    v = vantage or vantage_from_name(pcap) or inferred
    if v is None:
        why = ("its handshakes' timing points both ways equally" if complete_handshakes(sf).height
               else "no complete handshake")
        return v, [f"cannot tell whether this is the client's or the server's capture ({why}; name it "
                   "client*/server* or pass --vantage); vantage-specific metrics left empty"]
    if inferred is not None and inferred != v:
        return v, [f"treated as the {v}'s capture, but handshake timing suggests the {inferred}'s"]
    return v, []


def _sender(direction: str) -> str:
    return "server" if direction == "down" else "client"


def _receiver(direction: str) -> str:
    return "client" if direction == "down" else "server"


def sending_receiving(vantage: str | None) -> tuple[list[str], list[str]]:
    """The directions a value may be read from in a trace of ``vantage``: as their sender, as their receiver."""
    return ([d for d in schema.DIRECTIONS if vantage == _sender(d)],
            [d for d in schema.DIRECTIONS if vantage == _receiver(d)])


# ----------------------------------------------------------------------- measures


@dataclass
class Measures:
    """What a trace's tables are assembled from (``assemble``): computed from the packets
    held whole (``tables.measure``) or from a spilled trace's pieces (``streamed.measure``).
    The per-packet ones (``seq``, ``rtt``, ``ofo``) may be LazyFrames over a spill."""
    counts: pl.DataFrame  # metrics.loss_rate
    share: pl.DataFrame  # metrics.traffic_share
    dl: pl.DataFrame  # metrics.download_time
    seq: pl.DataFrame | pl.LazyFrame  # seqgraph.seq_packets
    rtt: pl.DataFrame | pl.LazyFrame | None = None  # metrics.rtt_samples (None: not the sender's trace)
    ack_rtt: pl.DataFrame | pl.LazyFrame | None = None  # metrics.ack_rtt_samples' stream, direction, rtt_ms
    ofo: pl.DataFrame | pl.LazyFrame | None = None  # metrics.ofo_delays (None: not the receiver's trace)
    delivered: pl.DataFrame | None = None  # metrics.delivered_per_second
    # paired traces: the data packets owd.half reads, or a streamed trace's half on disk
    owd_data: pl.DataFrame | owd.Spilled | None = None


def connection_starts(dl: pl.DataFrame) -> pl.DataFrame:
    """``conn_id, start_s, syn_captured`` from ``metrics.download_time``'s rows."""
    return dl.group_by("conn_id").agg(pl.col("start_s").first(), pl.col("syn_captured").first())


def canonical_addr(addr: str) -> str:
    """An address as the decoder writes it (IPv6 compressed, lower case: ``2001:DB8:0::1``
    is ``2001:db8::1``); anything that is not an address, as it is."""
    try:
        return str(ipaddress.ip_address(addr.strip()))
    except ValueError:
        return addr


def with_paths(sf: pl.DataFrame, path_map: dict[str, str]) -> pl.DataFrame:
    """The subflows with ``path``: the label ``path_map`` gives their client address (in
    any spelling of it), else the address."""
    canon = {canonical_addr(a): label for a, label in path_map.items()}
    return sf.with_columns(path=pl.col("client_addr").replace_strict(canon, default=pl.col("client_addr")))


# ----------------------------------------------------------------------- assembly


def assemble(m: Measures, sf: pl.DataFrame, run_id: str, source: str, vantage: str | None,
             path_map: dict[str, str], problems: list[dict], time_unusable: bool = False) -> Tables:
    """A trace's tables from its measures (``tables.trace_tables``). The steps append to
    ``problems`` in this order: negative RTTs, connections, OFO gaps."""
    sf = with_paths(sf, path_map)
    ids = {"run_id": run_id, "trace": source}
    sending, receiving = sending_receiving(vantage)
    rtt = _nonnegative_rtt(m.rtt, run_id, source, problems)
    sub = _subflow_rows(m, rtt, sf, ids, vantage, sending)
    conns = _connection_rows(m, sf, ids, vantage, receiving, time_unusable, problems)
    path_of = sf.select("stream", "path")
    out: Tables = {
        # a frame of every data packet: made only when the other end's trace will be paired with it
        **({OWD_HALF: owd.half(m.owd_data, sf) if isinstance(m.owd_data, pl.DataFrame) else m.owd_data}
           if m.owd_data is not None else {}),
        "connections": schema.conform("connections", conns),
        "subflows": schema.conform("subflows", sub),
        "seq_packets": schema.conform("seq_packets", m.seq.with_columns(**{k: pl.lit(v) for k, v in ids.items()})),
    }
    if m.delivered is not None:
        out["delivered_1s"] = schema.conform(
            "delivered_1s", m.delivered.join(path_of, on="stream", how="left")
            .with_columns(subflow_id=pl.col("stream"), **{k: pl.lit(v) for k, v in ids.items()}))
    if rtt is not None:
        out["rtt_samples"] = schema.conform(
            "rtt_samples",
            rtt.join(_like(rtt, sf.select("stream", "conn_id", "path")), on="stream", how="left",
                     maintain_order=_order(rtt))
            .with_columns(subflow_id=pl.col("stream"), **{k: pl.lit(v) for k, v in ids.items()}),
        )
    if m.ofo is not None:
        out["ofo_samples"] = _ofo_samples(m.ofo, sf, path_of, ids, problems)
    return out


def _nonnegative_rtt(rtt: pl.DataFrame | pl.LazyFrame | None, run_id: str, source: str,
                     problems: list[dict]) -> pl.DataFrame | pl.LazyFrame | None:
    """The RTT samples without negative ones, and a problem saying how many were dropped."""
    if rtt is not None:
        # backwards timestamps: a reply "before" its packet is no round trip
        negative = schema.rows(rtt.filter(pl.col("rtt_ms") < 0))
        if negative:
            rtt = rtt.filter(pl.col("rtt_ms") >= 0)
            problems.append(problem(run_id, source, "metrics",
                                    f"{negative} RTT samples were negative (timestamps go backwards) and were dropped"))
    return rtt


def _subflow_rows(m: Measures, rtt: pl.DataFrame | pl.LazyFrame | None, sf: pl.DataFrame, ids: dict,
                  vantage: str | None, sending: list[str]) -> pl.DataFrame:
    """The subflows table's rows: one per subflow and direction that carried data; none: one "down" row."""
    counts, share = m.counts, m.share
    dirs = counts.select("stream", "direction")
    quiet = sf.select("stream").join(dirs, on="stream", how="anti").with_columns(direction=pl.lit("down"))
    rows = pl.concat([dirs, quiet]).join(sf, on="stream", how="left")
    sub = (
        rows.join(counts, on=["stream", "direction"], how="left")
        .join(share.drop("conn_id"), on=["stream", "direction"], how="left")
        .with_columns(
            pl.col("data_packets").fill_null(0),
            pl.col("retransmitted_packets").fill_null(0),
            pl.col("payload_bytes").fill_null(0),
            loss_rate=pl.when(pl.col("direction").is_in(sending)).then(pl.col("loss_rate")),
            subflow_id=pl.col("stream"),
            start_s=pl.coalesce("t_syn", "t_first"),
            vantage=pl.lit(vantage),
            **{k: pl.lit(v) for k, v in ids.items()},
        )
    )
    if rtt is not None and schema.rows(rtt):
        stats = _per_subflow_direction(rtt, [
            pl.len().cast(pl.Int64).alias("rtt_samples"),
            pl.col("rtt_ms").min().alias("rtt_min_ms"),
            pl.col("rtt_ms").mean().alias("rtt_mean_ms"),
            pl.col("rtt_ms").median().alias("rtt_median_ms"),
            pl.col("rtt_ms").max().alias("rtt_max_ms"),
        ])
        sub = sub.join(stats, on=["stream", "direction"], how="left")
    if m.ack_rtt is not None and schema.rows(m.ack_rtt):
        sub = sub.join(_per_subflow_direction(m.ack_rtt.filter(pl.col("rtt_ms") >= 0), [
            pl.len().cast(pl.Int64).alias("rtt_ack_samples"), pl.col("rtt_ms").median().alias("rtt_ack_median_ms")]),
            on=["stream", "direction"], how="left")
    if rtt is not None:  # the sender's trace: no sample is a count of 0
        have = pl.col("rtt_samples") if "rtt_samples" in sub.columns else pl.lit(None, pl.Int64)
        sub = sub.with_columns(rtt_samples=pl.when(pl.col("direction").is_in(sending))
                               .then(have.fill_null(0)).cast(pl.Int64))
    return sub.sort("conn_id", "start_s", "stream", "direction")


def _connection_rows(m: Measures, sf: pl.DataFrame, ids: dict, vantage: str | None, receiving: list[str],
                     time_unusable: bool, problems: list[dict]) -> pl.DataFrame:
    """The connections table's rows (one per connection and direction that carried data;
    none: one "down" row), and problems for negative or unknown completion times."""
    share, dl = m.share, m.dl
    run_id, source = ids["run_id"], ids["trace"]
    conn_kind = sf.group_by("conn_id").agg(
        transport=pl.when((pl.col("kind") != "tcp").any()).then(pl.lit("mptcp")).otherwise(pl.lit("tcp")),
        mptcp_version=pl.col("mp_version").drop_nulls().first(),
        client_addr=pl.col("client_addr").sort_by(pl.col("is_primary").not_()).first(),
        server_addr=pl.col("server_addr").sort_by(pl.col("is_primary").not_()).first(),
        server_port=pl.col("server_port").first().cast(pl.Int32),
        n_subflows=pl.len().cast(pl.Int32),
        handshake_captured=pl.col("handshake_captured").filter(pl.col("is_primary")).first().fill_null(False),
    )
    conn_bytes = share.group_by("conn_id", "direction").agg(pl.col("payload_bytes").sum())
    conn_quiet = conn_kind.select("conn_id").join(conn_bytes, on="conn_id", how="anti").with_columns(
        direction=pl.lit("down"), payload_bytes=pl.lit(0, pl.Int64))
    conn_rows = pl.concat([conn_bytes, conn_quiet.select(conn_bytes.columns)])
    starts = connection_starts(dl)
    conns = (
        conn_rows.join(conn_kind, on="conn_id", how="left")
        .join(starts, on="conn_id", how="left")
        .join(dl.select("conn_id", "direction", "download_time_s"), on=["conn_id", "direction"], how="left")
        .with_columns(
            download_time_s=pl.when(pl.col("direction").is_in(receiving) & ~pl.lit(time_unusable))
            .then(pl.col("download_time_s")),
            vantage=pl.lit(vantage),
            **{k: pl.lit(v) for k, v in ids.items()},
        )
        .sort("conn_id", "direction")
    )
    negative = conns.filter(pl.col("download_time_s") < 0)
    if negative.height:
        conns = conns.with_columns(download_time_s=pl.when(pl.col("download_time_s") >= 0).then("download_time_s"))
        problems.append(problem(run_id, source, "metrics",
                                f"{negative.height} completion times were negative (timestamps go backwards) "
                                "and were left empty"))
    for r in conns.filter(pl.col("direction").is_in(receiving), ~pl.col("syn_captured"),
                          pl.col("payload_bytes") > 0).iter_rows(named=True):
        what = "download time" if r["direction"] == "down" else "upload completion time"
        problems.append(problem(run_id, source, "metrics",
                                f"connection {r['conn_id']}: first SYN not captured, {what} unknown"))
    return conns


def _ofo_samples(ofo: pl.DataFrame | pl.LazyFrame, sf: pl.DataFrame, path_of: pl.DataFrame, ids: dict,
                 problems: list[dict]) -> pl.DataFrame | pl.LazyFrame:
    """The ofo_samples table's rows, and a problem counting packets that never became in order."""
    # back to absolute DSNs in the sender's numbering (server IDSN down, client IDSN up)
    idsn = sf.select("conn_id", "server_idsn", "client_idsn").unique("conn_id")
    ofo = ofo.join(_like(ofo, path_of), on="stream", how="left", maintain_order=_order(ofo)).join(
        _like(ofo, idsn), on="conn_id", how="left", maintain_order=_order(ofo)).with_columns(
        ref=pl.when(pl.col("direction") == "down").then("server_idsn").otherwise("client_idsn"))
    never = schema.rows(ofo.filter(pl.col("ofo_delay_ms").is_null()))
    if never:
        problems.append(problem(ids["run_id"], ids["trace"], "metrics",
                                f"{never} packets never became in order (a gap in the trace); their OFO delay is empty"))
    return schema.conform(
        "ofo_samples",
        ofo.with_columns(dsn=mptcp.absolute_dsn("dsn_rel", pl.col("ref").fill_null(0)),
                         subflow_id=pl.col("stream"), **{k: pl.lit(v) for k, v in ids.items()}),
    )


def _per_subflow_direction(samples: pl.DataFrame | pl.LazyFrame, aggs: list[pl.Expr]) -> pl.DataFrame:
    """``aggs`` per stream and direction of ``samples``, one direction at a time: grouped
    by the direction's string too, a spill's 5M RTT samples took 450 MB; this way 130."""
    return pl.concat([_collect(samples.lazy().filter(pl.col("direction") == d).group_by("stream").agg(aggs), samples)
                      .with_columns(direction=pl.lit(d)) for d in schema.DIRECTIONS])


def _collect(query: pl.LazyFrame, source: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """``query`` over ``source``: by polars' streaming engine when the source is a spill."""
    return query.collect(engine="streaming" if isinstance(source, pl.LazyFrame) else "auto")


def _order(frame: pl.DataFrame | pl.LazyFrame) -> str:
    """A join's ``maintain_order`` for the per-packet tables: the rows' order in memory;
    none over a spill, whose rows the database takes in any order (the order-keeping
    streaming join took 2.2 s of 5M RTT samples' 2.4 s)."""
    return "none" if isinstance(frame, pl.LazyFrame) else "left"


def _like(frame: pl.DataFrame | pl.LazyFrame, other: pl.DataFrame) -> pl.DataFrame | pl.LazyFrame:
    """``other`` lazy when ``frame`` is (a join's two sides must be alike)."""
    return other.lazy() if isinstance(frame, pl.LazyFrame) else other
