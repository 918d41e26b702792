"""The conditions Chen et al. measured each figure under, as checks on our runs.

The paper reports its paths' loss and RTT per figure, in tables measured beside it, on
different days (§3.2): Table 2 with Fig. 2-3 (WiFi + each carrier, single-path TCP per
connection), Table 3 with Fig. 4-5 (home WiFi + AT&T, small flows), Table 4 with Fig.
6-7 (the coffee-shop hotspot), Table 5 with Fig. 9-10 (large flows), Table 6 with Fig.
12-13 (the MPTCP subflows' RTTs; §5.1: "the RTT traces are collected from the
measurements described in Section 4, where the default coupled congestion controller is
used"). The tables do not describe one set of links: home WiFi's RTT at 4 MB is 23.9 ±
0.3 ms in Table 3, 26.2 ± 0.9 in Table 5, and its subflow's 56.2 ± 6.7 under MPTCP in
Table 6; its loss at 64 KB 1.6 ± 0.4 % in Table 3 and 0.43 ± 0.16 % in Table 2. So the
campaign has scenarios per table (``SCENARIOS``), each calibrated to its own table
(papers/chen/calibration.yaml), and every compared group of a claim rests on the cells
of the table its runs belong to (``cells``), at its size, for each path it uses.

Each cell is a lab check: the mean over our runs of the per-run value (a run is one
connection: Tables 2-5 are single-path TCP "on a per connection basis", Table 6 the
"flow mean" of each MPTCP subflow), against the paper's mean ± 1.96 standard errors;
"~" ("negligible values (< 0.03%)") is a threshold. A cell of a size the campaign does
not run has no data and gates nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import polars as pl

from findings import stats
from findings.measure import Facts, Group, Measure, values
from papers.registry import check, condition

P = "chen"
KB8, KB64, KB512 = 8_000, 64_000, 512_000
MB2, MB4, MB8, MB16, MB32 = 2_000_000, 4_000_000, 8_000_000, 16_000_000, 32_000_000
NEGLIGIBLE = 0.03  # "~ represents for negligible values (< 0.03%)" (Tables 2-5)

# scenario -> (carrier, table): the table whose conditions the scenario's runs were
# calibrated to and are checked against. "coffee-att" is its own carrier name (the
# coffee-shop hotspot with AT&T's LTE); "att-4path" and "att-large-4path" are the AT&T
# links again for MP-4.
SCENARIOS: dict[str, tuple[str, str]] = {
    "att": ("att", "t3"), "att-4path": ("att", "t3"),
    "att-large": ("att", "t5"), "att-large-4path": ("att", "t5"),
    "coffee-att": ("coffee-att", "t4"),
    **{f"fig2-{c}": (c, "t2") for c in ("att", "verizon", "sprint")},
    **{f"t6-{c}": (c, "t6") for c in ("att", "verizon", "sprint")},
}
TABLES = {"t2": "Table 2", "t3": "Table 3", "t4": "Table 4", "t5": "Table 5", "t6": "Table 6"}
FIGURES = {"t2": "Fig. 2-3", "t3": "Fig. 4-5", "t4": "Fig. 6-7", "t5": "Fig. 9-10", "t6": "Fig. 12-13"}

CAPTIONS = {
    "t2": "Table 2: Baseline path characteristics: loss rates and RTTs (sample mean + standard error) of single-path "
          "TCP on a per connection basis across file sizes.",
    "t3": "Table 3: Small flow path characteristics: loss rates and RTTs (sample mean Fstandard error) for single-path "
          "TCP connections.",
    "t4": "Table 4: Path characteristics of Amherst coffee shop: cellular network and public WiFi hotspot.",
    "t5": "Table 5: Large flow path characteristics: loss rates and RTTs (sample mean +standard error) of single-path "
          "TCP on per connection average.",
    "t6": "Table 6: Statistics on MPTCP RTT (flow mean +standard errors) and out-of-order (OFO) delay (connection mean "
          "+standard errors) over different carriers.",
}

# (table, path, metric) -> {size: (mean, standard error) or None for "~"}, as printed (the
# text's OCR: "0-03+0.03" is 0.03 ± 0.03). Path "wifi" is the table's WiFi row (Comcast
# home WiFi; the hotspot in Table 4); the carriers' rows by carrier.
CELLS: dict[tuple[str, str, str], dict[int, tuple[float, float] | None]] = {
    ("t2", "att", "loss"): {KB64: (0.03, 0.03), KB512: (0.04, 0.01), MB2: (0.06, 0.03), MB16: (0.31, 0.12)},
    ("t2", "verizon", "loss"): {KB64: None, KB512: None, MB2: (0.31, 0.13), MB16: (1.75, 0.20)},
    ("t2", "sprint", "loss"): {KB64: (0.37, 0.16), KB512: (8.76, 4.8), MB2: (3.93, 0.34), MB16: (1.64, 0.01)},
    ("t2", "wifi", "loss"): {KB64: (0.43, 0.16), KB512: (0.20, 0.04), MB2: (2.02, 0.42), MB16: (0.68, 0.07)},
    ("t2", "att", "rtt"): {KB64: (70.06, 2.78), KB512: (104.89, 3.32), MB2: (138.20, 5.09), MB16: (126.01, 5.37)},
    ("t2", "verizon", "rtt"): {KB64: (92.41, 13.23), KB512: (204.65, 20.45), MB2: (422.56, 28.34),
                               MB16: (624.66, 54.55)},
    ("t2", "sprint", "rtt"): {KB64: (381.29, 50.80), KB512: (972.4, 84.08), MB2: (1209.81, 178.68),
                              MB16: (703.81, 81.96)},
    ("t2", "wifi", "rtt"): {KB64: (26.81, 0.43), KB512: (53.08, 2.20), MB2: (56.83, 5.71), MB16: (32.65, 2.05)},
    ("t3", "wifi", "loss"): {KB8: (1.0, 0.5), KB64: (1.6, 0.4), KB512: (1.4, 0.2), MB4: (2.1, 0.2)},
    ("t3", "att", "loss"): {KB8: None, KB64: None, KB512: None, MB4: None},
    ("t3", "wifi", "rtt"): {KB8: (22.3, 0.2), KB64: (38.7, 6.9), KB512: (33.9, 2.7), MB4: (23.9, 0.3)},
    ("t3", "att", "rtt"): {KB8: (60.8, 0.5), KB64: (64.9, 0.5), KB512: (73.2, 2.1), MB4: (140.9, 1.1)},
    ("t4", "wifi", "loss"): {KB8: (5.3, 1.6), KB64: (3.1, 0.6), KB512: (4.1, 0.3), MB4: (2.9, 0.4)},
    ("t4", "att", "loss"): {KB8: None, KB64: None, KB512: None, MB4: (0.1, 0.1)},
    ("t4", "wifi", "rtt"): {KB8: (44.2, 7.0), KB64: (26.0, 1.8), KB512: (21.9, 0.5), MB4: (21.3, 0.4)},
    ("t4", "att", "rtt"): {KB8: (62.4, 0.6), KB64: (63.4, 0.4), KB512: (61.4, 0.4), MB4: (80.8, 1.8)},
    ("t5", "wifi", "loss"): {MB4: (2.1, 0.4), MB8: (1.6, 0.3), MB16: (1.9, 0.3), MB32: (2.0, 0.3)},
    ("t5", "att", "loss"): {MB4: (0.1, 0.1), MB8: None, MB16: None, MB32: None},
    ("t5", "wifi", "rtt"): {MB4: (26.2, 0.9), MB8: (25.9, 0.5), MB16: (24.9, 0.4), MB32: (23.5, 0.3)},
    ("t5", "att", "rtt"): {MB4: (133.1, 4.4), MB8: (154.5, 2.7), MB16: (144.5, 4.1), MB32: (146.4, 4.3)},
    ("t6", "att", "rtt"): {MB4: (110.0, 6.7), MB8: (102.0, 6.4), MB16: (114.1, 7.5), MB32: (99.6, 6.5)},
    ("t6", "verizon", "rtt"): {MB4: (228.0, 26.9), MB8: (399.2, 46.1), MB16: (360.4, 44.3), MB32: (296.1, 31.7)},
    ("t6", "sprint", "rtt"): {MB4: (202.9, 14.4), MB8: (262.5, 24.6), MB16: (480.4, 40.6), MB32: (346.2, 28.1)},
    ("t6", "wifi", "rtt"): {MB4: (56.2, 6.7), MB8: (43.4, 6.4), MB16: (29.4, 7.5), MB32: (30.0, 6.5)},
}
PATH_NAMES = {"wifi": "WiFi", "att": "AT&T", "verizon": "Verizon", "sprint": "Sprint"}
SINGLE = ("SP-wifi", "SP-lte")


def size_text(b: int) -> str:
    return f"{b // 1_000_000} MB" if b % 1_000_000 == 0 else f"{b // 1000} KB"


def size_tag(b: int) -> str:
    return size_text(b).replace(" ", "").lower()


def cell_id(table: str, path: str, metric: str, size: int) -> str:
    return f"lab-chen-{table}-{path}-{metric}-{size_tag(size)}"


def with_conditions(df: pl.DataFrame) -> pl.DataFrame:
    """Runs with their ``carrier`` and ``table`` (SCENARIOS; a scenario not listed there
    belongs to no table and is in no group)."""
    sc = {k: v[0] for k, v in SCENARIOS.items()}
    tb = {k: v[1] for k, v in SCENARIOS.items()}
    return df.with_columns(carrier=pl.col("scenario").replace_strict(sc, default=None, return_dtype=pl.Utf8),
                           table=pl.col("scenario").replace_strict(tb, default=None, return_dtype=pl.Utf8))


def paths_of(carrier: str, mode: str) -> tuple[str, ...]:
    """The table rows a configuration's runs use: WiFi and/or the carrier (the hotspot
    scenario's cellular path is AT&T's)."""
    cell = "att" if carrier == "coffee-att" else carrier
    return {"SP-wifi": ("wifi",), "SP-lte": (cell,)}.get(mode, ("wifi", cell))


def cells(table: str, carrier: str, mode: str, size: int) -> tuple[str, ...]:
    """The cell checks a configuration's runs rest on: its table's loss and RTT of each
    path it uses, at its size (none where the table has no such column)."""
    out = []
    for path in paths_of(carrier, mode):
        for metric in ("loss", "rtt"):
            if size in CELLS.get((table, path, metric), {}):
                out.append(cell_id(table, path, metric, size))
    return tuple(out)


# ------------------------------------------------------------------ the cells as lab checks

SP_TEXT = ("single-path TCP (cubic) runs, server trace: loss = retransmitted ÷ sent data packets (§3.3), RTT = the "
           "run's mean Karn sample (§3.3); mean over runs (one run = one connection, as the tables' per-connection "
           "values)")
MP_TEXT = ("MP-2 runs with lia (the paper's coupled), server trace: the subflow's mean Karn RTT sample per run (Table 6 "
           "'flow mean'), mean over runs")


def _cell_runs(f: Facts, table: str, path: str, size: int) -> pl.DataFrame:
    r, _ = f.of(P)
    r = with_conditions(r).filter((pl.col("table") == table) & (pl.col("size_bytes") == size))
    if table == "t6":
        r = r.filter((pl.col("mode") == "MP-2") & (pl.col("congestion_control") == "lia"))
        return r if path == "wifi" else r.filter(pl.col("carrier") == path)
    if path == "wifi":
        return r.filter(pl.col("mode") == "SP-wifi")
    carriers = ("att", "coffee-att") if path == "att" else (path,)
    return r.filter((pl.col("mode") == "SP-lte") & pl.col("carrier").is_in(carriers))


def cell_measure(table: str, path: str, metric: str, size: int):
    side = "wifi" if path == "wifi" else "cell"
    column = f"loss_{side}_pct" if metric == "loss" else f"rtt_{side}_mean_ms"

    def m(f: Facts) -> Measure:
        runs = _cell_runs(f, table, path, size)
        label = f"{TABLES[table]}, {PATH_NAMES[path]}, {size_text(size)}"
        if not runs.height:
            return Measure(missing=f"needs chen runs of {TABLES[table]}'s scenarios at {size_text(size)}")
        return Measure([Group(label, {"x": values(runs, column)})], stats.mean("x"))
    return m


def _cell_check(table: str, path: str, metric: str, size: int, cell: tuple[float, float] | None):
    unit = "%" if metric == "loss" else "ms"
    name, what = PATH_NAMES[path], "loss rate" if metric == "loss" else "RTT"
    where = f"§{ {'t2': '4', 't3': '4.1.1', 't4': '4.1.1', 't5': '4.2', 't6': '5.2'}[table] }, {TABLES[table]} ({size_text(size)})"
    if cell is None:
        kw = dict(phrase="less-than", value=NEGLIGIBLE, says=f"{name} {what} at {size_text(size)}: negligible (< 0.03 %)")
        printed = "~"
    else:
        kw = dict(phrase="mean-se", value=cell[0], se=cell[1],
                  says=f"{name} {what} at {size_text(size)}: {cell[0]:g} ± {cell[1]:g} {unit}")
        printed = f"{cell[0]:g} ± {cell[1]:g}"
    return check(P, cell_id(table, path, metric, size), quote=f"{CAPTIONS[table]} ... {name} ... {printed}",
                 where=where, unit=unit, **kw,
                 statistic=f"{name} {what} at {size_text(size)}: " + (MP_TEXT if table == "t6" else SP_TEXT),
                 config=f"the {TABLES[table]} scenarios of campaign chen ({', '.join(s for s, v in SCENARIOS.items() if v[1] == table)}; "
                        "links: papers/chen/profiles.yaml, calibrated in papers/chen/calibration.yaml)",
                 measure=cell_measure(table, path, metric, size),
                 mismatch="a stationary emulated link against the paper's live network on the days of this table")




# ------------------------------------------------------------------ the paper's words about its paths

# An inventory entry that describes the paths of some figures (a condition statement) is
# computed per (table, path, size) cell of the runs it describes and gates the groups of
# those runs: ``STATEMENTS`` says which tables, paths and sizes each statement is about
# (from its place in the paper: the §4 Fig. 2 discussion describes Table 2's runs, §5.1
# describes Table 6's). Where the paper's words and its own table disagree (§4: Sprint's
# "RTT variations (300-800 ms)" against Table 2's 1209.8 ms at 2 MB), a group cannot meet
# both and is not comparable: the row says which.

def cond_label(table: str, path: str, size: int) -> str:
    return f"{TABLES[table]}, {PATH_NAMES[path]}, {size_text(size)}"


def _side(path: str) -> str:
    return "wifi" if path == "wifi" else "cell"


def _rtt_of(f: Facts, runs: pl.DataFrame, path: str) -> pl.DataFrame:
    """The runs joined with their RTT distribution on ``path``'s side (derived.run_rtt)."""
    return runs.join(f.rtt.filter(pl.col("side") == _side(path)), on="run_id", how="inner")


def per_run(column: str, source: str = "facts", scale: float = 1.0):
    """Per run: a run_facts column of the path's side (``{side}`` in ``column``), or a
    run_rtt column (``source="rtt"``), times ``scale``."""
    def v(f: Facts, runs: pl.DataFrame, path: str) -> dict:
        col = column.format(side=_side(path))
        d = _rtt_of(f, runs, path) if source == "rtt" else runs
        return {"x": values(d.with_columns(x=pl.col(col) * scale), "x")}
    return v


def rtt_ratio(num: str, den: str):
    """Per run: the ratio of two of the path's RTT statistics (derived.run_rtt)."""
    def v(f: Facts, runs: pl.DataFrame, path: str) -> dict:
        d = _rtt_of(f, runs, path).filter(pl.col(den) > 0)
        return {"x": values(d.with_columns(x=pl.col(num) / pl.col(den)), "x")}
    return v


def rtt_share(count: str):
    """Per run (samples counted by ``count``, samples): pooled, the share of a CCDF."""
    def v(f: Facts, runs: pl.DataFrame, path: str) -> dict:
        d = _rtt_of(f, runs, path).filter(pl.col("rtt_n") > 0)
        return {"packets": d.select(pl.col(count).cast(pl.Float64), pl.col("rtt_n").cast(pl.Float64))
                .to_numpy().reshape(-1, 2)}
    return v


def loss_gap(f: Facts, runs: pl.DataFrame, path: str) -> dict:
    """WiFi's loss (single-path WiFi runs) and the cellular path's (single-path LTE runs)."""
    del path
    r, _ = f.of(P)
    r = with_conditions(r).join(runs.select("table", "size_bytes").unique(), on=["table", "size_bytes"])
    return {"a": values(r.filter(pl.col("mode") == "SP-wifi"), "loss_wifi_pct"),
            "b": values(r.filter(pl.col("mode") == "SP-lte"), "loss_cell_pct")}


def spread_vs_cell(f: Facts, runs: pl.DataFrame, path: str) -> dict:
    """Per MPTCP run: WiFi's and the cellular subflow's mean RTT and 10-90 % spread."""
    del path
    w = _rtt_of(f, runs, "wifi").select("run_id", w_mean="rtt_mean_ms",
                                          w_spread=pl.col("rtt_p90_ms") - pl.col("rtt_p10_ms"))
    c = _rtt_of(f, runs, "att").select("run_id", c_mean="rtt_mean_ms",
                                         c_spread=pl.col("rtt_p90_ms") - pl.col("rtt_p10_ms"))
    d = w.join(c, on="run_id")
    return {k: values(d, k) for k in ("w_mean", "w_spread", "c_mean", "c_spread")}


def _lower_and_less_variable(s):
    m = lambda a: np.mean(a, axis=1)  # noqa: E731
    return np.maximum(m(s["w_mean"]) / m(s["c_mean"]), m(s["w_spread"]) / m(s["c_spread"]))


def cv_large_vs_small(f: Facts, runs: pl.DataFrame, path: str) -> dict:
    """Per-connection mean RTTs of single-path runs over ``path``: the large-flow runs'
    (``runs``: Table 5) and the small-flow runs' (Table 3) of the same path."""
    r, _ = f.of(P)
    r = with_conditions(r)
    mode = "SP-wifi" if path == "wifi" else "SP-lte"
    col = f"rtt_{_side(path)}_mean_ms"
    small = r.filter((pl.col("table") == "t3") & (pl.col("mode") == mode) & (pl.col("size_bytes") >= KB512))
    return {"large": values(runs, col), "small": values(small, col)}


def _cv(a):
    return np.std(a, axis=1, ddof=1) / np.mean(a, axis=1)


CV_RATIO = stats.boot(lambda s: _cv(s["large"]) / _cv(s["small"]), ("large", "small"),
                      "coefficient of variation over runs of the per-connection mean RTT: large flows (Table 5 "
                      "runs) ÷ small flows (Table 3 runs of 512 KB and 4 MB)")
LOWER_LESS_VARIABLE = stats.boot(_lower_and_less_variable, ("w_mean", "w_spread", "c_mean", "c_spread"),
                                 "the larger of WiFi ÷ cellular mean RTT and WiFi ÷ cellular 10-90 % RTT spread "
                                 "(means over MPTCP runs)")
SPREAD_RATIO = stats.boot(
    lambda s: np.mean(s["a"], axis=1) / np.minimum(np.mean(s["b"], axis=1), np.mean(s["c"], axis=1)),
    ("a", "b", "c"), "AT&T's mean relative RTT spread ÷ the smaller of Verizon's and Sprint's")


def relative_spread(f: Facts, runs: pl.DataFrame, path: str) -> dict:
    """Per single-path LTE/3G run of each carrier at this table and size: (p90 − p10) ÷ p50
    of its RTT samples; roles a (AT&T), b (Verizon), c (Sprint)."""
    del path
    r, _ = f.of(P)
    r = with_conditions(r).join(runs.select("table", "size_bytes").unique(), on=["table", "size_bytes"])
    r = _rtt_of(f, r.filter(pl.col("mode") == "SP-lte"), "att").filter(pl.col("rtt_p50_ms") > 0)
    r = r.with_columns(x=(pl.col("rtt_p90_ms") - pl.col("rtt_p10_ms")) / pl.col("rtt_p50_ms"))
    return {k: values(r.filter(pl.col("carrier") == c), "x") for k, c in
            (("a", "att"), ("b", "verizon"), ("c", "sprint"))}


@dataclass(frozen=True)
class Statement:
    """Which runs an inventory condition describes, and our value of it per cell."""

    id: str
    tables: tuple[str, ...]
    paths: tuple[str, ...]
    sizes: tuple[int, ...] | None  # None: every size the table's scenarios run
    samples: Callable  # (facts, the cell's runs, path) -> roles' per-run values
    stat: stats.Stat
    # a statement about a figure drawn from the table's runs (Fig. 12's RTT distributions):
    # it gates the claims of that figure's section (Fig. 13's out-of-order shares, which
    # §5.2 explains by those distributions), not the table's own cells (Table 6's means)
    figure: bool = False

    def describes(self, table: str, path: str, size: int) -> bool:
        return table in self.tables and path in self.paths and (self.sizes is None or size in self.sizes)


MEAN = stats.mean("x")
POOLED = stats.pooled("packets", text="samples counted ÷ samples, pooled over runs")
LTE = ("att", "verizon")

STATEMENTS = [
    Statement("chen-coffee-path", ("t4",), ("wifi",), None, loss_gap,
              stats.mean_diff("a", "b", "mean single-path WiFi loss − mean single-path AT&T loss")),
    Statement("chen-path-loss-wifi", ("t3", "t5"), ("wifi",), None, per_run("loss_{side}_pct"), MEAN),
    Statement("chen-path-loss-cell", ("t2", "t3", "t5"), ("att",), None, per_run("loss_{side}_pct"), MEAN),
    Statement("chen-wifi-rtt-30ms", ("t2",), ("wifi",), (KB64,), per_run("rtt_{side}_mean_ms"), MEAN),
    Statement("chen-4g-base-rtt", ("t2", "t3"), LTE, None, per_run("rtt_min_ms", "rtt"), MEAN),
    Statement("chen-3g-min-rtt", ("t2",), ("sprint",), None, per_run("rtt_min_ms", "rtt"), MEAN),
    Statement("chen-3g-rtt-variation", ("t2",), ("sprint",), None, per_run("rtt_p50_ms", "rtt"), MEAN),
    Statement("chen-att-most-stable", ("t2",), ("att",), None, relative_spread, SPREAD_RATIO),
    Statement("chen-large-rtt-stable", ("t5",), ("wifi", "att"), None, cv_large_vs_small, CV_RATIO),
    Statement("chen-4g-rtt-inflation", ("t6",), LTE, None, rtt_ratio("rtt_max_ms", "rtt_min_ms"), MEAN, figure=True),
    Statement("chen-3g-rtt-inflation", ("t6",), ("sprint",), (MB16, MB32), rtt_ratio("rtt_max_ms", "rtt_min_ms"), MEAN, figure=True),
    Statement("chen-wifi-rtt-lower-less-variable", ("t6",), ("att", "verizon", "sprint"), None, spread_vs_cell,
              LOWER_LESS_VARIABLE, figure=True),
    Statement("chen-fig12-wifi-min-rtt", ("t6",), ("wifi",), None, per_run("rtt_min_ms", "rtt"), MEAN, figure=True),
    Statement("chen-fig12-wifi-p90", ("t6",), ("wifi",), (MB8, MB16, MB32), per_run("rtt_p90_ms", "rtt"), MEAN, figure=True),
    Statement("chen-fig12-att-min-rtt", ("t6",), ("att",), None, per_run("rtt_min_ms", "rtt"), MEAN, figure=True),
    Statement("chen-fig12-att-rtt-spread", ("t6",), ("att",), None, rtt_share("rtt_50_200ms"), POOLED, figure=True),
    Statement("chen-fig12-sprint-min-rtt", ("t6",), ("sprint",), None, per_run("rtt_min_ms", "rtt"), MEAN, figure=True),
    Statement("chen-fig12-sprint-over-100ms", ("t6",), ("sprint",), None, rtt_share("rtt_over_100ms"), POOLED, figure=True),
    Statement("chen-fig12-sprint-5fold", ("t6",), ("sprint",), (MB4, MB8), rtt_ratio("rtt_max_ms", "rtt_min_ms"),
              MEAN, figure=True),
    Statement("chen-fig12-sprint-up-to-2s", ("t6",), ("sprint",), (MB16, MB32),
              per_run("rtt_max_ms", "rtt", scale=1e-3), MEAN, figure=True),
    Statement("chen-fig12-verizon-min-rtt", ("t6",), ("verizon",), None, per_run("rtt_min_ms", "rtt"), MEAN, figure=True),
    Statement("chen-fig12-verizon-up-to-2s", ("t6",), ("verizon",), None, per_run("rtt_max_ms", "rtt", scale=1e-3),
              MEAN, figure=True),
    Statement("chen-sprint-avg-rtt", ("t6",), ("sprint",), (MB4,), per_run("rtt_{side}_mean_ms"), MEAN),
]
BY_ID = {s.id: s for s in STATEMENTS}
# Table 2's Sprint loss at 512 KB is an inventory entry of its own (chen-3g-loss: "Sprint
# has a particularly high loss rate on 512 KB downloads"): that cell is the entry.
CELL_ENTRIES = {cell_id("t2", "sprint", "loss", KB512): "chen-3g-loss"}


def _statement_measure(s: Statement):
    def m(f: Facts) -> Measure:
        r, note = f.of(P)
        r = with_conditions(r)
        groups = []
        for table in s.tables:
            sizes = sorted(r.filter(pl.col("table") == table)["size_bytes"].drop_nulls().unique().to_list())
            for size in sizes:
                if s.sizes is not None and size not in s.sizes:
                    continue
                for path in s.paths:
                    runs = _cell_runs(f, table, path, size)
                    if runs.height:
                        groups.append(Group(cond_label(table, path, size), s.samples(f, runs, path)))
        return Measure(groups, s.stat, note=note,
                       missing=f"needs chen runs of {', '.join(TABLES[t] for t in s.tables)}'s scenarios")
    return m


def statements_of(table: str, carrier: str, mode: str, size: int, figure: bool = True) -> tuple[str, ...]:
    """The condition statements (``id@cell``) a configuration's runs rest on (``figure``:
    also the statements about the figure drawn from the table's runs)."""
    out = []
    for path in paths_of(carrier, mode):
        out += [f"{s.id}@{cond_label(table, path, size)}" for s in STATEMENTS
                if s.describes(table, path, size) and (figure or not s.figure)]
    return tuple(out)


def conditions_of(table: str, carrier: str, mode: str, size: int, figure: bool = True) -> tuple[str, ...]:
    """Every check a configuration's runs rest on: its table's cells and the statements
    that describe its paths (``figure=False``: not those about the figure beside the table,
    for a claim on the table's own numbers)."""
    ids = [CELL_ENTRIES.get(c, c) for c in cells(table, carrier, mode, size)]
    return (*ids, *statements_of(table, carrier, mode, size, figure))


def _scope(s: Statement) -> str:
    sizes = "every size run" if s.sizes is None else ", ".join(size_text(b) for b in s.sizes)
    return (f"computed per {', '.join(TABLES[t] for t in s.tables)} cell ({', '.join(PATH_NAMES[p] for p in s.paths)}; "
            f"{sizes}): the runs of that table's scenarios ({'MP-2 lia' if s.tables == ('t6',) else 'single-path'}), "
            "each cell a group; it gates the groups of the claims measured on those runs")


def statement_check(s: Statement, statistic: str, mismatch: str = ""):
    return condition(P, s.id, statistic=f"{statistic} ({s.stat.text})", config=_scope(s),
                     measure=_statement_measure(s),
                     mismatch=mismatch or "a stationary emulated link calibrated to the table's means, not the "
                                          "paper's live network")


CELL_CHECKS = [_cell_check(t, p, m, s, v) for (t, p, m), col in CELLS.items() for s, v in col.items()
               if cell_id(t, p, m, s) not in CELL_ENTRIES]


# ------------------------------------------------------------------ conditions

# The paper's words about its paths (inventory entries), each computed per cell of the
# runs it describes (conditions.STATEMENTS) and gating the groups measured on them.
_ST = {
    "chen-coffee-path": "mean single-path WiFi loss minus mean single-path AT&T loss, coffee-shop scenario, per size "
                        "(percentage points)",
    "chen-path-loss-wifi": "mean loss rate of single-path WiFi runs, per Table 3 and Table 5 size (the sentence "
                           "summarises those tables' WiFi, 1.4-2.1 %; Table 2's 0.43 and 0.20 % at 64 and 512 KB lie "
                           "outside it, so it is not read as describing those runs)",
    "chen-path-loss-cell": "mean loss rate of single-path AT&T runs, per Table 2, 3 and 5 size (Table 2's Verizon "
                           "0.31 % and Sprint's 0.37-8.76 % lie above the sentence's 0.1 %: AT&T's runs are the ones it "
                           "describes)",
    "chen-wifi-rtt-30ms": "mean RTT of single-path WiFi runs of Table 2 at 64 KB (the §4 small-flow reading: 'WiFi "
                          "connections have smaller RTTs (around 30 ms)')",
    "chen-4g-base-rtt": "mean over single-path LTE runs of each run's minimum RTT sample, per carrier, Table 2 and "
                        "Table 3 sizes",
    "chen-3g-min-rtt": "mean over single-path Sprint runs of each run's minimum RTT sample, per Table 2 size",
    "chen-3g-rtt-variation": "mean over single-path Sprint runs of each run's median RTT sample, per Table 2 size (the "
                             "sentence's range as where a run's RTTs lie)",
    "chen-att-most-stable": "AT&T's relative RTT spread ((p90 − p10) ÷ median of a run's samples) ÷ the smaller of "
                            "Verizon's and Sprint's, single-path runs, per Table 2 size; our reading of 'lowest RTT "
                            "variability' (the paper defines none): < 1",
    "chen-large-rtt-stable": "coefficient of variation over runs of the per-connection mean RTT, large-flow runs "
                             "(Table 5) ÷ small-flow runs of 512 KB-4 MB (Table 3), per path; our reading of 'more "
                             "stable (i.e., have much lower variability)': < 1",
    "chen-4g-rtt-inflation": "mean over MPTCP runs of the LTE subflow's largest ÷ smallest RTT sample, per Table 6 "
                             "carrier and size",
    "chen-3g-rtt-inflation": "mean over MPTCP runs of the Sprint subflow's largest ÷ smallest RTT sample, Table 6 at "
                             "16 and 32 MB (§2.1's 20-fold read at the sizes where Fig. 12's Sprint RTTs reach 2 s "
                             "from a 50 ms minimum; at 4-8 MB §5.1 says five-fold: chen-fig12-sprint-5fold)",
    "chen-wifi-rtt-lower-less-variable": "the larger of (WiFi ÷ cellular mean RTT) and (WiFi ÷ cellular 10-90 % "
                                         "spread), MPTCP runs, per Table 6 carrier and size: < 1",
    "chen-fig12-wifi-min-rtt": "mean over MPTCP runs of the WiFi subflow's smallest RTT sample, per Table 6 size",
    "chen-fig12-wifi-p90": "mean over MPTCP runs of the WiFi subflow's 90th-percentile RTT, Table 6 sizes above 4 MB",
    "chen-fig12-att-min-rtt": "mean over MPTCP runs of the AT&T subflow's smallest RTT sample, per Table 6 size",
    "chen-fig12-att-rtt-spread": "AT&T subflow RTT samples within 50-200 ms ÷ all, pooled over MPTCP runs, per Table 6 "
                                 "size (%)",
    "chen-fig12-sprint-min-rtt": "mean over MPTCP runs of the Sprint subflow's smallest RTT sample, per Table 6 size",
    "chen-fig12-sprint-over-100ms": "Sprint subflow RTT samples above 100 ms ÷ all, pooled over MPTCP runs, per Table 6 "
                                    "size (%)",
    "chen-fig12-sprint-5fold": "mean over MPTCP runs of the Sprint subflow's largest ÷ smallest RTT sample, 4 and 8 MB",
    "chen-fig12-sprint-up-to-2s": "mean over MPTCP runs of the Sprint subflow's largest RTT sample (s), 16 MB",
    "chen-fig12-verizon-min-rtt": "mean over MPTCP runs of the Verizon subflow's smallest RTT sample, per Table 6 size",
    "chen-fig12-verizon-up-to-2s": "mean over MPTCP runs of the Verizon subflow's largest RTT sample (s), per Table 6 "
                                   "size",
    "chen-sprint-avg-rtt": "mean over MPTCP runs of the Sprint subflow's mean RTT, Table 6 at 4 MB",
}
CONDITIONS = [statement_check(s, _ST[s.id]) for s in STATEMENTS] + [
    condition(P, "chen-3g-loss", statistic="mean loss rate of single-path Sprint runs of Table 2 at 512 KB (server "
                                           "trace: retransmitted ÷ sent data packets, §3.3)",
              config="the Table 2 scenario fig2-sprint-512kb", measure=cell_measure("t2", "sprint", "loss", KB512),
              mismatch="our 3G loss is the profile's random loss plus its queue's overflows at 512 KB")]
