"""Warp's agent conversations: what is read (prompts and the commands the agent ran), what is
skipped and why, and hostile input."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

from archivist.agents import Session, warp

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "warp"
CONVERSATION = "6f1c2d3e-4a5b-4c6d-8e7f-90a1b2c3d4e5"


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(warp.read(path, problems)), problems


def copy(tmp_path: Path) -> Path:
    folder = tmp_path / "warp-terminal"
    folder.mkdir()
    shutil.copy(SAMPLE / "warp.sqlite", folder / "warp.sqlite")
    return folder


def change(folder: Path, sql: str, *values: object) -> None:
    with closing(sqlite3.connect(folder / "warp.sqlite")) as connection:
        connection.execute(sql, values)
        connection.commit()


def test_the_sample_is_read_with_its_prompts_commands_project_and_branch() -> None:
    (session,), problems = read(SAMPLE)
    assert problems == [] and session.problems == []
    assert (session.key, session.agent, session.project, session.branch, session.models) == (
        CONVERSATION,
        "warp",
        "/home/dev/src/captions-gateway",
        "retry-upstream",
        ["claude-4-5-sonnet"],
    )
    assert session.title == "Why does npm test fail on the upstream retry test? Fix it."
    assert (session.started, session.last) == ("2025-11-20T14:03:11Z", "2025-11-20T14:08:19Z")
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "user", "assistant", "tool"]
    call = session.messages[1].tool_calls[0]
    assert (call.name, call.commands) == ("run_command", ["npm test -- upstream"])
    assert session.messages[2].tool_output.endswith("Expected 3 calls, received 1\n[exit code 1]")
    assert "\x1b" not in session.messages[2].tool_output and "\r" not in session.messages[2].tool_output
    assert all(m.text == "" for m in session.messages if m.role == "assistant")  # Warp keeps no answer


def test_check_takes_the_folder_or_the_database_and_says_why_not(tmp_path: Path) -> None:
    assert warp.check(SAMPLE) is None and warp.check(SAMPLE / "warp.sqlite") is None
    assert "holds no warp.sqlite" in (warp.check(tmp_path) or "")
    other = tmp_path / "warp.sqlite"
    with closing(sqlite3.connect(other)) as connection:
        connection.execute("CREATE TABLE t (x)")
    assert "has no ai_queries table" in (warp.check(tmp_path) or "")
    sessions, problems = read(tmp_path)
    assert sessions == [] and any("has no ai_queries table" in problem for problem in problems)
    other.write_text("not a database")
    assert "is not a SQLite database" in (warp.check(other) or "")


def test_hostile_rows_are_skipped_and_told_never_raised(tmp_path: Path) -> None:
    folder = copy(tmp_path)
    change(folder, "UPDATE ai_queries SET input = ? WHERE exchange_id = 'a1f2'", "{not json")
    change(folder, "UPDATE blocks SET ai_metadata = ? WHERE ai_metadata IS NULL", "[1, 2]")
    change(
        folder,
        "INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input, output_status) VALUES (?, ?, ?, ?, ?)",
        "z1",
        "",
        "yesterday",
        json.dumps([{"Query": {"text": "lost"}}]),
        "Completed",
    )
    (session,), problems = read(folder)
    assert session.problems == ["exchange 3: its input is no query: skipped"]
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "assistant", "tool"]
    assert "1 command block of no readable ai_metadata skipped" in problems
    assert "warp.sqlite: 1 exchange of no conversation id skipped" in problems


def test_a_conversation_whose_prompt_is_gone_is_no_session(tmp_path: Path) -> None:
    folder = copy(tmp_path)
    change(folder, "UPDATE ai_queries SET input = '[]'")
    assert read(folder) == ([], [])


def test_a_database_without_blocks_gives_the_prompts_alone(tmp_path: Path) -> None:
    folder = copy(tmp_path)
    change(folder, "DROP TABLE blocks")
    (session,), problems = read(folder)
    assert [m.role for m in session.messages] == ["user", "user"] and problems == []
