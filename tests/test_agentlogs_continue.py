"""Continue's sessions: what is read, what is skipped, and hostile input."""

from __future__ import annotations

import json
from pathlib import Path

from archivist.agents import continue_dev


def write(folder: Path, sid: str, session: object, listed: list | None = None) -> Path:
    sessions = folder / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    text = session if isinstance(session, str) else json.dumps(session)
    (sessions / f"{sid}.json").write_text(text, encoding="utf-8")
    if listed is not None:
        (sessions / "sessions.json").write_text(json.dumps(listed), encoding="utf-8")
    return sessions / f"{sid}.json"


def read(path: Path) -> tuple[list, list[str]]:
    problems: list[str] = []
    return list(continue_dev.read(path, problems)), problems


def item(role: str, content: object, **more: object) -> dict:
    return {"message": {"role": role, "content": content}, "contextItems": [], **more}


def test_a_command_line_session_keeps_its_tool_output_in_the_call_states(tmp_path: Path) -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "Bash", "arguments": json.dumps({"command": "ls -la"})},
    }
    history = [
        item("user", "list the files"),
        item(
            "assistant",
            "Listing.",
            toolCallStates=[
                {"toolCallId": "c1", "status": "done", "output": [{"name": "Tool Result", "content": "a.txt"}]}
            ],
        ),
        item("assistant", "There is one file, a.txt."),
    ]
    history[1]["message"]["toolCalls"] = [call]
    write(
        tmp_path,
        "s1",
        {"sessionId": "s1", "title": "New Session", "workspaceDirectory": "/srv/app", "history": history},
    )
    (session,), problems = read(tmp_path)
    assert problems == [] and session.title == "list the files"  # the default title gives way to the request
    assert session.project == "/srv/app" and session.started is None  # no time anywhere: none made up
    assert [(m.role, m.tool_output) for m in session.messages] == [
        ("user", ""),
        ("assistant", ""),
        ("tool", "a.txt"),
        ("assistant", ""),
    ]
    assert session.messages[1].tool_calls[0].commands == ["ls -la"]


def test_old_and_damaged_files_are_told_and_the_others_read(tmp_path: Path) -> None:
    write(tmp_path, "a-python", {"session_state": {"history": []}, "title": "old", "session_id": "x"})
    write(tmp_path, "b-broken", "{not json")
    write(tmp_path, "c-deep", "[" * 5000 + "]" * 5000)
    write(tmp_path, "d-empty", {"history": [1, "x", {"message": {"role": "robot"}}]})
    deep_arguments = {"name": "read_file", "arguments": "[" * 5000 + "]" * 5000}
    assistant = item("assistant", "ok")
    assistant["message"]["toolCalls"] = [{"id": "1", "type": "function", "function": deep_arguments}]
    write(
        tmp_path,
        "e-good",
        {
            "title": "Screenshot",
            "workspaceDirectory": "file:///c%3A/Users/ana/app",
            "history": [
                item(
                    "user",
                    [
                        {"type": "text", "text": "what is this?"},
                        {"type": "imageUrl", "imageUrl": {"url": "data:image/png;base64," + "A" * 5000}},
                    ],
                ),
                assistant,
            ],
        },
        listed=[{"sessionId": "e-good", "dateCreated": "1764100000000"}, {"bad": 1}, "x"],
    )
    found, problems = read(tmp_path)
    (session,) = found
    assert session.key == "e-good" and session.project == "c:/Users/ana/app"
    assert session.messages[0].text == "what is this?\n\n[image]" and session.started == "2025-11-25T19:46:40Z"
    assert session.messages[1].tool_calls[0].name == "read_file" and session.messages[1].tool_calls[0].files == []
    assert problems[0] == "a-python.json: a session of Continue's first (Python) server, not read"
    assert any(problem.startswith("b-broken.json: ") for problem in problems)
    assert any(problem.startswith("c-deep.json: ") for problem in problems)
    assert "d-empty.json: no message to read" in problems


def test_a_source_that_is_not_continue_s_says_what_was_expected(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "other.json").write_text("{}")
    assert "holds no Continue session" in (continue_dev.check(tmp_path / "empty") or "")
    assert "is not a Continue session" in (continue_dev.check(tmp_path / "other.json") or "")
    assert "does not exist" in (continue_dev.check(tmp_path / "nowhere") or "")
