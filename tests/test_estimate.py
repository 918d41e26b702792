"""Paper scale, estimated (issue 26): runs, capture time and wall time on N hosts."""
import subprocess
import sys
from pathlib import Path

import pytest

from capture.estimate import makespan_s, plan, run_times

ROOT = Path(__file__).resolve().parents[1]


def test_makespan_longest_first():
    # 3,3,2,2,2 on two hosts: longest first gives 3+2+2 | 3+2 = 7 (the optimum, 3+3 | 2+2+2, is 6:
    # within Graham's 4/3)
    assert makespan_s([2, 3, 2, 3, 2], 2) == 7
    assert makespan_s([2, 3, 2, 3, 2], 1) == 12
    assert makespan_s([2, 3, 2, 3, 2], 32) == 3  # more hosts than runs: the longest run
    assert makespan_s([], 8) == 0
    with pytest.raises(ValueError):
        makespan_s([1.0], 0)


def test_plan_wall_times_fall_with_hosts():
    name, runs = run_times(ROOT / "papers" / "chen" / "campaign.yaml", "paper")
    p = plan(ROOT / "papers" / "chen" / "campaign.yaml", "paper", (1, 8, 32))
    # the paper's matrices, each figure's on the scenarios of its table (issue 40)
    assert name == "chen" and p["runs"] == len(runs) == 3540
    w = p["wall_s"]
    assert w[1] == pytest.approx(sum(runs), rel=1e-6) and w[1] > w[8] > w[32] >= max(runs)
    assert w[8] <= sum(runs) / 8 + max(runs)  # a list schedule ends within one run of the mean load


def test_cli_prints_each_host_count():
    r = subprocess.run([sys.executable, "-m", "capture", "estimate", *sorted(map(str, ROOT.glob("papers/*/campaign.yaml"))),
                        "--scale", "paper", "--hosts", "1", "8", "32"], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    head, *rows = r.stdout.splitlines()
    assert head.split()[-6:] == ["1", "host", "8", "hosts", "32", "hosts"]
    names = [x.split()[0] for x in rows[:6]]
    assert names == ["chen", "cs244", "deng", "ditg", "ferlin", "all"]
    bad = subprocess.run([sys.executable, "-m", "capture", "estimate", "nope.yaml"], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert bad.returncode == 2 and "nope.yaml" in bad.stderr


def test_expected_time_counts_the_repeats_after_stalls():
    """A run's expected time is its model times the attempts expected: 1 + q + ... + q^r
    (q = 1 - exp(-rate·t), r the campaign's repeats); a workflow job adds its start."""
    import dataclasses
    import math

    from capture.estimate import STALL_PER_S, WORKFLOW_JOB_S, estimate_s, expected_s, workflow_s
    from capture.spec import expand, load

    f = ROOT / "papers" / "ferlin" / "campaign.yaml"
    spec = expand(load(f, "standard"), base_dir=f.parent, scale="standard")[0]
    t = estimate_s(spec)
    assert t > 30 and spec.stall_repeats == 2  # a long run of a campaign that repeats stalls twice
    q = 1 - math.exp(-STALL_PER_S * t)
    assert expected_s(spec) == pytest.approx(t * (1 + q + q * q))
    assert t < expected_s(spec) < 3 * t
    assert expected_s(dataclasses.replace(spec, stall_repeats=0)) == pytest.approx(t)  # never repeated
    assert workflow_s(spec) == pytest.approx(WORKFLOW_JOB_S + expected_s(spec))
