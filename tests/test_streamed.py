"""A trace annotated from its spill, piece by piece, is ``flows.build_trace``'s
(pipeline/streamed.py)."""
from __future__ import annotations

import polars as pl
import pytest

from pipeline import flows, sanity, spill, streamed
from pipeline.timeorder import TimeOrder
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


def _sorted(frame) -> pl.DataFrame:
    df = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
    return df.sort(df.columns, nulls_last=True)


def _spilled_in_time_order(p: pl.DataFrame, seed: int, where) -> tuple[spill.Spill, spill.Digest, TimeOrder]:
    s, d, o = spill.Spill(where), spill.Digest(), TimeOrder(kept_rows=500)
    for piece in [*(o.feed(piece) for piece in _pieces(p, seed)), o.finish()]:
        d.feed(piece)
        if piece.height:
            s.add(piece.select(streamed.SPILLED))
    assert not o.in_memory
    d.finish(now_s=2e9)
    return s, d, o


@pytest.mark.parametrize("pcap", SAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_spilled_traces_tables_are_the_in_memory_ones(pcap, tmp_path):
    """Every table, row for row (the per-packet ones in another row order: they are
    written as their rows are settled), in pieces of random sizes; a capture out of
    timestamp order is put in order as ``sanity`` does (``timeorder``)."""
    pytest.importorskip("pcapdecode")
    want = _tables_both_ways(pcap, tmp_path)
    assert want["seq_packets"].height > 100


@pytest.mark.parametrize("shift", [1 << 31, 1 << 20, -(1 << 25)])
def test_a_reused_four_tuple_is_split_on_the_streamed_path_too(shift, tmp_path):
    """issue 43: a new connection on a closed one's 4-tuple, its SYN not captured, is split
    piece by piece (it sent the capture to memory), with the in-memory path's tables."""
    pytest.importorskip("pcapdecode")
    from pcapgen import write
    from test_metrics_synthetic import reused_four_tuple
    pcap = write(tmp_path / "server.pcap", *reused_four_tuple(shift, shift, repeats=True))
    want = _tables_both_ways(pcap, tmp_path)
    assert want["subflows"].filter(pl.col("direction") == "down").height == 2
    assert any("a new connection on the same addresses" in n for n in flows.build_trace(_compact(pcap)).notes)


def _tables_both_ways(pcap, tmp_path) -> dict[str, pl.DataFrame]:
    """The in-memory tables of ``pcap`` (the server vantage's), after asserting that the
    streamed path gives the same for both vantages."""
    from pipeline import assemble, tables
    p = _compact(pcap)
    c = sanity.check(p, now_s=2e9)
    want_trace = flows.build_trace(c.packets)
    compared = 0
    for vantage in ("client", "server"):
        want = assemble.assemble(tables.measure(want_trace, vantage), want_trace.subflows, "r", "t", vantage, {}, [])
        want = {k: sanity.restore_frames(t, c.frames) for k, t in want.items()}
        s, d, o = _spilled_in_time_order(p, 7, tmp_path)
        with s, spill.Spill(tmp_path) as out:
            try:
                tr = streamed.Trace(s, d, original=o.original if o.renumbered else None)
            except streamed.InMemory:
                continue
            problems: list[dict] = []
            got = assemble.assemble(streamed.measure(tr, vantage, out), tr.subflows, "r", "t", vantage, {}, problems)
            assert sorted(got) == sorted(want)
            for name in want:
                assert _sorted(got[name]).equals(_sorted(want[name])), name
            assert tr.notes == want_trace.notes
            compared += 1
    assert compared == 2, "every test capture is streamed"
    return want


def _db_tables(db, where) -> dict[str, pl.DataFrame]:
    import duckdb
    from pipeline import schema
    con = duckdb.connect(str(db), read_only=True)
    try:
        for n in schema.TABLES:
            con.execute(f"COPY (SELECT * FROM \"{n}\") TO '{where / (n + '.parquet')}' (FORMAT parquet)")
    finally:
        con.close()
    return {n: pl.read_parquet(where / f"{n}.parquet") for n in schema.TABLES}


@pytest.mark.parametrize("pcap", [p for p in SAMPLES if p.parent.name in ("mp2-linkem", "sp-wifi-tbf")
                                   or p.name == "client_1_tcp_only.pcap"],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_cli_stores_a_streamed_capture_as_an_in_memory_one(pcap, tmp_path):
    """``analyze`` and ``tables`` of a capture the size threshold sends through a spill
    (MPTCP_LAB_STREAM_FROM=0): the same store and Parquet tables, and no spill left.
    (client_1_tcp_only: timestamps out of order, read in timestamp order piece by piece.)"""
    pytest.importorskip("pcapdecode")
    import os
    import subprocess
    import sys
    spills = tmp_path / "tmp"
    spills.mkdir()
    out = {}
    for name, threshold in (("streamed", "0"), ("in_memory", str(1 << 62))):
        env = {**os.environ, "MPTCP_LAB_STREAM_FROM": threshold, "TMPDIR": str(spills)}
        for args in (["analyze", "-q", str(pcap), "--db", str(tmp_path / f"{name}.duckdb")],
                     ["tables", str(pcap), "--out", str(tmp_path / name)]):
            r = subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True, text=True, env=env)
            assert r.returncode == 0, r.stderr
        (tmp_path / f"{name}-db").mkdir()
        out[name] = _db_tables(tmp_path / f"{name}.duckdb", tmp_path / f"{name}-db")
        assert not list(spills.glob("mptcp-lab-spill-*"))
    assert out["streamed"]["seq_packets"].height > 500
    for n, want in out["in_memory"].items():
        assert _sorted(out["streamed"][n]).equals(_sorted(want)), n
        got = pl.read_parquet(tmp_path / "streamed" / f"{n}.parquet")
        assert _sorted(got).equals(_sorted(pl.read_parquet(tmp_path / "in_memory" / f"{n}.parquet"))), n


def test_the_known_answer_tests_hold_on_the_streamed_path():
    """The scapy-built traces with known metrics (losses, Karn's rule, joins, reinjections,
    out-of-order arrivals, uploads), every capture streamed (MPTCP_LAB_STREAM_FROM=0)."""
    pytest.importorskip("pcapdecode")
    import os
    import subprocess
    import sys
    here = os.path.dirname(__file__)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                        os.path.join(here, "test_metrics_synthetic.py"), os.path.join(here, "test_directions.py")],
                       capture_output=True, text=True, env={**os.environ, "MPTCP_LAB_STREAM_FROM": "0"})
    assert r.returncode == 0, r.stdout[-3000:]
    assert " passed" in r.stdout


def test_each_sweep_stage_takes_every_piece_in_order_and_stops_as_told():
    # the sweeps' threads (streamed._one_behind): each work sees every piece, in order,
    # while the next is made; a work's False stops the sweep, its exception is raised here
    made, seen_a, seen_b = [], [], []

    def pieces(n):
        for i in range(n):
            made.append(i)
            yield i

    assert streamed._one_behind(pieces(50), seen_a.append, seen_b.append) is True
    assert seen_a == seen_b == made == list(range(50))

    made.clear()
    stopped = []
    assert streamed._one_behind(pieces(50), lambda i: stopped.append(i) or i < 10) is False
    # the refusal is seen once the next piece is made, which is then not taken
    assert stopped == list(range(11)) and made == list(range(12))

    def fails(i):
        if i == 7:
            raise streamed.InMemory("a stage's reason")

    with pytest.raises(streamed.InMemory, match="a stage's reason"):
        streamed._one_behind(pieces(50), fails)
