"""Interactive exploration (issue 14): the per-run charts of ``python -m pipeline plot``
(pipeline.runplots) on a scapy-built run whose sequence numbers are known by
construction, their pre-aggregation under Altair's row limit, ``python -m pipeline
show`` (tshark's dissection through pyshark), the exploration notebook on a sample
run, and JupyterLab (``make lab``'s launcher) answering headless on its API."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import duckdb
import polars as pl
import pytest
import svgcheck
from pcapgen import Subflow, join_handshake, mp_handshake, opt_dss, server_idsn, write

from pipeline import runplots
from pipeline import derived, schema, tables
from pipeline.frames import Arrow

ROOT = Path(__file__).resolve().parents[1]
WIFI, LTE, SRV = "10.0.1.2", "10.0.2.2", "10.0.0.1"


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True, text=True, timeout=300)
    if check:
        assert r.returncode == 0, r.stderr[-3000:]
    return r


# --- a run whose time-sequence graph is known ------------------------------------------

def seq_run(folder: Path) -> Path:
    """The client's trace of a two-subflow download. wifi: MP_CAPABLE at 0 s; lte joins
    at 30 ms. wifi brings DSN 1 (SSN 1) at 100 ms, DSN 2001 (SSN 1001) at 220 ms, DSN 1001
    (SSN 2001: the sender's reinjection of lte's data, first here) at 250 ms, and SSN 1001
    again at 300 ms (a retransmission). lte's DSN 1001 (SSN 1) arrives at 400 ms, second:
    the reinjection mark. DSN 2001 waits 220 -> 250 ms for DSN 1001 (OFO). The client's
    DATA_ACK moves to 1001 at 101 ms and to 3001 at 251 ms (repeated at 301 and 401 ms)."""
    folder.mkdir()
    a = mp_handshake(Subflow(WIFI, SRV, 40001), 0.0, 0.02, 0.02)
    b = join_handshake(Subflow(LTE, SRV, 40002, isn_c=7000, isn_s=90000), 0.03, 0.06, 0.06)
    d = server_idsn()
    a.data(0.100, 1, 1000, [opt_dss(dsn=d + 1, ssn=1, length=1000)])
    a.ack(0.101, 1001, [opt_dss(data_ack=d + 1001)])
    a.data(0.220, 1001, 1000, [opt_dss(dsn=d + 2001, ssn=1001, length=1000)])
    a.data(0.250, 2001, 1000, [opt_dss(dsn=d + 1001, ssn=2001, length=1000)])
    a.ack(0.251, 3001, [opt_dss(data_ack=d + 3001)])
    a.data(0.300, 1001, 1000, [opt_dss(dsn=d + 2001, ssn=1001, length=1000)])
    a.ack(0.301, 3001, [opt_dss(data_ack=d + 3001)])
    b.data(0.400, 1, 1000, [opt_dss(dsn=d + 1001, ssn=1, length=1000)])
    b.ack(0.401, 1001, [opt_dss(data_ack=d + 3001)])
    return write(folder / "client.pcap", a, b)


# (subflow, time since the first SYN, DSN, SSN, mark, end of the OFO wait)
SEQ_DATA = [
    ("wifi (sf 0)", 0.100, 1, 1, "new data", None),
    ("wifi (sf 0)", 0.220, 2001, 1001, "new data", 0.250),
    ("wifi (sf 0)", 0.250, 1001, 2001, "new data", None),
    ("wifi (sf 0)", 0.300, 2001, 1001, "retransmission", None),
    ("lte (sf 1)", 0.400, 1001, 1, "reinjection", None),
]
# (subflow, time, cumulative ACK): the handshake's ACK (1) and each one that moved it
SEQ_DATA_ACKS = [("wifi (sf 0)", 0.101, 1001), ("wifi (sf 0)", 0.251, 3001)]
SEQ_ACKS = [
    ("wifi (sf 0)", 0.020, 1), ("lte (sf 1)", 0.060, 1), ("wifi (sf 0)", 0.101, 1001),
    ("wifi (sf 0)", 0.251, 3001), ("lte (sf 1)", 0.401, 1001),
]


@pytest.fixture(scope="module")
def seq_db(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("seq")
    pcap = seq_run(tmp / "seqrun")
    db = tmp / "lab.duckdb"
    cli("analyze", "-q", str(pcap), "--db", str(db), "--path", f"wifi={WIFI}", "--path", f"lte={LTE}")
    return db, pcap


def chart_rows(spec: dict) -> list[dict]:
    """The rows of the (single) data set a saved Vega-Lite spec carries."""
    sets = list(spec["datasets"].values())
    assert len(sets) == 1, "the time-sequence graph draws all its layers from one pre-aggregated data set"
    return sets[0]


def test_plot_seq_chart_data_are_the_known_sequence_numbers(seq_db, tmp_path):
    db, _ = seq_db
    out = tmp_path / "seq.json"
    cli("plot", "seq", "seqrun", "--db", str(db), "-o", str(out))
    rows = chart_rows(json.loads(out.read_text()))
    data = sorted((r["subflow"], round(r["t_s"], 6), r["dsn"], r["ssn"], r["mark"],
                   None if r["ofo_end_s"] is None else round(r["ofo_end_s"], 6))
                  for r in rows if r["kind"] == "data")
    assert data == sorted(SEQ_DATA)
    acks = sorted((r["subflow"], round(r["t_s"], 6), r["ack"]) for r in rows
                  if r["kind"] == "ack" and r["ack"] is not None)
    assert acks == sorted(SEQ_ACKS)
    dacks = sorted((r["subflow"], round(r["t_s"], 6), r["data_ack"]) for r in rows
                   if r["kind"] == "ack" and r["data_ack"] is not None)
    assert dacks == SEQ_DATA_ACKS, "the DATA_ACK line: where the connection-level ACK moved"
    layers = [l for l in json.loads(out.read_text())["vconcat"][0]["layer"] if l["encoding"]["y"]["field"] == "data_ack"]
    assert len(layers) == 1 and "line" in str(layers[0]["mark"])
    # the same chart as SVG, PNG and interactive HTML (scale-bound interval selections)
    for ext, magic in ((".svg", b"<svg"), (".png", b"\x89PNG"), (".html", b"vega")):
        f = tmp_path / f"seq{ext}"
        cli("plot", "seq", "seqrun", "--db", str(db), "-o", str(f))
        assert magic in f.read_bytes()[:200_000]
    spec = json.loads(out.read_text())
    params = spec.get("params", []) + [p for v in spec["vconcat"] for p in v.get("params", [])]
    assert len(params) == 2, "zoom and pan on both panels"
    assert {p["select"]["type"] for p in params} == {"interval"} and all(p.get("bind") == "scales" for p in params)


@pytest.mark.skipif(svgcheck.CHROMIUM is None, reason="chromium not installed (scripts/setup-system.sh installs it)")
def test_plot_svgs_draw_their_text_uncut_in_chromium(seq_db, tmp_path):
    """issue 42: plot's SVGs in a browser: no legend title, label or subtitle runs past
    the image's edge (Vega measured DejaVu-drawn text with another font's metrics: "subflow
    (path" was cut). The fonts are the system's: scripts/setup-system.sh installs Liberation."""
    _, pcap = seq_db
    db = tmp_path / "long.duckdb"  # long path names: the legend's widest entries at the image's edge
    cli("analyze", "-q", str(pcap), "--db", str(db), "--path", f"wifi-home-router-5ghz={WIFI}",
        "--path", f"lte-operator-b-roaming={LTE}")
    svgs = {}
    for kind in ("seq", "throughput"):  # (rtt reads the sender's trace, which this run has not)
        f = tmp_path / f"{kind}.svg"
        cli("plot", kind, "seqrun", "--db", str(db), "-o", str(f))
        svgs[kind] = f.read_text()
    got = svgcheck.measure(svgs, tmp_path)
    assert got["cut"] == [] and got["covered"] == [], got


def test_the_file_font_keeps_a_charts_other_settings():
    import altair as alt
    c = alt.Chart(pl.DataFrame({"x": [1]})).mark_point().encode(x="x:Q").configure_axis(labelFontSize=14)
    d = runplots.in_file_font(c).to_dict()
    assert d["config"]["font"] == runplots.FONT and d["config"]["axis"]["labelFontSize"] == 14
    assert "font" not in c.to_dict()["config"]  # the chart given is left as it was


def test_labels_are_drawn_after_the_data_they_may_cross():
    import altair as alt
    d = pl.DataFrame({"x": [1.0], "y": [2.0], "t": ["a"]})
    base = alt.Chart(d).encode(x="x:Q", y="y:Q")
    halo = alt.layer(base.mark_text(stroke="white"), base.mark_text())
    chart = alt.hconcat(alt.layer(base.mark_text(), base.mark_point(), halo, base.mark_line()), base.mark_bar())
    got = runplots.labels_on_top(chart).to_dict()["hconcat"][0]["layer"]
    kinds = [x["mark"]["type"] if isinstance(x.get("mark"), dict) else x.get("mark", "layer") for x in got]
    assert kinds == ["point", "line", "text", "layer"]  # the data first, the labels after in their order


def test_plot_throughput_counts_the_bytes(seq_db, tmp_path):
    db, _ = seq_db
    out = tmp_path / "tput.json"
    cli("plot", "throughput", "seqrun", "--db", str(db), "-o", str(out))
    spec = json.loads(out.read_text())
    rows = [r for d in spec["datasets"].values() for r in d if "mbit_s" in r]
    by = {}
    for r in rows:
        by[r["subflow"]] = by.get(r["subflow"], 0) + r["bytes"]
    assert by == {"wifi (sf 0)": 4000, "lte (sf 1)": 1000, "all subflows": 5000}


def test_plot_errors_are_clear_and_keep_other_files(seq_db, tmp_path):
    db, _ = seq_db
    r = cli("plot", "seq", "no-such-run", "--db", str(db), "-o", str(tmp_path / "x.svg"), check=False)
    assert r.returncode == 1 and "'no-such-run' is not in the database" in r.stderr and "seqrun" in r.stderr
    r = cli("plot", "rtt", "seqrun", "--db", str(db), "-o", str(tmp_path / "x.svg"), check=False)
    assert r.returncode == 1 and "no server trace" in r.stderr  # only the client's pcap was analysed
    r = cli("plot", "seq", "seqrun", "--db", str(tmp_path / "none.duckdb"), "-o", str(tmp_path / "x.svg"),
            check=False)
    assert r.returncode == 2 and "no such database" in r.stderr
    mine = tmp_path / "notes.svg"
    mine.write_text("my notes, not a chart")
    r = cli("plot", "seq", "seqrun", "--db", str(db), "-o", str(mine), check=False)
    assert r.returncode == 2 and "refusing to overwrite" in r.stderr
    assert mine.read_text() == "my notes, not a chart"
    # a user's own chart files of the same format are not ours either (the old check: "<svg"
    # near the start, PNG magic, "vega" anywhere), while a file `plot` wrote is replaced
    import base64
    theirs = {"theirs.svg": b'<svg xmlns="http://www.w3.org/2000/svg"><rect width="5" height="5"/></svg>',
              "theirs.png": base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
                                             "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="),
              "theirs.html": b"<html><script src='vega.js'></script>my dashboard</html>",
              "theirs.json": b'{"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "mark": "bar"}',
              # files that merely contain the mark's words (issue 43): not charts `plot` wrote
              "notes.json": b'{"todo": "compare with the chart written by mptcp-lab plot"}',
              "quoted.svg": b'<svg xmlns="http://www.w3.org/2000/svg"><!-- written by mptcp-lab plot --></svg>'}
    for name, body in theirs.items():
        (tmp_path / name).write_bytes(body)
        r = cli("plot", "seq", "seqrun", "--db", str(db), "-o", str(tmp_path / name), check=False)
        assert r.returncode == 2 and "refusing to overwrite" in r.stderr, name
        assert (tmp_path / name).read_bytes() == body, name
    for ext in ("svg", "png", "html", "json"):
        ours = tmp_path / f"again.{ext}"
        for _ in range(2):
            cli("plot", "seq", "seqrun", "--db", str(db), "-o", str(ours))
    from PIL import Image
    with Image.open(tmp_path / "again.png") as im:  # the mark is a well-formed PNG text chunk
        assert im.text.get("Software") == "written by mptcp-lab plot" and im.size[0] > 100
    empty = tmp_path / "empty.duckdb"  # a DuckDB file with none of the lab's tables
    import duckdb
    duckdb.connect(str(empty)).close()
    r = cli("plot", "seq", "seqrun", "--db", str(empty), "-o", str(tmp_path / "e.svg"), check=False)
    assert r.returncode == 2 and "none of the lab's tables" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "e.svg").exists()
    r = cli("plot", "seq", "seqrun", "--db", str(db), "-o", str(tmp_path / "x.pdf"), check=False)
    assert r.returncode == 2 and "unknown output format" in r.stderr
    assert not list(tmp_path.glob(".*.tmp*")), "no temporary file left behind"


# --- a large run stays under Altair's 5,000-row limit ------------------------------------

def big_db(path: Path, n: int = 60_000) -> Path:
    """A database with one long two-subflow download: n data packets at the client, n
    ACK rows, n RTT samples at the server (every table of pipeline.schema present)."""
    con = duckdb.connect(str(path))
    for t in schema.TABLES:
        con.execute(schema.ddl(t))
    tr_c, tr_s = "/x/big/client.pcap", "/x/big/server.pcap"
    meta = {"paths": {"wifi": {"down": {"delay_ms": 10, "rate_mbit": 20}, "up": {"delay_ms": 10}},
                      "lte": {"down": {"delay_ms": 35, "rate_mbit": 10}, "up": {"delay_ms": 35}}}}
    con.execute("INSERT INTO runs (run_id, meta_json) VALUES ('big', ?)", [json.dumps(meta)])
    paths = tables.meta_tables(meta, "big")["run_paths"]  # meta.json's paths, lifted as the pipeline does
    con.register("p", Arrow(paths))
    con.execute("INSERT INTO run_paths SELECT * FROM p")
    con.unregister("p")
    for tr, v in ((tr_c, "client"), (tr_s, "server")):
        con.execute("INSERT INTO connections (run_id, trace, vantage, conn_id, direction, payload_bytes, start_s) "
                    "VALUES ('big', ?, ?, 0, 'down', ?, 100.0)", [tr, v, n * 1000])
        for sf, p in ((0, "wifi"), (1, "lte")):
            con.execute("INSERT INTO subflows (run_id, trace, vantage, conn_id, subflow_id, direction, path) "
                        "VALUES ('big', ?, ?, 0, ?, 'down', ?)", [tr, v, sf, p])
    i = pl.int_range(0, n, eager=True)
    data = pl.DataFrame({"run_id": "big", "trace": tr_c, "conn_id": 0, "subflow_id": (i % 2).cast(pl.Int32),
                         "direction": "down", "frame": (2 * i + 1).cast(pl.UInt32), "time_s": 100.0 + i * 1e-3,
                         "ssn_rel": (i // 2) * 1000 + 1, "payload_bytes": 1000, "dsn_rel": i * 1000 + 1,
                         "retransmission": i % 997 == 0, "reinjection": False})
    acks = data.select("run_id", "trace", "conn_id", "subflow_id", "direction",
                       (pl.col("frame") + 1).alias("frame"), (pl.col("time_s") + 5e-4).alias("time_s"),
                       (pl.col("ssn_rel") + 1000).alias("ack_rel"), pl.lit(0).alias("payload_bytes"))
    seq = pl.concat([schema.conform("seq_packets", data), schema.conform("seq_packets", acks)])
    rtt = pl.DataFrame({"run_id": "big", "trace": tr_s, "conn_id": 0, "subflow_id": (i % 2).cast(pl.Int32),
                        "direction": "down", "frame": (2 * i + 1).cast(pl.UInt32), "sent_s": 100.0 + i * 1e-3,
                        "rtt_ms": 20.0 + (i % 2) * 50 + (i % 100) / 10})
    for name, df in (("seq_packets", seq), ("rtt_samples", schema.conform("rtt_samples", rtt))):
        con.register("df", Arrow(df))
        con.execute(f'INSERT INTO "{name}" SELECT * FROM df')
        con.unregister("df")
    con.close()
    return path


def test_large_runs_are_pre_aggregated_under_altairs_limit(tmp_path):
    import altair as alt

    assert alt.data_transformers.options.get("max_rows", 5000) <= 5000, "the limit is on, not disabled"
    con = derived.connect(big_db(tmp_path / "big.duckdb"))
    n = 60_000
    for kind in ("seq", "rtt", "throughput"):
        chart, df = runplots.PLOTS[kind](con, "big")
        assert df.height <= runplots.BUDGET < 5000
        spec = chart.to_dict()  # raises MaxRowsError past the limit
        assert all(len(v) <= runplots.BUDGET for v in spec.get("datasets", {}).values())
        runplots.save(chart, tmp_path / f"{kind}.svg")
    seq, _ = runplots.plot_seq(con, "big")
    rows = pl.DataFrame(chart_rows(seq.to_dict()))
    data = rows.filter(pl.col("kind") == "data")
    # the envelope survives: the first and last DSN of each subflow, every retransmission
    assert data["dsn"].min() == 1 and data["dsn"].max() == (n - 1) * 1000 + 1
    assert data.filter(pl.col("mark") == "retransmission").height == len(range(0, n, 997))
    rtt, rdf = runplots.plot_rtt(con, "big")
    assert rdf["hi"].max() == pytest.approx(70 + 9.9) and rdf["lo"].min() == pytest.approx(20.0)
    assert "pre-aggregated" in json.dumps(seq.to_dict()["title"])


# --- show: tshark's dissection through pyshark ---------------------------------------------

def test_show_prints_the_mptcp_subtype_of_known_frames(seq_db):
    _, pcap = seq_db
    # frames in time order: 1-3 wifi's MP_CAPABLE handshake, 4-6 lte's MP_JOIN, 7 DSN 1 on wifi
    r = cli("show", str(pcap), "1", "4", "7")
    out = r.stdout
    frames = out.split("\nFrame ")
    assert out.startswith("Frame 1:") and len(frames) == 3
    assert "Multipath TCP subtype: Multipath Capable (0)  [tcp.options.mptcp.subtype]" in frames[0]
    assert "Multipath TCP subtype: Join Connection (1)" in frames[1]
    assert "Multipath TCP subtype: Data Sequence Signal (2)" in frames[2]
    assert "[tcp.options.mptcp.rawdataseqno]" in frames[2]  # the DSS mapping, as Wireshark names it


def test_show_prints_tsharks_analysis_flags(seq_db):
    _, pcap = seq_db
    # frame 12: wifi's SSN 1001 again at 300 ms (see seq_run)
    out = cli("show", str(pcap), "12").stdout
    assert "Frame 12:" in out and "[tcp.analysis.retransmission]" in out


def test_show_errors(seq_db, tmp_path):
    _, pcap = seq_db
    r = cli("show", str(pcap), "99", check=False)
    assert r.returncode == 1 and "no frame 99 (it has 15 frames)" in r.stderr
    r = cli("show", str(tmp_path / "missing.pcap"), "1", check=False)
    assert r.returncode == 1 and "missing.pcap: no such file" in r.stderr
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"not a capture at all")
    r = cli("show", str(junk), "1", check=False)
    assert r.returncode == 1 and "not a pcap or pcapng file" in r.stderr
    assert "Traceback" not in r.stderr


# --- the exploration notebook on a sample run ---------------------------------------------

def test_explore_notebook_executes_on_a_sample_run(tmp_path):
    # the command the notebook itself prints (issue 24: it named an .ipynb that does not exist),
    # on a database made as the workflow makes it (`tables` of a relative run folder, then
    # `load`; issue 24: its traces were recorded relative to the checkout and the tshark
    # cell could not find them from the kernel's folder)
    rel = tmp_path / "rel.duckdb"
    subprocess.run([sys.executable, "-m", "pipeline", "tables", "data/samples/mp2-linkem", "--out",
                    str(tmp_path / "tables")], cwd=ROOT, check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "pipeline", "load", str(tmp_path / "tables"), "--db", str(rel)],
                   cwd=ROOT, check=True, capture_output=True)
    assert "python -m report.execute notebooks/explore.py" in (ROOT / "notebooks" / "explore.py").read_text()
    figs, out = tmp_path / "figures", tmp_path / "explore.out.ipynb"
    r = subprocess.run([sys.executable, "-m", "report.execute", "notebooks/explore.py", "--db", str(rel),
                        "--figures", str(figs), "--out", str(out), "-p", "RUN=mp2-linkem"],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    manifest = json.loads((figs / "manifest.json").read_text())
    assert [f["name"] for f in manifest["figures"]] == ["explore-seq", "explore-rtt", "explore-throughput"]
    assert not any(f["empty"] for f in manifest["figures"])
    nb = json.loads(out.read_text())
    text = "\n".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                     for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", []))
    assert "mp2-linkem" in text and "python -m pipeline show" in text  # outliers name their frames
    assert "Multipath TCP subtype" in text  # and the first one is dissected


# --- JupyterLab, headless --------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def test_jupyterlab_starts_headless_and_answers(seq_db, tmp_path):
    db, _ = seq_db
    port, token = _free_port(), "t" + os.urandom(8).hex()
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"), JUPYTER_DATA_DIR=str(tmp_path / "data"))
    log = (tmp_path / "lab.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "labfig.lab", "--db", str(db), "--no-browser", "--ip=127.0.0.1",
                             f"--port={port}", f"--IdentityProvider.token={token}"],
                            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        status, deadline = None, time.monotonic() + 120
        while status is None and time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / "lab.log").read_text()[-3000:]
            try:
                status = _get(f"{base}/api/status?token={token}")
            except OSError:
                time.sleep(0.5)
        assert status is not None and "started" in status, (tmp_path / "lab.log").read_text()[-3000:]
        # jupytext opens the notebooks' .py files as notebooks, and is their default viewer
        # (the server's root is the checkout: papers/<paper>/notebook.py and notebooks/explore.py)
        nb = _get(f"{base}/api/contents/notebooks/explore.py?type=notebook&token={token}")
        assert nb["type"] == "notebook" and any("parameters" in c["metadata"].get("tags", [])
                                                for c in nb["content"]["cells"])
        paper = _get(f"{base}/api/contents/papers/chen/notebook.py?type=notebook&token={token}")
        assert paper["type"] == "notebook" and len(paper["content"]["cells"]) > 5
        s = _get(f"{base}/lab/api/settings/@jupyterlab/docmanager-extension:plugin?token={token}")
        assert s["schema"]["properties"]["defaultViewers"]["default"]["python"] == "Jupytext Notebook"
        # kernels inherit the server's environment: the database given
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes().split(b"\0")
        assert f"MPTCP_LAB_DB={db}".encode() in environ
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
    assert proc.returncode is not None


def test_lab_database_defaults_to_the_samples_when_there_is_no_lab_database(tmp_path, monkeypatch):
    from labfig import lab

    (tmp_path / "data" / "samples").mkdir(parents=True)
    (tmp_path / "data" / "samples" / "sp-wifi-tbf").symlink_to(ROOT / "data" / "samples" / "sp-wifi-tbf")
    monkeypatch.setattr(lab, "ROOT", tmp_path)
    monkeypatch.delenv("MPTCP_LAB_DB", raising=False)
    db = lab.database(None)
    assert db == tmp_path / "results" / "samples.duckdb"
    assert duckdb.connect(str(db), read_only=True).sql("SELECT DISTINCT run_id FROM runs").fetchall() == [("sp-wifi-tbf",)]
    (tmp_path / "results" / "lab.duckdb").write_bytes(db.read_bytes())
    assert lab.database(None) == tmp_path / "results" / "lab.duckdb"  # the current database wins
    with pytest.raises(SystemExit, match="no such database"):
        lab.database(str(tmp_path / "nope.duckdb"))
    env = lab.environment(db)
    assert env["MPTCP_LAB_DB"] == str(db) and env["JUPYTER_CONFIG_PATH"].startswith(str(tmp_path / "config"))


def test_thin_keeps_sparse_stretches_whole_and_the_envelope_of_dense_ones():
    from pipeline.runplots import thin
    # one subflow: 20,000 packets in the first second, then 30 packets spread over 9 s
    dense = pl.DataFrame({"subflow": ["a"] * 20_000, "t_s": [i / 20_000 for i in range(20_000)],
                          "dsn": list(range(20_000))})
    sparse = pl.DataFrame({"subflow": ["a"] * 30, "t_s": [1 + 0.3 * i for i in range(30)],
                           "dsn": list(range(20_000, 20_030))})
    out, note = thin(pl.concat([dense, sparse]), ["subflow"], "t_s", ["dsn"], 1000)
    assert out.height <= 1000 and "pre-aggregated" in note
    # every packet of the sparse stretch is drawn; the dense second is drawn as its envelope
    assert set(sparse["dsn"]) <= set(out["dsn"])
    assert out.filter(pl.col("t_s") < 1).height < 1000 and 0 in set(out["dsn"])


def test_seq_legend_lists_only_the_marks_that_occur():
    from pipeline.runplots import seq_chart
    df = pl.DataFrame({"subflow": ["wifi (sf 0)"] * 3, "kind": ["data", "data", "ack"], "t_s": [0.1, 0.2, 0.3],
                       "dsn": [1, 1001, None], "ssn": [1, 1001, None], "ack": [None, None, 2001],
                       "payload_bytes": [1000, 1000, 0], "mark": ["new data", "retransmission", None],
                       "ofo_delay_ms": [None, None, None], "ofo_end_s": [None, None, None], "frame": [1, 2, 3]})
    spec = seq_chart(df, "t", []).to_dict()
    domains = [l["encoding"]["shape"]["scale"]["domain"] for v in spec["vconcat"] for l in v["layer"]
               if "shape" in l.get("encoding", {})]
    assert domains and all(d == ["new data", "retransmission"] for d in domains)


def test_throughput_rate_line_is_labelled_and_inside_the_chart():
    from pipeline.runplots import throughput_chart
    df = pl.DataFrame({"subflow": ["wifi (sf 0)", "wifi (sf 0)", "all subflows"], "t_s": [0.0, 1.0, 0.0],
                       "bytes": [1_000_000, 1_250_000, 1_000_000], "mbit_s": [8.0, 10.0, 8.0]})
    ref = pl.DataFrame({"path": ["wifi"], "rate_mbit": [10.0]})
    spec = throughput_chart(df, ref, 1.0, "t", []).to_dict()
    top = spec["layer"][0]["encoding"]["y"]["scale"]["domain"][1]
    assert top > 10.0, "the configured rate (10 Mbit/s, also the highest bin) sits below the chart's top"
    texts = [l for l in spec["layer"] if (l["mark"]["type"] if isinstance(l["mark"], dict) else l["mark"]) == "text"]
    rows = [r for d in spec["datasets"].values() for r in d if "label" in r]
    assert texts and rows[0]["label"] == "wifi configured: 10.0 Mbit/s"
