"""Agent logs too large to hold: a line over 64 MB is skipped, a file over 1 GB read whole is not read.

Either way reading goes on, memory stays bounded, what was read before is kept, and the
reason is told. The files are sparse: gigabytes on paper, next to nothing on disk.
"""

from __future__ import annotations

import io
import json
import resource
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from conftest import write_files

from archivist.agents import (
    LONG_LINE,
    MAX_FILE_BYTES,
    MAX_LINE_BYTES,
    aider,
    chatgpt_export,
    claude_code,
    claude_export,
    codex,
    gemini_cli,
    head_lines,
    held_whole,
    lines,
    specstory,
    too_large,
)
from archivist.archive.indexer import index_workspace
from archivist.workspace import archive_path

GB = 1024**3
MB = 1024**2
HUGE = 2 * GB  # a file of 2 GB
LONG = 100 * MB  # a line over the limit that still ends with a newline
LONG_SKIPPED = f"1 line skipped: 1 {LONG_LINE}"
NOT_READ = "not read: 2 GB, more than the 1 GB a file read whole may have"
SESSION = "7f3c2a10-5b1e-4c1a-9d2e-0a1b2c3d4e5f"
OTHER = "0c9e8d7f-1a2b-4c3d-8e9f-a0b1c2d3e4f5"


SPARSE: list[Path] = []  # removed after each test: the memory the system cached them in is freed at once


def sparse(path: Path, head: bytes, size: int = HUGE, tail: bytes = b"") -> Path:
    """``head``, then NUL bytes (a hole, no newline) up to ``size`` bytes, then ``tail``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.write(head)
        handle.truncate(size)
        if tail:
            handle.seek(size)
            handle.write(tail)
    SPARSE.append(path)
    return path


@pytest.fixture(autouse=True)
def remove_sparse_files() -> Iterator[None]:
    yield
    while SPARSE:
        SPARSE.pop().unlink(missing_ok=True)


def peak_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def test_the_limits_and_the_reason_a_file_is_not_read(tmp_path: Path) -> None:
    assert MAX_LINE_BYTES == 64 * MB and MAX_FILE_BYTES == GB and LONG_LINE == "line over 64 MB"
    small = tmp_path / "small.json"
    small.write_text("{}")
    assert too_large(small) is None and too_large(tmp_path / "missing.json") is None
    assert too_large(sparse(tmp_path / "big.json", b"{")) == NOT_READ
    assert too_large(sparse(tmp_path / "just-over.json", b"{", GB + 1)) == (
        "not read: 1.1 GB, more than the 1 GB a file read whole may have"  # never shown as the limit itself
    )


def test_lines_skip_a_line_over_the_limit_and_count_every_byte() -> None:
    data = b"ab\n" + b"x" * 10 + b"\n" + b"yyyy\n" + b"y" * 5 + b"\n" + b"zzzzz"
    got = list(lines(io.BytesIO(data), limit=5))
    # at most 5 bytes, the newline counted; the last line may end without one
    assert got == [(b"ab\n", 3), (None, 11), (b"yyyy\n", 5), (None, 6), (b"zzzzz", 5)]
    assert sum(size for _, size in got) == len(data)
    assert list(lines(io.BytesIO(b"ab\n" + b"x" * 7), limit=5)) == [(b"ab\n", 3), (None, 7)]
    assert list(head_lines(io.BytesIO(data), limit=5)) == [b"ab\n"]  # a peek stops at the first long line


# --- Claude Code ------------------------------------------------------------------------


def claude_line(kind: str, uuid: str, parent: str | None, content: Any, at: str, session: str = SESSION) -> bytes:
    message: dict[str, Any] = {"role": "assistant" if kind == "assistant" else "user", "content": content}
    if kind == "assistant":
        message.update({"id": f"msg_{uuid}", "type": "message", "model": "claude-sonnet-4-5-20250929"})
    record = {
        "parentUuid": parent,
        "isSidechain": False,
        "cwd": "/home/ana/proj",
        "sessionId": session,
        "type": kind,
        "message": message,
        "uuid": uuid,
        "timestamp": at,
    }
    return (json.dumps(record) + "\n").encode()


FIRST = claude_line("user", "u1", None, "why does the pod keep restarting", "2025-11-23T04:53:42Z")
ANSWER = claude_line("assistant", "a1", "u1", [{"type": "text", "text": "The probe fails."}], "2025-11-23T04:53:45Z")


@pytest.fixture
def claude_projects(tmp_path: Path) -> Path:
    """A projects folder: one normal session, and one whose first line is followed by 2 GB with no newline."""
    projects = tmp_path / "claude" / "projects"
    folder = projects / "-home-ana-proj"
    folder.mkdir(parents=True)
    (folder / f"{OTHER}.jsonl").write_bytes(
        claude_line("user", "o1", None, "list the pods", "2025-11-22T10:00:00Z", OTHER)
        + claude_line("assistant", "o2", "o1", "Here they are.", "2025-11-22T10:00:05Z", OTHER)
    )
    sparse(folder / f"{SESSION}.jsonl", FIRST)
    return projects


def test_a_claude_code_line_of_2_gb_is_skipped_in_bounded_memory(claude_projects: Path) -> None:
    problems: list[str] = []
    before = peak_kib()
    sessions = {session.key: session for session in claude_code.read(claude_projects, problems)}
    grown = peak_kib() - before

    assert grown < 512 * 1024, f"reading grew the peak memory by {grown} KiB"
    assert set(sessions) == {f"-home-ana-proj/{OTHER}", f"-home-ana-proj/{SESSION}"}
    neighbour = sessions[f"-home-ana-proj/{OTHER}"]
    assert [m.text for m in neighbour.messages] == ["list the pods", "Here they are."] and neighbour.problems == []
    big = sessions[f"-home-ana-proj/{SESSION}"]
    assert [m.text for m in big.messages] == ["why does the pod keep restarting"]
    assert big.problems == [LONG_SKIPPED]  # told, even as the last line without a newline
    assert big.tail is not None and big.tail.resume_at == 0
    assert problems == []


def test_offsets_stay_byte_exact_past_a_skipped_line(tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-home-ana-proj"
    file = sparse(folder / f"{SESSION}.jsonl", FIRST, LONG, b"\n" + ANSWER)
    answer_at = LONG + 1  # the NUL bytes after FIRST and the newline at LONG: one line of about 100 MB

    (session,) = map(held_whole, claude_code.read(file))  # (a file of 100 MB is read in parts)
    assert [m.text for m in session.messages] == ["why does the pod keep restarting", "The probe fails."]
    assert session.problems == [LONG_SKIPPED]
    assert session.tail is not None and (session.tail.resume_at, session.tail.resume_seq) == (answer_at, 1)
    with file.open("rb") as handle:
        handle.seek(answer_at)
        assert handle.readline() == ANSWER

    again = claude_code.read_from(file, answer_at, session.key, session.project)  # read on from the tail
    assert again is not None and [m.text for m in again.messages] == ["The probe fails."] and again.problems == []
    whole = claude_code.read_from(file, 0, session.key, session.project)  # from before the long line
    assert whole is not None and len(whole.messages) == 2 and whole.problems == [LONG_SKIPPED]
    assert whole.tail is not None and whole.tail.resume_at == answer_at


def test_a_session_file_that_is_only_a_long_line_is_told_in_problems(tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-home-ana-proj"
    sparse(folder / f"{SESSION}.jsonl", b"", LONG, b"\n")
    problems: list[str] = []
    assert list(claude_code.read(folder, problems)) == []
    assert problems == [f"-home-ana-proj/{SESSION}: {LONG_SKIPPED}"]
    assert claude_code.check(folder) is None  # a peek stops at the long line: nothing to refuse the folder for


def test_the_index_tells_the_user_about_the_long_line(tmp_path: Path, claude_projects: Path) -> None:
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[("claude-code", claude_projects)])
    db = sqlite_utils.Database(archive_path(workspace))
    told = db.execute("select path, status, reason from index_problems").fetchall()
    assert (f"claude-code:-home-ana-proj/{SESSION}", "degraded", LONG_SKIPPED) in told
    titles = sorted(row[0] for row in db.execute("select title from documents where source like 'log:%'"))
    assert titles == ["list the pods", "why does the pod keep restarting"]


# --- Codex ------------------------------------------------------------------------------


def codex_line(kind: str, payload: dict[str, Any], at: str = "2025-10-29T00:59:38.317Z") -> bytes:
    return (json.dumps({"timestamp": at, "type": kind, "payload": payload}) + "\n").encode()


def codex_rollout(session_id: str, text: str) -> bytes:
    meta = {"id": session_id, "timestamp": "2025-10-29T00:59:38.317Z", "cwd": "/home/ana/proj", "source": "cli"}
    content = [{"type": "input_text", "text": text}]
    return codex_line("session_meta", meta) + codex_line(
        "response_item", {"type": "message", "role": "user", "content": content}
    )


def test_a_codex_line_of_2_gb_is_skipped_and_a_2_gb_json_rollout_is_not_read(tmp_path: Path) -> None:
    day = tmp_path / "sessions" / "2025" / "10" / "29"
    day.mkdir(parents=True)
    big_id, small_id = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5", "019a2d7a-41c4-78b1-b7cc-a45d62a89cd6"
    sparse(day / f"rollout-2025-10-29T00-59-38-{big_id}.jsonl", codex_rollout(big_id, "fix the failing test"))
    (day / f"rollout-2025-10-29T00-59-39-{small_id}.jsonl").write_bytes(codex_rollout(small_id, "add a test"))
    sparse(day / "rollout-2025-10-29T00-59-40-old.json", b'{"session": {"id": "old"}, "items": [')

    problems: list[str] = []
    before = peak_kib()
    sessions = {session.key: session for session in codex.read(tmp_path / "sessions", problems)}
    assert peak_kib() - before < 512 * 1024

    assert set(sessions) == {big_id, small_id}
    assert [m.text for m in sessions[big_id].messages] == ["fix the failing test"]
    assert sessions[big_id].problems == [LONG_SKIPPED]
    assert [m.text for m in sessions[small_id].messages] == ["add a test"] and sessions[small_id].problems == []
    assert problems == [f"2025/10/29/rollout-2025-10-29T00-59-40-old.json: {NOT_READ}"]


# --- Gemini CLI -------------------------------------------------------------------------


def gemini_json(session_id: str, text: str) -> str:
    message = {"id": "m1", "timestamp": "2025-09-18T02:45:11.030Z", "type": "user", "content": [{"text": text}]}
    return json.dumps({"sessionId": session_id, "projectHash": "ab12", "messages": [message]}, indent=2)


def test_a_gemini_json_session_of_2_gb_is_not_read_and_a_long_jsonl_line_is_skipped(tmp_path: Path) -> None:
    chats = tmp_path / "tmp" / "ab12" / "chats"
    chats.mkdir(parents=True)
    sparse(chats / "session-2025-09-18T02-45-big.json", b"{\n")
    (chats / "session-2025-09-18T02-46-small.json").write_text(gemini_json("small", "fix the typo"))
    first = json.dumps({"sessionId": "lines", "projectHash": "ab12"}) + "\n"
    user = {"id": "u1", "timestamp": "2025-09-18T03:00:00Z", "type": "user", "content": [{"text": "commit it"}]}
    reply = {"id": "g1", "timestamp": "2025-09-18T03:00:05Z", "type": "gemini", "content": "Committed."}
    head = (first + json.dumps(user) + "\n").encode()
    sparse(chats / "session-2025-09-18T03-00-lines.jsonl", head, LONG, b"\n" + (json.dumps(reply) + "\n").encode())

    problems: list[str] = []
    sessions = {session.key: session for session in gemini_cli.read(tmp_path / "tmp", problems)}

    assert set(sessions) == {"small", "lines"}
    assert [m.text for m in sessions["small"].messages] == ["fix the typo"]
    assert [m.text for m in sessions["lines"].messages] == ["commit it", "Committed."]  # read on past the long line
    assert sessions["lines"].problems == [LONG_SKIPPED]
    assert problems == [f"ab12/chats/session-2025-09-18T02-45-big.json: {NOT_READ}"]


# --- exports: conversations.json is streamed, one conversation held at a time -----------


def chatgpt_conversation(key: str, text: str) -> dict[str, Any]:
    message = {
        "id": "m",
        "author": {"role": "user"},
        "create_time": 1700000000.0,
        "content": {"content_type": "text", "parts": [text]},
    }
    mapping: dict[str, Any] = {
        "root": {"id": "root", "message": None, "parent": None, "children": ["m"]},
        "m": {"id": "m", "message": message, "parent": "root", "children": []},
    }
    return {"title": key, "create_time": 1700000000.0, "mapping": mapping, "conversation_id": key, "current_node": "m"}


def claude_conversation(key: str, text: str) -> dict[str, Any]:
    message = {"uuid": f"{key}-1", "sender": "human", "text": text, "created_at": "2025-01-01T10:00:00Z"}
    return {"uuid": key, "name": key, "created_at": "2025-01-01T10:00:00Z", "chat_messages": [message]}


def test_a_2_gb_conversations_file_of_an_export_is_told_and_its_neighbours_read(tmp_path: Path) -> None:
    for kind, conversation in ((chatgpt_export, chatgpt_conversation), (claude_export, claude_conversation)):
        export = tmp_path / kind.KIND
        sparse(export / "conversations-0000.json", b"")
        export.joinpath("conversations-0001.json").write_text(json.dumps([conversation("kept", "hello")]))
        problems: list[str] = []
        before = peak_kib()
        sessions = list(kind.read(export, problems))
        assert peak_kib() - before < 512 * 1024
        assert [session.key for session in sessions] == ["kept"]
        assert problems == ["conversations-0000.json is not a JSON list"]


@pytest.mark.parametrize("zipped", [False, True])
def test_a_conversation_larger_than_one_may_be_is_skipped_and_the_next_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zipped: bool
) -> None:
    monkeypatch.setenv("ARCHIVIST_EXPORT_MAX_CONVERSATION_BYTES", "1MB")
    items = [claude_conversation("first", "hello"), claude_conversation("huge", "x" * 3 * MB)]
    items.append(claude_conversation("after", "bye"))
    export = tmp_path / "export"
    export.mkdir()
    (export / "conversations.json").write_text(json.dumps(items))
    if zipped:
        with zipfile.ZipFile(tmp_path / "export.zip", "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(export / "conversations.json", "conversations.json")
        export = tmp_path / "export.zip"
        monkeypatch.setenv("ARCHIVIST_UNZIP_MAX_RATIO", "2000")  # x * 3 MB deflates 955 times: a bomb otherwise
    problems: list[str] = []
    assert [session.key for session in claude_export.read(export, problems)] == ["first", "after"]
    assert problems == [
        "conversations.json: conversation 2 skipped: over 1 MB, more than one conversation read whole may have; "
        "raise it with ARCHIVIST_EXPORT_MAX_CONVERSATION_BYTES=2MB"
    ]


# --- markdown histories -----------------------------------------------------------------


def test_a_specstory_transcript_of_2_gb_is_not_read(tmp_path: Path) -> None:
    history = tmp_path / "proj" / ".specstory" / "history"
    history.mkdir(parents=True)
    transcript = "<!-- Generated by SpecStory -->\n\n# Push (2025-04-24 13:10:01)\n\n_**User**_\n\npush it\n\n---\n"
    (history / "2025-04-24_13-10-01Z-push.md").write_text(transcript + "\n_**Assistant**_\n\nDone.\n")
    sparse(history / "2025-04-25_09-00-00Z-huge.md", transcript.encode())

    problems: list[str] = []
    sessions = list(specstory.read(tmp_path / "proj", problems))
    assert [session.key for session in sessions] == ["2025-04-24_13-10-01Z-push.md"]
    assert problems == [f"2025-04-25_09-00-00Z-huge.md: {NOT_READ}"]


def test_an_aider_line_over_64_mb_is_skipped_and_reading_goes_on(tmp_path: Path) -> None:
    head = b"# aider chat started at 2025-05-12 14:03:27\n\n#### fix the bug\n\nDone: the bug is fixed.\n\n"
    tail = b"\n#### thanks\n\nYou are welcome.\n"
    history = sparse(tmp_path / aider.HISTORY_NAME, head, len(head) + LONG, tail)

    (session,) = aider.read(history)
    texts = [(m.role, m.text) for m in session.messages]
    assert ("user", "fix the bug") in texts and ("user", "thanks") in texts
    assert session.problems == [f"a {LONG_LINE} skipped"]
