"""pyproject.toml (what pip and CI install) and environment.yml (for conda users)
must list the same packages with the same lower bounds."""
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
# conda-forge names that differ from PyPI's
CONDA_TO_PYPI = {"python-duckdb": "duckdb"}
NOT_PACKAGES = {"python", "pip"}


def split(req: str) -> tuple[str, str]:
    m = re.match(r"\s*([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?\s*(.*)", req)
    return m.group(1).lower().replace("_", "-"), m.group(2).replace(" ", "")


def pyproject_requirements() -> dict[str, str]:
    p = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(p["dependencies"])
    for extra in p.get("optional-dependencies", {}).values():
        reqs += extra
    return dict(split(r) for r in reqs)


def conda_requirements() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    out = {}
    for dep in env["dependencies"]:
        for req in dep["pip"] if isinstance(dep, dict) else [dep]:
            name, spec = split(req)
            name = CONDA_TO_PYPI.get(name, name)
            if name not in NOT_PACKAGES:
                out[name] = spec
    return out


def test_environment_yml_lists_what_pyproject_lists():
    py, conda = pyproject_requirements(), conda_requirements()
    assert sorted(set(py) - set(conda)) == [], "in pyproject.toml but not environment.yml"
    assert sorted(set(conda) - set(py)) == [], "in environment.yml but not pyproject.toml"
    assert {k: conda[k] for k in py} == py, "version bounds differ"
