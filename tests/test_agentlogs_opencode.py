"""OpenCode's database and JSON storage: what is read, and a database held, damaged or in WAL mode."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from archivist.agents import Unavailable, Unread, opencode

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "opencode"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """The sample's data folder alone: its Go OpenCode project's database is read in test_agentlogs_crush."""
    folder = tmp_path / "opencode"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns(".opencode"))
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
    made = main.messages[0].tool_calls  # the file the user attached: the call OpenCode made for them
    assert [(call.name, call.files, call.input) for call in made] == [
        ("Read", ["src/app.ts"], '{"filePath":"src/app.ts"}')
    ]
    assert [session.key for session in read(data / "opencode.db")[0]] == [main.key, agent.key]
    assert [session.key for session in read(data / "storage")[0]] == [old.key]


def test_only_a_synthetic_note_of_a_call_becomes_a_call_and_its_input_is_kept_as_written(data: Path) -> None:
    notes = [
        "Called the grep tool with the following input: not json at all",
        "The file src/app.ts holds: export const app = 1",
        "Called the Read tool with the following input: [1, 2]",
    ]
    with sqlite3.connect(data / "opencode.db") as connection:
        for number, note in enumerate(notes, start=3):
            connection.execute(
                "INSERT INTO part SELECT ?, message_id, session_id, time_created, time_updated, ? FROM part"
                " WHERE id = 'prt_a1_2'",
                (f"prt_a1_{number}", json.dumps({"type": "text", "text": note, "synthetic": True})),
            )
    connection.close()
    main = read(data)[0][0]
    made = [(call.name, call.files, call.input) for call in main.messages[0].tool_calls]
    assert made == [
        ("Read", ["src/app.ts"], '{"filePath":"src/app.ts"}'),
        ("grep", [], "not json at all"),
        ("Read", [], "[1,2]"),
    ]
    assert "export const app" not in " ".join(message.text for message in main.messages)


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


# --- hostile shapes: repeated sessions, names that lead out, sizes, unreadable files, no index ----


def test_a_session_two_databases_hold_is_read_once_from_opencode_db(data: Path) -> None:
    shutil.copyfile(data / "opencode.db", data / "opencode-dev.db")  # both took it from the same storage
    with sqlite3.connect(data / "opencode-dev.db") as connection:
        connection.execute("UPDATE session SET title = 'the other channel''s copy'")
    found, problems = read(data)
    assert problems == [] and len({session.key for session in found}) == len(found) == 3
    assert found[0].title == "Rate limit the shorten endpoint"


def test_a_storage_name_that_leads_out_of_the_source_is_never_followed(tmp_path: Path) -> None:
    (tmp_path / "secret.json").write_text(json.dumps({"role": "assistant", "modelID": "outside", "time": {}}))
    source = tmp_path / "opencode"
    storage = source / "storage"
    (storage / "session" / "p").mkdir(parents=True)
    (storage / "session" / "p" / "...json").write_text(json.dumps({"id": "ses_1", "title": "t"}))
    (storage / "message").symlink_to(source)  # a link that stays inside: storage/message/.. is outside
    (storage / "part" / "secret").mkdir(parents=True)
    (storage / "part" / "secret" / "prt_1.json").write_text(json.dumps({"type": "text", "text": "hello"}))
    found, problems = read(source)
    assert found == [] and problems == ["...json: not read: its name is no session id"]
    # a message file so named: its parts are not looked for in storage/part/..
    (storage / "message").unlink()
    (storage / "session" / "p" / "...json").rename(storage / "session" / "p" / "ses_1.json")
    (storage / "message" / "ses_1").mkdir(parents=True)
    (storage / "message" / "ses_1" / "...json").write_text(json.dumps({"role": "user", "time": {"created": 1}}))
    (storage / "message" / "ses_1" / "msg_1.json").write_text(json.dumps({"role": "user", "time": {"created": 2}}))
    (storage / "part" / "msg_1").mkdir()
    (storage / "part" / "msg_1" / "prt_2.json").write_text(json.dumps({"type": "text", "text": "inside"}))
    (storage / "text.json").write_text(json.dumps({"type": "text", "text": "from storage/part/.."}))
    (session,), problems = read(source)
    assert problems == [] and [m.text for m in session.messages] == ["", "inside"]


def test_a_database_that_cannot_be_read_is_told_as_unread(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (data / "opencode-beta.db").write_bytes(b"no database here" * 100)
    found, problems = read(data)
    assert len(found) == 3
    assert problems == ["opencode-beta.db cannot be read (file is not a database)"]
    assert isinstance(problems[0], Unread)
    (data / "opencode.db").unlink()
    shutil.rmtree(data / "storage")
    assert opencode.check(data) is None  # a damaged store is told when it is read, never a refusal
    assert "opencode-beta.db is not a SQLite database" in (opencode.check(data / "opencode-beta.db") or "")
    opened, opened_here = Path.open, os.open

    def refused(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self.suffix == ".db":
            raise PermissionError(13, "Permission denied")
        return opened(self, *args, **kwargs)

    def refused_here(path: Any, *args: Any, **kwargs: Any) -> Any:
        if str(path).endswith(".db"):
            raise PermissionError(13, "Permission denied")
        return opened_here(path, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refused)  # (the tests may run as root, who reads a file of mode 000)
    monkeypatch.setattr(os, "open", refused_here)
    found, problems = read(data)
    assert found == [] and problems == ["opencode-beta.db cannot be read (Permission denied)"]
    assert isinstance(problems[0], Unread)
    monkeypatch.undo()
    (data / "opencode-beta.db").write_bytes(b"")  # an empty file holds nothing: nothing to tell
    assert read(data) == ([], [])


@pytest.mark.parametrize("damage", ["garbage", "cut short", "pipe"])
def test_a_damaged_opencode_db_is_a_problem_and_the_rest_of_the_source_is_read(data: Path, damage: str) -> None:
    database = data / "opencode.db"
    whole = database.read_bytes()
    database.unlink()
    if damage == "garbage":
        database.write_bytes(bytes(range(256)) * 64)
    elif damage == "cut short":
        database.write_bytes(whole[:1500])
    else:
        os.mkfifo(database)  # (it would be waited on forever)
    assert opencode.check(data) is None
    found, problems = read(data)
    assert [session.title for session in found] == ["Why are short links case-sensitive?"]
    assert len(problems) == 1 and isinstance(problems[0], Unread) and problems[0].startswith("opencode.db ")
    if damage == "pipe":
        assert problems[0].startswith("opencode.db is a named pipe (FIFO), not a database file: not read")
        assert "is neither a regular file nor a folder" in (opencode.check(database) or "")
        assert read(database) == ([], ["opencode.db is not a regular file: not read"])


def test_a_folder_whose_database_is_another_program_s_is_refused_unless_opencode_s_files_are_there(
    data: Path,
) -> None:
    database = data / "opencode.db"
    database.unlink()
    sqlite3.connect(database).execute("CREATE TABLE t (x)").connection.close()
    assert opencode.check(data) is None  # its storage is OpenCode's
    shutil.rmtree(data / "storage")
    assert "opencode.db has no session, message and part tables" in (opencode.check(data) or "")


def test_a_record_too_large_to_hold_is_skipped_and_told(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with sqlite3.connect(data / "opencode.db") as connection:
        large = json.dumps({"type": "text", "text": "x" * 5000})
        connection.execute("UPDATE part SET data = ? WHERE id = 'prt_a4_1'", [large])
        connection.execute("UPDATE message SET data = CAST(? AS BLOB) WHERE id = 'msg_b1'", [large])
    monkeypatch.setattr(opencode, "MAX_VALUE_BYTES", 4096)
    main, agent, _ = read(data)[0]
    assert main.problems == ["a record not read: over 64 MB"] and main.messages[-1].text == ""
    assert agent.problems == ["a record not read: over 64 MB", "1 message(s) of no known shape skipped"]


def test_each_table_is_read_in_one_pass_where_it_has_no_index(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from archivist.agents import databases

    with sqlite3.connect(data / "opencode.db") as connection:
        for number in range(30):  # more sessions, each with a message and a part
            key = f"ses_extra{number:02}"
            connection.execute(
                "INSERT INTO session VALUES (?, 'p', NULL, NULL, '/p', 'Extra', '1', 0, 0, 0, ?, ?)",
                [key, 1764200000000 + number, 1764200000000 + number],
            )
            message = json.dumps({"role": "user", "time": {"created": 1764200000000 + number}})
            connection.execute("INSERT INTO message VALUES (?, ?, 0, 0, ?)", [f"msg_x{number}", key, message])
            part = json.dumps({"type": "text", "text": f"extra {number}"})
            connection.execute(
                "INSERT INTO part VALUES (?, ?, ?, 0, 0, ?)", [f"prt_x{number}", f"msg_x{number}", key, part]
            )
    statements: list[str] = []
    connect = databases.connect

    def traced(path: Path, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        connection = connect(path, *args, **kwargs)
        connection.set_trace_callback(statements.append)
        return connection

    monkeypatch.setattr(databases, "connect", traced)
    found, problems = read(data / "opencode.db")
    assert problems == [] and [s.messages[0].text for s in found if s.title == "Extra"] == [
        f"extra {n}" for n in range(30)
    ]
    with sqlite3.connect(data / "opencode.db") as connection:
        plans = [
            " ".join(str(step[-1]) for step in connection.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall())
            for sql in statements
            if sql.lstrip().upper().startswith("SELECT")
        ]
    assert sum("SCAN message" in plan for plan in plans) == 1 and sum("SCAN part" in plan for plan in plans) == 1
