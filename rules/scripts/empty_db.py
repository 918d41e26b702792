"""Write a DuckDB file with every table of pipeline.schema.TABLES and no rows.

    python rules/scripts/empty_db.py OUT.duckdb

Used by rules/analyze.smk when there is no run folder to analyse.
"""
import sys
from pathlib import Path

import duckdb

from pipeline.schema import TABLES, ddl

out = Path(sys.argv[1])
tmp = out.with_name(out.name + ".tmp")
tmp.unlink(missing_ok=True)
con = duckdb.connect(str(tmp))
for t in TABLES:
    con.execute(ddl(t))
con.close()
tmp.replace(out)
