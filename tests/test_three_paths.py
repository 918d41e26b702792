"""A third client path (``eth``, mode MP-3): the commands that wire two paths are as they
were (written out here by hand), a three-path run gets its own subnet, routing table and
MPTCP endpoint, and the campaign spec knows the path and a scenario's own flow length (no
root needed); then a real MP-3 capture with a scaled-down CS244 handover schedule
(Ethernet down, WiFi down, WiFi up, Ethernet up; root and linkem), checked against the
configured rates and outage windows and the emulator's own per-packet log."""
from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest
from conftest import NEEDS_LINKEM_TESTBED

from capture import spec, topology
from capture.spec import CampaignError, expand, validate
from pipeline.frames import frame

REPO = Path(__file__).resolve().parent.parent
CAMPAIGN = REPO / "capture" / "campaigns" / "three-paths.yaml"


# --------------------------------------------------------------------- topology, by hand

def wiring(monkeypatch, **kw) -> list[tuple[str, str]]:
    """The address, route, rule and MPTCP commands ``Topology.build`` issues, as (namespace
    role, command): c = client, s = server (nothing is run)."""
    cmds: list[tuple[str, str]] = []

    def fake_sh(cmd, ns=None, check=True, **_):
        cmds.append((ns, " ".join(map(str, cmd))))
        return SimpleNamespace(returncode=0, stdout="", stderr="")

    monkeypatch.setattr(topology, "sh", fake_sh)
    monkeypatch.setattr(topology, "out", lambda cmd, ns=None, check=True: "")
    topology.Topology(run_id="t", stem="mpl-0-t", route_metrics={"congctl": "cubic"}, **kw).build()
    role = {"mpl-0-t-cl": "c", "mpl-0-t-sv": "s"}
    return [(role.get(ns, ns), c) for ns, c in cmds if c.startswith(("ip addr", "ip route", "ip rule", "ip mptcp"))]


def path_wiring(i: int, p: str, primary: bool = False) -> list[tuple[str, str]]:
    """One path's routes and rule; the primary's also carries the main table's default route
    (set with the path's routes since the unplug change: they go and come back together)."""
    main = [("c", f"ip route replace default via 10.{i}.0.1 dev {p} src 10.{i}.0.2 congctl cubic")] if primary else []
    return [("c", f"ip route replace default via 10.{i}.0.1 dev {p} table 10{i} congctl cubic"),
            ("c", f"ip route replace 10.{i}.0.0/24 dev {p} src 10.{i}.0.2 table 10{i} congctl cubic"), *main,
            ("c", f"ip rule add from 10.{i}.0.2 table 10{i} priority 10{i}"),
            ("s", f"ip route replace 10.{i}.0.0/24 dev {p} src 10.{i}.0.1 congctl cubic")]


TWO_PATH_ADDRS = [("c", "ip addr add 10.1.0.2/24 dev wifi"), ("s", "ip addr add 10.1.0.1/24 dev wifi"),
                  ("c", "ip addr add 10.2.0.2/24 dev lte"), ("s", "ip addr add 10.2.0.1/24 dev lte")]
LIMITS_2 = [("c", "ip mptcp endpoint flush"), ("c", "ip mptcp limits set subflow 2 add_addr_accepted 2"),
            ("s", "ip mptcp endpoint flush"), ("s", "ip mptcp limits set subflow 2 add_addr_accepted 2")]


@pytest.mark.parametrize("mode, primary, initiator, endpoints", [
    ("MP-2", "wifi", "client", [("c", "ip mptcp endpoint add 10.2.0.2 dev lte subflow")]),
    ("MP-2", "lte", "client", [("c", "ip mptcp endpoint add 10.1.0.2 dev wifi subflow")]),
    ("backup", "wifi", "client", [("c", "ip mptcp endpoint add 10.2.0.2 dev lte subflow backup")]),
    ("MP-2", "wifi", "server", [("c", "ip mptcp endpoint add 10.2.0.2 dev lte signal port 9100")]),
])
def test_two_path_wiring_is_unchanged(monkeypatch, mode, primary, initiator, endpoints):
    """Subnets 10.1/10.2, tables 101/102, limits 2 and one endpoint for the other path:
    the commands of every two-path mode, as they were before the third path existed."""
    got = wiring(monkeypatch, paths=["wifi", "lte"], mode=mode, primary=primary, initiator=initiator)
    assert got == (TWO_PATH_ADDRS + [("s", "ip addr add 10.100.0.1/32 dev lo")]
                   + path_wiring(1, "wifi", primary == "wifi") + path_wiring(2, "lte", primary == "lte")
                   + LIMITS_2 + endpoints)


def test_mp4_wiring_is_unchanged(monkeypatch):
    got = wiring(monkeypatch, paths=["wifi", "lte"], mode="MP-4", primary="wifi")
    assert got == (TWO_PATH_ADDRS + [("s", "ip addr add 10.100.0.1/32 dev lo"), ("s", "ip addr add 10.100.0.2/32 dev lo")]
                   + path_wiring(1, "wifi", True) + path_wiring(2, "lte")
                   + [("c", "ip mptcp endpoint flush"), ("c", "ip mptcp limits set subflow 8 add_addr_accepted 8"),
                      ("s", "ip mptcp endpoint flush"), ("s", "ip mptcp limits set subflow 8 add_addr_accepted 8"),
                      ("c", "ip mptcp endpoint add 10.1.0.2 dev wifi subflow fullmesh"),
                      ("c", "ip mptcp endpoint add 10.2.0.2 dev lte subflow fullmesh"),
                      ("s", "ip mptcp endpoint add 10.100.0.2 dev lo signal")])


@pytest.mark.parametrize("initiator, endpoint", [("client", "subflow"), ("server", "signal port 9100")])
def test_three_path_wiring(monkeypatch, initiator, endpoint):
    """eth is path 3: 10.3.0.0/24, table 103; the limits leave room for a subflow per path
    (two joins, and one more), one endpoint per non-primary path."""
    got = wiring(monkeypatch, paths=["wifi", "lte", "eth"], mode="MP-3", primary="wifi", initiator=initiator)
    assert got == (TWO_PATH_ADDRS + [("c", "ip addr add 10.3.0.2/24 dev eth"), ("s", "ip addr add 10.3.0.1/24 dev eth"),
                                     ("s", "ip addr add 10.100.0.1/32 dev lo")]
                   + path_wiring(1, "wifi", True) + path_wiring(2, "lte") + path_wiring(3, "eth")
                   + [("c", "ip mptcp endpoint flush"), ("c", "ip mptcp limits set subflow 3 add_addr_accepted 3"),
                      ("s", "ip mptcp endpoint flush"), ("s", "ip mptcp limits set subflow 3 add_addr_accepted 3"),
                      ("c", f"ip mptcp endpoint add 10.2.0.2 dev lte {endpoint}"),
                      ("c", f"ip mptcp endpoint add 10.3.0.2 dev eth {endpoint}")])


# --------------------------------------------------------------------- the campaign spec

DOC = {"name": "t", "seed": 3, "repetitions": 1,
       "scenarios": {"s": {"wifi": {"rate_mbit": 2, "delay_ms": 6}, "lte": {"rate_mbit": 2, "delay_ms": 76},
                           "eth": {"rate_mbit": 10, "delay_ms": 2, "outages": [[7, 28]]}}},
       "modes": ["SP-wifi", "SP-lte", "MP-2", "MP-4", "backup", "MP-3"], "iperf3_down": {"duration_s": 40}}


def test_two_path_modes_keep_their_paths_and_mp3_has_three():
    assert spec.PATH_INDEX == {"wifi": 1, "lte": 2, "eth": 3}
    got = {s.mode: (s.paths, s.mptcp) for s in expand(validate(copy.deepcopy(DOC)))}
    assert got == {"SP-wifi": (["wifi"], False), "SP-lte": (["lte"], False), "MP-2": (["wifi", "lte"], True),
                   "MP-4": (["wifi", "lte"], True), "backup": (["wifi", "lte"], True),
                   "MP-3": (["wifi", "lte", "eth"], True)}


def test_mp3_needs_an_eth_link_and_eth_is_a_known_path():
    doc = copy.deepcopy(DOC)
    doc["scenarios"]["s"].pop("eth")
    with pytest.raises(CampaignError, match="mode MP-3 needs a 'eth' link"):
        validate(doc, "c.yaml")
    doc["modes"] = ["MP-2"]
    validate(doc)  # a two-path campaign needs no eth link
    doc["primary_paths"] = ["eth"]
    validate(doc)  # eth is a path like the others (the primary of an MP-3 run)


def test_a_scenarios_own_flow_length():
    """A scenario's iperf3_down replaces the campaign's (CS244's three-path handover needs
    a longer flow than the buffer sweep); the other scenarios keep the campaign's."""
    doc = copy.deepcopy(DOC)
    doc["modes"] = ["MP-2"]
    doc["scenarios"]["long"] = {**doc["scenarios"]["s"], "iperf3_down": {"duration_s": 50}}
    got = {(s.scenario, s.run_id, s.duration_s) for s in expand(validate(doc))}
    assert got == {("s", "s_MP-2_iperf3-down-40s_wifi_r1", 40.0), ("long", "long_MP-2_iperf3-down-50s_wifi_r1", 50.0)}


# --------------------------------------------------------------------- a real MP-3 capture

# capture/campaigns/three-paths.yaml, written out: the configured links and outages
RATE_MBIT = {"wifi": 2, "lte": 2, "eth": 10}
OUTAGES = {"eth": (3.0, 6.0), "wifi": (4.0, 5.0)}
DURATION_S = 12
FRAME = 1514


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The one run of capture/campaigns/three-paths.yaml, its tables in a DuckDB store, and
    per path when its emulator started (between the two times: the outages' clock)."""
    from capture import emulator
    from capture.campaign import run_campaign
    from pipeline import store, tables

    started: dict[str, tuple[float, float]] = {}
    real_start = emulator.PathEmulator.start

    def timed_start(self):
        before = time.time()
        real_start(self)
        started[self.wire.name] = (before, time.time())

    mp = pytest.MonkeyPatch()
    mp.setattr(emulator.PathEmulator, "start", timed_start)
    out = tmp_path_factory.mktemp("three")
    try:
        status = run_campaign(CAMPAIGN, out, progress=False)
    finally:
        mp.undo()
    assert not status["failed"], status["failed"]
    d = out / "three-paths" / "mp3-handover-12s"
    db = store.write_duckdb(tables.analyze_run(d), out / "three.duckdb")
    return SimpleNamespace(dir=d, meta=json.loads((d / "meta.json").read_text()), started=started, db=db)


def sql(run, q: str) -> pl.DataFrame:
    from pipeline import derived
    con = derived.connect(run.db)
    try:
        return frame(con, q)
    finally:
        con.close()


def delivery(run) -> pl.DataFrame:
    return sql(run, "SELECT second, path, side, payload_bytes::BIGINT AS bytes FROM run_delivery")


def capture_test(f):
    """The marks of a test that captures (root, MPTCP, linkem built)."""
    for m in NEEDS_LINKEM_TESTBED:
        f = m(f)
    return f


@capture_test
def test_three_interfaces_each_with_its_subnet_endpoint_and_pcaps(run):
    m = run.meta
    assert m["mode"] == "MP-3" and m["result"]["complete"]
    assert {p: (v["client_addr"], v["server_addr"], v["table"], v["emulator"]) for p, v in m["paths"].items()} == {
        "wifi": ("10.1.0.2", "10.1.0.1", 101, "linkem"), "lte": ("10.2.0.2", "10.2.0.1", 102, "linkem"),
        "eth": ("10.3.0.2", "10.3.0.1", 103, "linkem")}
    client = m["mptcp_config"]["client"]
    assert "subflows 3" in client["limits"] and "add_addr_accepted 3" in client["limits"]
    assert sorted(e.split()[0] for e in client["endpoints"]) == ["10.2.0.2", "10.3.0.2"]
    for end in ("client", "server"):
        assert set(m["captures"][end]["interfaces"]) == {"wifi", "lte", "eth"}
        for p in ("wifi", "lte", "eth"):
            assert (run.dir / f"{end}-{p}.pcap").stat().st_size > 10_000, (end, p)


@capture_test
def test_nothing_crosses_a_link_inside_its_outage(run):
    """The emulator's log: every frame arriving while the link is down (the configured
    window on the emulator's clock, which started between ``started``'s two times) is
    dropped as an outage, and only those; the client's pcap of that interface has no data
    from the server from then (plus the longest time a frame spent in the emulator) on."""
    from pipeline.extract import read_packets
    for p, (down, up) in OUTAGES.items():
        b, a = run.started[p]
        log = pl.read_csv(run.dir / f"linkem-{p}.csv")
        inside = log.filter((pl.col("arrival_s") >= a + down) & (pl.col("arrival_s") < b + up))
        assert inside.filter(pl.col("direction") == "down").height > 0, p  # the server kept trying
        assert inside["reason"].to_list() == ["outage"] * inside.height, p
        outage = log.filter(pl.col("reason") == "outage")
        assert outage["arrival_s"].min() >= b + down and outage["arrival_s"].max() < a + up, p
        fwd = log.filter((pl.col("direction") == "down") & (pl.col("dropped") == 0))
        sojourn = (fwd["departure_s"] - fwd["arrival_s"]).max()
        pk = read_packets(run.dir / f"client-{p}.pcap").packets
        data_in = pk.filter((pl.col("ip_dst") == run.meta["paths"][p]["client_addr"]) & (pl.col("payload_bytes") > 0)
                            & (pl.col("time_s") >= a + down + sojourn) & (pl.col("time_s") < b + up))
        assert data_in.height == 0, (p, data_in.select("time_s", "payload_bytes").head())
        before = pk.filter((pl.col("time_s") < b + down) & (pl.col("payload_bytes") > 0))
        assert before.height > 0, p


@capture_test
def test_each_path_within_its_configured_rate(run):
    """A path's bottleneck lets at most rate × 1 s through in any second, plus the frame in
    service when the second starts (and one more for the receiver's clock): the bytes each
    path delivered per second stay under it, so each subflow is on the path it is named for."""
    d = delivery(run)
    assert set(d["path"]) == {"wifi", "lte", "eth"}
    for p, rate in RATE_MBIT.items():
        worst = d.filter(pl.col("path") == p)["bytes"].max()
        assert worst <= rate * 1e6 / 8 + 2 * FRAME, (p, worst)
    # the fast path carries more than a 2 Mbit/s link could in some second
    assert d.filter(pl.col("path") == "eth")["bytes"].max() > 2 * 1e6 / 8 + 2 * FRAME


@capture_test
def test_every_path_carries_data_while_up(run):
    """Per path, data in the whole seconds after the first SYN that end before the first
    outage starts (on the emulators' clocks), and in those from 2 s after the path's link
    returns (time for its subflow's backed-off retransmission timer) to the end of the flow."""
    d = delivery(run)
    syn = sql(run, "SELECT c.start_s FROM dl_connections c JOIN main_connections USING (run_id, trace, vantage, "
                   "conn_id) WHERE c.vantage = 'client'")["start_s"][0]
    first_down = min(run.started[p][0] + down for p, (down, _) in OUTAGES.items())
    for p in RATE_MBIT:
        on = d.filter(pl.col("path") == p)
        assert on.filter(syn + pl.col("second") + 1 <= first_down)["bytes"].sum() > 0, p
        back = run.started[p][1] + OUTAGES.get(p, (0, 0))[1] + 2
        assert on.filter((syn + pl.col("second") >= back) & (pl.col("second") < DURATION_S))["bytes"].sum() > 0, p


@capture_test
def test_per_path_delivery_sums_to_the_connections(run):
    """run_delivery's per-path rows partition the main connection's bytes received per
    second (every subflow labelled by its client address), side by side with the sides."""
    per_path = delivery(run)
    conn = sql(run, "SELECT sum(d.payload_bytes)::BIGINT AS b FROM dl_delivered_1s d JOIN main_connections m "
                    "USING (run_id, trace, conn_id) WHERE m.vantage = 'client'")["b"][0]
    assert per_path["bytes"].sum() == conn > 0
    sides = per_path.group_by("side").agg(pl.col("bytes").sum())
    assert dict(sides.iter_rows()) == {
        "wifi": per_path.filter(pl.col("path") == "wifi")["bytes"].sum(),
        "cell": per_path.filter(pl.col("path").is_in(["lte", "eth"]))["bytes"].sum()}
    # and per second: each second's path rows add up to that second of the connection
    per_second = sql(run, "SELECT d.second, sum(d.payload_bytes)::BIGINT AS b FROM dl_delivered_1s d "
                          "JOIN main_connections m USING (run_id, trace, conn_id) WHERE m.vantage = 'client' "
                          "GROUP BY d.second")
    got = per_path.group_by("second").agg(pl.col("bytes").sum().alias("b"))
    assert dict(got.iter_rows()) == dict(per_second.iter_rows())
