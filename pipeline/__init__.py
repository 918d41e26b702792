"""pcaps -> DuckDB tables of the MPTCP metrics the papers use (see DESIGN.md)."""
