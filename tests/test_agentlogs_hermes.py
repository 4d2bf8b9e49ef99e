"""Hermes Agent's sessions: what is read from state.db and the transcripts, what is skipped and why, and hostile input."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from archivist.agents import Session, Usage, hermes, registry

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "hermes"
STORED = "20251112_091500_a1b2c3d4"


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(hermes.read(path, problems)), problems


def lines(*rows: Any) -> str:
    return "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows)


def copy_sample(tmp_path: Path) -> Path:
    home = tmp_path / "hermes"
    shutil.copytree(SAMPLE, home)
    return home


def test_the_sample_is_read_with_titles_calls_edits_thinking_times_and_usage() -> None:
    (stored, telegram, discord), problems = read(SAMPLE)
    assert problems == [] and stored.problems == telegram.problems == discord.problems == []
    assert [s.key for s in (stored, telegram, discord)] == [
        STORED,
        "20251203_141020_9f8e7d6c",
        "20251219_080000_5a6b7c8d",
    ]
    assert (stored.agent, stored.title, stored.titled) == ("hermes", "Fix the failing date parser test", True)
    assert stored.models == ["anthropic/claude-sonnet-4"] and stored.project is None
    assert (stored.started, stored.last) == ("2025-11-12T09:15:04Z", "2025-11-12T09:17:40Z")
    assert [m.role for m in stored.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert stored.messages[1].thinking == "Look at the parser first."
    assert stored.messages[1].model == "anthropic/claude-sonnet-4"
    assert stored.messages[2].tool_output.startswith("def parse_date(text):")
    read_call = stored.messages[1].tool_calls[0]
    assert (read_call.name, read_call.files, read_call.input) == (
        "read_file",
        ["src/dates.py"],
        '{"path":"src/dates.py"}',
    )
    patch = stored.messages[3].tool_calls[0]
    assert (patch.name, patch.files, patch.input) == (
        "patch",
        ["src/dates.py"],
        '{"mode":"replace","path":"src/dates.py"}',
    )
    (edit,) = patch.edits
    assert (edit.file, edit.old, edit.new) == (
        "src/dates.py",
        'return datetime.strptime(text, "%Y-%m-%d")',
        'return datetime.strptime(text.strip(), "%Y-%m-%d")',
    )
    assert [m.usage for m in stored.messages[:-1]] == [None] * 5
    assert stored.messages[-1].usage == Usage(input=5210, output=860, cache_write=1830, cache_read=12400, cost=0.0472)
    assert stored.files == [SAMPLE / "state.db"]

    assert (telegram.title, telegram.titled, telegram.models) == (
        "How much disk space is left on the build server?",
        False,
        ["openai/gpt-5"],
    )
    terminal = telegram.messages[1].tool_calls[0]
    assert (terminal.name, terminal.commands, terminal.input) == ("terminal", ["df -h /"], "")
    assert telegram.messages[1].thinking == "A quick df will tell."
    assert (telegram.started, telegram.last) == ("2025-12-03T14:10:21Z", "2025-12-03T14:10:28Z")
    assert all(m.usage is None for m in telegram.messages)

    assert discord.models == ["nousresearch/hermes-4-405b"]
    assert [m.role for m in discord.messages] == ["user", "assistant"]
    assert discord.messages[1].text.startswith("Tags pushed at midnight")


def test_the_sessions_folder_state_db_and_one_transcript_are_sources_too() -> None:
    assert hermes.check(SAMPLE) is None
    assert hermes.check(SAMPLE / "sessions") is None
    assert hermes.check(SAMPLE / "state.db") is None
    assert hermes.check(SAMPLE / "sessions" / "20251203_141020_9f8e7d6c.jsonl") is None
    assert [s.key for s in read(SAMPLE / "state.db")[0]] == [STORED]
    assert [s.key for s in read(SAMPLE / "sessions")[0]] == ["20251203_141020_9f8e7d6c", "20251219_080000_5a6b7c8d"]
    (one,), _ = read(SAMPLE / "sessions" / "session_20251219_080000_5a6b7c8d.json")
    assert one.key == "20251219_080000_5a6b7c8d"


def test_the_registry_names_the_kind_and_its_default_home() -> None:
    kind = registry.kinds(registry.manager(entry_points=False))["hermes"]
    assert kind.reader == "archivist.agents.hermes" and kind.sample == "hermes"
    assert {location.env for location in kind.locations} == {"HERMES_HOME"}


def test_other_folders_and_files_are_refused_with_what_was_expected(tmp_path: Path) -> None:
    assert "does not exist" in (hermes.check(tmp_path / "none") or "")
    assert "holds neither state.db nor Hermes transcripts" in (hermes.check(tmp_path) or "")
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    assert "is not a Hermes transcript" in (hermes.check(other) or "")
    foreign = tmp_path / "other.db"
    with sqlite3.connect(foreign) as connection:
        connection.execute("CREATE TABLE things (id)")
    connection.close()
    assert "has no sessions.id, messages.session_id, messages.role" in (hermes.check(foreign) or "")


def test_a_session_of_state_db_without_messages_is_read_from_its_transcript(tmp_path: Path) -> None:
    home = copy_sample(tmp_path)
    with sqlite3.connect(home / "state.db") as connection:
        connection.execute(
            "INSERT INTO sessions (id, source, model, started_at, title, input_tokens, output_tokens) "
            "VALUES ('20251203_141020_9f8e7d6c', 'telegram', 'openai/gpt-5', 1764771020, 'Disk space', 900, 120)"
        )
    connection.close()
    sessions, problems = read(home)
    assert problems == [] and len(sessions) == 3
    telegram = next(s for s in sessions if s.key == "20251203_141020_9f8e7d6c")
    assert telegram.title == "Disk space" and telegram.titled
    assert telegram.messages[-1].usage == Usage(input=900, output=120)
    assert telegram.files == [home / "state.db", home / "sessions" / "20251203_141020_9f8e7d6c.jsonl"]


def test_the_jsonl_transcript_is_read_before_the_snapshot_of_the_same_session(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "s1.jsonl").write_text(lines({"role": "user", "content": "from the lines"}))
    (folder / "session_s1.json").write_text(
        json.dumps({"messages": [{"role": "user", "content": "from the snapshot"}]})
    )
    (one,), problems = read(tmp_path)
    assert problems == [] and one.key == "s1" and one.messages[0].text == "from the lines"


def test_bad_lines_and_records_are_skipped_and_told(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "s1.jsonl").write_text(
        lines(
            {"role": "session_meta", "model": "m-1", "timestamp": "2025-11-01T10:00:00"},
            "{not json",
            [1, 2],
            {"role": "narrator", "content": "?"},
            {"role": "user", "content": "go", "timestamp": "2025-11-01T10:00:01"},
            {"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}, "x"], "content": "done"},
            {"role": "system", "content": "You are Hermes."},
        )
    )
    (one,), problems = read(tmp_path)
    assert problems == [] and [m.role for m in one.messages] == ["user", "assistant"]
    assert one.problems == [
        "5 messages skipped: 1 not JSON, 1 not a JSON object, 1 of no known role, 2 a tool call without a name"
    ]
    assert one.messages[1].model == "m-1" and one.messages[1].tool_calls == []


def test_a_skill_prompt_is_read_as_what_the_user_typed(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    skill = (
        '[SYSTEM: The user has invoked the "debugging" skill]\n\n---\nname: debugging\n---\nSteps...\n\n'
        "The user has provided the following instruction alongside the skill invocation: why is CI red?"
    )
    bare = '[SYSTEM: The user has invoked the "release" skill]\n\n---\nname: release\n---\n'
    (folder / "s1.jsonl").write_text(lines({"role": "user", "content": skill}, {"role": "user", "content": bare}))
    (one,), _ = read(tmp_path)
    assert [m.text for m in one.messages] == ["why is CI red?", "[Skill: release]"]


def test_a_transcript_without_messages_and_a_damaged_state_db_are_told(tmp_path: Path) -> None:
    home = copy_sample(tmp_path)
    (home / "state.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    (home / "sessions" / "empty.jsonl").write_text(lines({"role": "session_meta"}))
    (home / "sessions" / "session_bad.json").write_text("[1]")
    sessions, problems = read(home)
    assert [s.key for s in sessions] == ["20251203_141020_9f8e7d6c", "20251219_080000_5a6b7c8d"]
    assert problems[0].startswith("state.db cannot be read")
    assert "empty.jsonl: no message" in problems and "session_bad.json: not a JSON object" in problems


def test_hostile_values_never_raise(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "s1.jsonl").write_text(
        lines(
            {"role": "user", "content": ["a", {"type": "text", "text": "b"}], "timestamp": 12},
            {"role": "assistant", "content": {"x": 1}, "reasoning": 5, "tool_calls": '[{"function": 3}]'},
            {"role": "tool", "content": None, "timestamp": "not a time"},
            {"role": "assistant", "tool_calls": [{"function": {"name": "patch", "arguments": '{"path": 3}'}}]},
        )
    )
    (one,), problems = read(tmp_path)
    assert problems == [] and [m.role for m in one.messages] == ["user", "assistant", "tool", "assistant"]
    assert one.messages[1].text == '{"x":1}' and one.messages[3].tool_calls[0].name == "patch"
