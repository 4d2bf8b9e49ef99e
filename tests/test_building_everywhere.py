"""Every answer says that the archive is still being built, or that the run building it stopped:
each page, each canned query's page and JSON, /api/search, each MCP tool and each command that
reads the archive; none says anything once it is built. And every page and tool answers
meanwhile, from what is committed: a document is found before the run that stores it has
recorded the workspace's folder (which it does last)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from click.testing import CliRunner
from conftest import SAMPLE, sample_source, started_datasette, write_files
from test_building import paused_reading, told, write_meta
from test_newest_first import SESSIONS, titles, write_source
from test_web import EXAMPLES

from archivist.agents import claude_code
from archivist.archive import building
from archivist.archive.database import sqlite3
from archivist.archive.indexer import index_workspace
from archivist.cli import cli, indexing
from archivist.mcp import tools
from archivist.queries.catalog import canned_queries
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

SINCE = "2026-11-26T10:00:00Z"
SOURCE = "codex: /logs"
STATES = ("building", "stopped", None)  # a run going on, one that stopped, none: the archive is built


def gone_pid() -> int:
    """The id of a process that has ended."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


def expected(state: str | None) -> dict[str, Any] | None:
    return None if state is None else {"state": state, "source": SOURCE, "percent": 25, "since": SINCE}


def set_state(workspace: Path, state: str | None) -> None:
    """The building row of a run going on (another process, that is there), of one that stopped (a
    process that has ended), or none."""
    if state is None:
        with closing(sqlite3.connect(archive_path(workspace))) as conn:
            conn.execute(building.FINISHED_SQL)
            conn.commit()
        return
    pid = os.getppid() if state == "building" else gone_pid()
    write_meta(workspace, {"pid": pid, "run": "1:x", "source": SOURCE, "done": 1, "total": 4, "since": SINCE})


@dataclass
class Place:
    """The archive the answers read, and what in it they name."""

    workspace: Path
    note: int
    session: int
    project: str
    file: str


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> Place:
    """The sample workspace and the Claude Code sample's sessions, indexed once."""
    workspace = tmp_path_factory.mktemp("everywhere") / "sample"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))
    index_workspace(workspace, log_sources=[("claude-code", sample_source("claude-code"))])
    with Archive.for_workspace(workspace) as archive:
        note = archive.run("find_document", {"document": EXAMPLES["get_document"].split("=", 1)[1]})[0]["id"]
        project = archive.run("project_activity", {"start_date": "1970-01-01"})[0]["project"]
        file = archive.conn.execute("SELECT name FROM file_calls ORDER BY name LIMIT 1").fetchone()[0]
        sessions = archive.run("list_conversations", {"agents": "claude-code"})
    assert sessions and project and archive.run("file_history", {"path": file})
    return Place(workspace, note, sessions[0]["id"], project, file)


# --- what each answer says of the building: its state (building, stopped) or None ------------------

_PAGE_RE = re.compile(r'<p class="archivist-building" role="status" data-state="(\w+)">([^<]*)</p>')


def page_says(html: str, row: dict[str, Any] | None = None) -> str | None:
    """The state a page says, checked to be said once, in the sentence every surface says it in (of
    ``row``, what the building row tells; by default the one ``set_state`` writes)."""
    found = _PAGE_RE.findall(html)
    assert len(found) <= 1, found
    if not found:
        assert "archivist-building" not in html
        return None
    state, sentence = found[0]
    assert sentence.replace("&#39;", "'") == building.sentence(row or expected(state)), sentence  # type: ignore[arg-type]
    return state


def json_says(body: Any) -> str | None:
    """The state a JSON answer says, checked whole."""
    told_there = body.get("building") if isinstance(body, dict) else None
    if told_there is None:
        return None
    assert told_there == expected(told_there["state"]), told_there
    return told_there["state"]


def text_says(text: str) -> str | None:
    """The state a command's text says, in the sentence every surface says it in."""
    said = [state for state in ("building", "stopped") if building.sentence(expected(state)) in text]  # type: ignore[arg-type]
    assert len(said) <= 1
    if not said:
        assert "index run" not in text and "being built" not in text, text
        return None
    return said[0]


Ask = Callable[[Any, Place], Awaitable[str | None]]


@dataclass(frozen=True)
class Answer:
    """One answer of the archive: its surface, its name, and what it says of the building."""

    surface: str
    name: str
    ask: Ask


async def page(datasette: Any, path: str) -> str | None:
    response = await datasette.client.get(path)
    assert response.status_code in (200, 404), (path, response.status_code)
    return page_says(response.text)


async def every_canned_query(
    datasette: Any, place: Place, suffix: str, says: Callable[[Any], str | None]
) -> str | None:
    """What each canned query says, as a page or as JSON: one and the same."""
    said = set()
    for name in canned_queries():
        response = await datasette.client.get(f"/archive/{name}{suffix}?{EXAMPLES[name]}")
        assert response.status_code == 200, (name, response.text[:300])
        said.add(says(response.text if suffix == "" else response.json()))
    assert len(said) == 1, said
    return said.pop()


def pages() -> list[Answer]:
    paths: dict[str, Callable[[Place], str]] = {
        "home": lambda p: "/",
        "search": lambda p: "/search?query=proxy",
        "document": lambda p: f"/document/{p.note}",
        "conversation": lambda p: f"/document/{p.session}",
        "activity": lambda p: "/activity?start_date=1970-01-01",
        "usage": lambda p: "/usage",
        "project": lambda p: "/project/" + p.project.lstrip("/"),
        "file": lambda p: "/file?" + urlencode({"path": p.file}),
    }

    def ask(path: Callable[[Place], str]) -> Ask:
        return lambda datasette, place: page(datasette, path(place))

    return [Answer("page", name, ask(path)) for name, path in paths.items()]


async def api_search(datasette: Any, place: Place) -> str | None:
    response = await datasette.client.get("/api/search?query=proxy")
    assert response.status_code == 200
    return json_says(response.json())


WEB = [
    *pages(),
    Answer("page", "a canned query's page", lambda d, p: every_canned_query(d, p, "", page_says)),
    Answer("json", "a canned query's JSON", lambda d, p: every_canned_query(d, p, ".json", json_says)),
    Answer("json", "/api/search", api_search),
]


def tool_arguments(place: Place) -> dict[str, dict[str, Any]]:
    return {
        "search_workspace": {"query": "authentication"},
        "search_reports": {"query": "proxy timeout"},
        "list_command_reports": {"command": "k8s-cluster-health"},
        "get_report": {"path": "reports/k8s-cluster-health/baseline-notes.md"},
        "get_document": {"document": str(place.note)},
        "search_commands": {"query": "proxy"},
        "search": {"query": "proxy"},
        "list_conversations": {},
        "get_conversation": {"document": str(place.session)},
        "activity": {"start_date": "1970-01-01"},
        "file_history": {"path": place.file},
        "usage": {},
        "search_semantic": {"query": "token clock skew"},
        "get_similar": {"document": str(place.note)},
        "embed_document": {"path": "notes"},
        "embed_workspace": {"background": True},
        "get_embedding_status": {},
    }


def tool(name: str) -> Ask:
    async def ask(server: Any, place: Place) -> str | None:
        result = await server.call_tool(name, tool_arguments(place)[name])
        assert not result.is_error, result.content
        return json_says(result.structured_content)

    return ask


MCP = [Answer("mcp", t.name, tool(t.name)) for t in tools.TOOLS]


def command(*arguments: str, as_json: bool = False, on_stderr: bool = False) -> Ask:
    async def ask(_: Any, place: Place) -> str | None:
        given = [value.format(ws=place.workspace, file=place.file) for value in arguments]
        result = CliRunner().invoke(cli, [*given, *(["--json"] if as_json else [])])
        assert result.exit_code == 0, result.output
        if as_json and not on_stderr:
            return json_says(json.loads(result.stdout))
        return text_says(result.stderr if on_stderr else result.stdout)

    return ask


COMMANDS = {
    "search": ("search", "{ws}", "proxy"),
    "search --conversations": ("search", "{ws}", "authentication", "--conversations"),
    "search --reports": ("search", "{ws}", "proxy", "--reports"),
    "status": ("status", "{ws}"),
    "usage": ("usage", "{ws}"),
    "history": ("history", "{ws}", "{file}"),
    "sources": ("sources", "{ws}"),
}
CLI = [
    answer
    for name, arguments in COMMANDS.items()
    for answer in (
        Answer("cli", name, command(*arguments)),
        Answer("cli", name + " --json", command(*arguments, as_json=True, on_stderr=name == "sources")),
    )
]

ANSWERS = [*WEB, *MCP, *CLI]


def test_the_table_holds_every_tool_and_every_command_that_reads_the_archive():
    assert {answer.name for answer in MCP} == {t.name for t in tools.TOOLS}
    readers = {"search", "status", "usage", "history", "sources"}  # (the others write, serve or copy: no answer)
    assert {answer.name.split()[0] for answer in CLI} == readers
    writers = {"index", "embed", "watch", "sync", "replicate", "restore"}
    assert set(cli.commands) - readers == {*writers, "serve", "mcp"}


@pytest.fixture
def no_indexing_embed(monkeypatch):
    """An embedding tool embeds without indexing first (an index run that ended takes the building row back)."""
    from archivist.semantic import embeddings

    class Done:
        def to_dict(self, with_total_files: bool = False) -> dict[str, int]:
            return {"embedded": 0, "skipped": 0, **({"total_files": 0} if with_total_files else {})}

    monkeypatch.setattr(embeddings, "embed_workspace", lambda *args, **kwargs: Done())


@pytest.mark.parametrize("state", STATES, ids=lambda state: state or "built")
@pytest.mark.parametrize("answer", ANSWERS, ids=lambda answer: f"{answer.surface}:{answer.name}")
async def test_each_answer_says_what_the_building_row_says(place, state, answer, no_indexing_embed):
    set_state(place.workspace, state)
    if answer.surface in ("page", "json"):
        asked: Any = await started_datasette(archive_path(place.workspace))
    elif answer.surface == "mcp":
        asked = tools.create_server(archive_path(place.workspace), place.workspace)
    else:
        asked = None
    assert await answer.ask(asked, place) == state


# --- item: every page and tool answers while the archive is built, and after a run that stopped ---


async def document_answers(workspace: Path, state: str) -> None:
    """The document page, its JSON, its source view and get_document answer for the workspace's note,
    and say ``state``: the workspace's folder is committed with its documents, before the agent logs."""
    with Archive.for_workspace(workspace) as archive:
        assert archive.conn.execute("SELECT count(*) FROM workspace_root").fetchone()[0] == 1
        note = archive.run("find_document", {"document": "notes/a.md"})[0]["id"]
    datasette = await started_datasette(archive_path(workspace))
    shown = await datasette.client.get(f"/document/{note}")
    assert shown.status_code == 200 and page_says(shown.text, told(workspace)) == state
    assert "zeppelin notes" in shown.text
    source = await datasette.client.get(f"/document/{note}/source")
    assert source.status_code == 200 and "zeppelin notes" in source.text
    data = await datasette.client.get(f"/archive/get_document.json?document={note}&_shape=objects")
    assert data.status_code == 200 and data.json()["rows"][0]["file"] == str(workspace.resolve() / "notes/a.md")
    server = tools.create_server(archive_path(workspace), workspace)
    result: Any = await server.call_tool("get_document", {"document": "notes/a.md"})
    assert not result.is_error, result.content
    assert result.structured_content["title"] == "A" and result.structured_content["file"].endswith("notes/a.md")
    assert result.structured_content["building"]["state"] == state
    report: Any = await server.call_tool("get_report", {"path": "reports/cmd/r.md"})
    assert not report.is_error and report.structured_content["content"].startswith("# R")


FIRST_FILES: dict[str, str | bytes] = {"notes/a.md": "# A\n\nzeppelin notes\n", "reports/cmd/r.md": "# R\n\nzeppelin\n"}


async def test_a_document_is_shown_during_a_first_index_under_serve(tmp_path, monkeypatch, large):
    workspace = write_files(tmp_path / "ws", FIRST_FILES)
    source = write_source(tmp_path / "logs")
    go_on = paused_reading(monkeypatch)
    then_ran = threading.Event()
    indexing.index_while_serving(workspace, None, None, [("claude-code", source)], then_ran.set)
    try:
        assert told(workspace)["state"] == "building"  # type: ignore[index]
        await document_answers(workspace, "building")
    finally:
        go_on.set()
    assert then_ran.wait(30)
    assert len(titles(workspace)) == SESSIONS and told(workspace) is None


async def test_a_document_is_shown_after_a_first_index_that_stopped(tmp_path, monkeypatch, large):
    """A first run stopped part way (Ctrl-C here; a killed process leaves the same archive behind)."""
    workspace = write_files(tmp_path / "ws", FIRST_FILES)
    source = write_source(tmp_path / "logs")
    whole_read = claude_code.read

    def interrupted(path, problems=None):
        for number, session in enumerate(whole_read(path, problems)):
            if number == 5:
                raise KeyboardInterrupt
            yield session

    monkeypatch.setattr(claude_code, "read", interrupted)
    with pytest.raises(KeyboardInterrupt):
        index_workspace(workspace, log_sources=[("claude-code", source)])
    assert 3 <= len(titles(workspace)) < SESSIONS
    assert told(workspace)["state"] == "stopped"  # type: ignore[index]
    await document_answers(workspace, "stopped")


async def test_a_document_of_an_archive_that_never_recorded_its_workspace_is_shown_without_its_file(tmp_path):
    """An archive whose first run was stopped by an earlier version (its documents committed, its
    workspace's folder not yet): the page and get_document answer; only the source view cannot."""
    workspace = write_files(tmp_path / "ws", FIRST_FILES)
    index_workspace(workspace)
    with closing(sqlite3.connect(archive_path(workspace))) as conn, conn:
        conn.execute("DELETE FROM archive_meta WHERE key = 'workspace_root'")
    with Archive.for_workspace(workspace) as archive:
        note = archive.run("find_document", {"document": "notes/a.md"})[0]["id"]
    datasette = await started_datasette(archive_path(workspace))
    shown = await datasette.client.get(f"/document/{note}")
    assert shown.status_code == 200 and "zeppelin notes" in shown.text
    source = await datasette.client.get(f"/document/{note}/source")
    assert source.status_code == 404 and "not recorded yet" in source.text
    result: Any = await tools.create_server(archive_path(workspace), workspace).call_tool(
        "get_document", {"document": "notes/a.md"}
    )
    assert not result.is_error and result.structured_content["file"] is None
