# Helpers shared by the stages: where results go, which run folders exist, whether
# this machine can capture.  No rule lives here.
import json
import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

from capture.kernel import testbed_blockers
from capture.scales import NOT_EVIDENCE, SCALES
from papers import PAPERS
from pipeline.schema import TABLES


# Rules run the lab's installed packages with `python -m ...`: with --use-conda in each
# rule's conda environment (environment.yml; environment.post-deploy.sh installs the
# packages into it), otherwise in the environment that runs Snakemake — its bin/ goes
# first on PATH, as `activate` would put it, so `python` is that interpreter.
envvars:
    "PATH",


os.environ["PATH"] = os.pathsep.join(
    [os.path.dirname(sys.executable), os.environ["PATH"]]
)
RESULTS = config["results_dir"]
TABLE_DIR = f"{RESULTS}/tables"
DB = f"{RESULTS}/lab.duckdb"
FIGURE_DIR = f"{RESULTS}/figures"
NOTEBOOK_DIR = f"{RESULTS}/notebooks"
REPORT_DIR = f"{RESULTS}/report"
# the papers (campaigns, notebooks) this workflow covers: the registry's, unless the
# config names a subset
config.setdefault("campaigns", list(PAPERS))
config.setdefault("notebooks", list(PAPERS))
_unknown = sorted((set(config["campaigns"]) | set(config["notebooks"])) - set(PAPERS))
if _unknown:
    raise WorkflowError(f"config campaigns/notebooks: {', '.join(_unknown)} not a paper of papers/ ({', '.join(PAPERS)})")
NOTEBOOKS = config["notebooks"]
TABLE_NAMES = list(TABLES)
# Committed per-campaign tables of the standard-scale captures (data/reference/README.md):
# analysed together with the samples when this machine does not capture.
REFERENCE_DIR = config.get("reference_dir", "data/reference")
# The code every figure and finding depends on (derived layer, claims, notebook helpers):
# a change re-runs the notebooks and the findings.
ANALYSIS_CODE = sorted(
    str(p)
    for d in ("findings", "labfig", "papers")
    for p in Path(d).rglob("*")
    if p.suffix in (".py", ".yaml")
    and p.name != "notebook.py"
    and "__pycache__" not in p.parts
) + ["pipeline/derived.py"]


# A run folder is any directory holding meta.json; its key is its path relative to
# the repository (e.g. data/samples/chen-mp2-64k-r1), so user folders work too.
wildcard_constraints:
    rundir=r".+",
    nb=r"[A-Za-z0-9_-]+",
    campaign=r"[A-Za-z0-9_-]+",


def run_dirs_under(root):
    """Run folders (containing meta.json) at most two levels below ``root``, sorted."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = {p.parent for p in root.glob("meta.json")}
    found |= {p.parent for p in root.glob("*/meta.json")}
    found |= {p.parent for p in root.glob("*/*/meta.json")}
    return sorted(str(p) for p in found)


def run_inputs(wildcards):
    """Every file of one run folder, so a changed pcap re-runs only that run; a run
    this workflow captures is its capture_run job's folder."""
    if CAPTURE and wildcards.rundir in CAPTURE_RUN_DIRS:
        return [wildcards.rundir]
    d = Path(wildcards.rundir)
    return sorted(str(p) for p in d.iterdir() if p.is_file())


def capture_blockers():
    """Why this machine cannot capture (empty list when it can)."""
    why = testbed_blockers()
    if not Path("capture/__main__.py").exists():
        why.append("capture/ stage not installed (no capture/__main__.py)")
    if not campaign_files():
        why.append("no paper campaign configured (config campaigns)")
    return why


def campaign_files():
    """campaign name -> its YAML: each configured paper's campaign (papers/<paper>/
    campaign.yaml, from the registry)."""
    return {
        name: str(PAPERS[name].campaign_file.relative_to(Path.cwd()))
        for name in config["campaigns"]
        if name in PAPERS and PAPERS[name].campaign_file.exists()
    }


def decide_capture():
    want = {"true": True, "false": False}.get(config["capture"], config["capture"])
    if want is False:
        return False
    if want is True and workflow.dryrun:
        # a dry run plans the captures; whether this machine can run them is the real run's question
        return True
    why = capture_blockers()
    if not why:
        return True
    if want is True:
        raise WorkflowError(
            "capture=true but this machine cannot capture: " + "; ".join(why)
        )
    # auto: say so once and go on from the committed samples.
    print(
        f"note: not capturing ({'; '.join(why)}); analysing {config['samples_dir']}"
        f" and the reference tables in {config.get('reference_dir', 'data/reference')} instead",
        file=sys.stderr,
    )
    return False


CAPTURE = decide_capture()


def data_source():
    """Where the findings' runs come from, in words, for the report's first screen."""
    if CAPTURE:
        return (
            f"captured on this machine at the {config['scale']} scale"
            f" ({', '.join(config['campaigns'])}; run folders in {config['raw_dir']})"
            + (
                f" — {config['scale']} scale: figures only, no verdicts"
                if not SCALES[config["scale"]].evidence
                else ""
            )
        )
    ref = config.get("reference_dir", "data/reference")
    return (
        f"the committed standard-scale reference ({ref}, see {ref}/README.md for when, how and"
        f" from which commit it was captured) and the sample runs of {config['samples_dir']}"
    )


# One reproduction per results folder. Its database is a store that keeps every run
# loaded into it, so captures judged in a folder that holds the reference's (or another
# scale's) reproduction would be pooled with those runs. Snakemake would not even
# capture there: it does not rerun jobs below a checkpoint whose outputs exist
# (snakemake#4124). So a folder remembers its source (.source, written when a run
# starts) and another source is refused before any job.
SOURCE_FILE = Path(RESULTS) / ".source"


def source_key():
    """What a results folder's reproduction is made from (compared as text)."""
    if CAPTURE:
        return f"capture scale={config['scale']} raw_dir={config['raw_dir']}"
    return f"reference {REFERENCE_DIR} + samples {config['samples_dir']}"


def _quick_runs_in_raw_dir():
    """Finished figures-only (quick) runs in the campaigns' raw folders: a run id of the
    quick scale may also be one of the standard scale's, which would then be taken as
    captured, and a database with any quick run judges none of its paper's rows."""
    n = 0
    for name in campaign_files():
        for d in run_dirs_under(f"{config['raw_dir']}/{name}"):
            try:
                n += (
                    json.loads(Path(d, "meta.json").read_text()).get("scale")
                    in NOT_EVIDENCE
                )
            except (OSError, ValueError, AttributeError):
                continue
    return n


def check_one_source():
    """Stop (before any job) where this call would mix reproductions; see above."""
    try:
        was = SOURCE_FILE.read_text().strip()
    except OSError:
        was = None
    if was is not None and was != source_key():
        raise WorkflowError(
            f"{RESULTS} holds another reproduction ({was}); this call is {source_key()}. "
            f"Its database keeps every run loaded into it, so the two would be judged together. "
            f"Give this call a results folder of its own (--config results_dir=...; "
            f"`make reproduce-all SCALE=...` uses results/<scale>), or move {RESULTS} aside."
        )
    if CAPTURE and SCALES[config["scale"]].evidence:
        quick = _quick_runs_in_raw_dir()
        if quick:
            raise WorkflowError(
                f"{config['raw_dir']} holds {quick} quick-scale run(s) of these campaigns: a "
                f"{config['scale']}-scale capture would take those with the same run ids as "
                f"captured, and no row of their papers would be judged. Capture into another "
                f"folder (--config raw_dir=...; `make reproduce-all SCALE=quick` uses "
                f"data/raw/quick), or move them aside."
            )


def remember_source():
    """Called when a run starts (not on a dry run): the folder's source, once."""
    if not SOURCE_FILE.exists():
        SOURCE_FILE.parent.mkdir(parents=True, exist_ok=True)
        tmp = SOURCE_FILE.with_name(f".source.tmp-{os.getpid()}")
        tmp.write_text(source_key() + "\n")
        os.replace(tmp, SOURCE_FILE)


check_one_source()


def table_files(rundirs):
    return [f"{TABLE_DIR}/{d}/{t}.parquet" for d in rundirs for t in TABLE_NAMES]


CAMPAIGNS = list(campaign_files())


def _campaign_runs():
    """campaign -> its run ids at the configured scale, in the campaign's seeded
    random order (capture.spec: pure, no testbed needed to plan)."""
    from capture.spec import expand, load

    runs = {}
    for name, f in campaign_files().items():
        doc = load(f, config["scale"])
        runs[name] = [
            s.run_id
            for s in expand(
                doc, base_dir=Path(f).resolve().parent, scale=config["scale"]
            )
        ]
    return runs


CAMPAIGN_RUNS = _campaign_runs() if CAPTURE else {}
CAPTURE_RUN_DIRS = [
    f"{config['raw_dir']}/{c}/{r}" for c, ids in CAMPAIGN_RUNS.items() for r in ids
]


def capture_run_dirs(campaign=None):
    """The run folders the capture makes (of one campaign, or all)."""
    if campaign is None:
        return list(CAPTURE_RUN_DIRS)
    return [f"{config['raw_dir']}/{campaign}/{r}" for r in CAMPAIGN_RUNS[campaign]]


def reference_table_dirs():
    """Folders of committed reference tables (<reference_dir>/<campaign>/<table>.parquet)."""
    root = Path(REFERENCE_DIR)
    if not root.is_dir():
        return []
    return sorted(
        str(d)
        for d in root.iterdir()
        if d.is_dir() and all((d / f"{t}.parquet").is_file() for t in TABLE_NAMES)
    )


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
    from report.summary import summary

    lines, _ = summary(Path(RESULTS), data_source())
    print("\n".join(lines), file=sys.stderr)
