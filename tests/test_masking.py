"""Secrets are masked in every field that carries text, for agent logs and workspace documents alike.

Each test plants made-up secrets (random, in the shape of real ones) where a user's logs
and notes can hold them, indexes as a user does, and then reads every byte the archive
wrote: no secret may be there, in any table or column, nor in what the pages serve.
"""

import base64
import json
import random
import re
import string
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner
from conftest import started_datasette, write_files

from archivist.cli import cli
from archivist.workspace import archive_path, secret_key_path

RANDOM = random.Random(20261126)
ALNUM = string.ascii_letters + string.digits
TAGGED = re.compile(r"\[secret masked: ([a-z0-9-]+) #([0-9a-f]{6})\]")


def token(prefix: str = "ghp_", length: int = 36) -> str:
    while True:
        value = "".join(RANDOM.choice(ALNUM) for _ in range(length))
        if any(c.isdigit() for c in value) and any(c.islower() for c in value) and any(c.isupper() for c in value):
            return prefix + value


def archive_bytes(workspace: Path) -> bytes:
    """Everything the archive wrote: the database and SQLite's files beside it (not the masking key)."""
    archive = archive_path(workspace)
    return b"".join(
        path.read_bytes()
        for path in archive.parent.iterdir()
        if path.name.startswith(archive.name) and path != secret_key_path(archive)
    )


def index(workspace: Path, *arguments: str) -> None:
    result = CliRunner().invoke(cli, ["index", str(workspace), *arguments])
    assert result.exit_code == 0, result.output


def claude_line(kind: str, uuid: str, content: object, cwd: str, branch: str, at: str) -> str:
    message: dict[str, object] = {"role": "assistant" if kind == "assistant" else "user", "content": content}
    if kind == "assistant":
        message.update({"id": f"msg_{uuid}", "model": "claude-sonnet-4-5-20250929"})
    return json.dumps(
        {
            "type": kind,
            "uuid": uuid,
            "sessionId": "5f0c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f",
            "cwd": cwd,
            "gitBranch": branch,
            "timestamp": at,
            "message": message,
        }
    )


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A workspace and a Claude Code source whose session holds a secret in every field."""
    secrets = {name: token() for name in ("folder", "branch", "file", "command", "input", "output", "title")}
    secrets["anthropic"] = "sk-ant-api03-" + token("", 93) + "AA"
    secrets["aws"] = token("", 40).replace("a", "/")
    secrets["folder-only"] = token("hf_", 34)
    cwd = f"/home/ana/{secrets['folder']}/app"
    branch = f"feature/{secrets['branch']}"
    # Claude Code names a project's folder after its path, every character but letters and digits
    # turned into '-': the token of a folder the session's lines no longer name stands there so.
    project = tmp_path / "claude" / "projects" / re.sub("[^A-Za-z0-9]", "-", f"/home/ana/{secrets['folder-only']}/app")
    project.mkdir(parents=True)
    wrapped = secrets["anthropic"]
    credentials = base64.b64encode(f"[default]\naws_secret_access_key = {secrets['aws']}\n".encode()).decode()
    lines = [
        claude_line(
            "user", "u1", f"fix the deploy with {secrets['title']} please", cwd, branch, "2025-11-23T05:00:00Z"
        ),
        claude_line(
            "assistant",
            "a1",
            [
                {"type": "text", "text": "Reading the config and running the deploy."},
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Read",
                    "input": {"file_path": f"/srv/{secrets['file']}/config.yml"},
                },
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "Bash",
                    "input": {"command": f"deploy --token {secrets['command']}", "note": secrets["input"]},
                },
            ],
            cwd,
            branch,
            "2025-11-23T05:00:05Z",
        ),
        claude_line(
            "user",
            "u2",
            [{"type": "tool_result", "tool_use_id": "t2", "content": f"deployed with {secrets['output']}"}],
            cwd,
            branch,
            "2025-11-23T05:00:09Z",
        ),
        claude_line(
            "user",
            "u3",
            f"the key wrapped by my terminal at eighty columns: {wrapped[:30]}\n{wrapped[30:80]}\n{wrapped[80:]}\n"
            f"and the credentials as I pasted them: echo {credentials} | base64 -d\n"
            f"again the same one: {secrets['title']}",
            cwd,
            branch,
            "2025-11-23T05:01:00Z",
        ),
    ]
    (project / "5f0c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return workspace, tmp_path / "claude" / "projects", secrets


def test_no_secret_of_an_agent_log_reaches_any_column_of_the_archive(planted):
    workspace, projects, secrets = planted
    index(workspace, "--source", f"claude-code={projects}")
    stored = archive_bytes(workspace)
    assert b"wrapped by my terminal" in stored
    for name, secret in secrets.items():
        assert secret.encode() not in stored, name
    assert secrets["folder-only"][3:].encode() not in stored
    for half in (secrets["anthropic"][:30], secrets["anthropic"][30:80], secrets["anthropic"][80:]):
        assert half.encode() not in stored
    db = sqlite_utils.Database(archive_path(workspace))
    (document,) = db.query("SELECT key, path, name, title, extra FROM documents WHERE kind = 'conversation'")
    extra = json.loads(document["extra"])
    assert TAGGED.search(document["key"]) and TAGGED.search(document["path"]) and TAGGED.search(document["title"])
    assert TAGGED.search(extra["project"]) and TAGGED.search(extra["branch"])
    assert all(TAGGED.search(file) for file in extra["files"]) and TAGGED.search(extra["touched_files"][0])
    assert extra["secrets_masked"] >= 10
    (log_file,) = db.query("SELECT path FROM log_files")
    assert TAGGED.search(log_file["path"])


def test_the_same_secret_gets_the_same_marker_throughout_a_session_and_others_another(planted):
    workspace, projects, _secrets = planted
    index(workspace, "--source", f"claude-code={projects}")
    db = sqlite_utils.Database(archive_path(workspace))
    texts = [row["text"] for row in db.query("SELECT text FROM messages ORDER BY seq")]
    first, last = TAGGED.search(texts[0]), TAGGED.findall(texts[-1])
    assert first and last[-1] == (first.group(1), first.group(2))  # the title's secret, said twice
    tags = {tag for text in texts for _, tag in TAGGED.findall(text)}
    assert len(tags) == 3  # the title's, the wrapped key's and the encoded credentials'
    (title,) = db.query("SELECT title FROM documents WHERE kind = 'conversation'")
    assert TAGGED.search(title["title"]).group(2) == first.group(2)
    index(workspace)  # read again: the same markers
    assert [row["text"] for row in db.query("SELECT text FROM messages ORDER BY seq")] == texts


def test_what_is_read_on_from_an_appended_line_is_masked_with_the_same_markers(planted):
    workspace, projects, secrets = planted
    index(workspace, "--source", f"claude-code={projects}")
    session = next(projects.rglob("*.jsonl"))
    cwd = f"/home/ana/{secrets['folder']}/app"
    with session.open("a", encoding="utf-8") as handle:
        handle.write(
            claude_line("user", "u9", f"once more {secrets['title']}", cwd, "main", "2025-11-23T06:00:00Z") + "\n"
        )
    index(workspace)
    assert secrets["title"].encode() not in archive_bytes(workspace)
    db = sqlite_utils.Database(archive_path(workspace))
    texts = [row["text"] for row in db.query("SELECT text FROM messages ORDER BY seq")]
    assert TAGGED.search(texts[-1]).group(2) == TAGGED.search(texts[0]).group(2)
    (row,) = db.query("SELECT count(*) AS n FROM log_files")
    assert row["n"] == 1


NOTE = """---
title: Staging access {title}
tags: [ops, {tag}]
---
# Staging

Log in with GITHUB_TOKEN={body} and then run the deploy.
"""


@pytest.fixture
def workspace_with_secrets(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    secrets = {"title": token(), "tag": token(), "body": token(), "memory": token(), "record": token()}
    memory = json.dumps({"content": f"the deploy key is {secrets['memory']}", "tags": ["ops"], "memory_type": "note"})
    record = json.dumps({"entity_type": "bug", "entity_id": "7", "title": "Leaked", "body": f"see {secrets['record']}"})
    workspace = write_files(
        tmp_path / "workspace",
        {
            "notes/staging.md": NOTE.format(**secrets),
            "memories/ops.jsonl": memory + "\n",
            "records/tracker.jsonl": record + "\n",
        },
    )
    return workspace, secrets


def test_workspace_documents_are_masked_in_every_stored_field(workspace_with_secrets):
    workspace, secrets = workspace_with_secrets
    index(workspace)
    stored = archive_bytes(workspace)
    assert b"and then run the deploy" in stored
    for name, secret in secrets.items():
        assert secret.encode() not in stored, name
    db = sqlite_utils.Database(archive_path(workspace))
    (note,) = db.query("SELECT title, tags, body FROM documents WHERE kind = 'note'")
    assert TAGGED.search(note["title"]) and TAGGED.search(note["tags"]) and TAGGED.search(note["body"])


async def test_the_source_view_serves_the_masked_text_with_the_documents_markers(workspace_with_secrets):
    workspace, secrets = workspace_with_secrets
    index(workspace)
    db = sqlite_utils.Database(archive_path(workspace))
    (note,) = db.query("SELECT id, body FROM documents WHERE kind = 'note'")
    datasette = await started_datasette(archive_path(workspace))
    response = await datasette.client.get(f"/document/{note['id']}/source")
    assert response.status_code == 200
    assert "and then run the deploy" in response.text
    for secret in secrets.values():
        assert secret not in response.text
    body_marker = TAGGED.search(note["body"]).group(0)
    assert body_marker in response.text


def test_embeddings_hold_only_masked_text(workspace_with_secrets):
    workspace, secrets = workspace_with_secrets
    result = CliRunner().invoke(cli, ["index", str(workspace), "--embed"])
    assert result.exit_code == 0, result.output
    db = sqlite_utils.Database(archive_path(workspace))
    assert db.execute("SELECT count(*) FROM embeddings").fetchone()[0] > 0
    stored = archive_bytes(workspace)
    for name, secret in secrets.items():
        assert secret.encode() not in stored, name
    metadata = " ".join(row[0] or "" for row in db.execute("SELECT metadata FROM embeddings"))
    assert TAGGED.search(metadata)  # the note's title, as its vector records it


def test_the_masking_key_lives_beside_the_archive_for_its_owner_only(workspace_with_secrets):
    workspace, _ = workspace_with_secrets
    index(workspace)
    key = secret_key_path(archive_path(workspace))
    assert key.stat().st_mode & 0o777 == 0o600
    assert key.read_text().strip().encode() not in archive_bytes(workspace)
    db = sqlite_utils.Database(archive_path(workspace))
    before = [row["body"] for row in db.query("SELECT body FROM documents ORDER BY id")]
    (workspace / "notes" / "staging.md").touch()
    index(workspace)
    assert [row["body"] for row in db.query("SELECT body FROM documents ORDER BY id")] == before


async def test_the_source_view_never_serves_the_masking_key_through_a_link(workspace_with_secrets):
    workspace, _ = workspace_with_secrets
    index(workspace)
    db = sqlite_utils.Database(archive_path(workspace))
    (note,) = db.query("SELECT id FROM documents WHERE kind = 'note'")
    note_file = workspace / "notes" / "staging.md"
    note_file.unlink()
    note_file.symlink_to(secret_key_path(archive_path(workspace)))
    key = secret_key_path(archive_path(workspace)).read_text().strip()
    datasette = await started_datasette(archive_path(workspace))
    response = await datasette.client.get(f"/document/{note['id']}/source")
    assert response.status_code == 404
    assert key not in response.text


def test_a_memory_nested_too_deeply_is_skipped_alone(tmp_path):
    deep = {"content": "deep", "nested": json.loads("[" * 700 + "]" * 700)}
    lines = [{"content": "first memory kept"}, deep, {"content": "last memory kept"}]
    workspace = write_files(tmp_path / "ws", {"memories/m.jsonl": "\n".join(json.dumps(line) for line in lines)})
    index(workspace)
    db = sqlite_utils.Database(archive_path(workspace))
    assert sorted(row["body"] for row in db.query("SELECT body FROM documents")) == [
        "first memory kept",
        "last memory kept",
    ]
    (reason,) = [row["reason"] for row in db.query("SELECT reason FROM index_problems")]
    assert "line 2: JSON nested deeper than 100 levels" in reason


def test_a_secret_in_a_name_a_session_repeats_is_masked_and_counted_wherever_it_stands():
    """A model's or a tool's name is masked once a session (``prepared._Names``): each message
    that holds it is still masked, and counts it."""
    from archivist.agents import Message, Session, ToolCall
    from archivist.archive.prepared import mask_session
    from archivist.secrets import Masker

    secret = token()
    messages = [
        Message("assistant", "one", model=f"model-{secret}", tool_calls=[ToolCall(f"tool {secret}")]),
        Message("assistant", "two", model=f"model-{secret}", tool_calls=[ToolCall("Read")]),
        Message("assistant", "three", model="claude", tool_calls=[ToolCall(f"tool {secret}")]),
    ]
    masker = Masker(b"k" * 32)
    masked, found = mask_session(Session("s", "claude-code", "title", messages), masker)
    assert found.messages == [2, 1, 1] and masker.count == 4
    assert all(secret not in repr(message) for message in masked.messages)
    assert masked.messages[0].model == masked.messages[1].model and TAGGED.search(masked.messages[0].model or "")
    assert masked.messages[1].tool_calls[0].name == "Read" and masked.messages[2].model == "claude"
