"""The MCP tools' input schemas, from the declarations: a tool function per tool, with a signature made
of its parameters, which the SDK turns into the tool's input schema as it does any typed function's.

Each declared parameter (``archivist.queries.params.Param``) becomes a keyword argument
annotated ``Annotated[type, Field(description=...)]``: its JSON type (and the others MCP
accepts for it), a list as an array (``LIST_FORMS``), its default (none where it is required),
and its short description as MCP shows it. The schemas carry no titles (a property's title only
repeats its name; ``Untitled`` leaves out those pydantic writes), no null and no list as one
comma-separated string (both taken all the same, as docs/mcp.md says): every agent that connects
reads them, so they stay light; docs/mcp.md holds the full descriptions.
"""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field, WithJsonSchema

from archivist.queries.params import LIST_FORMS, Param, first_sentence

PYTHON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "object": dict[str, Any],
}


def annotation(param: Param, required: bool) -> Any:
    """The type hint that takes the parameter's values, published with its light schema (``schema``)."""
    item: Any = PYTHON_TYPES[param.type]
    types: list[Any] = [item, *(PYTHON_TYPES[other] for other in param.also)]
    if param.many:  # an array (where MCP takes one), or its items comma-separated in one string
        types = [list[item], str] if LIST_FORMS["mcp"].array else [str]
    if param.omitted is None and not required:
        types.append(type(None))
    union = functools.reduce(operator.or_, types)
    default = _default(param, required)
    return Annotated[union, WithJsonSchema(schema(param, required)), Field(json_schema_extra=default)]


def schema(param: Param, required: bool) -> dict[str, Any]:
    """The parameter's JSON schema as MCP lists it: each JSON type it takes (a list as an array), its choices,
    its bounds, and its short description. A null, which a client may send for an argument it leaves out,
    is taken (``annotation``) and not listed: it says no more than leaving the argument out does. Nor is a
    list's other form, one comma-separated string, which is taken too (docs/mcp.md says so)."""
    item = _typed(param.type) | ({"enum": list(_choices(param))} if param.choices else {})
    options: list[dict[str, Any]]
    if param.many:
        options = [{"type": "array", "items": item} if LIST_FORMS["mcp"].array else {"type": "string"}]
    else:
        options = [item, *(_typed(other) for other in param.also)]
    shown: dict[str, Any] = options[0] if len(options) == 1 else {"anyOf": options}
    if param.minimum is not None:
        shown["minimum"] = param.minimum
    if param.maximum is not None:
        shown["maximum"] = param.maximum
    return {**shown, "description": param.described("mcp")}


def _typed(name: str) -> dict[str, Any]:
    """The schema of one JSON type: an object's holds anything."""
    return {"type": name, "additionalProperties": True} if name == "object" else {"type": name}


def _default(param: Param, required: bool) -> Callable[[dict[str, Any]], None]:
    """Its default as its schema shows it: the declared one (not what a call passes on), none where it is
    required, where it is null (the query's own) or where it is empty (which says no more than its absence)."""

    def shown(schema: dict[str, Any]) -> None:
        schema.pop("default", None)
        if not required and param.default not in (None, ""):
            schema["default"] = param.default

    return shown


def _choices(param: Param) -> tuple[str, ...]:
    """Its choices; and the empty value where a single value may be left empty (its default)."""
    return param.choices + ("",) if param.default == "" and not param.many else param.choices


def signature(inputs: list[tuple[Param, bool]], context: bool = False) -> inspect.Signature:
    """A tool's signature: each input (a parameter, and whether it is required), then the MCP context if
    it reports progress; it returns a ``CallToolResult`` (structured content and its text), of which
    tools/list gives no schema: docs/mcp.md names each answer's fields."""
    parameters = [
        inspect.Parameter(
            param.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if required else param.omitted,
            annotation=annotation(param, required),
        )
        for param, required in inputs
    ]
    if context:
        parameters.append(
            inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Context | None)
        )
    return inspect.Signature(parameters, return_annotation=CallToolResult)


def tool_function(
    name: str, description: str, shape: inspect.Signature, run: Callable[..., Awaitable[CallToolResult]]
) -> Callable[..., Awaitable[CallToolResult]]:
    """An async function named ``name`` with the signature ``shape`` that calls ``run`` with its arguments; its
    docstring, which MCP lists as the tool's description, is the first sentence of ``description``."""

    async def tool(**arguments: Any) -> CallToolResult:
        return await run(**arguments)

    tool.__signature__ = shape  # type: ignore[attr-defined]
    tool.__annotations__ = {key: value.annotation for key, value in shape.parameters.items()}
    tool.__annotations__["return"] = shape.return_annotation
    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = first_sentence(description)
    return tool


class Untitled:
    """The SDK middleware (``MCPServer.middleware``) by which ``tools/list`` gives each tool's input schema
    without the titles pydantic writes in it: the schema's (the tool's name and "Arguments") and each
    argument's (its name again). The rest is the SDK's answer (its wire form) as it is."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method != "tools/list" or not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            return result
        return {**result, "tools": [_untitled(tool) for tool in result["tools"]]}


def _untitled(tool: Any) -> Any:
    """A listed tool, its input schema without titles."""
    given = tool.get("inputSchema") if isinstance(tool, dict) else None
    if not isinstance(given, dict):
        return tool
    schema = {key: value for key, value in given.items() if key != "title"}
    if isinstance(schema.get("properties"), dict):
        schema["properties"] = {name: _without_title(shown) for name, shown in schema["properties"].items()}
    return {**tool, "inputSchema": schema}


def _without_title(shown: Any) -> Any:
    return {key: value for key, value in shown.items() if key != "title"} if isinstance(shown, dict) else shown
