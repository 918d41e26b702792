"""meta.json read through its one declaration, ``capture/meta.schema.yaml``.

The capture validates what it writes against the schema with jsonschema; a reader of
other people's (or hand-edited) run folders must instead keep what it can: each field
that breaks the schema (a type, a range) is named and left out, the rest is used. This
walks the schema's top-level and object properties itself — the subset the file uses
(type, minimum, maximum, minLength, items, $ref) — so reading a run costs no jsonschema
import on `pipeline analyze`'s path.
"""
from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "capture" / "meta.schema.yaml"

_JSON = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "object": dict, "array": list,
         "null": type(None)}
_SAY = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true/false",
        "object": "an object", "array": "a list", "null": "null"}
# what a JSON value is, in the same words
_IS = {str: "a string", int: "an integer", float: "a number", bool: "true/false", dict: "an object", list: "a list",
       type(None): "null"}


@lru_cache(maxsize=1)
def schema() -> dict:
    import yaml

    return yaml.safe_load(SCHEMA_FILE.read_text())


def _resolve(sub: dict) -> dict:
    ref = sub.get("$ref")
    if ref:
        node = schema()
        for part in ref.removeprefix("#/").split("/"):
            node = node[part]
        return node
    return sub


def _is(v, t: str) -> bool:
    if t in ("integer", "number") and isinstance(v, bool):
        return False  # JSON's true is no number
    if t == "integer" and isinstance(v, float):
        return v.is_integer()
    return isinstance(v, _JSON[t])


def why_not(v, sub: dict) -> str | None:
    """Why ``v`` breaks the (sub)schema ``sub`` at its own level, or None."""
    sub = _resolve(sub)
    types = sub.get("type")
    if types is not None:
        types = [types] if isinstance(types, str) else types
        if not any(_is(v, t) for t in types):
            said = [t for t in types if t != "null"] or types  # null is "absent", not a kind to ask for
            return (f"should be {' or '.join(_SAY[t] for t in said)}, not {_IS.get(type(v), type(v).__name__)} "
                    f"({json.dumps(v, default=str)[:40]})")
    if isinstance(v, float) and not math.isfinite(v):
        return f"{v} is not a finite number"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if "minimum" in sub and v < sub["minimum"] or "maximum" in sub and v > sub["maximum"]:
            return f"{v} is out of range"
    if isinstance(v, str) and len(v) < sub.get("minLength", 0):
        return "is empty"
    if isinstance(v, list) and "items" in sub:
        bad = [i for i, x in enumerate(v) if why_not(x, sub["items"])]
        if bad:
            return f"item {bad[0]} {why_not(v[bad[0]], sub['items'])}"
    return None


def check(doc: dict) -> tuple[dict, list[str]]:
    """``doc`` with every field that breaks the schema left out (an object's field alone
    when the object is fine), and one message per field left out."""
    meta, notes = dict(doc), []
    for key, sub in schema()["properties"].items():
        v = meta.get(key)
        if v is None:  # absent or null: nothing to read (older captures leave fields null)
            continue
        if isinstance(v, float) and v.is_integer() and "integer" in str(_resolve(sub).get("type")):
            meta[key] = v = int(v)
        why = why_not(v, sub)
        if why:
            notes.append(f"{key} {why}")
            meta.pop(key)
            continue
        props = _resolve(sub).get("properties")
        if isinstance(v, dict) and props:
            fields = dict(v)
            for name, fsub in props.items():
                if fields.get(name) is None:
                    continue
                w = why_not(fields[name], fsub)
                if w:
                    notes.append(f"{key}.{name} {w}")
                    fields.pop(name)
            meta[key] = fields
    return meta, notes
