"""The Datasette app on the sample workspace: browsable, faceted, every canned query a page and JSON."""

import base64
import contextlib
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from urllib.parse import parse_qs, urlsplit

import pytest

from archivist.queries.catalog import canned_queries

EXAMPLES = {
    "search_workspace": "query=authentication&date_range=2025-11",
    "search_reports": "query=proxy+timeout",
    "list_commands": "",
    "list_command_reports": "command=k8s-cluster-health",
    "get_report": "path=reports/k8s-cluster-health/baseline-notes.md",
    "search_commands": "query=proxy",
    "search_semantic": "query=token+clock+skew&conversation_type=debug",
    "find_document": "document=conversations/2025-11-10/002-debug-auth",
    "similar": "document=conversations/2025-11-10/002-debug-auth&limit=5",
    "embedding_status": "",
    "search": "query=proxy+timeout&entities=conversation,memory&start_date=2025-10",
    "document_counts": "",
    "get_document": "document=conversations/2025-11-10/002-debug-auth",
    "activity": "by=day&kind=conversation",
    "check_search_syntax": "query=proxy+NEAR(timeout)",
    "list_conversations": "agents=workspace&start_date=2025-11",
    "get_conversation": "document=conversations/2025-11-10/002-debug-auth",
    "usage": "group_by=model&start_date=2025-10",
    "file_history": "path=keepalive.py",
    "project_activity": "start_date=2025-01-01",
    "activity_periods": "group_by=week&start_date=2025-01-01",
}


def test_every_canned_query_has_an_example():
    assert set(EXAMPLES) == set(canned_queries())


async def test_documents_are_browsable_with_kind_type_month_and_tag_facets(sample_datasette):
    response = await sample_datasette.client.get("/archive/documents.json?_size=0")
    facets = response.json()["facet_results"]
    assert set(facets) == {"kind", "type", "month", "tags"}
    kinds = {item["value"]: item["count"] for item in facets["kind"]["results"]}
    assert kinds == {"conversation": 13, "memory": 13, "record": 18, "note": 5, "report": 6}
    tags = {item["value"] for item in facets["tags"]["results"]}
    assert {"auth", "kubernetes", "decision"} <= tags
    months = {item["value"] for item in facets["month"]["results"]}
    assert {"2025-10", "2025-11", "2025-12"} <= months


async def test_the_documents_page_renders_with_facets(sample_datasette):
    response = await sample_datasette.client.get("/archive/documents?kind=conversation")
    assert response.status_code == 200
    assert "13 rows where kind = &#34;conversation&#34;" in response.text
    assert 'class="facet-info' in response.text


AGENT_LOG_QUERIES = ("usage", "file_history", "project_activity", "activity_periods")  # what agent logs alone answer


@pytest.mark.parametrize("name", sorted(EXAMPLES))
async def test_each_canned_query_is_a_page_and_json(embedded_datasette, name):
    query_string = EXAMPLES[name]
    page = await embedded_datasette.client.get(f"/archive/{name}?{query_string}")
    assert page.status_code == 200
    assert canned_queries()[name]["title"] in page.text
    data = await embedded_datasette.client.get(f"/archive/{name}.json?{query_string}&_shape=array")
    assert data.status_code == 200
    # the sample workspace holds no agent log (tests/test_usage.py and tests/test_file_history.py read some)
    assert len(data.json()) >= (0 if name in AGENT_LOG_QUERIES else 1) and isinstance(data.json(), list)


async def test_an_empty_form_is_shown_without_an_error(sample_datasette):
    response = await sample_datasette.client.get("/archive/search_workspace")
    assert response.status_code == 200
    assert 'name="date_range"' in response.text


async def test_a_bad_parameter_on_a_page_is_a_400_page_with_the_message(sample_datasette):
    response = await sample_datasette.client.get("/archive/search_workspace?query=auth&date_range=nov")
    assert response.status_code == 400
    assert "Invalid date_range" in response.text and "YYYY-MM-DD" in response.text


async def test_sql_errors_never_reach_a_user_through_canned_queries(sample_datasette):
    for query in ['"', "NEAR(", "a OR", "*", "(((", "x' --"]:
        response = await sample_datasette.client.get(
            "/archive/search_workspace.json", params={"query": query, "_shape": "array"}
        )
        assert response.status_code in (200, 400), query
        if response.status_code == 400:
            assert response.json()["code"] == "INVALID_QUERY", query


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, seconds: float = 30) -> None:
    """The server binds just after printing its URL: poll until it accepts."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listening on port {port}")


# A server a test starts is opened as its operator opens it: no token from the test's own environment.
WITHOUT_TOKEN = {
    key: value for key, value in os.environ.items() if key not in ("ARCHIVIST_TOKEN", "ARCHIVIST_MCP_TOKEN")
}


def test_archivist_serve_indexes_embeds_prints_the_url_and_serves(sample_workspace):
    # what `make serve` runs
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from archivist.cli import cli; cli()",
            "serve",
            str(sample_workspace),
            "--embed",
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=WITHOUT_TOKEN,
    )
    try:
        lines = [process.stdout.readline() for _ in range(3)]
        assert "0 indexed, 28 unchanged" in lines[0]  # the fixture indexed it already
        assert "55 documents embedded" in lines[1]
        url = lines[2].strip().rsplit(" ", 1)[-1]
        assert re.fullmatch(rf"http://127\.0\.0\.1:{port}/\?token=[\w-]{{40,}}", url), url
        wait_for_port(port)
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())  # keeps the cookie it is given
        with browser.open(urllib.request.Request(url, headers={"Accept": "text/html"})) as response:
            assert response.url == f"http://127.0.0.1:{port}/" and "<h1>Archivist</h1>" in response.read().decode()
        token = {"Authorization": f"Bearer {parse_qs(urlsplit(url).query)['token'][0]}"}
        base = f"http://127.0.0.1:{port}/"
        search = urllib.request.Request(
            base + "archive/search_workspace.json?query=kubernetes&_shape=array", headers=token
        )
        with urllib.request.urlopen(search) as response:
            body = json.loads(response.read())
        with urllib.request.urlopen(
            urllib.request.Request(base + "archive/similar.json?document=6&_shape=array", headers=token)
        ) as response:
            assert len(json.loads(response.read())) == 10
        assert body and body[0]["path"].startswith(("conversations/", "debug/", "plan/", "brainstorm/"))
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_excerpt_highlights_render_as_marks_and_nothing_else_as_html(sample_datasette):
    response = await sample_datasette.client.get("/archive/search_workspace?query=kubernetes")
    assert "<mark>Kubernetes</mark>" in response.text or "<mark>kubernetes</mark>" in response.text
    from archivist.web.app import highlighted

    assert highlighted("<script>x</script> <mark>a</mark>") == "&lt;script&gt;x&lt;/script&gt; <mark>a</mark>"


class Served(str):
    """The base URL of a server that `serving` started, knowing the URL it printed (which carries its token)."""

    printed: str
    token: str

    def __new__(cls, base: str, printed: str) -> "Served":
        served = super().__new__(cls, base)
        served.printed = printed
        served.token = parse_qs(urlsplit(printed).query)["token"][0]
        return served

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def printed_url(process: subprocess.Popen) -> str:
    """The URL on `archivist serve`'s line "Serving WORKSPACE at URL", which it prints before it listens."""
    for line in process.stdout:
        if line.startswith("Serving "):
            return line.split()[-1]
    raise AssertionError(f"archivist serve exited with {process.wait()} before printing its URL")


@contextlib.contextmanager
def serving(workspace):
    """`archivist serve WORKSPACE --no-index` in a subprocess: its base URL (a `Served`) while it runs."""
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from archivist.cli import cli; cli()",
            "serve",
            str(workspace),
            "--no-index",
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,  # one line, read below; nothing else is written there
        stderr=subprocess.DEVNULL,
        text=True,
        env=WITHOUT_TOKEN,
    )
    try:
        printed = printed_url(process)
        wait_for_port(port)
        yield Served(f"http://127.0.0.1:{port}", printed)
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_fresh_server_answers_its_first_semantic_query_within_the_sql_time_limit(embedded_sample):
    # The model loads on that first query (seconds), outside Datasette's 1 s SQL time limit.
    with serving(embedded_sample) as base:
        url = f"{base}/archive/search_semantic.json?query=authentication+patterns&_shape=array"
        with urllib.request.urlopen(urllib.request.Request(url, headers=base.headers), timeout=120) as response:
            rows = json.loads(response.read())
        assert rows and rows[0]["score"] > 0.3


async def test_a_document_page_lists_its_most_similar_documents(embedded_datasette):
    response = await embedded_datasette.client.get("/archive/documents/6")  # JWT authentication debugging
    assert response.status_code == 200
    section = response.text.split("<h2>Similar documents</h2>", 1)[1]
    assert section.count('href="/archive/documents/') == 8
    assert "OAuth2 authorization code flow" in section
    assert 'href="/archive/similar?document=6&amp;limit=50"' in section


async def test_a_document_without_an_embedding_says_how_to_get_one(sample_datasette):
    for path in ("/archive/documents/6", "/document/6"):  # Datasette's row page, and the document page
        section = (await sample_datasette.client.get(path)).text.split("<h2>Similar documents</h2>", 1)[1]
        section = section.split("</section>", 1)[0]
        assert "None yet: this document has no embedding. Run <code>archivist embed WORKSPACE</code>." in section
        assert "More similar documents" not in section


# --- Datasette on a database that is not an Archivist archive ------------------------------------

NOT_AN_ARCHIVE_PAGES = ("/", "/search", "/search?query=authentication", "/document/1", "/document/1/source")


def _sqlite_file(path, *statements):
    import sqlite3

    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    return path


def _plain_datasette(*paths):
    """`datasette PATH…` as the datasette command builds it, with the plugin registered as its entry point does."""
    from datasette.app import Datasette

    from archivist.web.app import register_plugin

    register_plugin()
    return Datasette([str(path) for path in paths])


@pytest.fixture(params=["another database", "an empty file", "a non-archive named archive.db", "no database"])
async def non_archive(request, tmp_path):
    """(Datasette, the served database with a table, or None) for each kind of database that is no archive."""
    if request.param == "another database":
        path = _sqlite_file(tmp_path / "other.db", "CREATE TABLE notes (body TEXT)", "INSERT INTO notes VALUES ('hi')")
        served = ("other", "notes")
    elif request.param == "an empty file":
        path = tmp_path / "empty.db"
        path.touch()
        served = ("empty", None)
    elif request.param == "a non-archive named archive.db":
        path = _sqlite_file(
            tmp_path / "ws" / ".archivist" / "archive.db",
            "CREATE TABLE documents (id INTEGER PRIMARY KEY, title TEXT)",
            "INSERT INTO documents VALUES (1, 'not ours')",
        )
        served = ("archive", "documents")
    else:
        datasette = _plain_datasette()
        await datasette.invoke_startup()
        return datasette, None
    datasette = _plain_datasette(path)
    await datasette.invoke_startup()
    return datasette, served


async def test_the_internal_catalog_is_built_at_startup_under_the_plain_datasette_command(tmp_path):
    """So a first request never meets Datasette creating its _internal tables while
    datasette-enrichments reads every database's tables ("database table is locked")."""
    path = tmp_path / "empty.db"
    path.touch()
    datasette = _plain_datasette(path)
    assert not datasette.internal_db_created
    await datasette.invoke_startup()
    assert datasette.internal_db_created
    assert (await datasette.client.get("/.json")).status_code == 200


def _says_what_to_run(text):
    assert "archivist index WORKSPACE" in text
    assert "datasette WORKSPACE/.archivist/archive.db" in text


@pytest.mark.parametrize("path", NOT_AN_ARCHIVE_PAGES)
async def test_archivist_pages_on_a_non_archive_say_so_and_what_to_run(non_archive, path, caplog):
    datasette, served = non_archive
    response = await datasette.client.get(path)
    assert response.status_code == 404
    assert "Traceback" not in response.text and "sqlite" not in response.text.lower()
    _says_what_to_run(response.text)
    if served is None or served[0] != "archive":
        assert "No Archivist archive is served here" in response.text
    else:
        assert "The database archive (archive.db) is not an Archivist archive" in response.text
    if not path.endswith("/source"):
        assert "<title>Not an Archivist archive" in response.text
        if served:  # Datasette's own pages, one click away
            assert f'href="/{served[0]}"' in response.text
    assert not [record for record in caplog.records if record.levelname == "ERROR"]


async def test_api_search_on_a_non_archive_is_a_404_with_the_error_body(non_archive, caplog):
    datasette, _ = non_archive
    response = await datasette.client.get("/api/search?query=authentication")
    assert response.status_code == 404
    body = response.json()
    assert body["success"] is False and body["code"] == "DIRECTORY_NOT_FOUND"
    assert set(body) == {"success", "error", "code"}
    _says_what_to_run(body["error"])
    assert not [record for record in caplog.records if record.levelname == "ERROR"]


async def test_datasette_works_as_usual_on_a_non_archive(non_archive):
    datasette, served = non_archive
    databases = (await datasette.client.get("/.json")).json()
    assert response_ok(await datasette.client.get("/-/versions.json"))
    if served is None:
        assert (await datasette.client.get("/_memory.json?sql=select+1+as+one&_shape=array")).json() == [{"one": 1}]
        return
    name, table = served
    assert name in databases
    assert response_ok(await datasette.client.get(f"/{name}"))
    sql = await datasette.client.get(f"/{name}.json?sql=select+41+%2B+1+as+answer&_shape=array")
    assert sql.json() == [{"answer": 42}]
    if table:  # a table named like the archive's keeps Datasette's defaults (no archive sort order, facets)
        assert response_ok(await datasette.client.get(f"/{name}/{table}"))
        rows = (await datasette.client.get(f"/{name}/{table}.json?_shape=array")).json()
        assert len(rows) == 1
        row = await datasette.client.get(f"/{name}/{table}/1")
        assert response_ok(row) and "Similar documents" not in row.text
    # no canned query is offered on a database that is not an archive: Datasette answers as usual
    assert (await datasette.client.get(f"/{name}.json")).json()["queries"] == []
    missing = await datasette.client.get(f"/{name}/search.json?query=authentication")
    assert missing.status_code == 404
    assert "Archivist" not in (await datasette.client.get(f"/{name}.json")).text


def response_ok(response):
    assert response.status_code == 200, response.text[:500]
    return True


async def test_a_served_file_indexed_later_becomes_the_archive(tmp_path):
    # `datasette WORKSPACE/.archivist/archive.db` on an empty file, then `archivist index WORKSPACE`
    from archivist.archive.indexer import index_workspace
    from archivist.workspace import archive_path

    workspace = tmp_path / "ws"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes" / "proxy.md").write_text("# Proxy timeout\n\nThe proxy times out after 30 s.\n")
    path = archive_path(workspace)
    path.parent.mkdir()
    path.touch()
    datasette = _plain_datasette(path)
    await datasette.invoke_startup()
    assert (await datasette.client.get("/api/search?query=proxy")).status_code == 404
    index_workspace(workspace)
    response = await datasette.client.get("/api/search?query=proxy&mode=keyword")
    assert response.status_code == 200
    assert [result["title"] for result in response.json()["results"]] == ["Proxy timeout"]
    assert (await datasette.client.get("/search?query=proxy&mode=keyword")).status_code == 200
    assert (await datasette.client.get("/archive/search_workspace.json?query=proxy")).status_code == 200


async def test_a_doubled_slash_with_a_non_ascii_name_is_never_a_500(sample_datasette):
    import httpx

    transport = httpx.ASGITransport(app=sample_datasette.app())
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        for path in ("/archive//%C3%A9", "/document/a%2F%2F%C3%A9", "/search//%C3%9F"):
            response = await client.get(path)
            assert response.status_code < 500, (path, response.status_code, response.text[:200])


# --- what the plugin alone checks and sends (as under plain `datasette archive.db`) ------------------

PAGES = (
    "/",
    "/search?query=authentication",
    "/document/1",
    "/archive/documents",
    "/archive/documents/1",
    "/archive",
    "/archive/search_workspace?query=proxy",
    "/-/plugins",
    "/no/such/page",
)
_SCRIPT = re.compile(r"<script(?P<attributes>[^>]*)>(?P<body>.*?)</script>", re.S)


def _directives(policy: str) -> dict[str, str]:
    return dict(part.strip().split(" ", 1) for part in policy.split(";"))


async def test_every_page_sends_a_policy_that_names_each_of_its_inline_scripts(sample_datasette):
    for path in PAGES:
        response = await sample_datasette.client.get(path)
        assert response.headers["content-type"].startswith("text/html"), path
        policy = _directives(response.headers["content-security-policy"])
        assert policy["default-src"] == "'self'" and policy["frame-ancestors"] == "'none'", path
        assert policy["base-uri"] == "'self'" and policy["form-action"] == "'self'" and policy["object-src"] == "'none'"
        assert "unsafe" not in policy["script-src"] and "*" not in policy["script-src"], path
        scripts = list(_SCRIPT.finditer(response.text))
        assert scripts, path  # Datasette's pages have inline scripts: each must be named
        for script in scripts:
            source = re.search(r'src="([^"]+)"', script["attributes"])
            if source:
                assert source[1].startswith("/"), (path, source[1])  # the app's own files
            elif script["body"]:  # an empty one runs nothing, and a browser checks no policy for it
                digest = base64.b64encode(hashlib.sha256(script["body"].encode()).digest()).decode()
                assert f"'sha256-{digest}'" in policy["script-src"].split(), (path, script["body"][:80])


async def test_the_plugin_alone_checks_the_origin_and_asks_for_no_token(sample_workspace):
    import httpx

    from archivist.workspace import archive_path

    datasette = _plain_datasette(archive_path(sample_workspace))
    await datasette.invoke_startup()
    transport = httpx.ASGITransport(app=datasette.app())
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost:8001") as client:
        for path in ("/", "/api/search?query=proxy&mode=keyword", "/archive/documents.json"):
            assert (await client.get(path)).status_code == 200, path  # Datasette's own model: no token
            assert (await client.get(path, headers={"origin": "http://localhost:8001"})).status_code == 200, path
            for origin in ("http://localhost:8002", "https://localhost:8001", "null", "http://127.0.0.1:8001"):
                refused = await client.get(path, headers={"origin": origin})
                assert refused.status_code == 403 and refused.json()["code"] == "FORBIDDEN", (path, origin)
                assert "--allow-origin" in refused.json()["error"]


async def test_the_plugin_admits_the_origins_its_settings_name(sample_workspace):
    import httpx
    from conftest import started_datasette

    from archivist.workspace import archive_path

    datasette = await started_datasette(archive_path(sample_workspace), {"allowed_origins": ["https://tools.example"]})
    transport = httpx.ASGITransport(app=datasette.app())
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost:8001") as client:
        for origin, status in (("https://tools.example", 200), ("https://tools.example:444", 403), ("null", 403)):
            assert (await client.get("/api/search?query=proxy", headers={"origin": origin})).status_code == status
