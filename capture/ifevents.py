"""Interfaces taken away from the client during a run and given back (a scenario's
``unplug`` schedule), in a thread beside the workload.

Deng et al. (IMC 2014, §3.6.1, Fig. 15g/h) unplug a USB-tethered phone mid-transfer:
the interface disappears from the laptop, and comes back when the phone is plugged in
again. Here, at ``at_s`` seconds after the workload starts, the client's interface of
``path`` is moved out of the client's namespace (``Topology.unplug``: the kernel drops
its address and routes, the address manager's part deletes its MPTCP endpoint), and at
``replug_s`` it is moved back with its address, routes and endpoint
(``Topology.replug``). The emulated link itself stays up: only the client loses the
device. What happened, when, goes to meta.json ``unplug`` (``InterfaceEvents.stop``).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

from .util import log


@dataclass(frozen=True)
class Action:
    at_s: float  # seconds after the workload's start
    kind: str  # "unplug" or "replug"
    path: str


def actions(schedule: list[dict]) -> list[Action]:
    """The schedule's unplugs and replugs in time order (a replug before an unplug at
    the same instant: the schedule's checks allow a path's next unplug at its replug)."""
    acts = [Action(float(e[k]), kind, e["path"]) for e in schedule
            for k, kind in (("at_s", "unplug"), ("replug_s", "replug"))]
    return sorted(acts, key=lambda a: (a.at_s, a.kind == "unplug"))


class InterfaceEvents:
    """Runs a schedule against a topology (``unplug(path)``, ``replug(path, on_device)``)
    from ``start(t0)`` on, until the schedule is done or ``stop()``. ``on_replug(path)``
    runs once the device is back, before its address (the client's capture of it
    restarts there). An action that fails stops the schedule; ``stop()`` raises it."""

    def __init__(self, topo, schedule: list[dict], on_replug: Callable[[str], None] | None = None):
        self.topo, self.schedule, self.on_replug = topo, [dict(e) for e in schedule], on_replug
        self.events: list[dict] = []
        self.error: BaseException | None = None
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self.t0 = 0.0

    def start(self, t0: float) -> None:
        """``t0``: the workload's start (time.time()); the schedule's times count from it."""
        self.t0 = t0
        self._m0 = time.monotonic() - (time.time() - t0)
        self._thread = threading.Thread(target=self._run, name="unplug", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for a in actions(self.schedule):
            if self._cancel.wait(max(0.0, self._m0 + a.at_s - time.monotonic())):
                return
            try:
                self.events.append(self._do(a))
            except Exception as e:  # noqa: BLE001 - kept, raised by stop() in the runner's thread
                self.error = e
                log.error("%s of %s at %.1f s failed: %s", a.kind, a.path, a.at_s, e)
                return

    def _do(self, a: Action) -> dict:
        ev: dict = {"path": a.path, "action": a.kind, "planned_s": a.at_s,
                    "interface": self.topo.wires[a.path].client_if}

        def device_moved():  # the device has left the client / is back in it
            ev["done_s"] = round(time.time() - self.t0, 4)
            if a.kind == "replug" and self.on_replug:
                self.on_replug(a.path)
        do = self.topo.unplug if a.kind == "unplug" else self.topo.replug
        ep = do(a.path, on_device=device_moved)
        # unplug: endpoint deleted; replug: address, routes and endpoint back
        ev["configured_s"] = round(time.time() - self.t0, 4)
        ev["endpoint"] = " ".join(ep) if ep else None
        log.info("%s %s at %.3f s (planned %.1f s)", a.kind, a.path, ev["done_s"], a.at_s)
        return ev

    def _join(self) -> None:
        self._cancel.set()
        if self._thread is not None:
            self._thread.join()

    def stop(self) -> dict:
        """End the schedule (what has not happened yet is listed as not done: the workload
        ended first) and return meta.json's ``unplug``; raise what an action raised."""
        self._join()
        if self.error is not None:
            raise self.error
        done = {(e["action"], e["path"], e["planned_s"]) for e in self.events}
        return {"reference": "seconds after the workload's start (meta.json workload_started_s)",
                "schedule": self.schedule, "events": self.events,
                "not_done": [{"path": a.path, "action": a.kind, "planned_s": a.at_s}
                             for a in actions(self.schedule) if (a.kind, a.path, a.at_s) not in done]}

    def cancel(self) -> None:
        """Stop without a report (a run being torn down)."""
        self._join()
