"""meta.json, in one place: its one declaration, ``pipeline/meta.schema.yaml``; the
writer's check (``problems``); the reader's (``check``); and the columns and rows the
store lifts out of it (``run_columns``, ``path_rows``).

The capture validates what it writes against the schema with jsonschema (``problems``); a reader of
other people's (or hand-edited) run folders must instead keep what it can: each field
that breaks the schema (a type, a range) is named and left out, the rest is used. This
walks the schema's top-level and object properties itself — the subset the file uses
(type, minimum, maximum, minLength, pattern, items, $ref) — so reading a run costs no jsonschema
import on `pipeline analyze`'s path.
"""
from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path

SCHEMA_FILE = Path(__file__).resolve().parent / "meta.schema.yaml"

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


def problems(meta: dict) -> list[str]:
    """What in ``meta`` breaks the schema (jsonschema, the writer's check: capture/experiment.py)."""
    import jsonschema  # here, not at the top: the reader's path (``check``) does without it
    import yaml

    v = jsonschema.Draft7Validator(yaml.safe_load(SCHEMA_FILE.read_text()))
    return [f"{'.'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:120]}"
            for e in sorted(v.iter_errors(meta), key=lambda e: list(map(str, e.absolute_path)))]


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
        if isinstance(v, int) and not -2 ** 63 <= v < 2 ** 63:  # every column is 64-bit at most
            return f"{str(v)[:20]}… ({len(str(abs(v)))} digits) is out of range"
        if "minimum" in sub and v < sub["minimum"] or "maximum" in sub and v > sub["maximum"]:
            return f"{v} is out of range"
    if isinstance(v, str) and len(v) < sub.get("minLength", 0):
        return "is empty"
    if isinstance(v, str) and "pattern" in sub and not re.search(sub["pattern"], v):
        return f"{json.dumps(v)[:40]} does not match {sub['pattern']}"
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
        if v is None:  # absent or null: null means absent (older captures leave fields null),
            meta.pop(key, None)  # so no reader meets a None where the schema promises a type
            continue
        if isinstance(v, float) and v.is_integer() and "integer" in str(_resolve(sub).get("type")):
            meta[key] = v = int(v)
        why = why_not(v, sub)
        if why:
            notes.append(f"{key} {why}")
            meta.pop(key)
            continue
        if isinstance(v, str) and _unicode(v) != v:
            notes.append(f"{key} holds characters that are not text (a lone surrogate): replaced by U+FFFD")
            meta[key] = v = _unicode(v)
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
                elif isinstance(fields[name], str) and _unicode(fields[name]) != fields[name]:
                    notes.append(f"{key}.{name} holds characters that are not text (a lone surrogate): replaced "
                                 "by U+FFFD")
                    fields[name] = _unicode(fields[name])
            meta[key] = fields
    return meta, notes


# --------------------------------------------------------------- flattened
# What the derived layer reads of meta.json, as typed values: the runs table's
# configuration columns (``RUN_COLUMNS``) and one row per path and direction
# (``run_paths``) or per outage (``run_outages``). One place turns the JSON into columns;
# SQL then selects them (pipeline/derived.py parses no JSON).

SIDES = ("down", "up")


def _num(v) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return float(v) if -2 ** 63 <= v < 2 ** 63 else None
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, str):
        try:
            x = float(v.strip())
        except ValueError:
            return None
        return x if math.isfinite(x) else None
    return None


def _int(v) -> int | None:
    x = _num(v)
    return int(x) if x is not None and x.is_integer() and abs(x) < 2 ** 63 else None


def _bool(v) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "false"):
        return v.strip().lower() == "true"
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _unicode(v: str) -> str:
    """``v`` with what UTF-8 cannot hold (JSON's lone surrogates, "\\ud800") replaced."""
    return _SURROGATE.sub("\ufffd", v)


def _text(v) -> str | None:
    return _unicode(v) if isinstance(v, str) else None if v is None else json.dumps(v) if isinstance(v, (dict, list)) \
        else str(v)


def loss_mean(loss) -> float:
    """Mean loss probability of a configured ``loss``: a number, {model: bernoulli, p} or
    Gilbert–Elliott {p_gb, p_bg, loss_good, loss_bad} (the stationary mix of the two
    states); none is 0."""
    if loss is None:
        return 0.0
    if not isinstance(loss, dict):
        return _num(loss) if _num(loss) is not None else 0.0
    if loss.get("model") == "gilbert_elliott":
        p_gb, p_bg = _num(loss.get("p_gb")) or 0.0, _num(loss.get("p_bg")) or 0.0
        good = _num(loss.get("loss_good")) or 0.0
        bad = _num(loss.get("loss_bad"))
        bad = 1.0 if bad is None else bad
        if p_gb + p_bg == 0:
            return good
        return (p_bg * good + p_gb * bad) / (p_gb + p_bg)
    return _num(loss.get("p")) or 0.0


def _buffer_bytes(meta: dict) -> int | None:
    """meta.json buffer_bytes, else the maximum of the applied net.ipv4.tcp_rmem, else
    rmem_max, else the sysctl profile's buffer (the scenario name's '<n>k' is the
    derived layer's last resort)."""
    applied = meta.get("sysctls_applied") if isinstance(meta.get("sysctls_applied"), dict) else {}
    rmem = applied.get("net.ipv4.tcp_rmem")
    rmem_max = rmem.split()[2] if isinstance(rmem, str) and len(rmem.split()) >= 3 else None
    prof = meta.get("sysctl_profile") if isinstance(meta.get("sysctl_profile"), dict) else {}
    used = prof.get("params_used") if isinstance(prof.get("params_used"), dict) else {}
    for v in (meta.get("buffer_bytes"), rmem_max, applied.get("net.core.rmem_max"), used.get("buffer")):
        x = _int(v)
        if x is not None:
            return x
    return None


def _obj(d: dict, key: str) -> dict:
    v = d.get(key)
    return v if isinstance(v, dict) else {}


def _first_unplug(meta: dict) -> dict:
    """The first event of meta.json's unplug schedule ({} when none)."""
    sched = _obj(meta, "unplug").get("schedule")
    return sched[0] if isinstance(sched, list) and sched and isinstance(sched[0], dict) else {}


def run_columns(meta: dict) -> dict:
    """The runs table's columns that come from meta.json beyond its own fields."""
    result, builds, tools = _obj(meta, "result"), _obj(meta, "builds"), _obj(meta, "tools")
    unplug, sockbuf = _first_unplug(meta), _obj(meta, "socket_buffers")
    client, server = _obj(sockbuf, "client"), _obj(sockbuf, "server")
    return {
        "scale": _text(meta.get("scale")), "campaign_seed": _int(meta.get("campaign_seed")),
        "duration_s": _num(meta.get("duration_s")), "buffer_bytes": _buffer_bytes(meta),
        "complete": _bool(result.get("complete")), "app_sent_packets": _int(result.get("sent_packets")),
        "app_schedule_packets": _int(result.get("schedule_packets")),
        "app_schedule_sha256": _text(result.get("schedule_sha256")), "app_drained": _bool(result.get("drained")),
        "host": _text(builds.get("host")) or _text(_obj(meta, "host").get("hostname")),
        "kernel_release": _text(builds.get("kernel")), "linkem_build": _text(builds.get("linkem_sha256")),
        "repo_commit": _text(tools.get("repo_commit")),
        "unplug_path": _text(unplug.get("path")), "unplug_at_s": _num(unplug.get("at_s")),
        "replug_at_s": _num(unplug.get("replug_s")),
        "rcvbuf_mean_bytes": _num(client.get("rcvbuf_mean_bytes")), "rcvbuf_max_bytes": _int(client.get("rcvbuf_max_bytes")),
        "rcvbuf_used_mean_bytes": _num(client.get("rcvbuf_used_mean_bytes")),
        "rcvbuf_samples": _int(client.get("samples")), "sndbuf_mean_bytes": _num(server.get("sndbuf_mean_bytes")),
    }


def path_rows(meta: dict) -> tuple[list[dict], list[dict]]:
    """(run_paths rows, run_outages rows) of one run's meta.json ``paths``: per path and
    direction the configured one-way delay, rate, mean loss, queue and outages."""
    paths, out, outages = meta.get("paths"), [], []
    for path, p in (paths.items() if isinstance(paths, dict) else ()):
        if not isinstance(p, dict):
            continue
        for side in SIDES:
            d = _obj(p, side)
            windows = [w for w in d.get("outages") or [] if isinstance(w, list) and len(w) == 2
                       and _num(w[0]) is not None and _num(w[1]) is not None] if isinstance(
                d.get("outages"), list) else []
            out.append({"path": path, "direction": side, "delay_ms": _num(d.get("delay_ms")),
                        "rate_mbit": _num(d.get("rate_mbit")), "loss": loss_mean(d.get("loss")),
                        "queue_bytes": _int(d.get("queue_bytes")), "outages": len(windows),
                        "client_addr": _text(p.get("client_addr")), "profile": _text(_obj(meta, "link_profiles").get(path))})
            outages += [{"path": path, "direction": side, "down_s": _num(w[0]), "up_s": _num(w[1])} for w in windows]
    return out, outages


# --------------------------------------------------------------- run facts
# What a run folder's reader takes from meta.json besides the checked fields: the
# client addresses that label the subflows, and the host-health columns.


def path_map_from_meta(meta: dict) -> dict[str, str]:
    """``{client address: path label}`` from meta.json's ``paths``.

    Accepts ``{"wifi": "10.0.1.2"}`` or ``{"wifi": {"client_addr": "10.0.1.2"}}``.
    """
    out = {}
    for label, v in (meta.get("paths") or {}).items():
        addrs = v if isinstance(v, (str, list)) else (v.get("client_addr") or v.get("client_addrs") or []
                                                      if isinstance(v, dict) else [])
        for a in [addrs] if isinstance(addrs, str) else addrs:
            out[a] = label
    return out


def valid_paths(paths: dict) -> tuple[dict, str | None]:
    """Keep the entries of meta.json's ``paths`` that name client addresses."""
    ok, bad = {}, []
    for label, v in paths.items():
        addrs = v if isinstance(v, (str, list)) else (v.get("client_addr") or v.get("client_addrs") or []
                                                      if isinstance(v, dict) else None)
        addrs = [addrs] if isinstance(addrs, str) else addrs
        if isinstance(addrs, list) and addrs and all(isinstance(a, str) and a for a in addrs):
            ok[label] = v
        elif v is None or (isinstance(v, dict) and not addrs):
            ok[label] = v  # a path without an address (e.g. not used in this run): nothing to label
        else:
            bad.append(label)
    return ok, (f"entries {', '.join(map(repr, bad[:3]))} name no client address" if bad else None)


def health_columns(meta: dict) -> dict:
    """The runs table's host-health columns from meta.json (capture/health.py)."""
    st, host, cpu = meta.get("stalls") or {}, meta.get("host") or {}, meta.get("run_cpu") or {}
    return {"stalled": st.get("stalled"), "worst_late_ms": st.get("worst_late_ms"),
            "late_packets": st.get("late_packets"), "late_intervals": st.get("late_intervals"),
            "worst_reader_lag_ms": st.get("worst_reader_lag_ms"), "steal_pct": host.get("steal_pct"),
            "host_busy_pct": host.get("busy_pct"), "run_cpu_s": cpu.get("cpu_s"),
            "host_others_pct": others_pct(host, cpu)}


def others_pct(host: dict, cpu: dict) -> float | None:
    """The host's busy share less the run's own (capture/health.py: busy counts every
    process, the run's emulators and workload too): what else kept the host busy."""
    busy, own, cpus = host.get("busy_pct"), cpu.get("pct_of_one_core"), host.get("cpus")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
               for v in (busy, own, cpus)) or cpus < 1:
        return None
    return round(max(busy - own / cpus, 0.0), 2)


def lifted_columns() -> tuple[str, ...]:
    """The runs columns lifted from meta.json (health and configuration)."""
    return (*health_columns({}), *run_columns({}))
