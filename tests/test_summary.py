"""The main job's summary and exit status (report.summary): a failed capture in a paper
whose rows are judged makes `make reproduce-all` exit 3 and say which runs; failures that
touch no verdict, or none at all, exit 0."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from report.summary import AFFECTED, main, summary


def _write(path: Path, fields: list[str], rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fields)
        w.writeheader()
        w.writerows(rows)


def results(tmp_path: Path, verdicts: dict[str, str], issues: list[tuple[str, str, str]]) -> Path:
    _write(tmp_path / "findings.csv", ["id", "paper", "magnitude_verdict"],
           [{"id": f"{p}-x", "paper": p, "magnitude_verdict": v} for p, v in verdicts.items()])
    _write(tmp_path / "report" / "run-issues.csv", ["campaign", "run_id", "what", "reason"],
           [{"campaign": c, "run_id": r, "what": w, "reason": "wget rc 4"} for c, r, w in issues])
    return tmp_path


def test_failed_capture_in_judged_paper_exits_3_and_names_runs(tmp_path, capsys):
    res = results(tmp_path, {"cs244": "agree", "deng": "disagree"},
                  [("cs244", "buf50k_MP-2_r1", "failed"), ("deng", "x_r2", "repeated")])
    lines, status = summary(res, "the committed reference")
    assert status == AFFECTED
    hit = [ln for ln in lines if ln.startswith("VERDICTS AFFECTED")]
    assert len(hit) == 1 and "cs244 (1 run(s): buf50k_MP-2_r1)" in hit[0] and "deng" not in hit[0]
    assert lines[0] == "data: the committed reference"
    assert any(ln.startswith("runs: 1 failed, 1 repeated") or ln.startswith("runs: 1 repeated, 1 failed")
               for ln in lines)
    assert main(["--results", str(res), "--check"]) == AFFECTED
    assert "buf50k_MP-2_r1" in capsys.readouterr().err


@pytest.mark.parametrize("verdicts, issues, says", [
    # quick scale: every row 'not comparable', so no verdict rests on the lost run
    ({"cs244": "not comparable"}, [("cs244", "r1", "failed")], "no verdict is affected"),
    # a repeat is not a loss
    ({"cs244": "agree"}, [("cs244", "r1", "repeated")], "runs: 1 repeated"),
    ({"cs244": "agree"}, [], "every run completed at its first attempt"),
])
def test_no_verdict_affected_exits_0(tmp_path, capsys, verdicts, issues, says):
    res = results(tmp_path, verdicts, issues)
    lines, status = summary(res)
    assert status == 0 and any(says in ln for ln in lines), lines
    assert main(["--results", str(res), "--check"]) == 0
    assert capsys.readouterr().err == ""


def test_missing_results_say_nothing_and_exit_0(tmp_path):
    assert summary(tmp_path / "nothing") == ([], 0)
