"""A file's history: every tool call of the agent logs that read or changed it, by query, MCP, CLI and page."""

from __future__ import annotations

import html
import json
import re

import pytest
import sqlite_utils
from click.testing import CliRunner
from conftest import sample_source, started_datasette, write_files
from mcp import Client
from test_conversation_page import page_of

from archivist.archive.indexer import index_workspace
from archivist.cli import cli
from archivist.errors import ArchivistError
from archivist.mcp import tools as mcp_tools
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

KINDS = ("aider", "claude-code", "cursor", "codex", "opencode")


@pytest.fixture(scope="module")
def logs_archive(tmp_path_factory):
    workspace = write_files(tmp_path_factory.mktemp("history") / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[(kind, sample_source(kind)) for kind in KINDS])
    return workspace


def history(workspace, **params):
    with Archive.for_workspace(workspace) as archive:
        return archive.run("file_history", {key: str(value) for key, value in params.items()})


def every_call(workspace):
    """Each (session, message, tool, file) of the archive, read the long way."""
    db = sqlite_utils.Database(archive_path(workspace))
    return [
        (row["document_id"], row["seq"], row["tool"], row["file"])
        for row in db.query(
            "select m.document_id, m.seq, c.value ->> 'name' as tool, f.value as file from messages m, "
            "json_each(m.tool_calls) c, json_each(c.value, '$.files') f"
        )
    ]


def test_a_full_path_or_a_name_finds_every_call_that_named_the_file(logs_archive):
    calls = every_call(logs_archive)
    for path in {file for _, _, _, file in calls}:
        name = path.rsplit("/", 1)[-1]
        by_path = {
            (row["document_id"], row["seq"], row["tool"], row["file"]) for row in history(logs_archive, path=path)
        }
        assert by_path == {call for call in calls if call[3] == path}, path
        by_name = {
            (row["document_id"], row["seq"], row["tool"], row["file"]) for row in history(logs_archive, path=name)
        }
        assert by_name == {call for call in calls if call[3].rsplit("/", 1)[-1] == name}, name
    assert history(logs_archive, path="no-such-file.py") == []
    assert history(logs_archive, path="proxy/resolver.py") == []  # a path is whole: not a suffix of another


def test_newest_first_and_a_page_at_a_time(logs_archive):
    everything = history(logs_archive, path="resolver.py", limit=100)
    assert len(everything) == everything[0]["total"] == 4
    times = [row["timestamp"] for row in everything]
    assert times == sorted(times, reverse=True)
    first = history(logs_archive, path="resolver.py", limit=3)
    assert first == [{**row, "has_more": 1, "next_offset": 3} for row in everything[:3]]
    rest = history(logs_archive, path="resolver.py", limit=3, offset=3)
    assert [row["seq"] for row in rest] == [everything[3]["seq"]] and rest[0]["has_more"] == 0
    assert {row["agent"] for row in everything} == {"aider"} and all(row["title"] for row in everything)


@pytest.mark.parametrize(
    "path", ["", "   ", "a\x00b", "/" + "a" * 5000, "x" * 10_000], ids=["empty", "blank", "nul", "long", "longer"]
)
def test_a_path_that_is_no_path_is_a_clear_error(logs_archive, path):
    with pytest.raises(ArchivistError) as error:
        history(logs_archive, path=path)
    assert error.value.code == "INVALID_PARAMETER"


def test_a_path_with_fts_syntax_or_sql_is_only_a_path(logs_archive):
    for path in ['"', "NEAR(a b)", "a OR b", "*", "x' --", "%", "_", "../../etc/passwd", "C:\\src\\app.py"]:
        assert history(logs_archive, path=path) == []


async def test_the_mcp_tool_pages_through_a_files_calls(logs_archive):
    async with Client(mcp_tools.create_server(archive_path(logs_archive), logs_archive)) as client:
        result = await client.call_tool("file_history", {"path": "resolver.py", "limit": 3})
    answer = result.structured_content
    assert answer["total"] == 4 and answer["has_more"] is True and answer["next_offset"] == 3
    assert [call["seq"] for call in answer["results"]] == [
        row["seq"] for row in history(logs_archive, path="resolver.py", limit=3)
    ]
    assert all(isinstance(call["commands"], list) and call["document_id"] for call in answer["results"])


def test_archivist_history_prints_the_calls_newest_first(logs_archive):
    lines = CliRunner().invoke(cli, ["history", str(logs_archive), "sender.py"]).output.splitlines()
    assert len(lines) == 2 and all("cursor" in line and "src/hooks/sender.py" in line for line in lines)
    answer = json.loads(
        CliRunner().invoke(cli, ["history", str(logs_archive), "resolver.py", "--json", "--limit", "2"]).output
    )
    assert answer["total"] == 4 and len(answer["calls"]) == 2
    bad = CliRunner().invoke(cli, ["history", str(logs_archive), "a\x00b"])
    assert bad.exit_code == 1 and "[INVALID_PARAMETER]" in bad.output


async def test_the_file_page_links_each_call_to_its_message_and_the_conversation_page_links_to_it(logs_archive):
    datasette = await started_datasette(archive_path(logs_archive))
    page = await page_of(datasette, "/file?path=sender.py")
    links = re.findall(r'<a href="(/document/\d+\?m=\d+#m\d+)">', page)
    assert len(links) == 2 and "Retry webhook deliveries on 429" in page
    (document,) = {row["document_id"] for row in history(logs_archive, path="sender.py")}
    conversation = await page_of(datasette, f"/document/{document}")
    file_links = set(re.findall(r'<a class="archivist-file-link" href="([^"]+)"', conversation))
    assert "/file?path=src%2Fhooks%2Fsender.py" in {html.unescape(link) for link in file_links}
    listed = await page_of(datasette, "/file?path=src%2Fhooks%2Fsender.py")
    assert re.findall(r'<a href="(/document/\d+\?m=\d+#m\d+)">', listed) == links
    bad = await page_of(datasette, "/file?path=a%00b", status=400)
    assert 'data-code="INVALID_PARAMETER"' in bad
    hostile = await page_of(datasette, "/file?path=%3Cscript%3Ealert(1)%3C%2Fscript%3E")
    assert "<script>alert(1)" not in hostile and "&lt;script&gt;alert(1)&lt;/script&gt;" in hostile


def every_change(workspace):
    """Each (session, message, file) a call's edits changed, read the long way from the stored calls."""
    db = sqlite_utils.Database(archive_path(workspace))
    return {
        (row["document_id"], row["seq"], row["file"].replace("\\", "/"))
        for row in db.query(
            "select m.document_id, m.seq, e.value ->> 'file' as file from messages m, json_each(m.tool_calls) c, "
            "json_each(c.value, '$.edits') e"
        )
    }


def test_changes_lists_only_the_calls_whose_edits_changed_the_file(logs_archive):
    changes = every_change(logs_archive)
    assert changes, "the samples hold edits"
    for path in {file for _, _, file in changes}:
        changed = history(logs_archive, path=path, changes="1", limit=100)
        assert {(row["document_id"], row["seq"], row["file"]) for row in changed} == {
            change for change in changes if change[2] == path
        }, path
        assert all(row["changed"] == 1 and json.loads(row["edits"]) for row in changed)
        every = history(logs_archive, path=path, limit=100)
        assert [row for row in every if row["changed"]] == [
            {**row, "total": every[0]["total"], "has_more": 0, "next_offset": None} for row in changed
        ]
    for value in ("maybe", "2"):
        with pytest.raises(ArchivistError) as error:
            history(logs_archive, path="resolver.py", changes=value)
        assert error.value.code == "INVALID_PARAMETER"


async def test_the_mcp_tool_gives_each_change_of_the_file_as_its_diff(logs_archive):
    path = sorted({file for _, _, file in every_change(logs_archive)})[0]
    async with Client(mcp_tools.create_server(archive_path(logs_archive), logs_archive)) as client:
        result = await client.call_tool("file_history", {"path": path, "changes": True})
    calls = result.structured_content["results"]
    assert calls and all(call["changed"] is True and call["diffs"] for call in calls)
    for call in calls:
        assert all(
            diff["file"].replace("\\", "/") == path and diff["diff"].startswith("--- ") for diff in call["diffs"]
        )
        assert all(len(diff["diff"].splitlines()) <= diff["diff_lines"] for diff in call["diffs"])


def test_archivist_history_changes_prints_each_change_as_its_diff(logs_archive):
    path = sorted({file for _, _, file in every_change(logs_archive)})[0]
    every = json.loads(CliRunner().invoke(cli, ["history", str(logs_archive), path, "--json"]).output)
    changed = json.loads(CliRunner().invoke(cli, ["history", str(logs_archive), path, "--changes", "--json"]).output)
    assert changed["calls"] == [call for call in every["calls"] if call["changed"]]
    assert changed["calls"] and all(call["diffs"] and "edits" not in call for call in changed["calls"])
    text = CliRunner().invoke(cli, ["history", str(logs_archive), path, "--changes"]).output
    first = changed["calls"][0]["diffs"][0]["diff"].splitlines()
    assert f"    {first[0]}" in text.splitlines() and f"    {first[-1]}" in text.splitlines()
    none = CliRunner().invoke(cli, ["history", str(logs_archive), "never-touched.txt", "--changes"])
    assert none.exit_code == 0 and "No tool call of the archive's agent logs changed never-touched.txt." in none.output
