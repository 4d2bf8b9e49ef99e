"""Each parameter is declared once, and every surface is held to its declaration in both directions.

The declaration (``archivist.queries.declarations``, made of ``archivist.queries.params``)
says of each parameter its name, JSON type, whether it is a list, its default, whether a
call needs it, its rule, its one description, its ``archivist search`` flags and its
search-page field, and the seed systems' other names for it. One test per surface
compares that surface with it: the MCP tools' input schemas, the ``archivist search``
options, the search page's form, Datasette's canned queries, and the tables of docs/:
nothing on a surface that the declaration lacks, nothing declared that the surface lacks
(unless the declaration says the surface does not show it), and the same types,
defaults and description texts.

Run as a script (``python tests/test_declarations.py``), this file writes the
generated tables of queries and search parameters (docs/search.md) and of MCP tools
(docs/mcp-clients.md) again from the declarations,
and docs/mcp.md: each MCP tool's full description and arguments, which tools/list says in
a sentence and a few words.
"""

from __future__ import annotations

import dataclasses
import html
import os
import re
from pathlib import Path
from typing import Any

import click
import pytest

from archivist.agents.kinds import KINDS
from archivist.queries import rules
from archivist.queries.declarations import QUERIES, TOOL_PARAMS, WORKSPACE
from archivist.queries.params import LIST_FORMS, QUERY_LIMITS, Param
from archivist.queries.params import first_sentence as mcp_sentence

ROOT = Path(__file__).resolve().parent.parent
# the document that holds each generated table
TABLE_DOCS = {
    "queries": ROOT / "docs" / "search.md",
    "search parameters": ROOT / "docs" / "search.md",
    "tools": ROOT / "docs" / "mcp-clients.md",
}
MCP_DOC = ROOT / "docs" / "mcp.md"
FILES = {"notes/a.md": "# Alpha\n\nSome proxy text.\n"}  # (the workspace fixture's)


# --- the declarations themselves ---------------------------------------------------------------

JSON_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict}


def every_param() -> list[tuple[str, Param]]:
    declared = [(name, param) for name, query in QUERIES.items() for param in query.inputs]
    return declared + [(name, param) for name, params in TOOL_PARAMS.items() for param in params] + [("*", WORKSPACE)]


@pytest.mark.parametrize(("owner", "param"), every_param(), ids=lambda value: getattr(value, "name", value))
def test_each_parameter_is_whole_and_its_default_is_of_its_type(owner: str, param: Param) -> None:
    assert re.fullmatch(r"[a-z][a-z_]*", param.name)
    assert param.description.endswith(".") and "\n" not in param.description
    assert callable(param.rule)
    if param.default not in ("", None):  # (else: the empty value of its type, the query's own default)
        assert isinstance(param.default, JSON_TYPES[param.type]) and not param.many, param.name
        param.rule(str(param.default).lower())  # the rule takes its default
    assert not (param.required and param.default not in ("", None)), "a required parameter has no default"
    for flag in param.flags:
        assert re.fullmatch(r"--[a-z][a-z-]*|[A-Z]+", flag), flag


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_each_query_declares_a_name_once_and_its_aliases_name_its_parameters(name: str) -> None:
    query = QUERIES[name]
    names = [param.name for param in query.inputs]
    assert len(names) == len(set(names)), f"{name} declares a name twice"
    for alias in query.seed_names:
        target = query.param(alias.target)
        assert target in query.params and alias.name not in [param.name for param in query.params]
        assert query.param(alias.name).description == alias.description
        assert (query.param(alias.name).type, query.param(alias.name).many) == (target.type, target.many)
    flags = [flag for param in query.params for flag in param.flags]
    assert len(flags) == len(set(flags)), f"{name} gives one flag to two parameters"


def test_the_lists_of_agents_are_the_registrys_and_the_limits_the_rules() -> None:
    """Nothing in a description that another module owns is typed by hand."""
    for name in ("search", "list_conversations"):
        described = QUERIES[name].param("agents").description
        assert all(kind in described for kind in KINDS) and rules.WORKSPACE_AGENT in described
        positions = [re.search(rf"(?<![\w-]){re.escape(kind)}(?![\w-])", described).start() for kind in KINDS]  # type: ignore[union-attr]
        assert positions == sorted(positions), "the kinds in the registry's order"
    assert f"{rules.MAX_QUERY_WORDS} words" in QUERY_LIMITS and f"{rules.MAX_QUERY_CHARS} characters" in QUERY_LIMITS
    assert ", ".join(rules.INCLUDABLE) in QUERIES["get_conversation"].param("include").description


# --- MCP: each tool's input schema is its declared parameters -----------------------------------


def json_types(param: Param, required: bool) -> list[Any]:
    """The JSON schema types MCP shows for a parameter: each a type name, or ("array", item type); never null,
    which a call may send for one whose leaving out passes none, nor a list's one comma-separated string,
    which a call may send too (tests/test_mcp_weight.py)."""
    types: list[Any] = [param.type, *param.also]
    if param.many:
        types = [("array", param.type)] if LIST_FORMS["mcp"].array else ["string"]
    return types


def schema_types(schema: dict[str, Any]) -> list[Any]:
    options = schema.get("anyOf", [schema])
    return [("array", option["items"]["type"]) if option["type"] == "array" else option["type"] for option in options]


async def test_the_mcp_input_schemas_are_the_declarations(workspace: Path) -> None:
    from mcp import Client

    from archivist.mcp.tools import TOOLS, create_server, inputs
    from archivist.workspace import archive_path

    async with Client(create_server(archive_path(workspace), workspace)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(listed) == [tool.name for tool in TOOLS]
    for tool in TOOLS:
        declared = inputs(tool)
        schema = listed[tool.name].input_schema
        assert list(schema["properties"]) == [param.name for param, _ in declared], tool.name
        assert sorted(schema.get("required", [])) == sorted(param.name for param, required in declared if required)
        for param, required in declared:
            shown = schema["properties"][param.name]
            where = (tool.name, param.name)
            assert shown["description"] == param.described("mcp"), where
            assert schema_types(shown) == json_types(param, required), where
            assert "title" not in shown, where
            if required or param.default == "":  # (an empty default says nothing: tests/test_mcp_weight.py)
                assert "default" not in shown, where
            else:
                assert shown.get("default") == param.default, where
        if tool.query:
            query = QUERIES[tool.query]
            assert {param.name for param, _ in declared} == {param.name for param in query.inputs} | {"workspace_path"}
        assert listed[tool.name].description == mcp_sentence(tool.description)


# --- the command line: archivist search's options are the declared flags ------------------------


def test_the_search_command_options_are_the_declared_flags() -> None:
    from archivist.cli import searching

    command = searching.search
    context = click.Context(command)
    params = command.get_params(context)
    options = {
        param.name: param
        for param in params
        if isinstance(param, click.Option) and param is not command.get_help_option(context)
    }
    own = {"db_path", "conversations", "reports", "as_json"}  # the command's own, no query's
    declared = [
        (switch, param) for switch, name in searching.SEARCHES.items() for param in QUERIES[name].params if param.flags
    ]
    by_flag = {flag: param for _switch, param in declared for flag in param.flags if flag.startswith("--")}
    shown_flags = {flag for name, option in options.items() if name not in own for flag in option.opts}
    assert shown_flags == set(by_flag), "an option is a declared flag, and a declared flag an option"
    arguments = [param.name for param in params if isinstance(param, click.Argument)]
    assert arguments == ["workspace", "query"]
    assert {(param.name, param.flags) for _, param in declared if not param.option} == {("query", ("QUERY",))}
    for option in searching.declared_options():
        shown = options[option.dest]
        first = option.param
        assert tuple(shown.opts) == option.flags
        assert all(by_flag[flag] in [param for _, param in option.params] for flag in option.flags)
        assert shown.multiple == any(param.many for _, param in option.params), option.dest
        assert shown.is_flag == (first.type == "boolean"), option.dest
        assert shown.default in (None, (), False), "an option left out leaves the search its own default"
        assert shown.help == option.help() + option.bounds() and first.described("cli") in shown.help
        for switch, param in option.params[1:]:
            assert f"With {switch}: {param.description}" in shown.help
        if first.type != "boolean":
            choice = first.choices and not first.many
            assert shown.metavar == (f"[{'|'.join(first.choices)}]" if choice else first.metavar)
    # --conversations says which options it takes
    taken = [option.flags[0] for option in searching.declared_options() if "--conversations" in dict(option.params)]
    assert all(flag in options["conversations"].help for flag in taken)


# --- the search page: its form's fields are those declared with one --------------------------------


async def test_the_search_form_fields_are_the_declared_ones(workspace: Path) -> None:
    from conftest import started_datasette

    from archivist.web.urls import FORM, KEPT
    from archivist.workspace import archive_path

    search = QUERIES["search"]
    values = {"tags": "a", "match_all": "true", "match_mode": "simple", "min_similarity": "0.3", "page_size": "5"}
    values |= {"entities": "note", "types": "x", "product_ids": "1", "agents": "llm", "projects": "p"}
    values |= {"models": "m", "files": "f", "tools": "bash", "roles": "user", "branches": "main", "sort": "newest"}
    values |= {"hosts": "laptop"}
    assert set(values) == set(KEPT), "set every field the form keeps"
    datasette = await started_datasette(archive_path(workspace))
    page = (await datasette.client.get("/search", params={"query": "proxy", **values})).text
    form = re.search(r'<form class="archivist-search-form".*?</form>', page, re.S)
    assert form
    inputs = [dict(re.findall(r'(\w+)="([^"]*)"', tag)) for tag in re.findall(r"<input\b[^>]*>", form[0])]
    fields = {attrs["name"]: attrs["type"] for attrs in inputs}  # (a radio field: its inputs, one name)
    assert fields == {name: param.form for name, param in FORM.items()}
    assert set(FORM) == {param.name for param in search.params if param.form}
    titles = {attrs["name"]: html.unescape(attrs["title"]) for attrs in inputs if "title" in attrs}
    titles["mode"] = html.unescape(re.findall(r'<fieldset class="archivist-modes" title="([^"]*)"', form[0])[0])
    assert titles == {name: param.description for name, param in FORM.items() if param.form != "hidden"}
    empty = (await datasette.client.get("/search")).text
    checked = re.search(r'<input type="radio" name="mode" value="(\w+)" checked>', empty)
    assert checked and checked[1] == search.param("mode").default


# --- Datasette: each canned query's parameters and their descriptions ----------------------------


async def test_the_canned_queries_show_the_declared_parameters(workspace: Path) -> None:
    from conftest import started_datasette

    from archivist.workspace import archive_path

    datasette = await started_datasette(archive_path(workspace))
    served = await datasette.get_canned_queries("archive", None)
    assert set(served) == set(QUERIES)
    for name, query in QUERIES.items():
        assert served[name]["params"] == query.sql_params
        summary, _, lines = served[name]["description"].partition("\n\n")
        assert summary == query.description
        shown = dict(line.split(": ", 1) for line in lines.splitlines()) if lines else {}
        assert list(shown) == query.sql_params, name
        for param in query.params:
            if param.in_sql:
                assert shown[param.name] == param.described("canned"), (name, param.name)


# --- docs/: its tables are written from the declarations -----------------------------------------


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def code(text: str) -> str:
    return f"`{text}`"


def type_of(param: Param) -> str:
    named = " or ".join((param.type, *param.also))
    return f"list of {param.type}s" if param.many else named


def default_of(param: Param) -> str:
    if param.required:
        return "required"
    if param.default in ("", None):
        return "–"
    return code(str(param.default).lower() if isinstance(param.default, bool) else str(param.default))


# the generated tables: what each holds (its first line) and its name (its last)
TITLES = {"queries": "The canned queries", "search parameters": "The search's parameters", "tools": "The MCP tools"}


def block(name: str, lines: list[str]) -> str:
    return "\n".join([begin(name), *lines, end(name)])


def begin(name: str) -> str:
    return f"<!-- {TITLES[name]}, generated from the declarations: python tests/test_declarations.py -->"


def end(name: str) -> str:
    return f"<!-- end of the generated {name} -->"


def first_sentence(text: str) -> str:
    return re.split(r"(?<=\.)\s", text, maxsplit=1)[0]


def queries_table() -> str:
    lines = ["| query | parameters | what it does |", "|---|---|---|"]
    for name, query in QUERIES.items():
        other = {alias.target: alias.name for alias in query.seed_names}
        names = [
            code(param.name) + (f" (or {code(other[param.name])})" if param.name in other else "")
            for param in query.params
        ]
        shown = "see below" if name == "search" else ", ".join(names) or "–"
        lines.append(f"| {code(name)} | {shown} | {cell(first_sentence(query.description))} |")
    lines += [
        "",
        "<details><summary>Each query's parameters (the search's are below)</summary>",
        "",
        "| query | parameter | type | default | meaning |",
        "|---|---|---|---|---|",
    ]
    for name, query in QUERIES.items():
        if name == "search":
            continue
        for param in query.inputs:
            lines.append(
                f"| {code(name)} | {code(param.name)} | {type_of(param)} | {default_of(param)} "
                f"| {cell(param.described('canned'))} |"
            )
    return block("queries", [*lines, "", "</details>"])


def search_table() -> str:
    lines = ["| parameter | type | default | `archivist search` | meaning |", "|---|---|---|---|---|"]
    for param in QUERIES["search"].inputs:
        flags = ", ".join(code(flag) for flag in param.flags) or "–"
        lines.append(
            f"| {code(param.name)} | {type_of(param)} | {default_of(param)} | {flags} | {cell(param.described('api'))} |"
        )
    return block("search parameters", lines)


def tools_table() -> str:
    from archivist.mcp.tools import TOOLS, inputs

    lines = ["| tool | runs | arguments (besides `workspace_path`) |", "|---|---|---|"]
    for tool in TOOLS:
        query = QUERIES[tool.query] if tool.query else None
        aliases = query.aliases if query else {}
        names = [
            code(param.name)
            + (f" (= {code(aliases[param.name])})" if param.name in aliases else "")
            + ("" if not required else " (required)")
            for param, required in inputs(tool)
            if param.name != WORKSPACE.name
        ]
        runs = f"the canned query {code(tool.query)}" if tool.query else "the embedding API"
        lines.append(f"| {code(tool.name)} | {runs} | {', '.join(names) or '–'} |")
    return block("tools", lines)


TABLES = {"queries": queries_table, "search parameters": search_table, "tools": tools_table}


def mcp_doc() -> str:
    """docs/mcp.md: each tool's full description, its arguments in full, and the fields of its answer."""
    from archivist.mcp.tools import TOOLS

    lines = [
        "# The MCP tools",
        "",
        "<!-- generated from the declarations: python tests/test_declarations.py -->",
        "",
        "What `tools/list` says of each tool is the first sentence of its description, and of each argument a "
        "few words; this page holds all of it. Every answer also has `success`, and `error` and `code` when "
        "it fails ([errors.md](errors.md)), and `building` while the archive is still being built. `tools/list` "
        "names no output schema: each answer comes as structured content and as its JSON text, and its fields "
        "are the ones named here. An argument whose default is none may be sent as null, a list as one string of "
        "comma-separated values, and an empty default is the argument left out: `tools/list` leaves these unsaid. The "
        "declarations are `archivist/queries/declarations.py`; the tools, `archivist/mcp/tools.py`.",
        "",
    ]
    for tool in TOOLS:
        lines += mcp_tool_section(tool)
    return "\n".join(lines)


def mcp_tool_section(tool: Any) -> list[str]:
    """One tool's part of docs/mcp.md."""
    import typing

    from archivist.mcp.outputs import Outcome
    from archivist.mcp.tools import inputs

    runs = f"the canned query {code(tool.query)}" if tool.query else "the embedding API"
    lines = [f"## {code(tool.name)}", "", tool.description, "", f"It runs {runs}.", ""]
    lines += ["| argument | type | default | meaning |", "|---|---|---|---|"]
    for param, required in inputs(tool):
        default = "required" if required else default_of(dataclasses.replace(param, required=False))
        lines.append(f"| {code(param.name)} | {type_of(param)} | {default} | {cell(full_description(param))} |")
    fields = [name for name in typing.get_type_hints(tool.output) if name not in typing.get_type_hints(Outcome)]
    return [*lines, "", "Its answer: " + ", ".join(code(name) for name in fields) + ".", ""]


def full_description(param: Param) -> str:
    """A parameter's whole description as an MCP caller needs it: a list's says it takes an array or a string."""
    return f"{param.description} {LIST_FORMS['mcp'].sentence}" if param.many else param.description


def test_docs_mcp_is_the_declarations() -> None:
    assert MCP_DOC.read_text(encoding="utf-8") == mcp_doc(), (
        "docs/mcp.md differs from the declarations: write it again with python tests/test_declarations.py"
    )


def test_docs_mcp_says_in_full_what_tools_list_says_in_a_few_words() -> None:
    from archivist.mcp.tools import TOOLS, inputs

    text = MCP_DOC.read_text(encoding="utf-8")
    for tool in TOOLS:
        assert tool.description in text and mcp_sentence(tool.description) in tool.description
        for param, _ in inputs(tool):
            assert cell(full_description(param)) in text, (tool.name, param.name)
    assert "matches all days within that month" in text  # (date_range's details, which tools/list leaves out)


def readme_block(text: str, name: str) -> str:
    start, stop = text.index(begin(name)), text.index(end(name)) + len(end(name))
    return text[start:stop]


@pytest.mark.parametrize("name", list(TABLES))
def test_the_documented_tables_are_the_declarations(name: str) -> None:
    document = TABLE_DOCS[name]
    text = document.read_text(encoding="utf-8")
    assert readme_block(text, name) == TABLES[name](), (
        f"{document.name}'s table {name!r} differs from the declarations: "
        "write it again with python tests/test_declarations.py"
    )


def write_tables() -> None:
    for name, table in TABLES.items():
        document = TABLE_DOCS[name]
        text = document.read_text(encoding="utf-8")
        document.write_text(text.replace(readme_block(text, name), table()), encoding="utf-8")


if __name__ == "__main__":
    os.chdir(ROOT)
    write_tables()
    MCP_DOC.write_text(mcp_doc(), encoding="utf-8")


def test_every_list_filter_of_the_search_form_has_a_chip_that_removes_it() -> None:
    from archivist.web.search_navigation import CHIP_KEYS

    kept_lists = {param.name for param in QUERIES["search"].params if param.many and param.form == "hidden"}
    assert {key for key, _label in CHIP_KEYS} == kept_lists  # (tools and roles once had none)
