"""Altair charts for the paper figures, and saving them as SVG, PNG and
self-contained interactive HTML (vl-convert; no network needed to view them)."""
from __future__ import annotations

import json
from pathlib import Path

import altair as alt
import polars as pl

from findings.provenance import by_paper, runs_per_group
from pipeline.runplots import as_written

from .db import connect
from .session import opened

WIDTH, HEIGHT = 220, 200


def figures_dir() -> Path:
    """The opened lab's figure folder (``figures-out`` in the working folder when no lab
    was opened: a chart drawn in a plain Python session)."""
    lab = opened()
    d = lab.figures if lab else Path("figures-out")
    d.mkdir(parents=True, exist_ok=True)
    return d


def _manifest_update(entry: dict) -> None:
    path = figures_dir() / "manifest.json"
    data = json.loads(path.read_text()) if path.exists() else {"figures": []}
    lab = opened()
    data["notebook"] = lab.notebook if lab else data.get("notebook", "")
    data["figures"] = [f for f in data["figures"] if f["name"] != entry["name"]] + [entry]
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)


def provenance() -> str:
    """The notebook's paper's runs in words (findings.provenance: the same text as the
    findings' ``data`` column), or '' when no lab was opened."""
    lab = opened()
    if lab is None:
        return ""
    try:
        return by_paper(connect(str(lab.db))).get(lab.notebook, "")
    except Exception:  # a caption must never take a figure down
        return ""


def data_line(df: pl.DataFrame | None, runs_by: list[str] | None = None) -> str:
    """What a figure rests on: the campaign's facts and, when the drawn frame has one row
    set per run (``run_id``), the runs per configuration (``runs_by``'s columns)."""
    parts = [f"Data: {p}" for p in [provenance()] if p]
    if df is not None and not df.is_empty() and "run_id" in df.columns:
        if runs_by and all(c in df.columns for c in runs_by):
            ns = df.group_by(runs_by).agg(pl.col("run_id").n_unique())["run_id"].to_list()
            parts.append(f"runs per {' × '.join(runs_by)}: {runs_per_group(ns)}")
        else:
            parts.append(f"{df['run_id'].n_unique()} runs drawn")
    return "; ".join(parts) + ("." if parts else "")


def save(chart: alt.TopLevelMixin, name: str, title: str, caption: str = "",
         paper_ref: str = "", empty: bool = False, data: str = "") -> alt.TopLevelMixin:
    """Write ``name``.svg/.png/.html into the figure folder and list it in manifest.json
    (``data``: what the figure rests on, see ``data_line``)."""
    d = figures_dir()
    chart = as_written(chart)
    chart.save(str(d / f"{name}.svg"))
    chart.save(str(d / f"{name}.png"), scale_factor=2)
    chart.save(str(d / f"{name}.html"), inline=True)
    _manifest_update({
        "name": name, "title": title, "caption": caption, "paper_ref": paper_ref,
        "empty": empty, "data": data or data_line(None),
        "files": {k: f"{name}.{k}" for k in ("svg", "png", "html")},
    })
    return chart


def empty_state(title: str, message: str, width: int = 2 * WIDTH, height: int = 120) -> alt.Chart:
    """A chart that says why there is nothing to plot (instead of a crash or a blank)."""
    lines = [title, ""] + _wrap(message, 70)
    data = alt.Data(values=[{"line": t, "i": i} for i, t in enumerate(lines)])
    return (
        alt.Chart(data)
        .mark_text(align="left", baseline="top", fontSize=13)
        .encode(
            x=alt.value(5),
            y=alt.Y("i:O", axis=None),
            text="line:N",
            color=alt.condition("datum.i == 0", alt.value("#b22222"), alt.value("#333")),
        )
        .properties(width=width, height=height)
    )


def _wrap(text: str, n: int) -> list[str]:
    out, cur = [], ""
    for word in text.split():
        if len(cur) + len(word) + 1 > n:
            out.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}".strip()
    return out + [cur] if cur else out


PAPER_MARK = dict(shape="diamond", filled=True, size=90, color="black")


def with_paper(ours: pl.DataFrame, paper: pl.DataFrame | None) -> pl.DataFrame:
    """Our pre-aggregated rows and the paper's published numbers in one frame (column
    ``source``: 'ours' / 'paper'), so layered and faceted charts can share one data set.
    The paper's rows carry the same x / facet / colour columns and ``paper`` (its value),
    optionally ``paper_lo`` / ``paper_hi`` (its interval) and ``paper_note``."""
    ours = ours.with_columns(pl.lit("ours").alias("source"))
    if paper is None or paper.is_empty():
        return ours
    paper = paper.with_columns(pl.lit("paper").alias("source"))
    return pl.concat([ours, paper], how="diagonal_relaxed")


def paper_layer(base: alt.Chart, y_scale: alt.Scale | None = None) -> alt.Chart:
    """The paper's numbers as black diamonds (with their interval when given), in the
    legend as 'paper'. ``base`` carries the shared x (and offset) encodings."""
    src = base.transform_filter(alt.datum.source == "paper")
    shape = alt.Shape("source:N", title=None, scale=alt.Scale(domain=["paper"], range=["diamond"]))
    tip = [alt.Tooltip("paper:Q", format=".3g", title="paper"), alt.Tooltip("paper_note:N", title="where")]
    pt = src.mark_point(**PAPER_MARK).encode(y=alt.Y("paper:Q", scale=y_scale or alt.Undefined), shape=shape,
                                             tooltip=tip)
    rng = src.transform_filter("isValid(datum.paper_lo)").mark_rule(color="black", strokeWidth=2).encode(
        y="paper_lo:Q", y2="paper_hi:Q")
    return alt.layer(rng, pt)


def has_paper(df: pl.DataFrame) -> bool:
    return "source" in df.columns and df.filter(pl.col("source") == "paper").height > 0


def boxplot(df: pl.DataFrame, x: str, y_title: str, color: str | None = None,
            facet: str | None = None, log_y: bool = False, x_title: str = "",
            facet_sort: list | None = None, x_sort: list | None = None,
            paper: pl.DataFrame | None = None) -> alt.Chart:
    """Box plot from pre-aggregated quantiles (lo, q1, median, q3, hi): the box is
    the inter-quartile range, the tick the median, the whiskers min and max (Chen's
    convention); the paper's numbers, when given, as black diamonds labelled 'paper'."""
    scale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    color = color or x
    data = with_paper(df, paper)
    base = alt.Chart(data).encode(x=alt.X(f"{x}:N", title=x_title or x, sort=x_sort))
    ours = base.transform_filter(alt.datum.source == "ours").encode(
        color=alt.Color(f"{color}:N", title="configuration", sort=x_sort),
        tooltip=[x, "n:Q", alt.Tooltip("median:Q", format=".3g"),
                 alt.Tooltip("q1:Q", format=".3g"), alt.Tooltip("q3:Q", format=".3g")],
    )
    whisker = ours.mark_rule().encode(y=alt.Y("lo:Q", title=y_title, scale=scale), y2="hi:Q")
    box = ours.mark_bar(size=14, opacity=0.8).encode(y="q1:Q", y2="q3:Q")
    med = ours.mark_tick(color="black", size=16, thickness=2).encode(y="median:Q")
    layers = [whisker, box, med] + ([paper_layer(base, scale)] if has_paper(data) else [])
    chart = alt.layer(*layers).properties(width=WIDTH, height=HEIGHT)
    if facet:
        chart = chart.facet(column=alt.Column(f"{facet}:N", title=None, sort=facet_sort))
    return chart


def estimates(df: pl.DataFrame, x: str, y_title: str, color: str, facet: str | None = None,
              x_title: str = "", color_title: str = "configuration", log_y: bool = False,
              paper: pl.DataFrame | None = None, x_sort: list | None = None, color_sort: list | None = None,
              facet_sort: list | None = None, width: int = WIDTH) -> alt.Chart:
    """Our estimates (``value`` with ``lo``/``hi``: mean ± s.e. or a confidence interval)
    as points with error bars per ``x`` and ``color``, and the paper's numbers beside
    them as black diamonds labelled 'paper'."""
    scale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    data = with_paper(df, paper)
    base = alt.Chart(data).encode(x=alt.X(f"{x}:N", title=x_title or x, sort=x_sort),
                                  xOffset=alt.XOffset(f"{color}:N", sort=color_sort))
    ours = base.transform_filter(alt.datum.source == "ours").encode(
        color=alt.Color(f"{color}:N", title=color_title, sort=color_sort),
        tooltip=[x, color, alt.Tooltip("value:Q", format=".3g"), alt.Tooltip("lo:Q", format=".3g"),
                 alt.Tooltip("hi:Q", format=".3g"), "n:Q"])
    pts = ours.mark_point(filled=True, size=60).encode(y=alt.Y("value:Q", title=y_title, scale=scale))
    bars = ours.mark_rule(strokeWidth=2).encode(y="lo:Q", y2="hi:Q")
    layers = [bars, pts] + ([paper_layer(base, scale)] if has_paper(data) else [])
    chart = alt.layer(*layers).properties(width=width, height=HEIGHT)
    if facet:
        chart = chart.facet(column=alt.Column(f"{facet}:N", title=None, sort=facet_sort))
    return chart


def ccdf_chart(df: pl.DataFrame, x_title: str, color: str, facet: str | None = None,
               log_x: bool = True, log_y: bool = True, color_title: str = "",
               facet_sort: list | None = None, strokedash: str | None = None,
               color_sort: list | None = None, paper: pl.DataFrame | None = None,
               y_title: str = "CCDF  P(X > x)", y: str = "ccdf") -> alt.Chart:
    """CCDF P(X > x) (or CDF with ``y='cdf'``) as step lines from pre-computed points
    (``x``, ``ccdf``); the paper's points (``x``, ``paper``) as black diamonds."""
    d = df.filter(pl.col("x") > 0) if log_x else df
    if log_y:
        d = d.filter(pl.col(y) > 0)
    data = with_paper(d, paper)
    xs = alt.X("x:Q", title=x_title, scale=alt.Scale(type="log" if log_x else "linear"))
    ys = alt.Scale(type="log" if log_y else "linear")
    enc = dict(
        x=xs, y=alt.Y(f"{y}:Q", title=y_title, scale=ys),
        color=alt.Color(f"{color}:N", title=color_title or color, sort=color_sort),
        tooltip=[color, alt.Tooltip("x:Q", format=".3g"), alt.Tooltip(f"{y}:Q", format=".3g")],
    )
    if strokedash:
        enc["strokeDash"] = alt.StrokeDash(f"{strokedash}:N")
    base = alt.Chart(data)
    lines = base.transform_filter(alt.datum.source == "ours").mark_line(interpolate="step-after").encode(**enc)
    layers = [lines]
    if has_paper(data):
        layers.append(paper_layer(base.encode(x=xs), ys))
    chart = alt.layer(*layers).properties(width=WIDTH, height=HEIGHT)
    if facet:
        chart = chart.facet(column=alt.Column(f"{facet}:N", title=None, sort=facet_sort))
    return chart


def render(df: pl.DataFrame, build, name: str, title: str, caption: str = "",
           paper_ref: str = "", empty_msg: str = "", runs_by: list[str] | None = None) -> alt.TopLevelMixin:
    """Build and save a chart from ``df``, or an explanatory empty state when ``df``
    has no rows (the sample database may lack this paper's runs). ``runs_by``: the
    columns of ``df`` that make a configuration, for the caption's runs per group."""
    if df is None or df.is_empty():
        msg = empty_msg or (
            "The database has no runs for this figure. Capture the paper's campaign "
            "(snakemake --cores all reproduce_all --config capture=true) or analyse your "
            "own pcaps, then re-run the notebook.")
        chart = empty_state(f"{title}: no data", msg)
        return save(chart, name, title, caption, paper_ref, empty=True, data=data_line(None))
    chart = build(df).properties(title=title)
    return save(chart, name, title, caption, paper_ref, data=data_line(df, runs_by))
