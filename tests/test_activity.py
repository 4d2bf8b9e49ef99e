"""What the agents did, per day or week and project by project: the activity_periods and
project_activity queries, the MCP activity tool and /activity."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter, defaultdict

import pytest
import sqlite_utils
from conftest import sample_source, started_datasette, write_files
from mcp import Client
from test_conversation_page import page_of

from archivist.archive.indexer import index_workspace
from archivist.errors import ArchivistError
from archivist.mcp import tools as mcp_tools
from archivist.queries.newest import newest_day, opening_range
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


def test_a_range_agents_and_projects_narrow_it_and_the_default_is_the_30_days_to_the_newest(logs_archive):
    newest = newest_day(archive_path(logs_archive))
    assert newest and run(logs_archive, "project_activity") == run(
        logs_archive, "project_activity", **opening_range(newest)
    )
    assert run(logs_archive, "project_activity") != []  # the samples are old, and still the view opens on them
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
    days = run(logs_archive, "activity_periods", group_by="day", **SINCE)
    first, last = dt.date.fromisoformat(days[0]["key"]), dt.date.fromisoformat(days[-1]["key"])
    every_day = [(first + dt.timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]
    assert len(every_day) > len(days)  # the sample's days have gaps, shown as bars of nought
    for name in ("sessions", "messages", "total_tokens"):  # a chart of each per day, on a continuous axis
        chart = re.search(rf'data-chart="{name}">(.*?)</figure>', page, re.S)
        assert chart and re.findall(r'data-key="([^"]+)"', chart[1]) == every_day, name
        linked = re.findall(
            r'<a data-key="[^"]+" class="bar[^"]*" href="[^"]+" title="[^"]+" data-period="([^"]+)"', chart[1]
        )
        assert linked == [day["key"] for day in days], name
        assert len(re.findall(r'<span data-key="[^"]+" class="bar empty"', chart[1])) == len(every_day) - len(days)
    table = re.search(r'<table class="rows-and-columns archivist-activity-periods-table">(.*?)</table>', page, re.S)
    assert table and re.findall(r'<tr data-key="([^"]+)">', table[1]) == [day["key"] for day in days]
    summary = re.search(r'archivist-activity-summary">([^<]*)<', page)
    assert summary and f"{sum(day['messages'] for day in days):,} messages" in summary[1]
    agents = run(logs_archive, "usage", group_by="agent", **SINCE)
    assert "<h2>By agent</h2>" in page and all(f"<td>{row['key']}</td>" in page for row in agents)
    assert "<h2>By model</h2>" in page and "<h2>Busiest projects</h2>" in page
    projects = re.search(r'<section class="archivist-busiest-projects"(.*?)</section>', page, re.S)
    assert projects and '<a href="/project/home/ana/projects/hooks">' in projects[1]
    weekly = await page_of(datasette, "/activity?start_date=2025-01-01&end_date=2025-12-31&group_by=week")
    weeks = run(logs_archive, "activity_periods", group_by="week", **SINCE)
    assert re.findall(r'<tr data-key="([^"]+)">', weekly) == [week["key"] for week in weeks]
    assert '<strong aria-current="page">week</strong>' in weekly and "Sessions per week" in weekly
    first = weeks[0]["key"]
    sunday = (dt.date.fromisoformat(first) + dt.timedelta(days=6)).isoformat()
    assert f'href="/activity?start_date={first}&amp;end_date={sunday}&amp;group_by=day"' in weekly
    busiest = re.search(r'<section class="archivist-busiest-files">(.*?)</section>', page, re.S)
    assert busiest and "src/proxy/resolver.py" in busiest[1]  # aider's two sessions both touched it
    assert 'href="/usage?start_date=2025-01-01&amp;end_date=2025-12-31"' in page
    empty = await page_of(datasette, "/activity?start_date=2020-01-01&end_date=2020-01-31")
    assert 'href="/usage?start_date=2020-01-01&amp;end_date=2020-01-31"' in empty
    newest = newest_day(archive_path(logs_archive))
    start = opening_range(newest)["start_date"]
    assert f"Nothing in this range; the newest session is from {newest}: try start_date={start}." in empty
    assert f'href="/activity?start_date={start}&amp;end_date={newest}&amp;group_by=day"' in empty
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
    assert len(re.findall(r'<span data-key="[^"]+" class="bar" ', page)) == len(days) >= 1
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
        ("/activity?group_by=%3Cscript%3Ealert(1)%3C/script%3E", 400),
        ("/activity?group_by=%00", 400),
        ("/activity?group_by=week&projects=" + "x" * 10_000, 400),
        ("/search?query=a&sort=%3Cscript%3Ealert(1)%3C/script%3E", 400),
        ("/search?query=a&sort=%FF", 400),
        ("/file?path=a&offset=-1", 400),
        ("/file?path=a&offset=99999999999", 400),
        ("/project/x?start_date=nope", 400),
    ],
)
async def test_a_hostile_view_url_is_a_clean_error(logs_archive, url, status):
    datasette = await started_datasette(archive_path(logs_archive))
    page = await page_of(datasette, url, status=status)
    assert "Traceback" not in page and "INTERNAL_ERROR" not in page and "<script>alert(1)" not in page


def test_sessions_and_messages_per_day_and_week_are_what_the_messages_say(logs_archive):
    db = sqlite_utils.Database(archive_path(logs_archive))
    messages: Counter[str] = Counter()
    sessions: defaultdict[str, set[int]] = defaultdict(set)
    for row in db.query(
        "select m.document_id, substr(coalesce(m.timestamp, d.extra ->> '$.started'), 1, 10) as day"
        " from messages m join documents d on d.id = m.document_id"
    ):
        if row["day"] and "2025-01-01" <= row["day"] <= "2025-12-31":
            messages[row["day"]] += 1
            sessions[row["day"]].add(row["document_id"])
    days = run(logs_archive, "activity_periods", group_by="day", **SINCE)
    assert {day["key"]: day["messages"] for day in days} == dict(messages) and len(days) >= 4
    assert {day["key"]: day["sessions"] for day in days} == {day: len(ids) for day, ids in sessions.items()}
    usage = {row["key"]: row["total_tokens"] for row in run(logs_archive, "usage", group_by="day", **SINCE)}
    assert {day["key"]: day["total_tokens"] for day in days if day["total_tokens"]} == usage
    weeks = run(logs_archive, "activity_periods", group_by="week", **SINCE)
    monday = {
        day: (dt.date.fromisoformat(day) - dt.timedelta(days=dt.date.fromisoformat(day).weekday())).isoformat()
        for day in messages
    }
    assert all(dt.date.fromisoformat(week["key"]).weekday() == 0 for week in weeks)
    by_week: Counter[str] = Counter()
    for day, count in messages.items():
        by_week[monday[day]] += count
    assert {week["key"]: week["messages"] for week in weeks} == dict(by_week)
    only = run(logs_archive, "activity_periods", agents="codex", **SINCE)
    assert only and sum(day["messages"] for day in only) < sum(messages.values())
    named = run(logs_archive, "activity_periods", projects="hooks", **SINCE)
    assert named == run(logs_archive, "activity_periods", projects="/home/ana/projects/hooks/", **SINCE) != []
    for params, code in (
        ({"group_by": "month"}, "INVALID_PARAMETER"),
        ({"start_date": "someday"}, "INVALID_DATE"),
        ({"start_date": "2025-12-01", "end_date": "2025-01-01"}, "INVALID_DATE"),
    ):
        with pytest.raises(ArchivistError) as error:
            run(logs_archive, "activity_periods", **params)
        assert error.value.code == code, params
    # by default, the 30 days to the newest day with a message
    newest = newest_day(archive_path(logs_archive))
    days = run(logs_archive, "activity_periods")
    assert days == run(logs_archive, "activity_periods", **opening_range(newest)) and days[-1]["key"] == newest
    assert days[0]["key"] >= opening_range(newest)["start_date"]


def test_a_project_is_named_by_its_path_or_its_last_folder():
    from archivist.queries.lists import in_projects, list_json

    wanted = list_json("/home/ana/api/, books")
    assert in_projects(wanted, "/home/ana/api") and in_projects(wanted, "/home/ana/api/")
    assert in_projects(wanted, "/srv/books") and in_projects(wanted, "C:\\Users\\ana\\books\\")
    assert not in_projects(wanted, "/home/ana/api2") and not in_projects(wanted, "/home/ana/api/sub")
    assert not in_projects(wanted, None) and not in_projects(wanted, "")
    assert not in_projects(wanted, 7) and not in_projects(wanted, b"books")  # what a column may hold
    assert in_projects("[]", None) and in_projects("", "/anything")
