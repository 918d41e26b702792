"""The Snakemake workflow: dry runs, config validation, lint, the SLURM profile and,
once the pipeline exists, an end-to-end reproduce_all on the committed samples."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def smk(*args: str, timeout: int = 120, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    return subprocess.run([*SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_dry_run_reproduce_all(tmp_path):
    r = smk("-n", "reproduce_all", "--config", "capture=false", f"results_dir={tmp_path}/results")
    assert r.returncode == 0, r.stderr[-3000:]
    for rule in ("load_db", "pair_notebook", "execute_notebook", "notebook_html", "report"):
        assert rule in r.stdout + r.stderr


@pytest.mark.parametrize("target", ["analyze", "figures", "notebooks", "report", "capture_all"])
def test_dry_run_targets(target, tmp_path):
    r = smk("-n", target, "--config", "capture=false", f"results_dir={tmp_path}/results")
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.parametrize("override, named", [("bogus_key=1", "bogus_key"), ("scale=huge", "huge"),
                                            ("capture=maybe", "maybe")])
def test_bad_config_stops_before_any_job(override, named):
    r = smk("-n", "reproduce_all", "--config", override)
    assert r.returncode != 0
    out = r.stdout + r.stderr
    assert "Error validating config" in out and named in out, out[-2000:]
    assert "Job stats" not in out


def test_lint_is_clean():
    """`snakemake --lint`: no finding (every rule has a log and a conda environment; no
    absolute path in the workflow: the kernel check lives in capture.kernel)."""
    r = smk("--lint")
    findings = [ln.strip() for ln in r.stdout.splitlines() if ln.startswith("    * ")]
    assert findings == [] and r.returncode == 0, r.stdout + r.stderr


def test_slurm_profile():
    prof = yaml.safe_load((ROOT / "profiles/slurm/config.yaml").read_text())
    assert prof["executor"] == "slurm"
    assert set(prof["set-resources"]) <= {"capture_run", "run_tables", "load_db", "execute_notebook", "notebook_html",
                                          "report"}
    # a capture takes a node of its own, so runs spread over hosts, one per host
    assert "--exclusive" in prof["set-resources"]["capture_run"]["slurm_extra"]
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        pytest.skip("snakemake-executor-plugin-slurm not installed: profile parsed only")
    r = smk("-n", "--profile", "profiles/slurm", "reproduce_all")
    assert r.returncode == 0, r.stderr[-3000:]


def pipeline_available() -> str | None:
    r = subprocess.run([sys.executable, "-m", "pipeline", "tables", "--help"], cwd=ROOT,
                       capture_output=True, text=True)
    if r.returncode != 0:
        return "`python -m pipeline tables --help` fails: the pipeline stage is not there yet"
    if not any((ROOT / "data/samples").glob("*/meta.json")):
        return "no committed sample runs in data/samples/"
    return None


@pytest.mark.skipif(pipeline_available() is not None, reason=str(pipeline_available()))
def test_reproduce_all_end_to_end_on_samples(tmp_path):
    res = tmp_path / "results"
    r = smk("--cores", "2", "reproduce_all", "--config", "capture=false", f"results_dir={res}",
            timeout=900)
    assert r.returncode == 0, r.stderr[-5000:]
    assert (res / "report/index.html").exists()
    assert (res / "lab.duckdb").exists()
    runs = sorted((ROOT / "data/samples").glob("*/meta.json"))
    for m in runs:
        assert (res / "tables" / m.parent.relative_to(ROOT) / "runs.parquet").exists()
    # unchanged runs are not re-analysed on a second invocation
    again = smk("-n", "reproduce_all", "--config", "capture=false", f"results_dir={res}")
    assert "run_tables" not in again.stdout + again.stderr
    # load_db keeps the store's semantics: loading again neither doubles rows nor drops a user's table
    import duckdb
    con = duckdb.connect(str(res / "lab.duckdb"))
    con.execute("CREATE TABLE my_notes AS SELECT 'kept' AS note")
    before = con.execute("SELECT count(*) FROM subflows").fetchone()[0]
    con.close()
    r = smk("--cores", "2", "analyze", "--forcerun", "load_db", "--config", "capture=false", f"results_dir={res}",
            timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    con = duckdb.connect(str(res / "lab.duckdb"), read_only=True)
    assert con.execute("SELECT note FROM my_notes").fetchall() == [("kept",)]
    assert con.execute("SELECT count(*) FROM subflows").fetchone()[0] == before
    con.close()


# --- capture: one workflow job per campaign run -----------------------------------

def _can_capture() -> str | None:
    if os.geteuid() != 0:
        return "capture=true needs root"
    try:
        if Path("/proc/sys/net/mptcp/enabled").read_text().strip() != "1":
            return "capture=true needs net.mptcp.enabled=1"
    except OSError:
        return "capture=true needs a kernel with MPTCP"
    return None


needs_capture = pytest.mark.skipif(_can_capture() is not None, reason=str(_can_capture()))


def planned_capture_runs(out: str) -> list[tuple[str, str]]:
    """(campaign, run) of every capture_run job in a dry run's output."""
    jobs, cur = [], None
    for line in out.splitlines():
        if line.startswith(("rule ", "checkpoint ")):
            cur = line.strip().rstrip(":").split()[1]
        elif cur == "capture_run" and line.strip().startswith("wildcards:"):
            w = dict(kv.split("=", 1) for kv in line.split(":", 1)[1].strip().split(", "))
            jobs.append((w["campaign"], w["run"]))
    return jobs


def expected_runs(scale: str = "quick") -> set[tuple[str, str]]:
    from capture.spec import expand, load
    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    out = set()
    from papers import PAPERS
    for name in cfg.get("campaigns") or list(PAPERS):
        f = PAPERS[name].campaign_file
        out |= {(name, s.run_id) for s in expand(load(f, scale), base_dir=f.parent, scale=scale)}
    return out


@needs_capture
def test_capture_all_plans_one_job_per_run(tmp_path):
    r = smk("-n", "--cores", "2", "capture_all", "--config", "capture=true",
            f"results_dir={tmp_path}/res", f"raw_dir={tmp_path}/raw")
    assert r.returncode == 0, r.stderr[-3000:]
    jobs = planned_capture_runs(r.stdout)
    want = expected_runs()
    assert len(jobs) == len(set(jobs)) == len(want) and set(jobs) == want
    # each job takes the testbed and every core: one capture at a time, nothing beside it
    block = r.stdout.split("rule capture_run:")[1].split("\n\n")[0]
    assert "threads: 2" in block and "testbed=1" in block, block


@needs_capture
def test_capture_resumes_with_the_missing_runs_only(tmp_path):
    raw = tmp_path / "raw"
    done = sorted(r for c, r in expected_runs() if c == "chen")[:3]
    for run in done:  # as a killed workflow leaves them: finished runs have their folder
        (raw / "chen" / run).mkdir(parents=True)
        (raw / "chen" / run / ".done").write_text("x")
    r = smk("-n", "--cores", "2", "capture_all", "--config", "capture=true",
            f"results_dir={tmp_path}/res", f"raw_dir={raw}")
    assert r.returncode == 0, r.stderr[-3000:]
    jobs = set(planned_capture_runs(r.stdout))
    assert jobs == expected_runs() - {("chen", x) for x in done}


@needs_capture
def test_analysis_waits_for_every_campaign(tmp_path):
    """reproduce_all schedules all runs of all campaigns at once (not one campaign after
    another) and builds the database from the runs that finished."""
    r = smk("-n", "--cores", "2", "reproduce_all", "--config", "capture=true",
            f"results_dir={tmp_path}/res", f"raw_dir={tmp_path}/raw")
    assert r.returncode == 0, r.stderr[-3000:]
    assert set(planned_capture_runs(r.stdout)) == expected_runs()
    assert "campaign_captured" in r.stdout and "load_db" in r.stdout



def test_a_results_folder_remembers_its_source_and_refuses_another(tmp_path):
    """A folder's database keeps every run loaded into it: a capture judged where the
    reference's reproduction is would pool the two (and Snakemake, finding the outputs
    there, captured nothing, while the report said "captured on this machine")."""
    res = tmp_path / "results"
    r = smk("--cores", "1", "capture_all", "--config", "capture=false", f"results_dir={res}")
    assert r.returncode == 0, r.stderr[-3000:]
    assert (res / ".source").read_text() == "reference data/reference + samples data/samples\n"
    r = smk("-n", "reproduce_all", "--config", "capture=false", f"results_dir={res}")
    assert r.returncode == 0, r.stderr[-3000:]  # the same source goes on
    # the same folders spelt otherwise are the same source (issue 43: ./data/reference, a
    # trailing slash and absolute paths were refused)
    r = smk("-n", "reproduce_all", "--config", "capture=false", f"results_dir={res}",
            "reference_dir=./data/reference", f"samples_dir={ROOT / 'data' / 'samples'}/")
    assert r.returncode == 0, r.stderr[-3000:]
    (res / ".source").write_text(f"capture scale=quick raw_dir={tmp_path}/raw\n")
    r = smk("-n", "reproduce_all", "--config", "capture=false", f"results_dir={res}")
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "holds another reproduction (capture scale=quick" in out, out[-3000:]
    assert "results_dir=" in out and "Job stats" not in out


@pytest.mark.parametrize("what", ["reference_dir", "samples_dir", "results_dir"])
def test_a_missing_folder_or_a_file_for_results_stops_before_any_job(what, tmp_path):
    """issue 43: a missing reference or samples folder was accepted without a word (the
    report still named it), a results_dir that is a file gave a traceback."""
    (tmp_path / "a-file").write_text("mine\n")
    value = tmp_path / ("a-file" if what == "results_dir" else "missing")
    extra = [] if what == "results_dir" else [f"results_dir={tmp_path}/results"]
    r = smk("-n", "reproduce_all", "--config", "capture=false", f"{what}={value}", *extra)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and f"{what} {value}" in out and "Traceback" not in out, out[-3000:]
    assert "Job stats" not in out and (tmp_path / "a-file").read_text() == "mine\n"


@needs_capture
def test_a_capture_is_refused_where_the_reference_was_judged(tmp_path):
    res = tmp_path / "results"
    res.mkdir()
    (res / ".source").write_text("reference data/reference + samples data/samples\n")
    r = smk("-n", "reproduce_all", "--config", "capture=true", "scale=quick", f"results_dir={res}",
            f"raw_dir={tmp_path}/raw")
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "holds another reproduction (reference" in out, out[-3000:]
    assert "Job stats" not in out


@needs_capture
def test_a_standard_capture_is_refused_beside_quick_runs(tmp_path):
    """Some quick-scale run ids are standard-scale ones too: taken as captured, and any
    quick run in the database leaves its paper's rows unjudged."""
    raw = tmp_path / "raw"
    run = sorted(r for c, r in expected_runs() if c == "chen")[0]
    (raw / "chen" / run).mkdir(parents=True)
    (raw / "chen" / run / "meta.json").write_text('{"scale": "quick"}')
    r = smk("-n", "reproduce_all", "--config", "capture=true", "scale=standard",
            f"results_dir={tmp_path}/res", f"raw_dir={raw}")
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "holds 1 quick-scale run(s)" in out, out[-3000:]
    r = smk("-n", "reproduce_all", "--config", "capture=true", "scale=quick",
            f"results_dir={tmp_path}/res", f"raw_dir={raw}")
    assert r.returncode == 0, r.stderr[-3000:]  # more quick runs beside them: fine


def test_make_gives_each_scale_its_own_folders():
    out = subprocess.run(["make", "-n", "reproduce-all", "SCALE=quick"], cwd=ROOT, capture_output=True,
                         text=True).stdout
    assert "results_dir=results/quick raw_dir=data/raw/quick" in out and "--results results/quick" in out
    out = subprocess.run(["make", "-n", "reproduce-all", "SCALE=standard"], cwd=ROOT, capture_output=True,
                         text=True).stdout
    assert re.search(r"results_dir=results/standard raw_dir=data/raw$", out, re.M), out

# --- the main job's terminal: one progress line per stage (issue 24) ---------------------

def test_progress_logger_prints_one_line_per_stage_and_keeps_job_blocks_in_the_log(tmp_path):
    r = smk("--cores", "2", "analyze", "--logger", "mptcp-lab", "--config", "capture=false",
            f"results_dir={tmp_path}/results")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "rule run_tables" not in r.stderr and "Finished jobid" not in r.stderr
    tables = re.findall(r"^tables: (\d+)/(\d+) jobs done$", r.stderr, re.M)
    assert tables and tables[-1][0] == tables[-1][1]
    done = [int(d) for d, _ in tables]
    assert done == sorted(done)
    log = re.search(r"Complete log\(s\): (\S+)", r.stderr).group(1)
    assert "rule run_tables" in Path(log).read_text()


def test_progress_logger_estimates_a_scale_from_all_its_runs(monkeypatch):
    """With the scale (`make reproduce-all SCALE=quick` passes it), the first estimate is
    the jobs times the model's mean over that scale's runs, not over the first started
    (one campaign's); once runs finish, scaled by what they took against their model."""
    import logging
    from types import SimpleNamespace

    import snakemake_logger_plugin_mptcp_lab as lg
    from capture.estimate import workflow_s
    from capture.spec import expand, load
    from papers import PAPERS
    from snakemake_interface_logger_plugins.common import LogEvent

    every = [workflow_s(s) for p in PAPERS.values()
             for s in expand(load(p.campaign_file, "quick"), base_dir=p.campaign_file.parent, scale="quick")]
    f = PAPERS["deng"].campaign_file
    first = expand(load(f, "quick"), base_dir=f.parent, scale="quick")[0]
    assert workflow_s(first) < 0.5 * sum(every) / len(every)  # the case: a short run starts first
    now = [1000.0]
    monkeypatch.setattr(lg.time, "monotonic", lambda: now[0])
    h = lg.LogHandler(None, SimpleNamespace(scale="quick"))
    h.tty = False
    h._write = lambda text, final: None

    def rec(**extra):
        r = logging.LogRecord("snakemake", logging.INFO, "", 0, None, None, None)
        r.__dict__.update(extra)
        return r

    h.emit(rec(event=LogEvent.RUN_INFO, stats={"capture_run": len(every)}))
    h.emit(rec(event=LogEvent.JOB_INFO, rule_name="capture_run", jobid=0,
               wildcards={"campaign": "deng", "run": first.run_id}))
    st = h.stages["capture"]
    assert st.left_s() == pytest.approx(sum(every))
    now[0] += 2 * workflow_s(first)  # the run took twice its model
    h.emit(rec(event=LogEvent.JOB_FINISHED, job_id=0))
    assert st.left_s() == pytest.approx(2 * (len(every) - 1) * sum(every) / len(every))


def test_progress_logger_counts_and_estimates_captures():
    """Totals never shrink; the time left comes from the duration model until a run has
    finished, then from the measured runs."""
    import logging

    from capture.estimate import workflow_s
    from capture.spec import expand, load
    from papers import PAPERS
    from snakemake_interface_logger_plugins.common import LogEvent
    from snakemake_logger_plugin_mptcp_lab import LogHandler

    f = PAPERS["deng"].campaign_file
    specs = expand(load(f, "standard"), base_dir=f.parent, scale="standard")[:3]
    h = LogHandler(None, None)
    h.tty = False
    lines = []
    h._write = lambda text, final: lines.append(text)

    def rec(**extra):
        r = logging.LogRecord("snakemake", logging.INFO, "", 0, None, None, None)
        r.__dict__.update(extra)
        return r

    h.emit(rec(event=LogEvent.RUN_INFO, stats={"capture_run": 3, "reproduce_all": 1}))
    for i, s in enumerate(specs):
        h.emit(rec(event=LogEvent.JOB_INFO, rule_name="capture_run", jobid=i,
                   wildcards={"campaign": "deng", "run": s.run_id}))
    mean = sum(workflow_s(s) for s in specs) / 3
    assert lines[0].startswith("capture: 0/3 jobs done, about ") and "(duration model)" in lines[0]
    assert h.stages["capture"].left_s() == pytest.approx(3 * mean)
    h.emit(rec(event=LogEvent.JOB_FINISHED, job_id=0))
    assert lines[-1].startswith("capture: 1/3 jobs done") and "(duration model)" not in lines[-1]
    h.emit(rec(event=LogEvent.RUN_INFO, stats={"capture_run": 2}))  # a later, smaller count never shrinks it
    assert h.stages["capture"].total == 3
    # a stage of several rules counts all their jobs from the start
    h.emit(rec(event=LogEvent.RUN_INFO, stats={"notebook_ipynb": 5, "execute_notebook": 5, "notebook_html": 5,
                                              "total": 16}))
    assert h.stages["notebooks"].total == 15
