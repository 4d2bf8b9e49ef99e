"""``llm``'s logs.db read in place, read-only: the responses of llm up to 0.35 and the message tree of 0.36."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from archivist.agents import Message, Session, ToolCall, Unread, llm_logs

# The tables of llm up to 0.35 (migrations m010 to m022), as the format description gives them.
LEGACY_SCHEMA = """
CREATE TABLE _llm_migrations (name TEXT PRIMARY KEY, applied_at TEXT);
CREATE TABLE conversations (id TEXT PRIMARY KEY, name TEXT, model TEXT);
CREATE TABLE schemas (id TEXT PRIMARY KEY, content TEXT);
CREATE TABLE responses (
  id TEXT PRIMARY KEY, model TEXT, prompt TEXT, system TEXT,
  prompt_json TEXT, options_json TEXT, response TEXT, response_json TEXT,
  conversation_id TEXT REFERENCES conversations(id),
  duration_ms INTEGER, datetime_utc TEXT,
  input_tokens INTEGER, output_tokens INTEGER, token_details TEXT,
  schema_id TEXT REFERENCES schemas(id), resolved_model TEXT, reasoning TEXT
);
CREATE TABLE fragments (id INTEGER PRIMARY KEY, hash TEXT UNIQUE, content TEXT, datetime_utc TEXT, source TEXT);
CREATE TABLE prompt_fragments (response_id TEXT, fragment_id INTEGER, "order" INTEGER,
  PRIMARY KEY (response_id, fragment_id, "order"));
CREATE TABLE system_fragments (response_id TEXT, fragment_id INTEGER, "order" INTEGER,
  PRIMARY KEY (response_id, fragment_id, "order"));
CREATE TABLE tools (id INTEGER PRIMARY KEY, hash TEXT UNIQUE, name TEXT, description TEXT, input_schema TEXT, plugin TEXT);
CREATE TABLE tool_responses (tool_id INTEGER, response_id TEXT, PRIMARY KEY (tool_id, response_id));
CREATE TABLE tool_calls (id INTEGER PRIMARY KEY, response_id TEXT, tool_id INTEGER, name TEXT, arguments TEXT,
  tool_call_id TEXT);
CREATE TABLE tool_instances (id INTEGER PRIMARY KEY, plugin TEXT, name TEXT, arguments TEXT);
CREATE TABLE tool_results (id INTEGER PRIMARY KEY, response_id TEXT, tool_id INTEGER, name TEXT, output TEXT,
  tool_call_id TEXT, instance_id INTEGER REFERENCES tool_instances(id), exception TEXT);
"""

# The message tree of llm 0.36 (migration m023).
STORE_SCHEMA = """
CREATE TABLE messages (hash TEXT PRIMARY KEY, parent_hash TEXT REFERENCES messages(hash), role TEXT,
  provider_metadata TEXT);
CREATE TABLE parts (id INTEGER PRIMARY KEY, message_hash TEXT REFERENCES messages(hash), position INTEGER, type TEXT,
  tool_name TEXT, text TEXT, payload TEXT);
CREATE UNIQUE INDEX idx_parts ON parts (message_hash, position);
CREATE TABLE threads (id TEXT PRIMARY KEY, name TEXT, tip_message_hash TEXT, forked_from TEXT, datetime_utc TEXT);
CREATE TABLE turns (id TEXT PRIMARY KEY, thread_id TEXT, parent_message_hash TEXT, tip_message_hash TEXT, model TEXT,
  resolved_model TEXT, options_json TEXT, schema_id TEXT, input_tokens INTEGER, output_tokens INTEGER,
  token_details TEXT, duration_ms INTEGER, datetime_utc TEXT, response_json TEXT);
"""

RESPONSE_COLUMNS = ("id", "model", "prompt", "system", "response", "conversation_id", "datetime_utc", "reasoning")

CONVERSATIONS = [
    ("01jvp3k5y8m2n4q6r8t0v2x4z6", "Ten names for cheesecakes", "gpt-4o-mini"),
    ("01jvp4aaaaaaaaaaaaaaaaaaaa", "What time is it?", "gpt-4o-mini"),
    ("01jvp5bbbbbbbbbbbbbbbbbbbb", None, "claude-3.5-sonnet"),
]
RESPONSES = [
    # (id, model, prompt, system, response, conversation_id, datetime_utc, reasoning)
    (
        "01jvp3k5yb0c2e4g6j8m0p2r4t",
        "gpt-4o-mini",
        "Ten names for cheesecakes",
        "You are a baker",
        "1. Cheesy Delight\n2. Berry Bliss",
        "01jvp3k5y8m2n4q6r8t0v2x4z6",
        "2025-05-20T18:45:12.123456",
        None,
    ),
    (
        "01jvp3m0000000000000000000",
        "gpt-4o-mini",
        "Make them shorter",
        "You are a baker",
        "Delight, Bliss",
        "01jvp3k5y8m2n4q6r8t0v2x4z6",
        "2025-05-20T18:46:00+00:00",
        None,
    ),
    (
        "01jvp4r1000000000000000000",
        "gpt-4o-mini",
        "What time is it?",
        None,
        "",
        "01jvp4aaaaaaaaaaaaaaaaaaaa",
        "2025-05-21T09:00:00",
        None,
    ),
    (
        "01jvp4r2000000000000000000",
        "gpt-4o-mini",
        None,
        None,
        "It is 09:00 UTC.",
        "01jvp4aaaaaaaaaaaaaaaaaaaa",
        "2025-05-21T09:00:02",
        "The tool said 09:00.",
    ),
    (
        "01jvp5r1000000000000000000",
        "claude-3.5-sonnet",
        None,
        None,
        "A short summary.",
        "01jvp5bbbbbbbbbbbbbbbbbbbb",
        "2025-05-22T10:00:00",
        None,
    ),
    (
        "01jvp6r1000000000000000000",
        "gpt-4o",
        "A prompt with no conversation",
        None,
        "Alone.",
        None,
        "2025-05-23T11:00:00",
        None,
    ),
]
TOOL_CALLS = [
    (1, "01jvp4r1000000000000000000", 3, "llm_time", "{}", "call_abc123"),
    (2, "01jvp4r1000000000000000000", 4, "read_file", '{"path": "notes/today.txt"}', "call_def456"),
    (3, "01jvp4r1000000000000000000", 5, "run_shell", '{"command": "date -u", "timeout": 5}', "call_ghi789"),
    (4, "01jvp4r1000000000000000000", 6, "broken", "{not json", "call_jkl012"),
]
TOOL_RESULTS = [
    (
        1,
        "01jvp4r2000000000000000000",
        3,
        "llm_time",
        '{"utc_time": "2025-05-21 09:00:01 UTC"}',
        "call_abc123",
        None,
        None,
    ),
    (2, "01jvp4r2000000000000000000", 4, "read_file", "", "call_def456", None, "FileNotFoundError: notes/today.txt"),
]


def build_legacy(path: Path) -> Path:
    with sqlite3.connect(path) as db:
        db.executescript(LEGACY_SCHEMA)
        insert_legacy(db)
    db.close()
    return path


def insert_legacy(db: sqlite3.Connection) -> None:
    db.executemany("INSERT INTO conversations (id, name, model) VALUES (?, ?, ?)", CONVERSATIONS)
    marks = ", ".join("?" * len(RESPONSE_COLUMNS))
    columns = ", ".join(RESPONSE_COLUMNS)
    db.executemany(f"INSERT INTO responses ({columns}) VALUES ({marks})", reversed(RESPONSES))  # out of order
    db.executemany("INSERT INTO tool_calls VALUES (?, ?, ?, ?, ?, ?)", TOOL_CALLS)
    db.executemany("INSERT INTO tool_results VALUES (?, ?, ?, ?, ?, ?, ?, ?)", TOOL_RESULTS)
    db.execute(
        "INSERT INTO fragments (id, hash, content) VALUES (7, 'h7', 'Summarise this README: Archivist reads logs.')"
    )
    db.execute("INSERT INTO prompt_fragments VALUES ('01jvp5r1000000000000000000', 7, 0)")


def part(message: str, position: int, kind: str, text: str | None = None, **payload: object) -> tuple:
    return (message, position, kind, payload.get("name"), text, json.dumps(payload) if payload else None)


def build_store(db: sqlite3.Connection) -> None:
    """0.36's tables: the cheesecake conversation continued, and a new thread with tools and reasoning."""
    db.executescript(STORE_SCHEMA)
    messages = [
        # The continued conversation: llm stores the whole history it sent, then the new turn.
        ("b2:s", None, "system"),
        ("b2:u1", "b2:s", "user"),
        ("b2:a1", "b2:u1", "assistant"),
        ("b2:u2", "b2:a1", "user"),
        ("b2:a2", "b2:u2", "assistant"),
        ("b2:u3", "b2:a2", "user"),
        ("b2:a3", "b2:u3", "assistant"),
        # A new thread.
        ("b2:n1", None, "user"),
        ("b2:n2", "b2:n1", "assistant"),
        ("b2:n3", "b2:n2", "tool"),
        ("b2:n4", "b2:n3", "assistant"),
        ("b2:n5", "b2:n4", "user"),
        ("b2:n6", "b2:n5", "robot"),
        ("b2:n7", "b2:n6", "assistant"),
    ]
    db.executemany("INSERT INTO messages (hash, parent_hash, role) VALUES (?, ?, ?)", messages)
    parts = [
        part("b2:s", 0, "text", "You are a baker"),
        part("b2:u1", 0, "text", "Ten names for cheesecakes"),
        part("b2:a1", 0, "text", "1. Cheesy Delight\n2. Berry Bliss"),
        part("b2:u2", 0, "text", "Make them shorter"),
        part("b2:a2", 0, "text", "Delight, Bliss"),
        part("b2:u3", 0, "text", "One more"),
        part("b2:a3", 0, "text", "Crumble"),
        (
            "b2:n1",
            0,
            "text",
            None,
            None,
            json.dumps({"text_ref": [{"literal": "Run the tests of "}, {"fragment": 8}, {"literal": " please"}]}),
        ),
        part("b2:n2", 0, "reasoning", "The user wants the tests run."),
        part("b2:n2", 1, "text", "Running them."),
        part("b2:n2", 2, "tool_call", name="run_shell", arguments={"command": "pytest -q"}, tool_call_id="c1"),
        part("b2:n3", 0, "tool_result", name="run_shell", output="3 passed", tool_call_id="c1"),
        part("b2:n4", 0, "text", "All 3 tests pass."),
        part("b2:n5", 0, "text", "And the linter?"),
        ("b2:n5", 1, "hologram", None, None, None),
        ("b2:n5", 2, "tool_call", "broken", None, "{not json"),
        part("b2:n6", 0, "text", "beep"),
        part("b2:n7", 0, "text", "It is clean."),
    ]
    db.executemany(
        "INSERT INTO parts (message_hash, position, type, tool_name, text, payload) VALUES (?, ?, ?, ?, ?, ?)", parts
    )
    db.execute("INSERT INTO fragments (id, hash, content) VALUES (8, 'h8', 'archivist')")
    db.executemany(
        "INSERT INTO threads (id, name, tip_message_hash, datetime_utc) VALUES (?, ?, ?, ?)",
        [
            ("01jvp3k5y8m2n4q6r8t0v2x4z6", "Ten names for cheesecakes", "b2:a3", "2025-06-01 08:00:00+00:00"),
            ("01jw0000000000000000000000", None, "b2:n7", "2025-06-02 08:00:00+00:00"),
        ],
    )
    db.executemany(
        "INSERT INTO turns (id, thread_id, parent_message_hash, tip_message_hash, model, datetime_utc)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [
            (
                "01jvzt0000000000000000000a",
                "01jvp3k5y8m2n4q6r8t0v2x4z6",
                "b2:u3",
                "b2:a3",
                "gpt-4.1",
                "2025-06-01T08:00:00.5+00:00",
            ),
            (
                "01jw0t0000000000000000000a",
                "01jw0000000000000000000000",
                "b2:n1",
                "b2:n2",
                "claude-sonnet-4",
                "2025-06-02T08:00:00+00:00",
            ),
            (
                "01jw0t0000000000000000000b",
                "01jw0000000000000000000000",
                "b2:n3",
                "b2:n4",
                "claude-sonnet-4",
                "2025-06-02T08:00:05+00:00",
            ),
            (
                "01jw0t0000000000000000000c",
                "01jw0000000000000000000000",
                "b2:n6",
                "b2:n7",
                "claude-sonnet-4",
                "2025-06-02T08:01:00+00:00",
            ),
        ],
    )


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    folder = tmp_path / "io.datasette.llm"
    folder.mkdir()
    return build_legacy(folder / "logs.db")


@pytest.fixture
def both(legacy: Path) -> Path:
    with sqlite3.connect(legacy) as db:
        build_store(db)
    db.close()
    return legacy


def read(path: Path) -> dict[str, Session]:
    return {session.key: session for session in llm_logs.read(path)}


def roles(session: Session) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in session.messages]


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(path.relative_to(root)): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_kind_name():
    assert llm_logs.KIND == "llm"


def test_one_session_per_conversation_and_one_per_response_without_one(legacy: Path):
    found = list(llm_logs.read(legacy))
    assert [s.key for s in found] == [
        "01jvp3k5y8m2n4q6r8t0v2x4z6",
        "01jvp4aaaaaaaaaaaaaaaaaaaa",
        "01jvp5bbbbbbbbbbbbbbbbbbbb",
        "01jvp6r1000000000000000000",
    ]
    assert all(s.agent == "llm" and s.project is None and s.files == [legacy] for s in found)
    assert [s.key for s in llm_logs.read(legacy.parent)] == [s.key for s in found]  # the folder is a source too


def test_a_conversation_in_time_order_with_its_system_prompt_once(legacy: Path):
    session = read(legacy)["01jvp3k5y8m2n4q6r8t0v2x4z6"]
    assert roles(session) == [
        ("system", "You are a baker"),
        ("user", "Ten names for cheesecakes"),
        ("assistant", "1. Cheesy Delight\n2. Berry Bliss"),
        ("user", "Make them shorter"),
        ("assistant", "Delight, Bliss"),
    ]
    assert [m.timestamp for m in session.messages] == [
        "2025-05-20T18:45:12Z",
        "2025-05-20T18:45:12Z",
        "2025-05-20T18:45:12Z",
        "2025-05-20T18:46:00Z",
        "2025-05-20T18:46:00Z",
    ]
    assert session.messages[2].model == "gpt-4o-mini" and session.messages[1].model is None
    assert session.title == "Ten names for cheesecakes"
    assert session.models == ["gpt-4o-mini"]
    assert (session.started, session.last) == ("2025-05-20T18:45:12Z", "2025-05-20T18:46:00Z")
    assert session.problems == []


def test_tool_calls_and_their_results(legacy: Path):
    session = read(legacy)["01jvp4aaaaaaaaaaaaaaaaaaaa"]
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    calls = session.messages[1]
    assert calls.text == ""
    assert calls.tool_calls == [
        ToolCall(name="llm_time"),
        ToolCall(name="read_file", files=["notes/today.txt"], input='{"path":"notes/today.txt"}'),
        ToolCall(name="run_shell", commands=["date -u"], input='{"timeout":5}'),
        ToolCall(name="broken", input="{not json"),
    ]
    assert session.problems == ["the arguments of a broken tool call are not JSON"]
    assert session.messages[2].tool_output == '{"utc_time": "2025-05-21 09:00:01 UTC"}'
    assert session.messages[3].tool_output == "FileNotFoundError: notes/today.txt"
    answer = session.messages[4]
    assert (answer.text, answer.thinking) == ("It is 09:00 UTC.", "The tool said 09:00.")


def test_a_prompt_made_of_fragments_and_a_conversation_without_a_name(legacy: Path):
    session = read(legacy)["01jvp5bbbbbbbbbbbbbbbbbbbb"]
    assert roles(session)[0] == ("user", "Summarise this README: Archivist reads logs.")
    assert session.title == "Summarise this README: Archivist reads logs."
    alone = read(legacy)["01jvp6r1000000000000000000"]
    assert roles(alone) == [("user", "A prompt with no conversation"), ("assistant", "Alone.")]
    assert alone.models == ["gpt-4o"]


def test_the_message_tree_of_036_and_a_conversation_it_continues(both: Path):
    found = read(both)
    continued = found["01jvp3k5y8m2n4q6r8t0v2x4z6"]
    assert roles(continued) == [
        ("system", "You are a baker"),
        ("user", "Ten names for cheesecakes"),
        ("assistant", "1. Cheesy Delight\n2. Berry Bliss"),
        ("user", "Make them shorter"),
        ("assistant", "Delight, Bliss"),
        ("user", "One more"),
        ("assistant", "Crumble"),
    ]
    assert continued.messages[-1].timestamp == "2025-06-01T08:00:00Z"
    assert continued.models == ["gpt-4o-mini", "gpt-4.1"]
    assert continued.last == "2025-06-01T08:00:00Z"


def test_the_model_that_answered_is_the_resolved_one_and_both_are_the_sessions(both: Path):
    with sqlite3.connect(both) as db:
        db.execute(
            "UPDATE responses SET resolved_model = 'gpt-4o-mini-2024-07-18' WHERE id = '01jvp3k5yb0c2e4g6j8m0p2r4t'"
        )
        db.execute("UPDATE turns SET resolved_model = 'gpt-4.1-2025-04-14' WHERE id = '01jvzt0000000000000000000a'")
        db.execute("UPDATE turns SET resolved_model = ' ' WHERE id = '01jw0t0000000000000000000a'")
    db.close()
    found = read(both)
    continued = found["01jvp3k5y8m2n4q6r8t0v2x4z6"]
    answers = [m.model for m in continued.messages if m.role == "assistant"]
    assert answers == ["gpt-4o-mini-2024-07-18", "gpt-4o-mini", "gpt-4.1-2025-04-14"]
    assert continued.models == ["gpt-4o-mini", "gpt-4o-mini-2024-07-18", "gpt-4.1", "gpt-4.1-2025-04-14"]
    calling = found["01jw0000000000000000000000"]
    assert calling.messages[1].model == "claude-sonnet-4" and calling.models == ["claude-sonnet-4"]


def test_a_thread_with_reasoning_tools_fragments_and_damaged_parts(both: Path):
    thread = read(both)["01jw0000000000000000000000"]
    assert [m.role for m in thread.messages] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    first, calling, result, answer, follow_up, last = thread.messages
    assert first.text == "Run the tests of archivist please"
    assert thread.title == "Run the tests of archivist please"
    assert (calling.text, calling.thinking) == ("Running them.", "The user wants the tests run.")
    assert calling.tool_calls == [ToolCall(name="run_shell", commands=["pytest -q"])]
    assert calling.model == "claude-sonnet-4"
    assert (result.text, result.tool_output) == ("", "3 passed")
    assert result.timestamp == "2025-06-02T08:00:05Z"
    assert answer.text == "All 3 tests pass."
    assert follow_up.text == "And the linter?"
    assert last.text == "It is clean." and last.timestamp == "2025-06-02T08:01:00Z"
    assert sorted(thread.problems) == [
        "a message with the unknown role 'robot' skipped",
        "a part of the unknown type 'hologram' skipped",
        "a tool_call part whose payload is not JSON skipped",
    ]


def test_messages_after_the_last_turn_and_a_missing_message(both: Path):
    with sqlite3.connect(both) as db:
        db.execute("INSERT INTO messages VALUES ('b2:x1', 'b2:gone', 'user', NULL)")
        db.execute("INSERT INTO parts (message_hash, position, type, text) VALUES ('b2:x1', 0, 'text', 'orphan')")
        db.execute(
            "INSERT INTO threads (id, name, tip_message_hash) VALUES ('01jx0000000000000000000000', 'Forked', 'b2:x1')"
        )
    db.close()
    orphan = read(both)["01jx0000000000000000000000"]
    assert roles(orphan) == [("user", "orphan")]
    assert orphan.messages[0].timestamp is None and orphan.started is None
    assert orphan.title == "Forked"
    assert orphan.problems == ["message b2:gone is missing from the messages table"]


def test_check_says_what_was_expected(tmp_path: Path, legacy: Path):
    assert llm_logs.check(legacy) is None
    assert llm_logs.check(legacy.parent) is None
    missing = llm_logs.check(tmp_path / "nowhere")
    assert missing is not None and "does not exist" in missing and "logs.db" in missing
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "has no logs.db" in (llm_logs.check(empty) or "")
    text = tmp_path / "notes.db"
    text.write_text("not a database", encoding="utf-8")
    assert "is not a SQLite database" in (llm_logs.check(text) or "")
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE documents (id INTEGER PRIMARY KEY)")
    db.close()
    assert "without llm's `responses` table" in (llm_logs.check(other) or "")
    ancient = tmp_path / "ancient.db"
    with sqlite3.connect(ancient) as db:
        db.execute("CREATE TABLE logs (id INTEGER PRIMARY KEY, prompt TEXT)")
    db.close()
    assert "`logs` table" in (llm_logs.check(ancient) or "")
    store_only = tmp_path / "store.db"
    with sqlite3.connect(store_only) as db:
        db.executescript(STORE_SCHEMA)
    db.close()
    assert llm_logs.check(store_only) is None
    assert list(llm_logs.read(store_only)) == []
    assert list(llm_logs.read(text)) == []
    assert list(llm_logs.read(tmp_path / "nowhere")) == []


def test_reading_is_stable_and_writes_nothing(both: Path):
    before = snapshot(both.parent)
    first = list(llm_logs.read(both))
    second = list(llm_logs.read(both.parent))
    assert first == second
    assert snapshot(both.parent) == before
    assert sorted(path.name for path in both.parent.iterdir()) == ["logs.db"]


def test_a_wal_database_no_one_has_open_gets_no_wal_files(both: Path):
    with sqlite3.connect(both) as db:
        db.execute("PRAGMA journal_mode = wal")
    db.close()
    assert sorted(path.name for path in both.parent.iterdir()) == ["logs.db"]
    before = snapshot(both.parent)
    assert llm_logs.check(both) is None
    assert len(list(llm_logs.read(both))) == 5
    assert snapshot(both.parent) == before  # no -wal and no -shm left behind


def test_a_wal_database_being_written_is_read_without_writing(both: Path):
    with sqlite3.connect(both) as db:
        db.execute("PRAGMA journal_mode = wal")
    db.close()
    writer = sqlite3.connect(both)
    try:
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute(
            "INSERT INTO responses (id, model, prompt, response, datetime_utc) VALUES"
            " ('01jz0000000000000000000000', 'gpt-4o', 'still in the WAL', 'yes', '2025-07-01T00:00:00')"
        )
        writer.commit()
        writer.execute("BEGIN IMMEDIATE")
        writer.execute(
            "INSERT INTO responses (id, prompt, response) VALUES ('01jz1000000000000000000000', 'uncommitted', 'no')"
        )
        names = {path.name for path in both.parent.iterdir()}
        assert {"logs.db-wal", "logs.db-shm"} <= names
        files = {name: (both.parent / name).read_bytes() for name in ("logs.db", "logs.db-wal")}
        found = read(both)
        assert roles(found["01jz0000000000000000000000"])[0] == ("user", "still in the WAL")
        assert "01jz1000000000000000000000" not in found
        # The -shm is the shared memory every reader of a WAL database marks; the data stays as it was.
        assert {name: (both.parent / name).read_bytes() for name in files} == files
    finally:
        writer.rollback()
        writer.close()


def test_a_database_with_a_writer_mid_transaction_is_read(legacy: Path):
    writer = sqlite3.connect(legacy)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute(
            "INSERT INTO responses (id, prompt, response) VALUES ('01jz1000000000000000000000', 'uncommitted', 'no')"
        )
        found = read(legacy)
        assert len(found) == 4 and "01jz1000000000000000000000" not in found
    finally:
        writer.rollback()
        writer.close()


UNFINISHED_WRITE = """
import os, sqlite3, sys
writer = sqlite3.connect(sys.argv[1], isolation_level=None)
writer.execute("PRAGMA cache_size = 2")  # (the write's pages go to the file before it commits)
writer.execute("BEGIN")
writer.execute("UPDATE responses SET response = 'not committed'")
for number in range(300):
    writer.execute("INSERT INTO responses (id, prompt) VALUES (?, zeroblob(2000))", [f"filler{number}"])
os._exit(0)  # (stopped in the middle of its write)
"""


def test_a_write_left_unfinished_is_undone_in_a_copy_and_told(legacy: Path):
    responses = {key: session.messages[-1].text for key, session in read(legacy).items()}
    subprocess.run([sys.executable, "-c", UNFINISHED_WRITE, str(legacy)], check=True)
    assert legacy.with_name("logs.db-journal").stat().st_size > 0
    before = snapshot(legacy.parent)
    assert llm_logs.check(legacy.parent) is None
    problems: list[str] = []
    found = {session.key: session.messages[-1].text for session in llm_logs.read(legacy.parent, problems)}
    assert found == responses and "not committed" not in found.values()
    assert problems == [
        "logs.db: a write that did not finish left its rollback journal (logs.db-journal) beside it: read as it "
        "was before that write, from a private copy; nothing to do, the agent undoes that write the next time it "
        "opens it"
    ]
    assert snapshot(legacy.parent) == before


def test_a_logs_db_that_is_a_pipe_is_told_and_never_opened(tmp_path: Path):
    folder = tmp_path / "io.datasette.llm"
    folder.mkdir()
    os.mkfifo(folder / "logs.db")
    assert "logs.db is not a regular file" in (llm_logs.check(folder) or "")
    for source in (folder, folder / "logs.db"):  # (it would be waited on forever)
        problems: list[str] = []
        assert list(llm_logs.read(source, problems)) == []
        assert problems == [
            "logs.db is a named pipe (FIFO), not a database file: not read, and what the archive holds of it is "
            "kept. Put the agent's database back in its place for it to be read."
        ]
        assert isinstance(problems[0], Unread)


def test_llms_own_migrations_and_logging_are_read_alike(tmp_path: Path):
    pytest.importorskip("llm")
    pytest.importorskip("sqlite_utils")
    import llm
    import sqlite_utils
    from llm.migrations import migrate

    class Echo(llm.Model):
        model_id = "echo"
        supports_tools = True

        def execute(self, prompt, stream, response, conversation):
            if prompt.tools and not prompt.tool_results:
                response.add_tool_call(llm.ToolCall(name="read_file", arguments={"path": "app.py"}, tool_call_id="t1"))
                return
            if prompt.tool_results:
                yield f"The file says {prompt.tool_results[0].output}"
                return
            yield f"echo: {prompt.prompt}"

    def read_file(path: str) -> str:
        "Read a file."
        return "print('hi')"

    path = tmp_path / "logs.db"
    database = sqlite_utils.Database(path)
    migrate(database)
    model = Echo()
    conversation = model.conversation()
    for prompt in ("hello there", "second question"):
        response = conversation.prompt(prompt, system="be brief")
        response.text()
        response.log_to_db(database)
    for response in model.conversation().chain("read app.py", tools=[read_file]).responses():
        response.text()
        response.log_to_db(database)
    # A conversation logged by an older llm, in the tables 0.36's migrations keep.
    insert_legacy(database.conn)
    database.conn.commit()
    database.close()

    found = read(path)
    assert len(found) == 6
    echo = found[conversation.id]
    assert roles(echo) == [
        ("system", "be brief"),
        ("user", "hello there"),
        ("assistant", "echo: hello there"),
        ("user", "second question"),
        ("assistant", "echo: second question"),
    ]
    assert echo.models == ["echo"] and echo.title == "hello there" and echo.problems == []
    assert all(isinstance(m, Message) and m.timestamp for m in echo.messages)
    [tools] = [s for s in found.values() if s.title == "read app.py"]
    assert [m.role for m in tools.messages] == ["user", "assistant", "tool", "assistant"]
    assert tools.messages[1].tool_calls == [ToolCall(name="read_file", files=["app.py"], input='{"path":"app.py"}')]
    assert tools.messages[2].tool_output == "print('hi')"
    assert roles(found["01jvp3k5y8m2n4q6r8t0v2x4z6"])[1] == ("user", "Ten names for cheesecakes")
    assert found["01jvp4aaaaaaaaaaaaaaaaaaaa"].messages[1].tool_calls[1] == ToolCall(
        name="read_file", files=["notes/today.txt"], input='{"path":"notes/today.txt"}'
    )
