"""The room between the worker process that prepares sessions and the writer: bounded in bytes,
so that memory stays that of a few sessions however large they are and however far the worker
runs ahead; a session larger than the whole room still goes, alone."""

from __future__ import annotations

import multiprocessing
import re
import threading
from contextlib import closing
from pathlib import Path

from conftest import write_files
from test_newest_first import SESSIONS, write_source

from archivist.archive import pace, session_worker
from archivist.archive.database import sqlite3
from archivist.archive.indexer import index_workspace
from archivist.archive.prepared import Prepared, new_masker, prepare_parts
from archivist.archive.session_worker import Room, read_here, weight
from archivist.workspace import archive_path

STORED_SQL = "SELECT key, title, content_hash, body FROM documents WHERE source LIKE 'log:%' ORDER BY key"


def prepared_sessions(source: Path) -> list[Prepared]:
    """The sessions of ``source``, prepared as the worker prepares them."""
    masker = new_masker(None)
    return [
        ready
        for session in read_here("claude-code", source, [])
        if session is not None
        for ready in prepare_parts(session, "log:1", lambda key: None, "2025-10-01T00:00:00Z", masker)
    ]


def test_a_session_takes_the_room_of_its_bytes_and_the_writer_gives_it_back(tmp_path):
    sessions = prepared_sessions(write_source(tmp_path, count=3, padding=" hangar" * 3_000))
    room = Room(multiprocessing.get_context("spawn").Semaphore(4), 10_000, 40_000)
    assert [room.units(size) for size in (0, 9_999, 25_000, 40_000, 10**9)] == [1, 1, 2, 4, 4]
    assert 20_000 < weight(sessions[0]) < 30_000  # (its question's text, in its title, body and message)
    first = room.sent(sessions[0])
    assert first == (2, sessions[0])
    second = room.sent(sessions[1])
    sent: list[tuple[int, Prepared]] = []
    blocked = threading.Thread(target=lambda: sent.append(room.sent(sessions[2])))
    blocked.start()
    blocked.join(0.5)
    assert blocked.is_alive() and sent == []  # the room is full: the worker waits
    assert room.taken(first) == sessions[0]
    blocked.join(5)
    assert not blocked.is_alive() and len(sent) == 1  # taken: its room is free again
    assert [room.taken(second), room.taken(sent[0])] == sessions[1:]
    assert room.taken(None) is None


def stored(workspace: Path) -> list[str]:
    with closing(sqlite3.connect(archive_path(workspace))) as conn:
        rows = conn.execute(STORED_SQL).fetchall()
    return [re.sub(r" #[0-9a-f]{6}\]", "]", str(row)) for row in rows]


def test_sessions_larger_than_the_room_are_stored_one_at_a_time_the_same(tmp_path, monkeypatch):
    source = write_source(tmp_path / "logs", turns=4, padding=" hangar" * 2_000)
    plain = write_files(tmp_path / "plain", {"notes/a.md": "# A\n"})
    index_workspace(plain, log_sources=[("claude-code", source)])
    monkeypatch.setattr(pace, "LARGE_FILES", 5)
    monkeypatch.setattr(session_worker, "IN_FLIGHT_BYTES", 2_048)  # (each session: about 60 kB)
    monkeypatch.setattr(session_worker, "ROOM_BYTES", 1_024)
    in_worker = []
    prepared = session_worker.prepared

    def counted(*args):
        for ready in prepared(*args):
            in_worker.append(isinstance(ready, Prepared))
            yield ready

    monkeypatch.setattr(session_worker, "prepared", counted)
    worker = write_files(tmp_path / "worker", {"notes/a.md": "# A\n"})
    index_workspace(worker, log_sources=[("claude-code", source)])
    assert stored(worker) == stored(plain) and len(stored(plain)) == SESSIONS
    if (multiprocessing.cpu_count() or 1) > 1:
        assert in_worker.count(True) >= SESSIONS
