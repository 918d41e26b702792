"""The papers' claims, each as one explicit computation over the lab's DuckDB tables,
and a verdict per claim: ``agree``, ``disagree`` or ``no data``.

This module is the single definition of every finding: the Snakemake rule
``findings`` writes ``results/findings.csv`` with it, and each paper notebook shows
its own rows from it.  It reads only the DuckDB file (tables of
``pipeline.schema.TABLES``)::

    PYTHONPATH=notebooks python -m labfig.findings --db results/lab.duckdb --out results/findings.csv

Vantage follows Chen et al. §3.3: download time and out-of-order delay from the
client's trace (``vantage = 'client'``), loss, RTT and the sender's traffic split
from the server's (``vantage = 'server'``; the client's split is used only when a
run has no server trace).  Link settings (RTT, loss, rate per path) come from each
run's ``meta.json`` (``runs.meta_json``: ``paths.<path>.down`` / ``.up``), not from
scenario names, except where a paper names a technology (3G, 2G, WLAN) that only
the scenario name can tell.

Columns of the table:

``id``          stable key of the finding (the expected-verdict file joins on it)
``paper``       chen, cs244, deng, ditg, ferlin
``claim``       the paper's words (quoted)
``source``      where the paper says it (section / figure / table)
``paper_value`` the paper's number (as text: some are ranges read off figures)
``our_value``   our number (float; empty only when the verdict is ``no data``)
``unit``        what ``our_value`` measures
``tolerance``   the rule that turns ``our_value`` into a verdict
``verdict``     agree / disagree / no data
``reason``      one line when the verdict is not ``agree``
``stable``      whether the verdict is expected to come out the same run to run
``n_runs``      runs the computation used
``detail``      the intermediate numbers (per scenario / size / buffer ...)

``stable`` is a judgement per claim, not computed per run: a claim is stable when its
margin to the tolerance is large against the run-to-run scatter seen on the quick
captures (one or two repetitions per point).  ``notebooks/findings.expected.csv``
holds the verdicts of the stable rows and what they rest on; ``tests/test_findings.py``
checks them on ``data/reference/`` and on a fresh minimal capture (as root).
"""
from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import duckdb
import polars as pl

# Which runs belong to which paper: a regular expression on runs.campaign (the same
# mapping the notebooks use; kept here so this module has no plotting imports).
PAPER_CAMPAIGNS = {
    "chen": r"(?i)chen",
    "cs244": r"(?i)cs244|raiciu",
    "deng": r"(?i)deng",
    "ditg": r"(?i)ditg|cloud|latency",
    "ferlin": r"(?i)ferlin|drepas",
}
PAPERS = tuple(PAPER_CAMPAIGNS)
VERDICTS = ("agree", "disagree", "no data")
COLUMNS = ["id", "paper", "claim", "source", "paper_value", "our_value", "unit", "tolerance",
           "verdict", "reason", "stable", "n_runs", "detail"]

MB4 = 4_000_000  # "4 MB" (campaign sizes are decimal: capture.spec.SIZE_UNITS)
SMALL = 65_536  # "64 KB or smaller" (either unit)
THREE_G = re.compile(r"(?i)3g|sprint|evdo|umts|hspa")
TWO_G = re.compile(r"(?i)2g|edge|gprs")
WLAN = re.compile(r"(?i)wlan|wifi")


# --------------------------------------------------------------------------- inputs

def _loss_of(v) -> float | None:
    """Mean loss probability of one direction's ``loss`` setting (number or model)."""
    if v is None:
        return 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, dict):
        if v.get("model") == "gilbert_elliott":
            p_gb, p_bg = float(v.get("p_gb", 0)), float(v.get("p_bg", 0))
            lg, lb = float(v.get("loss_good", 0)), float(v.get("loss_bad", 1))
            return lg if p_gb + p_bg == 0 else (p_bg * lg + p_gb * lb) / (p_gb + p_bg)
        return float(v.get("p", 0))
    return None


def path_settings(meta_json: str | None) -> dict[str, dict[str, float | None]]:
    """``{path: {rtt_ms, loss, rate_mbit}}`` from a run's meta.json (configured, downstream)."""
    try:
        meta = json.loads(meta_json or "{}")
    except (TypeError, ValueError):
        return {}
    out = {}
    for name, p in (meta.get("paths") or {}).items():
        if not isinstance(p, dict):
            continue
        down, up, prof = p.get("down") or {}, p.get("up") or {}, p.get("profile") or {}
        if "delay_ms" in down or "delay_ms" in up:
            rtt = float(down.get("delay_ms") or 0) + float(up.get("delay_ms") or 0)
        elif "rtt_ms" in prof:
            rtt = float(prof["rtt_ms"])
        elif "delay_ms" in prof:
            rtt = 2 * float(prof["delay_ms"])
        else:
            rtt = None
        rate = down.get("rate_mbit", prof.get("rate_mbit"))
        out[name] = {"rtt_ms": rtt, "loss": _loss_of(down.get("loss", prof.get("loss"))),
                     "rate_mbit": float(rate) if rate is not None else None,
                     "outages": bool(down.get("outages") or up.get("outages") or prof.get("outages"))}
    return out


def buffer_of(meta_json: str | None, scenario: str | None) -> float | None:
    """Socket buffer size (bytes) of a run: meta.json buffer_bytes, the max of the applied
    net.ipv4.tcp_rmem, net.core.rmem_max, the sysctl profile's ``buffer`` parameter, or a
    ``<n>k`` in the scenario name."""
    try:
        meta = json.loads(meta_json or "{}")
    except (TypeError, ValueError):
        meta = {}
    if meta.get("buffer_bytes"):
        return float(meta["buffer_bytes"])
    applied = meta.get("sysctls_applied") or {}
    rmem = applied.get("net.ipv4.tcp_rmem")
    if rmem:
        try:
            return float(str(rmem).split()[-1])
        except ValueError:
            pass
    if applied.get("net.core.rmem_max"):
        return float(applied["net.core.rmem_max"])
    params = meta.get("sysctl_params") or {}
    if params.get("buffer"):
        return float(params["buffer"])
    m = re.search(r"(\d+)\s*[kK]", scenario or "")
    return float(m.group(1)) * 1000 if m else None


RUN_FACTS_SQL = """
WITH dl AS (   -- download time: the client's trace, its largest connection
    SELECT run_id, arg_max(download_time_s, payload_bytes) AS download_time_s
    FROM connections WHERE vantage = 'client' GROUP BY run_id),
sf AS (        -- per connection and vantage: bytes on the cellular (non-WiFi) subflows
    SELECT run_id, vantage, conn_id,
           coalesce(sum(payload_bytes) FILTER (WHERE path NOT ILIKE 'wifi%'), 0) AS cell_bytes,
           sum(payload_bytes) AS total_bytes,
           min(payload_bytes) AS min_sf_bytes, max(payload_bytes) AS max_sf_bytes,
           count(*) AS n_sf
    FROM subflows GROUP BY ALL),
sf1 AS (       -- the sender's (server) view when there is one, its largest connection
    SELECT *, row_number() OVER (PARTITION BY run_id
                                 ORDER BY vantage = 'server' DESC, total_bytes DESC) AS k FROM sf),
ofo AS (       -- out-of-order delay: samples from client traces only
    SELECT o.run_id, avg(o.ofo_delay_ms) AS ofo_mean_ms,
           avg((o.ofo_delay_ms > 150)::DOUBLE) AS ofo_frac_gt150, count(*) AS ofo_n
    FROM ofo_samples o
    WHERE EXISTS (SELECT 1 FROM connections c
                  WHERE c.run_id = o.run_id AND c.trace = o.trace AND c.vantage = 'client')
    GROUP BY o.run_id),
srv AS (       -- loss and RTT per path: the server's trace
    SELECT run_id,
           sum(retransmitted_packets) FILTER (WHERE path ILIKE 'wifi%')::DOUBLE
               / nullif(sum(data_packets) FILTER (WHERE path ILIKE 'wifi%'), 0) AS loss_wifi_meas,
           sum(retransmitted_packets) FILTER (WHERE path NOT ILIKE 'wifi%')::DOUBLE
               / nullif(sum(data_packets) FILTER (WHERE path NOT ILIKE 'wifi%'), 0) AS loss_cell_meas,
           avg(rtt_mean_ms) FILTER (WHERE path ILIKE 'wifi%') AS rtt_wifi_meas_ms,
           avg(rtt_mean_ms) FILTER (WHERE path NOT ILIKE 'wifi%') AS rtt_cell_meas_ms
    FROM subflows WHERE vantage = 'server' GROUP BY run_id),
app AS (
    SELECT run_id, avg(delay_ms) AS app_latency_ms, count(*) AS app_packets
    FROM app_latency GROUP BY run_id)
SELECT r.run_id, r.campaign, r.scenario, r.mode, r.congestion_control, r.primary_path,
       r.size_bytes, r.workload, r.repetition, r.meta_json,
       dl.download_time_s,
       CASE WHEN s.total_bytes > 0 THEN 100.0 * s.cell_bytes / s.total_bytes END AS cell_share_pct,
       CASE WHEN s.n_sf >= 2 AND s.max_sf_bytes > 0 THEN s.min_sf_bytes::DOUBLE / s.max_sf_bytes END
           AS contribution,
       ofo.ofo_mean_ms, ofo.ofo_frac_gt150, ofo.ofo_n,
       srv.loss_wifi_meas, srv.loss_cell_meas, srv.rtt_wifi_meas_ms, srv.rtt_cell_meas_ms,
       app.app_latency_ms, app.app_packets
FROM runs r
LEFT JOIN dl USING (run_id)
LEFT JOIN (SELECT * FROM sf1 WHERE k = 1) s USING (run_id)
LEFT JOIN ofo USING (run_id)
LEFT JOIN srv USING (run_id)
LEFT JOIN app USING (run_id)
ORDER BY r.run_id"""

_FACT_SCHEMA = {
    "run_id": pl.Utf8, "campaign": pl.Utf8, "scenario": pl.Utf8, "mode": pl.Utf8,
    "congestion_control": pl.Utf8, "primary_path": pl.Utf8, "size_bytes": pl.Int64, "workload": pl.Utf8,
    "repetition": pl.Int64, "download_time_s": pl.Float64, "cell_share_pct": pl.Float64,
    "contribution": pl.Float64, "ofo_mean_ms": pl.Float64, "ofo_frac_gt150": pl.Float64,
    "ofo_n": pl.Int64, "loss_wifi_meas": pl.Float64, "loss_cell_meas": pl.Float64,
    "rtt_wifi_meas_ms": pl.Float64, "rtt_cell_meas_ms": pl.Float64, "app_latency_ms": pl.Float64,
    "app_packets": pl.Int64, "paper": pl.Utf8, "rtt_wifi_ms": pl.Float64, "rtt_cell_ms": pl.Float64,
    "loss_wifi": pl.Float64, "loss_cell": pl.Float64, "rate_wifi_mbit": pl.Float64,
    "rate_cell_mbit": pl.Float64, "buffer_bytes": pl.Float64, "goodput_mbit": pl.Float64,
    "outages": pl.Boolean,
}


def paper_of(campaign: str | None) -> str | None:
    for paper, pattern in PAPER_CAMPAIGNS.items():
        if re.search(pattern, campaign or ""):
            return paper
    return None


def run_facts(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """One row per run: its settings (meta.json) and the measured values the findings use."""
    raw = con.sql(RUN_FACTS_SQL).pl()
    rows = []
    for r in raw.iter_rows(named=True):
        meta_json = r.pop("meta_json")
        paths = path_settings(meta_json)
        wifi = paths.get("wifi", {})
        cell = next((v for k, v in paths.items() if not k.startswith("wifi")), {})
        dt, size = r["download_time_s"], r["size_bytes"]
        rows.append({
            **r, "paper": paper_of(r["campaign"]),
            "rtt_wifi_ms": wifi.get("rtt_ms"), "rtt_cell_ms": cell.get("rtt_ms"),
            "loss_wifi": wifi.get("loss"), "loss_cell": cell.get("loss"),
            "rate_wifi_mbit": wifi.get("rate_mbit"), "rate_cell_mbit": cell.get("rate_mbit"),
            "buffer_bytes": buffer_of(meta_json, r["scenario"]),
            "outages": any(p.get("outages") for p in paths.values()),
            "goodput_mbit": 8 * size / dt / 1e6 if size and dt and dt > 0 else None,
        })
    return pl.DataFrame(rows, schema=_FACT_SCHEMA)


# --------------------------------------------------------------------------- findings

@dataclass
class Outcome:
    """What one computation found: a number (or none), whether it meets the tolerance."""

    value: float | None = None
    ok: bool | None = None  # None: the database cannot decide ("no data")
    detail: str = ""
    n_runs: int = 0
    missing: str = ""  # why "no data" (required when ok is None)


@dataclass
class Claim:
    id: str
    paper: str
    claim: str  # quoted from the paper
    source: str
    paper_value: str
    unit: str
    tolerance: str
    stable: bool  # is the verdict expected to be reproducible run to run?
    if_disagree: str  # the likely reason, shown when ours disagree
    compute: Callable[[pl.DataFrame], Outcome]


def _median(xs) -> float | None:
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return statistics.median(xs) if xs else None


def _mean(xs) -> float | None:
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return statistics.fmean(xs) if xs else None


def _size(n: int | None) -> str:
    if not n:
        return "?"
    for unit, f in (("MB", 1_000_000), ("MiB", 1 << 20), ("KB", 1000), ("KiB", 1024)):
        if n % f == 0:
            return f"{n // f} {unit}"
    return f"{n} B"


def _f(x, d=2) -> str:
    return "–" if x is None else f"{x:.{d}f}"


def _runs(f: pl.DataFrame, paper: str) -> pl.DataFrame:
    """One paper's runs, without handover runs (links taken down on purpose)."""
    return f.filter((pl.col("paper") == paper) & ~pl.col("outages").fill_null(False))


def _http(f: pl.DataFrame) -> pl.DataFrame:
    return f.filter((pl.col("size_bytes") > 0) & pl.col("download_time_s").is_not_null()
                    & (pl.col("download_time_s") > 0))


def _mp2(f: pl.DataFrame, prefer_primary: str | None = "wifi") -> pl.DataFrame:
    """MP-2 runs; with the paper's primary path when the campaign has any such runs."""
    mp = f.filter(pl.col("mode") == "MP-2")
    if prefer_primary and mp.filter(pl.col("primary_path") == prefer_primary).height:
        mp = mp.filter(pl.col("primary_path") == prefer_primary)
    return mp


def _scenario_paths(f: pl.DataFrame) -> dict[str, dict[str, float | None]]:
    """Per scenario: the configured WiFi and cellular RTT/loss/rate (from any of its runs)."""
    out: dict[str, dict[str, float | None]] = {}
    for r in f.iter_rows(named=True):
        d = out.setdefault(r["scenario"], {})
        for k in ("rtt_wifi_ms", "rtt_cell_ms", "loss_wifi", "loss_cell", "rate_wifi_mbit", "rate_cell_mbit"):
            if d.get(k) is None and r[k] is not None:
                d[k] = r[k]
    return out


def _is_3g(scenario: str, s: dict) -> bool:
    """A scenario whose cellular path stands for 3G: named so, or (unnamed) with a cellular RTT ≥ 150 ms."""
    if THREE_G.search(scenario or ""):
        return True
    if re.search(r"(?i)lte|4g|att|verizon", scenario or ""):
        return False
    return (s.get("rtt_cell_ms") or 0) >= 150


# Chen et al., IMC 2013 ------------------------------------------------------------

def chen_close_to_best(f: pl.DataFrame) -> Outcome:
    r = _http(_runs(f, "chen"))
    sp = r.filter(pl.col("mode").is_in(["SP-wifi", "SP-lte"]))
    mp = _mp2(r)
    ratios, parts, used = [], [], 0
    for (scen, size), g in mp.group_by(["scenario", "size_bytes"], maintain_order=True):
        s = sp.filter((pl.col("scenario") == scen) & (pl.col("size_bytes") == size))
        w = _median(s.filter(pl.col("mode") == "SP-wifi")["download_time_s"])
        lte = _median(s.filter(pl.col("mode") == "SP-lte")["download_time_s"])
        if w is None or lte is None:
            continue
        ratio = _median(g["download_time_s"]) / min(w, lte)
        ratios.append(ratio)
        used += g.height + s.height
        parts.append((scen, size, ratio))
    if not ratios:
        return Outcome(missing="no chen (scenario, size) with SP-wifi, SP-lte and MP-2 download times")
    share = sum(x <= 1.25 for x in ratios) / len(ratios)
    parts.sort(key=lambda p: (p[0], p[1]))
    return Outcome(share, share >= 0.75, "MP-2 ÷ best SP median download time: "
                   + "; ".join(f"{s} {_size(z)} {x:.2f}" for s, z, x in parts), used)


def chen_small_wifi_best(f: pl.DataFrame) -> Outcome:
    r = _http(_runs(f, "chen"))
    scen = _scenario_paths(r)
    # the paper's condition: WiFi is the path with the smaller RTT
    fast_wifi = [s for s, v in scen.items()
                 if v.get("rtt_wifi_ms") is not None and v.get("rtt_cell_ms") is not None
                 and v["rtt_wifi_ms"] < v["rtt_cell_ms"]]
    small = r.filter((pl.col("size_bytes") <= SMALL) & pl.col("scenario").is_in(fast_wifi))
    parts, used = [], 0
    for (sc, size), g in small.group_by(["scenario", "size_bytes"], maintain_order=True):
        cfg = g.with_columns(pl.when(pl.col("mode").str.starts_with("MP"))
                             .then(pl.col("mode") + " " + pl.col("primary_path").fill_null("?"))
                             .otherwise(pl.col("mode")).alias("cfg"))
        med = {c: _median(x["download_time_s"]) for (c,), x in cfg.group_by(["cfg"])}
        w = med.pop("SP-wifi", None)
        if w is None or not med:
            continue
        best_other, who = min((v, k) for k, v in med.items())
        parts.append((sc, size, w / best_other, who))
        used += g.height
    if not parts:
        return Outcome(missing="no chen runs ≤ 64 KB with SP-wifi and another configuration "
                               "in a scenario where WiFi has the smaller RTT")
    parts.sort(key=lambda p: (p[0], p[1]))
    worst = max(p[2] for p in parts)
    return Outcome(worst, worst <= 1.10, "SP-wifi ÷ fastest other configuration (median download time): "
                   + "; ".join(f"{s} {_size(z)} {x:.2f} (vs {who})" for s, z, x, who in parts), used)


def chen_cell_share_4mb(f: pl.DataFrame) -> Outcome:
    r = _mp2(_runs(f, "chen")).filter(pl.col("cell_share_pct").is_not_null() & (pl.col("size_bytes") > 0))
    scen = _scenario_paths(r)
    lossy = [s for s, v in scen.items() if (v.get("loss_wifi") or 0) >= 0.01 and not _is_3g(s, v)
             and (v.get("loss_cell") or 0) < (v.get("loss_wifi") or 0)]
    r = r.filter(pl.col("scenario").is_in(lossy))
    sizes = sorted(s for s in r["size_bytes"].unique().to_list() if s >= MB4)
    if not sizes:
        return Outcome(missing="no chen MP-2 runs ≥ 4 MB with a lossy WiFi (≥ 1 %) and an LTE-like path")
    at = r.filter(pl.col("size_bytes") == sizes[0])
    per = {s: _median(g["cell_share_pct"]) for (s,), g in at.group_by(["scenario"])}
    by_size = {z: _median(r.filter(pl.col("size_bytes") == z)["cell_share_pct"]) for z in sizes}
    v = _median(at["cell_share_pct"])
    return Outcome(v, v >= 45.0, f"{_size(sizes[0])}: median cellular share per scenario "
                   + ", ".join(f"{s} {x:.0f} %" for s, x in sorted(per.items()))
                   + "; all sizes ≥ 4 MB: " + ", ".join(f"{_size(z)} {x:.0f} %" for z, x in by_size.items()),
                   at.height)


def chen_3g_ofo_tail(f: pl.DataFrame) -> Outcome:
    r = _mp2(_runs(f, "chen")).filter(pl.col("ofo_mean_ms").is_not_null())
    if r.filter(pl.col("size_bytes") >= MB4).height:
        r = r.filter(pl.col("size_bytes") >= MB4)  # Table 6 covers 4-32 MB
    scen = _scenario_paths(r)
    per = {s: _mean(g["ofo_mean_ms"]) for (s,), g in r.group_by(["scenario"])}
    tail = {s: _mean(g["ofo_frac_gt150"]) for (s,), g in r.group_by(["scenario"])}
    three_g = [s for s in per if _is_3g(s, scen.get(s, {}))]
    others = [s for s in per if s not in three_g]
    if not three_g or not others:
        return Outcome(missing="needs chen MP-2 runs with OFO samples in a 3G-like scenario "
                               "(name 3G/Sprint or cellular RTT ≥ 150 ms) and in another scenario")
    g3 = max(three_g, key=lambda s: per[s])
    other = max(others, key=lambda s: per[s])
    v = per[g3] / per[other] if per[other] > 0 else math.inf
    return Outcome(v, v > 1.0, "mean OFO delay (ms) / share of packets > 150 ms: "
                   + "; ".join(f"{s} {per[s]:.1f} ms / {100 * (tail[s] or 0):.1f} %" for s in sorted(per)),
                   r.height)


def chen_wifi_lossier(f: pl.DataFrame) -> Outcome:
    r = _runs(f, "chen")
    w = r.filter(pl.col("mode") == "SP-wifi")["loss_wifi_meas"].drop_nulls()
    c = r.filter(pl.col("mode") == "SP-lte")
    lte_like = pl.Series([not _is_3g(s, {"rtt_cell_ms": x}) for s, x in zip(c["scenario"], c["rtt_cell_ms"])],
                         dtype=pl.Boolean)
    c = c.filter(lte_like)["loss_cell_meas"].drop_nulls()
    if not w.len() or not c.len():
        return Outcome(missing="no chen SP-wifi and SP-lte runs with server-side loss")
    lw, lc = 100 * w.mean(), 100 * c.mean()
    return Outcome(lw - lc, lw > lc, f"mean loss (server trace): WiFi {lw:.2f} %, LTE {lc:.2f} %",
                   w.len() + c.len())


def chen_mp4_beats_mp2(f: pl.DataFrame) -> Outcome:
    r = _http(_runs(f, "chen"))
    parts, used = [], 0
    for (sc, size), g in r.group_by(["scenario", "size_bytes"]):
        m2 = _median(g.filter(pl.col("mode") == "MP-2")["download_time_s"])
        m4 = _median(g.filter(pl.col("mode") == "MP-4")["download_time_s"])
        if m2 and m4:
            parts.append((sc, size, m4 / m2))
            used += g.filter(pl.col("mode").is_in(["MP-2", "MP-4"])).height
    if not parts:
        return Outcome(missing="no chen (scenario, size) with both MP-2 and MP-4 download times")
    largest = max(p[1] for p in parts)
    v = _median([p[2] for p in parts if p[1] == largest])
    return Outcome(v, v < 1.0, "MP-4 ÷ MP-2 median download time: "
                   + "; ".join(f"{s} {_size(z)} {x:.2f}" for s, z, x in sorted(parts)), used)


# CS244 / Raiciu -------------------------------------------------------------------

def cs244_grows_and_beats(f: pl.DataFrame) -> Outcome:
    r = _runs(f, "cs244").filter(pl.col("goodput_mbit").is_not_null() & pl.col("buffer_bytes").is_not_null())
    g = {(m, b): _mean(x["goodput_mbit"]) for (m, b), x in r.group_by(["mode", "buffer_bytes"])}
    mp_bufs = sorted(b for m, b in g if m == "MP-2")
    full = [b for b in mp_bufs if ("SP-wifi", b) in g and ("SP-lte", b) in g]
    if not full:
        return Outcome(missing="no cs244 buffer size with MP-2, SP-wifi and SP-lte goodput")
    b = max(full)
    beat = g[("MP-2", b)] / max(g[("SP-wifi", b)], g[("SP-lte", b)])
    detail = (f"at {b / 1000:.0f} KB: MPTCP {g[('MP-2', b)]:.2f}, TCP-WiFi {g[('SP-wifi', b)]:.2f}, "
              f"TCP-3G {g[('SP-lte', b)]:.2f} Mbit/s")
    if len(mp_bufs) < 2:
        return Outcome(beat, None, detail, r.height,
                       missing=f"one buffer size only ({b / 1000:.0f} KB): growth with buffer size untestable")
    grow = g[("MP-2", mp_bufs[-1])] / g[("MP-2", mp_bufs[0])]
    detail += (f"; MPTCP {mp_bufs[0] / 1000:.0f} KB → {mp_bufs[-1] / 1000:.0f} KB: "
               + " → ".join(f"{g[('MP-2', x)]:.2f}" for x in mp_bufs) + f" Mbit/s (×{grow:.2f})")
    return Outcome(beat, beat > 1.0 and grow >= 0.95, detail, r.height)


def cs244_3g_low(f: pl.DataFrame) -> Outcome:
    r = _runs(f, "cs244").filter((pl.col("mode") == "SP-lte") & pl.col("goodput_mbit").is_not_null())
    if not r.height:
        return Outcome(missing="no cs244 TCP-over-3G (SP-lte) runs with a goodput")
    v = r["goodput_mbit"].max()
    return Outcome(v, v <= 1.0, "TCP-3G goodput per buffer: " + ", ".join(
        f"{(b or 0) / 1000:.0f} KB {x:.2f}" for b, x in sorted(
            (b, _mean(g["goodput_mbit"])) for (b,), g in r.group_by(["buffer_bytes"]))) + " Mbit/s", r.height)


# Deng et al., IMC 2014 ------------------------------------------------------------

def deng_primary_short(f: pl.DataFrame) -> Outcome:
    r = _http(_runs(f, "deng")).filter(pl.col("mode") == "MP-2")
    med = {k: _median(g["goodput_mbit"]) for k, g in
           r.group_by(["scenario", "size_bytes", "congestion_control", "primary_path"])}
    rel: dict[int, list[float]] = {}
    for (sc, size, cc, prim), w in med.items():
        if prim != "wifi" or not w:
            continue
        lte = med.get((sc, size, cc, "lte"))
        if lte is not None:
            rel.setdefault(size, []).append(100 * abs(lte - w) / w)
    if len(rel) < 2:
        return Outcome(missing="needs deng MP-2 runs with WiFi and with LTE primary at two or more flow sizes")
    per = {z: _median(v) for z, v in sorted(rel.items())}
    small, large = min(per), max(per)
    v = per[small] - per[large]
    return Outcome(v, v > 5.0, "median |MPTCP_LTE − MPTCP_WiFi| ÷ MPTCP_WiFi: "
                   + ", ".join(f"{_size(z)} {x:.0f} %" for z, x in per.items()), r.height)


# D-ITG cloud latency study --------------------------------------------------------

def _ditg(f: pl.DataFrame, app: str) -> pl.DataFrame:
    return _runs(f, "ditg").filter((pl.col("workload") == f"ditg-{app}") & pl.col("app_latency_ms").is_not_null())


def _lossless(f: pl.DataFrame) -> pl.DataFrame:
    return f.filter((pl.col("loss_wifi").fill_null(0) == 0)
                    & ((pl.col("mode") != "MP-2") | (pl.col("loss_cell").fill_null(0) == 0)))


def _sym(f: pl.DataFrame) -> pl.Expr:
    return (pl.col("rtt_wifi_ms") - pl.col("rtt_cell_ms")).abs() <= 1.0


def ditg_netflix_symmetric(f: pl.DataFrame) -> Outcome:
    r = _lossless(_ditg(f, "netflix"))
    mp = r.filter((pl.col("mode") == "MP-2") & _sym(r))
    tcp = r.filter(pl.col("mode") == "SP-wifi")
    parts, used = [], 0
    for (rtt,), g in mp.group_by(["rtt_wifi_ms"]):
        t = tcp.filter((pl.col("rtt_wifi_ms") - rtt).abs() <= 1.0)
        if t.height:
            parts.append((rtt, 100 * (1 - _mean(g["app_latency_ms"]) / _mean(t["app_latency_ms"])),
                          _mean(g["app_latency_ms"]), _mean(t["app_latency_ms"])))
            used += g.height + t.height
    if not parts:
        return Outcome(missing="no loss-free ditg Netflix runs: MP-2 with equal path RTTs and TCP at that RTT")
    v = min(p[1] for p in parts)
    return Outcome(v, v >= 35.0, "latency reduction per RTT: " + "; ".join(
        f"{rtt:g} ms {red:.0f} % (MPTCP {m:.1f} vs TCP {t:.1f} ms)" for rtt, red, m, t in sorted(parts)), used)


def ditg_asymmetric_raises(f: pl.DataFrame) -> Outcome:
    parts, used = [], 0
    for app in ("netflix", "maps"):
        r = _lossless(_ditg(f, app))
        mp = r.filter(pl.col("mode") == "MP-2")
        asym = mp.filter(pl.col("rtt_cell_ms") > pl.col("rtt_wifi_ms") + 1.0)
        if not asym.height:
            continue
        worst = asym.filter(pl.col("rtt_cell_ms") == asym["rtt_cell_ms"].max())
        p1 = worst["rtt_wifi_ms"][0]
        worst = worst.filter(pl.col("rtt_wifi_ms") == p1)
        base = mp.filter(_sym(mp) & ((pl.col("rtt_wifi_ms") - p1).abs() <= 1.0))
        what = "symmetric MPTCP"
        if not base.height:
            base, what = r.filter((pl.col("mode") == "SP-wifi") & ((pl.col("rtt_wifi_ms") - p1).abs() <= 1.0)), "TCP on P1"
        if not base.height:
            continue
        a, b = _mean(worst["app_latency_ms"]), _mean(base["app_latency_ms"])
        parts.append((app, 100 * (a / b - 1), p1, worst["rtt_cell_ms"][0], a, b, what))
        used += worst.height + base.height
    if not parts:
        return Outcome(missing="no loss-free ditg Netflix/Maps MP-2 runs with a longer RTT on P2 "
                               "and a symmetric (or TCP) baseline at the same P1 RTT")
    v = min(p[1] for p in parts)
    return Outcome(v, v > 10.0, "; ".join(
        f"{app}: P1 {p1:g} / P2 {p2:g} ms {a:.1f} ms vs {what} {b:.1f} ms ({x:+.0f} %)"
        for app, x, p1, p2, a, b, what in parts), used)


def ditg_docs_same(f: pl.DataFrame) -> Outcome:
    r = _lossless(_ditg(f, "docs"))
    mp = r.filter((pl.col("mode") == "MP-2") & _sym(r))
    tcp = r.filter(pl.col("mode") == "SP-wifi")
    parts, used = [], 0
    for (rtt,), g in mp.group_by(["rtt_wifi_ms"]):
        t = tcp.filter((pl.col("rtt_wifi_ms") - rtt).abs() <= 1.0)
        if t.height:
            parts.append((rtt, 100 * (_mean(g["app_latency_ms"]) / _mean(t["app_latency_ms"]) - 1)))
            used += g.height + t.height
    if not parts:
        return Outcome(missing="no loss-free ditg Docs runs: MP-2 with equal path RTTs and TCP at that RTT")
    v = max(parts, key=lambda p: abs(p[1]))[1]
    return Outcome(v, abs(v) <= 15.0, "MPTCP vs TCP latency per RTT: "
                   + "; ".join(f"{rtt:g} ms {x:+.0f} %" for rtt, x in sorted(parts)), used)


# Ferlin et al. --------------------------------------------------------------------

def _ferlin_scenarios(f: pl.DataFrame) -> dict[str, str]:
    """scenario -> '2G+WLAN' / '3G+WLAN' / '2G+3G' (from its name), others left out."""
    out = {}
    for s in f["scenario"].unique().to_list():
        two, three, wlan = bool(TWO_G.search(s or "")), bool(THREE_G.search(s or "")), bool(WLAN.search(s or ""))
        if two and wlan:
            out[s] = "2G+WLAN"
        elif three and wlan:
            out[s] = "3G+WLAN"
        elif two and three:
            out[s] = "2G+3G"
    return out


def ferlin_2g_wlan_hurts(f: pl.DataFrame) -> Outcome:
    r = _http(_runs(f, "ferlin"))
    kinds = _ferlin_scenarios(r)
    scen = [s for s, k in kinds.items() if k == "2G+WLAN"]
    if not scen:  # unnamed: a very slow cellular path (≤ 0.5 Mbit/s) beside a WiFi path
        scen = [s for s, v in _scenario_paths(r).items()
                if v.get("rate_cell_mbit") is not None and v["rate_cell_mbit"] <= 0.5
                and v.get("rtt_wifi_ms") is not None]
    mp = r.filter(pl.col("scenario").is_in(scen) & (pl.col("mode") == "MP-2"))
    sp = r.filter(pl.col("scenario").is_in(scen) & (pl.col("mode") == "SP-wifi"))
    if not mp.height or not sp.height:
        return Outcome(missing="needs ferlin 2G+WLAN runs: MP-2 and TCP over the WLAN path (SP-wifi)")
    m, s = _mean(mp["download_time_s"]), _mean(sp["download_time_s"])
    return Outcome(m / s, m / s > 1.05, f"mean completion: MPTCP {m:.1f} s, TCP over WLAN {s:.1f} s "
                   f"({', '.join(sorted(scen))})", mp.height + sp.height)


def ferlin_3g_contributes_more(f: pl.DataFrame) -> Outcome:
    r = _runs(f, "ferlin").filter((pl.col("mode") == "MP-2") & pl.col("contribution").is_not_null())
    kinds = _ferlin_scenarios(r)
    c = {k: _mean(r.filter(pl.col("scenario").is_in([s for s, x in kinds.items() if x == k]))["contribution"])
         for k in ("2G+WLAN", "3G+WLAN", "2G+3G")}
    if c["2G+WLAN"] is None or c["3G+WLAN"] is None:
        return Outcome(missing="needs ferlin MP-2 runs in scenarios named 2G+WLAN and 3G+WLAN")
    v = c["3G+WLAN"] - c["2G+WLAN"]
    return Outcome(v, v > 0, "mean weaker ÷ best subflow bytes: "
                   + ", ".join(f"{k} {_f(x, 3)}" for k, x in c.items()), r.height)


# --------------------------------------------------------------------------- the list

NO_COUPLED = "upstream Linux has no coupled (LIA/OLIA) congestion control: subflows run uncoupled cubic/reno"
EMULATED = "emulated links with fixed rate/delay/loss, not the papers' live wireless networks"

CLAIMS: list[Claim] = [
    Claim("chen-close-to-best", "chen",
          "MPTCP is robust in achieving performance at least close to the best single-path performance, "
          "across a wide range of network environments",
          "§1 contributions; §4, Fig. 2", "MP ≈ best SP for all sizes and carriers (share 1.0)",
          "share of (scenario, size) groups",
          "agree if MP-2 median download time ≤ 1.25 × the best single path's in ≥ 75 % of groups",
          False, f"{NO_COUPLED}; upstream's default scheduler and path manager differ from v0.86's",
          chen_close_to_best),
    Claim("chen-small-wifi-best", "chen",
          "For small flows, i.e., file sizes of 64 KB or smaller, single-path TCP over WiFi performs the best",
          "§4, Fig. 2 and 4", "SP-WiFi fastest (ratio ≤ 1)",
          "worst SP-wifi ÷ fastest other configuration (median download time)",
          "agree if SP-wifi's median ≤ 1.10 × every other configuration's, for every size ≤ 64 KB "
          "in scenarios where WiFi has the smaller RTT",
          False, f"{EMULATED}: 1.6 % random WiFi loss in a 45-packet transfer makes single runs slow at random",
          chen_small_wifi_best),
    Claim("chen-cell-share-4mb", "chen",
          "the fraction of packets carried by the cellular flows reaches 50% and starts to dominate the "
          "packet delivery when the file size is 4MB",
          "§4.1.1, Fig. 5 (and Fig. 10 for 8-32 MB)", "≈ 50 % at 4 MB, > 50 % above", "% of payload bytes on the cellular path",
          "agree if the median cellular share of MP-2 (WiFi primary) at 4 MB, with ≥ 1 % WiFi loss and an "
          "LTE-like path, is ≥ 45 % (50 % less 5 points)",
          True, f"upstream's default scheduler fills the lowest-RTT subflow first; {NO_COUPLED}",
          chen_cell_share_4mb),
    Claim("chen-3g-ofo-tail", "chen",
          "MPTCP with Sprint 3G exhibits a different pattern. 75% of the packets are out-of-order when they "
          "arrive at the receive buffer",
          "§5.2, Fig. 13, Table 6", "1.9-4.9 (Table 6: Sprint ÷ worst LTE carrier mean OFO, 4-32 MB)",
          "3G scenario's mean OFO delay ÷ the largest other scenario's",
          "agree if > 1 (the 3G-like scenario has the heaviest out-of-order delay)",
          True, f"{EMULATED}: the emulated 3G path has a fixed delay and queue, not Sprint's variable RTT",
          chen_3g_ofo_tail),
    Claim("chen-wifi-lossier", "chen",
          "the loss rates over 3G/4G networks are generally lower than 0.1%, while those of WiFi vary from 1% to 3%",
          "§2.1; Tables 2, 3, 5", "1.0-2.1 points (Tables 3, 5: WiFi 1.0-2.1 %, AT&T LTE ≈ 0 %)", "WiFi − LTE loss (percentage points)",
          "agree if WiFi's measured loss rate (server trace) exceeds LTE's",
          True, "our LTE queue overflows in slow start (drop-tail buffer), counted as loss like the paper's",
          chen_wifi_lossier),
    Claim("chen-mp4-beats-mp2", "chen",
          "when file size increases, 4-path MPTCP performs better than 2-path MPTCP",
          "§4.1, Fig. 4; §4.2, Fig. 9", "< 1 (MP-4 faster, more so for larger files)",
          "MP-4 ÷ MP-2 median download time at the largest size",
          "agree if < 1.0 at the largest size", False,
          "our 4 paths are 2 subflows per emulated link sharing one bottleneck; the paper's used two server "
          "interfaces on different subnets",
          chen_mp4_beats_mp2),
    Claim("cs244-grows-and-beats", "cs244",
          "we were still able to see how MPTCP was able to achieve increasing performance with larger buffers "
          "as described in the original paper as well as how it was able to consistently outperform TCP",
          "CS244 §Results, Fig. 3; Raiciu et al. NSDI'12 Fig. 9",
          "1.25 (CS244: 2.5 vs 2 Mbit/s) - 1.6 (Raiciu: 3.25 vs 2)",
          "MPTCP ÷ best single-path goodput at the largest buffer",
          "agree if MPTCP beats both single paths (> 1.0) at the largest buffer and its goodput there is "
          "≥ 0.95 × that at the smallest buffer",
          True, f"{NO_COUPLED}; 2-3 % random loss keeps each 2 Mbit/s path loss-limited whatever the buffer",
          cs244_grows_and_beats),
    Claim("cs244-3g-low", "cs244",
          "in ours TCP over 3G never seems to get much higher than 0.5Mbps throughput, even with large buffers",
          "CS244 §Results, Fig. 3, 4", "≤ 0.5 Mbit/s (CS244); ≈ 1.2-2 Mbit/s (Raiciu's real 3G)",
          "highest TCP-3G goodput (Mbit/s)", "agree with CS244 if ≤ 1.0 Mbit/s at every buffer", False,
          "CUBIC here vs the Reno-era kernel of CS244 at 152 ms RTT and 2 % loss (Padhye's Reno model: ≈ 0.7 "
          "Mbit/s); single 1 MB runs at quick scale scatter around the threshold",
          cs244_3g_low),
    Claim("deng-primary-short", "deng",
          "using different networks for the primary subflow has the greatest effect on smaller flow sizes",
          "§3.4, Fig. 8 (and Fig. 14)", "60 % (10 KB) − 28 % (1 MB) = 32 points",
          "median relative difference, smallest − largest flow size (points)",
          "agree if the smallest flow's median |MPTCP_LTE − MPTCP_WiFi| ÷ MPTCP_WiFi exceeds the largest "
          "flow's by > 5 points",
          True, f"{EMULATED}: stable rates and RTTs make the primary path matter less than on live networks",
          deng_primary_short),
    Claim("ditg-netflix-symmetric", "ditg",
          "We observe a substantial reduction in packet latency with MPTCP for Netflix traffic. ... It was "
          "more than 40% for all considered RTTs",
          "§IV, Fig. 3", "> 40 % (about 50 % at several RTTs)", "smallest latency reduction over RTTs (%)",
          "agree if MPTCP's mean Netflix latency is ≥ 35 % (40 % less 5 points) below TCP's at every RTT",
          False, "likely the scheduler and congestion control: upstream's default scheduler and uncoupled "
          "cubic, not v0.88's shortest-RTT-first with coupled LIA; our D-ITG Netflix profile approximates the paper's",
          ditg_netflix_symmetric),
    Claim("ditg-asymmetric-raises", "ditg",
          "a much longer RTT on P2 than on P1, significantly deteriorated the latency performance of MPTCP "
          "for Netflix and Google Maps traffic",
          "§IV, Fig. 4, 5", "on par with TCP at P2 = 40 ms → > +200 % (Netflix), > +800 % (Maps) at 400 ms",
          "smallest increase of MPTCP latency, largest P2 RTT vs equal RTTs (%)",
          "agree if MPTCP latency with the longer P2 RTT is > 10 % above the symmetric MPTCP latency "
          "(TCP on P1 when there is no symmetric run) for Netflix and Maps",
          True, "upstream's default scheduler differs from v0.88's shortest-RTT-first; the RTT gap we emulate is smaller",
          ditg_asymmetric_raises),
    Claim("ditg-docs-same", "ditg",
          "As regards the Google Docs traffic, we did not observe any significant difference in packet "
          "latency with MPTCP",
          "§IV, Fig. 3", "no significant difference", "largest MPTCP vs TCP latency change (%)",
          "agree if |change| ≤ 15 % at every RTT", True,
          "sparse packets should stay on one subflow; a difference points at the scheduler or the D-ITG profile",
          ditg_docs_same),
    Claim("ferlin-2g-wlan-hurts", "ferlin",
          "in the 2G+WLAN and 2G+3G scenarios, we observed that the 2G path actually hurts the overall performance",
          "§IV, Fig. 4, 5; §VI-B, Fig. 7, Table I",
          "1.33 (Fig. 4: −25 % goodput) - 1.85 (Table I: MPTCP 74.8 s vs DRePaS 40.4 s)",
          "MPTCP ÷ TCP-over-WLAN mean completion time",
          "agree if MPTCP over 2G+WLAN takes > 1.05 × as long as TCP over the WLAN path alone",
          False, f"{EMULATED}; upstream MPTCP has no opportunistic retransmission/penalisation as in v0.88",
          ferlin_2g_wlan_hurts),
    Claim("ferlin-3g-contributes-more", "ferlin",
          "It can be observed that 3G contributes on average by up to +30% to the WLAN path, while 2G hurts "
          "the WLAN performance up to -25%",
          "§IV, Fig. 4, 9, Table I", "0.587 (Table I, default MPTCP: 0.857 3G/WLAN − 0.27 2G/WLAN)",
          "3G/WLAN − 2G/WLAN relative contribution",
          "agree if the 3G path's contribution relative to WLAN exceeds the 2G path's", True,
          EMULATED, ferlin_3g_contributes_more),
]


def evaluate(facts: pl.DataFrame, claims: list[Claim] | None = None) -> pl.DataFrame:
    """Compute every claim on the run facts: one row per claim, COLUMNS in order."""
    rows = []
    for c in claims or CLAIMS:
        try:
            o = c.compute(facts)
        except Exception as e:  # a finding must never take the table down with it
            o = Outcome(missing=f"computation failed: {type(e).__name__}: {e}")
        value = None if o.value is None or (isinstance(o.value, float) and math.isnan(o.value)) else float(o.value)
        if o.ok is None:
            verdict, reason = "no data", o.missing or "the database cannot decide this claim"
        elif o.ok:
            verdict, reason = "agree", ""
        else:
            verdict, reason = "disagree", c.if_disagree
        rows.append({"id": c.id, "paper": c.paper, "claim": c.claim, "source": c.source,
                     "paper_value": c.paper_value, "our_value": value, "unit": c.unit,
                     "tolerance": c.tolerance, "verdict": verdict, "reason": reason,
                     "stable": c.stable, "n_runs": o.n_runs, "detail": o.detail})
    return pl.DataFrame(rows, schema={k: (pl.Float64 if k == "our_value" else pl.Boolean if k == "stable"
                                          else pl.Int64 if k == "n_runs" else pl.Utf8) for k in COLUMNS})


def findings(db: str | Path | duckdb.DuckDBPyConnection, paper: str | None = None) -> pl.DataFrame:
    """The findings table computed from the DuckDB file ``db`` (one paper's rows, or all)."""
    claims = [c for c in CLAIMS if paper is None or c.paper == paper]
    con = db if isinstance(db, duckdb.DuckDBPyConnection) else duckdb.connect(str(db), read_only=True)
    try:
        facts = run_facts(con)
    except duckdb.Error as e:  # not a lab database (missing tables or columns): nothing to decide
        why = f"the database cannot be read as a lab database: {str(e).splitlines()[0]}"
        return evaluate(pl.DataFrame(schema=_FACT_SCHEMA), [
            Claim(**{**c.__dict__, "compute": (lambda f, w=why: Outcome(missing=w))}) for c in claims])
    finally:
        if con is not db:
            con.close()
    return evaluate(facts, claims)


def verdict_lines(table: pl.DataFrame) -> str:
    """Markdown: one line per finding saying whether ours agree, and why not when they do not."""
    out = []
    for r in table.iter_rows(named=True):
        ours = "–" if r["our_value"] is None else f"{r['our_value']:.3g}"
        line = (f"- **{r['verdict']}** — *“{r['claim']}”* ({r['source']}). Paper: {r['paper_value']}; "
                f"ours: {ours} ({r['unit']}); rule: {r['tolerance']}.")
        if r["reason"]:
            line += f" Why: {r['reason']}."
        line += " Expected to reproduce run to run." if r["stable"] else " Not expected to be stable run to run."
        out.append(line)
    return "\n".join(out) if out else "_no findings defined for this paper_"


def write_csv(table: pl.DataFrame, out: str | Path) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.write_csv(out)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m labfig.findings", description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="the lab's DuckDB file")
    ap.add_argument("--out", required=True, help="CSV to write (e.g. results/findings.csv)")
    a = ap.parse_args(argv)
    t = findings(a.db)
    write_csv(t, a.out)
    counts = t.group_by("verdict").len().sort("verdict")
    print(f"{a.out}: {t.height} findings; " + ", ".join(f"{v} {n}" for v, n in counts.iter_rows()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
