"""A JSONL session that grows is read on from where the last run stopped; a rewrite is read again."""

import json

import pytest
import sqlite_utils
from conftest import write_files
from test_agentlogs_sources import SESSION, line

from archivist.agents import claude_code
from archivist.archive.indexer import index_workspace
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

MESSAGE_COLUMNS = "seq, role, timestamp, model, text, thinking, tool_output, tool_calls, secrets"


def assistant(uuid, parent, blocks, at, message_id=None):
    record = json.loads(line("assistant", uuid, parent, blocks, at))
    record["message"]["id"] = message_id or f"msg_{uuid}"
    return json.dumps(record)


FIRST = [
    line("user", "u1", None, "why does the kubernetes pod keep restarting", "2025-11-23T04:53:42Z"),
    assistant(
        "a1", "u1", [{"type": "text", "text": "Let me look at the liveness probe."}], "2025-11-23T04:53:45Z", "r1"
    ),
]
# the same response (message id r1) goes on over the next line: it must be one message
CONTINUED = [
    assistant(
        "a1b",
        "a1",
        [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "kubectl describe pod api"}}],
        "2025-11-23T04:53:46Z",
        "r1",
    ),
    line(
        "user",
        "t1",
        "a1b",
        [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Liveness probe failed: HTTP 503"}],
        "2025-11-23T04:53:50Z",
    ),
]
LATER = [
    line("user", "u2", "t1", "the probe path was wrong, it is /healthz", "2025-11-24T09:00:00Z"),
    assistant(
        "a2",
        "u2",
        [
            {"type": "text", "text": "Fixed the zeppelin probe path."},
            {"type": "tool_use", "id": "toolu_2", "name": "Edit", "input": {"file_path": "/home/ana/proj/k8s.yaml"}},
        ],
        "2025-11-24T09:00:05Z",
    ),
]


def write(path, lines, mode="w"):
    with path.open(mode, encoding="utf-8") as handle:
        handle.write("".join(text + "\n" for text in lines))


@pytest.fixture
def setup(tmp_path):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    folder = tmp_path / "projects" / "-home-ana-proj"
    folder.mkdir(parents=True)
    session = folder / f"{SESSION}.jsonl"
    write(session, FIRST)
    index_workspace(workspace, log_sources=[("claude-code", tmp_path / "projects")])
    return workspace, tmp_path / "projects", session


def stored(workspace):
    db = sqlite_utils.Database(archive_path(workspace))
    (document,) = db.query("select id, title, body, extra, filter_tokens from documents where source like 'log:%'")
    messages = [dict(row) for row in db.query(f"select {MESSAGE_COLUMNS} from messages order by id")]
    indexed = db.execute("select count(*) from message_index").fetchone()[0]
    return document, messages, indexed


def read_whole(tmp_path, projects):
    """The same logs indexed from scratch into another workspace."""
    fresh = write_files(tmp_path / "fresh", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(fresh, log_sources=[("claude-code", projects)])
    return stored(fresh)


def reading_whole_fails(monkeypatch):
    """From now on a whole read of the source fails the test: only reading on is allowed."""

    def whole(*args, **kwargs):
        raise AssertionError("the whole source was read again")

    monkeypatch.setattr(claude_code, "read", whole)


def test_appended_lines_are_read_on_and_store_what_a_whole_read_stores(setup, tmp_path, monkeypatch):
    workspace, projects, session = setup
    reading_whole_fails(monkeypatch)
    write(session, CONTINUED, "a")
    index_workspace(workspace)
    write(session, LATER, "a")
    index_workspace(workspace)
    document, messages, indexed = stored(workspace)
    monkeypatch.undo()
    expected_document, expected_messages, expected_indexed = read_whole(tmp_path, projects)
    assert messages == expected_messages and indexed == expected_indexed
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user", "assistant"]
    assert "kubectl describe pod api" in messages[1]["tool_calls"]  # one response over two lines
    extra, expected_extra = json.loads(document["extra"]), json.loads(expected_document["extra"])
    assert extra == expected_extra and extra["last"] == "2025-11-24T09:00:05Z" and extra["commands"] == 1
    assert extra["touched_files"] == ["/home/ana/proj/k8s.yaml"]
    assert (document["title"], document["body"]) == (expected_document["title"], expected_document["body"])
    assert set(document["filter_tokens"].split()) == set(expected_document["filter_tokens"].split())
    # the new message is found, on its own day
    with Archive.for_workspace(workspace) as archive:
        response = archive.search({"query": "zeppelin", "mode": "keyword", "start_date": "2025-11-24"})
        (hit,) = response["results"]
        assert hit["message"]["index"] == 4
        assert archive.search({"query": "zeppelin", "mode": "keyword", "end_date": "2025-11-23"})["total"] == 0


def test_a_line_still_being_written_is_read_once_it_is_whole(setup, monkeypatch):
    workspace, _, session = setup
    reading_whole_fails(monkeypatch)
    half = LATER[0][: len(LATER[0]) // 2]
    with session.open("a", encoding="utf-8") as handle:
        handle.write(half)
    index_workspace(workspace)
    assert len(stored(workspace)[1]) == 2
    with session.open("a", encoding="utf-8") as handle:
        handle.write(LATER[0][len(half) :] + "\n")
    index_workspace(workspace)
    assert [m["text"] for m in stored(workspace)[1]][-1] == "the probe path was wrong, it is /healthz"


@pytest.mark.parametrize("change", ["truncated", "rewritten", "new file"])
def test_any_other_change_reads_the_source_again(setup, tmp_path, change):
    workspace, projects, session = setup
    if change == "truncated":
        write(session, FIRST[:1])
    elif change == "rewritten":
        write(session, [line("user", "x1", None, "a different session altogether", "2025-11-25T10:00:00Z")])
    else:
        write(session, CONTINUED, "a")
        write(session.with_name("0a-other.jsonl"), LATER)
    index_workspace(workspace)
    document, messages, indexed = stored(workspace) if change != "new file" else (None, None, None)
    if change == "new file":
        db = sqlite_utils.Database(archive_path(workspace))
        assert db.execute("select count(*) from documents where source like 'log:%'").fetchone()[0] == 2
        return
    expected_document, expected_messages, expected_indexed = read_whole(tmp_path, projects)
    assert messages == expected_messages and indexed == expected_indexed
    assert document["body"] == expected_document["body"]


def test_secrets_in_appended_lines_are_masked_and_counted(setup, monkeypatch):
    workspace, _, session = setup
    reading_whole_fails(monkeypatch)
    key = "sk-ant-api03-" + "Zq8vW2xK9mN4pR7tY1uE6iO3aS5dF0gH" * 2 + "AA"
    write(session, [line("user", "u9", "a1", f"use ANTHROPIC_API_KEY={key} now", "2025-11-23T05:00:00Z")], "a")
    index_workspace(workspace)
    document, messages, _ = stored(workspace)
    assert json.loads(document["extra"])["secrets_masked"] == 1 and messages[-1]["secrets"] == 1
    assert key not in messages[-1]["text"]


def test_a_sources_problems_are_told_on_every_run_until_it_is_read_again(setup):
    workspace, _, session = setup
    write(session, ["not json at all", '{"type": "hologram", "uuid": "h1"}'], "a")

    def problems():
        db = sqlite_utils.Database(archive_path(workspace))
        return [row for row in db.execute("select path, status, reason from index_problems") if "claude-code" in row[0]]

    first = index_workspace(workspace)
    told = problems()
    assert told and any("unknown type 'hologram'" in reason for _, _, reason in told)
    assert any("hologram" in problem.reason for problem in first.problems)
    again = index_workspace(workspace)  # nothing changed: the source is not read, its problems stay
    assert problems() == told and any("hologram" in problem.reason for problem in again.problems)
    write(session, LATER, "a")  # read on from the end: the problems before stay too
    index_workspace(workspace)
    assert set(told) <= set(problems())
    write(session, FIRST)  # read again, clean: they go
    index_workspace(workspace)
    assert problems() == []


def test_a_title_decided_by_appended_lines_is_the_one_a_whole_read_gives(tmp_path, monkeypatch):
    """A session opening with a local command has no request yet; the prompt appended later titles it."""
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    folder = tmp_path / "projects" / "-home-ana-proj"
    folder.mkdir(parents=True)
    session = folder / f"{SESSION}.jsonl"
    cleared = (
        "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>"
    )
    write(session, [line("user", "c1", None, cleared, "2025-11-23T04:50:00Z"),
                    line("user", "c2", "c1", "<local-command-stdout></local-command-stdout>", "2025-11-23T04:50:00Z")])  # fmt: skip
    index_workspace(workspace, log_sources=[("claude-code", tmp_path / "projects")])
    assert stored(workspace)[0]["title"] == "/clear"
    reading_whole_fails(monkeypatch)
    write(session, [line("user", "u1", "c2", "why does the kubernetes pod keep restarting", "2025-11-23T04:53:42Z"),
                    assistant("a1", "u1", [{"type": "text", "text": "Let me look."}], "2025-11-23T04:53:45Z")], "a")  # fmt: skip
    index_workspace(workspace)
    document, messages, _ = stored(workspace)
    monkeypatch.undo()
    expected_document, expected_messages, _ = read_whole(tmp_path, tmp_path / "projects")
    assert document["title"] == expected_document["title"] == "why does the kubernetes pod keep restarting"
    assert messages == expected_messages
