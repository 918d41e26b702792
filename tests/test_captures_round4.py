"""Other people's captures, round 4 (issue 43): the cases fixed so far, each by construction.
(The multi-homed ``tcpdump -i any`` capture: tests/test_timeorder.py.)"""
from __future__ import annotations

import polars as pl
import pytest

from pipeline.assemble import canonical_addr, with_paths
from pipeline.cli import _path_map


def test_a_path_labels_its_address_in_any_spelling():
    sf = pl.DataFrame({"client_addr": ["2001:db8::2", "10.0.1.2", "2001:db8::3"]})
    out = with_paths(sf, {"2001:DB8:0:0:0:0:0:2": "wifi", " 10.0.1.2": "lte"})
    assert out["path"].to_list() == ["wifi", "lte", "2001:db8::3"]
    assert canonical_addr("FE80:0000::1") == "fe80::1" and canonical_addr("not-an-address") == "not-an-address"


def test_one_address_given_two_labels_is_refused():
    assert _path_map(["wifi=2001:db8::2", "wifi=2001:DB8::2"]) == {"2001:db8::2": "wifi"}
    with pytest.raises(SystemExit, match="two labels"):
        _path_map(["wifi=10.0.1.2", "lte=10.0.1.2"])
