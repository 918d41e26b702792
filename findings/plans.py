"""The runs each claim needs, planned before a capture (issue 41): per compared group,
the smallest n at which the claim's interval method covers at least 93 % on run values
shaped like the pilot's (``papers.coverage.planned_n``, above this layer) and its expected interval can
decide against the paper's band. Written by ``python -m papers coverage --plan`` into
``papers/<paper>/planned_n.yaml`` from a pilot (the committed reference), read by the
registry into each claim (``Claim.plan``), so that a verdict that
does not decide says whether more runs would and how many — fixed before the next
capture, never after seeing its verdict. A group measured with fewer runs than its plan,
or planned beyond the budget, decides nothing (``Plan.short_of``; findings.evaluate).

    pilot: data/reference (the reference's commit)
    budget: 20
    claims:
      chen-ofo-att-4mb: {n: 8, groups: {att, 4 MB: 8}}
      chen-olia-vs-coupled: {n: null, groups: {...: null}}   # beyond 100 runs: undecidable here
      deng-cc-1mb-34: {n: 50, groups: {1 MB: 50}}            # beyond the budget (20): undecidable here
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

FILE = "planned_n.yaml"


@dataclass(frozen=True)
class Plan:
    n: int | None  # the largest of its groups' planned n; None: some group beyond the largest n tried
    groups: dict[str, int | None]
    budget: int  # the most runs per group a capture gives a claim: a plan beyond it is undecidable here
    pilot: str

    @property
    def undecidable(self) -> bool:
        return self.n is None or self.n > self.budget

    def short_of(self, group: str, runs: int) -> bool:
        """Whether ``group`` was measured with fewer runs than planned (or is undecidable
        here): its interval's coverage was not checked at that n, so it decides nothing."""
        k = self.groups.get(group, self.n)
        return k is None or k > self.budget or runs < k

    def cell(self, group: str | None = None) -> str:
        """The planned runs per group in one cell of the findings: "5", "5–8" over the
        claim's groups (or ``group``'s own), "> 100" beyond the largest n tried."""
        ks = [self.groups.get(group, self.n)] if group is not None else list(self.groups.values()) or [self.n]
        if any(k is None for k in ks):
            return "> 100"
        lo, hi = min(ks), max(ks)
        return str(lo) if lo == hi else f"{lo}–{hi}"

    def text(self, paper: str, runs: int | None = None, group: str | None = None) -> str:
        """The plan in words, for a verdict's reason; ``runs``: this capture's n in ``group``
        (the group's own plan, not the largest of the claim's: CS244's 50 KB group is planned
        at 8 runs where its 500 KB group needs 10)."""
        where = f"papers/{paper}/{FILE}, pilot {self.pilot}"
        planned = self.groups.get(group, self.n) if group is not None else self.n
        if self.undecidable:
            over = sorted(g for g, k in self.groups.items() if k is None or k > self.budget)
            need = ("more than 100" if any(self.groups[g] is None for g in over)
                    else str(max(self.groups[g] for g in over)))
            return (f"undecidable here: {', '.join(over[:3])} would need {need} runs per group to be covered and "
                    f"decided, beyond the budget of {self.budget} ({where})")
        if runs is not None and runs < planned:
            return f"planned n = {planned} runs per group, this capture has {runs} ({where})"
        return f"planned n = {planned} runs per group ({where})"


def load(folder: Path) -> dict[str, Plan]:
    """A paper's plans by claim id (none when it has no plan file)."""
    f = folder / FILE
    if not f.exists():
        return {}
    doc = yaml.safe_load(f.read_text()) or {}
    budget, pilot = int(doc.get("budget", 0)), str(doc.get("pilot", "?"))
    out = {}
    for cid, p in (doc.get("claims") or {}).items():
        groups = {str(g): (None if k is None else int(k)) for g, k in (p.get("groups") or {}).items()}
        n = p.get("n")
        out[cid] = Plan(None if n is None else int(n), groups, budget, pilot)
    return out


def write(folder: Path, plans: dict[str, dict[str, int | None]], budget: int, pilot: str) -> Path:
    """``plans``: claim id -> group -> planned n (None: beyond the largest n tried)."""
    claims = {}
    for cid in sorted(plans):
        groups = plans[cid]
        n = None if any(k is None for k in groups.values()) else max(groups.values(), default=None)
        claims[cid] = {"n": n, "groups": dict(sorted(groups.items()))}
    f = folder / FILE
    head = ("# The runs per compared group each claim needs (findings/plans.py), planned from the pilot below by\n"
            "# python -m papers coverage --plan; fixed before a capture, never changed after seeing its verdicts.\n"
            "# n: null, or above the budget: undecidable here (no capture of this lab gives it that many runs).\n")
    tmp = f.with_name(f".{f.name}.tmp")
    tmp.write_text(head + yaml.safe_dump({"pilot": pilot, "budget": budget, "claims": claims}, sort_keys=False,
                                         allow_unicode=True, width=110))
    tmp.replace(f)
    return f
