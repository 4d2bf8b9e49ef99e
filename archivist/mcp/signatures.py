"""The MCP tools' input schemas, from the declarations: a tool function per tool, with a signature made
of its parameters, which the SDK turns into the tool's input schema as it does any typed function's.

Each declared parameter (``archivist.queries.params.Param``) becomes a keyword argument
annotated ``Annotated[type, Field(description=...)]``: its JSON type (and the others MCP
accepts for it), a list as an array or one comma-separated string (``LIST_FORMS``),
its default (none where it is required), and its description as MCP shows it.
"""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from archivist.queries.params import LIST_FORMS, Param

PYTHON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "object": dict[str, Any],
}


def annotation(param: Param, required: bool) -> Any:
    """The type hint whose JSON schema is the parameter's, with its description, its bounds, its choices and
    its default (what leaving it out means)."""
    item = _item(param)
    types: list[Any] = [item, *(PYTHON_TYPES[other] for other in param.also)]
    if param.many:  # an array (where MCP takes one), or its items comma-separated in one string
        types = [list[item], str] if LIST_FORMS["mcp"].array else [str]  # type: ignore[valid-type]
    if param.omitted is None and not required:
        types.append(type(None))
    union = functools.reduce(operator.or_, types)
    return Annotated[union, Field(description=param.described("mcp"), json_schema_extra=_shown(param, required))]


def _item(param: Param) -> Any:
    """The type of its value (of each item, for a list), with its choices as an enum."""
    if not param.choices:
        return PYTHON_TYPES[param.type]
    return Annotated[PYTHON_TYPES[param.type], Field(json_schema_extra={"enum": list(_choices(param))})]


def _choices(param: Param) -> tuple[str, ...]:
    """Its choices; and the empty value where a single value may be left empty (its default)."""
    return param.choices + ("",) if param.default == "" and not param.many else param.choices


def _shown(param: Param, required: bool) -> dict[str, Any]:
    """What the schema says of it besides its type: its bounds, and its default unless it is required."""
    shown: dict[str, Any] = {}
    if param.minimum is not None:
        shown["minimum"] = param.minimum
    if param.maximum is not None:
        shown["maximum"] = param.maximum
    if not required:
        shown["default"] = param.default
    return shown


def signature(inputs: list[tuple[Param, bool]], output: type, context: bool = False) -> inspect.Signature:
    """A tool's signature: each input (a parameter, and whether it is required), then the MCP context if
    it reports progress; it returns a ``CallToolResult`` whose structured content is ``output``."""
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
    return inspect.Signature(parameters, return_annotation=Annotated[CallToolResult, output])


def tool_function(
    name: str, description: str, shape: inspect.Signature, run: Callable[..., Awaitable[CallToolResult]]
) -> Callable[..., Awaitable[CallToolResult]]:
    """An async function named ``name`` with the signature ``shape`` that calls ``run`` with its arguments."""

    async def tool(**arguments: Any) -> CallToolResult:
        return await run(**arguments)

    tool.__signature__ = shape  # type: ignore[attr-defined]
    tool.__annotations__ = {key: value.annotation for key, value in shape.parameters.items()}
    tool.__annotations__["return"] = shape.return_annotation
    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = description
    return tool
