"""python -m papers {findings,replicate,calibrate,coverage}: the papers' claims judged on a lab
database, a replicate compared with the reference, and calibration runs of a link profile."""
from __future__ import annotations

import logging
import sys

COMMANDS = {
    "findings": "the findings table, lab checks and group estimates of a lab database",
    "replicate": "do the verdicts hold on a replicate captured with another seed?",
    "calibrate": "capture a slice of a campaign with changed link settings and judge the paper's conditions on it",
    "coverage": "the intervals' coverage on run values shaped like the reference's own",
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] not in COMMANDS:
        out = sys.stdout if argv[:1] in (["-h"], ["--help"]) else sys.stderr
        print("usage: python -m papers {" + ",".join(COMMANDS) + "} ...\n\n" + __doc__.split("\n\n")[0] + "\n", file=out)
        for name, what in COMMANDS.items():
            print(f"  {name:10s} {what} (python -m papers {name} --help)", file=out)
        return 0 if out is sys.stdout else 2
    # lazy: each command imports only what it needs (start-up time)
    if argv[0] == "findings":
        from .findings_cli import main as run
    elif argv[0] == "replicate":
        from .replicate import main as run
    elif argv[0] == "coverage":
        from .coverage import main as run
    else:
        from .calibrate import main as run
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    return run(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
