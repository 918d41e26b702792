"""Coupled congestion control for upstream Linux MPTCP: LIA, OLIA and BALIA as BPF
``tcp_congestion_ops`` (struct_ops), coupled through per-connection state in a BPF
map (src/mptcp_cc.bpf.c), loaded by a small libbpf program (src/loader.c), with a
plain reference model of each increase rule (model.py).

``make cc`` builds build/{lia,olia,balia}.bpf.o and build/mptcp-cc against a
vmlinux.h generated from the running kernel's BTF. A campaign that names one of
ALGORITHMS as its congestion control gets it registered for the run's duration
(loader.Registered), and unregistered afterwards even when the run is killed.
"""
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"
LOADER = BUILD / "mptcp-cc"

# name (as the kernel and campaign YAML know it) -> what it is
ALGORITHMS = {
    "lia": "LIA, coupled increase of RFC 6356 (MPTCP's 'coupled')",
    "olia": "OLIA, opportunistic linked increases (Khalili et al., ToN 2013)",
    "balia": "BALIA, balanced linked adaptation (Peng et al., ToN 2016)",
}


def is_bpf(name: str) -> bool:
    """True for the congestion controls this lab provides as BPF programs."""
    return name in ALGORITHMS


def object_path(name: str) -> Path:
    if name not in ALGORITHMS:
        raise ValueError(f"unknown coupled congestion control {name!r} (known: {', '.join(ALGORITHMS)})")
    return BUILD / f"{name}.bpf.o"
