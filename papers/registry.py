"""The papers plugged into the findings engine: every paper's claims, in inventory order: each entry of ``papers/<paper>/
inventory.yaml`` is one row, computed by the claim of the same id in
``papers/<paper>/claims.py`` (``CLAIMS``), or "not reproducible here" with the
inventory's reason. Then the paper's lab checks (``CHECKS``).

A row whose number a link profile was sized from (``papers/<paper>/calibration.yaml``,
``sized_from``) has basis "calibration", whatever its claim says: the profile declares
what it was fitted to, once, beside the calibration runs that fitted it."""
from __future__ import annotations

import dataclasses
from functools import lru_cache
from pathlib import Path

import yaml

from findings import inventory
from findings.claim import CALIBRATION, CONDITION, OUTCOME, READING, Claim
from findings.inventory import Entry, InventoryError
from findings.plans import load as load_plans

from . import PAPERS


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


def condition(paper: str, id: str, **ours) -> Claim:
    """One of the paper's statements about its paths or networks (inventory entry ``id``),
    computed from our runs: a finding row of its own and a check the groups measured
    under it rest on."""
    return claim(paper, id, kind=CONDITION, **ours)


def calibration_file(paper: str) -> Path:
    return PAPERS[paper].folder / "calibration.yaml"


@lru_cache(maxsize=None)
def sized_from(paper: str) -> dict[str, str]:
    """Row id -> why its agreement is not independent evidence (papers/<paper>/calibration.yaml):
    a profile was sized from its number (``sized_from``), or from numbers that decide it
    (``not_independent``: e.g. the same table's other column of the same downloads)."""
    p = calibration_file(paper)
    if not p.is_file():
        return {}
    try:
        doc = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as e:
        raise InventoryError(f"{p}: not valid YAML: {str(e).splitlines()[0]}") from None
    out: dict[str, list[str]] = {}
    known = set(yaml.safe_load(PAPERS[paper].profiles_file.read_text()) or {}) | {"campaign"}
    for name, prof in (doc.get("profiles") or {}).items():
        if name not in known:
            raise InventoryError(f"{p}: profiles.{name}: not a profile of {PAPERS[paper].profiles_file.name} "
                                 "(or 'campaign')")
        if not isinstance(prof, dict) or not all(isinstance(prof.get(k, []), list)
                                                 for k in ("sized_from", "not_independent")):
            raise InventoryError(f"{p}: profiles.{name}: expected a mapping with 'sized_from' and "
                                 "'not_independent' lists")
        if prof.get("not_independent") and not str(prof.get("why", "")).strip():
            raise InventoryError(f"{p}: profiles.{name}: not_independent needs its 'why'")
        for rid in prof.get("sized_from", []):
            out.setdefault(str(rid), []).append(f"link profile {name} was sized from this number")
        for rid in prof.get("not_independent", []):
            out.setdefault(str(rid), []).append(f"link profile {name}: {str(prof['why']).strip()}")
    return {rid: "; ".join(why) for rid, why in out.items()}


def _with_basis(c: Claim) -> Claim:
    """The row's basis: calibration where a profile was sized from (or is decided by) its
    number; reading where its band reads the paper's words ("no difference" as ± a
    margin, or as the claim declares); else outcome."""
    why = sized_from(c.paper).get(c.id)
    if not why:
        if c.basis == OUTCOME and c.equivalence and c.margin is not None:
            return dataclasses.replace(c, basis=READING, basis_reason=(
                f"the paper's words ('{c.entry.says}') are read as no more than ± {c.margin:g} {c.unit} around no "
                f"effect: {c.margin_reason}"))
        return c
    return dataclasses.replace(c, basis=CALIBRATION, basis_reason=f"{why} (papers/{c.paper}/calibration.yaml): "
                                                                  "agreement with it is not independent evidence")


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
    out += list(mod.CHECKS)
    known = {c.id for c in out}
    unknown = sorted(set(sized_from(paper)) - known)
    if unknown:
        raise InventoryError(f"{calibration_file(paper)}: sized_from names rows that do not exist: {unknown}")
    plans = load_plans(PAPERS[paper].folder)
    unknown = sorted(set(plans) - known)
    if unknown:
        raise InventoryError(f"papers/{paper}/planned_n.yaml: plans for rows that do not exist: {unknown}")
    return [dataclasses.replace(_with_basis(c), plan=plans.get(c.id)) for c in out]


@lru_cache(maxsize=None)
def _all() -> tuple[Claim, ...]:
    return tuple(c for p in PAPERS for c in paper_claims(p))


def all_claims() -> list[Claim]:
    return list(_all())
