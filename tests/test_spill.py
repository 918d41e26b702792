"""A capture decoded into a spill, piece by piece: the digest's rows give the structure
stages what every packet gives them (pipeline/spill.py)."""
from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pytest

from pipeline import extract, flows, reuse, sanity, spill

ROOT = Path(__file__).resolve().parents[1]
# the lab's samples, and other people's (scripts/fetch-thirdparty.sh, run by `make test`)
SAMPLES = sorted((ROOT / "data" / "samples").glob("*/*.pcap")) + sorted((ROOT / "data" / "thirdparty").glob("*.pcap*"))


def _pieces(p: pl.DataFrame, seed: int) -> list[pl.DataFrame]:
    rng = random.Random(seed)
    out, at = [], 0
    while at < p.height:
        n = rng.choice([1, 2, 7, 50, 300, 4000])
        out.append(p.slice(at, n))
        at += n
    return out


def _digest(p: pl.DataFrame, seed: int = 1) -> spill.Digest:
    d = spill.Digest()
    for piece in _pieces(p, seed):
        d.feed(piece)
    d.finish(now_s=2e9)
    return d


def _compact(pcap: Path) -> pl.DataFrame:
    return extract.read_packets(pcap, "native", compact=flows.compact).packets


@pytest.mark.parametrize("pcap", SAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_digest_gives_the_structure_every_packet_gives(pcap):
    """(A capture out of timestamp order is fed in the order sanity puts it in, as the
    streamed path's ``timeorder`` gives it to the digest.)"""
    pytest.importorskip("pcapdecode")
    p = sanity.check(_compact(pcap), now_s=2e9).packets
    for seed in (1, 2):
        d = _digest(p, seed)
        if d.in_memory:
            # it is sanity's business: the in-memory path must have a reason to act
            checked = sanity.check(p.clone(), now_s=2e9)
            assert checked.notes or reuse.split_reused_streams(p)[1], d.in_memory
            continue
        rows = d.rows()
        assert rows.height < max(200, p.height // 2)
        assert reuse.split_reused_streams(rows)[1] == reuse.split_reused_streams(p)[1]
        want = flows.find_subflows(p)
        got = flows.find_subflows(rows, sent=d.sent())
        assert got.equals(want)
        for addrs in (frozenset(), frozenset(want["client_addr"].head(1).to_list())):
            assert flows.find_subflows(rows, addrs, sent=d.sent()).equals(flows.find_subflows(p, addrs))
        sf, notes = flows.assign_connections(want, p)
        got_sf, got_notes = flows.assign_connections(got, rows)
        assert got_sf.equals(sf) and got_notes == notes


def test_the_labs_own_captures_take_the_spill():
    """The digest sends to memory only what needs it: the lab's captures, in time order,
    are read from the spill (whatever their DATA_ACKs' width: mp2-iperf3-up has 32-bit ones)."""
    pytest.importorskip("pcapdecode")
    lab = [p for p in SAMPLES if p.parent.name != "thirdparty"]
    assert len(lab) == 8 and all(_digest(_compact(pcap)).in_memory is None for pcap in lab)


def _ordered_sample() -> pl.DataFrame:
    for pcap in SAMPLES:
        p = _compact(pcap)
        if p.height > 500 and _digest(p).in_memory is None:
            return p
    pytest.skip("no sample in time order")


def test_captures_needing_sanitys_repairs_go_to_memory():
    pytest.importorskip("pcapdecode")
    p = _ordered_sample()
    back = p.with_columns(time_s=pl.when(pl.col("frame") == p["frame"][300]).then(pl.col("time_s") - 0.5)
                          .otherwise("time_s"))
    assert "backwards" in _digest(back).in_memory
    # a packet written twice, the copy in another piece than the original
    twice = pl.concat([p.head(301), p.slice(300, 1), p.slice(301)]).with_columns(
        frame=pl.int_range(1, p.height + 2, dtype=pl.UInt32))
    assert "duplicate" in _digest(twice, seed=3).in_memory
    cut = p.with_columns(cap_bytes=pl.when(pl.col("frame") == p["frame"][200]).then(pl.lit(30, pl.UInt32))
                         .otherwise("cap_bytes"))
    assert "snap length" in _digest(cut).in_memory
    same = p.with_columns(time_s=pl.lit(1.7e9))
    assert _digest(same).in_memory
    assert "impossible" in _digest(p.with_columns(time_s=pl.col("time_s") + 1e9)).in_memory


def test_a_spill_reads_back_its_pieces(tmp_path):
    pytest.importorskip("pcapdecode")
    p = _ordered_sample()
    with spill.Spill(tmp_path) as s:
        for piece in _pieces(p, 5):
            s.add(piece)
        assert s.rows == p.height
        back = pl.concat(s.pieces(["frame", "src", "seq"]))
        assert back.equals(p.select("frame", "src", "seq"))
        where = s.dir
    assert not where.exists()


def test_a_spill_left_by_a_killed_process_is_removed_by_the_next(tmp_path):
    import subprocess
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = tmp_path / f"{spill.PREFIX}{dead.pid}-abc"
    (left / "x").mkdir(parents=True)
    mine = tmp_path / f"{spill.PREFIX}{__import__('os').getpid()}-def"
    mine.mkdir()
    with spill.Spill(tmp_path):
        assert not left.exists() and mine.exists()


@pytest.mark.parametrize("shift", [1 << 31, 1 << 20, -(1 << 25)])
def test_the_digest_finds_a_reused_four_tuple_whatever_the_pieces(tmp_path, shift):
    """The split window needs each sender's last packet before the stream's first close,
    which may lie in the close's own piece, before it (a piece's last row comes after it)."""
    from pcapgen import write
    from test_metrics_synthetic import reused_four_tuple
    p = _compact(write(tmp_path / "server.pcap", *reused_four_tuple(shift, shift, repeats=True)))
    want = reuse.split_reused_streams(p)[1]
    assert len(want) == 1
    for size in range(1, p.height + 1):
        d = spill.Digest()
        for at in range(0, p.height, size):
            d.feed(p.slice(at, size))
        assert reuse.split_reused_streams(d.rows())[1] == want, size


@pytest.fixture
def tiny_tmp(tmp_path):
    """A 64-KiB file system (tmpfs, as root) to spill into; skipped where none can be mounted."""
    import os
    import subprocess
    where = tmp_path / "tiny"
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                                           capture_output=True).returncode != 0:
        pytest.skip("needs root to mount a tiny tmpfs")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_spill_folder_is_named_with_how_to_choose_another(tiny_tmp):
    s = spill.Spill(where=tiny_tmp)
    with pytest.raises(spill.SpillFull, match=f"{tiny_tmp}.*No space left on device.*TMPDIR"):
        s.add(pl.DataFrame({"a": list(range(100_000))}))
    assert s.files == [] and list(s.dir.iterdir()) == []  # the partial piece is not left behind
    s.close()


def test_analyze_with_a_full_spill_exits_2_and_stores_nothing(tiny_tmp, tmp_path, monkeypatch, capsys):
    from pipeline import cli
    monkeypatch.setenv("TMPDIR", str(tiny_tmp))
    monkeypatch.setenv("MPTCP_LAB_STREAM_FROM", "0")  # every capture streamed, so spilled
    monkeypatch.setattr("tempfile.tempdir", None)  # gettempdir() reads TMPDIR again
    db = tmp_path / "lab.duckdb"
    pcap = next(p for p in SAMPLES if p.suffix == ".pcap" and p.stat().st_size > 200_000)
    rc = cli.main(["analyze", str(pcap), "--db", str(db), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "spill folder" in err and "TMPDIR" in err and "nothing of this call was stored" in err
    assert "internal error" not in err and not db.exists()
