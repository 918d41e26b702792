"""The charts and tables of the Chen notebook (papers/chen/notebook.py): the constants its
figures share (configurations, colour scales, sizes, tick lists, the panels in the
paper's order, the paper's marks and table cells), the helpers that label the findings'
group estimates, and the functions that build each figure and markdown table.

They live here so the notebook keeps the narrative, the queries and the figure calls,
and the page a reader sees is shorter. Nothing here reads the notebook's variables: a
function takes the frames the notebook queried (runs, box-plot quantiles, estimates) as
parameters, or reads the findings' tables of the opened lab (``labfig.verdicts.tables``)
when it is called; the notebook opens the lab in its first cell, before any call.
Nothing here computes a claim: the estimates are the findings' own.
"""
from __future__ import annotations

import math

import altair as alt
import polars as pl

from findings.evaluate import level_text
from labfig.marks import halo_text
from labfig.verdicts import VERDICT_COLOR, tables

from . import conditions as cond
from .claims import OFO as TABLE6_OFO

PANEL_W = 500


def by_scenario(i: int, alias: str = "") -> str:
    """SQL: a run's carrier (``i`` = 0) or table (1) from its scenario, as
    conditions.SCENARIOS says (NULL for a scenario of no table)."""
    p = f"{alias}." if alias else ""
    return f"CASE {p}scenario " + " ".join(f"WHEN '{s}' THEN '{v[i]}'" for s, v in cond.SCENARIOS.items()) + " END"


CARRIER, TABLE = by_scenario(0), by_scenario(1)
CONFIG = ("CASE mode WHEN 'SP-wifi' THEN 'SP-WiFi' WHEN 'SP-lte' THEN 'SP-cellular' "
          "ELSE mode || ' ' || coalesce(congestion_control, '?') END")
CARRIERS = {"att": "AT&T LTE + home WiFi", "verizon": "Verizon LTE + home WiFi",
            "sprint": "Sprint 3G + home WiFi", "coffee-att": "AT&T LTE + coffee-shop WiFi"}
TABLE_KEY = {v: k for k, v in cond.TABLES.items()}  # "Table 2" -> "t2"
# the panels of the download-time and cellular-share figures: (table, carrier), in the paper's order
PANELS = [("t2", "att"), ("t2", "verizon"), ("t2", "sprint"), ("t3", "att"), ("t4", "coffee-att"), ("t5", "att")]
CONFIGS = ["SP-WiFi", "SP-cellular", "MP-2 lia", "MP-2 olia", "MP-2 reno", "MP-4 lia"]
CONFIG_COLOR = alt.Scale(domain=CONFIGS, range=["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"])
MP_CONFIGS = [c for c in CONFIGS if c.startswith("MP")]
MP_COLOR = alt.Scale(domain=MP_CONFIGS, range=CONFIG_COLOR.range[2:])
SIZES = ["8 KB", "64 KB", "512 KB", "2 MB", "4 MB", "8 MB", "16 MB", "32 MB"]
SIZE_RANGE = dict(zip(SIZES, ["#a6cee3", "#1f78b4", "#33a02c", "#b2df8a", "#ff7f00", "#e31a1c", "#6a3d9a",
                               "#b15928"]))
PATHS = [cond.PATH_NAMES[p] for p in ("wifi", "att", "verizon", "sprint")]  # the tables' rows
PATH_COLOR = alt.Scale(domain=PATHS, range=["#1f77b4", "#d62728", "#e377c2", "#8c564b"])
VERDICT = alt.Scale(domain=list(VERDICT_COLOR), range=list(VERDICT_COLOR.values()))
SIZE_RE = r"(\d+ [KM]B)"
CCDF_TICKS = [1, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6]  # log CCDF axes
LOG_TICKS = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]  # ms, log axes
S_TICKS = [0.01, 0.02, 0.05, *LOG_TICKS]  # s, the download times' log axes


def groups() -> pl.DataFrame:
    """The paper's group estimates (findings-groups.csv) of the opened lab, read when called."""
    return tables("chen")[1]


def est(*ids: str) -> pl.DataFrame:
    """The claims' group estimates (findings-groups.csv), as the findings computed them."""
    return groups().filter(pl.col("id").is_in(list(ids)))


def labelled(*ids: str) -> pl.DataFrame:
    """The claims' group estimates with what their labels name ("[MP-n [cc] ]<carrier>
    <size> (Table N)"): ``tbl`` (t2-t6), ``carrier``, ``size``, ``config`` (MP-2 lia
    unless the label names another) and ``verdict`` (the group's magnitude verdict)."""
    g = pl.col("group")
    return est(*ids).with_columns(
        tbl=g.str.extract(r"\((Table \d)\)$").replace_strict(TABLE_KEY, default=None, return_dtype=pl.Utf8),
        carrier=g.str.extract(r"(\S+) \d+ [KM]B"), size=g.str.extract(SIZE_RE),
        config=g.str.extract(r"^(MP-\d) ").fill_null("MP-2") + " " + g.str.extract(r"^MP-\d (olia|reno) ").fill_null("lia"),
        verdict=pl.col("magnitude_verdict"))


def sizes_of(d: pl.DataFrame, col: str = "size") -> list[str]:
    have = set(d[col].to_list()) if d.height else set()
    return [s for s in SIZES if s in have]


def size_color(sizes: list[str]) -> alt.Scale:
    """File sizes' colours, the same in every figure (the legend lists only the sizes drawn)."""
    return alt.Scale(domain=sizes, range=[SIZE_RANGE[s] for s in sizes])


def finite(x) -> bool:
    return x is not None and not (isinstance(x, float) and (math.isnan(x) or math.isinf(x)))


def num(v) -> str:
    return "–" if not finite(v) else f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"


def in_order(df: pl.DataFrame, table: str = "tbl", carrier: str = "carrier") -> list[tuple[str, str]]:
    """The (table, carrier) panels ``df`` has, in the paper's order."""
    have = set(zip(df[table].to_list(), df[carrier].to_list())) if df.height else set()
    return [p for p in PANELS if p in have]


def runs_md(n: pl.DataFrame) -> str:
    """Markdown: the runs per table, carrier, configuration (rows) and size (columns), from
    ``n`` (columns tbl, carrier, configuration, size, runs)."""
    sizes = sizes_of(n)
    rows = ["| table | carrier | configuration | " + " | ".join(sizes) + " |", "|---|---|---|" + "---|" * len(sizes)]
    for (t, c, cfg), g in sorted(n.group_by("tbl", "carrier", "configuration"),
                                 key=lambda kv: (kv[0][0] or "t9",
                                                 list(CARRIERS).index(kv[0][1]) if kv[0][1] in CARRIERS else 99,
                                                 CONFIGS.index(kv[0][2]) if kv[0][2] in CONFIGS else 99)):
        have = dict(zip(g["size"].to_list(), g["runs"].to_list()))
        table = cond.TABLES.get(t, "no table (scenario not in conditions.SCENARIOS)")
        rows.append(f"| {table} | {c or '–'} | {cfg} | " + " | ".join(str(have.get(z, "")) for z in sizes) + " |")
    return "\n".join(rows) if n.height else "_no chen runs in this database_"


def cell_labelled(*ids: str) -> pl.DataFrame:
    """The group estimates of conditions computed per table cell (labels "Table N, <path>,
    <size>"): ``tbl``, ``path`` (the table's row: WiFi, AT&T, Verizon, Sprint), ``size``,
    ``verdict``."""
    g = pl.col("group")
    return est(*ids).with_columns(
        tbl=g.str.extract(r"^(Table \d),").replace_strict(TABLE_KEY, default=None, return_dtype=pl.Utf8),
        path=g.str.extract(r"^Table \d, ([^,]+), "), size=g.str.extract(SIZE_RE), verdict=pl.col("magnitude_verdict"))


def row_of(cid: str) -> dict | None:
    """The findings row of statement ``cid`` (None: not in the paper's rows)."""
    r = tables("chen")[0].filter(pl.col("id") == cid)
    return r.row(0, named=True) if r.height else None


# per table: the claim of MPTCP ÷ the faster single path, and the paper's bound on it (None: the order, < 1)
DT_CLAIM = {"t2": ("chen-close-to-best", 1.2), "t3": ("chen-mp2-beats-sp-small", None),
            "t4": ("chen-coffee-close-to-best", 1.2), "t5": ("chen-large-beats-best", None)}
DT_FIG = {"t2": "Fig. 2", "t3": "Fig. 4", "t4": "Fig. 6", "t5": "Fig. 9"}


def dt_lines(table: str) -> pl.DataFrame:
    """The bottom panel's reference lines: 1 (the faster single path) and the paper's bound."""
    bound = DT_CLAIM[table][1]
    if bound is None:
        return pl.DataFrame({"y": [1.0], "label": ["1 = the faster single path (paper: MPTCP below it)"]})
    return pl.DataFrame({"y": [1.0, bound], "label": [
        "1 = the faster single path", f'paper: < {bound:g} ("at least close to the best single path")']})


def dt_top(d: pl.DataFrame, b: pl.DataFrame, x, configs: list[str], width: int, title: str) -> alt.LayerChart:
    """Box plots and runs of one panel, log y."""
    xo = alt.XOffset("config:N", scale=alt.Scale(domain=configs, type="band"), bandPosition=0.5)
    xob = alt.XOffset("config:N", scale=alt.Scale(domain=configs, type="band"))  # bars fill their band
    color = alt.Color("config:N", scale=CONFIG_COLOR, title="configuration")
    vals = d["download_time_s"].to_list()
    ys = alt.Scale(type="log", domain=[min(vals) / 1.4, max(vals) * 1.4], nice=False)
    y = alt.Y("download_time_s:Q", scale=ys, title="download time (s, log)", axis=alt.Axis(values=S_TICKS))
    tip = ["config:N", "size:N", "n:Q", alt.Tooltip("median:Q", format=".3g", title="median (s)"),
           alt.Tooltip("q1:Q", format=".3g"), alt.Tooltip("q3:Q", format=".3g")]
    whisker = alt.Chart(b).mark_rule().encode(x=x, xOffset=xo, y=alt.Y("lo:Q", scale=ys), y2="hi:Q", color=color)
    box = alt.Chart(b).mark_bar(opacity=0.45, size=16).encode(x=x, xOffset=xob, y="q1:Q", y2="q3:Q", color=color,
                                                              tooltip=tip)
    med = alt.Chart(b).mark_tick(color="black", thickness=2, size=18).encode(x=x, xOffset=xo, y="median:Q", tooltip=tip)
    dots = alt.Chart(d).mark_point(size=22, opacity=0.9, filled=True).encode(
        x=x, xOffset=xo, y=y, color=color,
        tooltip=["run_id:N", "config:N", alt.Tooltip("download_time_s:Q", format=".3g", title="download time (s)")])
    return alt.layer(whisker, box, med, dots).properties(width=width, height=240,
                                                         title=alt.TitleParams(title, anchor="start"))


def dt_bottom(e: pl.DataFrame, table: str, x, configs: list[str], width: int) -> alt.LayerChart:
    """The claim's group estimates of one panel (MPTCP ÷ the faster single path), each
    under its MPTCP configuration's box, with the paper's bound; a log axis when one wide
    interval would flatten the others."""
    lines = dt_lines(table)
    ys = lines["y"].to_list() + [0.8] + [v for v in e["ci_low"].to_list() + e["ci_high"].to_list()
                                         if finite(v) and v > 0]
    wide = max(ys) / min(ys) > 4
    ry = alt.Scale(domain=[min(ys) * 0.95, max(ys) * 1.1], nice=False, **({"type": "log"} if wide else {}))
    ytitle = ["MPTCP ÷ faster SP", "(medians, log)" if wide else "(medians)"]
    layers = [alt.Chart(lines).mark_rule(strokeDash=[5, 4], color="black").encode(
        y=alt.Y("y:Q", scale=ry, title=ytitle, axis=alt.Axis(format="~g")))]
    # the paper's bound labelled above its line, the 1 below its own: the two lines are close
    for row in lines.iter_rows(named=True):
        above = row["y"] != 1.0 or lines.height == 1
        layers.append(halo_text(pl.DataFrame([row]), align="left", baseline="bottom" if above else "top",
                                dy=-2 if above else 2, fontSize=10,
                                enc=dict(x=alt.value(4), y=alt.Y("y:Q", scale=ry), text="label:N")))
    cid = DT_CLAIM[table][0]
    if e.height:
        xo = alt.XOffset("config:N", scale=alt.Scale(domain=configs, type="band"), bandPosition=0.5)
        verdict = dict(scale=VERDICT, title="claim group's magnitude verdict")
        tip = ["id:N", "group:N", alt.Tooltip("value:Q", format=".3g"), alt.Tooltip("ci_low:Q", format=".3g"),
               alt.Tooltip("ci_high:Q", format=".3g"), "n:Q", "magnitude_verdict:N"]
        layers += [alt.Chart(e).mark_rule(strokeWidth=2).encode(
                       x=x, xOffset=xo, y=alt.Y("ci_low:Q", scale=ry), y2="ci_high:Q", stroke=alt.Stroke("verdict:N", **verdict)),
                   alt.Chart(e).mark_point(shape="square", size=70, filled=True, strokeWidth=0).encode(
                       x=x, xOffset=xo, y=alt.Y("value:Q", scale=ry), fill=alt.Fill("verdict:N", **verdict), tooltip=tip)]
        configs = sorted(set(e["config"].to_list()))
        what = f"claim {cid} ({', '.join(configs)}): median ratio ± CI"
    else:
        what = f"claim {cid}: no estimate at these sizes"
    return alt.layer(*layers).properties(width=width, height=110, title=alt.TitleParams(
        what, fontSize=11, anchor="start", fontWeight="normal"))


def dt_panel(table: str, carrier: str, runs: pl.DataFrame, box: pl.DataFrame, ests: pl.DataFrame) -> alt.VConcatChart:
    """One figure's carrier: ``runs`` (download times), ``box`` (their quantiles) and
    ``ests`` (the claims' group estimates, ``labelled``) of all panels, filtered here."""
    sel = (pl.col("tbl") == table) & (pl.col("carrier") == carrier)
    d, b, e = runs.filter(sel), box.filter(sel), ests.filter(sel & (pl.col("id") == DT_CLAIM[table][0]))
    sizes = sizes_of(d)
    configs = [c for c in CONFIGS if c in set(d["config"].to_list())]
    width = max(PANEL_W, 26 * len(sizes) * len(configs))
    x = alt.X("size:N", sort=sizes, scale=alt.Scale(domain=sizes, type="band"), title="file size",
              axis=alt.Axis(labelAngle=0))
    title = f"{DT_FIG[table]} ({cond.TABLES[table]}'s runs): {CARRIERS.get(carrier, carrier)}"
    return alt.vconcat(dt_top(d, b, x, configs, width, title), dt_bottom(e, table, x, configs, width), spacing=4)


def dt_chart(d: pl.DataFrame, box: pl.DataFrame, ests: pl.DataFrame):
    """Fig. 2, 4, 6, 9: a panel per (table, carrier) of the runs ``d``."""
    return alt.vconcat(*[dt_panel(t, c, d, box, ests) for t, c in in_order(d)], spacing=24).resolve_scale(
        xOffset="independent", x="independent")


SHARE_EST = "claim's median [CI]"
SHARE_FIG = {"t2": "Fig. 3", "t3": "Fig. 5", "t4": "Fig. 7", "t5": "Fig. 10"}
SHARE_PAPER = {("t2", "sprint"): "paper: below 50 %, mostly WiFi (Fig. 3, the claim's band)",
               ("t3", "att"): "paper: reaches 50 % at 4 MB (Fig. 5; the claim: 50 % or more)",
               ("t5", "att"): "paper: over 50 % at 8-32 MB (Fig. 10)"}


def share_panel(table: str, carrier: str, runs: pl.DataFrame, ests: pl.DataFrame) -> alt.LayerChart:
    """One figure's carrier: the MPTCP runs' cellular shares and the claims' estimates
    (``ests``, with ``what`` = SHARE_EST) of all panels, filtered here."""
    sel = (pl.col("tbl") == table) & (pl.col("carrier") == carrier)
    d, e = runs.filter(sel), ests.filter(sel)
    sizes = sizes_of(d)
    configs = [c for c in MP_CONFIGS if c in set(d["config"].to_list())]
    width = max(PANEL_W, 30 * len(sizes) * len(configs))
    x = alt.X("size:N", sort=sizes, scale=alt.Scale(domain=sizes, type="band"), title="file size",
              axis=alt.Axis(labelAngle=0))
    xo = alt.XOffset("config:N", scale=alt.Scale(domain=configs, type="band"), bandPosition=0.5)
    y = alt.Scale(domain=[0, 100])
    color = alt.Color("config:N", scale=MP_COLOR, title="configuration")
    shape = alt.Shape("what:N", scale=alt.Scale(domain=["run", SHARE_EST], range=["circle", "square"]), title=None)
    layers = [alt.Chart(d).mark_point(size=30, opacity=0.7).encode(
        x=x, xOffset=xo, y=alt.Y("cell_share_pct:Q", scale=y, title="traffic on the cellular path (%)"),
        color=color, shape=shape,
        tooltip=["run_id:N", "config:N", alt.Tooltip("cell_share_pct:Q", format=".3g", title="cellular share (%)")])]
    if e.height:
        tip = ["id:N", "group:N", alt.Tooltip("value:Q", format=".3g"), alt.Tooltip("ci_low:Q", format=".3g"),
               alt.Tooltip("ci_high:Q", format=".3g"), "n:Q", "magnitude_verdict:N"]
        layers += [alt.Chart(e).mark_rule(strokeWidth=2.5).encode(x=x, xOffset=xo, y=alt.Y("ci_low:Q", scale=y),
                                                                  y2="ci_high:Q", color=color),
                   alt.Chart(e).mark_point(size=90, filled=True, stroke="black", strokeWidth=1).encode(
                       x=x, xOffset=xo, y=alt.Y("value:Q", scale=y), color=color, shape=shape, tooltip=tip)]
    if (table, carrier) in SHARE_PAPER:
        p = pl.DataFrame({"y": [50.0], "label": [SHARE_PAPER[(table, carrier)]]})
        layers += [alt.Chart(p).mark_rule(strokeDash=[5, 4], color="black").encode(y=alt.Y("y:Q", scale=y)),
                   halo_text(p, align="left", baseline="bottom", dy=-3, fontSize=11,
                             enc=dict(x=alt.value(4), y=alt.Y("y:Q", scale=y), text="label:N"))]
    title = f"{SHARE_FIG[table]} ({cond.TABLES[table]}'s runs): {CARRIERS.get(carrier, carrier)}"
    return alt.layer(*layers).properties(width=width, height=230, title=alt.TitleParams(title, anchor="start"))


def share_chart(d: pl.DataFrame, ests: pl.DataFrame):
    """Fig. 3, 5, 7, 10: a panel per (table, carrier) of the MPTCP runs ``d``."""
    return alt.vconcat(*[share_panel(t, c, d, ests) for t, c in in_order(d)], spacing=20).resolve_scale(
        xOffset="independent", x="independent")


# the paper's marks: (carrier, path, kind, x, x2, y, text)
RTT_MARKS = pl.DataFrame(
    [(c, "WiFi path", "vrule", 15.0, None, None, "paper: min ≈ 15 ms") for c in ("att", "verizon", "sprint")]
    + [(c, "WiFi path", "point", 50.0, None, 0.10, "paper: 90 % < 50 ms (> 4 MB)") for c in ("att", "verizon", "sprint")]
    + [("att", "cellular path", "vrule", 40.0, None, None, "paper: min ≈ 40 ms"),
       ("att", "cellular path", "band", 50.0, 200.0, None, "paper: > 70 % in 50-200 ms"),
       ("verizon", "cellular path", "vrule", 32.0, None, None, "paper: min 32 ms"),
       ("verizon", "cellular path", "vrule", 2000.0, None, None, "paper: up to 2 s"),
       ("sprint", "cellular path", "vrule", 50.0, None, None, "paper: min ≈ 50 ms"),
       ("sprint", "cellular path", "point", 100.0, None, 0.98, "paper: > 98 % above 100 ms"),
       ("sprint", "cellular path", "vrule", 2000.0, None, None, "paper: up to 2 s (16-32 MB)")],
    schema={"carrier": pl.Utf8, "path": pl.Utf8, "kind": pl.Utf8, "x": pl.Float64, "x2": pl.Float64,
            "y": pl.Float64, "text": pl.Utf8}, orient="row")


def fig12_ids() -> list[str]:
    """The ids of the paper's Fig. 12 statements (the chen-fig12-* conditions), from the findings' rows."""
    return [i for i in tables("chen")[0]["id"].to_list() if i.startswith("chen-fig12-")]


def fig12_row(carrier: str, path: str) -> tuple[str, str]:
    """(the table's row a panel draws, the prefix of its statements' ids)."""
    key = "wifi" if path == "WiFi path" else carrier
    return cond.PATH_NAMES[key], f"chen-fig12-{key}-"


def fig12_text(carrier: str, path: str, ids: list[str], ests: pl.DataFrame) -> list[str]:
    """The panel's statements (of ``ids``, the chen-fig12-* conditions): the paper's number,
    ours per size (``ests``: their estimates, ``cell_labelled``) and the verdict."""
    name, prefix = fig12_row(carrier, path)
    out = []
    for cid in [i for i in ids if i.startswith(prefix)]:
        r, g = row_of(cid), ests.filter((pl.col("id") == cid) & (pl.col("path") == name))
        ours = "; ".join(f"{z['size']} {num(z['value'])} {r['unit']} {z['verdict']}" for z in g.iter_rows(named=True))
        out.append(f"{cid} (paper {r['paper_text']}): {ours or 'no estimate'}")
    return out


def fig12_points(carrier: str, path: str, ests: pl.DataFrame, xs, ys, color, y_lo: float) -> list:
    """The statements that are points of the CCDF, with their intervals: WiFi's 90th
    percentile (at P = 0.1) and Sprint's share of samples above 100 ms (at 100 ms)."""
    name, _ = fig12_row(carrier, path)
    e = ests.filter(pl.col("path") == name)
    h = e.filter(pl.col("id") == "chen-fig12-wifi-p90").with_columns(x=pl.col("value"), y=pl.lit(0.1))
    # on the log axis a share of 0 has no place: drawn at its floor (the tooltip keeps the value)
    v = e.filter(pl.col("id") == "chen-fig12-sprint-over-100ms").with_columns(
        x=pl.lit(100.0), y=pl.max_horizontal(pl.col("value") / 100, pl.lit(y_lo)),
        y_lo=pl.max_horizontal(pl.col("ci_low") / 100, pl.lit(y_lo)),
        y_hi=pl.max_horizontal(pl.col("ci_high") / 100, pl.lit(y_lo)))
    tip = ["id:N", "group:N", alt.Tooltip("value:Q", format=".3g"), alt.Tooltip("ci_low:Q", format=".3g"),
           alt.Tooltip("ci_high:Q", format=".3g"), "n:Q", "magnitude_verdict:N"]
    out = []
    if h.height:
        out.append(alt.Chart(h).mark_rule(strokeWidth=2.5).encode(
            x=alt.X("ci_low:Q", scale=xs), x2="ci_high:Q", y=alt.Y("y:Q", scale=ys), color=color))
    if v.height:
        out.append(alt.Chart(v).mark_rule(strokeWidth=2.5).encode(
            x=alt.X("x:Q", scale=xs), y=alt.Y("y_lo:Q", scale=ys), y2="y_hi:Q", color=color))
    cols = groups().columns
    both = pl.concat([h.select(*cols, "size", "x", "y"), v.select(*cols, "size", "x", "y")])
    if both.height:
        out.append(alt.Chart(both).mark_point(shape="square", size=70, filled=True, stroke="black", strokeWidth=1,
                                              opacity=1).encode(
            x=alt.X("x:Q", scale=xs), y=alt.Y("y:Q", scale=ys), color=color, tooltip=tip))
    return out


def marks_layers(m: pl.DataFrame, xs, ys, height: int, labels_at: str = "bottom") -> list:
    """The paper's marks of one panel: vertical rules and shaded bands labelled at the
    bottom (``labels_at``: where the lines leave room) or top, points labelled beside them."""
    top = labels_at == "top"
    out = []
    rules = m.filter(pl.col("kind") == "vrule")
    if rules.height:
        out.append(alt.Chart(rules).mark_rule(strokeDash=[5, 4], color="black").encode(x=alt.X("x:Q", scale=xs)))
        for right, part in ((False, rules.filter(pl.col("x") < 1000)), (True, rules.filter(pl.col("x") >= 1000))):
            if part.height:  # near the right edge: the label left of its rule
                out.append(halo_text(part, align="right" if right else "left", baseline="top" if top else "bottom",
                                     dx=-3 if right else 3, fontSize=10,
                                     enc=dict(x=alt.X("x:Q", scale=xs), y=alt.value(4 if top else height - 4),
                                              text="text:N")))
    bands = m.filter(pl.col("kind") == "band")
    if bands.height:
        out += [alt.Chart(bands).mark_rect(color="#9ecae1", opacity=0.3).encode(x=alt.X("x:Q", scale=xs), x2="x2:Q"),
                halo_text(bands, align="left", baseline="top" if top else "bottom", dx=3, fontSize=10,
                          enc=dict(x=alt.X("x:Q", scale=xs), y=alt.value(18 if top else height - 18), text="text:N"))]
    pts = m.filter(pl.col("kind") == "point")
    if pts.height:
        out += [alt.Chart(pts).mark_point(shape="diamond", filled=True, size=80, color="black").encode(
                    x=alt.X("x:Q", scale=xs), y=alt.Y("y:Q", scale=ys), tooltip=["text:N"]),
                halo_text(pts, align="left", baseline="middle", dx=8, fontSize=10,
                          enc=dict(x=alt.X("x:Q", scale=xs), y=alt.Y("y:Q", scale=ys), text="text:N"))]
    return out


def rtt_chart(d: pl.DataFrame, ids: list[str], ests: pl.DataFrame):
    """Fig. 12: the RTT CCDFs ``d`` per carrier (row) and path (column), with the paper's marks and
    the chen-fig12-* conditions (``ids``, their estimates ``ests``)."""
    xs_all = d["x"].to_list() + [12.0, 2500.0]
    xs = alt.Scale(type="log", domain=[min(xs_all) / 1.2, max(xs_all) * 1.2], nice=False)
    y_lo = max(min(d.filter(pl.col("ccdf") > 0)["ccdf"].to_list() + [1e-3]) / 1.5, 1e-6)
    ys = alt.Scale(type="log", domain=[y_lo, 1.0], nice=False)
    sizes = sizes_of(d)
    color = alt.Color("size:N", scale=size_color(sizes), sort=sizes, title="file size")
    rows = []
    for c in [c for c in ("att", "verizon", "sprint") if c in set(d["carrier"].to_list())]:
        row = []
        for p in ("WiFi path", "cellular path"):
            g = d.filter((pl.col("carrier") == c) & (pl.col("path") == p) & (pl.col("ccdf") > 0))
            lines = alt.Chart(g).mark_line(interpolate="step-after", clip=True).encode(
                x=alt.X("x:Q", scale=xs, title="packet RTT (ms, log)", axis=alt.Axis(values=LOG_TICKS)),
                y=alt.Y("ccdf:Q", scale=ys, title="CCDF P(RTT > x) (log)", axis=alt.Axis(values=CCDF_TICKS)),
                color=color, detail="size:N",
                tooltip=["size:N", alt.Tooltip("x:Q", format=".3g", title="RTT (ms)"),
                         alt.Tooltip("ccdf:Q", format=".3g", title="P(RTT > x)"), "n:Q"])
            m = RTT_MARKS.filter((pl.col("carrier") == c) & (pl.col("path") == p))
            title = f"Table 6's runs, {CARRIERS[c]}: " + ("the WiFi path" if p == "WiFi path" else
                                                          f"the {CARRIERS[c].split(' + ')[0]} path")
            row.append(alt.layer(*marks_layers(m, xs, ys, 230), lines, *fig12_points(c, p, ests, xs, ys, color, y_lo))
                       .properties(width=PANEL_W, height=230, title=alt.TitleParams(
                           title, anchor="start", subtitle=fig12_text(c, p, ids, ests) or alt.Undefined,
                           subtitleFontSize=10)))
        rows.append(alt.hconcat(*row))
    return alt.vconcat(*rows, spacing=20)


OFO_X0 = 0.1  # ms: where the claims' shares of packets that wait (delay > 0) are drawn
OFO_EDGE = OFO_X0 / 1.3  # the left edge of the log axis
OFO_MARKS = pl.DataFrame(
    [("att", "hrule", None, 0.25, "paper: 75 % in order (25 % wait)"),
     ("verizon", "hrule", None, 0.25, "paper: 75 % in order (25 % wait)"),
     ("sprint", "hrule", None, 0.75, "paper: 75 % out of order"),
     ("sprint", "point", 150.0, 0.20, "paper: > 20 % wait > 150 ms"),
     ("sprint", "vrule", 150.0, None, "150 ms")],
    schema={"carrier": pl.Utf8, "kind": pl.Utf8, "x": pl.Float64, "y": pl.Float64, "text": pl.Utf8}, orient="row")
OFO_WHAT = {"chen-lte-in-order": "in order", "chen-3g-out-of-order": "out of order",
            "chen-3g-ofo-over-150ms": "wait > 150 ms"}


def ofo_claim_points() -> pl.DataFrame:
    """The claims of Fig. 13 where the chart draws them: ``x``, ``y`` and the interval ``y_lo``-``y_hi``
    as the CCDF's P(delay > x) (chen-lte-in-order as 1 − the in-order share), ``carrier`` and ``label``."""
    return pl.concat([
        labelled("chen-lte-in-order").with_columns(x=pl.lit(OFO_X0), y=1 - pl.col("value") / 100,
                                                   y_lo=1 - pl.col("ci_high") / 100, y_hi=1 - pl.col("ci_low") / 100),
        labelled("chen-3g-out-of-order").with_columns(x=pl.lit(OFO_X0), y=pl.col("value") / 100,
                                                      y_lo=pl.col("ci_low") / 100, y_hi=pl.col("ci_high") / 100),
        labelled("chen-3g-ofo-over-150ms").with_columns(x=pl.lit(150.0), y=pl.col("value") / 100,
                                                        y_lo=pl.col("ci_low") / 100, y_hi=pl.col("ci_high") / 100),
    ]).with_columns(carrier=pl.col("group").str.extract(r"^(\S+)"),
                    label=pl.format("ours: {} % {} [{}, {}] ({})", pl.col("value").round(1),
                                    pl.col("id").replace_strict(OFO_WHAT, default=""), pl.col("ci_low").round(1),
                                    pl.col("ci_high").round(1), pl.col("id")))


def ofo_chart(d: pl.DataFrame, ests: pl.DataFrame):
    """Fig. 13: the out-of-order delay CCDFs ``d``, a panel per carrier, with the paper's marks and
    the claims' estimates ``ests`` (``ofo_claim_points``)."""
    xs = alt.Scale(type="log", domain=[OFO_EDGE, max(d["x"].to_list() + [200.0]) * 1.3], nice=False)
    ys = alt.Scale(domain=[0, 1])
    sizes = sizes_of(d)
    color = alt.Color("size:N", scale=size_color(sizes), sort=sizes, title="file size")
    panels = []
    for c in [c for c in ("att", "verizon", "sprint") if c in set(d["carrier"].to_list())]:
        g = d.filter(pl.col("carrier") == c)
        lines = alt.Chart(g).mark_line(interpolate="step-after", clip=True).encode(
            x=alt.X("x:Q", scale=xs, title="out-of-order delay (ms, log)", axis=alt.Axis(values=LOG_TICKS)),
            y=alt.Y("ccdf:Q", scale=ys, title="P(delay > x)"), color=color, detail="size:N",
            tooltip=["size:N", alt.Tooltip("x:Q", format=".3g", title="delay (ms)"),
                     alt.Tooltip("ccdf:Q", format=".3g", title="P(delay > x)"), "n:Q"])
        m = OFO_MARKS.filter(pl.col("carrier") == c)
        layers = marks_layers(m.filter(pl.col("kind") != "hrule"), xs, ys, 220, labels_at="top")
        h = m.filter(pl.col("kind") == "hrule")
        if h.height:
            layers += [alt.Chart(h).mark_rule(strokeDash=[5, 4], color="black").encode(y=alt.Y("y:Q", scale=ys)),
                       halo_text(h, align="right", baseline="bottom", dy=-2, fontSize=10,
                                 enc=dict(x=alt.value(PANEL_W - 4), y=alt.Y("y:Q", scale=ys), text="text:N"))]
        e = ests.filter(pl.col("carrier") == c)
        far = (e.filter(pl.col("x") != OFO_X0)
               .join(m.filter(pl.col("kind") == "point").select("x", ly="y"), on="x", how="left")
               .with_columns(ly=pl.col("ly").fill_null(pl.col("y"))))
        if e.height:
            tip = ["id:N", "group:N", alt.Tooltip("value:Q", format=".3g", title="value (%)"),
                   alt.Tooltip("ci_low:Q", format=".3g"), alt.Tooltip("ci_high:Q", format=".3g"), "n:Q", "magnitude_verdict:N"]
            layers += [alt.Chart(e).mark_rule(strokeWidth=2.5).encode(
                           x=alt.X("x:Q", scale=xs), y=alt.Y("y_lo:Q", scale=ys), y2="y_hi:Q",
                           stroke=alt.Stroke("verdict:N", scale=VERDICT, title="claim's magnitude verdict")),
                       alt.Chart(e).mark_point(shape="square", size=80, filled=True, strokeWidth=0).encode(
                           x=alt.X("x:Q", scale=xs), y=alt.Y("y:Q", scale=ys),
                           fill=alt.Fill("verdict:N", scale=VERDICT, title="claim's magnitude verdict"), tooltip=tip),
                       halo_text(e.filter(pl.col("x") == OFO_X0), align="left", baseline="bottom", dx=-4, dy=-10,
                                 fontSize=10, enc=dict(x=alt.X("x:Q", scale=xs), y=alt.Y("y_hi:Q", scale=ys),
                                                       text="label:N")),
                       # near the axis and the lines: labelled under the paper's mark at the same delay
                       halo_text(far, align="left", baseline="middle", dx=8, dy=14, fontSize=10,
                                 enc=dict(x=alt.X("x:Q", scale=xs), y=alt.Y("ly:Q", scale=ys), text="label:N"))]
        panels.append(alt.layer(*layers, lines).properties(
            width=PANEL_W, height=220, title=alt.TitleParams(f"Table 6's runs: {CARRIERS[c]}", anchor="start")))
    return alt.vconcat(*panels, spacing=20)


# Table 6 as printed: the out-of-order delay (claims.OFO) and the RTT cells (conditions.CELLS)
PAPER_T6 = pl.DataFrame(
    [("OFO", cond.PATH_NAMES[c], cond.size_text(b), *v) for c, col in TABLE6_OFO.items() for b, v in col.items()]
    + [("RTT", cond.PATH_NAMES[p], cond.size_text(b), *v) for (t, p, m), col in cond.CELLS.items()
       if t == "t6" and m == "rtt" for b, v in col.items()],
    schema=["metric", "path", "size", "mean", "se"], orient="row").with_columns(
    lo=pl.col("mean") - pl.col("se"), hi=pl.col("mean") + pl.col("se"),
    label=pl.format("{} ± {}", pl.col("mean"), pl.col("se")), source=pl.lit("Table 6"))
# the lab checks of the tables' cells (conditions.CELLS: one check per table, path, metric and
# size; the cell that is an inventory entry of its own under that entry's id)
CELL_OF = {cond.CELL_ENTRIES.get(cond.cell_id(t, p, m, b), cond.cell_id(t, p, m, b)): (t, p, m, b)
           for (t, p, m), col in cond.CELLS.items() for b in col}


def cell_checks() -> pl.DataFrame:
    """The lab checks' group estimates of the tables' cells (findings-groups.csv), with the
    cell they check: ``tbl``, ``path`` (the table's row), ``metric``, ``size``, ``verdict``."""
    return groups().filter(pl.col("id").is_in(list(CELL_OF))).with_columns(
        *[pl.col("id").replace_strict({k: f(v) for k, v in CELL_OF.items()}).alias(name) for name, f in (
            ("tbl", lambda v: v[0]), ("path", lambda v: cond.PATH_NAMES[v[1]]), ("metric", lambda v: v[2]),
            ("size", lambda v: cond.size_text(v[3])))],
        verdict=pl.col("magnitude_verdict"))


def runs_vs_table(d: pl.DataFrame, value: str, paper: pl.DataFrame, e: pl.DataFrame, paths: list[str],
                  path_scale: alt.Scale, log: bool, y_title: str, title: str, subtitle: str, est_what: str,
                  slot: int) -> alt.LayerChart:
    """Per size (x) and path (offset): the runs' values (circles, left of the slot), the
    estimates ``e`` of claims or lab checks (squares with their CI, over the runs) and
    the paper's table cells (black mean ± s.e., right of the slot, labelled)."""
    sizes = sizes_of(d)
    paths = [p for p in paths if p in set(d["path"].to_list())]
    x = alt.X("size:N", sort=sizes, scale=alt.Scale(domain=sizes, type="band"), title="file size",
              axis=alt.Axis(labelAngle=0))
    # two sub-slots per path: ours (runs, estimates), then the paper's
    band = alt.Scale(domain=[f"{p} {w}" for p in paths for w in ("ours", "paper")], type="band")
    xo_ours = xo_paper = alt.XOffset("slot:N", scale=band, bandPosition=0.5)
    d = d.with_columns(slot=pl.col("path") + " ours")
    e = e.with_columns(slot=pl.col("path") + " ours")
    paper = paper.with_columns(slot=pl.col("path") + " paper")
    if log:  # a log axis draws positive values; an interval reaching below the axis is cut at its bottom
        d = d.filter(pl.col(value) > 0)
    vals = d[value].to_list() + paper["lo"].to_list() + paper["hi"].to_list() + [
        v for v in e["ci_low"].to_list() + e["ci_high"].to_list() if finite(v) and (v > 0 or not log)]
    lo, hi = min(vals), max(vals)
    ys = (alt.Scale(type="log", domain=[max(lo, 1.0) / 1.3, hi * 1.3], nice=False) if log
          else alt.Scale(domain=[min(0.0, lo * 1.1), max(hi, 0.1) * 1.1], nice=False))
    e = e.with_columns(ci_draw=pl.max_horizontal("ci_low", pl.lit(max(lo, 1.0) / 1.3)) if log else pl.col("ci_low"))
    axis = alt.Axis(values=LOG_TICKS) if log else alt.Undefined
    color = alt.Color("path:N", scale=path_scale, title="path")
    shape = alt.Shape("what:N", title=None, scale=alt.Scale(domain=["run", est_what], range=["circle", "square"]))
    layers = [alt.Chart(d.with_columns(what=pl.lit("run"))).mark_point(size=28, opacity=0.75).encode(
        x=x, xOffset=xo_ours, y=alt.Y(f"{value}:Q", scale=ys, title=y_title, axis=axis), color=color, shape=shape,
        tooltip=["run_id:N", "path:N", alt.Tooltip(f"{value}:Q", format=".3g", title=y_title)])]
    if e.height:
        tip = ["id:N", "group:N", alt.Tooltip("value:Q", format=".3g"), alt.Tooltip("ci_low:Q", format=".3g"),
               alt.Tooltip("ci_high:Q", format=".3g"), "n:Q", "magnitude_verdict:N"]
        e = e.with_columns(what=pl.lit(est_what))
        layers += [alt.Chart(e).mark_rule(strokeWidth=3).encode(
                       x=x, xOffset=xo_ours, y=alt.Y("ci_draw:Q", scale=ys), y2="ci_high:Q", color=color),
                   alt.Chart(e).mark_point(size=90, filled=True, stroke="black", strokeWidth=1, opacity=1).encode(
                       x=x, xOffset=xo_ours, y=alt.Y("value:Q", scale=ys), color=color, shape=shape, tooltip=tip)]
    if paper.height:
        tip = ["path:N", "size:N", "source:N", alt.Tooltip("label:N", title="paper (mean ± s.e.)")]
        layers += [alt.Chart(paper).mark_rule(color="black", strokeWidth=1.5).encode(
                       x=x, xOffset=xo_paper, y=alt.Y("lo:Q", scale=ys), y2="hi:Q"),
                   alt.Chart(paper).mark_tick(color="black", thickness=2, size=12).encode(
                       x=x, xOffset=xo_paper, y=alt.Y("mean:Q", scale=ys), tooltip=tip),
                   halo_text(paper, align="left", baseline="middle", dx=7, fontSize=10,
                             enc=dict(x=x, xOffset=xo_paper, y=alt.Y("mean:Q", scale=ys), text="label:N"))]
    return alt.layer(*layers).properties(
        width=max(PANEL_W, slot * len(sizes) * len(paths)), height=280,
        title=alt.TitleParams(title, subtitle=subtitle or alt.Undefined, anchor="start", fontSize=12))


def est_text(e: pl.DataFrame, unit: str) -> str:
    """The estimates as text: id (group): value [CI], magnitude verdict."""
    return "; ".join(f"{r['id']} ({r['group']}): {num(r['value'])}{unit} [{num(r['ci_low'])}, {num(r['ci_high'])}], "
                     f"{r['magnitude_verdict']}" for r in e.iter_rows(named=True))


def on_runs(paper: pl.DataFrame, d: pl.DataFrame) -> pl.DataFrame:
    """The paper's cells at the paths and sizes we ran."""
    return paper.join(d.select("path", "size").unique(), on=["path", "size"], how="semi")


# the squares of both panels (one shape legend: the vconcat merges the panels' shape scales)
T6_EST = "claim's or lab check's mean [CI]"


def t6_panel(metric: str, d: pl.DataFrame, claims: pl.DataFrame, checks: pl.DataFrame) -> alt.LayerChart:
    """Table 6's ``metric`` (OFO: against the claims' estimates ``claims``; RTT: against the lab
    checks ``checks``, ``cell_checks``)."""
    d = d.filter(pl.col("metric") == metric)
    paper = on_runs(PAPER_T6.filter(pl.col("metric") == metric), d)
    if metric == "OFO":
        return runs_vs_table(d, "ms", paper, claims, PATHS, PATH_COLOR, True,
                             "mean out-of-order delay per connection (ms, log)",
                             "Out-of-order delay: runs, claims (squares, CI), Table 6 (black, mean ± s.e.)",
                             "claims: " + est_text(claims, " ms") if claims.height else "", T6_EST, 70)
    e = checks.filter((pl.col("tbl") == "t6") & (pl.col("metric") == "rtt"))
    return runs_vs_table(d, "ms", paper, e, PATHS, PATH_COLOR, True, "mean RTT per connection and path (ms, log)",
                         "RTT per path: runs, lab checks (squares, CI), Table 6 (black, mean ± s.e.)",
                         "the checks' verdicts: the Table 6 table at the end", T6_EST, 70)


def t6_chart(d: pl.DataFrame, claims: pl.DataFrame, checks: pl.DataFrame):
    """Table 6: the out-of-order delay and RTT panels of the runs' means ``d``."""
    panels = [t6_panel(m, d, claims, checks) for m in ("OFO", "RTT") if d.filter(pl.col("metric") == m).height]
    return alt.vconcat(*panels, spacing=20).resolve_scale(xOffset="independent", x="independent")


# the paper's cells of Tables 2-6 (conditions.CELLS), "~" drawn as 0-0.03 %
PAPER_CELLS = pl.DataFrame(
    [(t, cond.PATH_NAMES[p], m, cond.size_text(b), *(v or (None, None)))
     for (t, p, m), col in cond.CELLS.items() for b, v in col.items()],
    schema={"tbl": pl.Utf8, "path": pl.Utf8, "metric": pl.Utf8, "size": pl.Utf8, "m": pl.Float64, "se": pl.Float64},
    orient="row").with_columns(
    mean=pl.col("m").fill_null(0.0), lo=(pl.col("m") - pl.col("se")).fill_null(0.0),
    hi=(pl.col("m") + pl.col("se")).fill_null(cond.NEGLIGIBLE),
    label=pl.when(pl.col("m").is_null()).then(pl.lit("~")).otherwise(pl.format("{} ± {}", pl.col("m"), pl.col("se"))),
    source=pl.col("tbl").replace_strict(cond.TABLES))


SP_SLOT = 60  # px per path and size: the paper's labels beside its cells need the room


def sp_panel(table: str, metric: str, d: pl.DataFrame, checks: pl.DataFrame) -> alt.LayerChart:
    """Table ``table``'s ``metric`` of the single-path runs ``d``, against the lab checks ``checks``
    (``cell_checks``) and the paper's cells."""
    sel = (pl.col("tbl") == table) & (pl.col("metric") == metric)
    d = d.filter(sel)
    paper = on_runs(PAPER_CELLS.filter(sel), d)
    name = "loss rate" if metric == "loss" else "RTT"
    wifi = " (WiFi: the coffee-shop hotspot)" if table == "t4" else ""
    return runs_vs_table(d, "v", paper, checks.filter(sel), PATHS, PATH_COLOR, metric == "rtt",
                         "mean RTT per run (ms, log)" if metric == "rtt" else "loss rate per run (%)",
                         f"{cond.TABLES[table]} ({cond.FIGURES[table]}'s runs): {name}{wifi}",
                         "runs, lab checks (squares, CI), the paper's cells (black, mean ± s.e.)",
                         "lab check's mean [CI]", SP_SLOT)


def sp_chart(d: pl.DataFrame, checks: pl.DataFrame):
    """A row per table: its loss and RTT panels side by side, or one above the other where
    its paths and sizes need a wider panel (Table 2: four paths)."""
    rows = []
    for t in ("t2", "t3", "t4", "t5"):
        dt = d.filter(pl.col("tbl") == t)
        panels = [sp_panel(t, m, d, checks) for m in ("loss", "rtt") if dt.filter(pl.col("metric") == m).height]
        if panels:
            wide = SP_SLOT * len(sizes_of(dt)) * dt["path"].n_unique() > PANEL_W
            rows += panels if wide else [alt.hconcat(*panels)]
    return alt.vconcat(*rows, spacing=24).resolve_scale(xOffset="independent", x="independent")


def ci_md(r: dict, unit: str = "") -> str:
    """Our estimate and the interval its verdict was decided with, naming the level when it
    is not 95 % (findings ``ci_level``: the Bonferroni level a *disagree* needs)."""
    ci = f"[{num(r['ci_low'])}, {num(r['ci_high'])}]"
    level = r.get("ci_level")
    lvl = f" ({level_text(level)})" if finite(level) and abs(level - 0.95) > 1e-9 else ""
    return f"{num(r['value'])} {ci}{lvl}{' ' + unit if unit else ''}"


def cell_md(cid: str, paper: tuple[float, float] | None, unit: str, checks: pl.DataFrame) -> str:
    """One cell: the paper's number and ours (of ``checks``, ``cell_checks``) with the check's verdict."""
    text = "~ (< 0.03 %)" if paper is None else f"{paper[0]:g} ± {paper[1]:g} {unit}"
    g = checks.filter(pl.col("id") == cid)
    if not g.height:
        return f"paper {text}<br>_not run_"
    r = g.row(0, named=True)
    entry = f" (`{cid}`)" if not cid.startswith("lab-") else ""
    return f"paper {text}<br>ours {ci_md(r)}, n = {r['n']}<br>**{r['magnitude_verdict']}**{entry}"


def checks_md(table: str, checks: pl.DataFrame) -> str:
    """The paper's table ``table`` (t2-t6): a row per path and metric, a column per size, with
    the lab checks ``checks`` (``cell_checks``)."""
    cells = {k: v for k, v in cond.CELLS.items() if k[0] == table}
    sizes = sorted({b for col in cells.values() for b in col})
    lines = ["| path | " + " | ".join(cond.size_text(b) for b in sizes) + " |", "|---|" + "---|" * len(sizes)]
    for (t, p, m), col in cells.items():
        unit = "%" if m == "loss" else "ms"
        name = f"{cond.PATH_NAMES[p]}{' (hotspot)' if t == 't4' and p == 'wifi' else ''} {'loss' if m == 'loss' else 'RTT'}"
        row = [cell_md(cond.CELL_ENTRIES.get(cond.cell_id(t, p, m, b), cond.cell_id(t, p, m, b)), col[b], unit, checks)
               if b in col else "" for b in sizes]
        lines.append(f"| {name} ({unit}) | " + " | ".join(row) + " |")
    return "\n".join(lines)


def statements_md(table: str) -> str:
    """The condition rows' groups on ``table``'s cells: a row per statement and path, a column per size."""
    conditions = tables("chen")[0].filter(pl.col("kind") == "condition")
    ids = [i for i in conditions["id"].to_list() if i not in CELL_OF]
    g = cell_labelled(*ids).filter(pl.col("tbl") == table)
    if not g.height:
        return "_no estimate of the paper's statements on this table's runs_"
    sizes = sizes_of(g)
    lines = ["| statement | the paper | path | " + " | ".join(sizes) + " |", "|---|---|---|" + "---|" * len(sizes)]
    for (cid, path), rows in g.group_by("id", "path", maintain_order=True):
        r = row_of(cid)
        have = {z["size"]: f"{ci_md(z, r['unit'] or '')}<br>**{z['magnitude_verdict']}**" for z in rows.iter_rows(named=True)}
        lines.append(f"| `{cid}`: {r['says']} | {r['paper_text']} | {path} | "
                     + " | ".join(have.get(z, "") for z in sizes) + " |")
    return "\n".join(lines)
