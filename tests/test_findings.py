"""The findings: every statement of each paper's claim inventory becomes one row, with
the paper's number and the band the inventory's reading rules give it, our value with a
95 % interval, a magnitude and a direction verdict (issue 23).

* The inventory: at least 50 headline statements across the five papers, the paper's
  own words (checked against its text when the seeds are at hand), each a claim we
  compute or "not reproducible here" with the reason; each is exactly one row.
* The reading rules: one band per phrase ("about X", "up to X", ...) for every paper,
  always containing the paper's number.
* The verdict rules, on estimates chosen by the test: magnitude (agree / disagree /
  inconclusive / underpowered), direction, equivalence, the multiple-group rule, not
  comparable when a lab check fails, no data below five runs.
* On the synthetic database (every paper's standard-scale grid, 5 runs each) every
  computed row has n ≥ 5 in every group and the columns the issue asks for; the CLI
  and the workflow write the tables.
"""
from __future__ import annotations

import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from findings import COLUMNS, GROUP_COLUMNS
from findings.claim import (AGREE, DIRECTION_ONLY, DISAGREE, INCONCLUSIVE, NO_DATA, NO_DIRECTION, NOT_COMPARABLE,
                            NOT_REPRODUCIBLE, UNDERPOWERED, VERDICTS, Claim, Direction, direction, magnitude)
from findings.evaluate import evaluate_claim, write_csv
from findings.inventory import RELATIVE_TOLERANCE, Entry, band_of
from findings.measure import Group, Measure
from papers.judge import findings
from papers.registry import all_claims, entries
from findings.stats import MIN_RUNS, Estimate, mean, mean_ratio
from papers import PAPERS

ROOT = Path(__file__).resolve().parents[1]
SEEDS = Path(os.environ.get("MPTCP_LAB_SEEDS", ROOT.parent / "shared" / "seeds"))
COMPUTED = (AGREE, DISAGREE, INCONCLUSIVE, UNDERPOWERED, DIRECTION_ONLY, NOT_COMPARABLE)


def by_id(t: pl.DataFrame) -> dict[str, dict]:
    return {r["id"]: r for r in t.iter_rows(named=True)}


# ------------------------------------------------------------------ the inventory

def test_inventory_has_every_headline_statement():
    es = [e for p in PAPERS for e in entries(p)]
    assert len(es) >= 50
    ids = [e.id for e in es]
    assert len(ids) == len(set(ids))
    for p in PAPERS:
        mine = entries(p)
        assert sum(e.reproducible for e in mine) >= 5, f"{p}: at least five statements we compute"
        for e in mine:
            assert e.id.startswith(p + "-") and e.quote and e.where and e.says, e.id
            assert e.reproducible or len(e.reason) > 30, f"{e.id}: 'not reproducible' needs its reason"


def test_every_inventory_entry_is_one_row():
    claims = all_claims()
    rows = [c for c in claims if c.kind != "lab-check"]  # findings and the papers' condition statements
    assert [c.id for c in rows] == [e.id for p in PAPERS for e in entries(p)]
    for c in rows:
        assert bool(c.measure) == c.entry.reproducible, c.id
        if c.measure:
            assert c.statistic and c.config, f"{c.id}: say what we compute and how we ran it"
        if c.equivalence and c.entry.reproducible:
            assert c.margin is not None and len(c.margin_reason) > 30, f"{c.id}: an equivalence margin and its reason"
    check_ids = {c.id for c in claims if c.is_check}
    for c in rows:
        named = {k.partition("@")[0] for k in c.checks}  # check@group names one group of a check
        assert named <= check_ids, f"{c.id}: unknown check {named - check_ids}"


def test_bands_contain_the_papers_number():
    for c in all_claims():
        b, v = c.band, c.entry.paper_value
        if b is not None and v is not None:
            assert b.low <= v <= b.high, c.id
        if c.entry.phrase not in ("ordering", "no-difference"):
            assert v is not None and b is not None and b.rule, f"{c.id}: a number and its band"
        Direction.parse(c.entry.direction)  # a comparison, or none


def _norm(t: str) -> str:
    t = t.replace("ﬁ", "fi").replace("ﬂ", "fl").replace("“", '"').replace("”", '"').replace("’", "'").replace("‘", "'")
    return re.sub(r"[\s*\-–—]+", "", t).lower()


@pytest.mark.skipif(not SEEDS.is_dir(), reason=f"the papers' texts are not here ({SEEDS}; set MPTCP_LAB_SEEDS)")
@pytest.mark.parametrize("paper", list(PAPERS))
def test_quotes_are_the_papers_words(paper):
    text = _norm((SEEDS / PAPERS[paper].seed_file).read_text())
    for e in entries(paper):
        for frag in re.split(r"\.\.\.|…|\[[^\]]*\]", e.quote):
            frag = frag.strip(" .")
            if len(frag) > 12:
                assert _norm(frag) in text, f"{e.id}: not the paper's words: {frag!r}"


# ------------------------------------------------------------------ the reading rules

def entry(phrase, value=None, low=None, high=None, se=None, precision=None, no_effect=0.0, direction="none",
          status="claim", unit="%") -> Entry:
    return Entry(paper="t", id="t-x", where="§1", quote="q", says="s", phrase=phrase, value=value, low=low,
                 high=high, se=se, precision=precision, unit=unit, no_effect=no_effect, direction=direction,
                 statistic="", protocol="", status=status, reason="", needs="", notes="")


@pytest.mark.parametrize("phrase, kw, low, high", [
    ("exact", dict(value=50), 40, 60), ("about", dict(value=50), 40, 60),  # one reading for "about" and a number
    ("about", dict(value=1.0, no_effect=1.0), 0.8, 1.2),  # "about the same": ± 20 % of the number itself
    ("up-to", dict(value=30), 0, 36), ("up-to", dict(value=-25), -30, 0),  # "up to": the same for either sign
    ("more-than", dict(value=40), 40, math.inf), ("less-than", dict(value=0.5), -math.inf, 0.5),
    ("range", dict(low=20, high=30), 20, 30), ("mean-se", dict(value=140.9, se=1.1), 140.9 - 2.156, 140.9 + 2.156),
    ("ci", dict(value=5, low=3, high=8), 3, 8), ("about", dict(value=2.0, precision=0.25, no_effect=None), 1.75, 2.25),
])
def test_reading_rules(phrase, kw, low, high):
    b = band_of(entry(phrase, **kw))
    assert (b.low, b.high) == pytest.approx((low, high))
    assert RELATIVE_TOLERANCE == 0.2


def test_ordering_and_no_difference_have_no_number():
    assert band_of(entry("ordering", direction="< 1")) is None and band_of(entry("no-difference")) is None
    c = Claim(entry=entry("no-difference"), margin=5.0, margin_reason="r")
    assert (c.band.low, c.band.high) == (-5.0, 5.0) and c.effect == 10.0


# ------------------------------------------------------------------ the verdict rules

def est(value, lo, hi, lo_adj=None, hi_adj=None, n=5, lo_eq=None, hi_eq=None) -> Estimate:
    return Estimate(value, lo, hi, n, lo if lo_adj is None else lo_adj, hi if hi_adj is None else hi_adj,
                    lo if lo_eq is None else lo_eq, hi if hi_eq is None else hi_eq)


EXACT_50 = Claim(entry=entry("exact", value=50, direction="> 0"))  # band [40, 60], effect 50


@pytest.mark.parametrize("groups, verdict", [
    ([est(50, 45, 55)], AGREE), ([est(80, 70, 90)], DISAGREE), ([est(55, 50, 65)], INCONCLUSIVE),
    ([est(50, -20, 90)], UNDERPOWERED),  # wider than the paper's effect (50)
    # several groups: every one inside to agree; one outside at the Bonferroni level to disagree
    ([est(50, 45, 55), est(52, 41, 59)], AGREE), ([est(50, 45, 55), est(55, 50, 65)], INCONCLUSIVE),
    ([est(50, 45, 55), est(70, 62, 80, lo_adj=58, hi_adj=85)], INCONCLUSIVE),
    ([est(50, 45, 55), est(75, 66, 80, lo_adj=61, hi_adj=85)], DISAGREE),
])
def test_magnitude(groups, verdict):
    assert magnitude(EXACT_50, [(f"g{i}", e) for i, e in enumerate(groups)])[0] == verdict


@pytest.mark.parametrize("groups, verdict", [
    ([est(5, 1, 9)], AGREE), ([est(-5, -9, -1)], DISAGREE), ([est(1, -1, 3)], INCONCLUSIVE),
    ([est(5, 1, 9), est(2, 0.5, 4)], AGREE), ([est(5, 1, 9), est(-4, -8, -0.5, lo_adj=-9, hi_adj=0.5)], INCONCLUSIVE),
])
def test_direction(groups, verdict):
    assert direction(EXACT_50, [(f"g{i}", e) for i, e in enumerate(groups)])[0] == verdict
    assert direction(Claim(entry=entry("exact", value=1)), [("g", est(1, 0, 2))])[0] == NO_DIRECTION
    assert magnitude(Claim(entry=entry("ordering", direction="< 1")), [("g", est(1, 0, 2))])[0] == DIRECTION_ONLY


def test_equivalence_uses_the_90_percent_interval_and_the_margin():
    c = Claim(entry=entry("no-difference"), margin=5.0, margin_reason="r")
    assert magnitude(c, [("g", est(1, -6, 7, lo_eq=-4, hi_eq=4.5))])[0] == AGREE  # TOST: 90 % inside ± 5
    assert magnitude(c, [("g", est(12, 7, 18))])[0] == DISAGREE
    assert magnitude(c, [("g", est(3, -2, 8, lo_eq=-1, hi_eq=7))])[0] == INCONCLUSIVE
    assert magnitude(c, [("g", est(3, -20, 25, lo_eq=-15, hi_eq=20))])[0] == UNDERPOWERED  # wider than 2 × margin
    # "the CI contains 0" is not agreement (the old rule): [-2.4, +271] is underpowered
    assert magnitude(c, [("g", est(18.7, -2.4, 271, lo_eq=0, hi_eq=200))])[0] == UNDERPOWERED


def test_the_interval_shown_is_the_one_the_verdict_used():
    """issue 41: ci_low/ci_high are the interval the verdict was decided with, ci_level says
    which: disagree at the Bonferroni level, a "no difference" agree at 90 %, else 95 %."""
    from findings.claim import interval_used
    from findings.evaluate import _row
    e = Estimate(75, 66, 80, 5, 61, 85, 68, 79, level_adj=1 - 0.05 / 3)
    assert e.shown(interval_used(EXACT_50, DISAGREE, AGREE)) == (61, 85, pytest.approx(1 - 0.05 / 3))
    assert e.shown(interval_used(EXACT_50, AGREE, AGREE)) == (66, 80, 0.95)
    assert interval_used(EXACT_50, UNDERPOWERED, DISAGREE) == "95"
    assert interval_used(Claim(entry=entry("ordering", direction="< 1")), DIRECTION_ONLY, DISAGREE) == "adj"
    eq = Claim(entry=entry("no-difference"), margin=5.0, margin_reason="r")
    assert e.shown(interval_used(eq, AGREE, NO_DIRECTION))[2] == pytest.approx(0.90)
    row = _row(EXACT_50, DISAGREE, AGREE, "why", e, n_groups=3, group="g")
    assert (row["ci_low"], row["ci_high"], row["ci_level"]) == (61, 85, pytest.approx(1 - 0.05 / 3))


def _measure(values: dict[str, list[float]], stat=None):
    return lambda f: Measure([Group("g", {k: np.asarray(v) for k, v in values.items()})], stat or mean("x"))


def test_a_failing_lab_check_makes_a_row_not_comparable():
    c = Claim(entry=entry("exact", value=50), measure=_measure({"x": [49, 50, 51, 50, 52]}), checks=("lab-a",),
              statistic="s", config="c")
    ok = {"lab-a": {"magnitude_verdict": AGREE, "reason": ""}}
    bad = {"lab-a": {"magnitude_verdict": INCONCLUSIVE, "reason": "ours 185 ms"}}
    assert evaluate_claim(c, object(), ok)[0]["magnitude_verdict"] == AGREE
    row, groups = evaluate_claim(c, object(), bad)
    assert row["magnitude_verdict"] == row["direction_verdict"] == NOT_COMPARABLE
    assert "lab-a" in row["reason"] and row["our_value"] == pytest.approx(50.4) and len(groups) == 1


def test_a_group_is_judged_only_where_its_conditions_hold():
    """issue 40: each compared group names the conditions its number was measured under;
    a group whose condition fails is not comparable, the others are judged."""
    x = np.asarray([49, 50, 51, 50, 52], dtype=float)
    groups = [Group("4 MB", {"x": x}, checks=("cond-4mb",)), Group("8 MB", {"x": x + 100}, checks=("cond-8mb",))]
    c = Claim(entry=entry("exact", value=50), measure=lambda f: Measure(groups, mean("x")), statistic="s", config="c")
    ok, bad = {"magnitude_verdict": AGREE, "direction_verdict": NO_DIRECTION, "reason": ""}, {
        "magnitude_verdict": DISAGREE, "direction_verdict": NO_DIRECTION, "reason": "ours 300 ms"}
    # both hold: 8 MB (150) lies outside the band -> disagree
    row, _ = evaluate_claim(c, object(), {"cond-4mb": ok, "cond-8mb": ok})
    assert row["magnitude_verdict"] == DISAGREE and row["group"] == "8 MB"
    # 8 MB's condition fails: judged on 4 MB alone (agree), 8 MB named as not comparable
    row, grows = evaluate_claim(c, object(), {"cond-4mb": ok, "cond-8mb": bad})
    assert row["magnitude_verdict"] == AGREE and row["n_groups"] == 1 and row["group"] == "4 MB"
    assert "8 MB: cond-8mb (disagree: ours 300 ms)" == row["not_comparable_groups"]
    assert "not comparable" in row["reason"] and row["checks"] == "cond-4mb; cond-8mb"
    assert [(g["group"], g["magnitude_verdict"], g["checks"]) for g in grows] == [
        ("4 MB", AGREE, "cond-4mb"), ("8 MB", NOT_COMPARABLE, "cond-8mb")]
    # every group's condition fails (or is unknown): not comparable, our value kept
    row, _ = evaluate_claim(c, object(), {"cond-4mb": bad})
    assert row["magnitude_verdict"] == row["direction_verdict"] == NOT_COMPARABLE
    assert "cond-8mb: unknown check" in row["reason"] and row["our_value"] is not None


def test_a_group_with_its_own_number_is_held_to_its_band():
    """A table prints one number per column (Table 6's 4 and 8 MB): each group is judged
    against its own cell's band, the row shows the deciding group's."""
    from findings.claim import PaperNumber
    from findings.inventory import Band
    x = np.asarray([9.8, 10.1, 10.0, 9.9, 10.2])
    n4 = PaperNumber(10.0, "10 ± 1", Band(8.04, 11.96, "mean ± 1.96 s.e."), 9.0)
    n8 = PaperNumber(30.0, "30 ± 2", Band(26.08, 33.92, "mean ± 1.96 s.e."), 29.0)
    groups = [Group("4 MB", {"x": x}, number=n4), Group("8 MB", {"x": x * 2}, number=n8)]
    c = Claim(entry=entry("ordering", direction="> 1", no_effect=1), measure=lambda f: Measure(groups, mean("x")),
              statistic="s", config="c")
    row, grows = evaluate_claim(c, object(), {})
    assert [g["magnitude_verdict"] for g in grows] == [AGREE, DISAGREE]
    assert row["magnitude_verdict"] == DISAGREE and row["group"] == "8 MB"
    assert (row["band_low"], row["band_high"], row["paper_value"]) == (26.08, 33.92, 30.0)
    assert row["paper_text"] == "8 MB: 30 ± 2"


def test_a_statement_without_a_number_holds_by_its_direction():
    from findings.claim import holds
    assert holds({"magnitude_verdict": DIRECTION_ONLY, "direction_verdict": AGREE})
    assert not holds({"magnitude_verdict": DIRECTION_ONLY, "direction_verdict": INCONCLUSIVE})
    assert not holds({"magnitude_verdict": UNDERPOWERED, "direction_verdict": AGREE})


def test_fewer_than_five_runs_is_no_data():
    assert MIN_RUNS == 5
    c = Claim(entry=entry("exact", value=1, no_effect=None), statistic="s", config="c",
              measure=_measure({"a": [1, 1.1, 0.9, 1.0, 1.2], "b": [2, 2.1, 1.9, 2.0]}, mean_ratio("a", "b")))
    row, _ = evaluate_claim(c, object(), {})
    assert row["magnitude_verdict"] == NO_DATA and "n = 4" in row["reason"] and row["our_value"] is None


def test_not_reproducible_rows_say_why():
    for c in all_claims():
        if c.not_reproducible:
            row, _ = evaluate_claim(c, None)
            assert row["magnitude_verdict"] == NOT_REPRODUCIBLE and len(row["reason"]) > 30


# ------------------------------------------------------------------ CS244's three-path handover, by hand

# Bytes per second each path delivers in each phase of CS244 Fig. 2's schedule (seconds
# after the SYN), and a value in the seconds between the phases that no window may read.
PHASES = {range(1, 6): {"eth": 1_000_000, "wifi": 200_000, "lte": 100_000},       # every link up
          range(8, 13): {"wifi": 220_000, "lte": 110_000},                        # Ethernet down
          range(15, 20): {"lte": 200_000},                                         # only 3G up
          range(38, 48): {"eth": 900_000, "wifi": 200_000, "lte": 100_000}}       # every link up again
BETWEEN = (0, 6, 7, 13, 14, 20, 30, 37, 48, 49)


def test_cs244_three_path_handover_claims_by_construction(tmp_path):
    """Five handover3 runs whose per-path bytes per second are written by hand (each run
    scaled by its own factor, so the ratios are the phases' own): every claim on them is
    the value computed here from PHASES."""
    from labdb import Lab

    import papers.cs244.claims as c
    from findings.measure import Facts
    from pipeline import derived

    lab = Lab()
    links = {"wifi": (12.0, 0.03, 2.0), "lte": (152.0, 0.02, 2.0), "eth": (4.0, 0.0, 10.0)}
    for k in range(MIN_RUNS):
        rid = lab.run("cs244", "handover3", "MP-3", 0, cc="lia", workload="iperf3-down", paths=links, download_s=50.0,
                      outages={"eth": [[7, 28]], "wifi": [[14, 21]]})
        rows = [(sec, p, b) for secs, per in PHASES.items() for sec in secs for p, b in per.items()]
        rows += [(sec, p, 77_777_777) for sec in BETWEEN for p in links]
        for sec, p, b in rows:
            lab.rows["delivered_1s"].append(dict(run_id=rid, trace=f"{rid}/client.pcap", conn_id=0, subflow_id=0,
                                                 path=p, second=sec, payload_bytes=int(b * (1 + k / 10)), packets=1))
    con = derived.connect(lab.write(tmp_path / "h3.duckdb"))
    try:
        f = Facts(con)
    finally:
        con.close()
    up, eth_down, only_3g, back = ({p: b for p, b in per.items()} for per in PHASES.values())

    def value(measure, label_part=""):
        m = measure(f)
        g = next(g for g in m.groups if label_part in g.label)
        assert min(len(v) for v in g.samples.values()) == MIN_RUNS
        return m.statistic.value(g.samples)

    assert value(c.eth_highest) == pytest.approx(up["eth"] / up["wifi"])
    assert value(c.eth_bulk) == pytest.approx(100 * up["eth"] / sum(up.values()))
    assert value(c.migrate) == pytest.approx(eth_down["wifi"] / eth_down["lte"])
    assert value(c.cell_only) == pytest.approx(only_3g["lte"] / sum(up.values()))
    assert value(c.resume) == pytest.approx(100 * (sum(back.values()) / sum(up.values()) - 1))
    assert value(c.recover, "Ethernet") == pytest.approx(100 * (back["eth"] / up["eth"] - 1))
    assert value(c.recover, "WiFi") == pytest.approx(0.0, abs=1e-9)


# ------------------------------------------------------------------ Chen's variability claim, by hand

# Five download times per configuration of Chen's time-varying scenario: with five runs
# numpy's quartiles are the 2nd and 4th order statistics, so each IQR is read off by hand.
VARIABLE_TIMES = {
    512_000: {"MP-2": [1.0, 1.1, 1.2, 1.3, 5.0],     # IQR 1.3 - 1.1 = 0.2
              "SP-wifi": [2.0, 2.5, 3.0, 3.5, 2.2],  # sorted 2.0 2.2 2.5 3.0 3.5: IQR 0.8
              "SP-lte": [4.0, 4.4, 4.1, 4.9, 4.5]},  # sorted 4.0 4.1 4.4 4.5 4.9: IQR 0.4
    4_000_000: {"MP-2": [10, 12, 14, 16, 18],        # IQR 4
                "SP-wifi": [20, 21, 22, 23, 24],     # IQR 2
                "SP-lte": [30, 33, 36, 39, 42]},     # IQR 6
}


def test_chen_reduces_variability_by_construction(tmp_path):
    """IQR of MP-2 (lia) ÷ the smaller single-path IQR, per size, of the variable-att runs
    alone: 0.2 ÷ min(0.8, 0.4) = 0.5 at 512 KB, 4 ÷ min(2, 6) = 2 at 4 MB. Runs of another
    scenario, MP-2 with another congestion control and a stalled run are not samples."""
    from labdb import Lab

    import papers.chen.claims as c
    from findings.measure import Facts
    from pipeline import derived

    lab = Lab()
    links = {"wifi": (19.0, 0.021, 20.0), "lte": (60.0, 0.0, 8.0)}
    for size, modes in VARIABLE_TIMES.items():
        for mode, times in modes.items():
            paths = {p: links[p] for p in ({"SP-wifi": ("wifi",), "SP-lte": ("lte",)}.get(mode, ("wifi", "lte")))}
            cc = "lia" if mode == "MP-2" else "cubic"
            for k, t in enumerate(times):
                lab.run("chen", "variable-att", mode, size, cc=cc, rep=k + 1, paths=paths, download_s=t)
            # decoys: a stalled run, the same configuration in a stationary scenario
            lab.run("chen", "variable-att", mode, size, cc=cc, rep=9, paths=paths, download_s=1000.0, stalled=True)
            lab.run("chen", "att", mode, size, cc=cc, rep=1, paths=paths, download_s=500.0)
        lab.run("chen", "variable-att", "MP-2", size, cc="reno", rep=1, paths=links, download_s=700.0)
    con = derived.connect(lab.write(tmp_path / "var.duckdb"))
    try:
        f = Facts(con)
    finally:
        con.close()
    m = c.reduces_variability(f)
    assert [g.label for g in m.groups] == ["att, time-varying links, 512 KB", "att, time-varying links, 4 MB"]
    for g, want in zip(m.groups, (0.2 / 0.4, 4 / 2)):
        assert all(len(v) == MIN_RUNS for v in g.samples.values())
        assert m.statistic.value(g.samples) == pytest.approx(want)
        assert g.checks == ()
    row, groups = evaluate_claim(next(x for x in all_claims() if x.id == "chen-reduces-variability"), f, {})
    assert [(g["group"], round(g["value"], 9)) for g in groups] == [("att, time-varying links, 512 KB", 0.5),
                                                                   ("att, time-varying links, 4 MB", 2.0)]
    assert row["magnitude_verdict"] == DIRECTION_ONLY and all(g["ci_low"] <= g["value"] <= g["ci_high"] for g in groups)


# ------------------------------------------------------------------ every paper on the synthetic database

@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from papers.synthetic import build
    return build(tmp_path_factory.mktemp("syn") / "syn.duckdb", reps=MIN_RUNS)


def check_rows(rows: list[dict]) -> None:
    for r in rows:
        assert r["magnitude_verdict"] in VERDICTS and r["direction_verdict"] in VERDICTS, r["id"]
        lo, hi, v = (float(r[k]) if r[k] not in (None, "") else None for k in ("band_low", "band_high", "paper_value"))
        if v is not None and lo is not None:
            assert lo <= v <= hi, r["id"]
        if r["magnitude_verdict"] in COMPUTED:
            ours, cl, ch = (float(r[k]) for k in ("our_value", "ci_low", "ci_high"))
            assert cl <= ours <= ch and int(r["n"]) >= MIN_RUNS, r["id"]
        if r["magnitude_verdict"] not in (AGREE, DIRECTION_ONLY) or r["direction_verdict"] == DISAGREE:
            assert r["reason"], r["id"]


def test_every_claim_computes_on_the_synthetic_database(synthetic):
    t, checks, groups = findings(synthetic)
    rows = t.to_dicts()
    check_rows(rows)
    missing = [r["id"] for r in rows if r["magnitude_verdict"] == NO_DATA]
    assert not missing, f"claims without data on every paper's standard grid: {missing}"
    assert (groups["n"] >= MIN_RUNS).all()
    computed = {r["id"] for r in [*rows, *checks.to_dicts()] if r["our_value"] is not None}
    assert set(groups["id"]) == computed
    # a table cell of a size the standard scale does not run (Chen's 16 and 32 MB columns) has no data
    assert set(checks.filter(pl.col("our_value").is_null())["magnitude_verdict"]) <= {NO_DATA}
    # the statistics in use are the kinds whose coverage tests/test_interval_coverage.py checks
    from findings.measure import Facts
    from findings.evaluate import load_facts
    facts, _ = load_facts(synthetic)
    assert isinstance(facts, Facts)
    measured = [c.measure(facts) for c in all_claims() if c.measure is not None]
    kinds = {m.statistic.kind for m in measured if m.groups}
    assert kinds <= {"mean", "mean_diff", "mean_ratio", "pooled", "boot", "design"}  # design: exact, no sampling


def test_quick_scale_runs_are_figures_only(tmp_path, synthetic):
    """issue 24: quick captures (one or two runs per configuration) are never judged as
    evidence: a paper with quick-scale runs gets no verdict, the rest are untouched."""
    import duckdb

    from findings.evaluate import QUICK_SCALE

    db = tmp_path / "quick.duckdb"
    shutil.copy(synthetic, db)
    con = duckdb.connect(str(db))
    con.execute("UPDATE runs SET scale = 'quick' WHERE campaign = 'cs244'")  # meta.json's scale, lifted
    con.close()
    base, _, _ = findings(synthetic, resamples=200)
    t, checks, _ = findings(db, resamples=200)
    for frame in (t, checks):
        cs = frame.filter(pl.col("paper") == "cs244")
        computed = cs.filter(pl.col("our_value").is_not_null())
        assert computed.height > 0
        assert set(computed["magnitude_verdict"]) == {NOT_COMPARABLE}
        assert set(computed["reason"]) == {QUICK_SCALE}
    others = lambda f: f.filter(pl.col("paper") != "cs244").select("id", "magnitude_verdict", "direction_verdict")  # noqa: E731
    assert others(t).equals(others(base))


def test_csv_and_cli(tmp_path, synthetic):
    out, checks, groups = tmp_path / "f.csv", tmp_path / "c.csv", tmp_path / "g.csv"
    r = subprocess.run([sys.executable, "-m", "papers", "findings", "--db", str(synthetic), "--out", str(out), "--checks",
                        str(checks), "--groups", str(groups)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(out.open()))
    assert list(rows[0]) == COLUMNS and len(rows) == sum(len(entries(p)) for p in PAPERS)
    assert list(next(csv.DictReader(groups.open()))) == GROUP_COLUMNS
    check_rows(rows)
    write_csv(pl.DataFrame({"a": [1]}), tmp_path / "x.csv")
    assert not list(tmp_path.glob(".*.tmp"))


def test_an_unreadable_database_gives_no_data_not_a_crash(tmp_path):
    import duckdb
    from pipeline.schema import ddl
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute(ddl("runs"))
    con.close()
    t, _, _ = findings(other)
    assert set(t["magnitude_verdict"]) <= {NO_DATA, NOT_REPRODUCIBLE}
    assert all("cannot be read as a lab database" in r for r in t.filter(pl.col("magnitude_verdict") == NO_DATA)["reason"])


def test_workflow_writes_findings_checks_and_groups(tmp_path):
    res = tmp_path / "results"
    r = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "findings", "--config", "capture=false",
                        f"results_dir={res}"], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr[-4000:]
    rows = list(csv.DictReader((res / "findings.csv").open()))
    assert list(rows[0]) == COLUMNS
    check_rows(rows)
    check_rows(list(csv.DictReader((res / "lab-checks.csv").open())))
    assert (res / "findings-groups.csv").is_file()


# ------------------------------------------------------------------ the reference data

REFERENCE = ROOT / "data" / "reference"


def reference_dirs() -> list[Path]:
    return sorted({p.parent for p in REFERENCE.rglob("runs.parquet")}) if REFERENCE.is_dir() else []


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    if not reference_dirs():
        pytest.skip("data/reference/ has no reference tables")
    db = tmp_path_factory.mktemp("ref") / "reference.duckdb"
    r = subprocess.run([sys.executable, "-m", "pipeline", "load", *map(str, reference_dirs()), "--db", str(db)],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return findings(db)


def test_reference_findings(reference):
    t, checks, groups = reference
    check_rows(t.to_dicts())
    computed = t.filter(pl.col("our_value").is_not_null())
    assert (computed["n"] >= MIN_RUNS).all() and (groups["n"] >= MIN_RUNS).all()


def test_every_interval_names_its_level(reference):
    """issue 41: every computed row and group says the level of the interval it shows: 95 %,
    90 % for a "no difference" agree, or the Bonferroni level 1 − 0.05/k of a disagree."""
    t, checks, groups = reference
    for tab in (t, checks, groups):
        shown = tab.filter(pl.col("ci_low").is_not_null())
        assert shown.height and shown["ci_level"].is_not_null().all()
        k = (0.05 / (1 - shown["ci_level"])).round(6)
        assert ((shown["ci_level"] == 0.95) | ((shown["ci_level"] - 0.90).abs() < 1e-9)
                | ((k - k.round(0)).abs() < 1e-6)).all()
    v = "magnitude_verdict"
    assert (t.filter(pl.col(v) == AGREE)["ci_level"] <= 0.95 + 1e-9).all()
    assert (t.filter(pl.col(v) == DISAGREE)["ci_level"] >= 0.95 - 1e-9).all()
    assert (groups["ci_level_adj"] >= 0.95 - 1e-9).all()


def test_every_row_and_group_says_its_planned_n(reference):
    """issue 41: the runs each claim's plan asks are in a column of both tables, the same as
    the claim's plan; a row of a claim planned beyond the budget says "undecidable here"
    and the n it would need."""
    t, _, groups = reference
    plans = {c.id: c.plan for c in all_claims() if c.plan is not None}
    assert len(plans) > 100
    for r in t.iter_rows(named=True):
        assert r["planned_n"] == (plans[r["id"]].cell() if r["id"] in plans else ""), r["id"]
    for r in groups.filter(pl.col("id").is_in(list(plans))).iter_rows(named=True):
        assert r["planned_n"] == plans[r["id"]].cell(r["group"]), (r["id"], r["group"])
    over = [cid for cid, p in plans.items() if p.undecidable]
    assert over
    said = t.filter(pl.col("id").is_in(over) & ~pl.col("magnitude_verdict").is_in([NOT_COMPARABLE, NO_DATA]))
    assert said.height
    for r in said.iter_rows(named=True):
        assert "undecidable here" in r["reason"] and " would need " in r["reason"], r["id"]


def test_every_failing_check_gates_a_claim_group(reference):
    """issue 40: a lab check or a paper's condition statement that does not hold here says
    which verdicts it withholds: it gates at least one compared group of a finding."""
    from findings.evaluate import ungated_failures
    t, checks, groups = reference
    assert ungated_failures(t, checks, groups) == []


def test_every_row_says_its_basis(reference):
    """issue 40: calibration and reading rows say why; only outcome rows count as independent."""
    from findings.claim import BASES, OUTCOME
    t, _, _ = reference
    assert set(t["basis"]) <= set(BASES)
    for r in t.filter(pl.col("basis") != OUTCOME).iter_rows(named=True):
        assert len(r["basis_reason"]) > 20, r["id"]
    assert not t.filter(pl.col("reason").str.contains("takes it as its configuration|takes as its configuration")).height


def test_readme_counts_are_the_references(reference):
    """The README's table of verdict counts per paper is what data/reference gives."""
    from findings.evaluate import counts_table
    t, _, _ = reference
    readme = (ROOT / "README.md").read_text()
    assert counts_table(t) in readme, "README.md: update the verdict counts (python -m papers findings --markdown)"


# ------------------------------------------------------------------ a fresh capture, end to end

def capture_blockers() -> list[str]:
    why = []
    if os.geteuid() != 0:
        why.append("needs root (network namespaces)")
    try:
        if Path("/proc/sys/net/mptcp/enabled").read_text().strip() != "1":
            why.append("net.mptcp.enabled is 0")
    except OSError:
        why.append("kernel without MPTCP")
    if not (ROOT / "capture/linkem/target/release/linkem").exists():
        why.append("linkem not built (make linkem)")
    for tool in ("tcpdump", "nginx", "wget", "mptcpize", "tshark", "mergecap"):
        if not shutil.which(tool):
            why.append(f"{tool} missing")
    return why


# Chen's AT&T scenario written out (papers/chen/profiles.yaml), MP-2 with lia at 4 MB and
# the single paths, one spare repetition for a run the host stalls.
MINI_REPETITIONS = MIN_RUNS + 1
MINI = f"""
name: chen-findings-mini
paper: "Chen et al., IMC 2013 (the findings test's small campaign)"
seed: 5
sysctl_profile: chen2013
congestion_control: cubic
congestion_controls: [lia]
timeout_s: 120
scenarios:
  att:
    wifi: {{rate_mbit: 20, rtt_ms: 20, queue_bytes: 75000, down: {{loss: 0.017}}}}
    lte: {{rate_mbit: 8, rtt_ms: 60, queue_bytes: 100000}}
modes: [MP-2]
sizes: [4MB]
repetitions: {MINI_REPETITIONS}
"""


@pytest.mark.skipif(bool(capture_blockers()), reason="fresh capture not possible here: " + "; ".join(capture_blockers()))
def test_fresh_capture_gives_a_verdict_with_an_interval(tmp_path):
    yml = tmp_path / "chen-findings-mini.yaml"
    yml.write_text(MINI)
    raw = tmp_path / "raw"
    r = subprocess.run([sys.executable, "-m", "capture", "run", str(yml), "--out", str(raw), "--no-progress"],
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    runs = sorted(p.parent for p in raw.rglob("meta.json"))
    assert len(runs) == MINI_REPETITIONS
    status = json.loads((raw / "chen-findings-mini" / "campaign-status.json").read_text())
    assert status["seed"] == 5 and all(json.loads((d / "meta.json").read_text())["campaign_seed"] == 5 for d in runs)
    db = tmp_path / "fresh.duckdb"
    r = subprocess.run([sys.executable, "-m", "pipeline", "analyze", *map(str, runs), "--db", str(db)],
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    row = by_id(findings(db, paper="chen")[0])["chen-cell-share-4mb"]
    print(row, status)
    if len(status["stalled"]) > MINI_REPETITIONS - MIN_RUNS:
        pytest.skip(f"the host stalled the link emulator in {len(status['stalled'])} runs: too few for a verdict")
    assert row["n"] >= MIN_RUNS and row["magnitude_verdict"] in COMPUTED
    check_rows([row])


def test_a_check_failing_in_one_group_is_gated_only_where_that_group_is_named():
    """ungated_failures: a check whose failing is one of its groups' (check@group) counts as
    gated where a finding's group names that group or the whole check, not another of its
    groups; the ids are joined with CHECK_SEP, as a group's label may hold ", "."""
    from findings.evaluate import CHECK_SEP, ungated_failures
    ok = {"magnitude_verdict": AGREE, "direction_verdict": NO_DIRECTION}
    bad = {"magnitude_verdict": DISAGREE, "direction_verdict": NO_DIRECTION}
    checks = pl.DataFrame([{"id": "lab-x", "kind": "lab check", **bad}])
    findings_t = pl.DataFrame([{"id": "claim", "kind": "finding", **ok}])

    def groups(named: str) -> pl.DataFrame:
        return pl.DataFrame([
            {"id": "lab-x", "kind": "lab check", "group": "maps, P1", "checks": "", **bad},
            {"id": "lab-x", "kind": "lab check", "group": "netflix, P1", "checks": "", **ok},
            {"id": "claim", "kind": "finding", "group": "g", "checks": named, **ok}])
    assert ungated_failures(findings_t, checks, groups("lab-x@netflix, P1")) == ["lab-x@maps, P1"]
    assert ungated_failures(findings_t, checks, groups(CHECK_SEP.join(["lab-y", "lab-x@maps, P1"]))) == []
    assert ungated_failures(findings_t, checks, groups("lab-x")) == []
    # a whole check failing with no failing group is gated by any of its groups
    checks_ok_groups = pl.DataFrame([
        {"id": "lab-x", "kind": "lab check", "group": "maps, P1", "checks": "", **ok},
        {"id": "claim", "kind": "finding", "group": "g", "checks": "lab-x@maps, P1", **ok}])
    assert ungated_failures(findings_t, checks, checks_ok_groups) == []
    assert ungated_failures(findings_t, checks, checks_ok_groups.with_columns(checks=pl.lit(""))) == ["lab-x"]
