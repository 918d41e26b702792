"""Kernel facts (kernel-config/check), tool versions, sysctl profiles."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import yaml

from .cc import ALGORITHMS, object_path
from .util import LINKEM, REPO, linkem_available

# the checkout's kernel-config/, or the copy an installed wheel put under <prefix>/share
KERNEL_CONFIG = next((d for d in (REPO / "kernel-config", Path(sys.prefix) / "share" / "mptcp-lab" / "kernel-config")
                      if d.is_dir()), REPO / "kernel-config")
CHECK = KERNEL_CONFIG / "check"
PROFILES = KERNEL_CONFIG / "profiles"

# net.core.* buffer limits are global (not per network namespace) on Linux: setting
# them inside a namespace would change the host, so the testbed never does.
GLOBAL_SYSCTLS = ("net.core.rmem_max", "net.core.wmem_max", "net.core.rmem_default",
                  "net.core.wmem_default", "net.core.optmem_max")


MPTCP_ENABLED = Path("/proc/sys/net/mptcp/enabled")


def testbed_blockers() -> list[str]:
    """Why this machine cannot run the testbed (root, upstream MPTCP on); empty when it can."""
    why = []
    if os.geteuid() != 0:
        why.append("not root")
    try:
        if MPTCP_ENABLED.read_text().strip() != "1":
            why.append("net.mptcp.enabled is 0")
    except OSError:
        why.append(f"kernel without MPTCP ({MPTCP_ENABLED.parent} missing)")
    return why


@functools.lru_cache(maxsize=1)
def check() -> dict:
    p = subprocess.run([str(CHECK)], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        return {"error": p.stderr.strip()[-500:]}
    return json.loads(p.stdout)


def _first_line(cmd: list[str]) -> str | None:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except OSError:
        return None
    txt = (p.stdout + p.stderr).strip()
    return txt.splitlines()[0].strip() if txt else None


@functools.lru_cache(maxsize=1)
def tool_versions() -> dict:
    v = {
        "tcpdump": _first_line(["tcpdump", "--version"]),
        "tshark": _first_line(["tshark", "--version"]),
        "wget": _first_line(["wget", "--version"]),
        "nginx": _first_line(["nginx", "-v"]),
        "mptcpize": _first_line(["mptcpize", "--version"]),
        "iproute2": _first_line(["ip", "-V"]),
        "ethtool": _first_line(["ethtool", "--version"]),
        "d_itg": _first_line(["ITGSend", "-h"]),
        "python": _first_line(["python3", "--version"]),
    }
    if linkem_available():
        v["linkem"] = _first_line([str(LINKEM), "--version"])
    else:
        v["linkem"] = None
    try:
        v["repo_commit"] = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                                          text=True, timeout=10).stdout.strip() or None
    except OSError:
        v["repo_commit"] = None
    return v


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        return None


def builds() -> dict:
    """What a host's runs were made with, to tell hosts apart before their runs are pooled:
    its kernel and the lab's own native builds (the link emulator and the BPF congestion
    controls) by content hash, so two nodes built from different sources differ here."""
    return {"host": platform.node(), "kernel": platform.release(), "linkem_sha256": _sha256(LINKEM),
            "cc_sha256": {n: _sha256(object_path(n)) for n in sorted(ALGORITHMS)}}


def profile_names() -> list[str]:
    return sorted(p.stem for p in PROFILES.glob("*.yaml"))


def load_profile(name: str, params: dict | None = None) -> dict:
    """Load kernel-config/profiles/<name>.yaml; substitute ``{param}`` placeholders.

    Returns the profile plus ``sysctl_netns``: the sysctls that can be applied inside
    the run's namespaces (the global ``net.core.*`` ones are listed in
    ``skipped_global`` instead, never applied)."""
    path = PROFILES / f"{name}.yaml"
    if not path.is_file():
        raise ValueError(f"sysctl_profile: unknown profile {name!r} (known: {', '.join(profile_names())})")
    prof = yaml.safe_load(path.read_text())
    values = dict(prof.get("params", {}) or {})
    values.update(params or {})

    def sub(v):
        s = str(v)
        for k, val in values.items():
            s = s.replace("{" + k + "}", str(val))
        if re.search(r"\{\w+\}", s):
            raise ValueError(f"sysctl_profile {name}: unresolved placeholder in {s!r}")
        return s

    sysctls = {k: sub(v) for k, v in (prof.get("sysctl") or {}).items()}
    prof["name"] = name
    prof["params_used"] = values
    prof["sysctl"] = sysctls
    prof["route"] = {k: sub(v) for k, v in (prof.get("route") or {}).items()}
    prof["sysctl_netns"] = {k: v for k, v in sysctls.items() if k not in GLOBAL_SYSCTLS}
    prof["skipped_global"] = {k: v for k, v in sysctls.items() if k in GLOBAL_SYSCTLS}
    return prof
