"""Crush's ``.crush/crush.db`` and the Go OpenCode's ``.opencode/opencode.db``: what is read, and a
database damaged or a pipe.

Run as a script from the repository root, it writes the two sample databases
(``sample-agent-logs/crush/.crush/crush.db``, ``sample-agent-logs/opencode/.opencode/opencode.db``):
their ``sessions`` and ``messages`` tables as charmbracelet/crush
``internal/db/migrations/20250424200609_initial.sql`` makes them, with the parts each program writes.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from archivist.agents import Unread, crush, opencode

LOGS = Path(__file__).resolve().parent.parent / "sample-agent-logs"
SCHEMA = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    parent_session_id TEXT,
    title TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0.0,
    updated_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    summary_message_id TEXT
);
CREATE TABLE files (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    path TEXT NOT NULL,
    content TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    parts BLOB NOT NULL DEFAULT '[]',
    model TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER,
    provider TEXT,
    is_summary_message INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_messages_session_id ON messages (session_id);
"""


def part(kind, **data):
    return {"type": kind, "data": data}


def call(identity, name, **arguments):
    return part("tool_call", id=identity, name=name, input=json.dumps(arguments), finished=True)


def result(identity, name, content):
    return part("tool_result", tool_call_id=identity, name=name, content=content, metadata="", is_error=False)


def stop(at):
    return part("finish", reason="end_turn", time=at)


def write(path: Path, model: str, sessions: list, messages: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript(SCHEMA)
    connection.executemany(
        "INSERT INTO sessions (id, parent_session_id, title, message_count, prompt_tokens, completion_tokens, cost,"
        " updated_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        sessions,
    )
    for number, (session, role, parts, at) in enumerate(messages):
        connection.execute(
            "INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at, finished_at, provider)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                f"msg-{number:02}",
                session,
                role,
                json.dumps(parts),
                model if role == "assistant" else "",
                at,
                at,
                at,
                "anthropic" if role == "assistant" else None,
            ],
        )
    connection.commit()
    connection.execute("VACUUM")
    connection.close()


MAIN, AGENT = "5f0c7a4e-1b2d-4c3e-9a8b-0d1e2f3a4b5c", "toolu_01AgentSearch"
GO_MAIN = "9a1b2c3d-4e5f-4a6b-8c7d-1e2f3a4b5c6d"
T = 1764583200  # 2025-12-01T10:00:00Z


def write_samples(logs: Path = LOGS) -> None:
    """The two sample databases, under ``logs``."""
    write(
        logs / Path("crush/.crush/crush.db"),
        "claude-sonnet-4-5",
        [
            (MAIN, None, "Fix the failing date parser test", 7, 18_200, 640, 0.0421, T + 60, T),
            (AGENT, MAIN, "New Agent Session", 2, 3_100, 120, 0.0062, T + 30, T + 20),
        ],
        [
            (MAIN, "user", [part("text", text="The date parser test fails on leap years. Fix it."), stop(T)], T),
            (
                MAIN,
                "assistant",
                [
                    part("reasoning", thinking="Find where the parser handles February first."),
                    part("text", text="Looking for the parser."),
                    call(AGENT, "agent", prompt="Find the date parser"),
                    stop(T + 10),
                ],
                T + 10,
            ),
            (MAIN, "tool", [result(AGENT, "agent", "The parser is in src/dates.py.")], T + 30),
            (
                MAIN,
                "assistant",
                [
                    call("toolu_02View", "view", file_path="src/dates.py"),
                    call("toolu_03Edit", "edit", file_path="src/dates.py", old_string="% 100", new_string="% 400"),
                    call("toolu_04Bash", "bash", command="pytest -q tests/test_dates.py"),
                ],
                T + 40,
            ),
            (
                MAIN,
                "tool",
                [
                    result("toolu_02View", "view", "def is_leap(year): ..."),
                    result("toolu_03Edit", "edit", "edited"),
                    result("toolu_04Bash", "bash", "3 passed"),
                ],
                T + 50,
            ),
            (
                MAIN,
                "assistant",
                [part("text", text="Fixed: a year divisible by 400 is a leap year."), stop(T + 60)],
                T + 60,
            ),
            (
                MAIN,
                "user",
                [
                    part("text", text="Here is the screenshot of the report."),
                    part("binary", Path="report.png", MIMEType="image/png", Data="iVBORw0KGgo="),
                ],
                T + 60,
            ),
            (AGENT, "user", [part("text", text="Find the date parser"), stop(T + 20)], T + 20),
            (
                AGENT,
                "assistant",
                [
                    call("toolu_05Grep", "grep", pattern="def is_leap", path="src"),
                    part("text", text="The parser is in src/dates.py."),
                    stop(T + 30),
                ],
                T + 30,
            ),
        ],
    )

    GO_MAIN = "9a1b2c3d-4e5f-4a6b-8c7d-1e2f3a4b5c6d"
    write(
        logs / Path("opencode/.opencode/opencode.db"),
        "gpt-4.1",
        [(GO_MAIN, None, "New Session", 3, 2_400, 210, 0.0093, T + 120, T + 100)],
        [
            (GO_MAIN, "user", [part("text", text="List the files of this project"), stop(T + 100)], T + 100),
            (GO_MAIN, "assistant", [call("call_ls", "ls", path="."), stop(T + 110)], T + 110),
            (GO_MAIN, "tool", [result("call_ls", "ls", "README.md\nmain.go")], T + 115),
            (GO_MAIN, "assistant", [part("text", text="It holds README.md and main.go."), stop(T + 120)], T + 120),
        ],
    )


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    """The samples, written afresh in a folder of their own."""
    write_samples(tmp_path)
    return tmp_path


def read(kind, path: Path) -> tuple[list, list[str]]:
    problems: list[str] = []
    return list(kind.read(path, problems)), problems


def test_the_committed_samples_read_as_written(logs: Path) -> None:
    for source in ("crush", "opencode/.opencode"):
        kind = crush if source == "crush" else opencode
        committed, _ = read(kind, LOGS / source)
        written, _ = read(kind, logs / source)
        assert [(s.key, s.title, len(s.messages)) for s in committed] == [
            (s.key, s.title, len(s.messages)) for s in written
        ]


def test_sessions_messages_and_a_sub_agent(logs: Path) -> None:
    found, problems = read(crush, logs / "crush")
    assert problems == []
    main, agent = found
    assert (main.key, main.agent, main.title) == (MAIN, "crush", "Fix the failing date parser test")
    assert main.project == str(logs / "crush") and main.models == ["claude-sonnet-4-5"]
    assert (main.started, main.last) == ("2025-12-01T10:00:00Z", "2025-12-01T10:01:00Z")
    assert [message.role for message in main.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "tool",
        "tool",
        "assistant",
        "user",
    ]
    assert main.messages[1].thinking == "Find where the parser handles February first."
    assert main.messages[2].tool_output == "The parser is in src/dates.py."
    assert main.messages[-1].text == "Here is the screenshot of the report.\n\n[image: report.png]"
    assert main.messages[-1].attachments[0].type == "image/png"
    assert main.files == [logs / "crush" / ".crush" / "crush.db"]
    # a sub-agent's session: its parent, and the default title given way to its first request
    assert (agent.parent, agent.title) == (MAIN, "Find the date parser")


def test_tool_calls_name_files_commands_and_the_session_they_started(logs: Path) -> None:
    (main, agent), _ = read(crush, logs / "crush")
    calls = [call for message in main.messages for call in message.tool_calls]
    assert [(call.name, call.files, call.commands, call.agent) for call in calls] == [
        ("agent", [], [], AGENT),
        ("view", ["src/dates.py"], [], None),
        ("edit", ["src/dates.py"], [], None),
        ("bash", [], ["pytest -q tests/test_dates.py"], None),
    ]
    assert [(call.name, call.files) for call in agent.messages[1].tool_calls] == [("grep", ["src"])]


def test_the_session_usage_is_on_its_last_answer(logs: Path) -> None:
    (main, agent), _ = read(crush, logs / "crush")
    answers = [message for message in main.messages if message.role == "assistant"]
    assert [message.usage for message in answers[:-1]] == [None, None]
    usage = answers[-1].usage
    assert usage is not None and (usage.input, usage.output, usage.cost) == (18_200, 640, 0.0421)
    assert agent.messages[-1].usage is not None and agent.messages[-1].usage.cost == 0.0062


def test_the_source_is_the_project_its_crush_folder_or_the_database(logs: Path) -> None:
    for source in (logs / "crush", logs / "crush" / ".crush", logs / "crush" / ".crush" / "crush.db"):
        assert crush.check(source) is None
        assert [session.key for session in read(crush, source)[0]] == [MAIN, AGENT]
    assert "holds neither crush.db nor .crush/crush.db" in (crush.check(logs) or "")
    other = logs / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    assert "has no sessions and messages tables" in (crush.check(other) or "")
    assert read(crush, other) == ([], ["other.db: no sessions and messages tables: not read"])


def test_the_go_opencode_database_is_read_by_the_opencode_kind(logs: Path) -> None:
    folder = logs / "opencode" / ".opencode"
    for source in (folder.parent, folder, folder / "opencode.db"):
        assert opencode.check(source) is None
        (session,), problems = read(opencode, source)
        assert problems == []
        assert (session.key, session.agent, session.title) == (GO_MAIN, "opencode", "List the files of this project")
        assert session.project == str(logs / "opencode") and session.models == ["gpt-4.1"]
        assert session.messages[1].tool_calls[0].files == ["."]
        assert session.messages[-1].usage is not None and session.messages[-1].usage.cost == 0.0093


@pytest.mark.parametrize("damage", ["garbage", "cut short", "bad parts"])
def test_a_damaged_database_is_a_problem_not_a_crash(logs: Path, damage: str) -> None:
    database = logs / "crush" / ".crush" / "crush.db"
    whole = database.read_bytes()
    if damage == "garbage":
        database.write_bytes(b"not a database at all" * 100)
    elif damage == "cut short":
        database.write_bytes(whole[:5000])
    else:
        connection = sqlite3.connect(database)
        connection.execute("UPDATE messages SET parts = '[{\"type\": \"text\", ' WHERE id = 'msg-00'")
        connection.execute('UPDATE messages SET parts = \'[{"type": "video", "data": {}}]\' WHERE id = \'msg-01\'')
        connection.execute("UPDATE messages SET role = 'robot' WHERE id = 'msg-02'")
        connection.commit()
        connection.close()
    assert crush.check(logs / "crush") is None  # (told when it is read)
    found, problems = read(crush, logs / "crush")
    if damage == "bad parts":
        main = found[0]
        assert main.problems[0].startswith("a message not read: ")
        assert main.problems[1:] == ["1 message(s) of no known shape skipped", "1 part(s) of no known shape skipped"]
        assert problems == []
    else:
        assert found == [] or damage == "cut short"
        assert problems and all(isinstance(problem, Unread) for problem in problems)
        assert problems[0].startswith("crush.db cannot be read")


def test_a_database_that_is_a_pipe_is_told_and_never_opened(tmp_path: Path) -> None:
    folder = tmp_path / "project" / ".crush"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "crush.db")  # (it would be waited on forever)
    assert crush.check(tmp_path / "project") is None  # (told when it is read)
    found, problems = read(crush, tmp_path / "project")
    assert found == [] and len(problems) == 1 and isinstance(problems[0], Unread)
    assert problems[0].startswith("crush.db is a named pipe (FIFO), not a database file: not read")
    assert "is neither a regular file nor a folder" in (crush.check(folder / "crush.db") or "")
    assert read(crush, folder / "crush.db")[0] == []


def test_an_empty_database_file_holds_nothing_and_nothing_is_written(logs: Path) -> None:
    folder = logs / "crush" / ".crush"
    before = sorted(os.listdir(folder))
    read(crush, logs / "crush")
    assert sorted(os.listdir(folder)) == before
    shutil.rmtree(folder)
    folder.mkdir()
    (folder / "crush.db").write_bytes(b"")
    assert read(crush, logs / "crush") == ([], [])


if __name__ == "__main__":
    write_samples()


def test_a_session_of_more_text_than_is_held_whole_is_read_in_parts_and_stored_alike(tmp_path, monkeypatch) -> None:
    from test_session_parts import index, stored

    from archivist.agents.crush import store as crush_store
    from archivist.archive import prepared

    messages = [(MAIN, "user", [part("text", text="Tidy the date parser."), stop(T)], T)]
    for n in range(1, 30):
        said = part("text", text=f"step {n}: " + "word " * 60)
        edited = call(f"t{n}", "edit", file_path="src/dates.py", old_string=f"v{n}", new_string=f"v{n + 1}")
        messages.append((MAIN, "assistant", [said, edited, stop(T + n)], T + n))
        messages.append((MAIN, "tool", [result(f"t{n}", "edit", f"edited {n}")], T + n))
    source = tmp_path / "crush"
    write(
        source / ".crush" / "crush.db",
        "claude-sonnet-4-5",
        [(MAIN, None, "New Session", 59, 900, 40, 0.5, T + 99, T)],
        messages,
    )
    whole = stored(index(tmp_path, "whole", source, "crush"))
    monkeypatch.setattr(crush_store, "WHOLE_SESSION", 2000)
    monkeypatch.setattr(crush_store, "SESSION_PART", 1500)
    problems: list[str] = []
    reading = crush.read(source, problems)
    session = next(reading)  # (its parts are read while the database is open: before the next session)
    assert session.more is not None
    first = [message.text for message in session.messages]
    parts = [list(part) for part in session.more]
    assert len(parts) > 2 and sum(len(part) for part in parts) + len(first) == 59
    assert session.title == "Tidy the date parser." and session.last == "2025-12-01T10:01:39Z"
    assert parts[-1][-2].usage is not None and parts[-1][-2].usage.cost == 0.5  # the last answer's
    again = session.again() if session.again else None
    assert again is not None and [message.text for message in again.messages] == first
    assert list(reading) == [] and problems == []
    stores: list[str] = []
    store = prepared._store_parts

    def counted(session, *args):
        stores.append(session.key)
        yield from store(session, *args)

    monkeypatch.setattr(prepared, "_store_parts", counted)
    in_parts = stored(index(tmp_path, "parts", source, "crush"))
    assert stores == [MAIN]  # (stored part by part)
    for table in ("documents", "messages", "file_calls", "usage_hours"):
        assert in_parts[table] == whole[table], table
    assert sum(changed for *_, changed in whole["file_calls"]) == 29
