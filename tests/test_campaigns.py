"""The five paper campaigns (papers/<paper>/campaign.yaml) and their named link profiles
(papers/<paper>/profiles.yaml), the quick- and standard-scale budgets and the committed
reference tables (no captures here: fast, no root needed)."""
import copy
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest
import yaml

from capture.estimate import estimate_s
from capture.spec import CampaignError, expand, load, load_profiles, validate
from papers import PAPERS as REGISTRY
from pipeline.derived import study_of

REPO = Path(__file__).resolve().parent.parent
CONFIG = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
PAPERS = ["chen", "cs244", "deng", "ditg", "ferlin"]
QUICK_BUDGET_S = 30 * 60
# The standard scale grows to what the claims need, within 10 hours for the five campaigns
# on this 2-core host (issue 41's budget; the duration model, D-ITG's drain included;
# data/reference/README.md has the measured time). It was 3 hours (issue 23) until issue 40
# added the experiments the inventory said were possible (CS244's three-path handover,
# Deng's unplugged backup, Chen's per-table scenarios and time-varying links) and D-ITG's
# drain (every generated packet delivered before a test ends). Issue 41's plans
# (papers/<paper>/planned_n.yaml: up to 20 runs where a group needs them to be covered and
# decided) raised it to 10 hours: 8.4 by the duration model.
STANDARD_BUDGET_S = 600 * 60
REFERENCE = REPO / CONFIG.get("reference_dir", "data/reference")


def campaign_file(name, scale=None):
    return REGISTRY[name].campaign_file


def pdir(name):
    return REGISTRY[name].folder


def test_one_scale_table():
    """What quick, standard and paper mean is capture/scales.py's: the workflow's config
    schema names the same scales, the campaign schema takes them from it, only quick is
    figures-only, and the Makefile asks the table where a scale's captures go."""
    from capture.scales import NOT_EVIDENCE, SCALES, raw_dir
    from capture.spec import SCHEMA
    schema = yaml.safe_load((REPO / "config" / "config.schema.yaml").read_text())
    assert schema["properties"]["scale"]["enum"] == list(SCALES) == ["quick", "standard", "paper"]
    assert SCHEMA["properties"]["scales"]["propertyNames"]["enum"] == list(SCALES)
    assert NOT_EVIDENCE == ("quick",) and raw_dir("quick") == "data/raw/quick" and raw_dir("paper") == "data/raw"
    assert "capture scales --raw-dir" in (REPO / "Makefile").read_text()


def test_config_lists_the_five_campaigns():
    # the workflow covers every paper of the registry unless the config names a subset
    assert CONFIG.get("campaigns", list(REGISTRY)) == PAPERS and list(REGISTRY) == PAPERS


@pytest.mark.parametrize("scale", ["quick", "standard", "paper"])
@pytest.mark.parametrize("name", PAPERS)
def test_campaign_valid_at_scale(name, scale):
    f = campaign_file(name, scale)
    doc = load(f, scale)
    assert doc["name"] == name
    # the findings and notebooks find a paper's runs by the study the campaign declares
    # (meta.json study -> run_config.study); runs captured before it fall back to the
    # campaign's name, with a replicate's suffix
    assert doc["study"] == name and study_of(doc["name"]) == name and study_of(f"{name}-seed2") == name
    assert study_of("anything", "chen") == "chen"
    specs = expand(doc, base_dir=f.parent, scale=scale)
    assert specs and len({s.run_id for s in specs}) == len(specs)
    assert {s.scale for s in specs} == {scale}
    assert {s.campaign for s in specs} == {name}


def test_paper_scale_keeps_the_papers_repetitions():
    reps = {n: load(campaign_file(n, "paper"))["scales"]["paper"]["repetitions"] for n in PAPERS}
    assert reps["chen"] == 20 and reps["ditg"] == 30 and reps["ferlin"] == 50 and reps["deng"] == 10


def test_quick_scale_within_budget():
    total, runs = 0.0, 0
    for n in PAPERS:
        f = campaign_file(n, "quick")
        specs = expand(load(f, "quick"), base_dir=f.parent, scale="quick")
        runs += len(specs)
        total += sum(estimate_s(s) for s in specs)
    assert runs <= 200
    assert total <= QUICK_BUDGET_S, f"quick scale estimated at {total / 60:.1f} min"


def test_standard_scale_within_budget():
    """Issue 23: all five campaigns at the standard scale within the budget (the duration
    model, which overestimates short downloads: the measured time is in
    data/reference/README.md), with five runs in the groups the claims compare."""
    total = 0.0
    for n in PAPERS:
        f = campaign_file(n, "standard")
        specs = expand(load(f, "standard"), base_dir=f.parent, scale="standard")
        assert max(s.repetition for s in specs) >= 5, n
        total += sum(estimate_s(s) for s in specs)
    assert total <= STANDARD_BUDGET_S, f"standard scale estimated at {total / 60:.1f} min"


def test_estimate_reflects_rate_loss_and_overhead():
    doc = {"name": "t", "scenarios": {"s": {"wifi": {"rate_mbit": 8, "rtt_ms": 40}, "lte": "cs244-3g"}},
           "modes": ["SP-wifi", "SP-lte"], "sizes": ["8MB"]}
    specs = {s.mode: s for s in expand(validate(doc, base_dir=pdir("cs244")), base_dir=pdir("cs244"))}
    wifi, lte = estimate_s(specs["SP-wifi"]), estimate_s(specs["SP-lte"])
    assert 8 < wifi < 15                      # 8 MB at ~8 Mbit/s + set-up
    assert lte > wifi                         # 2 Mbit/s and 2 % loss at 152 ms RTT


# --- named profiles ------------------------------------------------------------------

@pytest.mark.parametrize("paper", PAPERS)
def test_profiles_file_valid_and_cited(paper):
    """Each paper's link profiles sit in its folder, each with the paper's words above it."""
    f = REGISTRY[paper].profiles_file
    profs = load_profiles(f)
    text = f.read_text()
    assert profs and all(n.startswith(paper + "-") for n in profs), paper
    lines = text.splitlines()
    for name in profs:
        i = next(k for k, line in enumerate(lines) if line.startswith(f"{name}:"))
        assert lines[i - 1].startswith("#") or lines[i - 1].startswith(tuple(f"{n}:" for n in profs)) \
            or lines[i - 1].startswith("  ") or "#" in lines[i], name


def test_chen_cellular_bloat_comes_from_rate_and_queue():
    profs = load_profiles(REGISTRY["chen"].profiles_file)
    for n in ("chen-lte-att", "chen-lte-verizon", "chen-3g-sprint"):
        p = profs[n]
        assert p["rate_mbit"] > 0 and p["queue_bytes"] > 0
        max_queue_ms = p["queue_bytes"] * 8 / (p["rate_mbit"] * 1e6) * 1000
        assert max_queue_ms >= 100, n
        assert p["rtt_ms"] <= 300, n          # base RTT, not the loaded one (Sprint's: "around 300 ms", §4)
    # "the RTT value can extend up to two seconds" (§5.1, Fig. 12) is a condition computed on
    # the Table 6 runs (issue 40), not a property of a profile's settings
    from papers.registry import paper_claims
    up_to_2s = {c.id: c for c in paper_claims("chen")}["chen-fig12-verizon-up-to-2s"]
    assert up_to_2s.kind == "condition" and up_to_2s.measure is not None


def test_cs244_delays_are_one_way():
    profs = load_profiles(REGISTRY["cs244"].profiles_file)
    assert profs["cs244-3g"]["delay_ms"] >= 75 and "rtt_ms" not in profs["cs244-3g"]
    assert profs["cs244-wifi"]["loss"] == 0.03 and profs["cs244-3g"]["loss"] == 0.02


BASE = {"name": "t", "scenarios": {"s1": {"wifi": "chen-wifi-home", "lte": "chen-lte-att"}},
        "modes": ["SP-wifi", "MP-2"], "sizes": ["64KB"]}


def test_unknown_profile_is_refused_naming_the_field():
    doc = copy.deepcopy(BASE)
    doc["scenarios"]["s1"]["lte"] = "chen-lte-tmobile"
    with pytest.raises(CampaignError) as e:
        validate(doc, "c.yaml", base_dir=pdir("chen"))
    msg = str(e.value)
    assert "scenarios.s1.lte" in msg and "chen-lte-tmobile" in msg and "\n" not in msg
    doc["scenarios"]["s1"]["lte"] = {"profile": "nope", "loss": 0.01}
    with pytest.raises(CampaignError, match=r"scenarios\.s1\.lte: unknown link profile 'nope'"):
        validate(doc, "c.yaml", base_dir=pdir("chen"))


def test_inline_profile_based_on_a_named_one():
    doc = copy.deepcopy(BASE)
    doc["scenarios"]["s1"]["wifi"] = {"profile": "chen-wifi-home", "rtt_ms": 50, "down": {"loss": 0.04}}
    specs = expand(validate(doc, base_dir=pdir("chen")), base_dir=pdir("chen"))
    p = next(s for s in specs if s.mode == "SP-wifi")
    assert p.profiles["wifi"]["rtt_ms"] == 50 and p.profiles["wifi"]["rate_mbit"] == 20
    assert p.profiles["wifi"]["down"] == {"loss": 0.04}
    assert p.profile_names == {"wifi": "chen-wifi-home", "lte": "chen-lte-att"}


def test_a_profile_may_hold_settings_per_size(tmp_path):
    """by_size (issue 40: a table that describes a path differently per size): a run gets its
    size's settings over the profile's, no by_size left; a scenario's own settings win."""
    (tmp_path / "profiles.yaml").write_text(
        "t-wifi:\n  rate_mbit: 20\n  rtt_ms: 24\n  down: {loss: 0.004}\n"
        "  by_size:\n    2MB: {rate_mbit: 5, rtt_ms: 30, down: {loss: 0.02}}\n")
    doc = {"name": "t", "scenarios": {"a": {"wifi": "t-wifi"}, "b": {"wifi": {"profile": "t-wifi", "rtt_ms": 50}}},
           "modes": ["SP-wifi"], "sizes": ["64KB", "2MB"]}
    got = {(s.scenario, s.size_bytes): s.profiles["wifi"] for s in expand(validate(doc, base_dir=tmp_path),
                                                                           base_dir=tmp_path)}
    assert got[("a", 64_000)] == {"rate_mbit": 20, "rtt_ms": 24, "down": {"loss": 0.004}}
    assert got[("a", 2_000_000)] == {"rate_mbit": 5, "rtt_ms": 30, "down": {"loss": 0.02}}
    assert got[("b", 2_000_000)] == {"rate_mbit": 5, "rtt_ms": 50, "down": {"loss": 0.02}}
    doc["scenarios"]["a"]["wifi"] = {"profile": "t-wifi", "by_size": {"2 lots": {"rate_mbit": 1}}}
    with pytest.raises(CampaignError, match="by_size"):
        validate(doc, "c.yaml", base_dir=tmp_path)


def test_named_trace_resolves_from_the_campaign_folder():
    f = campaign_file("ferlin")
    spec = next(s for s in expand(load(f), base_dir=f.parent) if s.scenario == "3G+WLAN")
    trace = Path(spec.profiles["wifi"]["down"]["trace"])
    assert (f.parent / trace).resolve() == (REPO / "capture/linkem/traces/ferlin_wlan.trace").resolve()


def test_scale_block_is_validated():
    doc = copy.deepcopy(BASE)
    doc["scales"] = {"quick": {"repetitions": 0}}
    with pytest.raises(CampaignError, match=r"scales\.quick\.repetitions"):
        validate(doc, "c.yaml", base_dir=pdir("chen"))
    doc["scales"] = {"huge": {"repetitions": 2}}
    with pytest.raises(CampaignError, match="huge"):
        validate(doc, "c.yaml", base_dir=pdir("chen"))
    doc["scales"] = {"quick": {"only_scenarios": ["s9"]}}
    with pytest.raises(CampaignError, match=r"only_scenarios\.0.*s9"):
        validate(doc, "c.yaml", base_dir=pdir("chen"))
    doc["scales"] = {"quick": {"sizes": ["1KB"]}}
    with pytest.raises(CampaignError, match="no 'paper' scale"):
        validate(doc, "c.yaml", scale="paper", base_dir=pdir("chen"))


def test_scale_overrides_apply():
    doc = copy.deepcopy(BASE)
    doc["repetitions"] = 5
    doc["scales"] = {"quick": {"repetitions": 1}, "paper": {"repetitions": 3, "sizes": ["64KB", "1MB"]}}
    validate(doc, base_dir=pdir("chen"))
    assert len(expand(doc, scale="quick", base_dir=pdir("chen"))) == 2
    assert len(expand(doc, scale="paper", base_dir=pdir("chen"))) == 2 * 2 * 3


def test_a_workload_can_have_its_own_repetitions():
    """A claim's plan (papers/<paper>/planned_n.yaml) asks more runs of one size: that size
    of that scenario runs them, the others keep the scale's."""
    doc = copy.deepcopy(BASE)
    doc["scales"] = {"paper": {"repetitions": 3, "sizes": ["64KB", "1MB"],
                               "scenario_filters": {"s1": {"repetitions_by_workload": {"1MB": 7}}}}}
    validate(doc, base_dir=pdir("chen"))
    specs = expand(doc, scale="paper", base_dir=pdir("chen"))
    per = {}
    for s in specs:
        per[(s.mode, s.size_bytes)] = per.get((s.mode, s.size_bytes), 0) + 1
    assert set(per.values()) == {3, 7} and all(v == 7 for (m, size), v in per.items() if size == 1_000_000)
    assert max(s.repetition for s in specs) == 7
    doc["scales"]["paper"]["scenario_filters"]["s1"]["repetitions_by_workload"] = {"4MB": 7}
    with pytest.raises(CampaignError, match=r"s1\.repetitions_by_workload: '4MB' is not a workload .* 64KB, 1MB"):
        expand(doc, scale="paper", base_dir=pdir("chen"))


def test_congestion_controls_repeat_mp_runs_only():
    doc = copy.deepcopy(BASE)
    doc["congestion_controls"] = ["reno", "cubic"]
    specs = expand(validate(doc, base_dir=pdir("chen")), base_dir=pdir("chen"))
    assert sorted((s.mode, s.congestion_control) for s in specs) == [
        ("MP-2", "cubic"), ("MP-2", "reno"), ("SP-wifi", "cubic")]
    assert any(s.run_id.startswith("s1_MP-2-reno_") for s in specs)


def test_cs244_buffer_is_in_tcp_rmem_and_scenario_name():
    from capture.kernel import load_profile
    for scale in ("quick", "standard", "paper"):
        specs = expand(load(campaign_file("cs244")), base_dir=pdir("cs244"), scale=scale)
        sweep = [s for s in specs if s.scenario.startswith("buf") and s.scenario != "buf1000k"]
        assert {s.mode for s in sweep} == {"SP-wifi", "SP-lte", "MP-2"}
        for s in sweep:
            rmem = load_profile(s.sysctl_profile, s.sysctl_params)["sysctl_netns"]["net.ipv4.tcp_rmem"]
            k = int(re.search(r"(\d+)k", s.scenario).group(1))
            assert int(rmem.split()[2]) == k * 1000
        # CS244's protocol: long-lived iperf flows, the throughput over 10-40 s
        assert {s.workload for s in sweep} == {"iperf3-down"} and {s.duration_s for s in sweep} == {40}
        ho = [s for s in specs if s.scenario == "handover"]
        if scale == "standard":
            # the runs cs244-handover's plan asks (5) and handover3's claims' (15): papers/cs244/planned_n.yaml,
            # the standard scale fitted to them by scripts/fit-scale.py
            assert len(ho) == 5 and {s.mode for s in ho} == {"MP-2"}
            assert ho[0].profiles["wifi"]["outages"] == [[14, 21]] and not ho[0].profiles["lte"].get("outages")
            # CS244 Fig. 2: Ethernet, WiFi and 3G; Ethernet off at 7 s, WiFi off at 14 s, WiFi on at 21 s,
            # Ethernet on at ~28 s; a 50-s flow (22 s with every link up again)
            h3 = [s for s in specs if s.scenario == "handover3"]
            assert len(h3) == 15 and {(s.mode, s.primary, s.congestion_control, s.duration_s) for s in h3} == {
                ("MP-3", "wifi", "lia", 50.0)}
            links = h3[0].profiles
            assert (links["eth"]["rate_mbit"], links["eth"]["delay_ms"], links["eth"].get("loss", 0)) == (10, 2, 0)
            assert links["eth"]["outages"] == [[7, 28]] and links["wifi"]["outages"] == [[14, 21]]
            assert not links["lte"].get("outages") and links["wifi"]["loss"] == 0.03


def test_ferlin_scenarios_as_the_notebook_expects():
    doc = load(campaign_file("ferlin"))
    assert set(doc["scenarios"]) == {"3G+WLAN", "2G+WLAN", "2G+3G"}
    for scale in ("quick", "standard", "paper"):
        specs = expand(doc, base_dir=pdir("ferlin"), scale=scale)
        assert {s.size_bytes for s in specs} == {32 * 1024 * 1024}
        assert {s.mode for s in specs} >= {"MP-2", "SP-wifi"}
        # §VI-B's average buffer size: ferlin's runs sample their socket buffers
        assert {s.sample_socket_buffers for s in specs} == {True}


def test_only_ferlin_samples_socket_buffers():
    """The sampling is opt-in per campaign: the other campaigns' runs are as before."""
    for name in PAPERS:
        specs = expand(load(campaign_file(name)), base_dir=pdir(name), scale="standard")
        assert {s.sample_socket_buffers for s in specs} == {name == "ferlin"}, name


def test_deng_and_ditg_matrices():
    deng = expand(load(campaign_file("deng")), base_dir=pdir("deng"), scale="standard")
    assert {s.size_bytes for s in deng if s.workload == "http"} == {10_000, 100_000, 1_000_000, 4_000_000}
    # Fig. 15g: LTE primary, WiFi backup, the client's LTE interface unplugged 3-20 s into a
    # 28-s download, five runs
    unplug = [s for s in deng if s.unplug]
    assert len(unplug) == 5 and {(s.scenario, s.mode, s.primary_path, s.workload) for s in unplug} == {
        ("backup-unplug", "backup", "lte", "iperf3-down")}
    assert all(s.unplug == [{"path": "lte", "at_s": 3, "replug_s": 20}] and s.duration_s > 20 for s in unplug)
    assert {s.primary_path for s in deng} == {"wifi", "lte"} and {s.mode for s in deng} >= {"MP-2", "backup"}
    # n counts emulated locations (issue 23): at least seven, each with every configuration
    locations = {s.scenario for s in deng if s.mode == "MP-2"}
    assert len(locations) >= 7
    ditg = expand(load(campaign_file("ditg")), base_dir=pdir("ditg"), scale="paper")
    assert {s.workload for s in ditg} == {"ditg-netflix", "ditg-maps", "ditg-docs"}
    rtts = {s.profiles["lte"]["rtt_ms"] for s in ditg if s.mode == "MP-2"}
    assert min(rtts) == 10 and max(rtts) == 400
    losses = {s.profiles["wifi"].get("down", {}).get("loss", 0) for s in ditg}
    assert losses == {0, 0.01, 0.02, 0.04}
    assert {s.profiles["wifi"]["rate_mbit"] for s in ditg} == {100, 10}
    # standard: tests long enough that the first ON period is < 5 % of the packets
    # (Netflix's ON/OFF cycle averages 2.36 s, Maps' 1.35 s): >= 20 cycles
    std = expand(load(campaign_file("ditg")), base_dir=pdir("ditg"), scale="standard")
    cycle = {"ditg-netflix": 0.3625 + 2.0, "ditg-maps": 0.15 + 1.2}
    for s in std:
        if s.workload in cycle:
            assert cycle[s.workload] / s.duration_s < 0.05, s.run_id


def test_cli_validate_prints_both_scales():
    p = subprocess.run([sys.executable, "-m", "capture", "validate", str(campaign_file("chen"))],
                       cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0 and "quick:" in p.stdout and "paper:" in p.stdout
    p = subprocess.run([sys.executable, "-m", "capture", "run", str(campaign_file("chen")), "--scale", "paper",
                        "--dry-run", "--out", "/nonexistent"], cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0 and '"scale": "paper"' in p.stdout


def test_capture_rule_passes_the_scale():
    smk = (REPO / "rules" / "capture.smk").read_text()
    assert "--scale {params.scale}" in smk and "MPTCP_LAB_SCALE" not in smk


# --- reference tables ----------------------------------------------------------------

def test_reference_tables_small_and_complete():
    from pipeline import schema
    assert REFERENCE.is_dir(), "data/reference missing (see data/reference/README.md)"
    size = sum(p.stat().st_size for p in REFERENCE.rglob("*") if p.is_file())
    # 75 MB (issue 40's re-capture measured 68.7 MB): 1,885 runs at the planned n.
    # chen's 1,011 runs (Table 6's per-size scenarios) are each below the 20,000-row cap and
    # kept whole: thinning harder would raise the per-run minimum and lower the maximum
    # RTTs the Fig. 12 and Table 6 conditions read; ditg's app_latency is every packet of
    # 311 tests (its claims average and count them all).
    assert size < 75e6
    for name in PAPERS:
        for t in schema.TABLES:  # the optional ones (run_labels) came after the reference was captured
            assert t in schema.OPTIONAL_TABLES or (REFERENCE / name / f"{t}.parquet").is_file(), (name, t)
    assert (REFERENCE / "README.md").is_file()


def test_reference_captures_alike_on_a_quiet_host_as_its_readme_says():
    """issue 40: every reference run names one commit (or a supplement's commit whose runs ran
    the same experiments: scripts/capture-summary.py's fingerprints), the host was quiet (busy less the
    run's own work: median < 5 %, p90 < 20 % in every campaign), and data/reference/README.md's
    table is what scripts/capture-summary.py computes from the committed tables."""
    table = _summary_in_readme(REFERENCE)
    assert table.count("\n| ") == len(PAPERS)


def _summary_in_readme(folder: Path) -> str:
    """scripts/capture-summary.py's table of ``folder`` (its --check passing: runs alike,
    a quiet host), asserted to be in the folder's README."""
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "capture-summary.py"), str(folder), "--check"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() in (folder / "README.md").read_text()
    return r.stdout.strip()


def test_reference_loads_into_duckdb_with_runs_of_every_paper(tmp_path):
    from pipeline import store
    dirs = sorted(d for d in REFERENCE.iterdir() if d.is_dir())
    db = store.load_table_dirs(dirs, tmp_path / "ref.duckdb")
    con = duckdb.connect(str(db), read_only=True)
    try:
        for paper in PAPERS:
            n = con.execute("SELECT count(*) FROM runs WHERE campaign = ?", [paper]).fetchone()[0]
            assert n > 0, paper
            c = con.execute("SELECT count(*) FROM connections c JOIN runs r USING (run_id) "
                            "WHERE r.campaign = ?", [paper]).fetchone()[0]
            assert c > 0, paper
        assert con.execute("SELECT count(*) FROM app_latency").fetchone()[0] > 0      # D-ITG
        assert con.execute("SELECT count(*) FROM ofo_samples").fetchone()[0] > 0
        # a row per direction of each connection, in every campaign (all standard scale)
        for t in ("connections", "subflows", "rtt_samples", "ofo_samples"):
            got = {d for (d,) in con.execute(f"SELECT DISTINCT direction FROM {t}").fetchall()}
            assert "down" in got and got <= {"down", "up"}, (t, got)
            for paper in PAPERS:
                per = {d for (d,) in con.execute(f"SELECT DISTINCT direction FROM {t} JOIN runs USING (run_id) "
                                                 "WHERE runs.campaign = ?", [paper]).fetchall()}
                want = {"down", "up"} if t in ("connections", "subflows") else {"down"}
                assert want <= per <= {"down", "up"}, (t, paper, per)
        scales = dict(con.execute("SELECT campaign, string_agg(DISTINCT scale)"
                                  " FROM runs GROUP BY campaign").fetchall())
        assert scales == {p: "standard" for p in PAPERS}, scales
    finally:
        con.close()


def _run_tables(root, campaign, run_id, paths=("wifi",)):
    from pipeline import schema
    d = root / run_id
    d.mkdir(parents=True)
    schema.conform("runs", pl.DataFrame({"run_id": [run_id], "campaign": [campaign]})).write_parquet(d / "runs.parquet")
    lt = pl.DataFrame({"run_id": [run_id] * len(paths), "path": list(paths), "direction": ["down"] * len(paths),
                       "packet_id": list(range(len(paths))), "size_bytes": [1500] * len(paths),
                       "arrival_s": [0.0] * len(paths), "departure_s": [0.01] * len(paths),
                       "dropped": [False] * len(paths), "reason": [None] * len(paths)})
    schema.conform("link_truth", lt).write_parquet(d / "link_truth.parquet")


def test_reference_rebuild_of_one_campaign_keeps_the_others_side_files(tmp_path):
    """``python -m pipeline reference`` of one campaign's tables replaces that campaign's
    folder and its rows of link_truth_summary/thinning, and keeps the other campaigns'."""
    from pipeline import reference
    out = tmp_path / "ref"
    _run_tables(tmp_path / "t1", "chen", "a_r1")
    _run_tables(tmp_path / "t1", "ditg", "d_r1")
    assert reference.build([tmp_path / "t1"], out, cap=10) == {"chen": 1, "ditg": 1}
    _run_tables(tmp_path / "t2", "ditg", "d_r2", paths=("wifi", "lte"))
    assert reference.build([tmp_path / "t2"], out, cap=10) == {"ditg": 1}
    s = pl.read_parquet(out / "link_truth_summary.parquet")
    assert sorted(zip(s["run_id"], s["path"])) == [("a_r1", "wifi"), ("d_r2", "lte"), ("d_r2", "wifi")]
    assert pl.read_parquet(out / "chen" / "runs.parquet")["run_id"].to_list() == ["a_r1"]
    assert pl.read_parquet(out / "ditg" / "runs.parquet")["run_id"].to_list() == ["d_r2"]
    assert not list(out.glob("*.tmp"))


def test_reference_add_puts_a_campaigns_parts_together(tmp_path):
    """``--add`` (a campaign captured over several sittings): the second part's runs join the
    first's, a run analysed again replaces its rows, and the side files hold each run once."""
    from pipeline import reference
    out = tmp_path / "ref"
    _run_tables(tmp_path / "t1", "ditg", "d_r1")
    _run_tables(tmp_path / "t1", "chen", "a_r1")
    assert reference.build([tmp_path / "t1"], out, cap=10) == {"chen": 1, "ditg": 1}
    _run_tables(tmp_path / "t2", "ditg", "d_r2")
    _run_tables(tmp_path / "t2", "ditg", "d_r1", paths=("wifi", "lte"))  # d_r1 again, analysed anew
    assert reference.build([tmp_path / "t2"], out, cap=10, add=True) == {"ditg": 2}
    assert sorted(pl.read_parquet(out / "ditg" / "runs.parquet")["run_id"]) == ["d_r1", "d_r2"]
    s = pl.read_parquet(out / "link_truth_summary.parquet")
    assert sorted(zip(s["run_id"], s["path"])) == [("a_r1", "wifi"), ("d_r1", "lte"), ("d_r1", "wifi"),
                                                   ("d_r2", "wifi")]
    assert pl.read_parquet(out / "chen" / "runs.parquet")["run_id"].to_list() == ["a_r1"]
    assert not list(out.glob(".*.tmp"))


def test_workflow_uses_reference_when_not_capturing(tmp_path):
    p = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--cores", "1", "load_db",
                        "--config", "capture=false", f"results_dir={tmp_path}/res"],
                       cwd=REPO, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    out = p.stdout + p.stderr
    for name in PAPERS:
        assert f"data/reference/{name}" in out, name


def test_capture_estimate_refuses_a_binary_file_and_a_typo_of_repetitions_in_one_line(tmp_path):
    """issue 43: `capture estimate` on a binary file gave a traceback, and `repetitions:
    10^12` exhausted memory building the run list; each is refused in one line, exit 2."""
    binary = tmp_path / "campaign.yaml"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00" * 40)
    r = subprocess.run([sys.executable, "-m", "capture", "estimate", str(binary)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "not a text file" in r.stderr and "Traceback" not in r.stderr, r.stderr
    doc = yaml.safe_load(campaign_file("deng").read_text())
    doc["repetitions"] = 10 ** 12
    doc["profiles_file"] = str(campaign_file("deng").parent / "profiles.yaml")
    huge = tmp_path / "huge.yaml"
    huge.write_text(yaml.safe_dump(doc))
    r = subprocess.run([sys.executable, "-m", "capture", "estimate", str(huge)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "maximum" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
