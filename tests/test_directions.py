"""Uploads and bidirectional exchanges on scapy-built pcaps, values known by construction.

Each exchange is written once, as what each host sends and when, with a one-way delay
per path; a trace is what one end sees: its own packets at their send times, the
other end's at send time + delay (lost packets only at the sender). Uploads follow
the download definitions with the roles swapped (docs/DESIGN.md, "Directions"): loss and
RTT from the sender's trace (the client), OFO delay and completion time from the
receiver's (the server).
"""
import pytest

from pcapgen import (CLIENT_KEY, SERVER_KEY, Subflow, client_idsn, opt_dss, opt_mp_capable, opt_mp_join_ack,
                     opt_mp_join_syn, opt_mp_join_synack, server_idsn, server_token, write)
from pipeline import tables
from test_metrics_synthetic import held

US = 1e-3  # ms


class Exchange:
    """Packets as the hosts send them; ``trace(vantage)`` shifts the other end's."""

    def __init__(self):
        self.events = []  # (subflow, from_client, send time, one-way delay, lost, method, args, kwargs)

    def send(self, sf, from_client, t, owd, method, *args, lost=False, **kw):
        self.events.append((sf, from_client, t, owd, lost, method, args, kw))

    def trace(self, vantage):
        sfs = {}
        for sf, from_client, t, owd, lost, method, args, kw in self.events:
            mine = from_client == (vantage == "client")
            if lost and not mine:
                continue
            copy = sfs.setdefault(id(sf), Subflow(sf.client, sf.server, sf.cport, sf.sport, sf.isn_c, sf.isn_s))
            getattr(copy, method)(t if mine else t + owd, *args, **kw)
        return list(sfs.values())


def analyze(tmp_path, ex, vantage):
    t, problems = tables.analyze_trace(write(tmp_path / f"{vantage}.pcap", *ex.trace(vantage)), "r")
    return held(t), problems


# --- a single-path upload with one loss -------------------------------------------

WIFI, LTE, SRV = "10.0.1.2", "10.0.2.2", "10.0.0.1"


def upload():
    """Plain TCP, one-way delay 50 ms. The client sends 5 x 1000 B at 150..154 ms;
    the third is lost. The server acks each arrival (1001 at 200, 2001 at 201, dup
    2001 at 203 and 204 ms); the client retransmits 2001 at 254 ms, acked (5001) on
    arrival at 304 ms."""
    ex, sf, d = Exchange(), Subflow(WIFI, SRV, 40001, sport=5201), 0.050
    ex.send(sf, True, 0.000, d, "syn")
    ex.send(sf, False, 0.050, d, "synack")
    ex.send(sf, True, 0.100, d, "ack3")
    for i, t in enumerate([0.150, 0.151, 0.152, 0.153, 0.154]):
        ex.send(sf, True, t, d, "up", 1 + 1000 * i, 1000, lost=i == 2)
    for t, a in [(0.200, 1001), (0.201, 2001), (0.203, 2001), (0.204, 2001)]:
        ex.send(sf, False, t, d, "ack_up", a)
    ex.send(sf, True, 0.254, d, "up", 2001, 1000)
    ex.send(sf, False, 0.304, d, "ack_up", 5001)
    return ex


def test_upload_sender_trace_gives_loss_and_rtt(tmp_path):
    t, problems = analyze(tmp_path, upload(), "client")
    assert problems == []
    sub = t["subflows"]
    assert sub["direction"].to_list() == ["up"], "no download row: the server sent no data"
    s = sub.row(0, named=True)
    assert (s["data_packets"], s["retransmitted_packets"], s["payload_bytes"]) == (6, 1, 6000)
    assert s["loss_rate"] == pytest.approx(1 / 6)
    assert s["traffic_share"] == pytest.approx(1.0)
    # Karn: the lost segment gives no sample; segments 4 and 5 wait for the 5001 ACK at 354 ms
    # (by frame: a streamed trace's rows come as they settle)
    assert t["rtt_samples"].sort("frame")["rtt_ms"].to_list() == pytest.approx([100, 100, 201, 200], abs=US)
    assert set(t["rtt_samples"]["direction"]) == {"up"}
    assert s["rtt_samples"] == 4 and s["rtt_min_ms"] == pytest.approx(100, abs=US)
    c = t["connections"].row(0, named=True)
    assert (c["direction"], c["payload_bytes"], c["download_time_s"]) == ("up", 6000, None)


def test_upload_receiver_trace_gives_completion_time(tmp_path):
    t, problems = analyze(tmp_path, upload(), "server")
    assert problems == []
    c = t["connections"].row(0, named=True)
    # the SYN arrives at 50 ms, the last data (the retransmission) at 304 ms
    assert c["direction"] == "up" and c["download_time_s"] == pytest.approx(0.254, abs=1e-6)
    assert c["payload_bytes"] == 5000  # the lost segment never reached the server
    s = t["subflows"].row(0, named=True)
    assert s["loss_rate"] is None and s["rtt_samples"] is None  # sender-trace metrics
    assert t["rtt_samples"].height == 0


# --- a bidirectional MPTCP exchange over two paths -----------------------------------

def bidirectional(version=1):
    """wifi (one-way 10 ms) opens with MP_CAPABLE at 0; lte (50 ms) joins at 30 ms.

    up: the client sends DSN 1 on wifi and DSN 1001 on lte at 200 ms and DSN 2001 on
    wifi at 201 ms (1000 B each; DSNs from the client's IDSN). The server acks each
    on arrival: wifi at 210/211 ms, lte at 250 ms. DSN 2001 (arrived 211 ms) waits
    for 1001 (250 ms): 39 ms out of order.
    down: the server sends DSN 1 on wifi and DSN 501 on lte at 300 ms (500 B each;
    DSNs from the server's IDSN), acked on arrival (310 / 350 ms): both in order.
    """
    ex = Exchange()
    a = Subflow(WIFI, SRV, 40001)
    b = Subflow(LTE, SRV, 40002, isn_c=7000, isn_s=90000)
    w, l = 0.010, 0.050
    ex.send(a, True, 0.000, w, "syn", [opt_mp_capable(version, CLIENT_KEY if version == 0 else None)])
    ex.send(a, False, 0.010, w, "synack", [opt_mp_capable(version, SERVER_KEY)])
    ex.send(a, True, 0.020, w, "ack3", [opt_mp_capable(version, CLIENT_KEY, SERVER_KEY)])
    ex.send(b, True, 0.030, l, "syn", [opt_mp_join_syn(server_token(version))])
    ex.send(b, False, 0.080, l, "synack", [opt_mp_join_synack()])
    ex.send(b, True, 0.130, l, "ack3", [opt_mp_join_ack()])
    ci, si = client_idsn(version), server_idsn(version)
    ex.send(a, True, 0.200, w, "up", 1, 1000, [opt_dss(dsn=ci + 1, ssn=1, length=1000)])
    ex.send(b, True, 0.200, l, "up", 1, 1000, [opt_dss(dsn=ci + 1001, ssn=1, length=1000)])
    ex.send(a, True, 0.201, w, "up", 1001, 1000, [opt_dss(dsn=ci + 2001, ssn=1001, length=1000)])
    ex.send(a, False, 0.210, w, "ack_up", 1001)
    ex.send(a, False, 0.211, w, "ack_up", 2001)
    ex.send(b, False, 0.250, l, "ack_up", 1001)
    ex.send(a, False, 0.300, w, "data", 1, 500, [opt_dss(dsn=si + 1, ssn=1, length=500)], client_rel_seq=2001)
    ex.send(b, False, 0.300, l, "data", 1, 500, [opt_dss(dsn=si + 501, ssn=1, length=500)], client_rel_seq=1001)
    ex.send(a, True, 0.310, w, "ack", 501, client_rel_seq=2001)
    ex.send(b, True, 0.350, l, "ack", 501, client_rel_seq=1001)
    return ex


def by_dir(df, direction):
    return df.filter(direction=direction).sort("start_s")


@pytest.mark.parametrize("version", [1, 0])
def test_bidirectional_server_trace(tmp_path, version):
    t, problems = analyze(tmp_path, bidirectional(version), "server")
    assert problems == []
    c = t["connections"].sort("direction")
    assert c["direction"].to_list() == ["down", "up"] and c["n_subflows"].to_list() == [2, 2]
    assert c["payload_bytes"].to_list() == [1000, 3000]
    # receiver of the upload: completion time from the SYN's arrival (10 ms) to 250 ms
    assert c["download_time_s"].to_list() == [None, pytest.approx(0.240, abs=1e-6)]
    up, down = by_dir(t["subflows"], "up"), by_dir(t["subflows"], "down")
    assert up["traffic_share"].to_list() == pytest.approx([2 / 3, 1 / 3])
    assert down["traffic_share"].to_list() == pytest.approx([0.5, 0.5])
    assert down["loss_rate"].to_list() == [0.0, 0.0] and up["loss_rate"].to_list() == [None, None]
    # sender of the download: RTT per path, 2 x the one-way delay
    rtt = t["rtt_samples"]
    assert set(rtt["direction"]) == {"down"}
    assert rtt.sort("sent_s", "subflow_id")["rtt_ms"].to_list() == pytest.approx([20, 100], abs=US)
    # receiver of the upload: OFO in arrival order, DSNs in the client's numbering
    ofo = t["ofo_samples"].sort("arrival_s")
    assert set(ofo["direction"]) == {"up"}
    ci = client_idsn(version)
    assert ofo["dsn"].to_list() == [(ci + k) % 2**64 for k in (1, 2001, 1001)]
    assert ofo["ofo_delay_ms"].to_list() == pytest.approx([0, 39, 0], abs=US)


@pytest.mark.parametrize("version", [1, 0])
def test_bidirectional_client_trace(tmp_path, version):
    t, problems = analyze(tmp_path, bidirectional(version), "client")
    assert problems == []
    c = t["connections"].sort("direction")
    # receiver of the download: from the SYN (0) to the lte data's arrival (350 ms)
    assert c["download_time_s"].to_list() == [pytest.approx(0.350, abs=1e-6), None]
    up = by_dir(t["subflows"], "up")
    assert up["loss_rate"].to_list() == [0.0, 0.0]
    assert up["rtt_samples"].to_list() == [2, 1]
    assert up["rtt_mean_ms"].to_list() == pytest.approx([20, 100], abs=US)
    assert by_dir(t["subflows"], "down")["rtt_samples"].to_list() == [None, None]
    rtt = t["rtt_samples"]
    assert set(rtt["direction"]) == {"up"} and rtt.height == 3
    ofo = t["ofo_samples"].sort("arrival_s")
    assert set(ofo["direction"]) == {"down"}
    si = server_idsn(version)
    assert ofo["dsn"].to_list() == [(si + k) % 2**64 for k in (1, 501)]
    assert ofo["ofo_delay_ms"].to_list() == [0.0, 0.0]


def test_upload_subflow_without_handshake_joins_by_its_upload_range(tmp_path):
    """lte's handshake is missing; only its upload carries DSS mappings (the server
    sends nothing on it). Its upload DSN range lies within the wifi connection's, so
    it joins that connection."""
    ex = bidirectional()
    t, problems = tables.analyze_trace(
        write(tmp_path / "server.pcap", *[
            s if s.cport == 40001 else _without_handshake(s) for s in ex.trace("server")]), "r")
    t = held(t)
    reasons = " | ".join(p["reason"] for p in problems)
    assert "joined to connection 0 by data sequence range" in reasons
    assert t["connections"]["n_subflows"].unique().to_list() == [2]


def _without_handshake(sf):
    sf.packets = [p for p in sf.packets if not p["TCP"].flags.S and p["TCP"].payload and p["TCP"].sport == sf.cport]
    return sf
