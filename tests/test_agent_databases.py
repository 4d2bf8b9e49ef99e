"""An agent's SQLite database, opened without ever writing beside it: WAL logs, hot journals, damage, locks,
pipes, runaway queries; the private copies of a run, removed at its end or by the next run."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

import pytest

from archivist.agents import Unavailable, Unread, databases


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


def test_the_run_s_folder_of_copies_is_made_again_where_it_was_removed(tmp_path):
    path, writer = wal_database(tmp_path)
    with closing(databases.connect(path)) as connection:
        run = Path(connection.copy or "").parent
    assert run.name.startswith(f"archivist-copies-{os.getpid()}-") and run.is_dir() and not any(run.iterdir())
    shutil.rmtree(run)  # (a cleaner of the temporary folder)
    with closing(databases.connect(path)) as connection:
        assert connection.execute("SELECT value FROM items").fetchall() == [("in the log",)]
        assert Path(connection.copy or "").parent.is_dir()
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


# --- a rollback journal left by a write that did not finish, and what else lies beside ----------

HOT_JOURNAL = """
import os, sqlite3, sys
writer = sqlite3.connect(sys.argv[1], isolation_level=None)
writer.execute("PRAGMA journal_mode = DELETE")
writer.execute("CREATE TABLE items (key TEXT, value BLOB)")
writer.execute("INSERT INTO items VALUES ('a', 'committed')")
writer.execute("PRAGMA cache_size = 2")  # (the write's pages go to the file before it commits)
writer.execute("BEGIN")
for number in range(300):
    writer.execute("INSERT INTO items VALUES (?, randomblob(2000))", [f"k{number}"])
writer.execute("UPDATE items SET value = 'not committed' WHERE key = 'a'")
os._exit(0)  # (stopped in the middle of its write)
"""


def hot_journal(folder: Path) -> Path:
    """A database in rollback mode whose writer was stopped in the middle of a write: its journal is hot."""
    path = folder / "state.vscdb"
    subprocess.run([sys.executable, "-c", HOT_JOURNAL, str(path)], check=True)
    assert path.with_name("state.vscdb-journal").stat().st_size > 0
    return path


def test_a_hot_journal_is_undone_in_a_private_copy_and_told(tmp_path):
    path = hot_journal(tmp_path)
    before = files_of(tmp_path)
    problems: list[str] = []
    with closing(databases.connect(path, problems, shown="User/state.vscdb")) as connection:
        assert connection.copy and not Path(connection.copy).is_relative_to(tmp_path)
        assert connection.execute("SELECT key, value FROM items").fetchall() == [("a", "committed")]
    assert len(problems) == 1 and problems[0].startswith("User/state.vscdb: a write that did not finish")
    assert "state.vscdb-journal" in problems[0] and "nothing to do" in problems[0]
    with closing(databases.connect(path, problems, shown="User/state.vscdb")):
        pass
    assert len(problems) == 1  # told once, however often it is opened
    assert databases.tables_of(path) == {"items"}
    assert files_of(tmp_path) == before  # the journal is still there, for the agent to undo


def test_a_file_beside_that_is_a_pipe_or_a_link_is_never_opened(tmp_path):
    for suffix in ("-journal", "-wal"):
        folder = tmp_path / suffix
        folder.mkdir()
        path = folder / "state.db"
        with closing(sqlite3.connect(path)) as db:
            db.execute("CREATE TABLE items (key)")
        os.mkfifo(folder / f"state.db{suffix}")
        with pytest.raises(sqlite3.DatabaseError, match=rf"state.db{suffix} beside it is a named pipe \(FIFO\)"):
            databases.connect(path)  # (SQLite would open the pipe, and wait on it forever)
        os.unlink(folder / f"state.db{suffix}")
        os.symlink("/etc/passwd", folder / f"state.db{suffix}")
        with pytest.raises(sqlite3.DatabaseError, match="is a symbolic link"):
            databases.connect(path)
        assert sorted(p.name for p in folder.iterdir()) == ["state.db", f"state.db{suffix}"]


def test_a_log_beside_a_database_in_rollback_mode_is_read_from_a_copy(tmp_path):
    path = tmp_path / "state.db"
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE items (key)")
        db.execute("INSERT INTO items VALUES (1)")
        db.commit()
    path.with_name("state.db-wal").write_bytes(b"x" * 5000)  # (SQLite would read it as a log, and mark a -shm)
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    empty.with_name("empty.db-wal").write_bytes(b"x" * 5000)  # (and delete this one, beside an empty database)
    before = files_of(tmp_path)
    with closing(databases.connect(path)) as connection:
        assert connection.copy and connection.execute("SELECT key FROM items").fetchall() == [(1,)]
    with closing(databases.connect(empty)) as connection:
        assert connection.copy and databases.tables(connection) == set()
    assert files_of(tmp_path) == before


def test_a_database_that_is_no_regular_file_is_told_and_never_opened(tmp_path):
    os.mkfifo(tmp_path / "state.vscdb")
    (tmp_path / "folder.db").mkdir()
    told = databases.irregular(tmp_path / "state.vscdb", "globalStorage/state.vscdb")
    assert isinstance(told, Unread)
    assert told.startswith("globalStorage/state.vscdb is a named pipe (FIFO), not a database file: not read")
    assert "Put the agent's database back" in told
    assert (databases.irregular(tmp_path / "folder.db") or "").startswith("folder.db is a folder")
    assert databases.irregular(tmp_path / "missing.db") is None
    assert databases.irregular(tmp_path / "state.vscdb-journal") is None


# --- the private copies of a run: one folder, removed at its end, or by the next run if it was killed --

TAKES_A_COPY = """
import sys, time
from pathlib import Path
from archivist.agents import databases
connection = databases.connect(Path(sys.argv[1]))
print(connection.copy, flush=True)
if sys.argv[2] == "wait":
    time.sleep(120)
"""


def run_taking_a_copy(path: Path, temporary: Path, then: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", TAKES_A_COPY, str(path), then],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(temporary)},
    )


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="no SIGKILL here")
def test_a_killed_run_s_copies_are_removed_by_the_next_run_and_a_run_that_ends_leaves_none(tmp_path):
    path, writer = wal_database(tmp_path)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    killed = run_taking_a_copy(path, temporary, "wait")
    assert killed.stdout is not None
    copy = Path(killed.stdout.readline().strip())
    run = copy.parent
    assert run.parent == temporary and run.name.startswith(f"archivist-copies-{killed.pid}-")
    assert (copy / "state.db").is_file() and stat.S_IMODE(run.stat().st_mode) == 0o700
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert (copy / "state.db").is_file()  # what a killed run leaves
    theirs = temporary / "archivist-copies-1-another"  # (a live process's, of this id: kept)
    theirs.mkdir()
    (temporary / "archivist-copies-notes.txt").write_text("not a folder of copies")
    link = temporary / f"archivist-copies-{2**22 + 7}-link"  # (no process has this id: still a link)
    link.symlink_to(tmp_path / "kept", target_is_directory=True)
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "file").write_text("kept")
    ended = run_taking_a_copy(path, temporary, "end")  # it exits without closing its connection
    out, _ = ended.communicate(timeout=60)
    assert ended.returncode == 0 and Path(out.strip()).parent.parent == temporary
    writer.close()
    assert sorted(p.name for p in temporary.iterdir()) == [
        "archivist-copies-1-another",
        f"archivist-copies-{2**22 + 7}-link",
        "archivist-copies-notes.txt",
    ]
    assert (tmp_path / "kept" / "file").read_text() == "kept"


def test_a_folder_a_live_run_holds_is_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    held = tmp_path / f"archivist-copies-{2**22 + 9}-held"  # (its process is of another system: it holds the lock)
    held.mkdir()
    handle = os.open(held, os.O_RDONLY)
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    left = tmp_path / f"archivist-copies-{2**22 + 9}-left"
    left.mkdir()
    (left / "copy.db").write_bytes(b"x")
    earlier = tmp_path / "archivist-db-abc"
    earlier.mkdir()
    recent = tmp_path / "archivist-db-def"
    recent.mkdir()
    os.utime(earlier, (time.time() - 2 * databases.EARLIER_AGE,) * 2)
    try:
        assert sorted(databases.remove_left_copies()) == [left, earlier]
        assert held.is_dir() and recent.is_dir() and not left.exists() and not earlier.exists()
    finally:
        os.close(handle)


def test_an_index_of_logs_that_are_no_database_removes_what_a_killed_run_left(tmp_path, monkeypatch):
    from archivist.archive.indexer import index_workspace

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    left = tmp_path / "tmp" / f"archivist-copies-{2**22 + 11}-left"  # (no process has this id)
    left.mkdir(parents=True)
    (left / "copy.db").write_bytes(b"an agent's database, unmasked")
    workspace = tmp_path / "workspace"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes" / "a.md").write_text("# A note\n")
    sample = Path(__file__).parent.parent / "sample-agent-logs" / "claude-code" / "projects"
    index_workspace(workspace, log_sources=[("claude-code", sample)])
    assert not left.exists()
