"""What a new user meets at the terminal: each set-up stage of the Makefile prints one line
("set-up: venv (.venv) … ok (already there)"), the tools' own output (pip, setuptools,
maturin, cargo, apt) goes to a log under results/logs/setup/ (scripts/quiet.sh) and shows
only when a stage fails, `make test` still shows pytest and the linters, and `make
reproduce-all` ends with where the report is, "up to date" first when there was nothing to
do. No network, no root: the Makefile is read and dry-run; the helper runs harmless commands."""
from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import time
import tomllib
from pathlib import Path

import pytest

from report.summary import AFFECTED, closing, main, report_line

ROOT = Path(__file__).resolve().parents[1]
QUIET = ROOT / "scripts" / "quiet.sh"
MAKEFILE = (ROOT / "Makefile").read_text()
# the set-up's rules, as the Makefile names them
SETUP_TARGETS = ["system", "$(STAMP)", "$(DECODER)", "venv", "venv-status", "linkem", "cc", "thirdparty"]
# what prints pages when it works: only through `$(QUIET) run LOG ...`
NOISY = ["pip install", "-m venv", "cargo build", "setup-system.sh", "fetch-thirdparty.sh", "check-rust.sh",
         "check-python.py", "compileall", "$(MAKE)"]
needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="no make")


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without a calling make's (`make test` exports its flags and SETUP_T0)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "SETUP_T0")}
    return {**env, **extra}


def quiet(*args: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(QUIET), *args], cwd=cwd, capture_output=True, encoding="utf-8",
                          timeout=60, env=clean_env(**extra))


def recipes() -> dict[str, list[str]]:
    """target as written (e.g. "$(STAMP)") -> its recipe's lines (continuations joined, tab removed)."""
    out: dict[str, list[str]] = {}
    target = None
    lines = MAKEFILE.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("\t"):
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1] + " " + lines[i].strip()
            if target is not None:
                out[target].append(line[1:])
        elif line and not line.startswith("#"):
            m = re.match(r"([^:=\s.][^:=]*?)\s*:(?!=)", line)  # a rule (not ':=', not .PHONY)
            target = m.group(1).strip() if m else None
            if target is not None:
                out.setdefault(target, [])
        i += 1
    return out


def segments(line: str) -> list[str]:
    """A recipe line's shell commands."""
    return [s.strip() for s in re.split(r"&&|\|\||;", line)]


# --- the Makefile ---------------------------------------------------------------------

@pytest.mark.parametrize("target", SETUP_TARGETS)
def test_setup_recipes_echo_nothing_and_send_the_tools_output_to_a_log(target):
    rec = recipes().get(target)
    assert rec, f"no recipe for {target}: the Makefile changed, update this test"
    for line in rec:
        assert line.startswith("@"), f"{target}: make would echo {line!r}"
        for seg in segments(line):
            for tool in NOISY:
                if tool in seg:
                    assert "$(QUIET) run $(SETUP_LOGS)/" in seg, f"{target}: {tool} prints to the terminal: {seg!r}"


@pytest.mark.parametrize("target", ["system", "$(STAMP)", "$(DECODER)", "linkem", "cc", "thirdparty"])
def test_a_stage_that_runs_opens_one_line_and_closes_it(target):
    said = [seg for line in recipes()[target] for seg in segments(line)
            if re.search(r"\$\(QUIET\) (begin|end|already)\b", seg)]
    assert len(said) == 2 and "$(QUIET) begin " in said[0] and "$(QUIET) end" in said[1], said


def test_a_stage_with_nothing_to_do_still_says_so():
    r = recipes()
    assert any("$(QUIET) already $(STAMP) " in ln for ln in r["venv-status"])
    assert any("$(QUIET) already $(DECODER) " in ln for ln in r["venv"])
    # the venv's line before the decoder's: the decoder waits for venv-status
    assert re.search(r"^\$\(DECODER\):.*\|\s*venv-status\s*$", MAKEFILE, re.M)
    assert "venv-status" in re.search(r"^\.PHONY:(.*)$", MAKEFILE, re.M).group(1).split()


def test_make_test_still_shows_pytest_and_the_linters():
    r = recipes()
    shown = r["test"] + r["lint"]
    for tool in ("pytest", "ruff check", "snakefmt --check", "snakemake --lint", "cargo test"):
        lines = [ln for ln in shown if tool in ln]
        assert lines, f"{tool} left `make test`: update this test"
        for ln in lines:
            assert "$(QUIET)" not in ln and ">" not in ln.split(tool, 1)[1], ln


def test_reproduce_all_ends_with_where_the_report_is():
    rec = [ln for ln in recipes()["reproduce-all"] if not ln.lstrip("@").startswith("#")]
    assert "snakemake" in rec[0] and "--logger mptcp-lab" in rec[0]
    last = rec[-1]
    assert "report.summary" in last and "--check" in last and "--where" in last, last
    assert "--since=$(SETUP_T0)" in last and "--results $(RESULTS)" in last, last
    assert "mktemp" in t0_line() and "date -r" in t0_line()


def t0_line() -> str:
    """The Makefile's start time: a new file's mtime, on the clock of the products it is compared with."""
    return re.search(r"^export SETUP_T0 := .*$", MAKEFILE, re.M).group(0)


@needs_make
def test_dry_run_shows_every_command_and_writes_no_log():
    """`make -n -B` (every stage as if out of date): each tool's command line, behind its log,
    and the report line last; the sub-make of capture/cc runs dry in the open."""
    logs = ROOT / "results" / "logs" / "setup"

    def sizes():
        return {p.name: p.stat().st_size for p in logs.glob("*.log")} if logs.is_dir() else {}

    before = sizes()
    r = subprocess.run(["make", "-n", "-B", "reproduce-all"], cwd=ROOT, capture_output=True, encoding="utf-8",
                       timeout=120, env=clean_env())
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout
    for pattern in (r"scripts/quiet\.sh run results/logs/setup/system\.log scripts/setup-system\.sh",
                    r"scripts/quiet\.sh run results/logs/setup/venv\.log \S+ -m venv \.venv",
                    r"scripts/quiet\.sh run results/logs/setup/venv\.log \.venv/bin/pip install -q -e",
                    r"scripts/quiet\.sh run results/logs/setup/decoder\.log \.venv/bin/pip install -q "
                    r"\./pipeline/pcapdecode",
                    r"scripts/quiet\.sh begin \"venv \(\.venv\)\""):
        assert re.search(pattern, out), (pattern, out[-3000:])
    commands = [ln for ln in out.splitlines() if ln.strip() and not ln.startswith(("#", "make"))]
    assert re.search(r"report\.summary --check --where --since=\d+ --results results$", commands[-1]), commands[-1]
    assert sizes() == before


@needs_make
def test_a_stage_says_one_line_installs_once_and_shows_a_failure_with_its_log(tmp_path):
    """The Makefile's pattern on a stamp of its own: first run "installed", then "already
    there"; a failing tool: its last lines and the log's path, make's exit status nonzero,
    and the stamp left for the next run. (Times are set ten seconds apart, not waited for.)"""
    src, stamp = tmp_path / "src", tmp_path / "stamp"
    src.write_text("x")

    def ago(path: Path, s: int) -> None:
        t = time.time_ns() - s * 10**9
        os.utime(path, ns=(t, t))

    ago(src, 30)
    (tmp_path / "Makefile").write_text(
        t0_line() + "\n"
        f"Q := bash {QUIET}\n"
        "RC ?= 0\n"
        "show: stamp\n"
        "\t@$(Q) already stamp \"demo\"\n"
        "stamp: src\n"
        "\t@$(Q) begin \"demo\"\n"
        "\t@$(Q) run logs/demo.log sh -c 'echo noisy; echo warning >&2; exit $(RC)'\n"
        "\t@touch stamp\n"
        "\t@$(Q) end stamp installed\n")

    def make(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["make", *args], cwd=tmp_path, capture_output=True, encoding="utf-8", timeout=60,
                              env=clean_env())

    r = make()
    assert r.returncode == 0 and r.stdout == "set-up: demo … installed\n" and r.stderr == "", r
    assert "noisy" in (tmp_path / "logs" / "demo.log").read_text()
    ago(stamp, 20)  # made by an earlier make
    r = make()
    assert r.returncode == 0 and r.stdout == "set-up: demo … ok (already there)\n", r
    ago(src, 10)  # the source changed since
    r = make("RC=3")
    assert r.returncode != 0 and r.stdout == "set-up: demo … ", r
    assert r.stderr.startswith("FAILED (exit 3): sh -c"), r.stderr
    assert "  noisy" in r.stderr and "  warning" in r.stderr and "logs/demo.log" in r.stderr
    r = make()
    assert r.returncode == 0 and r.stdout == "set-up: demo … installed\n", r


# --- scripts/quiet.sh -------------------------------------------------------------------

def test_run_is_silent_when_the_command_works_and_keeps_its_output(tmp_path):
    r = quiet("run", "logs/x.log", "sh", "-c", "echo out; echo err >&2", cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    log = (tmp_path / "logs" / "x.log").read_text()
    assert "sh -c echo out; echo err >&2" in log and "out\nerr\n" in log
    quiet("run", "logs/x.log", "echo", "second", cwd=tmp_path)
    assert "out\n" in (tmp_path / "logs" / "x.log").read_text()  # appended, never lost


def test_run_shows_the_failed_commands_last_lines_and_exits_with_its_status(tmp_path):
    quiet("run", "x.log", "echo", "an earlier command", cwd=tmp_path)
    r = quiet("run", "x.log", "sh", "-c", "for i in $(seq 1 50); do echo line$i; done; exit 7", cwd=tmp_path)
    assert r.returncode == 7 and r.stdout == ""
    shown = r.stderr.splitlines()
    assert shown[0].startswith("FAILED (exit 7): sh -c")
    assert shown[1:-1] == [f"  line{i}" for i in range(21, 51)]  # its own last 30 lines, none of the earlier
    assert "x.log" in shown[-1]
    assert "line1\n" in (tmp_path / "x.log").read_text()
    r = quiet("run", "x.log", "sh", "-c", "echo a; echo b; exit 2", cwd=tmp_path, QUIET_TAIL="1")
    assert r.returncode == 2 and "  b" in r.stderr and "  a" not in r.stderr
    r = quiet("run", "x.log", "sh", "-c", "echo c; exit 1", cwd=tmp_path, QUIET_TAIL="1000")
    assert "  c" in r.stderr and "earlier" not in r.stderr and "line50" not in r.stderr  # this command's only
    r = quiet("run", "x.log", "no-such-command-xyz", cwd=tmp_path)
    assert r.returncode == 127 and "no-such-command-xyz" in r.stderr


def test_run_under_make_n_runs_in_the_open_and_writes_no_log(tmp_path):
    r = quiet("run", "x.log", "echo", "plan", cwd=tmp_path, MAKEFLAGS="n -- SCALE=quick")
    assert r.returncode == 0 and r.stdout == "plan\n" and not (tmp_path / "x.log").exists()
    # not a dry run: no flags, long options, variables
    for flags in ("", " -- DB=notebooks/x", "--no-print-directory", "k"):
        r = quiet("run", "x.log", "echo", "logged", cwd=tmp_path, MAKEFLAGS=flags)
        assert r.stdout == "", flags
    assert (tmp_path / "x.log").read_text().splitlines().count("logged") == 4


def test_end_and_already_say_built_or_already_there(tmp_path):
    f = tmp_path / "product"
    f.write_text("x")
    m = f.stat().st_mtime_ns
    before, after = str(m - 1), str(m + 1)  # this make started before / after FILE changed
    assert quiet("begin", "decoder (pipeline/pcapdecode)", cwd=tmp_path).stdout == \
        "set-up: decoder (pipeline/pcapdecode) … "
    assert quiet("end", str(f), cwd=tmp_path, SETUP_T0=before).stdout == "built\n"
    assert quiet("end", str(f), "installed", cwd=tmp_path, SETUP_T0=before).stdout == "installed\n"
    assert quiet("end", str(f), cwd=tmp_path, SETUP_T0=after).stdout == "ok (already there)\n"
    assert quiet("end", "missing", "built", "skipped: no BTF", cwd=tmp_path, SETUP_T0=after).stdout == \
        "skipped: no BTF\n"
    assert quiet("end", cwd=tmp_path).stdout == "ok\n"
    assert quiet("end", str(f), cwd=tmp_path).stdout == "ok\n"  # no SETUP_T0: no claim either way
    assert quiet("already", str(f), "venv (.venv)", cwd=tmp_path, SETUP_T0=after).stdout == \
        "set-up: venv (.venv) … ok (already there)\n"
    for t0 in (before, ""):  # its stage ran (and said so), or nothing known
        r = quiet("already", str(f), "venv (.venv)", cwd=tmp_path, SETUP_T0=t0)
        assert (r.returncode, r.stdout) == (0, "")


def test_a_wrong_call_prints_the_usage(tmp_path):
    for args in ((), ("bogus",), ("run", "only-a-log"), ("begin",)):
        r = quiet(*args, cwd=tmp_path)
        assert r.returncode == 2 and "quiet.sh run LOG CMD" in r.stderr, args


# --- the last lines of reproduce-all (report.summary --where) -----------------------------

def _results(tmp_path: Path, verdicts: list[str], issues: list[dict] | None = None) -> Path:
    res = tmp_path / "results"
    (res / "report").mkdir(parents=True)
    with (res / "findings.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, ["id", "paper", "magnitude_verdict"])
        w.writeheader()
        w.writerows({"id": f"cs244-{i}", "paper": "cs244", "magnitude_verdict": v} for i, v in enumerate(verdicts))
    if issues is not None:
        with (res / "report" / "run-issues.csv").open("w", newline="") as fh:
            w = csv.DictWriter(fh, ["campaign", "run_id", "what", "reason"])
            w.writeheader()
            w.writerows(issues)
    (res / "report" / "index.html").write_text("<html></html>")
    return res


def test_the_last_lines_say_up_to_date_and_where_the_report_is(tmp_path, capsys):
    res = _results(tmp_path, ["agree", "disagree", "no data"])
    report = res / "report" / "index.html"
    made = report.stat().st_mtime_ns
    line = f"report: {report} (3 findings)"
    assert report_line(res) == line
    assert closing(res, made + 1) == ["up to date: nothing to redo", line]  # older than this make
    assert closing(res, made) == [line]  # written by this make's workflow
    assert closing(res) == [line]
    assert main(["--check", "--where", f"--since={made + 1}", "--results", str(res)]) == 0
    out = capsys.readouterr()
    assert out.out.splitlines() == ["up to date: nothing to redo", line] and out.err == ""
    # a `date` without %N leaves the "up to date" out, nothing else
    assert main(["--check", "--where", "--since=1795916215%N", "--results", str(res)]) == 0
    assert capsys.readouterr().out.splitlines() == [line]
    assert report_line(tmp_path / "nothing").startswith("report: none (")


def test_affected_verdicts_come_before_the_report_line(tmp_path, capsys):
    res = _results(tmp_path, ["agree"], [{"campaign": "cs244", "run_id": "r1", "what": "failed", "reason": "rc 4"}])
    assert main(["--check", "--where", "--results", str(res)]) == AFFECTED
    out = capsys.readouterr()
    assert out.err.startswith("VERDICTS AFFECTED") and out.out.splitlines()[-1].startswith("report: ")
    # without --check: the whole summary, the report line once, last
    assert main(["--where", "--results", str(res)]) == AFFECTED
    out = capsys.readouterr()
    assert "report: " not in out.err
    assert out.out.splitlines() == [f"report: {res / 'report' / 'index.html'} (1 finding)"]


# --- setuptools' warnings, fixed rather than hidden ------------------------------------------

def test_package_data_is_declared_not_discovered():
    """include-package-data off: setuptools warned, 40 lines per folder, that each data folder
    which is not a package (capture/campaigns, capture/cc/src, ...) "would be ignored". Every
    data file is then package-data's: each pattern must still find its files."""
    st = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert st["include-package-data"] is False
    for pkg, patterns in st["package-data"].items():
        base = ROOT.joinpath(*pkg.split("."))
        assert (base / "__init__.py").is_file(), pkg
        for pat in patterns:
            assert [p for p in base.glob(pat) if p.is_file()], f"package-data {pkg}: {pat} matches no file"
