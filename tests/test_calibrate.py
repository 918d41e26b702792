"""papers.calibrate keeps one calibration's runs apart from another's: a folder that holds
runs captured with other settings is refused before anything is captured (a resumed
capture would keep those runs as done and judge them as the new settings)."""
from __future__ import annotations

from pathlib import Path

import yaml

from papers import calibrate

CAMPAIGN = Path(__file__).resolve().parents[1] / "papers" / "chen" / "campaign.yaml"


def _record(out: Path, settings: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "calibration-runs.yaml").write_text(yaml.safe_dump([{"settings": settings, "captured": 3}]))


def test_a_folder_with_other_settings_is_refused(tmp_path, capsys):
    out = tmp_path / "t2"
    _record(out, ["chen-3g-sprint.rate_mbit=0.6"])
    rc = calibrate.main([str(CAMPAIGN), "--only", "^nothing$", "--set", "chen-3g-sprint.rate_mbit=0.8",
                         "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and str(out) in err and "chen-3g-sprint.rate_mbit=0.6" in err
    assert not (out / "raw").exists()  # nothing captured, nothing prepared


def test_same_settings_resume_and_unrecorded_runs_count_as_other(tmp_path):
    out = tmp_path / "t2"
    assert calibrate.other_settings(out, ["a.b=1"]) is None  # a new folder
    _record(out, ["a.b=1", "c.d=2"])
    assert calibrate.other_settings(out, ["c.d=2", "a.b=1"]) is None  # same settings, any order
    assert calibrate.other_settings(out, ["a.b=1"]) == ["a.b=1", "c.d=2"]
    bare = tmp_path / "bare"
    (bare / "raw" / "chen" / "r1").mkdir(parents=True)
    (bare / "raw" / "chen" / "r1" / ".done").touch()
    assert calibrate.other_settings(bare, []) == ["unrecorded"]
