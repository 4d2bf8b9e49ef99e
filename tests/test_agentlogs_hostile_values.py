"""The newer readers on values of every wrong type and size: nothing raises, nothing is read from outside."""

from __future__ import annotations

import json
import time
from pathlib import Path

from archivist.agents import Unread, cline, continue_dev, copilot, iso_utc, opencode, uri_path

HUGE = 10**400


def test_huge_numbers_and_broken_uris_are_no_time_and_no_path() -> None:
    assert iso_utc(HUGE) is None and iso_utc(-HUGE) is None and iso_utc(str(HUGE)) is None
    assert uri_path("file://[x") is None and uri_path("file:///c%3A/a") == "c:/a"


def test_cline_values_of_the_wrong_type(tmp_path: Path) -> None:
    task = tmp_path / "tasks" / "1"
    task.mkdir(parents=True)
    history = [
        {"role": "user", "content": "hi", "ts": HUGE},
        {"role": "assistant", "content": [{"type": "tool_use", "name": 5, "input": {"paths": [1, None, "a.py"]}}]},
    ]
    (task / "api_conversation_history.json").write_text(json.dumps(history))
    (task / "task_metadata.json").write_text(json.dumps({"model_usage": None}))
    (session,) = list(cline.read(tmp_path))
    assert session.messages[0].timestamp is None and session.messages[1].tool_calls[0].files == ["a.py"]


def test_a_working_directory_line_repeated_never_closed_is_read_in_linear_time(tmp_path: Path) -> None:
    task = tmp_path / "tasks" / "1"
    task.mkdir(parents=True)
    text = (
        "# Current Working Directory (" * 40_000
        + "<thinking>" * 40_000
        + "<environment_details>x</environment_details>" * 40_000
    )
    (task / "api_conversation_history.json").write_text(
        json.dumps([{"role": "user", "content": text}, {"role": "assistant", "content": text}])
    )
    started = time.perf_counter()
    (session,) = list(cline.read(tmp_path))
    assert time.perf_counter() - started < 3 and session.project is None


def test_continue_values_of_the_wrong_type(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    history = [
        {"message": {"role": "user", "content": "hi"}},
        {"message": {"role": "assistant", "content": "ok", "toolCalls": 5}, "promptLogs": 5, "toolCallStates": 5},
        {"message": {"role": "tool", "content": "x", "toolCallId": ["unhashable"]}},
        {
            "message": {"role": "assistant", "content": "ok"},
            "toolCallStates": [{"toolCallId": {"a": 1}, "output": [{"content": "y"}]}],
        },
    ]
    (folder / "s.json").write_text(json.dumps({"history": history, "workspaceDirectory": "file://[x"}))
    (folder / "sessions.json").write_text(json.dumps([{"sessionId": "s", "dateCreated": HUGE}]))
    (session,) = list(continue_dev.read(tmp_path))
    assert session.project is None and session.started is None
    assert [message.role for message in session.messages] == ["user", "assistant", "tool", "assistant", "tool"]


def test_copilot_values_of_the_wrong_type_and_a_workspace_outside_the_source(tmp_path: Path) -> None:
    folder = tmp_path / "workspaceStorage" / "w" / "chatSessions"
    folder.mkdir(parents=True)
    (folder.parent / "workspace.json").write_text(json.dumps({"folder": "file:///secret/place"}))
    request = {
        "timestamp": HUGE,
        "message": {"text": "hi"},
        "response": [{"kind": "textEditGroup", "uri": "file://[x"}, 5, None],
    }
    (folder / "s.json").write_text(json.dumps({"requests": [request], "creationDate": HUGE}))
    (whole,) = list(copilot.read(tmp_path))
    assert whole.project == "/secret/place" and whole.started is None  # the source holds its workspace.json
    (alone,) = list(copilot.read(folder))  # a chatSessions folder: its parent is outside the source
    assert alone.project is None


def test_opencode_values_of_the_wrong_type_and_a_storage_folder_that_leads_out(tmp_path: Path) -> None:
    storage = tmp_path / "data" / "storage"
    (storage / "session" / "p").mkdir(parents=True)
    (storage / "session" / "p" / "s1.json").write_text(json.dumps({"id": "s1", "title": 5, "time": {"created": HUGE}}))
    outside = tmp_path / "outside" / "s1"
    outside.mkdir(parents=True)
    (outside / "m1.json").write_text(json.dumps({"role": "user", "time": {"created": HUGE}}))
    (storage / "message").symlink_to(tmp_path / "outside", target_is_directory=True)
    problems: list[str] = []
    assert list(opencode.read(tmp_path / "data", problems)) == []  # its messages are outside: not read
    assert any(isinstance(problem, Unread) for problem in problems)
