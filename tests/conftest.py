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
