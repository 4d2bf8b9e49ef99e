"""While a heavy user's agent logs are read, the archive answers and says that it is still being
built; a server does not wait for the end; and a run that cannot write (a full disk) stops with
a clear message, the archive as of its last commit, and the next run completes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import on_small_disk, write_files
from mcp import Client
from test_mcp import stdio
from test_newest_first import SESSIONS, stored, titles, write_source

from archivist.agents import claude_code
from archivist.archive import building, indexer, schema
from archivist.archive.database import sqlite3
from archivist.archive.indexer import index_workspace
from archivist.cli import cli, indexing
from archivist.errors import ArchivistError
from archivist.queries.runner import Archive
from archivist.workspace import archive_path


def told(workspace: Path) -> dict | None:
    """What a search, from another connection, says of the building."""
    with Archive(archive_path(workspace)) as archive:
        return archive.search({"query": "zeppelin", "output": "brief"}).get("building")


def write_meta(workspace: Path, value: dict) -> None:
    with closing(sqlite3.connect(archive_path(workspace))) as conn:
        conn.execute("INSERT OR REPLACE INTO archive_meta (key, value) VALUES ('building', ?)", [json.dumps(value)])
        conn.commit()


def test_a_search_while_the_logs_are_read_says_the_archive_is_being_built_until_it_is(tmp_path, monkeypatch, large):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nzeppelin notes\n"})
    source = write_source(tmp_path / "logs")
    heard: list[tuple[int, dict | None]] = []
    whole_read = claude_code.read

    def watched(path, problems=None):
        for session in whole_read(path, problems):
            heard.append((len(titles(workspace)), told(workspace)))
            yield session

    monkeypatch.setattr(claude_code, "read", watched)
    index_workspace(workspace, log_sources=[("claude-code", source)])
    assert len(heard) == SESSIONS
    states = [state for _, state in heard]
    assert all(state is not None and state["state"] == "building" for state in states)
    assert {state["source"] for state in states} == {f"claude-code: {source}"}  # type: ignore[index]
    percents = [state["percent"] for state in states]  # type: ignore[index]
    assert percents == sorted(percents) and 0 <= percents[0] < percents[-1] < 100
    assert told(workspace) is None  # built: nothing to say
    result = CliRunner().invoke(cli, ["status", str(workspace), "--json"])
    assert json.loads(result.output)["building"] is None


def test_what_a_building_row_tells(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    base = {"run": "1:x", "source": "codex: /logs", "done": 30, "total": 120, "since": "2026-11-26T10:00:00Z"}
    assert building.state(json.dumps({**base, "pid": os.getppid()})) == {
        "state": "building",  # (another process that is there)
        "source": "codex: /logs",
        "percent": 25,
        "since": "2026-11-26T10:00:00Z",
    }
    assert building.state(json.dumps({**base, "pid": gone.pid}))["state"] == "stopped"  # type: ignore[index]
    assert building.state(json.dumps({**base, "pid": os.getpid()}))["state"] == "stopped"  # type: ignore[index]
    for pid in (0, -1, 2**80):  # never a process group, never an overflow
        assert building.state(json.dumps({**base, "pid": pid}))["state"] == "stopped"  # type: ignore[index]
    for value in (None, "", "not json", "[]", json.dumps({"pid": "x"}), json.dumps({**base, "total": 0, "pid": 1})):
        state = building.state(value)
        assert state is None or state["percent"] == 0


def test_every_surface_says_it(tmp_path):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nzeppelin notes\n"})
    index_workspace(workspace)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    write_meta(
        workspace, {"pid": gone.pid, "run": "1:x", "source": "codex: /logs", "done": 1, "total": 2, "since": "s"}
    )
    assert told(workspace) == {"state": "stopped", "source": "codex: /logs", "percent": 50, "since": "s"}
    runner = CliRunner()
    searched = runner.invoke(cli, ["search", str(workspace), "zeppelin"])
    assert "The last index run stopped with codex: /logs 50% read" in searched.output, searched.output
    status = runner.invoke(cli, ["status", str(workspace)])
    assert "run archivist index again to read the rest" in status.output
    assert json.loads(runner.invoke(cli, ["status", str(workspace), "--json"]).output)["building"]["state"] == "stopped"

    async def over_mcp() -> dict:
        async with Client(stdio(workspace)) as client:
            result = await client.call_tool("search", {"query": "zeppelin"})
            return result.structured_content or json.loads(result.content[0].text)

    import anyio

    answer = anyio.run(over_mcp)
    assert answer["building"]["state"] == "stopped" and answer["total"] == 1
    index_workspace(workspace)  # a run that ends takes it back
    assert told(workspace) is None


def paused_reading(monkeypatch) -> threading.Event:
    """Claude Code's reading made to wait after its fifth session until the event returned is set,
    and a server that waits 0.2 s for the logs: it serves while they are read."""
    go_on = threading.Event()
    whole_read = claude_code.read

    def slow(path, problems=None):
        for number, session in enumerate(whole_read(path, problems)):
            if number == 4:
                assert go_on.wait(30)
            yield session

    monkeypatch.setattr(claude_code, "read", slow)
    monkeypatch.setattr(indexing, "SERVE_AFTER_SECONDS", 0.2)
    return go_on


def test_a_server_serves_while_the_logs_are_read_and_then_goes_on(tmp_path, monkeypatch, large):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nzeppelin notes\n"})
    source = write_source(tmp_path / "logs")
    go_on = paused_reading(monkeypatch)
    then_ran = threading.Event()
    indexing.index_while_serving(workspace, None, None, [("claude-code", source)], then_ran.set)
    # returned while the logs are read: the server would start now, and find what is stored
    assert not then_ran.is_set()
    assert 3 <= len(titles(workspace)) < SESSIONS
    assert told(workspace)["state"] == "building"  # type: ignore[index]
    go_on.set()
    assert then_ran.wait(30)  # (embedding, following the workspace: after the index)
    assert len(titles(workspace)) == SESSIONS and told(workspace) is None


def test_a_server_waits_for_a_run_that_ends_soon(tmp_path):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n"})
    source = write_source(tmp_path / "logs")
    then_ran = threading.Event()
    indexing.index_while_serving(workspace, None, None, [("claude-code", source)], then_ran.set)
    assert then_ran.is_set() and len(titles(workspace)) == SESSIONS


def big_source(root: Path, count: int = SESSIONS) -> Path:
    """``count`` sessions of about 60 KB each (a full disk is reached in a few of them)."""
    return write_source(root, count, turns=10, padding=" and its doors open" * 300)


def test_a_full_disk_stops_the_run_as_of_its_last_commit_and_the_next_completes_it(tmp_path, monkeypatch, large):
    """SQLite's own full disk (SQLITE_FULL), at the size an archive may reach."""
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nzeppelin notes\n"})
    source = big_source(tmp_path / "logs")
    opened = schema.open_archive

    def small_disk(path):
        db = opened(path)
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count = {pages + 60}")
        return db

    monkeypatch.setattr(indexer.schema, "open_archive", small_disk)
    with pytest.raises(ArchivistError) as raised:
        index_workspace(workspace, log_sources=[("claude-code", source)])
    assert raised.value.code == "ARCHIVE_NOT_WRITTEN" and "the disk is full" in raised.value.problem
    kept = titles(workspace)
    assert 3 <= len(kept) < SESSIONS  # the newest first, and the sessions committed after them
    with closing(sqlite3.connect(archive_path(workspace))) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM documents WHERE kind = 'note'").fetchone()[0] == 1
    assert told(workspace)["state"] == "stopped"  # type: ignore[index]
    monkeypatch.setattr(indexer.schema, "open_archive", opened)
    index_workspace(workspace)
    clean = write_files(tmp_path / "clean", {"notes/a.md": "# A\n\nzeppelin notes\n"})
    index_workspace(clean, log_sources=[("claude-code", source)])
    assert stored(workspace) == stored(clean) and told(workspace) is None


FULL_DISK_SCRIPT = """
"$ARCHIVIST" index "$WS" --db "$DISK/archive.db" --source "claude-code=$SOURCE" 2>"$OUT/first.err"
echo $? > "$OUT/first.code"
"$PYTHON" -c "
import json, sys
from archivist.archive.database import sqlite3
conn = sqlite3.connect(sys.argv[1])
print(json.dumps([conn.execute('PRAGMA integrity_check').fetchone()[0],
                  conn.execute('SELECT count(*) FROM documents').fetchone()[0]]))
" "$DISK/archive.db" > "$OUT/after.json"
mount -o remount,size=64m "$DISK"
"$ARCHIVIST" index "$WS" --db "$DISK/archive.db" > "$OUT/second.out" 2>&1
echo $? > "$OUT/second.code"
"$PYTHON" -c "
import sys
from archivist.archive.database import sqlite3
conn = sqlite3.connect(sys.argv[1])
print(conn.execute(\\"SELECT count(*) FROM documents WHERE source LIKE 'log:%'\\").fetchone()[0])
" "$DISK/archive.db" > "$OUT/sessions.txt"
"""


def test_a_full_tmpfs_stops_archivist_index_with_a_clear_message_and_a_rerun_completes(tmp_path):
    """A real file system that fills up: a tmpfs of 1 MB, mounted in a namespace of the test's own."""
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nzeppelin notes\n"})
    source = big_source(tmp_path / "logs", 40)
    started = time.monotonic()
    out = on_small_disk(tmp_path, FULL_DISK_SCRIPT, {"WS": str(workspace), "SOURCE": str(source)})
    assert time.monotonic() - started < 300
    error = (out / "first.err").read_text()
    assert (out / "first.code").read_text().strip() == "1", error
    assert "could not be written: the disk is full" in error and "[ARCHIVE_NOT_WRITTEN]" in error
    assert "bytes free; the archive takes" in error and "Free some space on that disk" in error
    assert "Traceback" not in error and len(error.strip().splitlines()) == 1
    integrity, documents = json.loads((out / "after.json").read_text())
    assert integrity == "ok" and documents >= 1  # the workspace's note, and what was committed
    assert (out / "second.code").read_text().strip() == "0", (out / "second.out").read_text()
    assert int((out / "sessions.txt").read_text()) == 40
