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


def test_a_time_at_the_calendars_edge_is_no_time() -> None:
    for value in (
        "0001-01-01T00:00:00+01:00",
        "0001-01-01T00:00:00Z",
        "9999-12-31T23:59:59-01:00",
        "1969-12-31T23:59:59Z",
    ):
        assert iso_utc(value) is None, value
    assert iso_utc("2025-11-20T10:00:00Z") == "2025-11-20T10:00:00Z"


def test_a_folder_that_cannot_be_entered_is_told_unread_never_raised(tmp_path: Path, monkeypatch) -> None:
    from archivist.agents import Root

    (tmp_path / "inner").mkdir()

    def refused(self: Path) -> bool:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "is_symlink", refused)
    root = Root(tmp_path)
    assert root.entries(tmp_path) == []
    assert [problem for problem in root.problems if isinstance(problem, Unread)] == [
        "inner: not read (Permission denied)"
    ]


def sample_workspace(tmp_path: Path) -> Path:
    from conftest import write_files

    return write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})


def stored_titles(workspace: Path) -> list[str]:
    import sqlite_utils

    from archivist.workspace import archive_path

    db = sqlite_utils.Database(archive_path(workspace))
    return [row["title"] for row in db.query("select title from documents where source like 'log:%' order by title")]


def test_a_reader_that_gives_one_key_twice_stores_the_first_and_says_so(tmp_path: Path, monkeypatch) -> None:
    from conftest import sample_source

    from archivist.agents import codex
    from archivist.archive.indexer import index_workspace

    read = codex.read

    def twice(path, problems=None):
        for session in read(path, problems):
            yield session
            yield session.__class__(**{**session.__dict__, "title": "the second copy"})

    monkeypatch.setattr(codex, "read", twice)
    workspace = sample_workspace(tmp_path)
    result = index_workspace(workspace, log_sources=[("codex", sample_source("codex"))])
    assert stored_titles(workspace) and "the second copy" not in stored_titles(workspace)
    assert any("a second session with the key" in problem.reason for problem in result.problems)


def test_a_source_that_cannot_be_opened_keeps_what_the_archive_holds(tmp_path: Path, monkeypatch) -> None:
    from conftest import sample_source

    from archivist.agents import codex
    from archivist.archive import sessions
    from archivist.archive.indexer import index_workspace

    workspace = sample_workspace(tmp_path)
    index_workspace(workspace, log_sources=[("codex", sample_source("codex"))])
    held = stored_titles(workspace)

    def refused(path, problems=None):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(codex, "read", refused)
    monkeypatch.setattr(sessions, "fingerprint", lambda kind, path, files=None: "changed")
    monkeypatch.setattr(sessions, "_read_appends", lambda *arguments: None)  # (read whole)
    result = index_workspace(workspace)
    assert stored_titles(workspace) == held
    assert any(
        problem.status == "skipped" and problem.reason.startswith("not read (Permission denied)")
        for problem in result.problems
    )
