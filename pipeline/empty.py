"""Make sure a lab database with every table of pipeline.schema.TABLES and the derived
views exists: what the workflow gives the notebooks when there is no run to analyse.
The file is a store (pipeline/store.py): an existing one keeps its rows.

    python -m pipeline.empty OUT.duckdb
"""
import sys

from .store import StoreError, write_duckdb


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    try:
        write_duckdb({}, argv[0])
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
