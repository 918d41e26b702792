"""Interfaces unplugged from the client during a run (scenario key ``unplug``,
capture/ifevents.py, Topology.unplug/replug).

* The campaign key: a schedule is carried into every run of its scenario; bad values
  are refused naming the field (schema and spec checks).
* The scheduler on a stand-in topology: actions in time order at their times, what the
  workload outlived listed as not done, a failed action failing the run.
* meta.json's schedule lifted into the runs table and run_config.
* A short real capture (root, linkem): backup mode, LTE primary, a 5-s download, the
  client's LTE interface unplugged at 1 s and re-plugged at 3 s. Watched from outside
  (``ip -n <client ns>`` every 50 ms): the interface, its address and its MPTCP endpoint
  are there before 1 s, gone between 1 s and 3 s, back (with the routes) after 3 s; the
  run completes; the client's capture holds the interface up to the unplug and again
  from the re-plug.
"""
from __future__ import annotations

import copy
import json
import subprocess
import threading
import time
from pathlib import Path

import pytest
from conftest import NEEDS_LINKEM_TESTBED

from capture.ifevents import Action, InterfaceEvents, actions
from capture.spec import CampaignError, expand, validate
from pipeline.frames import Arrow

BASE = {
    "name": "u", "congestion_control": "reno",
    "scenarios": {"s": {"wifi": {"rate_mbit": 8, "rtt_ms": 30}, "lte": {"rate_mbit": 4, "rtt_ms": 50},
                        "unplug": [{"path": "lte", "at_s": 1, "replug_s": 3}], "modes": []}},
    "runs": [{"id": "r", "scenario": "s", "mode": "backup", "workload": "iperf3-down", "duration_s": 5,
              "primary_path": "lte"}],
}


def campaign(**changes) -> dict:
    doc = copy.deepcopy(BASE)
    for path, value in changes.items():
        node = doc
        *parents, last = path.split(".")
        for k in parents:
            node = node[int(k)] if isinstance(node, list) else node[k]
        node[int(last) if isinstance(node, list) else last] = value
    return doc


# ------------------------------------------------------------------ the campaign key

def test_schedule_goes_into_the_runs():
    specs = expand(validate(campaign()))
    assert [s.unplug for s in specs] == [[{"path": "lte", "at_s": 1, "replug_s": 3}]]
    other = campaign(**{"scenarios.s.unplug": [{"path": "wifi", "at_s": 0, "replug_s": 0.5},
                                               {"path": "wifi", "at_s": 0.5, "replug_s": 2}]})
    assert len(expand(validate(other))[0].unplug) == 2
    no = copy.deepcopy(BASE)
    del no["scenarios"]["s"]["unplug"]
    assert expand(validate(no))[0].unplug == []


@pytest.mark.parametrize("changes, message", [
    ({"scenarios.s.unplug.0.replug_s": 1}, "scenarios.s.unplug.0.replug_s: 1 is not after at_s 1"),
    ({"scenarios.s.unplug.0.at_s": -1}, "scenarios.s.unplug.0.at_s: -1 is less than the minimum of 0"),
    ({"scenarios.s.unplug.0.path": "eth0"}, "scenarios.s.unplug.0.path: 'eth0' is not one of wifi, lte"),
    ({"scenarios.s.unplug.0.at": 2}, "scenarios.s.unplug.0: unknown field ('at' was unexpected)"),
    ({"scenarios.s.unplug": [{"path": "lte", "at_s": 1}]}, "scenarios.s.unplug.0: 'replug_s' is a required property"),
    ({"scenarios.s.unplug": []}, "scenarios.s.unplug: [] should be non-empty"),
    ({"scenarios.s.unplug": [{"path": "lte", "at_s": 1, "replug_s": 3}, {"path": "lte", "at_s": 2, "replug_s": 4}]},
     "scenarios.s.unplug.1.at_s: 2 is before the replug of path 'lte' at 3"),
    ({"runs.0.mode": "SP-wifi"}, "scenarios.s.unplug.0.path: mode SP-wifi has no 'lte' path to unplug"),
])
def test_bad_schedules_name_the_field(changes, message):
    with pytest.raises(CampaignError) as e:
        validate(campaign(**changes), "c.yaml")
    assert str(e.value).startswith("c.yaml") and message in str(e.value), str(e.value)


def test_scenario_modes_are_checked_too():
    doc = campaign(**{"scenarios.s.modes": ["MP-2", "SP-lte", "SP-wifi"]})
    doc.update(sizes=["1MB"])
    with pytest.raises(CampaignError, match=r"scenarios.s.unplug.0.path: mode SP-wifi has no 'lte' path"):
        validate(doc, "c.yaml")


def test_no_unplug_with_d_itg():
    doc = campaign(**{"runs.0.workload": "ditg-docs"})
    with pytest.raises(CampaignError, match=r"scenarios.s.unplug: not with D-ITG workloads \(run r\)"):
        expand(validate(doc))


# ------------------------------------------------------------------ the scheduler

def test_actions_in_time_order():
    sched = [{"path": "wifi", "at_s": 2, "replug_s": 5}, {"path": "lte", "at_s": 1, "replug_s": 2}]
    assert actions(sched) == [Action(1, "unplug", "lte"), Action(2, "replug", "lte"), Action(2, "unplug", "wifi"),
                              Action(5, "replug", "wifi")]


class FakeWire:
    def __init__(self, name):
        self.client_if = f"if-{name}"


class FakeTopology:
    """Records when each action ran (seconds after t0) and calls ``on_device`` as the real
    one does between moving the device and configuring it."""

    def __init__(self, t0, fail_on=None):
        self.t0, self.fail_on, self.calls = t0, fail_on, []
        self.wires = {"wifi": FakeWire("wifi"), "lte": FakeWire("lte")}

    def _act(self, kind, path, on_device):
        if (kind, path) == self.fail_on:
            raise RuntimeError(f"{kind} {path} failed")
        self.calls.append((kind, path, time.time() - self.t0))
        if on_device:
            on_device()
        return ["10.2.0.2", "id", "2", "subflow"]

    def unplug(self, path, on_device=None):
        return self._act("unplug", path, on_device)

    def replug(self, path, on_device=None):
        return self._act("replug", path, on_device)


def test_schedule_runs_at_its_times_and_lists_what_it_did_not_do():
    t0 = time.time()
    topo = FakeTopology(t0)
    replugged = []
    ev = InterfaceEvents(topo, [{"path": "lte", "at_s": 0.2, "replug_s": 0.4},
                                {"path": "wifi", "at_s": 0.5, "replug_s": 30}], on_replug=replugged.append)
    ev.start(t0)
    time.sleep(0.8)
    rep = ev.stop()
    assert [c[:2] for c in topo.calls] == [("unplug", "lte"), ("replug", "lte"), ("unplug", "wifi")]
    for (_, _, at), planned in zip(topo.calls, (0.2, 0.4, 0.5)):
        assert planned <= at < planned + 0.1, topo.calls
    assert replugged == ["lte"]
    assert [(e["action"], e["path"], e["planned_s"]) for e in rep["events"]] == \
        [("unplug", "lte", 0.2), ("replug", "lte", 0.4), ("unplug", "wifi", 0.5)]
    assert all(e["planned_s"] <= e["done_s"] <= e["configured_s"] for e in rep["events"])
    assert rep["events"][0]["endpoint"] == "10.2.0.2 id 2 subflow" and rep["events"][0]["interface"] == "if-lte"
    assert rep["not_done"] == [{"path": "wifi", "action": "replug", "planned_s": 30.0}]


def test_a_failed_action_fails_the_run():
    t0 = time.time()
    ev = InterfaceEvents(FakeTopology(t0, fail_on=("replug", "lte")), [{"path": "lte", "at_s": 0, "replug_s": 0.1}])
    ev.start(t0)
    time.sleep(0.3)
    with pytest.raises(RuntimeError, match="replug lte failed"):
        ev.stop()


def test_schedule_lifted_into_runs_and_run_config():
    import duckdb

    from pipeline import derived, metadoc, schema, tables

    meta = {"run_id": "r1", "campaign": "deng", "mode": "backup",
            "unplug": {"schedule": [{"path": "lte", "at_s": 3, "replug_s": 20}, {"path": "lte", "at_s": 25,
                                                                                 "replug_s": 30}], "events": []}}
    want = {"unplug_path": "lte", "unplug_at_s": 3.0, "replug_at_s": 20.0}
    assert {k: metadoc.run_columns(meta)[k] for k in want} == want
    assert {k: metadoc.run_columns({"unplug": {"schedule": "x"}})[k] for k in want} == dict.fromkeys(want)
    con = duckdb.connect()
    for t in schema.TABLES:
        con.execute(schema.ddl(t))
    con.register("r", Arrow(tables.meta_tables(meta, "r1")["runs"]))
    con.execute("INSERT INTO runs SELECT * FROM r")
    derived.install(con)
    assert con.execute(f"SELECT {', '.join(want)} FROM run_facts").fetchall() == [tuple(want.values())]


# ------------------------------------------------------------------ a real capture

def needs_testbed(test):
    for mark in NEEDS_LINKEM_TESTBED:
        test = mark(test)
    return test


AT, REPLUG, DURATION = 1.0, 3.0, 5.0
LTE_ADDR = "10.2.0.2"


def _watch(ns: str, stop: threading.Event, seen: list) -> None:
    """Every 50 ms: is the interface ``lte`` in ``ns``, with its address, an MPTCP
    endpoint of it and its routing table's default route?"""
    def ip(*args):
        return subprocess.run(["ip", "-n", ns, *args], capture_output=True, text=True).stdout
    while not stop.wait(0.05):
        t = time.time()
        link = ip("-o", "link", "show")
        if not link:
            continue  # the namespace is not there (yet, or any more)
        seen.append({"t": t, "link": any(ln.split(":")[1].strip().split("@")[0] == "lte" for ln in link.splitlines()),
                     "addr": f"inet {LTE_ADDR}/24" in ip("-o", "-4", "addr", "show"),
                     "endpoint": any(ln.startswith(LTE_ADDR + " ") for ln in ip("mptcp", "endpoint", "show")
                                     .splitlines()),
                     "route": "default via 10.2.0.1 dev lte" in ip("route", "show", "table", "102")})


def _pcap_times(pcap: Path) -> list[float]:
    p = subprocess.run(["tcpdump", "-r", str(pcap), "-tt", "-n"], capture_output=True, text=True)
    return [float(ln.split()[0]) for ln in p.stdout.splitlines() if ln.strip()]


@pytest.fixture(scope="module")
def unplugged_run(tmp_path_factory):
    from capture.experiment import run_one
    from capture.topology import Topology

    spec = expand(validate(campaign(**{"scenarios.s.unplug.0.at_s": AT, "scenarios.s.unplug.0.replug_s": REPLUG,
                                       "runs.0.duration_s": DURATION})))[0]
    run_dir = tmp_path_factory.mktemp("unplug") / "r"
    client_ns = Topology(run_id=spec.run_id, paths=spec.paths, mode=spec.mode, primary=spec.primary).client_ns
    stop, seen = threading.Event(), []
    watcher = threading.Thread(target=_watch, args=(client_ns, stop, seen))
    watcher.start()
    try:
        meta = run_one(spec, run_dir)
    finally:
        stop.set()
        watcher.join()
    t0 = meta["workload_started_s"]
    return run_dir, meta, [{**s, "t": s["t"] - t0} for s in seen]


@needs_testbed
def test_interface_gone_between_the_times_and_back_after(unplugged_run):
    _, meta, seen = unplugged_run
    before = [s for s in seen if 0.1 <= s["t"] <= AT - 0.1]
    away = [s for s in seen if AT + 0.3 <= s["t"] <= REPLUG - 0.1]
    back = [s for s in seen if REPLUG + 0.5 <= s["t"] <= DURATION - 0.2]
    assert len(before) >= 5 and len(away) >= 10 and len(back) >= 10, (len(before), len(away), len(back))
    assert all(s["link"] and s["addr"] and s["endpoint"] and s["route"] for s in before), before
    assert not any(s["link"] or s["addr"] or s["endpoint"] or s["route"] for s in away), away
    assert all(s["link"] and s["addr"] and s["endpoint"] and s["route"] for s in back), back


@needs_testbed
def test_event_log_and_a_complete_run(unplugged_run):
    run_dir, meta, _ = unplugged_run
    assert (run_dir / ".done").exists() and meta["result"]["complete"] and "meta_schema_problems" not in meta
    ev = meta["unplug"]["events"]
    assert [(e["action"], e["path"], e["planned_s"]) for e in ev] == [("unplug", "lte", AT), ("replug", "lte", REPLUG)]
    for e in ev:
        assert e["planned_s"] <= e["done_s"] <= e["configured_s"] < e["planned_s"] + 0.5, e
    # backup mode, LTE primary: the client's LTE address had an endpoint (the initial
    # subflow's) that went with the interface and came back with it
    assert ev[0]["endpoint"] == ev[1]["endpoint"] and ev[0]["endpoint"].startswith(LTE_ADDR + " id ")
    assert meta["unplug"]["not_done"] == [] and "parking" in meta["namespaces"]
    assert any(e.startswith(LTE_ADDR + " ") for e in meta["mptcp_config"]["client"]["endpoints"])
    # the kernel was told: the endpoint's removal closed the subflows of that address
    assert meta["mptcp_config"]["client"]["counters"]["MPTcpExt"].get("RmSubflow", 0) >= 1


@needs_testbed
def test_client_capture_of_the_unplugged_interface(unplugged_run):
    """client-lte.pcap ends at the unplug (tcpdump: "The interface disappeared"), a second
    segment starts at the re-plug, and the client's merged trace holds both."""
    run_dir, meta, _ = unplugged_run
    t0, (out_ev, back_ev) = meta["workload_started_s"], meta["unplug"]["events"]
    lte = meta["captures"]["client"]["interfaces"]["lte"]
    assert [s["pcap"] for s in lte["segments"]] == ["client-lte.pcap", "client-lte-2.pcap"]
    assert any("The interface disappeared" in ln for ln in lte["segments"][0]["tcpdump"])
    first, second = _pcap_times(run_dir / "client-lte.pcap"), _pcap_times(run_dir / "client-lte-2.pcap")
    assert first and second
    assert max(first) <= t0 + out_ev["done_s"] + 0.01
    assert min(second) >= t0 + back_ev["done_s"] - 0.01
    wifi = _pcap_times(run_dir / "client-wifi.pcap")
    assert len(_pcap_times(run_dir / "client.pcap")) == len(first) + len(second) + len(wifi)
    assert json.loads((run_dir / "meta.json").read_text())["unplug"]["schedule"] == [
        {"path": "lte", "at_s": AT, "replug_s": REPLUG}]


@needs_testbed
def test_one_subflow_per_connection_and_address(unplugged_run):
    """iperf3 opens two MPTCP connections (control, data) from the LTE address: two SYNs
    on LTE before the unplug (the endpoint the primary's address got at set-up opens no
    second subflow), two joins over the WiFi backup, and two joins on LTE after the
    re-plug (the endpoint given back opens one subflow per connection)."""
    run_dir, _, _ = unplugged_run

    def syns(pcap: str) -> int:
        p = subprocess.run(["tcpdump", "-r", str(run_dir / pcap), "-n", "tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn"],
                           capture_output=True, text=True)
        return len([ln for ln in p.stdout.splitlines() if ln.strip()])
    assert (syns("client-lte.pcap"), syns("client-wifi.pcap"), syns("client-lte-2.pcap")) == (2, 2, 2)
