"""A message's long thinking and tool output stored packed (zlib, as a BLOB): masked before it is
packed, read back as text wherever it is shown (get_conversation, the web's row page and table
view, the ``message_texts`` view), and an archive of the version before packed in place."""

from __future__ import annotations

import html
import json
import random
import string
import zlib
from pathlib import Path
from typing import Any

import pytest
from conftest import started_datasette, write_files

from archivist.archive import migrations, packed, schema
from archivist.archive.database import sqlite3
from archivist.archive.indexer import index_workspace
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

SESSION = "5d2c1b0a-7e6f-4a3b-9c8d-1e2f3a4b5c6d"
RANDOM = random.Random(35)
GITHUB_TOKEN = "ghp_" + "".join(RANDOM.choice(string.ascii_letters + string.digits) for _ in range(33)) + "aZ9"
OUTPUT = "\n".join(f"tests/test_{n}.py::test_retry PASSED [{n}%]" for n in range(100)) + f"\ntoken={GITHUB_TOKEN}\n"
THINKING = "The retry loop sleeps before the first attempt; that is why the test is slow. " * 12
SHORT_OUTPUT = "2 passed in 0.21s"


def line(kind: str, uuid: str, at: str, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": kind,
        "sessionId": SESSION,
        "uuid": uuid,
        "timestamp": at,
        "cwd": "/home/ana/proj",
        "message": message,
    }


def session_lines() -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "pytest"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": OUTPUT}
    short_call = {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "pytest -k retry"}}
    short_result = {"type": "tool_result", "tool_use_id": "toolu_2", "content": SHORT_OUTPUT}
    model = "claude-sonnet-4-5-20250929"
    return [
        line("user", "u1", "2025-11-23T04:53:42Z", {"role": "user", "content": "Why is the retry test slow?"}),
        line(
            "assistant",
            "a1",
            "2025-11-23T04:53:45Z",
            {
                "role": "assistant",
                "model": model,
                "content": [{"type": "thinking", "thinking": THINKING, "signature": "EosO"}, call],
            },
        ),
        line("user", "u2", "2025-11-23T04:53:50Z", {"role": "user", "content": [result]}),
        line("assistant", "a2", "2025-11-23T04:53:55Z", {"role": "assistant", "model": model, "content": [short_call]}),
        line("user", "u3", "2025-11-23T04:53:58Z", {"role": "user", "content": [short_result]}),
    ]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace indexed with a Claude Code source of one session: a long thinking, a long tool output
    with a GitHub token in it, and a short one."""
    workspace = write_files(tmp_path / "workspace", {"notes/readme.md": "# Notes\n"})
    lines = "".join(json.dumps(item) + "\n" for item in session_lines())
    projects = write_files(tmp_path / "claude" / "projects", {f"-home-ana-proj/{SESSION}.jsonl": lines})
    index_workspace(workspace, log_sources=[("claude-code", projects)])
    return workspace


def stored(workspace: Path) -> list[tuple[Any, Any]]:
    """The thinking and tool output of each message, as the archive holds them, in order."""
    db = sqlite3.connect(archive_path(workspace))
    try:
        return db.execute("SELECT thinking, tool_output FROM messages ORDER BY id").fetchall()
    finally:
        db.close()


def test_a_long_text_is_packed_and_read_back_whole():
    text = "é 🙂 " + "the same words again and again " * 40
    assert isinstance(packed.packed(text), bytes) and len(packed.packed(text)) < len(text.encode()) / 4
    assert packed.unpacked(packed.packed(text)) == text


def test_what_packing_does_not_shrink_is_stored_as_it_is():
    noise = "".join(RANDOM.choice(string.ascii_letters + string.digits + string.punctuation) for _ in range(300))
    assert packed.packed("short " * 42) == "short " * 42 and packed.packed(noise) == noise
    assert [packed.packed(value) for value in (None, 3, 2.5, b"\x00")] == [None, 3, 2.5, b"\x00"]


def test_bytes_that_zlib_did_not_make_are_read_as_they_are():
    assert packed.unpacked(b"\x89PNG not zlib") == b"\x89PNG not zlib"
    assert packed.unpacked(zlib.compress(b"\xff\xfe broken")) == "\ufffd\ufffd broken"
    assert [packed.unpacked(value) for value in ("text", None, 7)] == ["text", None, 7]


def test_long_texts_are_stored_packed_and_masked(workspace: Path):
    rows = stored(workspace)
    thinking = [value for value, _ in rows if value]
    outputs = [value for _, value in rows if value]
    assert [type(value) for value in thinking] == [bytes]
    assert [type(value) for value in outputs] == [bytes, str] and outputs[1] == SHORT_OUTPUT
    assert packed.unpacked(thinking[0]) == THINKING
    whole = packed.unpacked(outputs[0])
    assert GITHUB_TOKEN not in whole and "[secret masked: github-token" in whole
    assert whole.startswith("tests/test_0.py::test_retry PASSED")
    assert GITHUB_TOKEN.encode() not in Path(archive_path(workspace)).read_bytes()


def test_get_conversation_reads_them_as_text(workspace: Path):
    with Archive.for_workspace(workspace) as archive:
        (session,) = archive.run("find_document", {"document": f"claude-code:-home-ana-proj/{SESSION}"})
        rows = archive.run("get_conversation", {"document": str(session["id"]), "include": "thinking,tool_output"})
        plain = archive.run("get_conversation", {"document": str(session["id"])})
    assert [row["thinking"] for row in rows if row["thinking"]] == [THINKING]
    outputs = [row["tool_output"] for row in rows if row["tool_output"]]
    assert len(outputs) == 2 and "[secret masked: github-token" in outputs[0] and outputs[1] == SHORT_OUTPUT
    assert {row["thinking"] for row in plain} == {None} and {row["tool_output"] for row in plain} == {None}


async def test_the_web_shows_them_as_text(workspace: Path):
    datasette = await started_datasette(archive_path(workspace))
    with Archive.for_workspace(workspace) as archive:
        (session,) = archive.run("find_document", {"document": f"claude-code:-home-ana-proj/{SESSION}"})
    page = await datasette.client.get(f"/document/{session['id']}")
    assert page.status_code == 200 and "tests/test_0.py::test_retry PASSED" in page.text
    assert html.escape(THINKING.strip(), quote=False)[:60] in page.text
    row_id = int(session["id"]) * schema.MESSAGE_IDS + 2
    row = await datasette.client.get(f"/archive/messages/{row_id}")
    assert row.status_code == 200 and "tests/test_99.py::test_retry PASSED [99%]" in row.text
    assert "Binary:" not in row.text
    table = await datasette.client.get(f"/archive/messages?document_id={session['id']}")
    assert table.status_code == 200 and "Binary:" not in table.text and "test_42.py" in table.text
    texts = await datasette.client.get(f"/archive/message_texts.json?id={row_id}&_shape=array")
    assert texts.status_code == 200 and texts.json()[0]["tool_output"].startswith("tests/test_0.py")


def unpack_all(path: Path) -> None:
    """The archive at ``path`` as the version before packing left it: its texts stored as text, its
    schema without the packing migration."""
    db = sqlite3.connect(path)
    packed.register(db)
    with db:
        db.execute("UPDATE messages SET thinking = archivist_text(thinking), tool_output = archivist_text(tool_output)")
        db.execute("DROP VIEW message_texts")
        db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm022_packed_texts'")
    db.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION - 1}")
    db.close()


def test_an_archive_of_the_version_before_is_packed_in_place(workspace: Path, monkeypatch):
    path = archive_path(workspace)
    before = [tuple(map(packed.unpacked, row)) for row in stored(workspace)]
    unpack_all(path)
    assert all(not isinstance(value, bytes) for row in stored(workspace) for value in row)
    monkeypatch.setattr(migrations, "PACK_BATCH", 1)  # one message at a time: every batch's edge
    assert schema.upgrade(path)
    after = stored(workspace)
    assert [tuple(map(packed.unpacked, row)) for row in after] == before
    assert [type(value) for row in after for value in row if value] == [bytes, bytes, str]
    with Archive.for_workspace(workspace) as archive:
        (session,) = archive.run("find_document", {"document": f"claude-code:-home-ana-proj/{SESSION}"})
        rows = archive.run("get_conversation", {"document": str(session["id"]), "include": "thinking"})
    assert [row["thinking"] for row in rows if row["thinking"]] == [THINKING]
