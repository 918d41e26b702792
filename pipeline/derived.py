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

Path sides: the lab names its paths ``wifi`` and ``lte`` (``capture.topology``; three-path
runs add ``eth``); a researcher's own captures may use other labels. A path whose label
starts with ``wifi`` is the WiFi side, every other path the cellular side (Chen et al. plot
"the fraction of traffic carried by the cellular path"). ``run_config`` describes the
``wifi`` and ``lte`` paths; ``run_delivery`` also keeps the path itself, for claims about
one path of several (CS244's handover over Ethernet, WiFi and 3G).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .inputs import not_duckdb
from .sqltext import comment_on, in_one_transaction

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


def _pairs(vary: str, values: tuple[str, str], names: tuple[str, str], same: str, extra: str = "") -> str:
    """SQL: pairs of MP-2 runs equal in everything the papers hold fixed (campaign, scenario,
    size, repetition and ``same``) that differ in ``vary`` (``values``: the run compared,
    the baseline), with the relative goodput difference against the baseline."""
    a, b = names
    return f"""
            SELECT a.campaign, a.study, a.scenario, a.size_bytes, a.size_label, a.{same}, a.repetition,
                   a.run_id AS {a}_run, b.run_id AS {b}_run,
                   a.goodput_mbit AS {a}_goodput_mbit, b.goodput_mbit AS {b}_goodput_mbit,
                   100 * rel_diff(a.goodput_mbit, b.goodput_mbit) AS rel_diff_pct,{' ' + extra + ',' if extra else ''}
                   a.stalled OR b.stalled AS stalled, a.usable AND b.usable AS usable
            FROM run_facts a JOIN run_facts b
              ON a.campaign IS NOT DISTINCT FROM b.campaign AND a.scenario IS NOT DISTINCT FROM b.scenario
             AND a.size_bytes = b.size_bytes AND a.mode = b.mode AND a.repetition = b.repetition
             AND a.{same} IS NOT DISTINCT FROM b.{same}
            WHERE a.mode = 'MP-2' AND a.{vary} = '{values[0]}' AND b.{vary} = '{values[1]}'
              AND a.goodput_mbit IS NOT NULL AND b.goodput_mbit IS NOT NULL"""


# The study (paper) a run belongs to: meta.json's ``study`` (runs.study), else its
# campaign's name up to the first '-', '_' or '.', lower-cased (older captures name the
# campaign after the study, with a suffix for a variant: '<study>-seed2'). One rule,
# written for SQL (the derived views, the provenance, the report) and for Python (a
# failed capture's status file, which never reached a table).
STUDY_HEAD = "^([^-_.]+)"


def study_sql(campaign: str = "campaign", study: str | None = "study") -> str:
    """SQL of a run's study; ``study=None`` where the table has no study column (a store
    written before runs.study existed reads the campaign's name only, until its next
    write adds the column)."""
    given = f"nullif({study}, '')" if study else "NULL"
    return f"coalesce({given}, nullif(lower(regexp_extract(coalesce({campaign}, ''), '{STUDY_HEAD}', 1)), ''))"


def runs_study_sql(con: duckdb.DuckDBPyConnection) -> str:
    """``study_sql`` for the ``runs`` table of ``con`` (with or without its study column)."""
    return study_sql("campaign", "study" if "study" in _columns(con).get("runs", set()) else None)


def study_of(campaign: str | None, study: str | None = None) -> str | None:
    """``study_sql`` in Python."""
    if study:
        return study
    m = re.match(STUDY_HEAD, campaign or "")
    return m.group(1).lower() if m else None


# One definition per macro and view (``definitions`` lists them in dependency order):
# constants, and functions for the few whose SQL depends on the tables' columns.

_SIZE_LABEL = Definition("size_label", "macro", """(b) AS CASE
            WHEN b IS NULL OR b <= 0 THEN NULL
            WHEN b % 1000000000 = 0 THEN printf('%d GB', b // 1000000000)
            WHEN b % 1000000 = 0 THEN printf('%d MB', b // 1000000)
            WHEN b % 1000 = 0 THEN printf('%d KB', b // 1000)
            WHEN b % 1048576 = 0 THEN printf('%d MiB', b // 1048576)
            WHEN b % 1024 = 0 THEN printf('%d KiB', b // 1024)
            ELSE printf('%d B', b) END""",
                         "File or flow size as the papers write it: decimal units first (the campaigns' "
                         "'4MB' is 4,000,000 bytes, capture.campaign.SIZE_UNITS), binary units for sizes "
                         "that are only binary (Ferlin's 32 MiB).")


_REL_DIFF = Definition("rel_diff", "macro", "(x, base) AS abs(x - base) / nullif(base, 0)",
                       "Relative difference, Deng et al. §3.4: |MPTCP_LTE − MPTCP_WiFi| / MPTCP_WiFi "
                       "(and r_network, r_cwnd of §3.5): the absolute difference over the baseline.")


_REL_CHANGE = Definition("rel_change", "macro", "(x, base) AS (x - base) / nullif(base, 0)",
                         "Signed relative change of x against a baseline, e.g. the D-ITG study's "
                         "'relative reduction in packet latency' with MPTCP (as −rel_change) and "
                         "Ferlin's 'MPTCP performance relative to single-path TCP' (Fig. 4).")


_MAIN_CONNECTIONS = Definition("main_connections", "view", """
            SELECT run_id, trace, vantage, arg_max(conn_id, coalesce(payload_bytes, 0)) AS conn_id
            FROM dl_connections GROUP BY run_id, trace, vantage""",
                               "Per run and trace: the connection that carried the most payload — the download "
                               "(wget) or the D-ITG data flow, not D-ITG's signalling connection.")


_RUN_METRICS = Definition("run_metrics", "view", """
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
                app.app_latency_ms, app.app_packets,
                r.rcvbuf_mean_bytes, r.rcvbuf_max_bytes, r.rcvbuf_used_mean_bytes, r.rcvbuf_samples,
                r.sndbuf_mean_bytes
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
                          "of ITGRecv receive time − ITGSend send time.\n"
                          "rcvbuf_* , sndbuf_mean_bytes — socket buffers sampled every 100 ms during the run "
                          "(campaigns with sample_socket_buffers; meta.json socket_buffers): the client's "
                          "receive buffer size (ss skmem rb: the auto-tuned sk_rcvbuf of the main connection's "
                          "MPTCP-level socket, or its TCP socket), mean and largest, the receive memory in use "
                          "(skmem r), the number of samples, and the server's mean send buffer size (skmem tb). "
                          "Ferlin et al. §VI-B: 'the measurements returned an average buffer size of more than "
                          "1900 KiB'.")


_RUN_DELIVERY = Definition("run_delivery", "view", """
            SELECT d.run_id, d.second,
                   CASE WHEN d.path ILIKE 'wifi%' THEN 'wifi' ELSE 'cell' END AS side,
                   sum(d.payload_bytes) AS payload_bytes, d.path
            FROM dl_delivered_1s d JOIN main_connections USING (run_id, trace, conn_id)
            WHERE main_connections.vantage = 'client'
            GROUP BY ALL""",
                           "Per run, second since the first SYN and path: the new data bytes the "
                           "client received on the run's main connection (client trace, download "
                           "direction), with the path's side. A window's goodput is the sum over its "
                           "seconds ÷ its length: the throughput a receiver-side sampler (iperf's interval "
                           "reports, bwm-ng per interface) reads. A side's bytes are the sum over its paths "
                           "(one row per side and second in two-path runs; the cell side of a three-path "
                           "run has a row for lte and one for eth).")


_RUN_FACTS = Definition("run_facts", "view", """
            SELECT c.*, m.* EXCLUDE (run_id) FROM run_config c JOIN run_metrics m USING (run_id)""",
                        "run_config and run_metrics side by side: what the claims and notebooks read.")


_OUTAGE_DELIVERY = Definition("outage_delivery", "view", """
            WITH o AS (
                SELECT run_id, path, [down_s, up_s] AS w FROM run_outages
                WHERE direction = 'down' AND path IN ('wifi', 'lte', 'eth')),
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
                              "Handover runs (links taken down on purpose: run_outages, from meta.json paths.<p>.down.outages, "
                              "seconds from the emulator's start ≈ the first SYN), per outage: the whole seconds "
                              "inside it (the first second after the link drops left out, for the sender to notice) "
                              "while the download was still running, how many of them delivered data to the client "
                              "on any path, and whether the path carried data again within 5 s of coming back. "
                              "CS244: 'we were able to show that the transition to and from different links would "
                              "work properly'; Raiciu et al.'s video: 'As WiFi and Ethernet are turned back on, the "
                              "total throughput resumes its previous value'.")


_RUN_RTT = Definition("run_rtt", "view", """
            SELECT s.run_id, CASE WHEN s.path ILIKE 'wifi%' THEN 'wifi' ELSE 'cell' END AS side,
                   count(*) AS rtt_n, min(s.rtt_ms) AS rtt_min_ms, avg(s.rtt_ms) AS rtt_mean_ms,
                   quantile_cont(s.rtt_ms, 0.1) AS rtt_p10_ms, quantile_cont(s.rtt_ms, 0.5) AS rtt_p50_ms,
                   quantile_cont(s.rtt_ms, 0.9) AS rtt_p90_ms, max(s.rtt_ms) AS rtt_max_ms,
                   count(*) FILTER (WHERE s.rtt_ms < 50) AS rtt_below_50ms,
                   count(*) FILTER (WHERE s.rtt_ms > 100) AS rtt_over_100ms,
                   count(*) FILTER (WHERE s.rtt_ms >= 50 AND s.rtt_ms <= 200) AS rtt_50_200ms
            FROM dl_rtt_samples s JOIN main_connections USING (run_id, trace, conn_id)
            GROUP BY ALL""",
                      "Per run and path side: the distribution of its Karn-filtered RTT samples (Chen §3.3; "
                      "§5.1, Fig. 12: 'we record the RTT value of each packet if an ACK is received by the "
                      "server for a particular packet, excluding retransmitted and timed out packets', the "
                      "CCDF per interface): their number, minimum, mean, 10th/50th/90th percentiles, maximum, "
                      "and how many lie below 50 ms, above 100 ms and within 50-200 ms (pooled over runs as "
                      "Σ count ÷ Σ rtt_n: the share of a CCDF's samples).")


_PRIMARY_PAIRS = Definition("primary_pairs", "view",
                            _pairs("primary_path", ("lte", "wifi"), ("lte", "wifi"), same="congestion_control",
                                   extra="a.goodput_mbit / nullif(b.goodput_mbit, 0) AS ratio"),
                            "Deng et al. §3.4: pairs of MP-2 runs that differ only in the network of the "
                            "primary subflow (same scenario, size, congestion control, repetition); "
                            "rel_diff_pct = |MPTCP_LTE − MPTCP_WiFi| / MPTCP_WiFi (Fig. 8, Fig. 14 "
                            "'Network'); ratio = MPTCP_LTE / MPTCP_WiFi, the 'relative throughput ratio' of "
                            "§3.4.2 (Fig. 11b, 12b).")


_CC_PAIRS = Definition("cc_pairs", "view",
                       _pairs("congestion_control", ("reno", "lia"), ("decoupled", "coupled"), same="primary_path"),
                       "Deng et al. §3.5: pairs of MP-2 runs that differ only in congestion control, "
                       "decoupled ('TCP Reno for each subflow', footnote 5: reno) vs coupled (LIA: lia); "
                       "rel_diff_pct = r_cwnd = |MPTCP_decoupled − MPTCP_coupled| / MPTCP_coupled "
                       "(Fig. 13, Fig. 14 'CC').")


def _download_views(columns: dict[str, set[str]]) -> list[Definition]:
    """The ``dl_<table>`` views: each directed table's download rows."""
    dl = {t: _downloads(t, columns.get(t, set())) for t in DIRECTED}
    return [
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
    ]


def _run_config(study: str) -> Definition:
    """``run_config``; ``study``: the SQL of its study column (``study_sql``)."""
    return Definition("run_config", "view", f"""
            WITH ps AS (SELECT run_id, CASE WHEN path = 'wifi' THEN 'wifi' ELSE 'cell' END AS side,
                               max(delay_ms) FILTER (WHERE direction = 'down') AS d_down,
                               max(delay_ms) FILTER (WHERE direction = 'up') AS d_up,
                               max(loss) FILTER (WHERE direction = 'down') AS loss,
                               max(rate_mbit) FILTER (WHERE direction = 'down') AS rate,
                               sum(outages) AS outages
                        FROM run_paths WHERE path IN ('wifi', 'lte') GROUP BY run_id, path),
            pv AS (SELECT run_id,
                          max(CASE WHEN d_down IS NOT NULL OR d_up IS NOT NULL
                                   THEN coalesce(d_down, 0) + coalesce(d_up, 0) END)
                              FILTER (WHERE side = 'wifi') AS rtt_wifi_ms,
                          max(loss) FILTER (WHERE side = 'wifi') AS loss_wifi,
                          max(rate) FILTER (WHERE side = 'wifi') AS rate_wifi_mbit,
                          max(CASE WHEN d_down IS NOT NULL OR d_up IS NOT NULL
                                   THEN coalesce(d_down, 0) + coalesce(d_up, 0) END)
                              FILTER (WHERE side = 'cell') AS rtt_cell_ms,
                          max(loss) FILTER (WHERE side = 'cell') AS loss_cell,
                          max(rate) FILTER (WHERE side = 'cell') AS rate_cell_mbit
                   FROM ps GROUP BY run_id),
            outs AS (SELECT run_id, sum(outages) > 0 AS has_outages FROM run_paths GROUP BY run_id),
            c AS (SELECT r.run_id, campaign, {study} AS study, scenario, mode,
                CASE WHEN mode LIKE 'MP%' OR mode = 'backup' THEN 'MPTCP' WHEN mode IS NULL THEN NULL
                     ELSE 'TCP' END AS transport,
                congestion_control, primary_path, size_bytes, size_label(size_bytes) AS size_label,
                workload, CASE WHEN workload LIKE 'ditg-%' THEN substr(workload, 6) END AS app,
                repetition, rtt_wifi_ms, loss_wifi, rate_wifi_mbit, rtt_cell_ms, loss_cell, rate_cell_mbit,
                coalesce(buffer_bytes,
                         TRY_CAST(nullif(regexp_extract(scenario, '(\\d+)\\s*[kK]', 1), '') AS BIGINT) * 1000
                ) AS buffer_bytes,
                coalesce(has_outages, FALSE) AS has_outages,
                coalesce(stalled, FALSE) AS stalled,
                complete, app_sent_packets, app_schedule_packets, app_schedule_sha256, app_drained,
                campaign_seed, scale, duration_s, host, kernel_release, linkem_build,
                unplug_path, unplug_at_s, replug_at_s
            FROM runs r LEFT JOIN pv USING (run_id) LEFT JOIN outs USING (run_id))
            SELECT *, NOT stalled AS usable, rtt_wifi_ms = rtt_cell_ms AS symmetric_rtt,
                   CASE WHEN rate_wifi_mbit > rate_cell_mbit THEN 'wifi'
                        WHEN rate_wifi_mbit < rate_cell_mbit THEN 'lte' END AS faster_path
            FROM c""",
                      "One row per run: what it was configured as (meta.json). study: the paper or study "
                      "the run belongs to (meta.json study; else its campaign's name up to the first '-', "
                      "'_' or '.', lower-cased). rtt_<side>_ms = the "
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
                      "has_outages: links taken down on purpose (handover runs; on any path). stalled: the host stalled "
                      "the emulator (linkem's stalls.stalled: a frame left more than the campaign's "
                      "threshold late, so the path's delay was not the configured one); findings leave "
                      "such runs out and say how many. usable: not stalled, the runs the findings and figures "
                      "use (one rule for SQL and polars). complete: false when a D-ITG test did not generate "
                      "its whole schedule or did not deliver every generated packet before its drain "
                      "limit (result.complete; app_drained: result.drained) -- a transport stall, the "
                      "protocol's own outcome (upstream MPTCP's receive-memory stall over 10/400 ms paths, "
                      "capture/README.md), so such runs are kept and flagged, not left out. "
                      "app_schedule_sha256, app_schedule_packets: D-ITG's replayed schedule (the same "
                      "for TCP and MPTCP of a repetition), app_sent_packets: what ITGSend generated. host, "
                      "kernel_release, linkem_build: the machine a run was captured on and its builds "
                      "(meta.json builds; host also from host.hostname), compared before runs are pooled. "
                      "unplug_path, unplug_at_s, replug_at_s: the client's interface taken away and given back "
                      "during the run (the first event of meta.json's unplug schedule, seconds after the "
                      "workload's start; Deng et al. §3.6.1 unplug a tethered phone mid-transfer).")


def definitions(columns: dict[str, set[str]]) -> list[Definition]:
    """Every macro and view, in dependency order, for tables with ``columns``."""
    return [
        _SIZE_LABEL, _REL_DIFF, _REL_CHANGE, *_download_views(columns), _MAIN_CONNECTIONS,
        _run_config(study_sql("campaign", "r.study" if "study" in columns.get("runs", set()) else None)), _RUN_METRICS, _RUN_DELIVERY, _RUN_FACTS, _OUTAGE_DELIVERY,
        _RUN_RTT, _PRIMARY_PAIRS, _CC_PAIRS
    ]


def _columns(con: duckdb.DuckDBPyConnection) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for table, column in con.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main'").fetchall():
        out.setdefault(table, set()).add(column)
    return out


# A macro holding a hash of every definition (and its documentation: the views' comments):
# a database whose macros and views are already this version's is left as it is
# (creating them binds each view: ~50 ms).
VERSION_MACRO = "lab_derived_version"


def fingerprint(defs: list[Definition]) -> str:
    import hashlib
    return hashlib.sha256("\n".join(f"{d.kind} {d.name} {d.sql} {d.doc}" for d in defs).encode()).hexdigest()[:16]


def installed_version(con: duckdb.DuckDBPyConnection) -> str | None:
    """The fingerprint of the definitions ``con`` holds (None: none, or older than the macro)."""
    import duckdb
    try:
        return con.execute(f"SELECT {VERSION_MACRO}()").fetchall()[0][0]  # all: no open result left
    except duckdb.Error:
        return None


class StaleStore(ValueError):
    """A database written before a table the derived layer reads existed."""


def install(con: duckdb.DuckDBPyConnection, temp: bool = False) -> None:
    """Create (or replace) every macro and view on ``con`` unless they are this version's
    already; ``temp``: session-only objects (works on a read-only connection and shadows
    persistent ones of an older version)."""
    cols = _columns(con)
    if "runs" in cols and "run_paths" not in cols:
        # meta.json's columns and tables came later: a write (load, analyze) adds them
        raise StaleStore("written by an older version of the lab, before meta.json's columns: load or "
                         "analyse anything into it once (python -m pipeline load TABLE_DIR --db DB) to bring it up "
                         "to date")
    defs = definitions(cols)
    version = fingerprint(defs)
    if installed_version(con) == version:
        return
    t = "TEMP " if temp else ""
    for d in defs:
        if d.kind == "macro":
            con.execute(f"CREATE OR REPLACE {t}MACRO {d.name}{d.sql}")
        else:
            con.execute(f"CREATE OR REPLACE {t}VIEW {d.name} AS {d.sql}")
    views = [comment_on(d.name, None, d.doc, kind="VIEW") for d in defs if d.kind == "view"]
    if views and not temp:  # each view's documentation as its comment (`describe`, any DuckDB client): the
        # view's own, not its columns' (those rest on the view's binding, which a file may load lazily)
        con.execute(in_one_transaction(views))
    con.execute(f"CREATE OR REPLACE {t}MACRO {VERSION_MACRO}() AS '{version}'")


def connect(path: str | os.PathLike) -> duckdb.DuckDBPyConnection:
    """Open the lab's DuckDB file read-only with the derived layer of this version."""
    import duckdb  # here, not at the top: `pipeline analyze` imports it off its critical path

    with open(path, "rb") as f:
        what = not_duckdb(f.read(16))
    if what:
        raise ValueError(what)
    con = duckdb.connect(str(path), read_only=True,
                         config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        if "runs" not in _columns(con):  # not an error of ours to show as DuckDB's Catalog Error
            raise ValueError("holds none of the lab's tables (an empty or another program's DuckDB file): "
                             "python -m pipeline analyze PCAP --db DB or load TABLE_DIR --db DB fills one")
        install(con, temp=True)
    except Exception:
        con.close()
        raise
    return con
