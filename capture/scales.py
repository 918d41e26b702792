"""What a campaign's scale means, in one table: the Makefile (where a scale's captures
go), the workflow (whether it captures evidence), the capture (a campaign's default
scale), the findings (which runs can carry a verdict) and the progress logger read it.
A campaign YAML gives each scale its own repetitions and sizes (``scales.<name>``)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scale:
    name: str
    evidence: bool  # its runs can carry a verdict (False: a testbed check and the figures)
    raw_subdir: str  # captures go to data/raw/<raw_subdir> ("": data/raw itself)
    what: str


SCALES: dict[str, Scale] = {s.name: s for s in (
    # quick run ids are partly the standard scale's: its captures are kept apart
    Scale("quick", False, "quick", "one or two runs per configuration, every campaign in < 30 min on 2 cores: "
                                   "a testbed check and the figures, not evidence"),
    Scale("standard", True, "", "the runs each claim's plan asks (papers/<paper>/planned_n.yaml: 5 to 20 in "
                                "every compared group), the five campaigns within 10 hours on 2 cores: what "
                                "data/reference holds"),
    # the paper scale plans the standard runs too, so both share data/raw
    Scale("paper", True, "", "the papers' own matrices (days on one host)"),
)}

NOT_EVIDENCE = tuple(s.name for s in SCALES.values() if not s.evidence)


def raw_dir(scale: str | None, base: str = "data/raw") -> str:
    """Where captures of ``scale`` go under ``base``."""
    sub = SCALES[scale].raw_subdir if scale in SCALES else ""
    return f"{base}/{sub}" if sub else base


def default_scale(scales) -> str:
    """The scale of a campaign run without one: its figures-only scale when it has one (a
    check before a long capture), else its first."""
    have = list(scales)
    return next((s for s in NOT_EVIDENCE if s in have), have[0])
