"""The search's tools filter: conversations whose tool calls used these tools, on every surface."""

from __future__ import annotations

import json

import pytest
import sqlite_utils
from click.testing import CliRunner
from conftest import sample_source, write_files

from archivist.archive.indexer import index_workspace
from archivist.cli import cli
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

KINDS = ("claude-code", "codex", "cursor", "aider", "gemini-cli")


@pytest.fixture(scope="module")
def logs_archive(tmp_path_factory):
    workspace = write_files(tmp_path_factory.mktemp("tools") / "ws", {"notes/a.md": "# A\n\nalpha proxy\n"})
    index_workspace(workspace, log_sources=[(kind, sample_source(kind)) for kind in KINDS])
    return workspace


def used(workspace) -> dict[int, set[str]]:
    """Each session's tools, read the long way from its messages."""
    db = sqlite_utils.Database(archive_path(workspace))
    found: dict[int, set[str]] = {}
    for document_id, name in db.execute(
        "select m.document_id, c.value ->> 'name' from messages m, json_each(m.tool_calls) c"
    ).fetchall():
        found.setdefault(document_id, set()).add(name.lower())
    return found


def search(workspace, **params):
    with Archive.for_workspace(workspace) as archive:
        return archive.search({"mode": "recent", "page_size": "100", **params})


def test_a_session_is_found_by_any_tool_it_used_in_any_case(logs_archive):
    tools = used(logs_archive)
    for tool in sorted({name for names in tools.values() for name in names}):
        found = {result["id"] for result in search(logs_archive, tools=tool.upper())["results"]}
        assert found == {id_ for id_, names in tools.items() if tool in names}, tool
    assert search(logs_archive, tools="no_such_tool")["results"] == []
    both = {result["id"] for result in search(logs_archive, tools="bash,edit")["results"]}
    assert both == {id_ for id_, names in tools.items() if names & {"bash", "edit"}}


def test_the_filter_narrows_a_keyword_search_and_is_echoed(logs_archive):
    answer = search(logs_archive, mode="keyword", query="flaky", tools="Bash", output="full")
    assert answer["filters"]["tools"] == ["bash"]
    tools = used(logs_archive)
    assert answer["results"] and all("bash" in tools[result["id"]] for result in answer["results"])
    unfiltered = search(logs_archive, mode="keyword", query="flaky")["results"]
    assert len(unfiltered) >= len(answer["results"])
    assert search(logs_archive, mode="keyword", query="flaky", tools="apply_patch")["results"] == [
        result for result in unfiltered if "apply_patch" in tools.get(result["id"], set())
    ]


def test_archivist_search_takes_tool(logs_archive):
    done = CliRunner().invoke(cli, ["search", str(logs_archive), "--mode", "recent", "--tool", "read_file", "--json"])
    assert done.exit_code == 0, done.output
    results = json.loads(done.output)["results"]
    assert results and all("read_file" in used(logs_archive)[result["id"]] for result in results)
