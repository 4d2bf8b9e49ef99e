"""Kiro's sessions, in its three layouts: what is read, what is skipped and why, and hostile input."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from archivist.agents import Session, Unread, kiro
from archivist.archive import sources

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "kiro"
WORKSPACE = "L3Nydi9hcHA_"  # /srv/app in URL-safe base64, its padding written as "_"
EXECUTIONS = "0123456789abcdef0123456789abcdef"


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(kiro.read(path, problems)), problems


def dump(file: Path, value: Any) -> Path:
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(
        value if isinstance(value, bytes) else (value if isinstance(value, str) else json.dumps(value)).encode()
    )
    return file


def history(*entries: Any, **more: Any) -> dict[str, Any]:
    return {"sessionId": "s1", "history": list(entries), **more}


def said(role: str, content: Any, **more: Any) -> dict[str, Any]:
    return {"message": {"role": role, "content": content, "id": role}, **more}


def test_the_sample_s_answers_come_from_its_execution_logs() -> None:
    (session, _), problems = read(SAMPLE)
    assert problems == [] and session.problems == []
    assert (session.key, session.agent, session.title) == (
        "6c0f4d2e-8a1b-4c3d-9e5f-7a8b9c0d1e2f",
        "kiro",
        "Retry the carrier API with backoff",
    )
    assert session.project == "/home/mei/src/parcel-tracker" and session.models == ["claude-sonnet-4.5"]
    assert [(m.role, m.timestamp) for m in session.messages] == [
        ("user", "2025-11-13T11:00:04Z"),  # dated by the run it started
        ("assistant", "2025-11-13T11:00:31Z"),
        ("user", "2025-11-13T11:01:42Z"),
        ("assistant", "2025-11-13T11:01:58Z"),
    ]
    assert (session.started, session.last) == (
        "2025-11-13T11:00:00Z",
        "2025-11-13T11:01:58Z",
    )  # sessions.json's dateCreated
    assert session.messages[1].text.startswith("`track` now retries a 503") and "On it." not in session.messages[1].text
    calls = [(c.name, c.files, c.commands) for m in session.messages for c in m.tool_calls]
    assert calls == [
        ("readCode", ["src/carrier.ts"], []),
        ("replace", ["src/carrier.ts"], []),
        ("replace", ["src/carrier.ts"], []),
    ]
    assert all(m.usage is None for m in session.messages)  # Kiro records no tokens
    assert kiro.check(SAMPLE) is None and kiro.check(SAMPLE / "workspace-sessions") is None


def test_an_answer_without_its_log_falls_back_to_its_prompt_logs_then_its_own_text(tmp_path: Path) -> None:
    home = tmp_path / "kiro.kiroagent"
    dump(
        home / "workspace-sessions" / WORKSPACE / "s1.json",
        history(
            said("user", "first"),
            said("assistant", "On it.", executionId="gone", promptLogs=[{"completion": "From the prompt log."}, 3]),
            said("user", "second"),
            said("assistant", [{"type": "text", "text": "Plain answer."}], executionId="gone-too"),
            said("user", "third"),
            said("assistant", "On it.", executionId="parent"),
            said("user", "fourth"),
            said("assistant", "On it.", executionId="failed"),
        ),
    )
    logs = home / ("f" * 32) / EXECUTIONS
    dump(
        logs / "a",
        {"executionId": "parent", "actions": [{"actionType": "specAgent", "output": {"executionId": "child"}}]},
    )
    dump(
        logs / "b",
        {"executionId": "child", "actions": [{"actionType": "say", "output": {"message": "The child did it."}}]},
    )
    dump(
        logs / "c",
        {"executionId": "failed", "actions": [{"actionType": "displayError", "errorMessage": "Rate limited."}]},
    )
    dump(
        logs / "d.json",
        {"executionId": "parent", "actions": [{"actionType": "say", "output": {"message": "not a log"}}]},
    )
    (session,), _ = read(home)
    assert [m.text for m in session.messages if m.role == "assistant"] == [
        "From the prompt log.",
        "Plain answer.",
        "The child did it.",
        "Rate limited.",
    ]
    assert session.project == "/srv/app" and session.title == "first"  # the folder's name decoded; no title


def test_a_chat_file_is_one_run_without_kiro_s_own_prompts(tmp_path: Path) -> None:
    chat = {
        "executionId": "e1",
        "chat": [
            {"role": "human", "content": "<identity>You are Kiro</identity>"},
            {"role": "bot", "content": "I will follow these instructions."},
            {"role": "human", "content": "<kiro-ide-message>rename the helper</kiro-ide-message>"},
            {
                "role": "bot",
                "content": "Renaming it.<tool_use><name>fsWrite</name><path>src/util.ts</path></tool_use>"
                "<tool_use><name>executeBash</name><command>npm test</command></tool_use> Done.",
            },
            {"role": "tool", "content": "2 passed"},
            {"role": "robot", "content": "?"},
        ],
        "metadata": {"modelId": "claude-sonnet-4", "startTime": 1750000000000, "endTime": 1750000060000},
    }
    file = dump(tmp_path / "kiro.kiroagent" / ("e" * 32) / "a1b2.chat", chat)
    (session,), _ = read(tmp_path / "kiro.kiroagent")
    assert session.key == f"{'e' * 32}/a1b2" and session.title == "rename the helper"
    assert [(m.role, m.text, m.tool_output) for m in session.messages] == [
        ("user", "rename the helper", ""),
        ("assistant", "Renaming it. Done.", ""),
        ("tool", "", "2 passed"),
    ]
    assert [(c.name, c.files, c.commands) for c in session.messages[1].tool_calls] == [
        ("fsWrite", ["src/util.ts"], []),
        ("executeBash", [], ["npm test"]),
    ]
    assert (session.started, session.last, session.models) == (
        "2025-06-15T15:06:40Z",
        "2025-06-15T15:07:40Z",
        ["claude-sonnet-4"],
    )
    assert session.problems == ["1 chat message of no known shape skipped"]
    assert kiro.check(file) is None and read(file)[0][0].key == session.key


def events(*payloads: Any) -> bytes:
    lines = []
    for second, payload in enumerate(payloads):
        line = (
            payload
            if isinstance(payload, bytes)
            else json.dumps(
                {"id": f"e{second}", "timestamp": f"2026-09-30T05:30:{second:02d}Z", "payload": payload}
            ).encode()
            + b"\n"
        )
        lines.append(line)
    return b"".join(lines)


def test_the_1_0_sessions_are_read_from_their_event_logs(tmp_path: Path) -> None:
    folder = tmp_path / ".kiro" / "sessions" / "0123456789abcdef" / "sess_6329c3e3"
    dump(
        folder / "session.json",
        {"id": "sess_6329c3e3", "title": "sanguo", "modelId": "auto", "workspacePaths": ["e:\\workspace"]},
    )
    dump(
        folder / "messages.jsonl",
        events(
            {"type": "user", "content": [{"type": "text", "text": "list the chapters"}]},
            {"type": "assistant", "operationType": "Reasoning", "content": "The index file has them."},
            {"type": "tool_call", "toolCallId": "t1", "toolName": "readFile", "args": {"path": "index.md"}},
            {"type": "tool_result", "toolCallId": "t1", "success": True, "content": "1. Peach Garden"},
            {"type": "tool_call", "toolCallId": "t2", "toolName": "executeBash", "args": {"command": "wc -l index.md"}},
            {"type": "assistant", "operationType": "Say", "content": "There is one chapter so far."},
            {"type": "turn_end"},
            {"type": "compaction"},
            b"not json\n",
            b'{"id": "x", "payload": {"type": "user", "content": "caf\xff"}}\n',
            b'{"id": "y", "payload": {"type": "assistant", "content": "still writ',
        ),
    )
    (session,), problems = read(tmp_path / ".kiro")
    assert problems == [] and (session.key, session.title, session.project) == (
        "sess_6329c3e3",
        "sanguo",
        "e:\\workspace",
    )
    assert [(m.role, m.text, m.thinking, m.tool_output) for m in session.messages] == [
        ("user", "list the chapters", "", ""),
        ("assistant", "", "The index file has them.", ""),
        ("tool", "", "", "1. Peach Garden"),
        ("assistant", "", "", ""),
        ("assistant", "There is one chapter so far.", "", ""),
        ("user", "caf\ufffd", "", ""),
    ]
    assert [c.name for c in session.messages[1].tool_calls] == ["readFile"] and session.messages[3].tool_calls[
        0
    ].commands == ["wc -l index.md"]
    assert session.problems == [
        "2 lines skipped: 1 an event of unknown type, 1 not JSON",
        "1 line not valid UTF-8: decoded with replacement characters",
    ]
    assert (session.started, session.last, session.models) == ("2026-09-30T05:30:00Z", "2026-09-30T05:30:05Z", ["auto"])
    assert kiro.check(folder / "session.json") is None and kiro.check(folder) is None


def test_hostile_values_are_skipped_and_told_never_raised(tmp_path: Path) -> None:
    home = tmp_path / "kiro.kiroagent"
    folder = home / "workspace-sessions" / "bm90IGEgcGF0aA__"  # "not a path": no project
    dump(folder / "a.json", '{"sessionId": "a", "history": [')
    dump(folder / "b.json", "[" * 5000 + "]" * 5000)
    dump(folder / "c.json", {"sessionId": "c", "history": "many"})
    dump(folder / "d.json", history(5, said("robot", "?"), said("assistant", ["On", 7]), said("user", {"text": 3})))
    dump(
        folder / "e.json",
        history(
            said("user", [{"type": "text", "text": "hi"}, {"type": "image"}]),
            said("assistant", "On it.", executionId=["x"]),
        ),
    )
    dump(folder / "sessions.json", [7, {"sessionId": 3}, {"sessionId": "e", "dateCreated": "yesterday"}])
    dump(home / ("1" * 32) / EXECUTIONS / "f", {"executionId": 5, "actions": "none"})
    dump(
        home / ("2" * 32) / EXECUTIONS / "g",
        {"executionId": "x", "actions": [3, {"actionType": 9}, {"actionType": "replace", "input": {"file": [1]}}]},
    )
    dump(home / ("3" * 32) / "bad.chat", {"chat": [{"role": "human", "content": {"deep": 1}}]})
    found, problems = read(home)
    damaged, session = found
    assert [(m.role, m.text) for m in damaged.messages] == [("assistant", "On")]  # the text among the blocks
    assert damaged.problems == ["2 history entries of no known shape skipped"]  # 5, and a robot's
    assert session.key == "e" and session.project is None and session.started is None
    assert [(m.role, m.text) for m in session.messages] == [("user", "hi\n[image]"), ("assistant", "On it.")]
    assert problems == [
        "a.json: not JSON",
        "b.json: JSON nested deeper than 100 levels",
        "workspace-sessions/bm90IGEgcGF0aA__/c.json: not a Kiro session (no history)",
        f"{'3' * 32}/bad.chat: no message to read",
    ]


def test_a_link_that_leads_out_is_never_opened_and_nothing_is_written(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    dump(outside / "secret.json", history(said("user", "hunter2")))
    dump(outside / "log", {"executionId": "e", "actions": [{"actionType": "say", "output": {"message": "hunter2"}}]})
    home = tmp_path / "kiro.kiroagent"
    folder = home / "workspace-sessions" / WORKSPACE
    dump(folder / "s1.json", history(said("user", "hello"), said("assistant", "On it.", executionId="e")))
    (folder / "s2.json").symlink_to(outside / "secret.json")
    logs = home / ("a" * 32) / EXECUTIONS
    logs.mkdir(parents=True)
    (logs / "linked").symlink_to(outside / "log")
    before = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in home.rglob("*") if not p.is_symlink()}
    found, problems = read(home)
    assert [m.text for s in found for m in s.messages] == ["hello", "On it."]
    assert len(problems) == 2 and all("leads out of the source" in problem for problem in problems)
    after = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in home.rglob("*") if not p.is_symlink()}
    assert before == after and sorted(p.name for p in folder.iterdir()) == ["s1.json", "s2.json"]


def test_a_source_that_is_not_kiro_s_says_what_was_expected(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert "holds no Kiro session" in (kiro.check(tmp_path / "empty") or "")
    assert "is not a Kiro session file" in (kiro.check(dump(tmp_path / "other.json", {"a": 1})) or "")
    assert "does not exist" in (kiro.check(tmp_path / "nowhere") or "")


def test_a_session_folder_that_cannot_be_entered_is_told_as_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = tmp_path / ".kiro" / "sessions" / "0123456789abcdef"
    dump(sessions / "s1" / "messages.jsonl", events({"type": "user", "content": "list the chapters"}))
    (sessions / "s0").mkdir()
    is_file = Path.is_file

    def denied(path: Path) -> bool:  # what a folder another user keeps to themselves answers
        if path.parent.name == "s0":
            raise PermissionError(13, "Permission denied")
        return is_file(path)

    monkeypatch.setattr(Path, "is_file", denied)
    (session,), problems = read(tmp_path / ".kiro")
    assert session.key == "s1"
    assert problems == ["sessions/0123456789abcdef/s0: not read (Permission denied)"]
    assert isinstance(problems[0], Unread) and kiro.check(tmp_path / ".kiro") is None


def test_an_image_a_tool_returns_is_an_attachment_and_its_data_never_kept(tmp_path: Path) -> None:
    data = "iVBORw0KGgo" + "A" * 2000
    folder = tmp_path / ".kiro" / "sessions" / "0123456789abcdef" / "s1"
    returned = [{"image": {"format": "png", "source": {"bytes": data}}}, {"json": {"path": "shot.png"}}]
    dump(
        folder / "messages.jsonl",
        events(
            {"type": "user", "content": "look at the screenshot"},
            {"type": "tool_call", "toolName": "readFile", "args": {"path": "shot.png"}},
            {"type": "tool_result", "content": returned},
            {"type": "tool_result", "content": [{"type": "text", "text": "and"}, {"image": returned[0]["image"]}]},
        ),
    )
    (session,), _ = read(tmp_path / ".kiro")
    first, second = session.messages[2:]
    assert data[:40] not in first.tool_output + second.tool_output
    assert json.loads(first.tool_output) == ["[image]", {"json": {"path": "shot.png"}}]
    assert second.tool_output == "and\n[image]"
    assert [(a.type, a.size) for m in (first, second) for a in m.attachments] == [("image/png", 1508)] * 2


# -- the Kiro CLI ------------------------------------------------------------------------------------


def record(kind: str, message_id: str, *content: Any, **data: Any) -> dict[str, Any]:
    return {"version": "v1", "kind": kind, "data": {"message_id": message_id, "content": list(content), **data}}


def text(value: Any) -> dict[str, Any]:
    return {"kind": "text", "data": value}


def jsonl(*records: Any) -> bytes:
    return b"".join(item if isinstance(item, bytes) else json.dumps(item).encode() + b"\n" for item in records)


def test_the_kiro_cli_s_sessions_are_read_with_their_companion_file(tmp_path: Path) -> None:
    cli = tmp_path / ".kiro" / "sessions" / "cli"
    dump(
        cli / "7c1e.jsonl",
        jsonl(
            record("Prompt", "p1", text("why does the build fail?"), meta={"timestamp": 1779949360.42}),
            record(
                "AssistantMessage",
                "a1",
                {"kind": "thinking", "data": {"text": "The log says a path."}},
                text("Reading the config."),
                {
                    "kind": "toolUse",
                    "data": {
                        "toolUseId": "t1",
                        "name": "fs_read",
                        "input": {"operations": [{"mode": "Line", "path": "build.toml"}]},
                    },
                },
                {
                    "kind": "toolUse",
                    "data": {
                        "toolUseId": "t2",
                        "name": "shell",
                        "input": {"command": "make", "__tool_use_purpose": "build"},
                    },
                },
                {
                    "kind": "toolUse",
                    "data": {
                        "toolUseId": "t3",
                        "name": "write",
                        "input": {"command": "strReplace", "path": "build.toml"},
                    },
                },
            ),
            record(
                "ToolResults",
                "r1",
                {"kind": "toolResult", "data": {"toolUseId": "t1", "status": "success", "content": [text("[paths]")]}},
                {
                    "kind": "toolResult",
                    "data": {
                        "toolUseId": "t2",
                        "status": "success",
                        "content": [{"kind": "json", "data": {"exit_status": "exit status: 0", "stdout": "ok\n"}}],
                    },
                },
            ),
            record("AssistantMessage", "a2", text("The path was wrong; fixed.")),
            {"version": "v1", "kind": "Clear", "data": None},
            {"version": "v1", "kind": "Compaction", "data": {}},
            record(
                "Prompt",
                "p2",
                text("thanks"),
                {"kind": "image", "data": {"format": "png", "source": {"bytes": "AAAA"}}},
            ),
            b'{"version": "v1", "kind": "Assistant',
        ),
    )
    dump(
        cli / "7c1e.json",
        {
            "session_id": "7c1e-uuid",
            "cwd": "/home/mei/src/builder",
            "title": "Build failure",
            "created_at": "2026-05-28T06:22:40Z",
            "updated_at": "2026-05-28T06:25:00Z",
            "session_state": {
                "rts_model_state": {"model_info": {"model_id": "claude-sonnet-4.5"}},
                "conversation_metadata": {
                    "user_turn_metadatas": [
                        {
                            "input_token_count": 1200,
                            "output_token_count": 80,
                            "end_timestamp": 1779949390,
                            "message_ids": ["p1", "a1", "r1", "a2"],
                        },
                        {"input_token_count": 0, "output_token_count": 0, "message_ids": ["p2"]},
                    ]
                },
            },
        },
    )
    (session,), problems = read(tmp_path / ".kiro" / "sessions")
    assert problems == [] and session.problems == ["1 line skipped: 1 a record of unknown kind"]
    assert (session.key, session.title, session.project, session.models) == (
        "7c1e-uuid",
        "Build failure",
        "/home/mei/src/builder",
        ["claude-sonnet-4.5"],
    )
    assert [(m.role, m.text, m.thinking, m.tool_output, m.timestamp) for m in session.messages] == [
        ("user", "why does the build fail?", "", "", "2026-05-28T06:22:40Z"),
        ("assistant", "Reading the config.", "The log says a path.", "", None),
        ("tool", "", "", "[paths]", None),
        ("tool", "", "", '{"exit_status": "exit status: 0", "stdout": "ok\\n"}', None),
        ("assistant", "The path was wrong; fixed.", "", "", "2026-05-28T06:23:10Z"),  # the turn's end
        ("user", "thanks", "", "", None),
    ]
    calls = [(c.name, c.files, c.commands) for c in session.messages[1].tool_calls]
    assert calls == [("fs_read", ["build.toml"], []), ("shell", [], ["make"]), ("write", ["build.toml"], [])]
    assert session.messages[4].usage is not None and (
        session.messages[4].usage.input,
        session.messages[4].usage.output,
    ) == (1200, 80)
    assert session.messages[1].usage is None and session.messages[4].model == "claude-sonnet-4.5"
    assert [a.type for a in session.messages[5].attachments] == ["image/png"]
    assert (session.started, session.last) == ("2026-05-28T06:22:40Z", "2026-05-28T06:23:10Z")
    assert [f.name for f in session.files] == ["7c1e.jsonl", "7c1e.json"]
    assert kiro.check(cli) is None and kiro.check(cli / "7c1e.jsonl") is None
    assert [s.key for s in read(cli / "7c1e.jsonl")[0]] == ["7c1e-uuid"]


def test_a_kiro_cli_session_without_its_companion_is_keyed_by_its_file(tmp_path: Path) -> None:
    cli = tmp_path / "sessions" / "cli"
    dump(cli / "a.jsonl", jsonl(record("Prompt", "p", text("hello")), b"not json\n", [1]))
    dump(cli / "b.jsonl", jsonl(record("Prompt", "p", text({"not": "text"}))))
    dump(cli / "c.jsonl", b"")
    (session,), problems = read(cli)
    assert (session.key, session.title, session.project, session.models) == ("a", "hello", None, [])
    assert session.problems == ["2 lines skipped: 1 not JSON, 1 a record that is not an object"]
    assert problems == ["b.jsonl: no message to read", "c.jsonl: no message to read"]
    assert "is not a Kiro session file" in (kiro.check(dump(tmp_path / "other.jsonl", '{"type": "x"}\n')) or "")


def test_an_empty_kiro_cli_sessions_folder_is_a_source_with_no_session(tmp_path: Path) -> None:
    (tmp_path / ".kiro" / "sessions" / "cli").mkdir(parents=True)
    assert kiro.check(tmp_path / ".kiro") is None and kiro.check(tmp_path / ".kiro" / "sessions") is None
    assert kiro.check(tmp_path / ".kiro" / "sessions" / "cli") is None
    assert read(tmp_path / ".kiro") == ([], [])


def store(file: Path, *rows: tuple[str, str, Any], old: bool = False) -> Path:
    """A Kiro CLI store as its migrations make it, holding ``rows`` (``conversations`` alone where ``old``)."""
    file.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(file)
    connection.executescript(
        "CREATE TABLE migrations (id INTEGER PRIMARY KEY, version INTEGER, migration_time INTEGER);"
        "CREATE TABLE state (key TEXT PRIMARY KEY, value BLOB);"
        "CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT);"
        + (
            ""
            if old
            else "CREATE TABLE conversations_v2 (key TEXT NOT NULL, conversation_id TEXT NOT NULL, value TEXT NOT NULL,"
            " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (key, conversation_id));"
        )
    )
    for cwd, conversation, value in rows:
        text_value = value if isinstance(value, str) else json.dumps(value)
        if old:
            connection.execute("INSERT INTO conversations VALUES (?, ?)", (cwd, text_value))
        else:
            connection.execute(
                "INSERT INTO conversations_v2 VALUES (?, ?, ?, ?, ?)",
                (cwd, conversation, text_value, 1780000000000, 1780000100000),
            )
    connection.commit()
    connection.close()
    return file


def test_an_empty_kiro_cli_store_is_a_source_with_no_session(tmp_path: Path) -> None:
    database = store(tmp_path / "kiro-cli" / "data.sqlite3")
    assert kiro.check(database) is None and kiro.check(database.parent) is None
    assert read(database) == ([], []) and read(database.parent) == ([], [])
    empty = dump(tmp_path / "new" / "data.sqlite3", b"")  # made, not written yet
    assert kiro.check(empty) is None and read(empty) == ([], [])
    other = tmp_path / "other" / "data.sqlite3"
    other.parent.mkdir()
    with closing_connection(other) as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")
    assert "has none of the Kiro CLI's tables" in (kiro.check(other) or "")
    assert "is not a SQLite database" in (kiro.check(dump(tmp_path / "text" / "data.sqlite3", "hello")) or "")


def closing_connection(file: Path) -> Any:
    connection = sqlite3.connect(file)
    connection.isolation_level = None
    return closing(connection)


def test_the_kiro_cli_store_s_conversations_are_read(tmp_path: Path) -> None:
    state = {
        "conversation_id": "conv-1",
        "model_info": {"model_id": "claude-sonnet-4"},
        "next_message": {"content": {"Prompt": {"prompt": "unsent"}}},
        "history": [
            {
                "user": {
                    "additional_context": "--- CONTEXT ENTRY BEGIN ---",
                    "env_context": {"env_state": {"current_working_directory": "/srv/app"}},
                    "content": {"Prompt": {"prompt": "list the routes"}},
                    "timestamp": "2026-05-28T08:00:00.123+02:00",
                    "images": None,
                },
                "assistant": {
                    "ToolUse": {
                        "message_id": "m1",
                        "content": "Reading them.",
                        "tool_uses": [
                            {
                                "id": "t1",
                                "name": "execute_bash",
                                "orig_name": "execute_bash",
                                "args": {"command": "ls routes"},
                                "orig_args": {},
                            }
                        ],
                    }
                },
                "request_metadata": {
                    "request_start_timestamp_ms": 1779948001000,
                    "stream_end_timestamp_ms": 1779948005000,
                },
            },
            {
                "user": {
                    "content": {
                        "ToolUseResults": {
                            "tool_use_results": [
                                {
                                    "tool_use_id": "t1",
                                    "content": [{"Text": "a.py b.py"}, {"Json": {"exit": 0}}],
                                    "status": "Success",
                                }
                            ]
                        }
                    },
                    "timestamp": None,
                },
                "assistant": {"Response": {"message_id": "m2", "content": "Two routes: a and b."}},
                "request_metadata": None,
            },
            7,
        ],
    }
    old = {
        "conversation_id": "conv-0",
        "model": "claude-3.7",
        "history": [
            [{"content": {"Prompt": {"prompt": "hello"}}}, {"Response": {"message_id": "x", "content": "Hi."}}]
        ],
    }
    database = store(
        tmp_path / "data.sqlite3",
        ("/srv/app", "conv-1", state),
        ("/srv/old", "conv-0", old),
        ("/srv/bad", "conv-2", "{not json"),
        ("/srv/none", "conv-3", {"conversation_id": "conv-3", "history": []}),
    )
    with closing_connection(database) as connection:  # the older table's copy of conv-1
        connection.execute("INSERT INTO conversations VALUES (?, ?)", ("/srv/app", json.dumps(state)))
    first, second = (sessions := read(database))[0]
    assert sessions[1] == ["data.sqlite3: 1 conversation not a conversation's JSON"]
    assert (first.key, first.title, first.project, first.models, first.files) == (
        "conv-1",
        "list the routes",
        "/srv/app",
        ["claude-sonnet-4"],
        [database],
    )
    assert [(m.role, m.text, m.tool_output, m.timestamp) for m in first.messages] == [
        ("user", "list the routes", "", "2026-05-28T06:00:00Z"),
        ("assistant", "Reading them.", "", "2026-05-28T06:00:05Z"),
        ("tool", "", 'a.py b.py\n{"exit": 0}', None),
        ("assistant", "Two routes: a and b.", "", None),
    ]
    assert [(c.name, c.commands) for c in first.messages[1].tool_calls] == [("execute_bash", ["ls routes"])]
    assert first.problems == ["1 history entry of no known shape skipped"]
    assert (first.started, first.last) == ("2026-05-28T06:00:00Z", "2026-05-28T06:00:05Z")
    assert (second.key, second.models, [m.text for m in second.messages]) == (
        "conv-0",
        ["claude-3.7"],
        ["hello", "Hi."],
    )
    assert (second.started, second.last) == ("2026-05-28T20:26:40Z", "2026-05-28T20:28:20Z")  # the row's times
    older = store(tmp_path / "q" / "data.sqlite3", ("/srv/old", "", old), old=True)
    assert [s.key for s in read(older)[0]] == ["conv-0"]


def test_the_sample_s_kiro_cli_session_is_read_with_its_turn_s_tokens() -> None:
    (_, session), _ = read(SAMPLE)
    assert (session.key, session.title, session.project) == (
        "3b9e7f12-5c4d-4a8e-9f61-2d7c0b8a4e53",
        "CI test timeouts",
        "/home/mei/src/parcel-tracker",
    )
    assert [m.role for m in session.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    calls = [(c.name, c.files, c.commands) for m in session.messages for c in m.tool_calls]
    assert calls == [
        ("execute_bash", [], ["npm test -- --runInBand"]),
        ("fs_read", ["test/carrier.test.ts"], []),
        ("fs_write", ["test/carrier.test.ts"], []),
    ]
    last = session.messages[-1]
    assert last.usage is not None and (last.usage.input, last.usage.output, last.timestamp) == (
        18420,
        612,
        "2025-11-13T11:03:12Z",
    )
    assert (session.started, session.last, session.models) == (
        "2025-11-13T11:00:00Z",
        "2025-11-13T11:03:12Z",
        ["claude-sonnet-4.5"],
    )


def test_discover_finds_the_kiro_cli_s_store_where_it_keeps_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    share, support = home / ".local" / "share", home / "Library" / "Application Support"
    assert {path for kind, path in sources.default_locations({}, home, "linux") if kind == "kiro"} >= {
        share / "kiro-cli" / "data.sqlite3",
        share / "amazon-q" / "data.sqlite3",
    }
    assert {path for kind, path in sources.default_locations({}, home, "macos") if kind == "kiro"} >= {
        support / "kiro-cli" / "data.sqlite3",
        support / "amazon-q" / "data.sqlite3",
    }
    stores = [
        path for kind, path in sources.default_locations({}, home) if kind == "kiro" and path.name == "data.sqlite3"
    ]
    for number, path in enumerate(stores):
        store(path, old=number % 2 == 1)
    dump(home / ".local" / "share" / "kiro-cli-notes" / "data.sqlite3", "not a store")
    assert [path for kind, path in sources.discover({}, home) if kind == "kiro"] == stores
