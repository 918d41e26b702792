"""Make sure a DuckDB file with every table of pipeline.schema.TABLES exists.

    python rules/scripts/empty_db.py OUT.duckdb

Used by rules/analyze.smk when there is no run folder to analyse. The file is a store
(pipeline/store.py): an existing one keeps its rows (missing tables are added).
"""
import sys

from pipeline import store

try:
    store.upsert({}, sys.argv[1], store.Keys())
except store.StoreError as e:
    sys.exit(f"error: {e}")
