"""An agent's SQLite database, opened without ever writing beside it: WAL logs, damage, locks, pipes, runaway queries."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from archivist.agents import Unavailable, databases


def files_of(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {path.name: (path.read_bytes(), path.stat().st_mtime_ns) for path in sorted(folder.iterdir())}


def wal_database(folder: Path) -> tuple[Path, sqlite3.Connection]:
    """A database in WAL mode that a program holds open, its last rows only in its -wal file."""
    path = folder / "state.db"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")  # (as a busy editor's log grows between checkpoints)
    writer.execute("CREATE TABLE items (key TEXT, value TEXT)")
    writer.execute("INSERT INTO items VALUES ('a', 'in the log')")
    assert path.with_name("state.db-wal").stat().st_size > databases.WAL_HEADER_BYTES
    return path, writer


def test_a_database_an_agent_has_open_is_read_from_a_private_copy_and_nothing_beside_it_changes(tmp_path):
    path, writer = wal_database(tmp_path)
    before = files_of(tmp_path)
    connection = databases.connect(path)
    copy = connection.copy
    assert copy and Path(copy).is_dir() and not Path(copy).is_relative_to(tmp_path)
    assert connection.execute("SELECT value FROM items").fetchall() == [("in the log",)]
    connection.close()
    assert not Path(copy).exists()  # the copy is gone with the connection
    assert files_of(tmp_path) == before  # not even the -shm, which a reader of the file itself marks
    writer.close()


def test_a_log_left_without_its_shared_memory_is_still_read(tmp_path):
    (tmp_path / "running").mkdir()
    path, writer = wal_database(tmp_path / "running")
    crashed = tmp_path / "crashed"  # what a program killed before it checkpointed leaves: no -shm
    crashed.mkdir()
    (crashed / "state.db").write_bytes(path.read_bytes())
    (crashed / "state.db-wal").write_bytes(path.with_name("state.db-wal").read_bytes())
    writer.close()
    before = files_of(crashed)
    with closing(databases.connect(crashed / "state.db")) as connection:
        rows = connection.execute("SELECT value FROM items").fetchall()
    assert rows == [("in the log",)]  # opened immutable, the log's rows would be missed
    assert files_of(crashed) == before


def test_a_log_that_is_a_link_or_a_pipe_is_never_opened(tmp_path):
    path, writer = wal_database(tmp_path)
    writer.close()
    outside = tmp_path / "outside-wal"
    outside.write_bytes(b"\0" * 4096)
    path.with_name("state.db-wal").unlink(missing_ok=True)
    path.with_name("state.db-wal").symlink_to(outside)
    with closing(databases.connect(path)) as connection:
        assert connection.copy is None and connection.execute("SELECT count(*) FROM items").fetchone() == (1,)
    pipe = tmp_path / "pipe.db"
    os.mkfifo(pipe)
    assert not databases.is_sqlite(pipe)
    assert databases.tables_of(pipe) == f"{pipe} is not a regular file"
    with pytest.raises(sqlite3.DatabaseError):
        databases.connect(pipe)


def test_a_schema_damaged_with_bytes_that_are_not_utf8_is_a_sqlite_error(tmp_path):
    path = tmp_path / "damaged.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE sessions (id TEXT)")
        db.execute("PRAGMA writable_schema = ON")
        db.execute("UPDATE sqlite_master SET sql = CAST(X'435245415445205441424c4520c6c7' AS TEXT)")
    db.close()
    found = databases.tables_of(path)
    assert isinstance(found, str) and "cannot be opened read-only" in found


def test_locked_is_told_by_sqlites_code_not_by_words_in_the_message(tmp_path):
    path = tmp_path / "held.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE busy_x (a)")
    holder.execute("BEGIN EXCLUSIVE")
    with pytest.raises(Unavailable):
        databases.tables_of(path)
    holder.execute("ROLLBACK")
    holder.close()
    damaged = sqlite3.DatabaseError("malformed database schema (busy_x) - locked table")
    assert not databases.locked(damaged)  # an error without SQLite's code, that only names the words


def test_a_query_that_would_never_end_is_stopped(tmp_path, monkeypatch):
    path = tmp_path / "view.db"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE VIEW messages AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n"
        )
    db.close()
    monkeypatch.setattr(databases, "QUERY_SECONDS", 0.5)
    with closing(databases.connect(path)) as connection, pytest.raises(sqlite3.OperationalError, match="interrupted"):
        connection.execute("SELECT count(*) FROM messages").fetchall()
    assert databases.tables(sqlite3.connect(path)) == set()  # a view is no table
