"""Snakemake's terminal output for the lab's main job: one progress line per stage.

    snakemake --cores all reproduce_all --logger mptcp-lab      (what `make reproduce-all` runs)

Snakemake prints a block per job (5,985 lines for a standard capture) and a percentage
of a total that grows when the checkpoint adds the table jobs ("191 of 205 steps (93%)"
then "192 of 385 steps (50%)"). Here each stage (capture, tables, database, findings,
notebooks, report) gets one line: jobs done of those known so far, and for captures the
time left from the duration model (`capture.estimate`) until a run has finished, then
from the runs' measured times. On a terminal the line is rewritten in place; in a log
(not a terminal) a stage prints at each tenth of its jobs. Errors and warnings are
printed in full; every job block still goes to Snakemake's log file
(`.snakemake/log/*.snakemake.log`, named at the end).

A logger plugin is found by its module name (``snakemake_logger_plugin_<name>``), hence
this top-level package of one file.
"""
from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from snakemake_interface_logger_plugins.base import LogHandlerBase
from snakemake_interface_logger_plugins.common import LogEvent
from snakemake_interface_logger_plugins.settings import LogHandlerSettingsBase

# The lab's duration model, for the capture's time-left estimate. A logger never takes
# Snakemake down: without the lab's packages it counts jobs and estimates from their times.
try:
    from capture.estimate import workflow_s
    from capture.scales import SCALES
    from capture.spec import expand, load
    from papers import PAPERS
except Exception:  # noqa: BLE001
    PAPERS, SCALES = {}, {}

STAGES = {"capture_run": "capture", "run_tables": "tables", "load_db": "database", "findings": "findings",
          "notebook_ipynb": "notebooks", "execute_notebook": "notebooks", "notebook_html": "notebooks",
          "report": "report"}
ERRORS = {LogEvent.ERROR, LogEvent.JOB_ERROR, LogEvent.GROUP_ERROR}


@dataclass
class LogHandlerSettings(LogHandlerSettingsBase):
    # (parse_func: Snakemake takes a field's type for argparse's, and this module's
    # annotations are text)
    scale: Optional[str] = field(default=None, metadata={
        "help": "the capture's scale (`make reproduce-all SCALE=...` passes it): the time left "
                "before any run has finished is the duration model over that scale's runs",
        "parse_func": str, "unparse_func": str})


def plan_mean_s(scale: str | None) -> float | None:
    """The duration model's mean over every capture job of the papers' campaigns at
    ``scale`` (each run with its expected repeats after stalls and the job's start)
    (None without a scale or the lab's packages). The mean of the first runs started
    is no estimate of the rest: a campaign's runs last from seconds (Deng's 10 KB) to
    minutes (D-ITG's tests), and the first started are one campaign's."""
    times = []
    for paper in PAPERS.values():
        try:
            f = paper.campaign_file
            times += [workflow_s(s) for s in expand(load(f, scale), base_dir=Path(f).parent, scale=scale)]
        except Exception:  # noqa: BLE001 - a scale the campaign does not have
            continue
    return sum(times) / len(times) if scale and times else None


@dataclass
class Stage:
    name: str
    planned: int = 0  # from the DAG's job counts; grows when a checkpoint adds jobs
    started: dict[int, float] = field(default_factory=dict)  # job id -> start time
    done: int = 0
    seconds_done: list[float] = field(default_factory=list)
    model_s: dict[int, float] = field(default_factory=dict)  # job id -> the duration model's estimate
    model_done: list[float] = field(default_factory=list)  # the model's estimates of the finished jobs
    plan_mean_s: float | None = None  # the model's mean over the scale's runs
    printed_tenth: int = -1

    @property
    def total(self) -> int:
        return max(self.planned, self.done + len(self.started))

    def left_s(self) -> float | None:
        """The jobs left times the model's mean run, corrected by what the finished runs
        took against their model (without a model: the finished runs' mean)."""
        left = self.total - self.done
        if left <= 0:
            return 0.0
        per_run = self.plan_mean_s or (sum(self.model_s.values()) / len(self.model_s) if self.model_s else None)
        if per_run is not None:
            measured = sum(self.model_done) > 0 and len(self.model_done) == len(self.seconds_done)
            return left * per_run * (sum(self.seconds_done) / sum(self.model_done) if measured else 1.0)
        if self.seconds_done:
            return left * sum(self.seconds_done) / len(self.seconds_done)
        return None


def _hms(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600} h {s % 3600 // 60:02d} min" if s >= 3600 else f"{s // 60} min {s % 60:02d} s"


class LogHandler(LogHandlerBase):
    def __post_init__(self) -> None:
        self.stages: dict[str, Stage] = {}
        self.jobs: dict[int, str] = {}  # job id -> stage
        self.tty = sys.stderr.isatty()
        self.models: dict[str, dict[str, float]] = {}
        self.line_open = False
        # the capture's (the settings' --logger-mptcp-lab-scale; a list where Snakemake tags values)
        scale = getattr(self.settings, "scale", None)
        self.scale = (scale[0] if scale else None) if isinstance(scale, (list, tuple)) else scale

    # -- the plugin's contract
    @property
    def writes_to_stream(self) -> bool:
        return True

    @property
    def writes_to_file(self) -> bool:
        return False

    @property
    def has_filter(self) -> bool:
        return True  # every record reaches emit(); it decides what the terminal shows

    @property
    def has_formatter(self) -> bool:
        return False  # Snakemake's formatter, for the errors printed in full

    @property
    def needs_rulegraph(self) -> bool:
        return False

    # -- records
    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._emit(record)
        except Exception:  # the terminal line must never take the workflow down
            self.handleError(record)

    def _emit(self, record: logging.LogRecord) -> None:
        event = getattr(record, "event", None)
        if event in ERRORS or record.levelno >= logging.WARNING:
            self._write(self.format(record), final=True)
        elif event == LogEvent.RUN_INFO and isinstance(getattr(record, "stats", None), dict):
            planned: dict[str, int] = {}  # a stage can be several rules (notebooks: three)
            for rule, n in record.stats.items():
                if rule in STAGES and isinstance(n, int):
                    planned[STAGES[rule]] = planned.get(STAGES[rule], 0) + n
            for name, n in planned.items():
                st = self._stage_named(name)
                st.planned = max(st.planned, n)
        elif event == LogEvent.JOB_INFO and getattr(record, "rule_name", "") in STAGES:
            rule = record.rule_name
            st = self._stage(rule)
            jobid = record.jobid
            self.jobs[jobid] = st.name
            st.started[jobid] = time.monotonic()
            if rule == "capture_run":
                est = self._model(getattr(record, "wildcards", None) or {})
                if est is not None:
                    st.model_s[jobid] = est
            self._show(st)
        elif event == LogEvent.JOB_FINISHED:
            name = self.jobs.pop(record.job_id, None)
            if name is not None:
                st = self.stages[name]
                t0 = st.started.pop(record.job_id, None)
                model = st.model_s.pop(record.job_id, None)
                st.done += 1
                if t0 is not None:
                    st.seconds_done.append(time.monotonic() - t0)
                    if model is not None:
                        st.model_done.append(model)
                self._show(st)
        elif event is None and isinstance(record.msg, str) and record.msg.startswith("Complete log"):
            self._write(record.getMessage(), final=True)

    def _stage(self, rule: str) -> Stage:
        return self._stage_named(STAGES[rule])

    def _stage_named(self, name: str) -> Stage:
        if name not in self.stages:
            self.stages[name] = Stage(name, plan_mean_s=plan_mean_s(self.scale) if name == "capture" else None)
        return self.stages[name]

    def _model(self, wildcards: dict) -> float | None:
        """The duration model's estimate for one capture run, by its campaign and id."""
        camp, run = wildcards.get("campaign"), wildcards.get("run")
        if camp not in self.models:
            self.models[camp] = {}
            try:
                f = PAPERS[camp].campaign_file
                # a run id of several scales: its spec at the capture's scale
                for scale in sorted(SCALES, key=lambda sc: sc != self.scale):
                    try:
                        for s in expand(load(f, scale), base_dir=Path(f).parent, scale=scale):
                            self.models[camp].setdefault(s.run_id, workflow_s(s))
                    except Exception:  # a scale the campaign does not have
                        continue
            except Exception:
                pass
        return self.models[camp].get(run)

    def _show(self, st: Stage) -> None:
        left = st.left_s()
        text = f"{st.name}: {st.done}/{st.total} jobs done"
        if st.name == "capture" and left is not None and st.done < st.total:
            text += f", about {_hms(left)} left" + (" (duration model)" if not st.seconds_done else "")
        if self.tty:
            self._write(text, final=st.done >= st.total)
        else:
            tenth = 10 * st.done // max(st.total, 1)
            if tenth != st.printed_tenth or st.done >= st.total:
                st.printed_tenth = tenth
                self._write(text, final=True)

    def _write(self, text: str, final: bool) -> None:
        if self.tty:
            sys.stderr.write("\r\x1b[K" + text + ("\n" if final else ""))
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()
