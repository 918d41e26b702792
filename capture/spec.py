"""Campaign specs: load a campaign YAML, validate it (capture/campaign.schema.yaml plus
the checks a schema cannot express), expand it into runs.

Pure: nothing here touches the testbed (no namespaces, processes or root), so the
workflow, planners and tests import it anywhere; capture/campaign.py runs the runs.
"""
from __future__ import annotations

import os
import random
from collections import Counter
import re
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema
import yaml

from pipeline.derived import study_of

from .kernel import load_profile
from .scales import SCALES, default_scale

# Which paths each mode uses. The run spec (RunSpec.paths) and the validation (every
# scenario links the paths its modes use; the schema's mode and path enums) read it.
MODE_PATHS: dict[str, tuple[str, ...]] = {
    "SP-wifi": ("wifi",),
    "SP-lte": ("lte",),
    "MP-2": ("wifi", "lte"),
    "MP-4": ("wifi", "lte"),   # two paths, two service addresses: four subflows
    "backup": ("wifi", "lte"),
    "MP-3": ("wifi", "lte", "eth"),  # three client interfaces (CS244's handover: Ethernet, WiFi, 3G)
}
MODES = tuple(MODE_PATHS)
# path -> subnet 10.<i>.0.0/24 and routing table 100+i
PATH_INDEX = {"wifi": 1, "lte": 2, "eth": 3}

SCHEMA_FILE = Path(__file__).resolve().parent / "campaign.schema.yaml"
# A campaign's named link profiles: its `profiles_file`, else profiles.yaml beside it
# (each paper's folder has one: papers/<paper>/profiles.yaml).
PROFILES_NAME = "profiles.yaml"


def _load_schema() -> dict:
    doc = yaml.safe_load(SCHEMA_FILE.read_text())
    d = doc["definitions"]
    d["mode"]["enum"] = list(MODE_PATHS)
    d["path"]["enum"] = list(PATH_INDEX)
    d["scenario"]["properties"].update({p: {"$ref": "#/definitions/link"} for p in PATH_INDEX})
    doc["properties"]["scales"]["propertyNames"]["enum"] = list(SCALES)  # capture/scales.py
    return doc


SCHEMA = _load_schema()
WORKLOADS = tuple(SCHEMA["definitions"]["workload"]["enum"])
SIZED = ("http", "iperf3-up")  # workloads given a size (bytes to move)
SIZE_RE = re.compile(SCHEMA["definitions"]["size"]["oneOf"][1]["pattern"], re.I)
SIZE_UNITS = {None: 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3,
              "kib": 1024, "mib": 1024**2, "gib": 1024**3}
_CAMPAIGN_V = jsonschema.Draft7Validator(SCHEMA)
# the profiles file: the same document, entered at definitions.profiles_file
_PROFILES_V = jsonschema.Draft7Validator({**SCHEMA, "$ref": "#/definitions/profiles_file"})

# Stalls (capture/health.py): a run whose emulator left a frame more than late_ms
# late is "stalled" (docs/DESIGN.md: no stall over 5 ms); campaigns that name their
# paper repeat such a run up to `repeats` times unless they say otherwise.
STALL_RETRY = {"late_ms": 5.0, "repeats": 2}

# Link profile keys (capture/emulator.py maps them onto linkem or tbf).
DIRECTION_KEYS = {"delay_ms", "jitter_ms", "loss", "llr", "rate_mbit", "trace", "trace_offset_ms", "queue_bytes",
                  "queue_packets", "outages"}
PROFILE_KEYS = DIRECTION_KEYS | {"rtt_ms", "down", "up", "by_size"}


class CampaignError(ValueError):
    pass


@dataclass
class RunSpec:
    run_id: str
    campaign: str
    scenario: str
    mode: str                          # a key of MODE_PATHS
    profiles: dict[str, dict]          # path -> link profile
    workload: str = "http"             # http | iperf3-up | iperf3-down | ditg-netflix | ditg-maps | ditg-docs
    size_bytes: int = 0                # http and iperf3-up only
    duration_s: float = 0              # ditg and iperf3-down only
    primary_path: str = "wifi"
    repetition: int = 1
    congestion_control: str = "cubic"
    scheduler: str = "default"
    sysctl_profile: str | None = None  # kernel-config/profiles/<name>.yaml
    sysctl_params: dict = field(default_factory=dict)
    seed: int = 1                      # this run's seed (emulator loss/jitter, file content, D-ITG)
    campaign_seed: int = 1             # the campaign's seed it was drawn from (meta.json)
    order_index: int | None = None
    force_tbf: bool = False
    keep_interface_pcaps: bool = True
    timeout_s: float = 120
    base_dir: str | None = None        # where relative trace paths resolve (the campaign's folder)
    profile_names: dict[str, str] = field(default_factory=dict)  # path -> name in the profiles file
    sysctls: dict = field(default_factory=dict)  # extra per-namespace sysctls (after the profile's)
    scale: str | None = None           # campaign scale (quick | paper) the run belongs to
    stall_ms: float = STALL_RETRY["late_ms"]  # worst lateness above this = a stalled run
    stall_repeats: int = 0             # how often a stalled run is repeated
    # the client's interfaces taken away and given back during the run (scenario key
    # ``unplug``: [{path, at_s, replug_s}], seconds after the workload starts)
    unplug: list[dict] = field(default_factory=list)
    sample_socket_buffers: bool = False  # ss skmem every 100 ms (capture/sockbuf.py)
    # the study (papers/<id>) the campaign's runs are for: its ``study`` key (a copy
    # renamed chen-seed7 still says chen), else (None here) what the campaign's name
    # says (pipeline.derived's one rule: chen-findings-mini is chen's)
    study: str | None = None

    def __post_init__(self):
        if self.study is None:
            self.study = study_of(self.campaign)

    @property
    def paths(self) -> list[str]:
        return list(MODE_PATHS[self.mode])

    @property
    def mptcp(self) -> bool:
        return len(MODE_PATHS[self.mode]) > 1

    @property
    def primary(self) -> str:
        return self.primary_path if self.mptcp else self.paths[0]


def direction(profile: dict, d: str) -> dict:
    """The effective settings of one direction ("down" or "up") of a profile."""
    res: dict = {}
    if "rtt_ms" in profile:
        res["delay_ms"] = profile["rtt_ms"] / 2
    for k in DIRECTION_KEYS:
        if k in profile:
            res[k] = profile[k]
    res.update(profile.get(d) or {})
    if "rtt_ms" in (profile.get(d) or {}):
        res["delay_ms"] = res.pop("rtt_ms") / 2
    return res


def _drop_keys(entry: dict, over: dict) -> dict:
    """``entry`` without the settings ``over`` gives (per direction too)."""
    out = {}
    for k, v in entry.items():
        if k in ("down", "up") and isinstance(v, dict):
            rest = {kk: vv for kk, vv in v.items() if kk not in (over.get(k) or {}) and kk not in over}
            if rest:
                out[k] = rest
        elif k not in over and not (k in ("rtt_ms", "delay_ms") and ({"rtt_ms", "delay_ms"} & set(over))):
            out[k] = v
    return out


def at_size(profile: dict, size: int) -> dict:
    """A profile as it applies to a download of ``size`` bytes: its ``by_size`` entry for
    that size (if any) merged over it, ``by_size`` itself gone (the emulator and meta.json
    see one set of settings)."""
    by = profile.get("by_size")
    if not by:
        return profile
    base = {k: v for k, v in profile.items() if k != "by_size"}
    over = next((v for k, v in by.items() if parse_size(k) == size), None)
    return _merge_profile(base, over) if over else base


def parse_size(v) -> int:
    if isinstance(v, int):
        return v
    m = SIZE_RE.match(str(v))
    if not m:
        raise ValueError(f"bad size {v!r}")
    unit = m.group(2).lower() if m.group(2) else None
    return int(float(m.group(1)) * SIZE_UNITS[unit])


def ditg_duration(ditg: dict, profile: str) -> float:
    """A D-ITG test's duration: ``duration_s``, a number or a mapping profile -> seconds."""
    d = ditg.get("duration_s", 30)
    return float(d.get(profile, 30) if isinstance(d, dict) else d)


def _scenario_keeps(scd: dict, workload: str, size: int, duration_s: float) -> bool:
    """A scenario's ``only_sizes`` / ``only_ditg_profiles`` keep a subset of the campaign's
    workloads (at every scale: they filter the scale's lists, they add nothing)."""
    if workload == "http" and "only_sizes" in scd:
        return size in {parse_size(x) for x in scd["only_sizes"]}
    if workload.startswith("ditg-") and "only_ditg_profiles" in scd:
        return workload[5:] in scd["only_ditg_profiles"]
    return True


def scenario_workloads(scd: dict, wls: list[tuple[str, int, float]]) -> list[tuple[str, int, float]]:
    """The campaign's workloads as one scenario runs them: its filters keep a subset, and its
    own ``iperf3_down`` replaces the campaign's long-lived download (a flow as long as the
    scenario's outage schedule needs)."""
    out = [w for w in wls if _scenario_keeps(scd, *w)]
    if "iperf3_down" in scd:
        out = [w for w in out if w[0] != "iperf3-down"] + [("iperf3-down", 0, float(scd["iperf3_down"]["duration_s"]))]
    return out


def workload_tag(workload: str, size: int, duration_s: float) -> str:
    """The workload part of a run id: the size of a download, ``iperf3-down-40s``, or the D-ITG profile."""
    if workload == "http":
        return size_tag(size)
    if workload == "iperf3-down":
        return f"iperf3-down-{duration_s:g}s"
    return workload


def size_tag(n: int) -> str:
    for unit, f in (("MB", 1000**2), ("KB", 1000), ("MiB", 1024**2), ("KiB", 1024)):
        if n % f == 0:
            return f"{n // f}{unit}"
    return f"{n}B"


def stall_retry(doc: dict) -> tuple[float, int]:
    """(late_ms, repeats) of a campaign's ``stall_retry`` (see STALL_RETRY)."""
    opt = doc.get("stall_retry", bool(doc.get("paper")))
    if opt is False:
        return STALL_RETRY["late_ms"], 0
    opt = {} if opt is True else opt
    return float(opt.get("late_ms", STALL_RETRY["late_ms"])), int(opt.get("repeats", STALL_RETRY["repeats"]))


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
            msg += f" (paths: {', '.join(PATH_INDEX)}; keys: description, modes, only_sizes, only_ditg_profiles, only_congestion_controls, repetitions, repetitions_by_workload, iperf3_down, sysctl_params, sysctls, unplug)"
    elif e.validator == "propertyNames":
        msg = f"unknown key {e.instance!r}"
    elif e.validator == "enum":
        msg = f"{e.instance!r} is not one of {', '.join(map(str, e.validator_value))}"
    raise CampaignError(f"{source}: {where}: {msg}".replace("\n", " "))


def load_profiles(path: str | Path | None) -> dict[str, dict]:
    """The named link profiles of ``path`` (none when ``path`` is None)."""
    if path is None:
        return {}
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as e:
        raise CampaignError(f"{path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise CampaignError(f"{path}: not a text file (profiles are YAML)") from None
    except yaml.YAMLError as e:
        raise CampaignError(f"{path}: not valid YAML: {str(e).splitlines()[0]}") from None
    _schema_error(_PROFILES_V, doc, str(path), known_paths=False)
    for name, prof in doc.items():
        for d in ("down", "up", None):
            part = prof.get(d) if d else prof
            if part and "delay_ms" in part and "rtt_ms" in part:
                raise CampaignError(f"{path}: {name}{'.' + d if d else ''}: give delay_ms or rtt_ms, not both")
    return doc


def _profiles_path(doc: dict, base_dir: Path | None) -> Path | None:
    """The campaign's profiles file: ``profiles_file``, else profiles.yaml beside the
    campaign (None when there is neither: inline links only)."""
    if doc.get("profiles_file"):
        f = Path(doc["profiles_file"])
        return f if f.is_absolute() else (base_dir or Path.cwd()) / f
    beside = (base_dir or Path.cwd()) / PROFILES_NAME
    return beside if beside.is_file() else None


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
        out.pop("trace_offset_ms", None)
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
    if over and "by_size" in prof:
        # the scenario's own settings win over the named profile's per-size ones
        prof["by_size"] = {k: _drop_keys(v, over) for k, v in prof["by_size"].items()}
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
    block = dict(scales.get(scale, {}))
    filters = block.pop("scenario_filters", None) or {}
    out.update(block)
    if filters:
        # this scale's cut of the matrix: per scenario, which modes and which of the
        # scale's sizes / D-ITG profiles / congestion controls it runs
        out["scenarios"] = {name: {**sc, **filters.get(name, {})} for name, sc in doc["scenarios"].items()}
        unknown = sorted(set(filters) - set(doc["scenarios"]))
        if unknown:
            raise CampaignError(f"{source}: scales.{scale}.scenario_filters: unknown scenario {unknown[0]!r}")
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
    prof_file = _profiles_path(doc, base_dir)
    profiles = load_profiles(prof_file)
    prof_dir = prof_file.parent if prof_file else (base_dir or Path.cwd())
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
                if "llr" in direction(prof, d) and "loss" not in direction(prof, d):
                    raise CampaignError(f"{source}: scenarios.{name}.{p}.{d}: llr retransmits what the radio "
                                        "loses: give that direction a loss (0 for none)")
                if "trace_offset_ms" in direction(prof, d) and "trace" not in direction(prof, d):
                    raise CampaignError(f"{source}: scenarios.{name}.{p}.{d}: trace_offset_ms is the phase a trace "
                                        "starts at: give that direction a trace")
                tr = (prof.get(d) or {}).get("trace") or prof.get("trace")
                if tr and not ((base_dir or Path.cwd()) / tr).is_file():
                    raise CampaignError(f"{source}: scenarios.{name}.{p}: trace file {tr!r} not found")
    if doc.get("sysctl_profile"):
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
        if not (doc.get("sizes") or doc.get("ditg") or doc.get("iperf3_down")):
            raise CampaignError(f"{where_sc}: sizes: give sizes, ditg and/or iperf3_down (a campaign needs a "
                                "workload)")
    for i, r in enumerate(runs):
        if r["scenario"] not in doc["scenarios"]:
            raise CampaignError(f"{where_sc}: runs.{i}.scenario: unknown scenario {r['scenario']!r}")
        wl = r.get("workload", "http")
        if wl in SIZED:
            if "size" not in r:
                raise CampaignError(f"{where_sc}: runs.{i}.size: required for the {wl} workload")
            if parse_size(r["size"]) <= 0:
                raise CampaignError(f"{where_sc}: runs.{i}.size: size must be > 0 (got {r['size']!r})")
        for p in MODE_PATHS[r["mode"]]:
            if p not in doc["scenarios"][r["scenario"]]:
                raise CampaignError(f"{where_sc}: runs.{i}: mode {r['mode']} needs a {p!r} link in scenario {r['scenario']!r}")
    # every scenario must provide the paths its modes use
    for name, sc in doc["scenarios"].items():
        for m in (sc["modes"] if "modes" in sc else modes):
            for p in MODE_PATHS[m]:
                if p not in sc:
                    raise CampaignError(f"{source}: scenarios.{name}: mode {m} needs a {p!r} link profile")
        if sc.get("unplug"):
            run_modes = (sc["modes"] if "modes" in sc else modes) + [r["mode"] for r in runs if r["scenario"] == name]
            _check_unplug(sc["unplug"], run_modes, f"{where_sc}: scenarios.{name}.unplug")


def _check_unplug(events: list[dict], run_modes: list[str], where: str) -> None:
    """A scenario's ``unplug`` schedule: each event's replug after its unplug, one path's
    events in order without overlap, and a path that every run of the scenario has (an
    interface the run does not have cannot be unplugged)."""
    last: dict[str, float] = {}
    for i, e in enumerate(events):
        if e["replug_s"] <= e["at_s"]:
            raise CampaignError(f"{where}.{i}.replug_s: {e['replug_s']:g} is not after at_s {e['at_s']:g}")
        if e["at_s"] < last.get(e["path"], -1.0):
            raise CampaignError(f"{where}.{i}.at_s: {e['at_s']:g} is before the replug of path {e['path']!r} at "
                                f"{last[e['path']]:g} (give one path's events in order, without overlap)")
        last[e["path"]] = e["replug_s"]
        for m in dict.fromkeys(run_modes):
            if e["path"] not in MODE_PATHS[m]:
                raise CampaignError(f"{where}.{i}.path: mode {m} has no {e['path']!r} path to unplug")


def validate(doc, source: str = "campaign", base_dir: Path | None = None, scale: str | None = None) -> dict:
    """Validate a campaign document (at every scale it declares, or only ``scale``);
    raise CampaignError with a one-line message naming the field. Returns ``doc``."""
    if not isinstance(doc, dict):
        raise CampaignError(f"{source}: the campaign must be a mapping")
    _schema_error(_CAMPAIGN_V, doc, source)
    for sc in ([scale] if scale else scales_of(doc)):
        _check_tree(apply_scale(doc, sc, source), source, base_dir)
    return doc


def load(path: str | Path, scale: str | None = None) -> dict:
    path = Path(path)
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise CampaignError(f"{path}: not a text file (a campaign is YAML)") from None
    except OSError as e:
        raise CampaignError(f"{path}: {e.strerror}") from None
    return parse(text, path, scale)


def parse(text: str, path: str | Path, scale: str | None = None) -> dict:
    """A campaign's YAML ``text`` read as if it were the file ``path``: its profiles and
    traces resolve beside ``path`` (a trial of an edited campaign needs no file)."""
    path = Path(path)
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise CampaignError(f"{path}: not valid YAML: {str(e).splitlines()[0]}") from None
    return validate(doc, str(path), base_dir=path.resolve().parent, scale=scale)


def expand(doc: dict, base_dir: Path | None = None, scale: str | None = None,
           seed: int | None = None) -> list[RunSpec]:
    """All runs of the campaign (at ``scale``) as RunSpecs, in the campaign's randomized order.

    ``seed`` replaces the campaign's ``seed``: every random draw of a run (the order of
    the runs, the emulator's losses and jitter, the served file, D-ITG's generator)
    comes from it, so the same seed repeats a capture exactly and a new seed gives an
    independent replicate of it."""
    if scale is None and doc.get("scales"):
        scale = default_scale(doc["scales"])
    doc = apply_scale(doc, scale)
    links = _scenario_links(doc, Path(base_dir) if base_dir else None)
    cc = _default_cc(doc)
    common = dict(campaign=doc["name"], study=doc.get("study"), scheduler=doc.get("scheduler", "default"),
                  sysctl_profile=doc.get("sysctl_profile"), timeout_s=doc.get("timeout_s", 120),
                  keep_interface_pcaps=doc.get("keep_interface_pcaps", True), scale=scale,
                  sample_socket_buffers=bool(doc.get("sample_socket_buffers", False)),
                  base_dir=str(base_dir) if base_dir else None)
    seed = int(doc.get("seed", 1)) if seed is None else int(seed)
    common["campaign_seed"] = seed
    common["stall_ms"], common["stall_repeats"] = stall_retry(doc)

    def spec(run_id: str, sc: str, **kw) -> RunSpec:
        return _run_spec(doc["name"], links[sc], common, run_id, sc, **kw)

    explicit = _explicit_runs(doc, spec, seed, cc)
    if not doc.get("modes"):
        return explicit  # explicit runs only: they keep their order
    specs = _matrix_runs(doc, spec, seed, cc) + explicit
    dup = {i for i, n in Counter(s.run_id for s in specs).items() if n > 1}  # (ids.count: 40 s at 80k runs)
    if dup:
        raise CampaignError(f"{doc['name']}: duplicate run ids {sorted(dup)[:3]}")
    rng = random.Random(seed)
    rng.shuffle(specs)
    for i, s in enumerate(specs):
        s.seed = seed * 100003 + i
        s.order_index = i
    return specs


def matrix_run_id(configuration: str, repetition: int) -> str:
    """A matrix run's id: its configuration (scenario, mode, workload, primary path) and
    repetition; ``configuration`` undoes it."""
    return f"{configuration}_r{repetition}"


def configuration(run_id: str) -> str:
    """The configuration part of a matrix run's id (``matrix_run_id``): runs of one configuration
    differ only in their repetition (and seed)."""
    return run_id.rsplit("_r", 1)[0]


def _scenario_links(doc: dict, base: Path | None) -> dict[str, dict]:
    """Per scenario what its runs share: its paths' link profiles (resolved against the
    campaign's profiles file) and their names, its sysctl parameters and sysctls (over
    the campaign's) and its unplug schedule."""
    prof_file = _profiles_path(doc, base)
    profiles = load_profiles(prof_file)
    prof_dir = prof_file.parent if prof_file else (base or Path.cwd())
    links: dict[str, dict] = {}
    for name, sc in doc["scenarios"].items():
        res = {p: resolve_link(sc[p], f"scenarios.{name}.{p}", profiles, prof_dir, base) for p in PATH_INDEX if p in sc}
        links[name] = {"profiles": {p: v[0] for p, v in res.items()},
                       "names": {p: v[1] for p, v in res.items() if v[1]},
                       "sysctl_params": {**(doc.get("sysctl_params") or {}), **(sc.get("sysctl_params") or {})},
                       "sysctls": {**(doc.get("sysctls") or {}), **(sc.get("sysctls") or {})},
                       "unplug": [dict(e) for e in sc.get("unplug") or []]}
    return links


def _default_cc(doc: dict) -> str:
    """The campaign's congestion control: its own, else its sysctl profile's, else cubic."""
    cc = doc.get("congestion_control")
    if not cc and doc.get("sysctl_profile"):
        cc = load_profile(doc["sysctl_profile"], doc.get("sysctl_params")).get("congestion_control")
    return cc or "cubic"


def _run_spec(campaign: str, links: dict, common: dict, run_id: str, sc: str, **kw) -> RunSpec:
    """One run of scenario ``sc`` (``links``: what its runs share, ``_scenario_links``)."""
    if links["unplug"] and kw["workload"].startswith("ditg-"):
        # D-ITG's connection is the server's (ITGSend): the client's addresses are
        # signalled, not endpoints an address manager would remove and re-add
        raise CampaignError(f"{campaign}: scenarios.{sc}.unplug: not with D-ITG workloads (run {run_id}); "
                            "unplug runs need a client-initiated workload (sizes, iperf3_down)")
    profiles = {p: at_size(prof, kw.get("size_bytes") or 0) for p, prof in links["profiles"].items()}
    return RunSpec(run_id=run_id, scenario=sc, profiles=profiles, profile_names=links["names"],
                   sysctl_params=links["sysctl_params"], sysctls=links["sysctls"],
                   unplug=[dict(e) for e in links["unplug"]], **common, **kw)


def _explicit_runs(doc: dict, spec, seed: int, cc: str) -> list[RunSpec]:
    """The campaign's ``runs``, in their order (``spec``: makes one run, see ``expand``)."""
    explicit = []
    for r in doc.get("runs") or []:
        wl = r.get("workload", "http")
        explicit.append(spec(r["id"], r["scenario"], mode=r["mode"], workload=wl,
                             size_bytes=parse_size(r["size"]) if wl in SIZED else 0,
                             duration_s=r.get("duration_s", 30) if wl not in SIZED else 0,
                             primary_path=r.get("primary_path", "wifi"), repetition=r.get("repetition", 1),
                             seed=seed, congestion_control=r.get("congestion_control", cc),
                             force_tbf=r.get("force_tbf", doc.get("force_tbf", False))))
    return explicit


def _campaign_workloads(doc: dict) -> list[tuple[str, int, float]]:
    """The campaign's workloads as (workload, size, duration_s): its sizes, its D-ITG
    profiles, its long-lived download."""
    wls = [("http", parse_size(s), 0.0) for s in doc.get("sizes", []) or []]
    if doc.get("ditg"):
        wls += [(f"ditg-{p}", 0, ditg_duration(doc["ditg"], p)) for p in doc["ditg"]["profiles"]]
    if doc.get("iperf3_down"):
        wls.append(("iperf3-down", 0, float(doc["iperf3_down"]["duration_s"])))
    return wls


def _repetitions(doc: dict, scd: dict, tag: str) -> int:
    """A workload's repetitions in a scenario: its own (``repetitions_by_workload``: the
    runs a claim's plan asks, papers/<paper>/planned_n.yaml), the scenario's, the campaign's."""
    by = scd.get("repetitions_by_workload") or {}
    return int(by.get(tag, scd.get("repetitions", doc.get("repetitions", 1))))


def _matrix_runs(doc: dict, spec, seed: int, cc: str) -> list[RunSpec]:
    """The campaign's matrix: per scenario (of ``only_scenarios``), mode, congestion
    control (MPTCP modes), primary path, workload and repetition, one run."""
    wls = _campaign_workloads(doc)
    mp_ccs = doc.get("congestion_controls") or [cc]
    only = doc.get("only_scenarios")
    specs = []
    for sc, scd in doc["scenarios"].items():
        if only and sc not in only:
            continue
        sc_wls = scenario_workloads(scd, wls)
        unknown = sorted(set(scd.get("repetitions_by_workload") or {}) - {workload_tag(*w) for w in sc_wls})
        if unknown:
            raise CampaignError(f"scenarios.{sc}.repetitions_by_workload: {unknown[0]!r} is not a workload this "
                                f"scenario runs (it runs: {', '.join(workload_tag(*w) for w in sc_wls)})")
        for mode in (scd["modes"] if "modes" in scd else doc["modes"]):
            single = len(MODE_PATHS[mode]) == 1
            prims = list(MODE_PATHS[mode]) if single else doc.get("primary_paths", ["wifi"])
            ccs = [cc] if single else [c for c in mp_ccs if c in scd.get("only_congestion_controls", mp_ccs)]
            for c in ccs:
                mtag = f"{mode}-{c}" if len(mp_ccs) > 1 and not single else mode
                for prim in prims:
                    for wl, size, dur in sc_wls:
                        tag = workload_tag(wl, size, dur)
                        for rep in range(1, _repetitions(doc, scd, tag) + 1):
                            specs.append(spec(matrix_run_id(f"{sc}_{mtag}_{tag}_{prim}", rep), sc, mode=mode, workload=wl,
                                              size_bytes=size, duration_s=dur, primary_path=prim,
                                              repetition=rep, seed=seed, congestion_control=c,
                                              force_tbf=doc.get("force_tbf", False)))
    return specs
