"""Planned n (issue 41, findings.plans): written and read back, said in a verdict's reason."""
from __future__ import annotations

import duckdb

from findings import plans
from papers import PAPERS
from papers.synthetic import build


def test_a_plan_round_trips_and_says_what_it_asks(tmp_path):
    f = plans.write(tmp_path, {"a-claim": {"g1": 8, "g2": 15}, "b-claim": {"g1": 5, "g2": None}}, 100,
                    "data/reference at abc1234")
    assert f.name == plans.FILE and not list(tmp_path.glob(".*.tmp"))
    got = plans.load(tmp_path)
    assert got["a-claim"].n == 15 and got["a-claim"].groups == {"g1": 8, "g2": 15}
    assert got["b-claim"].n is None and got["b-claim"].budget == 100
    assert got["a-claim"].text("chen", 5) == ("planned n = 15 runs per group, this capture has 5 "
                                              "(papers/chen/planned_n.yaml, pilot data/reference at abc1234)")
    assert got["a-claim"].text("chen", 20).startswith("planned n = 15 runs per group (")
    # a group's own plan, not the claim's largest: 8 runs in g1 are all it planned
    assert got["a-claim"].text("chen", 8, "g1").startswith("planned n = 8 runs per group (")
    assert got["a-claim"].text("chen", 5, "g1").startswith("planned n = 8 runs per group, this capture has 5 (")
    assert got["b-claim"].text("chen", 5).startswith("undecidable here: g2 would need more than 100 runs per group")
    assert plans.load(tmp_path / "none") == {}
    # one cell of the findings: over the claim's groups, or one group's own
    assert got["a-claim"].cell() == "8–15" and got["a-claim"].cell("g1") == "8"
    assert got["b-claim"].cell() == "> 100" and got["b-claim"].cell("g1") == "5"
    # a group short of its plan decides nothing; one beyond the budget never does
    a, b = got["a-claim"], got["b-claim"]
    assert a.short_of("g1", 5) and not a.short_of("g1", 8) and a.short_of("g2", 10) and not a.short_of("g2", 15)
    assert b.short_of("g2", 1000) and not b.short_of("g1", 5)
    over = plans.write(tmp_path, {"c-claim": {"g1": 50}}, 20, "pilot")
    c = plans.load(over.parent)["c-claim"]
    assert c.undecidable and c.short_of("g1", 60)
    assert c.text("deng") == ("undecidable here: g1 would need 50 runs per group to be covered and decided, beyond "
                              "the budget of 20 (papers/deng/planned_n.yaml, pilot pilot)")


def test_the_standard_scale_runs_every_plan(tmp_path):
    """Each campaign's standard scale gives every planned group (within the budget) its
    planned runs: counted on a synthetic database of that scale, each run as often as the
    campaign runs it (the groups are the claims' own, so a plan the capture would leave
    short shows here, before any capture)."""
    from findings.measure import Facts
    from papers.coverage import shortfalls
    from papers.registry import all_claims

    db = build(tmp_path / "standard.duckdb", reps=None)
    con = duckdb.connect(str(db), read_only=True)
    try:
        claims = all_claims()
        assert sum(c.plan is not None for c in claims) > 100
        assert shortfalls(claims, Facts(con)) == []
    finally:
        con.close()
    # five runs of everything (the reference's n) leaves the groups planned above five short
    con = duckdb.connect(str(build(tmp_path / "five.duckdb", reps=5)), read_only=True)
    try:
        short = shortfalls(claims, Facts(con))
    finally:
        con.close()
    assert "chen-path-loss-cell / Table 2, AT&T, 2 MB: 5 runs, planned 20" in short and len(short) > 20


def test_a_trial_scale_is_built_from_its_text_and_the_campaign_file_is_not_touched(tmp_path):
    """scripts/fit-scale.py tries each lowered repetition count on a synthetic database
    built from the edited campaign text (``build(..., campaigns=)``): the trial's runs
    follow the text, and the paper's campaign.yaml is never written (a killed fit leaves
    it as it was)."""
    f = PAPERS["cs244"].campaign_file
    before, stamp = f.read_text(), f.stat().st_mtime_ns
    line = "      handover: {repetitions: 5}"
    assert line in before
    trial = before.replace(line, "      handover: {repetitions: 8}")

    def handover_runs(db) -> int:
        con = duckdb.connect(str(db), read_only=True)
        try:
            return con.execute("SELECT count(*) FROM runs WHERE scenario = 'handover'").fetchone()[0]
        finally:
            con.close()

    as_is = handover_runs(build(tmp_path / "a.duckdb", papers=("cs244",), reps=None))
    tried = handover_runs(build(tmp_path / "b.duckdb", papers=("cs244",), reps=None, campaigns={"cs244": trial}))
    assert as_is > 0 and tried == as_is * 8 // 5
    assert f.read_text() == before and f.stat().st_mtime_ns == stamp
