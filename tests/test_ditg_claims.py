"""The D-ITG claims' lab checks of the offered and the delivered traffic
(papers/ditg/claims.py) on runs written by hand (tests/labdb.py): every pair value and
share below is set by the test."""
from __future__ import annotations

import hashlib

import polars as pl
import pytest

from findings.claim import AGREE
from findings.evaluate import CHECK_SEP, evaluate_claim, load_facts
from papers.registry import all_claims
from labdb import Lab
from papers.ditg import claims

SYM = {"wifi": (40.0, 0.0, 100.0), "lte": (40.0, 0.0, 100.0)}


def sha(x: str) -> str:
    return hashlib.sha256(x.encode()).hexdigest()


def ditg_run(lab: Lab, mode: str, rep: int, schedule: str, sent: int, received: int, drained: bool) -> str:
    paths = SYM if mode == "MP-2" else {"wifi": SYM["wifi"]}
    return lab.run("ditg", "sym-rtt40", mode, cc="lia" if mode == "MP-2" else "cubic", workload="ditg-netflix",
                   rep=rep, paths=paths, latency=[20.0] * received,
                   result={"schedule_sha256": schedule, "schedule_packets": 10, "sent_packets": sent,
                           "received_packets": received, "drained": drained})


@pytest.fixture
def facts(tmp_path):
    """Five repetition pairs over equal 40-ms paths, Netflix, 10 scheduled packets each:
    rep 1-3 the same schedule, all generated and received; rep 4: MPTCP's ITGSend
    generated 9 of the 10; rep 5: MPTCP replayed another schedule; TCP of rep 2 received 8
    of its 10 and did not drain."""
    lab = Lab()
    for rep in range(1, 6):
        s = sha(f"rep{rep}")
        ditg_run(lab, "SP-wifi", rep, s, 10, 8 if rep == 2 else 10, rep != 2)
        ditg_run(lab, "MP-2", rep, sha("other") if rep == 5 else s, 9 if rep == 4 else 10, 9 if rep == 4 else 10,
                 True)
    f, why = load_facts(lab.write(tmp_path / "lab.duckdb"))
    assert f is not None, why
    return f


def test_offered_load_pairs_one_schedule_and_compares_what_was_generated(facts):
    m = claims.offered_load([(claims.SYM40, ("netflix",))])(facts)
    (g,) = m.groups
    # 100 × (MPTCP ÷ TCP generated − 1): 0, 0, 0, 100 × (9/10 − 1) = −10; two schedules: 100
    assert sorted(g.samples["x"].tolist()) == pytest.approx([-10.0, 0.0, 0.0, 0.0, 100.0])
    assert "generated other than their schedule's packets" in m.note


def test_delivered_share_per_role(facts):
    m = claims.delivered(claims.SYM40, ("netflix",))(facts)
    by = {g.label: g.samples["p"] for g in m.groups}
    mp, tcp = by["netflix, MPTCP P1 40 ms / P2 40 ms"], by["netflix, TCP over P1 (P1 40 ms)"]
    assert sorted(map(tuple, mp.tolist())) == [(9, 9)] + [(10, 10)] * 4
    assert sorted(map(tuple, tcp.tolist())) == [(8, 10)] + [(10, 10)] * 4
    assert m.statistic.value({"p": tcp}) == pytest.approx(100 * 48 / 50)
    assert m.statistic.value({"p": mp}) == pytest.approx(100.0)
    assert "1 run(s) did not drain" in m.note


def test_bands_are_exact():
    """No tolerance on the offered load; 100 % ± 0.1 % delivered; every compared group
    rests on the delivery of each role it compares, in its own configuration."""
    ours = {c.id: c for c in all_claims() if c.paper == "ditg"}
    for cid in ("lab-ditg-same-offered-load", "lab-ditg-same-offered-load-asym"):
        b = ours[cid].band
        assert (b.low, b.high) == (0.0, 0.0) and "margin of 0" in b.rule
    for key in claims.DELIVERED:
        b = ours[f"lab-ditg-delivered-{key}"].band
        assert (b.low, b.high) == pytest.approx((99.9, 100.1))
    assert claims.conditions("docs", claims.SYM40) == (
        "lab-ditg-rtt-sym40@P1 40 ms (TCP and MPTCP)", "lab-ditg-rtt-sym40@P2 40 ms (MPTCP)",
        "lab-ditg-same-offered-load@docs, P1 40 ms / P2 40 ms",
        "lab-ditg-delivered-sym40@docs, MPTCP P1 40 ms / P2 40 ms", "lab-ditg-delivered-sym40@docs, TCP over P1 (P1 40 ms)")
    assert claims.conditions("maps", claims.LOSS_BOTH, tcp=False) == (
        "lab-ditg-rtt-sym40@P1 40 ms (TCP and MPTCP)", "lab-ditg-rtt-sym40@P2 40 ms (MPTCP)", "lab-ditg-loss-p1",
        "lab-ditg-loss-p2", "lab-ditg-delivered-loss-both@maps, MPTCP P1 40 ms 4 % / P2 40 ms 4 %")
    assert claims.conditions("netflix", claims.ASYM400_10M, mp=False) == (
        "lab-ditg-rtt-asym@P1 10 ms (TCP and MPTCP)", "lab-ditg-delivered-asym400-10m@netflix, TCP over P1 (P1 10 ms)")
    assert all(not c.checks for c in ours.values() if not c.is_check), "the groups name their own configurations' checks"


def test_a_failing_check_group_gates_only_its_own_configuration(tmp_path):
    """issue 40: Maps' TCP and MPTCP runs of one repetition replayed different schedules
    (its offered-load group fails); Netflix's pairs are one schedule each. Netflix's group
    of a claim comparing both profiles is judged, Maps' is not comparable, and each says
    the checks' groups it rests on."""
    from findings.claim import NOT_COMPARABLE
    from findings.evaluate import evaluate
    lab = Lab()
    for app, lat in (("netflix", (30.0, 40.0)), ("maps", (35.0, 40.0))):
        for rep in range(1, 6):
            for mode, ms in (("MP-2", lat[0] + rep / 10), ("SP-wifi", lat[1] + rep / 10)):
                mp = mode == "MP-2"
                s = sha(f"{app}{rep}{'mp' if mp and app == 'maps' and rep == 5 else ''}")
                lab.run("ditg", "sym-rtt40", mode, cc="lia" if mp else "cubic", workload=f"ditg-{app}", rep=rep,
                        paths=SYM if mp else {"wifi": SYM["wifi"]}, latency=[ms] * 10,
                        rtt={"wifi": [40.0, 40.4], "lte": [40.0, 40.4]} if mp else {"wifi": [40.0, 40.4]},
                        result={"schedule_sha256": s, "schedule_packets": 10, "sent_packets": 10,
                                "received_packets": 10, "drained": True})
    facts, why = load_facts(lab.write(tmp_path / "lab.duckdb"))
    assert facts is not None, why
    _, checks, groups = evaluate([c for c in all_claims() if c.paper == "ditg"], facts, resamples=200)
    offered = groups.filter(pl.col("id") == "lab-ditg-same-offered-load")
    by = dict(zip(offered["group"], offered["magnitude_verdict"]))
    assert by["netflix, P1 40 ms / P2 40 ms"] == AGREE and by["maps, P1 40 ms / P2 40 ms"] != AGREE
    ours = groups.filter(pl.col("id") == "ditg-intensity-ordering")
    rows = {r["group"]: r for r in ours.iter_rows(named=True)}
    assert rows["maps, RTT 40 ms"]["magnitude_verdict"] == NOT_COMPARABLE
    assert rows["netflix, RTT 40 ms"]["magnitude_verdict"] != NOT_COMPARABLE
    assert "lab-ditg-same-offered-load@maps, P1 40 ms / P2 40 ms" in rows["maps, RTT 40 ms"]["checks"]
    assert "maps" not in rows["netflix, RTT 40 ms"]["checks"]
    # every check group a finding's group names is one the check computed
    have = set(zip(groups["id"], groups["group"]))
    for r in groups.filter(pl.col("id").is_in(["ditg-intensity-ordering", "ditg-netflix-symmetric"])).iter_rows(
            named=True):
        for k in r["checks"].split(CHECK_SEP):  # "; ": a group's label may hold ", "
            cid, _, label = k.partition("@")
            assert (cid, label) in have, k


def test_checks_pass_only_on_one_schedule_fully_delivered(facts, tmp_path):
    """The runs above fail both checks; five pairs of one schedule each, every packet
    generated and received, pass them."""
    ours = {c.id: c for c in all_claims() if c.paper == "ditg"}
    check_ids = ("lab-ditg-same-offered-load", "lab-ditg-delivered-sym40")
    for cid in check_ids:
        assert evaluate_claim(ours[cid], facts)[0]["magnitude_verdict"] != AGREE, cid
    lab = Lab()
    for rep in range(1, 6):
        for mode in ("SP-wifi", "MP-2"):
            ditg_run(lab, mode, rep, sha(f"rep{rep}"), 10, 10, True)
    clean, _ = load_facts(lab.write(tmp_path / "clean.duckdb"))
    for cid in check_ids:
        row, _ = evaluate_claim(ours[cid], clean)
        assert row["magnitude_verdict"] == AGREE, (cid, row["reason"])
