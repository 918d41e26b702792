"""The findings table (notebooks/labfig/findings.py, rule `findings`).

* On a database built so that every claim holds (values known by construction, written
  here row by row, not by the code under test) each verdict is ``agree`` and the
  numbers are the constructed ones; on its mirror image, built so that every claim
  fails, each verdict is ``disagree``.
* Missing runs give ``no data`` with a reason, never a crash or a number.
* The CSV the workflow writes on the committed samples has every column and a verdict
  per claim.
* Once ``data/reference/`` holds the reference tables: every row has a number and a
  verdict, and the rows marked stable have the verdicts committed in
  ``notebooks/findings.expected.csv``.
* As root on an MPTCP kernel: a minimal fresh capture (``python -m capture run``)
  reproduces the expected verdicts of the stable rows it covers.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "notebooks"))

from labfig import findings as F  # noqa: E402
from pipeline.schema import TABLES, conform, ddl, legacy_direction  # noqa: E402

REQUIRED = ["chen-close-to-best", "chen-small-wifi-best", "chen-cell-share-4mb", "chen-3g-ofo-tail",
            "cs244-grows-and-beats", "deng-primary-short", "ditg-netflix-symmetric", "ditg-asymmetric-raises",
            "ferlin-2g-wlan-hurts"]
EXPECTED = ROOT / "notebooks" / "findings.expected.csv"
REFERENCE = ROOT / "data" / "reference"


# ------------------------------------------------------------------ a database by hand

WIFI = (20.0, 0.017, 20.0)  # rtt_ms, downstream loss, rate
LTE = (60.0, 0.0, 8.0)
G3 = (150.0, 0.005, 1.5)


class Lab:
    """Rows of pipeline.schema.TABLES written one by one, each value chosen by the test."""

    def __init__(self):
        self.rows = {t: [] for t in TABLES}
        self.n = 0

    def run(self, campaign, scenario, mode, size=0, *, primary="wifi", cc="reno", workload="http",
            paths=None, download_s=None, wifi_bytes=None, cell_bytes=None, retx=None, ofo=None,
            latency=None, buffer=None):
        self.n += 1
        rid = f"{campaign}-{scenario}-{mode}-{primary}-{size}-{workload}-{self.n}"
        paths = paths or {}
        meta = {"campaign": campaign, "scenario": scenario, "mode": mode,
                "paths": {p: {"down": {"delay_ms": rtt / 2, "loss": loss, "rate_mbit": rate},
                              "up": {"delay_ms": rtt / 2, "loss": 0, "rate_mbit": rate}}
                          for p, (rtt, loss, rate) in paths.items()}}
        if buffer:
            meta["sysctls_applied"] = {"net.ipv4.tcp_rmem": f"4096 {buffer} {buffer}"}
        self.rows["runs"].append(dict(run_id=rid, campaign=campaign, scenario=scenario, mode=mode,
                                      congestion_control=cc, scheduler="default", primary_path=primary,
                                      size_bytes=size, workload=workload, repetition=1,
                                      meta_json=json.dumps(meta)))
        for v in ("client", "server"):
            self.rows["connections"].append(dict(
                run_id=rid, trace=f"{rid}/{v}.pcap", vantage=v, conn_id=0, n_subflows=len(paths),
                payload_bytes=size, download_time_s=download_s if v == "client" else None))
            split = {"wifi": wifi_bytes, "lte": cell_bytes}
            for i, p in enumerate(paths):
                b = split.get(p)
                if b is None:
                    b = size if len(paths) == 1 else size // len(paths)
                pk = 1000
                rx = (retx or {}).get(p, 0)
                self.rows["subflows"].append(dict(
                    run_id=rid, trace=f"{rid}/{v}.pcap", vantage=v, conn_id=0, subflow_id=i, path=p,
                    is_primary=p == primary, data_packets=pk, retransmitted_packets=rx,
                    loss_rate=rx / pk if v == "server" else None, payload_bytes=b))
        for k, d in enumerate(ofo or []):
            self.rows["ofo_samples"].append(dict(run_id=rid, trace=f"{rid}/client.pcap", conn_id=0,
                                                 subflow_id=0, path="wifi", frame=k, dsn=k, ofo_delay_ms=d))
        for k, d in enumerate(latency or []):
            self.rows["app_latency"].append(dict(run_id=rid, flow=1, seq=k, size_bytes=1000,
                                                 sent_s=float(k), received_s=k + d / 1000, delay_ms=d))
        return rid

    def write(self, path: Path) -> Path:
        con = duckdb.connect(str(path))
        for t, rows in self.rows.items():
            con.execute(ddl(t))
            if rows:
                # rows without a direction are downloads, as the lab's tables held before
                df = legacy_direction(t, pl.DataFrame(rows, infer_schema_length=None))
                con.register("v", conform(t, df).to_arrow())
                con.execute(f'INSERT INTO "{t}" SELECT * FROM v')
                con.unregister("v")
        con.close()
        return path


def build(path: Path, true: bool) -> Path:
    """A lab where every claim holds (true) or every claim fails (false)."""
    lab = Lab()
    two = {"att": {"wifi": WIFI, "lte": LTE}, "sprint": {"wifi": WIFI, "lte": G3}}
    # Chen: download times per (scenario, size); MP-2 0.95 x (true) or 2 x (false) the best SP
    for scen, paths in two.items():
        for size, w, c in ((64_000, 0.10, 0.20), (4_000_000, 2.0, 1.6)):
            if not true and size == 64_000:
                w, c = 0.30, 0.20  # SP-wifi slowest for small flows
            best = min(w, c)
            mp2 = 0.95 * best if true else 2.0 * best
            lab.run("chen", scen, "SP-wifi", size, paths={"wifi": paths["wifi"]}, download_s=w,
                    retx={"wifi": 17 if true else 0})
            lab.run("chen", scen, "SP-lte", size, primary="lte", paths={"lte": paths["lte"]}, download_s=c,
                    retx={"lte": 0 if true else 17})
            ofo = None
            if size == 4_000_000:  # mean OFO: att 2.5 ms, sprint 150 ms (true); swapped (false)
                heavy = (scen == "sprint") == true
                ofo = [0, 100, 200, 300] if heavy else [0, 0, 0, 10]
            share = (600_000 if true else 200_000) if scen == "att" else 100_000
            lab.run("chen", scen, "MP-2", size, paths=paths, download_s=mp2, wifi_bytes=1_000_000 - share,
                    cell_bytes=share, ofo=ofo)
            f4 = (0.8 if size > 64_000 else 1.0) if true else 1.2  # MP-4 faster at the largest size (true)
            lab.run("chen", scen, "MP-4", size, paths=paths, download_s=mp2 * f4)
    # CS244: goodput = 8 x 1 MB / download time
    cs = {"wifi": (12.0, 0.03, 2.0), "lte": (152.0, 0.02, 2.0)}
    for buf, mp_dt in ((50_000, 4.0), (500_000, 3.2 if true else 5.0)):
        lab.run("cs244", f"buf{buf // 1000}k", "SP-wifi", 1_000_000, paths={"wifi": cs["wifi"]},
                download_s=4.0, buffer=buf)  # 2.0 Mbit/s
        lab.run("cs244", f"buf{buf // 1000}k", "SP-lte", 1_000_000, primary="lte", paths={"lte": cs["lte"]},
                download_s=16.0 if true else 4.0, buffer=buf)  # 0.5 / 2.0 Mbit/s
        lab.run("cs244", f"buf{buf // 1000}k", "MP-2", 1_000_000, paths=cs, download_s=mp_dt, buffer=buf)
    # Deng: |LTE - WiFi| / WiFi primary: 50 % at 10 KB, 10 % at 1 MB (true); reversed (false)
    dp = {"wifi": (30.0, 0.005, 8.0), "lte": (70.0, 0.0, 2.0)}
    for size, wifi_dt, rel in ((10_000, 0.1, 0.5 if true else 0.1), (1_000_000, 2.0, 0.1 if true else 0.5)):
        lab.run("deng", "wifi-better", "MP-2", size, paths=dp, download_s=wifi_dt)
        lab.run("deng", "wifi-better", "MP-2", size, primary="lte", paths=dp, download_s=wifi_dt / (1 - rel))
        sp_dt = wifi_dt / 2 if true else wifi_dt * 5  # SP faster than MPTCP for short flows (true)
        lab.run("deng", "wifi-better", "SP-wifi", size, paths={"wifi": dp["wifi"]}, download_s=sp_dt)
        lab.run("deng", "wifi-better", "SP-lte", size, primary="lte", paths={"lte": dp["lte"]}, download_s=sp_dt * 2)
    # D-ITG: per-packet latencies (ms); TCP on P1 = 20 ms
    for app, sym, asym in (("netflix", 10.0 if true else 19.0, 30.0 if true else 18.0),
                           ("maps", 12.0 if true else 19.0, 30.0 if true else 18.0),
                           ("docs", 21.0 if true else 40.0, None)):
        wl = f"ditg-{app}"
        lab.run("ditg", "sym-rtt10", "SP-wifi", workload=wl, paths={"wifi": (10.0, 0, 100.0)},
                latency=[20.0] * 10)
        lab.run("ditg", "sym-rtt10", "MP-2", workload=wl, paths={"wifi": (10.0, 0, 100.0), "lte": (10.0, 0, 100.0)},
                latency=[sym - 1, sym + 1] * 5)
        if asym:
            lab.run("ditg", "asym-rtt10-400", "MP-2", workload=wl,
                    paths={"wifi": (10.0, 0, 100.0), "lte": (400.0, 0, 100.0)}, latency=[asym] * 10)
    # Ferlin: completion time MPTCP vs TCP over WLAN; contribution weaker / best subflow
    fl = {"wifi": (30.0, 0.003, 10.0), "lte": (300.0, 0.0, 0.3)}
    size = 32 << 20
    lab.run("ferlin", "2G+WLAN", "MP-2", size, paths=fl, download_s=60.0 if true else 30.0,
            wifi_bytes=900 if true else 400, cell_bytes=100 if true else 600)
    lab.run("ferlin", "2G+WLAN", "SP-wifi", size, paths={"wifi": fl["wifi"]}, download_s=40.0)
    lab.run("ferlin", "3G+WLAN", "MP-2", size, paths={"wifi": fl["wifi"], "lte": (60.0, 0.0, 8.0)},
            download_s=25.0, wifi_bytes=600 if true else 900, cell_bytes=400 if true else 100)
    return lab.write(path)


@pytest.fixture(scope="module")
def true_table(tmp_path_factory):
    return F.findings(build(tmp_path_factory.mktemp("t") / "true.duckdb", True))


@pytest.fixture(scope="module")
def false_table(tmp_path_factory):
    return F.findings(build(tmp_path_factory.mktemp("f") / "false.duckdb", False))


def by_id(t: pl.DataFrame) -> dict[str, dict]:
    return {r["id"]: r for r in t.iter_rows(named=True)}


def test_every_required_claim_is_defined_once():
    ids = [c.id for c in F.CLAIMS]
    assert len(ids) == len(set(ids))
    assert set(REQUIRED) <= set(ids)
    for c in F.CLAIMS:
        assert c.claim and c.source and c.paper_value and c.tolerance and c.if_disagree, c.id
        assert c.paper in F.PAPERS


def test_all_claims_agree_on_a_database_built_to_make_them_true(true_table):
    rows = by_id(true_table)
    assert {i: r["verdict"] for i, r in rows.items()} == {i: "agree" for i in rows}, \
        {i: (r["verdict"], r["reason"], r["detail"]) for i, r in rows.items() if r["verdict"] != "agree"}
    for r in rows.values():
        assert r["our_value"] is not None and r["reason"] == "" and r["n_runs"] > 0


def test_all_claims_disagree_on_a_database_built_to_make_them_false(false_table):
    rows = by_id(false_table)
    assert {i: r["verdict"] for i, r in rows.items()} == {i: "disagree" for i in rows}, \
        {i: (r["verdict"], r["reason"], r["detail"]) for i, r in rows.items() if r["verdict"] != "disagree"}
    for r in rows.values():
        assert r["our_value"] is not None and r["reason"]  # a one-line why


@pytest.mark.parametrize("claim, true_value, false_value", [
    ("chen-close-to-best", 1.0, 0.0),          # MP-2 at 0.95x / 2x the best SP in all 4 groups
    ("chen-small-wifi-best", 1 / 0.95, 1.5),   # SP-wifi vs MP-2 at 0.95 x; 0.30 vs SP-lte 0.20
    ("chen-cell-share-4mb", 60.0, 20.0),       # 600 kB / 200 kB of 1 MB on LTE (att)
    ("chen-3g-ofo-tail", 150.0 / 2.5, 2.5 / 150.0),
    ("chen-wifi-lossier", 1.7, -1.7),          # 17 of 1000 packets retransmitted
    ("chen-mp4-beats-mp2", 0.8, 1.2),
    ("cs244-grows-and-beats", 2.5 / 2.0, 1.6 / 2.0),
    ("cs244-3g-low", 0.5, 2.0),
    ("deng-primary-short", 50.0 - 10.0, 10.0 - 50.0),
    ("ditg-netflix-symmetric", 50.0, 5.0),     # 1 - 10/20, 1 - 19/20
    ("ditg-asymmetric-raises", 150.0, -100.0 * 1 / 19),  # min over apps: maps 30/12, netflix 18/19
    ("ditg-docs-same", 5.0, 100.0),
    ("ferlin-2g-wlan-hurts", 1.5, 0.75),
    ("ferlin-3g-contributes-more", 400 / 600 - 100 / 900, 100 / 900 - 400 / 600),
])
def test_values_are_the_constructed_ones(true_table, false_table, claim, true_value, false_value):
    assert by_id(true_table)[claim]["our_value"] == pytest.approx(true_value, rel=1e-6)
    assert by_id(false_table)[claim]["our_value"] == pytest.approx(false_value, rel=1e-6)


def test_missing_runs_give_no_data_with_a_reason(tmp_path):
    empty = Lab().write(tmp_path / "empty.duckdb")
    t = F.findings(empty)
    assert t["verdict"].to_list() == ["no data"] * len(F.CLAIMS)
    assert t["our_value"].null_count() == t.height
    assert all(t["reason"].str.len_chars() > 10)
    # a paper with some of its runs: only single-path Chen runs -> MP claims have no data
    lab = Lab()
    lab.run("chen", "att", "SP-wifi", 64_000, paths={"wifi": WIFI}, download_s=0.1)
    rows = by_id(F.findings(lab.write(tmp_path / "partial.duckdb")))
    assert rows["chen-close-to-best"]["verdict"] == "no data"
    assert "MP-2" in rows["chen-close-to-best"]["reason"]


def test_a_database_without_the_lab_tables_gives_no_data_not_a_crash(tmp_path):
    db = tmp_path / "other.duckdb"
    con = duckdb.connect(str(db))
    con.execute(ddl("runs"))
    con.close()
    t = F.findings(db)
    assert t.height == len(F.CLAIMS) and set(t["verdict"]) == {"no data"}
    assert all("cannot be read as a lab database" in r for r in t["reason"])


def test_one_buffer_size_is_no_data_but_keeps_its_number(tmp_path):
    lab = Lab()
    cs = {"wifi": (12.0, 0.03, 2.0), "lte": (152.0, 0.02, 2.0)}
    for mode, p, dt in (("SP-wifi", ["wifi"], 4.0), ("SP-lte", ["lte"], 16.0), ("MP-2", ["wifi", "lte"], 3.2)):
        lab.run("cs244", "buf500k", mode, 1_000_000, paths={k: cs[k] for k in p}, download_s=dt, buffer=500_000)
    r = by_id(F.findings(lab.write(tmp_path / "one.duckdb")))["cs244-grows-and-beats"]
    assert r["verdict"] == "no data" and r["our_value"] == pytest.approx(1.25)
    assert "one buffer size" in r["reason"]


def test_handover_runs_are_left_out(tmp_path):
    lab = Lab()
    cs = {"wifi": (12.0, 0.03, 2.0), "lte": (152.0, 0.02, 2.0)}
    for buf, mp in ((50_000, 4.0), (500_000, 3.2)):
        for mode, p, dt in (("SP-wifi", ["wifi"], 4.0), ("SP-lte", ["lte"], 16.0), ("MP-2", ["wifi", "lte"], mp)):
            lab.run("cs244", f"buf{buf // 1000}k", mode, 1_000_000, paths={k: cs[k] for k in p}, download_s=dt,
                    buffer=buf)
    rid = lab.run("cs244", "handover", "MP-2", 1_000_000, paths=cs, download_s=100.0, buffer=500_000)
    run = next(r for r in lab.rows["runs"] if r["run_id"] == rid)
    meta = json.loads(run["meta_json"])
    meta["paths"]["wifi"]["down"]["outages"] = [[8, 16]]
    run["meta_json"] = json.dumps(meta)
    r = by_id(F.findings(lab.write(tmp_path / "ho.duckdb")))["cs244-grows-and-beats"]
    assert r["our_value"] == pytest.approx(1.25)


def test_csv_roundtrip_and_cli(tmp_path):
    db = build(tmp_path / "true.duckdb", True)
    out = tmp_path / "findings.csv"
    r = subprocess.run([sys.executable, "-m", "labfig.findings", "--db", str(db), "--out", str(out)],
                       cwd=ROOT / "notebooks", capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(out.open()))
    assert list(rows[0]) == F.COLUMNS
    assert {x["verdict"] for x in rows} == {"agree"}


# ------------------------------------------------------------------ the workflow's CSV

def check_csv(path: Path) -> list[dict]:
    rows = list(csv.DictReader(path.open()))
    assert rows and set(F.COLUMNS) <= set(rows[0])
    assert [r["id"] for r in rows] == [c.id for c in F.CLAIMS]
    for r in rows:
        assert r["verdict"] in F.VERDICTS, r
        assert r["claim"] and r["source"] and r["paper_value"] and r["tolerance"] and r["stable"] in ("true", "false")
        if r["verdict"] == "agree":
            assert r["our_value"] != ""
        else:
            assert r["reason"], r  # one line on why
        if r["verdict"] == "no data":
            assert r["our_value"] == "" or r["id"] == "cs244-grows-and-beats"
    return rows


def test_workflow_writes_findings_csv_from_the_samples(tmp_path):
    res = tmp_path / "results"
    r = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "findings", "--config", "capture=false",
                        f"results_dir={res}", "samples_dir=data/samples"],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    rows = check_csv(res / "findings.csv")
    if not reference_dirs():
        # the samples belong to no paper's campaign: nothing to decide, nothing made up
        assert {x["verdict"] for x in rows} == {"no data"}
    else:
        # not capturing: load_db adds data/reference, so reproduce_all's findings.csv has
        # every paper's rows, and the stable ones have the expected verdicts
        assert all(x["our_value"] != "" and x["verdict"] != "no data" for x in rows), rows
        got = {x["id"]: x["verdict"] for x in rows if x["stable"] == "true"}
        assert got == expected_verdicts()


# ------------------------------------------------------------------ reference data

def reference_dirs() -> list[Path]:
    return sorted({p.parent for p in REFERENCE.rglob("runs.parquet")}) if REFERENCE.is_dir() else []


def load_reference(db: Path) -> Path:
    r = subprocess.run([sys.executable, "-m", "pipeline", "load", *map(str, reference_dirs()), "--db", str(db)],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return db


def expected_verdicts() -> dict[str, str]:
    return {r["id"]: r["verdict"] for r in csv.DictReader(EXPECTED.open())}


def test_expected_file_covers_the_stable_rows():
    exp = list(csv.DictReader(EXPECTED.open()))
    stable = {c.id for c in F.CLAIMS if c.stable}
    assert {r["id"] for r in exp} == stable
    assert {r["verdict"] for r in exp} <= set(F.VERDICTS) - {"no data"}


@pytest.mark.skipif(not reference_dirs(), reason="data/reference/ has no reference tables yet "
                    "(quick-scale captures of campaigns chen, cs244, deng, ditg, ferlin)")
def test_reference_findings_have_numbers_and_the_expected_stable_verdicts(tmp_path):
    t = F.findings(load_reference(tmp_path / "reference.duckdb"))
    out = F.write_csv(t, tmp_path / "findings.csv")
    check_csv(out)
    missing = t.filter(pl.col("our_value").is_null() | (pl.col("verdict") == "no data"))
    assert missing.is_empty(), missing.select("id", "verdict", "reason").rows()
    exp = expected_verdicts()
    got = {r["id"]: r["verdict"] for r in t.filter(pl.col("stable")).iter_rows(named=True)}
    assert got == exp, {i: (got.get(i), exp.get(i)) for i in exp if got.get(i) != exp.get(i)}


# ------------------------------------------------------------------ a fresh capture

def capture_blockers() -> list[str]:
    why = []
    if os.geteuid() != 0:
        why.append("needs root (network namespaces)")
    try:
        if Path("/proc/sys/net/mptcp/enabled").read_text().strip() != "1":
            why.append("net.mptcp.enabled is 0")
    except OSError:
        why.append("kernel without MPTCP")
    if not (ROOT / "capture/linkem/target/release/linkem").exists():
        why.append("linkem not built (make linkem)")
    for tool in ("tcpdump", "nginx", "wget", "mptcpize", "tshark", "mergecap"):
        if not shutil.which(tool):
            why.append(f"{tool} missing")
    return why


# Chen's and Deng's links (capture/campaigns/profiles.yaml chen-*, deng-lte-better-*),
# written out so this test does not depend on the campaign files.  Chen: MP-2 at 4 MB
# over WiFi + AT&T LTE and over WiFi + Sprint 3G, single-path WiFi and LTE at 512 KB.
# Deng: MP-2 with WiFi and with LTE as the primary subflow at 10 KB and 1 MB.  About a
# minute of captures in all.
MINI_CAMPAIGNS = {"chen-findings-mini": """
name: chen-findings-mini
seed: 5
sysctl_profile: chen2013          # as campaign chen: no metrics cache, 8 MB rcvbuf, ssthresh 64 KB
congestion_control: cubic         # SP runs as in campaign chen; MP-2 uses it per subflow
timeout_s: 120
scenarios:
  att:
    wifi: {rate_mbit: 20, rtt_ms: 20, queue_bytes: 75000, down: {loss: 0.017}}
    lte: {rate_mbit: 8, rtt_ms: 60, queue_bytes: 180000}
  sprint:
    wifi: {rate_mbit: 20, rtt_ms: 20, queue_bytes: 75000, down: {loss: 0.017}}
    lte: {rate_mbit: 1.5, rtt_ms: 150, jitter_ms: 10, queue_bytes: 200000, down: {loss: 0.005}}
runs:
  - {id: att-mp2-4mb, scenario: att, mode: MP-2, size: 4MB, primary_path: wifi}
  - {id: sprint-mp2-4mb, scenario: sprint, mode: MP-2, size: 4MB, primary_path: wifi}
  - {id: att-spwifi-512kb, scenario: att, mode: SP-wifi, size: 512KB, primary_path: wifi}
  - {id: att-splte-512kb, scenario: att, mode: SP-lte, size: 512KB, primary_path: lte}
""", "deng-findings-mini": """
name: deng-findings-mini
seed: 6
congestion_control: reno          # campaign deng's MP runs: decoupled = reno per subflow
timeout_s: 120
scenarios:
  lte-better:
    wifi: {rate_mbit: 2, rtt_ms: 80, queue_bytes: 50000, down: {loss: 0.01}}
    lte: {rate_mbit: 9, rtt_ms: 50, queue_bytes: 200000}
runs:
  - {id: mp2-10kb-wifi, scenario: lte-better, mode: MP-2, size: 10KB, primary_path: wifi}
  - {id: mp2-10kb-lte, scenario: lte-better, mode: MP-2, size: 10KB, primary_path: lte}
  - {id: mp2-1mb-wifi, scenario: lte-better, mode: MP-2, size: 1MB, primary_path: wifi}
  - {id: mp2-1mb-lte, scenario: lte-better, mode: MP-2, size: 1MB, primary_path: lte}
"""}
MINI_COVERS = ["chen-cell-share-4mb", "chen-3g-ofo-tail", "chen-wifi-lossier", "deng-primary-short"]


@pytest.mark.skipif(bool(capture_blockers()), reason="fresh capture not possible here: "
                    + "; ".join(capture_blockers()))
def test_fresh_capture_reproduces_the_stable_verdicts(tmp_path):
    raw = tmp_path / "raw"
    for name, text in MINI_CAMPAIGNS.items():
        yml = tmp_path / f"{name}.yaml"
        yml.write_text(text)
        r = subprocess.run([sys.executable, "-m", "capture", "run", str(yml), "--out", str(raw), "--no-progress"],
                           cwd=ROOT, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr[-4000:]
    runs = sorted(p.parent for p in raw.rglob("meta.json"))
    assert len(runs) == 8
    db = tmp_path / "fresh.duckdb"
    r = subprocess.run([sys.executable, "-m", "pipeline", "analyze", *map(str, runs), "--db", str(db)],
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    rows = by_id(F.findings(db))
    exp = expected_verdicts()
    print({cid: (rows[cid]["verdict"], rows[cid]["our_value"], rows[cid]["detail"]) for cid in MINI_COVERS})
    for cid in MINI_COVERS:
        assert rows[cid]["verdict"] != "no data", rows[cid]["reason"]
        assert rows[cid]["stable"] and cid in exp
        assert rows[cid]["verdict"] == exp[cid], (cid, rows[cid]["detail"])
