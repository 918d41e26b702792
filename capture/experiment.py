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
    kinds = {p: choose_kind(spec.profiles[p], spec.force_tbf) for p in spec.paths}
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
    topo = Topology(run_id=spec.run_id, paths=spec.paths, mode=spec.mode, primary=spec.primary,
                    initiator="server" if spec.workload.startswith("ditg-") else "client",
                    bridge_paths=[p for p, k in kinds.items() if k == "tbf"],
                    sysctls=sysctls, route_metrics=route_metrics,
                    unplug_paths=list(dict.fromkeys(e["path"] for e in spec.unplug)))
    emus: list[PathEmulator] = []
    cap: Capture | None = None
    events: InterfaceEvents | None = None
    sampler: sockbuf.Sampler | None = None
    meta: dict = {
        "run_id": spec.run_id, "campaign": spec.campaign, "scenario": spec.scenario,
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
    with_err = None
    try:
        if coupled:
            coupled.start()   # before the routes that name it
        topo.build()
        if want_ssthresh is not None:   # before the emulators: the warm-up is in no log or pcap
            meta["initial_ssthresh"] = ssthresh.seed(topo, want_ssthresh, work, bridged=topo.bridge_paths)
        load0 = health.sample()
        for i, p in enumerate(spec.paths):
            e = PathEmulator(topo.wires[p], spec.profiles[p], run_dir, seed=spec.seed * 10 + i,
                             force_tbf=spec.force_tbf,
                             base_dir=Path(spec.base_dir) if spec.base_dir else None)
            e.start()
            emus.append(e)
        cap = Capture(run_dir, {"client": (topo.client_ns, [topo.wires[p].client_if for p in spec.paths]),
                                "server": (topo.server_ns, [topo.wires[p].server_if for p in spec.paths])})
        cap.start()
        if spec.sample_socket_buffers:
            sampler = sockbuf.Sampler(run_dir, {"client": topo.client_ns, "server": topo.server_ns})
            sampler.start()
        time.sleep(0.2)
        if spec.unplug:
            # the client's capture of a re-plugged interface restarts before its address is back
            events = InterfaceEvents(topo, spec.unplug,
                                     on_replug=lambda p: cap.restart("client", topo.wires[p].client_if))
        t_start = time.time()
        if events:
            events.start(t_start)
        result = _workload(spec, topo, work, run_dir)
        if events:
            meta["unplug"] = events.stop()
        if sampler:
            meta["socket_buffers"] = sampler.stop()
            sampler = None
        time.sleep(0.5)  # let FIN/ACKs cross the slowest path
        mstate = topo.mptcp_state()
        captures = cap.stop()
        cap = None
        for e in emus:
            e.stop()
        load1 = health.sample()
        meta["congestion_control_impl"] = {"name": spec.congestion_control, "implementation": "kernel"}
        if coupled:
            coupled.stop()
            meta["congestion_control_impl"] = coupled.as_meta()
            _check_coupled(spec, coupled.stats, (meta.get("initial_ssthresh") or {}).get("sockets", 0))
        meta.update({
            "finished_at": now_iso(), "workload_started_s": t_start, "result": result,
            "paths": {p: {**topo.wires[p].as_meta(), **e.as_meta()} for p, e in zip(spec.paths, emus)},
            "service_addr": topo.service_addr,
            "service_addrs": topo.service_addrs,
            "namespaces": {"client": topo.client_ns, "server": topo.server_ns,
                           **{f"emulator_{p}": topo.wires[p].emu_ns for p in spec.paths},
                           **({"parking": topo.park_ns} if spec.unplug else {})},
            "captures": captures, "snaplen": 256,
            "mptcp_config": mstate,
            "sysctl_profile": prof and {k: v for k, v in prof.items() if k != "sysctl_netns"},
            "sysctls_applied": topo.applied_sysctls.get(topo.client_ns, {}),
            "route_metrics": route_metrics,
            "kernel": kernel.check(),
            "tools": kernel.tool_versions(),
            "builds": kernel.builds(),
            "host": {"hostname": platform.node(), "cpus": os.cpu_count(), **health.host_load(load0, load1)},
            "run_cpu": health.run_cpu(load0, load1),
            "stalls": health.stall_summary({p: e.stats() for p, e in zip(spec.paths, emus)}, spec.stall_ms),
        })
        if not spec.keep_interface_pcaps:
            for end in captures.values():
                for ifc in end["interfaces"].values():
                    for seg in ifc.get("segments", [ifc]):
                        (run_dir / seg["pcap"]).unlink(missing_ok=True)
                        seg["pcap"] = None
                    ifc["pcap"] = None
        # checked against its one declaration before it is written: a field of the wrong
        # shape is our defect, said in the log and in the file (the run's packets stay)
        problems = meta_problems(json.loads(json.dumps(meta, default=str)))
        if problems:
            log.error("run %s: meta.json does not match capture/meta.schema.yaml: %s", spec.run_id,
                      "; ".join(problems))
            meta["meta_schema_problems"] = problems
        (run_dir / "meta.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
        (run_dir / STARTED).unlink(missing_ok=True)
        (run_dir / DONE).write_text(meta["finished_at"])
        return meta
    except (Exception, Interrupted) as e:
        with_err = e
        raise
    finally:
        old = block_signals()
        try:
            if events is not None:
                events.cancel()
            if sampler is not None:
                sampler.abort()
            if cap is not None:
                cap.abort()
            for e in emus:
                e.stop()
            topo.destroy()
            if coupled:
                try:
                    coupled.stop()
                except Exception as e:  # noqa: BLE001 - reported, must not hide the run's own error
                    log.error("unregistering %s: %s", spec.congestion_control, e)
            shutil.rmtree(work, ignore_errors=True)
            if with_err is not None:
                (run_dir / "error.txt").write_text(f"{type(with_err).__name__}: {with_err}\n")
        finally:
            unblock_signals(old)


def _workload(spec: RunSpec, topo: Topology, work: Path, run_dir: Path) -> dict:
    """Run the spec's workload between the namespaces; its ``result`` for meta.json."""
    bind = topo.wires[spec.primary].client_addr
    c, s = topo.client_ns, topo.server_ns
    if spec.workload == "http":
        return workloads.http_download(c, s, topo.service_addr, bind, spec.size_bytes, spec.mptcp, work, spec.seed,
                                       spec.timeout_s)
    if spec.workload == "iperf3-up":
        return workloads.iperf3_upload(c, s, topo.service_addr, bind, spec.size_bytes, spec.mptcp, work,
                                       spec.timeout_s)
    if spec.workload == "iperf3-down":
        return workloads.iperf3_download(c, s, topo.service_addr, bind, spec.duration_s, spec.mptcp, work,
                                         spec.timeout_s)
    if spec.workload.startswith("ditg-"):
        return workloads.ditg(c, s, bind, spec.workload[5:], spec.duration_s, spec.mptcp, run_dir,
                              ditg_schedule.schedule_seed(spec.campaign_seed, spec.workload[5:], spec.repetition))
    raise ValueError(f"unknown workload {spec.workload!r}")


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
