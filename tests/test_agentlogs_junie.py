"""JetBrains Junie's sessions: what is read, what is skipped and why, and hostile input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from archivist.agents import Session, junie, registry

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "junie"
LEDGER = SAMPLE / "sessions" / "session-251118-091200-k3vq"


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(junie.read(path, problems)), problems


def lines(*rows: Any) -> str:
    return "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows)


def session_folder(home: Path, name: str, *rows: Any, index: list[dict[str, Any]] | None = None) -> Path:
    sessions = home / "sessions"
    folder = sessions / name
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text(lines(*rows))
    if index is not None:
        (sessions / "index.jsonl").write_text(lines(*index))
    return folder


def a2ux(event: dict[str, Any], ms: int | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {"kind": "SessionA2uxEvent", "event": {"state": "IN_PROGRESS", "agentEvent": event}}
    if ms is not None:
        row["timestampMs"] = ms
    return row


def test_the_sample_is_read_with_its_calls_edit_thinking_times_and_usage() -> None:
    (older, ledger), problems = read(SAMPLE)
    assert problems == [] and older.problems == [] and ledger.problems == []
    assert (ledger.key, ledger.agent, ledger.title) == (
        "session-251118-091200-k3vq",
        "junie",
        "Decimal amounts in the CSV import",
    )
    assert ledger.project == "/home/dev/src/ledger"
    assert ledger.models == ["claude-sonnet-4-5-20250929", "gpt-4.1-mini-2025-04-14"]
    assert (ledger.started, ledger.last) == ("2025-11-18T09:12:00Z", "2025-11-18T09:12:25Z")
    assert [m.role for m in ledger.messages] == ["user", "assistant", "assistant", "assistant", "tool", "assistant"]
    first, read_file, edit_file, run, output, answer = ledger.messages
    assert first.text.startswith("Amounts in the CSV import lose cents") and first.timestamp == "2025-11-18T09:12:00Z"
    assert read_file.thinking.startswith("The float conversion") and read_file.tool_calls[0].files == [
        "ledger/importer.py"
    ]
    (change,) = edit_file.tool_calls
    (edit,) = change.edits
    assert (change.name, change.files, edit.file) == ("file_changes", ["ledger/importer.py"], "ledger/importer.py")
    assert edit.old is not None and "float(" in edit.old and edit.new is not None and "Decimal(" in edit.new
    assert (
        run.tool_calls[0].commands == ["pytest tests/test_importer.py -q"] and run.timestamp == "2025-11-18T09:12:19Z"
    )
    assert output.tool_output.endswith("6 passed in 0.41s")
    assert answer.text.startswith("`parse_amount` now returns a `Decimal`") and "ANSWER" not in answer.text
    usages = [m.usage for m in ledger.messages]
    assert usages[0] is None and usages[4] is None
    spent = usages[1]
    assert spent is not None and (spent.input, spent.output, spent.cache_write, spent.cache_read) == (3, 142, 5118, 0)
    assert spent.cost == 0.021354
    last = usages[5]  # the task-naming call after the answer is the turn's last message's
    assert last is not None and (last.input, last.output) == (794, 6)


def test_an_older_session_without_event_times_takes_the_index_s_times_and_title() -> None:
    (older, _), _ = read(SAMPLE)
    assert older.title == "Python versions in the CI matrix" and older.project is None
    assert (older.started, older.last) == ("2025-10-27T16:40:05Z", "2025-10-27T16:40:31Z")
    assert [m.role for m in older.messages] == ["user", "assistant", "tool", "assistant", "system"]
    (call,) = older.messages[1].tool_calls
    assert call.name == "Search" and json.loads(call.input) == {
        "text": 'Found "python-version"',
        "details": ".github/workflows/ci.yml",
    }
    assert older.messages[2].tool_output.startswith(".github/workflows/ci.yml:18:")
    assert older.messages[-1].text == "Task was interrupted"
    assert all(m.timestamp is None for m in older.messages)


def test_one_session_folder_or_its_event_log_is_a_source() -> None:
    (by_folder,), _ = read(LEDGER)
    (by_file,), _ = read(LEDGER / "events.jsonl")
    assert by_folder.key == "session-251118-091200-k3vq" and by_folder.title == "Decimal amounts in the CSV import"
    assert by_file.messages == by_folder.messages
    assert junie.check(SAMPLE) is None and junie.check(LEDGER) is None and junie.check(LEDGER / "events.jsonl") is None


def test_dropped_and_failed_prompts_are_left_out_and_answers_are_the_user_s(tmp_path: Path) -> None:
    session_folder(
        tmp_path,
        "session-251201-100000-aaaa",
        {"kind": "UserPromptEvent", "requestId": "r1", "prompt": "kept", "timestampMs": 1764583200000},
        {"kind": "UserPromptEvent", "requestId": "r2", "prompt": "dropped"},
        {"kind": "UserMessagesDroppedFromHistory", "userMessageIds": ["r2"]},
        {"kind": "UserPromptEvent", "requestId": "r3", "prompt": "never sent", "delivery": "Failed"},
        {"kind": "UserAsyncResponseEvent", "entries": [{"question": "Continue?", "answer": "Yes"}]},
        {"kind": "SessionTitleSetEvent", "name": "Its own title"},
    )
    (session,), problems = read(tmp_path)
    assert problems == [] and session.title == "Its own title"
    assert [(m.role, m.text) for m in session.messages] == [("user", "kept"), ("user", "Continue?\nYes")]


def test_a_block_sent_again_is_read_once_where_it_first_came_as_last_sent(tmp_path: Path) -> None:
    tool = {"kind": "ToolBlockUpdatedEvent", "stepId": "s", "toolType": "Search", "status": "IN_PROGRESS"}
    session_folder(
        tmp_path,
        "session-251201-100000-bbbb",
        {"kind": "UserPromptEvent", "prompt": "find it"},
        a2ux({**tool, "text": "Searching"}, 1764583200000),
        a2ux({"kind": "MarkdownBlockUpdatedEvent", "stepId": "m", "text": "Looking."}, 1764583201000),
        a2ux({**tool, "text": "Found", "status": "COMPLETED", "output": "a.py"}, 1764583202000),
        a2ux({"kind": "ResultBlockUpdatedEvent", "stepId": "r", "cancelled": True, "result": "Empty"}),
    )
    (session,), _ = read(tmp_path)
    assert [(m.role, m.text, m.timestamp) for m in session.messages] == [
        ("user", "find it", None),
        ("assistant", "", "2025-12-01T10:00:02Z"),
        ("tool", "", "2025-12-01T10:00:02Z"),
        ("assistant", "Looking.", "2025-12-01T10:00:01Z"),
    ]
    assert json.loads(session.messages[1].tool_calls[0].input) == {"text": "Found"}


def test_a_new_file_is_written_whole_and_a_deleted_one_named(tmp_path: Path) -> None:
    changes = [
        {"afterRelativePath": "new.txt", "afterContent": {"text": "hello\n"}},
        {"beforeRelativePath": "old.txt", "beforeContent": {"text": "bye\n"}},
    ]
    session_folder(
        tmp_path,
        "session-251201-100000-cccc",
        {"kind": "UserPromptEvent", "prompt": "swap the files"},
        a2ux({"kind": "FileChangesBlockUpdatedEvent", "stepId": "c", "changes": changes}),
    )
    (session,), _ = read(tmp_path)
    (call,) = session.messages[1].tool_calls
    assert call.files == ["new.txt", "old.txt"]
    assert [(e.file, e.old, e.new) for e in call.edits] == [("new.txt", None, "hello\n")]
    assert json.loads(call.input) == [{"deleted": "old.txt"}]


def test_bad_lines_and_unknown_events_are_told_and_nothing_raises(tmp_path: Path) -> None:
    folder = session_folder(
        tmp_path,
        "session-251201-100000-dddd",
        "not json",
        {"kind": "UserPromptEvent", "prompt": "hello"},
        {"kind": "SomethingNew"},
        a2ux({"kind": "AnotherNewThing"}),
        a2ux({"kind": "LlmResponseMetadataEvent", "modelUsage": [{"model": 3, "inputTokens": "many"}, "x"]}),
        {"no": "kind"},
        [1, 2],
    )
    (session,), problems = read(tmp_path)
    assert problems == [] and [m.text for m in session.messages] == ["hello"]
    (told,) = session.problems
    assert told.startswith("5 lines skipped:") and "unknown kind 'SomethingNew'" in told
    (folder / "events.jsonl").write_text("garbage\n")
    assert read(tmp_path) == ([], ["sessions/session-251201-100000-dddd: 1 line skipped: 1 not JSON"])


def test_a_folder_with_no_session_is_refused_with_what_was_expected(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    assert "holds no Junie sessions folder" in (junie.check(tmp_path / "elsewhere") or "")
    (tmp_path / ".junie" / "sessions").mkdir(parents=True)
    assert "holds no Junie session yet" in (junie.check(tmp_path / ".junie") or "")


def test_the_kind_is_registered_with_its_default_location() -> None:
    kind = registry.kinds(registry.manager(entry_points=False))["junie"]
    (where,) = kind.locations
    assert (where.folder, where.under, where.env) == ("~/.junie", "sessions", "JUNIE_HOME")
