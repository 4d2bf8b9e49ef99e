"""The stdio server's first answers, given before the MCP SDK has loaded: the SDK's own, once each."""

from __future__ import annotations

import io
import json

import anyio
import pytest

from archivist.mcp import stdio


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
