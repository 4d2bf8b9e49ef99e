"""Gemini CLI sessions read in place: the JSON and JSONL forms, what is skipped and told."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from archivist.agents import gemini_cli

PROJECT_HASH = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
SESSION_ID = "3b44bc68-1f2a-4c7e-9d11-0a5c2b7e9f10"
JSONL_ID = "123e4567-e89b-12d3-a456-426614174000"


# -- fixtures written from the format's description -------------------------------------


def line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def user(message_id: str, text: str, timestamp: str, **extra: Any) -> dict[str, Any]:
    return {"id": message_id, "timestamp": timestamp, "type": "user", "content": [{"text": text}], **extra}


def gemini(message_id: str, text: str, timestamp: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": message_id,
        "timestamp": timestamp,
        "type": "gemini",
        "content": text,
        "model": "gemini-2.5-pro",
        **extra,
    }


def replace_call() -> dict[str, Any]:
    return {
        "id": "replace-1758163515400-ab12",
        "name": "replace",
        "args": {"file_path": "/home/dev/site/README.md", "old_string": "teh", "new_string": "the"},
        "result": [
            {
                "functionResponse": {
                    "id": "replace-1758163515400-ab12",
                    "name": "replace",
                    "response": {"output": "Successfully modified file: /home/dev/site/README.md (1 replacements)."},
                }
            }
        ],
        "status": "success",
        "timestamp": "2025-09-18T02:45:16.100Z",
        "displayName": "Edit",
        "resultDisplay": {"fileDiff": "--- README.md\n+++ README.md\n", "fileName": "README.md"},
    }


def shell_call() -> dict[str, Any]:
    return {
        "id": "run_shell_command-1758163517000-cd34",
        "name": "run_shell_command",
        "args": {"command": "git commit -am 'fix typo'", "description": "Commit the fix"},
        "status": "success",
        "timestamp": "2025-09-18T02:45:18.000Z",
        "displayName": "Shell",
        "resultDisplay": "[main 1a2b3c4] fix typo\n 1 file changed",
    }


def json_session(**extra: Any) -> dict[str, Any]:
    """The older form: one JSON document, rewritten whole."""
    document = {
        "sessionId": SESSION_ID,
        "projectHash": PROJECT_HASH,
        "startTime": "2025-09-18T02:45:11.021Z",
        "lastUpdated": "2025-09-18T02:47:30.510Z",
        "messages": [
            user("c1e2", "fix the typo in README and commit", "2025-09-18T02:45:11.030Z"),
            gemini(
                "d7f0",
                "",
                "2025-09-18T02:45:15.400Z",
                thoughts=[
                    {
                        "subject": "Locating the typo",
                        "description": "I'll read README.md first.",
                        "timestamp": "2025-09-18T02:45:13.900Z",
                    }
                ],
                tokens={"input": 8123, "output": 57, "cached": 0, "thoughts": 120, "tool": 0, "total": 8300},
                toolCalls=[replace_call(), shell_call()],
            ),
            gemini("e9a1", "Fixed and committed.", "2025-09-18T02:45:20.000Z"),
            {"id": "f001", "timestamp": "2025-09-18T02:47:30.500Z", "type": "info", "content": "Request cancelled."},
        ],
        "summary": "Fix README typo",
    }
    document.update(extra)
    return document


def jsonl_session() -> str:
    """The newer form: appended lines; a message re-appended whole when it changes."""
    return (
        line(
            {
                "sessionId": JSONL_ID,
                "projectHash": PROJECT_HASH,
                "startTime": "2026-02-01T09:00:00.000Z",
                "lastUpdated": "2026-02-01T09:00:00.000Z",
                "kind": "main",
            }
        )
        + line(user("u1", "fix the typo in README and commit", "2026-02-01T09:00:01.000Z"))
        + line({"$set": {"lastUpdated": "2026-02-01T09:00:01.100Z"}})
        + line(gemini("g1", "", "2026-02-01T09:00:03.000Z", model="gemini-2.5-flash"))
        + line(
            gemini(
                "g1",
                "",
                "2026-02-01T09:00:03.000Z",
                model="gemini-2.5-flash",
                toolCalls=[
                    {
                        "id": "t1",
                        "name": "replace",
                        "args": {"file_path": "README.md", "old_string": "teh", "new_string": "the"},
                        "status": "success",
                        "timestamp": "2026-02-01T09:00:04.000Z",
                        "resultDisplay": {"fileName": "README.md", "filePath": "/home/dev/site/README.md"},
                    }
                ],
                tokens={"input": 8123, "output": 57, "cached": 0, "thoughts": 0, "tool": 0, "total": 8180},
            )
        )
        + line(gemini("g2", "I will also push.", "2026-02-01T09:00:05.000Z"))
        + line(user("u2", "no, do not push", "2026-02-01T09:00:05.500Z"))
        + line({"$rewindTo": "g2"})  # the user rewound: g2 and everything after it is gone
        + line(gemini("g3", "Fixed and committed.", "2026-02-01T09:00:06.000Z"))
        + line({"$set": {"lastUpdated": "2026-02-01T09:00:06.100Z", "summary": "Fix README typo"}})
    )


def write(root: Path, relative: str, content: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def only(sessions: list[gemini_cli.Session]) -> gemini_cli.Session:
    assert len(sessions) == 1, sessions
    return sessions[0]


def minimal(session_id: str, text: str = "hello") -> str:
    return line({"sessionId": session_id, "projectHash": PROJECT_HASH, "startTime": "2026-02-01T09:00:00.000Z"}) + line(
        user("u1", text, "2026-02-01T09:00:01.000Z")
    )


# -- the two forms ---------------------------------------------------------------------------


def test_a_json_session_yields_messages_tool_calls_thinking_and_output(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    file = write(
        tmp, f"{PROJECT_HASH}/chats/session-2025-09-18T02-45-3b44bc68.json", json.dumps(json_session(), indent=2)
    )

    session = only(list(gemini_cli.read(tmp)))

    assert session.key == SESSION_ID
    assert session.agent == "gemini-cli"
    assert session.title == "Fix README typo"
    assert session.project == PROJECT_HASH  # an old hash folder: only its name is known
    assert session.models == ["gemini-2.5-pro"]
    assert session.branch is None
    assert session.started == "2025-09-18T02:45:11Z"
    assert session.last == "2025-09-18T02:45:20Z"
    assert session.files == [file]
    assert session.problems == []
    assert session.parent is None

    summary = [
        (m.role, m.text, m.timestamp, [(c.name, c.files, c.commands) for c in m.tool_calls]) for m in session.messages
    ]
    assert summary == [
        ("user", "fix the typo in README and commit", "2025-09-18T02:45:11Z", []),
        (
            "assistant",
            "",
            "2025-09-18T02:45:15Z",
            [("replace", ["/home/dev/site/README.md"], []), ("run_shell_command", [], ["git commit -am 'fix typo'"])],
        ),
        ("tool", "", "2025-09-18T02:45:16Z", []),
        ("tool", "", "2025-09-18T02:45:18Z", []),
        ("assistant", "Fixed and committed.", "2025-09-18T02:45:20Z", []),
    ]
    thinking = session.messages[1]
    assert thinking.thinking == "Locating the typo\nI'll read README.md first."
    assert thinking.model == "gemini-2.5-pro"
    assert session.messages[2].tool_output == "Successfully modified file: /home/dev/site/README.md (1 replacements)."
    assert session.messages[3].tool_output == "[main 1a2b3c4] fix typo\n 1 file changed"  # no result: what was shown


def test_a_jsonl_session_keeps_the_last_line_of_each_message_and_follows_rewinds(tmp_path: Path) -> None:
    project = tmp_path / "tmp" / "site"
    write(project, ".project_root", "/home/dev/site\n")
    write(project, "chats/session-2026-02-01T09-00-123e4567.jsonl", jsonl_session())

    session = only(list(gemini_cli.read(project)))

    assert session.key == JSONL_ID
    assert session.project == "/home/dev/site"
    assert session.title == "Fix README typo"  # from a later $set
    assert session.models == ["gemini-2.5-flash", "gemini-2.5-pro"]
    assert [(m.role, m.text) for m in session.messages] == [
        ("user", "fix the typo in README and commit"),
        ("assistant", ""),
        ("assistant", "Fixed and committed."),
    ]
    call = session.messages[1].tool_calls[0]
    assert (call.name, call.files) == ("replace", ["/home/dev/site/README.md"])
    assert session.messages[1].model == "gemini-2.5-flash"
    assert (session.started, session.last) == ("2026-02-01T09:00:01Z", "2026-02-01T09:00:06Z")
    assert session.problems == []


def test_set_messages_replaces_them_all(tmp_path: Path) -> None:
    content = minimal("s-1", "an abandoned first try") + line(
        {
            "$set": {
                "messages": [
                    user("n1", "start over", "2026-02-01T10:00:00Z"),
                    gemini("n2", "ok", "2026-02-01T10:00:01Z"),
                ]
            }
        }
    )
    write(tmp_path, "p/chats/session-2026-02-01T09-00-s1.jsonl", content)

    session = only(list(gemini_cli.read(tmp_path)))

    assert [m.text for m in session.messages] == ["start over", "ok"]
    assert session.title == "start over"


def test_the_displayed_text_of_a_user_message_is_its_text(tmp_path: Path) -> None:
    message = user(
        "u1", "explain\n--- app.py ---\nprint('hi')", "2026-02-01T09:00:01Z", displayContent="explain @app.py"
    )
    content = line({"sessionId": "s-2", "projectHash": PROJECT_HASH}) + line(message)
    write(tmp_path, "p/chats/session-2026-02-01T09-00-s2.jsonl", content)

    assert only(list(gemini_cli.read(tmp_path))).messages[0].text == "explain @app.py"


def test_the_project_comes_from_projects_json_when_the_folder_has_no_marker(tmp_path: Path) -> None:
    home = tmp_path / ".gemini"
    write(home, "projects.json", json.dumps({"projects": {"/home/dev/my-app": "my-app", "/home/dev/other": "other"}}))
    write(home, "tmp/my-app/chats/session-2026-02-01T09-00-s3.jsonl", minimal("s-3"))
    write(home, "tmp/unknown/chats/session-2026-02-01T09-00-s4.jsonl", minimal("s-4"))

    projects = {s.key: s.project for s in gemini_cli.read(home)}

    assert projects == {"s-3": "/home/dev/my-app", "s-4": "unknown"}


def test_a_sub_agents_session_names_its_parent(tmp_path: Path) -> None:
    chats = tmp_path / "p" / "chats"
    write(chats, "session-2026-02-01T09-00-parent01.jsonl", minimal("parent-01", "investigate the bug"))
    agent = line({"sessionId": "agent-01", "projectHash": PROJECT_HASH, "kind": "subagent"}) + line(
        user("a1", "search for the failing call", "2026-02-01T09:00:02Z")
    )
    write(chats, "parent-01/agent-01.jsonl", agent)

    sessions = {s.key: s for s in gemini_cli.read(tmp_path / "p")}

    assert sessions["agent-01"].parent == "parent-01"
    assert sessions["parent-01"].parent is None


def test_a_json_session_migrated_to_jsonl_is_read_once(tmp_path: Path) -> None:
    chats = tmp_path / "p" / "chats"
    write(chats, "session-2025-09-18T02-45-3b44bc68.json", json.dumps(json_session()))
    write(chats, "session-2025-09-18T02-45-3b44bc68.jsonl", minimal(SESSION_ID, "carried on"))

    session = only(list(gemini_cli.read(tmp_path / "p")))

    assert session.files == [chats / "session-2025-09-18T02-45-3b44bc68.jsonl"]


# -- damage --------------------------------------------------------------------------------


def test_a_truncated_last_line_is_skipped_silently(tmp_path: Path) -> None:
    content = minimal("s-5", "first") + line(gemini("g1", "an answer", "2026-02-01T09:00:02Z"))
    content += line(gemini("g2", "a reply still being written", "2026-02-01T09:00:03Z"))[:50]
    write(tmp_path, "p/chats/session-2026-02-01T09-00-s5.jsonl", content)

    session = only(list(gemini_cli.read(tmp_path)))

    assert [m.text for m in session.messages] == ["first", "an answer"]
    assert session.problems == []


def test_a_json_document_cut_short_is_read_up_to_the_damage(tmp_path: Path) -> None:
    text = json.dumps(json_session(), indent=2)
    cut = text[: text.index('"Fixed and committed."') + 5]
    write(tmp_path, "p/chats/session-2025-09-18T02-45-3b44bc68.json", cut)

    session = only(list(gemini_cli.read(tmp_path)))

    assert session.key == SESSION_ID
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "tool"]
    assert session.problems == ["the JSON document is cut short or damaged: read the 2 messages before the damage"]


def test_malformed_lines_unknown_records_and_unknown_message_types_are_counted(tmp_path: Path) -> None:
    content = (
        minimal("s-6", "first")
        + "not json at all\n"
        + line({"$frobnicate": 1})
        + line({"id": "x1", "timestamp": "2026-02-01T09:00:02Z", "type": "hologram", "content": "?"})
        + line({"id": "e1", "timestamp": "2026-02-01T09:00:03Z", "type": "error", "content": "API error"})
        + line(gemini("g1", "still here", "2026-02-01T09:00:04Z"))
    )
    write(tmp_path, "p/chats/session-2026-02-01T09-00-s6.jsonl", content)

    session = only(list(gemini_cli.read(tmp_path)))

    assert [m.text for m in session.messages] == ["first", "still here"]
    assert session.problems == [
        "2 lines skipped: 1 not JSON, 1 unknown record",
        "1 message skipped: 1 unknown type 'hologram'",
    ]


def test_bytes_that_are_not_utf8_are_replaced_and_told(tmp_path: Path) -> None:
    content = minimal("s-7", "caf\u00e9 time").encode().replace("caf\u00e9".encode(), b"caf\xe9")
    write(tmp_path, "p/chats/session-2026-02-01T09-00-s7.jsonl", content)

    session = only(list(gemini_cli.read(tmp_path)))

    assert session.messages[0].text == "caf\ufffd time"
    assert session.problems == ["1 line not valid UTF-8: decoded with replacement characters"]


def test_a_session_without_messages_is_not_yielded(tmp_path: Path) -> None:
    chats = tmp_path / "p" / "chats"
    write(chats, "session-2026-02-01T09-00-e1.jsonl", line({"sessionId": "e-1", "projectHash": PROJECT_HASH}))
    write(chats, "session-2026-02-01T09-01-e2.jsonl", "")
    write(chats, "session-2026-02-01T09-02-e3.json", json.dumps({"sessionId": "e-3", "messages": []}))
    info_only = line({"sessionId": "e-4"}) + line({"id": "i", "type": "info", "content": "Request cancelled."})
    write(chats, "session-2026-02-01T09-03-e4.jsonl", info_only)
    write(chats, "session-2026-02-01T09-04-r1.jsonl", minimal("real"))

    assert [s.key for s in gemini_cli.read(tmp_path / "p")] == ["real"]


# -- check() -------------------------------------------------------------------------------


def test_check_accepts_the_tmp_folder_a_project_its_chats_and_a_session(tmp_path: Path) -> None:
    home = tmp_path / ".gemini"
    json_file = write(
        home, "tmp/site/chats/session-2025-09-18T02-45-3b44bc68.json", json.dumps(json_session(), indent=2)
    )
    jsonl_file = write(home, "tmp/site/chats/session-2026-02-01T09-00-123e4567.jsonl", jsonl_session())
    starting = write(home, "tmp/site/chats/session-2026-02-02T09-00-00000000.jsonl", "")  # nothing written yet

    for path in (home, home / "tmp", home / "tmp" / "site", home / "tmp" / "site" / "chats", json_file, jsonl_file):
        assert gemini_cli.check(path) is None, path
    assert gemini_cli.check(starting) is None
    assert gemini_cli.check(str(jsonl_file)) is None


def test_check_says_what_was_expected(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    empty = tmp_path / "empty"
    empty.mkdir()
    codex_rollout = write(
        tmp_path,
        "codex/rollout-1.jsonl",
        line({"timestamp": "2025-10-29T00:59:38Z", "type": "session_meta", "payload": {}}),
    )
    text = write(tmp_path, "notes.txt", "hello\n")
    other_json = write(tmp_path, "p/chats/session-x.json", json.dumps({"name": "not a session"}))
    (tmp_path / "fresh" / "tmp" / "app" / "chats").mkdir(parents=True)
    write(tmp_path, "ran/.gemini/tmp/app/logs.json", "[]")  # the CLI ran, but recorded no chat

    not_yet = (tmp_path / "fresh" / "tmp", tmp_path / "fresh" / "tmp" / "app", tmp_path / "ran" / ".gemini")
    for path in (missing, empty, codex_rollout, text, other_json, tmp_path / "p", *not_yet):
        reason = gemini_cli.check(path)
        assert reason is not None, path
        assert str(path) in reason
        assert "chats/session-*.json" in reason
    assert "does not exist" in (gemini_cli.check(missing) or "")
    for path in not_yet:
        assert "no Gemini CLI session yet" in (gemini_cli.check(path) or ""), path


# -- order, and nothing written -------------------------------------------------------------


def test_sessions_come_in_the_order_of_their_paths_every_time(tmp_path: Path) -> None:
    for relative, session_id in (
        ("b-project/chats/session-2026-01-01T00-00-b1.jsonl", "b1"),
        ("a-project/chats/session-2026-03-01T00-00-a2.jsonl", "a2"),
        ("a-project/chats/session-2026-02-01T00-00-a1.json", "a1"),
    ):
        write(tmp_path, relative, minimal(session_id))

    first = [s.key for s in gemini_cli.read(tmp_path)]

    assert first == ["a1", "a2", "b1"]
    assert [s.key for s in gemini_cli.read(tmp_path)] == first


def test_the_same_session_id_in_two_projects_gets_two_keys(tmp_path: Path) -> None:
    write(tmp_path, "a/chats/session-2026-01-01T00-00-same.jsonl", minimal("same"))
    write(tmp_path, "b/chats/session-2026-01-01T00-00-same.jsonl", minimal("same"))

    keys = [s.key for s in gemini_cli.read(tmp_path)]

    assert keys == ["same", "same@b/chats/session-2026-01-01T00-00-same.jsonl"]


def snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    return {
        path.relative_to(root).as_posix(): (
            path.stat().st_mtime_ns,
            path.stat().st_size,
            hashlib.sha256(path.read_bytes()).hexdigest(),
        )
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_reading_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / ".gemini"
    write(home, "projects.json", json.dumps({"projects": {"/home/dev/site": "site"}}))
    write(home, "tmp/site/chats/session-2025-09-18T02-45-3b44bc68.json", json.dumps(json_session(), indent=2)[:-40])
    write(home, "tmp/site/chats/session-2026-02-01T09-00-123e4567.jsonl", jsonl_session() + '{"id": "g9", "ty')
    write(home, "tmp/other/.project_root", "/home/dev/other")
    write(home, "tmp/other/chats/session-2026-02-01T09-00-o1.jsonl", minimal("o1"))
    before = snapshot(tmp_path)
    entries_before = sorted(p.as_posix() for p in tmp_path.rglob("*"))

    assert gemini_cli.check(home) is None
    assert len(list(gemini_cli.read(home))) == 3

    assert snapshot(tmp_path) == before
    assert sorted(p.as_posix() for p in tmp_path.rglob("*")) == entries_before
