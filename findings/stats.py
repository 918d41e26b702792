"""Our value with a 95 % bootstrap confidence interval over runs.

The unit of resampling is the run (or the pair of runs a paper compares): each compared
group of runs is resampled with replacement on its own (a stratified bootstrap), the
paper's statistic is recomputed on every resample, and the interval is the 2.5th and
97.5th percentile of those values (percentile bootstrap). Seeded per claim and group,
so the same database gives the same table.

Statistics are written over arrays whose first axis is the resample and second axis
the runs (``np.median(a, axis=1)``), so one call evaluates every resample at once.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

RESAMPLES = 4000  # ≥ 2000 (issue 11)
LEVEL = 0.95
MIN_RUNS = 3  # fewer runs in a compared group: no verdict ("no data: too few runs")

Samples = dict[str, np.ndarray]
Statistic = Callable[[Samples], np.ndarray]


def median(a: np.ndarray) -> np.ndarray:
    return np.median(a, axis=1)


def mean(a: np.ndarray) -> np.ndarray:
    return np.mean(a, axis=1)


def pooled(a: np.ndarray) -> np.ndarray:
    """Σ numerator ÷ Σ denominator over runs (columns 0 and 1), e.g. packets in order ÷
    packets: every packet of every run counts once, as in a CCDF over all packets."""
    den = a[..., 1].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, a[..., 0].sum(axis=1) / den, np.nan)


def seed_of(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:12], 16)


@dataclass(frozen=True)
class Estimate:
    value: float
    lo: float
    hi: float
    n: int  # runs in the smallest compared group


def bootstrap(samples: Samples, statistic: Statistic, seed: int, resamples: int = RESAMPLES,
              level: float = LEVEL) -> Estimate:
    """The statistic on the runs as they are, and its percentile bootstrap interval."""
    arrays = {k: np.asarray(v, dtype=float) for k, v in samples.items()}
    n = min(len(v) for v in arrays.values())
    with np.errstate(divide="ignore", invalid="ignore"):
        point = float(np.asarray(statistic({k: v[None, ...] for k, v in arrays.items()}))[0])
        rng = np.random.default_rng(seed)
        res = {k: v[rng.integers(0, len(v), size=(resamples, len(v)))] for k, v in arrays.items()}
        vals = np.asarray(statistic(res), dtype=float)
    vals = vals[np.isfinite(vals)]
    if not np.isfinite(point) or vals.size < resamples // 2:
        return Estimate(point, float("nan"), float("nan"), n)
    a = (1 - level) / 2
    lo, hi = np.quantile(vals, [a, 1 - a])
    return Estimate(point, float(lo), float(hi), n)
