"""Our metrics on the committed real captures (data/samples) against independent
tools: tshark's TCP analysis, tcptrace, and tshark's statistics.

tshark's ``tcp.analysis.ack_rtt`` is attached to an ACK and times the last segment
that ACK covers; where that segment is one we sample (not retransmitted, and that
ACK is the first to cover it) the two must agree to the microsecond. tcptrace's RTT
is Karn-filtered but samples only segments an ACK covers exactly, so its minimum,
not its average, must match ours.
"""
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from pipeline import tables

SAMPLES = Path(os.environ.get("LAB_SAMPLES", Path(__file__).resolve().parents[1] / "data" / "samples"))
SERVER_PCAPS = sorted(SAMPLES.glob("*/server.pcap"))
ENV = {**os.environ, "LC_ALL": "C"}

pytestmark = pytest.mark.skipif(not SERVER_PCAPS, reason="no sample captures in data/samples")


def ids(paths):
    return [p.parent.name for p in paths]


@pytest.fixture(scope="module")
def ours():
    out = {}
    for pcap in SERVER_PCAPS:
        t, problems = tables.analyze_trace(pcap, pcap.parent.name, "server")
        out[pcap] = t
    return out


def tshark_fields(pcap, *fields, filt="tcp"):
    cmd = ["tshark", "-n", "-r", str(pcap), "-o", "tcp.relative_sequence_numbers:FALSE", "-2", "-Y", filt,
           "-T", "fields", "-E", "separator=/t"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, env=ENV, check=True).stdout
    rows = [ln.split("\t") for ln in out.splitlines() if ln]
    return pl.DataFrame(rows, schema=list(fields), orient="row")


@pytest.mark.parametrize("pcap", SERVER_PCAPS, ids=ids(SERVER_PCAPS))
def test_rtt_matches_tshark_ack_rtt(ours, pcap):
    mine = ours[pcap]["rtt_samples"].select(pl.col("frame").cast(pl.Int64), "rtt_ms")
    assert mine.height > 50
    ts = tshark_fields(pcap, "tcp.analysis.acks_frame", "tcp.analysis.ack_rtt", filt="tcp.analysis.ack_rtt")
    ts = ts.select(pl.col("tcp.analysis.acks_frame").cast(pl.Int64).alias("frame"),
                   (pl.col("tcp.analysis.ack_rtt").cast(pl.Float64) * 1000).alias("tshark_ms"))
    both = mine.join(ts, on="frame")
    # Most of tshark's samples time a segment we time too, and those agree exactly.
    assert both.height >= 0.5 * ts.filter(pl.col("frame").is_in(mine["frame"].implode())).height
    assert both.height >= 0.3 * mine.height
    assert (both["rtt_ms"] - both["tshark_ms"]).abs().max() < 1e-3


def tcptrace_stats(pcap):
    """{(client_port, direction): {stat: value}} from ``tcptrace -l -r -n``."""
    out = subprocess.run(["tcptrace", "-l", "-r", "-n", str(pcap)], capture_output=True, text=True, check=True).stdout
    stats = {}
    for block in re.split(r"^TCP connection \d+:", out, flags=re.M)[1:]:
        # tcptrace names the hosts of connection n with letters: a/b, c/d, ...
        a, b = re.findall(r"host \w+:\s+(\S+):(\d+)", block)[:2]
        left, right = {}, {}
        for m in re.finditer(r"^\s+([a-zA-Z_ ]+?):\s+([\d.]+)[^\n]*?\s{2,}([a-zA-Z_ ]+?):\s+([\d.]+)", block, re.M):
            if m.group(2).count(".") > 1:  # an address, not a statistic
                continue
            left[m.group(1).strip()] = float(m.group(2))
            right[m.group(3).strip()] = float(m.group(4))
        stats[(a[0], int(a[1]), b[0], int(b[1]))] = (left, right)
    return stats


def sender(sub):
    """(address, port) of the host sending the row's data: server down, client up."""
    end = "server" if sub["direction"] == "down" else "client"
    return sub[f"{end}_addr"], sub[f"{end}_port"]


def receiver(sub):
    end = "client" if sub["direction"] == "down" else "server"
    return sub[f"{end}_addr"], sub[f"{end}_port"]


def sender_direction(stats, sub):
    """tcptrace's statistics of the row's direction (the sender's side of its block)."""
    for (ha, pa, hb, pb), (left, right) in stats.items():
        if (ha, pa) == sender(sub) and (hb, pb) == receiver(sub):
            return left
        if (hb, pb) == sender(sub) and (ha, pa) == receiver(sub):
            return right
    raise AssertionError(f"tcptrace has no connection for subflow {sub}")


@pytest.mark.parametrize("pcap", SERVER_PCAPS, ids=ids(SERVER_PCAPS))
def test_retransmissions_bytes_and_rtt_min_match_tcptrace(ours, pcap):
    stats = tcptrace_stats(pcap)
    subs = ours[pcap]["subflows"].filter(pl.col("data_packets") > 0)
    assert subs.filter(direction="down").height >= 1
    assert subs.filter(direction="up").height >= 1, "the HTTP request goes up"
    for sub in subs.iter_rows(named=True):
        tt = sender_direction(stats, sub)
        assert sub["data_packets"] == tt["actual data pkts"]
        assert sub["payload_bytes"] == tt["actual data bytes"]
        # At a sender-side capture tcptrace calls a packet below the highest sequence
        # sent "out of order" when the first copy of its bytes was not captured, and
        # "rexmt" otherwise; both are the server retransmitting, which is what we count.
        assert sub["retransmitted_packets"] == tt["rexmt data pkts"] + tt["outoforder pkts"]
        if tt["RTT samples"] > 0 and sub["direction"] == "down":  # RTT: the sender's (server's) trace
            # tcptrace's minimum also times the handshake and the FIN, whose small
            # packets skip most of the bottleneck's serialisation (1.2 ms for a full
            # frame at 10 Mbit/s); ours times data packets only. tcptrace prints
            # 0.1 ms steps, hence 0.05 ms of rounding.
            assert tt["RTT min"] - 0.051 <= sub["rtt_min_ms"] <= tt["RTT min"] + 1.5


@pytest.mark.parametrize("pcap", SERVER_PCAPS, ids=ids(SERVER_PCAPS))
def test_retransmissions_match_tshark_analysis(ours, pcap):
    """tshark flags every data segment below the highest sequence sent, but names it
    by a timing heuristic: a retransmission sent soon after the segment before it is
    called "out-of-order". At the sender's capture all of them are retransmissions
    (tcptrace, which tracks the bytes seen, agrees: see the test above)."""
    flags = tshark_fields(pcap, "tcp.stream", "tcp.srcport", "tcp.len", filt=(
        "tcp.len > 0 && (tcp.analysis.retransmission || tcp.analysis.fast_retransmission"
        " || tcp.analysis.spurious_retransmission || tcp.analysis.out_of_order)"))
    subs = ours[pcap]["subflows"]
    for sub in subs.iter_rows(named=True):
        n = flags.filter((pl.col("tcp.stream") == str(sub["subflow_id"])) & (pl.col("tcp.srcport") == str(sender(sub)[1]))).height
        assert sub["retransmitted_packets"] == n


@pytest.mark.parametrize("pcap", SERVER_PCAPS, ids=ids(SERVER_PCAPS))
def test_payload_and_frames_match_tshark_statistics(ours, pcap):
    t = ours[pcap]
    for sub in t["subflows"].iter_rows(named=True):
        filt = f"tcp.len && tcp.stream=={sub['subflow_id']} && tcp.srcport=={sender(sub)[1]}"
        out = subprocess.run(["tshark", "-n", "-q", "-r", str(pcap), "-z", f"io,stat,0,SUM(tcp.len){filt}"],
                             capture_output=True, text=True, env=ENV, check=True).stdout
        row = [ln for ln in out.splitlines() if re.match(r"\|\s*0\.0+\s*<>", ln)][0]
        assert int(row.split("|")[2]) == sub["payload_bytes"]
    # -z conv,tcp counts frames per conversation: every frame of every subflow.
    out = subprocess.run(["tshark", "-n", "-q", "-r", str(pcap), "-z", "conv,tcp"], capture_output=True, text=True,
                         env=ENV, check=True).stdout
    # columns after "<->": peer, frames, bytes, unit (twice), then total frames
    conv_frames = sum(int(ln.split("<->")[1].split()[7]) for ln in out.splitlines() if "<->" in ln)
    ts = tshark_fields(pcap, "frame.number")
    assert conv_frames == ts.height


CLIENT_PCAPS = sorted(SAMPLES.glob("*/client.pcap"))


def tshark_dsn(pcap):
    """tshark's own per-packet DSN (mapping DSN + offset; mptcp.analyze_mappings)."""
    cmd = ["tshark", "-n", "-r", str(pcap), "-o", "mptcp.analyze_mappings:TRUE",
           "-o", "mptcp.relative_sequence_numbers:FALSE", "-2", "-Y", "tcp.len > 0 && mptcp.rawdsn64",
           "-T", "fields", "-E", "separator=/t", "-e", "frame.number", "-e", "frame.time_epoch",
           "-e", "mptcp.rawdsn64", "-e", "tcp.len", "-e", "tcp.srcport"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=ENV, check=True).stdout
    rows = [ln.split("\t") for ln in out.splitlines() if ln]
    return pl.DataFrame(
        {"frame": [int(r[0]) for r in rows], "t": [float(r[1]) for r in rows], "dsn": [int(r[2]) for r in rows],
         "len": [int(r[3]) for r in rows], "sport": [int(r[4]) for r in rows]},
        schema={"frame": pl.Int64, "t": pl.Float64, "dsn": pl.UInt64, "len": pl.Int64, "sport": pl.Int64})


def brute_force_ofo(t, dsn, length):
    """In-order time of each packet from a per-byte array of first-arrival times:
    a packet is in order once every byte before its first byte has arrived."""
    rel = (dsn - dsn.min()).astype("int64")
    size = int((rel + length).max())
    first = np.full(size, np.inf)
    for ti, s, n in sorted(zip(t, rel, length)):
        seg = first[s:s + n]
        np.minimum(seg, ti, out=seg)
    prefix = np.maximum.accumulate(np.concatenate([[-np.inf], first]))  # prefix[k] = max first[0:k]
    return np.maximum(t, prefix[rel]) - t


@pytest.mark.parametrize("pcap", CLIENT_PCAPS, ids=ids(CLIENT_PCAPS))
def test_dsn_and_ofo_match_tshark_mappings_and_a_brute_force_reference(pcap):
    t, _ = tables.analyze_trace(pcap, pcap.parent.name, "client")
    if t["connections"].filter(direction="down")["transport"].to_list() != ["mptcp"]:
        pytest.skip("single-path run: no data sequence numbers")
    assert set(t["ofo_samples"]["direction"]) == {"down"}, "the client receives only the download"
    mine = t["ofo_samples"].select(pl.col("frame").cast(pl.Int64), "dsn", "ofo_delay_ms")
    ts = tshark_dsn(pcap).filter(pl.col("sport") == t["connections"]["server_port"][0])
    both = mine.join(ts, on="frame", how="full", coalesce=True)
    assert both.height == mine.height == ts.height, "the same server data packets carry a DSN"
    assert (both["dsn"] == both["dsn_right"]).all(), "DSNs differ from tshark's mapping analysis"
    # OFO delay: an independent byte-array computation on tshark's DSNs and times.
    ref = brute_force_ofo(ts["t"].to_numpy(), ts["dsn"].to_numpy(), ts["len"].to_numpy())
    got = mine.join(ts.with_columns(ref_ms=pl.Series(ref * 1000.0)), on="frame")
    assert got["ofo_delay_ms"].to_numpy() == pytest.approx(got["ref_ms"].to_numpy(), abs=1e-3)
    assert (got["ofo_delay_ms"] > 0).any(), "a two-path download has some out-of-order packets"
