"""D-ITG schedules (capture/ditg_schedule.py): the drawn packets follow each profile's
model, the files are what ITGSend reads, and one repetition gets one schedule.

The expected values are the models' own numbers (capture/README.md), computed here by
hand: a long schedule (an hour) makes the sampling error small, and every bound is at
least four standard errors wide."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from capture import ditg_schedule as ds
from capture.spec import expand, load

REPO = Path(__file__).resolve().parents[1]
HOUR = 3600.0


def files(tmp_path: Path, profile: str, duration_s: float, seed: int) -> tuple[list[float], list[int]]:
    """(IDT lines in ms, size lines) of the schedule as written."""
    s = ds.draw(profile, duration_s, seed)
    ds.write(s, tmp_path)
    idt = [float(x) for x in (tmp_path / ds.IDT_FILE).read_text().split()]
    sizes = [int(x) for x in (tmp_path / ds.SIZE_FILE).read_text().split()]
    return idt, sizes


def bursts(gaps_us: np.ndarray, on_gaps_us: set[int]) -> tuple[list[int], list[int]]:
    """(packets per ON period, the gaps between ON periods) of a schedule's gaps, an ON
    period being a run of gaps of the profile's packet spacing."""
    counts, offs, n = [], [], 1
    for g in gaps_us.tolist():
        if g in on_gaps_us:
            n += 1
        else:
            counts.append(n)
            offs.append(g)
            n = 1
    return counts, offs


def test_the_files_are_what_itgsend_reads(tmp_path):
    """One line per packet; the IDT file's first line is a start delay that ITGSend floors
    to 0 ms, every line is > 0 (ITGSend refuses 0); sizes within ITGSend's 20..64000 B."""
    idt, sizes = files(tmp_path, "maps", 30, 11)
    s = ds.draw("maps", 30, 11)
    assert len(idt) == len(sizes) == s.packets > 100
    assert idt[0] == 0.001 and math.floor(idt[0]) == 0
    assert min(idt) > 0 and 20 <= min(sizes) and max(sizes) <= 64000
    assert sum(sizes) == s.bytes
    # the departures are the gaps' running sum, in whole microseconds, all inside the test
    assert round(sum(idt[1:]) * 1000) == s.times_us[-1] < 30e6
    assert (tmp_path / ds.IDT_FILE).read_text().startswith("0.001\n0.66")


def test_netflix_is_on_off_blocks_at_2000_packets_per_second(tmp_path):
    """ON U(180, 545) ms at 2000 pkt/s: ceil(2000 × ON) packets 0.5 ms apart, 360..1090
    per period, 2000 × 362.5 ms + 0.5 = 725.5 on average; the gap to the next block is
    OFF U(1, 3) s plus what is left of the ON period after its last packet (< 0.5 ms)."""
    idt, sizes = files(tmp_path, "netflix", HOUR, 5)
    counts, offs = bursts(np.rint(np.array(idt[1:]) * 1000).astype(int), {500})
    counts = counts[:-1]  # the last block is cut by the test's end
    k = len(counts)
    assert 1400 < k < 1650  # an hour of 2.36-s cycles
    assert min(counts) >= 360 and max(counts) <= 1090
    sd_on = 2000 * (545 - 180) / 1000 / math.sqrt(12)  # of ceil(2000 × U(0.18, 0.545))
    assert abs(np.mean(counts) - 725.5) < 4 * sd_on / math.sqrt(k)
    assert min(offs) > 1000_000 and max(offs) <= 3000_500
    assert abs(np.mean(offs) / 1000 - 2000.25) < 4 * 2000 / math.sqrt(12) / math.sqrt(k)
    assert set(sizes) == {1448}


def test_maps_is_exponential_bursts_at_1500_packets_per_second(tmp_path):
    """ON exponential (mean 150 ms) at 1500 pkt/s: packets 2/3 ms apart (666 or 667 µs,
    exactly 1500/s on average), ceil(1.5 × ON) per period, 225.5 on average; OFF
    exponential, mean 1.2 s; sizes uniform on 500..1448 B (mean 974)."""
    idt, sizes = files(tmp_path, "maps", HOUR, 6)
    gaps = np.rint(np.array(idt[1:]) * 1000).astype(int)
    counts, offs = bursts(gaps, {666, 667})
    k = len(counts)
    assert 2400 < k < 2950  # an hour of 1.35-s cycles
    assert abs(np.mean(counts) - 225.5) < 4 * 225 / math.sqrt(k)
    assert abs(np.mean(offs) / 1000 - 1200) < 4 * 1200 / math.sqrt(k)
    on = gaps[np.isin(gaps, [666, 667])]
    assert abs(on.mean() - 1000 / 1.5) < 0.5
    assert min(sizes) >= 500 and max(sizes) <= 1448
    sd = math.sqrt(((1448 - 500 + 1) ** 2 - 1) / 12)
    assert abs(np.mean(sizes) - 974) < 4 * sd / math.sqrt(len(sizes))


def test_docs_is_poisson_8_per_second_with_pareto_sizes(tmp_path):
    """Poisson arrivals at 8 pkt/s (exponential gaps, mean 125 ms, coefficient of variation
    1); Pareto sizes of shape 3.5 from 300 B: mean 3.5 × 300 / 2.5 = 420 B, (300/800)^3.5
    = 3.2 % above 800 B (the paper: 'spikes of more than twice that size')."""
    idt, sizes = files(tmp_path, "docs", HOUR, 7)
    n, gaps = len(idt), np.array(idt[1:])
    assert abs(n - 8 * HOUR) < 4 * math.sqrt(8 * HOUR)
    assert abs(gaps.mean() - 125) < 4 * 125 / math.sqrt(n)
    assert abs(gaps.std() / gaps.mean() - 1) < 0.05
    sizes = np.array(sizes)
    assert sizes.min() >= 300
    sd = math.sqrt(3.5 * 300 ** 2 / (2.5 ** 2 * 1.5))
    assert abs(sizes.mean() - 420) < 4 * sd / math.sqrt(n) + 0.5  # + rounding to whole bytes
    share = (300 / 800) ** 3.5
    assert abs((sizes > 800).mean() - share) < 4 * math.sqrt(share * (1 - share) / n)


@pytest.mark.parametrize("profile, duration_s, last_gap_s", [("netflix", 48, 3.6), ("maps", 30, 12.0),
                                                               ("docs", 15, 2.0)])
def test_a_schedule_covers_the_whole_test(profile, duration_s, last_gap_s):
    """Departures from 0 until the test's end: the last one within [end − a long gap, end)."""
    s = ds.draw(profile, duration_s, ds.schedule_seed(2015, profile, 1))
    assert s.times_us[0] == 0 and np.all(np.diff(s.times_us) > 0)
    assert duration_s - last_gap_s < s.times_us[-1] / 1e6 < duration_s


def test_one_seed_one_schedule_each_repetition_its_own(tmp_path):
    a, b, c = (tmp_path / x for x in "abc")
    for d, rep in ((a, 1), (b, 1), (c, 2)):
        d.mkdir()
        ds.write(ds.draw("netflix", 20, ds.schedule_seed(2015, "netflix", rep)), d)
    for f in (ds.IDT_FILE, ds.SIZE_FILE):
        assert (a / f).read_bytes() == (b / f).read_bytes()
    assert (a / ds.IDT_FILE).read_bytes() != (c / ds.IDT_FILE).read_bytes()
    assert ds.schedule_seed(2015, "netflix", 1) != ds.schedule_seed(2015, "maps", 1)
    assert ds.schedule_seed(2015, "netflix", 1) != ds.schedule_seed(7, "netflix", 1)


def test_tcp_and_mptcp_runs_of_a_repetition_replay_one_schedule():
    """Every run of the ditg campaign (paper scale) with the same profile and repetition,
    whatever its mode and paths, gets the same schedule (the seed is made of campaign
    seed, profile and repetition only), and the repetitions differ."""
    specs = expand(load(REPO / "papers" / "ditg" / "campaign.yaml", "standard"), base_dir=REPO / "papers" / "ditg",
                   scale="standard")
    by_rep: dict[tuple[str, int], set[str]] = {}
    for s in specs:
        seed = ds.schedule_seed(s.campaign_seed, s.workload[5:], s.repetition)
        by_rep.setdefault((s.workload, s.repetition), set()).add(ds.draw(s.workload[5:], s.duration_s, seed).sha256())
    assert all(len(v) == 1 for v in by_rep.values())
    modes = {s.mode for s in specs}
    assert modes >= {"SP-wifi", "MP-2"}
    netflix = {next(iter(v)) for (w, _), v in by_rep.items() if w == "ditg-netflix"}
    assert len(netflix) == len({r for (w, r) in by_rep if w == "ditg-netflix"}) >= 5


def test_meta_records_how_to_redraw_the_schedule(tmp_path):
    s = ds.draw("docs", 15, 1234)
    meta = ds.write(s, tmp_path)
    g = meta["schedule_generator"]
    again = ds.draw(g["profile"], g["duration_s"], int(g["seed"]))
    assert again.sha256() == meta["schedule_sha256"] and meta["schedule_packets"] == again.packets
    assert meta["schedule_bytes"] == sum(int(x) for x in (tmp_path / ds.SIZE_FILE).read_text().split())


def test_the_readme_quotes_each_model():
    """capture/README.md describes the profiles with the declaration's own words."""
    readme = (REPO / "capture" / "README.md").read_text()
    for name, p in ds.PROFILES.items():
        assert f"{name}: {p.text()}" in readme, name


def test_unknown_profile_and_bad_duration_are_refused():
    with pytest.raises(ValueError, match="unknown D-ITG profile 'skype'"):
        ds.draw("skype", 10, 1)
    with pytest.raises(ValueError, match="duration_s must be > 0"):
        ds.draw("docs", 0, 1)
