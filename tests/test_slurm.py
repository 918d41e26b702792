"""The workflow on a live SLURM: a one-node cluster of its own (cluster/testslurm.py:
munged, slurmctld and slurmd from Debian's packages, in a temporary directory) runs
the cluster commands of docs/reproducing.md — `snakemake --profile profiles/slurm ...` — unchanged
but for where results go. Every job is an sbatch job that SLURM records as completed;
the database equals a local run's, row for row; capture runs land in raw_dir; and
nothing of the cluster survives it.

Needs root and the packages of scripts/setup-system.sh (skipped otherwise, saying so).
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from conftest import NEEDS_TESTBED

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
PROFILE = ["--profile", "profiles/slurm"]

_spec = importlib.util.spec_from_file_location("testslurm", ROOT / "cluster" / "testslurm.py")
testslurm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(testslurm)


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "a live SLURM needs root (SlurmUser=root, slurmd)"
    if testslurm.missing_programs():
        return (f"SLURM/munge not installed ({', '.join(testslurm.missing_programs())}): "
                "run scripts/setup-system.sh")
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "snakemake-executor-plugin-slurm not installed (pip install -e '.[test]')"
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))


@pytest.fixture(scope="module")
def slurm():
    """One controller + this host as the one node (partition lab, the default), for the
    whole module; stopped however the tests end (and at exit, should pytest be killed)."""
    cluster = testslurm.LocalSlurm(partition="lab")
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def smk(env: dict, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run([*SNAKEMAKE, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**env, "LC_ALL": "C.UTF-8"})


def slurm_jobs_of(r: subprocess.CompletedProcess, cluster) -> dict[str, dict]:
    """SLURM job id -> the job as slurmctld records it, for every job this snakemake
    run submitted (its log names each id; the jobs carry its run id as their name)."""
    out = r.stdout + r.stderr
    run_id = re.search(r"SLURM run ID: (\S+)", out).group(1)
    submitted = re.findall(r"has been submitted with SLURM jobid (\d+)", out)
    jobs = {j["JobId"]: j for j in cluster.jobs() if j["JobName"] == run_id}
    assert sorted(submitted, key=int) == sorted(jobs, key=int), (submitted, sorted(jobs))
    return jobs


def show(jobs: dict[str, dict]) -> None:
    """What SLURM recorded, in the test's output (pytest -rP shows it)."""
    for i, j in sorted(jobs.items(), key=lambda kv: int(kv[0])):
        print(f"SLURM job {i}: {j['JobState']} exit {j['ExitCode']} on {j['NodeList']} ({j['Partition']}) "
              f"{j['StartTime']}..{j['EndTime']} cpus={j['NumCPUs']} {j['Comment']}")


def assert_completed_on_the_node(jobs: dict[str, dict], cluster) -> None:
    bad = {i: (j["JobState"], j["ExitCode"]) for i, j in jobs.items()
           if (j["JobState"], j["ExitCode"]) != ("COMPLETED", "0:0")}
    assert not bad, f"{bad}\n--- slurmctld\n{cluster.log('slurmctld')}\n--- slurmd\n{cluster.log('slurmd')}"
    assert {j["NodeList"] for j in jobs.values()} == {cluster.host}
    assert {j["Partition"] for j in jobs.values()} == {cluster.partition}


def rules_of(jobs: dict[str, dict]) -> dict[str, list[str]]:
    """rule -> the wildcards (as the plugin writes them into --comment) of its jobs."""
    out: dict[str, list[str]] = {}
    for j in jobs.values():
        m = re.fullmatch(r"rule_(\w+?)(?:_wildcards_(.*))?", j["Comment"])
        out.setdefault(m.group(1), []).append(m.group(2) or "")
    return out


def _sig10(col: str) -> str:
    """SQL: a DOUBLE column rounded to 10 significant digits (NULL, NaN, inf and 0 as they are)."""
    c = f'"{col}"'
    return (f"CASE WHEN {c} IS NULL OR isnan({c}) OR isinf({c}) OR {c} = 0 THEN {c} "
            f"ELSE round({c}, 9 - CAST(floor(log10(abs({c}))) AS INTEGER)) END AS {c}")


def db_differences(a: Path, b: Path) -> list[str]:
    """How two DuckDB files differ, table by table and view by view: names, columns
    (name and type), then the rows, both sides sorted by every column, row for row.
    A table's rows are compared exactly; a view's DOUBLEs to 10 significant
    digits, as DuckDB's parallel aggregation sums in no fixed order (the same view of
    the same file differs in the last bits between two queries)."""
    import duckdb

    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{a}' AS a (READ_ONLY)")
        con.execute(f"ATTACH '{b}' AS b (READ_ONLY)")

        def objects(db):
            return dict(con.execute("SELECT table_name, table_type FROM information_schema.tables "
                                    "WHERE table_catalog = ? AND table_schema = 'main'", [db]).fetchall())

        oa, ob = objects("a"), objects("b")
        if oa != ob:
            return [f"tables/views: {sorted(oa.items())} vs {sorted(ob.items())}"]
        out = []
        for name, kind in sorted(oa.items()):
            cols = {db: con.execute(f'DESCRIBE {db}."{name}"').fetchall() for db in ("a", "b")}
            ca = [c[:2] for c in cols["a"]]
            if ca != [c[:2] for c in cols["b"]]:
                out.append(f"{name}: columns {ca} vs {[c[:2] for c in cols['b']]}")
                continue
            sel = ", ".join(_sig10(n) if kind == "VIEW" and t == "DOUBLE" else f'"{n}"' for n, t in ca)
            for db in ("a", "b"):  # each side once, sorted by every column
                con.execute(f'CREATE OR REPLACE TEMP TABLE rows_{db} AS SELECT {sel} FROM {db}."{name}" ORDER BY ALL')
            n = {db: con.execute(f"SELECT count(*) FROM rows_{db}").fetchone()[0] for db in ("a", "b")}
            if n["a"] != n["b"]:
                out.append(f"{name} ({kind}): {n['a']} rows vs {n['b']}")
                continue
            # row i of one against row i of the other (IS DISTINCT FROM: NULL equals NULL, NaN equals NaN)
            differs = " OR ".join(f'x."{c}" IS DISTINCT FROM y."{c}"' for c, _ in ca) or "false"
            bad = con.execute(f"SELECT count(*), any_value(x), any_value(y) FROM rows_a x POSITIONAL JOIN rows_b y "
                              f"WHERE {differs}").fetchone()
            if bad[0]:
                out.append(f"{name} ({kind}): {bad[0]} of {n['a']} sorted rows differ, e.g. {bad[1]} vs {bad[2]}")
        return out
    finally:
        con.close()


def test_analysis_runs_every_job_through_sbatch_and_equals_a_local_run(slurm, tmp_path):
    # the local run to compare with, meanwhile (the cluster's jobs mostly wait for a status check)
    local, res = tmp_path / "local", tmp_path / "slurm"
    with open(tmp_path / "local.log", "w") as local_log:
        local_run = subprocess.Popen([*SNAKEMAKE, "--cores", "2", "analyze", "--config", "capture=false",
                                      f"results_dir={local}"], cwd=ROOT, stdout=local_log,
                                     stderr=subprocess.STDOUT, env={**os.environ, "LC_ALL": "C.UTF-8"})
        try:
            r = smk(slurm.env(), *PROFILE, "analyze", "--config", "capture=false", f"results_dir={res}")
        finally:
            local_rc = local_run.wait(timeout=900)
    assert r.returncode == 0, r.stderr[-5000:] + "\n--- slurmctld\n" + slurm.log("slurmctld")
    jobs = slurm_jobs_of(r, slurm)
    show(jobs)
    assert_completed_on_the_node(jobs, slurm)
    samples = sorted(m.parent.relative_to(ROOT) for m in (ROOT / "data/samples").glob("*/meta.json"))
    assert samples
    by_rule = rules_of(jobs)
    # one sbatch job per sample run (the plugin writes the wildcards with / as _), and the load
    assert sorted(by_rule["run_tables"]) == sorted(str(s).replace("/", "_") for s in samples), by_rule
    assert by_rule["load_db"] == [""] and set(by_rule) == {"run_tables", "load_db"}, by_rule
    for s in samples:
        assert (res / "tables" / s / "runs.parquet").exists()

    assert local_rc == 0, (tmp_path / "local.log").read_text()[-5000:]
    tables = {t for (t,) in _duckdb_tables(local / "lab.duckdb")}
    assert {"runs", "subflows", "rtt_samples"} <= tables, tables
    assert db_differences(res / "lab.duckdb", local / "lab.duckdb") == []


def _duckdb_tables(path: Path) -> list[tuple[str]]:
    import duckdb

    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute("SELECT table_name FROM information_schema.tables").fetchall()


def _quickest_runs(campaign: str, n: int) -> list[str]:
    from capture.estimate import estimate_s
    from capture.spec import expand, load
    from papers import PAPERS

    f = PAPERS[campaign].campaign_file
    specs = expand(load(f, "quick"), base_dir=f.parent, scale="quick")
    return [s.run_id for s in sorted(specs, key=lambda s: (estimate_s(s), s.run_id))[:n]]


# deng: its quick runs take seconds; captures need root, namespaces and upstream MPTCP
@pytest.mark.parametrize("campaign", [pytest.param("deng", marks=NEEDS_TESTBED)])
def test_capture_runs_are_jobs_on_the_node_and_land_in_raw_dir(slurm, tmp_path, campaign):
    raw, res = tmp_path / "raw", tmp_path / "res"
    runs = _quickest_runs(campaign, 2)
    targets = [str(raw / campaign / run) for run in runs]
    r = smk(slurm.env(), *PROFILE, *targets, "--config", "capture=true", f"campaigns=[{campaign}]",
            f"raw_dir={raw}", f"results_dir={res}")
    logs = "\n".join(p.read_text() for p in (res / "logs" / "capture").rglob("*.log")) if res.exists() else ""
    assert r.returncode == 0, r.stderr[-5000:] + logs[-3000:]
    jobs = slurm_jobs_of(r, slurm)
    show(jobs)
    assert_completed_on_the_node(jobs, slurm)
    assert sorted(rules_of(jobs)["capture_run"]) == sorted(f"{campaign}_{run}" for run in runs)
    for run in runs:
        d = raw / campaign / run
        missing = [f for f in ("meta.json", ".done", "client.pcap", "server.pcap") if not (d / f).exists()]
        assert not missing, f"{d}: no {missing}\n{logs[-3000:]}"
    # --exclusive: a capture has the node to itself, so SLURM ran them one after the other
    spans = sorted((datetime.fromisoformat(j["StartTime"]), datetime.fromisoformat(j["EndTime"]))
                   for j in jobs.values())
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:])), spans
    assert all(j["NumCPUs"] == "2" for j in jobs.values())


def test_stopping_leaves_nothing_running(slurm):
    """Last in the module: stop the cluster as the fixture does, then look."""
    daemons = {name: p.pid for name, p in slurm.procs.items()}
    assert set(daemons) == {"munged", "slurmctld", "slurmd"}
    marked = slurm.leftovers()
    assert set(daemons.values()) <= set(marked)
    conf_dir = slurm.dir
    slurm.stop()
    assert slurm.leftovers() == []
    alive = [pid for pid in set(marked) | set(daemons.values()) if _running(pid)]
    assert alive == [], [Path(f"/proc/{p}/cmdline").read_bytes() for p in alive if _running(p)]
    assert not conf_dir.exists()
    # and no daemon anywhere still reads this cluster's configuration
    r = subprocess.run(["pgrep", "-a", "-f", str(conf_dir)], capture_output=True, text=True)
    assert r.stdout == ""


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended; its parent reaps it
