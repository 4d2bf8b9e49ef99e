"""Reading conversations through the canned queries list_conversations and get_conversation.

Real archives: a workspace's own markdown conversations and Claude Code sessions (written
here as Claude Code writes them) read by the claude-code reader, then listed, filtered
and paged through MCP, Datasette's JSON and the canned queries run by name.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import started_datasette, write_files
from mcp import Client

from archivist.archive.indexer import index_workspace
from archivist.archive.sessions import KINDS
from archivist.errors import ArchivistError
from archivist.mcp import tools as mcp_tools
from archivist.mcp.outputs import SESSION_FIGURES
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

MODEL = "claude-sonnet-4-5-20250929"
LONG_ROUNDS = 45  # a question, an answer with a tool call, the tool's result: 135 messages
LONG_MESSAGES = 3 * LONG_ROUNDS

FILES = {
    "conversations/2025-11-10/001-debug-auth/conversation.md": "# Auth debug\n\nThe token expired at midnight.\n",
    "conversations/2025-10/002-plan-migration/conversation.md": "# Migration plan\n\nMove the queue first.\n",
    "reports/proxy-check/2025-11-12.md": "# Proxy check\n\nTimeouts on the proxy.\n",
}


def iso(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)


class Session:
    """The lines of one Claude Code session file, written as the CLI writes them."""

    def __init__(self, session_id: str, cwd: str, branch: str) -> None:
        self.session_id, self.cwd, self.branch = session_id, cwd, branch
        self.lines: list[str] = []
        self.last: str | None = None
        self.count = 0

    def _line(self, kind: str, message: dict[str, Any], moment: dt.datetime, **extra: Any) -> None:
        self.count += 1
        uuid = f"{self.session_id[:8]}-{self.count:05d}"
        record = {
            "parentUuid": self.last,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": "2.0.49",
            "gitBranch": self.branch,
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": iso(moment),
            **extra,
        }
        self.lines.append(json.dumps(record))
        if not extra.get("isSidechain"):
            self.last = uuid

    def user(self, text: str, moment: dt.datetime, **extra: Any) -> None:
        self._line("user", {"role": "user", "content": text}, moment, **extra)

    def assistant(self, blocks: list[dict[str, Any]], moment: dt.datetime, **extra: Any) -> None:
        message = {"id": f"msg_{self.count}", "type": "message", "role": "assistant", "model": MODEL, "content": blocks}
        self._line("assistant", message, moment, **extra)

    def tool_result(self, tool_use_id: str, output: str, moment: dt.datetime) -> None:
        content = [{"type": "tool_result", "tool_use_id": tool_use_id, "content": output}]
        self._line("user", {"role": "user", "content": content}, moment)

    def write(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{self.session_id}.jsonl").write_text("\n".join(self.lines) + "\n", encoding="utf-8")


def long_session() -> Session:
    """A session of LONG_MESSAGES messages on 2025-11-20, two minutes a round."""
    session = Session("11111111-aaaa-4bbb-8ccc-000000000001", "/home/ana/api", "main")
    start = at("2025-11-20T10:00:00")
    for round_ in range(LONG_ROUNDS):
        moment = start + dt.timedelta(minutes=2 * round_)
        session.user(f"question {round_}: why does test case{round_} fail", moment)
        session.assistant(
            [
                {"type": "thinking", "thinking": f"thinking about case{round_}", "signature": "x"},
                {"type": "text", "text": f"answer {round_}: run the test"},
                {
                    "type": "tool_use",
                    "id": f"toolu_{round_:03d}",
                    "name": "Bash",
                    "input": {"command": f"pytest -k case{round_}"},
                },
            ],
            moment + dt.timedelta(seconds=30),
        )
        session.tool_result(f"toolu_{round_:03d}", f"case{round_} PASSED", moment + dt.timedelta(seconds=50))
    return session


def midnight_session() -> Session:
    """From 23:50 on 2025-11-21 to 00:20 on 2025-11-22 (UTC)."""
    session = Session("22222222-aaaa-4bbb-8ccc-000000000002", "/home/ana/web", "feature/login")
    session.user("the login form loses its state", at("2025-11-21T23:50:00"))
    session.assistant([{"type": "text", "text": "Keep the form in the session."}], at("2025-11-21T23:51:00"))
    session.user("that worked, now the logout", at("2025-11-22T00:15:00"))
    session.assistant(
        [
            {"type": "text", "text": "Clear it on logout."},
            {"type": "tool_use", "id": "toolu_edit", "name": "Edit", "input": {"file_path": "/home/ana/web/app.py"}},
        ],
        at("2025-11-22T00:20:00"),
    )
    return session


def late_session() -> Session:
    """On 2025-11-25, in another project also named api, with a sub-agent's sidechain."""
    session = Session("33333333-aaaa-4bbb-8ccc-000000000003", "/srv/projects/api", "main")
    session.user("review the queue worker", at("2025-11-25T09:00:00"))
    session.assistant(
        [
            {
                "type": "tool_use",
                "id": "toolu_task",
                "name": "Task",
                "input": {"description": "Read the worker", "prompt": "read worker.py"},
            }
        ],
        at("2025-11-25T09:01:00"),
    )
    sidechain = {"isSidechain": True, "agentId": "a1b2c3"}
    session.user("read worker.py", at("2025-11-25T09:02:00"), **sidechain)
    session.assistant([{"type": "text", "text": "worker.py retries forever"}], at("2025-11-25T09:03:00"), **sidechain)
    session.assistant([{"type": "text", "text": "The worker retries forever."}], at("2025-11-25T09:05:00"))
    return session


LONG = "claude-code:-home-ana-api/11111111-aaaa-4bbb-8ccc-000000000001"
MIDNIGHT = "claude-code:-home-ana-web/22222222-aaaa-4bbb-8ccc-000000000002"
LATE = "claude-code:-srv-work-api/33333333-aaaa-4bbb-8ccc-000000000003"
SIDECHAIN = LATE + "/sidechain-a1b2c3"
AUTH = "conversations/2025-11-10/001-debug-auth"
PLAN = "conversations/2025-10/002-plan-migration"
NEWEST_FIRST = [LATE, SIDECHAIN, MIDNIGHT, LONG, AUTH, PLAN]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("conversations")
    workspace = write_files(root / "workspace", FILES)
    projects = root / "claude" / "projects"
    long_session().write(projects / "-home-ana-api")
    midnight_session().write(projects / "-home-ana-web")
    late_session().write(projects / "-srv-work-api")
    index_workspace(workspace, log_sources=[("claude-code", projects)])
    return workspace


@pytest.fixture(scope="module")
def archive(workspace):
    with Archive.for_workspace(workspace) as archive:
        yield archive


def paths(rows: list[dict[str, Any]]) -> list[str]:
    return [row["path"] for row in rows]


def error_of(call) -> ArchivistError:
    with pytest.raises(ArchivistError) as raised:
        call()
    return raised.value


async def call(workspace: Path, tool: str, arguments: dict[str, Any]) -> Any:
    async with Client(mcp_tools.create_server(archive_path(workspace), workspace)) as client:
        return await client.call_tool(tool, arguments)


# --- list_conversations ------------------------------------------------------------------


def test_every_conversation_newest_first_by_its_last_message(archive):
    rows = archive.run("list_conversations")
    assert paths(rows) == NEWEST_FIRST
    by_path = {row["path"]: row for row in rows}
    long = by_path[LONG]
    assert long == {
        "id": long["id"],
        "title": "question 0: why does test case0 fail",
        "agent": "claude-code",
        "project": "/home/ana/api",
        "models": json.dumps([MODEL]),
        "branch": "main",
        "started": "2025-11-20T10:00:00Z",
        "last": "2025-11-20T11:28:50Z",
        "messages": LONG_MESSAGES,
        "date": "2025-11-20",
        "path": LONG,
        "parent": None,
        "tokens": None,  # (with include=usage: test_usage_complete)
        "cost": None,
    }
    assert by_path[MIDNIGHT]["branch"] == "feature/login" and by_path[MIDNIGHT]["messages"] == 4
    auth = by_path[AUTH]
    assert (auth["agent"], auth["title"], auth["date"], auth["messages"]) == (
        "workspace",
        "Auth debug",
        "2025-11-10",
        1,
    )
    assert (auth["project"], auth["started"], auth["last"], auth["parent"], auth["models"]) == (
        None,
        None,
        None,
        None,
        "[]",
    )
    assert by_path[PLAN]["date"] == "2025-10"


def test_a_sub_agent_transcript_names_its_session_by_path(archive):
    rows = {row["path"]: row for row in archive.run("list_conversations", {"agents": "claude-code"})}
    assert rows[SIDECHAIN]["parent"] == LATE
    assert rows[SIDECHAIN]["project"] == "/srv/projects/api"
    (parent,) = archive.run("list_conversations", {"projects": "/srv/projects/api", "limit": 1})
    assert parent["path"] == LATE and parent["parent"] is None
    assert archive.run("get_conversation", {"document": rows[SIDECHAIN]["parent"]})[0]["document_id"] == parent["id"]


@pytest.mark.parametrize(
    ("agents", "expected"),
    [
        ("claude-code", [LATE, SIDECHAIN, MIDNIGHT, LONG]),
        ("workspace", [AUTH, PLAN]),
        ("Claude-Code, workspace", NEWEST_FIRST),
        (["workspace", "codex"], [AUTH, PLAN]),
        ("codex", []),
        ("", NEWEST_FIRST),
    ],
)
def test_agents_filter_by_kind_and_workspace_is_the_workspace_own(archive, agents, expected):
    assert paths(archive.run("list_conversations", {"agents": agents})) == expected


def test_an_unknown_agent_lists_the_known_ones(archive):
    error = error_of(lambda: archive.run("list_conversations", {"agents": "claude-code,no-such-agent"}))
    assert error.code == "INVALID_PARAMETER" and "no-such-agent" in error.message
    for kind in (*KINDS, "workspace"):
        assert kind in error.message


@pytest.mark.parametrize(
    ("projects", "expected"),
    [
        ("api", [LATE, SIDECHAIN, LONG]),  # by its last folder name: both projects called api
        ("/home/ana/api", [LONG]),  # by its whole path: that one
        ("/home/ana/api/", [LONG]),
        ("web,/srv/projects/api", [LATE, SIDECHAIN, MIDNIGHT]),
        ("ana", []),  # not a part of a path
        ("nope", []),
    ],
)
def test_projects_match_by_path_or_last_folder_name(archive, projects, expected):
    assert paths(archive.run("list_conversations", {"projects": projects})) == expected


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        ("2025-11-21", "2025-11-21", [MIDNIGHT]),  # a session past midnight matches both days
        ("2025-11-22", "2025-11-22", [MIDNIGHT]),
        ("2025-11-22T00:30:00Z", "", [LATE, SIDECHAIN]),  # the midnight session ended at 00:20
        ("2025-11-20T11:00:00Z", "2025-11-20T11:10:00Z", [LONG]),  # inside a session's span
        ("2025-11", "2025-11", [LATE, SIDECHAIN, MIDNIGHT, LONG, AUTH]),
        ("2025-11-10", "2025-11-10", [AUTH]),
        ("2025-10", "2025-10", [PLAN]),  # a month-only conversation matches its month
        ("2025-10-01", "2025-10-15", []),  # but never a part of it
        ("2025-09-30T12:00:00Z", "2025-10-31", [PLAN]),  # a bound with a time of day cuts another day
        ("2025-11-10T12:00:00Z", "2025-11-10", []),  # and a day cut by it is not whole
        ("", "2025-11-20", [LONG, AUTH, PLAN]),
        ("2025-12-01", "", []),
    ],
)
def test_dates_follow_the_search_rules_and_sessions_match_while_they_ran(archive, start, end, expected):
    rows = archive.run("list_conversations", {"start_date": start, "end_date": end})
    assert paths(rows) == expected


def test_bad_dates_are_invalid_date(archive):
    for params in ({"start_date": "someday soon-ish"}, {"start_date": "2025-11-22", "end_date": "2025-11-01"}):
        error = error_of(lambda params=params: archive.run("list_conversations", params))
        assert error.code == "INVALID_DATE", params


def test_pages_of_conversations_by_limit_and_offset(archive):
    pages = [paths(archive.run("list_conversations", {"limit": 4, "offset": offset})) for offset in (0, 4, 8)]
    assert pages == [NEWEST_FIRST[:4], NEWEST_FIRST[4:], []]
    assert paths(archive.run("list_conversations", {"limit": 1, "offset": 2, "agents": "claude-code"})) == [MIDNIGHT]
    assert len(archive.run("list_conversations", {"limit": 100})) == len(NEWEST_FIRST)
    for params in ({"limit": 0}, {"limit": 101}, {"offset": -1}, {"offset": "two"}):
        error = error_of(lambda params=params: archive.run("list_conversations", params))
        assert error.code == "INVALID_PARAMETER", params


# --- get_conversation ------------------------------------------------------------------


def test_a_page_of_messages_with_where_the_next_page_starts(archive):
    rows = archive.run("get_conversation", {"document": LONG, "offset": 3, "limit": 3})
    assert [row["seq"] for row in rows] == [3, 4, 5]
    user, assistant, tool = rows
    assert (user["role"], user["text"], user["timestamp"]) == (
        "user",
        "question 1: why does test case1 fail",
        "2025-11-20T10:02:00Z",
    )
    assert (assistant["role"], assistant["model"], assistant["text"]) == ("assistant", MODEL, "answer 1: run the test")
    assert json.loads(assistant["tool_calls"]) == [{"name": "Bash", "files": [], "commands": ["pytest -k case1"]}]
    assert tool["role"] == "tool" and json.loads(tool["tool_calls"]) == []
    for row in rows:  # the paging rides on every row; what include did not ask for is null
        assert (row["total"], row["has_more"], row["next_offset"]) == (LONG_MESSAGES, 1, 6)
        assert row["thinking"] is None and row["tool_output"] is None
    last = archive.run("get_conversation", {"document": LONG, "offset": LONG_MESSAGES - 2})
    assert [row["seq"] for row in last] == [LONG_MESSAGES - 2, LONG_MESSAGES - 1]
    assert (last[0]["has_more"], last[0]["next_offset"]) == (0, None)


def test_thinking_and_tool_output_only_when_included(archive):
    rows = archive.run("get_conversation", {"document": LONG, "limit": 3, "include": "thinking,tool_output"})
    assert rows[1]["thinking"] == "thinking about case0" and rows[2]["tool_output"] == "case0 PASSED"
    assert rows[0]["thinking"] == "" and rows[0]["tool_output"] == ""
    only = archive.run("get_conversation", {"document": LONG, "limit": 3, "include": ["thinking"]})
    assert only[1]["thinking"] == "thinking about case0" and only[2]["tool_output"] is None
    error = error_of(lambda: archive.run("get_conversation", {"document": LONG, "include": "thinking,secrets"}))
    assert error.code == "INVALID_PARAMETER" and "secrets" in error.message and "tool_output" in error.message


def test_by_id_as_by_path(archive):
    by_path = archive.run("get_conversation", {"document": MIDNIGHT})
    by_id = archive.run("get_conversation", {"document": str(by_path[0]["document_id"])})
    assert by_id == by_path and len(by_path) == 4
    assert json.loads(by_path[3]["tool_calls"]) == [
        {
            "name": "Edit",
            "files": ["/home/ana/web/app.py"],
            "commands": [],
            "input": '{"file_path":"/home/ana/web/app.py"}',
        }
    ]


def test_a_workspace_conversation_is_one_message_its_text(archive):
    (row,) = archive.run("get_conversation", {"document": AUTH})
    assert (row["seq"], row["role"], row["total"], row["has_more"], row["next_offset"]) == (0, "document", 1, 0, None)
    assert "The token expired at midnight." in row["text"] and json.loads(row["tool_calls"]) == []


@pytest.mark.parametrize(
    ("params", "code", "words"),
    [
        ({"document": "claude-code:no-such-session"}, "DOCUMENT_NOT_FOUND", "Document not found"),
        ({"document": "reports/proxy-check/2025-11-12.md"}, "DOCUMENT_NOT_FOUND", "Not a conversation"),
        ({"document": ""}, "INVALID_PARAMETER", "document is required"),
        ({"document": LONG, "offset": LONG_MESSAGES}, "INVALID_PARAMETER", f"{LONG_MESSAGES} messages"),
        ({"document": AUTH, "offset": 1}, "INVALID_PARAMETER", "1 message:"),
        ({"document": LONG, "limit": 201}, "INVALID_PARAMETER", "1 to 200"),
        ({"document": LONG, "limit": 0}, "INVALID_PARAMETER", "1 to 200"),
        ({"document": LONG, "offset": -5}, "INVALID_PARAMETER", "offset"),
    ],
)
def test_get_conversation_errors(archive, params, code, words):
    error = error_of(lambda: archive.run("get_conversation", params))
    assert error.code == code and words in error.message, error.message


# --- through MCP and Datasette ----------------------------------------------------------


async def test_mcp_pages_through_a_long_session(workspace):
    messages: list[dict[str, Any]] = []
    answers = []
    async with Client(mcp_tools.create_server(archive_path(workspace), workspace)) as client:
        offset: int | None = 0
        while offset is not None:
            result = await client.call_tool("get_conversation", {"document": LONG, "offset": offset, "limit": 50})
            assert not result.is_error, result.content
            page = result.structured_content
            assert json.loads(result.content[0].text) == page
            answers.append({key: value for key, value in page.items() if key != "messages"})
            messages += page["messages"]
            offset = page["next_offset"]
    document_id = answers[0]["document_id"]
    assert answers == [
        {
            "success": True,
            "document_id": document_id,
            "total": LONG_MESSAGES,
            "offset": start,
            "limit": 50,
            "has_more": start + 50 < LONG_MESSAGES,
            "next_offset": start + 50 if start + 50 < LONG_MESSAGES else None,
            "price": None,  # (its responses record no usage)
            "stated_cost": None,
            "subagents": [],
            "num_results": min(50, LONG_MESSAGES - start),
        }
        for start in (0, 50, 100)
    ]
    assert [message["seq"] for message in messages] == list(range(LONG_MESSAGES))
    assert [message["text"] for message in messages if message["role"] == "user"] == [
        f"question {round_}: why does test case{round_} fail" for round_ in range(LONG_ROUNDS)
    ]
    assert messages[1]["tool_calls"] == [{"name": "Bash", "files": [], "commands": ["pytest -k case0"]}]
    assert set(messages[1]) == {"seq", "role", "timestamp", "model", "text", "tool_calls"}  # small by default


async def test_mcp_includes_thinking_and_tool_output_when_asked(workspace):
    result = await call(
        workspace, "get_conversation", {"document": LONG, "limit": 3, "include": ["thinking", "tool_output"]}
    )
    assistant, tool = result.structured_content["messages"][1:]
    assert assistant["thinking"] == "thinking about case0" and tool["tool_output"] == "case0 PASSED"


async def test_mcp_and_datasette_give_the_same_pages(workspace):
    datasette = await started_datasette(archive_path(workspace))
    async with Client(mcp_tools.create_server(archive_path(workspace), workspace)) as client:
        offset: int | None = 0
        pages = 0
        while offset is not None:
            response = await datasette.client.get(
                "/archive/get_conversation.json",
                params={"document": LONG, "offset": offset, "limit": 40, "include": "thinking", "_shape": "array"},
            )
            assert response.status_code == 200, response.text
            rows = response.json()
            result = await client.call_tool(
                "get_conversation", {"document": LONG, "offset": offset, "limit": 40, "include": "thinking"}
            )
            page = result.structured_content
            assert [
                {
                    **{
                        k: v
                        for k, v in row.items()
                        if k not in (*mcp_tools.PAGING, *SESSION_FIGURES) and k != "tool_output"
                    },
                    "tool_calls": json.loads(row["tool_calls"]),
                    # usage and attachments, only where a message has them (these messages have none)
                    **{k: json.loads(row[k]) for k in ("usage", "attachments") if row[k] not in (None, "[]")},
                }
                for row in rows
            ] == [{"usage": None, "attachments": "[]", "price": None, **message} for message in page["messages"]]
            assert {(row["total"], bool(row["has_more"]), row["next_offset"]) for row in rows} == {
                (page["total"], page["has_more"], page["next_offset"])
            }
            offset = rows[-1]["next_offset"]
            pages += 1
        assert pages == 4  # 40, 40, 40 and 15 of 135
        for arguments in (
            {},
            {"agents": "claude-code", "projects": "api", "limit": 2, "offset": 1},
            {"include": "usage"},
        ):
            listed = await client.call_tool("list_conversations", arguments)
            response = await datasette.client.get(
                "/archive/list_conversations.json", params={**arguments, "_shape": "array", "_json": "models"}
            )
            asked = "include" in arguments  # else MCP leaves out tokens and cost, never asked for
            assert listed.structured_content == {
                "success": True,
                "num_results": len(response.json()),
                "results": [
                    {k: v for k, v in row.items() if asked or k not in ("tokens", "cost")} for row in response.json()
                ],
            }
        assert listed.structured_content["results"][0]["models"] == [MODEL]


async def test_errors_are_the_spec_body_in_mcp_and_datasette(workspace):
    datasette = await started_datasette(archive_path(workspace))
    cases = [
        ("get_conversation", {"document": "no/such/thing"}, "DOCUMENT_NOT_FOUND"),
        ("get_conversation", {"document": LONG, "offset": 500}, "INVALID_PARAMETER"),
        ("list_conversations", {"agents": "no-such-agent"}, "INVALID_PARAMETER"),
        ("list_conversations", {"start_date": "2025-11-30", "end_date": "2025-11-01"}, "INVALID_DATE"),
        ("list_conversations", {"limit": 500}, "INVALID_PARAMETER"),
    ]
    async with Client(mcp_tools.create_server(archive_path(workspace), workspace)) as client:
        for tool, arguments, code in cases:
            result = await client.call_tool(tool, arguments)
            assert result.is_error and result.structured_content["code"] == code, (tool, result.structured_content)
            assert result.structured_content["success"] is False
            assert result.structured_content["error"].startswith("❌")
            response = await datasette.client.get(f"/archive/{tool}.json", params=arguments)
            assert response.status_code == 400 and response.json()["code"] == code, (tool, response.text)


async def test_the_tools_say_how_to_page(workspace):
    async with Client(mcp_tools.create_server(archive_path(workspace), workspace)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    get = tools["get_conversation"]
    assert "next_offset" in get.description and "has_more" in get.description
    assert "next_offset" in get.input_schema["properties"]["offset"]["description"]
    assert "thinking" in get.input_schema["properties"]["include"]["description"]
    listing = tools["list_conversations"]
    assert "newest first" in listing.description
    assert "workspace" in listing.input_schema["properties"]["agents"]["description"]
    for tool in (get, listing):
        assert tool.annotations and tool.annotations.read_only_hint
        assert "workspace_path" in tool.input_schema["properties"]


# --- a session of thousands of messages ----------------------------------------------------


@pytest.fixture(scope="module")
def big_workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("big")
    session = Session("44444444-aaaa-4bbb-8ccc-000000000004", "/home/ana/big", "main")
    start = at("2025-12-01T08:00:00")
    for index in range(2500):
        moment = start + dt.timedelta(seconds=20 * index)
        session.user(f"step {index}", moment)
        session.assistant([{"type": "text", "text": f"done {index}"}], moment + dt.timedelta(seconds=10))
    session.write(root / "claude" / "projects" / "-home-ana-big")
    workspace = write_files(root / "workspace", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[("claude-code", root / "claude" / "projects")])
    return workspace


async def test_a_five_thousand_message_session_reads_in_pages_within_the_time_limit(big_workspace):
    document = "claude-code:-home-ana-big/44444444-aaaa-4bbb-8ccc-000000000004"
    async with Client(mcp_tools.create_server(archive_path(big_workspace), big_workspace)) as client:
        (listed,) = (await client.call_tool("list_conversations", {})).structured_content["results"]
        assert (listed["path"], listed["messages"]) == (document, 5000)
        last = await client.call_tool("get_conversation", {"document": document, "offset": 4800, "limit": 200})
    page = last.structured_content
    assert not last.is_error, page
    assert (page["total"], page["num_results"], page["has_more"], page["next_offset"]) == (5000, 200, False, None)
    assert page["messages"][-1]["text"] == "done 2499"
