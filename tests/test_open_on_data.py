"""Views that open on data: /activity, /usage, the MCP activity tool and ``archivist usage`` with no
date show the 30 days to the newest day with a message and say so; an empty answer says where the
newest session is and how to reach it (issue 34, point 4)."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from urllib.parse import parse_qs

import pytest
from conftest import sample_source, started_datasette, write_files
from mcp import Client
from test_conversation_page import page_of
from test_usage import cli_run

from archivist.archive.indexer import index_workspace
from archivist.mcp import tools as mcp_tools
from archivist.queries.newest import DAYS, newest_day, opening_range
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

KINDS = ("aider", "claude-code", "codex", "gemini-cli")
LONG_AGO = {"start_date": "2001-01-01", "end_date": "2001-01-31"}


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    workspace = write_files(tmp_path_factory.mktemp("open") / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[(kind, sample_source(kind)) for kind in KINDS])
    return workspace


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    workspace = write_files(tmp_path_factory.mktemp("bare") / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace)
    return workspace


def newest_in(workspace):
    with Archive.for_workspace(workspace) as archive:
        rows = archive.run("list_conversations", {"limit": "100"})
    return max(row["last"] for row in rows if row["agent"] != "workspace")[:10]


def test_the_newest_day_is_the_newest_sessions_and_the_opening_range_ends_there(logs, bare):
    newest = newest_day(archive_path(logs))
    assert newest == newest_in(logs)
    start = (dt.date.fromisoformat(newest) - dt.timedelta(days=DAYS)).isoformat()
    assert opening_range(newest) == {"start_date": start, "end_date": newest}
    assert opening_range(newest, {"end_date": "2025-03-31"}) == {"start_date": "2025-03-01", "end_date": "2025-03-31"}
    assert opening_range(newest, {"end_date": "someday"}) == {"end_date": "someday"}  # the query tells the error
    assert newest_day(archive_path(bare)) is None
    assert newest_day(archive_path(bare).parent / "missing.db") is None


async def test_the_activity_tool_opens_on_the_newest_30_days_and_says_so(logs):
    newest = newest_day(archive_path(logs))
    async with Client(mcp_tools.create_server(archive_path(logs), logs)) as client:
        opened = (await client.call_tool("activity", {})).structured_content
        empty = (await client.call_tool("activity", LONG_AGO)).structured_content
        usage = (await client.call_tool("usage", LONG_AGO)).structured_content
    assert opened["num_results"] >= 1 and "hint" not in opened
    assert opened["range"] == {
        **opening_range(newest),
        "default": True,
        "newest": newest,
        "note": f"the 30 days to {newest}, the newest session",
    }
    start = opening_range(newest)["start_date"]
    hint = f"Nothing in this range; the newest session is from {newest}: try start_date={start}"
    assert empty["results"] == [] and empty["hint"] == hint and empty["range"]["default"] is False
    assert empty["range"]["start_date"] == "2001-01-01"
    assert usage["results"] == [] and usage["hint"] == hint


async def test_an_archive_without_sessions_says_so(bare):
    async with Client(mcp_tools.create_server(archive_path(bare), bare)) as client:
        answer = (await client.call_tool("activity", {})).structured_content
    assert answer["results"] == [] and "holds no session yet" in answer["hint"]
    assert answer["range"]["newest"] is None and answer["range"]["note"].startswith("the 30 days to today")
    datasette = await started_datasette(archive_path(bare))
    page = await page_of(datasette, "/activity")
    assert "holds no session yet" in page and "archivist-empty-hint" in page


async def test_the_pages_open_on_the_newest_30_days_and_an_empty_range_links_to_them(logs):
    newest = newest_day(archive_path(logs))
    start = opening_range(newest)["start_date"]
    datasette = await started_datasette(archive_path(logs))
    activity = await page_of(datasette, "/activity")
    assert f"Showing the 30 days to {newest}, the newest session." in activity
    assert f'placeholder="{start}"' in activity and 'class="archivist-project"' in activity
    usage = await page_of(datasette, "/usage")
    assert f"Showing the 30 days to {newest}, the newest session." in usage
    assert f'name="start_date" value="{start}"' in usage  # the form holds the range it shows
    assert 'href="/usage?start_date=&amp;end_date=">All time</a>' in usage
    empty = await page_of(datasette, "/usage?start_date=2001-01-01&end_date=2001-01-31&group_by=month")
    assert f"the newest session is from {newest}: try start_date={start}." in empty
    link = re.search(r'class="archivist-note archivist-empty-hint"[^>]*>[^<]*<a href="/usage\?([^"]+)"', empty)
    assert link and parse_qs(html.unescape(link[1])) == {
        "start_date": [start],
        "end_date": [newest],
        "group_by": ["month"],
    }
    assert "Showing the 30 days" not in empty


def test_archivist_usage_opens_on_the_newest_30_days_and_an_empty_range_says_where_to_look(logs):
    newest = newest_day(archive_path(logs))
    start = opening_range(newest)["start_date"]
    printed = cli_run("usage", logs, "--by", "agent")
    assert printed.exit_code == 0, printed.output
    assert (
        printed.output.splitlines()[-1]
        == f"Shown: the 30 days to {newest}, the newest session (--since '' for all time)."
    )
    nothing = cli_run("usage", logs, "--since", "2001-01-01", "--until", "2001-01-31")
    assert f"the newest session is from {newest}: try --since {start}." in nothing.output
    answered = json.loads(cli_run("usage", logs, "--since", "2001-01-01", "--until", "2001-01-31", "--json").output)
    assert answered["rows"] == [] and answered["hint"].endswith(f"try --since {start}")
    assert answered["range"]["default"] is False and answered["range"]["start_date"] == "2001-01-01"
    whole = json.loads(cli_run("usage", logs, "--since", "", "--json").output)  # all time, as the hint above says
    assert whole["range"] == {
        "start_date": "",
        "end_date": "",
        "default": False,
        "newest": newest,
        "note": "the start to today",
    }


def test_an_empty_search_in_a_time_range_says_where_the_newest_session_is(logs, capsys):
    from archivist.cli.search_output import print_search

    newest = newest_day(archive_path(logs))
    start = opening_range(newest)["start_date"]
    with Archive.for_workspace(logs) as archive:
        dated = archive.search({"query": "retry", **LONG_AGO})
        undated = archive.search({"query": "zzzqqqxxy"})
    print_search(dated, newest)
    assert capsys.readouterr().err == (
        f"No results.\nNothing in this range; the newest session is from {newest}: try --start-date {start}.\n"
    )
    print_search(undated, newest)  # no range: nothing to reach by dates
    assert capsys.readouterr().err == "No results.\n"


def test_archivist_search_says_where_the_newest_session_is_when_a_range_holds_none(logs):
    from click.testing import CliRunner

    from archivist.cli import cli

    newest = newest_day(archive_path(logs))
    dates = ["--start-date", LONG_AGO["start_date"], "--end-date", LONG_AGO["end_date"]]
    done = CliRunner().invoke(cli, ["search", str(logs), "retry", *dates])
    assert done.exit_code == 0 and f"the newest session is from {newest}: try --start-date" in done.output
