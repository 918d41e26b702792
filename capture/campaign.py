"""Campaign YAML: validation, expansion into runs, randomized resumable execution."""
from __future__ import annotations

import json
import os
import random
import re
import time
from pathlib import Path

import jsonschema
import yaml

from .emulator import PROFILE_KEYS
from .experiment import SIZED
from .topology import MODES, PATH_INDEX

SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMG]i?B|B)?\s*$", re.I)
SIZE_UNITS = {None: 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3,
              "kib": 1024, "mib": 1024**2, "gib": 1024**3}
WORKLOADS = ("http", "iperf3-up", "ditg-netflix", "ditg-maps", "ditg-docs")

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
# In a scenario a path's link is a profile name (from profiles.yaml), an inline
# profile, or an inline profile based on a named one ({profile: NAME, loss: 0.04}).
_link = {"oneOf": [{"type": "string", "minLength": 1},
                   {**_profile, "properties": {**_profile["properties"], "profile": {"type": "string", "minLength": 1}}}]}
_size = {"oneOf": [{"type": "integer", "minimum": 1}, {"type": "string", "pattern": SIZE_RE.pattern}]}
_mode = {"enum": list(MODES)}
_path = {"enum": list(PATH_INDEX)}
_cc = {"type": "string", "minLength": 1}
_ditg = {"type": "object", "additionalProperties": False, "required": ["profiles"], "properties": {
    "profiles": {"type": "array", "minItems": 1, "items": {"enum": ["netflix", "maps", "docs"]}},
    "duration_s": {"type": "number", "exclusiveMinimum": 0}}}
_runs = {"type": "array", "minItems": 1, "items": {
    "type": "object", "required": ["id", "scenario", "mode"], "additionalProperties": False,
    "properties": {"id": {"type": "string", "pattern": r"^[A-Za-z0-9._-]+$"},
                   "scenario": {"type": "string"}, "mode": _mode, "size": _size,
                   "workload": {"enum": list(WORKLOADS)}, "duration_s": {"type": "number", "exclusiveMinimum": 0},
                   "primary_path": _path, "repetition": {"type": "integer", "minimum": 1},
                   "congestion_control": {"type": "string"}, "force_tbf": {"type": "boolean"}}}}
_sysctls = {"type": "object", "additionalProperties": {"type": ["string", "integer", "number"]}}

# Keys a `scales.<scale>` block may override (everything else is shared by all scales).
SCALE_KEYS = {
    "repetitions": {"type": "integer", "minimum": 1},
    "sizes": {"type": "array", "items": _size},
    "modes": {"type": "array", "minItems": 1, "items": _mode},
    "primary_paths": {"type": "array", "minItems": 1, "items": _path},
    "congestion_controls": {"type": "array", "minItems": 1, "items": _cc},
    "ditg": _ditg,
    "timeout_s": {"type": "number", "exclusiveMinimum": 0},
    "only_scenarios": {"type": "array", "minItems": 1, "items": {"type": "string"}},
    "runs": _runs,
}
SCALES = ("quick", "paper")

SCHEMA = {
    "type": "object",
    "required": ["name", "scenarios"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": r"^[A-Za-z0-9._-]+$"},
        "description": {"type": "string"},
        "paper": {"type": "string"},
        "seed": {"type": "integer"},
        "repetitions": {"type": "integer", "minimum": 1},
        "congestion_control": _cc,
        "congestion_controls": {"type": "array", "minItems": 1, "items": _cc},
        "scheduler": {"type": "string", "minLength": 1},
        "sysctl_profile": {"type": "string"},
        "sysctl_params": {"type": "object"},
        "sysctls": _sysctls,
        "profiles_file": {"type": "string", "minLength": 1},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0},
        "keep_interface_pcaps": {"type": "boolean"},
        "force_tbf": {"type": "boolean"},
        "scenarios": {"type": "object", "minProperties": 1, "additionalProperties": {
            "type": "object", "minProperties": 1, "additionalProperties": False,
            "properties": {**{p: _link for p in PATH_INDEX},
                           "description": {"type": "string"},
                           # [] = used by explicit runs only; otherwise replaces the campaign's modes
                           "modes": {"type": "array", "items": _mode},
                           "sysctl_params": {"type": "object"},
                           "sysctls": _sysctls}}},
        "modes": {"type": "array", "minItems": 1, "items": _mode},
        "primary_paths": {"type": "array", "minItems": 1, "items": _path},
        "sizes": {"type": "array", "items": _size},
        "ditg": _ditg,
        "runs": _runs,
        "only_scenarios": SCALE_KEYS["only_scenarios"],
        "scales": {"type": "object", "minProperties": 1, "propertyNames": {"enum": list(SCALES)},
                   "additionalProperties": {"type": "object", "additionalProperties": False,
                                            "properties": SCALE_KEYS}},
    },
}

PROFILES_FILE = Path(__file__).resolve().parent / "campaigns" / "profiles.yaml"
PROFILES_SCHEMA = {"type": "object", "minProperties": 1, "propertyNames": {"pattern": r"^[A-Za-z0-9._-]+$"},
                   "additionalProperties": _profile}


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


def _schema_error(v: jsonschema.Draft7Validator, doc, source: str, known_paths=True) -> None:
    errs = sorted(v.iter_errors(doc), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if not errs:
        return
    e = errs[0]
    # prefer the most specific error of a oneOf
    while e.context:
        e = max(e.context, key=lambda c: len(c.absolute_path))
    where = _where(e.absolute_path)
    msg = e.message
    if e.validator == "additionalProperties":
        msg = msg.replace("Additional properties are not allowed", "unknown field")
        if known_paths and len(e.absolute_path) == 2 and e.absolute_path[0] == "scenarios":
            msg += f" (paths: {', '.join(PATH_INDEX)}; keys: description, modes, sysctl_params, sysctls)"
    elif e.validator == "propertyNames":
        msg = f"unknown key {e.instance!r}"
    elif e.validator == "enum":
        msg = f"{e.instance!r} is not one of {', '.join(map(str, e.validator_value))}"
    raise CampaignError(f"{source}: {where}: {msg}".replace("\n", " "))


def load_profiles(path: str | Path | None = None) -> dict[str, dict]:
    """The named link profiles (capture/campaigns/profiles.yaml unless ``path``)."""
    path = Path(path) if path else PROFILES_FILE
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as e:
        raise CampaignError(f"{path}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise CampaignError(f"{path}: not valid YAML: {str(e).splitlines()[0]}") from None
    _schema_error(jsonschema.Draft7Validator(PROFILES_SCHEMA), doc, str(path), known_paths=False)
    for name, prof in doc.items():
        for d in ("down", "up", None):
            part = prof.get(d) if d else prof
            if part and "delay_ms" in part and "rtt_ms" in part:
                raise CampaignError(f"{path}: {name}{'.' + d if d else ''}: give delay_ms or rtt_ms, not both")
    return doc


def _profiles_path(doc: dict, base_dir: Path | None) -> Path:
    if doc.get("profiles_file"):
        f = Path(doc["profiles_file"])
        return f if f.is_absolute() else (base_dir or Path.cwd()) / f
    return PROFILES_FILE


def _merge_profile(base: dict, over: dict) -> dict:
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    for k, v in over.items():
        if k in ("down", "up") and isinstance(out.get(k), dict):
            out[k] = {**out[k], **v}
        else:
            out[k] = v
    # an override of one form of the delay replaces the other form
    if "delay_ms" in over:
        out.pop("rtt_ms", None)
    if "rtt_ms" in over:
        out.pop("delay_ms", None)
    if "rate_mbit" in over:
        out.pop("trace", None)
    if "trace" in over:
        out.pop("rate_mbit", None)
    return out


def resolve_link(link, where: str, profiles: dict, prof_dir: Path, base_dir: Path | None) -> tuple[dict, str | None]:
    """A scenario's link (name, inline, or inline with ``profile:``) -> (profile dict, profile name)."""
    name = None
    if isinstance(link, str):
        name, over = link, {}
    else:
        over = {k: v for k, v in link.items() if k != "profile"}
        name = link.get("profile")
    if name is None:
        return dict(over), None
    if name not in profiles:
        close = [n for n in profiles if n.split("-")[0] == name.split("-")[0]] or list(profiles)
        raise CampaignError(f"{where}: unknown link profile {name!r} (known: {', '.join(sorted(close))})")
    named = _merge_profile(profiles[name], {})
    # traces of named profiles are relative to the profiles file: re-base them on the campaign's folder
    for part in (named, named.get("down"), named.get("up")):
        if isinstance(part, dict) and "trace" in part and not Path(part["trace"]).is_absolute():
            t = (prof_dir / part["trace"]).resolve()
            part["trace"] = os.path.relpath(t, (base_dir or Path.cwd()).resolve())
    prof = _merge_profile(named, over)
    return prof, name


def apply_scale(doc: dict, scale: str | None, source: str = "campaign") -> dict:
    """The campaign as run at ``scale``: the ``scales.<scale>`` keys override the top level."""
    scales = doc.get("scales") or {}
    out = {k: v for k, v in doc.items() if k != "scales"}
    if scale is None:
        return out
    if scale not in SCALES:
        raise CampaignError(f"{source}: --scale: {scale!r} is not one of {', '.join(SCALES)}")
    if scales and scale not in scales:
        raise CampaignError(f"{source}: scales: no {scale!r} scale (has: {', '.join(scales)})")
    out.update(scales.get(scale, {}))
    out["scale"] = scale
    return out


def scales_of(doc: dict) -> list[str | None]:
    return list(doc.get("scales") or {}) or [None]


def _check_tree(doc: dict, source: str, base_dir: Path | None) -> None:
    """Semantic checks of one (scale-applied) campaign jsonschema cannot express."""
    where_sc = f"{source}" + (f" (scale {doc['scale']})" if doc.get("scale") else "")
    for i, s in enumerate(doc.get("sizes", []) or []):
        if parse_size(s) <= 0:
            raise CampaignError(f"{where_sc}: sizes.{i}: size must be > 0 (got {s!r})")
    profiles = load_profiles(_profiles_path(doc, base_dir))
    prof_dir = _profiles_path(doc, base_dir).parent
    for name, sc in doc["scenarios"].items():
        for p in PATH_INDEX:
            if p not in sc:
                continue
            prof, _ = resolve_link(sc[p], f"{source}: scenarios.{name}.{p}", profiles, prof_dir, base_dir)
            for d in ("down", "up", None):
                part = prof.get(d) if d else prof
                if part and "delay_ms" in part and "rtt_ms" in part:
                    raise CampaignError(f"{source}: scenarios.{name}.{p}{'.' + d if d else ''}: give delay_ms or rtt_ms, not both")
            for d in ("down", "up"):
                tr = (prof.get(d) or {}).get("trace") or prof.get("trace")
                if tr and not ((base_dir or Path.cwd()) / tr).is_file():
                    raise CampaignError(f"{source}: scenarios.{name}.{p}: trace file {tr!r} not found")
    if doc.get("sysctl_profile"):
        from .kernel import load_profile
        for name, sc in [(None, {})] + list(doc["scenarios"].items()):
            try:
                load_profile(doc["sysctl_profile"], {**(doc.get("sysctl_params") or {}), **(sc.get("sysctl_params") or {})})
            except ValueError as e:
                raise CampaignError(f"{source}: {'scenarios.' + name + '.sysctl_params: ' if name else ''}{e}") from None
    for i, n in enumerate(doc.get("only_scenarios") or []):
        if n not in doc["scenarios"]:
            raise CampaignError(f"{where_sc}: only_scenarios.{i}: unknown scenario {n!r}")
    modes = doc.get("modes") or []
    runs = doc.get("runs") or []
    if not runs or modes:
        if not modes:
            raise CampaignError(f"{where_sc}: modes: required unless runs is given")
        if not (doc.get("sizes") or doc.get("ditg")):
            raise CampaignError(f"{where_sc}: sizes: give sizes and/or ditg (a campaign needs a workload)")
    for i, r in enumerate(runs):
        if r["scenario"] not in doc["scenarios"]:
            raise CampaignError(f"{where_sc}: runs.{i}.scenario: unknown scenario {r['scenario']!r}")
        wl = r.get("workload", "http")
        if wl in SIZED:
            if "size" not in r:
                raise CampaignError(f"{where_sc}: runs.{i}.size: required for the {wl} workload")
            if parse_size(r["size"]) <= 0:
                raise CampaignError(f"{where_sc}: runs.{i}.size: size must be > 0 (got {r['size']!r})")
        need = {"SP-wifi": ["wifi"], "SP-lte": ["lte"]}.get(r["mode"], ["wifi", "lte"])
        for p in need:
            if p not in doc["scenarios"][r["scenario"]]:
                raise CampaignError(f"{where_sc}: runs.{i}: mode {r['mode']} needs a {p!r} link in scenario {r['scenario']!r}")
    # every scenario must provide the paths its modes use
    for name, sc in doc["scenarios"].items():
        for m in (sc["modes"] if "modes" in sc else modes):
            need = {"SP-wifi": ["wifi"], "SP-lte": ["lte"]}.get(m, ["wifi", "lte"])
            for p in need:
                if p not in sc:
                    raise CampaignError(f"{source}: scenarios.{name}: mode {m} needs a {p!r} link profile")


def validate(doc, source: str = "campaign", base_dir: Path | None = None, scale: str | None = None) -> dict:
    """Validate a campaign document (at every scale it declares, or only ``scale``);
    raise CampaignError with a one-line message naming the field. Returns ``doc``."""
    if not isinstance(doc, dict):
        raise CampaignError(f"{source}: the campaign must be a mapping")
    _schema_error(jsonschema.Draft7Validator(SCHEMA), doc, source)
    for sc in ([scale] if scale else scales_of(doc)):
        _check_tree(apply_scale(doc, sc, source), source, base_dir)
    return doc


def load(path: str | Path, scale: str | None = None) -> dict:
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise CampaignError(f"{path}: not valid YAML: {str(e).splitlines()[0]}") from None
    except OSError as e:
        raise CampaignError(f"{path}: {e.strerror}") from None
    return validate(doc, str(path), base_dir=path.resolve().parent, scale=scale)


def expand(doc: dict, base_dir: Path | None = None, scale: str | None = None):
    """All runs of the campaign (at ``scale``) as RunSpecs, in the campaign's randomized order."""
    from .experiment import RunSpec

    if scale is None and doc.get("scales"):
        scale = "quick" if "quick" in doc["scales"] else next(iter(doc["scales"]))
    doc = apply_scale(doc, scale)
    base = Path(base_dir) if base_dir else None
    profiles = load_profiles(_profiles_path(doc, base))
    prof_dir = _profiles_path(doc, base).parent
    links: dict[str, dict] = {}
    for name, sc in doc["scenarios"].items():
        res = {p: resolve_link(sc[p], f"scenarios.{name}.{p}", profiles, prof_dir, base) for p in PATH_INDEX if p in sc}
        links[name] = {"profiles": {p: v[0] for p, v in res.items()},
                       "names": {p: v[1] for p, v in res.items() if v[1]},
                       "sysctl_params": {**(doc.get("sysctl_params") or {}), **(sc.get("sysctl_params") or {})},
                       "sysctls": {**(doc.get("sysctls") or {}), **(sc.get("sysctls") or {})}}

    cc = doc.get("congestion_control")
    if not cc and doc.get("sysctl_profile"):
        from .kernel import load_profile
        cc = load_profile(doc["sysctl_profile"], doc.get("sysctl_params")).get("congestion_control")
    cc = cc or "cubic"
    common = dict(campaign=doc["name"], scheduler=doc.get("scheduler", "default"),
                  sysctl_profile=doc.get("sysctl_profile"), timeout_s=doc.get("timeout_s", 120),
                  keep_interface_pcaps=doc.get("keep_interface_pcaps", True), scale=scale,
                  base_dir=str(base_dir) if base_dir else None)
    seed = int(doc.get("seed", 1))

    def spec(run_id, sc, **kw):
        L = links[sc]
        return RunSpec(run_id=run_id, scenario=sc, profiles=L["profiles"], profile_names=L["names"],
                       sysctl_params=L["sysctl_params"], sysctls=L["sysctls"], **common, **kw)

    explicit = []
    for r in doc.get("runs") or []:
        wl = r.get("workload", "http")
        explicit.append(spec(r["id"], r["scenario"], mode=r["mode"], workload=wl,
                             size_bytes=parse_size(r["size"]) if wl in SIZED else 0,
                             duration_s=r.get("duration_s", 30) if wl not in SIZED else 0,
                             primary_path=r.get("primary_path", "wifi"), repetition=r.get("repetition", 1),
                             seed=seed, congestion_control=r.get("congestion_control", cc),
                             force_tbf=r.get("force_tbf", doc.get("force_tbf", False))))
    if not doc.get("modes"):
        return explicit  # explicit runs only: they keep their order
    wls = [("http", parse_size(s), 0.0) for s in doc.get("sizes", []) or []]
    if doc.get("ditg"):
        wls += [(f"ditg-{p}", 0, float(doc["ditg"].get("duration_s", 30))) for p in doc["ditg"]["profiles"]]
    mp_ccs = doc.get("congestion_controls") or [cc]
    only = doc.get("only_scenarios")
    specs = []
    for sc, scd in doc["scenarios"].items():
        if only and sc not in only:
            continue
        for mode in (scd["modes"] if "modes" in scd else doc["modes"]):
            prims = doc.get("primary_paths", ["wifi"]) if not mode.startswith("SP") else [mode[3:]]
            ccs = [cc] if mode.startswith("SP") else mp_ccs
            for c in ccs:
                mtag = f"{mode}-{c}" if len(mp_ccs) > 1 and not mode.startswith("SP") else mode
                for prim in prims:
                    for wl, size, dur in wls:
                        for rep in range(1, int(doc.get("repetitions", 1)) + 1):
                            tag = size_tag(size) if wl == "http" else wl
                            specs.append(spec(f"{sc}_{mtag}_{tag}_{prim}_r{rep}", sc, mode=mode, workload=wl,
                                              size_bytes=size, duration_s=dur, primary_path=prim,
                                              repetition=rep, seed=seed, congestion_control=c,
                                              force_tbf=doc.get("force_tbf", False)))
    specs += explicit
    ids = [s.run_id for s in specs]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise CampaignError(f"{doc['name']}: duplicate run ids {sorted(dup)[:3]}")
    rng = random.Random(seed)
    rng.shuffle(specs)
    for i, s in enumerate(specs):
        s.seed = seed * 100003 + i
        s.order_index = i
    return specs


# --- duration estimate (for the quick-scale budget; no capture needed) -------------
RUN_OVERHEAD_S = {"http": 3.5, "ditg": 4.5}  # namespaces, linkem, tcpdump, teardown (measured here)


def _trace_mean_mbit(path: Path) -> float:
    try:
        lines = path.read_text().split()
        return (len(lines) - 1) * 1500 * 8 / (int(lines[-1]) / 1000) / 1e6
    except (OSError, ValueError, IndexError, ZeroDivisionError):
        return 10.0


def path_estimate(profile: dict, base_dir: Path | None = None) -> tuple[float, float]:
    """(expected TCP throughput in Mbit/s, base RTT in s) of a link profile, for planning:
    the bottleneck rate, capped by the Mathis et al. loss bound 1.22·MSS/(RTT·√p)."""
    from .emulator import direction
    down, up = direction(profile, "down"), direction(profile, "up")
    rtt = (float(down.get("delay_ms", 0)) + float(up.get("delay_ms", 0))) / 1000 + 0.0005
    if "trace" in down:
        t = Path(down["trace"])
        rate = _trace_mean_mbit(t if t.is_absolute() else (base_dir or Path.cwd()) / t)
    else:
        rate = float(down.get("rate_mbit", 1000))
    loss = down.get("loss", 0)
    p = float(loss) if not isinstance(loss, dict) else (
        loss.get("p", 0) if loss.get("model") == "bernoulli" else
        loss.get("p_gb", 0) / max(loss.get("p_gb", 0) + loss.get("p_bg", 1), 1e-9) * loss.get("loss_bad", 1))
    if p > 0:
        rate = min(rate, 1.22 * 1448 * 8 / (max(rtt, 0.002) * p ** 0.5) / 1e6)
    return rate * 0.85, rtt


def estimate_s(spec, base_dir: Path | None = None) -> float:
    """Rough wall time of one run (seconds): set-up/teardown plus the workload."""
    if spec.workload not in SIZED:
        return RUN_OVERHEAD_S["ditg"] + spec.duration_s
    base = Path(spec.base_dir) if spec.base_dir else base_dir
    paths = spec.paths if spec.mode != "backup" else [spec.primary]
    est = [path_estimate(spec.profiles[p], base) for p in paths]
    rate = sum(r for r, _ in est)
    rtt = max(t for _, t in est)
    outage = sum(o[1] - o[0] for p in spec.paths for o in spec.profiles[p].get("outages", []))
    t = 2.5 * rtt + 6 * rtt + spec.size_bytes * 8 / (rate * 1e6) + outage / max(len(spec.paths), 1)
    return RUN_OVERHEAD_S["http"] + min(t, spec.timeout_s)


def plan(path: str | Path, scale: str | None = None) -> dict:
    """Run count and estimated wall time of a campaign file at ``scale``."""
    path = Path(path)
    doc = load(path, scale)
    specs = expand(doc, base_dir=path.resolve().parent, scale=scale)
    est = sum(estimate_s(s) for s in specs)
    return {"campaign": doc["name"], "scale": scale, "runs": len(specs), "estimated_s": round(est, 1)}


def run_campaign(path: str | Path, out: str | Path, flat: bool = False, only: str | None = None,
                 dry_run: bool = False, progress: bool = True, scale: str | None = None) -> dict:
    """Run a campaign at ``scale``; finished runs (DONE marker) are skipped, half runs redone."""
    from tqdm import tqdm

    from .experiment import DONE, run_one
    from .topology import sweep
    from .util import log

    path = Path(path)
    doc = load(path, scale)
    specs = expand(doc, base_dir=path.resolve().parent, scale=scale)
    if only:
        specs = [s for s in specs if re.search(only, s.run_id)]
    root = Path(out) if flat else Path(out) / doc["name"]
    todo, done = [], []
    for s in specs:
        (done if (root / s.run_id / DONE).exists() else todo).append(s)
    summary = {"campaign": doc["name"], "scale": specs[0].scale if specs else scale, "total": len(specs),
               "skipped_done": len(done), "estimated_s": round(sum(estimate_s(s) for s in todo), 1),
               "todo": [s.run_id for s in todo], "ok": [], "failed": {}}
    if dry_run:
        return summary
    root.mkdir(parents=True, exist_ok=True)
    (root / "campaign.yaml").write_text(path.read_text()) if not flat else None
    sweep()
    t0 = time.monotonic()
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
        summary["wall_s"] = round(time.monotonic() - t0, 1)
    (root / "campaign-status.json").write_text(json.dumps(summary, indent=1) + "\n") if not flat else None
    return summary
