"""The set-up proves itself: its command -> package map is what dpkg says on this
machine (for every command installed, so a wrong entry fails anywhere, not only on a
fresh machine), every tool the capture code needs is in the map, and an install
that leaves a command missing stops with its name and package."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SETUP = ROOT / "scripts" / "setup-system.sh"
SBIN_PATH = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"


def package_map() -> dict[str, str]:
    out = subprocess.run(["bash", str(SETUP), "--map"], capture_output=True, text=True, check=True).stdout
    return dict(line.split() for line in out.splitlines())


def _usrmerge_aliases(path: str) -> list[str]:
    """dpkg records a file under the path its package ships (/bin/ip), which on a
    merged-/usr system is also reachable as /usr/bin/ip: try both spellings."""
    out = [path]
    if path.startswith("/usr/"):
        out.append(path[4:])
    else:
        out.append("/usr" + path)
    return out


def owners(cmd: str) -> set[str] | None:
    """Debian packages owning the file ``cmd`` runs, or the file ``cmd`` names (None
    when dpkg knows none)."""
    found = cmd if cmd.startswith("/") else shutil.which(cmd, path=SBIN_PATH)
    candidates = []
    for p in dict.fromkeys([found, os.path.realpath(found)]):
        candidates += _usrmerge_aliases(p)
    for c in candidates:
        r = subprocess.run(["dpkg", "-S", c], capture_output=True, text=True)
        if r.returncode == 0:
            pkgs = set()
            for line in r.stdout.splitlines():
                head, _, _ = line.rpartition(": ")
                if "diversion" in head:
                    continue
                pkgs |= {p.strip().split(":")[0] for p in head.split(",")}
            if pkgs:
                return pkgs
    return None


@pytest.mark.skipif(shutil.which("dpkg") is None, reason="not a Debian system (no dpkg)")
def test_package_map_matches_dpkg_for_every_installed_command():
    checked, wrong = [], []
    for cmd, pkg in package_map().items():
        if not (os.path.exists(cmd) if cmd.startswith("/") else shutil.which(cmd, path=SBIN_PATH)):
            continue  # not installed here: nothing to compare
        got = owners(cmd)
        if got is None:
            continue  # installed outside dpkg (a user's own build): the map cannot be checked
        checked.append(cmd)
        if pkg not in got:
            wrong.append(f"{cmd}: map says {pkg}, dpkg -S says {sorted(got)}")
    assert wrong == []
    assert checked, "no mapped command is installed from a Debian package here"


def test_every_tool_the_capture_checks_for_is_in_the_map():
    src = (ROOT / "capture" / "cli.py").read_text()
    tools = re.search(r"for t in \(([^)]*)\)", src).group(1)
    needed = set(re.findall(r'"([^"]+)"', tools))
    assert needed, "capture/cli.py's prerequisite list moved: update this test"
    assert needed - set(package_map()) == set()


def _shim_path(tmp_path: Path, drop: str) -> Path:
    """A PATH holding every mapped command except ``drop``, the few utilities the
    script uses, and an apt-get that installs nothing."""
    shim = tmp_path / "bin"
    shim.mkdir()
    for cmd in list(package_map()) + ["sort", "sed", "id"]:
        if cmd.startswith("/"):
            continue  # a file the script checks where it is (/usr/bin/time, a header), not on PATH
        real = shutil.which(cmd, path=SBIN_PATH)
        if cmd != drop and real:
            (shim / cmd).symlink_to(real)
    (shim / "python3").symlink_to(sys.executable)
    (shim / "apt-get").write_text("#!/bin/sh\nexit 0\n")
    (shim / "apt-get").chmod(0o755)
    return shim


@pytest.mark.skipif(shutil.which("tcptrace", path=SBIN_PATH) is None, reason="tcptrace not installed")
def test_an_install_that_leaves_a_command_missing_stops_with_its_name_and_package(tmp_path):
    shim = _shim_path(tmp_path, drop="tcptrace")  # /usr/bin: not on the script's sbin fallback
    r = subprocess.run(["/bin/bash", str(SETUP)], capture_output=True, text=True,
                       env={"PATH": str(shim), "HOME": str(tmp_path)})
    assert r.returncode == 1
    assert "tcptrace (Debian package tcptrace)" in r.stderr
    if os.geteuid() == 0:
        assert "installing system packages: tcptrace" in r.stdout
        assert "still missing after installing" in r.stderr
    else:
        assert "sudo apt-get install tcptrace" in r.stderr


def test_check_mode_lists_missing_commands_without_installing(tmp_path):
    shim = _shim_path(tmp_path, drop="tcptrace")
    (shim / "apt-get").write_text("#!/bin/sh\necho apt-get must not run >&2; exit 9\n")
    r = subprocess.run(["/bin/bash", str(SETUP), "--check"], capture_output=True, text=True,
                       env={"PATH": str(shim), "HOME": str(tmp_path)})
    assert r.returncode == 1
    assert "tcptrace (Debian package tcptrace)" in r.stderr and "must not run" not in r.stderr


def test_python_check_names_a_missing_package(tmp_path):
    ok = subprocess.run([sys.executable, str(ROOT / "scripts" / "check-python.py")], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    # the same check against a pyproject asking for a package that is not installed
    fake = tmp_path / "scripts"
    fake.mkdir()
    shutil.copy(ROOT / "scripts" / "check-python.py", fake)
    (tmp_path / "pyproject.toml").write_text('[project]\nname="x"\ndependencies=["polars>=1.0", "no-such-pkg-xyz>=1"]\n')
    r = subprocess.run([sys.executable, str(fake / "check-python.py")], capture_output=True, text=True)
    assert r.returncode == 1 and "no-such-pkg-xyz: not installed" in r.stderr


def test_rust_check_names_what_to_install(tmp_path):
    crate = tmp_path / "crate"
    crate.mkdir()
    (crate / "Cargo.toml").write_text('[package]\nname = "x"\nrust-version = "99.0"\n')
    r = subprocess.run(["bash", str(ROOT / "scripts" / "check-rust.sh"), str(crate)], capture_output=True, text=True,
                       env={**os.environ, "PATH": os.environ["PATH"] + f":{Path.home()}/.cargo/bin"})
    if shutil.which("rustc", path=os.environ["PATH"] + f":{Path.home()}/.cargo/bin"):
        assert r.returncode == 1 and "older than 99.0" in r.stderr
    r = subprocess.run(["/bin/bash", str(ROOT / "scripts" / "check-rust.sh"), str(crate)], capture_output=True,
                       text=True, env={"PATH": "/nonexistent"})
    assert r.returncode == 1 and "cargo not found" in r.stderr and "rustup" in r.stderr
