"""A normal package: the wheel built from the checkout, installed into a fresh virtual
environment (no editable install, no checkout on the path), analyses a sample from a
folder outside the checkout through its console script, and carries every package and
data file (capture.cc, the campaigns, the papers, the notebook template, kernel-config)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "samples" / "mp2-iperf3-up"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    # built from a copy of the checkout's files: setuptools writes build/ and *.egg-info
    # beside the sources, which the checkout must not get from a test
    src = tmp / "src"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.splitlines()
    for f in files:
        if (REPO / f).is_file() and not f.startswith(("data/", "tests/")):
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / f, src / f)
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"), str(src)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    (built,) = (tmp / "dist").glob("mptcp_lab-*.whl")
    return built


def _venv(tmp: Path, wheel: Path, deps: Path) -> Path:
    """A fresh virtual environment at ``tmp``/venv with the wheel installed and ``deps``
    (a folder of packages) as a plain path: no .pth file of it is read, among them the
    editable install's pointer to the checkout."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", str(wheel)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "deps.pth").write_text(f"{deps}\n")
    return venv


@pytest.fixture(scope="module")
def installed(tmp_path_factory, wheel):
    """The wheel with the test environment's packages (polars, duckdb, the native decoder...)."""
    tmp = tmp_path_factory.mktemp("installed")
    return _venv(tmp, wheel, Path(sysconfig.get_paths()["purelib"])), tmp


# What only the extras bring (pyproject.toml): absent from `pip install mptcp-lab` alone.
EXTRAS_ONLY = ("pyarrow", "numpy", "vl_convert", "pandas")


@pytest.fixture(scope="module")
def alone(tmp_path_factory, wheel):
    """The wheel with the test environment's packages but the extras' (each folder of its
    site-packages linked, but theirs): what `pip install mptcp-lab` gives."""
    tmp = tmp_path_factory.mktemp("alone")
    deps = tmp / "deps"
    deps.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.lower().startswith(EXTRAS_ONLY) and not entry.name.endswith(".pth"):
            (deps / entry.name).symlink_to(entry)
    return _venv(tmp, wheel, deps), tmp


def run(venv: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, cwd=cwd, timeout=600,
                          env={"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(cwd)})


def test_the_installed_package_is_not_the_checkout(installed):
    venv, tmp = installed
    code = ("import capture.cc, capture.linkem_lab, findings, labfig, papers, pipeline, pcapdecode\n"
            "from capture import kernel, spec\n"
            "from papers import PAPERS\n"
            "from report import notebook_html\n"
            "import pathlib\n"
            "print(pipeline.__file__); print(capture.cc.__file__)\n"
            "assert kernel.CHECK.is_file() and list(kernel.PROFILES.glob('*.yaml')), kernel.CHECK\n"
            "assert spec.SCHEMA_FILE.is_file()\n"
            "assert all((pathlib.Path(p.__file__).parent / 'campaign.yaml').is_file() for p in\n"
            "           [__import__(f'papers.{k}', fromlist=['x']) for k in PAPERS])\n"
            "assert (pathlib.Path(notebook_html.__file__).parent / 'nbtemplates' / 'offline' / 'index.html.j2').is_file()\n")
    r = run(venv, tmp, str(venv / "bin" / "python"), "-c", code)
    assert r.returncode == 0, r.stderr[-3000:]
    for line in r.stdout.split():
        assert str(venv) in line and str(REPO) not in line, line


def test_the_console_script_analyses_a_sample_outside_the_checkout(installed):
    venv, tmp = installed
    work = tmp / "elsewhere"
    shutil.copytree(SAMPLE, work / "run")
    r = run(venv, work, "mptcp-lab", "analyze", "-q", "run", "--db", "lab.duckdb")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "connections" in r.stderr and (work / "lab.duckdb").is_file()
    r = run(venv, work, "mptcp-lab", "tables", "run", "--out", "t")
    assert r.returncode == 0 and (work / "t" / "connections.parquet").is_file(), r.stderr[-2000:]
    r = run(venv, work, "mptcp-lab", "--help")
    assert r.returncode == 0 and "analyze" in r.stdout and "compare" in r.stdout


def test_no_module_reaches_code_through_sys_path():
    hits = subprocess.run(["grep", "-rln", "--include=*.py", "sys.path.insert", "."], cwd=REPO,
                          capture_output=True, text=True).stdout.split()
    mine = Path(__file__).relative_to(REPO).as_posix()
    assert [h for h in hits if not h.startswith("./.venv") and not h.endswith(mine)] == []


HEAVY = {"snakemake", "jupyterlab", "jupyter-server", "notebook", "nbconvert", "nbclient", "ipykernel", "jupytext"}


def _name(req: str) -> str:
    import re
    return re.split(r"[\s;<>=!~\[(]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _closure(roots: list[str]) -> set[str]:
    """The distributions ``roots`` need without extras, transitively (from the installed
    metadata: what pip resolves for them)."""
    from importlib import metadata
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            reqs = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [_name(r) for r in reqs if "extra==" not in r.replace(" ", "").replace("'", '"')]
    return seen


def _base() -> list[str]:
    """What `pip install mptcp-lab` asks for: pyproject.toml's dependencies, no extra."""
    import tomllib
    return [_name(r) for r in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]]


def _installed_mb(names: set[str]) -> float:
    from importlib import metadata
    total = 0
    for n in names:
        try:
            total += sum(f.size or 0 for f in metadata.distribution(n).files or [])
        except metadata.PackageNotFoundError:  # a platform's own (colorama on Windows)
            continue
    return total / 1e6


def test_the_pipeline_alone_pulls_no_workflow_or_notebook_stack():
    """What `pip install mptcp-lab` pulls (its dependencies without extras, as installed
    here): the pipeline's own stack, no Snakemake or Jupyter, no pyarrow, numpy or
    vl-convert (the extras' figures and statistics), within the issue's 300 MB (issue 42;
    580 MB with those three)."""
    deps = _closure(_base())
    assert {"polars", "duckdb", "altair"} <= deps and not deps & HEAVY, sorted(deps & HEAVY)
    assert not deps & {"pyarrow", "numpy", "vl-convert-python", "pandas"}, sorted(deps)
    assert _installed_mb(deps) <= 300, (_installed_mb(deps), sorted(deps))


def test_the_pipeline_alone_analyses_plots_and_says_what_an_extra_adds(alone):
    """Without the extras' packages: analyze, tables, describe and plot -o .json work; plot
    -o .svg and compare say which extra to install, in one line, exit 2."""
    venv, tmp = alone
    py = str(venv / "bin" / "python")
    r = subprocess.run([py, "-c", "import numpy"], capture_output=True, text=True)
    assert r.returncode != 0, "numpy is importable: the test would prove nothing"
    work = tmp / "work"
    shutil.copytree(SAMPLE, work / "run")
    r = run(venv, work, "mptcp-lab", "analyze", "-q", "run", "--db", "lab.duckdb")
    assert r.returncode == 0, r.stderr[-3000:]
    r = run(venv, work, "mptcp-lab", "tables", "run", "--out", "t")
    assert r.returncode == 0 and (work / "t" / "connections.parquet").is_file(), r.stderr[-2000:]
    r = run(venv, work, "mptcp-lab", "describe", "subflows", "--db", "lab.duckdb")
    assert r.returncode == 0 and "path" in r.stdout, r.stderr[-2000:]
    run_id = subprocess.run([py, "-c", "import duckdb; print(duckdb.connect('lab.duckdb', read_only=True)"
                                       ".execute('select min(run_id) from runs').fetchone()[0])"],
                            capture_output=True, text=True, cwd=work, check=True).stdout.strip()
    r = run(venv, work, "mptcp-lab", "plot", "seq", run_id, "--db", "lab.duckdb", "-o", "seq.json")
    assert r.returncode == 0 and json.loads((work / "seq.json").read_text())["$schema"], r.stderr[-2000:]
    r = run(venv, work, "mptcp-lab", "plot", "seq", run_id, "--db", "lab.duckdb", "-o", "seq.svg")
    assert r.returncode == 2 and "mptcp-lab[figures]" in r.stderr and not (work / "seq.svg").exists(), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = run(venv, work, "mptcp-lab", "compare", "--db", "lab.duckdb", "--by", "cc")
    assert r.returncode == 2 and "mptcp-lab[compare]" in r.stderr, r.stderr
