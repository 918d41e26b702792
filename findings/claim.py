"""A claim: one statement of a paper (its inventory entry: words, place, number, band,
direction) joined to how we measure it (the runs, the statistic, the protocol and what
differs from the paper's, the lab checks its conditions rest on).

Two verdicts per row (issue 23):

* **magnitude**: our 95 % interval against the band of the paper's number (an
  equivalence margin for "no difference" statements): agree / disagree /
  inconclusive, *underpowered* when the interval is wider than the effect the paper
  reports and so cannot decide; *direction only* when the paper gives no number.
* **direction**: the interval against the sign or order the paper states.

Before either: *not comparable* when a condition a compared group rests on does not
hold here; *not reproducible here* when the set-up cannot produce the quantity (the
inventory says why); *no data* when a compared group has fewer than ``MIN_RUNS`` runs.

**Conditions.** A check is a statement about our set-up computed from our runs against
the paper's band: a *lab check* (``kind = "lab-check"``, ours: "the same offered load")
or one of the paper's own statements about its paths or networks (``kind =
"condition"``, an inventory entry: "the AT&T path exhibits a minimum RTT of about 40
ms"). Every compared group names the checks of the conditions its own number was
measured under (``Claim.checks`` for every group, ``Group.checks`` per group: the table
or figure the claim's number comes from); a group is judged only where each of them
holds (``holds``), the others are *not comparable* and say which check failed.

**Basis.** What an agreement is worth: ``outcome`` (our links were not sized from this
number), ``calibration`` (a link profile was sized from it: papers/<paper>/
calibration.yaml names the rows each profile was sized from) or ``reading`` (the band
reads a word of the paper as a number: "most" as > 50 %). Only outcome rows count as
independent agreement.

Several groups (sizes, carriers, RTTs) are decided together, for claims that hold
"at every" one of them: **agree** when every group's 95 % interval lies inside (an
intersection-union test needs no correction), **disagree** when some group's
interval at the Bonferroni level 1 − 0.05/k lies wholly outside, inconclusive
otherwise. Equivalence ("no difference") uses each group's 90 % interval inside ± the
margin (two one-sided tests at 5 %).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from .inventory import Band, Entry

if TYPE_CHECKING:  # pragma: no cover
    from .measure import Facts, Measure
    from .plans import Plan
    from .stats import Estimate

AGREE, DISAGREE, INCONCLUSIVE, UNDERPOWERED = "agree", "disagree", "inconclusive", "underpowered"
FINDING, CONDITION, LAB_CHECK = "finding", "condition", "lab-check"  # Claim.kind
OUTCOME, CALIBRATION, READING = "outcome", "calibration", "reading"  # Claim.basis
BASES = (OUTCOME, CALIBRATION, READING)
NOT_COMPARABLE, NOT_REPRODUCIBLE, NO_DATA = "not comparable", "not reproducible here", "no data"
DIRECTION_ONLY, NO_DIRECTION = "direction only", "no direction"
VERDICTS = (AGREE, DISAGREE, INCONCLUSIVE, UNDERPOWERED, NOT_COMPARABLE, NOT_REPRODUCIBLE, NO_DATA,
            DIRECTION_ONLY, NO_DIRECTION)


@dataclass(frozen=True)
class Direction:
    """The paper's sign or order, as our statistic against a value: ``op`` '<' or '>'."""

    op: str
    ref: float

    @classmethod
    def parse(cls, text: str) -> "Direction | None":
        t = (text or "").strip()
        if not t or t == "none":
            return None
        op, ref = t[0], t[1:].strip()
        if op not in "<>":
            raise ValueError(f"direction {text!r}: expected '< x', '> x' or 'none'")
        return cls(op, float(ref))

    def side(self, lo: float, hi: float) -> int:
        """+1: the interval lies on the paper's side; -1: wholly on the other side (or on
        the value); 0: it straddles."""
        if self.op == "<":
            return 1 if hi < self.ref else -1 if lo >= self.ref else 0
        return 1 if lo > self.ref else -1 if hi <= self.ref else 0

    def text(self, unit: str = "") -> str:
        return f"{self.op} {self.ref:g}{(' ' + unit) if unit and unit != '×' else unit}"


@dataclass(frozen=True)
class Claim:
    entry: Entry  # the paper's side (papers/<paper>/inventory.yaml; lab checks: their own)
    statistic: str = ""  # our value: the paper's statistic on our runs, in words
    config: str = ""  # the configuration and protocol we ran, and what differs from the paper's
    measure: Callable[["Facts"], "Measure"] | None = None
    checks: tuple[str, ...] = ()  # checks every compared group rests on (more per group: Group.checks)
    margin: float | None = None  # "no difference": ± this around no effect (in the statistic's unit)
    margin_reason: str = ""  # where the margin comes from (the paper, or a declared reason)
    mismatch: str = ""  # what our set-up cannot match: the likely reason when ours differ
    kind: str = FINDING  # CONDITION: the paper's statement about its paths, also a check; LAB_CHECK: ours
    basis: str = OUTCOME  # module doc; CALIBRATION is set from calibration.yaml (papers.registry)
    basis_reason: str = ""  # why the basis is not OUTCOME
    tags: tuple[str, ...] = field(default_factory=tuple)
    # the runs per group planned before the capture (papers/plans.py; None: no plan)
    plan: "Plan | None" = None

    def __post_init__(self):
        if self.basis not in BASES:
            raise ValueError(f"{self.entry.paper}/{self.entry.id}: basis {self.basis!r} is not one of {', '.join(BASES)}")
        if self.basis != OUTCOME and not self.basis_reason.strip():
            raise ValueError(f"{self.entry.paper}/{self.entry.id}: basis {self.basis!r} needs its reason")
        if self.kind != FINDING and self.checks:
            raise ValueError(f"{self.entry.paper}/{self.entry.id}: a check rests on no other check")

    @property
    def is_check(self) -> bool:
        return self.kind in (CONDITION, LAB_CHECK)

    @property
    def id(self) -> str:
        return self.entry.id

    @property
    def paper(self) -> str:
        return self.entry.paper

    @property
    def unit(self) -> str:
        return self.entry.unit

    @property
    def direction(self) -> Direction | None:
        return Direction.parse(self.entry.direction)

    @property
    def equivalence(self) -> bool:
        return self.entry.phrase == "no-difference"

    @property
    def band(self) -> Band | None:
        """The band the magnitude verdict uses: the paper's (inventory rules), or ± the
        margin around no effect for a no-difference statement."""
        if self.equivalence:
            if self.margin is None:
                return None
            ref = self.entry.no_effect or 0.0
            return Band(ref - self.margin, ref + self.margin, f"equivalence margin ± {self.margin:g}: {self.margin_reason}")
        return self.entry.band

    @property
    def effect(self) -> float | None:
        if self.equivalence:
            return 2 * self.margin if self.margin is not None else None
        return self.entry.effect

    @property
    def not_reproducible(self) -> str:
        return "" if self.entry.reproducible else self.entry.reason

    @property
    def tolerance(self) -> str:
        b = self.band
        if self.not_reproducible:
            return "–"
        if b is None:
            return "no number in the paper: direction only"
        return b.rule


@dataclass(frozen=True)
class PaperNumber:
    """The paper's number for one compared group, where the paper prints one per group
    (a table's cells: Table 6's 4 MB and 8 MB columns): its band and its distance from no
    effect (the underpowered rule's effect)."""

    value: float
    text: str  # as the paper prints it: "2.95× (91.3 ± 12.6 ÷ 30.9 ± 3.2 ms)"
    band: Band
    effect: float | None


def magnitude(c: Claim, groups: list[tuple[str, "Estimate"]],
              numbers: dict[str, PaperNumber] | None = None) -> tuple[str, str]:
    """The magnitude verdict over every group, and the deciding group's label. A group
    with its own number (``numbers``) is held to that number's band, the others to the
    claim's."""
    numbers = numbers or {}

    def band(g: str) -> Band | None:
        return numbers[g].band if g in numbers else c.band

    def effect(g: str) -> float | None:
        return numbers[g].effect if g in numbers else c.effect
    if any(band(g) is None for g, _ in groups):
        return DIRECTION_ONLY, ""
    outside = [(g, e) for g, e in groups if e.hi_adj < band(g).low or e.lo_adj > band(g).high]
    if outside:
        return DISAGREE, outside[0][0]

    def inside(g: str, e: "Estimate") -> bool:
        lo, hi = (e.lo_eq, e.hi_eq) if c.equivalence else (e.lo, e.hi)
        return band(g).low <= lo and hi <= band(g).high
    undecided = [(g, e) for g, e in groups if not inside(g, e)]
    if not undecided:
        closest = min(groups, key=lambda ge: min(ge[1].lo - band(ge[0]).low, band(ge[0]).high - ge[1].hi))
        return AGREE, closest[0]
    wide = [g for g, x in undecided if effect(g) is not None and (x.hi - x.lo) > effect(g)]
    if wide:
        return UNDERPOWERED, wide[0]
    return INCONCLUSIVE, undecided[0][0]


def direction(c: Claim, groups: list[tuple[str, "Estimate"]]) -> tuple[str, str]:
    """The direction verdict over every group (the same decision rule as magnitude)."""
    d = c.direction
    if d is None:
        return NO_DIRECTION, ""
    wrong = [g for g, e in groups if d.side(e.lo_adj, e.hi_adj) < 0]
    if wrong:
        return DISAGREE, wrong[0]
    unsure = [g for g, e in groups if d.side(e.lo, e.hi) <= 0]
    if not unsure:
        return AGREE, groups[0][0]
    return INCONCLUSIVE, unsure[0]


def interval_used(c: Claim, magnitude_v: str, direction_v: str) -> str:
    """Which of a group's intervals (``Estimate.shown``) decided its verdicts, so that the
    interval shown is the one judged: "disagree" is decided at the Bonferroni level
    ("adj"), a "no difference" claim's agree and inconclusive by the 90 % interval of two
    one-sided tests ("eq"), everything else by the 95 % interval. The magnitude verdict
    decides when there is one; a statement without a number, its direction."""
    v = direction_v if magnitude_v == DIRECTION_ONLY else magnitude_v
    if v == DISAGREE:
        return "adj"
    if c.equivalence and v in (AGREE, INCONCLUSIVE):
        return "eq"
    return "95"


def holds(row: dict) -> bool:
    """A check's row: the condition holds here (its magnitude agrees; a statement without
    a number: its direction agrees)."""
    if row["magnitude_verdict"] == DIRECTION_ONLY:
        return row["direction_verdict"] == AGREE
    return row["magnitude_verdict"] == AGREE


def finite(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))) else x
