"""The figure of ``mptcp-lab compare`` (``findings.compare``): per metric, each value of
the label as a point (its mean over runs) with its 95 % interval as a bar, the metric's
name and unit on the axis; a hollow point rests on fewer runs than the lab checks its
intervals' coverage at (``findings.stats.MIN_RUNS``). Written by ``pipeline.runplots.save``
(SVG, PNG, self-contained HTML or the Vega-Lite JSON, by the suffix; a file it did not
write is never replaced)."""
from __future__ import annotations

import math

import altair as alt

from findings.compare import METRICS, Comparison
from findings.stats import MIN_RUNS

WIDTH, HEIGHT = 180, 200
COLOR = "#1f77b4"


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _panel(c: Comparison, metric: str) -> alt.LayerChart | None:
    """One metric's means and intervals per group (None: no group has a value)."""
    rows = [{"group": line.group, "mean": _finite(line.value), "low": _finite(line.lo), "high": _finite(line.hi),
             "runs": line.n[0], "few": line.few}
            for line in c.lines if line.metric == metric and line.kind == "mean"]
    if all(r["mean"] is None for r in rows):
        return None
    title = METRICS[metric].title
    base = alt.Chart(alt.InlineData(values=rows)).encode(
        x=alt.X("group:N", title=c.key, sort=c.groups, axis=alt.Axis(labelAngle=0)))
    y = alt.Scale(zero=False)
    bars = base.mark_rule(strokeWidth=2, color=COLOR).encode(y=alt.Y("low:Q", title=title, scale=y), y2="high:Q")
    points = base.mark_point(size=80, strokeWidth=2, color=COLOR).encode(
        y=alt.Y("mean:Q", title=title, scale=y),
        fill=alt.condition(alt.datum.few, alt.value("white"), alt.value(COLOR)),
        tooltip=[alt.Tooltip("group:N", title=c.key), alt.Tooltip("mean:Q", format=".4g"),
                 alt.Tooltip("low:Q", format=".4g", title="95% low"),
                 alt.Tooltip("high:Q", format=".4g", title="95% high"), alt.Tooltip("runs:Q")])
    return alt.layer(bars, points).properties(width=WIDTH, height=HEIGHT, title=metric)


def chart(c: Comparison) -> alt.TopLevelMixin | None:
    """Every metric of ``c`` with a value, side by side (None: none has one)."""
    panels = [p for p in (_panel(c, m) for m in dict.fromkeys(line.metric for line in c.lines)) if p is not None]
    if not panels:
        return None
    head = alt.TitleParams(
        f"runs by {c.key}: mean and 95% interval per value",
        subtitle=[f"runs: {', '.join(f'{g} {c.runs[g]}' for g in c.groups)}; hollow: fewer than {MIN_RUNS} runs "
                  f"(the lab checks its intervals' coverage at n >= {MIN_RUNS})"])
    return alt.concat(*panels, columns=3).properties(title=head)
