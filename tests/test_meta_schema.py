"""meta.json has one declaration (pipeline/meta.schema.yaml): what the capture writes
matches it (the committed samples and every run of the committed reference), and the
pipeline's reader (pipeline.metadoc) drops exactly the fields jsonschema rejects."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import duckdb
import pytest

from pipeline.metadoc import problems as meta_problems
from pipeline import metadoc

REPO = Path(__file__).resolve().parents[1]
SAMPLES = sorted((REPO / "data" / "samples").glob("*/meta.json"))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.parent.name)
def test_committed_samples_match_the_schema(path):
    assert meta_problems(json.loads(path.read_text())) == []


def test_every_reference_run_matches_the_schema():
    """The runs of data/reference, as their meta.json was stored (runs.meta_json)."""
    files = sorted((REPO / "data" / "reference").glob("*/runs.parquet"))
    if not files:
        pytest.skip("no committed reference")
    con = duckdb.connect()
    rows = con.execute(f"SELECT run_id, meta_json FROM read_parquet({[str(f) for f in files]!r})").fetchall()
    bad = {r: meta_problems(json.loads(m)) for r, m in rows}
    bad = {r: p for r, p in bad.items() if p}
    assert len(rows) > 500 and not bad, list(bad.items())[:3]


def _linkem_stats(events: int) -> dict:
    """One path's ``linkem --stats``, as far as ``stall_summary`` reads it."""
    late = {"late_events": 0, "intervals": 0, "worst_ms": 0.2 if events else None,
            "worst_at_s": 1.7e9 if events else None}
    side = {"late": late, "reader_lag": {"late_events": 0, "intervals": 0, "worst_ms": 0.1 if events else None}}
    return {"down": side, "up": side, "late_threshold_ms": 1.0}


@pytest.mark.parametrize("per_path", [
    {"wifi": None, "lte": None},  # no linkem (tbf): nothing measured, every total null
    {"wifi": _linkem_stats(0), "lte": _linkem_stats(0)},  # linkem forwarded nothing: no worst lateness
    {"wifi": _linkem_stats(10), "lte": None},
], ids=["tbf", "linkem-idle", "linkem"])
def test_what_the_capture_writes_of_stalls_matches_the_schema(per_path):
    """The writer's own stall summary (a tbf run wrote nulls the schema refused)."""
    from capture.health import stall_summary
    doc = {**json.loads(SAMPLES[0].read_text()), "stalls": stall_summary(per_path, 5.0)}
    assert meta_problems(doc) == []
    assert metadoc.check(doc) == (_kept(doc), [])


def _kept(doc: dict) -> dict:
    """``doc`` as the reader keeps it: whole, but for the schema's fields that are null
    (null means absent, issue 43)."""
    known = metadoc.schema()["properties"]
    return {k: v for k, v in doc.items() if v is not None or k not in known}


MUTATIONS = [
    ("attempt", "two"), ("attempt", 0), ("attempt", 1 << 40), ("repetition", -1), ("size_bytes", "4MB"),
    ("size_bytes", True), ("stalls", [1, 2]), ("host", "node-1"), ("paths", "wifi"), ("service_addrs", ["a", 3]),
    ("run_id", ""), ("duration_s", -2.0), ("scheduler", 3),
]
NESTED = [("stalls", "stalled", "yes"), ("stalls", "late_packets", -4), ("host", "busy_pct", "high"),
          ("run_cpu", "cpu_s", [1])]


@pytest.mark.parametrize("key, value", MUTATIONS)
def test_reader_drops_what_the_schema_rejects(key, value):
    base = json.loads(SAMPLES[0].read_text())
    doc = {**base, key: value}
    assert any(p.startswith((f"{key}:", f"{key}.")) for p in meta_problems(doc))
    meta, notes = metadoc.check(doc)
    assert key not in meta and len(notes) == 1 and notes[0].startswith(key)
    assert {k: v for k, v in meta.items() if k != key} == {k: v for k, v in _kept(base).items() if k != key}


@pytest.mark.parametrize("obj, field, value", NESTED)
def test_reader_drops_a_bad_field_of_an_object_alone(obj, field, value):
    base = json.loads(SAMPLES[0].read_text())
    doc = copy.deepcopy(base)
    doc.setdefault(obj, {})[field] = value
    assert any(p.startswith(f"{obj}.{field}:") for p in meta_problems(doc))
    meta, notes = metadoc.check(doc)
    assert notes == [notes[0]] and notes[0].startswith(f"{obj}.{field}")
    assert field not in meta[obj] and {k: v for k, v in meta[obj].items()} == \
        {k: v for k, v in doc[obj].items() if k != field}


def test_meta_json_lifted_into_typed_columns_and_tables(tmp_path):
    """The derived layer reads meta.json through columns (runs) and tables (run_paths,
    run_outages), not JSON; a store from before they existed is brought up to date by its
    next write, and a read of it before that says what to do."""
    import subprocess
    import sys

    from findings.evaluate import load_facts
    from pipeline import derived

    samples = REPO / "data" / "samples"
    run = samples / "mp2-linkem"
    db = tmp_path / "lab.duckdb"
    r = subprocess.run([sys.executable, "-m", "pipeline", "analyze", "-q", str(run), "--db", str(db)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    con = duckdb.connect(str(db))
    paths = con.execute("SELECT path, direction, delay_ms, rate_mbit, loss, queue_bytes FROM run_paths "
                        "ORDER BY ALL").fetchall()
    assert paths == [("lte", "down", 35.0, 10.0, 0.0, 150000), ("lte", "up", 35.0, 10.0, 0.0, 150000),
                     ("wifi", "down", 15.0, 20.0, 0.01, 150000), ("wifi", "up", 15.0, 20.0, 0.01, 150000)]
    assert con.execute("SELECT scale, repo_commit IS NOT NULL FROM runs").fetchall()[0][1]
    derived.install(con)
    assert con.execute("SELECT rtt_wifi_ms, loss_wifi, rate_cell_mbit FROM run_config").fetchall() == [(30.0, 0.01, 10.0)]
    assert not [d.name for d in derived.definitions({}) if "json_" in d.sql], "the derived layer parses no JSON"
    # an older store: no run_paths/run_outages, no lifted columns
    for t in ("run_paths", "run_outages"):
        con.execute(f"DROP TABLE {t}")
    for c in ("scale", "campaign_seed", "host", "repo_commit"):
        con.execute(f"ALTER TABLE runs DROP COLUMN {c}")
    con.close()
    facts, why = load_facts(db)
    assert facts is None and "older version" in why and "pipeline load" in why
    r = subprocess.run([sys.executable, "-m", "pipeline", "analyze", "-q", str(samples / "mp2-tbf"), "--db", str(db)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    con = duckdb.connect(str(db), read_only=True)
    by_run = dict(con.execute("SELECT run_id, count(*) FROM run_paths GROUP BY run_id").fetchall())
    assert by_run == {"mp2-linkem": 4, "mp2-tbf": 4}, by_run
    assert con.execute("SELECT repo_commit IS NOT NULL FROM runs WHERE run_id = 'mp2-linkem'").fetchall() == [(True,)]
