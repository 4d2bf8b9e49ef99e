"""A session too large to be held whole is read and stored in parts: the archive holds what a
whole reading stores (its messages, its document's counts, its rollups, its sub-agents' links),
and memory holds one part at a time (``bench/session_memory.py`` measures it)."""

from __future__ import annotations

import json
import shutil
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from archivist.agents import claude_code, pieces
from archivist.archive.database import sqlite3
from archivist.archive.indexer import index_workspace
from archivist.workspace import archive_path, secret_key_path

SAMPLE = (
    Path(__file__).parent.parent / "sample-agent-logs" / "claude-code" / "projects" / "-home-dev-src-captions-gateway"
)
SESSION = "3f6d2b1e-8c4a-4e7f-9b2d-5a1c0e9f7d43"
SESSION_KEY = f"{SAMPLE.name}/{SESSION}"
TURNS = 120
# Every table a session's storing writes, and the columns that differ between two runs by nature.
TABLES = {
    "documents": ("content_hash", "indexed_at"),
    "messages": (),
    "usage_hours": (),
    "message_hours": (),
    "file_calls": (),
    "command_calls": (),
    "index_problems": (),
}


def line(record: dict) -> str:
    envelope = {"sessionId": SESSION, "cwd": "/home/dev/src/captions-gateway", "isSidechain": False}
    return json.dumps({**envelope, **record}) + "\n"


def turns(count: int) -> str:
    """``count`` more turns of the session: a request, a response written over two lines (its
    text, then its tool call with the usage), and the tool's result; a secret now and then."""
    lines = []
    parent = None
    for n in range(count):
        at = f"2025-11-2{n % 3 + 1}T{n % 24:02d}:{n % 60:02d}:00Z"
        asked = f"pad-u{n}"
        said = f"step {n}: check the caption queue" + (" with ghp_" + "a1B2" * 9 if n % 17 == 0 else "")
        lines.append(line({"type": "user", "uuid": asked, "parentUuid": parent, "timestamp": at,
                           "message": {"role": "user", "content": said}}))  # fmt: skip
        message = {"id": f"msg_pad{n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929"}
        lines.append(line({"type": "assistant", "uuid": f"pad-a{n}", "parentUuid": asked, "timestamp": at,
                           "message": {**message, "content": [{"type": "text", "text": f"Looking at part {n}."}]}}))  # fmt: skip
        call = {"type": "tool_use", "id": f"toolu_pad{n}", "name": "Bash" if n % 2 else "Read",
                "input": {"command": f"grep -n queue src/q{n}.py"} if n % 2 else {"file_path": f"src/q{n % 7}.py"}}  # fmt: skip
        usage = {"input_tokens": 10 + n, "output_tokens": 5, "cache_read_input_tokens": 100 * n}
        lines.append(line({"type": "assistant", "uuid": f"pad-b{n}", "parentUuid": f"pad-a{n}", "timestamp": at,
                           "message": {**message, "content": [call], "usage": usage}}))  # fmt: skip
        result = {"type": "tool_result", "tool_use_id": f"toolu_pad{n}", "content": f"queue line {n}\n" * 20}
        lines.append(line({"type": "user", "uuid": f"pad-t{n}", "parentUuid": f"pad-b{n}", "timestamp": at,
                           "message": {"role": "user", "content": [result]}}))  # fmt: skip
        parent = f"pad-t{n}"
    return "".join(lines)


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    """The sample's project with a sub-agent, its session followed by many more turns and a title line."""
    folder = tmp_path / "projects" / SAMPLE.name
    shutil.copytree(SAMPLE, folder)
    with (folder / f"{SESSION}.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(turns(TURNS))
        handle.write(json.dumps({"type": "custom-title", "customTitle": "Caption queue", "sessionId": SESSION}) + "\n")
    return folder.parent


def stored(workspace: Path) -> dict[str, list[tuple]]:
    with closing(sqlite3.connect(archive_path(workspace))) as conn:
        found = {}
        for table, differing in TABLES.items():
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})") if row[1] not in differing]
            found[table] = conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY 1, 2, 3").fetchall()
        return found


def messages_of(workspace: Path, key: str) -> list[tuple]:
    """A session's messages, but for their ids."""
    with closing(sqlite3.connect(archive_path(workspace))) as conn:
        rows = conn.execute(
            "SELECT m.* FROM messages m JOIN documents d ON d.id = m.document_id WHERE d.key = ? ORDER BY m.seq",
            [f"log:1:{key}"],
        )
        return [row[2:] for row in rows]


def index(tmp_path: Path, name: str, source: Path, kind: str = "claude-code") -> Path:
    """``source`` indexed in a new workspace ``name``, masked with the same key as every other
    (a secret's tag is the same in each)."""
    workspace = tmp_path / name
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes" / "a.md").write_text("# A note\n")
    key = secret_key_path(archive_path(workspace))
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_text("6b" * 32 + "\n")
    key.chmod(0o600)
    index_workspace(workspace, log_sources=[(kind, source)])
    return workspace


def test_a_session_read_in_parts_is_stored_as_a_whole_reading_stores_it(tmp_path, projects, monkeypatch):
    whole = stored(index(tmp_path, "whole", projects))
    taken: list[int] = []
    drain = claude_code.Builder.drain

    def counted(builder):
        messages = drain(builder)
        taken.append(len(messages))
        return messages

    monkeypatch.setattr(claude_code, "WHOLE_BYTES", 0)
    monkeypatch.setattr(claude_code, "PART_BYTES", 4000)
    monkeypatch.setattr(claude_code.Builder, "drain", counted)
    parts = stored(index(tmp_path, "parts", projects))
    assert len([count for count in taken if count]) > 20  # (read in many parts)
    for table in TABLES:
        assert parts[table] == whole[table], table
    with closing(sqlite3.connect(archive_path(tmp_path / "parts"))) as conn:
        title, extra = conn.execute("SELECT title, extra FROM documents WHERE key LIKE ?", [f"%/{SESSION}"]).fetchone()
        linked = conn.execute("SELECT count(*) FROM messages WHERE tool_calls LIKE '%\"agent\"%'").fetchone()[0]
    assert title == "Caption queue" and json.loads(extra)["messages"] > 3 * TURNS
    assert linked  # (its Task call names the sub-agent's transcript)


def test_a_session_read_in_parts_is_read_on_when_it_grows(tmp_path, projects, monkeypatch):
    monkeypatch.setattr(claude_code, "WHOLE_BYTES", 0)
    monkeypatch.setattr(claude_code, "PART_BYTES", 4000)
    workspace = index(tmp_path, "parts", projects)
    with (projects / SAMPLE.name / f"{SESSION}.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(line({"type": "user", "uuid": "later", "parentUuid": f"pad-t{TURNS - 1}",
                           "timestamp": "2025-11-29T10:00:00Z", "message": {"role": "user", "content": "one more"}}))  # fmt: skip
    index_workspace(workspace)
    grown = stored(workspace)
    monkeypatch.setattr(claude_code, "WHOLE_BYTES", 1 << 40)
    whole = stored(index(tmp_path, "whole", projects))
    assert grown["messages"] == whole["messages"]
    assert grown["usage_hours"] == whole["usage_hours"] and grown["message_hours"] == whole["message_hours"]


# --- OpenCode: a session whose message holds huge parts ------------------------------------------

OPENCODE = Path(__file__).parent.parent / "sample-agent-logs" / "opencode"


@pytest.fixture
def opencode_data(tmp_path: Path) -> Path:
    """The sample's OpenCode data, its first session given more messages, one of several large parts."""
    folder = tmp_path / "opencode"
    shutil.copytree(OPENCODE, folder)
    with closing(sqlite3.connect(folder / "opencode.db")) as db, db:
        session = db.execute("SELECT id, time_created FROM session ORDER BY time_created LIMIT 1").fetchone()
        for n in range(40):
            at = session[1] + 100_000 + n * 1000
            role = "assistant" if n % 2 else "user"
            message = {"role": role, "time": {"created": at}, "modelID": "claude-sonnet-4-5"}
            if role == "assistant":
                message["tokens"] = {"input": 10 + n, "output": 3, "cache": {"read": n, "write": 0}}
            db.execute(
                "INSERT INTO message VALUES (?, ?, ?, ?, ?)", [f"msg_p{n}", session[0], at, at, json.dumps(message)]
            )
            texts = [f"part {n}.{k} " + "word " * (3000 if n == 7 else 30) for k in range(3 if n == 7 else 1)]
            for k, text in enumerate(texts):
                part = {"type": "text", "text": text}
                db.execute(
                    "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                    [f"prt_p{n:02}{k}", f"msg_p{n}", session[0], at, at, json.dumps(part)],
                )
    return folder


def test_an_opencode_session_read_in_parts_is_stored_as_a_whole_reading_stores_it(tmp_path, opencode_data, monkeypatch):
    from archivist.agents import opencode

    monkeypatch.setattr(opencode, "PART_CHARS", 4000)  # (a text part over it is a message of its own, in both)
    whole = stored(index(tmp_path, "whole", opencode_data, "opencode"))
    monkeypatch.setattr(opencode, "WHOLE_CHARS", 2000)
    monkeypatch.setattr(opencode, "INLINE_BYTES", 1000)
    parts = stored(index(tmp_path, "parts", opencode_data, "opencode"))
    for table in TABLES:
        assert parts[table] == whole[table], table
    with closing(sqlite3.connect(archive_path(tmp_path / "parts"))) as conn:
        large = conn.execute("SELECT text FROM messages WHERE text LIKE 'part 7.%' ORDER BY seq").fetchall()
    assert [text[:8] for (text,) in large] == ["part 7.0", "part 7.1", "part 7.2"]  # each a message of its own


def test_a_session_read_in_parts_and_unchanged_is_not_stored_again_and_one_changed_is(tmp_path, projects, monkeypatch):
    from archivist.archive import prepared

    monkeypatch.setattr(claude_code, "WHOLE_BYTES", 0)
    monkeypatch.setattr(claude_code, "PART_BYTES", 4000)
    workspace = index(tmp_path, "parts", projects)
    before = stored(workspace)
    stores: list[str] = []
    store = prepared._store_parts

    def counted(session, *args):
        stores.append(session.key)
        yield from store(session, *args)

    monkeypatch.setattr(prepared, "_store_parts", counted)
    other = projects / SAMPLE.name / "00000000-0000-4000-8000-00000000000a.jsonl"
    other.write_text(line({"type": "user", "uuid": "o1", "parentUuid": None, "timestamp": "2025-11-30T10:00:00Z",
                           "sessionId": other.stem, "message": {"role": "user", "content": "another session"}}))  # fmt: skip
    index_workspace(workspace)  # (a file added: the source is read whole again)
    assert stores == []  # hashed part by part, found unchanged: nothing of it stored again
    after = stored(workspace)
    main = before["messages"][0][1]  # (the document id of the session read in parts)
    assert [row for row in after["messages"] if row[1] == main] == [row for row in before["messages"] if row[1] == main]
    session = projects / SAMPLE.name / f"{SESSION}.jsonl"
    session.write_text(session.read_text().replace("step 3: check", "step 3: recheck"))  # (changed, not grown)
    index_workspace(workspace)
    assert stores == [SESSION_KEY]  # read again, and stored
    monkeypatch.setattr(claude_code, "WHOLE_BYTES", 1 << 40)
    changed = messages_of(workspace, SESSION_KEY)
    assert any("step 3: recheck" in str(row) for row in changed)
    assert changed == messages_of(index(tmp_path, "whole", projects), SESSION_KEY)


@given(st.text(alphabet=st.sampled_from("ab \n\u00e9"), max_size=200), st.integers(min_value=1, max_value=30))
def test_a_text_in_pieces_is_the_text_each_piece_within_its_size(text, size):
    found = list(pieces(text, size))
    assert "".join(found) == text and all(len(piece) <= size for piece in found)
    assert all(piece for piece in found) or found == [""]
    for piece in found[:-1]:  # a piece ends after a white space where it holds one
        assert piece[-1] in " \n" or not any(space in piece for space in " \n")


def test_a_session_over_64_mb_is_stored_in_parts_by_the_worker_process_as_whole(tmp_path, projects, monkeypatch):
    """The worker process (which a monkeypatch does not reach) reads a real file over
    ``WHOLE_BYTES`` in parts; the archive holds what a whole reading in this process stores."""
    from archivist.archive import pace

    with (projects / SAMPLE.name / f"{SESSION}.jsonl").open("a", encoding="utf-8") as handle:
        while handle.tell() <= claude_code.WHOLE_BYTES:
            handle.write(turns(2000).replace("pad", f"pad{handle.tell()}"))  # (every id new)
    monkeypatch.setattr(pace, "LARGE_BYTES", 1)  # (read in the worker process)
    parts = index(tmp_path, "parts", projects)
    monkeypatch.setattr(pace, "IN_WORKER", False)
    monkeypatch.setattr(claude_code, "WHOLE_BYTES", 1 << 40)
    whole = index(tmp_path, "whole", projects)
    assert messages_of(parts, SESSION_KEY) == messages_of(whole, SESSION_KEY)
    for table in ("usage_hours", "message_hours", "documents"):
        assert stored(parts)[table] == stored(whole)[table], table


def test_a_response_replayed_after_its_part_was_stored_is_left_out_as_a_whole_reading_merges_it(
    tmp_path, projects, monkeypatch
):
    """A line repeating a response taken out with an earlier part adds nothing (a whole reading
    merges it into that response, where a replay changes nothing); a hostile id is no id."""
    session = projects / SAMPLE.name / f"{SESSION}.jsonl"
    replayed = [json.loads(line) for line in session.read_text().splitlines() if '"msg_pad3"' in line]
    with session.open("a", encoding="utf-8") as handle:  # (lines of their own: new uuids, the response's id)
        handle.write("".join(json.dumps({**record, "uuid": f"replay-{record['uuid']}"}) + "\n" for record in replayed))
        handle.write(line({"type": "assistant", "uuid": "odd", "timestamp": "2025-11-29T10:00:00Z",
                           "message": {"id": {"not": "an id"}, "role": "assistant", "content": "odd id"}}))  # fmt: skip
    whole = messages_of(index(tmp_path, "whole", projects), SESSION_KEY)
    monkeypatch.setattr(claude_code, "WHOLE_BYTES", 0)
    monkeypatch.setattr(claude_code, "PART_BYTES", 4000)
    assert messages_of(index(tmp_path, "parts", projects), SESSION_KEY) == whole
    assert sum(row[4] == "Looking at part 3." for row in whole) == 1  # (the replay added none)
