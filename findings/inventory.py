"""A paper's claim inventory (``papers/<paper>/inventory.yaml``): every headline
quantitative statement of the paper (abstract, contributions, conclusions, every key
figure and table) with its place, the paper's words and its number, each mapped to a
claim we compute or to "not reproducible here" with the reason.

The paper's number becomes a band here, by one set of reading rules for every paper
(``band_of``): the tolerance comes from the paper (its standard error or interval,
the precision its figure can be read to) or, where the paper gives a number without
any spread, from one declared relative tolerance. "About X" and "up to X" read the
same way everywhere.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

PHRASES = ("exact", "about", "up-to", "more-than", "less-than", "range", "mean-se", "ci", "ordering",
           "no-difference")
STATUSES = ("claim", "not reproducible")

# A number the paper states without a spread ("5 %", "about 25 %", "up to 30 %"): the
# band is the number ± this share of its effect (its distance from no effect). Declared
# once, before any data, for every paper: none of the five papers gives a spread for
# such numbers, and a fifth of the effect is the difference a reader of their figures
# and rounded numbers can tell apart (Chen's olia "5 %, 6 %, 10 %", D-ITG's "around 25 %"
# and "close to 35 %" are rounded to whole or five percent).
RELATIVE_TOLERANCE = 0.2
SE_95 = 1.96  # a mean ± standard error read as the paper's 95 % interval


class InventoryError(ValueError):
    pass


@dataclass(frozen=True)
class Band:
    low: float  # -inf / +inf for a one-sided threshold
    high: float
    rule: str  # where the band's width comes from, in words

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high


@dataclass(frozen=True)
class Entry:
    """One statement of the paper, as the inventory records it."""

    paper: str
    id: str
    where: str
    quote: str
    says: str
    phrase: str
    value: float | None
    low: float | None
    high: float | None
    se: float | None
    precision: float | None
    unit: str
    no_effect: float | None
    direction: str  # "< 1", "> 0", ... (our statistic against no_effect), or "none"
    statistic: str  # how the paper computes its number
    protocol: str  # what the paper ran for it
    status: str
    reason: str  # not reproducible: why
    needs: str
    notes: str
    precision_reason: str = ""  # where ``precision`` comes from, when not from reading a figure

    @property
    def reproducible(self) -> bool:
        return self.status == "claim"

    @property
    def band(self) -> Band | None:
        return band_of(self)

    @property
    def paper_value(self) -> float | None:
        """The paper's number (the midpoint of a range; none for an ordering or a
        no-difference statement, whose band is the equivalence margin)."""
        if self.phrase in ("ordering", "no-difference"):
            return None
        if self.phrase == "range" and self.low is not None and self.high is not None:
            return (self.low + self.high) / 2
        return self.value

    @property
    def paper_text(self) -> str:
        """The paper's number in words: '≈ 25 %', '> 40 %', '20–30 %', '140.9 ± 1.1 ms'."""
        u = f" {self.unit}" if self.unit and self.unit != "×" else (self.unit or "")
        v = _num(self.value)
        return {
            "exact": f"{v}{u}", "about": f"≈ {v}{u}", "up-to": f"up to {v}{u}", "more-than": f"> {v}{u}",
            "less-than": f"< {v}{u}", "range": f"{_num(self.low)}–{_num(self.high)}{u}",
            "mean-se": f"{v} ± {_num(self.se)}{u} (mean ± s.e.)", "ci": f"{v}{u} [{_num(self.low)}, {_num(self.high)}]",
            "ordering": "no number (an ordering)", "no-difference": "no difference (no number)",
        }[self.phrase]

    @property
    def effect(self) -> float | None:
        """How far the paper's number lies from no effect: a CI wider than this cannot
        tell the paper's effect from none (the row is then *underpowered*)."""
        if self.paper_value is None or self.no_effect is None:
            return None
        return abs(self.paper_value - self.no_effect)


def _num(x) -> str:
    if x is None:
        return "–"
    x = float(x)
    return str(int(x)) if x == int(x) and abs(x) < 1e9 else f"{x:.3g}"


def declared_tolerance(x: float, no_effect: float) -> tuple[float, str]:
    """The tolerance of a number the paper gives without a spread: ± RELATIVE_TOLERANCE of its
    effect (its distance from no effect), of the number itself when the number *is* no
    effect ("about the same as": a ratio of about 1); and the rule in words."""
    base = abs(x - no_effect) or abs(x)
    return RELATIVE_TOLERANCE * base, (
        f"± {RELATIVE_TOLERANCE:.0%} of {'the paper’s effect' if abs(x - no_effect) else 'the paper’s number'} "
        f"({_num(base)}): the paper gives no spread for this number (the declared tolerance, findings/inventory.py)")


def band_of(e: Entry) -> Band | None:
    """The band of the paper's number, by the one set of reading rules (module doc).
    None for an ordering (direction only) and for a no-difference statement (its
    equivalence margin belongs to the claim, with the margin's reason)."""
    ph, x = e.phrase, e.value
    if ph in ("ordering", "no-difference"):
        return None
    if ph == "range":
        return Band(float(e.low), float(e.high), "the paper's range")
    if ph == "ci":
        return Band(float(e.low), float(e.high), "the paper's own confidence interval")
    if ph == "mean-se":
        return Band(x - SE_95 * e.se, x + SE_95 * e.se, f"the paper's mean ± {SE_95} standard errors (its 95 % interval)")
    if ph == "more-than":
        return Band(x, math.inf, "the paper's threshold")
    if ph == "less-than":
        return Band(-math.inf, x, "the paper's threshold")
    ref = e.no_effect if e.no_effect is not None else 0.0
    if e.precision:
        tol = e.precision
        why = f"± {_num(e.precision)} {e.unit}: " + (e.precision_reason or "the precision the paper's figure can be read to")
    else:
        tol, why = declared_tolerance(x, ref)
    if ph in ("exact", "about"):
        return Band(x - tol, x + tol, why)
    if ph == "up-to":
        # the largest value the paper saw: anywhere from no effect to the number (± tolerance)
        lo, hi = (ref, x + tol) if x >= ref else (x - tol, ref)
        return Band(lo, hi, f"'up to': between no effect ({_num(ref)}) and the paper's number, {why}")
    raise InventoryError(f"{e.paper}/{e.id}: unknown phrase {ph!r}")


def _float(d: dict, k: str, where: str) -> float | None:
    v = d.get(k)
    if v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        raise InventoryError(f"{where}: {k}: not a number ({v!r})") from None


def parse(doc: dict, paper: str, source: str) -> list[Entry]:
    if not isinstance(doc, dict) or not isinstance(doc.get("entries"), list):
        raise InventoryError(f"{source}: expected a mapping with an 'entries' list")
    out, seen = [], set()
    for i, d in enumerate(doc["entries"]):
        where = f"{source}: entries.{i}"
        if not isinstance(d, dict) or not d.get("id"):
            raise InventoryError(f"{where}: an entry needs an id")
        if d["id"] in seen:
            raise InventoryError(f"{where}: duplicate id {d['id']!r}")
        seen.add(d["id"])
        if d.get("phrase") not in PHRASES:
            raise InventoryError(f"{where} ({d['id']}): phrase {d.get('phrase')!r} is not one of {', '.join(PHRASES)}")
        if d.get("status") not in STATUSES:
            raise InventoryError(f"{where} ({d['id']}): status {d.get('status')!r} is not one of {', '.join(STATUSES)}")
        e = Entry(paper=paper, id=str(d["id"]), where=str(d.get("where", "")), quote=str(d.get("quote", "")),
                  says=str(d.get("says", "")), phrase=d["phrase"], value=_float(d, "value", where),
                  low=_float(d, "low", where), high=_float(d, "high", where), se=_float(d, "se", where),
                  precision=_float(d, "precision", where), unit=str(d.get("unit") or ""),
                  no_effect=_float(d, "no_effect", where), direction=str(d.get("direction") or "none"),
                  statistic=str(d.get("statistic", "")), protocol=str(d.get("protocol", "")), status=d["status"],
                  reason=str(d.get("reason") or ""), needs=str(d.get("needs") or ""), notes=str(d.get("notes") or ""))
        if e.status == "not reproducible" and not e.reason.strip():
            raise InventoryError(f"{where} ({e.id}): 'not reproducible' needs its reason")
        needs_value = e.phrase not in ("ordering", "no-difference", "range", "ci")
        if needs_value and e.value is None:
            raise InventoryError(f"{where} ({e.id}): phrase {e.phrase!r} needs a value")
        if e.phrase in ("range", "ci") and (e.low is None or e.high is None):
            raise InventoryError(f"{where} ({e.id}): phrase {e.phrase!r} needs low and high")
        if e.phrase == "mean-se" and e.se is None:
            raise InventoryError(f"{where} ({e.id}): phrase 'mean-se' needs se")
        b = e.band
        if b is not None and e.paper_value is not None and not b.contains(e.paper_value):
            raise InventoryError(f"{where} ({e.id}): the band [{b.low}, {b.high}] does not contain the paper's value")
        out.append(e)
    return out


@lru_cache(maxsize=None)
def load(path: str, paper: str) -> tuple[Entry, ...]:
    p = Path(path)
    try:
        doc = yaml.safe_load(p.read_text())
    except OSError as e:
        raise InventoryError(f"{p}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise InventoryError(f"{p}: not valid YAML: {str(e).splitlines()[0]}") from None
    return tuple(parse(doc, paper, str(p)))
