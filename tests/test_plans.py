"""Planned n (issue 41, findings.plans): written and read back, said in a verdict's reason."""
from __future__ import annotations

from findings import plans


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
    import duckdb

    from findings.measure import Facts
    from papers.coverage import shortfalls
    from papers.registry import all_claims
    from papers.synthetic import build

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
