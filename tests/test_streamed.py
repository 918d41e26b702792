"""A trace annotated from its spill, piece by piece, is ``flows.build_trace``'s
(pipeline/streamed.py)."""
from __future__ import annotations

import polars as pl
import pytest

from pipeline import flows, spill, streamed
from test_spill import SAMPLES, _compact, _pieces


def _spilled(p: pl.DataFrame, seed: int, where) -> tuple[spill.Spill, spill.Digest]:
    s, d = spill.Spill(where), spill.Digest()
    for piece in _pieces(p, seed):
        d.feed(piece)
        s.add(piece.select(streamed.SPILLED))
    d.finish(now_s=2e9)
    return s, d


@pytest.mark.parametrize("pcap", SAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_spilled_trace_is_annotated_as_in_memory(pcap, tmp_path):
    pytest.importorskip("pcapdecode")
    p = _compact(pcap)
    want = flows.build_trace(p)
    for seed in (1, 4):
        s, d = _spilled(p, seed, tmp_path)
        with s:
            try:
                tr = streamed.Trace(s, d)
            except streamed.InMemory:
                assert d.in_memory, "only the digest's reasons apply to the test captures"
                continue
            assert tr.subflows.equals(want.subflows)
            got = pl.concat(tr.packets())
            assert got.equals(want.packets)
            assert tr.notes == want.notes
