"""``archivist mcp`` over stdio, answering ``initialize`` before the MCP SDK has loaded.

Importing the MCP SDK takes about a second on two cores (pydantic builds its
protocol models). A client waits for the answer to ``initialize`` before
anything else, so the server answers it first, from this module (standard
library only), then loads the SDK and hands it the conversation: the SDK is
given the same ``initialize`` request again so that its session starts
normally, and its own answer to that request, the same text, is not sent twice.
The protocol versions come from the SDK's own table, read without importing it,
and a test checks that this answer equals the SDK's.

Everything else on stdout is protocol: file descriptor 1 is pointed at stderr
while the server runs, so stray output of libraries cannot reach the client.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import sys
from pathlib import Path
from typing import IO, Any, cast

from archivist.mcp import CAPABILITIES, INSTRUCTIONS, NAME


def _sdk_versions() -> tuple[tuple[str, ...], str]:
    """The SDK's handshake protocol versions and its default, from its version table alone."""
    spec = importlib.util.find_spec("mcp_types")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("mcp_types is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    module_spec = importlib.util.spec_from_file_location("_archivist_mcp_versions", path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"cannot read {path}")
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return tuple(module.HANDSHAKE_PROTOCOL_VERSIONS), module.LATEST_HANDSHAKE_VERSION


def early_answer(request: dict[str, Any]) -> dict[str, Any]:
    """The answer to an ``initialize`` request, as the SDK would give it."""
    versions, latest = _sdk_versions()
    wanted = (request.get("params") or {}).get("protocolVersion")
    return {
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {
            "capabilities": CAPABILITIES,
            "instructions": INSTRUCTIONS,
            "protocolVersion": wanted if wanted in versions else latest,
            "serverInfo": {"name": NAME, "version": ""},
        },
    }


def _as_initialize(line: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if isinstance(message, dict) and message.get("method") == "initialize" and "id" in message:
        return message
    return None


class _Replay(io.TextIOBase):
    """stdin for the SDK: the line already read, then the rest of the real stdin."""

    def __init__(self, first: str, rest: io.TextIOBase) -> None:
        self._first: str | None = first
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]  # a text stream's readline
        if self._first is not None:
            line, self._first = self._first, None
            return line
        return self._rest.readline()


class _WithoutSecondAnswer(io.TextIOBase):
    """stdout for the SDK: drops its answer to the ``initialize`` that was answered early."""

    def __init__(self, out: io.TextIOBase, answered_id: Any) -> None:
        self._out = out
        self._answered_id = answered_id
        self._pending = answered_id is not None

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self._pending:
            try:
                message = json.loads(text)
            except ValueError:
                message = None
            if isinstance(message, dict) and message.get("id") == self._answered_id and "result" in message:
                self._pending = False
                return len(text)
        return self._out.write(text)

    def flush(self) -> None:
        self._out.flush()


def serve(
    db_path: Path, workspace: Path | None = None, allowed: list[Path] | None = None, test_fixtures: bool = False
) -> None:
    """Serve the archive's tools over this process's stdin and stdout."""
    protocol_out = io.TextIOWrapper(os.fdopen(os.dup(1), "wb"), encoding="utf-8", write_through=True)
    os.dup2(2, 1)  # from here on, anything printed goes to stderr
    protocol_in = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    first = protocol_in.readline()
    request = _as_initialize(first.encode("utf-8"))
    if request is not None:
        protocol_out.write(json.dumps(early_answer(request), ensure_ascii=False, separators=(",", ":")) + "\n")
        protocol_out.flush()

    import anyio
    from mcp.server.stdio import stdio_server

    from archivist.mcp.tools import create_server

    server = create_server(db_path, workspace, allowed or [], test_fixtures)

    async def run() -> None:
        async with stdio_server(
            stdin=anyio.wrap_file(cast(IO[str], _Replay(first, protocol_in))),
            stdout=anyio.wrap_file(
                cast(IO[str], _WithoutSecondAnswer(protocol_out, request["id"] if request else None))
            ),
        ) as (read_stream, write_stream):
            low_level = server._lowlevel_server  # MCPServer.run_stdio_async does the same with its own streams
            await low_level.run(read_stream, write_stream, low_level.create_initialization_options())

    if first:
        anyio.run(run)
