"""Copilot's sessions: a log of changes replayed, damaged lines and files, and the CLI's events."""

from __future__ import annotations

import json
from pathlib import Path

from archivist.agents import copilot


def chat(root: Path, name: str, text: str) -> Path:
    folder = root / "workspaceStorage" / "abc" / "chatSessions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name


def read(path: Path) -> tuple[list, list[str]]:
    problems: list[str] = []
    return list(copilot.read(path, problems)), problems


REQUEST = {"timestamp": 1764300000000, "message": {"text": "why?"}, "response": [{"value": "because"}]}


def test_a_log_s_changes_are_replayed_and_a_change_that_does_not_fit_is_told(tmp_path: Path) -> None:
    lines = [
        {"kind": 0, "v": {"requests": [], "creationDate": 1764300000000}},
        {"kind": 2, "k": ["requests"], "v": [dict(REQUEST)]},
        {"kind": 2, "k": ["requests", 0, "response"], "i": 0, "v": [{"value": "replaced"}]},  # truncated, then appended
        {"kind": 1, "k": ["requests", 0, "message", "text"], "v": "why not?"},
        {"kind": 1, "k": ["requests", 9, "message"], "v": "nowhere"},  # a path that is not there
        {"kind": 3, "k": ["customTitle"]},
        {"kind": 7},
        "not an object",
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\n{not json\n"
    chat(tmp_path, "s.jsonl", text)
    chat(tmp_path, "s.json", json.dumps({"requests": [REQUEST], "customTitle": "the older whole file"}))
    (session,), problems = read(tmp_path)
    assert problems == [] and session.title == "why not?"  # the log, not the older file
    assert [message.text for message in session.messages] == ["why not?", "replaced"]
    assert sorted(session.problems) == [
        "1 line(s) skipped: a change of a path that is not there",
        "1 line(s) skipped: not JSON",
        "2 line(s) skipped: a change of no known shape",
    ]


def test_damaged_and_empty_files_are_told_and_the_others_read(tmp_path: Path) -> None:
    chat(tmp_path, "a.json", "{not json")
    chat(tmp_path, "b.json", json.dumps({"requests": "no"}))
    chat(tmp_path, "c.json", "[" * 5000 + "]" * 5000)
    chat(tmp_path, "d.json", json.dumps({"requests": [REQUEST]}))
    found, problems = read(tmp_path)
    assert [session.messages[0].text for session in found] == ["why?"]
    assert [problem.split(":")[0] for problem in problems] == ["a.json", "b.json", "c.json"]


def test_the_cli_s_bad_lines_are_told_and_a_tool_s_arguments_read_within_the_budget(tmp_path: Path) -> None:
    folder = tmp_path / "session-state" / "s1"
    folder.mkdir(parents=True)
    events = [
        {"type": "user.message", "timestamp": "2025-11-28T04:00:00Z", "data": {"content": "list it"}},
        {
            "type": "assistant.message",
            "timestamp": "2025-11-28T04:00:05Z",
            "data": {
                "content": "ok",
                "toolRequests": [
                    {"name": "bash", "arguments": "[" * 5000 + "]" * 5000},
                    {"name": "view", "arguments": {"path": "/w/a.py"}},
                ],
            },
        },
        {"type": "x", "data": "not an object"},
    ]
    (folder / "events.jsonl").write_text(
        "\n".join(json.dumps(event) for event in events) + "\n{bad\n", encoding="utf-8"
    )
    (session,), _ = read(tmp_path)
    assert [(call.name, call.files, call.commands) for call in session.messages[1].tool_calls] == [
        ("bash", [], []),
        ("view", ["/w/a.py"], []),
    ]
    assert sorted(session.problems) == ["1 line(s) skipped: an event of no known shape", "1 line(s) skipped: not JSON"]


def test_a_link_that_leads_out_is_never_opened_and_a_source_that_is_not_says_so(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"requests": [{"message": {"text": "hunter2"}, "response": [{"value": "x"}]}]}))
    folder = chat(tmp_path / "user", "ok.json", json.dumps({"requests": [REQUEST]})).parent
    (folder / "linked.json").symlink_to(secret)
    found, problems = read(tmp_path / "user")
    assert [session.messages[0].text for session in found] == ["why?"] and len(problems) == 1
    (tmp_path / "empty").mkdir()
    assert "holds no Copilot chat session" in (copilot.check(tmp_path / "empty") or "")
    assert "is not a Copilot chat session file" in (copilot.check(secret) or "")
