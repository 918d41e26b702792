"""One run: build the topology, start emulation and captures, run the workload,
write meta.json, tear everything down (also on failure and on SIGTERM/SIGINT)."""
from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

from pipeline.metadoc import problems as meta_problems  # meta.json's one declaration, checked as written

from . import ditg_schedule, health, kernel, sockbuf, ssthresh, workloads
from .cc import is_bpf
from .cc.loader import Registered
from .emulator import PathEmulator, choose_kind
from .ifevents import InterfaceEvents
from .pcaps import Capture
from .spec import SIZED, RunSpec
from .topology import Topology, sweep
from .util import Interrupted, block_signals, log, unblock_signals


DONE = ".done"        # marker written last: a run folder with it is finished
STARTED = ".started"  # marker written first: a folder with only this is a half run


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def run_one(spec: RunSpec, run_dir: Path, attempts: list[dict] | None = None) -> dict:
    """Run one experiment into ``run_dir``; return its meta dict. Raises on failure
    (the folder is then left without the DONE marker). ``attempts``: summaries of
    earlier attempts of this run that were repeated (a stall), kept in meta.json."""
    run_dir = Path(run_dir)
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    (run_dir / STARTED).write_text(now_iso())
    work = Path(tempfile.mkdtemp(prefix=f"mpl-{spec.run_id[:20]}-"))
    sweep()
    run = _Run(spec, run_dir, work, attempts)
    with_err = None
    try:
        run.start()
        run.workload()
        run.finish()
        run.record()
        return run.write()
    except (Exception, Interrupted) as e:
        with_err = e
        raise
    finally:
        run.teardown(with_err)


class _Run:
    """One run's steps, in the order ``run_one`` takes them. Each part that must be
    stopped (emulators, captures, samplers, interface events) is kept here from when it
    starts, so ``teardown`` stops whatever is still running, also after a failure."""

    def __init__(self, spec: RunSpec, run_dir: Path, work: Path, attempts: list[dict] | None):
        self.spec, self.run_dir, self.work = spec, run_dir, work
        kinds = {p: choose_kind(spec.profiles[p], spec.force_tbf) for p in spec.paths}
        self.prof, self.sysctls, self.route_metrics, self.want_ssthresh, self.coupled = _kernel_settings(spec)
        self.topo = _topology(spec, kinds, self.sysctls, self.route_metrics)
        self.emus: list[PathEmulator] = []
        self.cap: Capture | None = None
        self.events: InterfaceEvents | None = None
        self.sampler: sockbuf.Sampler | None = None
        self.meta: dict = _meta_head(spec, attempts)
        # what the steps measure, for the record
        self.load0: health.Sample | None = None
        self.load1: health.Sample | None = None
        self.t_start: float | None = None
        self.result: dict | None = None
        self.mstate: dict | None = None
        self.captures: dict | None = None

    def start(self) -> None:
        """Register the congestion control, build the namespaces, seed the initial
        ssthresh, start the emulators, the captures and the socket-buffer samplers."""
        spec, topo, run_dir = self.spec, self.topo, self.run_dir
        if self.coupled:
            self.coupled.start()   # before the routes that name it
        topo.build()
        if self.want_ssthresh is not None:   # before the emulators: the warm-up is in no log or pcap
            self.meta["initial_ssthresh"] = ssthresh.seed(topo, self.want_ssthresh, self.work,
                                                          bridged=topo.bridge_paths)
        self.load0 = health.sample()
        for i, p in enumerate(spec.paths):
            e = PathEmulator(topo.wires[p], spec.profiles[p], run_dir, seed=spec.seed * 10 + i,
                             force_tbf=spec.force_tbf,
                             base_dir=Path(spec.base_dir) if spec.base_dir else None)
            e.start()
            self.emus.append(e)
        self.cap = Capture(run_dir, {"client": (topo.client_ns, [topo.wires[p].client_if for p in spec.paths]),
                                     "server": (topo.server_ns, [topo.wires[p].server_if for p in spec.paths])})
        self.cap.start()
        if spec.sample_socket_buffers:
            self.sampler = sockbuf.Sampler(run_dir, {"client": topo.client_ns, "server": topo.server_ns})
            self.sampler.start()
        time.sleep(0.2)
        if spec.unplug:
            # the client's capture of a re-plugged interface restarts before its address is back
            self.events = InterfaceEvents(topo, spec.unplug,
                                          on_replug=lambda p: self.cap.restart("client", topo.wires[p].client_if))

    def workload(self) -> None:
        """The workload, with the interface events of its schedule; then the samplers stop."""
        self.t_start = time.time()
        if self.events:
            self.events.start(self.t_start)
        self.result = _workload(self.spec, self.topo, self.work, self.run_dir)
        if self.events:
            self.meta["unplug"] = self.events.stop()
        if self.sampler:
            self.meta["socket_buffers"] = self.sampler.stop()
            self.sampler = None

    def finish(self) -> None:
        """Stop the captures and the emulators once the last packets crossed; unregister
        the congestion control and check that the run used it."""
        spec, meta = self.spec, self.meta
        time.sleep(0.5)  # let FIN/ACKs cross the slowest path
        self.mstate = self.topo.mptcp_state()
        self.captures = self.cap.stop()
        self.cap = None
        for e in self.emus:
            e.stop()
        self.load1 = health.sample()
        meta["congestion_control_impl"] = {"name": spec.congestion_control, "implementation": "kernel"}
        if self.coupled:
            self.coupled.stop()
            meta["congestion_control_impl"] = self.coupled.as_meta()
            _check_coupled(spec, self.coupled.stats, (meta.get("initial_ssthresh") or {}).get("sockets", 0))

    def record(self) -> None:
        """The rest of meta.json: what ran, where, with what, and how the host did."""
        spec, topo, emus, prof = self.spec, self.topo, self.emus, self.prof
        load0, load1 = self.load0, self.load1
        self.meta.update({
            "finished_at": now_iso(), "workload_started_s": self.t_start, "result": self.result,
            "paths": {p: {**topo.wires[p].as_meta(), **e.as_meta()} for p, e in zip(spec.paths, emus)},
            "service_addr": topo.service_addr,
            "service_addrs": topo.service_addrs,
            "namespaces": {"client": topo.client_ns, "server": topo.server_ns,
                           **{f"emulator_{p}": topo.wires[p].emu_ns for p in spec.paths},
                           **({"parking": topo.park_ns} if spec.unplug else {})},
            "captures": self.captures, "snaplen": 256,
            "mptcp_config": self.mstate,
            "sysctl_profile": prof and {k: v for k, v in prof.items() if k != "sysctl_netns"},
            "sysctls_applied": topo.applied_sysctls.get(topo.client_ns, {}),
            "route_metrics": self.route_metrics,
            "kernel": kernel.check(),
            "tools": kernel.tool_versions(),
            "builds": kernel.builds(),
            "host": {"hostname": platform.node(), "cpus": os.cpu_count(), **health.host_load(load0, load1)},
            "run_cpu": health.run_cpu(load0, load1),
            "stalls": health.stall_summary({p: e.stats() for p, e in zip(spec.paths, emus)}, spec.stall_ms),
        })
        if not spec.keep_interface_pcaps:
            _drop_interface_pcaps(self.run_dir, self.captures)

    def write(self) -> dict:
        """meta.json, then the DONE marker in place of STARTED; returns the meta dict."""
        meta = self.meta
        # checked against its one declaration before it is written: a field of the wrong
        # shape is our defect, said in the log and in the file (the run's packets stay)
        problems = meta_problems(json.loads(json.dumps(meta, default=str)))
        if problems:
            log.error("run %s: meta.json does not match pipeline/meta.schema.yaml: %s", self.spec.run_id,
                      "; ".join(problems))
            meta["meta_schema_problems"] = problems
        (self.run_dir / "meta.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
        (self.run_dir / STARTED).unlink(missing_ok=True)
        (self.run_dir / DONE).write_text(meta["finished_at"])
        return meta

    def teardown(self, error: BaseException | None) -> None:
        """Stop whatever still runs and remove the namespaces, with SIGTERM/SIGINT held
        off until done; a failed run's error goes to error.txt."""
        old = block_signals()
        try:
            if self.events is not None:
                self.events.cancel()
            if self.sampler is not None:
                self.sampler.abort()
            if self.cap is not None:
                self.cap.abort()
            for e in self.emus:
                e.stop()
            self.topo.destroy()
            if self.coupled:
                try:
                    self.coupled.stop()
                except Exception as e:  # noqa: BLE001 - reported, must not hide the run's own error
                    log.error("unregistering %s: %s", self.spec.congestion_control, e)
            shutil.rmtree(self.work, ignore_errors=True)
            if error is not None:
                (self.run_dir / "error.txt").write_text(f"{type(error).__name__}: {error}\n")
        finally:
            unblock_signals(old)


def _kernel_settings(spec: RunSpec) -> tuple[dict | None, dict, dict, int | None, Registered | None]:
    """The run's kernel settings: its sysctl profile (or None), the sysctls of its
    namespaces, its route metrics, the initial ssthresh to seed (or None) and the BPF
    congestion control to register (or None)."""
    prof = kernel.load_profile(spec.sysctl_profile, spec.sysctl_params) if spec.sysctl_profile else None
    # The congestion control is set per route (`congctl`): a non-initial namespace may
    # not pick a default outside the host's tcp_allowed_congestion_control, and the
    # host's settings are never changed.
    sysctls: dict = {}
    route_metrics: dict = {"congctl": spec.congestion_control}
    if prof:
        sysctls.update(prof["sysctl_netns"])
        route_metrics.update(prof.get("route", {}))
    sysctls.update({k: str(v) for k, v in (spec.sysctls or {}).items() if k not in kernel.GLOBAL_SYSCTLS})
    # a route ssthresh takes effect only through the tcp_metrics cache (capture/ssthresh.py)
    want_ssthresh = ssthresh.requested(route_metrics, f"sysctl profile {spec.sysctl_profile}: route")
    if want_ssthresh is not None:
        sysctls.update(ssthresh.SYSCTLS)
    # lia/olia/balia are BPF programs (capture/cc), registered for the run's duration
    # only. They are registered non-restricted, so the namespaces may also take them
    # as default (sockets without a route metric, the MPTCP connection itself).
    coupled = Registered(spec.congestion_control) if is_bpf(spec.congestion_control) else None
    if coupled:
        sysctls["net.ipv4.tcp_congestion_control"] = spec.congestion_control
    if spec.mptcp:
        sysctls["net.mptcp.enabled"] = "1"
        if spec.scheduler != "default":
            sysctls["net.mptcp.scheduler"] = spec.scheduler
    return prof, sysctls, route_metrics, want_ssthresh, coupled


def _topology(spec: RunSpec, kinds: dict[str, str], sysctls: dict, route_metrics: dict) -> Topology:
    """The run's namespaces (not built yet): tbf paths are bridged by the kernel, D-ITG's
    connection is opened by the server."""
    return Topology(run_id=spec.run_id, paths=spec.paths, mode=spec.mode, primary=spec.primary,
                    initiator="server" if spec.workload.startswith("ditg-") else "client",
                    bridge_paths=[p for p, k in kinds.items() if k == "tbf"],
                    sysctls=sysctls, route_metrics=route_metrics,
                    unplug_paths=list(dict.fromkeys(e["path"] for e in spec.unplug)))


def _meta_head(spec: RunSpec, attempts: list[dict] | None) -> dict:
    """meta.json's first fields: the run as specified, and when it started."""
    return {
        "run_id": spec.run_id, "campaign": spec.campaign, "study": spec.study, "scenario": spec.scenario,
        "mode": spec.mode, "transport": "mptcp" if spec.mptcp else "tcp",
        "congestion_control": spec.congestion_control, "scheduler": spec.scheduler,
        "path_manager": "kernel", "primary_path": spec.primary, "workload": spec.workload,
        "size_bytes": spec.size_bytes if spec.workload in SIZED else None,
        "duration_s": spec.duration_s if spec.workload not in SIZED else None,
        "repetition": spec.repetition, "order_index": spec.order_index, "seed": spec.seed,
        "campaign_seed": spec.campaign_seed,
        "scale": spec.scale, "link_profiles": dict(spec.profile_names),
        "started_at": now_iso(), "attempt": len(attempts or []) + 1, "earlier_attempts": list(attempts or []),
    }


def _drop_interface_pcaps(run_dir: Path, captures: dict) -> None:
    """Remove the per-interface pcaps of a campaign that keeps only the merged ones
    (``keep_interface_pcaps: false``); their entries in ``captures`` say null."""
    for end in captures.values():
        for ifc in end["interfaces"].values():
            for seg in ifc.get("segments", [ifc]):
                (run_dir / seg["pcap"]).unlink(missing_ok=True)
                seg["pcap"] = None
            ifc["pcap"] = None


# The workloads, by kind: each runs between the namespaces (the client bound to its
# primary path's address ``bind``) and returns its ``result`` for meta.json.

def _http(spec: RunSpec, topo: Topology, bind: str, work: Path, run_dir: Path) -> dict:
    return workloads.http_download(topo.client_ns, topo.server_ns, topo.service_addr, bind, spec.size_bytes,
                                   spec.mptcp, work, spec.seed, spec.timeout_s)


def _iperf3_up(spec: RunSpec, topo: Topology, bind: str, work: Path, run_dir: Path) -> dict:
    return workloads.iperf3_upload(topo.client_ns, topo.server_ns, topo.service_addr, bind, spec.size_bytes,
                                   spec.mptcp, work, spec.timeout_s)


def _iperf3_down(spec: RunSpec, topo: Topology, bind: str, work: Path, run_dir: Path) -> dict:
    return workloads.iperf3_download(topo.client_ns, topo.server_ns, topo.service_addr, bind, spec.duration_s,
                                     spec.mptcp, work, spec.timeout_s)


def _ditg(spec: RunSpec, topo: Topology, bind: str, work: Path, run_dir: Path) -> dict:
    profile = spec.workload[len("ditg-"):]
    return workloads.ditg(topo.client_ns, topo.server_ns, bind, profile, spec.duration_s, spec.mptcp, run_dir,
                          ditg_schedule.schedule_seed(spec.campaign_seed, profile, spec.repetition))


WORKLOAD_RUNNERS = {"http": _http, "iperf3-up": _iperf3_up, "iperf3-down": _iperf3_down, "ditg": _ditg}


def _workload(spec: RunSpec, topo: Topology, work: Path, run_dir: Path) -> dict:
    """Run the spec's workload between the namespaces; its ``result`` for meta.json."""
    bind = topo.wires[spec.primary].client_addr
    # every D-ITG profile (ditg-netflix, ditg-maps, ...) is one runner: workloads.ditg
    kind = "ditg" if spec.workload.startswith("ditg-") else spec.workload
    if kind not in WORKLOAD_RUNNERS:
        raise ValueError(f"unknown workload {spec.workload!r}")
    return WORKLOAD_RUNNERS[kind](spec, topo, bind, work, run_dir)


def _check_coupled(spec: RunSpec, stats: dict, warmup_sockets: int = 0) -> None:
    """A run that asked for a coupled algorithm must have used it: never record a run
    whose subflows silently ran something else. ``warmup_sockets``: plain TCP sockets
    the initial-ssthresh warm-up opened under it (capture/ssthresh.py), not the workload's."""
    if spec.mptcp and not stats.get("subflows_coupled"):
        raise RuntimeError(f"{spec.congestion_control} was registered but no MPTCP subflow used it "
                           f"(program counters: {stats})")
    if not spec.mptcp and not ((stats.get("plain_tcp_sockets") or 0) > warmup_sockets
                               or stats.get("subflows_coupled")):
        raise RuntimeError(f"{spec.congestion_control} was registered but no socket of the workload used it "
                           f"({stats}; {warmup_sockets} warm-up sockets)")
