"""Every paper's claims, in inventory order: each entry of ``papers/<paper>/
inventory.yaml`` is one row, computed by the claim of the same id in
``papers/<paper>/claims.py`` (``CLAIMS``), or "not reproducible here" with the
inventory's reason. Then the paper's lab checks (``CHECKS``)."""
from __future__ import annotations

from functools import lru_cache

from papers import PAPERS

from . import inventory
from .claim import Claim
from .inventory import Entry, InventoryError


def entries(paper: str) -> tuple[Entry, ...]:
    p = PAPERS[paper]
    return inventory.load(str(p.inventory_file), paper)


def entry(paper: str, id: str) -> Entry:
    for e in entries(paper):
        if e.id == id:
            return e
    raise InventoryError(f"{PAPERS[paper].inventory_file}: no entry {id!r}")


def claim(paper: str, id: str, **ours) -> Claim:
    """The claim of inventory entry ``id``: the paper's side from the inventory, ours from ``ours``."""
    return Claim(entry=entry(paper, id), **ours)


def check(paper: str, id: str, *, quote: str, where: str, phrase: str, value: float | None = None,
          unit: str = "", se: float | None = None, low: float | None = None, high: float | None = None,
          precision: float | None = None, precision_reason: str = "", says: str = "", **ours) -> Claim:
    """A lab check: whether our emulated set-up has a condition the paper states (a
    path's RTT, loss, rate; the same offered load). Its band follows the inventory's
    reading rules; it is not an inventory entry (not a finding of the paper's)."""
    e = Entry(paper=paper, id=id, where=where, quote=quote, says=says, phrase=phrase, value=value, low=low,
              high=high, se=se, precision=precision, unit=unit, no_effect=None, direction="none", statistic="",
              protocol="", status="claim", reason="", needs="", notes="", precision_reason=precision_reason)
    return Claim(entry=e, kind="lab-check", **ours)


def paper_claims(paper: str) -> list[Claim]:
    """The paper's rows in inventory order, then its lab checks."""
    mod = PAPERS[paper].module("claims")
    ours = {c.id: c for c in mod.CLAIMS}
    if len(ours) != len(mod.CLAIMS):
        raise InventoryError(f"papers/{paper}/claims.py: two claims with one id")
    out = []
    for e in entries(paper):
        c = ours.pop(e.id, None)
        if c is None:
            if e.reproducible:
                raise InventoryError(f"papers/{paper}: inventory entry {e.id!r} is a claim but claims.py does "
                                     "not compute it")
            c = Claim(entry=e)
        elif not e.reproducible:
            raise InventoryError(f"papers/{paper}: {e.id!r} is 'not reproducible' in the inventory but claims.py "
                                 "computes it")
        out.append(c)
    if ours:
        raise InventoryError(f"papers/{paper}/claims.py: claims not in the inventory: {sorted(ours)}")
    return out + list(mod.CHECKS)


@lru_cache(maxsize=None)
def _all() -> tuple[Claim, ...]:
    return tuple(c for p in PAPERS for c in paper_claims(p))


def all_claims() -> list[Claim]:
    return list(_all())
