"""A claim as data: the paper's words and place, its number or band as the paper states
it, the comparison (a comparator object, from which the tolerance text is written),
the configuration the paper used, and how our value is measured.

Verdicts (issue 11): **agree** when our 95 % confidence interval lies inside the band
(or on the paper's side of its threshold), **disagree** when it lies wholly outside,
**inconclusive** otherwise; **not reproducible here** when the set-up cannot produce
the quantity, **no data** when the runs are missing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # pragma: no cover
    from .measure import Facts, Measure

AGREE, DISAGREE, INCONCLUSIVE = "agree", "disagree", "inconclusive"
NOT_REPRODUCIBLE, NO_DATA = "not reproducible here", "no data"
VERDICTS = (AGREE, DISAGREE, INCONCLUSIVE, NOT_REPRODUCIBLE, NO_DATA)


def num(x: float) -> str:
    """A number as the tolerance texts write it (no trailing zeros)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if x == int(x) and abs(x) < 1e9:
        return str(int(x))
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def _u(unit: str) -> str:
    return f" {unit}" if unit else ""


@dataclass(frozen=True)
class Comparator:
    """Where the paper puts the value; decides a verdict from a confidence interval."""

    def verdict(self, lo: float, hi: float) -> str:
        raise NotImplementedError

    def margin(self, lo: float, hi: float) -> float:
        """How far inside the band the interval lies (smaller: closer to an edge)."""
        return 0.0

    def text(self, unit: str = "") -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Above(Comparator):
    """Greater than ``x`` (``inclusive``: at least ``x``)."""

    x: float
    inclusive: bool = False

    def verdict(self, lo, hi):
        inside = lo >= self.x if self.inclusive else lo > self.x
        outside = hi < self.x if self.inclusive else hi <= self.x
        return AGREE if inside else DISAGREE if outside else INCONCLUSIVE

    def margin(self, lo, hi):
        return lo - self.x

    def text(self, unit=""):
        return f"{'≥' if self.inclusive else '>'} {num(self.x)}{_u(unit)}"


@dataclass(frozen=True)
class Below(Comparator):
    """Less than ``x`` (``inclusive``: at most ``x``)."""

    x: float
    inclusive: bool = False

    def verdict(self, lo, hi):
        inside = hi <= self.x if self.inclusive else hi < self.x
        outside = lo > self.x if self.inclusive else lo >= self.x
        return AGREE if inside else DISAGREE if outside else INCONCLUSIVE

    def margin(self, lo, hi):
        return self.x - hi

    def text(self, unit=""):
        return f"{'≤' if self.inclusive else '<'} {num(self.x)}{_u(unit)}"


@dataclass(frozen=True)
class Between(Comparator):
    """Within [lo, hi]; ``note`` says where the two ends come from."""

    lo: float
    hi: float
    note: str = ""

    @classmethod
    def mean_se(cls, mean: float, se: float, what: str = "") -> "Between":
        """The paper's mean ± standard error as its own 95 % interval (mean ± 1.96 se)."""
        note = f"{what + ': ' if what else ''}{num(mean)} ± {num(se)} (mean ± s.e.), ± 1.96 s.e."
        return cls(mean - 1.96 * se, mean + 1.96 * se, note)

    def verdict(self, lo, hi):
        if self.lo <= lo and hi <= self.hi:
            return AGREE
        if hi < self.lo or lo > self.hi:
            return DISAGREE
        return INCONCLUSIVE

    def margin(self, lo, hi):
        return min(lo - self.lo, self.hi - hi)

    def text(self, unit=""):
        t = f"between {num(self.lo)} and {num(self.hi)}{_u(unit)}"
        return f"{t} ({self.note})" if self.note else t


@dataclass(frozen=True)
class Point(Comparator):
    """A single number without a spread. An interval can never lie inside a point, so
    the best a reproduction can say is inconclusive (the point is inside our CI) or
    disagree (it is not); claims compare against such numbers only through a band
    with a written reason."""

    x: float

    def verdict(self, lo, hi):
        return INCONCLUSIVE if lo <= self.x <= hi else DISAGREE

    def margin(self, lo, hi):
        return -abs((lo + hi) / 2 - self.x)

    def text(self, unit=""):
        return f"{num(self.x)}{_u(unit)}"


@dataclass(frozen=True)
class NoSignificantDifference(Comparator):
    """The paper reports no significant difference (its error bars are 95 % CIs): ours
    agree when our 95 % CI of the difference contains 0, the same test."""

    def verdict(self, lo, hi):
        return AGREE if lo <= 0 <= hi else DISAGREE

    def margin(self, lo, hi):
        return min(-lo, hi)

    def text(self, unit=""):
        return f"no significant difference: the 95 % CI of the difference contains 0{_u(unit)}"


@dataclass(frozen=True)
class Claim:
    """One claim of one paper (``kind='finding'``), or one check that our emulated set-up
    has the paper's network characteristics (``kind='lab-check'``)."""

    id: str
    paper: str
    quote: str  # the paper's words
    source: str  # section / figure / table
    paper_band: Comparator  # the paper's number or band, as the paper states it
    paper_value: str  # the paper's numbers in its words (what paper_band encodes)
    statistic: str  # what our value is: the paper's statistic on our runs
    unit: str
    config: str  # the configuration the paper used (and ours, where it differs)
    measure: Callable[["Facts"], "Measure"] | None = None
    band: Comparator | None = None  # the band the verdict uses; the paper's unless a reason is given
    band_reason: str = ""  # required when band differs from paper_band
    mismatch: str = ""  # what our set-up cannot match: the likely reason when ours disagree
    not_reproducible: str = ""  # set: the set-up cannot produce this quantity (why)
    kind: str = "finding"
    tags: tuple[str, ...] = field(default_factory=tuple)

    @property
    def verdict_band(self) -> Comparator:
        return self.band if self.band is not None else self.paper_band

    @property
    def tolerance(self) -> str:
        """The rule that turns our CI into a verdict, written from the comparator."""
        if self.not_reproducible:
            return "–"
        t = f"agree if our 95 % CI lies {self.verdict_band.text(self.unit)}"
        if isinstance(self.verdict_band, NoSignificantDifference):
            t = f"agree if {self.verdict_band.text(self.unit)}"
        if self.band is not None and self.band != self.paper_band:
            t += f" (the paper: {self.paper_band.text(self.unit)}; {self.band_reason})"
        return t
