"""When a watch starts, the session files changed last are read on ahead, storing nothing: the
first append to one is then read on without looking at its earlier lines again."""

from __future__ import annotations

import sqlite_utils
from conftest import write_files
from test_agentlog_appends import FIRST, LATER, read_whole, reading_whole_fails, stored, write
from test_agentlogs_sources import SESSION

from archivist.agents.claude_code import lines
from archivist.archive import sessions
from archivist.archive.database import Database
from archivist.archive.indexer import index_workspace
from archivist.archive.watch import look_ahead
from archivist.workspace import archive_path, secret_key


def indexed(tmp_path, sessions_written=1):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    folder = tmp_path / "projects" / "-home-ana-proj"
    folder.mkdir(parents=True)
    paths = []
    for n in range(sessions_written):
        path = folder / (f"{SESSION}.jsonl" if n == 0 else f"{SESSION[:-1]}{n}.jsonl")
        write(path, [text.replace(SESSION, path.stem) for text in FIRST])
        paths.append(path)
    index_workspace(workspace, log_sources=[("claude-code", tmp_path / "projects")])
    return workspace, paths


def looks_again(monkeypatch):
    """The ranges of earlier lines looked at from now on."""
    looked, look = [], lines._look
    monkeypatch.setattr(lines, "_look", lambda path, start, end, *rest: looked.append(end - start) or look(path, start, end, *rest))  # fmt: skip
    return looked


def test_the_first_append_after_reading_ahead_looks_at_no_earlier_line(tmp_path, monkeypatch):
    workspace, (session,) = indexed(tmp_path)
    lines._looked.clear()  # (a new watch process)
    look_ahead(archive_path(workspace))
    looked = looks_again(monkeypatch)
    reading_whole_fails(monkeypatch)
    write(session, LATER, "a")
    index_workspace(workspace)
    assert looked and not any(looked)
    monkeypatch.undo()
    assert stored(workspace) == read_whole(tmp_path, tmp_path / "projects")


def test_only_the_files_changed_last_as_they_were_read_are_read_ahead(tmp_path, monkeypatch):
    workspace, paths = indexed(tmp_path, sessions_written=6)
    db = Database(archive_path(workspace))
    key = secret_key(archive_path(workspace), create=False)
    looked = looks_again(monkeypatch)
    assert sessions.look_ahead(db, key) == sessions.LOOK_AHEAD == len(looked)
    write(paths[0], LATER, "a")  # changed since it was read: its reading on reads it
    looked.clear()
    assert sessions.look_ahead(db, key, files=10) == 5 == len(looked)
    db.close()
    raw = sqlite_utils.Database(archive_path(workspace))
    raw.execute("UPDATE documents SET extra = '[not json' WHERE source LIKE 'log:%'")
    raw.conn.commit()
    db = Database(archive_path(workspace))
    assert sessions.look_ahead(db, key) == 0
    db.close()
