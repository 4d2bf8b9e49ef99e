"""A heavy user's first index: the agent logs are committed as they are read, a large source
stores its newest sessions first, a run that stops keeps what it stored (and the next one
completes it), and the bytes read are told as they are read, for a progress bar."""

from __future__ import annotations

import os
import re
from contextlib import closing
from pathlib import Path

from conftest import write_files
from test_agentlogs_large_files import claude_line

from archivist.agents import claude_code
from archivist.archive import pace, session_worker, sessions
from archivist.archive.database import sqlite3  # (the writer's SQLite: two in one process break its locks)
from archivist.archive.indexer import index_workspace
from archivist.archive.prepared import Prepared
from archivist.workspace import archive_path

SESSIONS = 12
TITLES_SQL = "SELECT title FROM documents WHERE source LIKE 'log:%' ORDER BY title"
STORED_SQL = "SELECT key, title, content_hash, body FROM documents WHERE source LIKE 'log:%' ORDER BY key"


def record(session: str, kind: str, uuid: str, parent: str | None, text: str, at: str) -> str:
    """One line of a Claude Code session: a user's words, or an answer's text."""
    content = text if kind == "user" else [{"type": "text", "text": text}]
    return claude_line(kind, uuid, parent, content, at, session).decode().rstrip("\n")


def write_source(root: Path, count: int = SESSIONS, turns: int = 1, padding: str = "") -> Path:
    """``count`` Claude Code sessions, session n written (and last modified) on day n: ``turns``
    questions and answers each, the questions padded with ``padding`` (larger sessions)."""
    project = root / "projects" / "-home-ana-proj"
    project.mkdir(parents=True)
    for n in range(count):
        session = f"00000000-0000-4000-8000-{n:012d}"
        at = f"2025-10-{n + 1:02d}T09:00:00Z"
        lines = []
        for turn in range(turns):
            asked, parent = f"{n}-u{turn or ''}", f"{n}-a{turn - 1 or ''}" if turn else None
            question = f"question number {n} about the zeppelin hangar{padding}"
            lines.append(record(session, "user", asked, parent, question, at))
            lines.append(
                record(session, "assistant", f"{n}-a{turn or ''}", asked, f"answer number {n}: open the doors", at)
            )
        path = project / f"{session}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        stamp = 1_760_000_000 + n * 86_400
        os.utime(path, (stamp, stamp))
    return root / "projects"


def titles(workspace: Path) -> list[str]:
    """What another connection sees now: the titles of the sessions committed."""
    with closing(sqlite3.connect(archive_path(workspace))) as conn:
        return [row[0] for row in conn.execute(TITLES_SQL)]


def stored(workspace: Path) -> list[tuple]:
    with closing(sqlite3.connect(archive_path(workspace))) as conn:
        return conn.execute(STORED_SQL).fetchall()


def test_newest_reads_the_newest_sessions_alone_keyed_as_a_whole_read(tmp_path):
    source = write_source(tmp_path)
    whole = {session.key: session for session in claude_code.read(source)}
    newest = list(claude_code.newest(source, 3))
    assert [session.title for session in newest] == [
        f"question number {n} about the zeppelin hangar" for n in (11, 10, 9)
    ]
    for session in newest:
        assert session.key in whole and session.messages == whole[session.key].messages
    assert next(claude_code.newest(source / "-home-ana-proj", 1)).key == newest[0].key  # one project's folder
    assert list(claude_code.newest(tmp_path / "missing", 3)) == []


def test_a_large_source_stores_its_newest_first_and_commits_as_it_goes(tmp_path, monkeypatch, large):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    source = write_source(tmp_path / "logs")
    seen_by_others: list[list[str]] = []
    whole_read = claude_code.read

    def watched(path, problems=None):
        seen_by_others.append(titles(workspace))  # before the whole read: the newest, committed
        for session in whole_read(path, problems):
            yield session
            seen_by_others.append(titles(workspace))

    monkeypatch.setattr(claude_code, "read", watched)
    index_workspace(workspace, log_sources=[("claude-code", source)])
    newest = sorted(f"question number {n} about the zeppelin hangar" for n in (9, 10, 11))
    assert seen_by_others[0] == newest
    # committed as they are read: another connection sees each session soon after it is stored
    counts = [len(found) for found in seen_by_others]
    assert counts == sorted(counts) and len(set(counts)) >= SESSIONS - 3
    assert len(titles(workspace)) == SESSIONS


def test_storing_the_newest_first_in_a_worker_process_changes_nothing_of_what_is_stored(tmp_path, monkeypatch):
    source = write_source(tmp_path / "logs")
    (source / "-home-ana-proj" / "00000000-0000-4000-8000-000000000003.jsonl").write_text(
        "not json\n" + record("s3", "user", "x", None, "my key is ghp_" + "a1B2" * 9, "2025-10-04T09:00:00Z") + "\n"
    )  # a line skipped, and a secret: the problems and the masking are the same too
    plain = write_files(tmp_path / "plain", {"notes/a.md": "# A\n"})
    told = index_workspace(plain, log_sources=[("claude-code", source)]).problems
    monkeypatch.setattr(pace, "LARGE_FILES", 5)
    monkeypatch.setattr(sessions, "NEWEST_FIRST", 3)
    workers: list[int] = []
    in_worker = session_worker.prepared

    def counted(*args):
        for prepared in in_worker(*args):
            workers.append(isinstance(prepared, Prepared))
            yield prepared

    monkeypatch.setattr(session_worker, "prepared", counted)
    first = write_files(tmp_path / "first", {"notes/a.md": "# A\n"})
    assert index_workspace(first, log_sources=[("claude-code", source)]).problems == told != []
    untagged = [re.sub(r" #[0-9a-f]{6}\]", "]", str(row)) for row in stored(first)]  # (each archive its own key)
    assert untagged == [re.sub(r" #[0-9a-f]{6}\]", "]", str(row)) for row in stored(plain)]
    assert len(untagged) == SESSIONS and "[secret masked: github-token]" in str(untagged)
    assert "ghp_a1B2" not in str(stored(first))
    if (os.cpu_count() or 1) > 1:  # the newest three, then every session, read and masked in the worker process
        assert workers == [True] * 3 + [False] + [True] * SESSIONS  # (False: the newest were all there)


def test_a_run_that_stops_keeps_what_it_committed_and_the_next_completes_it(tmp_path, monkeypatch, large):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n"})
    source = write_source(tmp_path / "logs")
    whole_read = claude_code.read

    def failing(path, problems=None):
        for number, session in enumerate(whole_read(path, problems)):
            if number == 6:
                raise OSError(28, "No space left on device")
            yield session

    monkeypatch.setattr(claude_code, "read", failing)
    summary = index_workspace(workspace, log_sources=[("claude-code", source)])
    kept = titles(workspace)
    assert 6 <= len(kept) < SESSIONS  # the newest three and the first six read whole
    assert any("No space left on device" in problem.reason for problem in summary.problems)
    monkeypatch.setattr(claude_code, "read", whole_read)
    index_workspace(workspace)
    clean = write_files(tmp_path / "clean", {"notes/a.md": "# A\n"})
    index_workspace(clean, log_sources=[("claude-code", source)])
    assert stored(workspace) == stored(clean)


def test_the_bytes_read_are_told_as_they_are_read(tmp_path):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n"})
    source = write_source(tmp_path / "logs")
    heard: list[tuple[str, int, int]] = []
    index_workspace(workspace, log_sources=[("claude-code", source)], log_progress=lambda *told: heard.append(told))
    total = sum(path.stat().st_size for path in source.rglob("*.jsonl"))
    assert {label for label, _, _ in heard} == {f"claude-code: {source}"}
    assert {whole for _, _, whole in heard} == {total}
    done = [part for _, part, _ in heard]
    assert done[0] == 0 and done[-1] == total and done == sorted(done) and len(set(done)) >= SESSIONS
    heard.clear()
    index_workspace(workspace)  # nothing changed: nothing read, nothing told
    assert heard == []
