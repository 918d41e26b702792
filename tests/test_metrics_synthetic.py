"""Metrics on pcaps built with scapy, where every value is known by construction.

Times are chosen so each expected number can be read off the exchange; pcap
timestamps have microsecond resolution, hence the 1e-3 ms tolerance.
"""
import subprocess
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcapgen import (CLIENT_KEY, Subflow, join_handshake, mp_handshake, opt_dss, server_idsn,
                     tcp_handshake, write)
from pipeline import dsnmap, extract, flows, mptcp, tables

US = 1e-3  # ms: one microsecond, the pcap timestamp resolution


def analyze(path, run="r", vantage=None):
    t, problems = tables.analyze_trace(path, run, vantage)
    return tables.complete({**held(t), "problems": tables.problems_table(problems)})


def held(t: dict) -> dict[str, pl.DataFrame]:
    """A trace's tables, those over a spill (a streamed trace's) read."""
    return {k: v.collect() if isinstance(v, pl.LazyFrame) else v for k, v in t.items()}


# --- single-path download with one retransmission -------------------------------

def single_path(vantage: str, ipv6: bool = False) -> Subflow:
    """Plain TCP, 5 segments of 1000 B; segment 3 is lost and retransmitted.

    One-way delay 50 ms both ways. The server sends segments at 150..154 ms; the
    client acks 1 and 2 (arriving 250/251 ms), dup-acks 2001 (253, 254 ms); the
    server retransmits 2001 at 254 ms; one ACK for everything arrives at 354 ms.
    """
    cl, sv = ("fd00:1::2", "fd00::1") if ipv6 else ("10.0.1.2", "10.0.0.1")
    sf = Subflow(cl, sv, 40001, ipv6=ipv6)
    s = 0.050 if vantage == "client" else 0.0  # server-sent packets reach the client later
    c = 0.050 if vantage == "server" else 0.0  # and client-sent ones the server
    if vantage == "server":
        tcp_handshake(sf, 0.050, 0.050, 0.150)
        sf.request(0.150)
    else:
        tcp_handshake(sf, 0.000, 0.100, 0.100)
        sf.request(0.100)
    sends = [0.150, 0.151, 0.152, 0.153, 0.154]
    for i, t in enumerate(sends):
        if vantage == "server" or i != 2:  # segment 3 never reaches the client
            sf.data(t + s, 1 + 1000 * i, 1000, client_rel_seq=101)
    for t, a in [(0.200, 1001), (0.201, 2001), (0.203, 2001), (0.204, 2001)]:
        sf.ack(t + c, a, client_rel_seq=101)
    sf.data(0.254 + s, 2001, 1000, client_rel_seq=101)
    sf.ack(0.304 + c, 5001, client_rel_seq=101)
    return sf


@pytest.mark.parametrize("ipv6", [False, True])
def test_single_path_server_trace_loss_and_rtt(tmp_path, ipv6):
    t = analyze(write(tmp_path / "server.pcap", single_path("server", ipv6)))
    sub = t["subflows"].row(0, named=True)
    assert sub["vantage"] == "server"
    assert (sub["data_packets"], sub["retransmitted_packets"]) == (6, 1)
    assert sub["loss_rate"] == pytest.approx(1 / 6)
    # Karn: segment 3 gives no sample; 4 and 5 wait for the ACK at 354 ms.
    # (by frame: a streamed trace's rows come as they settle)
    assert t["rtt_samples"].sort("frame")["rtt_ms"].to_list() == pytest.approx([100, 100, 201, 200], abs=US)
    assert sub["rtt_samples"] == 4 and sub["rtt_min_ms"] == pytest.approx(100, abs=US)
    conn = t["connections"].row(0, named=True)
    assert conn["transport"] == "tcp" and conn["n_subflows"] == 1
    assert conn["download_time_s"] is None  # a client-trace metric
    assert t["problems"].height == 0


def test_single_path_client_trace_download_time(tmp_path):
    t = analyze(write(tmp_path / "client.pcap", single_path("client")))
    conn = t["connections"].row(0, named=True)
    # First SYN at 0, last data packet (the retransmission) received at 304 ms.
    assert conn["download_time_s"] == pytest.approx(0.304, abs=1e-6)
    assert conn["payload_bytes"] == 5000
    sub = t["subflows"].row(0, named=True)
    assert sub["direction"] == "down"
    assert sub["loss_rate"] is None  # a server-trace metric
    assert sub["traffic_share"] == pytest.approx(1.0)
    assert t["rtt_samples"].filter(direction="down").height == 0
    # The request went up: the client is its sender, so its RTT is timed here. Sent at
    # 100 ms, acknowledged by the first data packet, received at 200 ms.
    up = t["rtt_samples"].filter(direction="up")
    assert up["rtt_ms"].to_list() == pytest.approx([100], abs=US)


def test_vantage_inferred_from_handshake_timing(tmp_path):
    for v in ("client", "server"):
        t = analyze(write(tmp_path / f"trace-{v[0]}.pcap", single_path(v)))
        assert t["connections"].filter(direction="down")["vantage"].to_list() == [v]


# --- two-subflow MPTCP download --------------------------------------------------

WIFI, LTE, SRV = "10.0.1.2", "10.0.2.2", "10.0.0.1"


def two_subflows(version: int = 1, dsn64: bool = True):
    """Client trace. wifi: MP_CAPABLE at 0 ms (RTT 20 ms); lte joins at 30 ms (RTT
    100 ms). wifi carries DSN 1..4000 (40–43 ms) and 6001..7000 (182 ms); lte carries
    4001..6000 (180, 181 ms). Everything arrives in DSN order."""
    a = mp_handshake(Subflow(WIFI, SRV, 40001), 0.000, 0.020, 0.020, version)
    b = join_handshake(Subflow(LTE, SRV, 40002, isn_c=7000, isn_s=90000), 0.030, 0.130, 0.130, version)
    idsn = server_idsn(version)
    for i, t in enumerate([0.040, 0.041, 0.042, 0.043]):
        a.data(t, 1 + 1000 * i, 1000, [opt_dss(dsn=idsn + 1 + 1000 * i, ssn=1 + 1000 * i, length=1000, dsn64=dsn64)])
    for i, t in enumerate([0.180, 0.181]):
        b.data(t, 1 + 1000 * i, 1000, [opt_dss(dsn=idsn + 4001 + 1000 * i, ssn=1 + 1000 * i, length=1000, dsn64=dsn64)])
    a.data(0.182, 4001, 1000, [opt_dss(dsn=idsn + 6001, ssn=4001, length=1000, dsn64=dsn64)])
    return a, b


@pytest.mark.parametrize("version", [1, 0])
def test_two_subflows_join_share_and_download_time(tmp_path, version):
    t = analyze(write(tmp_path / "client.pcap", *two_subflows(version)), vantage="client")
    conn = t["connections"]
    assert conn.height == 1, "the MP_JOIN subflow must join the MP_CAPABLE connection by token"
    c = conn.row(0, named=True)
    assert (c["transport"], c["n_subflows"], c["mptcp_version"]) == ("mptcp", 2, version)
    assert c["download_time_s"] == pytest.approx(0.182, abs=1e-6)
    assert c["payload_bytes"] == 7000
    sub = t["subflows"].sort("client_addr")
    assert sub["client_addr"].to_list() == [WIFI, LTE]
    assert sub["is_primary"].to_list() == [True, False]
    assert sub["traffic_share"].to_list() == pytest.approx([5 / 7, 2 / 7])
    assert sub["start_s"].to_list() == pytest.approx([0.0, 0.030])
    assert t["ofo_samples"]["ofo_delay_ms"].to_list() == [0.0] * 7


def test_path_labels_from_map(tmp_path):
    t, _ = tables.analyze_trace(write(tmp_path / "client.pcap", *two_subflows()), "r", "client",
                                {WIFI: "wifi", LTE: "lte"})
    t = held(t)
    assert t["subflows"].sort("start_s")["path"].to_list() == ["wifi", "lte"]


# --- a DSS mapping that covers several segments ---------------------------------

@pytest.mark.parametrize("dsn64", [True, False])
def test_mapping_over_several_segments(tmp_path, dsn64):
    """One mapping (DSN 1, SSN 1, 3000 B) on the first of three 1000 B segments."""
    a = mp_handshake(Subflow(WIFI, SRV, 40001), 0.0, 0.02, 0.02)
    idsn = server_idsn()
    a.data(0.04, 1, 1000, [opt_dss(dsn=idsn + 1, ssn=1, length=3000, dsn64=dsn64)])
    a.data(0.05, 1001, 1000)
    a.data(0.06, 2001, 1000)
    t = analyze(write(tmp_path / "client.pcap", a))
    ofo = t["ofo_samples"].sort("arrival_s")
    want = [(idsn + k) % 2**64 for k in (1, 1001, 2001)]
    assert ofo["dsn"].to_list() == want
    assert ofo["ofo_delay_ms"].to_list() == [0.0, 0.0, 0.0]


# --- a packet held out of order across subflows -----------------------------------

def test_ofo_delay_across_subflows(tmp_path):
    """wifi brings DSN 1 (100 ms) and 2001 (150 ms); lte brings 1001 at 200 ms, so
    2001 waits 50 ms; wifi's 3001 at 250 ms is in order."""
    a = mp_handshake(Subflow(WIFI, SRV, 40001), 0.0, 0.02, 0.02)
    b = join_handshake(Subflow(LTE, SRV, 40002, isn_c=7000, isn_s=90000), 0.03, 0.06, 0.06)
    d = server_idsn()
    a.data(0.100, 1, 1000, [opt_dss(dsn=d + 1, ssn=1, length=1000)])
    a.data(0.150, 1001, 1000, [opt_dss(dsn=d + 2001, ssn=1001, length=1000)])
    b.data(0.200, 1, 1000, [opt_dss(dsn=d + 1001, ssn=1, length=1000)])
    a.data(0.250, 2001, 1000, [opt_dss(dsn=d + 3001, ssn=2001, length=1000)])
    t = analyze(write(tmp_path / "client.pcap", a, b))
    ofo = t["ofo_samples"].sort("arrival_s")
    assert ofo["dsn"].to_list() == [(d + k) % 2**64 for k in (1, 2001, 1001, 3001)]
    assert ofo["ofo_delay_ms"].to_list() == pytest.approx([0, 50, 0, 0], abs=US)


# --- a reinjection -----------------------------------------------------------------

def reinjection(vantage: str):
    """DSN 1001..2000 goes out on lte at 200 ms and is reinjected on wifi at 250 ms
    (client trace: the reinjection arrives at 250 ms, lte's original at 400 ms);
    wifi's DSN 2001 arrived at 220 ms and waits for the reinjection: 30 ms."""
    a = mp_handshake(Subflow(WIFI, SRV, 40001), 0.0, 0.02, 0.02)
    b = join_handshake(Subflow(LTE, SRV, 40002, isn_c=7000, isn_s=90000), 0.03, 0.06, 0.06)
    d = server_idsn()
    a.data(0.100, 1, 1000, [opt_dss(dsn=d + 1, ssn=1, length=1000)])
    b.data(0.200 if vantage == "server" else 0.400, 1, 1000, [opt_dss(dsn=d + 1001, ssn=1, length=1000)])
    a.data(0.220, 1001, 1000, [opt_dss(dsn=d + 2001, ssn=1001, length=1000)])
    a.data(0.250, 2001, 1000, [opt_dss(dsn=d + 1001, ssn=2001, length=1000)])  # the reinjection
    return a, b


def test_reinjection_ofo_and_share(tmp_path):
    t = analyze(write(tmp_path / "client.pcap", *reinjection("client")))
    ofo = t["ofo_samples"].sort("arrival_s")
    # arrivals: 100 (DSN 1), 220 (2001: waits 30 ms), 250 (reinjected 1001), 400 (lte's copy)
    assert ofo["ofo_delay_ms"].to_list() == pytest.approx([0, 30, 0, 0], abs=US)
    sub = t["subflows"].sort("start_s")
    assert sub["payload_bytes"].to_list() == [3000, 1000]
    assert sub["traffic_share"].to_list() == pytest.approx([0.75, 0.25])


def test_reinjection_is_not_a_subflow_retransmission(tmp_path):
    t = analyze(write(tmp_path / "server.pcap", *reinjection("server")))
    sub = t["subflows"].sort("start_s")
    assert sub["retransmitted_packets"].to_list() == [0, 0]
    assert sub["loss_rate"].to_list() == [0.0, 0.0]


# --- a connection whose SYN was not captured -----------------------------------------

def test_missing_handshake(tmp_path):
    """Server trace that starts mid-transfer: data 3 x 1000 B at 0/1/2 ms, ACKs 100 ms
    later. The client is the host that sent no payload; loss and RTT still work."""
    sf = Subflow(WIFI, SRV, 40001)
    for i in range(3):
        sf.data(0.000 + 0.001 * i, 5001 + 1000 * i, 1000, client_rel_seq=101)
        sf.ack(0.100 + 0.001 * i, 6001 + 1000 * i, client_rel_seq=101)
    t = analyze(write(tmp_path / "server.pcap", sf))
    c = t["connections"].row(0, named=True)
    assert (c["client_addr"], c["server_addr"], c["handshake_captured"]) == (WIFI, SRV, False)
    assert t["rtt_samples"]["rtt_ms"].to_list() == pytest.approx([100, 100, 100], abs=US)
    assert t["subflows"]["loss_rate"].to_list() == [0.0]
    # The same exchange seen by the client: no SYN, so no download time, and a problem row.
    t = analyze(write(tmp_path / "client-nosyn.pcap", sf), vantage="client")
    assert t["connections"]["download_time_s"].to_list() == [None]
    assert any("SYN not captured" in r for r in t["problems"]["reason"].to_list())


def test_tokens_and_idsn_follow_rfc8684_and_rfc6824():
    import hashlib
    k = CLIENT_KEY.to_bytes(8, "big")
    assert mptcp.token(CLIENT_KEY, 1) == int.from_bytes(hashlib.sha256(k).digest()[:4], "big")
    assert mptcp.idsn(CLIENT_KEY, 0) == int.from_bytes(hashlib.sha1(k).digest()[-8:], "big")


def test_subflow_without_handshake_joins_by_data_sequence_range(tmp_path):
    """lte's handshake is missing from the trace; its 64-bit DSS mappings fall in the
    wifi connection's data sequence range, so it joins that connection. Without its
    ISN its packets get no DSN: the problems table says so, nothing is guessed."""
    a, b = two_subflows()
    b.packets = [p for p in b.packets if not p["TCP"].flags.S and p["TCP"].payload]
    t = analyze(write(tmp_path / "client.pcap", a, b))
    assert t["connections"]["n_subflows"].to_list() == [2]
    reasons = " | ".join(t["problems"]["reason"].to_list())
    assert "joined to connection 0 by data sequence range" in reasons
    assert "cannot be inferred" in reasons
    assert t["subflows"].sort("start_s")["traffic_share"].to_list() == pytest.approx([5 / 7, 2 / 7])


def test_join_reset_before_data_is_not_a_problem(tmp_path):
    """A short download ends before lte's MP_JOIN completes: the server answers the
    join SYN with a RST. The subflow carries nothing, so nothing is missing."""
    a, _ = two_subflows()
    b = Subflow(LTE, SRV, 40002, isn_c=7000, isn_s=90000)
    from pcapgen import opt_mp_join_syn, server_token
    b.syn(0.030, [opt_mp_join_syn(server_token())])
    b._pkt(0.090, False, "RA", 0, 7001)
    t = analyze(write(tmp_path / "client.pcap", a, b))
    # wifi's last packet waits for DSN bytes that two_subflows() sent on the lte subflow
    # this trace replaces: a real gap, said as such (and its delay null, not NaN)
    assert t["problems"]["reason"].to_list() == [
        "1 packets never became in order (a gap in the trace); their OFO delay is empty"]
    assert t["connections"]["n_subflows"].to_list() == [2]
    assert t["ofo_samples"].height == 5
    assert t["ofo_samples"].sort("frame")["ofo_delay_ms"].to_list() == [0.0, 0.0, 0.0, 0.0, None]


def test_server_opened_connection_with_known_client_address(tmp_path):
    """D-ITG's sender sits on the server and opens the connection itself. With the
    client's address known (meta.json / --path) the roles follow the addresses: the
    data sender is the server, RTT is timed at its end and DSNs start at its IDSN.
    Server trace: SYN at 0, SYN/ACK back at 100 ms; data at 100/101 ms, ACKs 100 ms
    later."""
    from pcapgen import CLIENT_KEY, SERVER_KEY, opt_mp_capable
    s = Subflow(SRV, WIFI, 5000, sport=9000, isn_c=3000, isn_s=8000)  # SYN sender: the server
    s.syn(0.000, [opt_mp_capable(1)])
    s.synack(0.100, [opt_mp_capable(1, CLIENT_KEY)])
    s.ack3(0.100, [opt_mp_capable(1, SERVER_KEY, CLIENT_KEY)])
    d = server_idsn()
    for i, t in enumerate([0.100, 0.101]):  # data from the SYN sender
        s._pkt(t, True, "PA", 3001 + 1000 * i, 8001, [opt_dss(dsn=d + 1 + 1000 * i, ssn=1 + 1000 * i, length=1000)], 1000)
        s._pkt(t + 0.1, False, "A", 8001, 4001 + 1000 * i)
    t, problems = tables.analyze_trace(write(tmp_path / "server.pcap", s), "r", None, {WIFI: "wifi"})
    t = held(t)
    c = t["connections"].row(0, named=True)
    assert (c["client_addr"], c["server_addr"], c["transport"], c["vantage"]) == (WIFI, SRV, "mptcp", "server")
    assert t["rtt_samples"]["rtt_ms"].to_list() == pytest.approx([100, 100], abs=US)
    assert t["subflows"]["path"].to_list() == ["wifi"]
    t, _ = tables.analyze_trace(write(tmp_path / "client.pcap", s), "r", None, {WIFI: "wifi"})
    t = held(t)
    assert t["ofo_samples"].sort("frame")["dsn"].to_list() == [(d + 1) % 2**64, (d + 1001) % 2**64]


def test_mp_capable_with_data_maps_the_first_bytes(tmp_path):
    """RFC 8684 §3.1: the initiator may send its first data with MP_CAPABLE (both keys
    and a data-level length) instead of a DSS; that mapping starts at IDSN + 1 and
    here covers two segments. The server opened the connection (as D-ITG does)."""
    import struct

    from pcapgen import CLIENT_KEY, SERVER_KEY, opt_mp_capable
    s = Subflow(SRV, WIFI, 5000, sport=9000, isn_c=3000, isn_s=8000)
    s.syn(0.000, [opt_mp_capable(1)])  # seen at the client, the SYN's receiver
    s.synack(0.000, [opt_mp_capable(1, CLIENT_KEY)])
    s.ack3(0.020, [opt_mp_capable(1, SERVER_KEY, CLIENT_KEY)])
    with_data = (30, struct.pack("!BBQQH", 0x01, 0x81, SERVER_KEY, CLIENT_KEY, 1500))
    d = server_idsn()
    s._pkt(0.030, True, "PA", 3001, 8001, [with_data], 1000)
    s._pkt(0.031, True, "PA", 4001, 8001, [], 500)
    s._pkt(0.032, True, "PA", 4501, 8001, [opt_dss(dsn=d + 1501, ssn=1501, length=1000)], 1000)
    t, problems = tables.analyze_trace(write(tmp_path / "client.pcap", s), "r", None, {WIFI: "wifi"})
    t = held(t)
    assert problems == []
    assert t["ofo_samples"].sort("arrival_s")["dsn"].to_list() == [(d + k) % 2**64 for k in (1, 1001, 1501)]


def test_sequence_numbers_past_four_gigabytes_are_unwrapped(tmp_path):
    """Relative sequence and ACK numbers keep growing past 2^32 bytes of a subflow
    (steps under 2^31 between packets, as TCP's window guarantees); below 2^31 the
    unwrapping has nothing to do, and flows skips it."""
    sf = Subflow("10.0.1.2", "10.0.0.1", 40001, isn_s=4_000_000_000)
    tcp_handshake(sf, 0.0, 0.1, 0.1)
    step = 1_500_000_000  # < 2^31: a jump of more than 2^31 would read as going backwards
    rel = [1 + step * i for i in range(7)]  # up to 9 GB
    for i, r in enumerate(rel):
        sf.data(0.2 + 0.01 * i, r, 1000)
        sf.ack(0.25 + 0.01 * i, r + 1000)
    f = write(tmp_path / "server.pcap", sf)
    p = flows.build_trace(extract.read_packets(f, "native").packets).packets
    data = p.filter(pl.col("payload_bytes") > 0)
    assert data["rel_seq"].to_list() == rel
    acks = p.filter(pl.col("direction") == "up", pl.col("frame") > 3)["rel_ack"].to_list()
    assert acks == [r + 1000 for r in rel]


# --- the out-of-order loop: native and Python copies --------------------------------

@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 60), st.integers(0, 12)), max_size=40), st.randoms(use_true_random=False))
def test_native_in_order_times_equals_the_python_one(segments, rnd):
    """Duplicates, overlaps, gaps, empty segments and a start below the IDSN, in any
    arrival order: the native loop (used when built) and the Python one agree."""
    pcapdecode = pytest.importorskip("pcapdecode")
    from pipeline import metrics
    rnd.shuffle(segments)
    times = [0.5 * i for i in range(len(segments))]
    starts = [s for s, _ in segments]
    lengths = [n for _, n in segments]
    assert pcapdecode.in_order_times(times, starts, lengths) == metrics._in_order_times(times, starts, lengths)


def test_native_in_order_times_refuses_columns_of_different_lengths():
    pcapdecode = pytest.importorskip("pcapdecode")
    with pytest.raises(ValueError, match="differ in length"):
        pcapdecode.in_order_times([1.0], [1, 2], [1])


# --- the RTT samples' joins: native and polars copies -------------------------------

_SEG = st.tuples(st.integers(0, 2), st.booleans(), st.booleans(),  # stream, down, an ACK (else data)
                 st.integers(0, 3), st.integers(1, 30), st.integers(-2, 2))  # frame gap, length/ACK step, time jitter


@settings(max_examples=300, deadline=None)
@given(st.lists(_SEG, max_size=60))
def test_native_rtt_pairs_equal_the_polars_ones(events):
    """Several subflows both ways, retransmissions of part of what was sent, ACKs that
    go backwards or repeat, timestamps that go backwards: the native RTT loop (used when
    built) and the polars joins give the same rows, ACK times and order."""
    pytest.importorskip("pcapdecode")
    from pipeline import metrics
    rows, acks, top, frame = [], [], {}, 0
    for stream, down, is_ack, gap, n, jitter in events:
        frame += 1 + gap
        t = frame * 0.01 + jitter * 0.004
        hi = top.get((stream, down), 1)
        if is_ack:
            acks.append(dict(stream=stream, down=down, time_s=t, frame=frame, ack=hi if jitter == 0 else max(1, hi - n % 12 + 2)))
            continue
        retx = hi > 1 and n % 4 == 0
        seq = max(1, hi - n) if retx else hi
        rows.append(dict(frame=frame, stream=stream, direction="down" if down else "up", down=down, time_s=t,
                         rel_seq=seq, end=seq + n, retx=retx))
        top[(stream, down)] = max(hi, seq + n)
    d = pl.DataFrame(rows, schema={"frame": pl.UInt32, "stream": pl.UInt32, "direction": pl.Utf8, "down": pl.Boolean,
                                   "time_s": pl.Float64, "rel_seq": pl.Int64, "end": pl.Int64, "retx": pl.Boolean})
    a = pl.DataFrame(acks, schema={"stream": pl.UInt32, "down": pl.Boolean, "time_s": pl.Float64, "frame": pl.UInt32,
                                   "ack": pl.Int64})
    native = metrics._rtt_pairs_native(d, a)
    assert native is not None
    assert native.sort("frame").equals(metrics._rtt_pairs(d, a).sort("frame").select(native.columns))


# each sample capture, for the tests that hold a native pass to its polars definition on them
_ON_THE_SAMPLES = pytest.mark.parametrize(
    "pcap", sorted((Path(__file__).resolve().parents[1] / "data" / "samples").glob("*/*.pcap")),
    ids=lambda p: f"{p.parent.name}/{p.name}")


def _sample_trace(pcap: Path) -> pl.DataFrame:
    """A sample capture's annotated packets (``flows.build_trace``)."""
    return flows.build_trace(extract.read_packets(pcap, "native", compact=flows.compact).packets).packets


@_ON_THE_SAMPLES
def test_native_rtt_pairs_equal_the_polars_ones_on_the_samples(pcap):
    """Real captures, both directions' data: the same rows and ACK times."""
    pytest.importorskip("pcapdecode")
    from pipeline import metrics
    p = _sample_trace(pcap)
    down = pl.col("down").fill_null(False)
    d = metrics.retransmissions(p).select("frame", "stream", "direction", down.alias("down"), "time_s", "rel_seq",
                                          "end", "retx")
    acks = p.filter(pl.col("rel_ack").is_not_null()).select("stream", (~down).alias("down"), "time_s", "frame",
                                                            pl.col("rel_ack").alias("ack"))
    native = metrics._rtt_pairs_native(d, acks)
    assert native is not None and native.height > 300
    assert native.sort("frame").equals(metrics._rtt_pairs(d, acks).sort("frame").select(native.columns))


def test_native_rtt_pairs_leave_null_keys_to_polars():
    """A null in a column the loop reads: the polars joins decide (None from the native path)."""
    pytest.importorskip("pcapdecode")
    from pipeline import metrics
    d = pl.DataFrame({"frame": [1], "stream": [None], "direction": ["down"], "down": [True], "time_s": [0.0],
                      "rel_seq": [1], "end": [11], "retx": [False]},
                     schema_overrides={"frame": pl.UInt32, "stream": pl.UInt32})
    a = pl.DataFrame({"stream": [0], "down": [True], "time_s": [0.1], "frame": [2], "ack": [11]},
                     schema_overrides={"stream": pl.UInt32, "frame": pl.UInt32})
    assert metrics._rtt_pairs_native(d, a) is None
    p = a.select(stream=pl.lit(None, pl.UInt32), down=pl.lit(False), time_s="time_s", frame="frame", rel_ack="ack")
    polars_rows = metrics._rtt_pairs(d, a)
    assert metrics.rtt_samples(p, d)["frame"].to_list() == polars_rows["frame"].to_list()


# --- the per-ACK RTT's loop: native and polars copies -------------------------------

_ACKED = st.tuples(st.integers(0, 2), st.booleans(), st.booleans(),  # stream, down, an ACK (else a segment)
                   st.integers(0, 3), st.integers(-3, 40), st.integers(0, 6))  # frame gap, end/ACK value, lateness


@settings(max_examples=300, deadline=None)
@given(st.lists(_ACKED, max_size=60), st.booleans())
def test_native_ack_rtt_pairs_equal_the_polars_ones(events, shuffled):
    """Several subflows both ways, segments with the same end, ACKs that go backwards or
    repeat, segments handed over in any order and some "sent" after the ACKs around
    them: the native loop (used when built) and the polars definition give the same
    rows, in the same order."""
    pytest.importorskip("pcapdecode")
    from pipeline import metrics
    segs, acks, frame = [], [], 0
    for stream, down, is_ack, gap, value, late in events:
        frame += 1 + gap
        if is_ack:
            acks.append(dict(stream=stream, down=down, ack_s=frame * 0.01, ack_frame=frame, ack=value))
        else:
            f = frame + (7 if late == 6 else 0)
            segs.append(dict(stream=stream, down=down, direction="down" if down else "up", time_s=f * 0.01 - late * 1e-3,
                             frame=f, end=value))
    s = pl.DataFrame(segs, schema={"stream": pl.UInt32, "down": pl.Boolean, "direction": pl.Utf8, "time_s": pl.Float64,
                                   "frame": pl.UInt32, "end": pl.Int64})
    s = s.unique("frame", keep="first", maintain_order=True)  # one segment per packet, as a trace has
    a = pl.DataFrame(acks, schema={"stream": pl.UInt32, "down": pl.Boolean, "ack_s": pl.Float64,
                                   "ack_frame": pl.UInt32, "ack": pl.Int64})
    if shuffled:
        s, a = s.reverse(), a.reverse()
    native = metrics._ack_rtt_pairs_native(s, a)
    assert native is not None
    assert native.equals(metrics._ack_rtt_pairs(s, a))


@_ON_THE_SAMPLES
def test_native_ack_rtt_pairs_equal_the_polars_ones_on_the_samples(pcap):
    """Real captures, both directions' data: the same per-ACK samples."""
    pytest.importorskip("pcapdecode")
    from pipeline import metrics
    p = _sample_trace(pcap)
    data = metrics.retransmissions(p)
    native = metrics.ack_rtt_samples(p, data)
    assert native.height > 100
    from unittest import mock
    with mock.patch.object(metrics, "_ack_rtt_pairs_native", return_value=None):
        assert native.equals(metrics.ack_rtt_samples(p, data))


# --- the sequence numbering's pass: native and polars copies ------------------------

_NUMBERED = st.tuples(st.sampled_from([0, 1, 5, 2**31 + 7]), st.booleans(), st.integers(0, 2**32 - 1),
                      st.integers(0, 2**32 - 1), st.booleans())


@settings(max_examples=300, deadline=None)
@given(st.lists(_NUMBERED, min_size=1, max_size=60),
       st.lists(st.one_of(st.none(), st.integers(0, 2**32 - 1)), min_size=8, max_size=8), st.booleans())
def test_native_sequence_numbering_equals_the_polars_one(packets, isns, near):
    """Any numbers (wrapping, going back, stream numbers beyond the packet count), ISNs
    captured or not: the native pass (used when built) gives the polars definition's
    relative, unwrapped numbers and bases."""
    pytest.importorskip("pcapdecode")
    if near:  # steps of less than 2^31 mostly: the unwrapping's usual case
        packets = [(s, d, (q * 7919) % 2**20 * 4096, (a * 104729) % 2**20 * 4096, f) for s, d, q, a, f in packets]
    p = pl.DataFrame(packets, schema={"stream": pl.UInt32, "down": pl.Boolean, "seq": pl.UInt32, "ack": pl.UInt32,
                                      "ackf": pl.Boolean}, orient="row")
    i = pl.DataFrame({"stream": [0, 1, 5, 2**31 + 7], "isn_server": isns[:4], "isn_client": isns[4:]},
                     schema={"stream": pl.UInt32, "isn_server": pl.UInt32, "isn_client": pl.UInt32})
    native = flows._relative_numbers_native(p, i)
    assert native is not None
    want = flows._relative_numbers(p, i)
    assert native[0].equals(want[0])
    assert native[1].sort("stream", "down").equals(want[1].sort("stream", "down"))


@_ON_THE_SAMPLES
def test_native_sequence_numbering_equals_the_polars_one_on_the_samples(pcap):
    """Real captures: the same trace (packets, subflows with their bases) either way."""
    pytest.importorskip("pcapdecode")
    from unittest import mock
    p = extract.read_packets(pcap, "native", compact=flows.compact).packets
    native = flows.build_trace(p)
    with mock.patch.object(flows, "_relative_numbers_native", return_value=None):
        want = flows.build_trace(p)
    assert native.packets.height > 100 and native.packets.equals(want.packets)
    assert native.subflows.equals(want.subflows) and native.notes == want.notes


# --- the time-sequence rows' pass: native and polars copies -------------------------

_SEQ_PACKET = st.tuples(st.sampled_from([0, 1, 2, 2**31 + 7]), st.sampled_from([0, 1, None]), st.booleans(),
                        st.sampled_from([0, 0, 100, 1000]), st.integers(0, 30),
                        st.one_of(st.none(), st.integers(0, 30)), st.one_of(st.none(), st.integers(0, 30)),
                        st.one_of(st.none(), st.integers(0, 30)))


@settings(max_examples=300, deadline=None)
@given(st.lists(_SEQ_PACKET, max_size=60))
def test_native_seq_packets_equal_the_polars_ones(packets):
    """Any annotated trace (data and ACKs on several subflows and connections, DSN ranges
    carried twice, ACKs and DATA_ACKs going back, connections unknown): the native pass
    (used when built) gives the polars definition's rows, in its order."""
    pytest.importorskip("pcapdecode")
    from unittest import mock

    from pipeline import metrics, seqgraph
    rows = [dict(frame=i + 1, time_s=i * 0.01, stream=s, conn_id=c, down=d, direction="down" if d else "up",
                 payload_bytes=n, rel_seq=1 + q * 100, dsn_rel=None if dsn is None else 1 + dsn * 100,
                 rel_ack=None if a is None else 1 + a * 100, dack_rel=None if da is None else 1 + da * 100)
            for i, (s, c, d, n, q, dsn, a, da) in enumerate(packets)]
    p = pl.DataFrame(rows, schema={c: t for c, t in flows.TRACE_PACKETS.items()})
    data = metrics.retransmissions(p)
    native = seqgraph._seq_packets_native(p, data)
    assert native is not None
    with mock.patch.object(seqgraph, "_seq_packets_native", return_value=None):
        want = seqgraph.seq_packets(p, data)
    assert native.schema == want.schema and native.equals(want)


@_ON_THE_SAMPLES
def test_native_seq_packets_equal_the_polars_ones_on_the_samples(pcap):
    """Real captures: the same rows either way."""
    pytest.importorskip("pcapdecode")
    from unittest import mock

    from pipeline import metrics, seqgraph
    p = _sample_trace(pcap)
    data = metrics.retransmissions(p)
    native = seqgraph._seq_packets_native(p, data)
    with mock.patch.object(seqgraph, "_seq_packets_native", return_value=None):
        want = seqgraph.seq_packets(p, data)
    assert native is not None and native.height > 300 and native.equals(want)


def test_native_passes_read_frames_of_several_chunks_as_of_one():
    """The native passes read a one-chunk frame in place and copy one of several chunks
    (nulls included) into one: the same rows either way."""
    pcapdecode = pytest.importorskip("pcapdecode")
    cols = pl.DataFrame({"stream": [0, 0, 1, 0, 1, 0], "conn_id": [0, 0, None, 0, None, 0],
                         "down": [True, False, True, True, False, False], "payload_bytes": [100, 0, 100, 100, 0, 0],
                         "dsn_rel": [1, None, None, 101, None, None], "rel_ack": [1, 101, None, 1, 101, 201],
                         "dack_rel": [None, 101, None, None, None, 201]},
                        schema={"stream": pl.UInt32, "conn_id": pl.Int32, "down": pl.Boolean, "payload_bytes": pl.UInt32,
                                "dsn_rel": pl.Int64, "rel_ack": pl.Int64, "dack_rel": pl.Int64})
    chunked = pl.concat([cols[:2], cols[2:3], cols[3:]], rechunk=False)
    assert chunked.n_chunks() == 3
    one = pl.DataFrame(pcapdecode.seq_rows(cols))
    assert one.height == 6 and one["data_ack_rel"].null_count() > 0
    assert pl.DataFrame(pcapdecode.seq_rows(chunked)).equals(one)


# --- the DSN mapping's search: native and polars copies ----------------------------

_MAP = st.tuples(st.sampled_from([0, 1, 2**31 + 7]), st.integers(-2, 40), st.integers(1, 12),
                 st.one_of(st.none(), st.integers(0, 10**6)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1, 2, 2**31 + 7]), st.integers(-5, 60)), max_size=40),
       st.lists(_MAP, max_size=30))
def test_native_dsn_mapping_equals_the_polars_one(data, maps):
    """Any mappings (several starting at one SSN with different lengths or DSNs, unknown
    DSNs, overlapping, none for a subflow) and packets before, inside and past them: the
    native search (used when built) gives the polars as-of join's DSNs."""
    pytest.importorskip("pcapdecode")
    d = pl.DataFrame([(i, s, q * 10) for i, (s, q) in enumerate(data)], orient="row",
                     schema={"_row": pl.UInt32, "stream": pl.UInt32, "rel_seq": pl.Int64})
    m = pl.DataFrame([(s, q * 10, n * 10, dsn) for s, q, n, dsn in maps], orient="row",
                     schema={"stream": pl.UInt32, "map_ssn": pl.Int64, "mp_map_len": pl.UInt16, "map_dsn": pl.Int64})
    native = dsnmap._dsn_of_mappings_native(d, m)
    assert native is not None
    want = dsnmap._dsn_of_mappings(d, m).sort("_row")
    assert d.with_columns(native).equals(want)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1, 2**31 + 7]), st.booleans(), st.integers(0, 40),
                          st.sampled_from([1, 100, 1000])), max_size=60))
def test_native_retransmission_flags_equal_the_polars_ones(packets):
    """Data going forward, back and over itself on several subflows both ways: the native
    pass (used when built) flags the packets the polars window flags."""
    pytest.importorskip("pcapdecode")
    from unittest import mock

    from pipeline import metrics
    p = pl.DataFrame([dict(frame=i + 1, stream=s, direction="down" if d else "up", down=d, rel_seq=1 + 100 * q,
                           payload_bytes=n) for i, (s, d, q, n) in enumerate(packets)],
                     schema={"frame": pl.UInt32, "stream": pl.UInt32, "direction": pl.Utf8, "down": pl.Boolean,
                             "rel_seq": pl.Int64, "payload_bytes": pl.UInt32})
    native = metrics.retransmissions(p)
    assert metrics._retransmitted_native(native.drop("retx")) is not None
    with mock.patch.object(metrics, "_retransmitted_native", return_value=None):
        assert native.equals(metrics.retransmissions(p))


# --- a capture whose order is not its time order (tcpdump -i any) ------------------

def _upload_both_ends(shuffle: bool, path: Path, vantage: str) -> Path:
    """A 100-segment upload, one-way delay 20 ms each way (RTT 40 ms), seen at ``vantage``.
    ``shuffle``: the other end's packets are written 60 ms late, as ``tcpdump -i any``
    writes two queues: each sender's packets stay in time order, but an ACK stamped
    before data comes after it in the file (backwards steps of up to 60 ms)."""
    from scapy.all import TCP, wrpcap

    sf = Subflow("10.0.1.2", "10.0.0.1", 40001, sport=5201)
    at_client = vantage == "client"
    d_c = 0.0 if at_client else 0.020  # client-sent packets reach the server 20 ms later
    # SYN at 0, SYN/ACK sent on its arrival, third ACK on the SYN/ACK's (as each end sees them)
    tcp_handshake(sf, *((0.0, 0.040, 0.040) if at_client else (0.020, 0.020, 0.060)))
    for i in range(100):
        t = 0.100 + 0.010 * i  # the client sends segment i; the server acks it on arrival
        sf.up(t + d_c, 1 + 1000 * i, 1000)
        sf.ack_up(t + (0.040 if at_client else 0.020), 1 + 1000 * (i + 1))
    pkts = sorted(sf.packets, key=lambda p: float(p.time))
    if shuffle:  # the packets this end receives are written 60 ms late
        def late(p):
            return p[TCP].sport == 5201 if at_client else p[TCP].dport == 5201
        pkts = sorted(pkts, key=lambda p: float(p.time) + (0.060 if late(p) else 0.0))
    wrpcap(str(path), pkts)
    return path


@pytest.mark.parametrize("vantage", ["client", "server"])
def test_capture_out_of_time_order_keeps_time_metrics(tmp_path, vantage):
    """Shuffled the way ``-i any`` shuffles, the capture gives the known values (the
    sender's RTT 40 ms for every segment, the receiver's completion time) and the same
    tables as the capture in time order, with frame numbers that are the shuffled file's."""
    ordered = analyze(_upload_both_ends(False, tmp_path / f"{vantage}_ordered.pcap", vantage), vantage=vantage)
    path = _upload_both_ends(True, tmp_path / f"{vantage}_shuffled.pcap", vantage)
    shuffled = analyze(path, vantage=vantage)
    notes = shuffled["problems"]["reason"].to_list()
    assert any(n.startswith("capture order repaired: timestamps go backwards") for n in notes), notes
    assert not any("impossible timestamps" in n for n in notes)
    if vantage == "client":  # the sender's trace: RTT
        rtt = shuffled["rtt_samples"]
        assert rtt.height == 100 and (rtt["rtt_ms"] - 40.0).abs().max() < US
        sub = shuffled["subflows"].filter(direction="up").row(0, named=True)
        assert sub["rtt_samples"] == 100 and abs(sub["rtt_median_ms"] - 40.0) < US
        # each sample names the data packet's frame in the shuffled file
        seq = extract.read_packets(path, "native").packets.select("frame", "seq", "payload_bytes")
        timed = rtt.join(seq, on="frame")
        assert timed.height == 100 and (timed["payload_bytes"] == 1000).all()
    else:  # the receiver's trace: completion time, first SYN (0.02 s) to last data (1.11 s)
        up = shuffled["connections"].filter(direction="up").row(0, named=True)
        assert abs(up["download_time_s"] - 1.09) < 1e-6
    for t in ("subflows", "connections"):
        a, b = (x[t].drop("trace", "run_id", strict=False) for x in (ordered, shuffled))
        assert a.equals(b), t


def test_handshakeless_subflows_are_matched_without_comparing_every_pair(monkeypatch):
    """N MPTCP subflows whose handshakes were not captured: each is compared with the
    subflows whose data sequence ranges are near its own, not with all of them (the
    comparisons were N^2 / 2: 32k subflows took minutes). Subflows sharing a range still
    join one connection; far ranges stay apart."""
    import random

    rnd = random.Random(5)
    n = 3000
    ranges = {}
    for s in range(n):
        lo = rnd.randrange(1 << 63) if s % 3 or s == 0 else ranges[(s - 1, True)][0] + 10_000  # every third shares
        ranges[(s, True)] = (lo, lo + 5_000_000)
    looked = []

    class Counting(dict):
        def get(self, key, default=None):
            looked.append(key)
            return super().get(key, default)

    monkeypatch.setattr(flows, "_dsn_ranges", lambda p, sf: Counting(ranges))
    sf = pl.DataFrame({"stream": list(range(n)), "kind": ["dss"] * n, "mp_version": [None] * n,
                       "server_key": [None] * n, "client_key": [None] * n, "join_token": [None] * n,
                       "first_frame": list(range(n))},
                      schema_overrides={"mp_version": pl.Int8, "server_key": pl.UInt64, "client_key": pl.UInt64,
                                        "join_token": pl.UInt32, "first_frame": pl.UInt32})
    sf = sf.with_columns(**{c: pl.lit(None, dtype=t) for c, t in flows.SUBFLOW_COLUMNS.items() if c not in sf.columns})
    out, _ = flows.assign_connections(sf, pl.DataFrame())
    assert len(looked) < 10 * n, f"{len(looked)} range look-ups for {n} subflows"
    conn = dict(zip(out["stream"], out["conn_id"]))
    assert all(conn[s] == conn[s - 1] for s in range(n) if s % 3 == 0 and s > 0)
    assert len(set(conn.values())) == n - (n - 1) // 3


def test_two_connections_with_the_same_key_keep_their_own_joins(tmp_path):
    """Both connections announce the same key (so the same token): each join goes to the
    connection opened last before it, and a row names the collision."""
    subflows = []
    for n, t0 in enumerate((0.0, 1.0)):
        a = mp_handshake(Subflow(WIFI, SRV, 40001 + 10 * n), t0, t0 + 0.02, t0 + 0.02)
        b = join_handshake(Subflow(LTE, SRV, 40002 + 10 * n, isn_c=7000, isn_s=90000), t0 + 0.1, t0 + 0.12,
                           t0 + 0.12)
        d = server_idsn()
        a.data(t0 + 0.2, 1, 1000, [opt_dss(dsn=d + 1, ssn=1, length=1000)])
        b.data(t0 + 0.3, 1, 1000, [opt_dss(dsn=d + 1001, ssn=1, length=1000)])
        subflows += [a, b]
    t, problems = tables.analyze_trace(write(tmp_path / "client.pcap", *subflows), "r", "client")
    t = held(t)
    sub = t["subflows"].filter(direction="down").sort("client_port")
    by_port = dict(zip(sub["client_port"], sub["conn_id"]))
    assert by_port[40001] == by_port[40002] != by_port[40011] == by_port[40012]
    assert any("is shared by connections" in p["reason"] for p in problems)


def reused_four_tuple(shift_c: int = 1 << 31, shift_s: int = -(3 << 29),
                      repeats: bool = False) -> tuple[Subflow, Subflow]:
    """Server trace: a connection closes (FIN both ways), then a new one on the same
    addresses and ports, its SYN not captured, numbers its bytes from elsewhere (each
    end's new ISN ``shift_*`` from its old one). ``repeats``: after its FIN the server
    also retransmits its last segment and its FIN (which are no new connection)."""
    old = tcp_handshake(Subflow(WIFI, SRV, 40001), 0.0, 0.02, 0.02)
    old.request(0.03)
    for i in range(5):
        old.data(0.05 + 0.001 * i, 1 + 1000 * i, 1000)
    old.ack(0.07, 5001)
    old._pkt(0.08, False, "FA", old.isn_s + 5001, old.isn_c + 101)
    old._pkt(0.09, True, "FA", old.isn_c + 101, old.isn_s + 5002)
    if repeats:
        old.data(0.10, 4001, 1000)
        old._pkt(0.11, False, "FA", old.isn_s + 5001, old.isn_c + 102)
    new = Subflow(WIFI, SRV, 40001, isn_c=(old.isn_c + shift_c) % (1 << 32), isn_s=(old.isn_s + shift_s) % (1 << 32))
    for i in range(5):  # the new connection's download, its SYN missed
        new.data(1.0 + 0.001 * i, 1 + 1000 * i, 1000)
    new.ack(1.02, 5001)
    return old, new


@pytest.mark.parametrize("shift_c, shift_s", [
    (1 << 31, -(3 << 29)),  # far from the old numbers
    (1 << 20, 1 << 20),  # new ISNs under 2^30 ahead (issue 43: was one connection)
    (-(1 << 25), -(1 << 25)),  # and under 2^30 behind, below the old first number
])
def test_a_new_connection_on_a_reused_four_tuple_without_its_syn(tmp_path, shift_c, shift_s):
    """The new connection on the old one's 4-tuple is its own stream with no
    retransmission (it was merged into the old one, every packet a retransmission), for
    new ISNs far from the old ones or near them; the old connection's retransmissions
    after its FIN stay in it. (test_streamed runs this on the streamed path too.)"""
    pcap = write(tmp_path / "server.pcap", *reused_four_tuple(shift_c, shift_s, repeats=True))
    t, problems = tables.analyze_trace(pcap, "r", "server")
    t = held(t)
    down = t["subflows"].filter(direction="down").sort("subflow_id")
    assert down.height == 2 and down["retransmitted_packets"].to_list() == [1, 0]
    assert down["payload_bytes"].to_list() == [6000, 5000]  # payload_bytes counts the retransmission
    assert any("a new connection on the same addresses and ports" in p["reason"] for p in problems)


def test_per_ack_rtt_times_one_segment_per_ack(tmp_path):
    """The per-ACK RTT (tshark's ack_rtt) on the single-path download: the SYN/ACK (third
    ACK 100 ms later), segments 1 and 2 (100 ms each), and the ACK of everything at 354 ms
    timing segment 5 (sent at 154 ms: 200 ms); the lab's RTT (Chen §3.3) times segments
    4 and 5 to that ACK (201, 200 ms) and leaves out the retransmitted segment 3."""
    t = analyze(write(tmp_path / "server.pcap", single_path("server")), vantage="server")
    sub = t["subflows"].filter(direction="down").row(0, named=True)
    assert sub["rtt_ack_samples"] == 4 and sub["rtt_ack_median_ms"] == pytest.approx(100.0, abs=1e-6)
    assert sorted(t["rtt_samples"]["rtt_ms"].to_list()) == pytest.approx([100.0, 100.0, 200.0, 201.0], abs=1e-6)
    assert sub["rtt_median_ms"] == pytest.approx(150.0, abs=1e-6)
    client = analyze(write(tmp_path / "client.pcap", single_path("client")), vantage="client")
    assert client["subflows"].filter(direction="down")["rtt_ack_samples"].to_list() == [None]  # receiver's trace


def test_per_ack_rtt_times_a_fin_as_tshark_does(tmp_path):
    """The ACK of a FIN times the FIN (one sequence number, as a SYN), as tshark's ack_rtt
    does, not the last data segment before it. Server trace: the SYN/ACK timed 100 ms, the
    segment 300 ms (its ACK at 450 ms), the FIN sent at 500 ms and acked at 600 ms: 100 ms
    (timing the segment instead gave 450 ms and a median of 300)."""
    sf = Subflow("10.0.1.2", "10.0.0.1", 40001)
    tcp_handshake(sf, 0.050, 0.050, 0.150)
    sf.request(0.150)
    sf.data(0.150, 1, 1000, client_rel_seq=101)
    sf.ack(0.450, 1001, client_rel_seq=101)
    sf._pkt(0.500, False, "FA", sf.isn_s + 1001, sf.isn_c + 101)
    sf.ack(0.600, 1002, client_rel_seq=101)
    f = write(tmp_path / "server.pcap", sf)
    sub = analyze(f, vantage="server")["subflows"].filter(direction="down").row(0, named=True)
    assert sub["rtt_ack_samples"] == 3 and sub["rtt_ack_median_ms"] == pytest.approx(100.0, abs=1e-6)
    out = subprocess.run(["tshark", "-n", "-r", str(f), "-Y", "tcp.analysis.ack_rtt && tcp.srcport == 40001",
                          "-T", "fields", "-e", "tcp.analysis.ack_rtt"], capture_output=True, text=True, check=True)
    assert sorted(round(float(x) * 1000, 3) for x in out.stdout.split()) == [100.0, 100.0, 300.0]


# --- a subflow past 4 GB: the DSS's 32-bit subflow sequence numbers wrap -----------

def test_mapping_after_the_subflow_sequence_wraps(tmp_path):
    """A subflow carries over 2^32 bytes (sparse segments, each jump under 2^31 so the
    sequence numbers unwrap). After the wrap, a mapping at SSN 1001 covers two
    segments; a mapping of the first 4 GB, at SSN 2001, lies between it and the second
    segment's SSN (2449 modulo 2^32). The second segment's DSN is its own mapping's
    plus 1448, not the old mapping's."""
    a = mp_handshake(Subflow(WIFI, SRV, 40001), 0.0, 0.02, 0.02)
    d = server_idsn()
    wrap = 1 << 32
    a.data(0.04, 1, 1000, [opt_dss(dsn=d + 1, ssn=1, length=2000)])
    a.data(0.05, 2001, 1448, [opt_dss(dsn=d + 2001, ssn=2001, length=1448)])
    for i, rel in enumerate((1_500_000_001, 3_000_000_001)):  # keep each jump under 2^31
        a.data(0.06 + 0.01 * i, rel, 1448, [opt_dss(dsn=d + rel, ssn=rel, length=1448)])
    a.data(0.09, wrap + 1001, 1448, [opt_dss(dsn=d + wrap + 1001, ssn=1001, length=2896)])
    a.data(0.10, wrap + 2449, 1448)
    t = analyze(write(tmp_path / "client.pcap", a))
    dsns = t["ofo_samples"].sort("arrival_s")["dsn"].to_list()
    want = [(d + k) % 2**64 for k in (1, 2001, 1_500_000_001, 3_000_000_001, wrap + 1001, wrap + 2449)]
    assert dsns == want


# --- many connections in one pass: equal to one connection at a time ----------------

def _relative_dsn_one(raw: pl.Series, is64: pl.Series, ref: int) -> pl.Series:
    """One connection's DSNs relative to ``ref``, as the pipeline computed them one
    connection at a time before ``mptcp.relative_dsn_by`` (its definition, kept here)."""
    two32, low32 = 1 << 32, (1 << 32) - 1
    raw = raw.cast(pl.UInt64)
    m64 = is64.cast(pl.Boolean)
    rel64 = (raw - pl.Series([ref], dtype=pl.UInt64)).reinterpret(signed=True)  # modulo 2^64
    if m64.all():
        return rel64
    v = (raw.filter(~m64).cast(pl.Int64) - (ref & low32)) & low32
    d = v.diff().fill_null(0)  # a step of more than 2^31 backwards is a wrap forwards, and vice versa
    rel32 = v + ((d < -(1 << 31)).cast(pl.Int64) - (d > (1 << 31)).cast(pl.Int64)).cum_sum() * two32
    if m64.any():  # the first 32-bit mapping in the window nearest the 64-bit ones
        anchor = rel64.filter(m64)[0]
        rel32 = rel32 + ((anchor - rel32[0]) + (1 << 31)) // two32 * two32
    return rel64.scatter(m64.not_().arg_true(), rel32)


_MAPPING = st.tuples(st.integers(0, 3), st.booleans(),  # connection, a 64-bit DSN (else 32-bit)
                     st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1))  # the DSN's value, a near step


@settings(max_examples=200, deadline=None)
@given(st.lists(_MAPPING, max_size=40), st.lists(st.integers(0, 2**64 - 1), min_size=4, max_size=4))
def test_relative_dsns_of_many_connections_equal_one_at_a_time(rows, refs):
    """64- and 32-bit DSNs of several connections interleaved, wrapping and jumping:
    ``relative_dsn_by`` equals the one-connection definition on each connection's rows."""
    raws = []
    for conn, is64, value, step in rows:  # a 32-bit value near the last one of its connection, or anywhere
        last = next((r for c, _, r in reversed(raws) if c == conn), value)
        raws.append((conn, is64, value if is64 else (last + step) % 2**32 if step % 3 else value % 2**32))
    f = pl.DataFrame({"conn": [c for c, _, _ in raws], "raw": [r for _, _, r in raws],
                      "is64": [int(b) for _, b, _ in raws], "ref": [refs[c] for c, _, _ in raws]},
                     schema={"conn": pl.Int32, "raw": pl.UInt64, "is64": pl.UInt8, "ref": pl.UInt64})
    got = mptcp.relative_dsn_by(f, "raw", "is64", "ref", "conn").to_list()
    want = [None] * f.height
    for (conn,), g in f.with_row_index("i").group_by(["conn"]):
        for i, v in zip(g["i"], _relative_dsn_one(g["raw"], g["is64"], refs[conn])):
            want[i] = v
    assert got == want
    # read piece by piece (a streamed trace): the same, unless a connection's first
    # 64-bit value comes in a later piece than its first 32-bit one
    cuts = sorted({(7 * v) % (f.height + 1) for _, _, v, _ in rows} | {0, f.height})
    u, parts = mptcp.Unwrap(), []
    try:
        for a, b in zip(cuts, cuts[1:]):
            parts.append(u.feed(f.slice(a, b - a), "raw", "is64", "ref", "conn"))
    except mptcp.LateAnchor:
        piece = {i: k for k, (a, b) in enumerate(zip(cuts, cuts[1:])) for i in range(a, b)}
        first = {}
        for i, (conn, is64) in enumerate(zip(f["conn"], f["is64"])):
            first.setdefault((conn, is64), piece[i])
        assert any(first.get((c, 1), -1) > first.get((c, 0), 1 << 30) for c in range(4))
        return
    assert pl.concat(parts).to_list() == got if parts else f.height == 0


_DATA = st.tuples(st.integers(0, 2), st.integers(0, 2), st.booleans(),  # connection, stream, direction
                  st.integers(-5, 60), st.integers(1, 12))  # DSN, payload


@settings(max_examples=200, deadline=None)
@given(st.lists(_DATA, max_size=50))
def test_reinjections_and_ofo_delays_of_many_connections_equal_one_at_a_time(rows):
    """The reinjection marks, computed for all connections in one pass, equal their
    definition; the out-of-order delays equal what each connection's rows give alone."""
    from pipeline import metrics, seqgraph
    d = pl.DataFrame(
        [{"frame": i, "stream": 3 * c + s, "conn_id": c, "direction": "down" if down else "up", "time_s": 0.1 * i,
          "dsn_rel": dsn, "payload_bytes": n, "down": down} for i, (c, s, down, dsn, n) in enumerate(rows)],
        schema={"frame": pl.UInt32, "stream": pl.UInt32, "conn_id": pl.Int32, "direction": pl.Utf8,
                "time_s": pl.Float64, "dsn_rel": pl.Int64, "payload_bytes": pl.UInt32, "down": pl.Boolean})
    # a reinjection by definition: some byte carried earlier by another subflow of its connection, that way
    assert seqgraph._reinjections(d).to_list() == [
        any(c2 == c and d2 == down and s2 != s and x2 < x + n and x < x2 + n2
            for c2, s2, d2, x2, n2 in rows[:i])
        for i, (c, s, down, x, n) in enumerate(rows)]
    whole_ofo = metrics.ofo_delays(d).sort("frame")
    for (c, direction), g in d.group_by(["conn_id", "direction"]):
        ofo = metrics.ofo_delays(g).sort("frame")
        assert whole_ofo.filter(pl.col("conn_id") == c, pl.col("direction") == direction).equals(ofo)


@pytest.mark.parametrize("long_first", [True, False])
def test_a_mapping_sent_again_longer_covers_what_it_maps(tmp_path, long_first):
    """The same mapping start (DSN 1, SSN 1) sent twice, 1000 and 3000 bytes long (a
    segment cut anew when re-sent): the two segments after it get their DSNs from the
    longer one, whichever came first."""
    a = mp_handshake(Subflow(WIFI, SRV, 40001), 0.0, 0.02, 0.02)
    d = server_idsn()
    lengths = (3000, 1000) if long_first else (1000, 3000)
    a.data(0.04, 1, 1000, [opt_dss(dsn=d + 1, ssn=1, length=lengths[0])])
    a.data(0.05, 1, 1000, [opt_dss(dsn=d + 1, ssn=1, length=lengths[1])])
    a.data(0.06, 1001, 1000)
    a.data(0.07, 2001, 1000)
    t = analyze(write(tmp_path / "client.pcap", a))
    assert t["ofo_samples"].sort("arrival_s")["dsn"].to_list() == [(d + k) % 2**64 for k in (1, 1, 1001, 2001)]
