"""An agent's SQLite database, opened read-only and never written, even while the agent has it open.

How it is opened depends on what lies beside it:

- no ``-wal`` file with frames in it (a database in rollback mode, or one in WAL mode that no
  program has open, or whose log is checkpointed): the database itself, ``immutable`` when it
  is in WAL mode (a read-only connection would otherwise create ``-wal`` and ``-shm`` files
  and leave them behind) and ``mode=ro`` when it is not, waiting ``LOCK_TIMEOUT`` seconds at
  most for a writer's lock (then ``Unavailable``: what the archive holds of the source stays,
  and it is read again on the next run);
- a ``-wal`` file with frames (the agent has it open, or was stopped before it checkpointed):
  a copy of the two, taken into a private temporary folder and opened there, because even a
  read-only reader of a WAL database marks its ``-shm`` file, and an ``immutable`` one would
  miss what the ``-wal`` holds. The copy is taken again while either file changes under it
  (``COPY_TRIES`` times, then ``Unavailable``), and removed when the connection closes.

A ``-wal`` that is a link, or not a regular file, is never read or copied. Each query is read
to its end at once (no lock is held between two of them) and may run ``QUERY_SECONDS`` at
most. An error SQLite cannot word in UTF-8 (a damaged schema's name) is a ``sqlite3.DatabaseError``
like any other.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from archivist.agents import MAX_LINE_BYTES, Unavailable, Unread

SQLITE_HEADER = b"SQLite format 3\x00"
WAL_VERSION = 2  # header bytes 18 and 19 of a database in WAL mode
WAL_HEADER_BYTES = 32  # a -wal file no longer than its header holds no frame
LOCK_TIMEOUT = 2.0  # seconds to wait for a writer's lock before the database is told as locked
QUERY_SECONDS = 300.0  # the longest one query may run (a view over a recursive query never ends)
COPY_TRIES = 3  # copies of a database and its -wal taken while they change, before it is told as busy
BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
MAX_VALUE_BYTES = MAX_LINE_BYTES  # the largest value a reader takes whole (a message's JSON, say)
MAX_ID_BYTES = 4096  # an id longer than this is none an agent wrote


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` is a regular file that starts as a SQLite database does (False where it
    cannot be read; a pipe is never opened)."""
    if not _regular(path):
        return False
    try:
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def tables_of(path: Path) -> set[str] | str:
    """The tables of the database at ``path``, or why it is not one that can be read (a sentence
    to end with what was expected); Unavailable while another program holds it locked."""
    if not _regular(path):
        return f"{path} is not a regular file"
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as error:
        return f"{path} cannot be read ({error.strerror or error})"
    if header != SQLITE_HEADER:
        return f"{path} is not a SQLite database"
    try:
        connection = connect(path)
        try:
            return tables(connection)
        finally:
            connection.close()
    except sqlite3.Error as error:
        if locked(error):
            raise unavailable(path, error) from None
        return f"{path} cannot be opened read-only as a SQLite database ({error})"


class _Connection(sqlite3.Connection):
    """A connection whose queries have a time budget and whose errors are all sqlite3 errors;
    closing it removes the private copy it was opened on, if any."""

    copy: str | None = None
    deadline: float = 0.0

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        self.deadline = time.monotonic() + QUERY_SECONDS
        try:
            return super().execute(sql, parameters)
        except UnicodeDecodeError as error:  # SQLite's message names bytes that are not UTF-8
            raise sqlite3.DatabaseError(f"damaged database ({error.reason})") from None

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self.copy is not None:
                shutil.rmtree(self.copy, ignore_errors=True)
                self.copy = None


def connect(database: Path) -> sqlite3.Connection:
    """A read-only connection that writes nothing beside ``database`` (see the module)."""
    if not _regular(database):
        raise sqlite3.DatabaseError(f"{database.name} is not a regular file")
    with database.open("rb") as handle:
        header = handle.read(100)
    wal = database.with_name(database.name + "-wal")
    in_wal_mode = len(header) >= 20 and WAL_VERSION in (header[18], header[19])
    copy = _copy(database, wal) if in_wal_mode and _has_frames(wal) else None
    if copy is not None:
        uri = f"{(Path(copy) / database.name).as_uri()}?mode=rw"
    else:
        uri = f"{database.absolute().as_uri()}?{'mode=ro&immutable=1' if in_wal_mode else 'mode=ro'}"
    try:
        connection = sqlite3.connect(
            uri, uri=True, timeout=LOCK_TIMEOUT, isolation_level=None, factory=_Connection, check_same_thread=True
        )
    except BaseException:
        if copy is not None:
            shutil.rmtree(copy, ignore_errors=True)
        raise
    assert isinstance(connection, _Connection)
    connection.copy = copy
    connection.execute("PRAGMA query_only = 1")
    connection.set_progress_handler(lambda: int(time.monotonic() > connection.deadline), 10_000)
    # SQLite keeps whatever bytes a program stored as text; one value that is not UTF-8 would
    # otherwise fail the whole query it is in.
    connection.text_factory = _text
    return connection


@contextmanager
def reading(database: Path, problems: list[str], shown: str | None = None) -> Iterator[None]:
    """The reading of ``database``: a lock held by another program is Unavailable; a damaged
    database or a file that cannot be read is told in ``problems`` as Unread (what the archive
    holds of it stays), as ``shown`` (its name) names it."""
    name = shown or database.name
    try:
        yield
    except sqlite3.Error as error:
        if locked(error):
            raise unavailable(database, error) from None
        problems.append(Unread(f"{name} cannot be read ({error})"))
    except OSError as error:
        problems.append(Unread(f"{name} cannot be read ({error.strerror or error})"))


def byte_size(column: str) -> str:
    """SQL for a column's size in bytes: a blob's is known without reading it, a text's is
    measured once (SQLite before 3.43 has no ``octet_length``)."""
    return f'CASE typeof("{column}") WHEN \'blob\' THEN length("{column}") ELSE length(CAST("{column}" AS BLOB)) END'


def bounded(column: str, limit: int = MAX_VALUE_BYTES) -> str:
    """SQL for a column's value where it has at most ``limit`` bytes, else NULL: a value too large
    to hold is never handed over (a reader tells it as skipped)."""
    return f'CASE WHEN {byte_size(column)} <= {limit} THEN "{column}" END'


def rowids_by(connection: sqlite3.Connection, table: str, key: str, order: str) -> dict[Any, list[int]]:
    """The rowids of ``table`` grouped by ``key`` (a session's id, within ``MAX_ID_BYTES``), in
    ``order``, read in one pass: nothing says the table has an index on ``key``, and a query for
    each value would then read the whole table each time."""
    groups: dict[Any, list[int]] = {}
    for value, rowid in connection.execute(
        f'SELECT {bounded(key, MAX_ID_BYTES)}, rowid FROM "{table}" ORDER BY {order}'
    ):
        if value is not None:
            groups.setdefault(value, []).append(rowid)
    return groups


def tables(connection: sqlite3.Connection) -> set[str]:
    """The names of a database's tables (not its views)."""
    return {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}


def locked(error: sqlite3.Error) -> bool:
    """Whether SQLite gave up waiting for another connection's lock (SQLITE_BUSY, SQLITE_LOCKED)."""
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in BUSY_CODES
    message = str(error).lower()
    return message.startswith(("database is locked", "database table is locked", "database schema is locked"))


def unavailable(database: Path, error: sqlite3.Error | str) -> Unavailable:
    return Unavailable(
        f"{database} is locked by another program ({error}; waited {LOCK_TIMEOUT:g} s): "
        "not read this time, what is stored of it is kept, and it is read again on the next run"
    )


def _copy(database: Path, wal: Path) -> str:
    """A private copy of ``database`` and its ``wal``, taken while neither changes: its folder."""
    for _ in range(COPY_TRIES):
        before = (_stamp(database), _stamp(wal))
        folder = tempfile.mkdtemp(prefix="archivist-db-")
        try:
            shutil.copyfile(database, Path(folder) / database.name)
            shutil.copyfile(wal, Path(folder) / wal.name)
        except OSError:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        if (_stamp(database), _stamp(wal)) == before:
            return folder
        shutil.rmtree(folder, ignore_errors=True)
    raise Unavailable(
        f"{database} changed while it was copied, {COPY_TRIES} times: not read this time, what is stored "
        "of it is kept, and it is read again on the next run"
    )


def _has_frames(wal: Path) -> bool:
    """Whether a ``-wal`` file is a regular file (not a link) holding frames beyond its header."""
    try:
        found = os.lstat(wal)
    except OSError:
        return False
    return stat.S_ISREG(found.st_mode) and found.st_size > WAL_HEADER_BYTES


def _stamp(path: Path) -> tuple[int, int]:
    found = os.stat(path)
    return found.st_size, found.st_mtime_ns


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _text(value: bytes) -> str:
    """A text value of the database, its bytes that are not UTF-8 replaced."""
    return value.decode("utf-8", errors="replace")
