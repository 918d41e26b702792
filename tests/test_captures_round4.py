"""Other people's captures, round 4 (issue 43): the cases fixed so far, each by construction.
(The multi-homed ``tcpdump -i any`` capture: tests/test_timeorder.py.)"""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from pipeline.assemble import canonical_addr, with_paths
from pipeline.cli import _path_map


def test_a_path_labels_its_address_in_any_spelling():
    sf = pl.DataFrame({"client_addr": ["2001:db8::2", "10.0.1.2", "2001:db8::3"]})
    out = with_paths(sf, {"2001:DB8:0:0:0:0:0:2": "wifi", " 10.0.1.2": "lte"})
    assert out["path"].to_list() == ["wifi", "lte", "2001:db8::3"]
    assert canonical_addr("FE80:0000::1") == "fe80::1" and canonical_addr("not-an-address") == "not-an-address"


def test_one_address_given_two_labels_is_refused():
    assert _path_map(["wifi=2001:db8::2", "wifi=2001:DB8::2"]) == {"2001:db8::2": "wifi"}
    with pytest.raises(SystemExit, match="two labels"):
        _path_map(["wifi=10.0.1.2", "lte=10.0.1.2"])


def test_one_bad_cell_in_an_emulator_log_loses_its_row_not_the_log(tmp_path):
    from pipeline import tables
    d = tmp_path / "run"
    d.mkdir()
    (d / "linkem-wifi.csv").write_text(
        "direction,packet_id,size_bytes,arrival_s,departure_s,dropped,reason\n"
        "down,0,1514,10.0,10.031,0,\n"
        "down,one,1514,10.001,10.047,0,\n"      # a cell that is not its column's type
        "down,2,1514,10.002,nan,0,\n"           # a departure that is not a time
        "down,3,1514,10.003,,1,queue\n")
    lt, problems = tables.link_truth(d, "r")
    assert lt["packet_id"].to_list() == [0, 3]
    assert len(problems) == 1 and "2 of 4 rows are not valid linkem records" in problems[0]["reason"]


@pytest.mark.parametrize("field", ["order_index", "size_bytes", "repetition", "campaign_seed"])
def test_a_401_digit_integer_loses_its_field_not_the_run(field):
    from pipeline import metadoc, tables
    meta = {"run_id": "r1", "campaign": "chen", "mode": "MP-2", field: 10 ** 400}
    kept, notes = metadoc.check(meta)
    assert field not in kept and any(n.startswith(field) and "out of range" in n for n in notes)
    assert metadoc._num(10 ** 400) is None and metadoc._int(-(10 ** 30)) is None
    row = tables.runs_row(kept, "r1").to_dicts()[0]
    assert row["run_id"] == "r1"


def test_a_lone_surrogate_in_a_text_field_is_replaced_not_fatal():
    import json

    from pipeline import metadoc, tables
    meta = json.loads('{"run_id": "r1", "campaign": "chen", "scenario": "att\\ud800", "mode": "MP-2"}')
    kept, notes = metadoc.check(meta)
    assert kept["scenario"] == "att\ufffd" and any("lone surrogate" in n for n in notes)
    row = tables.runs_row(kept, "r1").to_dicts()[0]
    assert row["scenario"] == "att\ufffd"


def test_ditg_lines_with_bad_seconds_or_huge_ids_are_skipped_not_fatal():
    from pipeline import ditg
    good = "Flow>0001 Seq> 1 txTime>8:19:48.882029 rxTime>8:19:48.882078 Size> 400\n"
    text = (good + "Flow>0001 Seq> 2 txTime>8:19:48.88.2029 rxTime>8:19:48.9 Size> 400\n"
            f"Flow>{2 ** 40} Seq> 3 txTime>8:19:49.0 rxTime>8:19:49.1 Size> 400\n"
            f"Flow>0001 Seq> 4 txTime>8:19:49.0 rxTime>8:19:49.1 Size> {2 ** 40}\n")
    df, problems = ditg.app_latency(text, "r1")
    assert df["seq"].to_list() == [1]
    assert len(problems) == 1 and "3 of 4 lines are not D-ITG packet lines" in problems[0]["reason"]


@pytest.mark.parametrize("when", ["0001-01-01T00:30:00+05:00", "9999-12-31T23:59:59-05:00"])
def test_a_start_time_at_the_ends_of_the_calendar_is_left_empty_not_fatal(tmp_path, when):
    import json

    from pipeline import tables
    d = tmp_path / "run"
    d.mkdir()
    (d / "meta.json").write_text(json.dumps({"run_id": "r1", "campaign": "ditg", "started_at": when}))
    meta, problems = tables.read_meta(d)
    assert "started_at" not in meta and meta["run_id"] == "r1"
    assert any("started_at" in p["reason"] and "left empty" in p["reason"] for p in problems)


def test_null_run_id_start_time_and_paths_mean_absent(tmp_path):
    """meta.json's schema says null = absent: a run whose run_id, started_at, paths and
    labels are null is read as one without them (the folder names it), no problem raised."""
    import json

    from pipeline import tables
    d = tmp_path / "run-null"
    d.mkdir()
    (d / "meta.json").write_text(json.dumps({"run_id": None, "started_at": None, "paths": None, "labels": None,
                                             "campaign": "chen", "mode": "MP-2"}))
    meta, problems = tables.read_meta(d)
    assert problems == [] and meta == {"campaign": "chen", "mode": "MP-2"}
    assert tables.run_identity(d, meta) == "run-null"
    row = tables.runs_row(meta, "run-null").to_dicts()[0]
    assert row["run_id"] == "run-null" and row["started_at"] is None and row["mode"] == "MP-2"


def test_a_snap_length_that_keeps_only_the_ports_loses_those_packets_not_the_trace(tmp_path):
    """tcpdump's old -s 68 on a capture with IPv4 and IPv6 (issue 43): the IPv6 frames
    keep 14 bytes of TCP header (ports, no stream or flags for the decoder, as tshark),
    the IPv4 ones their whole header. The IPv6 packets are left out and said, the IPv4
    connection analysed (was: an internal error, the whole trace lost)."""
    from pcapgen import write_pcap_bytes
    from test_decoders import link_frame, mptcp_exchange

    from pipeline import tables
    v4, v6 = mptcp_exchange(1, True), mptcp_exchange(0, False, ipv6=True)
    pkts = sorted(v4 + v6, key=lambda p: float(p.time))
    frames = [(float(p.time), link_frame(p, "ether"), None) for p in pkts]
    pcap = write_pcap_bytes(tmp_path / "server.pcap", frames, 1, snaplen=68)
    t, problems = tables.analyze_trace(pcap, "r", "server")
    said = [p["reason"] for p in problems if "kept only the TCP ports" in p["reason"]]
    assert len(said) == 1 and f"of {len(v6)} of {len(pkts)} packets" in said[0], [p["reason"] for p in problems]
    assert not any("internal error" in p["reason"] for p in problems)
    sub = t["subflows"]
    assert sub.height > 0 and set(sub["client_addr"].to_list()) <= {"10.1.0.2", "10.2.0.2"}


def _analyze(db, *extra: str):
    import subprocess
    import sys
    from pathlib import Path
    sample = Path(__file__).resolve().parents[1] / "data" / "samples" / "mp2-iperf3-up"
    return subprocess.run([sys.executable, "-m", "pipeline", "analyze", "-q", str(sample), "--db", str(db), *extra],
                          capture_output=True, text=True, timeout=300)


def test_a_lock_path_that_is_a_link_or_a_folder_is_refused_untouched(tmp_path):
    """The writer lock beside --db is never followed through a link (its target would be
    truncated) and a folder of that name is named, not a traceback (issue 43)."""
    precious = tmp_path / "precious.txt"
    precious.write_text("my notes")
    db = tmp_path / "lab.duckdb"
    (tmp_path / ".lab.duckdb.lock").symlink_to(precious)
    r = _analyze(db)
    assert r.returncode == 2 and "is a symbolic link" in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert precious.read_text() == "my notes" and not db.exists()
    (tmp_path / ".lab.duckdb.lock").unlink()
    (tmp_path / ".lab.duckdb.lock").mkdir()
    r = _analyze(db)
    assert r.returncode == 2 and "is a folder" in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]


def test_files_that_merely_look_like_our_temporaries_are_kept(tmp_path):
    """A user's `.lab.duckdb.backup.tmp` and a folder `.lab.duckdb.old.tmp` beside --db
    are not a killed writer's copies: kept, no traceback (issue 43)."""
    db = tmp_path / "lab.duckdb"
    backup = tmp_path / ".lab.duckdb.backup.tmp"
    backup.write_text("my backup")
    (tmp_path / ".lab.duckdb.old.tmp").mkdir()
    for _ in range(2):  # the second call writes under the lock into an existing database
        r = _analyze(db)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert backup.read_text() == "my backup" and (tmp_path / ".lab.duckdb.old.tmp").is_dir()


def test_load_of_nothing_usable_exits_1_and_makes_no_database(tmp_path):
    """`load` of folders without a run's tables (issue 43: exited 0 with an empty
    database) says so, exits 1, creates nothing and leaves an existing database alone."""
    import subprocess
    import sys
    empty, bad = tmp_path / "empty", tmp_path / "bad"
    empty.mkdir(), bad.mkdir()
    (bad / "runs.parquet").write_bytes(b"not parquet at all")
    db = tmp_path / "lab.duckdb"
    r = subprocess.run([sys.executable, "-m", "pipeline", "load", str(empty), str(bad), "--db", str(db)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "nothing usable in 2 folder(s)" in r.stderr and "not created" in r.stderr, r.stderr
    assert not db.exists()
    assert _analyze(db).returncode == 0
    before = db.stat().st_mtime_ns, db.stat().st_size
    r = subprocess.run([sys.executable, "-m", "pipeline", "load", str(empty), "--db", str(db)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "left untouched" in r.stderr and (db.stat().st_mtime_ns, db.stat().st_size) == before


def test_a_users_view_named_like_a_lab_table_is_refused_by_name(tmp_path):
    """A view of the user's called `problems` in --db (issue 43: a BinderException)."""
    import duckdb
    db = tmp_path / "lab.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE notes (run_id VARCHAR, reason VARCHAR)")
    con.execute("CREATE VIEW problems AS SELECT * FROM notes")
    con.close()
    r = _analyze(db)
    assert r.returncode == 2 and "holds a view 'problems' of its own, which is not the lab's" in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT table_type FROM information_schema.tables WHERE table_name = 'problems'").fetchone() \
        == ("VIEW",)
    con.close()


def test_names_duckdb_cannot_take_are_refused_in_one_line(tmp_path):
    """Non-UTF-8 --db, --out and run-folder names, and a --db name too long for the lock
    file beside it (issue 43: tracebacks)."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path
    sample = Path(__file__).resolve().parents[1] / "data" / "samples" / "mp2-iperf3-up"
    odd = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/run-\xff"))
    shutil.copytree(sample, odd)

    def pipeline(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True, timeout=300)

    r = pipeline("analyze", "-q", str(odd), "--db", str(tmp_path / "lab.duckdb"))
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 1 and "not UTF-8" in err and "Traceback" not in err, err[-2000:]
    r = pipeline("analyze", "-q", str(sample), "--db", os.fsdecode(os.fsencode(str(tmp_path)) + b"/lab-\xff.duckdb"))
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 2 and "not UTF-8" in err and len(err.strip().splitlines()) == 1, err[-2000:]
    r = pipeline("tables", str(sample), "--out", os.fsdecode(os.fsencode(str(tmp_path)) + b"/t-\xff"))
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 2 and "not UTF-8" in err and "Traceback" not in err, err[-2000:]
    r = pipeline("analyze", "-q", str(sample), "--db", str(tmp_path / ("x" * 240 + ".duckdb")))
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 2 and "bytes" in err and len(err.strip().splitlines()) == 1, err[-2000:]
    assert not list(tmp_path.glob("*.duckdb*")) and not list(tmp_path.glob(".x*"))


@pytest.fixture
def small_fs(tmp_path):
    """A 400-kB tmpfs (root only): too small for a lab database."""
    import os
    import subprocess
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tmpfs")
    d = tmp_path / "small"
    d.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(d)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", str(d)])


def test_a_full_or_read_only_file_system_is_said_in_one_line(small_fs, tmp_path):
    """No space left, or a file system made read-only under an existing database (issue
    43: a 17-line FatalException, an OSError with exit 1): exit 2, one line, the database
    as it was."""
    import subprocess
    db = small_fs / "lab.duckdb"
    r = _analyze(db)
    assert r.returncode == 2 and "cannot write" in r.stderr and "nothing written" in r.stderr, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) <= 2, r.stderr[-2000:]
    assert not db.exists() and not [f for f in small_fs.iterdir() if f.name.endswith(".tmp")]
    ok = tmp_path / "ro"
    ok.mkdir()
    assert _analyze(ok / "lab.duckdb").returncode == 0
    before = (ok / "lab.duckdb").read_bytes()
    subprocess.run(["mount", "--bind", str(ok), str(ok)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(ok)], check=True)
        r = _analyze(ok / "lab.duckdb")
        assert r.returncode == 2 and "Traceback" not in r.stderr and "read-only" in r.stderr, r.stderr[-2000:]
    finally:
        subprocess.run(["umount", "-l", str(ok)])
    assert (ok / "lab.duckdb").read_bytes() == before


def test_a_tie_of_handshake_votes_is_broken_by_their_margins():
    """Half the handshakes each way (issue 43: a 280k-packet server capture reported "no
    complete handshake"): the summed round-trip margins decide; equal margins leave it
    open, said as such."""
    from pipeline import assemble
    sf = pl.DataFrame({"t_syn": [0.0, 10.0], "t_synack": [0.050, 10.002], "t_ack3": [0.051, 10.005],
                       "reversed": [False, False]})
    assert assemble.vantage_from_handshakes(sf) == "client"  # +49 ms against -1 ms
    server = sf.with_columns(t_synack=pl.Series([0.001, 10.002]), t_ack3=pl.Series([0.041, 10.003]))
    assert assemble.vantage_from_handshakes(server) == "server"  # -39 ms against +1 ms
    even = sf.with_columns(t_synack=pl.Series([0.010, 10.020]), t_ack3=pl.Series([0.030, 10.030]))
    assert assemble.vantage_from_handshakes(even) is None  # -10 ms and +10 ms
    v, notes = assemble.which_vantage(even, None, "trace.pcap")
    assert v is None and "timing points both ways equally" in notes[0]
    v, notes = assemble.which_vantage(even.with_columns(t_ack3=pl.lit(None, pl.Float64)), None, "trace.pcap")
    assert v is None and "no complete handshake" in notes[0]


def _sample_copy(dest):
    import shutil
    from pathlib import Path
    sample = Path(__file__).resolve().parents[1] / "data" / "samples" / "mp2-iperf3-up"
    shutil.copytree(sample, dest)
    return dest


def _runs(db) -> list[str]:
    import duckdb
    con = duckdb.connect(str(db), read_only=True)
    try:
        return sorted(r for (r,) in con.execute("SELECT DISTINCT run_id FROM connections").fetchall())
    finally:
        con.close()


def test_two_runs_with_one_name_stay_two_and_one_run_replaces_itself(tmp_path):
    """campaign-a/x then campaign-b/x (one meta.json run id), in two calls and in one
    (issue 43: the later replaced the earlier, or was skipped): the second is stored as
    its own run, named after the folder above it, with a row; the same folder analysed
    again still replaces itself."""
    import json
    import subprocess
    import sys
    a = _sample_copy(tmp_path / "campaign-a" / "x")
    b = _sample_copy(tmp_path / "campaign-b" / "x")
    name = json.loads((a / "meta.json").read_text())["run_id"]
    db = tmp_path / "lab.duckdb"

    def analyze(*inputs, db=db):
        r = subprocess.run([sys.executable, "-m", "pipeline", "analyze", "-q", *map(str, inputs), "--db", str(db)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        return r

    analyze(a)
    analyze(b)
    assert _runs(db) == sorted([name, f"{name}@campaign-b"])
    analyze(a)
    analyze(b)  # each folder again: replaces its own run, no third
    assert _runs(db) == sorted([name, f"{name}@campaign-b"])
    one = tmp_path / "one.duckdb"
    r = analyze(a, b, db=one)
    assert _runs(one) == sorted([name, f"{name}@campaign-b"]) and "stored as" in r.stderr


def test_two_folders_client_pcaps_given_alone_stay_two_runs(tmp_path):
    """a/x/client.pcap then b/x/client.pcap: both take run id x (their folder's name);
    the second is another run (x@b), not a second trace of the first."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path
    sample = Path(__file__).resolve().parents[1] / "data" / "samples" / "mp2-iperf3-up" / "client.pcap"
    for d in ("a", "b"):
        (tmp_path / d / "x").mkdir(parents=True)
        shutil.copy(sample, tmp_path / d / "x" / "client.pcap")
    db = tmp_path / "lab.duckdb"
    for d in ("a", "b"):
        r = subprocess.run([sys.executable, "-m", "pipeline", "analyze", "-q", str(tmp_path / d / "x" / "client.pcap"),
                            "--db", str(db)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
    assert _runs(db) == ["x", "x@b"]


def test_a_ctrl_c_a_native_call_turned_into_an_error_still_stops_and_stores_nothing(tmp_path, monkeypatch):
    """issue 43: a Ctrl-C that lands in DuckDB comes back as its InterruptException, which
    the per-input catch-all took for a defect of the file: the analysis ran on, stored its
    tables and exited 0. Now the call stops (exit 130) and the database stays as it was."""
    import shutil

    import duckdb

    from pipeline import cli, procs, tables

    sample = Path(__file__).resolve().parents[1] / "data" / "samples" / "mp2-iperf3-up"
    run = tmp_path / "run"
    shutil.copytree(sample, run)
    db = tmp_path / "lab.duckdb"
    assert cli.main(["analyze", "-q", str(run), "--db", str(db)]) == 0
    before = db.read_bytes()

    def interrupted(*a, **k):
        procs._INTERRUPTED.set()  # what the command line's SIGINT handler does
        raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")

    monkeypatch.setattr(tables, "read_packets", interrupted)
    monkeypatch.setattr(tables.streamed, "analyze", interrupted)
    try:
        assert cli.main(["analyze", "-q", str(run), "--db", str(db)]) == 130
    finally:
        procs._INTERRUPTED.clear()
    assert db.read_bytes() == before
