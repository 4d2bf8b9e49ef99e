"""A session read on adds its new messages to its hour rollups, and they are the rows a whole read
writes: appends into an hour it has rows of, into a new hour, and a response that came back changed."""

from __future__ import annotations

import json

import pytest
import sqlite_utils
from conftest import write_files
from test_agentlogs_sources import SESSION
from test_rollups import assert_current, state

from archivist.agents import claude_code
from archivist.archive import rollups
from archivist.archive.indexer import index_workspace
from archivist.workspace import archive_path


def record(kind, uuid, parent, at, content, model="claude-sonnet-4-5-20250929", usage=None, message_id=None):
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message.update({"id": message_id or f"msg_{uuid}", "type": "message", "model": model})
        message["usage"] = usage or {"input_tokens": 10, "output_tokens": 20, "cache_read_input_tokens": 300}
    return json.dumps(
        {
            "parentUuid": parent,
            "isSidechain": False,
            "type": kind,
            "cwd": "/home/ana/proj",
            "sessionId": SESSION,
            "gitBranch": "main",
            "message": message,
            "uuid": uuid,
            "timestamp": at,
        }
    )


def exchange(n, parent, at_user, at_answer, **answer):
    """A prompt and its answer: two lines."""
    return [
        record("user", f"u{n}", parent, at_user, f"question {n} about the quokka"),
        record("assistant", f"a{n}", f"u{n}", at_answer, [{"type": "text", "text": f"answer {n}"}], **answer),
    ]


def append(path, lines):
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(text + "\n" for text in lines))


def whole_read(tmp_path, projects):
    """The rollups of the same logs indexed from scratch into another workspace."""
    fresh = write_files(tmp_path / f"fresh{len(list(tmp_path.glob('fresh*')))}", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(fresh, log_sources=[("claude-code", projects)])
    return state(archive_path(fresh))[1:3], usage_total(fresh)


def usage_total(workspace):
    db = sqlite_utils.Database(archive_path(workspace))
    (extra,) = db.execute("SELECT extra FROM documents WHERE source LIKE 'log:%'").fetchone()
    return json.loads(extra)["usage"]


@pytest.fixture
def session(tmp_path, monkeypatch):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    projects = tmp_path / "projects"
    folder = projects / "-home-ana-proj"
    folder.mkdir(parents=True)
    path = folder / f"{SESSION}.jsonl"
    append(path, exchange(0, None, "2025-11-23T04:10:00Z", "2025-11-23T04:11:00Z"))
    index_workspace(workspace, log_sources=[("claude-code", projects)])

    def whole(*args, **kwargs):
        raise AssertionError("the whole source was read again")

    monkeypatch.setattr(claude_code, "read", whole)
    return workspace, projects, path


def test_appended_messages_are_added_to_the_hours_as_a_whole_read_counts_them(session, tmp_path, monkeypatch):
    workspace, projects, path = session
    rebuilt = []
    monkeypatch.setattr(rollups, "write_hours", lambda db, document_id: rebuilt.append(document_id))
    rounds = [
        exchange(1, "a0", "2025-11-23T04:20:00Z", "2025-11-23T04:21:00Z"),  # an hour with rows
        exchange(2, "a1", "2025-11-23T06:00:00Z", "2025-11-23T06:01:00Z"),  # a new hour
        exchange(3, "a2", "2025-11-23T06:30:00Z", "2025-11-23T06:31:30Z", usage={"input_tokens": 7}),
        [record("user", "u4", "a3", "2025-11-24T00:05:00Z", "a prompt left unanswered")],
    ]
    for lines in rounds:
        append(path, lines)
        index_workspace(workspace)
        assert_current(archive_path(workspace))
    assert rebuilt == []
    usage, hours = state(archive_path(workspace))[1:3]
    assert [(row[1], row[5], row[6], row[12]) for row in usage] == [
        ("2025-11-23T04", 20, 40, 2),
        ("2025-11-23T06", 17, 20, 2),
    ]
    assert [(row[1], row[4]) for row in hours] == [("2025-11-23T04", 4), ("2025-11-23T06", 4), ("2025-11-24T00", 1)]
    monkeypatch.undo()
    assert whole_read(tmp_path, projects) == ((usage, hours), usage_total(workspace))


def test_a_response_that_comes_back_changed_or_a_new_model_writes_the_hours_again(session, tmp_path, monkeypatch):
    workspace, projects, path = session
    rebuilt = []
    write_hours = rollups.write_hours
    monkeypatch.setattr(rollups, "write_hours", lambda db, id_: rebuilt.append(id_) or write_hours(db, id_))
    more = {"input_tokens": 10, "output_tokens": 90, "cache_read_input_tokens": 300}
    continued = [
        record("assistant", "a0b", "a0", "2025-11-23T04:11:05Z", [{"type": "text", "text": "and more"}], usage=more,
               message_id="msg_a0")
    ]  # fmt: skip
    other_model = exchange(1, "a0b", "2025-11-23T05:00:00Z", "2025-11-23T05:01:00Z", model="claude-opus-4-1-20250805")
    for lines in (continued, other_model):
        append(path, lines)
        index_workspace(workspace)
        assert_current(archive_path(workspace))
    assert len(rebuilt) == 2
    usage, hours = state(archive_path(workspace))[1:3]
    assert [(row[1], row[2], row[6]) for row in usage] == [
        ("2025-11-23T04", "claude-sonnet-4-5-20250929", 90),
        ("2025-11-23T05", "claude-opus-4-1-20250805", 20),
    ]
    monkeypatch.undo()
    assert whole_read(tmp_path, projects) == ((usage, hours), usage_total(workspace))


@pytest.mark.parametrize("usage", ["'many'", "json('[1]')", "-5", "json('true')"])
def test_a_usage_total_that_is_no_count_is_summed_from_the_messages_again(session, usage):
    workspace, _, path = session
    db = sqlite_utils.Database(archive_path(workspace))
    db.execute(f"UPDATE documents SET extra = json_set(extra, '$.usage.input', {usage}) WHERE source LIKE 'log:%'")
    db.conn.commit()
    append(path, exchange(1, "a0", "2025-11-23T04:20:00Z", "2025-11-23T04:21:00Z"))
    index_workspace(workspace)
    assert usage_total(workspace)["input"] == 20
    assert_current(archive_path(workspace))
