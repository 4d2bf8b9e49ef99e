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
from mcp.types import CallToolResult, TextContent
from pydantic import ValidationError

from archivist.errors import ArchivistError
from archivist.mcp.calls import internal_error, tool_error, tool_result
from archivist.queries.line import Line
from archivist.queries.runner import TIME_LIMIT_MS, Archive

logger = logging.getLogger(__name__)

# Every tool call takes its turn (``queries.line``): as many at once as an archive has connections,
# and one that found none free within the time limit is told SEARCH_BUSY, never left waiting.
LINE = Line(Archive.POOL_SIZE, TIME_LIMIT_MS / 1000)


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
        async with LINE.turn():
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


class ErrorContract:
    """The SDK middleware (``MCPServer.middleware``) by which every ``tools/call`` answer follows
    docs/errors.md, also when the SDK rejects the call before a tool runs.

    Unknown tools and arguments are refused before the call goes on; a call the SDK refused
    (its answer an error with no structured content, which no Archivist tool gives) is told
    again: wrong JSON types as INVALID_PARAMETER naming the arguments (the SDK's own check
    of them, run again), any other refusal as INVALID_PARAMETER, a tool that failed
    unexpectedly as INTERNAL_ERROR without its details. Works on any MCPServer,
    datasette-mcp's included.
    """

    def __init__(self, server: MCPServer) -> None:
        self._server = server
        self._known: dict[str, set[str]] = {}

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        params = ctx.params
        if ctx.method != "tools/call" or not isinstance(params, dict) or not isinstance(params.get("name"), str):
            return await call_next(ctx)
        name, arguments = params["name"], params.get("arguments") or {}
        if not isinstance(arguments, dict):
            return await call_next(ctx)  # the SDK says what is wrong
        refused = await self._refused(name, arguments)
        if refused is not None:
            return _error(refused)
        result = await call_next(ctx)
        answered = _call_result(result)
        if answered is not None and answered.is_error and answered.structured_content is None:
            return _error(self._told(name, arguments, answered))
        return result

    async def _refused(self, name: str, arguments: dict[str, Any]) -> ArchivistError | None:
        """The error for a call of a tool not listed, or with arguments its input schema does not name."""
        if not self._known:
            self._known.update(
                {
                    tool.name: set((tool.input_schema or {}).get("properties") or {})
                    for tool in await self._server.list_tools()
                }
            )
        if name not in self._known:
            return ArchivistError(
                "INVALID_PARAMETER",
                f"Unknown tool: {name[:100]!r}",
                "Tools: " + ", ".join(sorted(self._known)) + ".",
                "Call tools/list to see each tool's arguments.",
            )
        unknown = sorted(str(key)[:100] for key in arguments if key not in self._known[name])
        if not unknown:
            return None
        return ArchivistError(
            "INVALID_PARAMETER",
            f"Unknown argument{'s' if len(unknown) > 1 else ''} for {name}: {', '.join(unknown)}",
            f"{name} takes: {', '.join(sorted(self._known[name])) or 'no arguments'}.",
            "Remove the unknown argument.",
        )

    def _told(self, name: str, arguments: dict[str, Any], refusal: CallToolResult) -> ArchivistError:
        """A refusal of the SDK's in docs/errors.md terms."""
        tool = self._server._tool_manager.get_tool(name)
        try:
            if tool is not None:
                tool.fn_metadata.validate_arguments(arguments)
        except ValidationError as error:
            return invalid_arguments(name, error)
        except Exception:  # a check that fails otherwise is a failure of the tool's
            return internal_error()
        text = " ".join(block.text for block in refusal.content if isinstance(block, TextContent))
        if text == f"Error executing tool {name}":  # what the SDK says of a tool that failed unexpectedly
            return internal_error()
        return ArchivistError("INVALID_PARAMETER", text[:2000])


def _call_result(result: Any) -> CallToolResult | None:
    """A tools/call answer as the SDK's model, whether the chain gives it so or as its JSON (a dict)."""
    if isinstance(result, CallToolResult):
        return result
    try:
        return CallToolResult.model_validate(result) if isinstance(result, dict) else None
    except ValidationError:
        return None


def apply_error_contract(server: MCPServer) -> None:
    """Every tools/call answer of ``server`` follows docs/errors.md (``ErrorContract``)."""
    server.middleware.append(ErrorContract(server))


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
