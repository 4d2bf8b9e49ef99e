"""Goose's sessions.db and older session files: what is read, what is skipped, and hostile input.

Run as a script, this file writes the sample (``sample-agent-logs/goose/sessions``): a database
of Goose's shape (block/goose ``crates/goose/src/session/session_manager.rs``) holding one
session, and one older session file.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from archivist.agents import LINK_OUT, Unavailable, Unread, Usage, goose

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "goose" / "sessions"
SESSION = "20251108_1"
OLDER = "20251002_143000"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

SCHEMA = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
    user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
    accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER,
    schedule_id TEXT, recipe_json TEXT, user_recipe_values_json TEXT, provider_name TEXT, model_config_json TEXT
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT
);
CREATE INDEX idx_messages_session ON messages(session_id);
"""
PROJECT = "/home/dev/projects/calendar-api"
EDITED = f"{PROJECT}/calendar_api/dates.py"


def text(value: str, **more: Any) -> dict[str, Any]:
    return {"type": "text", "text": value, **more}


def call(tool_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "toolRequest",
        "id": tool_id,
        "toolCall": {"status": "success", "value": {"name": name, "arguments": arguments}},
    }


def result(tool_id: str, output: str) -> dict[str, Any]:
    """A tool result as the developer extension gives it: the model's copy, and the user's."""
    content = [
        text(output, annotations={"audience": ["assistant"]}),
        text(f"```\n{output}\n```", annotations={"audience": ["user"], "priority": 0.0}),
    ]
    return {"type": "toolResponse", "id": tool_id, "toolResult": {"status": "success", "value": {"content": content}}}


SAMPLE_MESSAGES: list[tuple[str, int, list[dict[str, Any]]]] = [
    ("user", 1762593250, [text("The test for next_business_day fails on Fridays. Can you find out why and fix it?")]),
    (
        "assistant",
        1762593255,
        [
            {
                "type": "thinking",
                "thinking": "A Friday plus one day is a Saturday: the weekend is not skipped.",
                "signature": "c2ln",
            },
            text("Let me run the test first."),
            call("toolu_01", "developer__shell", {"command": "pytest tests/test_dates.py -k next_business_day -q"}),
        ],
    ),
    (
        "user",
        1762593261,
        [result("toolu_01", "F\nE  assert date(2025, 11, 8) == date(2025, 11, 10)\n1 failed in 0.12s")],
    ),
    (
        "assistant",
        1762593270,
        [
            text("The function adds one day without skipping the weekend. I'll fix it."),
            call(
                "toolu_02",
                "developer__text_editor",
                {
                    "command": "str_replace",
                    "path": EDITED,
                    "old_str": "    return day + timedelta(days=1)",
                    "new_str": "    day += timedelta(days=1)\n    while day.weekday() >= 5:\n        day += timedelta(days=1)\n    return day",
                },
            ),
        ],
    ),
    ("user", 1762593272, [result("toolu_02", f"The file {EDITED} has been edited.")]),
    ("assistant", 1762593280, [text("Fixed: next_business_day now skips Saturday and Sunday, and the test passes.")]),
]

OLDER_LINES: list[dict[str, Any]] = [
    {
        "working_dir": "/home/dev/notes",
        "description": "Summarise whiteboard photo",
        "schedule_id": None,
        "message_count": 2,
        "total_tokens": 1480,
        "input_tokens": 1210,
        "output_tokens": 270,
        "accumulated_total_tokens": 1480,
        "accumulated_input_tokens": 1210,
        "accumulated_output_tokens": 270,
    },
    {
        "role": "user",
        "created": 1759415400,
        "content": [
            text("Turn this whiteboard photo into a list of action items."),
            {"type": "image", "data": PNG, "mimeType": "image/png"},
        ],
    },
    {
        "role": "assistant",
        "created": 1759415409,
        "content": [text("1. Book the review meeting.\n2. Send the draft to Sam.\n3. Update the roadmap.")],
    },
]


def build_database(database: Path, messages: list[tuple[str, int, list[dict[str, Any]]]] = SAMPLE_MESSAGES) -> None:
    """A sessions.db of Goose's shape holding the sample's session, in WAL mode as Goose keeps it."""
    database.parent.mkdir(parents=True, exist_ok=True)
    with closing_connection(database) as connection:
        connection.executescript(SCHEMA)
        connection.execute("INSERT INTO schema_version (version) VALUES (7)")
        model = {"model_name": "claude-sonnet-4-20250514", "context_limit": 200000, "temperature": None}
        model.update({"max_tokens": None, "toolshim": False, "toolshim_model": None})
        connection.execute(
            "INSERT INTO sessions (id, name, user_set_name, working_dir, created_at, updated_at, total_tokens, "
            "input_tokens, output_tokens, accumulated_total_tokens, accumulated_input_tokens, "
            "accumulated_output_tokens, provider_name, model_config_json) "
            "VALUES (?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [SESSION, "Fix Friday date bug", PROJECT, "2025-11-08 09:14:03", "2025-11-08 09:14:40"]
            + [9870, 9120, 750, 21450, 19800, 1650, "anthropic", json.dumps(model)],
        )
        for number, (role, created, content) in enumerate(messages, 1):
            connection.execute(
                "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [f"msg_{SESSION}_{number}", SESSION, role, json.dumps(content)]
                + [created, json.dumps({"userVisible": True, "agentVisible": True})],
            )
        connection.commit()
        connection.execute("PRAGMA page_size = 1024")  # a small sample: a few KB
        connection.execute("VACUUM")
        connection.execute("PRAGMA journal_mode = WAL")


def closing_connection(database: Path) -> Any:
    from contextlib import closing

    return closing(sqlite3.connect(database))


def write_lines(file: Path, values: list[Any]) -> Path:
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text("".join(json.dumps(value) + "\n" for value in values), encoding="utf-8")
    return file


def build_sample(folder: Path = SAMPLE) -> None:
    for name in ("sessions.db", "sessions.db-wal", "sessions.db-shm"):
        (folder / name).unlink(missing_ok=True)
    build_database(folder / "sessions.db")
    write_lines(folder / f"{OLDER}.jsonl", OLDER_LINES)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A copy of the sample's sessions folder."""
    folder = tmp_path / "goose" / "sessions"
    shutil.copytree(SAMPLE, folder)
    return folder


def read(path: Path) -> tuple[list, list[str]]:
    problems: list[str] = []
    return list(goose.read(path, problems)), problems


def add_messages(database: Path, rows: list[tuple[Any, Any, Any, Any]], session: str = SESSION) -> None:
    """Rows of (role, content_json, created_timestamp, metadata_json) added to a session."""
    with closing_connection(database) as connection:
        connection.executemany(
            "INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES (?, ?, ?, ?, ?)",
            [(session, *row) for row in rows],
        )
        connection.commit()


# --- what is read -------------------------------------------------------------------------------


def test_the_database_and_the_older_session_file_are_read(data: Path) -> None:
    found, problems = read(data)
    assert problems == []
    new, old = found
    assert (new.key, new.agent, new.title, new.project) == (SESSION, "goose", "Fix Friday date bug", PROJECT)
    assert new.models == ["claude-sonnet-4-20250514"] and new.problems == []
    assert (new.started, new.last) == ("2025-11-08T09:14:10Z", "2025-11-08T09:14:40Z")  # the messages' times
    assert [m.role for m in new.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    calls = [c for m in new.messages for c in m.tool_calls]
    assert [(c.name, c.files, c.commands) for c in calls] == [
        ("developer__shell", [], ["pytest tests/test_dates.py -k next_business_day -q"]),
        ("developer__text_editor", [EDITED], []),  # the editor's "str_replace" is no shell command
    ]
    thinking = new.messages[1]
    assert thinking.thinking.startswith("A Friday plus one day") and "Friday plus" not in thinking.text
    assert new.messages[2].tool_output.startswith("F\nE  assert") and "```" not in new.messages[2].tool_output
    assert all(m.text == "" for m in new.messages if m.role == "tool")
    assert [m.model for m in new.messages if m.role == "assistant"] == ["claude-sonnet-4-20250514"] * 3
    assert [m.usage for m in new.messages] == [None] * 5 + [Usage(input=19800, output=1650)]  # the session's totals
    assert (old.key, old.title, old.project) == (OLDER, "Summarise whiteboard photo", "/home/dev/notes")
    request = old.messages[0]
    assert request.text.endswith("[image]") and PNG[:20] not in request.text
    assert [(a.type, a.size) for a in request.attachments] == [("image/png", 70)]
    assert old.messages[-1].usage == Usage(input=1210, output=270) and old.started == "2025-10-02T14:30:00Z"


def test_each_source_form_reads_its_part(data: Path) -> None:
    assert [s.key for s in read(data.parent)[0]] == [SESSION, OLDER]  # the data folder around sessions/
    assert [s.key for s in read(data / "sessions.db")[0]] == [SESSION]
    assert [s.key for s in read(data / f"{OLDER}.jsonl")[0]] == [OLDER]
    assert goose.check(data) is None and goose.check(data.parent) is None
    assert goose.check(data / "sessions.db") is None and goose.check(data / f"{OLDER}.jsonl") is None


def test_a_session_in_both_is_read_once_from_the_database(data: Path) -> None:
    copied = [{**OLDER_LINES[0], "description": "stale copy"}, OLDER_LINES[1]]
    write_lines(data / f"{SESSION}.jsonl", copied)
    found, problems = read(data)
    assert problems == [] and [(s.key, s.title) for s in found] == [
        (SESSION, "Fix Friday date bug"),
        (OLDER, "Summarise whiteboard photo"),
    ]
    (data / "sessions.db").unlink()  # the files alone: the copy is read
    assert [s.title for s in read(data)[0]] == ["Summarise whiteboard photo", "stale copy"]  # in name order


def test_tool_results_of_every_shape(tmp_path: Path) -> None:
    messages = [
        ("user", 1762593250, [text("Show me the screen.")]),
        (
            "assistant",
            1762593251,
            [
                {"type": "redactedThinking", "data": "ZW5jcnlwdGVk"},
                {
                    "type": "frontendToolRequest",
                    "id": "f1",
                    "toolCall": {"status": "success", "value": {"name": "screen"}},
                },
                {"type": "toolRequest", "id": "t0", "toolCall": {"status": "error", "error": "-32602: bad arguments"}},
                call("t1", "developer__image_processor", {"path": "/tmp/shot.png"}),
            ],
        ),
        (
            "user",
            1762593252,
            [
                {"type": "toolResponse", "id": "t0", "toolResult": {"status": "error", "error": "no such tool"}},
                {
                    "type": "toolResponse",
                    "id": "t1",
                    "toolResult": {"status": "success", "value": [text("legacy list")]},
                },
                {
                    "type": "toolResponse",
                    "id": "f1",
                    "toolResult": {
                        "status": "success",
                        "value": {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]},
                    },
                },
                text("only for the model", annotations={"audience": ["assistant"]}),
                {"type": "toolConfirmationRequest", "id": "t1", "toolName": "x", "arguments": {}},
            ],
        ),
    ]
    build_database(tmp_path / "sessions.db", messages)
    (found,), problems = read(tmp_path)
    assert problems == [] and found.problems == []
    assert found.messages[1].thinking == "[redacted thinking]" and found.messages[1].text == ""
    assert [c.name for c in found.messages[1].tool_calls] == ["screen", "developer__image_processor"]
    assert found.messages[1].tool_calls[1].files == ["/tmp/shot.png"]
    outputs = [(m.role, m.tool_output, [a.type for a in m.attachments]) for m in found.messages[2:]]
    assert outputs == [("tool", "no such tool", []), ("tool", "legacy list", []), ("tool", "[image]", ["image/png"])]


# --- what is skipped ----------------------------------------------------------------------------


def test_records_not_read_are_counted_with_their_reasons(data: Path) -> None:
    database = data / "sessions.db"
    add_messages(
        database,
        [
            ("assistant", "{not json", 1762593290, None),
            ("assistant", "[" * 5000 + "]" * 5000, 1762593290, None),
            ("system", json.dumps([text("a system prompt")]), 1762593290, None),
            ("assistant", json.dumps({"type": "text"}), 1762593290, None),
            ("assistant", json.dumps([{"type": "hologram"}, 7, text("Done.")]), 1762593290, None),
            ("user", json.dumps([text("Continue from the summary.")]), 1762593290, json.dumps({"userVisible": False})),
        ],
    )
    (new, _), problems = read(data)
    assert problems == []
    assert new.problems == [
        "4 messages skipped: 1 not JSON, 1 JSON nested deeper than 100 levels, 1 of no known role, 1 with no list of content",
        "2 parts skipped: 1 of no known type, 1 not an object",
    ]
    assert new.messages[-1].text == "Done." and "summary" not in " ".join(m.text for m in new.messages)
    assert new.messages[-1].usage == Usage(input=19800, output=1650) and new.messages[-2].usage is None
    lines = (data / f"{OLDER}.jsonl").read_text().splitlines()
    lines[1:1] = ["{cut", "[1, 2]", ""]
    (data / f"{OLDER}.jsonl").write_bytes(
        "\n".join(lines).encode() + b"\n" + b'{"role": "user", "content": [], "x": "\xff"}\n'
    )
    old = read(data)[0][1]
    assert old.problems == [
        "2 messages skipped: 1 not JSON, 1 not a JSON object",
        "1 line not valid UTF-8: decoded with replacement characters",
    ]
    assert [m.role for m in old.messages] == ["user", "assistant"]


def test_a_session_with_no_message_to_read_is_told_and_an_empty_one_is_not(tmp_path: Path) -> None:
    build_database(tmp_path / "sessions.db", [("assistant", 1762593250, [{"type": "hologram"}])])
    with closing_connection(tmp_path / "sessions.db") as connection:
        connection.execute("INSERT INTO sessions (id, working_dir) VALUES ('20251109_1', '/x')")  # never used
        connection.commit()
    found, problems = read(tmp_path)
    assert found == [] and problems == [f"{SESSION}: no message read (1 part skipped: 1 of no known type)"]


def test_hostile_values_never_raise(tmp_path: Path) -> None:
    build_database(tmp_path / "sessions.db")
    with closing_connection(tmp_path / "sessions.db") as connection:
        connection.execute(
            "UPDATE sessions SET name = '', description = x'ff', working_dir = x'ff00', model_config_json = '[1]', "
            "accumulated_input_tokens = '19800', accumulated_output_tokens = -3, created_at = 'yesterday'"
        )
        connection.execute(
            "UPDATE messages SET created_timestamp = CASE id WHEN 1 THEN 'soon' WHEN 2 THEN 99999999999999999999 "
            "ELSE created_timestamp END, metadata_json = '{broken'"
        )
        connection.execute("UPDATE messages SET content_json = CAST(content_json AS BLOB) WHERE id = 3")
        hostile = [
            {"type": "text", "text": 5},
            {"type": "image", "data": 12, "mimeType": ["x"]},
            {"type": "toolRequest", "toolCall": {"status": "success", "value": {"name": 9, "arguments": [1]}}},
            {"type": "toolRequest", "toolCall": "shell"},
            call("t", "developer__shell", {"command": ["rm", "-rf"], "path": {"a": 1}}),
            {"type": "toolResponse", "toolResult": {"status": "success", "value": {"content": "text"}}},
            {"type": "thinking", "thinking": None},
            {"type": None},
        ]
        connection.execute("UPDATE messages SET content_json = ? WHERE id = 4", [json.dumps(hostile)])
        connection.commit()
    (found,), problems = read(tmp_path)
    assert problems == [] and found.problems == ["1 part skipped: 1 of no known type"]
    assert found.title.startswith("The test for next_business_day fails") and found.title.endswith("…")
    assert found.project is None and found.models == []  # wrong types are no values
    assert [m.timestamp for m in found.messages[:2]] == [None, None] and found.started == "2025-11-08T09:14:21Z"
    hostile_message = found.messages[3]
    assert hostile_message.text == "[image]" and [a.type for a in hostile_message.attachments] == ["image"]
    assert [(c.name, c.files, c.commands) for c in hostile_message.tool_calls] == [
        ("tool", [], []),  # a name that is no text; arguments that are no object
        ("developer__shell", [], []),  # a command and a path that are no text
    ]
    assert [m.role for m in found.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert found.messages[-1].usage == Usage(input=19800)  # SQLite stored the digits as a number; -3 is no count


def test_files_cut_short_anywhere_never_raise_and_keep_what_came_before(data: Path) -> None:
    jsonl = data / f"{OLDER}.jsonl"
    whole = jsonl.read_bytes()
    first_message_ends = whole.index(b"\n", whole.index(b"\n") + 1) + 1
    for size in range(0, len(whole), 37):
        jsonl.write_bytes(whole[:size])
        found, _ = read(jsonl)
        if size >= first_message_ends:
            assert [s.key for s in found] == [OLDER] and found[0].messages[0].role == "user"
    database = data / "sessions.db"
    pages = database.read_bytes()
    for size in (100, 1024, 2048, 4096, len(pages) - 1024):
        database.write_bytes(pages[:size])
        found, problems = read(data)  # never raises; what is not read is told
        keys = [s.key for s in found]
        assert OLDER in keys and (SESSION in keys or any(isinstance(p, Unread) for p in problems))


# --- a database held, damaged, newer, or reached through a link ---------------------------------


def test_a_database_another_program_holds_is_unavailable(data: Path) -> None:
    database = data / "sessions.db"
    with closing_connection(database) as connection:
        connection.execute("PRAGMA journal_mode = DELETE")
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(Unavailable, match="locked by another program"):
            read(data)
        with pytest.raises(Unavailable):
            goose.check(data)
    finally:
        holder.close()


def test_reading_writes_nothing_not_even_wal_files(data: Path) -> None:
    database = data / "sessions.db"
    assert database.read_bytes()[18:20] == b"\x02\x02"  # WAL mode, as Goose keeps it
    before = {path.name: path.read_bytes() for path in data.iterdir()}
    assert len(read(data)[0]) == 2 and goose.check(data) is None
    assert {path.name: path.read_bytes() for path in data.iterdir()} == before
    # Goose has it open (its -wal and -shm files are there): what it committed is read, nothing written
    opened = sqlite3.connect(database)
    opened.execute("SELECT count(*) FROM sessions").fetchone()
    during = {path.name: path.stat().st_mtime_ns for path in data.iterdir()}
    assert {"sessions.db-wal", "sessions.db-shm"} <= set(during)
    assert len(read(data)[0]) == 2
    assert {path.name: path.stat().st_mtime_ns for path in data.iterdir()} == during
    opened.close()


def test_a_damaged_database_is_told_and_the_files_are_still_read(data: Path) -> None:
    (data / "sessions.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 4000)
    found, problems = read(data)
    assert [s.key for s in found] == [OLDER]
    assert (
        len(problems) == 1 and isinstance(problems[0], Unread) and problems[0].startswith("sessions.db cannot be read")
    )
    assert goose.check(data) is None  # one damaged store never refuses the source: the files beside it are read
    assert "cannot be opened read-only" in (goose.check(data / "sessions.db") or "")


@pytest.mark.parametrize("damage", ["garbage", "cut short", "empty pages", "pipe"])
def test_a_damaged_sessions_db_is_a_problem_and_the_rest_of_the_source_is_read(data: Path, damage: str) -> None:
    database = data / "sessions.db"
    whole = database.read_bytes()
    database.unlink()
    if damage == "garbage":
        database.write_bytes(bytes(range(256)) * 64)
    elif damage == "cut short":
        database.write_bytes(whole[:1500])
    elif damage == "empty pages":
        database.write_bytes(whole[:100] + b"\xff" * (len(whole) - 100))
    else:
        os.mkfifo(database)
    for source in (data, data.parent):
        assert goose.check(source) is None
        found, problems = read(source)
        assert [s.key for s in found] == [OLDER]
        assert len(problems) == 1 and isinstance(problems[0], Unread) and problems[0].startswith("sessions.db ")
    if damage == "pipe":
        assert problems[0].startswith("sessions.db is a named pipe (FIFO), not a database file: not read")
    (data / f"{OLDER}.jsonl").unlink()  # a damaged store alone: still Goose's folder, its damage told
    assert goose.check(data) is None and read(data)[0] == []


def test_a_folder_whose_sessions_db_is_another_program_s_is_refused_unless_sessions_are_beside_it(
    data: Path,
) -> None:
    database = data / "sessions.db"
    database.unlink()
    with closing_connection(database) as connection:
        connection.execute("CREATE TABLE sessions (name TEXT)")
    assert goose.check(data) is None  # its session files are Goose's
    found, problems = read(data)
    assert [s.key for s in found] == [OLDER] and "has no sessions.id" in problems[0]
    (data / f"{OLDER}.jsonl").unlink()
    assert "has no sessions.id, messages.session_id" in (goose.check(data) or "")


def test_a_newer_schema_without_the_columns_read_is_said_so(tmp_path: Path) -> None:
    database = tmp_path / "sessions.db"
    with closing_connection(database) as connection:
        connection.executescript(
            "CREATE TABLE schema_version (version INTEGER PRIMARY KEY);"
            "INSERT INTO schema_version VALUES (13), (14);"
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, working_dir TEXT);"
            "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, parts_json TEXT);"
        )
    reason = goose.check(database) or ""
    assert "schema version 14, newer than the 13 read here" in reason and "messages.content_json" in reason
    found, problems = read(tmp_path)
    assert found == [] and len(problems) == 1 and isinstance(problems[0], Unread) and "version 14" in problems[0]
    with closing_connection(database) as connection:  # a later version that only adds columns is read
        connection.execute("ALTER TABLE messages ADD COLUMN content_json TEXT")
        connection.execute("INSERT INTO sessions VALUES ('s', '/p')")
        connection.execute("INSERT INTO messages VALUES (1, 's', 'user', '[]', ?)", [json.dumps([text("hi")])])
        connection.commit()
    assert goose.check(database) is None and [s.title for s in read(tmp_path)[0]] == ["hi"]


def test_links_that_lead_out_of_the_source_are_not_opened(data: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.move(data / f"{OLDER}.jsonl", outside / "secret.jsonl")
    shutil.move(data / "sessions.db", outside / "other.db")
    (data / f"{OLDER}.jsonl").symlink_to(outside / "secret.jsonl")
    (data / "sessions.db").symlink_to(outside / "other.db")
    found, problems = read(data)
    assert found == []
    assert sorted(problems) == [f"{OLDER}.jsonl: {LINK_OUT}", f"sessions.db: {LINK_OUT}"]
    assert all(isinstance(problem, Unread) for problem in problems)
    assert [s.key for s in read(data / f"{OLDER}.jsonl")[0]] == [OLDER]  # a file named by its user is read


def test_a_source_that_is_not_goose_s_says_what_was_expected(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    other = tmp_path / "other.db"
    with closing_connection(other) as connection:
        connection.execute("CREATE TABLE t (x)")
    (tmp_path / "notes.jsonl").write_text('{"hello": 1}\n')
    assert "holds neither sessions.db nor session .jsonl files" in (goose.check(tmp_path / "empty") or "")
    assert "has no sessions.id, messages.session_id" in (goose.check(other) or "")
    assert "is not a Goose session file" in (goose.check(tmp_path / "notes.jsonl") or "")
    assert "does not exist" in (goose.check(tmp_path / "missing") or "")


# --- hostile shapes: types, sizes, views, pipes, tables without an index ---------------------------


def test_a_part_whose_type_is_no_text_is_counted_not_raised(data: Path) -> None:
    odd = [{"type": ["text"]}, {"type": {"a": 1}}, text("Still here.")]
    add_messages(data / "sessions.db", [("assistant", json.dumps(odd), 1762593290, None)])
    jsonl = data / f"{OLDER}.jsonl"
    jsonl.write_text(
        jsonl.read_text() + json.dumps({"role": "assistant", "created": 1759415410, "content": odd}) + "\n"
    )
    (new, old), problems = read(data)
    assert problems == []
    for found in (new, old):
        assert found.problems == ["2 parts skipped: 2 of no known type"] and found.messages[-1].text == "Still here."


def test_a_sessions_db_that_cannot_be_read_is_told_as_unread(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    database = data / "sessions.db"
    database.write_bytes(b"not a database at all" * 100)
    found, problems = read(data)
    assert [s.key for s in found] == [OLDER]
    assert problems == ["sessions.db is not a SQLite database"] and isinstance(problems[0], Unread)
    assert goose.check(data) is None
    assert "is not a SQLite database" in (goose.check(database) or "")
    assert read(database) == ([], ["sessions.db is not a SQLite database"])
    opened = Path.open

    def refused(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self.name == "sessions.db":
            raise PermissionError(13, "Permission denied")
        return opened(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refused)  # (the tests may run as root, who reads a file of mode 000)
    found, problems = read(data)
    assert [s.key for s in found] == [OLDER] and problems == ["sessions.db cannot be read (Permission denied)"]
    assert isinstance(problems[0], Unread) and goose.check(data) is None
    assert "cannot be read (Permission denied)" in (goose.check(database) or "")
    monkeypatch.undo()
    database.write_bytes(b"")  # an empty file holds no session: nothing to tell
    assert ([s.key for s in read(data)[0]], read(data)[1]) == ([OLDER], [])


def test_a_message_too_large_to_hold_is_skipped_and_counted(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    add_messages(data / "sessions.db", [("assistant", json.dumps([text("x" * 5000)]), 1762593290, "{}")])
    add_messages(data / "sessions.db", [("assistant", json.dumps([text("y" * 5000)]).encode(), 1762593291, None)])
    monkeypatch.setattr(goose, "MAX_VALUE_BYTES", 4096)
    (new, _), problems = read(data)
    assert problems == [] and new.problems == ["2 messages skipped: 2 over 64 MB"]
    assert [m.role for m in new.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]


def test_a_view_named_as_a_table_is_not_read(tmp_path: Path) -> None:
    database = tmp_path / "sessions.db"
    with closing_connection(database) as connection:
        connection.executescript(
            "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content_json TEXT);"
            f"INSERT INTO messages VALUES (1, 'v', 'user', '{json.dumps([text('from a view')])}');"
            "CREATE VIEW sessions AS SELECT 'v' AS id, NULL AS created_at;"  # (one could be a query that never ends)
        )
    assert "has no sessions.id" in (goose.check(database) or "")
    found, problems = read(tmp_path)
    assert found == [] and len(problems) == 1 and isinstance(problems[0], Unread) and "no sessions.id" in problems[0]


def test_a_pipe_is_never_opened(tmp_path: Path) -> None:
    import os
    import threading

    for name in ("s.jsonl", "sessions.db"):
        pipe = tmp_path / name
        os.mkfifo(pipe)
        assert "is neither a regular file nor a folder" in (goose.check(pipe) or "")
        results: list[Any] = []
        reader = threading.Thread(target=lambda pipe=pipe, results=results: results.append(read(pipe)), daemon=True)
        reader.start()
        reader.join(5)
        if reader.is_alive():  # let the blocked reader go before failing
            os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
        assert results == [([], [f"{name} is not a regular file: not read"])]
        assert isinstance(results[0][1][0], Unread)
        pipe.unlink()


def test_messages_are_read_in_one_pass_where_the_table_has_no_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from archivist.agents import databases

    database = tmp_path / "sessions.db"
    with closing_connection(database) as connection:
        connection.executescript(SCHEMA.replace("CREATE INDEX idx_messages_session ON messages(session_id);", ""))
        keys = [f"2025110{day}_1" for day in range(1, 8)]
        for day, key in enumerate(keys, 1):
            connection.execute(
                "INSERT INTO sessions (id, working_dir, created_at) VALUES (?, '/p', ?)", [key, f"2025-11-0{day}"]
            )
        rows = [(keys[n % 7], "user", json.dumps([text(f"{keys[n % 7]} #{n}")]), n) for n in range(1400)]
        connection.executemany(
            "INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES (?, ?, ?, ?)", rows
        )
        connection.commit()
    statements: list[str] = []
    connect = databases.connect

    def traced(path: Path, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        connection = connect(path, *args, **kwargs)
        connection.set_trace_callback(statements.append)
        return connection

    monkeypatch.setattr(databases, "connect", traced)
    found, problems = read(tmp_path)
    assert problems == [] and [s.key for s in found] == keys
    for key, session in zip(keys, found, strict=True):
        assert [m.text for m in session.messages] == [f"{key} #{n}" for n in range(1400) if keys[n % 7] == key]
    with closing_connection(database) as connection:
        plans = [
            " ".join(str(step[-1]) for step in connection.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall())
            for sql in statements
            if sql.lstrip().upper().startswith("SELECT") and "messages" in sql
        ]
    assert sum("SCAN messages" in plan for plan in plans) == 1  # not one scan for each session


def test_a_session_file_whose_reading_stops_is_unread_and_not_read_in_part(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from archivist.agents.goose import messages as goose_messages

    def stopping(handle: Any, *args: Any) -> Any:
        yield handle.readline().rstrip(b"\n"), 0
        yield handle.readline().rstrip(b"\n"), 0
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(goose_messages, "lines", stopping)
    found, problems = read(data)
    assert [s.key for s in found] == [SESSION] and problems == [f"{OLDER}.jsonl: reading stopped (Input/output error)"]
    assert isinstance(problems[0], Unread)


if __name__ == "__main__":  # python tests/test_agentlogs_goose.py: write the sample
    build_sample(Path(sys.argv[1]) if len(sys.argv) > 1 else SAMPLE)
