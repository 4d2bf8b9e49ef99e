"""Hostile agent-log sources: no line stops a run, no source leaves its folder, a locked database waits.

Each case is read through ``archivist index --source KIND=PATH`` on copies of the sample
logs, as a user runs it: the run ends with status 0, the damage is a row of
``index_problems``, and what the source holds besides is in the archive.
"""

import json
import os
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from archivist.agents import LINK_OUT, MAX_DEPTH, TOO_DEEP, NotJSON, Root, databases, json_value, llm_logs
from archivist.cli import cli
from archivist.workspace import archive_path

SAMPLES = Path(__file__).parent.parent / "sample-agent-logs"
# Each kind, with the part of its sample folder that is the source.
SOURCES = {
    "claude-code": "claude-code/projects",
    "codex": "codex/sessions",
    "gemini-cli": "gemini-cli/tmp",
    "aider": "aider",
    "specstory": "specstory",
    "llm": "llm/logs.db",
    "claude-export": "claude-export",
    "chatgpt-export": "chatgpt-export",
}
DEEP_LINE = "[" * 100_000 + "\n"


def index(workspace: Path, *sources: str) -> tuple[int, str]:
    arguments = ["index", str(workspace)]
    for source in sources:
        arguments += ["--source", source]
    result = CliRunner().invoke(cli, arguments)
    return result.exit_code, result.output


def problems(workspace: Path) -> list[tuple[str, str, str]]:
    db = sqlite_utils.Database(archive_path(workspace))
    return [tuple(row) for row in db.execute("SELECT path, status, reason FROM index_problems").fetchall()]


def conversations(workspace: Path) -> dict[str, int]:
    """Each stored session's key with its number of messages."""
    db = sqlite_utils.Database(archive_path(workspace))
    rows = db.execute(
        "SELECT d.key, (SELECT count(*) FROM messages m WHERE m.document_id = d.id) FROM documents d"
        " WHERE d.source LIKE 'log:%'"
    ).fetchall()
    return dict(rows)


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    copy = tmp_path / "logs"
    shutil.copytree(SAMPLES, copy)
    return copy


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


# --- one line nested too deeply -------------------------------------------------------------


def test_json_nested_past_the_budget_is_refused_with_its_reason_and_within_it_is_read():
    assert json_value("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    for text in ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), DEEP_LINE, '{"a":' * 5000 + "1" + "}" * 5000):
        with pytest.raises(NotJSON, match=TOO_DEEP):
            json_value(text)
    # brackets inside strings are text, not depth
    assert json_value(json.dumps({"text": "[" * 10_000})) == {"text": "[" * 10_000}
    for text in ("{", "1" * 10_000, b"\xff", 12, None):
        with pytest.raises(NotJSON):
            json_value(text)  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=20,
    )
)
def test_json_is_read_as_the_standard_parser_reads_it(value):
    """The fast parser, and the standard one where it refuses: a value read is the value written
    (NaN, infinities, integers past 64 bits and lone surrogates included)."""
    text = json.dumps(value)
    assert json.dumps(json_value(text)) == text
    assert json.dumps(json_value(text.encode())) == text  # (as bytes, as the readers read lines)


def test_what_the_fast_parser_refuses_is_read_the_standard_way():
    for text in ('{"a": "\\ud800"}', "[NaN, Infinity, -Infinity]", "[1e400]", f"[{10**30}]", '{"a": 1, "a": 2}'):
        assert json.dumps(json_value(text)) == json.dumps(json.loads(text)), text
    # a text that holds a lone surrogate itself (a JSON escape read once already): msgspec cannot encode it
    assert json_value('["lone \ud800"]') == ["lone \ud800"]
    with pytest.raises(NotJSON):
        json_value("\ud800")


@pytest.mark.parametrize("kind", ["claude-code", "codex"])
def test_a_line_of_100000_nested_brackets_skips_that_line_and_keeps_the_session(kind, logs, workspace):
    source = logs / SOURCES[kind]
    exit_code, output = index(workspace, f"{kind}={source}")
    assert exit_code == 0, output
    before = conversations(workspace)
    for file in sorted(source.rglob("*.jsonl")):
        with file.open("a", encoding="utf-8") as handle:
            handle.write(DEEP_LINE)
    exit_code, output = index(workspace, f"{kind}={source}")
    assert exit_code == 0, output
    assert conversations(workspace) == before
    reasons = [reason for _, _, reason in problems(workspace)]
    assert any(f"1 {TOO_DEEP}" in reason for reason in reasons), reasons


def test_a_deep_line_in_a_gemini_session_file_skips_that_line(logs, workspace):
    chats = logs / SOURCES["gemini-cli"] / "meeting-rooms-portal" / "chats"
    session = json.loads((chats / "session-2025-11-11T14-02-5d0c7a9e.json").read_text(encoding="utf-8"))
    jsonl = chats / "session-2025-11-11T14-02-5d0c7a9e.jsonl"
    lines = [json.dumps({k: v for k, v in session.items() if k != "messages"})]
    lines += [json.dumps(message) for message in session["messages"]]
    lines.insert(2, DEEP_LINE.strip())
    jsonl.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (chats / "session-2025-11-11T14-02-5d0c7a9e.json").unlink()
    exit_code, output = index(workspace, f"gemini-cli={logs / SOURCES['gemini-cli']}")
    assert exit_code == 0, output
    (count,) = conversations(workspace).values()
    assert count >= len(session["messages"]) - 1
    assert any(TOO_DEEP in reason for _, _, reason in problems(workspace))


# --- links that lead out of a source ---------------------------------------------------------


def outside_file(tmp_path: Path, name: str, content: bytes) -> Path:
    """A file outside every source, which no reading may open."""
    secret = tmp_path / "elsewhere" / name
    secret.parent.mkdir(exist_ok=True)
    secret.write_bytes(content)
    return secret


def claude_line(text: str) -> bytes:
    record = {
        "type": "user",
        "sessionId": "11111111-2222-3333-4444-555555555555",
        "uuid": "u-outside",
        "timestamp": "2025-11-23T04:53:42Z",
        "cwd": "/outside",
        "message": {"role": "user", "content": text},
    }
    return (json.dumps(record) + "\n").encode()


# Where a link is planted in each kind's source, and what the file it leads to holds: a
# session of that kind whose words would be found if it were read.
PLANTED = {
    "claude-code": ("-home-dev-src-captions-gateway/11111111-2222-3333-4444-555555555555.jsonl", "claude"),
    "codex": ("2025/11/20/rollout-2025-11-20T11-00-00-11111111-2222-3333-4444-555555555555.jsonl", "codex"),
    "gemini-cli": ("meeting-rooms-portal/chats/session-2025-11-12T10-00-11111111.json", "gemini"),
    "specstory": (".specstory/history/2025-11-20_10-00-00Z-outside.md", "specstory"),
}


def planted_content(kind: str) -> bytes:
    if kind == "claude-code":
        return claude_line("zanzibar outside words")
    if kind == "codex":
        meta = {"type": "session_meta", "timestamp": "2025-11-20T11:00:00Z",
                "payload": {"id": "11111111-2222-3333-4444-555555555555", "cwd": "/outside", "timestamp": "2025-11-20T11:00:00Z"}}  # fmt: skip
        message = {"type": "response_item", "timestamp": "2025-11-20T11:00:01Z",
                   "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "zanzibar outside words"}]}}  # fmt: skip
        return (json.dumps(meta) + "\n" + json.dumps(message) + "\n").encode()
    if kind == "gemini-cli":
        return json.dumps(
            {
                "sessionId": "outside-1",
                "projectHash": "x",
                "startTime": "2025-11-12T10:00:00Z",
                "messages": [
                    {
                        "id": "m1",
                        "type": "user",
                        "timestamp": "2025-11-12T10:00:00Z",
                        "content": "zanzibar outside words",
                    }
                ],
            }
        ).encode()
    return b"<!-- Generated by SpecStory -->\n\n_**User**_\n\nzanzibar outside words\n\n---\n\n_**Assistant**_\n\nyes\n"


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_a_file_link_that_leads_out_of_a_source_is_not_read_and_is_listed(kind, logs, workspace, tmp_path):
    where, name = PLANTED[kind]
    source = logs / SOURCES[kind]
    target = outside_file(tmp_path, name, planted_content(kind))
    link = source / where
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    exit_code, output = index(workspace, f"{kind}={source}")
    assert exit_code == 0, output
    db = sqlite_utils.Database(archive_path(workspace))
    assert db.execute("SELECT count(*) FROM messages WHERE text LIKE '%zanzibar%'").fetchone() == (0,)
    assert db.execute("SELECT count(*) FROM documents WHERE body LIKE '%zanzibar%'").fetchone() == (0,)
    listed = [reason for _, _, reason in problems(workspace) if LINK_OUT in reason]
    assert len(listed) == 1 and Path(where).name in listed[0], problems(workspace)


def test_a_link_that_stays_inside_the_source_is_read(logs, workspace):
    project = logs / SOURCES["claude-code"] / "-home-dev-src-captions-gateway"
    other = project.parent / "-home-dev-other"
    other.mkdir()
    (other / "11111111-2222-3333-4444-555555555555.jsonl").symlink_to(
        project / "3f6d2b1e-8c4a-4e7f-9b2d-5a1c0e9f7d43.jsonl"
    )
    exit_code, output = index(workspace, f"claude-code={logs / SOURCES['claude-code']}")
    assert exit_code == 0, output
    assert any(key.endswith("-home-dev-other/11111111-2222-3333-4444-555555555555") for key in conversations(workspace))
    assert not [reason for _, _, reason in problems(workspace) if LINK_OUT in reason]


def test_a_folder_link_that_leads_out_is_not_entered(logs, workspace, tmp_path):
    outside = tmp_path / "elsewhere" / "-home-dev-secret"
    outside.mkdir(parents=True)
    (outside / "11111111-2222-3333-4444-555555555555.jsonl").write_bytes(claude_line("zanzibar outside words"))
    (logs / SOURCES["claude-code"] / "-home-dev-secret").symlink_to(outside, target_is_directory=True)
    exit_code, output = index(workspace, f"claude-code={logs / SOURCES['claude-code']}")
    assert exit_code == 0, output
    db = sqlite_utils.Database(archive_path(workspace))
    assert db.execute("SELECT count(*) FROM messages WHERE text LIKE '%zanzibar%'").fetchone() == (0,)
    assert any(LINK_OUT in reason and "-home-dev-secret" in reason for _, _, reason in problems(workspace))


def test_an_aider_history_that_links_out_of_its_repository_is_not_read(logs, workspace, tmp_path):
    history = logs / "aider" / ".aider.chat.history.md"
    target = outside_file(tmp_path, "history.md", history.read_bytes().replace(b"#", b"# zanzibar", 1))
    history.unlink()
    history.symlink_to(target)
    exit_code, output = index(workspace, f"aider={logs / 'aider'}")
    assert exit_code == 0, output
    assert conversations(workspace) == {}
    assert any(LINK_OUT in reason for _, _, reason in problems(workspace))


def test_a_source_named_through_a_link_is_read_where_it_leads(logs, workspace, tmp_path):
    alias = tmp_path / "alias"
    alias.symlink_to(logs / "claude-code", target_is_directory=True)
    exit_code, output = index(workspace, f"claude-code={alias / 'projects'}")
    assert exit_code == 0, output
    assert len(conversations(workspace)) == 2  # the session and its sub-agent
    assert not problems(workspace)


def test_a_link_loop_inside_a_source_ends(logs, workspace):
    sessions = logs / SOURCES["codex"]
    (sessions / "2025" / "loop").symlink_to(sessions, target_is_directory=True)
    exit_code, output = index(workspace, f"codex={sessions}")
    assert exit_code == 0, output
    assert len(conversations(workspace)) == 1


def test_root_refuses_a_link_out_once_and_allows_what_the_user_named(tmp_path):
    outside = outside_file(tmp_path, "passwd", b"root:x:0:0\n")
    source = tmp_path / "source"
    source.mkdir()
    (source / "a.jsonl").symlink_to(outside)
    (source / "b.jsonl").write_text("{}\n")
    told: list[str] = []
    root = Root(source, told)
    assert root.files(source, ".jsonl") == [source / "b.jsonl"]
    assert root.files(source, ".jsonl") == [source / "b.jsonl"]
    assert told == [f"a.jsonl: {LINK_OUT}"]
    named = Root(source / "a.jsonl")
    assert named.allows(source / "a.jsonl")


# --- a database another program holds locked -------------------------------------------------


@pytest.fixture
def locked_llm(logs):
    """The sample llm database in rollback-journal mode, held under an exclusive lock until released."""
    database = logs / SOURCES["llm"]
    with sqlite3.connect(database) as connection:
        connection.execute("PRAGMA journal_mode = DELETE")
    for extra in ("-wal", "-shm"):
        Path(f"{database}{extra}").unlink(missing_ok=True)
    holder = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    yield database, holder
    holder.close()


def test_a_locked_llm_database_is_told_as_locked_when_it_is_added(locked_llm, workspace):
    database, _ = locked_llm
    exit_code, output = index(workspace, f"llm={database}")
    assert exit_code == 1
    assert "locked by another program" in output and "Not a llm source" not in output


def test_a_locked_llm_database_keeps_what_was_stored_and_is_read_once_it_is_free(logs, workspace):
    database = logs / SOURCES["llm"]
    with sqlite3.connect(database) as connection:
        connection.execute("PRAGMA journal_mode = DELETE")
    exit_code, output = index(workspace, f"llm={database}")
    assert exit_code == 0, output
    stored = conversations(workspace)
    assert stored
    with sqlite3.connect(database) as connection:  # a change, so that the next run reads it
        connection.execute("UPDATE threads SET name = coalesce(name, '') || ' (renamed)'")
    holder = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        exit_code, output = index(workspace)
    finally:
        release = threading.Timer(0, holder.close)
        release.start()
        release.join()
    assert exit_code == 0, output
    assert conversations(workspace) == stored
    assert any(
        status == "skipped" and "locked by another program" in reason for _, status, reason in problems(workspace)
    )
    exit_code, output = index(workspace)
    assert exit_code == 0, output
    assert conversations(workspace) == stored
    assert not [p for p in problems(workspace) if "locked" in p[2]]
    db = sqlite_utils.Database(archive_path(workspace))
    assert db.execute("SELECT count(*) FROM documents WHERE title LIKE '%(renamed)%'").fetchone()[0] >= 1


def test_the_lock_wait_is_brief(locked_llm):
    assert databases.LOCK_TIMEOUT <= 2
    database, _ = locked_llm
    with pytest.raises(databases.Unavailable, match="locked by another program"):
        list(llm_logs.read(database))
    assert os.path.exists(database)


def test_a_project_folder_that_now_leads_out_keeps_its_sessions_and_is_listed(logs, workspace, tmp_path):
    """A project folder stored as it was, then moved elsewhere and linked: its sessions are kept."""
    projects = logs / SOURCES["claude-code"]
    exit_code, output = index(workspace, f"claude-code={projects}")
    assert exit_code == 0, output
    before = conversations(workspace)
    project = projects / "-home-dev-src-captions-gateway"
    moved = tmp_path / "elsewhere" / project.name
    moved.parent.mkdir()
    shutil.move(project, moved)
    project.symlink_to(moved, target_is_directory=True)
    exit_code, output = index(workspace)
    assert exit_code == 0, output
    assert conversations(workspace) == before
    reasons = [reason for _, _, reason in problems(workspace)]
    assert any(LINK_OUT in reason for reason in reasons) and any("is kept" in reason for reason in reasons)


def test_discovering_sources_counts_a_locked_llm_database_as_one(locked_llm, tmp_path):
    from archivist.archive import sessions

    database, _ = locked_llm
    found = sessions.discover({"LLM_USER_PATH": str(database.parent)}, home=tmp_path)
    assert ("llm", database) in found


def test_a_damaged_llm_database_keeps_the_conversations_it_held(logs, workspace):
    database = logs / SOURCES["llm"]
    exit_code, output = index(workspace, f"llm={database}")
    assert exit_code == 0, output
    before = conversations(workspace)
    assert before
    data = bytearray(database.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the first page's b-tree: the database is malformed
    database.write_bytes(bytes(data))
    exit_code, output = index(workspace)
    assert exit_code == 0, output
    assert conversations(workspace) == before
    assert any("is kept" in reason for _, _, reason in problems(workspace))


# --- a lone surrogate (a JSON escape of half an emoji, a file name that is not UTF-8) -----------

SURROGATE_LINE = (
    '{"type":"user","sessionId":"s1","uuid":"u1","parentUuid":null,"timestamp":"2025-11-24T09:00:01Z",'
    '"cwd":"/p","message":{"role":"user","content":"lone \\ud800 x"}}\n'
)


def stored_texts(workspace: Path) -> list[str]:
    db = sqlite_utils.Database(archive_path(workspace))
    return [text for (text,) in db.execute("SELECT text FROM messages ORDER BY id").fetchall()]


def test_a_lone_surrogate_escaped_in_a_line_is_replaced_told_and_every_later_run_completes(logs, workspace):
    source = logs / "surrogates"
    (source / "-home-dev-p").mkdir(parents=True)
    session = source / "-home-dev-p" / "s1.jsonl"
    session.write_text(SURROGATE_LINE)
    exit_code, output = index(workspace, f"claude-code={source}", f"claude-code={logs / SOURCES['claude-code']}")
    assert exit_code == 0, output
    assert "lone \ufffd x" in stored_texts(workspace)
    assert (
        "claude-code:-home-dev-p/s1",
        "degraded",
        "1 lone surrogate (not Unicode text) replaced with U+FFFD",
    ) in problems(workspace)
    assert len(conversations(workspace)) > 1  # the other source's sessions too
    # the next run, and one reading on what was appended, complete as well
    with session.open("a") as handle:
        handle.write(SURROGATE_LINE.replace('"u1"', '"u2"').replace("lone", "again"))
    exit_code, output = index(workspace)
    assert exit_code == 0, output
    assert "again \ufffd x" in stored_texts(workspace)
    found = CliRunner().invoke(cli, ["search", str(workspace), "again"])
    assert found.exit_code == 0 and "again \ufffd x" in found.output, found.output


def test_a_file_name_that_is_not_utf8_is_stored_as_valid_text(logs, workspace):
    source = logs / "names"
    folder = source / os.fsdecode(b"-home-dev-\xff")
    folder.mkdir(parents=True)
    (folder / os.fsdecode(b"s\xfe.jsonl")).write_bytes(claude_line("a name that is not UTF-8"))
    exit_code, output = index(workspace, f"claude-code={source}")
    assert exit_code == 0, output
    db = sqlite_utils.Database(archive_path(workspace))
    for (extra,) in db.execute("SELECT extra FROM documents WHERE source LIKE 'log:%'").fetchall():
        extra.encode("utf-8")  # (no surrogate: it is stored as text)
    assert stored_texts(workspace) == ["a name that is not UTF-8"]


def test_a_reader_that_fails_on_what_a_file_holds_leaves_the_other_sources_read(logs, workspace, monkeypatch):
    from archivist.agents import codex

    def failing(path, problems=None):
        raise TypeError("a value of a shape no reader expected")
        yield

    monkeypatch.setattr(codex, "read", failing)
    exit_code, output = index(workspace, f"codex={logs / SOURCES['codex']}", f"aider={logs / SOURCES['aider']}")
    assert exit_code == 0, output
    assert any(key.startswith(f"log:{2}:") for key in conversations(workspace))  # the aider source's
    (reason,) = [reason for path, status, reason in problems(workspace) if path.startswith("codex:")]
    assert reason.startswith("not read: its reader failed (TypeError: a value of a shape no reader expected)")
