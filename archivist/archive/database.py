"""The archive's SQLite connection, and the few kinds of write the build layer makes.

SQLite comes from ``pysqlite3`` where it is installed (a newer SQLite that can load
extensions, the one Datasette and sqlite-utils pick too), else from the standard
library. Writes are plain SQL: importing sqlite-utils takes a quarter of a second
(numpy and its plugins come with it), longer than indexing a few hundred notes,
so the index path leaves it to the migrations that create or upgrade an archive.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archivist.archive import packed
from archivist.errors import ArchivistError
from archivist.workspace import SIDECARS

if TYPE_CHECKING:
    import sqlite3
else:
    try:
        import pysqlite3.dbapi2 as sqlite3
    except ImportError:  # pragma: no cover - the standard module, where pysqlite3 is not installed
        import sqlite3

__all__ = ["Database", "connect_read_only", "read_only_uri", "sqlite3"]

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
FTS_HASH_BYTES = 16 * 1024 * 1024  # what FTS5 holds of a run's terms before it writes a segment (see deferred_fts)


def _name(name: str) -> str:
    """A table or column name of this package's own schema, quoted (never a caller's text)."""
    if not _NAME_RE.fullmatch(name):
        raise ValueError(f"not a plain SQL name: {name!r}")
    return f'"{name}"'


def _value(value: Any) -> Any:
    """A value as sqlite-utils stores it: lists and mappings as JSON, dates as ISO text."""
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, default=repr)
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return value


def _by_columns(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, ...], list[Mapping[str, Any]]]:
    """The rows grouped by the columns they name, so that a column a row leaves out keeps its default."""
    groups: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row), []).append(row)
    return groups


def read_only_uri(path: Path | str) -> str:
    """The URI that opens the database at ``path`` read-only (a '#', '?' or '%' in its name stays its name's)."""
    return f"{Path(path).resolve().as_uri()}?mode=ro"


def connect_read_only(path: Path | str, **options: Any) -> sqlite3.Connection:
    """A connection that reads the database at ``path`` and writes nothing, its schema read once.

    SQLite's read-only connection to an archive (in WAL mode) still writes beside it: the log's
    shared memory, its ``-shm`` file of 32 KB. Where that cannot be written (a full disk, a
    read-only one), the ``-shm`` there is only read and the log's index is kept in this process
    (``readonly_shm``): the archive is read whole, what its log holds with it, and a writer that
    comes later is seen. Where there is no ``-shm`` and the log holds nothing, the file alone is
    the whole archive and is read as it is (``immutable``). Any other failure (not a database,
    damaged, not readable at all) is SQLite's error, raised.
    """
    try:
        return _schema_read(sqlite3.connect(read_only_uri(path), uri=True, **options))
    except sqlite3.Error as error:
        if primary_code(error) not in (*UNWRITABLE, sqlite3.SQLITE_CANTOPEN):
            raise
        failed = error
    resolved = Path(path).resolve()
    others = [f"{read_only_uri(path)}&readonly_shm=1"]
    wal = resolved.with_name(resolved.name + "-wal")
    if not wal.exists() or wal.stat().st_size == 0:
        others.append(f"{resolved.as_uri()}?immutable=1")
    for uri in others:
        try:
            return _schema_read(sqlite3.connect(uri, uri=True, **options))
        except sqlite3.Error:
            continue
    raise failed


def _schema_read(conn: sqlite3.Connection) -> sqlite3.Connection:
    """``conn``, once it has read the schema (where SQLite opens the log and its shared memory),
    with ``archivist_text`` registered (``archive.packed``)."""
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        conn.close()
        raise
    packed.register(conn)
    return conn


# What stops SQLite from writing a database, not of its making: the disk is full, failing, or read-only.
UNWRITABLE = (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY)
# Free space under which a disk that fails a write is taken to be full: SQLite tells a full disk
# as SQLITE_FULL where a write into the database fails, but as an I/O error (or "unable to open")
# where its shared memory or a new log cannot be made.
FULL_BELOW = 1 << 20


def primary_code(error: BaseException) -> int:
    """SQLite's primary result code for ``error`` (of its extended one); 0 where it has none."""
    return (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF


def unwritable(error: BaseException) -> bool:
    """Whether SQLite failed for want of a disk to write on: full, failing, or read-only."""
    return primary_code(error) in UNWRITABLE


def free_bytes(path: Path | str) -> int | None:
    """The space free to this user on the disk that holds ``path`` (a file or folder); None where it cannot be told."""
    folder = Path(path)
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    try:
        found = os.statvfs(folder)
    except OSError:
        return None
    return found.f_bavail * found.f_frsize


def disk_full(path: Path | str, error: BaseException) -> bool:
    """Whether SQLite's ``error`` on the database at ``path`` is its disk being full."""
    code = primary_code(error)
    if code == sqlite3.SQLITE_FULL:
        return True
    free = free_bytes(path)
    return code in (*UNWRITABLE, sqlite3.SQLITE_CANTOPEN) and free is not None and free < FULL_BELOW


def size_text(size: int) -> str:
    """A size in bytes for a sentence: ``0 bytes``, ``584 KB``, ``9.5 MB``, ``12 GB``."""
    if size < 1024:
        return f"{size} bytes"
    for power, unit in ((3, "GB"), (2, "MB"), (1, "KB")):
        if size >= 1024**power:
            value = size / 1024**power
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    raise AssertionError(size)  # pragma: no cover - every size of 1024 or more has a unit


def mount_point(path: Path | str) -> Path:
    """The folder where the disk that holds ``path`` is mounted."""
    folder = Path(os.path.abspath(path))
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    while not os.path.ismount(folder):
        folder = folder.parent
    return folder


def archive_size(path: Path | str) -> int:
    """The bytes an archive takes: its file, and SQLite's log and shared memory beside it."""
    path = Path(path)
    total = 0
    for suffix in SIDECARS:
        try:
            total += path.with_name(path.name + suffix).stat().st_size
        except OSError:
            pass
    return total


def not_written(path: Path | str, error: BaseException, why: str, hint: str, done: str = "written") -> ArchivistError:
    """ARCHIVE_NOT_WRITTEN for the archive at ``path``, which SQLite could not write (``error``).

    A full disk is told as one: how much the disk that holds it has free, how much the archive
    takes, and that space is to be freed there (the archive is intact: nothing says to move it).
    ``why`` says what stopped and what the archive keeps; ``hint`` what to run once space is free
    (a sentence that follows "then"); ``done``, what could not be done ("read", where reading
    needed a write beside it).
    """
    if disk_full(path, error):
        free = free_bytes(path) or 0
        return ArchivistError(
            "ARCHIVE_NOT_WRITTEN",
            f"The archive at {path} could not be {done}: the disk is full",
            f"{why} The disk that holds it (mounted at {mount_point(path)}) has {size_text(free)} free; "
            f"the archive takes {size_text(archive_size(path))}.",
            f"Free some space on that disk (files you no longer need there; keep the archive), then {hint}",
        )
    return ArchivistError(
        "ARCHIVE_NOT_WRITTEN",
        f"The archive at {path} could not be {done}: {error}",
        why,
        f"Check the disk that holds it (is it read-only, or failing?), then {hint}",
    )


class Database:
    """A connection to an archive, with the writes the build layer needs.

    ``execute``, ``executescript``, ``atomic`` and ``close`` behave as sqlite-utils'
    ``Database`` ones do, so that the semantic layer can wrap ``conn`` in one.
    """

    def __init__(self, path_or_conn: Path | str | sqlite3.Connection) -> None:
        if isinstance(path_or_conn, (str, Path)):
            self.conn = sqlite3.connect(str(path_or_conn))
        else:
            self.conn = path_or_conn
        # A replaced row fires its delete triggers too (the FTS tables follow them).
        self.conn.execute("PRAGMA recursive_triggers = on")
        packed.register(self.conn)

    def execute(self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, parameters)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any] | Mapping[str, Any]]) -> sqlite3.Cursor:
        return self.conn.executemany(sql, rows)

    def executescript(self, sql: str) -> sqlite3.Cursor:
        return self.conn.executescript(sql)

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def atomic(self) -> Iterator[Database]:
        """A transaction, or inside one a savepoint: all of the block is written, or none of it."""
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")
            try:
                yield self
            except BaseException:
                self.conn.rollback()
                raise
            try:
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.rollback()
                raise
            return
        self.conn.execute("SAVEPOINT archivist_atomic")
        try:
            yield self
        except BaseException:
            if self.conn.in_transaction:  # a RAISE(ROLLBACK) may have ended the whole transaction
                self.conn.execute("ROLLBACK TO archivist_atomic")
                self.conn.execute("RELEASE archivist_atomic")
            raise
        self.conn.execute("RELEASE archivist_atomic")

    @contextmanager
    def deferred_fts(self) -> Iterator[None]:
        """New documents stored in the block enter the full-text index together at its end.

        Inside a transaction (``atomic``): should the block fail, the transaction's rollback
        takes back the pending list with the documents.
        """
        if not self.conn.in_transaction:
            raise RuntimeError("deferred_fts needs a transaction")
        self.conn.execute("INSERT OR IGNORE INTO fts_deferred (id) VALUES (1)")
        # the terms of the documents added are held in memory up to 16 MB (FTS5's default: 1 MB)
        # before they are written out as a segment: fewer segments to write and merge. The 42 MB
        # of ../shared/eval/markdown enter the index in 0.85-0.9 s, where they took 0.9-1.2 s.
        self.conn.execute("INSERT INTO documents_fts (documents_fts, rank) VALUES ('hashsize', ?)", [FTS_HASH_BYTES])
        yield
        self.conn.execute("DELETE FROM fts_deferred")
        self.index_pending()

    def index_pending(self) -> None:
        """Add the documents stored since in ``deferred_fts`` to the full-text index, in one statement."""
        self.conn.execute(
            "INSERT INTO documents_fts (rowid, title, body, filter_tokens) "
            "SELECT d.id, d.title, d.body, d.filter_tokens FROM fts_pending p JOIN documents d ON d.id = p.id"
        )
        self.conn.execute("DELETE FROM fts_pending")

    def exists(self, table: str) -> bool:
        found = self.conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [table])
        return found.fetchone() is not None

    def count(self, table: str) -> int:
        return int(self.conn.execute(f"SELECT count(*) FROM {_name(table)}").fetchone()[0])

    def insert(self, table: str, rows: Iterable[Mapping[str, Any]], *, replace: bool = False) -> int | None:
        """Insert the rows (``replace``: a row with the same key takes the old one's place); the last rowid."""
        verb = "INSERT OR REPLACE" if replace else "INSERT"
        groups = _by_columns(rows)
        for columns, group in groups.items():
            names = ", ".join(_name(column) for column in columns)
            marks = ", ".join("?" * len(columns))
            self.conn.executemany(
                f"{verb} INTO {_name(table)} ({names}) VALUES ({marks})",
                ([_value(row[column]) for column in columns] for row in group),
            )
        return self.conn.execute("SELECT last_insert_rowid()").fetchone()[0] if groups else None

    def upsert(self, table: str, rows: Iterable[Mapping[str, Any]], pk: str) -> None:
        """Insert each row, or where its ``pk`` is there already, update the columns it names."""
        for columns, group in _by_columns(rows).items():
            names = ", ".join(_name(column) for column in columns)
            marks = ", ".join("?" * len(columns))
            updates = ", ".join(f"{_name(column)} = excluded.{_name(column)}" for column in columns if column != pk)
            action = f"DO UPDATE SET {updates}" if updates else "DO NOTHING"
            self.conn.executemany(
                f"INSERT INTO {_name(table)} ({names}) VALUES ({marks}) ON CONFLICT ({_name(pk)}) {action}",
                ([_value(row[column]) for column in columns] for row in group),
            )

    def update(self, table: str, pk_value: Any, values: Mapping[str, Any], pk: str = "id") -> None:
        if not values:
            return
        assignments = ", ".join(f"{_name(column)} = ?" for column in values)
        self.conn.execute(
            f"UPDATE {_name(table)} SET {assignments} WHERE {_name(pk)} = ?",
            [*(_value(value) for value in values.values()), pk_value],
        )
