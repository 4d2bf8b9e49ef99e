"""Cursor's state databases: what is read, what is skipped and why, hostile values, and databases
held, damaged or linked from outside.

The sample (``sample-agent-logs/cursor/User``) is what ``build_sample`` writes; run this file to
write it again: ``.venv/bin/python tests/test_agentlogs_cursor.py``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from archivist.agents import Unavailable, Unread, cursor, registry

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "cursor" / "User"
WORKSPACE = "a9e4c1f07d2b3e5a6c8d9f0b1e2a3c4d"
RETRY = "3f2a9c1e-7b4d-4e8a-9c2f-1d6b5a4e3c21"  # a composer of bubbles of their own
SIGNATURE = "8b7e0d52-1c3a-4f6e-b9d8-2a5c7e1f4b90"  # an older composer, its conversation inline
MODEL = "claude-4.5-sonnet-thinking"


def ms(text: str) -> int:
    return int(dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


# --- writing databases as Cursor does ----------------------------------------------------------------


def database(path: Path, items: dict[str, Any] | None = None, keys: dict[str, Any] | None = None) -> Path:
    """A state.vscdb with VS Code's ItemTable and Cursor's cursorDiskKV, each value JSON text (a str as it is)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA page_size = 1024")
    for table, rows in (("ItemTable", items or {}), ("cursorDiskKV", keys or {})):
        connection.execute(f"CREATE TABLE {table} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        connection.executemany(
            f"INSERT INTO {table} VALUES (?, ?)",
            [(key, value if isinstance(value, str | bytes) else json.dumps(value)) for key, value in rows.items()],
        )
    connection.commit()
    connection.execute("VACUUM")
    connection.close()
    return path


def composer_rows(composer_id: str, composer: dict[str, Any], bubbles: list[dict[str, Any]]) -> dict[str, Any]:
    """A composer's rows: its data, listing its bubbles by id, and each bubble."""
    headers = [{"bubbleId": bubble["bubbleId"], "type": bubble["type"]} for bubble in bubbles]
    rows: dict[str, Any] = {
        f"composerData:{composer_id}": {
            "_v": 10,
            "composerId": composer_id,
            "fullConversationHeadersOnly": headers,
            "conversationMap": {},
            **composer,
        }
    }
    rows.update({f"bubbleId:{composer_id}:{bubble['bubbleId']}": {"_v": 3, **bubble} for bubble in bubbles})
    return rows


def tool(number: int, name: str, raw: dict[str, Any], params: dict[str, Any], result: Any = None) -> dict[str, Any]:
    data = {"tool": number, "name": name, "status": "completed", "rawArgs": json.dumps(raw)}
    data.update({"params": json.dumps(params), "toolCallId": f"toolu_{name}", "additionalData": {}})
    if result is not None:
        data["result"] = json.dumps(result)
    return data


def sample_rows() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The sample's rows: the shared database's cursorDiskKV, the workspace's ItemTable, its workspace.json."""
    sender = "src/hooks/sender.py"
    retry = composer_rows(
        RETRY,
        {
            "name": "Retry webhook deliveries on 429",
            "createdAt": ms("2025-11-20T09:14:00Z"),
            "lastUpdatedAt": ms("2025-11-20T09:15:02Z"),
            "modelConfig": {"modelName": MODEL, "maxMode": False},
            "status": "completed",
            "unifiedMode": "agent",
            "text": "",
        },
        [
            {
                "bubbleId": "b1",
                "type": 1,
                "text": "The webhook sender gives up on the first 429 from a receiver. "
                "Make it retry with backoff and honour Retry-After.",
                "createdAt": "2025-11-20T09:14:05.120Z",
                "modelInfo": {"modelName": MODEL},
                "images": [
                    {"path": "/home/ana/Pictures/receiver-429s.png", "dimension": {"width": 640, "height": 360}}
                ],
                "tokenCount": {"inputTokens": 0, "outputTokens": 0},
            },
            {
                "bubbleId": "b2",
                "type": 2,
                "text": "",
                "createdAt": "2025-11-20T09:14:09.480Z",
                "thinking": {"text": "The sender posts once and raises; read it before choosing where the loop goes."},
            },
            {
                "bubbleId": "b3",
                "type": 2,
                "text": "",
                "createdAt": "2025-11-20T09:14:12.010Z",
                "toolFormerData": tool(
                    40,
                    "read_file",
                    {"target_file": sender},
                    {"targetFile": sender},
                    {
                        "contents": "def send(event, url):\n    session.post(url, json=event.payload).raise_for_status()\n"
                    },
                ),
            },
            {
                "bubbleId": "b4",
                "type": 2,
                "text": "",
                "createdAt": "2025-11-20T09:14:30.700Z",
                "toolFormerData": tool(
                    38,
                    "search_replace",
                    {
                        "file_path": sender,
                        "old_string": "    session.post(url, json=event.payload).raise_for_status()",
                        "new_string": "    session.post(url, json=event.payload, timeout=10).raise_for_status()",
                    },
                    {"relativeWorkspacePath": sender},
                ),
            },
            {
                "bubbleId": "b5",
                "type": 2,
                "text": "",
                "createdAt": "2025-11-20T09:14:38.250Z",
                "toolFormerData": tool(
                    15,
                    "run_terminal_cmd",
                    {"command": "pytest tests/test_sender.py -q", "is_background": False},
                    {"command": "pytest tests/test_sender.py -q", "requireUserApproval": True},
                    {"output": "....\n4 passed in 0.41s", "exitCodeV2": 0},
                ),
            },
            {
                "bubbleId": "b6",
                "type": 2,
                "text": "The sender now retries a 429 up to five times, waiting 1, 2, 4 and 8 seconds, or as long "
                "as the receiver's Retry-After asks. The four sender tests pass.",
                "createdAt": "2025-11-20T09:14:41.900Z",
                "tokenCount": {"inputTokens": 18234, "outputTokens": 912},
                "timingInfo": {"clientStartTime": 4745281.3, "clientEndTime": ms("2025-11-20T09:15:01Z")},
            },
        ],
    )
    signature = {
        f"composerData:{SIGNATURE}": {
            "_v": 3,
            "composerId": SIGNATURE,
            "createdAt": ms("2025-11-22T16:02:00Z"),
            "lastUpdatedAt": ms("2025-11-22T16:02:31Z"),
            "modelConfig": {"modelName": "gpt-5"},
            "conversation": [
                {
                    "bubbleId": "s1",
                    "type": 1,
                    "text": "Why does the signature check fail for deliveries whose payload is not ASCII?",
                    "createdAt": "2025-11-22T16:02:04Z",
                },
                {
                    "bubbleId": "s2",
                    "type": 2,
                    "text": "The signature is made over json.dumps(payload), which escapes non-ASCII characters, "
                    "while the receiver checks the raw body. Sign the exact bytes that are sent.",
                    "createdAt": "2025-11-22T16:02:29Z",
                },
            ],
        }
    }
    heads = [
        {"type": "head", "composerId": RETRY, "name": "Retry webhook deliveries on 429", "unifiedMode": "agent"},
        {"type": "head", "composerId": SIGNATURE, "unifiedMode": "chat"},
    ]
    items = {"composer.composerData": {"allComposers": heads, "selectedComposerIds": [RETRY]}}
    return {**retry, **signature}, items, {"folder": "file:///home/ana/projects/hooks"}


def build_sample(user: Path) -> Path:
    """The sample's User folder: the shared database, and one workspace's."""
    keys, items, described = sample_rows()
    database(user / "globalStorage" / "state.vscdb", {}, keys)
    folder = user / "workspaceStorage" / WORKSPACE
    database(folder / "state.vscdb", items)
    (folder / "workspace.json").write_text(json.dumps(described), encoding="utf-8")
    return user


@pytest.fixture
def user(tmp_path: Path) -> Path:
    return build_sample(tmp_path / "User")


def read(path: Path) -> tuple[list, list[str]]:
    problems: list[str] = []
    return list(cursor.read(path, problems)), problems


def rows(path: Path) -> dict[str, list[tuple[Any, Any]]]:
    with sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True) as connection:
        return {
            table: connection.execute(f"SELECT key, value FROM {table} ORDER BY key").fetchall()
            for table in ("ItemTable", "cursorDiskKV")
        }


# --- what is read ---------------------------------------------------------------------------------------


def test_the_sample_is_what_the_script_writes_small_and_in_no_journal(tmp_path: Path) -> None:
    built = build_sample(tmp_path / "User")
    for name in ("globalStorage/state.vscdb", f"workspaceStorage/{WORKSPACE}/state.vscdb"):
        assert rows(SAMPLE / name) == rows(built / name)
        assert (SAMPLE / name).stat().st_size < 20_000
        assert (SAMPLE / name).read_bytes()[18:20] == b"\x01\x01"  # a rollback journal: nothing beside it
    assert json.loads((SAMPLE / f"workspaceStorage/{WORKSPACE}/workspace.json").read_text()) == sample_rows()[2]
    assert registry.kinds(registry.manager(entry_points=False))["cursor"].sample == "cursor/User"


def test_a_composer_s_bubbles_are_its_messages_with_tools_thinking_usage_and_an_image() -> None:
    (retry, signature), problems = read(SAMPLE)
    assert problems == [] and retry.problems == [] and signature.problems == []
    assert (retry.key, retry.agent, retry.title) == (RETRY, "cursor", "Retry webhook deliveries on 429")
    assert retry.project == "/home/ana/projects/hooks" and retry.models == [MODEL]
    assert (retry.started, retry.last) == ("2025-11-20T09:14:00Z", "2025-11-20T09:15:02Z")
    assert [m.role for m in retry.messages] == ["user", "assistant", "assistant", "tool", "assistant"] + [
        "assistant",
        "tool",
        "assistant",
    ]
    asked = retry.messages[0]
    assert asked.timestamp == "2025-11-20T09:14:05Z" and asked.model is None
    assert asked.text.endswith("honour Retry-After.\n\n[image: /home/ana/Pictures/receiver-429s.png]")
    assert [(a.type, a.name, a.size) for a in asked.attachments] == [
        ("image/png", "/home/ana/Pictures/receiver-429s.png", None)
    ]
    assert retry.messages[1].thinking.startswith("The sender posts once") and retry.messages[1].text == ""
    calls = [(c.name, c.files, c.commands) for m in retry.messages for c in m.tool_calls]
    assert calls == [
        ("read_file", ["src/hooks/sender.py"], []),
        ("search_replace", ["src/hooks/sender.py"], []),
        ("run_terminal_cmd", [], ["pytest tests/test_sender.py -q"]),
    ]
    outputs = [m.tool_output for m in retry.messages if m.role == "tool"]
    assert outputs[0].startswith("def send(event, url):") and outputs[1] == "....\n4 passed in 0.41s"
    answer = retry.messages[-1]
    assert answer.model == MODEL and answer.timestamp == "2025-11-20T09:14:41Z"
    assert answer.usage is not None and (answer.usage.input, answer.usage.output) == (18234, 912)
    assert [m.usage for m in retry.messages[:-1]] == [None] * 7  # zero counts are no usage
    assert all(m.model == MODEL for m in retry.messages if m.role == "assistant")
    # the older composer: its conversation inline, no name, a model of its own
    assert signature.key == SIGNATURE and signature.project == "/home/ana/projects/hooks"
    assert signature.title == "Why does the signature check fail for deliveries whose payload is not ASCII?"
    assert signature.models == ["gpt-5"] and [m.role for m in signature.messages] == ["user", "assistant"]
    assert (signature.started, signature.last) == ("2025-11-22T16:02:00Z", "2025-11-22T16:02:31Z")
    assert [session.key for session in read(SAMPLE)[0]] == [RETRY, SIGNATURE]  # the same keys, in the same order


def test_a_request_of_an_image_alone_is_kept_with_its_image(tmp_path: Path) -> None:
    """A request made of a pasted image and no words (its image in the request's context, as Cursor
    keeps it) is a user message: the answers after it answer it."""
    shot = {"uuid": "img-1", "path": "/home/ana/Pictures/stack-trace.png", "dimension": {"width": 800, "height": 600}}
    bubbles = [
        {"bubbleId": "q1", "type": 1, "text": "Why does the build fail?", "richText": "", "images": []},
        {"bubbleId": "a1", "type": 2, "text": "Which error does it give?"},
        {"bubbleId": "q2", "type": 1, "text": "", "richText": "", "images": [], "context": {"selectedImages": [shot]}},
        {"bubbleId": "a2", "type": 2, "text": "The trace says the lock file is stale."},
        {"bubbleId": "q3", "type": 1, "text": "", "images": [shot], "context": {"selectedImages": [shot]}},
        {
            "bubbleId": "q4",
            "type": 1,
            "text": "",
            "images": [{"path": "/tmp/b.png"}],
            "context": {"selectedImages": [{"uuid": "u", "path": "/tmp/b.png"}]},
        },
        {
            "bubbleId": "q5",
            "type": 1,
            "text": "",
            "context": {"selectedImages": [{"uuid": "x", "data": "iVBORw0KGgo" * 4}]},
        },
        {"bubbleId": "q6", "type": 1, "text": "", "context": {"selectedImages": []}},  # nothing in it: no request
    ]
    database(tmp_path / "globalStorage" / "state.vscdb", {}, composer_rows("c", {}, bubbles))
    (session,), problems = read(tmp_path)
    assert problems == [] and session.problems == []
    said = [(m.role, m.text) for m in session.messages]
    assert said == [
        ("user", "Why does the build fail?"),
        ("assistant", "Which error does it give?"),
        ("user", "[image: /home/ana/Pictures/stack-trace.png]"),  # named by its path
        ("assistant", "The trace says the lock file is stale."),
        ("user", "[image: /home/ana/Pictures/stack-trace.png]"),  # the same image in both lists, once
        ("user", "[image: /tmp/b.png]"),
        ("user", "[image]"),
    ]
    assert [(a.type, a.name, a.size) for a in session.messages[2].attachments] == [
        ("image/png", "/home/ana/Pictures/stack-trace.png", None)
    ]
    assert [(a.type, a.size) for a in session.messages[-1].attachments] == [("image", 33)]
    assert all("iVBOR" not in m.text for m in session.messages)


def test_an_empty_tool_entry_is_no_call_and_a_nameless_one_with_something_in_it_is(tmp_path: Path) -> None:
    """Cursor gives an answer that calls no tool an empty ``toolFormerData``: it is left out, and
    the answer's text, thinking and usage read; one with a number, arguments or a result is a call."""
    empty: dict[str, Any] = {"additionalData": {}}
    bubbles = [
        {"bubbleId": "q", "type": 1, "text": "Tidy the imports."},
        {"bubbleId": "a1", "type": 2, "text": "", "thinking": {"text": "Look first."}, "toolFormerData": empty},
        {"bubbleId": "a2", "type": 2, "text": "", "toolFormerData": {"additionalData": {}, "status": "completed"}},
        {"bubbleId": "a3", "type": 2, "text": "", "toolFormerData": {"toolCallId": "", "rawArgs": "", "params": "{}"}},
        {"bubbleId": "a4", "type": 2, "text": "Done.", "toolFormerData": empty, "tokenCount": {"inputTokens": 9}},
        {"bubbleId": "a5", "type": 2, "text": "", "toolFormerData": {"tool": 15, "additionalData": {}}},
        {"bubbleId": "a6", "type": 2, "text": "", "toolFormerData": {"params": {"command": "ruff check ."}}},
        {"bubbleId": "a7", "type": 2, "text": "", "toolFormerData": {"result": '{"output": "All checks passed!"}'}},
    ]
    database(tmp_path / "globalStorage" / "state.vscdb", {}, composer_rows("c", {}, bubbles))
    (session,), problems = read(tmp_path)
    assert problems == [] and session.problems == []
    said = [(m.role, m.text or m.thinking or m.tool_output, [c.name for c in m.tool_calls]) for m in session.messages]
    assert said == [
        ("user", "Tidy the imports.", []),
        ("assistant", "Look first.", []),
        ("assistant", "Done.", []),
        ("assistant", "", ["tool 15"]),
        ("assistant", "", ["tool"]),
        ("assistant", "", ["tool"]),
        ("tool", "All checks passed!", []),
    ]
    assert session.messages[4].tool_calls[0].commands == ["ruff check ."]
    assert session.messages[2].usage is not None and session.messages[2].usage.input == 9


def test_each_part_of_the_user_folder_is_a_source(user: Path) -> None:
    shared = user / "globalStorage"
    window = user / "workspaceStorage" / WORKSPACE
    for source in (user, shared, shared / "state.vscdb", user / "workspaceStorage", window, window / "state.vscdb"):
        assert cursor.check(source) is None, source
    alone, problems = read(shared)
    assert [s.key for s in alone] == [RETRY, SIGNATURE] and problems == []
    assert [s.project for s in alone] == [None, None]  # its workspaces are outside the source
    assert read(user / "workspaceStorage") == ([], [])  # the composers themselves are in the shared one
    found = cursor.log_files(user)
    assert [f.relative_to(user).as_posix() for f in found] == [
        "globalStorage/state.vscdb",
        f"workspaceStorage/{WORKSPACE}/state.vscdb",
        f"workspaceStorage/{WORKSPACE}/workspace.json",
    ]


def test_the_older_chat_tabs_and_a_composer_kept_whole_in_its_workspace(tmp_path: Path) -> None:
    folder = tmp_path / "User" / "workspaceStorage" / "w1"
    tabs = {
        "tabs": [
            {
                "tabId": "tab-1",
                "chatTitle": "Cron syntax for every weekday",
                "lastSendTime": ms("2024-03-04T10:00:10Z"),
                "bubbles": [
                    {"type": "user", "text": "Cron for 9am on weekdays?", "image": {"path": "C:\\shots\\cron.png"}},
                    {"type": "ai", "rawText": "0 9 * * 1-5", "modelType": "gpt-4"},
                ],
            },
            {"tabId": "tab-2", "bubbles": [{"type": "user", "text": "unanswered"}]},
            {"bubbles": [{"type": "user", "initText": json.dumps(lexical("in a ", "rich text"))}, {"type": "ai"}]},
        ]
    }
    head = {
        "composerId": "old-1",
        "name": "New Chat",  # a default name: the first request titles it
        "createdAt": ms("2024-05-01T08:00:00Z"),
        "conversation": [
            {"type": 1, "richText": json.dumps(lexical("Explain the ", "lock"))},
            {"type": 2, "text": "It is held while the queue drains."},
        ],
    }
    items = {
        "workbench.panel.aichat.view.aichat.chatdata": tabs,
        "composer.composerData": {"allComposers": [head, {"composerId": "elsewhere"}]},
        "aiService.prompts": [{"text": "a request alone", "commandType": 4}],
    }
    database(folder / "state.vscdb", items)
    (folder / "workspace.json").write_text(json.dumps({"folder": "file:///c%3A/src/cron"}))
    found, problems = read(tmp_path / "User")
    assert problems == []
    assert [(s.key, s.title) for s in found] == [
        ("old-1", "Explain the lock"),
        ("chat:tab-1", "Cron syntax for every weekday"),
        ("chat:tab-2", "unanswered"),
        ("chat:w1/2", "in a rich text"),  # a tab without an id: keyed by its place
    ]
    old, tab, unanswered, _ = found
    assert old.project == tab.project == "c:/src/cron" and old.started == "2024-05-01T08:00:00Z"
    assert [m.text for m in old.messages] == ["Explain the lock", "It is held while the queue drains."]
    assert [(m.role, m.text, m.model) for m in tab.messages] == [
        ("user", "Cron for 9am on weekdays?\n\n[image: C:\\shots\\cron.png]", None),  # its path as written
        ("assistant", "0 9 * * 1-5", "gpt-4"),
    ]
    assert tab.models == ["gpt-4"] and tab.started == tab.last == "2024-03-04T10:00:10Z"
    assert unanswered.started is None  # no time anywhere: none made up
    assert not any("a request alone" in m.text for s in found for m in s.messages)


def lexical(*texts: str) -> dict[str, Any]:
    return {"root": {"children": [{"type": "paragraph", "children": [{"text": text} for text in texts]}]}}


# --- what is skipped, and why -------------------------------------------------------------------------


def test_bubbles_and_composers_that_cannot_be_read_are_told(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cursor, "MAX_VALUE_BYTES", 4000)
    bubbles = [
        {"bubbleId": "ok", "type": 1, "text": "keep this"},
        {"bubbleId": "big", "type": 2, "text": "x" * 5000},
        {"bubbleId": "odd", "type": 7, "text": "a type of no known kind"},
        {"bubbleId": "answer", "type": 2, "text": "and this"},
    ]
    keys = composer_rows("c1", {"name": "Damaged"}, bubbles)
    keys["composerData:c1"]["fullConversationHeadersOnly"] += [
        {"bubbleId": "gone", "type": 2},
        {"bubbleId": "bad", "type": 2},
        {"bubbleId": "deep", "type": 2},
        {"bubbleId": "null", "type": 2},
        {"type": 2},
    ]
    keys["bubbleId:c1:bad"] = "{not json"
    keys["bubbleId:c1:deep"] = "[" * 500 + "]" * 500
    keys["bubbleId:c1:null"] = "null"
    keys["bubbleId:c1:stray"] = {"type": 1, "text": "a bubble no header lists (an edited request's old one)"}
    keys.update({"composerData:c2": "{broken", "composerData:c3": "null", "composerData:c4": "y" * 5000})
    keys["composerData:c5"] = {"name": "A draft", "text": "typed, never sent", "fullConversationHeadersOnly": []}
    database(tmp_path / "globalStorage" / "state.vscdb", {}, keys)
    (session,), problems = read(tmp_path)
    assert [m.text for m in session.messages] == ["keep this", "and this"]
    assert session.problems == [
        "6 messages skipped: 1 value over 0.1 MB, 1 of no known type, 1 not found, 1 not JSON, "
        "1 JSON nested deeper than 100 levels, 1 a header of no known shape"
    ]
    assert problems == ["2 conversations skipped: 1 not JSON, 1 value over 0.1 MB"]
    assert all(isinstance(problem, Unread) for problem in problems)  # what the archive holds of them stays


def test_values_of_the_wrong_type_everywhere_never_raise(tmp_path: Path) -> None:
    odd: list[Any] = [None, 1, -1, 2.5, True, "x", [], {}, [1, "a", None], {"a": [1]}, "[" * 3000]
    keys: dict[str, Any] = {}
    for index, value in enumerate(odd):
        composer = {
            "name": value,
            "createdAt": value,
            "lastUpdatedAt": value,
            "modelConfig": value,
            "fullConversationHeadersOnly": [{"bubbleId": "b"}, value, {"bubbleId": value}],
            "conversationMap": value,
        }
        bubble = {
            "type": 2,
            "text": value,
            "richText": value,
            "createdAt": value,
            "timingInfo": value,
            "modelInfo": value,
            "thinking": value,
            "allThinkingBlocks": value,
            "toolFormerData": {"name": value, "tool": value, "rawArgs": value, "params": value, "result": value},
            "tokenCount": {"inputTokens": value, "outputTokens": value},
            "images": [value, {"path": value, "data": value, "size": value}],
            "image": value,
        }
        keys[f"composerData:c{index:02}"] = composer
        keys[f"bubbleId:c{index:02}:b"] = bubble
        keys[f"composerData:d{index:02}"] = value
        keys[f"composerData:e{index:02}"] = {"conversation": value, "fullConversationHeadersOnly": value}
        keys[f"composerData:f{index:02}"] = {"conversation": [{"type": value, "text": "q"}, value]}
    heads_values = [{"allComposers": value} for value in odd] + odd
    database(tmp_path / "globalStorage" / "state.vscdb", {}, keys)
    for index, value in enumerate(heads_values):
        items = {
            "composer.composerData": value,
            "workbench.panel.aichat.view.aichat.chatdata": {"tabs": [value, {"bubbles": value, "tabId": value}]},
        }
        folder = tmp_path / "workspaceStorage" / f"w{index:02}"
        database(folder / "state.vscdb", items)
        (folder / "workspace.json").write_text(json.dumps({"folder": value}))
    found, problems = read(tmp_path)  # nothing raises
    assert all(session.title for session in found)
    assert [s.key for s in found] == [f"c{index:02}" for index in range(11)] + ["f01"]
    texts = {s.key: [m.text for m in s.messages] for s in found}
    assert texts["c05"] == ["x\n\n[image: x]", ""] and texts["f01"] == ["q"]  # the only text that is text
    assert texts["c00"] == ["[image]"] and found[0].title == "[image]"  # (an entry of images that is an object)
    assert texts["c10"][0].startswith("[[[[") and found[10].title.endswith("…")
    assert found[5].started is None and found[5].models == []  # "x" is no time, and no model config
    assert problems == [
        "workspaceStorage/w16/state.vscdb: its list of composers not read (not JSON)",
        "workspaceStorage/w21/state.vscdb: its list of composers not read (JSON nested deeper than 100 levels)",
        "2 conversations skipped: 1 not JSON, 1 JSON nested deeper than 100 levels",
    ]


def test_huge_strings_and_an_inline_image_are_read_within_their_limits(tmp_path: Path) -> None:
    huge = "word " * 1_000_000  # 5 MB in one bubble
    image = {"path": "shot.png", "data": "iVBORw0KGgo" * 10_000}
    bubbles = [
        {"bubbleId": "q", "type": 1, "text": huge, "images": [image, {"uuid": "u1"}]},
        {"bubbleId": "a", "type": 2, "text": "short", "modelInfo": {"modelName": "default"}},
    ]
    database(tmp_path / "globalStorage" / "state.vscdb", {}, composer_rows("c", {}, bubbles))
    (session,), problems = read(tmp_path)
    question = session.messages[0]
    assert problems == [] and len(session.title) == 80 and question.text.startswith("word word")
    assert question.text.endswith("[image: shot.png] [image]") and "iVBOR" not in question.text
    assert [(a.type, a.name, a.size) for a in question.attachments] == [
        ("image/png", "shot.png", 82_500),
        ("image", None, None),
    ]
    assert session.models == []  # Cursor's Auto choice names no model


# --- databases held, damaged, linked from outside, never written -------------------------------------------


def test_a_database_another_program_holds_locked_is_unavailable(user: Path) -> None:
    holder = sqlite3.connect(user / "globalStorage" / "state.vscdb", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO ItemTable VALUES ('x', 'y')")
    try:
        with pytest.raises(Unavailable, match="locked by another program"):
            read(user)
        with pytest.raises(Unavailable):
            cursor.check(user / "globalStorage" / "state.vscdb")
    finally:
        holder.close()
    assert len(read(user)[0]) == 2


def test_a_database_the_editor_has_open_in_wal_mode_is_read_and_nothing_is_written(user: Path) -> None:
    shared = user / "globalStorage" / "state.vscdb"
    with sqlite3.connect(shared) as connection:
        connection.execute("PRAGMA journal_mode = WAL")
    before = snapshot(user)
    assert len(read(user)[0]) == 2 and snapshot(user) == before  # no -wal or -shm: opened immutable
    editor = sqlite3.connect(shared)
    editor.execute(
        "UPDATE cursorDiskKV SET value = json_set(value, '$.name', 'Renamed') WHERE key = ?", [f"composerData:{RETRY}"]
    )
    editor.commit()  # the change is in the -wal file, the editor still has the database open
    assert shared.with_name("state.vscdb-wal").exists()
    before = snapshot(user)
    found, _ = read(user)
    assert found[0].title == "Renamed" and snapshot(user) == before
    assert shared.with_name("state.vscdb-wal") in cursor.log_files(user)
    editor.close()


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Each file's bytes and modification time; of a -shm file (the shared memory in which every
    reader of a database in WAL mode marks what it reads), its time alone."""
    return {
        str(p.relative_to(folder)): (b"" if p.name.endswith("-shm") else p.read_bytes(), p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file()
    }


def test_reading_the_sample_leaves_its_bytes_and_times_as_they_were(tmp_path: Path) -> None:
    copy = tmp_path / "User"
    shutil.copytree(SAMPLE, copy)
    before = snapshot(copy)
    assert len(read(copy)[0]) == 2 and cursor.check(copy) is None and cursor.log_files(copy)
    assert snapshot(copy) == before  # no -journal, -wal or -shm left behind, nothing touched


def test_a_damaged_or_cut_short_database_is_told_and_the_others_read(user: Path) -> None:
    shared = user / "globalStorage" / "state.vscdb"
    whole = shared.read_bytes()
    shared.write_bytes(b"SQLite format 3\x00" + b"\x07" * 3000)
    found, problems = read(user)
    assert found == [] and len(problems) == 1 and isinstance(problems[0], Unread)
    assert problems[0].startswith("globalStorage/state.vscdb cannot be read (")
    shared.write_bytes(whole[: len(whole) // 2])
    found, problems = read(user)  # what it could read, and the damage told
    assert problems and all(isinstance(p, Unread) and "cannot be read" in p for p in problems)
    window = user / "workspaceStorage" / WORKSPACE / "state.vscdb"
    window.write_bytes(b"not a database at all")
    shared.write_bytes(whole)
    found, problems = read(user)
    assert [s.key for s in found] == [RETRY, SIGNATURE] and [s.project for s in found] == [None, None]
    assert problems == [Unread(f"workspaceStorage/{WORKSPACE}/state.vscdb cannot be read (file is not a database)")]
    assert "is not a SQLite database" in (cursor.check(window) or "")


UNFINISHED_WRITE = """
import os, sqlite3, sys
editor = sqlite3.connect(sys.argv[1], isolation_level=None)
editor.execute("PRAGMA cache_size = 2")  # (the write's pages go to the file before it commits)
editor.execute("BEGIN")
editor.execute("UPDATE cursorDiskKV SET value = json_set(value, '$.name', 'Not committed') WHERE key LIKE 'composerData:%'")
for number in range(300):
    editor.execute("INSERT INTO ItemTable VALUES (?, randomblob(2000))", [f"filler.{number}"])
os._exit(0)  # (the editor stopped in the middle of its write)
"""


def test_a_database_left_with_a_hot_journal_is_read_as_before_that_write_and_told(user: Path) -> None:
    shared = user / "globalStorage" / "state.vscdb"
    titles = [s.title for s in read(user)[0]]
    subprocess.run([sys.executable, "-c", UNFINISHED_WRITE, str(shared)], check=True)
    journal = shared.with_name("state.vscdb-journal")
    assert journal.stat().st_size > 0  # hot: no program holds the database, its write is not undone
    before = snapshot(user)
    found, problems = read(user)
    assert [s.title for s in found] == titles and "Not committed" not in titles
    assert problems == [
        "globalStorage/state.vscdb: a write that did not finish left its rollback journal (state.vscdb-journal) "
        "beside it: read as it was before that write, from a private copy; nothing to do, the agent undoes that "
        "write the next time it opens it"
    ]
    assert not isinstance(problems[0], Unread)  # (all of it was read)
    assert cursor.check(user) is None and cursor.check(shared) is None
    assert snapshot(user) == before  # the journal is left for the editor to undo
    sqlite3.connect(shared).execute("SELECT count(*) FROM ItemTable").connection.close()  # the editor opens it
    assert not journal.exists() and read(user) == (found, [])


def test_a_state_vscdb_that_is_a_pipe_is_told_and_the_other_databases_read(user: Path) -> None:
    window = user / "workspaceStorage" / WORKSPACE / "state.vscdb"
    window.unlink()
    os.mkfifo(window)
    other = database(user / "workspaceStorage" / "second" / "state.vscdb")
    found, problems = read(user)  # (it would wait forever on the pipe)
    assert [s.key for s in found] == [RETRY, SIGNATURE]
    assert problems == [
        f"workspaceStorage/{WORKSPACE}/state.vscdb is a named pipe (FIFO), not a database file: not read, and "
        "what the archive holds of it is kept. Put the agent's database back in its place for it to be read."
    ]
    assert isinstance(problems[0], Unread) and cursor.check(user) is None
    shared = user / "globalStorage" / "state.vscdb"
    shared.unlink()
    os.mkfifo(shared)
    other.unlink()
    assert cursor.check(user) is None  # one damaged store never refuses the source
    found, problems = read(user)
    assert found == [] and len(problems) == 2 and all(isinstance(p, Unread) and "named pipe" in p for p in problems)
    assert problems[0].startswith("globalStorage/state.vscdb is a named pipe")


def test_links_that_lead_out_of_the_source_are_never_opened(tmp_path: Path) -> None:
    outside = build_sample(tmp_path / "outside")
    user = tmp_path / "User"
    (user / "globalStorage").mkdir(parents=True)
    (user / "globalStorage" / "state.vscdb").symlink_to(outside / "globalStorage" / "state.vscdb")
    (user / "workspaceStorage").mkdir()
    (user / "workspaceStorage" / "linked").symlink_to(outside / "workspaceStorage" / WORKSPACE)
    found, problems = read(user)
    assert found == [] and len(problems) == 2
    assert all(isinstance(p, Unread) and "symbolic link that leads out" in p for p in problems)
    assert "holds no state.vscdb" in (cursor.check(user) or "")
    assert cursor.log_files(user) == [user]


# --- what is not a source --------------------------------------------------------------------------------


def test_the_cursor_cli_s_chats_are_named_and_not_read(tmp_path: Path) -> None:
    chat = tmp_path / ".cursor" / "chats" / "e4e90b7bcae743c9a1a1a045a49e1b1d" / "ac437fdf-3e7e"
    chat.mkdir(parents=True)
    store = chat / "store.db"
    with sqlite3.connect(store) as connection:
        connection.execute("CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)")
        connection.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        connection.execute(
            "INSERT INTO meta VALUES ('0', ?)", [json.dumps({"agentId": "ac437fdf-3e7e"}).encode().hex()]
        )
        connection.execute("INSERT INTO blobs VALUES ('56182061', ?)", [b"\x0a\x20" + b"\x00" * 32])
    connection.close()
    for source in (tmp_path / ".cursor", tmp_path / ".cursor" / "chats", chat.parent, chat, store):
        reason = cursor.check(source) or ""
        assert f"{store} is a Cursor CLI chat" in reason and "no public schema, so it is not read" in reason
    assert read(tmp_path / ".cursor") == ([], [])


def test_a_source_that_is_not_cursor_s_says_what_was_expected(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "text.vscdb").write_text("hello")
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    assert "holds no state.vscdb" in (cursor.check(tmp_path / "empty") or "")
    assert "is not a SQLite database" in (cursor.check(tmp_path / "text.vscdb") or "")
    assert "has neither a cursorDiskKV nor an ItemTable table" in (cursor.check(other) or "")
    assert "does not exist" in (cursor.check(tmp_path / "nowhere") or "")
    for reason in [cursor.check(tmp_path / "empty"), cursor.check(other)]:
        assert reason and reason.endswith(f"expected {cursor.EXPECTED}.")


# --- a pipe, a value too large, and what is held at once -----------------------------------------------


def test_a_source_that_is_a_pipe_is_never_opened(tmp_path: Path) -> None:
    import os
    import threading

    pipe = tmp_path / "state.vscdb"
    os.mkfifo(pipe)
    assert "is neither a regular file nor a folder" in (cursor.check(pipe) or "")
    results: list[Any] = []
    reader = threading.Thread(target=lambda: results.append(read(pipe)), daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # let the blocked reader go before failing
        os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
    assert results == [([], ["state.vscdb is not a regular file: not read"])] and isinstance(results[0][1][0], Unread)


def test_a_blob_too_large_is_skipped_without_being_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = {"composerId": "small", "conversation": [{"type": 1, "text": "hi"}]}
    file = database(tmp_path / "state.vscdb", keys={"composerData:small": small})
    with sqlite3.connect(file) as connection:
        connection.execute("INSERT INTO cursorDiskKV VALUES ('composerData:big', ?)", [b"x" * 200_000])
    pages = bytearray(file.read_bytes())
    middle = (len(pages) // 1024 - 50) * 1024  # a page of the large value's chain, its link to the next broken
    pages[middle : middle + 1024] = bytes(1024)
    file.write_bytes(bytes(pages))
    monkeypatch.setattr(cursor, "MAX_VALUE_BYTES", 4096)
    found, problems = read(file)
    assert [s.key for s in found] == ["small"]
    assert problems == ["1 conversation skipped: 1 value over 0.1 MB"]


def test_each_workspace_s_older_tabs_are_read_when_their_sessions_are_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from archivist.agents import databases

    for name in ("w1", "w2", "w3"):
        tabs = {"tabs": [{"tabId": f"tab-{name}", "bubbles": [{"type": "user", "text": f"in {name}"}]}]}
        database(tmp_path / "User" / "workspaceStorage" / name / "state.vscdb", {cursor.CHAT_DATA: tabs})
    statements: list[str] = []
    connect = databases.connect

    def traced(path: Path, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        connection = connect(path, *args, **kwargs)
        connection.set_trace_callback(statements.append)
        return connection

    monkeypatch.setattr(databases, "connect", traced)
    sessions = cursor.read(tmp_path / "User", [])
    assert next(sessions).key == "chat:tab-w1"
    assert sum(cursor.CHAT_DATA in sql for sql in statements) == 1  # not every workspace's tabs at once
    assert [s.key for s in sessions] == ["chat:tab-w2", "chat:tab-w3"]


# --- the agent's transcripts (~/.cursor/projects/<project>/agent-transcripts) -----------------------------

PROJECTS = SAMPLE.parent / "projects"
TRANSCRIPT = "b3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"


def transcript(file: Path, *lines: Any) -> Path:
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return file


def said(role: str, *blocks: Any) -> dict[str, Any]:
    return {"role": role, "message": {"content": list(blocks)}}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def test_a_transcript_s_requests_answers_tool_calls_and_results() -> None:
    (session,), problems = read(PROJECTS)
    assert problems == [] and session.problems == []
    assert (session.key, session.agent, session.project) == (
        f"transcript:{TRANSCRIPT}",
        "cursor",
        "home-ana-src-weather-api",  # Cursor's name of the project's folder, as it is
    )
    assert session.title.startswith("The forecast endpoint returns 500")  # without <user_query>
    assert [m.role for m in session.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "assistant",
        "tool",
        "assistant",
    ]
    calls = [(c.name, c.files, c.commands) for m in session.messages for c in m.tool_calls]
    forecast = "/home/ana/src/weather-api/app/forecast.py"
    assert calls == [
        ("Read", [forecast], []),
        ("StrReplace", [forecast], []),
        ("Shell", [], ["pytest tests/test_forecast.py -q"]),
    ]
    assert session.messages[2].tool_output.startswith("def forecast(city):")
    assert session.messages[5].tool_output == "...\n3 passed in 0.08s"
    file = PROJECTS / "home-ana-src-weather-api" / "agent-transcripts" / TRANSCRIPT / f"{TRANSCRIPT}.jsonl"
    assert session.files == [file] and session.models == [] and session.messages[0].timestamp is None
    assert (
        session.started
        == session.last
        == dt.datetime.fromtimestamp(file.stat().st_mtime, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    )  # the lines have no time: the file's, when the agent last wrote it


def test_each_form_of_transcript_source_is_one_and_the_editor_s_stay_what_they_were(tmp_path: Path) -> None:
    home = tmp_path / ".cursor"
    flat = transcript(home / "projects" / "srv-app" / "agent-transcripts" / "t1.jsonl", said("user", text("Flat")))
    transcript(home / "projects" / "srv-app" / "agent-transcripts" / "t2" / "t2.jsonl", said("user", text("Nested")))
    (home / "projects" / "srv-other" / "worker.log").parent.mkdir(parents=True)  # a project with no transcript
    project = home / "projects" / "srv-app"
    for source in (home, home / "projects", project, project / "agent-transcripts"):
        assert cursor.check(source) is None
        sessions, problems = read(source)
        assert problems == [] and [(s.key, s.title) for s in sessions] == [
            ("transcript:t1", "Flat"),
            ("transcript:t2", "Nested"),
        ]
    assert cursor.check(flat) is None and [s.key for s in read(flat)[0]] == ["transcript:t1"]
    assert cursor.log_files(home) == [home]
    assert cursor.check(SAMPLE) is None and len(read(SAMPLE)[0]) == 2


def test_a_damaged_transcript_line_is_skipped_and_told(tmp_path: Path) -> None:
    file = transcript(
        tmp_path / "agent-transcripts" / "t1.jsonl",
        said("user", text("<user_query>Go</user_query>")),
        '{"role":"assistant","message":{"content":[{"type":"te',
        {"kind": "unknown"},
        {"type": "turn_ended", "status": "completed"},
        said("assistant", text("Gone"), {"type": "tool_use", "name": "Shell", "input": "not an object"}),
        said("assistant", {"type": "tool_use", "input": {"command": 3, "path": ["a.py", 4]}}, 7, None),
        {"role": "user", "message": "a plain string"},
    )
    (session,), problems = read(file)
    assert problems == []
    assert [(m.role, m.text) for m in session.messages] == [
        ("user", "Go"),
        ("assistant", "Gone"),
        ("assistant", ""),
        ("user", "a plain string"),
    ]
    assert [(c.name, c.files, c.commands) for m in session.messages for c in m.tool_calls] == [
        ("Shell", [], []),
        ("tool", ["a.py"], []),
    ]
    assert len(session.problems) == 1 and session.problems[0].startswith("2 lines skipped:")


def test_a_transcript_link_leading_out_of_the_source_is_never_opened(tmp_path: Path) -> None:
    outside = transcript(tmp_path / "elsewhere" / "secret.jsonl", said("user", text("Not for this archive")))
    folder = tmp_path / ".cursor" / "projects" / "srv-app" / "agent-transcripts"
    transcript(folder / "mine.jsonl", said("user", text("Mine")))
    (folder / "theirs.jsonl").symlink_to(outside)
    (folder / "theirs-folder").symlink_to(outside.parent)
    sessions, problems = read(tmp_path / ".cursor")
    assert [s.key for s in sessions] == ["transcript:mine"]
    assert sorted(problems) == [
        "projects/srv-app/agent-transcripts/theirs-folder: not opened: a symbolic link that leads out of the source",
        "projects/srv-app/agent-transcripts/theirs.jsonl: not opened: a symbolic link that leads out of the source",
    ]
    assert all(isinstance(problem, Unread) for problem in problems)


def test_a_folder_that_is_no_transcript_source_says_what_was_expected(tmp_path: Path) -> None:
    empty = tmp_path / "p" / "agent-transcripts"
    empty.mkdir(parents=True)
    not_one = transcript(tmp_path / "q" / "agent-transcripts" / "x.jsonl", {"events": []})
    reason = cursor.check(empty.parent) or ""
    assert "holds no agent transcript (agent-transcripts/*/*.jsonl)" in reason and reason.endswith(
        f"expected {cursor.EXPECTED}."
    )
    reason = cursor.check(not_one.parent) or ""
    assert f"{not_one} under {not_one.parent} is not a Cursor agent transcript" in reason
    assert "has neither a cursorDiskKV nor an ItemTable table" not in reason
    reason = cursor.check(transcript(tmp_path / "notes.jsonl", said("user", text("x")))) or ""
    assert "is not a SQLite database" in reason  # a transcript is one under agent-transcripts


if __name__ == "__main__":  # write the sample again
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else SAMPLE
    if target.exists():
        shutil.rmtree(target)
    print(build_sample(target))
