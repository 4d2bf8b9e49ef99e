"""Every parameter has one home: its bounds, choices and default are its declaration's on every surface.

The declarations (``archivist.queries.declarations``) say of each parameter its bounds and
choices (its rule's, ``rules.Limits``) and its default. Here every MCP tool's input schema
and every command of the command line are compared with them both ways: what a surface
shows is declared, and what is declared is shown (or said, here, not to be). And an agent
is checked the same way wherever a tool or a command takes one: an unknown agent is
INVALID_PARAMETER naming the known ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from archivist.cli import cli
from archivist.cli.arguments import DeclaredOption
from archivist.queries import rules
from archivist.queries.declarations import CLI_PARAMS, QUERIES
from archivist.queries.params import Param
from archivist.workspace import archive_path
from tests.conftest import started_datasette

FILES = {"notes/a.md": "# Alpha\n\nSome proxy text.\n"}

UNKNOWN_AGENT = "no-such-agent"

# The queries each command runs: every parameter they declare is an option or argument of it,
# or is named in NOT_ON_CLI.
COMMAND_QUERIES = {
    "search": ("search", "search_workspace", "search_reports"),
    "usage": ("usage",),
    "history": ("file_history",),
}
# What a command does not take, and why.
NOT_ON_CLI = {
    ("history", "limit"): "history's own limit (CLI_PARAMS) pages through file_history's",
    ("history", "offset"): "history pages through every call it prints",
}
# The options that no query declares: how a command runs, not what it asks.
CLI_ONLY = {
    "--db",
    "--json",
    "--help",
    "--reports-dir",
    "--source",
    "--watch",
    "--show-problems",
    "--embed",
    "--polling",
    "--discover",
    "--open",
    "--remove",
    "--http",
    "--port",
    "--conformance-fixtures",
    "--allow-workspace",
    "--allow-host",
    "--allow-origin",
    "--no-token",
    "--config-dir",
    "--host",
    "--user",  # (sync: the user ssh logs in as)
    "--to",  # (replicate, restore: the replica, the folder restored into)
    "--endpoint",  # (replicate, restore: an S3-compatible server)
    "--force",  # (restore: over an archive there)
    "--timeout",  # (restore: how long Litestream may take)
    "--replicate-to",  # (index, serve: the replica streamed to)
    "--replicate-endpoint",
    "--no-index",
    "--root",
    "--conversations",
    "--reports",
    "--date-range",
}


def commands() -> dict[str, click.Command]:
    assert isinstance(cli, click.Group)
    return dict(cli.commands)


def options(command: click.Command) -> list[click.Parameter]:
    """Its options and arguments, ``archivist search``'s declared ones made as at its first use."""
    return command.get_params(click.Context(command))


def declared_of(name: str) -> list[Param]:
    """Every parameter that a command's queries declare, and the command's own."""
    return [param for query in COMMAND_QUERIES.get(name, ()) for param in QUERIES[query].params] + list(
        CLI_PARAMS.get(name, ())
    )


# --- MCP ---------------------------------------------------------------------------------------


def schema_enum(shown: dict[str, Any]) -> list[str] | None:
    """The choices an input schema gives a parameter: its own enum, or its array's items'."""
    if "enum" in shown:
        return list(shown["enum"])
    arrays = [option for option in [shown, *shown.get("anyOf", [])] if option.get("type") == "array"]
    return list(arrays[0]["items"]["enum"]) if arrays and "enum" in arrays[0]["items"] else None


def declared_enum(param: Param) -> list[str] | None:
    if not param.choices:
        return None
    return [*param.choices, *([""] if param.default == "" and not param.many else [])]


async def test_every_tool_schema_shows_each_parameters_bounds_choices_and_default(workspace: Path) -> None:
    from mcp import Client

    from archivist.mcp.tools import TOOLS, create_server, inputs

    async with Client(create_server(archive_path(workspace), workspace)) as client:
        listed = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
    assert set(listed) == {tool.name for tool in TOOLS}
    bounded = 0
    for tool in TOOLS:
        declared = inputs(tool)
        schema = listed[tool.name]
        assert set(schema["properties"]) == {param.name for param, _ in declared}, tool.name
        for param, required in declared:
            shown, where = schema["properties"][param.name], (tool.name, param.name)
            assert shown.get("minimum") == param.minimum and shown.get("maximum") == param.maximum, where
            assert schema_enum(shown) == declared_enum(param), where
            unsaid = required or param.default == ""  # (an empty default says nothing, and is left out)
            assert "default" not in shown if unsaid else shown.get("default") == param.default, where
            bounded += param.minimum is not None or bool(param.choices)
    assert bounded > 20  # (limits, offsets, modes, sorts, groupings, agents, roles, include)


SAID_DEFAULTS = [
    pytest.param(name, param)
    for name, query in QUERIES.items()
    for param in query.params
    if param.type == "integer" and "(default " in param.description
]


@pytest.mark.parametrize(("name", "param"), SAID_DEFAULTS, ids=lambda value: getattr(value, "name", value))
def test_a_default_that_a_description_says_is_the_declared_one(name: str, param: Param) -> None:
    said = param.description.split("(default ")[1].split(")")[0]
    assert said == str(param.default)


# --- the command line --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_option_of_a_command_is_a_declared_parameter_with_its_bounds_choices_and_default(name: str) -> None:
    declared = declared_of(name)
    for option in options(commands()[name]):
        if not isinstance(option, DeclaredOption):
            assert isinstance(option, click.Argument) or set(option.opts) & CLI_ONLY, (name, option.opts)
            continue
        assert all(param in declared for param in option.declared), (name, option.opts)
        param = option.declared[0]
        assert option.multiple == param.many and option.help and param.described("cli") in option.help
        if isinstance(option.type, click.IntRange):
            assert (option.type.min, option.type.max) == (param.minimum, param.maximum), (name, option.opts)
            assert option.default == param.default, (name, option.opts)
        elif isinstance(option.type, click.Choice):
            assert tuple(option.type.choices) == param.choices and option.default == param.default
        elif name == "search":  # (its values are checked by their rules, as /api/search checks them)
            if param.choices and not param.many:
                assert option.metavar == "[" + "|".join(param.choices) + "]", option.opts
            if param.minimum is not None:
                assert option.help.endswith(f"[{param.minimum:g}<=x<={param.maximum:g}]"), option.opts
        else:
            assert param.minimum is None and (param.many or not param.choices), (name, option.opts)


@pytest.mark.parametrize("name", sorted(COMMAND_QUERIES))
def test_every_declared_parameter_of_a_commands_queries_is_one_of_its_options(name: str) -> None:
    taken = {id(param) for option in options(commands()[name]) for param in getattr(option, "declared", ())}
    arguments = {option.name for option in options(commands()[name]) if isinstance(option, click.Argument)}
    for param in declared_of(name):
        if id(param) in taken or param.name in arguments or (name, param.name) in NOT_ON_CLI:
            continue
        assert name == "search" and not param.option, (name, param.name)  # (search shows only the flagged)


def test_the_command_line_help_shows_the_declared_bounds_and_choices() -> None:
    usage = CliRunner().invoke(cli, ["usage", "--help"], terminal_width=200).output
    limit = QUERIES["usage"].param("limit")
    assert f"1<=x<={limit.maximum:g}" in usage and f"[default: {limit.default};" in usage
    assert "|".join(QUERIES["usage"].param("group_by").choices) in usage
    history = CliRunner().invoke(cli, ["history", "--help"], terminal_width=200).output
    assert "1<=x<=10000" in history and "100 at a time" in history


# --- an agent, checked the same way everywhere -------------------------------------------------

AGENT_QUERIES = sorted(name for name, query in QUERIES.items() if "agents" in {p.name for p in query.params})


@pytest.mark.parametrize("name", AGENT_QUERIES)
def test_every_query_that_takes_agents_checks_them_with_the_one_rule(name: str) -> None:
    assert QUERIES[name].param("agents").rule is rules.agent_list
    assert QUERIES[name].param("agents").choices == rules.AGENTS


def named_the_known_agents(message: str) -> bool:
    return UNKNOWN_AGENT in message and all(agent in message for agent in rules.AGENTS)


@pytest.mark.parametrize(
    "tool",
    ["list_conversations", "usage", "activity", "search"],
)
async def test_an_unknown_agent_is_invalid_parameter_naming_the_known_ones_in_mcp(workspace: Path, tool: str) -> None:
    from mcp import Client

    from archivist.mcp.tools import create_server

    async with Client(create_server(archive_path(workspace), workspace)) as client:
        known = await client.call_tool(tool, {"agents": ["claude-code"], "query": "proxy"} if tool == "search" else {})
        failed = await client.call_tool(
            tool, {"agents": [UNKNOWN_AGENT]} | ({"query": "proxy"} if tool == "search" else {})
        )
    assert not known.is_error, known.content
    assert failed.is_error and failed.structured_content["code"] == "INVALID_PARAMETER"
    assert named_the_known_agents(failed.structured_content["error"])


def test_an_unknown_agent_is_invalid_parameter_naming_the_known_ones_in_archivist_usage(workspace: Path) -> None:
    result = CliRunner().invoke(cli, ["usage", str(workspace), "--agent", UNKNOWN_AGENT])
    assert result.exit_code == 1 and "[INVALID_PARAMETER]" in result.output
    assert named_the_known_agents(result.output)
    ok = CliRunner().invoke(cli, ["usage", str(workspace), "--agent", "codex", "--json"])
    assert ok.exit_code == 0 and json.loads(ok.output)["rows"] == []


def test_an_unknown_agent_is_invalid_parameter_naming_the_known_ones_in_archivist_search(workspace: Path) -> None:
    result = CliRunner().invoke(cli, ["search", str(workspace), "proxy", "--agent", UNKNOWN_AGENT])
    assert result.exit_code == 1 and "[INVALID_PARAMETER]" in result.output
    assert named_the_known_agents(result.output)


async def test_an_unknown_agent_is_invalid_parameter_naming_the_known_ones_in_api_search(workspace: Path) -> None:
    datasette = await started_datasette(archive_path(workspace))
    response = await datasette.client.get(f"/api/search?query=proxy&agents={UNKNOWN_AGENT}")
    assert response.status_code == 400 and response.json()["code"] == "INVALID_PARAMETER"
    assert named_the_known_agents(response.json()["error"])
