"""Layers point one way and the paper is the unit (issue 23): the pipeline names no
paper and imports nothing above it; every paper lives in its own folder, registered once;
the notebooks draw the findings' own estimates and compute no claim statistic."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from papers import PAPERS

ROOT = Path(__file__).resolve().parents[1]
# "ditg" is also the tool the pipeline parses (D-ITG's logs, ditg-recv.txt, workloads
# ditg-netflix ...): as a word it is the tool; the paper key is the bare string "ditg"
PAPER_WORD = re.compile(r"\b(" + "|".join([p for p in PAPERS if p != "ditg"] + ["raiciu", "drepas"]) + r")\b", re.I)


def _code_strings(tree: ast.AST) -> list[str]:
    """String constants that are not docstrings (keys, SQL, identifiers in strings)."""
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
                docs.add(id(node.body[0].value))
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docs]


@pytest.mark.parametrize("path", sorted((ROOT / "pipeline").glob("*.py")), ids=lambda p: p.name)
def test_the_pipeline_names_no_paper(path):
    """No paper in the pipeline's code: no identifier, key, campaign regex or SQL literal.
    Metric definitions cite the paper that defines them in their documentation (prose,
    not code): a citation is allowed there, e.g. 'Chen §3.3: ...' in a definition's text."""
    tree = ast.parse(path.read_text())
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)] + \
            [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert not [n for n in names if PAPER_WORD.search(n.replace("_", " "))], path
    for s in _code_strings(tree):
        prose = len(s.split()) > 6  # a definition's documentation
        if not prose:
            assert not PAPER_WORD.search(s) and s.strip().lower() not in PAPERS, f"{path.name}: {s!r}"
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            assert not [m for m in mods if m.split(".")[0] in ("papers", "findings", "labfig")], path


def test_every_paper_is_one_folder():
    for p in PAPERS.values():
        for f in (p.campaign_file, p.profiles_file, p.inventory_file, p.notebook_file, p.folder / "claims.py",
                  p.folder / "synthetic.py"):
            assert f.is_file(), f
    # nothing of a paper left in the old places
    assert not list((ROOT / "capture" / "campaigns").glob("chen*.yaml"))
    assert not (ROOT / "findings" / "claims").exists() or not list((ROOT / "findings" / "claims").glob("*.py"))
    assert sorted(p.stem for p in (ROOT / "notebooks").glob("*.py")) == ["explore"]


@pytest.mark.parametrize("paper", list(PAPERS))
def test_notebooks_compute_no_claim_statistic(paper):
    """A notebook draws the claims' group estimates (labfig.verdicts) and the runs behind
    them; it never recomputes a claim (no statistic of findings.stats, no 'shown')."""
    src = PAPERS[paper].notebook_file.read_text()
    assert "labfig.verdicts" in src and "verdict_table" in src
    for banned in ("findings.stats", "from findings import", "shown(", "bootstrap(", "estimate("):
        assert banned not in src, f"{paper}: {banned}"


# --- The house (issue 44): packages import downwards only, no file loops, no imports
# hidden in functions, no long functions or files. Lower index = lower layer.
LAYERS = ("pipeline", "capture", "findings", "labfig", "papers", "report")
PACKAGES = set(LAYERS) | {"snakemake_logger_plugin_mptcp_lab", "cluster", "benchmarks", "scripts"}
# command entry points may import lazily, to keep `--help` and start-up fast
ENTRY_POINTS = {"cli.py", "__main__.py"}
MAX_FUNCTION_LINES, MAX_FILE_LINES = 80, 700


def _sources() -> list[Path]:
    return sorted(p for d in PACKAGES if (ROOT / d).is_dir() for p in (ROOT / d).rglob("*.py")
                  if "__pycache__" not in p.parts and p.name != "notebook.py")


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported project module, whether the import sits inside a function) for every
    import of ``path`` outside ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse(path.read_text())
    me = _module(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out: list[tuple[str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                out.extend((a.name, inner) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(up + ([base] if base else []))
                # `from pkg import mod` imports pkg.mod when that is a module of ours
                for a in child.names:
                    sub = f"{base}.{a.name}"
                    known = (ROOT / Path(*sub.split("."))).with_suffix(".py").is_file() or \
                        (ROOT / Path(*sub.split(".")) / "__init__.py").is_file()
                    out.append((sub if known else base, inner))
            visit(child, inner)

    visit(tree, False)
    return [(m, f) for m, f in out if m.split(".")[0] in PACKAGES]


def test_packages_import_only_downwards():
    wrong = []
    for path in _sources():
        top = _module(path).split(".")[0]
        if top not in LAYERS:
            continue
        for mod, _ in _imports(path):
            other = mod.split(".")[0]
            if other in LAYERS and LAYERS.index(other) > LAYERS.index(top):
                wrong.append(f"{path.relative_to(ROOT)} imports {mod} (a layer above)")
    assert not wrong, "\n".join(wrong)


def test_no_project_import_inside_a_function():
    wrong = [f"{p.relative_to(ROOT)}: {m}" for p in _sources() if p.name not in ENTRY_POINTS
             for m, inside in _imports(p) if inside]
    assert not wrong, "imports inside functions (move them up; break the loop they dodge):\n" + "\n".join(wrong)


def test_no_import_loop_between_files():
    graph: dict[str, set[str]] = {}
    for p in _sources():
        me = _module(p)
        graph[me] = {m for m, inside in _imports(p) if not inside and m != me}
    # a module importing its own package's __init__ (re-exports) is not a loop of files
    for me, deps in graph.items():
        graph[me] = {d for d in deps if d in graph and not me.startswith(d + ".")}
    state: dict[str, int] = {}
    loops: list[list[str]] = []

    def walk(node: str, stack: list[str]) -> None:
        state[node] = 1
        for d in sorted(graph[node]):
            if state.get(d) == 1:
                loops.append(stack[stack.index(d):] + [d] if d in stack else [node, d])
            elif d not in state:
                walk(d, stack + [d])
        state[node] = 2

    for n in sorted(graph):
        if n not in state:
            walk(n, [n])
    assert not loops, "\n".join(" -> ".join(x) for x in loops)


def _rust_functions(text: str) -> list[tuple[str, int]]:
    """(name, lines) of each Rust fn with a body, by brace depth (strings and comments
    with braces are rare in our sources; a char literal '{' is skipped)."""
    out, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"\s*(?:pub(?:\([a-z]+\))?\s+)?(?:const\s+|unsafe\s+)?fn\s+(\w+)", lines[i])
        if not m:
            i += 1
            continue
        depth, started, j = 0, False, i
        while j < len(lines):
            code = re.sub(r"//.*$|'[{}]'|\"(?:\\.|[^\"\\])*\"", "", lines[j])
            depth += code.count("{") - code.count("}")
            started = started or "{" in code
            if started and depth <= 0 or (not started and code.rstrip().endswith(";")):
                break
            j += 1
        if started:
            out.append((m.group(1), j - i + 1))
        i += 1
    return out


def test_no_long_function_or_file():
    long = []
    for p in _sources():
        text = p.read_text()
        if len(text.splitlines()) > MAX_FILE_LINES:
            long.append(f"{p.relative_to(ROOT)}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{p.relative_to(ROOT)}:{node.lineno} {node.name}: {n} lines")
    for p in sorted((ROOT / "papers").glob("*/notebook.py")):
        if len(p.read_text().splitlines()) > MAX_FILE_LINES:
            long.append(f"{p.relative_to(ROOT)}: {len(p.read_text().splitlines())} lines")
    for crate in ("pipeline/pcapdecode/src", "capture/linkem/src"):
        for p in sorted((ROOT / crate).glob("*.rs")):
            if p.name.endswith("_tests.rs") or p.name == "tests.rs":
                continue
            text = p.read_text()
            body = text.split("#[cfg(test)]")[0]  # unit tests at a file's end are tests
            if len(body.splitlines()) > MAX_FILE_LINES:
                long.append(f"{p.relative_to(ROOT)}: {len(body.splitlines())} lines")
            long += [f"{p.relative_to(ROOT)} fn {name}: {n} lines" for name, n in _rust_functions(body)
                     if n > MAX_FUNCTION_LINES]
    assert not long, "\n".join(long)
