"""OpenCode's database and JSON storage: what is read, and a database held, damaged or in WAL mode."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from archivist.agents import Unavailable, Unread, opencode

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "opencode"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "opencode"
    shutil.copytree(SAMPLE, folder)
    return folder


def read(path: Path) -> tuple[list, list[str]]:
    problems: list[str] = []
    return list(opencode.read(path, problems)), problems


def test_the_database_and_the_older_storage_are_read_and_a_session_in_both_once(data: Path) -> None:
    found, problems = read(data)
    assert problems == []
    main, agent, old = found
    assert (
        agent.parent == main.key and agent.title == "Find every route that writes to the database."
    )  # a default title
    assert old.models == ["gpt-5"] and old.started == "2025-11-25T23:33:20Z"
    # the JSON storage also holds the database's first session (an import left behind): read once
    moved = data / "storage" / "session" / "p" / f"{main.key}.json"
    moved.parent.mkdir(parents=True)
    moved.write_text(json.dumps({"id": main.key, "title": "stale copy", "directory": "/x"}))
    assert [session.title for session in read(data)[0]] == [main.title, agent.title, old.title]
    # what OpenCode writes itself, and a file's data, are never text
    texts = " ".join(message.text for message in main.messages)
    assert "Called the Read tool" not in texts and "base64" not in texts and "[image: curl-output.png]" in texts
    assert [session.key for session in read(data / "opencode.db")[0]] == [main.key, agent.key]
    assert [session.key for session in read(data / "storage")[0]] == [old.key]


def test_a_database_another_program_holds_is_unavailable_and_never_written(data: Path) -> None:
    database = data / "opencode.db"
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(Unavailable, match="locked by another program"):
            read(data)
    finally:
        holder.close()
    # in WAL mode with the agent's connection open: read what it committed, write nothing
    with sqlite3.connect(database) as connection:
        connection.execute("PRAGMA journal_mode = WAL")
    opened = sqlite3.connect(database)
    opened.execute("SELECT count(*) FROM session").fetchone()
    before = {path.name: path.stat().st_mtime_ns for path in data.iterdir()}
    assert len(read(data)[0]) == 3
    assert {path.name: path.stat().st_mtime_ns for path in data.iterdir()} == before
    opened.close()


def test_a_damaged_database_and_damaged_records_are_told(data: Path) -> None:
    with sqlite3.connect(data / "opencode.db") as connection:
        connection.execute("UPDATE part SET data = '{not json' WHERE id = 'prt_a4_1'")
        connection.execute("UPDATE message SET data = '[1]' WHERE id = 'msg_b1'")
    main, agent, _ = read(data)[0]
    assert main.problems == ["a record not read: not JSON"]
    assert main.messages[-1].role == "assistant" and main.messages[-1].text == ""  # its one part was the damaged one
    assert agent.problems == ["1 message(s) of no known shape skipped"]
    (data / "opencode.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 4000)
    found, problems = read(data)
    assert [session.title for session in found] == ["Why are short links case-sensitive?"]
    assert any(isinstance(problem, Unread) and "opencode.db cannot be read" in problem for problem in problems)


def test_a_source_that_is_not_opencode_s_says_what_was_expected(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    (tmp_path / "text.db").write_text("hello")
    assert "holds neither opencode.db nor storage/session/" in (opencode.check(tmp_path / "empty") or "")
    assert "has no session, message and part tables" in (opencode.check(other) or "")
    assert "is not a SQLite database" in (opencode.check(tmp_path / "text.db") or "")
