"""An agent's SQLite database, opened read-only and never written, even while the agent has it open.

A database in WAL mode whose ``-wal`` and ``-shm`` files are not both there (no connection
has it open) is opened ``immutable``, because a read-only connection would create them and
leave them behind; otherwise ``mode=ro``, which reads what the agent has committed. Each
query is read to its end at once, so no lock is held between two of them, and a writer's
lock is waited for ``LOCK_TIMEOUT`` seconds at most: then ``Unavailable`` (what the archive
holds of the source stays, and it is read again on the next run).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from archivist.agents import Unavailable

SQLITE_HEADER = b"SQLite format 3\x00"
WAL_VERSION = 2  # header bytes 18 and 19 of a database in WAL mode
LOCK_TIMEOUT = 2.0  # seconds to wait for a writer's lock before the database is told as locked


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` starts as a SQLite database does (False where it cannot be read)."""
    try:
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def tables_of(path: Path) -> set[str] | str:
    """The tables of the database at ``path``, or why it is not one that can be read (a sentence
    to end with what was expected); Unavailable while another program holds it locked."""
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


def connect(database: Path) -> sqlite3.Connection:
    """A read-only connection that writes nothing, not even a ``-wal`` or ``-shm`` file."""
    with database.open("rb") as handle:
        header = handle.read(100)
    options = "mode=ro"
    if len(header) >= 20 and WAL_VERSION in (header[18], header[19]):
        wal = database.with_name(database.name + "-wal")
        shm = database.with_name(database.name + "-shm")
        if not (wal.exists() and shm.exists()):
            # No connection has it open (each keeps both files), so nothing is half-written;
            # a read-only connection would create the two files and leave them behind.
            options = "mode=ro&immutable=1"
    uri = f"{database.absolute().as_uri()}?{options}"
    connection = sqlite3.connect(uri, uri=True, timeout=LOCK_TIMEOUT, isolation_level=None)
    connection.execute("PRAGMA query_only = 1")
    # SQLite keeps whatever bytes a program stored as text; one value that is not UTF-8 would
    # otherwise fail the whole query it is in.
    connection.text_factory = _text
    return connection


def tables(connection: sqlite3.Connection) -> set[str]:
    """The names of a database's tables."""
    return {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}


def locked(error: sqlite3.Error) -> bool:
    """Whether SQLite gave up waiting for another connection's lock (SQLITE_BUSY, SQLITE_LOCKED)."""
    message = str(error).lower()
    return "locked" in message or "busy" in message


def unavailable(database: Path, error: sqlite3.Error) -> Unavailable:
    return Unavailable(
        f"{database} is locked by another program ({error}; waited {LOCK_TIMEOUT:g} s): "
        "not read this time, what is stored of it is kept, and it is read again on the next run"
    )


def _text(value: bytes) -> str:
    """A text value of the database, its bytes that are not UTF-8 replaced."""
    return value.decode("utf-8", errors="replace")
