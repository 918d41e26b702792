"""Every computed claim's runs have a family (papers/families.py): what they measure, over
which the coverage simulation pools shapes and rates of far-out runs."""
from __future__ import annotations

from papers.families import family
from papers.registry import all_claims


def test_every_computed_claim_has_a_family_and_the_known_ones_are_right():
    claims = {c.id: c for c in all_claims() if c.measure is not None and not c.not_reproducible}
    fam = {cid: family(c) for cid, c in claims.items()}
    assert [cid for cid, f in fam.items() if f == "other"] == []
    expected = {
        "lab-chen-t6-att-rtt-4mb": "rtt",  # its text also says "loss = ...": the first clause decides
        "lab-chen-t2-att-loss-64kb": "loss",
        "chen-close-to-best": "download time",
        "chen-reduces-variability": "download time",  # the paper defines nothing: our statistic says
        "chen-ofo-sprint-4mb": "ofo delay",
        "chen-att-most-stable": "rtt",
        "chen-cell-share-4mb": "share",
        "cs244-padhye-flat-cap": "rate",
        "cs244-handover": "outage",  # "Fig. 2: ... while links go down and up"
        "cs244-handoff-recover": "outage",
        "deng-cc-1mb-34": "rate",  # the paper's default: every Deng value is a throughput
        "deng-backup-failover": "outage",
        "ditg-reduced-despite-loss": "latency",  # "loss on P1" is its condition, latency its measure
        "ditg-lossy-asym-rtt-dominates": "latency",
        "lab-ditg-same-offered-load": "offered load",
        "lab-ditg-rtt-sym40": "rtt",
        "ferlin-ct-2g-wlan-mptcp": "download time",
        "ferlin-contrib-2g-wlan-mptcp": "share",
    }
    assert {cid: fam[cid] for cid in expected} == expected
