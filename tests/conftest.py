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
