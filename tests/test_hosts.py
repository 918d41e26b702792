"""Hosts checked before pooling (issue 26): runs of one configuration from two hosts,
one of them made slower, fail the host-consistency lab check and take the paper's
computed rows to "not comparable"; the same runs without the slowdown pass it."""
import duckdb
import numpy as np
import polars as pl
import pytest

from findings import hosts
from papers import synthetic
from papers.judge import findings

PAPER = "deng"


def runs(factor_b: float, n: int = 6, configs: int = 3) -> pl.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for c in range(configs):
        for h, f in (("a", 1.0), ("b", factor_b)):
            for k in range(n):
                rows.append({"run_id": f"{h}{c}{k}", "host": h, "campaign": "x", "scenario": f"s{c}", "mode": "MP-2",
                             "congestion_control": "lia", "size_bytes": 10 ** 6, "workload": "http",
                             "primary_path": "wifi", "goodput_mbit": 10.0 * (c + 1) * f * np.exp(rng.normal(0, .03)),
                             "app_latency_ms": None})
    return pl.DataFrame(rows)


def test_a_slower_host_differs():
    got = {r["host"]: r for r in hosts.check(runs(0.7), PAPER)}
    assert got["b"]["verdict"] == hosts.DIFFERS and got["b"]["value"] == pytest.approx(0.7, abs=0.03)
    assert got["a"]["verdict"] == hosts.DIFFERS  # against b, a is as far off: the pair is named
    assert got["b"]["shared_runs"] == 18 and got["b"]["configs"] == 3
    assert PAPER in hosts.differing(list(got.values()))


def test_alike_hosts_are_consistent_and_one_host_is_no_check():
    got = {r["host"]: r for r in hosts.check(runs(1.0), PAPER)}
    assert {r["verdict"] for r in got.values()} == {hosts.CONSISTENT}
    assert hosts.check(runs(1.0).filter(pl.col("host") == "a"), PAPER) == []


def test_too_few_shared_runs_is_inconclusive():
    r = runs(0.7, n=2, configs=1)
    assert {x["verdict"] for x in hosts.check(r, PAPER)} == {hosts.INCONCLUSIVE}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return synthetic.build(tmp_path_factory.mktemp("hosts") / "syn.duckdb", papers=(PAPER,))


def two_hosts(db, tmp_path, slow: float):
    """The synthetic runs split between hosts a and b by repetition; b's downloads
    take 1/slow times as long."""
    out = tmp_path / f"two-{slow}.duckdb"
    out.write_bytes(db.read_bytes())
    con = duckdb.connect(str(out))
    # meta.json's builds.host as the pipeline lifts it into the runs table
    con.execute("UPDATE runs SET host = CASE WHEN repetition % 2 = 0 THEN 'b' ELSE 'a' END")
    con.execute("""UPDATE connections SET download_time_s = download_time_s / ?
                   WHERE run_id IN (SELECT run_id FROM runs WHERE repetition % 2 = 0)""", [slow])
    con.close()
    return out


def test_findings_not_comparable_when_a_host_differs(db, tmp_path):
    base, _, _ = findings(db, paper=PAPER)
    t, checks, _ = findings(two_hosts(db, tmp_path, 0.6), paper=PAPER)
    hc = checks.filter(pl.col("id").str.starts_with(hosts.ID))
    assert set(hc["group"]) == {"a", "b"} and set(hc["magnitude_verdict"]) == {"disagree"}, hc
    computed = base.filter(~pl.col("magnitude_verdict").is_in(["not reproducible here", "no data"]))["id"]
    assert computed.len() > 0
    after = t.filter(pl.col("id").is_in(computed.implode()))
    assert set(after["magnitude_verdict"]) == {"not comparable"}
    assert after["reason"].str.contains("hosts that differ").all()


def test_findings_unchanged_when_hosts_alike(db, tmp_path):
    base, _, _ = findings(db, paper=PAPER)
    t, checks, _ = findings(two_hosts(db, tmp_path, 1.0), paper=PAPER)
    hc = checks.filter(pl.col("id").str.starts_with(hosts.ID))
    assert hc.height == 2 and set(hc["magnitude_verdict"]) <= {"agree", "inconclusive"}, hc
    assert t["magnitude_verdict"].to_list() == base["magnitude_verdict"].to_list()
