"""The MCP bridge (docs/contract.md: surfaces; docs/errors.md) through the MCP SDK's own client: stdio, HTTP, and /-/mcp."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from conftest import started_datasette
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from archivist.workspace import archive_path

ARCHIVIST = str(Path(sys.executable).parent / "archivist")
TOOLS = {
    "search_workspace",
    "search_reports",
    "list_command_reports",
    "get_report",
    "get_document",
    "search_commands",
    "search",
    "search_semantic",
    "get_similar",
    "list_conversations",
    "get_conversation",
    "usage",
    "file_history",
    "activity",
    "embed_document",
    "embed_workspace",
    "get_embedding_status",
}


def stdio(workspace: Path, *options: str) -> StdioServerParameters:
    env = {key: value for key, value in os.environ.items() if key in ("PATH", "HOME", "LANG")}
    return StdioServerParameters(
        command=ARCHIVIST, args=["mcp", str(workspace), *options], env={**env, "HF_HUB_OFFLINE": "1"}
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(port: int, process: subprocess.Popen) -> None:
    deadline = time.time() + 60
    while time.time() < deadline:
        assert process.poll() is None, f"exited with {process.returncode}"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("server did not start")


# What a test's own environment might set that would change how a server it starts is opened.
SERVER_SETTINGS = ("ARCHIVIST_TOKEN", "ARCHIVIST_MCP_TOKEN", "ARCHIVIST_ALLOW_ORIGINS", "ARCHIVIST_ALLOW_WORKSPACES")


@dataclass
class Running:
    """`archivist serve` or `archivist mcp --http` in a subprocess, with what it printed (stdout and stderr)."""

    process: subprocess.Popen
    port: int
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    @property
    def token(self) -> str:
        """The token the server printed: in serve's URL, or in mcp --http's header line."""
        found = re.search(r"(?:/\?token=|Authorization: Bearer )([\w-]+)", self.output())
        assert found, f"no token printed:\n{self.output()}"
        return found[1]

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def stop(self) -> None:
        self.process.kill()  # open event streams would hold a graceful shutdown
        self.process.wait(timeout=10)


def launch(arguments: list[str], log: Path, env: dict[str, str] | None = None) -> Running:
    """`archivist ARGUMENTS --port N`, its output to a file (an unread pipe would fill and stall it), once it listens.

    It prints its URL and token before it listens, so they are in the file by then."""
    port = free_port()
    clean = {key: value for key, value in os.environ.items() if key not in SERVER_SETTINGS}
    with log.open("wb") as output:
        process = subprocess.Popen(
            [ARCHIVIST, *arguments, "--port", str(port)],
            env={**clean, "HF_HUB_OFFLINE": "1", **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    server = Running(process, port, log)
    try:
        wait_for(port, process)
    except AssertionError:
        server.stop()
        raise AssertionError(f"{' '.join(arguments)} did not start:\n{server.output()}") from None
    return server


@contextlib.contextmanager
def launcher(folder: Path) -> Iterator[Callable[..., Running]]:
    """Starts servers (`launch`) with their output in FOLDER; each is stopped at the end."""
    running: list[Running] = []

    def start(*arguments: str, env: dict[str, str] | None = None) -> Running:
        server = launch(list(arguments), folder / f"server-{len(running)}.log", env)
        running.append(server)
        return server

    try:
        yield start
    finally:
        for server in running:
            server.stop()


@pytest.fixture
def launched(tmp_path: Path):
    with launcher(tmp_path) as start:
        yield start


@pytest.fixture
def http_server(launched, embedded_sample: Path):
    """`archivist mcp --http` on the embedded sample."""

    def start(*options: str, env: dict[str, str] | None = None) -> Running:
        return launched("mcp", str(embedded_sample), "--http", *options, env=env)

    return start


@contextlib.asynccontextmanager
async def http_client(server: Running, path: str = "/mcp") -> AsyncIterator[Client]:
    """The MCP SDK's client over streamable HTTP, sending the token the server printed."""
    from mcp.client.streamable_http import streamable_http_client

    async with httpx.AsyncClient(headers=server.headers, timeout=60) as http:
        async with Client(streamable_http_client(server.base + path, http_client=http)) as client:
            yield client


async def test_stdio_lists_every_tool_with_described_inputs(embedded_sample):
    async with Client(stdio(embedded_sample)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    date_range = tools["search_workspace"].input_schema["properties"]["date_range"]["description"]
    assert "YYYY-MM" in date_range and "YYYY-MM-DD" in date_range
    for tool in tools.values():
        assert tool.description
        assert tool.output_schema is None, tool.name  # (each answer's fields: docs/mcp.md)
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), (tool.name, name)
        assert "workspace_path" in tool.input_schema["properties"]
    read_only = {name for name, tool in tools.items() if tool.annotations and tool.annotations.read_only_hint}
    assert read_only == TOOLS - {"embed_document", "embed_workspace"}


async def test_every_tool_answers_and_every_error_is_the_spec_body(embedded_sample):
    calls = {
        "search_workspace": (
            {"query": "authentication", "date_range": "2025-11"},
            {"query": "auth", "date_range": "nov"},
            "INVALID_DATE_RANGE",
        ),
        "search_reports": (
            {"query": "proxy timeout"},
            {"query": "proxy", "command_filter": "../x"},
            "INVALID_COMMAND_FILTER",
        ),
        "list_command_reports": ({"command": "k8s-cluster-health"}, {"command": "nope"}, "DIRECTORY_NOT_FOUND"),
        "get_report": (
            {"path": "reports/k8s-cluster-health/baseline-notes.md"},
            {"path": "../../etc/passwd"},
            "PATH_NOT_FOUND",
        ),
        "get_document": (
            {"document": "conversations/2025-11-10/002-debug-auth"},
            {"document": "nope.md"},
            "DOCUMENT_NOT_FOUND",
        ),
        "search_commands": ({"query": "proxy"}, {"query": ""}, "INVALID_QUERY"),
        "search": (
            {"query": "borders", "entities": ["feature", "bug"]},
            {"query": "borders", "entities": ["epic"]},
            "INVALID_ENTITY_TYPE",
        ),
        "search_semantic": ({"query": "authentication patterns"}, {"query": "x"}, "INVALID_QUERY"),
        "get_similar": (
            {"document": "conversations/2025-11-10/002-debug-auth"},
            {"document": "nope.md"},
            "DOCUMENT_NOT_FOUND",
        ),
        "list_conversations": ({"agents": ["workspace"]}, {"agents": ["no-such-agent"]}, "INVALID_PARAMETER"),
        "get_conversation": (
            {"document": "conversations/2025-11-10/002-debug-auth"},
            {"document": "nope.md"},
            "DOCUMENT_NOT_FOUND",
        ),
        "usage": ({"group_by": "model"}, {"group_by": "weekday"}, "INVALID_PARAMETER"),
        "file_history": ({"path": "team-handbook.md"}, {"path": "a\x00b"}, "INVALID_PARAMETER"),
        "activity": ({"start_date": "2025-01-01"}, {"start_date": "someday"}, "INVALID_DATE"),
        "embed_document": ({"path": "conversations"}, {"path": "../outside"}, "PATH_NOT_FOUND"),
        "embed_workspace": ({}, {"workspace_path": "/no/such/folder"}, "DIRECTORY_NOT_FOUND"),
        "get_embedding_status": ({}, {"workspace_path": "/no/such/folder"}, "DIRECTORY_NOT_FOUND"),
    }
    assert set(calls) == TOOLS
    async with Client(stdio(embedded_sample)) as client:
        for name, (good, bad, code) in calls.items():
            result = await client.call_tool(name, good)
            assert not result.is_error, (name, result.content)
            assert result.structured_content and json.loads(result.content[0].text) == result.structured_content
            failed = await client.call_tool(name, bad)
            assert failed.is_error, name
            assert failed.structured_content["success"] is False
            assert failed.structured_content["code"] == code, (name, failed.structured_content)
            assert failed.structured_content["error"].startswith("❌")
        raw = await client.call_tool("search", {"query": "borders AND", "match_mode": "raw", "mode": "keyword"})
        assert raw.is_error and raw.structured_content["code"] == "INVALID_SEARCH_SYNTAX"
        embedded = await client.call_tool("embed_document", {"path": "conversations"})
        assert embedded.structured_content["success"] is True and embedded.structured_content["embedded"] == 0
        assert embedded.structured_content["total_files"] > 0


async def test_results_equal_the_canned_queries_through_datasette(embedded_sample):
    datasette = await started_datasette(archive_path(embedded_sample))
    cases = [
        ("search_workspace", {"query": "authentication", "date_range": "2025-11"}, "search_workspace"),
        ("search_reports", {"query": "proxy timeout"}, "search_reports"),
        ("list_command_reports", {"command": "k8s-cluster-health"}, "list_command_reports"),
        ("search_commands", {"query": "proxy"}, "search_commands"),
        ("search_semantic", {"query": "authentication patterns", "limit": 5}, "search_semantic"),
        ("get_similar", {"document": "conversations/2025-11-10/002-debug-auth", "limit": 3}, "similar"),
    ]
    async with Client(stdio(embedded_sample)) as client:
        for tool, arguments, query in cases:
            result = await client.call_tool(tool, arguments)
            response = await datasette.client.get(f"/archive/{query}.json", params={**arguments, "_shape": "array"})
            assert result.structured_content["results"] == response.json(), tool
        report = await client.call_tool("get_report", {"path": "reports/k8s-cluster-health/baseline-notes.md"})
        (row,) = (
            await datasette.client.get(
                "/archive/get_report.json?path=reports/k8s-cluster-health/baseline-notes.md&_shape=array"
            )
        ).json()
        assert report.structured_content == {"success": True, **row}
        document = await client.call_tool("get_document", {"document": "reports/k8s-cluster-health/baseline-notes.md"})
        (row,) = (
            await datasette.client.get(
                "/archive/get_document.json?document=reports/k8s-cluster-health/baseline-notes.md&_shape=array"
            )
        ).json()
        assert document.structured_content == {
            "success": True,
            **row,
            "tags": json.loads(row["tags"]),
            "extra": json.loads(row["extra"]) if row["extra"] else None,
            "embedded": bool(row["embedded"]),
        }
        assert document.structured_content["body"] == report.structured_content["content"]
        status = await client.call_tool("get_embedding_status", {})
        (row,) = (await datasette.client.get("/archive/embedding_status.json?_shape=array")).json()
        assert status.structured_content == {
            "success": True,
            **row,
            "recent_embeddings": json.loads(row["recent_embeddings"]),
            "job": None,
        }
        for arguments in (
            {"query": "borders", "entities": ["feature", "bug"]},
            {"mode": "faceted", "tags": ["kubernetes"], "start_date": "2025-10"},
            {"query": "authentication", "output": "full"},
            {"mode": "scan", "output": "brief"},
        ):
            search = await client.call_tool("search", arguments)
            rest = await datasette.client.get(
                "/api/search", params={k: ",".join(v) if isinstance(v, list) else v for k, v in arguments.items()}
            )
            assert search.structured_content == rest.json()


async def test_workspace_path_opens_another_allowed_workspace(embedded_sample, make_workspace):
    from archivist.archive.indexer import index_workspace

    other = make_workspace(
        {"conversations/2025-01-02/001-debug-printer/conversation.md": "# Printer jam\n\nThe printer jams on duplex.\n"}
    )
    index_workspace(other)
    async with Client(stdio(embedded_sample, "--allow-workspace", str(other))) as client:
        here = await client.call_tool("search_workspace", {"query": "printer"})
        there = await client.call_tool("search_workspace", {"query": "printer", "workspace_path": str(other)})
    assert here.structured_content["num_results"] == 0
    assert [r["path"] for r in there.structured_content["results"]] == ["conversations/2025-01-02/001-debug-printer"]
    async with Client(stdio(embedded_sample)) as client:  # not allowed on this server
        refused = await client.call_tool("search_workspace", {"query": "printer", "workspace_path": str(other)})
    assert refused.is_error and refused.structured_content["code"] == "DIRECTORY_NOT_FOUND"
    assert "allowed" in refused.structured_content["error"]


def test_stdout_carries_only_protocol(embedded_sample):
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
    }
    process = subprocess.run(
        [ARCHIVIST, "mcp", str(embedded_sample)],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    lines = [line for line in process.stdout.splitlines() if line.strip()]
    assert lines and all(json.loads(line)["jsonrpc"] == "2.0" for line in lines)
    assert json.loads(lines[0])["result"]["serverInfo"]["name"] == "archivist"


async def test_http_transport_serves_the_same_tools(http_server):
    async with http_client(http_server()) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        result = await client.call_tool("search", {"query": "borders", "mode": "keyword"})
    assert tools == TOOLS
    assert result.structured_content["total"] >= 1


def test_http_transport_rejects_foreign_hosts_and_origins(http_server):
    server = http_server()
    url = server.base + "/mcp"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json", **server.headers}
    rebinding = httpx.post(url, json=body, headers={**headers, "host": "evil.example"})
    assert rebinding.status_code == 421
    foreign = httpx.post(url, json=body, headers={**headers, "origin": "http://evil.example"})
    assert foreign.status_code == 403


async def test_http_bearer_token_from_the_environment(http_server):
    url = http_server(env={"ARCHIVIST_MCP_TOKEN": "s3cret"}).base + "/mcp"
    refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert refused.status_code == 401 and refused.json()["code"] == "UNAUTHORIZED"
    async with httpx.AsyncClient(headers={"Authorization": "Bearer s3cret"}) as http:
        from mcp.client.streamable_http import streamable_http_client

        async with Client(streamable_http_client(url, http_client=http)) as client:
            tools = await client.list_tools()
    assert {tool.name for tool in tools.tools} == TOOLS


def test_serve_offers_the_tools_at_dash_mcp_beside_read_only_sql(launched, embedded_sample):
    import asyncio

    server = launched("serve", str(embedded_sample), "--no-index")

    async def check() -> None:
        async with http_client(server, "/-/mcp") as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert TOOLS | {"execute_sql", "list_databases"} <= tools
            found = await client.call_tool("search", {"query": "borders", "mode": "keyword"})
            assert found.structured_content["total"] >= 1
            write = await client.call_tool("execute_sql", {"database": "archive", "sql": "delete from documents"})
            assert write.is_error

    asyncio.run(check())


def _exchange(workspace: Path, *messages: dict) -> list[dict]:
    """Send the messages, keep stdin open, and read one answer per request."""
    process = subprocess.Popen(
        [ARCHIVIST, "mcp", str(workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    try:
        process.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        process.stdin.flush()
        return [json.loads(process.stdout.readline()) for m in messages if "id" in m]
    finally:
        process.kill()
        process.wait(timeout=10)


@pytest.mark.parametrize("version", ["2025-06-18", "2024-11-05", "1999-01-01"])
def test_the_early_initialize_answer_is_the_sdks_own(embedded_sample, version):
    """stdio answers initialize before the SDK loads; the SDK's answer must be the same."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
    }
    early = _exchange(
        embedded_sample,
        initialize,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 8, "method": "tools/list"},
    )
    assert [m["id"] for m in early] == [7, 8]  # one answer to initialize, then one to tools/list
    assert early[0]["result"]["protocolVersion"] == (version if version != "1999-01-01" else "2025-11-25")
    assert len(early[1]["result"]["tools"]) == len(TOOLS)
    # a first line that is not initialize goes to the SDK, which then answers initialize itself
    late = _exchange(embedded_sample, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, initialize)
    assert late[-1] == early[0]


def test_the_early_answers_are_the_sdks_own_and_nothing_is_answered_twice(embedded_sample):
    """The list and a search answered before the SDK loads, and the SDK's own answers to the same
    requests once a request that only it answers (resources/list) has handed the session over."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
    }
    call = {"name": "search", "arguments": {"query": "kubernetes migration", "page_size": 3}}
    answers = _exchange(
        embedded_sample,
        initialize,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 8, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": call},
        {"jsonrpc": "2.0", "id": 11, "method": "resources/list"},
        {"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": call},
        {"jsonrpc": "2.0", "id": 10, "method": "ping"},
    )
    # one answer each (a second answer to initialize or to an early one would take a place here),
    # the early ones first
    assert [a["id"] for a in answers][:3] == [7, 8, 5]
    assert sorted(a["id"] for a in answers) == [5, 6, 7, 8, 9, 10, 11]
    by_id = {a["id"]: a for a in answers}
    assert by_id[8]["result"] == by_id[9]["result"] and len(by_id[8]["result"]["tools"]) == len(TOOLS)
    assert by_id[7]["result"]["protocolVersion"] == "2025-06-18"
    assert by_id[5]["result"] == by_id[6]["result"] and by_id[5]["result"]["structuredContent"]["total"] >= 3
    assert by_id[5]["result"]["structuredContent"]["mode"] == "hybrid"
