"""Link emulation per path: the project's ``linkem`` (delay, jitter, loss, link-layer
retransmission, rate/trace, queue, outages) or, when it is not built, tbf for rate-only
profiles.

A link profile (campaign YAML ``scenarios.<name>.<path>``) is a dict. Top-level keys
apply to both directions, ``down`` (server→client) and ``up`` override them::

    {rate_mbit: 20, rtt_ms: 30, loss: 0.01, queue_bytes: 150000}
    {rate_mbit: 10, delay_ms: 35, down: {trace: traces/lte.down}, up: {rate_mbit: 5}}

``rtt_ms`` is shorthand for ``delay_ms = rtt_ms / 2`` each way. ``loss`` is a
Bernoulli probability or a dict in linkem's format (``model: gilbert_elliott`` …).
``llr: {delay_ms: 8, retries: 4}`` (linkem's link-layer retransmission, as a cellular
radio's RLC) makes ``loss`` the radio's loss per attempt: a lost frame is resent
``delay_ms`` later, up to ``retries`` times, and dropped only when every attempt is lost::

    {rate_mbit: 8, rtt_ms: 60, queue_bytes: 100000, down: {loss: 0.05, llr: {delay_ms: 8, retries: 4}}}

``trace_offset_ms`` (with a ``trace``) starts the trace at that phase: an integer (ms), or
``random``: drawn uniformly over the trace's period from the run's seed, independently per
path and direction, so each run sees its own slice of the rate sequence (meta.json
``paths.<p>.trace_offset_ms`` records what was drawn)::

    {trace: traces/chen_lte_att.trace, trace_offset_ms: random, rtt_ms: 60}
"""
from __future__ import annotations

import json
import random
import time
from pathlib import Path

from .health import read_linkem_stats
from .spec import direction
# LINKEM and linkem_available are read here through this module's names (tests replace
# capture.emulator.linkem_available); they are defined in util, below kernel and spec
from .util import LINKEM, REPO, CommandError, Proc, linkem_available, log, sh


def needs_linkem(profile: dict) -> bool:
    for d in ("down", "up"):
        s = direction(profile, d)
        if s.get("delay_ms") or s.get("jitter_ms") or s.get("trace") or s.get("outages"):
            return True
        loss = s.get("loss")
        if isinstance(loss, dict) or (loss and float(loss) > 0):
            return True
        if s.get("queue_packets") or s.get("llr"):
            return True
    return False


def trace_period_ms(path: Path) -> int:
    """A Mahimahi trace's period: its last timestamp (linkem's reading: blank lines and
    ``#`` comments skipped)."""
    lines = [x.strip() for x in Path(path).read_text().splitlines()]
    lines = [x for x in lines if x and not x.startswith("#")]
    if not lines or not lines[-1].isdigit() or int(lines[-1]) <= 0:
        raise ValueError(f"{path}: not a delivery trace (its last line must be the period, an integer > 0 ms)")
    return int(lines[-1])


def trace_offset(setting, trace: Path, seed: int, d: str) -> int | None:
    """A direction's ``trace_offset_ms``: as given, or for ``random`` a phase drawn
    uniformly over the trace's period from ``seed`` (the path's linkem seed, one per run
    and path) and the direction, so offsets are independent per run, path and direction
    and the same seed draws the same one."""
    if setting is None:
        return None
    if setting == "random":
        return random.Random(f"linkem-trace-offset/{seed}/{d}").randrange(trace_period_ms(trace))
    return int(setting)


def linkem_config(profile: dict, seed: int, base_dir: Path | None = None) -> dict:
    cfg: dict = {"seed": int(seed)}
    for d in ("down", "up"):
        s = direction(profile, d)
        c: dict = {"delay_ms": float(s.get("delay_ms", 0)), "jitter_ms": float(s.get("jitter_ms", 0))}
        loss = s.get("loss", 0)
        c["loss"] = dict(loss) if isinstance(loss, dict) else {"model": "bernoulli", "p": float(loss)}
        if s.get("llr"):
            c["llr"] = {"delay_ms": float(s["llr"]["delay_ms"]), "retries": int(s["llr"]["retries"])}
        if "trace" in s:
            t = Path(s["trace"])
            if not t.is_absolute() and base_dir is not None:
                t = (base_dir / t).resolve()
            c["trace"] = str(t)
            off = trace_offset(s.get("trace_offset_ms"), t, seed, d)
            if off is not None:
                c["trace_offset_ms"] = off
        elif "rate_mbit" in s:
            c["rate_mbit"] = float(s["rate_mbit"])
        for k in ("queue_bytes", "queue_packets"):
            if k in s:
                c[k] = int(s[k])
        c["outages"] = [list(map(float, o)) for o in s.get("outages", [])]
        cfg[d] = c
    return cfg


class PathEmulator:
    """Starts the emulation of one path wire and stops it (flushing linkem's log)."""

    def __init__(self, wire, profile: dict, run_dir: Path, seed: int, force_tbf: bool = False,
                 base_dir: Path | None = None):
        self.wire, self.profile, self.run_dir, self.seed = wire, profile, run_dir, seed
        self.base_dir = base_dir
        self.proc: Proc | None = None
        self.kind = choose_kind(profile, force_tbf)
        # what linkem is given (drawn here: a random trace phase is part of the run's record)
        self.config = linkem_config(profile, seed, base_dir) if self.kind == "linkem" else None
        # direction -> the phase (ms) its trace starts at, for the traced directions
        self.trace_offsets = {d: c.get("trace_offset_ms") for d, c in (self.config or {}).items()
                              if isinstance(c, dict) and "trace" in c}
        self.log_path = run_dir / f"linkem-{wire.name}.csv"
        self.config_path = run_dir / f"linkem-{wire.name}.json"
        self.stats_path = run_dir / f"linkem-{wire.name}.stats.json"

    def start(self) -> None:
        w = self.wire
        if self.kind == "tbf":
            for ifc, d in ((w.emu_client_if, "down"), (w.emu_server_if, "up")):
                s = direction(self.profile, d)
                if "rate_mbit" in s:
                    tbf(w.emu_ns, ifc, float(s["rate_mbit"]), int(s.get("queue_bytes", 0) or 0))
            return
        self.config_path.write_text(json.dumps(self.config, indent=1))
        ready = self.run_dir / f".linkem-{w.name}.ready"
        ready.unlink(missing_ok=True)
        self.proc = Proc(f"linkem-{w.name}", [str(LINKEM), "--client-if", w.emu_client_if,
                                              "--server-if", w.emu_server_if,
                                              "--config", str(self.config_path),
                                              "--log", str(self.log_path), "--stats", str(self.stats_path),
                                              "--ready-file", str(ready)],
                         ns=w.emu_ns, stderr=self.run_dir / f"linkem-{w.name}.stderr")
        end = time.monotonic() + 10
        while not ready.exists():
            if not self.proc.alive():
                err = (self.run_dir / f"linkem-{w.name}.stderr").read_text(errors="replace")[-2000:]
                raise CommandError(f"linkem on path {w.name} exited ({self.proc.p.returncode}): {err}")
            if time.monotonic() > end:
                raise CommandError(f"linkem on path {w.name} not ready after 10 s")
            time.sleep(0.02)
        ready.unlink(missing_ok=True)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop(timeout=10)
            self.proc = None

    def stats(self) -> dict | None:
        """linkem's --stats (counters, late departures, reader lag, CPU) once it has
        stopped; None for tbf."""
        if self.kind != "linkem":
            return None
        return read_linkem_stats(self.stats_path)

    def as_meta(self) -> dict:
        m = {"emulator": self.kind, "profile": self.profile,
             "down": direction(self.profile, "down"), "up": direction(self.profile, "up")}
        if self.kind == "linkem":
            m["linkem_config"] = self.config_path.name
            m["linkem_log"] = self.log_path.name
            m["linkem_stats"] = self.stats_path.name
            if self.trace_offsets:
                m["trace_offset_ms"] = dict(self.trace_offsets)
        else:
            m["tbf"] = {"down_if": self.wire.emu_client_if, "up_if": self.wire.emu_server_if,
                        "namespace": self.wire.emu_ns}
        return m


def choose_kind(profile: dict, force_tbf: bool = False) -> str:
    if linkem_available() and not force_tbf:
        return "linkem"
    if needs_linkem(profile):
        raise CommandError(
            f"link profile {profile} needs delay/jitter/loss/llr/trace/outages, which only linkem "
            f"provides (no netem in this kernel), and {LINKEM.relative_to(REPO)} is not built "
            f"(make linkem)")
    return "tbf"


def tbf(ns: str, ifc: str, rate_mbit: float, queue_bytes: int = 0) -> None:
    rate_bps = rate_mbit * 1e6
    burst = max(int(rate_bps / 8 / 250), 3028)   # ≥ 4 ms of traffic, ≥ 2 full frames
    limit = queue_bytes or max(int(rate_bps / 8 * 0.05), 30000)  # default ≈ 50 ms of queue
    sh(["tc", "qdisc", "replace", "dev", ifc, "root", "tbf", "rate", f"{rate_bps:.0f}bit",
        "burst", str(burst), "limit", str(limit)], ns=ns)
    log.debug("tbf %s/%s %.1f Mbit/s burst %d limit %d", ns, ifc, rate_mbit, burst, limit)
