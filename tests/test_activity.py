"""What the agents did, project by project: the project_activity query, the MCP activity tool and /activity."""

from __future__ import annotations

import json
import re

import pytest
from conftest import sample_source, started_datasette, write_files
from mcp import Client
from test_conversation_page import page_of

from archivist.archive.indexer import index_workspace
from archivist.errors import ArchivistError
from archivist.mcp import tools as mcp_tools
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

KINDS = ("aider", "claude-code", "codex", "cursor", "gemini-cli", "opencode")
SINCE = {"start_date": "2025-01-01", "end_date": "2025-12-31"}


@pytest.fixture(scope="module")
def logs_archive(tmp_path_factory):
    workspace = write_files(tmp_path_factory.mktemp("activity") / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[(kind, sample_source(kind)) for kind in KINDS])
    return workspace


def run(workspace, name, **params):
    with Archive.for_workspace(workspace) as archive:
        return archive.run(name, {key: str(value) for key, value in params.items()})


def test_each_project_has_its_sessions_files_commands_and_usage(logs_archive):
    rows = run(logs_archive, "project_activity", **SINCE)
    conversations = run(logs_archive, "list_conversations", limit=100, **SINCE)
    assert sum(row["sessions"] for row in rows) == len([c for c in conversations if c["agent"] != "workspace"])
    by_project = {row["project"]: row for row in rows}
    usage = {row["key"]: row for row in run(logs_archive, "usage", group_by="project", **SINCE)}
    for project, row in by_project.items():
        newest = json.loads(row["newest"])
        assert len(newest) == row["sessions"] and [s["last"] for s in newest] == sorted(
            (s["last"] for s in newest), reverse=True
        )
        if project in usage:
            assert row["tokens"] == usage[project]["total_tokens"]
            if usage[project]["cost"] is not None:
                assert row["cost"] == pytest.approx(usage[project]["cost"], abs=1e-6)
    hooks = by_project["/home/ana/projects/hooks"]
    assert json.loads(hooks["files_touched"]) == [{"file": "src/hooks/sender.py", "sessions": 1}]
    assert json.loads(hooks["top_commands"]) == [{"command": "pytest tests/test_sender.py -q", "times": 1}]
    lasts = [row["last"] for row in rows]
    assert lasts == sorted(lasts, reverse=True)  # the most recently active first


def test_a_range_agents_and_projects_narrow_it_and_the_default_is_the_last_30_days(logs_archive):
    assert run(logs_archive, "project_activity") == []  # the samples are of 2025
    only = run(logs_archive, "project_activity", agents="codex", **SINCE)
    assert [json.loads(row["agents"]) for row in only] == [["codex"]]
    named = run(logs_archive, "project_activity", projects="hooks", **SINCE)
    assert [row["project"] for row in named] == ["/home/ana/projects/hooks"]
    one_day = run(logs_archive, "project_activity", start_date="2025-11-11", end_date="2025-11-11")
    assert [json.loads(row["agents"]) for row in one_day] == [["gemini-cli"]]
    for params, code in (({"start_date": "someday"}, "INVALID_DATE"), ({"agents": "nobody"}, "INVALID_PARAMETER")):
        with pytest.raises(ArchivistError) as error:
            run(logs_archive, "project_activity", **params)
        assert error.value.code == code


async def test_the_activity_tool_answers_what_did_we_do_last_week_in_one_call(logs_archive):
    async with Client(mcp_tools.create_server(archive_path(logs_archive), logs_archive)) as client:
        result = await client.call_tool("activity", SINCE)
    rows = result.structured_content["results"]
    assert rows and all(isinstance(row[key], list) for row in rows for key in ("agents", "newest", "files_touched"))
    assert {session["title"] for row in rows for session in row["newest"]} >= {"Retry webhook deliveries on 429"}


async def test_the_activity_page_links_sessions_and_files(logs_archive):
    datasette = await started_datasette(archive_path(logs_archive))
    page = await page_of(datasette, "/activity?start_date=2025-01-01&end_date=2025-12-31")
    sections = re.findall(r'<section class="archivist-project" data-project="([^"]+)">', page)
    assert len(sections) == len(run(logs_archive, "project_activity", **SINCE))
    assert re.search(r'<a href="/document/\d+">Retry webhook deliveries on 429</a>', page)
    assert 'href="/file?path=src%2Fhooks%2Fsender.py"' in page
    days = run(logs_archive, "usage", group_by="day", **SINCE)
    assert len(re.findall(r'<span class="bar" ', page)) == len(days) >= 1
    agents = run(logs_archive, "usage", group_by="agent", **SINCE)
    assert "<h2>By agent</h2>" in page and all(f"<td>{row['key']}</td>" in page for row in agents)
    busiest = re.search(r'<section class="archivist-busiest-files">(.*?)</section>', page, re.S)
    assert busiest and "src/proxy/resolver.py" in busiest[1]  # aider's two sessions both touched it
    assert 'href="/usage?start_date=2025-01-01&amp;end_date=2025-12-31"' in page
    empty = await page_of(datasette, "/activity")
    assert 'href="/usage?start_date=30+days+ago&amp;end_date=today"' in empty
    assert "No agent session ran in this range" in empty
    bad = await page_of(datasette, "/activity?start_date=%3Cb%3Esomeday", status=400)
    assert 'data-code="INVALID_DATE"' in bad and "<b>someday" not in bad


async def test_a_project_page_has_its_sessions_files_commands_and_tokens_by_day(logs_archive):
    datasette = await started_datasette(archive_path(logs_archive))
    activity = await page_of(datasette, "/activity?start_date=2025-01-01&end_date=2025-12-31")
    link = re.search(r'<h2><a href="(/project/[^"]+)"><code class="archivist-path">/home/ana/projects/hooks<', activity)
    assert link and link[1] == "/project/home/ana/projects/hooks"
    page = await page_of(datasette, link[1])
    assert '<h1>Project <code class="archivist-path">/home/ana/projects/hooks</code></h1>' in page
    assert re.search(r'<a href="/document/\d+">Retry webhook deliveries on 429</a>', page)
    assert 'href="/file?path=src%2Fhooks%2Fsender.py"' in page and "pytest tests/test_sender.py -q" in page
    days = run(logs_archive, "usage", group_by="day", projects="/home/ana/projects/hooks")
    assert len(re.findall(r'<span class="bar" ', page)) == len(days) >= 1
    by_name = await page_of(datasette, "/project/hooks")  # its last folder's name finds it too
    assert "Retry webhook deliveries on 429" in by_name
    missing = await page_of(datasette, "/project/%3Cscript%3Ealert(1)%3C%2Fscript%3E", status=404)
    assert 'data-code="PROJECT_NOT_FOUND"' in missing and "<script>alert(1)" not in missing


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("/project/%FF%FE", 404),  # not UTF-8
        ("/project/%00", 404),
        ("/project/" + "a" * 10_000, 400),
        ("/usage?group_by=%00", 400),
        ("/usage?projects=" + "x" * 10_000, 400),
        ("/usage?start_date=%FF", 400),
        ("/activity?agents=%3Cscript%3Ealert(1)%3C/script%3E", 400),
        ("/file?path=a&offset=-1", 400),
        ("/file?path=a&offset=99999999999", 400),
        ("/project/x?start_date=nope", 400),
    ],
)
async def test_a_hostile_view_url_is_a_clean_error(logs_archive, url, status):
    datasette = await started_datasette(archive_path(logs_archive))
    page = await page_of(datasette, url, status=status)
    assert "Traceback" not in page and "INTERNAL_ERROR" not in page and "<script>alert(1)" not in page
