"""``archivist mcp`` over stdio: the SDK's own stdio transport, given this session's streams, and
the handshake, ``tools/list`` and a first search answered before the MCP SDK has loaded.

Importing the MCP SDK takes about a second on two cores (pydantic builds its protocol
models). A client sends ``initialize``, waits for its answer, then usually lists the
tools, and only then calls one. So this module (standard library only) answers those
itself, from the SDK's own answers to ``initialize`` and ``tools/list`` for this
installation, kept in the cache folder (``LISTING_FILE``) by an earlier start under
``listing_key()``: a hash of all that shapes the tools (the Python's and the SDK's
versions, the kinds installed from other packages, Archivist's own source).
A start that finds none kept for its key lets the SDK answer, and keeps the SDK's
answers for the next. It answers ``ping`` too, and a ``search`` (``early_call``), from
the same search the tool runs, when its arguments are of the exact JSON types its input
schema names (or null, where leaving one out passes none, or a list as one string),
which the SDK would take as they are; a test holds the answers to the SDK's own. Anything else is the SDK's.

The SDK loads in a thread once the client has been silent for a moment after an answer
(``IDLE_SECONDS``), as an agent is while it thinks: loading meanwhile would halve the
speed of the answers given here (both hold the GIL). In that thread an archive that has
been embedded first gets its model and vectors loaded, for the search a client calls
first (which, sent meanwhile, waits for that load rather than making its own).

The first message that needs the SDK waits for it. The SDK then serves the session with
its own stdio transport (``mcp.server.stdio.stdio_server``) on the streams this module
gives it (``SessionInput``, ``SessionOutput``): every line read so far but those answered
here (``initialize`` aside), so that its session starts normally, then the rest of
stdin; its own second answer to ``initialize``, the same text, is left out.

Everything else on stdout is protocol: file descriptor 1 is pointed at stderr
while the server runs, so stray output of libraries cannot reach the client.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import math
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, Protocol

from archivist.errors import ArchivistError
from archivist.mcp import LINE_LIMIT

# The SDK's answers kept for a start: [{"key": listing_key(), "initialize": {the protocol version a
# client asks for ("*": one the SDK does not speak): the SDK's initialize result}, "tools/list":
# [{"versions": [protocol versions], "result": its tools/list result}]}, ...], the latest first:
# the SDK shapes a result by the version agreed on.
LISTING_FILE = "mcp-listing.json"
KEPT = 4  # the listings kept: one for each installation that starts a server (a checkout, a test's plugins, ...)
OTHER_VERSION = "*"
# A client silent this long after an answer is thinking, or waiting for its user: the SDK loads then.
# (A client's requests at startup come within a few milliseconds of their answers.)
IDLE_SECONDS = 0.05
PACKAGE = Path(__file__).resolve().parent.parent
SOURCES = (".py", ".toml", ".sql", ".md", ".json")  # what the tools' names, schemas and descriptions are made of
logger = logging.getLogger("archivist")


def installed_cache() -> Path:
    from archivist import installed

    return installed.cache_dir()


def _sources(folder: Path) -> list[tuple[str, int, int]]:
    """Each source file under ``folder``: its path, modification time and size."""
    found: list[tuple[str, int, int]] = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    found += _sources(Path(entry.path))
            elif entry.name.endswith(SOURCES):
                stat = entry.stat()
                found.append((entry.path, stat.st_mtime_ns, stat.st_size))
    return sorted(found)


def listing_key() -> str:
    """What shapes the tools the SDK lists, hashed: the Python's and the SDK's versions, the kinds
    installed from other packages (the ``archivist`` entry points) and Archivist's own source, each
    file by its time and size (its tools and the built-in kinds' declarations; another version of
    Archivist is other files)."""
    from archivist import installed

    facts = [sys.version, installed.version("mcp"), installed.entry_points(), _sources(PACKAGE)]
    return hashlib.sha256(json.dumps(facts).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Listing:
    """The SDK's answers kept for this installation: ``initialize`` results by the protocol version a
    client asks for (``OTHER_VERSION`` for any other), ``tools/list`` results by the version agreed."""

    initialize: dict[str, dict[str, Any]]
    tools: dict[str, dict[str, Any]]


def _kept_listings() -> list[Any]:
    try:
        kept = json.loads((installed_cache() / LISTING_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return kept if isinstance(kept, list) else []


def load_listing(key: str | None = None) -> Listing | None:
    """The SDK's answers kept for this installation (``key``: ``listing_key()``); none when they were
    kept for another, or not at all (the SDK answers then, and keeps them for the next start)."""
    key = key or listing_key()
    return listing_of(
        next((kept for kept in _kept_listings() if isinstance(kept, dict) and kept.get("key") == key), None)
    )


def listing_of(kept: Any) -> Listing | None:
    """The listing in what ``sdk_listing`` made; none for anything else."""
    try:
        initialize = kept["initialize"]
        tools = {version: shape["result"] for shape in kept["tools/list"] for version in shape["versions"]}
    except (KeyError, TypeError):  # not a listing this module wrote
        return None
    if not isinstance(initialize, dict) or not isinstance(initialize.get(OTHER_VERSION), dict):
        return None
    return Listing(initialize, tools)


def early_answer(request: dict[str, Any], listing: Listing) -> dict[str, Any] | None:
    """The answer to an ``initialize`` request, the SDK's own; None for parameters the SDK
    would refuse (the shape of its ``InitializeRequestParams``: it says what is wrong)."""
    params = request.get("params")
    client = params.get("clientInfo") if isinstance(params, dict) else None
    if (
        not isinstance(params, dict)
        or not isinstance(params.get("protocolVersion"), str)
        or not isinstance(params.get("capabilities"), dict)
        or not isinstance(client, dict)
        or not isinstance(client.get("name"), str)
        or not isinstance(client.get("version"), str)
    ):
        return None
    result = listing.initialize.get(params["protocolVersion"], listing.initialize[OTHER_VERSION])
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


# the JSON schema keywords a tool's input schema uses that _of_schema checks (or that check nothing)
SCHEMA_KEYWORDS = {
    *("type", "anyOf", "items", "additionalProperties", "default", "title", "description"),
    *("enum", "minimum", "maximum"),
}


def _of_schema(value: Any, schema: Any) -> bool:
    """Whether ``value``, as JSON decoded it, is of a type ``schema`` names exactly: one the SDK's
    validation keeps as it is. False for what it would convert (a number in a string, an
    integer where a float is asked) and for any schema keyword not known here: the SDK
    judges those. (``_message`` has left text that is not valid Unicode to the SDK.)"""
    if not isinstance(schema, dict) or set(schema) - SCHEMA_KEYWORDS:
        return False
    if "anyOf" in schema:
        typed = isinstance(schema["anyOf"], list) and any(_of_schema(value, option) for option in schema["anyOf"])
    else:
        typed = _of_type(value, schema)
    return typed and _within(value, schema)


def _within(value: Any, schema: dict[str, Any]) -> bool:
    """Whether a value is one of the schema's ``enum`` and, a number, within its bounds (a schema
    whose choices or bounds are not plain JSON values is the SDK's to judge)."""
    choices, low, high = schema.get("enum"), schema.get("minimum"), schema.get("maximum")
    if choices is not None and not (isinstance(choices, list) and any(_same(value, choice) for choice in choices)):
        return False
    if any(bound is not None and not _number(bound) for bound in (low, high)):
        return False
    if not _number(value):  # (bounds are a number's)
        return True
    return (low is None or value >= low) and (high is None or value <= high)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same(value: Any, choice: Any) -> bool:
    """Whether a value is a choice, of its very type (JSON's true is not 1)."""
    return type(value) is type(choice) and value == choice


def _of_type(value: Any, schema: dict[str, Any]) -> bool:
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
    or its docs/errors.md error), from ``workspaces`` (a ``calls.Workspaces``); None for any other call,
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
    omitted = _omitted()
    if set(properties) != set(omitted) or not all(
        name in properties and _taken(value, properties[name], omitted[name]) for name, value in arguments.items()
    ):
        return None
    values = omitted | arguments
    workspace_path = values.pop("workspace_path", None)
    try:
        payload = workspaces.archive(workspace_path).search(search_params(values))
    except ArchivistError as error:
        return tool_error(error)
    except Exception:
        logger.debug("an early search failed: the SDK runs it again", exc_info=True)
        return None
    return tool_result(payload)


def _taken(value: Any, schema: Any, omitted: Any) -> bool:
    """Whether the SDK takes an argument as it is: of a type its schema names (``_of_schema``), null where
    leaving it out passes none (``omitted``), or a list as one comma-separated string: the two the SDK
    takes and the listing leaves unsaid."""
    if not isinstance(schema, dict) or set(schema) - SCHEMA_KEYWORDS:
        return False
    if value is None:
        return omitted is None
    if isinstance(value, str) and schema.get("type") == "array":
        return True
    return _of_schema(value, schema)


def _omitted() -> dict[str, Any]:
    """What the SDK passes for each of search's arguments left out: ``Param.omitted``, the signature's
    default (its declared default, but a number's none, and an empty one the listing leaves unsaid)."""
    from archivist.queries.declarations import QUERIES, WORKSPACE

    return {param.name: param.omitted for param in (*QUERIES["search"].inputs, WORKSPACE)}


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

    ``listing`` gives the SDK's answers kept with the package (None when the SDK installed
    did not write them: the SDK answers everything then). ``call`` answers a ``tools/call``
    (its params, and the session's ``tools/list`` result) or returns None to leave it to
    the SDK; it is asked only after the client's ``notifications/initialized`` and while
    ``sdk_ready()`` is false.
    """

    def __init__(
        self,
        protocol_in: LineReader,
        protocol_out: IO[str],
        listing: Callable[[], Listing | None],
        call: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any] | None] = lambda params, tools: None,
        sdk_ready: Callable[[], bool] = lambda: False,
    ) -> None:
        self._in = protocol_in
        self._out = protocol_out
        self._listing = listing  # read at the first message
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
                listing = self._listing()
                answer = None if listing is None else early_answer(message, listing)
                if listing is None or answer is None:
                    return  # the SDK answers: none kept for this installation, or it refuses the params
                self._answer(answer)
                self._tools = listing.tools.get(answer["result"]["protocolVersion"])
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
    """The lines of a file descriptor, read unbuffered, each with its newline, and cut at
    ``LINE_LIMIT`` (what is left of a longer one is read as a line of its own); empty at
    the end. What was read past the last line given stays in ``rest``, for the next."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.rest = bytearray()
        self._ended = False

    def readline(self) -> str:
        """The next line, as UTF-8 (a byte that is not: U+FFFD)."""
        return self.line().decode("utf-8", "replace")

    def line(self) -> bytes:
        while (end := self.rest.find(b"\n", 0, LINE_LIMIT)) < 0 and not self._ended and len(self.rest) < LINE_LIMIT:
            chunk = os.read(self.fd, 65536)
            self.rest += chunk
            self._ended = not chunk
        size = end + 1 if end >= 0 else min(len(self.rest), LINE_LIMIT)  # (a line too long: cut)
        line = bytes(self.rest[:size])
        del self.rest[:size]
        return line


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


class Pending:
    """The requests handed to the SDK that it has not answered yet: where the client's input ends
    (stdin closed), the session ends once they are answered (``END_WAIT_SECONDS`` at most), so that a
    client that sends its requests and closes its input still gets every answer."""

    def __init__(self) -> None:
        self._ids: set[Any] = set()
        self._changed = threading.Condition()

    def asked(self, line: str) -> None:
        message = _message(line)
        if message is not None and "method" in message and _plain_id(message.get("id")):
            with self._changed:
                self._ids.add(message["id"])

    def answered(self, message: dict[str, Any]) -> None:
        if "result" in message or "error" in message:
            with self._changed:
                self._ids.discard(message.get("id"))
                self._changed.notify_all()

    def wait(self, seconds: float) -> None:
        with self._changed:
            self._changed.wait_for(lambda: not self._ids, timeout=seconds)


END_WAIT_SECONDS = 60  # the most the end of a client's input waits for the answers still owed


class SessionInput:
    """What the SDK's transport reads, line by line: ``replay`` (lines already read), then the rest of
    ``lines``; at their end, once the requests read are answered (``Pending``)."""

    def __init__(self, replay: list[str], lines: Lines, pending: Pending) -> None:
        self._replay = list(replay)
        self._lines = lines
        self._pending = pending

    def readline(self) -> str:
        line = self._replay.pop(0) if self._replay else self._lines.readline()
        if line:
            self._pending.asked(line)
        else:
            self._pending.wait(END_WAIT_SECONDS)
        return line


class SessionOutput:
    """What the SDK's transport writes: file descriptor ``fd``, less the SDK's answers to the requests
    in ``answered`` (answered before it was up). The transport writes a message, then its newline."""

    def __init__(self, fd: int, answered: set[Any], pending: Pending) -> None:
        self._fd = fd
        self._unanswered = set(answered)
        self._pending = pending
        self._partial = ""  # a line not yet whole

    def write(self, text: str) -> int:
        *lines, self._partial = (self._partial + text).split("\n")
        out = "".join(line + "\n" for line in lines if not self._answered_before(line)).encode("utf-8")
        view = memoryview(out)
        while view:
            view = view[os.write(self._fd, view) :]
        for line in lines:  # (told once written: the session may end then)
            message = _message(line)
            if message is not None:
                self._pending.answered(message)
        return len(text)

    def flush(self) -> None:
        """Everything whole is written already."""

    def _answered_before(self, line: str) -> bool:
        if not self._unanswered:
            return False
        message = _message(line)
        if message is None or not ("result" in message or "error" in message):
            return False
        answer_id = message.get("id")
        if not _plain_id(answer_id) or answer_id not in self._unanswered:
            return False
        self._unanswered.discard(answer_id)
        return True


def _lowlevel(server: Any) -> Any:
    """The MCP server's low-level server, which serves a session over any pair of message streams."""
    return server._lowlevel_server


async def _serve_session(server: Any, session_in: SessionInput, session_out: SessionOutput) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    async with stdio_server(anyio.wrap_file(session_in), anyio.wrap_file(session_out)) as (read, write):  # type: ignore[arg-type]
        low = _lowlevel(server)
        await low.run(read, write, low.create_initialization_options())


def run_sdk(server: Any, replay: list[str], lines: Lines, out_fd: int, answered: set[Any]) -> None:
    """Serve a session with the SDK's own stdio transport, given this session's streams (its
    ``stdio_server(stdin, stdout)``): ``replay``, then the rest of ``lines``, answered on
    ``out_fd`` but for the requests in ``answered``, until ``lines`` ends."""
    import anyio

    pending = Pending()
    anyio.run(_serve_session, server, SessionInput(replay, lines, pending), SessionOutput(out_fd, answered, pending))


async def _session_answers(server: Any, messages: list[dict[str, Any]]) -> dict[Any, Any]:
    """The answers of the SDK's session on ``server`` to ``messages``, each by its request's id, as JSON."""
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    to_server, server_reads = anyio.create_memory_object_stream[Any](len(messages))
    server_writes, from_server = anyio.create_memory_object_stream[Any](len(messages) + 16)
    low = _lowlevel(server)
    answers: dict[Any, Any] = {}
    async with anyio.create_task_group() as group:
        group.start_soon(low.run, server_reads, server_writes, low.create_initialization_options())
        for message in messages:
            await to_server.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(message)))
            while "id" in message and message["id"] not in answers:
                answer = json.loads(
                    (await from_server.receive()).message.model_dump_json(by_alias=True, exclude_unset=True)
                )
                if "result" in answer or "error" in answer:
                    answers[answer["id"]] = answer
        await to_server.aclose()
    return answers


def sdk_answers(
    protocol_version: str, requests: list[dict[str, Any]], db_path: Path = Path("archive.db"), server: Any = None
) -> dict[Any, Any]:
    """What the SDK alone answers in a session on ``db_path`` (or of ``server``) that starts with
    ``initialize`` for ``protocol_version`` (its answer is under the id "initialize") and goes on
    with ``requests``: each answer by its request's id, as JSON. Listing the tools opens no archive."""
    import anyio

    from archivist.mcp.tools import create_server

    handshake: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": "initialize", "method": "initialize", "params": {"protocolVersion": protocol_version,
         "capabilities": {}, "clientInfo": {"name": "archivist", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]  # fmt: skip
    return anyio.run(_session_answers, server or create_server(db_path), handshake + requests)


def sdk_listing() -> dict[str, Any]:
    """What the listing cache holds for this installation: the SDK's answers to ``initialize``, for
    each protocol version it offers at the handshake and for another, and to ``tools/list`` in each."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from archivist.mcp.tools import create_server

    server = create_server(Path("archive.db"))  # (listing the tools opens no archive)
    listing = [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]
    initialize: dict[str, Any] = {}
    shapes: list[dict[str, Any]] = []
    for asked in (*HANDSHAKE_PROTOCOL_VERSIONS, OTHER_VERSION):
        answers = sdk_answers(asked, listing if asked != OTHER_VERSION else [], server=server)
        initialize[asked] = answers["initialize"]["result"]
        if asked == OTHER_VERSION:
            continue  # (its session's version is one of those listed)
        agreed, result = initialize[asked]["protocolVersion"], answers[1]["result"]
        same = next((shape for shape in shapes if shape["result"] == result), None)
        if same is None:
            shapes.append({"versions": [agreed], "result": result})
        else:
            same["versions"].append(agreed)
    return {"initialize": initialize, "tools/list": shapes}


def write_listing(key: str) -> None:
    """Keep the SDK's answers for this installation (``key``: ``listing_key()``) in the cache folder,
    with those kept for others (``KEPT`` in all)."""
    others = [kept for kept in _kept_listings() if isinstance(kept, dict) and kept.get("key") != key]
    listings = [{"key": key, **sdk_listing()}, *others][:KEPT]
    path = installed_cache() / LISTING_FILE
    with contextlib.suppress(OSError):  # a cache that cannot be written only costs the SDK's answers next time
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{LISTING_FILE}.{os.getpid()}")
        temporary.write_text(json.dumps(listings, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
        os.replace(temporary, path)


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
        from archivist.mcp.tools import create_server

        server = create_server(db_path, test_fixtures=test_fixtures, workspaces=workspaces())
        key, kept = keyed()
        if kept is None:  # the SDK answers this start: its answers are kept for the next
            write_listing(key)
        return server

    loading: list[_InThread] = []
    starting = threading.Lock()

    def start_loading() -> None:
        with starting:
            if not loading:
                loading.append(_InThread("mcp-sdk", load_sdk))

    known: list[tuple[str, Listing | None]] = []  # this installation's key, and the SDK's answers kept for it

    def keyed() -> tuple[str, Listing | None]:
        with opening:
            if not known:
                key = listing_key()
                known.append((key, load_listing(key)))
            return known[0]

    def listing() -> Listing | None:
        kept = keyed()[1]
        # the fixtures' tools are not kept: the SDK lists them
        return replace(kept, tools={}) if kept is not None and test_fixtures else kept

    lobby = Lobby(
        protocol_in,
        protocol_out,
        listing,
        call=lambda params, tools: early_call(tools, params, workspaces()),
        sdk_ready=lambda: bool(loading) and loading[0].finished(),
    )
    lobby.read(start_loading)
    if not lobby.lines:
        return  # stdin closed before any message
    run_sdk(loading[0].result(), lobby.lines, protocol_in, out_fd, lobby.answered)
