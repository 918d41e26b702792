"""This paper's synthetic test grid: every run of its campaign at the standard scale, with
values from the run's configured links (papers.synthetic), ``reps`` repetitions each, and
a model of D-ITG's per-packet latency (one-way delay of P1, loss raising it, part of
MPTCP's traffic waiting on P2's delay)."""
from pathlib import Path


def latency_ms(spec, links: dict) -> float:
    p1 = links["wifi"]
    base = p1["rtt_ms"] / 2 * (1 + 30 * p1["loss"]) * (1 + 10 / p1["rate_mbit"])
    if spec.mptcp and not spec.workload.endswith("docs"):
        base = base * 0.55 + 0.4 * links["lte"]["rtt_ms"] / 2
    return base


def runs(builder, reps: int | None) -> None:
    builder.campaign(Path(__file__).parent, reps, latency_ms=latency_ms)
