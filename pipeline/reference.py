"""Build the committed reference tables (data/reference/) from analysed runs.

    python -m pipeline reference TABLE_ROOT [TABLE_ROOT ...] --out data/reference

TABLE_ROOT holds per-run table folders (``<run>/<table>.parquet``, as written by
``python -m pipeline tables RUN_DIR --out DIR`` or the workflow's results/tables/...),
at any depth. The runs are grouped by ``runs.campaign`` and written as one folder per
campaign with one Parquet file per table (the layout ``python -m pipeline load`` and
the workflow's ``load_db`` read), compressed with zstd. To stay small:

* ``rtt_samples`` and ``ofo_samples``: a run (per table) with more than ``--cap`` rows
  (default 30000) keeps every k-th row, k = ceil(rows / cap), in the order of
  (trace, conn_id, subflow_id, frame); every run keeps at least its first row of each
  subflow. ``app_latency`` keeps every row (the D-ITG claims count and average them) but
  not its send and receive times (null; no analysis reads them). A systematic sample in time order keeps the
  shape of distributions (CCDFs) and of time series, but sums over the rows (e.g. bytes
  per subflow from ofo_samples) shrink by about k: use ``subflows``/``connections`` for
  totals. ``thinning.parquet`` lists k per run and table.
* ``link_truth`` (the emulator's per-packet log): not kept (an empty table, so the
  schema is complete); ``link_truth_summary.parquet`` has per run, path and direction
  the packet count, drops by reason and the mean/p50/p99/max time in the emulator.
* ``seq_packets`` (the time-sequence graphs' per-packet rows, ~3 rows per data packet):
  not kept (an empty table); ``python -m pipeline plot seq`` and the exploration
  notebook draw a reference run from ``ofo_samples`` instead and say so. Kept, it would
  more than double the folder (about 8 bytes a row in zstd Parquet).
* ``runs.meta_json`` is kept whole (the notebooks read configured RTT/loss/buffer from it).
"""
from __future__ import annotations

import argparse
import math
import shutil
import sys
from pathlib import Path

import polars as pl

from . import schema
from .store import read_tables

# app_latency is never thinned: a D-ITG claim's per-run mean latency and the offered-load
# check's received-packet count (pipeline.derived run_facts: avg and count over its rows)
# are read from it, and a count over every k-th row is k times too small
THINNED = {"rtt_samples": ["trace", "conn_id", "subflow_id", "frame"],
           "ofo_samples": ["trace", "conn_id", "subflow_id", "frame"]}
DEFAULT_CAP = 30000


def find_run_table_dirs(roots: list[str | Path]) -> list[Path]:
    out = set()
    for r in roots:
        r = Path(r)
        out |= {p.parent for p in r.rglob("runs.parquet")}
    return sorted(out)


def thin(df: pl.DataFrame, order: list[str], cap: int) -> tuple[pl.DataFrame, int]:
    """Every k-th row (k = ceil(n / cap)) in ``order``; k = 1 when n <= cap."""
    n = df.height
    if n <= cap:
        return df, 1
    k = math.ceil(n / cap)
    df = df.sort(order).with_row_index("_i")
    group = [c for c in ("trace", "conn_id", "subflow_id", "flow") if c in df.columns]
    first = pl.col("_i") == pl.col("_i").min().over(group) if group else pl.lit(False)
    return df.filter((pl.col("_i") % k == 0) | first).drop("_i"), k


def link_summary(lt: pl.DataFrame) -> pl.DataFrame:
    if lt.is_empty():
        return pl.DataFrame(schema={"run_id": pl.Utf8, "path": pl.Utf8, "direction": pl.Utf8})
    d = lt.with_columns(((pl.col("departure_s") - pl.col("arrival_s")) * 1000).alias("sojourn_ms"))
    return (d.group_by("run_id", "path", "direction")
            .agg(pl.len().alias("packets"),
                 pl.col("size_bytes").sum().alias("bytes"),
                 pl.col("dropped").sum().alias("dropped"),
                 (pl.col("reason") == "loss").sum().alias("dropped_loss"),
                 (pl.col("reason") == "queue").sum().alias("dropped_queue"),
                 (pl.col("reason") == "outage").sum().alias("dropped_outage"),
                 pl.col("sojourn_ms").mean().alias("sojourn_mean_ms"),
                 pl.col("sojourn_ms").median().alias("sojourn_p50_ms"),
                 pl.col("sojourn_ms").quantile(0.99).alias("sojourn_p99_ms"),
                 pl.col("sojourn_ms").max().alias("sojourn_max_ms"))
            .sort("run_id", "path", "direction"))


def build(roots: list[str | Path], out: str | Path, cap: int = DEFAULT_CAP, add: bool = False) -> dict:
    """Thin the runs below ``roots`` into one folder per campaign in ``out``. A campaign's
    folder is rebuilt from these runs alone, or with ``add`` these runs are added to the
    runs it holds (a run analysed again replaces its rows): a campaign captured over
    several sittings is thinned a part at a time (the cap is per run, so the parts concatenated
    are what one build of all the runs gives). Returns the runs in each campaign folder written."""
    out = Path(out)
    dirs = find_run_table_dirs(roots)
    by_campaign: dict[str, list[dict[str, pl.DataFrame]]] = {}
    thinning, summaries = [], []
    for d in dirs:
        t = read_tables(d)
        if t["runs"].is_empty():
            continue
        campaign = t["runs"]["campaign"][0] or "unknown"
        run_id = t["runs"]["run_id"][0]
        for name, order in THINNED.items():
            t[name], k = thin(t[name], order, cap)
            if k > 1:
                thinning.append({"run_id": run_id, "table": name, "keep_every": k})
        summaries.append(link_summary(t["link_truth"]))
        t["link_truth"] = schema.empty("link_truth")
        t["seq_packets"] = schema.empty("seq_packets")
        # per-packet one-way delays: read by no figure or claim; whole in the run folders
        t["owd_samples"] = schema.empty("owd_samples")
        # D-ITG's send and receive times: read by no analysis (the claims average delay_ms
        # and count rows), ~40 % of the table's bytes; null here, whole in the run folders
        t["app_latency"] = t["app_latency"].with_columns(sent_s=pl.lit(None, pl.Float64),
                                                         received_s=pl.lit(None, pl.Float64))
        by_campaign.setdefault(campaign, []).append(t)
    # the run-level side files keep the rows of the campaigns not rebuilt here
    replaced = {t["runs"]["run_id"][0] for parts in by_campaign.values() for t in parts}
    for c in by_campaign:
        if (out / c / "runs.parquet").exists() and not add:
            replaced |= set(pl.read_parquet(out / c / "runs.parquet", columns=["run_id"])["run_id"].to_list())
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for c, parts in sorted(by_campaign.items()):
        if add and (out / c / "runs.parquet").exists():
            kept = {n: df.filter(~pl.col("run_id").is_in(sorted(replaced))) for n, df in read_tables(out / c).items()}
            parts = [kept] + parts
        # written beside, then swapped in: an interrupted build leaves the old folder whole
        tmp = out / f".{c}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        for name in schema.TABLES:
            df = schema.conform(name, pl.concat([p[name] for p in parts], how="vertical_relaxed"))
            df.write_parquet(tmp / f"{name}.parquet", compression="zstd", compression_level=19)
            if name == "runs":
                counts[c] = df.height
        if (out / c).exists():
            shutil.rmtree(out / c)
        tmp.rename(out / c)
    _merge_write(out / "thinning.parquet", replaced,
                 pl.DataFrame(thinning, schema={"run_id": pl.Utf8, "table": pl.Utf8, "keep_every": pl.Int64}))
    summ = [s for s in summaries if s.height]
    _merge_write(out / "link_truth_summary.parquet", replaced,
                 pl.concat(summ, how="vertical_relaxed") if summ else link_summary(schema.empty("link_truth")))
    return counts


def _merge_write(path: Path, replaced: set[str], new: pl.DataFrame) -> None:
    """``new`` plus the rows of ``path`` whose runs were not rebuilt, written atomically."""
    if path.exists():
        old = pl.read_parquet(path)
        if old.height:
            old = old.filter(~pl.col("run_id").is_in(sorted(replaced)))
            new = pl.concat([old, new], how="diagonal_relaxed") if new.height else old
    tmp = path.with_name(path.name + ".tmp")
    new.sort("run_id", maintain_order=True).write_parquet(tmp, compression="zstd")
    tmp.replace(path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline reference", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("roots", nargs="+", help="folders holding per-run table folders")
    ap.add_argument("--out", default="data/reference")
    ap.add_argument("--cap", type=int, default=DEFAULT_CAP, help="max rows per run of the sample tables")
    ap.add_argument("--add", action="store_true",
                    help="add these runs to the campaign folders in --out (a campaign captured in parts) "
                         "instead of rebuilding them from these runs alone")
    a = ap.parse_args(argv)
    counts = build(a.roots, a.out, a.cap, add=a.add)
    size = sum(p.stat().st_size for p in Path(a.out).rglob("*.parquet"))
    print(f"{a.out}: {sum(counts.values())} runs ({', '.join(f'{c} {n}' for c, n in counts.items())}), "
          f"{size / 1e6:.1f} MB")
    return 0 if counts else 1


if __name__ == "__main__":
    sys.exit(main())
