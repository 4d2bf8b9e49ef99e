"""What tools/list weighs: every agent that connects reads it before its first question.

A tool is listed by the first sentence of its description and a parameter by a few words
(``Param.brief``); the rest is in docs/mcp.md. The listing is measured as the server sends it
(the JSON of the result, compact, as the SDK writes it) and held under a budget, and nothing
is dropped to meet it: every tool, every parameter and every seed system's name for one is
still listed, with its type, choices, bounds and a default that is not empty. What is left out
(each answer's schema, a list's string form, null, the empty defaults) is in docs/mcp.md.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path

from mcp import Client
from mcp.types import ListToolsResult

from archivist.mcp.tools import TOOLS, create_server, inputs
from archivist.queries import rules
from archivist.queries.declarations import QUERIES
from archivist.workspace import archive_path

FILES = {"notes/a.md": "# Alpha\n\nSome proxy text.\n"}  # (the workspace fixture's)
# bytes of the tools/list result (44,892 before the listing was made light; 24,100 before it left out
# pydantic's titles, the null that leaving an argument out says, the hints a read-only tool implies, and
# the schema of an answer that is rows alone; 19,169 before it left out every output schema, the agents'
# names said again in descriptions, a list's string form, empty defaults, and words the schema says).
# The kinds' names, each a choice of the agents argument of the four tools that take one, are not
# counted: every kind of agent log added grows the listing by its name four times, by design
# (1,264 bytes of 14,462 with 31 kinds).
BUDGET = 13_300


async def listed(workspace: Path) -> ListToolsResult:
    async with Client(create_server(archive_path(workspace), workspace)) as client:
        return await client.list_tools()


def weight(result: ListToolsResult) -> int:
    """The bytes of the result as the server writes it."""
    return len(result.model_dump_json(by_alias=True, exclude_none=True).encode())


def kinds_weight(result: ListToolsResult) -> int:
    """The bytes of the kinds' names as the listing gives them: each a quoted choice, and its comma."""
    text = result.model_dump_json(by_alias=True, exclude_none=True)
    return sum(text.count(f'"{kind}"') * (len(kind.encode()) + 3) for kind in rules.LOG_KINDS)


async def test_tools_list_weighs_less_than_its_budget(workspace: Path) -> None:
    result = await listed(workspace)
    assert 0 < kinds_weight(result) < weight(result) / 4
    assert weight(result) - kinds_weight(result) <= BUDGET
    described = [tool.description or "" for tool in result.tools]
    assert all(description and "\n" not in description and len(description) <= 160 for description in described)


async def test_every_tool_parameter_and_seed_name_is_still_listed(workspace: Path) -> None:
    tools = {tool.name: tool.input_schema["properties"] for tool in (await listed(workspace)).tools}
    assert list(tools) == [tool.name for tool in TOOLS]
    for tool in TOOLS:
        assert list(tools[tool.name]) == [param.name for param, _ in inputs(tool)], tool.name
        for name, schema in tools[tool.name].items():
            said = schema["description"]
            assert said and len(said) <= 160, (tool.name, name)
            if name == "agents":  # (named by its choices, not its description)
                assert all(f'"{kind}"' in json.dumps(schema) for kind in (*rules.LOG_KINDS, rules.WORKSPACE_AGENT))
                assert not any(kind in said for kind in rules.LOG_KINDS), tool.name
        if tool.query:
            assert set(QUERIES[tool.query].aliases) <= set(tools[tool.name]), tool.name
    assert {"kinds", "memory_type", "k", "source_path", "limit"} <= set(tools["search"])


async def test_a_light_listing_is_lighter_than_the_full_descriptions(workspace: Path) -> None:
    """What the listing leaves out is there to be read: each full description is longer than its listing."""
    result = await listed(workspace)
    full = sum(len(tool.description) for tool in TOOLS)
    shown = sum(len(tool.description or "") for tool in result.tools)
    assert shown * 2 < full
    payload = json.loads(result.model_dump_json(by_alias=True, exclude_none=True))
    assert not any(
        "title" in schema and schema["title"]
        for tool in payload["tools"]
        for schema in tool["inputSchema"]["properties"].values()
    )


async def test_the_listing_says_nothing_that_goes_without_saying(workspace: Path) -> None:
    """No schema has a title (pydantic's: the tool's name, or an argument's again), no argument lists null
    or an empty default (which says no more than leaving the argument out does),
    a read-only tool's hints are only that and that it is closed (destructive and idempotent mean something
    only for a tool that writes: MCP's spec), and no answer has a schema (docs/mcp.md names its fields)."""
    payload = json.loads((await listed(workspace)).model_dump_json(by_alias=True, exclude_none=True))
    tools = {tool["name"]: tool for tool in payload["tools"]}
    for tool in TOOLS:
        listing = tools[tool.name]
        assert "title" not in listing["inputSchema"], tool.name
        for name, shown in listing["inputSchema"]["properties"].items():
            assert "title" not in shown and "null" not in json.dumps(shown), (tool.name, name)
            assert shown.get("default", "x") != "", (tool.name, name)
        hints = listing["annotations"]
        if tool.writes:
            assert hints == {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True,
                             "openWorldHint": False}  # fmt: skip
        else:
            assert hints == {"readOnlyHint": True, "openWorldHint": False}, tool.name
        assert "outputSchema" not in listing, tool.name


async def test_a_null_argument_is_taken_where_leaving_it_out_passes_none(workspace: Path) -> None:
    """A null the listing leaves unsaid is still taken: the answer is the one without the argument; a null
    where the argument has a value of its own is refused by the contract, naming it."""
    search = next(tool for tool in TOOLS if tool.name == "search")
    nulls = {param.name: None for param, required in inputs(search) if param.omitted is None and not required}
    assert {"limit", "k", "agents", "min_similarity", "workspace_path"} <= set(nulls)
    asked = {"query": "proxy", "mode": "keyword"}
    async with Client(create_server(archive_path(workspace), workspace)) as client:
        plain = await client.call_tool("search", asked)
        given = await client.call_tool("search", {**asked, **nulls})
        rows = await client.call_tool("search_workspace", {"query": "proxy", "limit": None})
        refused = await client.call_tool("search", {**asked, "match_all": None})
    assert not plain.is_error and plain.structured_content and plain.structured_content["total"] == 1
    assert given.structured_content == plain.structured_content
    assert not rows.is_error and rows.structured_content and "num_results" in rows.structured_content
    assert refused.is_error and refused.structured_content
    assert refused.structured_content["code"] == "INVALID_PARAMETER"
    assert "match_all" in refused.structured_content["error"] + refused.structured_content.get("details", "")


async def test_an_answer_is_structured_though_no_tool_lists_its_schema(workspace: Path) -> None:
    """Without an output schema each answer still comes as structured content and as its JSON text, with the
    fields docs/mcp.md names for it (its shape's, ``Tool.output``)."""
    calls = {"search": {"query": "proxy", "mode": "keyword"}, "get_document": {"document": "notes/a.md"},
             "search_workspace": {"query": "proxy"}, "get_embedding_status": {}}  # fmt: skip
    async with Client(create_server(archive_path(workspace), workspace)) as client:
        assert not any(tool.output_schema for tool in (await client.list_tools()).tools)
        answers = {name: await client.call_tool(name, arguments) for name, arguments in calls.items()}
    shapes = {tool.name: tool.output for tool in TOOLS}
    for name, result in answers.items():
        assert not result.is_error and result.structured_content, (name, result.content)
        assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
        assert result.structured_content.get("success", True) is True, name
        documented = set(typing.get_type_hints(shapes[name])) - {"success", "error", "code", "building"}
        assert documented & set(result.structured_content), name
    assert answers["get_document"].structured_content["body"].startswith("# Alpha")


async def test_a_list_is_listed_as_an_array_and_taken_as_one_string_too(workspace: Path) -> None:
    """A list argument is listed in its array form alone; one comma-separated string (docs/mcp.md) is taken
    all the same, with the answer the array gets, and a wrong item in it is refused naming the argument."""
    payload = json.loads((await listed(workspace)).model_dump_json(by_alias=True, exclude_none=True))
    schemas = {tool["name"]: tool["inputSchema"]["properties"] for tool in payload["tools"]}
    for tool in TOOLS:
        for param, _ in inputs(tool):
            if param.many:
                assert set(schemas[tool.name][param.name]) <= {"type", "items", "description"}, tool.name
                assert schemas[tool.name][param.name]["type"] == "array", (tool.name, param.name)
    asked = {"query": "proxy", "mode": "keyword"}
    async with Client(create_server(archive_path(workspace), workspace)) as client:
        arrays = await client.call_tool("search", {**asked, "entities": ["note", "conversation"]})
        string = await client.call_tool("search", {**asked, "entities": "note,conversation"})
        none = await client.call_tool("search", {**asked, "entities": "conversation"})
        wrong = await client.call_tool("usage", {"agents": "claude-code,no-such-agent"})
        agents = await client.call_tool("usage", {"agents": "claude-code,workspace"})
        listed_agents = await client.call_tool("usage", {"agents": ["claude-code", "workspace"]})
    assert not arrays.is_error and arrays.structured_content and arrays.structured_content["total"] == 1
    assert string.structured_content == arrays.structured_content
    assert none.structured_content and none.structured_content["total"] == 0
    assert wrong.is_error and wrong.structured_content and wrong.structured_content["code"] == "INVALID_PARAMETER"
    assert "no-such-agent" in json.dumps(wrong.structured_content)
    assert not agents.is_error and agents.structured_content == listed_agents.structured_content


async def test_an_argument_left_empty_is_the_argument_left_out(workspace: Path) -> None:
    """Where an argument's default is empty, which the listing leaves unsaid, leaving it out and giving it
    empty answer alike; a default that says something (mode, page_size) is still listed."""
    search = next(tool for tool in TOOLS if tool.name == "search")
    empty = {param.name for param, required in inputs(search) if param.default == "" and not required}
    assert {"query", "start_date", "end_date", "document", "source_path"} <= empty
    payload = json.loads((await listed(workspace)).model_dump_json(by_alias=True, exclude_none=True))
    shown = next(tool for tool in payload["tools"] if tool["name"] == "search")["inputSchema"]["properties"]
    assert not any("default" in shown[name] for name in empty)
    assert shown["mode"]["default"] == "hybrid" and shown["page_size"]["default"] == 10
    asked = {"query": "proxy", "mode": "keyword"}
    async with Client(create_server(archive_path(workspace), workspace)) as client:
        plain = await client.call_tool("search", asked)
        given = await client.call_tool("search", {**asked, **{name: "" for name in empty - {"query"}}})
        recent = await client.call_tool("search", {"mode": "recent"})
        recent_empty = await client.call_tool("search", {"mode": "recent", "query": ""})
    assert not plain.is_error and plain.structured_content and plain.structured_content["total"] == 1
    assert given.structured_content == plain.structured_content
    assert not recent.is_error and recent.structured_content and recent.structured_content["total"] == 1
    assert recent_empty.structured_content == recent.structured_content
