"""Coverage of the findings' intervals on run values shaped like the lab's own (issue 41).

``tests/test_interval_coverage.py`` checks each interval method on textbook shapes
(lognormal, gamma, a share of slow runs). The lab's runs are shaped otherwise: identical
runs (a deterministic emulator gives ties), a rare timeout or stalled run far from the
rest, shares pinned near 0 or 100 %. Here the populations come from the reference's own
groups: every compared group of every claim, as its measure returns it from
``data/reference``, gives one population per role:

* its shape is the lab's: the group's runs standardised ((log) value − mean) ÷ sd, pooled
  over the groups that measure the same thing (its *family*, papers/families.py: download
  time, RTT, loss, share, ...; the paper's own groups of that family where they hold
  MIN_POOL values, else all papers'), so a group of five runs stands for a population of
  POP evenly spaced quantiles of those values (log scale where every value is positive:
  times, rates, RTTs; additive where zeros occur: shares, loss);
* its centre and spread are the group's (mean and sd of its (log) values); a group whose
  runs are identical is a population of that one value;
* pooled counts (packets in order ÷ packets) are resampled as the runs are (rows).

The statistic of that population is the truth. Samples of ``n`` runs are drawn from it,
the claim's own interval method is applied (``Stat.interval``), and the share of
intervals holding the truth is the coverage at ``n``. Shapes added to each population
(``SHAPES``), so that a method is not judged only on the shapes the groups happen to have:

* ``lab``: as built above;
* ``ties``: two in five values equal to the median (a deterministic link's identical runs);
* ``rare timeout``: values at the rate the pilot's runs lie more than 3x above their
  group's median (``outlier_rates``: per paper and family; on the reference of 2026-11-30
  chen's download times 0.94 %, deng's throughputs 4.2 %, ditg's latencies 0.66 %, none
  in any RTT family, so there the shape does not apply), each at the pilot's median such
  outlier (5.8x its group's median);
* ``stalled run``: likewise below a third of the median (at 0.17x);
* ``near the bound`` / ``near zero``: for a statistic with a bounded range (a share in %),
  the population shifted until its largest value is the upper bound (98.6, 97.1, ...
  100 %), or its smallest the lower one;
* ``rare events``: for pooled counts (packets out of order ÷ packets), the rarer outcome a
  tenth as frequent (shares near 0, or near 100 % for packets delivered).

``coverage_table`` gives, per statistic kind and shape, the worst and the mean coverage
over the groups of that kind; ``planned_n`` the smallest n at which a group is covered at
``LEVEL_MIN`` on every shape and its expected interval can decide against its band (a
coverage within two standard errors of LEVEL_MIN drawn again on five times the samples:
tests/test_plan_stability.py).

    python -m papers coverage --db results/lab.duckdb [--n 5] [--sims 400] [--candidates]

What it found on the reference (``docs/coverage-candidates-20261129.txt``, n = 5, 100
samples per group and shape, the outlier shapes then at a fixed one in 21): on the lab's
own shape every kind holds about 93 % or more but a few groups; with ties the means hold
(0.86 worst, 0.97 mean); a rare timeout or a stalled run breaks every interval of a mean
(worst 0.00-0.15, mean 0.40-0.70), and no candidate does better: Student's t, Cox's
lognormal interval and Fieller's ratio cover as little or less than the findings' own
bootstrap-t, because at n = 5 four samples in five hold no outlier while the population's
mean does. The medians' intervals are the order statistics' (93.75 % at n = 5). So the
methods stay; what changes is n (``planned_n``), or the claim says it is undecidable at
the lab's budget. At one in 21 every mean would need about 50 runs (1 - (20/21)^n >= 0.9),
whatever the lab's runs do; so the plan takes each paper's rate from its own runs
(written here before any plan was computed).
"""
from __future__ import annotations

import argparse
import csv
import math
import multiprocessing
import sys
from dataclasses import dataclass
from typing import Callable

import duckdb
import numpy as np

from findings import plans
from findings.claim import Claim
from findings.measure import Facts
from findings.stats import LEVEL, MIN_RUNS, Stat, t_quantile

from . import PAPERS
from .families import family
from .registry import all_claims

LEVEL_MIN = 0.93  # the coverage every method must keep (issue 41)
SIMS = 400
RESAMPLES = 500  # per interval: enough for the bootstrap's tails at this level
MIN_POOL = 100  # standardised run values a paper's own shape of a family needs (else: the family's over all papers)
POP = 2100  # values per smooth population: the rarest outlier rate (about 1 in 230) at least 9 times


def _ties(v: np.ndarray) -> np.ndarray:
    if v.ndim != 1 or len(v) < 5:
        return v
    out = np.array(v, dtype=float, copy=True)
    med = np.median(out)
    out[np.argsort(np.abs(out - med))[: 2 * len(out) // 5]] = med
    return out


OUTLIER_FACTOR = 3.0  # a run more than 3x above its group's median, or below a third of it


@dataclass(frozen=True)
class Outliers:
    """How often a paper's runs lie far from their group's median, and how far (module doc:
    the lab's own rates, measured on the pilot)."""

    high_rate: float  # share of values above OUTLIER_FACTOR x their group's median (a timeout)
    low_rate: float  # share below 1 / OUTLIER_FACTOR of it (a stalled run)
    high_mag: float  # an outlier's value, in its group's medians (the pilot's median one)
    low_mag: float
    values: int  # the pilot's distinct positive run values it was measured on


def _with(v: np.ndarray, rate: float, value: float) -> np.ndarray:
    """The population with one value in round(1 / rate) replaced by ``value``."""
    if v.ndim != 1 or not rate > 0:
        return v
    out = np.array(v, dtype=float, copy=True)
    out[:: max(2, round(1 / rate))] = value
    return out


SHAPES: dict[str, Callable[[np.ndarray, tuple[float, float], Outliers], np.ndarray]] = {
    "lab": lambda v, b, o: v,
    "ties": lambda v, b, o: _ties(v),
    "rare timeout": lambda v, b, o: _with(v, o.high_rate, o.high_mag * float(np.median(v))),
    "stalled run": lambda v, b, o: _with(v, o.low_rate, o.low_mag * float(np.median(v))),
    "near the bound": lambda v, b, o: v + (b[1] - v.max()) if v.ndim == 1 and math.isfinite(b[1]) else v,
    "near zero": lambda v, b, o: v - (v.min() - b[0]) if v.ndim == 1 and math.isfinite(b[0]) else v,
    "rare events": lambda v, b, o: _rarer(v),
}


def _rarer(v: np.ndarray) -> np.ndarray:
    """Pooled counts (num, den per run) with the rarer outcome a tenth as frequent: the
    counted event (a share near 0: packets out of order) or its complement (near 100 %:
    packets delivered)."""
    if v.ndim != 2:
        return v
    num, den = v[:, 0], v[:, 1]
    if num.sum() <= (den - num).sum():
        return np.column_stack([np.floor(num / 10), den])
    return np.column_stack([den - np.floor((den - num) / 10), den])


@dataclass(frozen=True)
class Population:
    claim: str
    group: str
    stat: Stat
    roles: dict[str, np.ndarray]  # role -> population values (rows for pooled counts)
    runs: dict[str, np.ndarray]  # role -> the group's own runs
    band: tuple[float, float] | None  # the paper's band this group is judged against (None: direction only)
    outliers: Outliers  # its paper's rates of far-out runs in its family (the rare-timeout and stalled-run shapes)
    family: str = ""  # what its runs measure (papers.families): whose shapes and rates it takes


def _standardised(v: np.ndarray, log: bool) -> np.ndarray | None:
    y = np.log(v) if log else v
    sd = y.std(ddof=1)
    return (y - y.mean()) / sd if len(y) >= 3 and sd > 0 else None


def _smooth(v: np.ndarray, z: np.ndarray, log: bool, bounds: tuple[float, float]) -> np.ndarray:
    """The group's centre and spread on the lab's pooled shape ``z``."""
    y = np.log(v) if log else v
    sd = y.std(ddof=1)
    if not sd > 0:
        return np.full(POP, float(v[0]))
    vals = y.mean() + sd * z
    vals = np.exp(vals) if log else vals
    lo, hi = bounds
    if (v >= 0).all():
        lo = max(lo, 0.0)
    return np.clip(vals, lo, hi)


def _bounds(st: Stat) -> tuple[float, float]:
    """The range of one run's value: a share's (a statistic bounded to [0, 100]) or none."""
    return (0.0, 100.0) if st.kind == "mean" and st.bounds == (0.0, 100.0) else (-math.inf, math.inf)


def claim_groups(claims: list[Claim], facts: Facts) -> list[tuple]:
    """Every computable claim's groups with at least MIN_RUNS runs per role, as
    (claim id, family, group label, statistic, run values per role, band or None)."""
    out = []
    for c in claims:
        if c.measure is None or c.not_reproducible:
            continue
        try:
            m = c.measure(facts)
        except Exception:  # a claim that cannot compute here has no population
            continue
        if m.statistic is None or m.statistic.kind == "design":
            continue
        for g in m.groups:
            roles = {k: np.asarray(v, dtype=float) for k, v in g.samples.items()}
            if roles and min(len(v) for v in roles.values()) >= MIN_RUNS:
                b = g.number.band if g.number is not None else c.band
                out.append((c.id, (c.paper, family(c)), g.label, m.statistic, roles,
                            (b.low, b.high) if b is not None else None))
    return out


def outlier_rates(groups: list[tuple]) -> dict[tuple[str, str], Outliers]:
    """Per paper and family (what the runs measure, papers.families: a timeout lengthens a
    64 KB download, not a mean RTT; an outage transfer's values are far out by design),
    the share of its groups' positive run values more than OUTLIER_FACTOR
    from their group's median, above and below (each distinct set of values once: claims
    share groups). A family with none has none: its runs (2,052 RTT values for chen) give no
    ground for the shape (the rule of three's 3 / N was tried: at 4.7x, one value in 400
    moves a tight group's mean by many of its standard deviations, so no n up to 100
    covered any tight mean, whatever the runs did). The magnitudes are the lab's: the
    median outlier of all papers, in its group's medians (defaults: 5x and 0.2x when the
    pilot has none)."""
    seen: set[tuple[tuple[str, str], bytes]] = set()
    n: dict[tuple[str, str], int] = {}
    high: dict[tuple[str, str], int] = {}
    low: dict[tuple[str, str], int] = {}
    his: list[float] = []
    los: list[float] = []
    for _, key, _, _, roles, _ in groups:
        for v in roles.values():
            if v.ndim != 1 or not (v > 0).all() or (key, v.tobytes()) in seen:
                continue
            seen.add((key, v.tobytes()))
            med = float(np.median(v))
            n[key] = n.get(key, 0) + len(v)
            hi, lo = v[v > OUTLIER_FACTOR * med], v[v < med / OUTLIER_FACTOR]
            high[key] = high.get(key, 0) + len(hi)
            low[key] = low.get(key, 0) + len(lo)
            his += list(hi / med)
            los += list(lo / med)
    mh = float(np.median(his)) if his else 5.0
    ml = float(np.median(los)) if los else 0.2
    return {p: Outliers(high[p] / n[p], low[p] / n[p], mh, ml, n[p]) for p in n}


def _quantiles(zs: list[np.ndarray]) -> np.ndarray:
    """POP evenly spaced quantiles of the pooled standardised values: a shape that moves
    by little when a group is added (a random draw from the pool, as before, re-drew every
    population whenever any group changed: the planner's instability, docs/findings.md)."""
    return np.quantile(np.concatenate(zs), (np.arange(POP) + 0.5) / POP)


def populations(claims: list[Claim], facts: Facts) -> list[Population]:
    """A population per role of every compared group of every computed claim with at
    least MIN_RUNS runs per role (module doc). ``design`` statistics are exact (their
    interval is the value) and left out. Shapes are pooled per family (what the runs
    measure, whatever statistic a claim takes of them): the paper's own where its groups
    of the family hold MIN_POOL values, else the family's over all papers; outlier rates per
    paper and family."""
    groups = claim_groups(claims, facts)
    rates = outlier_rates(groups)
    pooled: dict[tuple, list[np.ndarray]] = {}
    seen: set[bytes] = set()
    for _, (paper, fam), _, _, roles, _ in groups:
        for v in roles.values():
            if v.ndim == 1 and v.tobytes() not in seen:  # each distinct set of runs once: claims share groups
                seen.add(v.tobytes())
                log = bool((v > 0).all())
                z = _standardised(v, log)
                if z is not None:
                    pooled.setdefault((fam, log), []).append(z)
                    pooled.setdefault((paper, fam, log), []).append(z)
    shape = {k: _quantiles(zs) for k, zs in pooled.items()}
    size = {k: sum(len(z) for z in zs) for k, zs in pooled.items()}
    none = Outliers(0.0, 0.0, 1.0, 1.0, 0)
    out = []
    for cid, key, label, st, roles, band in groups:
        pop = {}
        for k, v in roles.items():
            if v.ndim != 1:
                pop[k] = v
                continue
            log = bool((v > 0).all())
            own = (*key, log)
            z = shape.get(own if size.get(own, 0) >= MIN_POOL else (key[1], log))
            pop[k] = _smooth(v, z, log, _bounds(st)) if z is not None else v
        out.append(Population(cid, label, st, pop, roles, band, rates.get(key, none), key[1]))
    return out


def _shaped(p: Population, shape: str) -> dict[str, np.ndarray]:
    return {k: SHAPES[shape](v, _bounds(p.stat), p.outliers) for k, v in p.roles.items()}


def applies(p: Population, shape: str) -> bool:
    """Whether ``shape`` changes ``p`` (pooled counts keep the runs' own shape; only a
    bounded statistic has a bound to be near)."""
    if shape == "lab":
        return True
    pooled = all(v.ndim != 1 for v in p.roles.values())
    if shape == "rare events" or pooled:
        return shape == "rare events" and pooled
    if shape == "near the bound":
        return math.isfinite(_bounds(p.stat)[1])
    if shape == "near zero":
        return math.isfinite(_bounds(p.stat)[0])
    if shape == "rare timeout":
        return p.outliers.high_rate > 0
    if shape == "stalled run":
        return p.outliers.low_rate > 0
    return True


def coverage(p: Population, n: int, shape: str = "lab", sims: int = SIMS, seed: int = 0,
             level: float = LEVEL, method: Callable[[dict, float], tuple[float, float]] | None = None,
             need: float | None = None) -> tuple[float, float]:
    """(coverage, median interval width) of ``p``'s statistic at ``n`` runs per role, by
    the claim's own interval method or ``method`` (a candidate: samples, level -> interval).
    With ``need``, it stops once the coverage cannot reach it (the misses already exceed
    (1 - need) x sims) and returns a coverage below ``need``: a plan needs only yes or no."""
    pop = _shaped(p, shape)
    with np.errstate(all="ignore"):
        truth = p.stat.value(pop)
    if not math.isfinite(truth):
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    hits, widths = 0, []
    allowed = math.inf if need is None else (1 - need) * sims
    for i in range(sims):
        s = {k: v[rng.integers(0, len(v), size=n)] for k, v in pop.items()}
        with np.errstate(all="ignore"):
            lo, hi = p.stat.interval(s, level, seed + i, RESAMPLES) if method is None else method(s, level)
        if math.isfinite(lo) and math.isfinite(hi):  # no interval (a ratio with a zero mean): a miss
            hits += lo <= truth <= hi
            widths.append(hi - lo)
        if i + 1 - hits > allowed:
            return hits / sims, math.nan
    return hits / sims, float(np.median(widths)) if widths else math.nan


def coverage_table(pops: list[Population], n: int, sims: int = SIMS) -> list[dict]:
    """Per statistic kind and shape: groups, worst and mean coverage, and the worst group."""
    rows = []
    kinds = sorted({p.stat.kind if p.stat.kind != "boot" else f"boot: {p.stat.text}" for p in pops})
    for kind in kinds:
        mine = [p for p in pops if (p.stat.kind if p.stat.kind != "boot" else f"boot: {p.stat.text}") == kind]
        for shape in SHAPES:
            cov = [(coverage(p, n, shape, sims)[0], p) for p in mine if applies(p, shape)]
            cov = [(c, p) for c, p in cov if math.isfinite(c)]
            if not cov:
                continue
            worst = min(cov, key=lambda cp: cp[0])
            rows.append({"kind": kind, "shape": shape, "groups": len(cov), "n": n,
                         "worst": round(worst[0], 3), "mean": round(float(np.mean([c for c, _ in cov])), 3),
                         "worst_group": f"{worst[1].claim} / {worst[1].group}"})
    return rows


PLAN_NS = (5, 8, 10, 15, 20, 30, 50, 100)  # the n planned_n tries
# runs per group. Issue 41 asks four hours for the standard scale; by the duration model
# (capture/estimate.py) after scripts/fit-scale.py a budget of 20 takes 7.1 h and decides
# 21 independent rows on the reference, 10 takes 4.9 h (19), 8 takes 4.2 h (17): kept at 20,
# the verdicts before the hours (issue 40 asks 20 such rows); docs/findings.md, Capture time
BUDGET = 20


def decides(p: Population, width: float) -> bool:
    """Whether an interval of ``width`` can decide against ``p``'s band: narrower than a
    two-sided band; for a one-sided threshold, half of it narrower than the distance of
    the group's value (the pilot's) from the threshold."""
    if p.band is None:
        return True  # direction only: coverage is what counts
    if not math.isfinite(width):
        return False
    lo, hi = p.band
    if math.isfinite(lo) and math.isfinite(hi):
        return width < hi - lo or width == 0  # an exact check (a band of width 0) needs an exact value
    edge = lo if math.isfinite(lo) else hi
    with np.errstate(all="ignore"):
        value = p.stat.value(p.runs)
    return math.isfinite(value) and width / 2 < abs(value - edge)


def _width_at(n: int, n0: int, w0: float) -> float:
    """An interval's expected width at ``n`` from its width ``w0`` at ``n0``: t(n-1)/sqrt(n)."""
    q = 1 - (1 - LEVEL) / 2
    return w0 * (t_quantile(q, n - 1) / math.sqrt(n)) / (t_quantile(q, n0 - 1) / math.sqrt(n0))


MORE_SIMS = 5  # a coverage within two of its standard errors of LEVEL_MIN is drawn again this many times as often


def _holds(p: Population, n: int, shape: str, sims: int, seed: int, first: float | None = None) -> bool:
    """Whether ``p`` is covered at LEVEL_MIN at ``n`` on ``shape``: from ``sims`` draws
    (``first``: their coverage, already drawn) where it is clearly above or below (two
    standard errors of a coverage from ``sims`` draws: about ± 2.6 points at 400), else
    from MORE_SIMS times as many. Why: a coverage near LEVEL_MIN passed or failed with the
    draws, so plans on nearly the same data flipped between 10 runs and undecidable."""
    edge = 2 * math.sqrt(LEVEL_MIN * (1 - LEVEL_MIN) / sims)
    cov = first if first is not None else coverage(p, n, shape, sims, seed, need=LEVEL_MIN - edge)[0]
    if abs(cov - LEVEL_MIN) >= edge:
        return cov >= LEVEL_MIN
    return coverage(p, n, shape, MORE_SIMS * sims, seed, need=LEVEL_MIN)[0] >= LEVEL_MIN


def planned_n(p: Population, budget: int = PLAN_NS[-1], sims: int = SIMS, seed: int = 0) -> int | None:
    """The smallest n of PLAN_NS (up to ``budget``) at which ``p``'s expected interval can
    decide (``decides``: the lab shape's median width) and it is covered at LEVEL_MIN on
    every shape that applies (``_holds``); None: not within the budget (undecidable here).
    An n whose width, scaled from the smallest n's as t(n-1)/sqrt(n), is more than half as
    wide again as deciding allows is skipped unsimulated (it would not decide)."""
    first: tuple[int, float] | None = None
    for n in (k for k in PLAN_NS if k <= budget):
        if first is not None and not decides(p, _width_at(n, *first) / 1.5):
            continue
        cov, width = coverage(p, n, "lab", sims, seed)
        if first is None and math.isfinite(width) and width > 0:
            first = (n, width)
        if not decides(p, width) or not _holds(p, n, "lab", sims, seed, cov):
            continue
        if all(_holds(p, n, sh, sims, seed) for sh in SHAPES if sh != "lab" and applies(p, sh)):
            return n
    return None


def shortfalls(claims: list[Claim], facts: Facts) -> list[str]:
    """The groups measured here with fewer runs than their claim's plan asks (within its
    budget), and the planned groups this database has no runs for: on a synthetic database
    of a campaign's standard scale (``papers.synthetic``, each run as often as the campaign
    runs it), what a capture would leave undecided."""
    out = []
    for c in claims:
        if c.plan is None or c.measure is None or c.not_reproducible:
            continue
        try:
            groups = {g.label: g for g in c.measure(facts).groups}
        except Exception as e:  # a claim that cannot compute here has no groups to count
            groups, why = {}, f" ({type(e).__name__})"
        else:
            why = ""
        for label, k in c.plan.groups.items():
            if k is None or k > c.plan.budget:
                continue
            g = groups.get(label)
            n = min((len(v) for v in g.samples.values()), default=0) if g is not None else 0
            if n < k:
                out.append(f"{c.id} / {label}: {n} runs, planned {k}{why}")
    return out


_POPS: list[Population] = []  # the populations a forked worker plans (their Stats hold lambdas: not picklable)


def _plan_one(i_sims_seed: tuple[int, int, int]) -> int | None:
    i, sims, seed = i_sims_seed
    return planned_n(_POPS[i], sims=sims, seed=seed)


def same_group(p: Population) -> tuple | None:
    """What makes two claims' populations one (claims share groups: the same statistic,
    runs, band and outlier rates); None for a ``boot`` statistic, whose function is each
    claim's own."""
    if p.stat.kind == "boot":
        return None
    return (p.stat.kind, p.stat.text, p.stat.scale, p.stat.shift, p.stat.bounds, p.band,
            tuple((k, v.tobytes()) for k, v in sorted(p.runs.items())), p.outliers)


def plan_all(pops: list[Population], sims: int = SIMS, jobs: int = 1, seed: int = 0) -> list[int | None]:
    """``planned_n`` of every population (up to the largest PLAN_NS), on ``jobs`` forked
    processes, each distinct group once (claims share groups: same statistic, runs and band)."""
    global _POPS
    key = [same_group(p) or i for i, p in enumerate(pops)]
    first = {k: i for i, k in reversed(list(enumerate(key)))}
    todo = sorted(set(first.values()))
    _POPS = pops
    done: dict[int, int | None] = {}
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(max(1, jobs)) as pool:
        for k, (i, n) in enumerate(zip(todo, pool.imap(_plan_one, [(i, sims, seed) for i in todo]))):
            done[i] = n
            print(f"\rplanned {k + 1} of {len(todo)} distinct groups", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return [done[first[k]] for k in key]


def _write_plans(pops: list[Population], a: argparse.Namespace) -> None:
    ns = plan_all(pops, a.sims, a.jobs, a.seed)
    rows = [{"claim": p.claim, "group": p.group, "kind": p.stat.kind, "text": p.stat.text, "family": p.family,
             "runs": min(len(v) for v in p.runs.values()),
             "band": "" if p.band is None else f"[{p.band[0]:g}, {p.band[1]:g}]",
             "outliers": f"{p.outliers.high_rate:.4f} / {p.outliers.low_rate:.4f}",
             "planned_n": "" if k is None else k} for p, k in zip(pops, ns)]
    if a.planned:
        with open(a.planned, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["claim"])
            w.writeheader()
            w.writerows(rows)
    over = sum(1 for k in ns if k is None or k > a.budget)
    print(f"planned n of {len(rows)} groups; {over} not within {a.budget} runs")
    if a.plan:
        paper_of = {c.id: c.paper for c in all_claims()}
        by_paper: dict[str, dict[str, dict[str, int | None]]] = {}
        for r in rows:
            by_paper.setdefault(paper_of[r["claim"]], {}).setdefault(r["claim"], {})[r["group"]] = (
                None if r["planned_n"] == "" else int(r["planned_n"]))
        for paper, ps in by_paper.items():
            budget = min(a.budget, PAPERS[paper].max_n or a.budget)  # Paper.max_n: fewer samples than runs
            print(f"wrote {plans.write(PAPERS[paper].folder, ps, budget, a.plan)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m papers coverage", description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="a lab database (results/lab.duckdb, or one loaded from data/reference)")
    ap.add_argument("--n", type=int, default=MIN_RUNS, help="runs per role drawn (default: %(default)s)")
    ap.add_argument("--sims", type=int, default=SIMS, help="samples drawn per group and shape (default: %(default)s)")
    ap.add_argument("--candidates", action="store_true",
                    help="also the candidate methods per kind and shape (papers/coverage.py: candidates)")
    ap.add_argument("--planned", metavar="CSV", help="write each group's planned n (planned_n) to CSV")
    ap.add_argument("--plan", metavar="PILOT",
                    help="write papers/<paper>/planned_n.yaml (findings.plans) from this database, naming it PILOT "
                         "(e.g. 'data/reference at <commit>')")
    ap.add_argument("--budget", type=int, default=BUDGET, help="most runs per group a capture may give a claim; a "
                    "group needing more is undecidable here (default: %(default)s)")
    ap.add_argument("--jobs", type=int, default=1, help="processes for --plan (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=0, help="the simulation's seed for --plan/--planned (the plans do not "
                    "hang on it: tests/test_plan_stability.py; default: %(default)s)")
    ap.add_argument("--check-plans", action="store_true",
                    help="list the groups of --db with fewer runs than planned (exit 1 if any): on a synthetic "
                         "database of the standard scale (python -m papers.synthetic OUT.duckdb chen,cs244,deng,ditg,ferlin "
                         "campaign), whether a "
                         "capture at that scale runs every plan")
    a = ap.parse_args(argv)
    try:
        con = duckdb.connect(a.db, read_only=True)
        facts = Facts(con)
    except (duckdb.Error, OSError) as e:
        print(f"error: {a.db}: {str(e).splitlines()[0]}", file=sys.stderr)
        return 2
    if a.check_plans:
        short = shortfalls(all_claims(), facts)
        print("\n".join(short) or f"{a.db}: every planned group has its runs")
        return 1 if short else 0
    if not (a.planned or a.plan):
        rows = coverage_table(populations(all_claims(), facts), a.n, a.sims)
        print(f"coverage at the nominal {LEVEL:.0%}, n = {a.n} runs per role, {a.sims} samples per group and shape")
        print(f"{'kind':34s} {'shape':13s} {'groups':>6s} {'worst':>6s} {'mean':>6s}  worst group")
        for r in rows:
            flag = "" if r["worst"] >= LEVEL_MIN else "  < %.0f %%" % (100 * LEVEL_MIN)
            print(f"{r['kind'][:34]:34s} {r['shape']:13s} {r['groups']:6d} {r['worst']:6.3f} {r['mean']:6.3f}  "
                  f"{r['worst_group'][:70]}{flag}")
    else:
        _write_plans(populations(all_claims(), facts), a)
    if a.candidates:
        pops = populations(all_claims(), facts)
        print(f"\ncandidate methods, n = {a.n}: worst and mean coverage, share of groups at >= {LEVEL_MIN:.0%}")
        for r in candidates_table(pops, a.n, a.sims):
            print(f"{r['kind'][:34]:34s} {r['shape']:13s} {r['method']:17s} {r['groups']:6d} {r['worst']:6.3f} "
                  f"{r['mean']:6.3f} {r['share_ok']:6.3f}")
    return 0


# --------------------------------------------------------------- candidate methods
# Alternatives to the findings' own interval per statistic kind, compared on the same
# populations (``candidates_table``): the method a kind keeps is the one that holds
# LEVEL_MIN on every shape at the n the claims use.

def _t(q: float, df: float) -> float:
    return t_quantile(q, df)


def student_mean(s: dict, role: str, level: float) -> tuple[float, float]:
    x = s[role]
    half = _t(1 - (1 - level) / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
    return float(x.mean() - half), float(x.mean() + half)


def cox_mean(s: dict, role: str, level: float) -> tuple[float, float]:
    """Cox's interval for the mean of lognormal values: exp(ȳ + s²/2 ± t·√(s²/n + s⁴/(2(n−1))))."""
    x = s[role]
    if (x <= 0).any():
        return student_mean(s, role, level)
    y, n = np.log(x), len(x)
    v = y.var(ddof=1)
    half = _t(1 - (1 - level) / 2, n - 1) * math.sqrt(v / n + v * v / (2 * (n - 1)))
    c = y.mean() + v / 2
    return float(math.exp(c - half)), float(math.exp(c + half))


def order_median(s: dict, role: str, level: float) -> tuple[float, float]:
    """The distribution-free interval [x(j), x(n+1−j)] with the largest j whose binomial
    coverage is at least ``level`` (at n = 5: the range, 93.75 %)."""
    x = np.sort(s[role])
    n = len(x)
    cdf = np.cumsum([math.comb(n, k) for k in range(n + 1)]) / 2 ** n
    j = 1
    while j + 1 <= n // 2 and 1 - 2 * cdf[j] >= level:  # P(x(j+1) <= m <= x(n-j)) = 1 - 2·P(B <= j)
        j += 1
    return float(x[j - 1]), float(x[n - j])


def welch_log_ratio(s: dict, a: str, b: str, level: float) -> tuple[float, float]:
    """Welch's t on log values: an interval for the ratio of geometric means."""
    x, y = s[a], s[b]
    if (x <= 0).any() or (y <= 0).any():
        return math.nan, math.nan
    lx, ly = np.log(x), np.log(y)
    va, vb = lx.var(ddof=1) / len(lx), ly.var(ddof=1) / len(ly)
    se = math.sqrt(va + vb)
    df = se ** 4 / ((va ** 2 / (len(lx) - 1) if va else 0) + (vb ** 2 / (len(ly) - 1) if vb else 0)) if se > 0 else 1
    half = _t(1 - (1 - level) / 2, df) * se
    d = lx.mean() - ly.mean()
    return float(math.exp(d - half)), float(math.exp(d + half))


def fieller_ratio(s: dict, a: str, b: str, level: float) -> tuple[float, float]:
    """Fieller's interval for mean(a) ÷ mean(b) (independent roles, Welch-Satterthwaite
    degrees of freedom): the ratios ρ with (m_a − ρ m_b)² ≤ t² (v_a + ρ² v_b); unbounded
    (nan) when the denominator's mean is not clear of zero at this level."""
    x, y = s[a], s[b]
    ma, mb = float(x.mean()), float(y.mean())
    va, vb = float(x.var(ddof=1)) / len(x), float(y.var(ddof=1)) / len(y)
    se2 = va + vb
    df = se2 ** 2 / ((va ** 2 / (len(x) - 1) if va else 0) + (vb ** 2 / (len(y) - 1) if vb else 0)) if se2 > 0 else 1e9
    t2 = _t(1 - (1 - level) / 2, df) ** 2
    qa = mb * mb - t2 * vb
    if qa <= 0:
        return math.nan, math.nan
    disc = (ma * mb) ** 2 - qa * (ma * ma - t2 * va)
    if disc < 0:
        return math.nan, math.nan
    root = math.sqrt(disc)
    return (ma * mb - root) / qa, (ma * mb + root) / qa


def _in_units(st: Stat, method: Callable[[dict, float], tuple[float, float]]):
    """A candidate's raw interval in the statistic's units (a ratio's scale and shift:
    an increase or a reduction in %), within its range."""
    def m(s: dict, level: float) -> tuple[float, float]:
        lo, hi = sorted(st.scale * (v + st.shift) for v in method(s, level))
        return max(lo, st.bounds[0]), min(hi, st.bounds[1])
    return m


def candidates(p: Population) -> dict[str, Callable[[dict, float], tuple[float, float]]]:
    """The alternative methods that apply to ``p``'s statistic (beside its own)."""
    st = p.stat
    r = st.roles
    if st.kind == "mean":
        return {"student t": lambda s, lv: student_mean(s, r[0], lv), "cox (lognormal)": lambda s, lv: cox_mean(s, r[0], lv)}
    if st.kind == "boot" and st.text == "median":
        return {"order statistics": lambda s, lv: order_median(s, r[0], lv)}
    if st.kind == "mean_ratio":
        return {"fieller": _in_units(st, lambda s, lv: fieller_ratio(s, r[0], r[1], lv))}
    return {}


def candidates_table(pops: list[Population], n: int, sims: int = SIMS) -> list[dict]:
    """Per statistic kind, shape and method (the findings' own, then each candidate that
    applies): groups, worst and mean coverage at ``n``, and the median width relative to
    the own method's (a candidate that covers by being wider says so)."""
    acc: dict[tuple[str, str, str], list[float]] = {}
    for p in pops:
        kind = p.stat.kind if p.stat.kind != "boot" else f"boot: {p.stat.text}"
        for shape in [sh for sh in SHAPES if applies(p, sh)]:
            own, _ = coverage(p, n, shape, sims)
            if not math.isfinite(own):
                continue
            acc.setdefault((kind, shape, "own"), []).append(own)
            for name, method in candidates(p).items():
                c, _ = coverage(p, n, shape, sims, method=method)
                if math.isfinite(c):
                    acc.setdefault((kind, shape, name), []).append(c)
    return [{"kind": k, "shape": sh, "method": m, "groups": len(v), "n": n, "worst": round(min(v), 3),
             "mean": round(float(np.mean(v)), 3), "share_ok": round(float(np.mean([c >= LEVEL_MIN for c in v])), 3)}
            for (k, sh, m), v in sorted(acc.items())]
