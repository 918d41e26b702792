"""meta.json has one declaration (capture/meta.schema.yaml): what the capture writes
matches it (the committed samples and every run of the committed reference), and the
pipeline's reader (pipeline.metadoc) drops exactly the fields jsonschema rejects."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import duckdb
import pytest

from capture.experiment import meta_problems
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
    assert {k: v for k, v in meta.items() if k != key} == {k: v for k, v in base.items() if k != key}


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
