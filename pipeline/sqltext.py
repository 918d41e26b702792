"""SQL text made from Python values: a string literal, and the ``COMMENT ON`` statements
that write the schema's and the derived layer's descriptions into a DuckDB file. No
polars here: ``derived`` uses it, and the capture imports ``derived`` (``study_of``)."""
from __future__ import annotations


def literal(text: str) -> str:
    """``text`` as an SQL string literal (its single quotes doubled)."""
    return "'" + text.replace("'", "''") + "'"


def comment_on(name: str, column: str | None, text: str, kind: str = "TABLE") -> str:
    """``COMMENT ON`` a table (``kind``: or a view) or, with ``column``, one of its columns."""
    if column is None:
        return f'COMMENT ON {kind} "{name}" IS {literal(text)}'
    return f'COMMENT ON COLUMN "{name}"."{column}" IS {literal(text)}'


def in_one_transaction(statements: list[str]) -> str:
    """``statements`` as one script run in one transaction (one commit, not one each)."""
    return "BEGIN TRANSACTION;\n" + ";\n".join(statements) + ";\nCOMMIT"
