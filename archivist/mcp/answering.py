"""How a tool answers: its structured result or its docs/errors.md error, never an exception, also
when the SDK refuses a call before the tool runs; and its work in a worker thread, with
progress notifications."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult
from pydantic import ValidationError

from archivist.errors import ArchivistError
from archivist.mcp.calls import internal_error, tool_error, tool_result

logger = logging.getLogger(__name__)


def _result(payload: dict[str, Any]) -> CallToolResult:
    return CallToolResult.model_validate(tool_result(payload))


def _error(error: ArchivistError) -> CallToolResult:
    return CallToolResult.model_validate(tool_error(error))


async def answer(work: Callable[[threading.Event], dict[str, Any]]) -> CallToolResult:
    """The tool's structured result, or its docs/errors.md error; never an exception.

    The work runs in a worker thread, so a slow call never delays the others. When
    the caller cancels or goes away, the flag it is given is raised and the query
    running for it stops at its next progress check.
    """
    cancel = threading.Event()
    try:
        return _result(await anyio.to_thread.run_sync(work, cancel, abandon_on_cancel=True))
    except ArchivistError as error:
        return _error(error)
    except Exception:  # a bug must still reach the client as a tool error, without its details
        logger.exception("An Archivist tool failed")
        return _error(internal_error())
    finally:
        cancel.set()


def _kind(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def invalid_arguments(tool: str, error: ValidationError) -> ArchivistError:
    """The SDK's schema check, in docs/errors.md terms: which arguments, what they must be (never their values)."""
    problems = []
    for item in error.errors():
        name = ".".join(str(part) for part in item["loc"]) or "arguments"
        problems.append(f"{name}: {item['msg'].lower()} (got {_kind(item.get('input'))})")
    return ArchivistError(
        "INVALID_PARAMETER",
        f"Invalid arguments for {tool}",
        "; ".join(dict.fromkeys(problems)) + ".",
        "Send each argument with the type its input schema gives (tools/list).",
    )


def apply_error_contract(server: MCPServer) -> None:
    """Every tools/call answer follows docs/errors.md, also when the SDK rejects the call before a tool runs.

    Wrong JSON types, unknown arguments and unknown tools become INVALID_PARAMETER
    tool errors with the error body (docs/errors.md); anything unexpected is INTERNAL_ERROR without
    its details. Works on any MCPServer, datasette-mcp's included.
    """
    call_tool = server.call_tool
    known: dict[str, set[str]] = {}

    async def checked_call_tool(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if not known:
            known.update(
                {
                    tool.name: set((tool.input_schema or {}).get("properties") or {})
                    for tool in await server.list_tools()
                }
            )
        if name not in known:
            return _error(
                ArchivistError(
                    "INVALID_PARAMETER",
                    f"Unknown tool: {name[:100]!r}",
                    "Tools: " + ", ".join(sorted(known)) + ".",
                    "Call tools/list to see each tool's arguments.",
                )
            )
        unknown = sorted(str(key)[:100] for key in arguments if key not in known[name])
        if unknown:
            return _error(
                ArchivistError(
                    "INVALID_PARAMETER",
                    f"Unknown argument{'s' if len(unknown) > 1 else ''} for {name}: {', '.join(unknown)}",
                    f"{name} takes: {', '.join(sorted(known[name])) or 'no arguments'}.",
                    "Remove the unknown argument.",
                )
            )
        try:
            return await call_tool(name, arguments, context)
        except UnexpectedToolError:
            logger.exception("Tool %r failed", name)
            return _error(internal_error())
        except ToolError as error:
            if isinstance(error.__cause__, ValidationError):
                return _error(invalid_arguments(name, error.__cause__))
            return _error(ArchivistError("INVALID_PARAMETER", str(error)[:2000]))

    server.call_tool = checked_call_tool  # type: ignore[method-assign]


class Progress:
    """MCP progress notifications for work running in a worker thread (no-ops without a progress token)."""

    def __init__(self, context: Context | None) -> None:
        """Made on the event loop's thread; called from any other."""
        self._context = context
        self._token = anyio.lowlevel.current_token()

    def __call__(self, done: float, total: float | None = None, message: str | None = None) -> None:
        if self._context is None:
            return
        try:
            anyio.from_thread.run(self._context.report_progress, done, total, message, token=self._token)
        except Exception:  # a client gone away must not stop the work
            logger.debug("progress notification not sent", exc_info=True)
