"""Campaign YAML: validation, expansion into runs, randomized resumable execution."""
from __future__ import annotations

import json
import random
import re
from pathlib import Path

import jsonschema
import yaml

from .emulator import PROFILE_KEYS
from .topology import MODES, PATH_INDEX

SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMG]i?B|B)?\s*$", re.I)
SIZE_UNITS = {None: 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3,
              "kib": 1024, "mib": 1024**2, "gib": 1024**3}
WORKLOADS = ("http", "ditg-netflix", "ditg-maps", "ditg-docs")

_num = {"type": "number", "minimum": 0}
_loss = {"oneOf": [
    {"type": "number", "minimum": 0, "maximum": 1},
    {"type": "object", "required": ["model"], "properties": {
        "model": {"enum": ["bernoulli", "gilbert_elliott"]},
        "p": {"type": "number", "minimum": 0, "maximum": 1},
        "p_gb": {"type": "number", "minimum": 0, "maximum": 1},
        "p_bg": {"type": "number", "minimum": 0, "maximum": 1},
        "loss_good": {"type": "number", "minimum": 0, "maximum": 1},
        "loss_bad": {"type": "number", "minimum": 0, "maximum": 1}}, "additionalProperties": False}]}
_dir_props = {
    "delay_ms": _num, "jitter_ms": _num, "rtt_ms": _num, "loss": _loss,
    "rate_mbit": {"type": "number", "exclusiveMinimum": 0},
    "trace": {"type": "string", "minLength": 1},
    "queue_bytes": {"type": "integer", "minimum": 1},
    "queue_packets": {"type": "integer", "minimum": 1},
    "outages": {"type": "array", "items": {"type": "array", "minItems": 2, "maxItems": 2, "items": _num}},
}
_profile = {"type": "object", "additionalProperties": False,
            "properties": {**_dir_props,
                           "down": {"type": "object", "properties": _dir_props, "additionalProperties": False},
                           "up": {"type": "object", "properties": _dir_props, "additionalProperties": False}}}
_size = {"oneOf": [{"type": "integer", "minimum": 1}, {"type": "string", "pattern": SIZE_RE.pattern}]}
_mode = {"enum": list(MODES)}
_path = {"enum": list(PATH_INDEX)}

SCHEMA = {
    "type": "object",
    "required": ["name", "scenarios"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": r"^[A-Za-z0-9._-]+$"},
        "description": {"type": "string"},
        "seed": {"type": "integer"},
        "repetitions": {"type": "integer", "minimum": 1},
        "congestion_control": {"type": "string", "minLength": 1},
        "scheduler": {"type": "string", "minLength": 1},
        "sysctl_profile": {"type": "string"},
        "sysctl_params": {"type": "object"},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0},
        "keep_interface_pcaps": {"type": "boolean"},
        "force_tbf": {"type": "boolean"},
        "scenarios": {"type": "object", "minProperties": 1, "additionalProperties": {
            "type": "object", "minProperties": 1, "propertyNames": _path,
            "additionalProperties": _profile}},
        "modes": {"type": "array", "minItems": 1, "items": _mode},
        "primary_paths": {"type": "array", "minItems": 1, "items": _path},
        "sizes": {"type": "array", "items": _size},
        "ditg": {"type": "object", "additionalProperties": False, "required": ["profiles"], "properties": {
            "profiles": {"type": "array", "minItems": 1, "items": {"enum": ["netflix", "maps", "docs"]}},
            "duration_s": {"type": "number", "exclusiveMinimum": 0}}},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["id", "scenario", "mode"], "additionalProperties": False,
            "properties": {"id": {"type": "string", "pattern": r"^[A-Za-z0-9._-]+$"},
                           "scenario": {"type": "string"}, "mode": _mode, "size": _size,
                           "workload": {"enum": list(WORKLOADS)}, "duration_s": {"type": "number", "exclusiveMinimum": 0},
                           "primary_path": _path, "repetition": {"type": "integer", "minimum": 1},
                           "congestion_control": {"type": "string"}, "force_tbf": {"type": "boolean"}}}},
    },
}


class CampaignError(ValueError):
    pass


def parse_size(v) -> int:
    if isinstance(v, int):
        return v
    m = SIZE_RE.match(str(v))
    if not m:
        raise ValueError(f"bad size {v!r}")
    unit = m.group(2).lower() if m.group(2) else None
    return int(float(m.group(1)) * SIZE_UNITS[unit])


def size_tag(n: int) -> str:
    for unit, f in (("MB", 1000**2), ("KB", 1000), ("MiB", 1024**2), ("KiB", 1024)):
        if n % f == 0:
            return f"{n // f}{unit}"
    return f"{n}B"


def _where(path) -> str:
    parts = [str(p) for p in path]
    return ".".join(parts) if parts else "(top level)"


def validate(doc, source: str = "campaign") -> dict:
    """Validate a campaign document; raise CampaignError with a one-line message naming the field."""
    if not isinstance(doc, dict):
        raise CampaignError(f"{source}: the campaign must be a mapping")
    v = jsonschema.Draft7Validator(SCHEMA)
    errs = sorted(v.iter_errors(doc), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errs:
        e = errs[0]
        # prefer the most specific error of a oneOf
        if e.context:
            e = max(e.context, key=lambda c: len(c.absolute_path))
        where = _where(e.absolute_path)
        msg = e.message
        if e.validator == "additionalProperties":
            msg = msg.replace("Additional properties are not allowed", "unknown field")
        elif e.validator == "propertyNames":
            msg = f"unknown path {e.instance!r} (known: {', '.join(PATH_INDEX)})"
        elif e.validator == "enum":
            msg = f"{e.instance!r} is not one of {', '.join(map(str, e.validator_value))}"
        raise CampaignError(f"{source}: {where}: {msg}".replace("\n", " "))
    # semantic checks jsonschema cannot express
    for i, s in enumerate(doc.get("sizes", []) or []):
        if parse_size(s) <= 0:
            raise CampaignError(f"{source}: sizes.{i}: size must be > 0 (got {s!r})")
    for name, sc in doc["scenarios"].items():
        for p, prof in sc.items():
            for d in ("down", "up", None):
                part = prof.get(d) if d else prof
                if part and "delay_ms" in part and "rtt_ms" in part:
                    raise CampaignError(f"{source}: scenarios.{name}.{p}{'.' + d if d else ''}: give delay_ms or rtt_ms, not both")
            if not any(k in prof for k in ("rate_mbit", "trace")) and not any(
                    isinstance(prof.get(d), dict) and ("rate_mbit" in prof[d] or "trace" in prof[d]) for d in ("down", "up")):
                pass  # unlimited rate is allowed (delay/loss only)
    if doc.get("sysctl_profile"):
        from .kernel import load_profile
        try:
            load_profile(doc["sysctl_profile"], doc.get("sysctl_params"))
        except ValueError as e:
            raise CampaignError(f"{source}: {e}") from None
    modes = doc.get("modes") or []
    if "runs" not in doc:
        if not modes:
            raise CampaignError(f"{source}: modes: required unless runs is given")
        if not (doc.get("sizes") or doc.get("ditg")):
            raise CampaignError(f"{source}: sizes: give sizes and/or ditg (a campaign needs a workload)")
    for i, r in enumerate(doc.get("runs", []) or []):
        if r["scenario"] not in doc["scenarios"]:
            raise CampaignError(f"{source}: runs.{i}.scenario: unknown scenario {r['scenario']!r}")
        wl = r.get("workload", "http")
        if wl == "http":
            if "size" not in r:
                raise CampaignError(f"{source}: runs.{i}.size: required for the http workload")
            if parse_size(r["size"]) <= 0:
                raise CampaignError(f"{source}: runs.{i}.size: size must be > 0 (got {r['size']!r})")
    # every scenario must provide the paths its modes use
    for name, sc in doc["scenarios"].items():
        for m in modes:
            need = {"SP-wifi": ["wifi"], "SP-lte": ["lte"]}.get(m, ["wifi", "lte"])
            for p in need:
                if p not in sc:
                    raise CampaignError(f"{source}: scenarios.{name}: mode {m} needs a {p!r} link profile")
    return doc


def load(path: str | Path) -> dict:
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise CampaignError(f"{path}: not valid YAML: {str(e).splitlines()[0]}") from None
    except OSError as e:
        raise CampaignError(f"{path}: {e.strerror}") from None
    return validate(doc, str(path))


def expand(doc: dict, base_dir: Path | None = None):
    """All runs of the campaign as RunSpecs, in the campaign's randomized order."""
    from .experiment import RunSpec

    cc = doc.get("congestion_control")
    if not cc and doc.get("sysctl_profile"):
        from .kernel import load_profile
        cc = load_profile(doc["sysctl_profile"], doc.get("sysctl_params")).get("congestion_control")
    common = dict(campaign=doc["name"], congestion_control=cc or "cubic",
                  scheduler=doc.get("scheduler", "default"), sysctl_profile=doc.get("sysctl_profile"),
                  sysctl_params=doc.get("sysctl_params", {}) or {}, timeout_s=doc.get("timeout_s", 120),
                  keep_interface_pcaps=doc.get("keep_interface_pcaps", True),
                  force_tbf=doc.get("force_tbf", False), base_dir=str(base_dir) if base_dir else None)
    seed = int(doc.get("seed", 1))
    specs = []
    if doc.get("runs"):
        for r in doc["runs"]:
            wl = r.get("workload", "http")
            specs.append(RunSpec(run_id=r["id"], scenario=r["scenario"], mode=r["mode"],
                                 profiles=doc["scenarios"][r["scenario"]], workload=wl,
                                 size_bytes=parse_size(r["size"]) if wl == "http" else 0,
                                 duration_s=r.get("duration_s", 30) if wl != "http" else 0,
                                 primary_path=r.get("primary_path", "wifi"), repetition=r.get("repetition", 1),
                                 seed=seed, **{**common, **{k: r[k] for k in ("congestion_control", "force_tbf") if k in r}}))
        return specs  # explicit runs keep their order
    wls = [("http", parse_size(s), 0.0) for s in doc.get("sizes", []) or []]
    if doc.get("ditg"):
        wls += [(f"ditg-{p}", 0, float(doc["ditg"].get("duration_s", 30))) for p in doc["ditg"]["profiles"]]
    for sc in doc["scenarios"]:
        for mode in doc["modes"]:
            prims = doc.get("primary_paths", ["wifi"]) if not mode.startswith("SP") else [mode[3:]]
            for prim in prims:
                for wl, size, dur in wls:
                    for rep in range(1, int(doc.get("repetitions", 1)) + 1):
                        tag = size_tag(size) if wl == "http" else wl
                        rid = f"{sc}_{mode}_{tag}_{prim}_r{rep}"
                        specs.append(RunSpec(run_id=rid, scenario=sc, mode=mode, profiles=doc["scenarios"][sc],
                                             workload=wl, size_bytes=size, duration_s=dur, primary_path=prim,
                                             repetition=rep, seed=seed, **common))
    rng = random.Random(seed)
    rng.shuffle(specs)
    for i, s in enumerate(specs):
        s.seed = seed * 100003 + i
        s.order_index = i
    return specs


def run_campaign(path: str | Path, out: str | Path, flat: bool = False, only: str | None = None,
                 dry_run: bool = False, progress: bool = True) -> dict:
    """Run a campaign; finished runs (DONE marker) are skipped, half runs redone."""
    from tqdm import tqdm

    from .experiment import DONE, run_one
    from .topology import sweep
    from .util import log

    path = Path(path)
    doc = load(path)
    specs = expand(doc, base_dir=path.resolve().parent)
    if only:
        specs = [s for s in specs if re.search(only, s.run_id)]
    root = Path(out) if flat else Path(out) / doc["name"]
    todo, done = [], []
    for s in specs:
        (done if (root / s.run_id / DONE).exists() else todo).append(s)
    summary = {"campaign": doc["name"], "total": len(specs), "skipped_done": len(done),
               "todo": [s.run_id for s in todo], "ok": [], "failed": {}}
    if dry_run:
        return summary
    root.mkdir(parents=True, exist_ok=True)
    (root / "campaign.yaml").write_text(path.read_text()) if not flat else None
    sweep()
    bar = tqdm(total=len(specs), initial=len(done), unit="run", disable=not progress,
               desc=doc["name"], dynamic_ncols=True)
    try:
        for s in todo:
            bar.set_postfix_str(s.run_id[-40:])
            try:
                run_one(s, root / s.run_id)
                summary["ok"].append(s.run_id)
            except Exception as e:  # a failed run is reported and redone next time
                summary["failed"][s.run_id] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
                log.error("run %s failed: %s", s.run_id, summary["failed"][s.run_id])
            bar.update(1)
    finally:
        bar.close()
    (root / "campaign-status.json").write_text(json.dumps(summary, indent=1) + "\n") if not flat else None
    return summary
