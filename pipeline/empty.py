"""Write a lab database with every table of pipeline.schema.TABLES, no rows, and the
derived views: what the workflow gives the notebooks when there is no run to analyse.

    python -m pipeline.empty OUT.duckdb
"""
import sys

from pipeline.store import write_duckdb


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    write_duckdb({}, argv[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
