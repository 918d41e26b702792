"""A synthetic lab database conforming to ``pipeline.schema.TABLES``, for developing and
testing the findings, notebooks and report without captures:

    python -m papers.synthetic OUT.duckdb [PAPERS] [REPS | campaign]

Its runs are each paper's own test grid (``papers/<paper>/synthetic.py``): the runs of
the paper's campaign at the standard scale (``capture.spec.expand``: the same scenarios,
modes, sizes, workloads and congestion controls the reference captures have), with
``REPS`` repetitions each, and values drawn from a simple model of each run's
configured links (rate, RTT, loss): they exercise every claim, chart and table, not
any result.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from capture.spec import RunSpec, configuration, direction, expand, load, matrix_run_id, parse
from pipeline import store
from pipeline.schema import TABLES, conform, empty
from pipeline.tables import meta_tables_of

from . import PAPERS

DITG_PACKETS = 60  # per synthetic D-ITG run

TRACE_MEAN_MBIT = 5.0  # a link driven by a delivery trace: its model rate


def link(profile: dict) -> dict:
    """A profile's model: RTT (ms), loss on the data direction, rate (Mbit/s)."""
    down, up = direction(profile, "down"), direction(profile, "up")
    loss = down.get("loss", 0.0)
    loss = loss.get("p", 0.01) if isinstance(loss, dict) else float(loss)
    return {"rtt_ms": float(down.get("delay_ms", 10)) + float(up.get("delay_ms", 10)), "loss": loss,
            "rate_mbit": float(down.get("rate_mbit", TRACE_MEAN_MBIT)), "outages": down.get("outages") or []}


@dataclass(frozen=True)
class Flow:
    """What one subflow of a synthetic run carries."""
    share: float
    size: int  # the connection's payload bytes
    dl: float  # the download time (s)
    rtt0: float  # the primary path's RTT (s)
    start: float


def run_meta(s: RunSpec, run_id: str, paths: list[str], links: dict) -> dict:
    """The run's meta.json as the capture would write it, from its spec and links."""
    meta = {"run_id": run_id, "campaign": s.campaign, "scenario": s.scenario, "mode": s.mode,
            "congestion_control": s.congestion_control, "workload": s.workload, "campaign_seed": s.campaign_seed,
            "duration_s": s.duration_s if s.workload not in ("http", "iperf3-up") else None,
            "paths": {p: {d: {"delay_ms": links[p]["rtt_ms"] / 2, "loss": links[p]["loss"] if d == "down" else 0,
                              "rate_mbit": links[p]["rate_mbit"],
                              **({"outages": links[p]["outages"]} if links[p]["outages"] else {})}
                          for d in ("down", "up")} for p in paths}}
    buf = (s.sysctl_params or {}).get("buffer")
    if buf:
        meta["sysctls_applied"] = {"net.ipv4.tcp_rmem": f"4096\t{buf}\t{buf}"}
    if s.unplug:
        meta["unplug"] = {"schedule": s.unplug}
    if s.sample_socket_buffers:
        # receive buffers auto-tuned toward tcp_rmem's maximum (4 MiB unless the campaign sets one)
        # (drawn apart from the grid's generator, so the other runs' values stay as they were)
        cap = int(str((s.sysctls or {}).get("net.ipv4.tcp_rmem", "4096 131072 4194304")).split()[-1])
        own = random.Random(run_id)
        meta["socket_buffers"] = {"client": {"samples": 100, "rcvbuf_mean_bytes": cap * own.uniform(0.8, 0.99),
                                             "rcvbuf_max_bytes": cap},
                                  "server": {"samples": 100, "sndbuf_mean_bytes": cap * own.uniform(0.3, 0.6)}}
    return meta


def split(s: RunSpec, paths: list[str], links: dict) -> tuple[dict[str, float], float, float]:
    """(share per path, the connection's rate in Mbit/s, the primary's RTT in s): traffic
    splits in proportion to rate / (1 + 50 loss); tiny flows stay on the primary."""
    w = {p: links[p]["rate_mbit"] / (1 + 50 * links[p]["loss"]) for p in paths}
    if s.size_bytes and s.size_bytes <= 64_000:
        w = {p: (v if i == 0 else v * 0.05) for i, (p, v) in enumerate(w.items())}
    share = {p: w[p] / sum(w.values()) for p in paths}
    rate = sum(links[p]["rate_mbit"] * share[p] * len(paths) ** 0.3 for p in paths) or 1
    return share, rate, links[paths[0]]["rtt_ms"] / 1000


class Builder:
    def __init__(self, seed: int = 7, campaigns: dict[str, str] | None = None):
        """``campaigns``: a paper's campaign YAML text to use instead of its campaign.yaml
        (scripts/fit-scale.py tries edited scales without writing the file)."""
        self.rng = random.Random(seed)
        self.campaigns = campaigns or {}
        self.rows: dict[str, list[dict]] = {t: [] for t in TABLES}
        self.t0 = 1_700_000_000.0

    def spec_run(self, s: RunSpec, rep: int, latency_ms=None) -> str:
        """One run of a campaign's RunSpec (repetition ``rep``): its tables, from its links."""
        rng = self.rng
        run_id = matrix_run_id(configuration(s.run_id), rep)
        paths = s.paths
        if s.mptcp and s.primary_path in paths:
            paths = [s.primary_path] + [p for p in paths if p != s.primary_path]
        links = {p: link(s.profiles[p]) for p in paths}
        meta = run_meta(s, run_id, paths, links)
        if s.mode == "backup":
            paths = paths[:1] if not links[paths[0]]["outages"] else paths
        share, rate, rtt0 = split(s, paths, links)
        if s.workload == "http":
            size = s.size_bytes
            dl = (rtt0 * (2 + math.log2(1 + size / 14600)) + size * 8 / (rate * 1e6)) * rng.uniform(0.85, 1.3)
        else:
            dl = s.duration_s or 10.0
            size = int(rate * 1e6 / 8 * dl * rng.uniform(0.85, 1.0))
        if s.workload.startswith("ditg-"):
            # D-ITG replays one schedule per repetition (the same file for TCP and MPTCP) and
            # drains: every one of its packets (app_latency below) is generated and received
            sched = hashlib.sha256(f"{s.campaign_seed}|{s.workload}|{rep}".encode()).hexdigest()
            meta["result"] = {"schedule_packets": DITG_PACKETS, "schedule_sha256": sched,
                              "sent_packets": DITG_PACKETS, "received_packets": DITG_PACKETS, "drained": True,
                              "complete": True}
        self.rows["runs"].append(dict(
            run_id=run_id, campaign=s.campaign, scenario=s.scenario, mode=s.mode, congestion_control=s.congestion_control,
            scheduler="default", primary_path=paths[0], size_bytes=s.size_bytes or None, workload=s.workload,
            repetition=rep, started_at="2024-01-01T00:00:00Z", stalled=False, meta_json=json.dumps(meta)))
        start = self.t0 + len(self.rows["runs"]) * 100
        for vantage in ("client", "server"):
            self.rows["connections"].append(dict(
                run_id=run_id, trace=f"{vantage}.pcap", vantage=vantage, conn_id=0, direction="down",
                transport="mptcp" if s.mptcp else "tcp", mptcp_version=1 if s.mptcp else None,
                client_addr="10.1.0.2", server_addr="10.100.0.1", server_port=80, n_subflows=len(paths),
                payload_bytes=size, start_s=start, download_time_s=dl if vantage == "client" else None,
                handshake_captured=True))
            for i, p in enumerate(paths):
                self.subflow(s, run_id, vantage, i, p, links, Flow(share[p], size, dl, rtt0, start))
        if s.workload.startswith("ditg-"):
            self.app_latency(run_id, latency_ms(s, links) if latency_ms else rtt0 * 500)
        return run_id

    def subflow(self, s: RunSpec, run_id: str, vantage: str, i: int, p: str, links: dict, f: "Flow") -> None:
        """One subflow's rows at one vantage: its summary, RTT and out-of-order samples and,
        at the client, the bytes delivered per second."""
        rng, lk = self.rng, links[p]
        pkts = max(1, int(f.size * f.share / 1448))
        m = min(pkts, 3000)  # a sample of the packets, scaled up
        retx = round(sum(rng.random() < lk["loss"] for _ in range(m)) * pkts / m)
        self.rows["subflows"].append(dict(
            run_id=run_id, trace=f"{vantage}.pcap", vantage=vantage, conn_id=0, subflow_id=i, direction="down",
            path=p, client_addr=f"10.{i + 1}.0.2", client_port=40000 + i, server_addr="10.100.0.1",
            server_port=80, is_primary=i == 0, start_s=f.start + i * f.rtt0, data_packets=pkts,
            retransmitted_packets=retx, loss_rate=retx / pkts if vantage == "server" else None,
            payload_bytes=int(f.size * f.share), traffic_share=f.share, rtt_samples=pkts,
            rtt_min_ms=lk["rtt_ms"], rtt_mean_ms=lk["rtt_ms"] * rng.uniform(1.05, 1.6),
            rtt_median_ms=lk["rtt_ms"] * 1.2, rtt_max_ms=lk["rtt_ms"] * 4, handshake_captured=True))
        n = min(pkts, 60)
        t = f.start
        for k in range(n):
            t += f.dl / n * rng.uniform(0.5, 1.5)
            self.rows["rtt_samples"].append(dict(
                run_id=run_id, trace="server.pcap", conn_id=0, subflow_id=i, direction="down", path=p,
                frame=k, sent_s=t, rtt_ms=lk["rtt_ms"] * (1 + rng.expovariate(3))))
            if s.mptcp:
                ofo = 0.0 if rng.random() < 0.7 else rng.expovariate(1 / max(v["rtt_ms"] for v in links.values()))
                self.rows["ofo_samples"].append(dict(
                    run_id=run_id, trace="client.pcap", conn_id=0, subflow_id=i, direction="down", path=p,
                    frame=k, arrival_s=t, dsn=k * 1448, ofo_delay_ms=ofo))
        if vantage == "client":
            # an unplugged interface delivers nothing, as a link outage
            down = [o for o in lk["outages"]] + [(e["at_s"], e["replug_s"]) for e in s.unplug if e["path"] == p]
            per_s = f.size * f.share / max(f.dl, 1e-3)
            for sec in range(int(math.ceil(f.dl))):
                if any(a <= sec < b for a, b in down):
                    continue
                self.rows["delivered_1s"].append(dict(
                    run_id=run_id, trace="client.pcap", conn_id=0, subflow_id=i, direction="down", path=p,
                    second=sec, payload_bytes=int(per_s * min(1.0, f.dl - sec) * rng.uniform(0.8, 1.2)),
                    packets=int(per_s / 1448) + 1))

    def app_latency(self, run_id: str, base: float) -> None:
        """D-ITG's per-packet one-way delays of one run around ``base`` ms."""
        t = self.t0
        for k in range(DITG_PACKETS):
            t += self.rng.expovariate(50)
            d = base * (1 + self.rng.expovariate(2))
            self.rows["app_latency"].append(dict(run_id=run_id, flow=1, seq=k, size_bytes=1024,
                                                 sent_s=t, received_s=t + d / 1000, delay_ms=d))

    def campaign(self, paper_dir: Path, reps: int | None, latency_ms=None, scale: str = "standard") -> None:
        """Every run of the paper's campaign at ``scale`` (one repetition of each), ``reps``
        times; ``reps`` None: each as often as the campaign runs it (its repetitions, per
        scenario and workload: what a capture at that scale gives each claim's groups)."""
        f = paper_dir / "campaign.yaml"
        text = self.campaigns.get(paper_dir.name)
        doc = load(f, scale) if text is None else parse(text, f, scale)
        seen = set()
        for s in expand(doc, base_dir=f.parent, scale=scale):
            if reps is None:
                self.spec_run(s, s.repetition, latency_ms)
                continue
            key = configuration(s.run_id)
            if key in seen:
                continue
            seen.add(key)
            for rep in range(1, reps + 1):
                self.spec_run(s, rep, latency_ms)

    def write(self, path: Path) -> Path:
        """The database, written through the store as the pipeline writes it (a new file)."""
        path = Path(path)
        path.unlink(missing_ok=True)
        frames = {t: conform(t, pl.DataFrame(rows, infer_schema_length=None)) if rows else empty(t)
                  for t, rows in self.rows.items()}
        frames.update(meta_tables_of(frames["runs"]))  # meta.json lifted as the pipeline lifts it
        return store.write_duckdb(frames, path)


def build(path: Path, papers: tuple[str, ...] | None = None, reps: int | None = 5,
          campaigns: dict[str, str] | None = None) -> Path:
    """Write a synthetic database of ``papers`` (default: every paper) to ``path``; ``reps``
    None: each run as often as its campaign's standard scale runs it; ``campaigns``: a
    paper's campaign text in place of its campaign.yaml."""
    b = Builder(campaigns=campaigns)
    for p in (PAPERS if papers is None else papers):
        PAPERS[p].module("synthetic").runs(b, reps)
    b.rows["problems"].append(dict(run_id="synthetic-example", source="client.pcap", stage="extract",
                                   reason="synthetic: subflow SYN not captured"))
    return b.write(path)


if __name__ == "__main__":
    # python -m papers.synthetic OUT.duckdb [PAPER,...] [REPS]   (an empty list "" = no runs at all)
    papers = tuple(p for p in sys.argv[2].split(",") if p) if len(sys.argv) > 2 else None
    # REPS "campaign": each run as often as its campaign's standard scale runs it
    reps = (None if sys.argv[3] == "campaign" else int(sys.argv[3])) if len(sys.argv) > 3 else 5
    print(build(Path(sys.argv[1] if len(sys.argv) > 1 else "synthetic.duckdb"), papers=papers, reps=reps))
