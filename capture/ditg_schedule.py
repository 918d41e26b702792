"""D-ITG traffic schedules: the packets of one test, drawn once per repetition in Python
and replayed by ITGSend (``-Ft`` inter-departure times, ``-Fs`` payload sizes, ``-z``
their count), so the TCP and MPTCP runs of a repetition are offered the same packets.

Why not ITGSend's own distributions: ITGSend draws its ON/OFF periods, gaps and sizes
while it sends, and its ON periods are wall time spent sending, so the packets it
generates depended on how fast the connection took them (the reference's TCP Maps runs
of one seed generated 2,480 to 6,863 packets).

``PROFILES`` is the one declaration of the three traffic models (the D-ITG study's Fig. 2
descriptions): the drawing below reads it, and so do the run's ``meta.json``
(``result.about``, ``result.schedule_generator``) and capture/README.md (each profile's
``text()`` is quoted there; tests/test_ditg_profiles.py checks it).

The files, as ITGSend 2.8.1 reads them (src/ITGSend/ITGSend.cpp, flowParser and
flowSender): one number per line. IDT file: milliseconds (``strtod``, each > 0); its
first line is the flow's start delay (floored to whole ms; ours is 0.001, i.e. none) and
line k + 1 the gap before packet k + 1; with ``-z N`` the N lines are read once (the
index wraps only after the N-th packet, onto the 0.001-ms first line). Size file: bytes
(``atoi``, 1..65536; ITGSend sends at most 64000 and at least its TCP header of 20 B).
Our schedule is an integer number of microseconds per departure (ITGSend's clock is
``gettimeofday``), so the gaps are exact in the file's three decimals.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

MIN_PAYLOAD = 20      # ITGSend raises a TCP payload below its header (seq, times, size) to this
MAX_PAYLOAD = 64000   # ITGSend's MAX_PAYLOAD_SIZE: a larger size would be cut to it
START_MS = 0.001      # the IDT file's first line: a start delay that floors to 0 ms
IDT_FILE, SIZE_FILE = "ditg-idt.txt", "ditg-sizes.txt"


@dataclass(frozen=True)
class Dist:
    """One distribution of a model: ``constant`` (a), ``uniform`` on [a, b],
    ``uniform-int`` on {a, ..., b}, ``exponential`` of mean a, ``pareto`` of shape a and
    minimum b (mean a·b/(a − 1))."""

    kind: str
    a: float
    b: float | None = None

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.kind == "constant":
            return np.full(n, float(self.a))
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b, n)
        if self.kind == "uniform-int":
            return rng.integers(int(self.a), int(self.b), n, endpoint=True).astype(float)
        if self.kind == "exponential":
            return rng.exponential(self.a, n)
        if self.kind == "pareto":
            return (rng.pareto(self.a, n) + 1.0) * self.b
        raise ValueError(f"unknown distribution {self.kind!r}")

    @property
    def mean(self) -> float:
        if self.kind == "constant":
            return self.a
        if self.kind in ("uniform", "uniform-int"):
            return (self.a + self.b) / 2
        if self.kind == "exponential":
            return self.a
        return self.a * self.b / (self.a - 1)

    def text(self, unit: str) -> str:
        if self.kind == "constant":
            return f"{self.a:g} {unit}"
        if self.kind in ("uniform", "uniform-int"):
            return f"U({self.a:g}, {self.b:g}) {unit}"
        if self.kind == "exponential":
            return f"exponential, mean {self.a:g} {unit}"
        return f"Pareto, shape {self.a:g}, minimum {self.b:g} {unit} (mean {self.mean:g} {unit})"


@dataclass(frozen=True)
class Profile:
    """A traffic model: ON/OFF periods with a constant packet rate while ON (``on_ms``,
    ``off_ms``, ``rate_pps``), or independent gaps (``gap_ms``); payload sizes ``size_b``."""

    about: str
    size_b: Dist
    rate_pps: float | None = None
    on_ms: Dist | None = None
    off_ms: Dist | None = None
    gap_ms: Dist | None = None

    def text(self) -> str:
        """The model in words (meta.json ``about``, capture/README.md)."""
        if self.gap_ms is not None:
            return f"gaps {self.gap_ms.text('ms')}, sizes {self.size_b.text('B')}"
        return (f"ON {self.on_ms.text('ms')} at {self.rate_pps:g} pkt/s, OFF {self.off_ms.text('ms')}, "
                f"sizes {self.size_b.text('B')}")


PROFILES: dict[str, Profile] = {
    # blocks of ~0.5-1.5 MiB: 2000 pkt/s × 1448 B ≈ 2.9 MB/s, so an ON period of
    # 180-545 ms carries 0.5-1.5 MiB; OFF 1-3 s
    "netflix": Profile("ON/OFF blocks of 0.5-1.5 MiB, OFF 1-3 s", size_b=Dist("constant", 1448), rate_pps=2000,
                       on_ms=Dist("uniform", 180, 545), off_ms=Dist("uniform", 1000, 3000)),
    # irregular, relatively large bursts at 1500 pkt/s of 500-1448-B packets
    "maps": Profile("non-periodic large bursts: exponential ON and OFF periods", size_b=Dist("uniform-int", 500, 1448),
                    rate_pps=1500, on_ms=Dist("exponential", 150), off_ms=Dist("exponential", 1200)),
    # sparse ~400-B packets with occasional spikes above twice that size (3 % above 800 B),
    # Poisson arrivals at 8 pkt/s: exponential gaps of mean 125 ms
    "docs": Profile("sparse packets of ~400 B with occasional larger ones, Poisson arrivals at 8 pkt/s",
                    size_b=Dist("pareto", 3.5, 300), gap_ms=Dist("exponential", 125)),
}


def schedule_seed(campaign_seed: int, profile: str, repetition: int) -> int:
    """The schedule's seed: the same for every mode and path configuration of one
    repetition, so TCP and MPTCP are offered the same traffic (the paper: "each test was
    run with both MPTCP and the default Linux TCP")."""
    return int(hashlib.sha256(f"{campaign_seed}|{profile}|{repetition}".encode()).hexdigest()[:16], 16)


def drain_limit_s(duration_s: float) -> int:
    """How long a test may drain after its schedule (capture/workloads.py, D-ITG): four
    times the test plus 20 s. The longest drains measured (standard scale, 2026-11-28):
    Netflix's 48-s test over 40 ms with 4 % loss queues most of its traffic and took 113 s
    to drain over MPTCP (both paths lossy) and more than 116 s over TCP (98 % received by
    then); Maps 7-10 s."""
    return int(math.ceil(4 * duration_s + 20))


@dataclass(frozen=True)
class Schedule:
    profile: str
    duration_s: float
    seed: int
    times_us: np.ndarray  # departure of each packet, µs after the first (strictly increasing)
    sizes: np.ndarray     # payload bytes of each packet

    @property
    def packets(self) -> int:
        return len(self.times_us)

    @property
    def bytes(self) -> int:
        return int(self.sizes.sum())

    def idt_text(self) -> str:
        gaps = np.diff(self.times_us)
        return "".join([f"{START_MS:.3f}\n"] + [f"{g // 1000}.{g % 1000:03d}\n" for g in gaps.tolist()])

    def size_text(self) -> str:
        return "".join(f"{s}\n" for s in self.sizes.tolist())

    def sha256(self) -> str:
        """Of the IDT file's bytes followed by the size file's."""
        return hashlib.sha256((self.idt_text() + self.size_text()).encode()).hexdigest()


def _on_off(p: Profile, rng: np.random.Generator, end_ms: float) -> np.ndarray:
    """Departures (ms) of ON periods at ``rate_pps`` separated by OFF periods, from 0
    until ``end_ms``: an ON period of length L holds ceil(L × rate) packets, one every
    1/rate from its start; the next starts L + OFF after it."""
    out, t = [], 0.0
    while t < end_ms:
        on, off = float(p.on_ms.draw(rng, 1)[0]), float(p.off_ms.draw(rng, 1)[0])
        n = max(1, math.ceil(on * p.rate_pps / 1000))
        out.append(t + np.arange(n) * 1000 / p.rate_pps)
        t += on + off
    times = np.concatenate(out)
    return times[times < end_ms]


def _gaps(p: Profile, rng: np.random.Generator, end_ms: float) -> np.ndarray:
    """Departures (ms) at 0 and then after independent gaps, until ``end_ms``."""
    out, t = [np.zeros(1)], 0.0
    while t < end_ms:
        g = np.cumsum(p.gap_ms.draw(rng, max(16, int(2 * (end_ms - t) / p.gap_ms.mean)))) + t
        out.append(g)
        t = float(g[-1])
    times = np.concatenate(out)
    return times[times < end_ms]


def draw(profile: str, duration_s: float, seed: int) -> Schedule:
    """The packets of a ``duration_s`` test of ``profile``: departures in [0, duration_s)
    and payload sizes, from numpy's default generator (PCG64) seeded with ``seed``."""
    if profile not in PROFILES:
        raise ValueError(f"unknown D-ITG profile {profile!r} (known: {', '.join(PROFILES)})")
    if not duration_s > 0:
        raise ValueError(f"D-ITG duration_s must be > 0, not {duration_s!r}")
    p, rng = PROFILES[profile], np.random.default_rng(seed)
    ms = (_gaps if p.gap_ms is not None else _on_off)(p, rng, duration_s * 1000)
    us = np.rint(ms * 1000).astype(np.int64)
    idx = np.arange(len(us))
    us = np.maximum.accumulate(us - idx) + idx  # strictly increasing: ITGSend refuses a gap of 0
    sizes = np.clip(np.rint(p.size_b.draw(rng, len(us))), MIN_PAYLOAD, MAX_PAYLOAD).astype(np.int64)
    return Schedule(profile, float(duration_s), int(seed), us - us[0], sizes)


def generator(s: Schedule) -> dict:
    """What regenerates ``s``: ``draw(profile, duration_s, seed)`` with these (meta.json)."""
    p = PROFILES[s.profile]
    model = {k: (asdict(v) if isinstance(v, Dist) else v) for k, v in asdict(p).items() if v is not None}
    return {"function": "capture.ditg_schedule.draw", "generator": "numpy.random.default_rng (PCG64)",
            "numpy": np.__version__, "profile": s.profile, "duration_s": s.duration_s, "seed": str(s.seed),
            "seed_of": "int(sha256('<campaign_seed>|<profile>|<repetition>')[:16], 16)",
            "model": model, "text": p.text()}


def write(s: Schedule, run_dir: Path) -> dict:
    """Write the IDT and size files into ``run_dir``; their description for meta.json."""
    (run_dir / IDT_FILE).write_text(s.idt_text())
    (run_dir / SIZE_FILE).write_text(s.size_text())
    return {"schedule_idt_file": IDT_FILE, "schedule_size_file": SIZE_FILE, "schedule_packets": s.packets,
            "schedule_bytes": s.bytes, "schedule_span_s": int(s.times_us[-1]) / 1e6,
            "schedule_sha256": s.sha256(), "schedule_generator": generator(s)}
