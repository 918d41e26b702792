"""Campaign YAML validation and expansion (no root needed)."""
import copy
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from capture import campaign, spec
from capture.spec import CampaignError, expand, validate

REPO = Path(__file__).resolve().parent.parent

BASE = {
    "name": "t",
    "seed": 5,
    "repetitions": 2,
    "scenarios": {"s1": {"wifi": {"rate_mbit": 20, "rtt_ms": 30, "loss": 0.01},
                         "lte": {"rate_mbit": 10, "delay_ms": 35}}},
    "modes": ["SP-wifi", "MP-2"],
    "sizes": ["1MB", 4096],
}


def bad(mut):
    doc = copy.deepcopy(BASE)
    mut(doc)
    with pytest.raises(CampaignError) as e:
        validate(doc, "c.yaml")
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_base_is_valid():
    validate(copy.deepcopy(BASE))


def test_unknown_mode_names_field():
    msg = bad(lambda d: d["modes"].append("MP-9"))
    assert "modes.2" in msg and "MP-9" in msg


def test_negative_delay_names_field():
    msg = bad(lambda d: d["scenarios"]["s1"]["lte"].update(delay_ms=-5))
    assert "scenarios.s1.lte.delay_ms" in msg


def test_size_zero_names_field():
    msg = bad(lambda d: d["sizes"].append(0))
    assert "sizes.2" in msg
    msg = bad(lambda d: d["sizes"].append("0MB"))
    assert "sizes.2" in msg and "> 0" in msg


def test_unknown_field_and_path():
    assert "colour" in bad(lambda d: d.update(colour="red"))
    assert "scenarios.s1" in bad(lambda d: d["scenarios"]["s1"].update(wlan={"rate_mbit": 1}))
    assert "scenarios.s1.wifi.loss" in bad(lambda d: d["scenarios"]["s1"]["wifi"].update(loss=1.5))


def test_missing_path_for_mode():
    msg = bad(lambda d: d["scenarios"]["s1"].pop("lte"))
    assert "scenarios.s1" in msg and "lte" in msg


def test_unknown_sysctl_profile():
    assert "sysctl_profile" in bad(lambda d: d.update(sysctl_profile="nope"))


def test_expand_matrix_randomized_and_deterministic():
    doc = validate(copy.deepcopy(BASE))
    a = [s.run_id for s in expand(doc)]
    b = [s.run_id for s in expand(doc)]
    assert a == b                      # same seed, same order
    assert len(a) == 1 * 2 * 2 * 2     # scenarios x modes x sizes x repetitions
    assert len(set(a)) == len(a)
    assert sorted(a) != a or True
    doc2 = dict(doc, seed=6)
    assert [s.run_id for s in expand(doc2)] != a
    assert {s.size_bytes for s in expand(doc)} == {1_000_000, 4096}


def test_parse_size():
    assert spec.parse_size("4MB") == 4_000_000
    assert spec.parse_size("64KiB") == 65536
    assert spec.parse_size(10) == 10


@pytest.mark.parametrize("f", sorted(p for p in (REPO / "capture" / "campaigns").glob("*.yaml") if p.name != "profiles.yaml"),
                         ids=lambda p: p.name)
def test_shipped_campaigns_valid(f):
    spec.load(f)


def test_cli_reports_one_line_error(tmp_path):
    doc = copy.deepcopy(BASE)
    doc["modes"] = ["MP-7"]
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(doc))
    p = subprocess.run([sys.executable, "-m", "capture", "run", str(f), "--out", str(tmp_path / "o"), "--dry-run"],
                       cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 2
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and "modes.0" in lines[0] and "MP-7" in lines[0]
    assert not (tmp_path / "o").exists()


def test_dry_run_skips_finished_runs(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(BASE))
    specs = expand(validate(copy.deepcopy(BASE)))
    done = tmp_path / "o" / "t" / specs[0].run_id
    done.mkdir(parents=True)
    (done / ".done").write_text("x")
    half = tmp_path / "o" / "t" / specs[1].run_id
    half.mkdir(parents=True)
    (half / ".started").write_text("x")
    s = campaign.run_campaign(f, tmp_path / "o", dry_run=True, progress=False)
    assert s["skipped_done"] == 1
    assert specs[0].run_id not in s["todo"] and specs[1].run_id in s["todo"]
    assert len(s["todo"]) == len(specs) - 1


def test_help():
    p = subprocess.run([sys.executable, "-m", "capture", "--help"], cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0 and "run" in p.stdout and "check" in p.stdout


def test_spec_is_importable_without_the_testbed():
    # the workflow and planners load, validate and expand campaigns anywhere
    code = ("import sys, capture.spec, capture.estimate; "
            "bad = [m for m in ('capture.topology', 'capture.emulator', 'capture.experiment', "
            "'capture.workloads', 'capture.pcaps', 'capture.campaign') if m in sys.modules]; "
            "assert not bad, bad")
    p = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_one_table_for_modes_and_paths():
    # the schema's enums and the run spec's paths both come from spec.MODE_PATHS
    assert spec.SCHEMA["definitions"]["mode"]["enum"] == list(spec.MODE_PATHS)
    assert spec.SCHEMA["definitions"]["path"]["enum"] == list(spec.PATH_INDEX)
    doc = copy.deepcopy(BASE)
    doc["modes"] = list(spec.MODE_PATHS)
    doc["scenarios"]["s1"]["eth"] = {"rate_mbit": 10, "delay_ms": 2}  # MP-3's third path
    for s in expand(validate(doc)):
        assert s.paths == list(spec.MODE_PATHS[s.mode])
        assert s.mptcp == (len(s.paths) > 1)
    # a mode's paths are what the scenario check asks for
    doc["scenarios"]["s1"].pop("wifi")
    doc["modes"] = ["SP-lte"]
    validate(doc)
    doc["modes"] = ["backup"]
    with pytest.raises(CampaignError, match="needs a 'wifi' link"):
        validate(doc)


def _fake_meta(spec, attempt, attempts, worst):
    """What run_one returns for a run whose worst emulator lateness was ``worst`` ms."""
    return {"attempt": attempt, "started_at": "t", "earlier_attempts": list(attempts or []),
            "host": {"steal_pct": 1.0},
            "stalls": {"stalled": worst > spec.stall_ms, "worst_late_ms": worst, "worst_late_at_s": 1.0,
                       "late_intervals": 1}}


def test_stalled_runs_are_repeated_and_reported(tmp_path, monkeypatch):
    """A run whose emulator stalled (worst lateness > stall_retry.late_ms) is redone at
    most `repeats` times; campaign-status.json says which were repeated and which are
    still stalled. (run_one is replaced: this checks the runner, not the testbed.)"""
    doc = copy.deepcopy(BASE)
    doc.update(repetitions=1, sizes=[4096], stall_retry={"late_ms": 5, "repeats": 2})
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(doc))
    ids = sorted(s.run_id for s in expand(validate(copy.deepcopy(doc))))
    always, once = ids  # SP-wifi stalls every time; MP-2 only on its first attempt
    calls = []

    def fake_run_one(spec, run_dir, attempts=None):
        n = len(attempts or []) + 1
        calls.append((spec.run_id, n))
        return _fake_meta(spec, n, attempts, worst=40.0 if spec.run_id == always or n == 1 else 0.3)

    monkeypatch.setattr(campaign, "run_one", fake_run_one)
    monkeypatch.setattr(campaign, "sweep", lambda: [])
    s = campaign.run_campaign(f, tmp_path / "o", progress=False)
    assert sorted(calls) == [(always, 1), (always, 2), (always, 3), (once, 1), (once, 2)]
    assert s["ok"] and not s["failed"]
    assert [a["attempt"] for a in s["repeated"][always]] == [1, 2] and len(s["repeated"][once]) == 1
    assert s["stalled"] == {always: 40.0}
    status = json.loads((tmp_path / "o" / "t" / "campaign-status.json").read_text())
    assert status["stalled"] == {always: 40.0} and set(status["repeated"]) == {always, once}
    assert sorted(status["ok"]) == ids
    # a later invocation for one run keeps what the file says about the others
    campaign.run_campaign(f, tmp_path / "o", progress=False, run_ids=[once])
    status = json.loads((tmp_path / "o" / "t" / "campaign-status.json").read_text())
    assert status["stalled"] == {always: 40.0} and sorted(status["ok"]) == ids


def test_stall_retry_defaults():
    doc = copy.deepcopy(BASE)
    assert spec.stall_retry(doc) == (5.0, 0)                   # not a findings campaign: off
    assert spec.stall_retry({**doc, "paper": "Chen 2013"}) == (5.0, 2)  # names its paper: on
    assert spec.stall_retry({**doc, "paper": "x", "stall_retry": False}) == (5.0, 0)
    assert spec.stall_retry({**doc, "stall_retry": {"repeats": 1}}) == (5.0, 1)
    assert "stall_retry.late_ms" in bad(lambda d: d.update(stall_retry={"late_ms": 0.5}))
    s = expand(validate({**doc, "paper": "x"}))[0]
    assert (s.stall_ms, s.stall_repeats) == (5.0, 2)


def test_run_picks_exact_runs(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(BASE))
    one = expand(validate(copy.deepcopy(BASE)))[3].run_id
    s = campaign.run_campaign(f, tmp_path / "o", dry_run=True, progress=False, run_ids=[one])
    assert s["todo"] == [one]
    with pytest.raises(CampaignError, match="no run 'nope'"):
        campaign.run_campaign(f, tmp_path / "o", dry_run=True, progress=False, run_ids=["nope"])


def test_interrupted_campaign_writes_its_status(tmp_path, monkeypatch):
    """SIGTERM (a time limit) in the middle of a campaign: campaign-status.json still says
    which runs finished, which were repeated, which one the signal stopped and which
    are missing; the signal is passed on. (run_one is replaced: this checks the runner.)"""
    import os
    import signal

    from capture.util import Interrupted, signals_raise

    doc = copy.deepcopy(BASE)
    doc.update(repetitions=2, sizes=[4096], stall_retry={"late_ms": 5, "repeats": 1})
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(doc))
    calls, n_calls = [], [0]

    def fake_run_one(spec, run_dir, attempts=None):
        n = len(attempts or []) + 1
        calls.append(spec.run_id)
        n_calls[0] += 1
        if n_calls[0] == 4:
            os.kill(os.getpid(), signal.SIGTERM)  # arrives while the 3rd run is running
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / campaign.DONE).write_text("")
        return _fake_meta(spec, n, attempts, worst=40.0 if n_calls[0] == 1 else 0.3)  # 1st run stalls once

    monkeypatch.setattr(campaign, "run_one", fake_run_one)
    monkeypatch.setattr(campaign, "sweep", lambda: [])
    with pytest.raises(Interrupted, match="SIGTERM"), signals_raise():
        campaign.run_campaign(f, tmp_path / "o", progress=False)
    status = json.loads((tmp_path / "o" / "t" / "campaign-status.json").read_text())
    first, second, third = dict.fromkeys(calls)  # run ids in the order they ran
    assert status["ok"] == sorted([first, second])
    assert list(status["repeated"]) == [first] and not status["stalled"] and not status["failed"]
    assert status["interrupted"] == {third: "Interrupted: SIGTERM"}
    assert status["total"] == 4 and third in status["missing"] and len(status["missing"]) == 2
    assert first not in status["missing"] and second not in status["missing"]
    assert not list((tmp_path / "o" / "t").glob(".*.tmp"))  # written atomically, nothing left behind
    # resuming runs only the missing ones, and the status forgets the interruption
    calls.clear()
    campaign.run_campaign(f, tmp_path / "o", progress=False)
    assert sorted(calls) == status["missing"]
    status = json.loads((tmp_path / "o" / "t" / "campaign-status.json").read_text())
    assert not status["interrupted"] and not status["missing"] and len(status["ok"]) == 4


LLR_PROFILE = {"rate_mbit": 8, "rtt_ms": 60, "queue_bytes": 100000,
               "down": {"loss": 0.05, "llr": {"delay_ms": 8, "retries": 4}}}


def test_llr_profile_reaches_linkem_and_needs_it():
    from capture.emulator import CommandError, choose_kind, linkem_config, needs_linkem
    doc = copy.deepcopy(BASE)
    doc["scenarios"]["s1"]["lte"] = copy.deepcopy(LLR_PROFILE)
    prof = next(s for s in expand(validate(doc)) if s.mode == "MP-2").profiles["lte"]
    cfg = linkem_config(prof, seed=9)
    assert cfg["down"]["loss"] == {"model": "bernoulli", "p": 0.05}
    assert cfg["down"]["llr"] == {"delay_ms": 8.0, "retries": 4}
    assert "llr" not in cfg["up"] and cfg["up"]["loss"] == {"model": "bernoulli", "p": 0.0}
    assert cfg["down"]["delay_ms"] == 30.0 and cfg["down"]["rate_mbit"] == 8.0
    # tbf cannot retransmit: even with the loss moved out, llr alone needs linkem
    assert needs_linkem({"rate_mbit": 8, "down": {"loss": 0, "llr": {"delay_ms": 8, "retries": 4}}})
    assert not needs_linkem({"rate_mbit": 8, "down": {"loss": 0}})
    with pytest.raises(CommandError, match="llr"):
        choose_kind({"rate_mbit": 8, "down": {"loss": 0, "llr": {"delay_ms": 8, "retries": 4}}}, force_tbf=True)


def test_llr_errors_name_the_field():
    def with_lte(**down):
        def mut(d):
            d["scenarios"]["s1"]["lte"] = {"rate_mbit": 8, "rtt_ms": 60, "down": down}
        return mut
    assert "scenarios.s1.lte.down.llr" in bad(with_lte(loss=0.05, llr={"delay_ms": 8, "retries": 0}))
    assert "scenarios.s1.lte.down.llr" in bad(with_lte(loss=0.05, llr={"delay_ms": -1, "retries": 2}))
    msg = bad(with_lte(loss=0.05, llr={"delay_ms": 8, "tries": 2}))
    assert "scenarios.s1.lte.down.llr" in msg and "tries" in msg
    msg = bad(with_lte(llr={"delay_ms": 8, "retries": 2}))
    assert "scenarios.s1.lte.down" in msg and "loss" in msg
    # loss 0 is a loss: llr then never acts (a sweep over the loss may include it)
    d = copy.deepcopy(BASE)
    with_lte(loss=0, llr={"delay_ms": 8, "retries": 2})(d)
    validate(d)


# --- a trace's random phase per run (trace_offset_ms: random) ------------------------

def traced_doc(tmp_path, period_ms: int = 100_000, **link) -> dict:
    """BASE with both paths driven by one trace of ``period_ms`` (two opportunities a period)."""
    (tmp_path / "t.trace").write_text(f"# a comment\n1\n\n{period_ms}\n")
    doc = copy.deepcopy(BASE)
    doc["scenarios"]["s1"] = {p: {"trace": "t.trace", "rtt_ms": 40, **link} for p in ("wifi", "lte")}
    doc["repetitions"] = 3
    return doc


def test_random_trace_phase_per_run_path_and_direction(tmp_path):
    from capture.emulator import linkem_config
    specs = [s for s in expand(validate(traced_doc(tmp_path, trace_offset_ms="random"), base_dir=tmp_path),
                               base_dir=tmp_path) if s.mode == "MP-2"]
    assert len({s.seed for s in specs}) == len(specs) == 6
    # each path's linkem seed as the runner gives it (capture/experiment.py: run seed * 10 + path index)
    offs = {(s.run_id, p, d): linkem_config(s.profiles[p], s.seed * 10 + i, tmp_path)[d]["trace_offset_ms"]
            for s in specs for i, p in enumerate(s.paths) for d in ("down", "up")}
    assert all(isinstance(v, int) and 0 <= v < 100_000 for v in offs.values())
    # 24 draws from 100,000 phases: any two equal would be a shared draw, not chance (p < 0.003)
    assert len(set(offs.values())) == len(offs)
    # the same seed draws the same phase; another seed another
    s = specs[0]
    assert linkem_config(s.profiles["wifi"], s.seed * 10, tmp_path) == linkem_config(s.profiles["wifi"], s.seed * 10,
                                                                                      tmp_path)
    # uniform over the period: 2,000 seeds fill its four quarters alike (each 500 ± 4 sd)
    draws = [linkem_config(s.profiles["wifi"], k, tmp_path)["down"]["trace_offset_ms"] for k in range(2000)]
    quarters = np.bincount(np.asarray(draws) // 25_000, minlength=4)
    assert len(quarters) == 4 and (abs(quarters - 500) < 4 * 500 ** 0.5).all(), quarters


def test_fixed_and_absent_trace_phase(tmp_path):
    from capture.emulator import linkem_config
    prof = expand(validate(traced_doc(tmp_path, trace_offset_ms=1234), base_dir=tmp_path),
                  base_dir=tmp_path)[0].profiles["wifi"]
    cfg = linkem_config(prof, 1, tmp_path)
    assert cfg["down"]["trace_offset_ms"] == cfg["up"]["trace_offset_ms"] == 1234
    prof = expand(validate(traced_doc(tmp_path), base_dir=tmp_path), base_dir=tmp_path)[0].profiles["wifi"]
    assert "trace_offset_ms" not in linkem_config(prof, 1, tmp_path)["down"]
    # a rate override of a traced profile drops its phase with its trace
    from capture.spec import _merge_profile
    assert _merge_profile({"trace": "t.trace", "trace_offset_ms": "random"}, {"rate_mbit": 5}) == {"rate_mbit": 5}


def test_trace_phase_errors_name_the_field(tmp_path):
    def with_wifi(**link):
        def mut(d):
            d["scenarios"]["s1"]["wifi"] = link
        return mut
    msg = bad(with_wifi(rate_mbit=10, trace_offset_ms="random"))
    assert "scenarios.s1.wifi.down" in msg and "trace_offset_ms" in msg and "trace" in msg
    assert "scenarios.s1.wifi" in bad(with_wifi(trace="x.trace", trace_offset_ms="sometimes"))
    assert "scenarios.s1.wifi" in bad(with_wifi(trace="x.trace", trace_offset_ms=-5))


def test_random_trace_phase_is_recorded_in_meta_and_given_to_linkem(tmp_path, monkeypatch):
    """What linkem receives (its config JSON) and what meta.json records are the same drawn
    phases; the record matches pipeline/meta.schema.yaml."""
    from types import SimpleNamespace

    from capture import emulator
    from pipeline.metadoc import problems as meta_problems
    monkeypatch.setattr(emulator, "linkem_available", lambda: True)
    s = next(s for s in expand(validate(traced_doc(tmp_path, trace_offset_ms="random"), base_dir=tmp_path),
                               base_dir=tmp_path) if s.mode == "MP-2")
    metas = {}
    for i, p in enumerate(s.paths):
        e = emulator.PathEmulator(SimpleNamespace(name=p), s.profiles[p], tmp_path, seed=s.seed * 10 + i,
                                  base_dir=tmp_path)
        drawn = emulator.linkem_config(s.profiles[p], s.seed * 10 + i, tmp_path)
        assert e.config == drawn
        metas[p] = e.as_meta()
        assert metas[p]["trace_offset_ms"] == {d: drawn[d]["trace_offset_ms"] for d in ("down", "up")}
    assert metas["wifi"]["trace_offset_ms"] != metas["lte"]["trace_offset_ms"]
    assert meta_problems({"run_id": "r", "paths": metas}) == []
    assert meta_problems({"run_id": "r", "paths": {"wifi": {"trace_offset_ms": {"down": -1}}}})
