import os
from pathlib import Path

import pytest


def _mptcp_on() -> bool:
    try:
        return Path("/proc/sys/net/mptcp/enabled").read_text().strip() == "1"
    except OSError:
        return False


# Marks for tests that build network namespaces and run upstream MPTCP.
NEEDS_TESTBED = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces)"),
    pytest.mark.skipif(not _mptcp_on(), reason="needs upstream MPTCP (net.mptcp.enabled=1)"),
]

_LINKEM = Path(__file__).resolve().parents[1] / "capture" / "linkem" / "target" / "release" / "linkem"
# ... and whose paths go through the link emulator.
NEEDS_LINKEM_TESTBED = [
    *NEEDS_TESTBED,
    pytest.mark.skipif(not _LINKEM.is_file(), reason="needs the link emulator: capture/linkem/target/release/linkem "
                       "is not built (make linkem)"),
]


@pytest.fixture(scope="session")
def reference_db(tmp_path_factory) -> Path:
    """data/reference loaded into a lab database once per session (skips when the
    reference has no tables)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    dirs = sorted({p.parent for p in (root / "data" / "reference").rglob("runs.parquet")})
    if not dirs:
        pytest.skip("data/reference/ has no reference tables")
    db = tmp_path_factory.mktemp("reference") / "reference.duckdb"
    r = subprocess.run([sys.executable, "-m", "pipeline", "load", *map(str, dirs), "--db", str(db)],
                       cwd=root, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return db
