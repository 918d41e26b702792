"""pcaps -> DuckDB tables of the MPTCP metrics the papers use (see docs/metrics.md and docs/DESIGN.md)."""
import os as _os

# polars allocates through its own jemalloc, which by default keeps freed pages for
# 10 s before handing them back: a long trace's stages (subflows, DSN mapping, metrics,
# the DuckDB write) then stack their transient frames on each other's freed memory, and
# the 5M-packet capture peaked ~200 MB higher (benchmarks/pipeline_bench.py --memory).
# Return them after 250 ms instead (~1.25-1.3 GB; 0 ms saves ~50 MB more but refaults
# every page and costs the 280k-packet bench capture ~25 % of its wall time, 250 ms
# costs nothing measurable). Read when polars first allocates, so it is set before
# anything imports polars; a caller's own setting wins (an empty one: jemalloc's defaults).
_os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:250,muzzy_decay_ms:0")
