"""scripts/capture-summary.py's rule for a reference whose runs name two commits (a supplement
captured when the standard scale grew): allowed only where every configuration's runs ran the
same experiment with the same builds, kernel and tools, as their meta.json says."""
from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import polars as pl

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "capture-summary.py"
spec = importlib.util.spec_from_file_location("capture_summary", SCRIPT)
summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(summary)

META = {"campaign": "chen", "scenario": "fig2-att", "mode": "MP-2", "congestion_control": "lia",
        "workload": "http", "size_bytes": 2000000, "scale": "standard",
        "link_profiles": {"wifi": "chen-wifi-t2", "lte": "chen-lte-att-t2"},
        "paths": {"wifi": {"profile": {"rtt_ms": 19}, "down": {"delay_ms": 9.5, "loss": 0.02},
                           "emulator_ns": "mpl-1-a-ewifi"}},
        "mptcp_config": {"client": {"endpoints": ["10.1.0.2 id 1"], "limits": "subflows 8", "counters": {"x": 1}}},
        "builds": {"host": "vm", "linkem_sha256": "e4de192b35aa61e9"},
        "tools": {"wget": "GNU Wget 1.21.3", "repo_commit": "a" * 40},
        "kernel": {"kernel": {"release": "6.18.44"}}, "seed": 1, "repetition": 1}


def _runs(metas: list[tuple[str, str, dict]]) -> pl.DataFrame:
    return pl.DataFrame({"campaign": [m["campaign"] for _, _, m in metas], "run_id": [r for r, _, _ in metas],
                         "repo_commit": [c for _, c, _ in metas], "meta_json": [json.dumps(m) for _, _, m in metas]})


def _other(**changes) -> dict:
    """META as a later run of the same configuration records it: another seed, repetition,
    namespace, counters and commit, and ``changes``."""
    m = copy.deepcopy(META)
    m.update(seed=2, repetition=7)
    m["paths"]["wifi"]["emulator_ns"] = "mpl-2-b-ewifi"
    m["mptcp_config"]["client"]["counters"] = {"x": 9}
    m["tools"]["repo_commit"] = "b" * 40
    for path, value in changes.items():
        *keys, last = path.split("__")
        d = m
        for k in keys:
            d = d[k]
        d[last] = value
    return m


def test_one_commit_is_alike():
    assert summary.unlike(_runs([("fig2-att_MP-2-lia_2MB_wifi_r1", "a", META),
                                 ("fig2-att_MP-2-lia_2MB_wifi_r2", "a", META)])) == []


def test_a_supplement_that_ran_the_same_experiment_is_alike():
    assert summary.unlike(_runs([("fig2-att_MP-2-lia_2MB_wifi_r1", "a", META),
                                 ("fig2-att_MP-2-lia_2MB_wifi_r7", "b", _other())])) == []


def test_a_supplement_with_another_link_or_build_is_not():
    for change in ({"paths__wifi__down__loss": 0.03}, {"link_profiles__lte": "chen-lte-att"},
                   {"mptcp_config__client__limits": "subflows 2"}):
        bad = summary.unlike(_runs([("fig2-att_MP-2-lia_2MB_wifi_r1", "a", META),
                                    ("fig2-att_MP-2-lia_2MB_wifi_r7", "b", _other(**change))]))
        assert bad == ["chen/fig2-att_MP-2-lia_2MB_wifi: its runs name 2 commits and differ in their experiment "
                       "(meta.json)"], change
    # a build differs: the campaign is named even where the configurations do not overlap
    bad = summary.unlike(_runs([("fig2-att_MP-2-lia_2MB_wifi_r1", "a", META),
                                ("fig2-att_SP-lte_2MB_lte_r7", "b", _other(builds__linkem_sha256="0" * 16))]))
    assert bad == ["chen: its runs name 2 commits and ran with different builds, kernel or tools (meta.json)"]
