"""``archivist mcp`` over stdio, answering the handshake, ``tools/list`` and a first search before the MCP SDK has loaded.

Importing the MCP SDK takes about a second on two cores (pydantic builds its protocol
models). A client sends ``initialize``, waits for its answer, then usually lists the
tools, and only then calls one. So this module (standard library only) answers those
itself: ``initialize`` from what the server says about itself and the SDK's version
table (read without importing it), ``tools/list`` from ``tools.json``, the SDK's own
answer for this package's tools, written by ``python -m archivist.mcp.stdio`` and
checked by a test, and ``ping``. A ``search`` is answered too (``early_call``), from
the same search the tool runs, when its arguments are of the exact JSON types its input
schema names, which the SDK would take as they are; a test holds the answers to the
SDK's own. Anything else is the SDK's.

The SDK loads in a thread once the client has been silent for a moment after an answer
(``IDLE_SECONDS``), as an agent is while it thinks: loading meanwhile would halve the
speed of the answers given here (both hold the GIL). In that thread an archive that has
been embedded first gets its model and vectors loaded, for the search a client calls
first (which, sent meanwhile, waits for that load rather than making its own).

The first message that needs the SDK waits for it. The SDK is then given every
message read so far but those answered here (``initialize`` aside), so that its session
starts normally, and its own second answer to ``initialize``, the same text, is not
sent. From there on ``transport`` carries its messages.

Everything else on stdout is protocol: file descriptor 1 is pointed at stderr
while the server runs, so stray output of libraries cannot reach the client.
"""

from __future__ import annotations

import importlib.util
import io
import json
import logging
import math
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Protocol, cast

from archivist.errors import ArchivistError
from archivist.mcp import CAPABILITIES, INSTRUCTIONS, LINE_LIMIT, NAME


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


# {"sdk": the SDK's version, "results": [{"versions": [protocol versions], "result": the tools/list
# result}]}: the SDK shapes a result by the protocol version the session agreed on.
TOOLS_FILE = Path(__file__).with_name("tools.json")
# A client silent this long after an answer is thinking, or waiting for its user: the SDK loads then.
# (A client's requests at startup come within a few milliseconds of their answers.)
IDLE_SECONDS = 0.05
logger = logging.getLogger("archivist")


def _sdk_version() -> str | None:
    """The installed SDK's version, from the name of its ``mcp-VERSION.dist-info`` folder beside it
    (``importlib.metadata`` would cost the first answers a few tens of milliseconds)."""
    spec = importlib.util.find_spec("mcp")
    if spec is None or not spec.submodule_search_locations:
        return None
    site = Path(next(iter(spec.submodule_search_locations))).parent
    try:
        names = [entry.name for entry in os.scandir(site) if entry.name.startswith("mcp-")]
    except OSError:
        return None
    versions = [name[4 : -len(".dist-info")] for name in names if name.endswith(".dist-info")]
    return versions[0] if len(versions) == 1 else None


def tools_listing() -> dict[str, Any]:
    """The SDK's ``tools/list`` results for this package's tools, by protocol version, when
    ``tools.json`` was written by the SDK installed; else none (the SDK answers then)."""
    try:
        listing = json.loads(TOOLS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(listing, dict) or listing.get("sdk") != _sdk_version():
        return {}
    try:
        return {version: shape["result"] for shape in listing["results"] for version in shape["versions"]}
    except (KeyError, TypeError):  # not a listing this module wrote
        return {}


async def sdk_answers(
    protocol_version: str, requests: list[dict[str, Any]], db_path: Path = Path("archive.db")
) -> dict[Any, Any]:
    """What the SDK answers ``requests`` (after its handshake) in a session of ``protocol_version``
    on ``db_path``, by id, as JSON on stdout; listing the tools opens no archive."""
    import anyio
    import mcp_types
    from mcp.shared.message import SessionMessage

    from archivist.mcp.tools import create_server

    server = create_server(db_path)._lowlevel_server
    handshake: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": "initialize", "method": "initialize", "params": {"protocolVersion": protocol_version,
         "capabilities": {}, "clientInfo": {"name": "archivist", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]  # fmt: skip
    to_server, server_reads = anyio.create_memory_object_stream[Any](10)
    server_writes, from_server = anyio.create_memory_object_stream[Any](10)
    answers: dict[Any, Any] = {}
    async with anyio.create_task_group() as group:
        group.start_soon(server.run, server_reads, server_writes, server.create_initialization_options())
        for request in handshake + requests:
            await to_server.send(SessionMessage(mcp_types.jsonrpc_message_adapter.validate_python(request)))
            if "id" in request:
                answer = await from_server.receive()
                # as mcp.server.stdio writes it
                answers[request["id"]] = json.loads(answer.message.model_dump_json(by_alias=True, exclude_unset=True))
        group.cancel_scope.cancel()
    del answers["initialize"]
    return answers


async def _sdk_tools_list(protocol_version: str) -> dict[str, Any]:
    """What the SDK answers ``tools/list`` in a session of ``protocol_version``."""
    answers = await sdk_answers(protocol_version, [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}])
    return cast(dict[str, Any], answers[1]["result"])


def write_tools_file() -> None:
    """Write ``tools.json`` from the SDK installed: ``python -m archivist.mcp.stdio``."""
    import anyio

    versions, _ = _sdk_versions()
    shapes: list[dict[str, Any]] = []
    for version in versions:
        result = anyio.run(_sdk_tools_list, version)
        same = next((shape for shape in shapes if shape["result"] == result), None)
        if same is None:
            shapes.append({"versions": [version], "result": result})
        else:
            same["versions"].append(version)
    listing = {"sdk": _sdk_version(), "results": shapes}
    TOOLS_FILE.write_text(json.dumps(listing, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"tools.json: tools/list for {', '.join(versions)}")


# the JSON schema keywords a tool's input schema uses that _of_schema checks (or that check nothing)
SCHEMA_KEYWORDS = {"type", "anyOf", "items", "additionalProperties", "default", "title", "description"}


def _of_schema(value: Any, schema: Any) -> bool:
    """Whether ``value``, as JSON decoded it, is of a type ``schema`` names exactly: one the SDK's
    validation keeps as it is. False for what it would convert (a number in a string, an
    integer where a float is asked) and for any schema keyword not known here: the SDK
    judges those. (``_message`` has left text that is not valid Unicode to the SDK.)"""
    if not isinstance(schema, dict) or set(schema) - SCHEMA_KEYWORDS:
        return False
    if "anyOf" in schema:
        return isinstance(schema["anyOf"], list) and any(_of_schema(value, option) for option in schema["anyOf"])
    kind = schema.get("type")
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63
    if kind == "number":
        return isinstance(value, float) and math.isfinite(value)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list) and all(_of_schema(item, schema.get("items")) for item in value)
    if kind == "object":  # an object of anything (encoding_context): its content is not read
        return isinstance(value, dict) and schema.get("additionalProperties") is True and "properties" not in schema
    return False


def early_call(tools: dict[str, Any], params: dict[str, Any], workspaces: Any) -> dict[str, Any] | None:
    """The result of a ``tools/call`` of ``search`` as the SDK would give it (the search's answer,
    or its SPEC §5 error), from ``workspaces`` (a ``calls.Workspaces``); None for any other call,
    for arguments the SDK should judge (see ``_of_schema``), and when the search fails
    unexpectedly (the SDK runs it again, and logs why)."""
    from archivist.mcp.calls import search_params, tool_error, tool_result

    arguments = params.get("arguments")
    if (
        params.get("name") != "search"
        or set(params) - {"name", "arguments", "_meta"}
        or not isinstance(arguments, dict)
    ):
        return None
    schema = next((tool["inputSchema"] for tool in tools.get("tools", []) if tool.get("name") == "search"), None)
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict) or schema.get("required"):
        return None
    properties = schema["properties"]
    if not all(name in properties and _of_schema(value, properties[name]) for name, value in arguments.items()):
        return None
    values = {name: schema_of.get("default") for name, schema_of in properties.items()} | arguments
    workspace_path = values.pop("workspace_path", None)
    try:
        payload = workspaces.archive(workspace_path).search(search_params(values))
    except ArchivistError as error:
        return tool_error(error)
    except Exception:
        logger.debug("an early search failed: the SDK runs it again", exc_info=True)
        return None
    return tool_result(payload)


def _plain_id(value: Any) -> bool:
    """Whether a request id is one that this module answers: a string or a whole number."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def _message(line: str) -> dict[str, Any] | None:
    """A line's JSON object; None for anything the SDK's stricter parser may read otherwise (it says
    what is wrong): not JSON, not an object, NaN or Infinity, a lone surrogate (a \\ud800 escape)
    anywhere in it, nesting too deep for Python."""
    try:
        message = json.loads(line, parse_constant=_not_json)
        json.dumps(message, ensure_ascii=False).encode("utf-8")  # (UnicodeEncodeError is a ValueError)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


class LineReader(Protocol):
    def readline(self) -> str: ...


class Lobby:
    """Answers what a client asks first (``initialize``, ``tools/list``, a ``search``) while the SDK loads.

    ``read`` reads messages until one needs the SDK (or stdin ends), answering those it can;
    ``lines`` then holds the lines for the SDK to read again: all but the requests answered
    here, which its session needs no more than a client needs a second answer, and but
    ``initialize``, which the session starts with. ``answered`` holds the ids of those it
    reads again whose answers went out (``initialize``'s).

    ``call`` answers a ``tools/call`` (its params, and the session's ``tools/list`` result)
    or returns None to leave it to the SDK; it is asked only after the client's
    ``notifications/initialized`` and while ``sdk_ready()`` is false.
    """

    def __init__(
        self,
        protocol_in: LineReader,
        protocol_out: IO[str],
        tools: Callable[[], dict[str, Any]],
        call: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any] | None] = lambda params, tools: None,
        sdk_ready: Callable[[], bool] = lambda: False,
    ) -> None:
        self._in = protocol_in
        self._out = protocol_out
        self._tools_by_version = tools  # read once initialize is answered
        self._tools: Any = None  # the tools/list result for the session's protocol version
        self._call = call
        self._sdk_ready = sdk_ready
        self._initialized = False  # whether the client said so
        self.lines: list[str] = []
        self.answered: set[Any] = set()
        self._early: set[Any] = set()  # the ids of the requests answered here whose lines were dropped
        self.done = False  # whether a message (or the end of stdin) has come that needs the SDK

    def _answer(self, message: dict[str, Any]) -> None:
        self._out.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._out.flush()
        self.answered.add(message["id"])

    def _answer_instead(self, request: dict[str, Any], result: dict[str, Any]) -> None:
        """Answer a request the SDK will not read again."""
        self._answer({"jsonrpc": "2.0", "id": request["id"], "result": result})
        self.lines.pop()
        self.answered.discard(request["id"])
        self._early.add(request["id"])

    def read(self, start_sdk: Callable[[], None] = lambda: None, idle_seconds: float = IDLE_SECONDS) -> None:
        """Read and answer. ``start_sdk`` runs (from a timer's thread) once the client has been silent
        for ``idle_seconds`` after an answer, and when reading ends; it may run twice."""
        try:
            self._read(start_sdk, idle_seconds)
        finally:
            self.done = True
            start_sdk()  # stdin ended, or a message needs the SDK

    def _read(self, start_sdk: Callable[[], None], idle_seconds: float) -> None:
        while True:
            # The SDK loads while the client is silent: a thread importing it would hold the GIL
            # half the time, and an answer given meanwhile (a search loading the model) would
            # take twice as long.
            silence = threading.Timer(idle_seconds, start_sdk) if self.answered or self._early else None
            if silence is not None:
                silence.daemon = True
                silence.start()
            try:
                line = self._in.readline()
            finally:
                if silence is not None:
                    silence.cancel()
            if not line:
                return
            self.lines.append(line)
            message = _message(line)
            if message is None or message.get("jsonrpc") != "2.0":
                return  # the SDK says what is wrong with it
            method, has_id = message.get("method"), _plain_id(message.get("id"))
            params = message.get("params", {})
            if not isinstance(params, dict):
                return  # malformed: the SDK says so
            if len(self.lines) == 1:
                if method != "initialize" or not has_id:
                    return  # a session starts with initialize: the SDK answers anything else
                answer = early_answer(message)
                self._answer(answer)
                self._tools = self._tools_by_version().get(answer["result"]["protocolVersion"])
                continue
            new_request = has_id and message["id"] not in self.answered | self._early
            listed = new_request and self._tools is not None  # (the tools of the SDK installed are known)
            if method == "notifications/initialized" and not has_id:
                self._initialized = True
            elif method == "ping" and new_request and not params:
                self._answer_instead(message, {})
            elif method == "tools/list" and listed and not params.get("cursor"):
                self._answer_instead(message, self._tools)
            elif method == "tools/call" and listed and self._initialized and not self._sdk_ready():
                result = self._call(params, self._tools)
                if result is None:
                    return
                self._answer_instead(message, result)
            else:
                return


class Lines:
    """The lines of a file descriptor, read unbuffered, as UTF-8 (a byte that is not: U+FFFD), each
    with its newline; "" at the end. What was read past the last line given stays in ``rest``,
    so that whoever reads on (``transport``) misses nothing."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.rest = bytearray()
        self._ended = False

    def readline(self) -> str:
        while (end := self.rest.find(b"\n", 0, LINE_LIMIT)) < 0 and not self._ended and len(self.rest) < LINE_LIMIT:
            chunk = os.read(self.fd, 65536)
            self.rest += chunk
            self._ended = not chunk
        size = end + 1 if end >= 0 else min(len(self.rest), LINE_LIMIT)  # (a line too long: cut)
        line = bytes(self.rest[:size])
        del self.rest[:size]
        return line.decode("utf-8", "replace")


class _InThread:
    """A function run in a daemon thread; ``result`` waits for it and returns what it returned, or raises what it raised."""

    def __init__(self, name: str, function: Any) -> None:
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(function,), name=name, daemon=True)
        self._thread.start()

    def _run(self, function: Any) -> None:
        try:
            self._value = function()
        except BaseException as error:  # handed to whoever waits for it
            self._error = error

    def finished(self) -> bool:
        return not self._thread.is_alive()

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def _preload(db_path: Path) -> None:
    from archivist.queries.runner import preload

    try:
        preload(db_path)
    except Exception:  # the first search that needs the model loads it, and says what is wrong
        logger.debug("preloading the embedding model failed", exc_info=True)


def serve(
    db_path: Path, workspace: Path | None = None, allowed: list[Path] | None = None, test_fixtures: bool = False
) -> None:
    """Serve the archive's tools over this process's stdin and stdout."""
    out_fd = os.dup(1)
    protocol_out = io.TextIOWrapper(os.fdopen(out_fd, "wb", closefd=False), encoding="utf-8", write_through=True)
    os.dup2(2, 1)  # from here on, anything printed goes to stderr
    protocol_in = Lines(sys.stdin.fileno())

    opened: list[Any] = []  # the Workspaces, made once: the early search's and the SDK's tools' own
    opening = threading.Lock()

    def workspaces() -> Any:
        with opening:
            if not opened:
                from archivist.mcp.calls import Workspaces

                opened.append(Workspaces(db_path, workspace, allowed or []))
            return opened[0]

    def load_sdk() -> Any:
        if not lobby.done:
            # nothing waits for the SDK yet: the model first, for the search a client calls first
            # (an early search that needs it meanwhile waits for this load, not for a second one)
            _preload(db_path)
        from archivist.mcp import transport
        from archivist.mcp.tools import create_server

        return transport, create_server(db_path, test_fixtures=test_fixtures, workspaces=workspaces())

    loading: list[_InThread] = []
    starting = threading.Lock()

    def start_loading() -> None:
        with starting:
            if not loading:
                loading.append(_InThread("mcp-sdk", load_sdk))

    lobby = Lobby(
        protocol_in,
        protocol_out,
        (lambda: {}) if test_fixtures else tools_listing,
        call=lambda params, tools: early_call(tools, params, workspaces()),
        sdk_ready=lambda: bool(loading) and loading[0].finished(),
    )
    lobby.read(start_loading)
    if not lobby.lines:
        return  # stdin closed before any message
    transport, server = loading[0].result()
    import anyio

    low_level = server._lowlevel_server  # (MCPServer.run_stdio_async runs it so, on the SDK's transport)
    anyio.run(transport.serve, low_level, lobby.lines, protocol_in, out_fd, lobby.answered)


if __name__ == "__main__":
    write_tools_file()
