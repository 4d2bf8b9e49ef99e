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
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3
else:
    try:
        import pysqlite3.dbapi2 as sqlite3
    except ImportError:  # pragma: no cover - the standard module, where pysqlite3 is not installed
        import sqlite3

__all__ = ["Database", "read_only_uri", "sqlite3"]

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
