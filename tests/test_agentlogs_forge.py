"""Forge's conversations: what is read from .forge.db, what is skipped and why, and hostile input."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from archivist.agents import Session, Usage, forge, registry

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "forge"
LEDGER = "7c0f5e1a-3b2d-4c8e-9a61-2f4d8b9e0c11"
SCHEMA = (
    "CREATE TABLE conversations (conversation_id TEXT PRIMARY KEY NOT NULL, title TEXT, workspace_id BIGINT NOT NULL, "
    "context TEXT, created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP, metrics TEXT)"
)


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(forge.read(path, problems)), problems


def store(folder: Path, *rows: tuple[str, Any, Any]) -> Path:
    """A .forge.db in ``folder`` holding conversations of (id, title, context: a document, a text or None)."""
    folder.mkdir(parents=True, exist_ok=True)
    database = folder / ".forge.db"
    with sqlite3.connect(database) as connection:
        connection.execute(SCHEMA)
        for key, title, context in rows:
            text = context if context is None or isinstance(context, str) else json.dumps(context)
            connection.execute(
                "INSERT INTO conversations (conversation_id, title, workspace_id, context, created_at, updated_at) "
                "VALUES (?, ?, 1, ?, '2025-11-01 10:00:00.123456789', '2025-11-01 10:05:00')",
                (key, title, text),
            )
    connection.close()
    return database


def text(role: str, content: str, **more: Any) -> dict[str, Any]:
    return {"message": {"text": {"role": role, "content": content, **more}}}


def test_the_sample_is_read_with_its_title_project_calls_edit_thinking_and_usage() -> None:
    (ledger, question), problems = read(SAMPLE)
    assert problems == [] and ledger.problems == question.problems == []
    assert (ledger.key, ledger.agent, ledger.title, ledger.titled) == (
        LEDGER,
        "forge",
        "Fix CSV export dropping last row",
        True,
    )
    assert ledger.project == "/home/dev/src/ledger" and ledger.models == ["anthropic/claude-sonnet-4.5"]
    assert (ledger.started, ledger.last) == ("2025-11-20T16:02:11Z", "2025-11-20T16:02:29Z")
    roles = [m.role for m in ledger.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
    assert ledger.messages[0].text == "The CSV export drops the last row. Please fix it."  # raw_content, no <task>
    assert ledger.messages[1].thinking == "Probably an off-by-one in the loop."
    assert ledger.messages[2].tool_output.startswith('<file path="/home/dev/src/ledger/export.py">')
    calls = [(c.name, c.files, c.commands, c.input) for m in ledger.messages for c in m.tool_calls]
    assert calls == [
        ("read", ["/home/dev/src/ledger/export.py"], [], '{"file_path":"/home/dev/src/ledger/export.py"}'),
        ("patch", ["/home/dev/src/ledger/export.py"], [], '{"file_path":"/home/dev/src/ledger/export.py"}'),
        ("shell", [], ["pytest tests/test_export.py -q"], '{"cwd":"/home/dev/src/ledger"}'),
    ]
    (edit,) = ledger.messages[3].tool_calls[0].edits
    assert (edit.old, edit.new) == ("for i in range(len(rows) - 1):", "for i in range(len(rows)):")
    assert ledger.messages[1].usage == Usage(input=310, output=96, cache_read=3900, cost=0.0031)
    total = sum((m.usage for m in ledger.messages if m.usage), Usage())
    assert (total.input, total.output, total.cache_read) == (1030, 336, 17100)
    assert (question.title, question.titled, question.models) == (
        "What does the reconcile command do?",
        False,
        ["openai/gpt-5"],
    )
    assert question.messages[-1].usage == Usage(input=2310, output=41)
    assert ledger.files == [SAMPLE / ".forge.db"]


def test_the_folder_and_the_database_are_sources_and_others_are_refused(tmp_path: Path) -> None:
    assert forge.check(SAMPLE) is None and forge.check(SAMPLE / ".forge.db") is None
    assert [s.key for s in read(SAMPLE / ".forge.db")[0]] == [LEDGER, "a94d2c07-61e8-4f3b-b5d0-8e7c1f2a6d34"]
    assert "holds no .forge.db" in (forge.check(tmp_path) or "")
    assert "does not exist" in (forge.check(tmp_path / "none") or "")
    other = tmp_path / "other" / ".forge.db"
    other.parent.mkdir()
    other.write_text("not a database")
    assert "is not a SQLite database" in (forge.check(other.parent) or "")
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as connection:
        connection.execute("CREATE TABLE things (id)")
    connection.close()
    assert "has no conversations table" in (forge.check(foreign) or "")
    sessions, problems = read(foreign)
    assert sessions == [] and problems == ["foreign.db has no conversations table: not Forge's database: not read"]


def test_the_registry_names_the_kind_and_its_folders() -> None:
    kind = registry.kinds(registry.manager(entry_points=False))["forge"]
    assert kind.reader == "archivist.agents.forge" and kind.sample == "forge"
    assert [(location.folder, location.env) for location in kind.locations] == [
        ("~/.forge", "FORGE_CONFIG"),
        ("~/forge", ""),
    ]


def test_conversations_never_started_or_unreadable_are_skipped_and_told(tmp_path: Path) -> None:
    started = {"messages": [text("User", "hello", timestamp="2025-11-01T10:00:01Z"), text("Assistant", "hi")]}
    store(
        tmp_path,
        ("a-none", None, None),
        ("b-bad", None, "{not json"),
        ("c-flat", None, {"messages": "x"}),
        ("d-empty", None, {"messages": [text("System", "prompt")]}),
        ("e-ok", "Greeting", started),
    )
    sessions, problems = read(tmp_path)
    assert [s.key for s in sessions] == ["e-ok"]
    assert problems[0].startswith("b-bad: its context skipped:")
    assert problems[1:] == ["c-flat: its context skipped: no list of messages"]
    (one,) = sessions
    assert one.project is None and one.started == "2025-11-01T10:00:01Z" and one.last == "2025-11-01T10:00:01Z"


def test_bad_entries_are_skipped_and_counted(tmp_path: Path) -> None:
    context = {
        "messages": [
            "x",
            {"message": {"video": {}}},
            text("Narrator", "?"),
            text("User", "", raw_content={"Text": "typed"}),
            text("Assistant", "done", tool_calls=[{"arguments": {}}, "y"]),
            {"message": {"tool": {"call_id": "c1", "output": "plain"}}},
            {"message": {"image": {"mime_type": "image/png", "data": "aGVsbG8="}}},
        ]
    }
    store(tmp_path, ("k", None, context))
    (one,), problems = read(tmp_path)
    assert problems == []
    assert [m.role for m in one.messages] == ["user", "assistant", "tool", "user"]
    assert one.messages[0].text == "typed" and one.messages[2].tool_output == "plain"
    assert one.messages[3].attachments[0].type == "image/png"
    assert one.problems == [
        "5 messages skipped: 1 not a message entry, 1 of no known kind, 1 of no known role, 2 a tool call without a name"
    ]
    assert (one.started, one.last) == ("2025-11-01T10:00:00Z", "2025-11-01T10:05:00Z")  # the row's times


def test_an_approximate_count_is_no_count_and_hostile_values_never_raise(tmp_path: Path) -> None:
    context = {
        "messages": [
            text("User", "go", timestamp=5),
            {
                "message": {"text": {"role": "Assistant", "content": "a", "reasoning_details": [{"text": 3}, "z"]}},
                "usage": {"prompt_tokens": {"approx": 500}, "completion_tokens": {"actual": -1}, "cost": "1"},
            },
            {
                "message": {
                    "text": {
                        "role": "Assistant",
                        "content": {"x": 1},
                        "tool_calls": [{"name": "patch", "arguments": "{"}],
                    }
                },
                "usage": "none",
            },
            {"message": {"tool": {"output": {"values": [{"image": {}}, {"text": "t"}]}}}},
        ]
    }
    store(tmp_path, ("k", "", context))
    (one,), problems = read(tmp_path)
    assert problems == [] and one.title == "go" and not one.titled
    assert [m.role for m in one.messages] == ["user", "assistant", "assistant", "tool"]
    assert one.messages[1].usage is None and one.messages[2].usage is None
    assert one.messages[2].tool_calls[0].name == "patch" and one.messages[3].tool_output == "t"


def test_a_copy_of_the_sample_reads_the_same(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "forge")
    assert [s.key for s in read(tmp_path / "forge")[0]] == [s.key for s in read(SAMPLE)[0]]
