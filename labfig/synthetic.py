"""A small synthetic lab database conforming to ``pipeline.schema.TABLES``.

For developing and testing the notebooks without captures:

    python -m labfig.synthetic OUT.duckdb [PAPERS] [REPS]

Numbers are drawn from simple models loosely shaped like the papers' links (WiFi:
low RTT, lossy; LTE: higher RTT, nearly loss-free); they exercise every chart, not
any result.  Campaign names follow ``labfig.db.PAPER_CAMPAIGNS``.
"""
from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path

import duckdb
import polars as pl

from pipeline.schema import TABLES, conform, ddl

KB, MB = 1024, 1024 * 1024
PATHS = {  # path -> (rtt_ms, loss, rate_mbit)
    "wifi": (25.0, 0.02, 20.0), "lte": (70.0, 0.0005, 15.0),
    "wifi2": (25.0, 0.02, 20.0), "lte2": (70.0, 0.0005, 15.0),
    "3g": (200.0, 0.005, 2.0), "2g": (600.0, 0.005, 0.2), "wlan": (50.0, 0.02, 8.0),
}


class Builder:
    def __init__(self, seed: int = 7):
        self.rng = random.Random(seed)
        self.rows: dict[str, list[dict]] = {t: [] for t in TABLES}
        self.t0 = 1_700_000_000.0

    def run(self, campaign, scenario, mode, size, rep, cc="reno", primary="wifi",
            workload="http", paths=None, link_profiles=None, extra_meta=None, outages=None, samples=150):
        rng = self.rng
        run_id = f"{campaign}-{scenario}-{mode}-{cc}-{primary}-{size}-{workload}-r{rep}"
        paths = paths or {"SP-wifi": ["wifi"], "SP-lte": ["lte"], "MP-2": ["wifi", "lte"],
                          "MP-4": ["wifi", "lte", "wifi2", "lte2"]}[mode]
        if mode.startswith("MP") and primary in paths:
            paths = [primary] + [p for p in paths if p != primary]
        prof = link_profiles or {p: {"rtt_ms": PATHS[p][0], "loss": PATHS[p][1],
                                     "rate_mbit": PATHS[p][2]} for p in paths}
        prof = {p: prof.get(p, prof.get(p.rstrip("2"))) for p in paths}
        # the layout capture/ writes: paths.<path>.down/up with one-way delay_ms
        meta = {"campaign": campaign, "scenario": scenario, "mode": mode, "paths": {
            p: {d: {"delay_ms": v["rtt_ms"] / 2, "loss": v["loss"] if d == "down" else 0,
                    "rate_mbit": v["rate_mbit"]} for d in ("down", "up")}
            for p, v in prof.items() if not p.endswith("2")}}
        for p, w in (outages or {}).items():
            meta["paths"][p]["down"]["outages"] = meta["paths"][p]["up"]["outages"] = w
        meta.update(extra_meta or {})
        self.rows["runs"].append(dict(
            run_id=run_id, campaign=campaign, scenario=scenario, mode=mode,
            congestion_control=cc, scheduler="default", primary_path=paths[0],
            size_bytes=size or None, workload=workload, repetition=rep,
            started_at="2024-01-01T00:00:00Z", meta_json=json.dumps(meta)))
        rtts = {p: prof[p].get("rtt_ms", PATHS.get(p, (50,))[0]) for p in paths}
        losses = {p: prof[p].get("loss", 0.0) for p in paths}
        rates = {p: prof[p].get("rate_mbit", 10.0) for p in paths}
        # traffic split: proportional to rate / (1 + 50 * loss), first path only for tiny flows
        w = {p: rates[p] / (1 + 50 * losses[p]) for p in paths}
        if size <= 64 * KB:
            w = {p: (v if i == 0 else v * 0.05) for i, (p, v) in enumerate(w.items())}
        tot = sum(w.values())
        share = {p: w[p] / tot for p in paths}
        agg_rate = sum(rates[p] * share[p] * len(paths) ** 0.3 for p in paths) or 1
        dl = (rtts[paths[0]] / 1000 * (2 + math.log2(1 + size / 14600))
              + size * 8 / (agg_rate * 1e6)) * rng.uniform(0.85, 1.3)
        start = self.t0 + len(self.rows["runs"]) * 100
        for vantage in ("client", "server"):
            self.rows["connections"].append(dict(
                run_id=run_id, trace=f"{vantage}.pcap", vantage=vantage, conn_id=0, direction="down",
                transport="mptcp" if mode.startswith("MP") else "tcp",
                mptcp_version=1 if mode.startswith("MP") else None,
                client_addr="10.0.1.2", server_addr="10.0.0.1", server_port=80,
                n_subflows=len(paths), payload_bytes=size, start_s=start,
                download_time_s=dl if vantage == "client" else None, handshake_captured=True))
            for i, p in enumerate(paths):
                pkts = max(1, int(size * share[p] / 1448))
                retx = sum(rng.random() < losses[p] for _ in range(min(pkts, 3000)))
                self.rows["subflows"].append(dict(
                    run_id=run_id, trace=f"{vantage}.pcap", vantage=vantage, conn_id=0,
                    subflow_id=i, direction="down", path=p.rstrip("2"), client_addr=f"10.0.{i + 1}.2", client_port=40000 + i,
                    server_addr="10.0.0.1", server_port=80, is_primary=i == 0,
                    start_s=start + i * rtts[paths[0]] / 1000, data_packets=pkts,
                    retransmitted_packets=retx,
                    loss_rate=retx / pkts if vantage == "server" else None,
                    payload_bytes=int(size * share[p]), traffic_share=share[p],
                    rtt_samples=pkts, rtt_min_ms=rtts[p], rtt_mean_ms=rtts[p] * rng.uniform(1.05, 1.6),
                    rtt_median_ms=rtts[p] * 1.2, rtt_max_ms=rtts[p] * 4, handshake_captured=True))
                n = min(pkts, samples)
                t = start
                for k in range(n):
                    t += dl / n * rng.uniform(0.5, 1.5)
                    self.rows["rtt_samples"].append(dict(
                        run_id=run_id, trace="server.pcap", conn_id=0, subflow_id=i, direction="down", path=p.rstrip("2"),
                        frame=k, sent_s=t, rtt_ms=rtts[p] * (1 + rng.expovariate(3))))
                    if mode.startswith("MP"):
                        ofo = 0.0 if rng.random() < 0.7 else rng.expovariate(1 / max(rtts.values()))
                        self.rows["ofo_samples"].append(dict(
                            run_id=run_id, trace="client.pcap", conn_id=0, subflow_id=i, direction="down", path=p.rstrip("2"),
                            frame=k, arrival_s=t, dsn=k * 1448, ofo_delay_ms=ofo))
        return run_id, dl

    def app_latency(self, run_id, base_ms, n=300):
        t = self.t0
        for k in range(n):
            t += self.rng.expovariate(50)
            d = base_ms * (1 + self.rng.expovariate(2))
            self.rows["app_latency"].append(dict(run_id=run_id, flow=1, seq=k, size_bytes=1024,
                                                 sent_s=t, received_s=t + d / 1000, delay_ms=d))

    def write(self, path: Path) -> Path:
        path = Path(path)
        path.unlink(missing_ok=True)
        con = duckdb.connect(str(path))
        for table, rows in self.rows.items():
            con.execute(ddl(table))
            if rows:
                df = conform(table, pl.DataFrame(rows, infer_schema_length=None))
                con.register("df_view", df.to_arrow())
                con.execute(f'INSERT INTO "{table}" SELECT * FROM df_view')
                con.unregister("df_view")
        con.close()
        return path


def build(path: Path, papers: tuple[str, ...] = ("chen", "cs244", "deng", "ditg", "ferlin"),
          reps: int = 3) -> Path:
    """Write a synthetic database covering ``papers`` (others left empty) to ``path``: the
    campaigns' scenario names and configurations (capture/campaigns/*.yaml), ``reps``
    repetitions, MPTCP with reno, lia and olia, so every claim has runs to compute."""
    b = Builder()
    KB_, MB_ = 1000, 1000 * 1000
    if "chen" in papers:
        wifi = {"rtt_ms": 20.0, "loss": 0.017, "rate_mbit": 20.0}
        cell = {"att": {"rtt_ms": 60.0, "loss": 0.0, "rate_mbit": 8.0},
                "verizon": {"rtt_ms": 40.0, "loss": 0.0, "rate_mbit": 5.0},
                "sprint": {"rtt_ms": 150.0, "loss": 0.005, "rate_mbit": 1.5}}
        for scen, lte in cell.items():
            prof = {"wifi": wifi, "lte": lte}
            for size in (64 * KB_, 512 * KB_, 4 * MB_, 8 * MB_):
                for r in range(1, reps + 1):
                    b.run("chen", scen, "SP-wifi", size, r, cc="cubic", link_profiles={"wifi": wifi})
                    b.run("chen", scen, "SP-lte", size, r, cc="cubic", primary="lte", link_profiles={"lte": lte})
                    for cc in ("reno", "lia", "olia"):
                        b.run("chen", scen, "MP-2", size, r, cc=cc, link_profiles=prof)
                    b.run("chen", scen, "MP-4", size, r, cc="reno", link_profiles=prof)
    if "cs244" in papers:
        prof = {"wifi": {"rtt_ms": 12.0, "loss": 0.03, "rate_mbit": 2.0},
                "lte": {"rtt_ms": 152.0, "loss": 0.02, "rate_mbit": 2.0}}
        for buf in (50, 200, 500):
            for r in range(1, reps + 1):
                for mode in ("SP-wifi", "SP-lte", "MP-2"):
                    paths = {"SP-wifi": ["wifi"], "SP-lte": ["lte"], "MP-2": ["wifi", "lte"]}[mode]
                    b.run("cs244", f"buf{buf}k", mode, MB_, r, cc="lia" if mode == "MP-2" else "cubic",
                          primary=paths[0],
                          link_profiles={p: prof[p] for p in paths},
                          extra_meta={"sysctls_applied": {
                              "net.ipv4.tcp_rmem": f"4096\t{buf * 1000}\t{buf * 1000}",
                              "net.ipv4.tcp_wmem": f"4096\t{buf * 1000}\t{buf * 1000}"}})
        for r in range(1, reps + 1):
            b.run("cs244", "handover", "MP-2", 12 * MB_, r, cc="lia", link_profiles=prof,
                  outages={"wifi": [[8, 16]], "lte": [[20, 28]]}, samples=600)
    if "deng" in papers:
        for scen, (wr, lr, wrtt, lrtt) in {"lte-better": (2.0, 9.0, 80.0, 50.0),
                                           "wifi-better": (8.0, 2.0, 30.0, 70.0)}.items():
            prof = {"wifi": {"rtt_ms": wrtt, "loss": 0.01, "rate_mbit": wr},
                    "lte": {"rtt_ms": lrtt, "loss": 0.0, "rate_mbit": lr}}
            for size in (10 * KB_, 100 * KB_, MB_):
                for r in range(1, reps + 1):
                    for prim in ("wifi", "lte"):
                        for cc in ("reno", "lia"):
                            b.run("deng", scen, "MP-2", size, r, cc=cc, primary=prim, link_profiles=prof)
                    b.run("deng", scen, "SP-wifi", size, r, cc="cubic", link_profiles={"wifi": prof["wifi"]})
                    b.run("deng", scen, "SP-lte", size, r, cc="cubic", primary="lte",
                          link_profiles={"lte": prof["lte"]})
    if "ditg" in papers:
        # (P1 rtt, P2 rtt, P1 loss, P2 loss, rate, modes): the scenarios the claims compare
        scen = [(10, 10, 0, 0, 100, ("SP-wifi", "MP-2")), (40, 40, 0, 0, 100, ("SP-wifi", "MP-2")),
                (10, 40, 0, 0, 100, ("MP-2",)), (10, 400, 0, 0, 100, ("MP-2",)),
                (10, 10, 0, 0, 10, ("SP-wifi", "MP-2")), (10, 400, 0, 0, 10, ("MP-2",)),
                (40, 40, 0, 0.04, 100, ("MP-2",)), (40, 40, 0.04, 0, 100, ("SP-wifi", "MP-2")),
                (40, 40, 0.04, 0.04, 100, ("MP-2",))]
        for wl in ("netflix", "maps", "docs"):
            for rtt1, rtt2, l1, l2, rate, modes in scen:
                prof = {"wifi": {"rtt_ms": float(rtt1), "loss": l1, "rate_mbit": float(rate)},
                        "lte": {"rtt_ms": float(rtt2), "loss": l2, "rate_mbit": float(rate)}}
                name = f"r{rtt1}-{rtt2}-l{l1}-{l2}-{rate}m"
                # MPTCP with the paper's LIA; a few cubic runs too, which the claims must not pool
                ccs = {"SP-wifi": ["cubic"], "MP-2": ["lia", "cubic"] if (rtt1, rtt2) == (10, 10) else ["lia"]}
                for mode in modes:
                    for cc in ccs[mode]:
                        for r in range(1, reps + 1):
                            rid, _ = b.run("ditg", name, mode, 0, r, cc=cc, workload=f"ditg-{wl}",
                                           link_profiles=prof if mode == "MP-2" else {"wifi": prof["wifi"]})
                            base = rtt1 / 2 * (1 + 30 * l1) * (1 + 10 / rate)
                            if mode == "MP-2":
                                base = (base * 0.55 + 0.4 * rtt2 / 2) if wl != "docs" else base
                                base *= 3 if cc == "cubic" else 1
                            b.app_latency(rid, base, n=100)
    if "ferlin" in papers:
        # capture/ names paths wifi and lte; the scenario says which technology each emulates
        for scen, (a, c) in {"2G+WLAN": ("wlan", "2g"), "3G+WLAN": ("wlan", "3g"),
                             "2G+3G": ("3g", "2g")}.items():
            prof = {"wifi": dict(zip(("rtt_ms", "loss", "rate_mbit"), PATHS[a])),
                    "lte": dict(zip(("rtt_ms", "loss", "rate_mbit"), PATHS[c]))}
            for r in range(1, reps + 1):
                b.run("ferlin", scen, "MP-2", 32 * MB, r, cc="olia", link_profiles=prof)
                b.run("ferlin", scen, "SP-wifi", 32 * MB, r, cc="reno", link_profiles={"wifi": prof["wifi"]})
    b.rows["problems"].append(dict(run_id="chen-example", source="client.pcap", stage="extract",
                                   reason="synthetic: subflow SYN not captured"))
    return b.write(path)


if __name__ == "__main__":
    # python -m labfig.synthetic OUT.duckdb [PAPER,...] [REPS]   (an empty list "" = no runs at all)
    papers = tuple(p for p in sys.argv[2].split(",") if p) if len(sys.argv) > 2 else \
        ("chen", "cs244", "deng", "ditg", "ferlin")
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    print(build(Path(sys.argv[1] if len(sys.argv) > 1 else "synthetic.duckdb"), papers=papers, reps=reps))
