"""Writing tables: per-run Parquet folders, and the DuckDB file as a store.

The DuckDB file is a store, not a scratch file:

* rows are keyed by run and trace: writing a run replaces that run's rows (all its
  tables), writing a single trace replaces that trace's rows; every other row stays;
* a write that has nothing to add leaves the file untouched;
* the target is checked before any work (``check_db_target``): a path that exists and
  is not a DuckDB database, is not writable, or holds a table of one of our names
  that is not ours, is refused with a one-line reason; other tables in the file (a
  user's own) are kept;
* writers are serialised by a lock file beside the database (``.<name>.lock``): a
  second writer waits for the first, then applies its rows to the first one's result;
* each write builds a copy next to the database and renames it into place, so a
  reader never sees half a write and a killed writer leaves the old file intact; the
  temporary files of killed writers are removed by the next writer;
* ``prepare`` builds that copy (schema and views in place) while the caller is still
  analysing, without the lock; under the lock the write uses it only if the database
  is still the file it was copied from, else it starts over from the current one.
"""
from __future__ import annotations

import os
import shutil
import stat
import sys
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from . import derived, schema
from .apart import FACT_TABLES, TRACE_TABLES, keep_loose_pcaps_apart, keep_runs_apart
from .beside import (not_utf8, StoreError, check_name, clean_stale_temps, new_temp, remove_temp,
                     writer_lock)
from .inputs import not_duckdb, not_regular
from .frames import Arrow
from .inserts import insert
from .labels import of_runs
from .migrate import columns, ensure_schema
from .procs import FS_FAULTS, pid_alive, stop_if_interrupted
from .tables import meta_tables_of

if TYPE_CHECKING:
    import duckdb


def _duckdb():
    """DuckDB, imported on first use: ``prepare`` imports it in its thread, off the
    analysis' path (the import is ~30 ms of a ~0.5 s pcap -> DuckDB call)."""
    import duckdb
    return duckdb



# ----------------------------------------------------------------------- Parquet


def _stale_table_temps(out: Path) -> list[Path]:
    """Temporary folders of ``write_tables`` calls whose process is gone."""
    stale = []
    for p in out.parent.glob(f".{out.name}.tmp-*"):
        try:
            pid = int(p.name.rsplit(".tmp-", 1)[1].split("-", 1)[0])
        except ValueError:
            continue
        if not pid_alive(pid):
            stale.append(p)
    return stale


def check_tables_target(out_dir: str | os.PathLike) -> Path:
    """Refuse an ``--out`` that is not ours to replace: an existing file, or a folder
    holding anything but our ``<table>.parquet`` files."""
    out = Path(out_dir)
    if not str(out_dir).strip():
        raise StoreError("--out: empty path")
    shown = not_utf8(str(out_dir))  # Parquet files are written through paths as UTF-8 text
    if shown is not None:
        raise StoreError(f"--out {shown}: the name is not UTF-8 text; rename it")
    if out.is_symlink():
        if not out.exists():
            raise StoreError(f"{out}: a symbolic link to nothing ({os.readlink(out)}); refusing to write through it")
        # a link to a folder: the tables replace the folder it points to, the link stays
        out = Path(os.path.realpath(out))
    if out.exists():
        if not out.is_dir():
            raise StoreError(f"{out}: exists and is not a folder; refusing to replace it")
        ours = {f"{n}.parquet" for n in schema.TABLES}
        foreign = sorted(p.name for p in out.iterdir() if p.name not in ours)
        if foreign:
            raise StoreError(f"{out}: holds files that are not pipeline tables ({', '.join(foreign[:3])}"
                             f"{', ...' if len(foreign) > 3 else ''}); refusing to replace it")
    return out


def write_tables(tables: dict[str, pl.DataFrame], out_dir: str | os.PathLike) -> Path:
    """``out_dir/<table>.parquet`` for every table; the folder appears whole or not at all."""
    out = check_tables_target(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    for p in _stale_table_temps(out):
        shutil.rmtree(p, ignore_errors=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    tmp.mkdir()
    try:
        for name in schema.TABLES:
            df = tables.get(name, schema.empty(name))
            if isinstance(df, pl.LazyFrame):  # a streamed trace's rows, over its spill
                df.sink_parquet(tmp / f"{name}.parquet")
            else:
                df.write_parquet(tmp / f"{name}.parquet")
        if out.exists():
            old = out.with_name(f".{out.name}.tmp-{os.getpid()}-old")
            out.rename(old)
            tmp.rename(out)
            shutil.rmtree(old)
        else:
            tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def read_tables(table_dir: str | os.PathLike) -> dict[str, pl.DataFrame]:
    """Every table of a Parquet folder (empty where a file is missing), in the current
    schema: columns added since the folder was written come back as nulls (so older
    folders load beside new ones), and tables written before the ``direction`` column
    existed get ``direction = 'down'``."""
    d = Path(table_dir)
    out = {}
    for n in schema.TABLES:
        f = d / f"{n}.parquet"
        if not f.exists():
            out[n] = schema.empty(n)
            continue
        what = not_regular(f)
        if what:  # a FIFO would be waited on forever
            raise StoreError(f"{f}: is {what}, not a Parquet file")
        try:
            df = pl.read_parquet(f)
        except Exception as e:
            raise StoreError(f"{f}: not a readable Parquet file ({_first_line(e)})") from None
        try:
            out[n] = schema.conform(n, schema.legacy_direction(n, df))
        except Exception as e:
            raise StoreError(f"{f}: its columns are not the lab's {n} table ({_first_line(e)})") from None
    if not (d / "run_paths.parquet").exists() and out["runs"].height:
        # written before meta.json was lifted into columns: lifted here, from meta_json
        out.update(meta_tables_of(out["runs"]))
    if not (d / "run_labels.parquet").exists() and out["runs"].height:  # written before labels: meta.json's
        out["run_labels"] = of_runs(out["runs"])
    return out


# ----------------------------------------------------------------------- DuckDB


@dataclass
class Keys:
    """What a write replaces: whole runs, or single traces of a run."""
    runs: set[str] = field(default_factory=set)
    traces: set[tuple[str, str]] = field(default_factory=set)  # (run_id, trace path)
    facts: set[str] = field(default_factory=set)  # runs whose FACT_TABLES rows a labelled lone pcap replaces

    def __bool__(self) -> bool:
        return bool(self.runs or self.traces or self.facts)


def _existing_dir(p: Path) -> Path:
    """The nearest existing ancestor of ``p`` (where its folders would be created)."""
    for a in [p, *p.parents]:
        if a.exists():
            return a
    return Path("/")


def check_db_target(db: str | os.PathLike) -> Path:
    """The real path to write, or ``StoreError`` saying why ``db`` cannot be our store.

    Cheap and done before any analysis, so a bad ``--db`` costs nothing.
    """
    name = str(db)
    if not name.strip():
        raise StoreError("--db: empty path")
    check_name(name, "--db")
    p = Path(name)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        if p.is_symlink():
            raise StoreError(f"{name}: a broken symbolic link (to {os.readlink(p)})") from None
        real = Path(os.path.realpath(p))
        base = _existing_dir(real.parent)
        if not base.is_dir():
            raise StoreError(f"{name}: {base} is not a folder")
        if not os.access(base, os.W_OK | os.X_OK):
            raise StoreError(f"{name}: cannot create it (folder {base} is not writable)")
        return real
    except OSError as e:  # a symlink loop, a name too long, no permission on a folder...
        raise StoreError(f"{name}: {e.strerror.lower() if e.strerror else e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise StoreError(f"{name}: is a folder, not a database file")
    if not stat.S_ISREG(st.st_mode):
        raise StoreError(f"{name}: is {not_regular(p)}, not a database file; refusing to write to it")
    real = Path(os.path.realpath(p))
    try:
        with open(real, "rb") as f:
            head = f.read(16)
    except OSError as e:
        raise StoreError(f"{name}: cannot read it ({e.strerror})") from None
    what = not_duckdb(head)
    if what:
        raise StoreError(f"{name}: exists and is {what}; refusing to overwrite it (choose another --db)")
    if not st.st_mode & 0o222 or not os.access(real, os.W_OK):
        raise StoreError(f"{name}: is read-only (mode {stat.S_IMODE(st.st_mode):04o}); nothing written")
    if not os.access(real.parent, os.W_OK | os.X_OK):
        raise StoreError(f"{name}: its folder {real.parent} is not writable")
    seen = _identity(real)
    if seen is not None and not seen[3] and _checked.get(real) == seen:
        return real  # opened and found ours by an earlier check, and not changed since
    duckdb = _duckdb()
    try:
        con = duckdb.connect(str(real), read_only=True)
    except duckdb.Error as e:
        raise StoreError(f"{name}: DuckDB {duckdb.__version__} cannot open it: {_first_line(e)}") from None
    try:
        _check_tables_are_ours(con, name)
    finally:
        con.close()
    _checked[real] = seen
    return real


# Databases found ours by ``check_db_target`` in this process, with their identity
# (``_identity``) then: a call checks its target up to three times (before its work,
# before and under the writer lock), opening it once unless it changed.
_checked: dict[Path, tuple] = {}


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _type_family(sql: str) -> str:
    """Types DuckDB casts between without loss of meaning count as one (an older version
    of our tables may have had another integer width)."""
    t = sql.upper()
    if "INT" in t:
        return "integer"
    if t in ("FLOAT", "DOUBLE", "REAL") or t.startswith("DECIMAL"):
        return "number"
    return t


def _check_tables_are_ours(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """A table with one of our names must be ours (ours, or an older version of ours):
    our columns, of our types; and what has the name of one of our views or macros must
    be one of those (we replace them), not a table of someone else's."""
    rows = con.execute("SELECT c.table_name, c.column_name, c.data_type, t.table_type FROM information_schema.columns c "
                       "JOIN information_schema.tables t USING (table_schema, table_name) "
                       "WHERE c.table_schema = 'main' ORDER BY c.table_name, c.ordinal_position").fetchall()
    have: dict[str, list[tuple[str, str]]] = {}
    kinds: dict[str, str] = {}
    for t, c, typ, kind in rows:
        have.setdefault(t, []).append((c, typ))
        kinds[t] = kind
    views = {d.name for d in derived.definitions({t: set(cols) for t, cols in schema.TABLES.items()})}
    for t, cols in have.items():
        if t in views and kinds[t] != "VIEW":
            raise StoreError(f"{name}: holds a table {t!r} of its own where the lab keeps a view of that name; "
                             "choose another --db")
        if t not in schema.TABLES:
            continue  # someone else's table: kept as it is
        if kinds[t] == "VIEW":  # rows are written into our tables: a view cannot take them
            raise StoreError(f"{name}: holds a view {t!r} of its own, which is not the lab's table of that name; "
                             "rename or drop it, or choose another --db")
        names = [c for c, _ in cols]
        unknown = [c for c in names if c not in schema.TABLES[t]]
        if "run_id" not in names or unknown:
            raise StoreError(f"{name}: its table {t!r} is not the lab's (columns "
                             f"{', '.join(unknown or names)[:80]}); choose another --db")
        typed = [f"{c} {typ} where the lab's is {schema.sql_type(schema.TABLES[t][c])}" for c, typ in cols
                 if _type_family(typ) != _type_family(schema.sql_type(schema.TABLES[t][c]))]
        if typed:
            raise StoreError(f"{name}: its table {t!r} has columns of other types than the lab's "
                             f"({'; '.join(typed[:2])}); choose another --db")


def _same_file(a: str, b: str) -> bool:
    return a == b or os.path.realpath(a) == os.path.realpath(b)


def _delete(con: duckdb.DuckDBPyConnection, keys: Keys) -> None:
    for t in FACT_TABLES if keys.facts else ():
        con.execute(f'DELETE FROM "{t}" WHERE run_id IN (SELECT unnest(?))', [sorted(keys.facts)])
    if keys.runs:
        runs = pl.DataFrame({"run_id": sorted(keys.runs)}, schema={"run_id": pl.Utf8})
        con.register("_runs", Arrow(runs))
        for t in schema.TABLES:
            con.execute(f'DELETE FROM "{t}" WHERE run_id IN (SELECT run_id FROM _runs)')
        con.unregister("_runs")
    if keys.traces:
        # The same file spelt another way (./a.pcap, an absolute path, a link) is the same
        # trace; and a file belongs to one run: stored under another run id (its meta.json
        # was broken then, or moved), those rows go too.
        names = sorted({os.path.basename(t) for _, t in keys.traces})
        stored = con.execute(
            "SELECT DISTINCT run_id, trace FROM connections WHERE parse_filename(trace) IN (SELECT unnest(?)) "
            "UNION SELECT DISTINCT run_id, source FROM problems WHERE parse_filename(source) IN (SELECT unnest(?))",
            [names, names]).fetchall()
        doomed = set(keys.traces)
        for run_id, trace in stored:
            if trace is not None and any(_same_file(trace, t) for _, t in keys.traces):
                doomed.add((run_id, trace))
        moved = {r for r, _ in doomed} - {r for r, _ in keys.traces}
        pairs = pl.DataFrame(sorted(doomed), schema={"run_id": pl.Utf8, "trace": pl.Utf8}, orient="row")
        con.register("_traces", Arrow(pairs))
        # a one-way delay rests on two traces: either one re-analysed takes its rows
        for t, col in [*((t, "trace") for t in TRACE_TABLES), ("owd_samples", "recv_trace"), ("problems", "source")]:
            con.execute(f'DELETE FROM "{t}" AS x WHERE EXISTS '
                        f'(SELECT 1 FROM _traces k WHERE k.run_id = x.run_id AND k.trace = x."{col}")')
        con.unregister("_traces")
        for r in sorted(moved):  # a run id left with no trace and no problem was only that file's
            left = con.execute("SELECT (SELECT count(*) FROM connections WHERE run_id = ?) + "
                               "(SELECT count(*) FROM problems WHERE run_id = ?)", [r, r]).fetchone()[0]
            if not left:
                for t in schema.TABLES:
                    con.execute(f'DELETE FROM "{t}" WHERE run_id = ?', [r])


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _identity(real: Path) -> tuple | None:
    """What tells one version of the database file from another (None: no file)."""
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, Path(f"{real}.wal").exists()


def _open_copy(real: Path, tmp: Path) -> duckdb.DuckDBPyConnection:
    """``tmp`` as a copy of ``real`` (or new), open, with every table, view and macro of
    this version."""
    duckdb = _duckdb()
    template, from_template = None, False
    if real.exists():
        if Path(f"{real}.wal").exists():
            # committed rows still in DuckDB's log (a writer of its own): fold them in first
            con = duckdb.connect(str(real))
            con.execute("CHECKPOINT")
            con.close()
        shutil.copy2(real, tmp)
    else:
        template = _empty_store()
        from_template = template is not None and template.exists() and _copy_of_template(template, tmp)
    con = duckdb.connect(str(tmp))
    try:
        ensure_schema(con)
        if not from_template:
            derived.install(con)  # the run-level views a `duckdb lab.duckdb` user selects from
        if template is not None and not from_template:
            _keep_empty_store(con, tmp, template)
    except BaseException:
        con.close()
        raise
    return con


def _copy_of_template(template: Path, tmp: Path) -> bool:
    """Copy the kept empty store to ``tmp`` if it opens as one (a cache file damaged or cut
    short — "delete it any time" — is deleted and made again, never fails a new database)."""
    duckdb = _duckdb()
    try:
        shutil.copyfile(template, tmp)
        con = duckdb.connect(str(tmp))
        try:
            ok = derived.installed_version(con) is not None and set(schema.TABLES) <= set(columns(con))
        finally:
            con.close()
        if ok:
            return True
    except (duckdb.Error, OSError):
        pass
    for f in (tmp, tmp.with_name(tmp.name + ".wal"), template):
        f.unlink(missing_ok=True)
    return False


def _empty_store() -> Path | None:
    """Where a new database of this version (tables, views, macros; no rows) is kept:
    a copy of it costs ~1 ms, making one ~70 ms (binding the views). Named by a hash of
    everything in it, so a change of schema, views or DuckDB version makes another."""
    import hashlib
    views = derived.fingerprint(derived.definitions({t: set(c) for t, c in schema.TABLES.items()}))
    parts = [_duckdb().__version__, views, *(schema.ddl(t) for t in schema.TABLES), repr(schema.comments())]
    key = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
    try:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    except RuntimeError:  # no home to be found: none kept, each new database made from scratch
        return None
    return cache / "mptcp-lab" / f"empty-store-{key}.duckdb"


def _keep_empty_store(con: duckdb.DuckDBPyConnection, tmp: Path, template: Path) -> None:
    """Keep the new, still empty database as the next new one's start (best effort)."""
    try:
        con.execute("CHECKPOINT")
        template.parent.mkdir(parents=True, exist_ok=True)
        part = template.with_name(f".{template.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}")
        try:
            shutil.copyfile(tmp, part)
            os.replace(part, template)
        finally:
            part.unlink(missing_ok=True)
    except OSError:
        pass  # e.g. a read-only home: every new database is then made from scratch


class Prepared:
    """The copy a write will fill, built in a thread while the caller analyses: DuckDB
    imported, the database copied (or created), schema and views in place. Without the
    lock, so another writer may replace the database meanwhile: ``upsert`` then drops
    this copy and starts from the current file. Its temporary file carries our pid, so
    other writers leave it alone while we live and remove it once we are gone."""

    def __init__(self, db: str | os.PathLike, start: bool = True) -> None:
        self.real = Path(os.path.realpath(db))
        self.tmp = new_temp(self.real)
        self.base: tuple | None = None
        self.con: duckdb.DuckDBPyConnection | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._build, name="store.prepare", daemon=True)
        if start:
            self.start()

    def start(self) -> None:
        """Start building the copy (once; ``take`` starts it if nobody did)."""
        with self._lock:
            if not self._thread.is_alive() and not self._thread.ident:
                self._thread.start()

    def _build(self) -> None:
        try:
            with self._lock:
                if self._closed or not self.real.parent.is_dir():
                    return  # a folder made only if something is written
                base = _identity(self.real)
                if base is not None and base[3]:
                    return  # a DuckDB log to fold in: left to the locked path
                con = _open_copy(self.real, self.tmp)
                if _identity(self.real) != base:  # replaced while we copied
                    con.close()
                    remove_temp(self.tmp)
                    return
                self.con, self.base = con, base
        except Exception:  # noqa: BLE001 - only a head start: the locked path redoes it and reports
            remove_temp(self.tmp)

    def take(self, real: Path) -> tuple[Path, duckdb.DuckDBPyConnection] | None:
        """The copy, if it is still a copy of ``real`` as it is now; else None (discarded)."""
        self.start()
        self._thread.join()
        with self._lock:
            if self.con is not None and real == self.real and _identity(real) == self.base:
                con, self.con, self._closed = self.con, None, True
                return self.tmp, con
        self.discard()
        return None

    def discard(self) -> None:
        """Remove the copy (nothing to write, an error, or a stale base)."""
        with self._lock:
            self._closed = True
            if self.con is not None:
                self.con.close()
                self.con = None
            remove_temp(self.tmp)


def prepare(db: str | os.PathLike, start: bool = True) -> Prepared:
    """The copy that ``upsert(..., prepared=)`` will fill (see ``Prepared``), built from
    now on, or from ``Prepared.start()`` on."""
    return Prepared(db, start)


def upsert(tables: dict[str, pl.DataFrame], db: str | os.PathLike, keys: Keys,
           prepared: Prepared | None = None) -> Path:
    """Replace the rows of ``keys`` in ``db`` by ``tables``' rows, keep every other row
    and table; create ``db`` (with every table) when it does not exist.

    ``db`` is checked again (it may have changed since the caller's check) and the
    write is atomic; see the module docstring. ``prepared`` (from ``prepare(db)``): the
    copy to use if the database has not changed since it was made.
    """
    try:
        real = check_db_target(db)
        try:
            real = _upsert_locked(real, db, tables, keys, prepared)
        except OSError as e:  # a full or read-only file system, a folder made read-only meanwhile...
            raise StoreError(f"{db}: cannot write ({(e.strerror or str(e)).lower()}); nothing written, the "
                             "database is as it was") from None
        except _duckdb().Error as e:
            if not any(w in str(e) for w in _FS_FAULTS):
                raise
            raise StoreError(f"{db}: cannot write ({str(e).strip().splitlines()[0][:200]}); nothing written, the "
                             "database is as it was") from None
    finally:
        if prepared:
            prepared.discard()
    return real


# what DuckDB says when the file system, not the data, stops a write
_FS_FAULTS = (*FS_FAULTS, "Could not write file", "Could not open file")


def _upsert_locked(real: Path, db: str | os.PathLike, tables: dict[str, pl.DataFrame], keys: Keys,
                   prepared: Prepared | None) -> Path:
    """``upsert``'s write, under the writer lock, through a temporary copy."""
    real.parent.mkdir(parents=True, exist_ok=True)
    with writer_lock(real):
        clean_stale_temps(real)
        real = check_db_target(db)  # another writer may have made it meanwhile
        ready = prepared.take(real) if prepared else None
        tmp, con = ready if ready else (new_temp(real), None)
        new = not real.exists()  # a new database has no rows to replace
        try:
            if con is None:
                con = _open_copy(real, tmp)
            try:
                # No transaction: a failed write leaves only the temporary file, removed below.
                if not new:
                    tables, keys = keep_loose_pcaps_apart(con, tables, keys)
                    tables, keys = keep_runs_apart(con, tables, keys)
                    _delete(con, keys)
                insert(con, tables)
                con.execute("CHECKPOINT")
            finally:
                con.close()
            _fsync(tmp)
            stop_if_interrupted()  # a Ctrl-C a native call turned into an error: the file stays as it was
            os.replace(tmp, real)
            _fsync(real.parent)
        except BaseException:
            remove_temp(tmp)
            raise
    return real


def write_duckdb(tables: dict[str, pl.DataFrame], db: str | os.PathLike) -> Path:
    """Upsert whole runs: every run that has a row in ``tables`` is replaced."""
    return upsert(tables, db, Keys(runs=run_ids(tables)))


def run_ids(tables: dict[str, pl.DataFrame]) -> set[str]:
    out: set[str] = set()
    for df in tables.values():
        if "run_id" in df.columns and df.height:
            out |= {r for r in df["run_id"].unique().to_list() if r is not None}
    return out


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def load_table_dirs(dirs: list[str | os.PathLike], db: str | os.PathLike, say=_stderr) -> Path | None:
    """Per-run Parquet folders into the store: each run found in them replaces its
    own rows; the runs already in ``db`` stay. Without any run to add, ``db`` is left
    as it is (untouched, or not created) and None returned: nothing usable was given."""
    check_db_target(db)
    parts: list[tuple[str, dict[str, pl.DataFrame]]] = []
    for d in dirs:
        try:
            parts.append((str(d), read_tables(d)))
        except StoreError as e:  # one bad folder never keeps the others out
            say(f"{e}; folder skipped")
    # a run in several folders (a copy, a re-made folder) is loaded once: from the last one
    owner: dict[str, int] = {}
    for i, (_, t) in enumerate(parts):
        for r in run_ids(t):
            if r in owner and owner[r] != i:
                say(f"run {r!r} is in {parts[owner[r]][0]} and {parts[i][0]}; loaded from {parts[i][0]}")
            owner[r] = i
    merged = {n: pl.concat([t[n].filter(pl.col("run_id").is_null()
                                         | pl.col("run_id").replace_strict(owner, default=-1).eq(i))
                            if "run_id" in t[n].columns else t[n] for i, (_, t) in enumerate(parts)])
              if parts else schema.empty(n) for n in schema.TABLES}
    keys = Keys(runs=run_ids(merged))
    if not keys:
        return None
    return upsert(merged, db, keys)
