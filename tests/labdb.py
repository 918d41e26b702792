"""A lab database written by hand, row by row, for tests of the derived layer and the
claims: every value is chosen by the test, none is computed by the code under test."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from pipeline import store
from pipeline.schema import TABLES, conform, legacy_direction
from pipeline.tables import meta_tables_of


class Lab:
    """Rows of pipeline.schema.TABLES written one by one; ``direction``: the rows say
    their direction explicitly (and upload rows may be added), else they are downloads."""

    def __init__(self, direction: bool = False):
        self.rows = {t: [] for t in TABLES}
        self.n = 0
        self.direction = direction

    def run(self, campaign, scenario, mode, size=0, *, primary="wifi", cc="reno", workload="http", rep=None,
            paths=None, download_s=None, bytes_=None, retx=None, data_packets=1000, rtt=None, rtt_times=None,
            ofo=None, latency=None, buffer=None, outages=None, stalled=None, incomplete=None, start_s=1000.0,
            extra_connection_bytes=None, ofo_times=None, result=None):
        """One run. ``paths``: {path: (rtt_ms, loss, rate_mbit)} configured; ``bytes_``:
        {path: payload bytes} (per vantage); ``retx``: {path: retransmitted packets} of
        ``data_packets``; ``rtt``: {path: [rtt samples]} (server); ``ofo``: [delays] (client);
        ``latency``: [D-ITG delays]; ``extra_connection_bytes``: a second, smaller connection;
        ``stalled``: the host stalled the emulator (meta.json stalls); ``incomplete``: D-ITG's
        sender was stopped at its limit (meta.json result); ``result``: more fields of
        meta.json's result (D-ITG's schedule, generated and received packets)."""
        self.n += 1
        rid = f"{campaign}-{scenario}-{mode}-{primary}-{cc}-{size}-{workload}-{self.n}"
        paths = paths or {}
        meta = {"campaign": campaign, "scenario": scenario, "mode": mode,
                "paths": {p: {"down": {"delay_ms": r / 2, "loss": loss, "rate_mbit": rate},
                              "up": {"delay_ms": r / 2, "loss": 0, "rate_mbit": rate}}
                          for p, (r, loss, rate) in paths.items()}}
        if buffer:
            meta["sysctls_applied"] = {"net.ipv4.tcp_rmem": f"4096\t{buffer}\t{buffer}"}
        for p, w in (outages or {}).items():
            meta["paths"][p]["down"]["outages"] = w
        if stalled is not None:
            meta["stalls"] = {"stalled": stalled, "worst_late_ms": 9.0 if stalled else 0.2}
        if incomplete is not None:
            meta["result"] = {"stalled": incomplete, "complete": not incomplete}
        if result:
            meta["result"] = {**meta.get("result", {}), **result}
        self.rows["runs"].append(dict(run_id=rid, campaign=campaign, scenario=scenario, mode=mode,
                                      congestion_control=cc, scheduler="default", primary_path=primary,
                                      size_bytes=size or None, workload=workload, repetition=rep or self.n,
                                      meta_json=json.dumps(meta)))
        split = bytes_ or {p: (size // len(paths) if paths else size) for p in paths}
        for v in ("client", "server"):
            conns = [(0, sum(split.values()), download_s)]
            if extra_connection_bytes:
                conns.append((1, extra_connection_bytes, 0.01))
            for cid, b, dt in conns:
                self._add("connections", dict(run_id=rid, trace=f"{rid}/{v}.pcap", vantage=v, conn_id=cid,
                                              n_subflows=len(paths), payload_bytes=b, start_s=start_s,
                                              download_time_s=dt if v == "client" else None))
            for i, p in enumerate(paths):
                rx = (retx or {}).get(p, 0)
                dp = data_packets.get(p, 1000) if isinstance(data_packets, dict) else data_packets
                self._add("subflows", dict(run_id=rid, trace=f"{rid}/{v}.pcap", vantage=v, conn_id=0,
                                           subflow_id=i, path=p, is_primary=p == primary, data_packets=dp,
                                           retransmitted_packets=rx, payload_bytes=split.get(p, 0),
                                           loss_rate=rx / dp if v == "server" else None))
        for i, (p, samples) in enumerate((rtt or {}).items()):
            times = (rtt_times or {}).get(p) or [start_s + k for k in range(len(samples))]
            for k, (x, t) in enumerate(zip(samples, times)):
                self._add("rtt_samples", dict(run_id=rid, trace=f"{rid}/server.pcap", conn_id=0, subflow_id=i,
                                              path=p, frame=k, sent_s=t, rtt_ms=x))
        for k, d in enumerate(ofo or []):
            p, t = (ofo_times[k] if ofo_times else ("wifi", start_s + k))
            self._add("ofo_samples", dict(run_id=rid, trace=f"{rid}/client.pcap", conn_id=0, subflow_id=0,
                                          path=p, frame=k, arrival_s=t, dsn=k, ofo_delay_ms=d))
        for k, d in enumerate(latency or []):
            self.rows["app_latency"].append(dict(run_id=rid, flow=1, seq=k, size_bytes=1000,
                                                 sent_s=float(k), received_s=k + d / 1000, delay_ms=d))
        return rid

    def _add(self, table, row):
        if self.direction:
            row = {**row, "direction": "down"}
        self.rows[table].append(row)

    def upload_rows(self, rid: str, payload: int = 10 ** 9):
        """Rows of the upload direction for run ``rid`` (must not count in any download metric)."""
        assert self.direction
        for v in ("client", "server"):
            self.rows["connections"].append(dict(run_id=rid, trace=f"{rid}/{v}.pcap", vantage=v, conn_id=0,
                                                 payload_bytes=payload, start_s=0.0, download_time_s=99.0,
                                                 direction="up"))
            self.rows["subflows"].append(dict(run_id=rid, trace=f"{rid}/{v}.pcap", vantage=v, conn_id=0,
                                              subflow_id=0, path="lte", data_packets=10, retransmitted_packets=9,
                                              payload_bytes=payload, direction="up"))
        self.rows["rtt_samples"].append(dict(run_id=rid, trace=f"{rid}/client.pcap", conn_id=0, subflow_id=0,
                                             path="wifi", frame=1, sent_s=0.0, rtt_ms=9999.0, direction="up"))

    def write(self, path: Path) -> Path:
        """Through the store, as the pipeline writes (a new file: the rows are the test's)."""
        Path(path).unlink(missing_ok=True)
        frames = {t: conform(t, legacy_direction(t, pl.DataFrame(rows, infer_schema_length=None))) if rows
                  else conform(t, pl.DataFrame(schema=TABLES[t])) for t, rows in self.rows.items()}
        # meta.json's columns and tables, lifted as the pipeline lifts them (rows written
        # without a direction are downloads, as the tables held before issue 9)
        frames.update(meta_tables_of(frames["runs"]))
        return store.write_duckdb(frames, path)
