"""This paper's synthetic test grid: every run of its campaign at the standard scale, with
values from the run's configured links (papers.synthetic), ``reps`` repetitions each."""
from pathlib import Path


def runs(builder, reps: int | None) -> None:
    builder.campaign(Path(__file__).parent, reps)
