"""The derived layer: every run-level quantity the figures and the claims use, defined once.

DuckDB macros and views over the tables of ``pipeline.schema``. ``store`` creates
them in every database it writes (so ``duckdb lab.duckdb`` shows them), and
``connect()`` creates them again as temporary objects in a read-only session, so a
database written by an older version (or by someone else) is read with *these*
definitions. Notebooks and claims select from them; nobody re-derives a quantity in a
cell.

Each definition's docstring quotes the paper that defines it. The layer answers four
questions once:

* **which rows are downloads**: ``dl_*`` (the papers measure server -> client data;
  when the tables carry a ``direction`` column only ``'down'`` rows count, the one
  place that choice is made);
* **which connection is the run's**: ``main_connections`` (the one that carried most
  payload in that trace; D-ITG also opens a small signalling connection);
* **what a run was configured as**: ``run_config`` (meta.json: RTT, loss and rate per
  path, buffer size, outages, stalls, size label);
* **what a run measured**: ``run_metrics`` (download time, goodput, bytes and share per
  path, pooled loss, RTT, out-of-order delay, application latency; ``run_delivery``: bytes
  received per second, for throughput over any window) and ``run_facts`` (both side by side), plus the pairings of runs the papers
  compare (``primary_pairs``, ``cc_pairs``).

Path sides: the lab names its paths ``wifi`` and ``lte`` (``capture.topology``); a
researcher's own captures may use other labels. A path whose label starts with
``wifi`` is the WiFi side, every other path the cellular side (Chen et al. plot "the
fraction of traffic carried by the cellular path").
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

# Tables that carry a download direction (pipeline.schema; issue 9 adds `direction`).
DIRECTED = ("connections", "subflows", "rtt_samples", "ofo_samples", "delivered_1s")


@dataclass(frozen=True)
class Definition:
    name: str
    kind: str  # "macro" or "view"
    sql: str  # the body: macro parameters and expression, or the view's SELECT
    doc: str  # what it is, with the paper's definition


def _downloads(table: str, columns: set[str]) -> str:
    """The download rows of a table: the one place the data direction is chosen."""
    if "direction" in columns:
        return f"SELECT * FROM \"{table}\" WHERE direction = 'down'"
    return f'SELECT * FROM "{table}"'


def _path_json(path: str, key: str) -> str:
    return f"json_extract(j, '$.paths.{path}.down.{key}')"


def _path_config(path: str, side: str) -> str:
    """Configured settings of one path from meta.json (``paths.<path>.down|up``)."""
    up = f"json_extract(j, '$.paths.{path}.up.delay_ms')"
    return f""",
        CASE WHEN {_path_json(path, 'delay_ms')} IS NOT NULL OR {up} IS NOT NULL
             THEN coalesce(TRY_CAST({_path_json(path, 'delay_ms')}::VARCHAR AS DOUBLE), 0)
                + coalesce(TRY_CAST({up}::VARCHAR AS DOUBLE), 0) END AS rtt_{side}_ms,
        CASE WHEN json_extract(j, '$.paths.{path}') IS NOT NULL
             THEN loss_mean({_path_json(path, 'loss')}) END AS loss_{side},
        TRY_CAST({_path_json(path, 'rate_mbit')}::VARCHAR AS DOUBLE) AS rate_{side}_mbit"""


def _pairs(vary: str, values: tuple[str, str], names: tuple[str, str], same: str, extra: str = "") -> str:
    """SQL: pairs of MP-2 runs equal in everything the papers hold fixed (campaign, scenario,
    size, repetition and ``same``) that differ in ``vary`` (``values``: the run compared,
    the baseline), with the relative goodput difference against the baseline."""
    a, b = names
    return f"""
            SELECT a.campaign, a.scenario, a.size_bytes, a.size_label, a.{same}, a.repetition,
                   a.run_id AS {a}_run, b.run_id AS {b}_run,
                   a.goodput_mbit AS {a}_goodput_mbit, b.goodput_mbit AS {b}_goodput_mbit,
                   100 * rel_diff(a.goodput_mbit, b.goodput_mbit) AS rel_diff_pct,{' ' + extra + ',' if extra else ''}
                   a.stalled OR b.stalled AS stalled
            FROM run_facts a JOIN run_facts b
              ON a.campaign IS NOT DISTINCT FROM b.campaign AND a.scenario IS NOT DISTINCT FROM b.scenario
             AND a.size_bytes = b.size_bytes AND a.mode = b.mode AND a.repetition = b.repetition
             AND a.{same} IS NOT DISTINCT FROM b.{same}
            WHERE a.mode = 'MP-2' AND a.{vary} = '{values[0]}' AND b.{vary} = '{values[1]}'
              AND a.goodput_mbit IS NOT NULL AND b.goodput_mbit IS NOT NULL"""


def definitions(columns: dict[str, set[str]]) -> list[Definition]:
    """Every macro and view, in dependency order, for tables with ``columns``."""
    dl = {t: _downloads(t, columns.get(t, set())) for t in DIRECTED}
    return [
        Definition("size_label", "macro", """(b) AS CASE
            WHEN b IS NULL OR b <= 0 THEN NULL
            WHEN b % 1000000000 = 0 THEN printf('%d GB', b // 1000000000)
            WHEN b % 1000000 = 0 THEN printf('%d MB', b // 1000000)
            WHEN b % 1000 = 0 THEN printf('%d KB', b // 1000)
            WHEN b % 1048576 = 0 THEN printf('%d MiB', b // 1048576)
            WHEN b % 1024 = 0 THEN printf('%d KiB', b // 1024)
            ELSE printf('%d B', b) END""",
                   "File or flow size as the papers write it: decimal units first (the campaigns' "
                   "'4MB' is 4,000,000 bytes, capture.campaign.SIZE_UNITS), binary units for sizes "
                   "that are only binary (Ferlin's 32 MiB)."),
        Definition("rel_diff", "macro", "(x, base) AS abs(x - base) / nullif(base, 0)",
                   "Relative difference, Deng et al. §3.4: |MPTCP_LTE − MPTCP_WiFi| / MPTCP_WiFi "
                   "(and r_network, r_cwnd of §3.5): the absolute difference over the baseline."),
        Definition("rel_change", "macro", "(x, base) AS (x - base) / nullif(base, 0)",
                   "Signed relative change of x against a baseline, e.g. the D-ITG study's "
                   "'relative reduction in packet latency' with MPTCP (as −rel_change) and "
                   "Ferlin's 'MPTCP performance relative to single-path TCP' (Fig. 4)."),
        Definition("loss_mean", "macro", """(l) AS CASE
            WHEN l IS NULL OR json_type(l) = 'NULL' THEN 0.0
            WHEN json_type(l) IN ('DOUBLE', 'UBIGINT', 'BIGINT', 'INTEGER') THEN TRY_CAST(l::VARCHAR AS DOUBLE)
            WHEN json_extract_string(l, '$.model') = 'gilbert_elliott' THEN (
                CASE WHEN coalesce(TRY_CAST(json_extract_string(l, '$.p_gb') AS DOUBLE), 0)
                        + coalesce(TRY_CAST(json_extract_string(l, '$.p_bg') AS DOUBLE), 0) = 0
                     THEN coalesce(TRY_CAST(json_extract_string(l, '$.loss_good') AS DOUBLE), 0)
                     ELSE (coalesce(TRY_CAST(json_extract_string(l, '$.p_bg') AS DOUBLE), 0)
                             * coalesce(TRY_CAST(json_extract_string(l, '$.loss_good') AS DOUBLE), 0)
                           + coalesce(TRY_CAST(json_extract_string(l, '$.p_gb') AS DOUBLE), 0)
                             * coalesce(TRY_CAST(json_extract_string(l, '$.loss_bad') AS DOUBLE), 1))
                          / (coalesce(TRY_CAST(json_extract_string(l, '$.p_gb') AS DOUBLE), 0)
                             + coalesce(TRY_CAST(json_extract_string(l, '$.p_bg') AS DOUBLE), 0)) END)
            ELSE coalesce(TRY_CAST(json_extract_string(l, '$.p') AS DOUBLE), 0) END""",
                   "Mean loss probability of a configured `loss` (a number, {model: bernoulli, p} or "
                   "Gilbert–Elliott {p_gb, p_bg, loss_good, loss_bad}: the stationary mix of the two "
                   "states)."),
        Definition("dl_connections", "view", dl["connections"],
                   "Connections, download direction (server -> client data)."),
        Definition("dl_subflows", "view", dl["subflows"],
                   "Subflows, download direction: every per-subflow metric of Chen §3.3 for the "
                   "server -> client data."),
        Definition("dl_rtt_samples", "view", dl["rtt_samples"],
                   "Karn-filtered RTT samples of download data packets (server trace, Chen §3.3)."),
        Definition("dl_ofo_samples", "view", dl["ofo_samples"],
                   "Out-of-order delay of every download data packet at the client (Chen §3.3)."),
        Definition("dl_delivered_1s", "view", dl["delivered_1s"],
                   "Download bytes received per second and subflow (receiver's trace)."),
        Definition("main_connections", "view", """
            SELECT run_id, trace, vantage, arg_max(conn_id, coalesce(payload_bytes, 0)) AS conn_id
            FROM dl_connections GROUP BY run_id, trace, vantage""",
                   "Per run and trace: the connection that carried the most payload — the download "
                   "(wget) or the D-ITG data flow, not D-ITG's signalling connection."),
        Definition("run_config", "view", f"""
            WITH m AS (SELECT *, CASE WHEN json_valid(meta_json) THEN meta_json::JSON END AS j FROM runs),
            c AS (SELECT run_id, campaign, scenario, mode,
                CASE WHEN mode LIKE 'MP%' OR mode = 'backup' THEN 'MPTCP' WHEN mode IS NULL THEN NULL
                     ELSE 'TCP' END AS transport,
                congestion_control, primary_path, size_bytes, size_label(size_bytes) AS size_label,
                workload, CASE WHEN workload LIKE 'ditg-%' THEN substr(workload, 6) END AS app,
                repetition
                {_path_config('wifi', 'wifi')}
                {_path_config('lte', 'cell')},
                coalesce(TRY_CAST(json_extract_string(j, '$.buffer_bytes') AS BIGINT),
                    TRY_CAST(regexp_split_to_array(trim(json_extract_string(j, '$.sysctls_applied."net.ipv4.tcp_rmem"')),
                                                   '\\s+')[3] AS BIGINT),
                    TRY_CAST(json_extract_string(j, '$.sysctls_applied."net.core.rmem_max"') AS BIGINT),
                    TRY_CAST(json_extract_string(j, '$.sysctl_profile.params_used.buffer') AS BIGINT),
                    TRY_CAST(nullif(regexp_extract(scenario, '(\\d+)\\s*[kK]', 1), '') AS BIGINT) * 1000
                ) AS buffer_bytes,
                coalesce(json_array_length(json_extract(j, '$.paths.wifi.down.outages')), 0)
                  + coalesce(json_array_length(json_extract(j, '$.paths.lte.down.outages')), 0)
                  + coalesce(json_array_length(json_extract(j, '$.paths.wifi.up.outages')), 0)
                  + coalesce(json_array_length(json_extract(j, '$.paths.lte.up.outages')), 0) > 0 AS has_outages,
                coalesce(TRY_CAST(json_extract_string(j, '$.stalls.stalled') AS BOOLEAN), FALSE)
                  {"OR coalesce(stalled, FALSE)" if "stalled" in columns.get("runs", set()) else ""} AS stalled,
                TRY_CAST(json_extract_string(j, '$.result.complete') AS BOOLEAN) AS complete,
                TRY_CAST(json_extract_string(j, '$.result.sent_packets') AS BIGINT) AS app_sent_packets,
                TRY_CAST(json_extract_string(j, '$.campaign_seed') AS BIGINT) AS campaign_seed,
                json_extract_string(j, '$.scale') AS scale,
                TRY_CAST(json_extract_string(j, '$.duration_s') AS DOUBLE) AS duration_s,
                coalesce(json_extract_string(j, '$.builds.host'), json_extract_string(j, '$.host.hostname')) AS host,
                json_extract_string(j, '$.builds.kernel') AS kernel_release,
                json_extract_string(j, '$.builds.linkem_sha256') AS linkem_build
            FROM m)
            SELECT *, rtt_wifi_ms = rtt_cell_ms AS symmetric_rtt,
                   CASE WHEN rate_wifi_mbit > rate_cell_mbit THEN 'wifi'
                        WHEN rate_wifi_mbit < rate_cell_mbit THEN 'lte' END AS faster_path
            FROM c""",
                   "One row per run: what it was configured as (meta.json). rtt_<side>_ms = the "
                   "path's configured down + up one-way delay; loss_<side> = mean configured loss "
                   "probability on the data (down) direction; rate_<side>_mbit = configured rate "
                   "(null for a delivery trace); side 'wifi' is path wifi, 'cell' is path lte. "
                   "buffer_bytes: meta.json buffer_bytes, else the maximum of the applied "
                   "net.ipv4.tcp_rmem (CS244: 'we modified the net.core.wmem_max, net.core.rmem_max, "
                   "and net.ipv4.tcp_rmem options ... to reflect the buffer size being tested'), "
                   "else rmem_max, the sysctl profile's buffer, or '<n>k' in the scenario name. "
                   "symmetric_rtt: both paths configured with the same RTT (the D-ITG study §IV: 'the "
                   "symmetrical-path tests, i.e., the tests with the same RTTs on both network paths'). "
                   "faster_path: the path with the higher configured rate (Deng et al. §3.4 compare "
                   "'a location where LTE has much higher throughput than WiFi' with the reverse). "
                   "has_outages: links taken down on purpose (handover runs). stalled: the host stalled "
                   "the emulator (linkem's stalls.stalled: a frame left more than the campaign's "
                   "threshold late, so the path's delay was not the configured one); findings leave "
                   "such runs out and say how many. complete: false when D-ITG's sender was stopped "
                   "at its time limit (result.stalled) -- a transport stall, the protocol's own "
                   "outcome (upstream MPTCP's receive-memory stall over 10/400 ms paths, "
                   "capture/README.md), so such runs are kept and flagged, not left out. host, "
                   "kernel_release, linkem_build: the machine a run was captured on and its builds "
                   "(meta.json builds; host also from host.hostname), compared before runs are pooled."),
        Definition("run_metrics", "view", """
            WITH mc AS (SELECT * FROM main_connections),
            dl AS (SELECT c.run_id, c.download_time_s FROM dl_connections c
                   JOIN mc USING (run_id, trace, vantage, conn_id) WHERE c.vantage = 'client'),
            sf AS (SELECT s.run_id, s.vantage, CASE WHEN s.path ILIKE 'wifi%' THEN 'wifi' ELSE 'cell' END AS side,
                          sum(s.payload_bytes) AS bytes, sum(s.data_packets) AS data_packets,
                          sum(s.retransmitted_packets) AS retx
                   FROM dl_subflows s JOIN mc USING (run_id, trace, vantage, conn_id) GROUP BY ALL),
            sender AS (SELECT *, dense_rank() OVER (PARTITION BY run_id ORDER BY vantage = 'server' DESC) AS k
                       FROM sf),
            bytes AS (SELECT run_id, coalesce(sum(bytes) FILTER (WHERE side = 'wifi'), 0) AS bytes_wifi,
                             coalesce(sum(bytes) FILTER (WHERE side = 'cell'), 0) AS bytes_cell,
                             sum(bytes) AS bytes_total
                      FROM sender WHERE k = 1 GROUP BY run_id),
            loss AS (SELECT run_id,
                        100.0 * sum(retx) FILTER (WHERE side = 'wifi')
                              / nullif(sum(data_packets) FILTER (WHERE side = 'wifi'), 0) AS loss_wifi_pct,
                        100.0 * sum(retx) FILTER (WHERE side = 'cell')
                              / nullif(sum(data_packets) FILTER (WHERE side = 'cell'), 0) AS loss_cell_pct
                     FROM sf WHERE vantage = 'server' GROUP BY run_id),
            rtt AS (SELECT s.run_id, avg(s.rtt_ms) FILTER (WHERE s.path ILIKE 'wifi%') AS rtt_wifi_mean_ms,
                           avg(s.rtt_ms) FILTER (WHERE NOT s.path ILIKE 'wifi%') AS rtt_cell_mean_ms,
                           count(*) AS rtt_n
                    FROM dl_rtt_samples s JOIN mc USING (run_id, trace, conn_id) GROUP BY s.run_id),
            ofo AS (SELECT o.run_id, count(*) AS ofo_packets,
                           count(*) FILTER (WHERE o.ofo_delay_ms = 0) AS ofo_in_order,
                           count(*) FILTER (WHERE o.ofo_delay_ms > 150 OR o.ofo_delay_ms IS NULL) AS ofo_over_150ms,
                           avg(o.ofo_delay_ms) AS ofo_mean_ms
                    FROM dl_ofo_samples o JOIN mc USING (run_id, trace, conn_id) GROUP BY o.run_id),
            app AS (SELECT run_id, avg(delay_ms) AS app_latency_ms, count(*) AS app_packets
                    FROM app_latency GROUP BY run_id)
            SELECT r.run_id, dl.download_time_s,
                CASE WHEN r.size_bytes > 0 AND dl.download_time_s > 0
                     THEN 8.0 * r.size_bytes / dl.download_time_s / 1e6 END AS goodput_mbit,
                b.bytes_wifi, b.bytes_cell,
                CASE WHEN b.bytes_total > 0 THEN 100.0 * b.bytes_cell / b.bytes_total END AS cell_share_pct,
                CASE WHEN b.bytes_wifi > 0 THEN b.bytes_cell::DOUBLE / b.bytes_wifi END AS contribution,
                loss.loss_wifi_pct, loss.loss_cell_pct, rtt.rtt_wifi_mean_ms, rtt.rtt_cell_mean_ms,
                ofo.ofo_packets, ofo.ofo_in_order, ofo.ofo_over_150ms, ofo.ofo_mean_ms,
                app.app_latency_ms, app.app_packets
            FROM runs r LEFT JOIN dl USING (run_id) LEFT JOIN bytes b USING (run_id)
            LEFT JOIN loss USING (run_id) LEFT JOIN rtt USING (run_id)
            LEFT JOIN ofo USING (run_id) LEFT JOIN app USING (run_id)""",
                   "One row per run: what it measured (its main connection, download direction).\n"
                   "download_time_s — Chen §3.3: 'the duration from when the client sends out the "
                   "first SYN to the server to the time it receives the last data packet' (client "
                   "trace).\n"
                   "goodput_mbit — file bytes ÷ download time (Raiciu et al.'s goodput; Deng et al.'s "
                   "flow throughput).\n"
                   "bytes_wifi, bytes_cell, cell_share_pct — Chen Fig. 3/5/10 'fraction of traffic "
                   "carried by the cellular path': payload bytes per side ÷ all (the sender's, i.e. "
                   "server, trace; the client's when there is no server trace).\n"
                   "contribution — Ferlin §VI-C/Table I 'the average contribution of a subflow "
                   "relative to the best subflow': bytes on path lte ÷ bytes on path wifi (the "
                   "Ferlin campaign puts the paper's reference path — WLAN, or 3G in 2G+3G — on "
                   "path wifi, so this is Table I's 3G/WLAN, 2G/WLAN, 2G/3G).\n"
                   "loss_<side>_pct — Chen §3.3: 'the total number of retransmitted data packets "
                   "divided by the total number of data packets sent by the server', pooled over "
                   "the side's subflows (server trace).\n"
                   "rtt_<side>_mean_ms — mean of the side's Karn-filtered RTT samples (Chen §3.3; Table 6 "
                   "'flow mean').\n"
                   "ofo_* — Chen §3.3 out-of-order delay of every data packet at the client: "
                   "packets, packets in order on arrival (delay 0), packets waiting > 150 ms (or "
                   "never in order), and the connection mean (Table 6 'connection mean').\n"
                   "app_latency_ms — the D-ITG study's 'average packet latency' of a test run: mean "
                   "of ITGRecv receive time − ITGSend send time."),
        Definition("run_delivery", "view", """
            SELECT d.run_id, d.second,
                   CASE WHEN d.path ILIKE 'wifi%' THEN 'wifi' ELSE 'cell' END AS side,
                   sum(d.payload_bytes) AS payload_bytes
            FROM dl_delivered_1s d JOIN main_connections USING (run_id, trace, conn_id)
            WHERE main_connections.vantage = 'client'
            GROUP BY ALL""",
                   "Per run, second since the first SYN and path side: the new data bytes the "
                   "client received on the run's main connection (client trace, download "
                   "direction). A window's goodput is the sum over its seconds ÷ its length: the "
                   "throughput a receiver-side sampler (iperf's interval reports, bwm-ng) reads."),
        Definition("run_facts", "view", """
            SELECT c.*, m.* EXCLUDE (run_id) FROM run_config c JOIN run_metrics m USING (run_id)""",
                   "run_config and run_metrics side by side: what the claims and notebooks read."),
        Definition("outage_delivery", "view", """
            WITH o AS (
                SELECT r.run_id, p.path,
                       unnest(from_json(json_extract(r.meta_json, '$.paths.' || p.path || '.down.outages'),
                                        '[["DOUBLE"]]')) AS w
                FROM runs r, (VALUES ('wifi'), ('lte')) p(path)
                WHERE json_valid(r.meta_json)
                  AND json_array_length(json_extract(r.meta_json, '$.paths.' || p.path || '.down.outages')) > 0),
            t AS (SELECT c.run_id, c.start_s AS t0, c.start_s + c.download_time_s AS t_end
                  FROM dl_connections c JOIN main_connections USING (run_id, trace, vantage, conn_id)
                  WHERE c.vantage = 'client'),
            pk AS (SELECT o.run_id, o.path AS pkt_path, o.arrival_s
                   FROM dl_ofo_samples o JOIN main_connections USING (run_id, trace, conn_id)),
            secs AS (SELECT o.run_id, o.path, o.w[1] AS down_s, o.w[2] AS up_s, t.t0, t.t_end,
                            unnest(generate_series(ceil(o.w[1])::BIGINT + 1, ceil(o.w[2])::BIGINT - 1)) AS s
                     FROM o JOIN t USING (run_id))
            SELECT run_id, path, down_s, up_s,
                   count(*) FILTER (WHERE t0 + s + 1 <= t_end) AS outage_seconds,
                   count(*) FILTER (WHERE t0 + s + 1 <= t_end AND EXISTS (
                       SELECT 1 FROM pk WHERE pk.run_id = secs.run_id
                          AND pk.arrival_s >= t0 + s AND pk.arrival_s < t0 + s + 1)) AS seconds_with_data,
                   max(t0 + up_s + 5 <= t_end)::INTEGER AS comeback_checkable,
                   max((t0 + up_s + 5 <= t_end AND EXISTS (
                       SELECT 1 FROM pk WHERE pk.run_id = secs.run_id AND pk.pkt_path = secs.path
                          AND pk.arrival_s >= t0 + up_s AND pk.arrival_s < t0 + up_s + 5))::INTEGER) AS came_back
            FROM secs GROUP BY run_id, path, down_s, up_s""",
                   "Handover runs (links taken down on purpose: meta.json paths.<p>.down.outages, "
                   "seconds from the emulator's start ≈ the first SYN), per outage: the whole seconds "
                   "inside it (the first second after the link drops left out, for the sender to notice) "
                   "while the download was still running, how many of them delivered data to the client "
                   "on any path, and whether the path carried data again within 5 s of coming back. "
                   "CS244: 'we were able to show that the transition to and from different links would "
                   "work properly'; Raiciu et al.'s video: 'As WiFi and Ethernet are turned back on, the "
                   "total throughput resumes its previous value'."),
        Definition("primary_pairs", "view",
                   _pairs("primary_path", ("lte", "wifi"), ("lte", "wifi"), same="congestion_control",
                          extra="a.goodput_mbit / nullif(b.goodput_mbit, 0) AS ratio"),
                   "Deng et al. §3.4: pairs of MP-2 runs that differ only in the network of the "
                   "primary subflow (same scenario, size, congestion control, repetition); "
                   "rel_diff_pct = |MPTCP_LTE − MPTCP_WiFi| / MPTCP_WiFi (Fig. 8, Fig. 14 "
                   "'Network'); ratio = MPTCP_LTE / MPTCP_WiFi, the 'relative throughput ratio' of "
                   "§3.4.2 (Fig. 11b, 12b)."),
        Definition("cc_pairs", "view",
                   _pairs("congestion_control", ("reno", "lia"), ("decoupled", "coupled"), same="primary_path"),
                   "Deng et al. §3.5: pairs of MP-2 runs that differ only in congestion control, "
                   "decoupled ('TCP Reno for each subflow', footnote 5: reno) vs coupled (LIA: lia); "
                   "rel_diff_pct = r_cwnd = |MPTCP_decoupled − MPTCP_coupled| / MPTCP_coupled "
                   "(Fig. 13, Fig. 14 'CC')."),
    ]


def _columns(con: duckdb.DuckDBPyConnection) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for table, column in con.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main'").fetchall():
        out.setdefault(table, set()).add(column)
    return out


# A macro holding a hash of every definition: a database whose macros and views are
# already this version's is left as it is (creating them binds each view: ~50 ms).
VERSION_MACRO = "lab_derived_version"


def fingerprint(defs: list[Definition]) -> str:
    import hashlib
    return hashlib.sha256("\n".join(f"{d.kind} {d.name} {d.sql}" for d in defs).encode()).hexdigest()[:16]


def installed_version(con: duckdb.DuckDBPyConnection) -> str | None:
    """The fingerprint of the definitions ``con`` holds (None: none, or older than the macro)."""
    import duckdb
    try:
        return con.execute(f"SELECT {VERSION_MACRO}()").fetchall()[0][0]  # all: no open result left
    except duckdb.Error:
        return None


def install(con: duckdb.DuckDBPyConnection, temp: bool = False) -> None:
    """Create (or replace) every macro and view on ``con`` unless they are this version's
    already; ``temp``: session-only objects (works on a read-only connection and shadows
    persistent ones of an older version)."""
    defs = definitions(_columns(con))
    version = fingerprint(defs)
    if installed_version(con) == version:
        return
    t = "TEMP " if temp else ""
    for d in defs:
        if d.kind == "macro":
            con.execute(f"CREATE OR REPLACE {t}MACRO {d.name}{d.sql}")
        else:
            con.execute(f"CREATE OR REPLACE {t}VIEW {d.name} AS {d.sql}")
    con.execute(f"CREATE OR REPLACE {t}MACRO {VERSION_MACRO}() AS '{version}'")


def connect(path: str | os.PathLike) -> duckdb.DuckDBPyConnection:
    """Open the lab's DuckDB file read-only with the derived layer of this version."""
    import duckdb  # here, not at the top: `pipeline analyze` imports it off its critical path
    from .inputs import not_duckdb
    with open(path, "rb") as f:
        what = not_duckdb(f.read(16))
    if what:
        raise ValueError(what)
    con = duckdb.connect(str(path), read_only=True,
                         config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        install(con, temp=True)
    except Exception:
        con.close()
        raise
    return con
