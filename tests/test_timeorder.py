"""A capture put in timestamp order piece by piece is what ``sanity`` makes of it whole
(pipeline/timeorder.py)."""
from __future__ import annotations

import polars as pl
import pytest

from pipeline import sanity
from pipeline.timeorder import TimeOrder
from test_spill import SAMPLES, _compact, _pieces


def _ordered(p: pl.DataFrame, seed: int, kept_rows: int) -> tuple[TimeOrder, pl.DataFrame]:
    o = TimeOrder(kept_rows)
    out = [o.feed(piece) for piece in _pieces(p, seed)]
    out.append(o.finish())
    return o, pl.concat([x for x in out if x.width])


def _packets(times: list[float], srcs: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"frame": range(1, len(times) + 1), "time_s": times, "src": srcs},
                        schema={"frame": pl.UInt32, "time_s": pl.Float64, "src": pl.Categorical})


@pytest.mark.parametrize("pcap", [p for p in SAMPLES if p.parent.name == "thirdparty"], ids=lambda p: p.name)
def test_the_capture_is_read_in_the_order_sanity_puts_it_in(pcap):
    pytest.importorskip("pcapdecode")
    p = _compact(pcap)
    c = sanity.check(p, now_s=2e9)
    for seed in (1, 3):
        o, got = _ordered(p, seed, kept_rows=4000)
        if o.in_memory:
            assert c.frames is None, "only captures sanity does not reorder are left to memory"
            continue
        assert got.drop("frame").equals(c.packets.drop("frame"))
        assert got["frame"].is_sorted() and got["frame"].n_unique() == got.height
        if c.frames is None:
            assert not o.renumbered and got.equals(p)
        else:
            assert o.renumbered
            assert o.original(got["frame"]).equals(c.frames)
            assert o.notes() == [n for n in c.notes if n.startswith("capture order repaired")]


def test_frames_are_kept_until_the_first_one_out_of_order():
    p = _packets([1.0, 2.0, 3.0, 2.5, 4.0, 5.0], ["a", "a", "b", "a", "b", "a"])
    o, got = _ordered(p, 1, kept_rows=2)
    assert got["time_s"].to_list() == [1.0, 2.0, 2.5, 3.0, 4.0, 5.0]
    assert got["frame"].to_list() == [1, 2, 3, 4, 5, 6]  # 4 is given a number after 2: 3 on
    assert o.original(got["frame"]).to_list() == [1, 2, 4, 3, 5, 6]
    assert o.notes() == [sanity.reordered_note(1, 0.5)]


def test_a_packet_stamped_before_rows_given_out_sends_the_capture_to_memory():
    p = _packets([1.0, 2.0, 3.0, 4.0, 5.0, 1.5], ["a", "a", "a", "a", "a", "b"])
    o = TimeOrder(kept_rows=2)
    assert o.feed(p.head(5))["time_s"].to_list() == [1.0, 2.0, 3.0]
    assert o.feed(p.tail(1)).height == 0
    assert "before packets read more than 2 packets before it" in o.in_memory
    assert o.finish().height == 0


def test_a_sender_going_backwards_sends_the_capture_to_memory():
    p = _packets([1.0, 2.0, 1.5, 3.0], ["a", "b", "b", "a"])
    o, _ = _ordered(p, 1, kept_rows=100)
    assert o.in_memory == "timestamps go backwards within one sender's packets"


def test_senders_timed_while_the_capture_was_in_order_are_held_to_it_after():
    # pieces of one row: the first two in order (each sender's last time only is taken),
    # then the capture steps back between senders, which is allowed, and then a sender
    # goes back behind its own time of a piece read in order, which is not
    ok, _ = _ordered(_packets([1.0, 2.0, 1.5, 3.0], ["a", "b", "a", "b"]), 1, kept_rows=100)
    assert ok.in_memory is None and ok.backwards == 1
    bad, _ = _ordered(_packets([1.0, 2.0, 1.5, 1.8], ["a", "b", "a", "b"]), 1, kept_rows=100)
    assert bad.in_memory == "timestamps go backwards within one sender's packets"


def test_an_ordered_capture_is_given_out_as_it_is():
    p = _packets([float(i) for i in range(1000)], ["a", "b"] * 500).with_columns(pl.col("frame") * 3)
    o, got = _ordered(p, 2, kept_rows=10)
    assert got.equals(p) and not o.renumbered and o.notes() == []
    assert o.original(got["frame"]).equals(got["frame"])


def _flows(times: list[float], dsts: list[str]) -> pl.DataFrame:
    """The server's one address sending to a client's two addresses (two subflows)."""
    n = len(times)
    return pl.DataFrame({"frame": range(1, n + 1), "time_s": times, "src": ["10.0.0.1"] * n, "dst": dsts,
                         "sport": [80] * n, "dport": [40000 if d.endswith(".2") else 40001 for d in dsts]},
                        schema={"frame": pl.UInt32, "time_s": pl.Float64, "src": pl.Categorical,
                                "dst": pl.Categorical, "sport": pl.UInt16, "dport": pl.UInt16})


def test_tcpdump_any_at_a_multihomed_client_is_repaired_not_refused():
    """issue 43: each subflow comes in through its own interface, in order; between the two
    interfaces the capture steps back. One sender's address, two flows: the order is
    repaired (streamed and in memory), and the time metrics are kept."""
    p = _flows([1.0, 1.2, 1.1, 1.4, 1.3, 1.6], ["10.1.0.2", "10.1.0.2", "10.2.0.2", "10.1.0.2", "10.2.0.2", "10.2.0.2"])
    o, got = _ordered(p, 1, kept_rows=100)
    assert o.in_memory is None and o.backwards == 2
    assert got["time_s"].to_list() == sorted(p["time_s"].to_list())
    c = sanity.check(p, now_s=2e9)
    assert not c.time_unusable and any(n.startswith("capture order repaired") for n in c.notes)
    # one flow going backwards is still impossible
    bad = _flows([1.0, 1.2, 1.1], ["10.1.0.2"] * 3)
    o, _ = _ordered(bad, 1, kept_rows=100)
    assert o.in_memory == "timestamps go backwards within one sender's packets"
