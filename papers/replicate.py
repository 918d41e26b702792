"""Do the verdicts hold on an independent replicate? The same campaigns captured again
with another seed (``python -m capture run ... --seed N``: every random draw of the
emulator, the run order, the files and D-ITG differs) give a second database; per
claim of the replicated papers, this compares its verdicts with the reference's.

    python -m papers replicate --reference data/reference --replicate data/replicate \\
        --out results/replicate.csv [--markdown results/replicate.md] [--papers chen,deng]

Each side is a database or a folder of per-campaign table folders (data/reference's
layout, loaded into a temporary database); the papers judged are those with runs on both
sides unless ``--papers`` names them, and of those only the ones whose replicate holds
every run of its campaign's standard scale: a replicate captured over several sittings
is judged campaign by campaign as each is complete (a part of a campaign would judge
claims on groups it has not captured yet).

A verdict *holds* when it is the same on both; rows that are not computed on either
(not reproducible here) are left out of the count. The summary counts the decisive
verdicts (agree or disagree) that held apart from every verdict's.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import duckdb
import polars as pl

from capture.spec import expand, load
from findings.claim import AGREE, DIRECTION_ONLY, DISAGREE, NOT_REPRODUCIBLE
from findings.evaluate import _fmt, write_csv
from pipeline.store import load_table_dirs

from . import PAPERS
from .judge import findings

KEEP = ("id", "paper", "magnitude_verdict", "direction_verdict", "our_value", "ci_low", "ci_high", "n", "reason")


def compare(reference: pl.DataFrame, replicate: pl.DataFrame) -> pl.DataFrame:
    """Per claim: both sides' verdicts and values, and whether each verdict held."""
    a = reference.select(KEEP)
    b = replicate.select(KEEP).rename({c: f"{c}_rep" for c in KEEP if c not in ("id", "paper")})
    t = a.join(b, on=["id", "paper"], how="inner").filter(pl.col("magnitude_verdict") != NOT_REPRODUCIBLE)
    return t.with_columns(magnitude_holds=pl.col("magnitude_verdict") == pl.col("magnitude_verdict_rep"),
                          direction_holds=pl.col("direction_verdict") == pl.col("direction_verdict_rep"))


def summary(t: pl.DataFrame) -> str:
    """How many verdicts held: first the decisive ones (a magnitude verdict agree or
    disagree on the reference; then a direction-only row's decisive direction), apart
    from every verdict's (where "inconclusive" holding on both says little)."""
    c = {k: int(v) for k, v in per_paper(t).drop("paper").sum().row(0, named=True).items()}
    m, d, n = c["magnitude_held"], int(t["direction_holds"].sum()), max(t.height, 1)
    return (f"{c['decisive']} decisive magnitude verdicts (agree or disagree) on the reference: "
            f"{c['decisive_held']} held on the replicate; {c['direction_only']} decisive direction-only verdicts: "
            f"{c['direction_only_held']} held. Of all {t.height} computed rows, the magnitude verdict held in {m} "
            f"({m / n:.0%}), the direction verdict in {d} ({d / n:.0%})")


def per_paper(t: pl.DataFrame) -> pl.DataFrame:
    """The summary's counts per paper (the rows the README and data/replicate/README quote)."""
    decisive = pl.col("magnitude_verdict").is_in([AGREE, DISAGREE])
    dir_only = (pl.col("magnitude_verdict") == DIRECTION_ONLY) & pl.col("direction_verdict").is_in([AGREE, DISAGREE])
    return t.group_by("paper").agg(
        decisive=decisive.sum(), decisive_held=(decisive & pl.col("magnitude_holds")).sum(),
        direction_only=dir_only.sum(), direction_only_held=(dir_only & pl.col("direction_holds")).sum(),
        computed=pl.len(), magnitude_held=pl.col("magnitude_holds").sum()).sort("paper")


def markdown(t: pl.DataFrame) -> str:
    lines = ["| paper | decisive (agree or disagree) | held | decisive direction only | held | computed rows | "
             "magnitude held |", "|---|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in per_paper(t).iter_rows()]
    lines += ["", "| claim | reference: ours [CI: 95 % unless named], magnitude / direction | replicate | holds |",
              "|---|---|---|---|"]
    for r in t.iter_rows(named=True):
        ref = (f"{_fmt(r['our_value'])} [{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}], "
               f"{r['magnitude_verdict']} / {r['direction_verdict']}")
        rep = (f"{_fmt(r['our_value_rep'])} [{_fmt(r['ci_low_rep'])}, {_fmt(r['ci_high_rep'])}], "
               f"{r['magnitude_verdict_rep']} / {r['direction_verdict_rep']}")
        holds = "both" if r["magnitude_holds"] and r["direction_holds"] else (
            "magnitude" if r["magnitude_holds"] else "direction" if r["direction_holds"] else "neither")
        if not r["magnitude_holds"] and r["reason_rep"]:  # a flip says why, in the replicate's words
            rep += f": {r['reason_rep']}".replace("|", "/")
        lines.append(f"| `{r['id']}` | {ref} | {rep} | {holds} |")
    return "\n".join(lines)


def database(src: str, db: Path) -> str:
    """A database to judge: ``src`` itself, or the per-campaign table folders below it
    (data/reference's layout) loaded into the new database ``db``."""
    p = Path(src)
    if p.is_file():
        return src
    dirs = sorted({f.parent for f in p.rglob("runs.parquet")}) if p.is_dir() else []
    if not dirs:
        raise SystemExit(f"error: {src}: neither a database nor a folder of run tables (no runs.parquet below it)")
    if load_table_dirs(dirs, db, say=lambda _: None) is None:
        raise SystemExit(f"error: {src}: its tables hold no run")
    return str(db)


def contents(db: str) -> tuple[set[str], dict[str, set[str]]]:
    """The papers (campaign studies) with runs in ``db``, and each campaign's run ids."""
    con = duckdb.connect(db, read_only=True)
    try:
        papers = {r[0] for r in con.execute("SELECT DISTINCT study FROM run_facts WHERE study IS NOT NULL").fetchall()}
        runs: dict[str, set[str]] = {}
        for campaign, run_id in con.execute("SELECT campaign, run_id FROM runs").fetchall():
            runs.setdefault(campaign, set()).add(run_id)
    finally:
        con.close()
    return papers, runs


def missing_runs(runs: dict[str, set[str]], paper: str) -> list[str]:
    """The runs of ``paper``'s campaign at the standard scale that ``runs`` (a campaign's run
    ids, as ``contents`` gives them) does not hold."""
    f = PAPERS[paper].campaign_file
    want = {s.run_id for s in expand(load(f, "standard"), base_dir=f.parent, scale="standard")}
    return sorted(want - runs.get(paper, set()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m papers replicate", description=__doc__.splitlines()[0])
    ap.add_argument("--reference", required=True, help="the reference: a database, or a folder of table folders "
                                                         "(data/reference)")
    ap.add_argument("--replicate", required=True, help="the replicate (another seed): a database or a folder of "
                                                         "table folders (data/replicate)")
    ap.add_argument("--papers", help="comma-separated papers to compare (default: those with runs on both sides)")
    ap.add_argument("--out", required=True, help="CSV: per claim, both verdicts and whether they held")
    ap.add_argument("--markdown", help="also the table as Markdown")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="replicate-") as tmp:
        ref_db, rep_db = (database(a.reference, Path(tmp) / "reference.duckdb"),
                          database(a.replicate, Path(tmp) / "replicate.duckdb"))
        (ref_papers, _), (rep_papers, rep_runs) = contents(ref_db), contents(rep_db)
        papers = a.papers.split(",") if a.papers else sorted(ref_papers & rep_papers)
        for paper in list(papers):
            gone = missing_runs(rep_runs, paper)
            if gone:
                print(f"{paper}: not judged: the replicate lacks {len(gone)} runs of its standard scale "
                      f"(e.g. {gone[0]}); captured in part")
                papers.remove(paper)
        if not papers:
            raise SystemExit("error: no paper has runs on both sides and a complete replicate")
        parts = []
        for paper in papers:
            ref, _, _ = findings(ref_db, paper=paper)
            rep, _, _ = findings(rep_db, paper=paper)
            parts.append(compare(ref, rep))
    t = pl.concat(parts)
    write_csv(t, a.out)
    print(f"{a.out}: {summary(t)}")
    if a.markdown:
        Path(a.markdown).write_text(summary(t) + "\n\n" + markdown(t) + "\n")
    return 0

