"""papers.replicate: per claim, both verdicts and whether they held; the summary counts the
decisive verdicts that held apart from every verdict's (issue 41)."""
from __future__ import annotations

import polars as pl

from papers.replicate import KEEP, compare, summary


def _rows(verdicts: list[tuple[str, str, str]]) -> pl.DataFrame:
    return pl.DataFrame([{"id": i, "paper": "p", "magnitude_verdict": m, "direction_verdict": d, "our_value": 1.0,
                          "ci_low": 0.5, "ci_high": 1.5, "n": 5} for i, m, d in verdicts]).select(KEEP)


def test_decisive_verdicts_that_held_are_counted_apart():
    ref = _rows([("a", "agree", "agree"), ("b", "disagree", "no direction"), ("c", "inconclusive", "agree"),
                 ("d", "direction only", "agree"), ("e", "not reproducible here", "not reproducible here"),
                 ("f", "direction only", "inconclusive")])
    rep = _rows([("a", "agree", "agree"), ("b", "inconclusive", "no direction"), ("c", "inconclusive", "agree"),
                 ("d", "direction only", "agree"), ("e", "not reproducible here", "not reproducible here"),
                 ("f", "direction only", "inconclusive")])
    t = compare(ref, rep)
    assert t["id"].to_list() == ["a", "b", "c", "d", "f"]  # not reproducible: left out
    assert t["magnitude_holds"].to_list() == [True, False, True, True, True]
    s = summary(t)
    assert s.startswith("2 decisive magnitude verdicts (agree or disagree) on the reference: 1 held on the "
                        "replicate; 1 decisive direction-only verdicts: 1 held. Of all 5 computed rows")
