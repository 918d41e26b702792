"""papers.replicate: per claim, both verdicts and whether they held; the summary counts the
decisive verdicts that held apart from every verdict's (issue 41)."""
from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from papers.replicate import KEEP, compare, contents, database, main, markdown, missing_runs, per_paper, summary

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
    # the same counts per paper: decisive 2 (1 held), direction only 1 (1 held), 5 computed (4 held)
    assert per_paper(t).row(0) == ("p", 2, 1, 1, 1, 5, 4)
    assert "| p | 2 | 1 | 1 | 1 | 5 | 4 |" in md


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


def test_the_committed_replicate_has_seeds_of_its_own():
    """data/replicate (issue 41): each campaign it holds was captured with seeds the
    reference never used, so no run repeats a reference run's random draws."""
    rep_root = ROOT / "data" / "replicate"
    campaigns = sorted(p.parent.name for p in rep_root.glob("*/runs.parquet"))
    if not campaigns:
        pytest.skip("data/replicate/ has no tables")
    for c in campaigns:
        rep = set(pl.read_parquet(rep_root / c / "runs.parquet", columns=["campaign_seed"])["campaign_seed"])
        ref = set(pl.read_parquet(ROOT / "data" / "reference" / c / "runs.parquet",
                                  columns=["campaign_seed"])["campaign_seed"])
        assert rep and ref and not rep & ref, c


def test_a_campaign_captured_in_part_is_not_judged(tmp_path, capsys):
    """A replicate is captured over sittings: a campaign is judged only once the replicate
    holds every run of its standard scale (a part would judge claims on groups it lacks)."""
    ref = ROOT / "data" / "reference" / "cs244"
    if not (ref / "runs.parquet").exists():
        pytest.skip("data/reference/ has no reference tables")
    db = database(str(ref), tmp_path / "part.duckdb")
    assert missing_runs(contents(db)[1], "cs244") == []
    con = duckdb.connect(db)
    try:
        con.execute("DELETE FROM runs WHERE run_id LIKE 'buf50k_%'")
    finally:
        con.close()
    gone = missing_runs(contents(db)[1], "cs244")
    assert gone and all(r.startswith("buf50k_") for r in gone)
    with pytest.raises(SystemExit, match="no paper has runs on both sides and a complete replicate"):
        main(["--reference", str(ref), "--replicate", db, "--out", str(tmp_path / "r.csv")])
    assert f"cs244: not judged: the replicate lacks {len(gone)} runs" in capsys.readouterr().out
