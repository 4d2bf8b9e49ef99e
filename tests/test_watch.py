"""Following a workspace and its sources: real files written while a real process watches them."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import sqlite_utils
from conftest import free_port, write_files
from test_agentlogs_sources import SESSION, SESSION_LINES, line

from archivist.workspace import archive_path

ARCHIVIST = [sys.executable, "-c", "from archivist.cli import cli; cli()"]
PATIENCE = 60  # seconds: an upper bound for the waits below, not a speed target (bench/watch_latency.py)


def wait_for(predicate, what):
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"gave up waiting for {what}")


def titles(workspace):
    db_file = archive_path(workspace)
    if not db_file.exists():
        return set()
    db = sqlite_utils.Database(db_file)
    try:
        return {row[0] for row in db.execute("select title from documents")}
    finally:
        db.close()


@pytest.fixture
def stopped():
    processes = []
    yield processes.append
    for process in processes:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def workspace_and_session(tmp_path):
    """A workspace with one note, and a Claude Code projects folder with one session beside it."""
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# Alpha\n\nfirst\n"})
    projects = tmp_path / "claude" / "projects"
    (projects / "-home-ana-proj").mkdir(parents=True)
    session_file = projects / "-home-ana-proj" / f"{SESSION}.jsonl"
    session_file.write_text("\n".join(SESSION_LINES) + "\n", encoding="utf-8")
    return workspace, projects, session_file


def test_watch_indexes_new_and_changed_files_and_source_sessions(tmp_path, stopped):
    workspace, projects, session_file = workspace_and_session(tmp_path)
    added = subprocess.run(
        [*ARCHIVIST, "index", str(workspace), "--source", f"claude-code={projects}"], capture_output=True, text=True
    )
    assert added.returncode == 0, added.stderr

    process = subprocess.Popen([*ARCHIVIST, "watch", str(workspace)], stderr=subprocess.PIPE, text=True)
    stopped(process)
    assert process.stderr.readline().startswith("Following")
    assert " indexed, " in process.stderr.readline()  # the first run, once the watcher is up
    assert process.stderr.readline() == "Watching for changes\n"

    (workspace / "notes" / "b.md").write_text("# Beta\n\nsecond\n", encoding="utf-8")
    wait_for(lambda: "Beta" in titles(workspace), "a new note")
    (workspace / "notes" / "a.md").write_text("# Alpha renamed\n\nfirst\n", encoding="utf-8")
    wait_for(lambda: "Alpha renamed" in titles(workspace), "a changed note")

    def messages():
        db = sqlite_utils.Database(archive_path(workspace))
        try:
            return db.execute("select count(*) from messages").fetchone()[0]
        finally:
            db.close()

    before = messages()
    with session_file.open("a", encoding="utf-8") as appended:
        appended.write(line("user", "u9", "a1", "and the readiness probe?", "2025-11-23T06:00:00.000Z") + "\n")
    wait_for(lambda: messages() == before + 1, "an appended message")


def test_serve_watch_answers_searches_for_what_was_just_written(tmp_path, stopped):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# Alpha\n\nfirst\n"})
    port = free_port()
    env = {**os.environ, "ARCHIVIST_TOKEN": "", "ARCHIVIST_MCP_TOKEN": ""}  # none given: it makes one
    process = subprocess.Popen(
        [*ARCHIVIST, "serve", str(workspace), "--watch", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    stopped(process)
    printed = ""
    while "Serving" not in printed:
        printed = process.stdout.readline()
        assert printed, "archivist serve stopped before printing its URL"
    token = {"Authorization": f"Bearer {printed.strip().rsplit('?token=', 1)[1]}"}
    base = f"http://127.0.0.1:{port}"

    def found(word):
        try:
            response = httpx.get(
                f"{base}/api/search", params={"query": word, "mode": "keyword"}, headers=token, timeout=10
            )
        except httpx.HTTPError:
            return False
        return response.status_code == 200 and json.loads(response.text)["total"] > 0

    wait_for(lambda: found("first"), "the server")
    Path(workspace / "notes" / "c.md").write_text("# Gamma\n\nzeppelin hangar\n", encoding="utf-8")
    wait_for(lambda: found("zeppelin"), "a new note to be searchable")


def test_watch_of_an_embedded_archive_embeds_new_messages_in_the_background(tmp_path, stopped):
    workspace, projects, session_file = workspace_and_session(tmp_path)
    embedded = subprocess.run(
        [*ARCHIVIST, "embed", str(workspace)], capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}
    )
    assert embedded.returncode == 0, embedded.stderr
    added = subprocess.run(
        [*ARCHIVIST, "index", str(workspace), "--source", f"claude-code={projects}"], capture_output=True, text=True
    )
    assert added.returncode == 0, added.stderr

    def session_vector_is_current():
        """Whether the session's document vector is of its text as it is now."""
        db = sqlite_utils.Database(archive_path(workspace))
        try:
            return bool(
                db.execute(
                    "select 1 from documents d join embeddings e on e.id = cast(d.id as text)"
                    " join collections c on c.id = e.collection_id and c.name = 'archivist_documents'"
                    " where d.source like 'log:%' and e.content_hash = unhex(d.content_hash)"
                ).fetchone()
            )
        finally:
            db.close()

    def session_hash():
        db = sqlite_utils.Database(archive_path(workspace))
        try:
            return db.execute("select content_hash from documents where source like 'log:%'").fetchone()[0]
        finally:
            db.close()

    assert not session_vector_is_current()  # indexed after the archive was embedded
    # the archive is read all along (as a server would): the watch starts all the same
    process = subprocess.Popen([*ARCHIVIST, "watch", str(workspace)], env={**os.environ, "HF_HUB_OFFLINE": "1"})
    stopped(process)
    wait_for(session_vector_is_current, "the session's vectors")
    before = session_hash()
    with session_file.open("a", encoding="utf-8") as appended:
        appended.write(line("user", "u9", "a1", "and the readiness probe?", "2025-11-23T06:00:00.000Z") + "\n")
    # (the vectors may be current again before a poll sees them stale: the session's text is what changes)
    wait_for(lambda: session_hash() != before, "the appended message")
    wait_for(session_vector_is_current, "the appended message's vectors")
