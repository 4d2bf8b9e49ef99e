"""The smaller things a new user meets: facet labels that tell projects apart, the similar
mode's chip and control, a sort without a query, and what ``archivist status`` lists."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner
from conftest import SAMPLE, sample_source, started_datasette, write_files
from mcp import Client
from test_agentlogs_sources import line
from test_conversation_facets import facet

from archivist.archive.indexer import index_workspace
from archivist.cli import cli
from archivist.mcp.tools import create_server
from archivist.queries.runner import Archive
from archivist.web.search_navigation import project_names
from archivist.workspace import archive_path


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


# --- archivist status: the sources and the files not read --------------------------------------


def _workspace_with_source(tmp_path: Path) -> tuple[Path, Path]:
    """The sample workspace and a copy of the Claude Code sample source with one file that is not JSON lines."""
    workspace = tmp_path / "ws"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))
    projects = tmp_path / "projects"
    shutil.copytree(sample_source("claude-code"), projects)
    broken = projects / "-home-ana-broken" / "0badf00d-0000-4000-8000-000000000000.jsonl"
    broken.parent.mkdir()
    broken.write_text('{"type": "user", not json\n', encoding="utf-8")
    assert invoke("index", workspace, "--source", f"claude-code={projects}").exit_code == 0
    return workspace, projects


def test_status_lists_each_source_and_every_file_not_read(tmp_path):
    workspace, projects = _workspace_with_source(tmp_path)
    report = json.loads(invoke("status", workspace, "--json").stdout)
    [source] = report["sources"]
    assert source["kind"] == "claude-code" and source["path"] == str(projects)
    assert source["sessions"] == report["documents"]["conversation"] - 13  # the workspace's own 13 besides
    assert source["sessions"] > 0 and source["read_at"]
    unread = {problem["path"]: problem for problem in report["unread"]}
    assert len(unread) == sum(report["problems"].values()) == 3  # the sample's 2 skipped files and the broken log
    assert all(problem["reason"] and problem["status"] in ("skipped", "degraded") for problem in unread.values())
    assert any(
        "0badf00d" in problem["reason"] and path == f"claude-code:{projects}" for path, problem in unread.items()
    )

    told = invoke("status", workspace)
    assert told.exit_code == 0
    assert f"claude-code     {projects}  {source['sessions']} sessions, last read {source['read_at']}" in told.stdout
    for path, problem in unread.items():
        assert f"  {problem['status']}: {path}: {problem['reason']}" in told.stdout


def test_status_of_an_archive_without_sources_says_how_to_add_one(sample_workspace):
    told = invoke("status", sample_workspace)
    assert told.exit_code == 0
    assert "Sources: none (add one with: archivist sources --discover" in told.stdout
    assert json.loads(invoke("status", sample_workspace, "--json").stdout)["sources"] == []


# --- a sort without a query: the MCP search lists by it, as the search page does -----------------


async def test_a_sort_without_a_query_lists_by_that_sort_in_mcp_as_on_the_page(tmp_path):
    workspace, _projects = _workspace_with_source(tmp_path)
    datasette = await started_datasette(archive_path(workspace))
    async with Client(create_server(archive_path(workspace), workspace)) as client:
        for sort in ("cost", "tokens", "oldest"):
            answer = await client.call_tool("search", {"sort": sort, "page_size": 20})
            assert not answer.is_error, answer.structured_content
            listed = answer.structured_content
            assert listed["sort"] == sort and listed["total"] == 57
            ids = [result["id"] for result in listed["results"]]
            with Archive.for_workspace(workspace) as archive:
                assert ids == [
                    r["id"] for r in archive.search({"mode": "recent", "sort": sort, "page_size": "20"})["results"]
                ]
            page = (await datasette.client.get(f"/search?sort={sort}&page_size=20")).text
            hrefs = re.findall(r'href="/document/(\d+)"', page)
            assert [int(h) for h in dict.fromkeys(hrefs)][: len(ids)] == ids
        refused = await client.call_tool("search", {"sort": "relevance"})
        assert refused.is_error and refused.structured_content["code"] == "INVALID_QUERY"


# --- the similar mode: its chip names the document, its control says similar --------------------


async def test_the_similar_mode_names_its_document_and_its_mode(sample_workspace, sample_datasette):
    with Archive.for_workspace(sample_workspace) as archive:
        [found] = archive.run("find_document", {"document": "conversations/2025-11-10/002-debug-auth"})
    for document in (str(found["id"]), "conversations/2025-11-10/002-debug-auth"):
        page = (await sample_datasette.client.get(f"/search?mode=similar&document={document}")).text
        chips = re.findall(r'class="archivist-chip"[^>]*>([^<]*) ✕</a>', page)
        assert chips == [f"similar to: {html.escape(found['title'], quote=False)}"]
        form = page.split('class="archivist-search-form"', 1)[1].split("</form>", 1)[0]
        assert '<input type="radio" name="mode" value="similar" checked disabled>' in form
        assert not re.search(r'value="(hybrid|keyword|semantic)" checked', form)
        ranking = page.split('aria-label="Ranking"', 1)[1].split("</nav>", 1)[0]
        assert "<strong>similar</strong>" in ranking and "<strong>hybrid</strong>" not in ranking
    plain = (await sample_datasette.client.get("/search?query=proxy")).text
    assert 'value="similar"' not in plain and '<input type="radio" name="mode" value="hybrid" checked>' in plain


# --- project facet labels: projects of one last name told apart ---------------------------------

PROJECTS = ("/home/ana/workspace", "/home/bo/workspace", "/srv/ana/workspace", "/home/ana/proj")


async def test_project_facet_labels_tell_apart_projects_of_one_folder_name(tmp_path):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nnotes\n"})
    for n, cwd in enumerate(PROJECTS):
        session = f"{n}{n}{n}{n}{n}{n}{n}{n}-1111-4111-8111-111111111111"
        at = f"2025-11-2{n}T05:00:00.000Z"
        lines = [line("user", "u1", None, "the zeppelin hangar doors jam", at, cwd=cwd, sessionId=session)]
        write_files(tmp_path / "projects", {f"folder-{n}/{session}.jsonl": "\n".join(lines) + "\n"})
    index_workspace(workspace, log_sources=[("claude-code", tmp_path / "projects")])
    datasette = await started_datasette(archive_path(workspace))
    page = (await datasette.client.get("/search?query=zeppelin&mode=keyword")).text
    projects = facet(page, "project")
    assert {path: entry["label"] for path, entry in projects.items()} == {
        "/home/ana/workspace": "home/ana/workspace",
        "/home/bo/workspace": "bo/workspace",
        "/srv/ana/workspace": "srv/ana/workspace",
        "/home/ana/proj": "proj",
    }
    assert all(entry["title"] == path for path, entry in projects.items())  # the whole path on hover
    narrowed = (await datasette.client.get(projects["/home/bo/workspace"]["href"])).text
    assert re.findall(r'class="archivist-chip"[^>]*>([^<]*) ✕</a>', narrowed) == ["project: /home/bo/workspace"]


def test_project_names_are_the_fewest_last_folders_that_differ():
    assert project_names(["/a/x/w", "/b/x/w", "C:\\Users\\c\\w", "/", "w"]) == {
        "/a/x/w": "a/x/w",
        "/b/x/w": "b/x/w",
        "C:\\Users\\c\\w": "c/w",
        "/": "/",
        "w": "w",
    }
