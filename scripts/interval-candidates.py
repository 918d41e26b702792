#!/usr/bin/env python3
"""Coverage of alternatives to the mean's and pooled fraction's interval (findings.stats:
Student's t ∪ bootstrap-t) on the lab's shapes at each group's planned n, and where their
intervals differ from the findings' own on a database's groups. Why: the bootstrap-t
collapses on near-tied runs with a few far ones (resamples without the far runs have a
standard error near zero, so their t is huge; Table 6 Sprint 4 MB min RTT: [0, 52.6]),
and a replacement must keep the coverage (issue 41).

    .venv/bin/python scripts/interval-candidates.py results/lab.duckdb [SIMS]   # coverage
    .venv/bin/python scripts/interval-candidates.py cases results/lab.duckdb      # the groups

Candidates: Student's t ∪ the expanded percentile bootstrap (Hesterberg), and Student's t
∪ a bootstrap-t whose resample standard errors are floored, √(se*² + (h·se)²), at h = 1/√n
and h = 1/n. What it found on the reference (docs/findings.md, "Replicates")."""
from __future__ import annotations

import math
import sys
from multiprocessing import Pool

import duckdb
import numpy as np

from findings.measure import Facts
from findings.stats import LEVEL, est_se, expanded_tail, in_range, seed_of, t_quantile
from papers.coverage import SHAPES, applies, claim_groups, coverage, populations, same_group
from papers.registry import all_claims

SIMS = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] != "cases" else 100
RES = 500


def _parts(st, s, seed):
    x = np.asarray(s[st.roles[0]], dtype=float)
    rng = np.random.default_rng(seed)
    xb = x[rng.integers(0, len(x), size=(RES, len(x)))]
    est, se = est_se(st.kind, x[None, ...])
    est_b, se_b = est_se(st.kind, xb)
    return x, est[0], se[0], est_b, se_b


def _clip(st, x, lo, hi):
    return st.reported(*in_range(st.kind, x, lo, hi))


def cand_expanded(st):
    def m(s, level, seed=[0]):
        seed[0] += 1
        x, est, se, est_b, _ = _parts(st, s, seed[0])
        if not se > 0:
            return _clip(st, x, est, est)
        a = (1 - level) / 2
        half = t_quantile(1 - a, len(x) - 1) * se
        tail = expanded_tail(len(x), level)
        qlo, qhi = np.quantile(est_b[np.isfinite(est_b)], [tail, 1 - tail])
        return _clip(st, x, min(est - half, qlo), max(est + half, qhi))
    return m


def cand_floor(st, h):
    def m(s, level, seed=[0]):
        seed[0] += 1
        x, est, se, est_b, se_b = _parts(st, s, seed[0])
        if not se > 0:
            return _clip(st, x, est, est)
        n = len(x)
        ok = se_b > 0  # as the findings' own: a resample without spread has no t
        se_f = np.sqrt(se_b[ok] ** 2 + (h(n) * se) ** 2)
        t = (est_b[ok] - est) / se_f
        t = t[np.isfinite(t)]
        a = (1 - level) / 2
        lo_t, hi_t = np.quantile(t, [a, 1 - a])
        half = t_quantile(1 - a, n - 1) * se
        return _clip(st, x, min(est - hi_t * se, est - half), max(est - lo_t * se, est + half))
    return m


CANDS = {
    "expanded": cand_expanded,
    "floor 1/sqrt(n)": lambda st: cand_floor(st, lambda n: 1 / math.sqrt(n)),
    "floor 1/n": lambda st: cand_floor(st, lambda n: 1 / n),
}


def job(args):
    p, k = args
    out = []
    for sh in SHAPES:
        if not applies(p, sh):
            continue
        row = {"own": coverage(p, k, sh, SIMS, seed=7)[0]}
        for name, mk in CANDS.items():
            row[name] = coverage(p, k, sh, SIMS, seed=7, method=mk(p.stat))[0]
        out.append((p.claim, p.group, sh, k, p.stat.kind, row))
    return out


def main():
    con = duckdb.connect(sys.argv[1], read_only=True)
    pops = populations(all_claims(), Facts(con))
    con.close()
    plans = {c.id: c.plan for c in all_claims()}
    seen, work = set(), []
    for p in pops:
        if p.stat.kind not in ("mean", "pooled"):
            continue
        k = plans[p.claim].groups.get(p.group)
        if k is None or k > plans[p.claim].budget:
            continue
        key = same_group(p)
        if key is not None and key in seen:
            continue
        seen.add(key)
        work.append((p, k))
    with Pool(2) as pool:
        res = [r for rs in pool.map(job, work) for r in rs]
    names = ["own", *CANDS]
    for kind in ("mean", "pooled"):
        rows = [r for r in res if r[4] == kind]
        if not rows:
            continue
        print(f"== {kind}: {len(rows)} group-shapes")
        for nm in names:
            v = np.array([r[5][nm] for r in rows])
            print(f"  {nm:18s} mean {v.mean():.3f} worst {v.min():.2f} below .85: {(v < 0.85).sum()}")
        for sh in SHAPES:
            rr = [r for r in rows if r[2] == sh]
            if rr:
                print(f"   {sh:15s}", " ".join(f"{nm} {np.mean([r[5][nm] for r in rr]):.3f}" for nm in names))




def cases(db):
    """Every mean/pooled group of ``db``: own interval vs each candidate's; print where they differ a lot."""
    con = duckdb.connect(db, read_only=True)
    gs = claim_groups(all_claims(), Facts(con))
    con.close()
    for cid, _, label, st, roles, band in gs:
        if st.kind not in ("mean", "pooled"):
            continue
        own = st.interval(roles, LEVEL, seed_of(cid, label))
        alt = {nm: mk(st)(roles, LEVEL) for nm, mk in CANDS.items()}
        w = own[1] - own[0]
        if any(abs((a[1] - a[0]) - w) > 0.3 * max(w, 1e-9) for a in alt.values()):
            print(f"{cid} / {label} band {band}: own [{own[0]:.4g}, {own[1]:.4g}] "
                  + " ".join(f"{nm} [{a[0]:.4g}, {a[1]:.4g}]" for nm, a in alt.items()))


if __name__ == "__main__":
    if sys.argv[1] == "cases":
        cases(sys.argv[2])
    else:
        main()
