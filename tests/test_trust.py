"""Trust: callers reach only allowed workspaces, every HTTP surface checks Host/Origin/token,
concurrent clients never wait on each other, every mistake gets the docs/errors.md body, work is bounded."""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest
from conftest import started_datasette
from mcp import Client
from test_mcp import ARCHIVIST, Running, http_client, launcher

from archivist.archive.indexer import index_workspace
from archivist.errors import ArchivistError
from archivist.mcp.tools import create_server
from archivist.queries.runner import Archive
from archivist.workspace import archive_path


def error_of(result) -> dict:
    assert result.is_error, result.structured_content
    body = result.structured_content
    assert set(body) == {"success", "error", "code"} and body["success"] is False
    assert body["error"].startswith("❌")
    return body


# --- workspaces are allowed, not guessed ------------------------------------------------


@pytest.fixture
def other_workspace(make_workspace) -> Path:
    return make_workspace({"notes/printer.md": "# Printer\n\nThe printer jams on duplex pages.\n"})


async def test_a_folder_nobody_allowed_is_never_read_nor_written(sample_workspace, tmp_path):
    stranger = tmp_path / "stranger"
    (stranger / "notes").mkdir(parents=True)
    (stranger / "notes" / "secret.md").write_text("# Secret\n\nThe printer password.\n")
    server = create_server(archive_path(sample_workspace), sample_workspace)
    async with Client(server) as client:
        for tool, arguments in [
            ("embed_workspace", {}),
            ("get_embedding_status", {}),
            ("search_semantic", {"query": "printer password"}),
            ("search", {"query": "printer"}),
            ("embed_document", {"path": "notes"}),
        ]:
            for folder in (str(stranger), "/etc", "/", str(stranger / "notes" / ".."), str(stranger / "missing")):
                body = error_of(await client.call_tool(tool, {**arguments, "workspace_path": folder}))
                assert body["code"] == "DIRECTORY_NOT_FOUND", (tool, folder, body)
                assert "Not an allowed workspace" in body["error"]
    assert not (stranger / ".archivist").exists()
    assert not Path("/etc/.archivist").exists()


async def test_an_allowed_workspace_is_read_but_never_indexed_by_a_call(sample_workspace, other_workspace):
    server = create_server(archive_path(sample_workspace), sample_workspace, [other_workspace])
    async with Client(server) as client:
        body = error_of(await client.call_tool("embed_workspace", {"workspace_path": str(other_workspace)}))
        assert body["code"] == "DIRECTORY_NOT_FOUND" and "archivist index" in body["error"]
        assert not (other_workspace / ".archivist").exists()  # no call created its archive
        index_workspace(other_workspace)  # the operator indexes it
        link = other_workspace.parent / "link-to-other"
        link.symlink_to(other_workspace)
        for path in (str(other_workspace), str(link), str(other_workspace) + "/notes/.."):
            found = await client.call_tool("search", {"query": "duplex", "mode": "keyword", "workspace_path": path})
            assert not found.is_error and found.structured_content["total"] == 1, path


@pytest.mark.parametrize(
    "path, why",
    [
        ("/tmp/a\x00b", "NUL byte"),
        ("/tmp/" + "x" * 300, "too long"),
        ("/" + "a/" * 2100, "too long"),
        ("~no-such-user-here/notes", "user"),
    ],
)
async def test_malformed_paths_get_a_clean_error(sample_workspace, path, why):
    async with Client(create_server(archive_path(sample_workspace), sample_workspace)) as client:
        body = error_of(await client.call_tool("search_workspace", {"query": "proxy", "workspace_path": path}))
    assert body["code"] == "DIRECTORY_NOT_FOUND" and why in body["error"]


def test_allow_workspace_must_name_a_folder(sample_workspace, tmp_path):
    done = subprocess.run(
        [ARCHIVIST, "mcp", str(sample_workspace), "--allow-workspace", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0 and "nope" in done.stderr
    assert "Traceback" not in done.stderr


# --- Host, Origin, token and Content-Security-Policy on every HTTP surface --------------------


@pytest.fixture
def launched(tmp_path):
    with launcher(tmp_path) as start:
        yield start


@pytest.fixture
def serve(launched, embedded_sample):
    """`archivist serve` on the embedded sample, as its operator starts it: no token set, none in the environment."""

    def start(*options: str, env: dict[str, str] | None = None) -> Running:
        return launched("serve", str(embedded_sample), "--no-index", *options, env=env)

    return start


@pytest.fixture
def http_server(launched, embedded_sample):
    """`archivist mcp --http` on the embedded sample, likewise."""

    def start(*options: str, env: dict[str, str] | None = None) -> Running:
        return launched("mcp", str(embedded_sample), "--http", *options, env=env)

    return start


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
SURFACES = (
    "/",
    "/search?query=proxy&mode=keyword",
    "/document/1",
    "/api/search?query=proxy&mode=keyword",
    "/archive/search_workspace.json?query=proxy",
    "/archive/documents.json",
    "/archive.json?sql=select+count(*)+from+documents",
    "/-/mcp",
)
HTML_PAGES = ("/", "/search?query=proxy&mode=keyword", "/document/1", "/archive/documents", "/archive", "/nope")


def request(base: str, path: str, headers: dict[str, str] | None = None) -> httpx.Response:
    """GET a page or JSON; POST an MCP initialize to an MCP endpoint."""
    if path.split("?")[0].endswith("/mcp"):
        return httpx.post(base + path, json=INITIALIZE, headers={**MCP_HEADERS, **(headers or {})}, timeout=60)
    return httpx.get(base + path, headers=headers, timeout=60)


def foreign_origins(port: int) -> list[str]:
    """Origins other than http://127.0.0.1:PORT: other local ports and schemes, other hosts, null, malformed."""
    return [
        "http://127.0.0.1:1",
        f"http://127.0.0.1:{port + 1}",
        f"https://127.0.0.1:{port}",
        f"ws://127.0.0.1:{port}",
        f"http://localhost:{port}",
        "http://evil.example",
        "null",
        f"http://127.0.0.1:{port}/path",
        f"http://user@127.0.0.1:{port}",
        "http://127.0.0.1:99999",
        "http://[",
        f"127.0.0.1:{port}",
        "",
    ]


def assert_refused(response: httpx.Response, status: int, code: str, why: str) -> None:
    assert response.status_code == status, (response.status_code, response.text[:300])
    body = response.json()
    assert body["success"] is False and body["code"] == code and why in body["error"], body


def test_serve_refuses_dns_rebinding_and_foreign_origins(serve):
    server = serve("--allow-host", "archive.internal")
    token = server.headers
    for path in SURFACES:
        assert_refused(request(server.base, path, {**token, "host": "evil.example"}), 421, "FORBIDDEN", "host name")
        for origin in foreign_origins(server.port):
            refused = request(server.base, path, {**token, "origin": origin})
            assert_refused(refused, 403, "FORBIDDEN", "--allow-origin")
        for host in ("localhost", "127.0.0.1", "archive.internal"):
            assert request(server.base, path, {**token, "host": f"{host}:1234"}).status_code < 400, (path, host)
        same = {"origin": server.base}
        assert request(server.base, path, {**token, **same}).status_code < 400, path
        same_by_name = {"host": f"localhost:{server.port}", "origin": f"http://localhost:{server.port}"}
        assert request(server.base, path, {**token, **same_by_name}).status_code < 400, path
        default_port = {"host": "archive.internal", "origin": "http://archive.internal:80"}
        assert request(server.base, path, {**token, **default_port}).status_code < 400, path


def test_mcp_http_refuses_foreign_origins(http_server):
    server = http_server()
    for origin in foreign_origins(server.port):
        assert_refused(request(server.base, "/mcp", {**server.headers, "origin": origin}), 403, "FORBIDDEN", "origin")
    assert request(server.base, "/mcp", {**server.headers, "origin": server.base}).status_code == 200


def test_allow_origin_admits_exactly_the_named_origins(serve, http_server):
    named = ("http://127.0.0.1:3000", "https://tools.example")
    admitted = ["http://127.0.0.1:3000", "https://tools.example", "https://tools.example:443", "HTTPS://Tools.Example"]
    still_foreign = ["http://127.0.0.1:3001", "https://127.0.0.1:3000", "http://tools.example", "http://localhost:3000"]
    on_serve = serve("--allow-origin", named[0], "--allow-origin", named[1])
    on_mcp = http_server(env={"ARCHIVIST_ALLOW_ORIGINS": f"{named[0]}, {named[1]}"})  # commas or spaces
    for server, paths in ((on_serve, ("/api/search?query=proxy&mode=keyword", "/", "/-/mcp")), (on_mcp, ("/mcp",))):
        for path in paths:
            for origin in admitted:
                assert request(server.base, path, {**server.headers, "origin": origin}).status_code == 200, origin
            for origin in still_foreign:
                refused = request(server.base, path, {**server.headers, "origin": origin})
                assert refused.status_code == 403, (path, origin)


def test_serve_is_closed_without_the_token_it_printed(serve):
    import http.client

    server = serve()
    printed = server.output()
    token = server.token
    assert f"at http://127.0.0.1:{server.port}/?token={token}\n" in printed  # the URL that opens the app
    assert "ARCHIVIST_TOKEN to keep one" in printed and len(token) >= 40
    for path in SURFACES:
        assert_refused(request(server.base, path), 401, "UNAUTHORIZED", "token")
        assert_refused(request(server.base, path, {"authorization": "Bearer wrong"}), 401, "UNAUTHORIZED", "token")
        assert request(server.base, path, server.headers).status_code == 200, path
    for cookie in ('archivist_token="unterminated', "archivist_token=wrong", "\x7f=;;;=", "archivist_token"):
        assert_refused(request(server.base, "/", {"cookie": cookie}), 401, "UNAUTHORIZED", "token")
    with httpx.Client(base_url=server.base, timeout=60, headers={"accept": "text/html"}) as browser:
        opened = browser.get(f"/?token={token}")  # the printed URL, in a browser: the token becomes a cookie
        assert opened.status_code == 302 and opened.headers["location"] == "/"
        assert "HttpOnly" in opened.headers["set-cookie"] and "SameSite=Strict" in opened.headers["set-cookie"]
        for path in HTML_PAGES[:-1]:
            assert browser.get(path).status_code == 200, path
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)  # httpx would tidy the path
    connection.request("GET", f"//evil.example/?token={token}", headers={"accept": "text/html"})
    elsewhere = connection.getresponse()
    connection.close()
    assert elsewhere.status == 302 and elsewhere.getheader("location") == "/evil.example/"  # never off the site
    client = {"accept": "application/json"}  # a client that cannot send headers puts the token in the URL
    assert request(server.base, f"/api/search?query=proxy&mode=keyword&token={token}", client).status_code == 200
    assert request(server.base, f"/-/mcp?token={token}").status_code == 200
    refused = request(server.base, "/?token=wrong", {"accept": "text/html"})  # a browser: the sign-in page
    assert refused.status_code == 401 and "This Archivist server is closed" in refused.text
    assert "not this server's" in refused.text
    assert_refused(request(server.base, "/?token=wrong", {"accept": "application/json"}), 401, "UNAUTHORIZED", "token")


def test_mcp_http_is_closed_without_the_token_it_printed_and_makes_one_at_each_start(http_server):
    server = http_server()
    assert f"at http://127.0.0.1:{server.port}/mcp\n" in server.output()
    assert f"Authorization: Bearer {server.token}\n" in server.output()
    assert_refused(request(server.base, "/mcp"), 401, "UNAUTHORIZED", "token")
    assert_refused(request(server.base, "/mcp", {"authorization": "Bearer wrong"}), 401, "UNAUTHORIZED", "token")
    assert request(server.base, f"/mcp?token={server.token}").status_code == 200

    async def tools() -> set[str]:
        async with http_client(server) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    assert "search" in asyncio.run(tools())
    again = http_server()
    assert again.token != server.token
    assert_refused(request(again.base, "/mcp", server.headers), 401, "UNAUTHORIZED", "token")


def test_no_token_serves_openly_and_says_so_at_each_start(serve, http_server):
    for server, path in (
        (serve("--no-token"), "/api/search?query=proxy&mode=keyword"),
        (http_server("--no-token"), "/mcp"),
    ):
        printed = server.output()
        assert "Warning: --no-token" in printed and "anyone who can reach port" in printed, printed
        assert "token=" not in printed and "Bearer" not in printed
        assert request(server.base, path).status_code == 200
        refused = request(server.base, path, {"origin": "http://127.0.0.1:1"})  # still only its own pages
        assert_refused(refused, 403, "FORBIDDEN", "--allow-origin")


def test_serve_with_a_token_set_lets_in_only_its_holders(serve):
    server = serve(env={"ARCHIVIST_TOKEN": "s3cret-token"})
    assert server.token == "s3cret-token" and "keep one" not in server.output()
    refused = httpx.get(server.base + "/api/search?query=proxy&mode=keyword")
    assert refused.status_code == 401 and refused.json()["code"] == "UNAUTHORIZED"
    assert httpx.get(server.base + "/", headers={"authorization": "Bearer wrong"}).status_code == 401
    authorized = {"authorization": "Bearer s3cret-token"}
    assert httpx.get(server.base + "/api/search?query=proxy&mode=keyword", headers=authorized).status_code == 200
    with httpx.Client(base_url=server.base, timeout=60, headers={"accept": "text/html"}) as browser:
        first = browser.get("/search?query=proxy&mode=keyword&token=s3cret-token")
        assert first.status_code == 302 and first.headers["location"] == "/search?query=proxy&mode=keyword"
        assert "HttpOnly" in first.headers["set-cookie"]
        assert browser.get("/search?query=proxy&mode=keyword").status_code == 200
    assert httpx.get(server.base + "/?token=wrong").status_code == 401


def test_every_page_of_serve_sends_a_content_security_policy(serve):
    server = serve()
    for path in HTML_PAGES:
        response = request(server.base, path, server.headers)
        assert response.headers["content-type"].startswith("text/html"), path
        policy = dict(part.strip().split(" ", 1) for part in response.headers["content-security-policy"].split(";"))
        assert policy["default-src"] == "'self'" and policy["frame-ancestors"] == "'none'", path
        assert policy["script-src"].startswith("'self' 'sha256-") and "unsafe" not in policy["script-src"], path
    refused = request(server.base, "/")
    assert refused.status_code == 401 and "content-security-policy" in refused.headers


def test_serve_refuses_a_66000_character_query_plainly(serve):
    import http.client

    server = serve()
    for path in ("/api/search", "/search", "/archive/search.json", "/archive/search_workspace"):
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)  # httpx refuses such URLs
        connection.request("GET", f"{path}?query={'a' * 66_000}", headers=server.headers)
        response = connection.getresponse()
        body = response.read().decode()
        connection.close()
        assert response.status == 400 and "too long" in body and "Traceback" not in body, (path, response.status)


# --- concurrent clients ---------------------------------------------------------------------


def test_many_mcp_and_web_clients_at_once_all_answer(serve):
    server = serve()
    base = server.base
    from mcp.client.streamable_http import streamable_http_client

    async def agent(number: int) -> int:
        answered = 0
        async with httpx.AsyncClient(timeout=60, headers=server.headers) as http:
            async with Client(streamable_http_client(base + "/-/mcp", http_client=http)) as client:
                for query in ("proxy timeout", "authentication", "borders", "kubernetes"):
                    result = await client.call_tool("search", {"query": query, "mode": "keyword"})
                    assert not result.is_error, result.content
                    answered += 1
        return answered

    async def browser(number: int) -> int:
        async with httpx.AsyncClient(base_url=base, timeout=60, headers=server.headers) as http:
            for path in ("/", "/search?query=proxy", "/api/search?query=borders&mode=keyword", "/document/1"):
                assert (await http.get(path)).status_code == 200, path
        return 4

    async def everyone() -> list[int]:
        return await asyncio.gather(*[agent(n) for n in range(8)], *[browser(n) for n in range(8)])

    started = time.perf_counter()
    answers = asyncio.run(asyncio.wait_for(everyone(), timeout=180))
    assert answers == [4] * 16, answers
    print(f"16 clients, 64 requests in {time.perf_counter() - started:.1f}s")


def test_threads_share_a_few_connections_and_all_answer(sample_workspace):
    archive = Archive.for_workspace(sample_workspace, time_limit_ms=5000)
    failures: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(20):
                assert archive.search({"query": "proxy", "mode": "keyword"})["total"] >= 1
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    opened = len(archive._connections)
    archive.close()
    assert not failures and 1 <= opened <= Archive.POOL_SIZE


async def test_searches_during_a_reindex_never_fail(tmp_path):
    from conftest import write_files

    files = {
        f"notes/2025-01-{n % 28 + 1:02d}/note-{n}.md": f"# Note {n}\n\nproxy timeout number {n} " + "word " * 400
        for n in range(1500)
    }
    workspace = write_files(tmp_path / "big", files)
    index_workspace(workspace)
    for path in list(files)[::2]:  # half the files change: the next index rewrites them
        (workspace / path).write_text(files[path] + " changed")
    datasette = await started_datasette(archive_path(workspace))
    failures: list[str] = []
    searches = {"mcp": 0, "web": 0}
    indexer = subprocess.Popen([ARCHIVIST, "index", str(workspace)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def search_as_mcp_does() -> None:
        with Archive.for_workspace(workspace, time_limit_ms=1000) as archive:
            while indexer.poll() is None:
                try:
                    assert archive.search({"query": "proxy timeout", "mode": "keyword"})["total"] == 1500
                    searches["mcp"] += 1
                except (ArchivistError, AssertionError) as error:
                    failures.append(str(error))

    reader = threading.Thread(target=search_as_mcp_does)
    reader.start()
    while indexer.poll() is None:
        response = await datasette.client.get("/api/search", params={"query": "proxy timeout", "mode": "keyword"})
        if response.status_code != 200 or response.json()["total"] != 1500:
            failures.append(response.text[:200])
        searches["web"] += 1
    reader.join(timeout=60)
    assert indexer.returncode == 0, indexer.stderr.read()
    assert searches["mcp"] > 0 and searches["web"] > 0 and not failures, failures[:3]


# --- one error contract ----------------------------------------------------------------------


async def test_caller_mistakes_get_the_spec_body_never_internal_error(sample_workspace):
    cases = [
        ("search", {"query": "borders", "product_ids": [-1]}, "INVALID_PARAMETER"),
        ("search", {"query": "borders", "product_ids": [0]}, "INVALID_PARAMETER"),
        ("search", {"query": "borders", "product_ids": [10**30]}, "INVALID_PARAMETER"),
        ("search", {"query": 5}, "INVALID_PARAMETER"),
        ("search", {"query": "borders", "page": "two"}, "INVALID_PARAMETER"),
        ("search", {"query": "borders", "match_all": {"a": 1}}, "INVALID_PARAMETER"),
        ("search", {"query": "borders", "colour": "red"}, "INVALID_PARAMETER"),
        ("search", {"query": "borders", "entities": "x" * 5000}, "INVALID_PARAMETER"),
        ("search_workspace", {"query": None}, "INVALID_PARAMETER"),
        ("search_workspace", {}, "INVALID_PARAMETER"),
        ("get_report", {"path": ["a"]}, "INVALID_PARAMETER"),
        ("no_such_tool", {}, "INVALID_PARAMETER"),
        ("get_similar", {"source_path": "a", "document": "b"}, "INVALID_PARAMETER"),
    ]
    async with Client(create_server(archive_path(sample_workspace), sample_workspace)) as client:
        for tool, arguments, code in cases:
            body = error_of(await client.call_tool(tool, arguments))
            assert body["code"] == code, (tool, arguments, body)


async def test_sdk_argument_errors_name_the_argument_not_its_value(sample_workspace):
    async with Client(create_server(archive_path(sample_workspace), sample_workspace)) as client:
        body = error_of(await client.call_tool("search", {"query": ["secret-value-123"]}))
    assert "query" in body["error"] and "secret-value-123" not in body["error"]


async def test_a_seeds_argument_names_are_accepted_as_written(embedded_sample):
    async with Client(create_server(archive_path(embedded_sample), embedded_sample)) as client:
        seed_003 = await client.call_tool(
            "get_similar", {"source_path": "conversations/2025-11-10/002-debug-auth", "limit": 3}
        )
        ours = await client.call_tool(
            "get_similar", {"document": "conversations/2025-11-10/002-debug-auth", "limit": 3}
        )
        assert not seed_003.is_error and seed_003.structured_content == ours.structured_content
        missing = error_of(await client.call_tool("get_similar", {"source_path": "nope.md"}))
        assert missing["code"] == "DOCUMENT_NOT_FOUND"
        seed_002 = await client.call_tool(
            "search",
            {"mode": "faceted", "memory_type": "decision", "k": 3, "output": "full", "encoding_context": {"a": 1}},
        )
        assert not seed_002.is_error
        assert {r["entity_type"] for r in seed_002.structured_content["results"]} == {"decision"}
        assert seed_002.structured_content["page_size"] == 3
        kinds = await client.call_tool("search", {"mode": "recent", "kinds": ["memory"]})
        assert {r["kind"] for r in kinds.structured_content["results"]} == {"memory"}


# --- bounded work ------------------------------------------------------------------------------


async def test_long_queries_are_refused_at_once(sample_workspace):
    async with Client(create_server(archive_path(sample_workspace), sample_workspace)) as client:
        for tool in ("search", "search_workspace", "search_reports", "search_semantic", "search_commands"):
            started = time.perf_counter()
            body = error_of(await client.call_tool(tool, {"query": "word " * 3000}))
            assert body["code"] == "INVALID_QUERY" and "64 words" in body["error"], tool
            assert time.perf_counter() - started < 2


async def test_a_lone_surrogate_in_any_argument_is_refused_plainly(sample_workspace):
    """A JSON escape like \\ud800 is not text: every tool says which argument, never INTERNAL_ERROR."""
    calls = [
        ("search", {"query": "\ud800proxy", "mode": "keyword"}, "query"),
        ("search", {"query": "proxy", "mode": "hybrid", "tags": ["ops", "\udcff"]}, "tags"),
        ("search", {"mode": "similar", "document": "notes/\udcff.md"}, "document"),
        ("search_workspace", {"query": "proxy \udfff"}, "query"),
        ("get_document", {"document": "\ud800"}, "document"),
        ("get_conversation", {"document": "\ud800"}, "document"),
        ("search_semantic", {"query": "a\ud800b"}, "query"),
    ]
    async with Client(create_server(archive_path(sample_workspace), sample_workspace)) as client:
        for tool, arguments, name in calls:
            body = error_of(await client.call_tool(tool, arguments))
            assert body["code"] == "INVALID_PARAMETER" and f"{name} is not valid text" in body["error"], tool


async def test_an_archive_removed_while_the_server_runs_is_not_read(tmp_path):
    import shutil

    from conftest import SAMPLE

    workspace = tmp_path / "ws"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))
    index_workspace(workspace)
    async with Client(create_server(archive_path(workspace), workspace)) as client:
        found = await client.call_tool("search", {"query": "proxy", "mode": "keyword"})
        assert not found.is_error and found.structured_content["total"] > 0
        shutil.rmtree(workspace / ".archivist")
        body = error_of(await client.call_tool("search", {"query": "proxy", "mode": "keyword"}))
        assert body["code"] == "DIRECTORY_NOT_FOUND" and "archivist index" in body["error"]


def test_the_cli_refuses_arguments_that_are_not_utf_8(sample_workspace):
    for extra in ([b"\xff\xfe"], [b"proxy", b"--tag", b"\xff"], [b"--mode", b"similar", b"--document", b"\xff"]):
        result = subprocess.run(
            [ARCHIVIST.encode(), b"search", str(sample_workspace).encode(), *extra],
            capture_output=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        stderr = result.stderr.decode("utf-8", "replace")
        assert result.returncode == 1 and "[INVALID_PARAMETER]" in stderr and "Traceback" not in stderr, stderr


def test_a_query_stops_at_its_time_limit_and_when_cancelled(sample_workspace):
    with Archive.for_workspace(sample_workspace, time_limit_ms=1e-6) as archive:
        with pytest.raises(ArchivistError) as timed_out:
            archive.search({"query": "proxy", "mode": "keyword"})
    assert "took too long" in timed_out.value.message and timed_out.value.code == "SEARCH_TIMED_OUT"
    cancel = threading.Event()
    cancel.set()
    with Archive.for_workspace(sample_workspace) as archive:
        with pytest.raises(ArchivistError) as cancelled:
            archive.search({"query": "proxy", "mode": "keyword"}, cancel)
        assert "cancelled" in cancelled.value.message
        assert archive.search({"query": "proxy", "mode": "keyword"})["total"] >= 1  # the next call is unaffected


async def test_no_500_and_no_sql_for_hostile_urls(sample_datasette):
    urls = [
        ("get", "//archive"),
        ("get", "/archive//documents"),
        ("get", "/archive/documents.json?_timelimit=select 1"),
        ("post", "/archive/documents"),
        ("post", "/archive/nope/-/insert"),
        ("get", "/archive/documents.json?_sort=nope"),
        ("get", "/api/search?query=" + "a" * 6000),
        ("get", "/archive/search_workspace.json?query=" + "word+" * 3000),
        ("get", "/archive/search_workspace?query=" + "word+" * 3000),
        ("get", "/api/search?query=x&product_ids=-1"),
        ("get", "/document/%00"),
        ("get", "/search?query=%00%01"),
        ("get", "/archive/check_search_syntax.json?query=NEAR(&query=the"),
    ]
    for method, url in urls:
        response = await getattr(sample_datasette.client, method)(url)
        assert response.status_code < 500, (url[:60], response.status_code)
        if response.status_code >= 400:  # an error says what was wrong, never with SQL or a traceback
            for marker in ("Traceback", "SELECT ", "<textarea", "no such column"):
                assert marker not in response.text, (url[:60], marker)


async def test_a_huge_document_page_shows_its_beginning(make_workspace):
    workspace = make_workspace(
        {"notes/huge.md": "# Huge\n\n" + "".join(f"line {n} of a long log\n" for n in range(200_000))}
    )
    index_workspace(workspace)
    datasette = await started_datasette(archive_path(workspace))
    started = time.perf_counter()
    page = await datasette.client.get("/document/notes%2Fhuge.md")
    assert page.status_code == 200 and time.perf_counter() - started < 3
    assert "line 10 of a long log" in page.text and "line 199999 of" not in page.text
    assert "The whole text" in page.text


# --- long tools -------------------------------------------------------------------------------


async def test_embedding_sends_progress_and_can_run_in_the_background(sample_workspace):
    server = create_server(archive_path(sample_workspace), sample_workspace)
    notes: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        notes.append((done, total, message))

    async with Client(server) as client:
        embedded = await client.call_tool("embed_document", {"path": "conversations"}, progress_callback=progress)
        assert not embedded.is_error and embedded.structured_content["embedded"] > 0
        assert len(notes) >= 2 and notes[-1][0] == notes[-1][1] == embedded.structured_content["embedded"]
        assert [done for done, _, _ in notes] == sorted(done for done, _, _ in notes)
        started = await client.call_tool("embed_workspace", {"background": True})
        assert not started.is_error and started.structured_content["running"] is True
        for _ in range(600):  # the job goes on while other calls are answered
            found = await client.call_tool("search", {"query": "proxy", "mode": "keyword"})
            assert not found.is_error
            status = (await client.call_tool("get_embedding_status", {})).structured_content
            if status["job"]["state"] != "running":
                break
            await asyncio.sleep(0.5)
    assert status["job"]["state"] == "done" and status["job"]["finished_at"]
    assert status["pending"] == 0 and status["job"]["documents_done"] == status["job"]["documents_total"]


async def test_a_slow_call_on_stdio_never_delays_the_next(sample_workspace):
    from test_mcp import stdio

    async with Client(stdio(sample_workspace)) as client:
        await client.call_tool("search", {"query": "proxy", "mode": "keyword"})  # the server is up
        embedding = asyncio.create_task(client.call_tool("embed_workspace", {}))  # seconds of model work
        await asyncio.sleep(0.5)
        started = time.perf_counter()
        found = await client.call_tool("search_workspace", {"query": "authentication"})
        answered_in = time.perf_counter() - started
        assert not found.is_error and not embedding.done(), "the search waited for the embedding"
        embedded = await embedding
    assert not embedded.is_error and embedded.structured_content["embedded"] > 0
    assert answered_in < 5


# --- the seeds' answers ------------------------------------------------------------------------


def test_semantic_matches_have_a_floor(embedded_sample):
    with Archive.for_workspace(embedded_sample) as archive:
        everything = sum(row["documents"] for row in archive.run("document_counts"))
        for query in ("xyzzyplugh", "qwerty asdf zxcv"):
            assert archive.search({"query": query, "mode": "semantic"})["total"] == 0, query
            assert archive.search({"query": query})["total"] == 0, query
            assert archive.run("search_semantic", {"query": query}) == [], query
        keyword = archive.search({"query": "proxy", "mode": "keyword"})["total"]
        hybrid = archive.search({"query": "proxy"})
        assert keyword <= hybrid["total"] < everything
        assert sum(hybrid["facets"]["kind"].values()) == min(hybrid["total"], 200)
        unfloored = archive.search({"query": "xyzzyplugh", "mode": "semantic", "min_similarity": -1})
        assert unfloored["total"] > 0  # the floor is a default, and a caller can lower it
        related = archive.search({"query": "authentication token expiry", "mode": "semantic"})
        assert related["total"] > 0
