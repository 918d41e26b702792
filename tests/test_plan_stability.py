"""The planner's plans hang on the runs, not on its own draws or on unrelated groups
(papers/coverage.py; docs/findings.md: on the re-capture with and without its supplement,
49 of 384 plans changed, 12 between ten runs and undecidable, mostly in groups whose runs
had not changed). Planned on a fixed sample of the reference's distinct groups."""
from __future__ import annotations

import duckdb
import pytest

from findings.measure import Facts
from papers.coverage import BUDGET, PLAN_NS, plan_all, populations, same_group
from papers.registry import all_claims

SAMPLE = 36  # distinct groups planned (every k-th of the reference's): about a minute per plan on two cores
# The share of plans that must not move at all. A group whose coverage is within the
# simulation's own error of 93 % (0.929-0.938 on 2,000 draws, e.g. chen-ofo-sprint-vs-att at
# n = 5) may move to the next n tried; no plan may move further, or across the budget
# (the defect: 12 plans between ten runs and undecidable).
AGREE = 0.85


def _sample(pops):
    seen, distinct = set(), []
    for p in pops:
        key = same_group(p) or (p.claim, p.group)
        if key not in seen:
            seen.add(key)
            distinct.append(p)
    step = max(1, len(distinct) // SAMPLE)
    return distinct[::step][:SAMPLE]


@pytest.fixture(scope="module")
def facts(reference_db):
    con = duckdb.connect(str(reference_db), read_only=True)
    yield Facts(con)
    con.close()


def _same(a: list, b: list) -> float:
    return sum(x == y for x, y in zip(a, b)) / len(a)


def _far(a: list, b: list) -> list[tuple]:
    """Pairs of plans more than one PLAN_NS step apart, or on two sides of the budget."""
    step = {n: i for i, n in enumerate(PLAN_NS)}
    out = []
    for x, y in zip(a, b):
        ox = x is None or x > BUDGET
        oy = y is None or y > BUDGET
        if ox != oy or (x is not None and y is not None and abs(step[x] - step[y]) > 1):
            out.append((x, y))
    return out


def test_plans_do_not_hang_on_the_simulations_seed(facts):
    pops = _sample(populations(all_claims(), facts))
    a, b = plan_all(pops, jobs=2, seed=0), plan_all(pops, jobs=2, seed=1)
    moved = [(p.claim, p.group, x, y) for p, x, y in zip(pops, a, b) if x != y]
    assert len(pops) >= SAMPLE - 2 and any(n is not None for n in a)
    assert _same(a, b) >= AGREE and _far(a, b) == [], moved


def test_plans_do_not_hang_on_another_papers_groups(facts):
    """Planning without D-ITG's claims leaves the other papers' plans where they were (the
    shapes were once pooled over every paper and re-drawn whenever any group changed)."""
    claims = all_claims()
    full = {(p.claim, p.group): p for p in _sample(populations(claims, facts)) if not p.claim.startswith(("ditg", "lab-ditg"))}
    without = {(p.claim, p.group): p for p in populations([c for c in claims if c.paper != "ditg"], facts)}
    keys = [k for k in full if k in without]
    assert len(keys) == len(full) > 20
    a = plan_all([full[k] for k in keys], jobs=2)
    b = plan_all([without[k] for k in keys], jobs=2)
    assert _same(a, b) >= AGREE and _far(a, b) == [], [(k, x, y) for k, x, y in zip(keys, a, b) if x != y]
