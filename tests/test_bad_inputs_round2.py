"""Bad inputs of the second round (issue 25): each case failed (hung, lost data, wrote
where it should not, or reached the network) before its fix. Every one ends with a clear
message naming the file, and keeps what the other inputs of the call are worth."""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipeline import store, tables

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "samples" / "mp2-iperf3-up"
TIMEOUT = 120  # s: a case that hangs fails instead of blocking the suite


def cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=TIMEOUT, env={**os.environ, **(env or {})})


def run_copy(tmp_path: Path, name: str = "run") -> Path:
    d = tmp_path / name
    shutil.copytree(SAMPLE, d)
    return d


def test_empty_argument_is_not_the_current_folder(tmp_path):
    """`analyze GOOD "$UNSET"`: the empty argument is skipped with a note, never read as '.'."""
    run = run_copy(tmp_path)
    cwd = run_copy(tmp_path, "cwd-looks-like-a-run")
    db = tmp_path / "lab.duckdb"
    r = cli("analyze", "-q", str(run), "", "--db", str(db), cwd=cwd)
    assert r.returncode == 0, r.stderr
    assert "empty argument" in r.stderr
    con = duckdb.connect(str(db), read_only=True)
    runs = [x for (x,) in con.execute("SELECT DISTINCT run_id FROM runs").fetchall()]
    con.close()
    assert len(runs) == 1
    r = cli("tables", "", "--out", str(tmp_path / "t"), cwd=cwd)
    assert r.returncode == 2 and "empty argument" in r.stderr and not (tmp_path / "t").exists()


def test_plot_on_an_sqlite_file_says_so_and_loads_no_extension(tmp_path):
    """DuckDB would fetch its sqlite_scanner extension from the internet to open it."""
    f = tmp_path / "lab.duckdb"
    con = sqlite3.connect(f)
    con.execute("CREATE TABLE runs (run_id TEXT)")
    con.commit()
    con.close()
    home = tmp_path / "home"
    home.mkdir()
    r = cli("plot", "seq", "r1", "--db", str(f), "-o", str(tmp_path / "x.svg"), env={"HOME": str(home)})
    assert r.returncode == 2 and "SQLite database" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (home / ".duckdb").exists() and not (tmp_path / "x.svg").exists()


def _fifo(path: Path) -> Path:
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("name", ["meta.json", "ditg-recv.txt", "linkem-wifi.csv"])
def test_a_fifo_in_a_run_folder_is_named_not_waited_on(tmp_path, name):
    run = run_copy(tmp_path)
    _fifo(run / name)
    out = tmp_path / "t"
    r = cli("tables", str(run), "--out", str(out))
    assert r.returncode == 0, r.stderr
    problems = pl.read_parquet(out / "problems.parquet")
    hit = problems.filter(pl.col("source").str.ends_with(name))
    assert hit.height == 1 and "FIFO" in hit["reason"][0]
    assert pl.read_parquet(out / "connections.parquet").height > 0, "the pcaps are still analysed"


def test_show_and_load_refuse_a_fifo(tmp_path):
    r = cli("show", str(_fifo(tmp_path / "x.pcap")), "1")
    assert r.returncode == 1 and "FIFO" in r.stderr
    good = tmp_path / "good"
    assert cli("tables", str(run_copy(tmp_path)), "--out", str(good)).returncode == 0
    bad = tmp_path / "bad"
    bad.mkdir()
    _fifo(bad / "runs.parquet")
    db = tmp_path / "lab.duckdb"
    r = cli("load", str(bad), str(good), "--db", str(db))
    assert r.returncode == 0 and "FIFO" in r.stderr and "folder skipped" in r.stderr
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM connections").fetchone()[0] > 0
    con.close()


@pytest.mark.parametrize("content", [b"not parquet at all", "typed"])
def test_load_of_garbage_or_wrongly_typed_parquet_skips_that_folder(tmp_path, content):
    good = tmp_path / "good"
    assert cli("tables", str(run_copy(tmp_path)), "--out", str(good)).returncode == 0
    bad = tmp_path / "bad"
    bad.mkdir()
    if content == "typed":  # the runs table with a column of another type
        pl.DataFrame({"run_id": ["x"], "started_at": [[1, 2]]}).write_parquet(bad / "runs.parquet")
    else:
        (bad / "runs.parquet").write_bytes(content)
    db = tmp_path / "lab.duckdb"
    r = cli("load", str(bad), str(good), "--db", str(db))
    assert r.returncode == 0 and "runs.parquet" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_load_of_the_same_run_twice_stores_it_once(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli("tables", str(run_copy(tmp_path)), "--out", str(a)).returncode == 0
    shutil.copytree(a, b)
    db = tmp_path / "lab.duckdb"
    r = cli("load", str(a), str(b), "--db", str(db))
    assert r.returncode == 0 and "loaded from" in r.stderr
    once = pl.read_parquet(a / "connections.parquet").height
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM connections").fetchone()[0] == once
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    con.close()


def test_pcaps_a_run_folder_leaves_out_are_said(tmp_path):
    """An uppercase suffix is a pcap too; a pcap named after neither end beside the ends'
    traces gets a row; per-interface traces are the end's when its merged one is missing."""
    run = run_copy(tmp_path)
    (run / "server.pcap").rename(run / "server.PCAP")
    shutil.copy(run / "client.pcap", run / "extra.pcap")
    t = tables.analyze_run(run)
    traces = set(t["connections"]["trace"].unique().to_list())
    assert traces == {str(run / "client.pcap"), str(run / "server.PCAP")}
    left = t["problems"].filter(pl.col("source") == str(run / "extra.pcap"))
    assert left.height == 1 and left["reason"][0].startswith("left out")
    only_parts = run_copy(tmp_path, "parts")
    (only_parts / "server.pcap").rename(only_parts / "server-wifi.pcap")
    t = tables.analyze_run(only_parts)
    assert str(only_parts / "server-wifi.pcap") in set(t["connections"]["trace"].to_list())
    assert t["connections"].filter(vantage="server").height > 0


def test_read_tables_names_the_file(tmp_path):
    (tmp_path / "runs.parquet").write_bytes(b"PAR1garbage")
    with pytest.raises(store.StoreError, match=r"runs\.parquet: not a readable Parquet file"):
        store.read_tables(tmp_path)


def test_tables_of_a_broken_run_never_replace_good_tables(tmp_path):
    out = tmp_path / "t"
    assert cli("tables", str(run_copy(tmp_path)), "--out", str(out)).returncode == 0
    good = pl.read_parquet(out / "connections.parquet")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "client.pcap").write_bytes(b"garbage")
    r = cli("tables", str(broken), "--out", str(out))
    assert r.returncode == 1 and "left as it was" in r.stderr
    assert pl.read_parquet(out / "connections.parquet").equals(good)


def test_tables_out_through_a_symlink_writes_its_folder(tmp_path):
    real = tmp_path / "real"
    out = tmp_path / "link"
    assert cli("tables", str(run_copy(tmp_path)), "--out", str(real)).returncode == 0
    out.symlink_to(real)
    r = cli("tables", str(run_copy(tmp_path, "again")), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert out.is_symlink() and (real / "connections.parquet").exists()
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name], "no temporary folder left"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    r = cli("tables", str(run_copy(tmp_path, "third")), "--out", str(dangling))
    assert r.returncode == 2 and "symbolic link to nothing" in r.stderr


def test_a_fixed_meta_json_leaves_no_stale_problem(tmp_path):
    run = run_copy(tmp_path)
    good_meta = (run / "meta.json").read_text()
    (run / "meta.json").write_text("{not json")
    db = tmp_path / "lab.duckdb"
    pcap = str(run / "client.pcap")
    assert cli("analyze", "-q", pcap, "--db", str(db)).returncode == 0
    (run / "meta.json").write_text(good_meta)
    assert cli("analyze", "-q", pcap, "--db", str(db)).returncode == 0
    con = duckdb.connect(str(db), read_only=True)
    stale = con.execute("SELECT count(*) FROM problems WHERE source LIKE '%meta.json'").fetchone()[0]
    # the file was stored under the folder's name while meta.json was broken: one run now
    runs = con.execute("SELECT count(DISTINCT run_id) FROM connections").fetchone()[0]
    con.close()
    assert stale == 0 and runs == 1


@pytest.mark.parametrize("patch, field", [
    ({"attempt": "two"}, "attempt"), ({"attempt": 10 ** 12}, "attempt"), ({"stalls": [1, 2]}, "stalls"),
    ({"host": "node-1"}, "host"), ({"stalls": {"stalled": "yes", "worst_late_ms": 3.5}}, "stalls.stalled"),
    ({"run_cpu": {"cpu_s": "NaN"}}, "run_cpu.cpu_s"), ({"repetition": 1 << 40}, "repetition"),
    ("deep", "nests deeper"),
])
def test_a_bad_meta_field_is_named_and_the_run_kept(tmp_path, patch, field):
    """A well-formed meta.json with one value of the wrong type or range lost the whole
    run behind an "internal error" row; now that field is named and the rest is used."""
    import json

    run = run_copy(tmp_path)
    meta = json.loads((run / "meta.json").read_text())
    if patch == "deep":
        text = json.dumps(meta)[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    else:
        text = json.dumps({**meta, **patch})
    (run / "meta.json").write_text(text)
    t = tables.analyze_run(run)
    assert t["connections"].height > 0 and t["runs"].height == 1
    reasons = t["problems"]["reason"].to_list()
    assert any(field in r for r in reasons) and not any("internal error" in r for r in reasons), reasons
    if patch != "deep":  # the other fields are used
        assert t["runs"]["campaign"][0] == meta.get("campaign")


@pytest.mark.parametrize("paths", [{"wifi": {"down": "fast", "up": 3}}, {"wifi": "10.0.1.2"}, ["wifi"]])
def test_plots_read_any_shape_of_meta_paths(tmp_path, paths):
    """`plot throughput|rtt` died on meta.json paths of an unexpected shape ('str' object
    has no attribute 'get'); they now draw without the configured lines."""
    import json

    run = run_copy(tmp_path)
    meta = json.loads((run / "meta.json").read_text())
    (run / "meta.json").write_text(json.dumps({**meta, "paths": paths}))
    db = tmp_path / "lab.duckdb"
    assert cli("analyze", "-q", str(run), "--db", str(db)).returncode == 0
    con = duckdb.connect(str(db), read_only=True)
    run_id = con.execute("SELECT run_id FROM runs").fetchone()[0]
    con.close()
    for kind in ("throughput", "rtt"):
        r = cli("plot", kind, run_id, "--db", str(db), "-o", str(tmp_path / f"{kind}.json"))
        assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("sql, says", [
    ("CREATE TABLE run_metrics (x INTEGER)", "where the lab keeps a view"),
    ("CREATE VIEW problems AS SELECT 1 AS x", "is not the lab's"),
    ("CREATE TABLE runs (run_id INTEGER, campaign INTEGER)", "columns of other types"),
])
def test_a_database_with_look_alike_objects_is_refused(tmp_path, sql, says):
    """A user's table or view with one of our names, or our table with other column types:
    a clear refusal (exit 2), the file untouched (a traceback, or rows written into it)."""
    db = tmp_path / "theirs.duckdb"
    con = duckdb.connect(str(db))
    con.execute(sql)
    con.close()
    before = db.read_bytes()
    r = cli("analyze", "-q", str(SAMPLE / "server.pcap"), "--db", str(db))
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert db.read_bytes() == before


@pytest.mark.parametrize("damage", ["cut", "garbage", "empty-db"])
def test_a_damaged_cached_empty_store_is_made_again(tmp_path, damage):
    """The pipeline keeps an empty store in ~/.cache/mptcp-lab ("delete it any time"); a
    damaged one broke every new database until found."""
    cache = tmp_path / "cache"
    env = {"XDG_CACHE_HOME": str(cache)}
    assert cli("analyze", "-q", str(SAMPLE / "server.pcap"), "--db", str(tmp_path / "a.duckdb"), env=env).returncode == 0
    (kept,) = list((cache / "mptcp-lab").glob("empty-store-*.duckdb"))
    if damage == "cut":
        kept.write_bytes(kept.read_bytes()[:5000])
    elif damage == "garbage":
        kept.write_bytes(b"\0" * 8 + b"DUCK" + os.urandom(20000))
    else:
        kept.unlink()
        duckdb.connect(str(kept)).close()  # a valid DuckDB file without our tables
    r = cli("analyze", "-q", str(SAMPLE / "server.pcap"), "--db", str(tmp_path / "b.duckdb"), env=env)
    assert r.returncode == 0, r.stderr
    con = duckdb.connect(str(tmp_path / "b.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM connections").fetchone()[0] > 0
    con.close()
    r = cli("analyze", "-q", str(SAMPLE / "server.pcap"), "--db", str(tmp_path / "c.duckdb"), env=env)
    assert r.returncode == 0, r.stderr


def test_show_dissects_a_capture_cut_short(tmp_path):
    """`analyze` reads a capture whose last record is cut short; `show` could not dissect
    any of its frames (tshark refuses the file whole) and printed pyshark's advice."""
    if not shutil.which("tshark") or not shutil.which("editcap"):
        pytest.skip("tshark/editcap not installed")
    cut = tmp_path / "cut.pcap"
    cut.write_bytes((SAMPLE / "client.pcap").read_bytes()[:-10])
    r = cli("show", str(cut), "3")
    assert r.returncode == 0 and r.stdout.startswith("Frame 3:"), r.stderr
    r = cli("show", str(cut), "100000")
    assert r.returncode == 1 and "no frame 100000" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_show_dissects_a_modified_pcap_that_analyze_reads(tmp_path):
    """issue 43: a "modified" pcap (Kuznetzov's, 24-byte record headers), which `analyze`
    reads, was refused by `show` as no pcap; a frame number past 2^32 crashed tshark."""
    if not shutil.which("tshark") or not shutil.which("editcap"):
        pytest.skip("tshark/editcap not installed")
    mod = tmp_path / "mod.pcap"
    subprocess.run(["editcap", "-F", "modpcap", str(SAMPLE / "client.pcap"), str(mod)], check=True,
                   capture_output=True)
    assert mod.read_bytes()[:4] == bytes.fromhex("34cdb2a1")
    r = cli("show", str(mod), "3")
    assert r.returncode == 0 and r.stdout.startswith("Frame 3:"), r.stderr
    r = cli("show", str(mod), "4294967296")
    assert r.returncode != 0 and "at most 4294967295" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_huge_record_mid_file_is_damage_not_a_tail_cut_short(tmp_path):
    """issue 43: a record header claiming 2^31 bytes mid-file (a snap length of 2^32 - 1 in
    the file header lets it past the size check) was called "the last record is cut
    short"; both decoders now say where the file breaks."""
    import struct
    data = bytearray((SAMPLE / "client.pcap").read_bytes())
    data[16:20] = struct.pack("<I", 0xFFFFFFFF)  # the file header's snap length
    off, n = 24, 0
    while n < 10:  # the 11th record's captured length
        off += 16 + struct.unpack_from("<I", data, off + 8)[0]
        n += 1
    data[off + 8:off + 16] = struct.pack("<II", 1 << 31, 1 << 31)
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(bytes(data))
    from pipeline import capfile
    sc = capfile.scan(bad)
    assert sc.records == 10 and sc.damaged_at == off and sc.tail_missing == 0 and "past the end" in sc.damage
    for decoder in ("native", "tshark"):
        r = cli("analyze", str(bad), "--decoder", decoder, "--vantage", "client", "--db", str(tmp_path / f"{decoder}.duckdb"))
        assert "cut short" not in r.stderr and "past the end of the file" in r.stderr, (decoder, r.stderr)


@pytest.mark.parametrize("folder_first", [True, False])
def test_a_loose_pcap_named_like_a_run_stays_apart_from_it(tmp_path, folder_first):
    """A loose pcap whose name is a run folder's run id: stored as its own run, never
    merged into the run nor deleted when the run folder is analysed again."""
    run = run_copy(tmp_path, "mp2-iperf3-up")  # meta.json's run_id
    loose_dir = tmp_path / "elsewhere"
    loose_dir.mkdir()
    loose = loose_dir / "mp2-iperf3-up.pcap"
    shutil.copy(run / "client.pcap", loose)
    db = tmp_path / "lab.duckdb"
    order = [run, loose] if folder_first else [loose, run]
    for item in order + [run]:  # the run folder analysed again at the end
        r = cli("analyze", "-q", str(item), "--db", str(db))
        assert r.returncode == 0, r.stderr
    con = duckdb.connect(str(db), read_only=True)
    by_run = dict(con.execute("SELECT run_id, count(DISTINCT trace) FROM connections GROUP BY run_id").fetchall())
    assert by_run == {"mp2-iperf3-up": 2, f"mp2-iperf3-up (loose pcap {loose})": 1}, by_run
    loose_rows = con.execute("SELECT count(*) FROM connections WHERE trace = ?", [str(loose)]).fetchall()[0][0]
    assert loose_rows > 0
