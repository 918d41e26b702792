"""The workflow's policy, which rules/common.smk binds to the names the rules use: which
papers it covers, whether this machine captures, where the runs come from, which run
folders and table folders exist, and the one-reproduction-per-results-folder guard.
Plain Python (Snakemake puts rules/ on the import path), so it is linted and read as
code, and the rule files stay rules."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

from capture.kernel import testbed_blockers
from capture.scales import NOT_EVIDENCE, SCALES
from capture.spec import expand, load
from papers import PAPERS
from pipeline.schema import OPTIONAL_TABLES, TABLES

# the tables every per-run folder holds (a folder written before an optional one, the
# committed reference among them, is complete without it)
TABLE_NAMES = [t for t in TABLES if t not in OPTIONAL_TABLES]
# the code every figure and finding depends on (derived layer, claims, figure helpers,
# the report): a change re-runs the findings, the notebooks and the report
ANALYSIS_DIRS = ("findings", "labfig", "papers", "report")


def cover_registry(config: dict) -> None:
    """The papers (campaigns, notebooks) the workflow covers: the registry's, unless the
    config names a subset; a name that is no paper is refused."""
    config.setdefault("campaigns", list(PAPERS))
    config.setdefault("notebooks", list(PAPERS))
    unknown = sorted((set(config["campaigns"]) | set(config["notebooks"])) - set(PAPERS))
    if unknown:
        raise WorkflowError(f"config campaigns/notebooks: {', '.join(unknown)} not a paper of papers/ "
                            f"({', '.join(PAPERS)})")


def analysis_code() -> list[str]:
    return sorted(str(p) for d in ANALYSIS_DIRS for p in Path(d).rglob("*")
                  if p.suffix in (".py", ".yaml") and p.name != "notebook.py"
                  and "__pycache__" not in p.parts) + ["pipeline/derived.py"]


def run_dirs_under(root) -> list[str]:
    """Run folders (containing meta.json) at most two levels below ``root``, sorted."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = {p.parent for p in root.glob("meta.json")}
    found |= {p.parent for p in root.glob("*/meta.json")}
    found |= {p.parent for p in root.glob("*/*/meta.json")}
    return sorted(str(p) for p in found)


def campaign_files(campaigns: list[str]) -> dict[str, str]:
    """campaign name -> its YAML: each configured paper's campaign (papers/<paper>/
    campaign.yaml, from the registry)."""
    return {name: str(PAPERS[name].campaign_file.relative_to(Path.cwd())) for name in campaigns
            if name in PAPERS and PAPERS[name].campaign_file.exists()}


def capture_blockers(campaigns: list[str]) -> list[str]:
    """Why this machine cannot capture (empty list when it can)."""
    why = testbed_blockers()
    if not Path("capture/__main__.py").exists():
        why.append("capture/ stage not installed (no capture/__main__.py)")
    if not campaign_files(campaigns):
        why.append("no paper campaign configured (config campaigns)")
    return why


def decide_capture(config: dict, dryrun: bool) -> bool:
    want = {"true": True, "false": False}.get(config["capture"], config["capture"])
    if want is False:
        return False
    if want is True and dryrun:
        # a dry run plans the captures; whether this machine can run them is the real run's question
        return True
    why = capture_blockers(config["campaigns"])
    if not why:
        return True
    if want is True:
        raise WorkflowError("capture=true but this machine cannot capture: " + "; ".join(why))
    # auto: say so once and go on from the committed samples.
    print(f"note: not capturing ({'; '.join(why)}); analysing {config['samples_dir']} and the reference tables "
          f"in {config.get('reference_dir', 'data/reference')} instead", file=sys.stderr)
    return False


def data_source(config: dict, capture: bool) -> str:
    """Where the findings' runs come from, in words, for the report's first screen."""
    if capture:
        figures_only = not SCALES[config["scale"]].evidence
        return (f"captured on this machine at the {config['scale']} scale ({', '.join(config['campaigns'])}; run "
                f"folders in {config['raw_dir']})"
                + (f" — {config['scale']} scale: figures only, no verdicts" if figures_only else ""))
    ref = config.get("reference_dir", "data/reference")
    return (f"the committed standard-scale reference ({ref}, see {ref}/README.md for when, how and from which "
            f"commit it was captured) and the sample runs of {config['samples_dir']}")


# One reproduction per results folder. Its database is a store that keeps every run
# loaded into it, so captures judged in a folder that holds the reference's (or another
# scale's) reproduction would be pooled with those runs. Snakemake would not even
# capture there: it does not rerun jobs below a checkpoint whose outputs exist
# (snakemake#4124). So a folder remembers its source (.source, written when a run
# starts) and another source is refused before any job.
def _folder(path: str) -> str:
    """A folder as the source key names it: ``data/samples/``, ``./data/samples`` and its
    absolute path are one folder (relative to the workflow's folder when below it)."""
    return os.path.normpath(os.path.relpath(os.path.abspath(path)))


def source_key(config: dict, capture: bool) -> str:
    """What a results folder's reproduction is made from (compared as text)."""
    if capture:
        return f"capture scale={config['scale']} raw_dir={_folder(config['raw_dir'])}"
    return (f"reference {_folder(config.get('reference_dir', 'data/reference'))} + samples "
            f"{_folder(config['samples_dir'])}")


def check_folders(config: dict, capture: bool) -> None:
    """Stop (before any job) on a results folder that is a file, or, without a capture, on
    a reference or samples folder that is missing (the report would name it as its source)."""
    results = Path(config["results_dir"])
    if results.exists() and not results.is_dir():
        raise WorkflowError(f"results_dir {results}: is a file, not a folder (--config results_dir=...)")
    if capture:
        return
    ref = config.get("reference_dir", "data/reference")
    if not Path(ref).is_dir():
        raise WorkflowError(f"reference_dir {ref}: no such folder (--config reference_dir=...: the committed tables "
                            "are in data/reference)")
    if not reference_table_dirs(ref):
        raise WorkflowError(f"reference_dir {ref}: holds no campaign's tables (<campaign>/<table>.parquet)")
    if not Path(config["samples_dir"]).is_dir():
        raise WorkflowError(f"samples_dir {config['samples_dir']}: no such folder (--config samples_dir=...; an "
                            "empty folder for none)")


def quick_runs(raw_dir: str, campaigns: list[str]) -> int:
    """Finished figures-only (quick) runs in the campaigns' raw folders: a run id of the
    quick scale may also be one of the standard scale's, which would then be taken as
    captured, and a database with any quick run judges none of its paper's rows."""
    n = 0
    for name in campaign_files(campaigns):
        for d in run_dirs_under(f"{raw_dir}/{name}"):
            try:
                n += json.loads(Path(d, "meta.json").read_text()).get("scale") in NOT_EVIDENCE
            except (OSError, ValueError, AttributeError):
                continue
    return n


def check_one_source(config: dict, capture: bool, source_file: Path) -> None:
    """Stop (before any job) where this call would mix reproductions; see above."""
    results, key = config["results_dir"], source_key(config, capture)
    try:
        was = source_file.read_text().strip()
    except OSError:
        was = None
    if was is not None and was != key:
        raise WorkflowError(
            f"{results} holds another reproduction ({was}); this call is {key}. Its database keeps every run loaded "
            f"into it, so the two would be judged together. Give this call a results folder of its own (--config "
            f"results_dir=...; `make reproduce-all SCALE=...` uses results/<scale>), or move {results} aside.")
    if capture and SCALES[config["scale"]].evidence:
        quick = quick_runs(config["raw_dir"], config["campaigns"])
        if quick:
            raise WorkflowError(
                f"{config['raw_dir']} holds {quick} quick-scale run(s) of these campaigns: a {config['scale']}-scale "
                f"capture would take those with the same run ids as captured, and no row of their papers would be "
                f"judged. Capture into another folder (--config raw_dir=...; `make reproduce-all SCALE=quick` uses "
                f"data/raw/quick), or move them aside.")


def remember_source(source_file: Path, key: str) -> None:
    """Called when a run starts (not on a dry run): the folder's source, once."""
    if not source_file.exists():
        source_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = source_file.with_name(f".source.tmp-{os.getpid()}")
        tmp.write_text(key + "\n")
        os.replace(tmp, source_file)


def campaign_runs(campaigns: list[str], scale: str) -> dict[str, list[str]]:
    """campaign -> its run ids at ``scale``, in the campaign's seeded random order
    (capture.spec: pure, no testbed needed to plan)."""
    runs = {}
    for name, f in campaign_files(campaigns).items():
        runs[name] = [s.run_id for s in expand(load(f, scale), base_dir=Path(f).resolve().parent, scale=scale)]
    return runs


def reference_table_dirs(reference_dir: str) -> list[str]:
    """Folders of committed reference tables (<reference_dir>/<campaign>/<table>.parquet)."""
    root = Path(reference_dir)
    if not root.is_dir():
        return []
    return sorted(str(d) for d in root.iterdir()
                  if d.is_dir() and all((d / f"{t}.parquet").is_file() for t in TABLE_NAMES))
