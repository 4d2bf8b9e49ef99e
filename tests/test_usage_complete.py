"""Usage told whole: an agent whose logs record no usage is listed as such with its sessions on
every surface (the usage query in every grouping, /usage, /activity, ``archivist usage`` and the
MCP tool), and usage by session is one row per session, newest first, a page at a time."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from conftest import sample_source, started_datasette, write_files
from mcp import Client
from test_conversation_page import page_of

from archivist.archive.indexer import index_workspace
from archivist.cli import cli
from archivist.mcp import tools as mcp_tools
from archivist.queries.runner import Archive
from archivist.queries.totals import USAGE_BY, USAGE_TOKENS
from archivist.workspace import archive_path

KINDS = ("claude-code", "codex", "specstory")  # specstory's logs record no tokens
RANGE = {"start_date": "2025-01-01", "end_date": "2025-12-31"}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """An archive of Claude Code's and Codex's sessions, which record usage, and SpecStory's, which do not."""
    workspace = write_files(tmp_path_factory.mktemp("mixed") / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[(kind, sample_source(kind)) for kind in KINDS])
    return workspace


def run(workspace, **params) -> list[dict]:
    with Archive.for_workspace(workspace) as archive:
        return archive.run("usage", params)


def sessions_of(workspace, agent: str) -> int:
    with Archive.for_workspace(workspace) as archive:
        rows = archive.run("list_conversations", {"agents": agent, "limit": 100})
    return len(rows)


def cli_run(*args) -> str:
    done = CliRunner().invoke(cli, [str(arg) for arg in args])
    assert done.exit_code == 0, done.output
    return done.output


@pytest.mark.parametrize("group_by", USAGE_BY)
def test_an_agent_that_records_no_usage_is_a_row_of_its_own_by_agent_and_no_row_otherwise(mixed, group_by):
    rows = run(mixed, group_by=group_by)
    silent = [row for row in rows if not row["usage_recorded"]]
    if group_by != "agent":  # (a day's, a model's or a session's rows are days, models, sessions)
        assert silent == [] and rows
        return
    assert [(row["key"], row["agent"], row["sessions"]) for row in silent] == [
        ("specstory", "specstory", sessions_of(mixed, "specstory"))
    ]
    assert all(row[column] is None for row in silent for column in (*USAGE_TOKENS, "cost"))
    assert rows[-1] is silent[0]  # after every group of responses
    assert {row["agent"] for row in rows if row["usage_recorded"] and row["agent"]} <= {"claude-code", "codex"}


def test_only_the_agents_and_range_asked_for_are_listed(mixed):
    assert [row["key"] for row in run(mixed, group_by="agent", agents="specstory")] == ["specstory"]
    assert all(row["usage_recorded"] for row in run(mixed, group_by="agent", agents="claude-code,codex"))
    assert run(mixed, group_by="agent", start_date="2024-01-01", end_date="2024-12-31") == []


def test_usage_by_session_is_one_row_per_session_newest_first_and_adds_up(mixed):
    sessions = [row for row in run(mixed, group_by="session") if row["usage_recorded"]]
    by_agent = {row["key"]: row for row in run(mixed, group_by="agent") if row["usage_recorded"]}
    assert len(sessions) == sum(row["sessions"] for row in by_agent.values()) and len(sessions) > 2
    assert [row["last"] for row in sessions] == sorted((row["last"] for row in sessions), reverse=True)
    for agent, row in by_agent.items():
        own = [session for session in sessions if session["agent"] == agent]
        assert sum(session["total_tokens"] for session in own) == row["total_tokens"]
        assert sum(session["cost"] or 0 for session in own) == pytest.approx(row["cost"] or 0)
    with Archive.for_workspace(mixed) as archive:
        listed = {str(row["id"]): row for row in archive.run("list_conversations", {"limit": 100})}
    for session in sessions:
        conversation = listed[session["key"]]
        assert (session["title"], session["project"]) == (conversation["title"], conversation["project"])
        assert session["sessions"] == 1 and json.loads(session["models"])


def test_usage_by_session_is_paged(mixed):
    every = [row["key"] for row in run(mixed, group_by="session") if row["usage_recorded"]]
    pages = [
        [row["key"] for row in run(mixed, group_by="session", limit="2", offset=str(skip)) if row["usage_recorded"]]
        for skip in range(0, len(every) + 2, 2)
    ]
    assert [key for page in pages for key in page] == every and pages[-1] == []
    assert all(len(page) == 2 for page in pages[: len(every) // 2])


def test_archivist_usage_says_which_agents_record_no_usage(mixed):
    for group_by in USAGE_BY:
        printed = cli_run("usage", mixed, "--by", group_by)
        assert printed.count("No usage recorded: specstory (1 session).") == 1, group_by
    only = cli_run("usage", mixed, "--agent", "specstory")
    assert only.splitlines()[0] == "No usage recorded: specstory (1 session)."
    for group_by in USAGE_BY:
        answered = json.loads(cli_run("usage", mixed, "--by", group_by, "--json"))
        assert answered["no_usage_recorded"] == [{"agent": "specstory", "sessions": 1}], group_by
        assert answered["totals"]["total_tokens"] == sum(row["total_tokens"] or 0 for row in answered["rows"])
    by_agent = json.loads(cli_run("usage", mixed, "--by", "agent", "--json"))
    (silent,) = [row for row in by_agent["rows"] if row["usage_recorded"] is False]
    assert (silent["agent"], silent["sessions"], silent["total_tokens"], silent["cost"]) == ("specstory", 1, None, None)


def test_archivist_usage_by_session_prints_each_sessions_title_agent_and_cost(mixed):
    sessions = [row for row in run(mixed, group_by="session") if row["usage_recorded"]]
    printed = cli_run("usage", mixed, "--by", "session", "--limit", "2").splitlines()
    assert printed[0].split()[:3] == ["session", "agent", "title"]
    for row, line in zip(sessions[:2], printed[1:3], strict=True):
        assert line.split()[:2] == [row["key"], row["agent"]] and f"{row['total_tokens']:,}" in line
    assert printed[3].startswith("total")


async def test_the_mcp_usage_tool_answers_by_session_and_names_the_silent_agents(mixed):
    async with Client(mcp_tools.create_server(archive_path(mixed), mixed)) as client:
        result = await client.call_tool("usage", {"group_by": "session", "limit": 1})
    rows = result.structured_content["results"]
    assert [row["usage_recorded"] for row in rows] == [True]
    assert isinstance(rows[0]["models"], list) and rows[0]["title"] and rows[0]["cost"] is not None
    assert result.structured_content["no_usage_recorded"] == [{"agent": "specstory", "sessions": 1}]


async def test_the_usage_and_activity_pages_list_the_agents_that_record_no_usage(mixed):
    datasette = await started_datasette(archive_path(mixed))
    for url in ("/usage", "/usage?group_by=session", "/usage?group_by=agent", "/activity?start_date=2025-01-01"):
        page = await page_of(datasette, url)
        assert re.search(r'No usage recorded: <span data-agent="specstory">specstory \(1 session\)</span>', page), url
    by_agent = await page_of(datasette, "/usage?group_by=agent")
    assert 'data-key="specstory"' not in by_agent  # never a row of zeros
    sessions = await page_of(datasette, "/usage?group_by=session&limit=1")
    assert len(re.findall(r'<tr data-key="[^"]+"><td><a href="/document/\d+">', sessions)) == 1
    assert 'rel="next"' in sessions and "offset=1" in sessions


async def test_a_bad_page_of_sessions_is_a_clear_error(mixed):
    datasette = await started_datasette(archive_path(mixed))
    page = await page_of(datasette, "/usage?group_by=session&limit=zero", 400)
    assert "limit" in page
    result = CliRunner().invoke(cli, ["usage", str(mixed), "--by", "session", "--limit", "0"])
    assert result.exit_code != 0 and "limit" in result.output


def session_figures(workspace) -> dict[int, tuple[int, float | None]]:
    """Each session's tokens and cost, as usage by session says them."""
    rows = run(workspace, group_by="session", limit="100")
    return {int(row["key"]): (row["total_tokens"], row["cost"]) for row in rows if row["usage_recorded"]}


@pytest.mark.parametrize("sort", ["tokens", "cost"])
def test_a_search_sorted_by_tokens_or_cost_carries_both(mixed, sort):
    figures = session_figures(mixed)
    for output in ("brief", "full"):
        with Archive.for_workspace(mixed) as archive:
            results = archive.search({"mode": "recent", "sort": sort, "output": output, "page_size": 100})["results"]
        used = [result for result in results if result["id"] in figures]
        assert len(used) == len(figures)
        for result in used:
            assert (result["tokens"], result.get("cost")) == figures[result["id"]], (output, result["id"])
        assert all("tokens" not in result for result in results if result["id"] not in figures)
    printed = cli_run("search", mixed, "--mode", "recent", "--sort", sort, "--limit", "100")
    for tokens, cost in figures.values():
        expected = f"{tokens:,} tokens" + ("" if cost is None else f" · ${cost:,.4f}")
        assert expected in printed


def test_a_search_not_sorted_by_usage_answers_as_before(mixed):
    with Archive.for_workspace(mixed) as archive:
        for sort in ("relevance", "newest"):
            for output in ("brief", "full"):
                results = archive.search({"mode": "recent", "sort": sort, "output": output})["results"]
                assert results and all("tokens" not in result and "cost" not in result for result in results)


async def test_the_search_page_sorted_by_cost_shows_each_sessions_tokens_and_cost(mixed):
    figures = session_figures(mixed)
    datasette = await started_datasette(archive_path(mixed))
    page = await page_of(datasette, "/search?mode=recent&sort=cost")
    shown = re.findall(r'<span class="tokens"[^>]*>([\d,]+) tokens</span>', page)
    assert sorted(int(value.replace(",", "")) for value in shown) == sorted(tokens for tokens, _ in figures.values())
    priced = [cost for _, cost in figures.values() if cost is not None]
    assert len(re.findall(r'<span class="cost"[^>]*>\$[\d,.]+</span>', page)) == len(priced)
    plain = await page_of(datasette, "/search?mode=recent")
    assert 'class="tokens"' not in plain


def test_list_conversations_gives_tokens_and_cost_when_asked(mixed):
    figures = session_figures(mixed)
    with Archive.for_workspace(mixed) as archive:
        plain = archive.run("list_conversations", {"limit": 100})
        asked = archive.run("list_conversations", {"limit": 100, "include": "usage"})
        with pytest.raises(Exception) as wrong:
            archive.run("list_conversations", {"include": "prices"})
    assert "include" in str(wrong.value)
    assert all(row["tokens"] is None and row["cost"] is None for row in plain)
    assert {row["id"]: (row["tokens"], row["cost"]) for row in asked if row["tokens"] is not None} == figures
    assert [row["id"] for row in plain] == [row["id"] for row in asked]


async def test_the_mcp_list_conversations_tool_carries_tokens_and_cost_only_when_asked(mixed):
    figures = session_figures(mixed)
    async with Client(mcp_tools.create_server(archive_path(mixed), mixed)) as client:
        plain = (await client.call_tool("list_conversations", {"limit": 100})).structured_content["results"]
        asked = await client.call_tool("list_conversations", {"limit": 100, "include": ["usage"]})
    assert plain and all("tokens" not in row and "cost" not in row for row in plain)
    rows = asked.structured_content["results"]
    assert {row["id"]: (row["tokens"], row["cost"]) for row in rows if row["tokens"] is not None} == figures


async def test_the_project_page_shows_each_sessions_tokens_and_cost(mixed):
    datasette = await started_datasette(archive_path(mixed))
    page = await page_of(datasette, "/project/captions-gateway")
    rows = run(mixed, group_by="session", projects='["captions-gateway"]')
    sessions = [row for row in rows if row["usage_recorded"]]
    assert len(sessions) == 2
    for session in sessions:
        assert re.search(
            rf'{re.escape(session["title"])}</a> <span class="archivist-note">[^<]*'
            rf"{session['total_tokens']:,} tokens · \${session['cost']:,.4f}</span>",
            page,
        ), session["title"]
