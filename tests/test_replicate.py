"""papers.replicate: per claim, both verdicts and whether they held; the summary counts the
decisive verdicts that held apart from every verdict's (issue 41)."""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from papers.replicate import KEEP, compare, main, markdown, summary

ROOT = Path(__file__).resolve().parents[1]


def _rows(verdicts: list[tuple[str, str, str]]) -> pl.DataFrame:
    return pl.DataFrame([{"id": i, "paper": "p", "magnitude_verdict": m, "direction_verdict": d, "our_value": 1.0,
                          "ci_low": 0.5, "ci_high": 1.5, "n": 5, "reason": f"why {i}"} for i, m, d in verdicts]).select(KEEP)


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
    # a flip says why in the replicate's words (a failing check, a short group...)
    md = markdown(t)
    assert "| `b` |" in md and ": why b |" in md and ": why a" not in md


def test_judges_two_table_folders_in_one_command(tmp_path):
    """`python -m papers replicate` takes data/reference's layout on both sides (loaded
    into temporary databases) and the papers both hold: the reference against itself
    holds every verdict (the findings are deterministic)."""
    ref = ROOT / "data" / "reference" / "cs244"
    if not (ref / "runs.parquet").exists():
        pytest.skip("data/reference/ has no reference tables")
    out = tmp_path / "replicate.csv"
    assert main(["--reference", str(ref), "--replicate", str(ref), "--out", str(out),
                 "--markdown", str(tmp_path / "replicate.md")]) == 0
    t = pl.read_csv(out)
    assert t.height > 5 and set(t["paper"]) == {"cs244"} and t["magnitude_holds"].all() and t["direction_holds"].all()
    assert (tmp_path / "replicate.md").read_text().count("| `cs244-") == t.height
    with pytest.raises(SystemExit, match="neither a database nor a folder of run tables"):
        main(["--reference", str(tmp_path), "--replicate", str(ref), "--out", str(out)])
