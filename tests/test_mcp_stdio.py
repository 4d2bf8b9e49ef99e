"""The stdio server's first answers, given before the MCP SDK has loaded: the SDK's own, kept for the
installation at run time, once each; then the SDK's own stdio transport, given the session: pipes,
files and hostile lines."""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from archivist.mcp import stdio
from archivist.mcp.calls import Workspaces
from archivist.mcp.tools import create_server
from archivist.workspace import archive_path

ARCHIVIST = str(Path(sys.executable).parent / "archivist")


def request(id_: object, method: str, params: dict | None = None) -> dict:
    message = {"jsonrpc": "2.0", "id": id_, "method": method}
    return message if params is None else {**message, "params": params}


def initialize(id_: object = 1, version: str = "2025-11-25") -> dict:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
    return request(id_, "initialize", params)


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
CALL = request(5, "tools/call", {"name": "search", "arguments": {"query": "borders", "mode": "keyword"}})


@functools.cache
def listing() -> stdio.Listing:
    """The SDK's answers for this installation, as a start keeps them."""
    kept = stdio.listing_of(stdio.sdk_listing())
    assert kept is not None
    return kept


def lobby(
    *messages: dict | str, kept: Callable[[], stdio.Listing | None] = listing
) -> tuple[stdio.Lobby, list[dict], list[str]]:
    """A lobby fed these messages, with the SDK's answers ``kept``: itself, what it answered, and
    when the SDK would have been started."""
    lines = "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in messages)
    out = io.StringIO()
    started: list[str] = []
    room = stdio.Lobby(io.StringIO(lines), out, kept)
    room.read(lambda: started.append("sdk"))
    return room, [json.loads(line) for line in out.getvalue().splitlines()], started


def test_a_start_keeps_the_sdks_answers_for_the_next(tmp_path, monkeypatch):
    """None kept for this installation: the SDK answers, and its answers are kept under the key."""
    monkeypatch.setenv("ARCHIVIST_CACHE_DIR", str(tmp_path))
    key = stdio.listing_key()
    assert stdio.load_listing(key) is None
    stdio.write_listing(key)
    assert stdio.load_listing(key) == listing() and stdio.load_listing() == listing()
    assert sorted(listing().tools) == sorted(HANDSHAKE_PROTOCOL_VERSIONS)
    assert sorted(listing().initialize) == sorted([*HANDSHAKE_PROTOCOL_VERSIONS, stdio.OTHER_VERSION])
    # another installation's are kept beside them, up to KEPT
    for other in range(stdio.KEPT):
        stdio.write_listing(f"other-{other}")
    assert stdio.load_listing(key) is None and stdio.load_listing(f"other-{stdio.KEPT - 1}") == listing()
    assert len(json.loads((tmp_path / stdio.LISTING_FILE).read_text(encoding="utf-8"))) == stdio.KEPT


def test_the_key_changes_with_whatever_shapes_the_tools(tmp_path, monkeypatch):
    from archivist import installed

    key = stdio.listing_key()
    assert stdio.listing_key() == key
    points = installed.entry_points()
    monkeypatch.setattr(installed, "entry_points", lambda: [*points, ("crush", "crush_kind")])
    assert stdio.listing_key() != key  # a kind installed from another package
    monkeypatch.setattr(installed, "entry_points", lambda: points)
    monkeypatch.setattr(installed, "version", {"mcp": "0.0.1"}.get)
    assert stdio.listing_key() != key  # another version of the SDK
    monkeypatch.undo()
    source = tmp_path / "archivist" / "agents" / "kind.toml"
    source.parent.mkdir(parents=True)
    source.write_text("name = 'one'\n", encoding="utf-8")
    monkeypatch.setattr(stdio, "PACKAGE", tmp_path / "archivist")
    before = stdio.listing_key()
    source.write_text("name = 'another'\n", encoding="utf-8")  # a built-in kind's declaration changed
    assert stdio.listing_key() != before


def test_a_listing_kept_wrong_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("ARCHIVIST_CACHE_DIR", str(tmp_path))
    kept = tmp_path / stdio.LISTING_FILE
    whole = {"key": "k", **stdio.sdk_listing()}
    kept.write_text(json.dumps([whole]), encoding="utf-8")
    assert stdio.load_listing("k") == listing()
    assert stdio.load_listing("another") is None
    for wrong in ("{broken", json.dumps(whole), json.dumps([1, "k"])):
        kept.write_text(wrong, encoding="utf-8")
        assert stdio.load_listing("k") is None
    for shape in (
        {"tools/list": {"x": 1}},
        {"tools/list": [{"versions": 1}]},
        {"tools/list": None},
        {"initialize": []},
        {"initialize": {"2025-11-25": {}}},  # none for the versions the SDK does not speak
    ):
        kept.write_text(json.dumps([{**whole, **shape}]), encoding="utf-8")
        assert stdio.load_listing("k") is None, shape


def test_a_server_answers_from_the_sdk_then_from_what_it_kept(sample_workspace, tmp_path):
    """The first start of an installation: the SDK lists the tools, and keeps its answers; the
    next start lists the same before the SDK loads."""
    env = {**os.environ, "ARCHIVIST_CACHE_DIR": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    messages = lines_of(INITIALIZE, INITIALIZED, request(2, "tools/list"))
    starts = [
        subprocess.run(
            [ARCHIVIST, "mcp", str(sample_workspace)], input=messages, capture_output=True, env=env, timeout=60
        )
        for _ in range(2)
    ]
    first, second = ([json.loads(line) for line in start.stdout.splitlines()] for start in starts)
    assert [a["id"] for a in first] == [a["id"] for a in second] == [1, 2]
    assert first == second
    kept = json.loads((tmp_path / stdio.LISTING_FILE).read_text(encoding="utf-8"))
    assert len(kept) == 1 and stdio.listing_of(kept[0]) == listing()
    assert second[1]["result"] == listing().tools["2025-11-25"]


@pytest.mark.parametrize(
    "params",
    [
        *(initialize(1, version)["params"] for version in HANDSHAKE_PROTOCOL_VERSIONS),
        initialize(1, "1999-01-01")["params"],  # a version the SDK does not speak
        initialize(1, "2026-07-28")["params"],  # nor at the handshake
        {**initialize()["params"], "capabilities": {"roots": {"listChanged": True}}, "_meta": {"progressToken": 1}},
    ],
)
def test_the_early_initialize_answer_is_the_sdks_own(params):
    """(The SDK answers an initialize within a session as the first: by its params.)"""
    asked = {**initialize("x"), "params": params}
    assert stdio.early_answer(asked, listing()) == stdio.sdk_answers("2025-11-25", [asked])["x"]


@pytest.mark.parametrize(
    "params",
    [
        {"capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
        {"protocolVersion": 20251125, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
        {"protocolVersion": "2025-11-25", "clientInfo": {"name": "test", "version": "1"}},
        {"protocolVersion": "2025-11-25", "capabilities": [], "clientInfo": {"name": "test", "version": "1"}},
        {"protocolVersion": "2025-11-25", "capabilities": {}},
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test"}},
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": 1, "version": "1"}},
    ],
)
def test_initialize_params_the_sdk_refuses_are_left_to_it(params):
    asked = {**initialize("x"), "params": params}
    assert stdio.early_answer(asked, listing()) is None
    assert "error" in stdio.sdk_answers("2025-11-25", [asked])["x"]


def test_initialize_then_tools_list_are_answered_without_the_sdk():
    room, answers, started = lobby(initialize(), INITIALIZED, request(2, "tools/list"), CALL, request(6, "ping"))
    assert [a["id"] for a in answers] == [1, 2] and started == ["sdk"]
    assert answers[0] == stdio.early_answer(initialize(), listing())
    assert answers[1]["result"] == listing().tools["2025-11-25"]
    assert {tool["name"] for tool in answers[1]["result"]["tools"]} >= {"search", "get_document"}
    # the SDK reads the session again without the answered list, up to the call that needed it
    assert [json.loads(line).get("id") for line in room.lines] == [1, None, 5]
    assert room.answered == {1} and room.done


@pytest.mark.parametrize(
    "messages",
    [
        [request(1, "ping"), initialize(2)],  # a session starts with initialize
        [INITIALIZED, initialize()],
        ["{not json", initialize()],
        [{"jsonrpc": "1.0", "id": 1, "method": "initialize"}],
        [initialize([1])],  # ids the lobby answers are strings and numbers
        [initialize(True)],
        [{"jsonrpc": "2.0", "method": "initialize"}],  # a notification is not answered
        [{**initialize(), "params": [1]}],
        [{**initialize(), "params": "2025-11-25"}],
        [{**initialize(), "params": {"protocolVersion": "2025-11-25"}}],  # the SDK refuses these params
        ["[1, 2]"],
    ],
    ids=[
        "ping-first",
        "notification-first",
        "not-json",
        "wrong-version",
        "list-id",
        "bool-id",
        "no-id",
        "list-params",
        "text-params",
        "too-few-params",
        "not-an-object",
    ],
)
def test_anything_else_first_is_left_to_the_sdk(messages):
    room, answers, started = lobby(*messages)
    assert answers == [] and started == ["sdk"] and len(room.lines) == 1 and room.answered == set()


def test_a_list_it_cannot_answer_is_left_to_the_sdk():
    paged = request(2, "tools/list", {"cursor": "x"})
    room, answers, _ = lobby(initialize(), paged)
    assert [a["id"] for a in answers] == [1] and len(room.lines) == 2
    # a listing without this server's tools (its fixtures' tools are not kept)
    room, answers, _ = lobby(
        initialize(), request(2, "tools/list"), kept=lambda: dataclasses.replace(listing(), tools={})
    )
    assert [a["id"] for a in answers] == [1] and len(room.lines) == 2
    # none (none kept for this installation): the SDK answers initialize too
    room, answers, started = lobby(initialize(), request(2, "tools/list"), kept=lambda: None)
    assert answers == [] and len(room.lines) == 1 and started == ["sdk"]
    # nor is an id answered already
    room, answers, _ = lobby(initialize(), request(1, "tools/list"))
    assert [a["id"] for a in answers] == [1] and len(room.lines) == 2
    room, answers, _ = lobby(initialize(), request(2, "tools/list"), request(2, "tools/list"))
    assert [a["id"] for a in answers] == [1, 2] and len(room.lines) == 2
    room, answers, _ = lobby(initialize(), {**request(2, "tools/list"), "params": ["cursor"]})
    assert [a["id"] for a in answers] == [1] and len(room.lines) == 2


# The arguments of searches answered before the SDK loads, each of the exact JSON types the input
# schema names (or a list as one string, types', or a null): keyword, hybrid, semantic, filters of
# each type, full output, and calls whose answer is an error (too short, a workspace not allowed).
EARLY_SEARCHES = [
    {"query": "kubernetes migration", "mode": "keyword"},
    {"query": "kubernetes migration"},
    {"query": "proxy timeout", "mode": "semantic", "page_size": 3, "min_similarity": 0.1},
    {"query": "meeting", "entities": ["conversation", "memory"], "page": 1, "start_date": "2020-01-01"},
    {"query": "search", "tags": ["sqlite", "decision"], "match_all": True, "end_date": "today"},
    {"mode": "recent", "types": "decision", "document": 1, "encoding_context": {"anything": [1]}},
    {"query": "proxy timeout", "output": "full", "product_ids": [598, 601], "workspace_path": None, "limit": 2},
    {"query": "x"},
    {"query": "kubernetes", "workspace_path": "/etc"},
]


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
def test_an_early_search_is_answered_as_the_sdk_answers_it(embedded_sample, version):
    """Answers and errors alike: the early search runs the tool's own search, and says what the SDK says."""
    db_path = archive_path(embedded_sample)
    calls = [{"name": "search", "arguments": arguments} for arguments in EARLY_SEARCHES]
    requests = [request(number, "tools/call", call) for number, call in enumerate(calls)]
    sdk = stdio.sdk_answers(version, requests, db_path)
    tools = listing().tools[version]
    workspaces = Workspaces(db_path)
    codes = []
    for number, call in enumerate(calls):
        early = stdio.early_call(tools, call, workspaces)
        assert early == sdk[number]["result"], call["arguments"]
        assert early is not None
        codes.append(
            early["structuredContent"].get("code") if early["isError"] else early["structuredContent"]["total"]
        )
    assert all(total > 0 for total in codes[:7]), codes  # each search finds something
    assert codes[7:] == ["INVALID_QUERY", "DIRECTORY_NOT_FOUND"]


@pytest.mark.parametrize(
    "params",
    [
        {"name": "search", "arguments": {"query": "borders", "page_size": "3"}},  # the SDK reads "3" as 3
        {"name": "search", "arguments": {"query": "borders", "page": 2.0}},
        {"name": "search", "arguments": {"query": "borders", "page": True}},
        {"name": "search", "arguments": {"query": "borders", "match_all": 1}},
        {"name": "search", "arguments": {"query": "borders", "min_similarity": 1}},  # an int, where a float is asked
        {"name": "search", "arguments": {"query": "borders", "page": 2**70}},
        {"name": "search", "arguments": {"query": "borders", "mode": "sideways"}},  # not one of its enum
        {"name": "search", "arguments": {"query": "borders", "page_size": 0}},  # below its minimum
        {"name": "search", "arguments": {"query": "borders", "page_size": 10_000}},  # above its maximum
        {"name": "search", "arguments": {"query": "borders", "types": [1]}},
        {"name": "search", "arguments": {"query": "borders", "tags": {"a": 1}}},
        {"name": "search", "arguments": {"query": "borders", "nonsense": 1}},
        {"name": "search", "arguments": ["borders"]},
        {"name": "search"},
        {"name": "search", "arguments": {"query": "borders"}, "task": {}},
        {"name": "get_document", "arguments": {"document": 1}},
        {"name": "nonsense", "arguments": {}},
    ],
)
def test_calls_the_sdk_should_judge_are_left_to_it(embedded_sample, params):
    workspaces = Workspaces(archive_path(embedded_sample))
    assert stdio.early_call(listing().tools["2025-11-25"], params, workspaces) is None


def test_a_search_is_answered_early_only_in_a_session_and_before_the_sdk_is_up():
    answered = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {}}

    def run(*messages: dict, sdk_ready: bool = False) -> tuple[stdio.Lobby, list[dict]]:
        out = io.StringIO()
        lines = "".join(json.dumps(message) + "\n" for message in messages)
        kept = listing()
        room = stdio.Lobby(io.StringIO(lines), out, lambda: kept, lambda p, t: answered, lambda: sdk_ready)
        room.read()
        return room, [json.loads(line) for line in out.getvalue().splitlines()]

    ping = request(6, "ping")
    room, answers = run(initialize(), INITIALIZED, CALL, ping, CALL)
    assert answers[1:] == [
        {"jsonrpc": "2.0", "id": 5, "result": answered},
        {"jsonrpc": "2.0", "id": 6, "result": {}},
    ]
    # the SDK reads initialize again, and the second request of id 5 (a client's mistake, its to answer)
    assert [json.loads(line).get("id") for line in room.lines] == [1, None, 5] and room.answered == {1}
    room, answers = run(initialize(), CALL)  # before the client said it is initialized
    assert [a["id"] for a in answers] == [1] and len(room.lines) == 2
    room, answers = run(initialize(), INITIALIZED, CALL, sdk_ready=True)
    assert [a["id"] for a in answers] == [1] and len(room.lines) == 3
    room, answers = run(initialize(), INITIALIZED, request(6, "ping", {"_meta": {}}))
    assert [a["id"] for a in answers] == [1] and len(room.lines) == 3
    # what the SDK's parser refuses, anywhere in the line, is its to answer
    for odd in ('"\\ud800"', "NaN", "Infinity", "[" * 100_000 + "]" * 100_000):
        context = CALL["params"]["arguments"] | {"encoding_context": "ENCODING"}
        line = json.dumps(request(5, "tools/call", {"name": "search", "arguments": context}))
        line = line.replace('"ENCODING"', odd)
        room = stdio.Lobby(
            io.StringIO(f"{json.dumps(initialize())}\n{json.dumps(INITIALIZED)}\n{line}\n"),
            io.StringIO(),
            listing,
            lambda p, t: answered,
        )
        room.read()
        assert len(room.lines) == 3 and room.answered == {1}, odd


def test_the_sdk_loads_once_the_client_is_silent():
    """An answer given, then silence: the SDK starts loading while the lobby still reads."""
    read_end, write_end = os.pipe()
    with open(read_end, encoding="utf-8") as protocol_in, open(write_end, "w", encoding="utf-8") as client:
        room = stdio.Lobby(protocol_in, io.StringIO(), listing)
        started = threading.Event()
        reading = threading.Thread(target=room.read, args=(started.set, 0.05), daemon=True)
        reading.start()
        client.write(json.dumps(initialize()) + "\n")
        client.flush()
        assert started.wait(10) and not room.done
        client.close()
        reading.join(10)
    assert room.done and not reading.is_alive()


def test_lines_are_read_unbuffered_and_what_is_read_past_them_is_kept():
    read_end, write_end = os.pipe()
    os.write(write_end, b'{"a": 1}\n{"b": "\xff"}\n{"c"')
    lines = stdio.Lines(read_end)
    assert lines.readline() == '{"a": 1}\n'
    assert lines.readline() == '{"b": "\ufffd"}\n'  # a byte that is not UTF-8
    assert bytes(lines.rest) == b'{"c"'  # read, not yet a line: whoever reads on starts with it
    os.write(write_end, b": 3}\nlast")
    os.close(write_end)
    assert lines.readline() == '{"c": 3}\n'
    assert lines.readline() == "last" and lines.readline() == "" and lines.rest == bytearray()
    os.close(read_end)


def test_a_line_without_an_end_is_cut_at_the_limit(monkeypatch):
    monkeypatch.setattr(stdio, "LINE_LIMIT", 100)  # (as stdio has it from archivist.mcp)
    read_end, write_end = os.pipe()
    os.write(write_end, b"x" * 250 + b"\n" + b'{"a": 1}\n')
    os.close(write_end)
    lines = stdio.Lines(read_end)
    assert [len(lines.readline()) for _ in range(3)] == [100, 100, 51]  # the last with its newline
    assert lines.readline() == '{"a": 1}\n' and lines.readline() == ""
    os.close(read_end)


# The SDK's own stdio transport, given the session (stdio.run_sdk)

INITIALIZE = initialize()
HAND_OVER = request(2, "resources/list")  # only the SDK answers it


def lines_of(*messages: dict | str) -> bytes:
    return "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in messages).encode()


def answers_until(out: int, last_id: object) -> list[dict]:
    """The answers read from ``out`` up to the one of ``last_id``."""
    answers: list[dict] = []
    with open(out, encoding="utf-8", closefd=False) as reader:
        while not answers or answers[-1].get("id") != last_id:
            line = reader.readline()
            assert line, f"the server stopped before answering {last_id}: {answers}"
            answers.append(json.loads(line))
    return answers


def test_the_sdk_reads_the_session_again_and_its_second_initialize_answer_is_left_out(sample_workspace):
    """What the lobby read is the SDK's first input; its answer to initialize, already sent, is not sent again."""
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    server = create_server(archive_path(sample_workspace))
    replay = [json.dumps(m) + "\n" for m in (INITIALIZE, INITIALIZED, request(3, "ping"))]
    own = sys.stdin, sys.stdout
    serving = threading.Thread(
        target=stdio.run_sdk, args=(server, replay, stdio.Lines(in_read), out_write, {1}), daemon=True
    )
    serving.start()
    try:
        assert [a["id"] for a in answers_until(out_read, 3)] == [3]
        os.write(in_write, lines_of(request(4, "ping")))
        assert answers_until(out_read, 4) == [{"jsonrpc": "2.0", "id": 4, "result": {}}]
        assert (sys.stdin, sys.stdout) == own  # the SDK is given its streams: the process's are untouched
    finally:
        os.close(in_write)
        serving.join(10)
        for fd in (out_write, out_read, in_read):
            os.close(fd)
    assert not serving.is_alive()


def test_the_sdks_answers_reach_the_client_but_those_answered_before():
    read_end, write_end = os.pipe()
    session_out = stdio.SessionOutput(write_end, {1}, stdio.Pending())
    for text in ('{"jsonrpc":"2.0","id":1,"result":{}}', "\n", '{"jsonrpc":"2.0","id":2,', '"result":{}}\n'):
        session_out.write(text)  # (as the SDK's transport writes: a message, then its newline)
    session_out.write('{"jsonrpc":"2.0","id":1,"result":{}}\n')  # a second answer of id 1 is the client's
    os.close(write_end)
    with open(read_end, "rb") as client:
        assert client.read() == b'{"jsonrpc":"2.0","id":2,"result":{}}\n{"jsonrpc":"2.0","id":1,"result":{}}\n'


def test_the_end_of_the_input_waits_for_the_answers_the_sdk_still_owes():
    """A client that sends its requests and closes its input gets every answer: the transport's
    input ends only once the requests it gave the SDK are answered."""
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    pending = stdio.Pending()
    session_in = stdio.SessionInput([], stdio.Lines(in_read), pending)
    session_out = stdio.SessionOutput(out_write, set(), pending)
    os.write(in_write, lines_of(request(7, "tools/list")))
    os.close(in_write)
    assert json.loads(session_in.readline())["id"] == 7
    ended = threading.Event()
    reading = threading.Thread(target=lambda: session_in.readline() == "" and ended.set(), daemon=True)
    reading.start()
    assert not ended.wait(0.3)  # the input is at its end, but request 7 is owed
    session_out.write('{"jsonrpc":"2.0","id":7,"result":{}}\n')
    assert ended.wait(5)
    os.close(out_write)
    with open(out_read, "rb") as client:
        assert client.read() == b'{"jsonrpc":"2.0","id":7,"result":{}}\n'


def test_a_line_over_the_limit_is_cut_and_the_session_goes_on(sample_workspace, monkeypatch):
    monkeypatch.setattr(stdio, "LINE_LIMIT", 4096)
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    server = create_server(archive_path(sample_workspace))
    serving = threading.Thread(
        target=stdio.run_sdk, args=(server, [], stdio.Lines(in_read), out_write, set()), daemon=True
    )
    serving.start()
    try:
        huge = json.dumps(request(3, "ping", {"pad": "x" * 100_000}))
        ping = request(4, "ping")
        os.write(in_write, lines_of(INITIALIZE, INITIALIZED, huge, ping))
        answers = answers_until(out_read, 4)
        # the long line got no answer as a ping (it was not read as one), and what followed it was
        assert [a.get("id") for a in answers if "result" in a] == [1, 4]
        call = {"name": "search", "arguments": {"query": "kubernetes migration", "mode": "keyword"}}
        os.write(in_write, lines_of(request(5, "tools/call", call)))
        assert answers_until(out_read, 5)[-1]["result"]["structuredContent"]["total"] >= 1
    finally:
        os.close(in_write)
        serving.join(10)
        for fd in (out_write, out_read, in_read):
            os.close(fd)
    assert not serving.is_alive()


def test_a_client_that_writes_everything_before_it_reads_gets_every_answer(embedded_sample):
    """Far more requests and answers than a pipe holds: reading goes on while answers wait to be read."""
    process = subprocess.Popen(
        [ARCHIVIST, "mcp", str(embedded_sample)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(lines_of(INITIALIZE, INITIALIZED, HAND_OVER))
        process.stdin.flush()
        assert [json.loads(process.stdout.readline())["id"] for _ in range(2)] == [1, 2]
        pad = {"anything": "x" * 2000}  # requests of 2 KB, answers of about 8 KB (output=full)
        requests = [
            {"jsonrpc": "2.0", "id": 100 + n, "method": "tools/call", "params": {"name": "search", "arguments": {
                "query": "kubernetes migration", "mode": "keyword", "output": "full", "encoding_context": pad}}}
            for n in range(150)
        ]  # fmt: skip
        data = lines_of(*requests)
        assert len(data) > 256 * 1024
        writer = threading.Thread(target=lambda: (process.stdin.write(data), process.stdin.flush()), daemon=True)
        writer.start()
        writer.join(120)
        assert not writer.is_alive(), "the server stopped reading while its answers waited"
        answers = [json.loads(process.stdout.readline()) for _ in requests]
        assert sorted(a["id"] for a in answers) == [r["id"] for r in requests]
        # each found what it looked for, or (calls take turns, queries/line.py) was told at once that no turn came
        found = [a for a in answers if not a["result"].get("isError")]
        assert all(a["result"]["structuredContent"]["total"] >= 1 for a in found)
        busy = [a["result"]["structuredContent"]["code"] for a in answers if a["result"].get("isError")]
        assert set(busy) <= {"SEARCH_BUSY"} and len(found) >= 4  # at least the first turns ran
        assert sum(len(json.dumps(a)) for a in answers) > 256 * 1024  # far more than a pipe holds
    finally:
        process.kill()
        process.wait(10)


@pytest.mark.parametrize("stdout_is_a_file", [True, False])
def test_stdin_from_a_file_is_served(embedded_sample, tmp_path, stdout_is_a_file):
    """Not a pipe (a file given as stdin, or as stdout): served all the same."""
    requests = tmp_path / "requests.jsonl"
    ping = request(3, "ping")
    requests.write_bytes(lines_of(INITIALIZE, INITIALIZED, HAND_OVER, "not json", ping))
    answers_file = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers_file.open("wb") as file:
        finished = subprocess.run(
            [ARCHIVIST, "mcp", str(embedded_sample)],
            stdin=stdin,
            stdout=file if stdout_is_a_file else subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=60,
        )
    assert finished.returncode == 0
    written = answers_file.read_bytes() if stdout_is_a_file else finished.stdout
    answers = [json.loads(line) for line in written.splitlines()]
    # each request answered once, in order. The end of stdin ends the session: the SDK's stdio
    # server cancels the requests still running then (its client is gone), so the last ones
    # race it: answered, answered "Connection closed", or not
    ids = [a.get("id") for a in answers]
    assert ids in ([1], [1, 2], [1, 2, 3]), answers
    assert answers[0] == stdio.early_answer(INITIALIZE, listing())
    if len(ids) > 1:
        assert answers[1]["result"] == {"resources": []}
