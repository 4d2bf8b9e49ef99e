"""The stdio transport of ``archivist mcp``: JSON-RPC lines read and written on the event loop.

The SDK's own stdio transport reads each line, and writes each answer, in a worker
thread (two hand-offs for a write and its flush): about a millisecond of every call on
two cores. Where stdin and stdout are pipes or sockets, as MCP clients start servers,
this one reads and writes them non-blocking on the event loop instead. Writes are
buffered and never hold up reading; an answer waits only while the client does not
read (asyncio's flow control). Elsewhere (a file; a terminal, whose other writers would
find it made non-blocking) lines are read and written in a worker thread, as the SDK does.

Lines are parsed and answers written as ``mcp.server.stdio`` does, and the session
first reads again what the stdio entry's lobby read before the SDK was up.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

import anyio
import anyio.to_thread
import mcp_types
from mcp.shared.message import SessionMessage

import archivist.mcp

# A line longer than this is refused: the session is told, as of a line that is not JSON.
LINE_LIMIT = archivist.mcp.LINE_LIMIT
CLOSE_SECONDS = 5.0  # at the end, how long the last answers wait for a client that reads no more


class LineSource(Protocol):
    """Lines of a file descriptor, read unbuffered (``stdio.Lines``): what was read past the
    last line given is in ``rest``."""

    fd: int
    rest: bytearray

    def readline(self) -> str: ...


ReadLine = Callable[[], Awaitable[str]]
Write = Callable[[bytes], Awaitable[None]]


def _pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class _Flow(asyncio.Protocol):
    """A write pipe's flow control: ``drain`` waits while the client reads too slowly."""

    def __init__(self) -> None:
        self._writable = asyncio.Event()
        self._writable.set()
        self.lost = asyncio.Event()

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self._writable.set()
        self.lost.set()

    async def drain(self) -> None:
        await self._writable.wait()


@contextlib.asynccontextmanager
async def _on_the_loop(lines: LineSource, out_fd: int) -> AsyncIterator[tuple[ReadLine, Write]]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    reader.feed_data(bytes(lines.rest))
    lines.rest.clear()
    reading, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(lines.fd, "rb", buffering=0, closefd=False)
    )
    flow = _Flow()
    writing, _ = await loop.connect_write_pipe(lambda: flow, os.fdopen(out_fd, "wb", buffering=0, closefd=False))

    async def read_line() -> str:
        return (await reader.readline()).decode("utf-8", "replace")

    async def write(data: bytes) -> None:
        writing.write(data)
        await flow.drain()

    try:
        yield read_line, write
    finally:
        reading.close()
        writing.close()  # once what is buffered is written
        with anyio.move_on_after(CLOSE_SECONDS, shield=True):
            await flow.lost.wait()
        for fd in (lines.fd, out_fd):
            with contextlib.suppress(OSError):
                os.set_blocking(fd, True)


@contextlib.asynccontextmanager
async def _in_a_thread(lines: LineSource, out_fd: int) -> AsyncIterator[tuple[ReadLine, Write]]:
    async def read_line() -> str:
        return await anyio.to_thread.run_sync(lines.readline, abandon_on_cancel=True)

    def write_all(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(out_fd, view) :]

    async def write(data: bytes) -> None:
        await anyio.to_thread.run_sync(write_all, data)

    yield read_line, write


def _parsed(line: str) -> SessionMessage | Exception:
    """A line as the session reads it: its message, or why it is not one."""
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except Exception as error:  # the session answers it (mcp.server.stdio sends it the same way)
        return error


async def serve(server: Any, replay: list[str], lines: LineSource, out_fd: int, answered: set[Any]) -> None:
    """Run the SDK's low-level ``server`` over stdin (``replay`` first, then ``lines``) and
    ``out_fd``, until stdin ends. Its answers to the requests in ``answered`` (answered
    before it was up) are not sent again."""
    transport = _on_the_loop if _pipe(lines.fd) and _pipe(out_fd) else _in_a_thread
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
    unanswered = set(answered)

    async with transport(lines, out_fd) as (read_line, write):

        async def reading() -> None:
            async with read_send:
                for line in replay:
                    await read_send.send(_parsed(line))
                while True:
                    try:
                        line = await read_line()
                    except ValueError as error:  # a line over LINE_LIMIT (the rest of it is read as a line)
                        await read_send.send(error)
                        continue
                    if not line:
                        return
                    await read_send.send(_parsed(line))

        async def writing() -> None:
            async with write_receive:
                async for session_message in write_receive:
                    message = session_message.message
                    answer = isinstance(message, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError)
                    if answer and message.id in unanswered:  # type: ignore[union-attr]  # (an answer has an id)
                        unanswered.discard(message.id)  # type: ignore[union-attr]
                        continue
                    await write(message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n")

        async with anyio.create_task_group() as group:
            group.start_soon(reading)
            group.start_soon(writing)
            async with write_send:
                await server.run(read_receive, write_send, server.create_initialization_options())
