"""Agent-log sources in an archive: adding, re-reading, listing, discovering and removing them."""

import json
import re
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner
from conftest import write_files

from archivist.archive import sessions
from archivist.cli import cli
from archivist.errors import ArchivistError
from archivist.workspace import archive_path

SESSION = "7f3c2a10-5b1e-4c1a-9d2e-0a1b2c3d4e5f"


def line(kind, uuid, parent, text_or_blocks, at, **extra):
    role = "assistant" if kind == "assistant" else "user"
    message = {"role": role, "content": text_or_blocks}
    if role == "assistant":
        message.update({"id": f"msg_{uuid}", "type": "message", "model": "claude-sonnet-4-5-20250929"})
    return json.dumps(
        {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/ana/proj",
            "sessionId": SESSION,
            "version": "2.0.49",
            "gitBranch": "main",
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": at,
            **extra,
        }
    )


def write_session(root: Path, texts: list[str]) -> Path:
    """A Claude Code session of these messages (user, assistant, ... a minute apart), under
    ``root/projects``; returns that folder, the source to read."""
    lines, parent = [], None
    for n, text in enumerate(texts):
        kind = "user" if n % 2 == 0 else "assistant"
        content = text if kind == "user" else [{"type": "text", "text": text}]
        lines.append(line(kind, f"m{n}", parent, content, f"2025-11-23T05:{n:02d}:00.000Z"))
        parent = f"m{n}"
    project = root / "projects" / "-home-ana-proj"
    project.mkdir(parents=True)
    (project / f"{SESSION}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root / "projects"


SESSION_LINES = [
    line("user", "u1", None, "why does the kubernetes pod keep restarting", "2025-11-23T04:53:42.362Z"),
    line(
        "assistant",
        "a1",
        "u1",
        [
            {"type": "text", "text": "Let me look at the liveness probe."},
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "kubectl describe pod api"}},
        ],
        "2025-11-23T04:53:45.100Z",
    ),
]


@pytest.fixture
def projects(tmp_path):
    """A Claude Code projects folder with one session."""
    folder = tmp_path / "claude" / "projects" / "-home-ana-proj"
    folder.mkdir(parents=True)
    (folder / f"{SESSION}.jsonl").write_text("\n".join(SESSION_LINES) + "\n", encoding="utf-8")
    return tmp_path / "claude" / "projects"


@pytest.fixture
def workspace(tmp_path):
    return write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})


def run(*args):
    result = CliRunner().invoke(cli, [str(arg) for arg in args])
    return result


def conversations(workspace):
    db = sqlite_utils.Database(archive_path(workspace))
    return [
        dict(row)
        for row in db.query(
            "select d.id, d.type, d.title, d.path, d.day, d.body, d.extra, "
            "(select t.body from document_texts t where t.id = d.id) as text, "
            "(select count(*) from messages m where m.document_id = d.id) as messages "
            "from documents d where d.source like 'log:%' order by d.id"
        )
    ]


def test_every_kind_named_is_read_by_its_module():
    for kind in sessions.KINDS:
        assert kind == sessions.module(kind).KIND


def test_a_source_is_kind_equals_path_of_a_known_kind():
    with pytest.raises(ArchivistError) as unknown:
        sessions.parse_argument("notakind=/tmp")
    assert unknown.value.code == "INVALID_SOURCE"
    assert "Known kinds: " + ", ".join(sessions.KINDS) + "." in unknown.value.message  # every kind registered
    with pytest.raises(ArchivistError) as shapeless:
        sessions.parse_argument("claude-code")
    assert shapeless.value.code == "INVALID_SOURCE" and "KIND=PATH" in shapeless.value.message


def test_a_bad_source_is_one_line_and_adds_nothing(workspace, tmp_path):
    too_long = "/" + "a" * 300 + "/x"
    arguments = [f"claude-code={tmp_path / 'missing'}", "notakind=/tmp", f"claude-code={workspace / 'notes'}"]
    arguments += [f"{kind}={too_long}" for kind in sessions.KINDS]
    for argument in arguments:
        result = run("index", workspace, "--source", argument)
        assert result.exit_code == 1, (argument, result.output)
        assert "INVALID_SOURCE" in result.stderr or "source" in result.stderr.lower()
        assert isinstance(result.exception, SystemExit)  # a clean exit, not an exception
        assert not archive_path(workspace).exists()  # nothing created, nothing added


def test_a_source_is_indexed_remembered_and_read_again_only_when_it_changes(workspace, projects):
    result = run("index", workspace, "--source", f"claude-code={projects}")
    assert result.exit_code == 0, result.output
    (conversation,) = conversations(workspace)
    assert conversation["type"] == "claude-code" and conversation["day"] == "2025-11-23"
    assert conversation["messages"] >= 2 and "liveness probe" in conversation["text"]
    # its body is its opening prompt; its whole text is its messages
    assert conversation["body"] == "why does the kubernetes pod keep restarting"
    extra = json.loads(conversation["extra"])
    assert extra["project"] == "/home/ana/proj" and extra["branch"] == "main"
    listed = json.loads(run("sources", workspace, "--json").stdout)
    assert [(row["kind"], row["path"], row["documents"]) for row in listed] == [("claude-code", str(projects), 1)]
    first_read = listed[0]["read_at"]

    # a later run without --source reads it again only if a file changed
    assert run("index", workspace).exit_code == 0
    assert json.loads(run("sources", workspace, "--json").stdout)[0]["read_at"] == first_read
    session_file = projects / "-home-ana-proj" / f"{SESSION}.jsonl"
    with session_file.open("a", encoding="utf-8") as appended:
        appended.write(line("user", "u2", "a1", "the probe path was wrong", "2025-11-23T05:10:00.000Z") + "\n")
    assert run("index", workspace).exit_code == 0
    (again,) = conversations(workspace)
    assert again["id"] == conversation["id"] and again["messages"] == conversation["messages"] + 1
    assert "probe path was wrong" in again["text"] and again["body"] == conversation["body"]

    # the conversation is searchable like any other
    found = json.loads(run("search", workspace, "liveness probe", "--json").stdout)["results"]
    assert [row["id"] for row in found] == [conversation["id"]]

    removed = run("sources", workspace, "--remove", f"claude-code={projects}", "--json")
    assert removed.exit_code == 0, removed.output
    assert json.loads(removed.stdout) == [] and conversations(workspace) == []
    db = sqlite_utils.Database(archive_path(workspace))
    assert db.execute("select count(*) from messages").fetchone()[0] == 0


def test_removing_a_source_that_is_not_there_is_invalid_source(workspace, projects):
    assert run("index", workspace).exit_code == 0
    result = run("sources", workspace, "--remove", f"claude-code={projects}")
    assert result.exit_code == 1 and "INVALID_SOURCE" in result.stderr


def test_discover_finds_the_default_locations_that_hold_logs(tmp_path, projects):
    home = tmp_path / "home"
    (home / ".codex" / "sessions").mkdir(parents=True)  # there, but empty: not a source
    found = sessions.discover({"CLAUDE_CONFIG_DIR": str(projects.parent)}, home)
    assert found == [("claude-code", projects)]
    assert ("claude-code", home / ".claude" / "projects") in sessions.default_locations({}, home)
    assert ("llm", tmp_path / "x" / "logs.db") in sessions.default_locations(
        {"LLM_USER_PATH": str(tmp_path / "x")}, home
    )


def test_reading_a_source_changes_nothing_in_it(workspace, projects):
    def snapshot():
        return sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in projects.rglob("*"))

    before = snapshot()
    assert run("index", workspace, "--source", f"claude-code={projects}").exit_code == 0
    assert snapshot() == before


def test_secrets_in_a_session_never_reach_the_archive(workspace, projects):
    import random
    import string

    rng = random.Random(7)
    key = "sk-ant-api03-" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(90)) + "AA"
    password = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(16)) + "!9"
    session_file = projects / "-home-ana-proj" / f"{SESSION}.jsonl"
    with session_file.open("a", encoding="utf-8") as appended:
        appended.write(line("user", "u3", "a1", f"use ANTHROPIC_API_KEY={key} please", "2025-11-23T05:00:00Z") + "\n")
        appended.write(line("user", "u4", "u3", f"and DB_PASSWORD={password}", "2025-11-23T05:01:00Z") + "\n")
    before = session_file.read_bytes()
    assert run("index", workspace, "--source", f"claude-code={projects}").exit_code == 0
    assert session_file.read_bytes() == before  # the log keeps what it holds
    archive = archive_path(workspace)
    stored = b"".join(path.read_bytes() for path in archive.parent.iterdir() if path.name.startswith(archive.name))
    assert b"please" in stored  # the words around the secrets are there (in the archive or its log)
    for secret in (key, password):
        assert secret.encode() not in stored
    (conversation,) = conversations(workspace)
    assert json.loads(conversation["extra"])["secrets_masked"] == 2
    assert re.search(r"\[secret masked: anthropic-api-key #[0-9a-f]{6}\]", conversation["text"])
    found = json.loads(run("search", workspace, "ANTHROPIC_API_KEY", "--json").stdout)["results"]
    assert found and key not in json.dumps(found)
