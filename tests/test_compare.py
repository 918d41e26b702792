"""A researcher's own captures and the lab's statistics (issue: "A researcher with their own
captures cannot use the lab's statistics"): labels given to loose pcaps and run folders
(``--label KEY=VALUE``, ``--labels FILE.csv``, meta.json ``labels``) become ``run_labels``
rows beside a ``runs`` row; ``mptcp-lab compare --by KEY`` prints per value of the label n
and each metric's mean with its 95 % interval, the differences and ratios with theirs
(findings.stats), and writes the figure; a bad label is a one-line error before any work."""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

from findings import compare as fc
from findings import stats
from labdb import Lab
from pipeline import derived

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data" / "samples"
TIMEOUT = 300  # s
NUMBER = r"-?[\d.]+(?:e[-+]\d+)?"
INTERVAL = rf"\[{NUMBER}, {NUMBER}\]"


def run(module: str, *args: str, cache: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if cache is not None:  # the kept empty store (store._empty_store) goes here, not to the user's cache
        env["XDG_CACHE_HOME"] = str(cache)
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=env,
                          timeout=TIMEOUT)


def pipeline(*args: str, cache: Path | None = None) -> subprocess.CompletedProcess:
    return run("pipeline", *args, cache=cache)


def mptcp_lab(*args: str) -> subprocess.CompletedProcess:
    """The console script's entry (pyproject: mptcp-lab = report.cli:main)."""
    return run("report.cli", *args)


def q(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def labels_of(db: Path, run_id: str) -> list[tuple]:
    return q(db, f"""SELECT "key", "value", origin, overrides FROM run_labels WHERE run_id = '{run_id}' ORDER BY 1""")


# --- labels ---------------------------------------------------------------------------

def test_labels_reach_run_labels_for_a_loose_pcap(tmp_path):
    loose = tmp_path / "mine.pcap"  # no meta.json beside it: a run of its own, id "mine"
    shutil.copy(SAMPLES / "mp2-linkem" / "client.pcap", loose)
    db, cache = tmp_path / "lab.duckdb", tmp_path / "cache"
    base = ["analyze", "-q", str(loose), "--vantage", "client", "--db", str(db)]
    r = pipeline(*base, "--label", "cc=lia", "--label", "site=lab1", cache=cache)
    assert r.returncode == 0, r.stderr[-3000:]
    assert labels_of(db, "mine") == [("cc", "lia", "--label", None), ("site", "lab1", "--label", None)]
    # a runs row of its own (no meta.json: none kept in it), so the derived views see the run
    assert q(db, "SELECT run_id, meta_json FROM runs") == [("mine", None)]
    assert q(db, "SELECT count(*) FROM run_metrics WHERE run_id = 'mine' AND download_time_s > 0") == [(1,)]
    # analysed again with other labels: the run's labels are this call's; one runs row
    r = pipeline(*base, "--label", "cc=olia", cache=cache)
    assert r.returncode == 0, r.stderr[-3000:]
    assert labels_of(db, "mine") == [("cc", "olia", "--label", None)]
    assert q(db, "SELECT count(*) FROM runs") == [(1,)]
    # and without labels: the trace's rows replaced, the run's labels kept
    r = pipeline(*base, cache=cache)
    assert r.returncode == 0, r.stderr[-3000:]
    assert labels_of(db, "mine") == [("cc", "olia", "--label", None)]
    assert q(db, "SELECT count(*) FROM runs") == [(1,)]
    assert q(db, "SELECT count(DISTINCT trace) FROM connections WHERE run_id = 'mine'") == [(1,)]


def test_meta_json_labels_and_the_command_line_over_them(tmp_path):
    run_dir = tmp_path / "mp2-tbf"
    shutil.copytree(SAMPLES / "mp2-tbf", run_dir)
    meta = json.loads((run_dir / "meta.json").read_text())
    meta["labels"] = {"cc": "cubic", "site": "home", "phone": 7, "bad-key": "x"}
    (run_dir / "meta.json").write_text(json.dumps(meta))
    table = tmp_path / "labels.csv"
    table.write_text("run,cc,firmware\nmp2-tbf,reno,\n\nno-such-run,lia,1.2\n")
    db = tmp_path / "lab.duckdb"
    r = pipeline("analyze", "-q", str(run_dir), "--label", "cc=lia", "--label", "site=lab", "--labels", str(table),
                 "--db", str(db), cache=tmp_path / "cache")
    assert r.returncode == 0, r.stderr[-3000:]
    # the file's row for the run wins over --label, both over meta.json (whose value is kept)
    assert labels_of(db, "mp2-tbf") == [("cc", "reno", "--labels", "cubic"), ("phone", "7", "meta.json", None),
                                        ("site", "lab", "--label", "home")]
    assert "'no-such-run'" in r.stderr, r.stderr
    reasons = [x for (x,) in q(db, "SELECT reason FROM problems WHERE run_id = 'mp2-tbf'")]
    assert any("labels" in x and "'bad-key'" in x for x in reasons), reasons
    # without labels on the command line: meta.json's alone
    r = pipeline("analyze", "-q", str(run_dir), "--db", str(db), cache=tmp_path / "cache")
    assert r.returncode == 0, r.stderr[-3000:]
    assert labels_of(db, "mp2-tbf") == [("cc", "cubic", "meta.json", None), ("phone", "7", "meta.json", None),
                                        ("site", "home", "meta.json", None)]


def test_tables_and_load_carry_the_labels(tmp_path):
    loose = tmp_path / "mine.pcap"
    shutil.copy(SAMPLES / "sp-wifi-tbf" / "client.pcap", loose)
    out, db = tmp_path / "t", tmp_path / "lab.duckdb"
    r = pipeline("tables", str(loose), "--vantage", "client", "--label", "cc=reno", "--out", str(out))
    assert r.returncode == 0, r.stderr[-3000:]
    assert pl.read_parquet(out / "run_labels.parquet").rows() == [("mine", "cc", "reno", "--label", None)]
    r = pipeline("load", str(out), "--db", str(db), cache=tmp_path / "cache")
    assert r.returncode == 0, r.stderr[-3000:]
    assert labels_of(db, "mine") == [("cc", "reno", "--label", None)]
    assert q(db, "SELECT run_id FROM runs") == [("mine",)]


@pytest.mark.parametrize("args, said", [
    (["--label", "nokey"], "--label 'nokey': expected KEY=VALUE"),
    (["--label", "=lia"], "--label '=lia': the key is empty"),
    (["--label", "1cc=lia"], "the key '1cc' is not an identifier"),
    (["--label", "c-c=lia"], "the key 'c-c' is not an identifier"),
    (["--label", "cc="], "--label 'cc=': the value is empty"),
    (["--label", "cc=lia", "--label", "cc=olia"], "--label 'cc=olia'"),
    (["--labels", "missing.csv"], "missing.csv: no such file"),
], ids=["no-equals", "empty-key", "digit-key", "dash-key", "empty-value", "twice", "no-file"])
def test_a_bad_label_is_a_one_line_error_before_any_work(tmp_path, args, said):
    args = [str(tmp_path / a) if a.endswith(".csv") else a for a in args]
    one_line_refusal(tmp_path, args, said)


@pytest.mark.parametrize("text, said", [
    ("id,cc\nmine,lia\n", "the first column is 'id', not 'run'"),
    ("run,c-c\nmine,lia\n", "the column 'c-c' is not an identifier"),
    ("run,cc\nmine,lia\nmine,olia\n", "run 'mine' has two rows"),
    ("run\nmine\n", "no label column"),
    ("", "empty"),
], ids=["no-run-column", "bad-column", "run-twice", "no-key", "empty"])
def test_a_bad_labels_file_is_a_one_line_error_before_any_work(tmp_path, text, said):
    f = tmp_path / "labels.csv"
    f.write_text(text)
    one_line_refusal(tmp_path, ["--labels", str(f)], f"--labels {f}: {said}")


def one_line_refusal(tmp_path: Path, args: list[str], said: str) -> None:
    db, out = tmp_path / "lab.duckdb", tmp_path / "t"
    for cmd in (["analyze", "-q", str(SAMPLES / "mp2-tbf"), "--db", str(db)],
                ["tables", str(SAMPLES / "mp2-tbf"), "--out", str(out)]):
        r = pipeline(*cmd, *args, cache=tmp_path / "cache")
        err = r.stderr.strip().splitlines()
        assert r.returncode == 2, r.stderr[-2000:]
        assert len(err) == 1 and err[0].startswith("error: --label") and said in err[0], r.stderr
    assert not db.exists() and not out.exists()


# --- compare on the samples -----------------------------------------------------------

LOOSE = {"mp2-linkem": "linkem-client.pcap", "mp2-tbf": "tbf-client.pcap", "sp-wifi-tbf": "wifi-client.pcap"}


@pytest.fixture(scope="module")
def samples_db(tmp_path_factory) -> Path:
    """Three sample run folders and copies of their client traces as loose pcaps, in two
    labelled sets of three runs (setup a, setup b), through one --labels file."""
    tmp = tmp_path_factory.mktemp("compare")
    for run_dir, name in LOOSE.items():
        shutil.copy(SAMPLES / run_dir / "client.pcap", tmp / name)
    (tmp / "labels.csv").write_text("run,setup\nmp2-linkem,a\nmp2-tbf,a\nlinkem-client,a\n"
                                    "sp-wifi-tbf,b\nwifi-client,b\ntbf-client,b\n")
    db = tmp / "lab.duckdb"
    r = pipeline("analyze", "-q", *(str(SAMPLES / d) for d in LOOSE), *(str(tmp / n) for n in LOOSE.values()),
                 "--path", "wifi=10.1.0.2", "--path", "lte=10.2.0.2", "--labels", str(tmp / "labels.csv"),
                 "--db", str(db), cache=tmp / "cache")
    assert r.returncode == 0, r.stderr[-3000:]
    return db


def test_every_labelled_sample_is_a_run_with_its_label(samples_db):
    assert q(samples_db, """SELECT "value", count(*) FROM run_labels WHERE "key" = 'setup' GROUP BY 1 ORDER BY 1""") \
        == [("a", 3), ("b", 3)]
    assert q(samples_db, "SELECT count(*) FROM runs") == [(6,)]
    assert q(samples_db, "SELECT count(*) FROM run_metrics WHERE download_time_s > 0") == [(6,)]


def test_compare_prints_n_and_intervals_per_group_and_writes_a_figure(samples_db, tmp_path):
    fig = tmp_path / "setup.svg"
    r = mptcp_lab("compare", "--db", str(samples_db), "--by", "setup", "--metric", "download_time_s",
                  "--metric", "share_pct", "-o", str(fig))
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout
    assert "runs by setup: a (3 runs), b (3 runs)" in out, out
    lines = out.splitlines()
    first = next(i for i, x in enumerate(lines) if x.startswith("download time (s)"))
    for group in ("a", "b"):  # each group's mean over its 3 runs, with its interval (marked: n < 5)
        mean = rf"setup = {group}\s+3\s+mean {NUMBER}\s+{INTERVAL} \*$"
        assert any(re.search(mean, x) for x in lines[first:first + 4]), out
    assert re.search(rf"b - a\s+3 vs 3\s+difference {NUMBER}\s+{INTERVAL} \*", out), out
    assert re.search(rf"b / a\s+3 vs 3\s+ratio {NUMBER}\s+{INTERVAL} \*", out), out
    assert any(x.startswith("cellular share (%)") for x in lines), out
    assert "fewer than 5 runs" in r.stderr and "n >= 5" in r.stderr, r.stderr
    svg = fig.read_text()
    assert "<svg" in svg and "download time (s)" in svg and "cellular share (%)" in svg
    # interactive, self-contained
    page = tmp_path / "setup.html"
    r = mptcp_lab("compare", "--db", str(samples_db), "--by", "setup", "--metric", "rtt_ms", "-o", str(page))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "RTT (ms)" in page.read_text()


# --- compare's statistics, on values chosen by hand (tests/labdb.py) ------------------

TIMES = {"coupled": [10.0, 11.0, 12.0, 13.0, 14.0], "decoupled": [20.0, 22.0, 27.0]}


def chosen_db(tmp_path: Path) -> Path:
    """Runs labelled cc (meta.json labels) with the download times of TIMES, and one stalled
    run of 'coupled' that compare leaves out."""
    lab = Lab()
    paths = {"wifi": (30.0, 0.0, 20.0), "lte": (60.0, 0.0, 10.0)}
    for cc, times in [*TIMES.items(), ("coupled", [99.0])]:
        for t in times:
            lab.run("mine", "s", "MP-2", 1_000_000, paths=paths, download_s=t, stalled=t == 99.0)
            row = lab.rows["runs"][-1]
            row["meta_json"] = json.dumps({**json.loads(row["meta_json"]), "labels": {"cc": cc}})
    return lab.write(tmp_path / "lab.duckdb")


def test_compare_uses_the_lab_intervals(tmp_path):
    con = derived.connect(chosen_db(tmp_path))
    try:
        df = fc.run_values(con, "cc")
    finally:
        con.close()
    c = fc.compare(df, "cc", ["download_time_s"])
    assert c.groups == ["coupled", "decoupled"] and c.base == "coupled"
    assert c.runs == {"coupled": 5, "decoupled": 3} and c.stalled == 1
    mean = {x.group: x for x in c.lines if x.kind == "mean"}
    assert mean["coupled"].value == pytest.approx(12.0) and mean["decoupled"].value == pytest.approx(23.0)
    assert (mean["coupled"].n, mean["decoupled"].n) == ((5,), (3,))
    assert not mean["coupled"].few and mean["decoupled"].few
    # the lab's mean interval holds Student's t interval (it is its union with the bootstrap-t's)
    x = np.array(TIMES["coupled"])
    half = stats.t_quantile(0.975, 4) * x.std(ddof=1) / math.sqrt(5)
    assert mean["coupled"].lo <= 12.0 - half + 1e-9 and mean["coupled"].hi >= 12.0 + half - 1e-9
    # differences and ratios: Welch's intervals, as findings.stats computes them
    samples = {"a": np.array(TIMES["decoupled"]), "b": x}
    for kind, stat, value in (("difference", stats.mean_diff("a", "b"), 11.0),
                              ("ratio", stats.mean_ratio("a", "b"), 23.0 / 12.0)):
        got = next(line for line in c.lines if line.kind == kind)
        want = stats.estimate(samples, stat, seed=0)
        assert got.group == "decoupled" and got.n == (3, 5) and got.value == pytest.approx(value)
        assert (got.lo, got.hi) == pytest.approx((want.lo, want.hi)) and got.lo < value < got.hi
    text = fc.table(c)
    assert "cc = decoupled" in text and "decoupled - coupled" in text and "decoupled / coupled" in text
    assert "3 vs 5" in text and "1 stalled run(s) left out" in text
    assert any("n >= 5" in w for w in fc.warnings(c))


def test_compare_figure_names_each_metric_and_its_unit(tmp_path):
    db = chosen_db(tmp_path)
    fig = tmp_path / "cc.json"
    r = mptcp_lab("compare", "--db", str(db), "--by", "cc", "--metric", "download_time_s", "-o", str(fig))
    assert r.returncode == 0, r.stderr[-3000:]
    spec = json.loads(fig.read_text())
    (panel,) = spec["concat"]
    assert {layer["encoding"]["y"]["title"] for layer in panel["layer"]} == {"download time (s)"}
    assert {layer["encoding"]["x"]["title"] for layer in panel["layer"]} == {"cc"}


def test_compare_says_what_is_missing_in_one_line(tmp_path):
    db = chosen_db(tmp_path)
    r = mptcp_lab("compare", "--db", str(db), "--by", "site")
    err = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(err) == 1 and "'site'" in err[0] and "cc" in err[0], r.stderr
    r = mptcp_lab("compare", "--db", str(db), "--by", "c-c")
    assert r.returncode == 2 and "--by 'c-c'" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = mptcp_lab("compare", "--db", str(db), "--by", "cc", "--base", "nope")
    assert r.returncode == 2 and "--base 'nope'" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = mptcp_lab("compare", "--db", str(tmp_path / "none.duckdb"), "--by", "cc")
    assert r.returncode == 2 and "no such database" in r.stderr
    # the pipeline alone has no compare: it says where it is
    r = pipeline("compare", "--db", str(db), "--by", "cc")
    assert r.returncode == 2 and "mptcp-lab compare" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_the_console_script_lists_compare_beside_the_pipeline_commands():
    r = mptcp_lab("--help")
    assert r.returncode == 0 and "compare" in r.stdout and "analyze" in r.stdout
    r = mptcp_lab("compare", "--help")
    assert r.returncode == 0 and all(m in r.stdout for m in fc.METRICS)
