"""Qwen Code's sessions: what is read, what is skipped and why, and hostile input."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from archivist.agents import Session, Unread, qwen_code

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "qwen-code"
SID = "9d1c0b2a-1111-4222-8333-444455556666"


def record(uuid: str, parent: str | None, kind: str, second: int, **more: Any) -> dict[str, Any]:
    return {
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": SID,
        "timestamp": f"2026-02-03T10:00:{second:02d}.000Z",
        "type": kind,
        "cwd": "/srv/app",
        "version": "0.5.1",
        **more,
    }


def user(uuid: str, parent: str | None, text: str, second: int, **more: Any) -> dict[str, Any]:
    return record(uuid, parent, "user", second, message={"role": "user", "parts": [{"text": text}]}, **more)


def model(uuid: str, parent: str | None, text: str, second: int, **more: Any) -> dict[str, Any]:
    return record(
        uuid,
        parent,
        "assistant",
        second,
        model="qwen3-coder",
        message={"role": "model", "parts": [{"text": text}]},
        **more,
    )


def write(folder: Path, lines: list[Any], name: str = f"{SID}.jsonl") -> Path:
    chats = folder / "projects" / "-srv-app" / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    file = chats / name
    with file.open("wb") as handle:
        for line in lines:
            handle.write(line if isinstance(line, bytes) else (json.dumps(line) + "\n").encode())
    return file


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(qwen_code.read(path, problems)), problems


def test_the_sample_is_read_with_its_tools_thinking_usage_and_image() -> None:
    (session,), problems = read(SAMPLE)
    assert problems == [] and session.problems == []
    assert session.key == "3f2a9c1e-7b4d-4e8a-9c21-5d6e7f8a9b0c" and session.agent == "qwen-code"
    assert session.title == "Rain gauge drops readings on gusty days"  # the custom_title record
    assert (session.project, session.branch, session.models) == (
        "/home/ana/src/weather-station",
        "fix/rain-gauge",
        ["qwen3-coder-plus"],
    )
    assert (session.started, session.last) == ("2025-12-14T09:12:03Z", "2025-12-14T09:12:40Z")
    roles = [m.role for m in session.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
    first, reply = session.messages[0], session.messages[1]
    assert first.text.endswith("here is the dashboard.\n[image]") and "iVBOR" not in first.text
    assert [(a.type, a.size) for a in first.attachments] == [("image/png", 70)]
    assert reply.thinking.startswith("The user suspects") and "suspects" not in reply.text
    calls = [(c.name, c.files, c.commands) for m in session.messages for c in m.tool_calls]
    assert calls == [
        ("read_file", ["/home/ana/src/weather-station/src/gauge.py"], []),
        ("run_shell_command", [], ["python -m pytest tests/test_gauge.py -q"]),
        ("edit", ["/home/ana/src/weather-station/src/gauge.py"], []),
    ]
    assert session.messages[4].tool_output.startswith("F.\nFAILED") and session.messages[4].text == ""
    spent = [m.usage for m in session.messages if m.usage]
    assert len(spent) == 4 and all(m.role == "assistant" for m in session.messages if m.usage)
    total = spent[0] + spent[1] + spent[2] + spent[3]
    assert (total.input, total.output, total.cache_write, total.cache_read) == (3623, 359, 0, 45440)
    assert qwen_code.check(SAMPLE) is None


def test_a_rewind_leaves_the_abandoned_branch_and_one_uuid_written_twice_is_one_message(tmp_path: Path) -> None:
    write(
        tmp_path,
        [
            user("u1", None, "first question", 1),
            model("a1", "u1", "first answer", 2),
            user("u2", "a1", "a question taken back", 3),
            model("a2", "u2", "an answer taken back", 4),
            record("r1", "a1", "system", 5, subtype="rewind", systemPayload={"truncatedCount": 2}),
            user("u3", "r1", "second question", 6),
            model("a3", "u3", "second ", 7),
            {**model("a3", "u3", "answer", 8), "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2}},
        ],
    )
    (session,), _ = read(tmp_path)
    assert [m.text for m in session.messages] == ["first question", "first answer", "second question", "second answer"]
    assert session.messages[-1].usage is not None and session.messages[-1].usage.input == 10
    assert session.title == "first question" and session.project == "/srv/app"


def test_a_rewind_to_before_the_first_turn_drops_all_and_one_to_a_record_not_read_drops_none(tmp_path: Path) -> None:
    rewind = {"subtype": "rewind", "systemPayload": {"truncatedCount": 1}}
    write(
        tmp_path,
        [
            user("u1", None, "taken back", 1),
            record("r1", None, "system", 2, **rewind),
            user("u2", "r1", "kept", 3),
            record("r2", "lost-line", "system", 4, **rewind),
            model("a2", "r2", "kept too", 5),
        ],
    )
    (session,), _ = read(tmp_path)
    assert [m.text for m in session.messages] == ["kept", "kept too"]


def test_a_damaged_line_keeps_what_was_written_before_it(tmp_path: Path) -> None:
    write(
        tmp_path,
        [
            user("u1", None, "first question", 1),
            model("a1", "u1", "first answer", 2),
            b'{"uuid": "u2", "parentUuid": "a1", "type": "us\n',  # cut short by a crash
            b"\xff\xfe not json either\n",
            model("a2", "u2", "an answer to the lost line", 4),
            user("u3", "a2", "caf\u00e9", 5),
            b'{"uuid": "u4", "parentUuid": "u3", "type": "assistant", "message": {"role": "model", "parts": [{"text": "still wri',
        ],
    )
    (session,), _ = read(tmp_path)
    assert [m.text for m in session.messages] == [
        "first question",
        "first answer",
        "an answer to the lost line",
        "café",
    ]
    assert session.problems[0].startswith("2 lines skipped: ") and "not valid UTF-8" in session.problems[1]


def test_hostile_values_are_skipped_and_counted_never_raised(tmp_path: Path) -> None:
    deep = "[" * 5000 + "]" * 5000
    write(
        tmp_path,
        [
            user("u1", None, "hello", 1),
            [1, 2],
            {"uuid": 7, "type": "user"},
            {"uuid": "x1", "parentUuid": "u1", "type": "robot"},
            record("x2", "u1", "assistant", 2, message="not a content"),
            record("x3", "x2", "assistant", 3, message={"parts": "not a list"}, model=["m"], usageMetadata="lots"),
            record("x4", "x3", "assistant", 4, message={"parts": [{"functionCall": {"name": 5, "args": [1]}}]}),
            record("x5", "x4", "tool_result", 5, message={"parts": [{"functionResponse": {"response": 3}}]}),
            record("x6", "x5", "assistant", 6, parentUuid=12, message={"parts": [{"text": "ok"}]}),
            deep.encode() + b"\n",
            record(
                "x7",
                "x6",
                "assistant",
                7,
                message={"parts": [{"text": "fine"}]},
                usageMetadata={"promptTokenCount": -5, "candidatesTokenCount": 10**15, "cachedContentTokenCount": True},
            ),
        ],
    )
    (session,), problems = read(tmp_path)
    assert problems == []
    assert [(m.role, m.text) for m in session.messages] == [
        ("user", "hello"),
        ("assistant", ""),
        ("tool", ""),
        ("assistant", "ok"),
        ("assistant", "fine"),
    ]
    assert session.messages[1].tool_calls[0].name == "tool" and session.messages[-1].usage is None
    assert session.models == []  # a model that is no text is none
    assert session.problems[0].startswith("6 lines skipped: ")  # [1,2], uuid 7, robot, deep, two of no known shape


def test_a_notification_is_a_system_message_and_newer_versions_show_the_display_text(tmp_path: Path) -> None:
    write(
        tmp_path,
        [
            user("u1", None, "@notes.md summarise it\n--- Content from referenced files ---\n...", 1),
            {**user("u1", None, "", 1), "systemPayload": {"displayText": "@notes.md summarise it", "hookContext": ""}},
            user("n1", "u1", "Background task 7 finished", 2, subtype="notification"),
            model("a1", "n1", "Done.", 3),
        ],
    )
    (session,), _ = read(tmp_path)
    assert [(m.role, m.text) for m in session.messages] == [
        ("user", "@notes.md summarise it"),
        ("system", "Background task 7 finished"),
        ("assistant", "Done."),
    ]


def test_the_older_json_sessions_are_read_with_the_gemini_cli_functions(tmp_path: Path) -> None:
    write(tmp_path, [user("u1", None, "hello", 1)])
    chats = tmp_path / "tmp" / hashlib.sha256(b"/srv/app").hexdigest() / "chats"
    chats.mkdir(parents=True)
    document = {
        "sessionId": "legacy-1",
        "projectHash": "x",
        "startTime": "2025-11-08T23:19:10.138Z",
        "lastUpdated": "2025-11-08T23:19:20.000Z",
        "messages": [
            {"id": "m1", "timestamp": "2025-11-08T23:19:10.138Z", "type": "user", "content": "list the files"},
            {"id": "m2", "timestamp": "2025-11-08T23:19:11.000Z", "type": "info", "content": "Model switched"},
            {
                "id": "m3",
                "timestamp": "2025-11-08T23:19:13.706Z",
                "type": "qwen",
                "model": "qwen3-coder-plus",
                "content": "Here they are.",
                "thoughts": [{"subject": "Listing", "description": "ls will do"}],
                "tokens": {"input": 1200, "output": 40, "cached": 1000, "thoughts": 5, "tool": 0, "total": 1240},
                "toolCalls": [
                    {
                        "id": "c1",
                        "name": "run_shell_command",
                        "args": {"command": "ls"},
                        "status": "success",
                        "timestamp": "2025-11-08T23:19:12.000Z",
                        "result": [
                            {
                                "functionResponse": {
                                    "id": "c1",
                                    "name": "run_shell_command",
                                    "response": {"output": "a.txt"},
                                }
                            }
                        ],
                    }
                ],
            },
            {"id": "m4", "timestamp": "2025-11-08T23:19:14.000Z", "type": "robot", "content": "?"},
        ],
    }
    (chats / "session-2025-11-08T23-19-legacy1.json").write_text(json.dumps(document))
    (chats / "session-2025-11-09T10-00-broken.json").write_text('{"sessionId": "b", "messages": [')
    found, problems = read(tmp_path)
    assert [s.key for s in found] == [SID, "legacy-1"]
    legacy = found[1]
    assert legacy.project == "/srv/app"  # the hash of the path a JSONL session was recorded in
    assert [(m.role, m.text, m.tool_output) for m in legacy.messages] == [
        ("user", "list the files", ""),
        ("assistant", "Here they are.", ""),
        ("tool", "", "a.txt"),
    ]
    assistant = legacy.messages[1]
    assert assistant.thinking == "Listing\nls will do" and assistant.tool_calls[0].commands == ["ls"]
    assert assistant.usage is not None and (assistant.usage.input, assistant.usage.cache_read) == (200, 1000)
    assert legacy.models == ["qwen3-coder-plus"] and legacy.problems == ["1 message skipped: 1 unknown type 'robot'"]
    assert problems and problems[0].startswith("tmp/") and "session-2025-11-09T10-00-broken.json" in problems[0]


def test_a_sub_agent_is_a_session_of_its_own_under_its_parent(tmp_path: Path) -> None:
    write(tmp_path, [user("u1", None, "explore the code", 1), model("a1", "u1", "Sending an explorer.", 2)])
    agents = tmp_path / "projects" / "-srv-app" / "subagents" / SID
    agents.mkdir(parents=True)
    lines = [user("s1", "a1", "Find the config loader", 3), model("s2", "s1", "It is in config.py", 4)]
    (agents / "agent-explore-7f3c.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (agents / "agent-explore-7f3c.meta.json").write_text(
        json.dumps({"agentId": "explore-7f3c", "description": "Find the loader"})
    )
    parent, child = read(tmp_path)[0]
    assert (child.key, child.parent, child.title) == (f"{SID}/agent-explore-7f3c", parent.key, "Find the loader")
    assert [m.text for m in child.messages] == ["Find the config loader", "It is in config.py"]


def test_a_link_that_leads_out_is_never_opened_and_nothing_is_written(tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "secret.jsonl"
    secret.parent.mkdir()
    secret.write_text(json.dumps(user("s", None, "hunter2", 1)) + "\n")
    source = tmp_path / "qwen"
    file = write(source, [user("u1", None, "hello", 1)])
    (file.parent / "linked.jsonl").symlink_to(secret)
    (source / "projects" / "linked-project").symlink_to(secret.parent, target_is_directory=True)
    before = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in source.rglob("*") if not p.is_symlink()}
    found, problems = read(source)
    assert [m.text for s in found for m in s.messages] == ["hello"]
    assert len(problems) == 2 and all("leads out of the source" in problem for problem in problems)
    after = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in source.rglob("*") if not p.is_symlink()}
    assert before == after and sorted(os.listdir(file.parent)) == sorted([file.name, "linked.jsonl"])


def test_a_source_that_is_not_qwen_code_s_says_what_was_expected(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "other.jsonl").write_text('{"role": "user"}\n')
    assert "holds no Qwen Code chats folder" in (qwen_code.check(tmp_path / "empty") or "")
    assert "is not a Qwen Code chat file" in (qwen_code.check(tmp_path / "other.jsonl") or "")
    assert "does not exist" in (qwen_code.check(tmp_path / "nowhere") or "")
    (tmp_path / ".qwen" / "projects").mkdir(parents=True)
    assert "holds no Qwen Code chat yet" in (qwen_code.check(tmp_path / ".qwen") or "")
    empty = write(tmp_path / "started", [])
    assert qwen_code.check(empty) is None and read(empty.parent)[1] == [f"{empty.name}: no message to read"]


def test_a_project_folder_that_cannot_be_entered_is_told_as_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, [user("u1", None, "hello", 1)])
    (tmp_path / "projects" / "-srv-other").mkdir()
    is_dir = Path.is_dir

    def denied(path: Path) -> bool:  # what a folder another user keeps to themselves answers
        if path.parent.name == "-srv-other":
            raise PermissionError(13, "Permission denied")
        return is_dir(path)

    monkeypatch.setattr(Path, "is_dir", denied)
    (session,), problems = read(tmp_path)
    assert session.messages[0].text == "hello"
    assert problems == ["projects/-srv-other: not read (Permission denied)"] and isinstance(problems[0], Unread)
    assert qwen_code.check(tmp_path) is None


def test_a_record_written_again_as_it_was_is_read_once(tmp_path: Path) -> None:
    asked = user("u1", None, "fix the bug", 1)
    write(tmp_path, [asked, asked, model("a1", "u1", "Done ", 2), model("a1", "u1", "now.", 3)])
    (session,), _ = read(tmp_path)
    assert [m.text for m in session.messages] == ["fix the bug", "Done now."]


def test_many_records_of_one_uuid_are_merged_in_linear_time(tmp_path: Path) -> None:
    count = 100_000
    write(tmp_path, [{"uuid": "a1", "type": "assistant", "message": {"parts": [f"{i} "]}} for i in range(count)])
    began = time.perf_counter()
    (session,), _ = read(tmp_path)
    assert time.perf_counter() - began < 3  # each record's parts copied onto all those before took many seconds
    assert session.messages[0].text.split() == [str(i) for i in range(count)]


def test_an_image_in_a_function_response_is_an_attachment_and_its_data_never_kept(tmp_path: Path) -> None:
    data = "iVBORw0KGgo" + "A" * 2000
    image = {"inlineData": {"mimeType": "image/png", "data": data}}
    response = {"functionResponse": {"name": "read_file", "response": {"output": image, "path": "shot.png"}}}
    write(tmp_path, [user("u1", None, "look", 1), record("t1", "u1", "tool_result", 2, message={"parts": [response]})])
    (session,), _ = read(tmp_path)
    tool = session.messages[1]
    assert data[:40] not in tool.tool_output
    assert json.loads(tool.tool_output) == {"output": "[image]", "path": "shot.png"}
    assert [(a.type, a.size) for a in tool.attachments] == [("image/png", 1508)]
