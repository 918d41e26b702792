import sys
from pathlib import Path

# tests/ holds helpers (pcapgen) imported by several test modules.
sys.path.insert(0, str(Path(__file__).parent))

import os  # noqa: E402

import pytest  # noqa: E402


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
