"""The D-ITG claims' lab checks of the offered and the delivered traffic
(papers/ditg/claims.py) on runs written by hand (tests/labdb.py): every pair value and
share below is set by the test."""
from __future__ import annotations

import hashlib

import pytest

from findings.claim import AGREE
from findings.evaluate import evaluate_claim, load_facts
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
    """No tolerance on the offered load; 100 % ± 0.1 % delivered; every claim rests on the
    delivery of each configuration it compares."""
    ours = {c.id: c for c in all_claims() if c.paper == "ditg"}
    for cid in ("lab-ditg-same-offered-load", "lab-ditg-same-offered-load-asym"):
        b = ours[cid].band
        assert (b.low, b.high) == (0.0, 0.0) and "margin of 0" in b.rule
    for key in claims.DELIVERED:
        b = ours[f"lab-ditg-delivered-{key}"].band
        assert (b.low, b.high) == pytest.approx((99.9, 100.1))
    assert set(claims._dl("sym40")) <= set(ours["ditg-docs-symmetric"].checks)
    assert set(claims._dl("loss-p1", "loss-p2", "loss-both")) <= set(ours["ditg-reduced-despite-loss"].checks)
    checked = {k for c in ours.values() for k in c.checks if k.startswith("lab-ditg-delivered-")}
    assert checked == {f"lab-ditg-delivered-{k}" for k in claims.DELIVERED}


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
