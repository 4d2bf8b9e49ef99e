"""Each canned query's parameters are declared once, and every place that names them agrees.

The declaration (archivist.queries.declarations) is held against the SQL files, the MCP
tools' input schemas, the search page's form and links, and Datasette's canned queries,
so that a parameter added in one place and forgotten in another fails here.
"""

from __future__ import annotations

import html
import json
import re
from importlib.resources import files
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from conftest import started_datasette
from mcp import Client

from archivist.errors import ArchivistError
from archivist.mcp import calls as mcp_calls
from archivist.mcp import tools as mcp_tools
from archivist.queries import catalog, runner, validation
from archivist.queries.declarations import QUERIES
from archivist.workspace import archive_path

FILES = {
    "conversations/2025-11-10/001-proxy-timeout/conversation.md": "# Proxy timeout\n\nThe ingress proxy timed out.\n",
    "memories/m.jsonl": json.dumps(
        {"content": "Raise the proxy timeout", "tags": ["ops", "proxy"], "memory_type": "decision"}
    )
    + "\n",
    "records/r.jsonl": json.dumps(
        {"entity_type": "bug", "entity_id": 7, "title": "Proxy drops uploads", "body": "Timeout.", "product_id": 598}
    )
    + "\n",
    "reports/proxy-check/2025-11-12.md": "# Proxy check\n\nTimeouts seen on the proxy.\n",
}

# Every parameter of `search`, with a value it accepts: each filter the page knows is set.
SEARCH_VALUES = {
    "query": "proxy",
    "mode": "keyword",
    "entities": "conversation,memory,bug",
    "types": "decision",
    "tags": "proxy",
    "match_all": "true",
    "start_date": "2025-01",
    "end_date": "2026-12",
    "product_ids": "598",
    "match_mode": "simple",
    "min_similarity": "0.3",
    "page": "1",
    "page_size": "5",
}


def declared(name: str) -> set[str]:
    """Every name a query accepts: its parameters and the seed systems' aliases for them."""
    query = QUERIES[name]
    return {param.name for param in query.params} | set(query.aliases)


# --- the declarations themselves ---------------------------------------------------------


def test_every_query_has_one_sql_file_and_one_declaration():
    assert catalog.query_files() == sorted(QUERIES), "each sql/<name>.sql is declared, each declaration has its file"


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_declarations_are_whole(name):
    query = QUERIES[name]
    assert query.title and query.description.endswith(".")
    names = [param.name for param in query.params]
    assert len(names) == len(set(names)), f"{name} declares a parameter twice"
    for param in query.params:
        assert param.description and "\n" not in param.description, (name, param.name)
        assert callable(param.rule)
    for alias, target in query.aliases.items():
        assert target in names and alias not in names, (name, alias)


def test_validation_uses_the_declared_rules():
    assert set(validation.QUERIES) == set(QUERIES)
    for name, query in QUERIES.items():
        spec = validation.QUERIES[name]
        assert list(spec.params) == [param.name for param in query.params], name
        assert [spec.params[param.name] for param in query.params] == [param.rule for param in query.params]
        assert (spec.checks, spec.embeds, spec.aliases) == (query.checks, query.embeds, query.aliases)


# --- (a) the SQL reads exactly its declared parameters ---------------------------------------


def engine_parameters(conn: Any, sql: str) -> set[str]:
    """The named parameters SQLite itself finds in ``sql``: never one inside a string or a comment.

    Every ``:word`` of the text is a candidate; it is a parameter when compiling the
    statement without a value for it fails.
    """
    candidates = set(re.findall(r":(\w+)", sql))
    conn.execute("explain " + sql, dict.fromkeys(candidates, ""))  # any other kind of parameter fails here
    used = set()
    for name in candidates:
        try:
            conn.execute("explain " + sql, dict.fromkeys(candidates - {name}, ""))
        except Exception as error:
            assert "binding" in str(error), error
            used.add(name)
    return used


@pytest.fixture(scope="module")
def conn(workspace):
    connection = runner.connect(archive_path(workspace))
    yield connection
    connection.close()


def test_parameters_in_strings_and_comments_are_not_parameters(conn):
    sql = "select ':quoted' as a, 1 as \"x:y\" /* :block */ where 1 = :real -- and :commented\n"
    assert engine_parameters(conn, sql) == {"real"}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_the_sql_reads_exactly_the_declared_parameters(conn, name):
    sql = catalog.sql_for(name)  # the file with its fragments included, as it runs
    used = engine_parameters(conn, sql)
    query = QUERIES[name]
    in_sql = set(query.sql_params)
    ignored = {param.name for param in query.params if not param.in_sql}
    assert not ignored & used, f"{name}: parameters declared with in_sql=False are read: {sorted(ignored & used)}"
    assert not used - in_sql, f"{name}.sql reads parameters its declaration lacks: {sorted(used - in_sql)}"
    assert not in_sql - used, f"{name} declares parameters its SQL never reads: {sorted(in_sql - used)}"


def test_fragments_are_included_whole():
    fragments = {
        entry.name
        for entry in (files("archivist.queries") / "sql").iterdir()
        if entry.name.startswith("_") and entry.name.endswith(".sql")
    }
    assert fragments, "the shared fragments live in sql/_<name>.sql"
    included = set()
    for name in QUERIES:
        text = (files("archivist.queries") / "sql" / f"{name}.sql").read_text(encoding="utf-8")
        included |= set(re.findall(r"-- include: (_\w+\.sql)", text))
        assert "-- include:" not in catalog.sql_for(name), f"{name}: an include line was left in the SQL"
    assert included == fragments, "every fragment is used, and every include names a fragment"


def test_the_workspace_root_is_read_only_through_its_view():
    for name in QUERIES:
        assert "archive_meta" not in catalog.sql_for(name), f"{name} reads archive_meta: use the workspace_root view"


def test_an_archive_from_before_the_view_gets_it(make_workspace):
    from archivist.archive import schema
    from archivist.archive.indexer import index_workspace

    workspace = make_workspace({"notes/a.md": "# A\n\nSome text.\n"})
    index_workspace(workspace)
    db = schema.open_archive(archive_path(workspace))
    db.executescript(
        "DROP VIEW workspace_root; DELETE FROM _sqlite_migrations WHERE name = 'm011_workspace_root'; PRAGMA user_version = 0;"
    )
    db.close()
    index_workspace(workspace)
    with runner.Archive.for_workspace(workspace) as archive:
        found = archive.run("find_document", {"document": str(workspace.resolve() / "notes" / "a.md")})
    assert [row["path"] for row in found] == ["notes/a.md"]


# --- (b) the MCP tools take the declared parameters ----------------------------------------

# Which canned query each MCP tool runs (None: the embedding API, no canned query).
TOOL_QUERIES = {
    "search_workspace": "search_workspace",
    "search_reports": "search_reports",
    "list_command_reports": "list_command_reports",
    "get_report": "get_report",
    "get_document": "get_document",
    "search_commands": "search_commands",
    "search": "search",
    "search_semantic": "search_semantic",
    "get_similar": "similar",
    "list_conversations": "list_conversations",
    "get_conversation": "get_conversation",
    "usage": "usage",
    "file_history": "file_history",
    "activity": "project_activity",
    "get_embedding_status": "embedding_status",
    "embed_document": None,
    "embed_workspace": None,
}
NOT_A_QUERY_PARAMETER = {"workspace_path"}  # which archive: every tool takes it


def sample_value(schema: dict[str, Any]) -> Any:
    """A value of the type an input schema asks for."""
    for option in schema.get("anyOf", []):
        if option.get("type") != "null":
            return sample_value(option)
    kind = schema.get("type", "string")
    if kind == "array":
        return [sample_value(schema.get("items", {"type": "string"}))]
    return {"string": "x1", "integer": 1, "number": 0.5, "boolean": True, "object": {}}[kind]


class Stop(Exception):
    pass


async def test_each_mcp_tool_passes_its_inputs_to_the_declared_parameters_of_its_query(workspace, monkeypatch):
    ran: list[tuple[str, dict[str, Any]]] = []

    def record(self, name, params=None, cancel=None):
        ran.append((name, dict(params or {})))
        raise ArchivistError("INVALID_PARAMETER", "recorded")  # the call's answer does not matter here

    def no_embedding(*args, **kwargs):
        raise Stop()

    monkeypatch.setattr(runner.Archive, "run", record)
    monkeypatch.setattr(mcp_calls.EmbedJobs, "start", no_embedding)
    async with Client(mcp_tools.create_server(archive_path(workspace), workspace)) as client:
        tools = {tool.name: tool.input_schema["properties"] for tool in (await client.list_tools()).tools}
        assert set(tools) == set(TOOL_QUERIES), "a new tool: say which canned query it runs in TOOL_QUERIES"
        for tool, properties in tools.items():
            arguments = {key: sample_value(schema) for key, schema in properties.items() if key != "workspace_path"}
            ran.clear()
            await client.call_tool(tool, arguments)
            expected = TOOL_QUERIES[tool]
            assert [name for name, _ in ran] == ([expected] if expected else []), (tool, ran)
            if expected is None:
                continue
            inputs = set(properties) - NOT_A_QUERY_PARAMETER
            passed = set(ran[0][1])
            accepted = declared(expected)
            assert not inputs - accepted, f"tool {tool} takes {sorted(inputs - accepted)}, not declared by {expected}"
            assert not inputs - passed, f"tool {tool} never passes {sorted(inputs - passed)} to {expected}"
            assert not passed - accepted, f"tool {tool} passes {sorted(passed - accepted)}, not declared by {expected}"
            query = QUERIES[expected]
            reachable = inputs | {query.aliases[name] for name in inputs if name in query.aliases}
            missing = {param.name for param in query.params} - reachable
            assert not missing, f"{expected} declares {sorted(missing)}, which tool {tool} does not take"


# --- (c) the search page's form and links use declared parameters ---------------------------


async def test_the_search_page_form_and_links_use_declared_parameters(workspace):
    datasette = await started_datasette(archive_path(workspace))
    accepted = declared("search")
    # with every filter set, the form carries each one (hidden) into the next search
    query_string = "&".join(f"{key}={value}" for key, value in SEARCH_VALUES.items())
    for url in ("/search?" + query_string, "/search", "/search?query=proxy"):
        response = await datasette.client.get(url)
        page = response.text
        form = re.search(r'<form class="archivist-search-form".*?</form>', page, re.S)
        assert form, f"{url}: no search form"
        fields = set(re.findall(r'<(?:input|select|textarea)\b[^>]*\bname="([^"]+)"', form[0]))
        assert not fields - accepted, f"the search form has fields search does not declare: {sorted(fields - accepted)}"
        assert {"query", "mode"} <= fields
        if url.endswith(query_string):
            assert len(fields) > 4, "the hidden filters were not shown: set them all in SEARCH_VALUES"
        assert response.status_code == 200, re.findall(r'role="alert".*?<p>(.*?)</p>', page, re.S)
        links = [html.unescape(href) for href in re.findall(r'href="([^"]+)"', page)]
        searches = [link for link in links if urlsplit(link).path in ("/search", "/api/search", "/archive/search")]
        assert searches, f"{url}: no links to other searches"
        for link in searches:
            keys = {key for key, _ in parse_qsl(urlsplit(link).query)}
            assert not keys - accepted, f"{link}: parameters search does not declare: {sorted(keys - accepted)}"


# --- (d) Datasette serves each query with the declared parameters ----------------------------


async def test_datasette_serves_each_query_with_its_declaration(workspace):
    datasette = await started_datasette(archive_path(workspace))
    served = await datasette.get_canned_queries("archive", None)
    assert set(served) == set(QUERIES)
    for name, query in QUERIES.items():
        assert served[name]["params"] == query.sql_params, f"Datasette serves {name} with {served[name]['params']}"
        assert served[name]["title"] == query.title
        assert served[name]["sql"] == catalog.sql_for(name)
        for param in query.params:
            if param.in_sql:
                assert f"{param.name}: {param.description}" in served[name]["description"], (name, param.name)
        if query.sql_params:
            page = (await datasette.client.get(f"/archive/{name}")).text
            form = re.search(r'<form class="sql".*?</form>', page, re.S)
            assert form, name
            fields = re.findall(r'<input type="text" id="qp\d+" name="([^"]+)"', form[0])
            assert fields == query.sql_params, f"{name}'s form shows {fields}"


def test_the_description_keeps_its_summary_first():
    for name, query in QUERIES.items():
        described = catalog.canned_queries()[name]["description"]
        assert described.split("\n\n")[0] == query.description, name
