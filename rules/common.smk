# The names the stages use: where results go, which run folders exist, whether this
# machine captures. The policy behind them is rules/labflow.py. No rule lives here.
import os
import sys
from pathlib import Path

import labflow  # rules/labflow.py (Snakemake puts this folder on the import path)
from report.summary import summary


# Rules run the lab's installed packages with `python -m ...`: with --use-conda in each
# rule's conda environment (environment.yml; environment.post-deploy.sh installs the
# packages into it), otherwise in the environment that runs Snakemake — its bin/ goes
# first on PATH, as `activate` would put it, so `python` is that interpreter.
envvars:
    "PATH",


os.environ["PATH"] = os.pathsep.join(
    [os.path.dirname(sys.executable), os.environ["PATH"]]
)
labflow.cover_registry(config)
RESULTS = config["results_dir"]
TABLE_DIR = f"{RESULTS}/tables"
DB = f"{RESULTS}/lab.duckdb"
FIGURE_DIR = f"{RESULTS}/figures"
NOTEBOOK_DIR = f"{RESULTS}/notebooks"
REPORT_DIR = f"{RESULTS}/report"
NOTEBOOKS = config["notebooks"]
TABLE_NAMES = labflow.TABLE_NAMES
# Committed per-campaign tables of the standard-scale captures (data/reference/README.md):
# analysed together with the samples when this machine does not capture.
REFERENCE_DIR = config.get("reference_dir", "data/reference")
ANALYSIS_CODE = labflow.analysis_code()


# A run folder is any directory holding meta.json; its key is its path relative to
# the repository (e.g. data/samples/chen-mp2-64k-r1), so user folders work too.
wildcard_constraints:
    rundir=r".+",
    nb=r"[A-Za-z0-9_-]+",
    campaign=r"[A-Za-z0-9_-]+",


run_dirs_under = labflow.run_dirs_under
CAPTURE = labflow.decide_capture(config, workflow.dryrun)
SOURCE_FILE = Path(RESULTS) / ".source"
labflow.check_folders(config, CAPTURE)
labflow.check_one_source(config, CAPTURE, SOURCE_FILE)


def campaign_files():
    return labflow.campaign_files(config["campaigns"])


def capture_blockers():
    return labflow.capture_blockers(config["campaigns"])


def data_source():
    return labflow.data_source(config, CAPTURE)


def remember_source():
    labflow.remember_source(SOURCE_FILE, labflow.source_key(config, CAPTURE))


CAMPAIGNS = list(campaign_files())
CAMPAIGN_RUNS = (
    labflow.campaign_runs(config["campaigns"], config["scale"]) if CAPTURE else {}
)
CAPTURE_RUN_DIRS = [
    f"{config['raw_dir']}/{c}/{r}" for c, ids in CAMPAIGN_RUNS.items() for r in ids
]


def run_inputs(wildcards):
    """Every file of one run folder, so a changed pcap re-runs only that run; a run
    this workflow captures is its capture_run job's folder."""
    if CAPTURE and wildcards.rundir in CAPTURE_RUN_DIRS:
        return [wildcards.rundir]
    d = Path(wildcards.rundir)
    return sorted(str(p) for p in d.iterdir() if p.is_file())


def table_files(rundirs):
    return [f"{TABLE_DIR}/{d}/{t}.parquet" for d in rundirs for t in TABLE_NAMES]


def capture_run_dirs(campaign=None):
    """The run folders the capture makes (of one campaign, or all)."""
    if campaign is None:
        return list(CAPTURE_RUN_DIRS)
    return [f"{config['raw_dir']}/{campaign}/{r}" for r in CAMPAIGN_RUNS[campaign]]


def reference_table_dirs():
    return labflow.reference_table_dirs(REFERENCE_DIR)


def db_table_dirs(wildcards=None):
    """Every per-run table folder the DuckDB file is built from: the analysed run
    folders, plus the reference tables when this machine does not capture."""
    dirs = [f"{TABLE_DIR}/{d}" for d in all_run_dirs(wildcards)]
    if not CAPTURE:
        dirs += reference_table_dirs()
    return dirs


def captured_campaigns(wildcards=None):
    """When capturing, every campaign's capture (a static input beside the checkpointed
    tables, so all runs of all campaigns are in the DAG at once and spread over hosts).
    """
    return [f"{RESULTS}/capture/{c}.done" for c in CAMPAIGNS] if CAPTURE else []


def db_table_files(wildcards=None):
    files = table_files(all_run_dirs(wildcards))
    if not CAPTURE:
        files += [
            f"{d}/{t}.parquet" for d in reference_table_dirs() for t in TABLE_NAMES
        ]
    return files


def all_run_dirs(wildcards=None):
    """Every run folder the analysis covers: when capturing, the finished runs of the
    campaigns (after their capture_run jobs; a failed run has no meta.json and is
    left out), including runs already there (e.g. of another scale)."""
    if not CAPTURE:
        return run_dirs_under(config["samples_dir"])
    for name in CAMPAIGNS:
        checkpoints.campaign_captured.get(campaign=name)
    return sorted(
        {d for name in CAMPAIGNS for d in run_dirs_under(f"{config['raw_dir']}/{name}")}
    )


def print_summary():
    """The main job's last lines (report.summary: data, verdicts, failed/repeated runs,
    whether a failed capture touches a verdict; `make reproduce-all` turns that into its exit status).
    """
    lines, _ = summary(Path(RESULTS), data_source())
    print("\n".join(lines), file=sys.stderr)
