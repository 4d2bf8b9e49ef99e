"""Kiro's sessions, in its three layouts: what is read, what is skipped and why, and hostile input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from archivist.agents import Session, Unread, kiro

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
    (session,), problems = read(SAMPLE)
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
    dump(tmp_path / ".kiro" / "sessions" / "cli" / "5f1c.jsonl", '{"version": "v1", "kind": "Prompt"}\n')
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
    assert "holds the Kiro CLI's sessions" in (kiro.check(tmp_path / ".kiro" / "sessions" / "cli") or "")
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
