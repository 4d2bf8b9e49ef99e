"""The stdio server's first answers, given before the MCP SDK has loaded: the SDK's own, once each."""

from __future__ import annotations

import io
import json
import os
import threading

import anyio
import pytest

from archivist.mcp import stdio
from archivist.mcp.calls import Workspaces
from archivist.workspace import archive_path


def request(id_: object, method: str, params: dict | None = None) -> dict:
    message = {"jsonrpc": "2.0", "id": id_, "method": method}
    return message if params is None else {**message, "params": params}


def initialize(id_: object = 1, version: str = "2025-11-25") -> dict:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
    return request(id_, "initialize", params)


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
CALL = request(5, "tools/call", {"name": "search", "arguments": {"query": "borders", "mode": "keyword"}})


def lobby(*messages: dict | str, tools: dict | None = None) -> tuple[stdio.Lobby, list[dict], list[str]]:
    """A lobby fed these messages: itself, what it answered, and when the SDK would have been started."""
    lines = "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in messages)
    out = io.StringIO()
    started: list[str] = []
    listing = stdio.tools_listing() if tools is None else tools
    room = stdio.Lobby(io.StringIO(lines), out, lambda: listing)
    room.read(lambda: started.append("sdk"))
    return room, [json.loads(line) for line in out.getvalue().splitlines()], started


def test_tools_json_is_what_the_installed_sdk_answers():
    """tools.json must be written again (python -m archivist.mcp.stdio) when a tool or the SDK changes."""
    listing = json.loads(stdio.TOOLS_FILE.read_text(encoding="utf-8"))
    assert listing["sdk"] == stdio._sdk_version() is not None
    versions, _ = stdio._sdk_versions()
    by_version = stdio.tools_listing()
    assert sorted(by_version) == sorted(versions)
    for version in versions:
        assert by_version[version] == anyio.run(stdio._sdk_tools_list, version), (
            "tools.json is stale: run python -m archivist.mcp.stdio"
        )


def test_initialize_then_tools_list_are_answered_without_the_sdk():
    room, answers, started = lobby(initialize(), INITIALIZED, request(2, "tools/list"), CALL, request(6, "ping"))
    assert [a["id"] for a in answers] == [1, 2] and started == ["sdk"]
    assert answers[0] == stdio.early_answer(initialize())
    assert answers[1]["result"] == stdio.tools_listing()["2025-11-25"]
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
    # a listing written by another SDK version (or none) is not used
    room, answers, _ = lobby(initialize(), request(2, "tools/list"), tools={})
    assert [a["id"] for a in answers] == [1] and len(room.lines) == 2
    # nor is an id answered already
    room, answers, _ = lobby(initialize(), request(1, "tools/list"))
    assert [a["id"] for a in answers] == [1] and len(room.lines) == 2
    room, answers, _ = lobby(initialize(), request(2, "tools/list"), request(2, "tools/list"))
    assert [a["id"] for a in answers] == [1, 2] and len(room.lines) == 2
    room, answers, _ = lobby(initialize(), {**request(2, "tools/list"), "params": ["cursor"]})
    assert [a["id"] for a in answers] == [1] and len(room.lines) == 2


def test_a_stale_listing_is_not_used(tmp_path, monkeypatch):
    listing = json.loads(stdio.TOOLS_FILE.read_text(encoding="utf-8"))
    stale = tmp_path / "tools.json"
    stale.write_text(json.dumps({**listing, "sdk": "0.0.1"}), encoding="utf-8")
    monkeypatch.setattr(stdio, "TOOLS_FILE", stale)
    assert stdio.tools_listing() == {}
    stale.write_text("{broken", encoding="utf-8")
    assert stdio.tools_listing() == {}
    for wrong in ({"results": {"x": 1}}, {"results": [{"versions": 1}]}, {"results": None}):
        stale.write_text(json.dumps({**wrong, "sdk": listing["sdk"]}), encoding="utf-8")
        assert stdio.tools_listing() == {}
    monkeypatch.setattr(stdio, "TOOLS_FILE", tmp_path / "missing.json")
    assert stdio.tools_listing() == {}


# The arguments of searches answered before the SDK loads, each of the exact JSON types the input
# schema names: keyword, hybrid, semantic, filters of each type, full output, and calls whose
# answer is an error (too short, a mode that does not exist, a workspace not allowed).
EARLY_SEARCHES = [
    {"query": "kubernetes migration", "mode": "keyword"},
    {"query": "kubernetes migration"},
    {"query": "proxy timeout", "mode": "semantic", "page_size": 3, "min_similarity": 0.1},
    {"query": "meeting", "entities": ["conversation", "memory"], "page": 1, "start_date": "2020-01-01"},
    {"query": "search", "tags": ["sqlite", "decision"], "match_all": True, "end_date": "today"},
    {"mode": "recent", "types": "decision", "document": 1, "encoding_context": {"anything": [1]}},
    {"query": "proxy timeout", "output": "full", "product_ids": [598, 601], "workspace_path": None, "limit": 2},
    {"query": "x"},
    {"query": "kubernetes", "mode": "sideways"},
    {"query": "kubernetes", "workspace_path": "/etc"},
]


@pytest.mark.parametrize("version", stdio._sdk_versions()[0])
def test_an_early_search_is_answered_as_the_sdk_answers_it(embedded_sample, version):
    """Answers and errors alike: the early search runs the tool's own search, and says what the SDK says."""
    db_path = archive_path(embedded_sample)
    calls = [{"name": "search", "arguments": arguments} for arguments in EARLY_SEARCHES]
    requests = [request(number, "tools/call", call) for number, call in enumerate(calls)]
    sdk = anyio.run(stdio.sdk_answers, version, requests, db_path)
    tools = stdio.tools_listing()[version]
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
    assert codes[7:] == ["INVALID_QUERY", "INVALID_PARAMETER", "DIRECTORY_NOT_FOUND"]


@pytest.mark.parametrize(
    "params",
    [
        {"name": "search", "arguments": {"query": "borders", "page_size": "3"}},  # the SDK reads "3" as 3
        {"name": "search", "arguments": {"query": "borders", "page": 2.0}},
        {"name": "search", "arguments": {"query": "borders", "page": True}},
        {"name": "search", "arguments": {"query": "borders", "match_all": 1}},
        {"name": "search", "arguments": {"query": "borders", "min_similarity": 1}},  # an int, where a float is asked
        {"name": "search", "arguments": {"query": "borders", "page": 2**70}},
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
    assert stdio.early_call(stdio.tools_listing()["2025-11-25"], params, workspaces) is None


def test_a_search_is_answered_early_only_in_a_session_and_before_the_sdk_is_up():
    answered = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {}}

    def run(*messages: dict, sdk_ready: bool = False) -> tuple[stdio.Lobby, list[dict]]:
        out = io.StringIO()
        lines = "".join(json.dumps(message) + "\n" for message in messages)
        listing = stdio.tools_listing()
        room = stdio.Lobby(io.StringIO(lines), out, lambda: listing, lambda p, t: answered, lambda: sdk_ready)
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
            stdio.tools_listing,
            lambda p, t: answered,
        )
        room.read()
        assert len(room.lines) == 3 and room.answered == {1}, odd


def test_the_sdk_loads_once_the_client_is_silent():
    """An answer given, then silence: the SDK starts loading while the lobby still reads."""
    read_end, write_end = os.pipe()
    with open(read_end, encoding="utf-8") as protocol_in, open(write_end, "w", encoding="utf-8") as client:
        room = stdio.Lobby(protocol_in, io.StringIO(), stdio.tools_listing)
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
