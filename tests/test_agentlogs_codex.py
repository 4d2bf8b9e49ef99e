"""Codex CLI rollouts read in place: what a session yields, what is skipped and told."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from archivist.agents import Attachment, codex
from archivist.agents.codex import tokens as codex_tokens

SESSION_ID = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
DAY = "2025/10/29"


# -- fixtures written from the format's description -------------------------------------


def line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def envelope(kind: str, timestamp: str, payload: dict[str, Any]) -> str:
    return line({"timestamp": timestamp, "type": kind, "payload": payload})


def meta(session_id: str = SESSION_ID, timestamp: str = "2025-10-29T00:59:38.317Z", **extra: Any) -> str:
    payload = {
        "id": session_id,
        "timestamp": timestamp,
        "cwd": "/home/ana/proj",
        "originator": "codex_cli_rs",
        "cli_version": "0.46.0",
        "instructions": None,
        "source": "cli",
        "model_provider": "openai",
        "git": {"commit_hash": "3f2a1bc9d0e4", "branch": "main", "repository_url": "git@github.com:ana/proj.git"},
    }
    payload.update(extra)
    return envelope("session_meta", timestamp, payload)


def user_item(text: str, timestamp: str) -> str:
    return envelope(
        "response_item",
        timestamp,
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
    )


def assistant_item(text: str, timestamp: str) -> str:
    return envelope(
        "response_item",
        timestamp,
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]},
    )


def event(timestamp: str, **payload: Any) -> str:
    return envelope("event_msg", timestamp, payload)


def turn_context(model: str, timestamp: str) -> str:
    return envelope(
        "turn_context",
        timestamp,
        {
            "cwd": "/home/ana/proj",
            "approval_policy": "on-request",
            "sandbox_policy": {"mode": "workspace-write", "network_access": False},
            "model": model,
            "effort": "medium",
            "summary": "auto",
        },
    )


def function_call(name: str, arguments: dict[str, Any], call_id: str, timestamp: str) -> str:
    return envelope(
        "response_item",
        timestamp,
        {"type": "function_call", "name": name, "arguments": json.dumps(arguments), "call_id": call_id},
    )


def function_output(call_id: str, output: str, timestamp: str) -> str:
    return envelope("response_item", timestamp, {"type": "function_call_output", "call_id": call_id, "output": output})


def turn(text: str, answer: str, second: int, model: str = "gpt-5-codex") -> str:
    """A user turn and its answer, each mirrored by its event as Codex writes them."""
    at = f"2025-10-29T01:{second // 60:02d}:{second % 60:02d}.000Z"
    return (
        user_item(text, at)
        + event(at, type="user_message", message=text, kind="plain")
        + turn_context(model, at)
        + event(at, type="agent_message", message=answer)
        + assistant_item(answer, at)
    )


ENVIRONMENT = (
    "<environment_context>\n  <cwd>/home/ana/proj</cwd>\n  <approval_policy>on-request</approval_policy>\n"
    "</environment_context>"
)
PATCH = "*** Begin Patch\n*** Update File: tests/test_api.py\n@@\n-assert x == 1\n+assert x == 2\n*** End Patch\n"


def normal_session() -> str:
    return (
        meta()
        + envelope(
            "response_item",
            "2025-10-29T00:59:38.317Z",
            {
                "type": "message",
                "role": "developer",
                "content": [
                    {"type": "input_text", "text": "<permissions instructions>never</permissions instructions>"}
                ],
            },
        )
        + user_item(ENVIRONMENT, "2025-10-29T00:59:38.317Z")
        + user_item("# AGENTS.md instructions for /home/ana/proj\n\nUse pytest.", "2025-10-29T00:59:38.317Z")
        + user_item("fix the failing test", "2025-10-29T00:59:38.318Z")
        + event("2025-10-29T00:59:38.318Z", type="user_message", message="fix the failing test", kind="plain")
        + turn_context("gpt-5-codex", "2025-10-29T00:59:38.320Z")
        + event("2025-10-29T00:59:39.000Z", type="task_started", turn_id="1", model_context_window=272000)
        + event("2025-10-29T00:59:40.100Z", type="agent_reasoning", text="**Inspecting the test**")
        + envelope(
            "response_item",
            "2025-10-29T00:59:40.101Z",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "**Inspecting the test**"}],
                "content": None,
                "encrypted_content": "gAAAAABo",
            },
        )
        + function_call(
            "shell",
            {"command": ["bash", "-lc", "pytest -q"], "workdir": "/home/ana/proj"},
            "call_Xk2f9",
            "2025-10-29T00:59:41.000Z",
        )
        + function_output(
            "call_Xk2f9",
            json.dumps({"output": "1 failed, 3 passed\n", "metadata": {"exit_code": 1, "duration_seconds": 2.4}}),
            "2025-10-29T00:59:43.500Z",
        )
        + function_call("view_image", {"path": "/home/ana/proj/screen.png"}, "call_V", "2025-10-29T00:59:44.000Z")
        + function_output("call_V", "attached", "2025-10-29T00:59:44.100Z")
        + envelope(
            "response_item",
            "2025-10-29T00:59:50.000Z",
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": "call_P1",
                "name": "apply_patch",
                "input": PATCH,
            },
        )
        + envelope(
            "response_item",
            "2025-10-29T00:59:50.300Z",
            {
                "type": "custom_tool_call_output",
                "call_id": "call_P1",
                "output": json.dumps({"output": "Success. Updated the following files:\nM tests/test_api.py\n"}),
            },
        )
        + event(
            "2025-10-29T00:59:55.000Z", type="agent_message", message="Fixed: the assertion expected the old value."
        )
        + assistant_item("Fixed: the assertion expected the old value.", "2025-10-29T00:59:55.001Z")
        + event(
            "2025-10-29T00:59:55.200Z",
            type="token_count",
            info={"total_token_usage": {"input_tokens": 10776, "output_tokens": 140}},
            rate_limits=None,
        )
        + user_item("now run the linter", "2025-10-29T01:02:00.000Z")
        + event("2025-10-29T01:02:00.000Z", type="user_message", message="now run the linter", kind="plain")
        + turn_context("gpt-5", "2025-10-29T01:02:00.100Z")
        + function_call(
            "shell_command",
            {"command": "ruff check .", "workdir": "/home/ana/proj"},
            "call_R",
            "2025-10-29T01:02:01.000Z",
        )
        + function_call("exec_command", {"cmd": "mypy src"}, "call_M", "2025-10-29T01:02:01.500Z")
        + function_output(
            "call_R", "Exit code: 0\nWall time: 0.4 seconds\nOutput:\nAll checks passed!\n", "2025-10-29T01:02:02.000Z"
        )
        + function_output("call_M", "Success: no issues found", "2025-10-29T01:02:03.000Z")
        + event("2025-10-29T01:02:04.000Z", type="agent_message", message="The linter is clean.")
        + assistant_item("The linter is clean.", "2025-10-29T01:02:04.001Z")
    )


def write(root: Path, relative: str, content: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def rollout_name(second: int = 38, session_id: str = SESSION_ID) -> str:
    return f"{DAY}/rollout-2025-10-29T00-59-{second:02d}-{session_id}.jsonl"


def only(sessions: list[codex.Session]) -> codex.Session:
    assert len(sessions) == 1, sessions
    return sessions[0]


# -- a normal session --------------------------------------------------------------------


def test_a_session_yields_its_messages_tools_thinking_models_branch_and_project(tmp_path: Path) -> None:
    sessions_dir = tmp_path / "sessions"
    file = write(sessions_dir, rollout_name(), normal_session())

    session = only(list(codex.read(sessions_dir)))

    assert session.key == SESSION_ID
    assert session.agent == "codex"
    assert session.title == "fix the failing test"
    assert session.project == "/home/ana/proj"
    assert session.branch == "main"
    assert session.models == ["gpt-5-codex", "gpt-5"]
    assert session.started == "2025-10-29T00:59:38Z"
    assert session.last == "2025-10-29T01:02:04Z"
    assert session.files == [file]
    assert session.problems == []
    assert session.parent is None

    summary = [(m.role, m.text, [(c.name, c.files, c.commands) for c in m.tool_calls]) for m in session.messages]
    assert summary == [
        ("user", "fix the failing test", []),
        ("assistant", "", [("shell", [], ["pytest -q"])]),
        ("tool", "", []),
        ("assistant", "", [("view_image", ["/home/ana/proj/screen.png"], [])]),
        ("tool", "", []),
        ("assistant", "", [("apply_patch", ["tests/test_api.py"], [])]),
        ("tool", "", []),
        ("assistant", "Fixed: the assertion expected the old value.", []),
        ("user", "now run the linter", []),
        ("assistant", "", [("shell_command", [], ["ruff check ."]), ("exec_command", [], ["mypy src"])]),
        ("tool", "", []),
        ("tool", "", []),
        ("assistant", "The linter is clean.", []),
    ]
    messages = session.messages
    # Reasoning is thinking, once although the event repeats it.
    assert messages[1].thinking == "**Inspecting the test**"
    assert [m.thinking for m in messages if m.thinking] == ["**Inspecting the test**"]
    # Tool output is kept apart from the text; the JSON envelope of old shell tools is opened.
    assert messages[2].tool_output == "1 failed, 3 passed\n"
    assert messages[6].tool_output == "Success. Updated the following files:\nM tests/test_api.py\n"
    assert messages[10].tool_output.endswith("All checks passed!\n")
    # Each message keeps its own time; assistant messages the model of their turn.
    assert messages[0].timestamp == "2025-10-29T00:59:38Z"
    assert messages[2].timestamp == "2025-10-29T00:59:43Z"
    assert messages[7].model == "gpt-5-codex"
    assert messages[12].model == "gpt-5"
    assert messages[0].model is None
    # Injected context is not the user's words.
    assert not any("environment_context" in m.text or "AGENTS.md" in m.text for m in messages)


def test_event_and_response_item_mirrors_are_one_message_in_either_order(tmp_path: Path) -> None:
    at = "2025-10-29T01:00:00.000Z"
    text = "same words"
    content = (
        meta()
        + event(at, type="user_message", message=text)
        + user_item(text, at)
        + event(at, type="agent_message", message="reply")
        + assistant_item("reply", at)
        + user_item(text, at)  # said again, later: a message of its own
        + event(at, type="user_message", message=text)
        + assistant_item("reply", at)
        + event(at, type="agent_message", message="reply")
    )
    write(tmp_path, rollout_name(), content)

    session = only(list(codex.read(tmp_path)))

    assert [(m.role, m.text) for m in session.messages] == [
        ("user", text),
        ("assistant", "reply"),
        ("user", text),
        ("assistant", "reply"),
    ]


def test_the_two_copies_of_a_message_pair_by_their_place_even_when_their_texts_differ(tmp_path: Path) -> None:
    """A pasted image, or a later version of Codex, makes the item and the event differ: still one message each."""
    at = "2025-10-29T01:00:00.000Z"
    content = (
        meta()
        + user_item("what is on this screenshot?", at)
        + event(at, type="user_message", message="what is on this screenshot?", images=["data:image/png;base64,AAAA"])
        + event(at, type="agent_message", message="A login form with **two** fields.")
        + assistant_item("A login form with two fields.", at)
        + user_item("and the button?", at)
        + event(at, type="user_message", message="and the button? [image]")
        + event(at, type="user_message", message="what about the footer?")
        + user_item("also check the server logs", at)
        + assistant_item("It says Sign in.", at)
    )
    write(tmp_path, rollout_name(), content)

    session = only(list(codex.read(tmp_path)))

    assert [(m.role, m.text) for m in session.messages] == [
        ("user", "what is on this screenshot?"),
        ("assistant", "A login form with **two** fields."),
        ("user", "and the button?"),
        ("user", "what about the footer?"),  # written only as an event
        ("user", "also check the server logs"),  # only as an item, next to it, but not its copy
        ("assistant", "It says Sign in."),
    ]
    # the image the event's copy carried is the kept message's, measured, never its data
    assert [m.attachments for m in session.messages if m.role == "user"][:2] == [
        [Attachment("image/png", None, 3)],
        [],
    ]


def test_an_editor_wrapped_request_is_the_users_words(tmp_path: Path) -> None:
    at = "2025-10-29T01:00:00.000Z"
    wrapped = "# Context from my IDE setup:\n\n## Active file: app.py\n\n## My request for Codex:\nrename the helper\n"
    content = meta() + user_item(wrapped, at) + event(at, type="user_message", message="rename the helper")
    content += assistant_item("Done.", at)
    write(tmp_path, rollout_name(), content)

    session = only(list(codex.read(tmp_path)))

    assert [(m.role, m.text) for m in session.messages] == [("user", "rename the helper"), ("assistant", "Done.")]


def test_a_command_the_user_ran_is_a_tool_call_of_their_message(tmp_path: Path) -> None:
    at = "2025-10-29T01:00:00.000Z"
    shell = "<user_shell_command>\n<command>git status</command>\n<result>\nExit code: 0\nOutput:\nclean\n</result>\n</user_shell_command>"
    write(tmp_path, rollout_name(), meta() + user_item("check the tree", at) + user_item(shell, at))

    session = only(list(codex.read(tmp_path)))

    ran = session.messages[1]
    assert (ran.role, ran.text) == ("user", "")
    assert [(c.name, c.commands) for c in ran.tool_calls] == [("user_shell", ["git status"])]
    assert "clean" in ran.tool_output


def test_paginated_rollouts_read_turn_items(tmp_path: Path) -> None:
    at = "2025-10-29T01:00:00.000Z"
    content = (
        meta(history_mode="paginated")
        + event(
            at,
            type="item_completed",
            item={"type": "UserMessage", "id": "u1", "content": [{"type": "text", "text": "hi"}]},
        )
        + event(
            at,
            type="item_completed",
            item={"type": "Reasoning", "id": "r1", "summary_text": ["Greeting"], "raw_content": []},
        )
        + event(
            at,
            type="item_completed",
            item={"type": "AgentMessage", "id": "a1", "content": [{"type": "Text", "text": "hello"}]},
        )
        + assistant_item("hello", at)
    )
    write(tmp_path, rollout_name(), content)

    session = only(list(codex.read(tmp_path)))

    assert [(m.role, m.text, m.thinking) for m in session.messages] == [
        ("user", "hi", ""),
        ("assistant", "hello", "Greeting"),
    ]


def test_a_rolled_back_turn_is_dropped(tmp_path: Path) -> None:
    content = meta() + turn("first", "one", 1) + turn("second", "two", 2)
    content += event("2025-10-29T01:00:03.000Z", type="thread_rolled_back", num_turns=1) + turn("third", "three", 4)
    write(tmp_path, rollout_name(), content)

    session = only(list(codex.read(tmp_path)))

    assert [m.text for m in session.messages] == ["first", "one", "third", "three"]


# -- titles --------------------------------------------------------------------------------


def test_the_thread_name_is_the_title(tmp_path: Path) -> None:
    content = meta() + turn("fix it", "fixed", 1)
    content += event(
        "2025-10-29T01:00:05.000Z", type="thread_name_updated", thread_id=SESSION_ID, thread_name="Flaky API test"
    )
    write(tmp_path, rollout_name(), content)

    assert only(list(codex.read(tmp_path))).title == "Flaky API test"


def test_a_name_from_the_codex_homes_session_index_is_the_title(tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    write(home / "sessions", rollout_name(), meta() + turn("fix it", "fixed", 1))
    write(home / "sessions", rollout_name(40, "other"), meta("other") + turn("x" * 200, "ok", 2))
    write(
        home,
        "session_index.jsonl",
        line({"id": SESSION_ID, "thread_name": "Old name", "updated_at": "2025-10-29T01:00:00Z"})
        + line({"id": SESSION_ID, "thread_name": "API fix", "updated_at": "2025-10-29T02:00:00Z"}),
    )

    titles = {s.key: s.title for s in codex.read(home / "sessions" / "2025")}

    assert titles[SESSION_ID] == "API fix"
    assert titles["other"] == "x" * 79 + "…"  # no name: the first user message, shortened


# -- older formats -------------------------------------------------------------------------


def test_the_bare_format_without_envelopes(tmp_path: Path) -> None:
    content = (
        line(
            {
                "id": "c3c4b301-27c8-4c70-b6e4-46b99fdf0236",
                "timestamp": "2025-08-18T01:16:13.522Z",
                "instructions": None,
                "git": {"commit_hash": "abc123", "branch": "feature/x"},
            }
        )
        + line({"record_type": "state"})
        + line(
            {
                "type": "message",
                "id": None,
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<environment_context>\n  <cwd>/Users/x/dev/thing</cwd>\n</environment_context>",
                    }
                ],
            }
        )
        + line(
            {"type": "message", "id": None, "role": "user", "content": [{"type": "input_text", "text": "hello codex"}]}
        )
        + line({"record_type": "state"})
        + line(
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "Say hello"}],
                "encrypted_content": "x",
            }
        )
        + line(
            {
                "type": "function_call",
                "id": "fc_1",
                "name": "shell",
                "arguments": '{"command":["ls","-la"]}',
                "call_id": "c1",
            }
        )
        + line(
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": '{"output":"a.txt\\n","metadata":{"exit_code":0}}',
            }
        )
        + line(
            {"type": "message", "id": None, "role": "assistant", "content": [{"type": "output_text", "text": "Hello!"}]}
        )
    )
    file = write(tmp_path, "2025/08/18/rollout-2025-08-18T01-16-13-c3c4b301-27c8-4c70-b6e4-46b99fdf0236.jsonl", content)
    modified = 1755480000  # 2025-08-18T01:20:00Z
    os.utime(file, (modified, modified))

    session = only(list(codex.read(tmp_path)))

    assert session.key == "c3c4b301-27c8-4c70-b6e4-46b99fdf0236"
    assert session.project == "/Users/x/dev/thing"
    assert session.branch == "feature/x"
    assert session.models == []
    assert session.problems == []
    assert [(m.role, m.text, m.timestamp) for m in session.messages] == [
        ("user", "hello codex", None),
        ("assistant", "", None),
        ("tool", "", None),
        ("assistant", "Hello!", None),
    ]
    assert session.messages[1].tool_calls[0].commands == ["ls -la"]
    assert session.messages[1].thinking == "Say hello"
    assert session.messages[2].tool_output == "a.txt\n"
    assert session.started == "2025-08-18T01:16:13Z"
    assert session.last == "2025-08-18T01:20:00Z"


def test_a_session_meta_with_nested_meta(tmp_path: Path) -> None:
    payload = {
        "meta": {"id": "nested-1", "timestamp": "2025-09-01T10:00:00Z", "cwd": "/srv/app"},
        "git": {"branch": "dev"},
    }
    content = envelope("session_meta", "2025-09-01T10:00:00Z", payload) + turn("hi", "hello", 1)
    write(tmp_path, rollout_name(), content)

    session = only(list(codex.read(tmp_path)))

    assert (session.key, session.project, session.branch) == ("nested-1", "/srv/app", "dev")


def test_the_oldest_clis_json_document(tmp_path: Path) -> None:
    document = {
        "session": {"timestamp": "2025-04-20T09:00:00.000Z", "id": "ts-era-1", "instructions": ""},
        "items": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list the files"}]},
            {"type": "function_call", "name": "shell", "arguments": '{"command":["bash","-lc","ls"]}', "call_id": "c1"},
            {"type": "function_call_output", "call_id": "c1", "output": '{"output":"a.py\\n","metadata":{}}'},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "One file: a.py"}]},
        ],
    }
    write(tmp_path, "rollout-2025-04-20-ts-era-1.json", json.dumps(document, indent=2))

    session = only(list(codex.read(tmp_path)))

    assert session.key == "ts-era-1"
    assert [m.text for m in session.messages] == ["list the files", "", "", "One file: a.py"]
    assert session.messages[1].tool_calls[0].commands == ["ls"]
    assert session.started == "2025-04-20T09:00:00Z"


# -- forks and sub-agents ------------------------------------------------------------------


def parent_and_fork(tmp_path: Path) -> tuple[Path, Path]:
    parent = meta("parent-1") + turn("first question", "first answer", 1) + turn("second question", "second answer", 2)
    copied = (
        meta("parent-1") + turn("first question", "first answer", 1) + turn("second question", "second answer", 2)
    ).replace("2025-10-29T01:00", "2025-10-29T03:00")  # copied lines get the time of the copy
    child = (
        meta("child-1", "2025-10-29T03:00:00.000Z", forked_from_id="parent-1")
        + copied
        + turn("a question of the fork", "its answer", 30)
    )
    parent_file = write(tmp_path / "sessions", rollout_name(10, "parent-1"), parent)
    child_file = write(tmp_path / "sessions", "2025/10/30/rollout-2025-10-30T03-00-00-child-1.jsonl", child)
    return parent_file, child_file


def test_a_fork_loses_the_history_it_copied_from_its_parent(tmp_path: Path) -> None:
    parent_and_fork(tmp_path)

    sessions = {s.key: s for s in codex.read(tmp_path / "sessions")}

    assert [m.text for m in sessions["parent-1"].messages] == [
        "first question",
        "first answer",
        "second question",
        "second answer",
    ]
    fork = sessions["child-1"]
    assert [m.text for m in fork.messages] == ["a question of the fork", "its answer"]
    assert fork.title == "a question of the fork"
    assert fork.parent is None  # a fork is a conversation of its own, not a sub-agent


def test_a_fork_read_without_its_parent_keeps_everything(tmp_path: Path) -> None:
    _, child_file = parent_and_fork(tmp_path)

    fork = only(list(codex.read(child_file)))

    assert len(fork.messages) == 6


def test_a_sub_agent_names_its_parent(tmp_path: Path) -> None:
    write(tmp_path, rollout_name(10, "parent-2"), meta("parent-2") + turn("review the code", "spawning a reviewer", 1))
    source = {"subagent": {"thread_spawn": {"parent_thread_id": "parent-2", "depth": 1}}}
    write(
        tmp_path, rollout_name(20, "agent-2"), meta("agent-2", source=source) + turn("review app.py", "looks fine", 2)
    )

    sessions = {s.key: s for s in codex.read(tmp_path)}

    assert sessions["agent-2"].parent == "parent-2"
    assert [m.text for m in sessions["agent-2"].messages] == ["review app.py", "looks fine"]
    assert sessions["parent-2"].parent is None


# -- reading on ----------------------------------------------------------------------------


def tokens_event(at: str, input_tokens: int, output_tokens: int) -> str:
    info = {
        "total_token_usage": {"input_tokens": input_tokens, "cached_input_tokens": 0, "output_tokens": output_tokens}
    }
    return event(at, type="token_count", info=info)


def total_before_in_time(file: Path, start: int) -> codex_tokens.Counts | None:
    """``total_before``, failed when it does not come back within seconds."""
    found: list[codex_tokens.Counts | None] = []
    worker = threading.Thread(target=lambda: found.append(codex_tokens.total_before(file, start)), daemon=True)
    worker.start()
    worker.join(10)
    assert found, "total_before did not come back"
    return found[0]


def test_the_total_before_a_resume_point_is_found_past_lines_longer_than_a_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(codex_tokens, "CHUNK_BYTES", 16)
    at = "2025-10-29T01:00:00.000Z"
    before = meta() + tokens_event(at, 100, 10) + function_output("c1", "y" * 200, at)
    file = write(tmp_path, rollout_name(), before + function_output("c2", "z" * 300, at) + user_item("next", at))
    start = file.stat().st_size - len(user_item("next", at).encode())

    assert total_before_in_time(file, start) == {"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 10}
    assert total_before_in_time(file, len(before.encode())) == {
        "input_tokens": 100,
        "cached_input_tokens": 0,
        "output_tokens": 10,
    }


def test_a_line_before_the_resume_point_longer_than_a_line_may_be_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(codex_tokens, "CHUNK_BYTES", 16)
    monkeypatch.setattr(codex_tokens, "MAX_LINE_BYTES", 400)
    at = "2025-10-29T01:00:00.000Z"
    padded = tokens_event(at, 900, 90).replace('"payload":', '"pad": "' + "p" * 500 + '", "payload":', 1)
    content = meta() + tokens_event(at, 100, 10) + padded
    file = write(tmp_path, rollout_name(), content + user_item("next", at))

    assert total_before_in_time(file, len(content.encode())) == {
        "input_tokens": 100,
        "cached_input_tokens": 0,
        "output_tokens": 10,
    }


def test_reading_on_past_a_long_line_counts_what_a_whole_read_counts(tmp_path: Path) -> None:
    at = "2025-10-29T01:00:00.000Z"
    call = function_call("shell", {"command": ["cat", "big.log"]}, "c1", at)
    content = meta() + user_item("show me the log", at) + call + function_output("c1", "y" * 100_000, at)
    file = write(tmp_path, rollout_name(), content + user_item("now summarise it", at))
    session = only(list(codex.read(tmp_path)))
    assert session.tail is not None
    with file.open("a", encoding="utf-8") as handle:
        handle.write(assistant_item("It says nothing new.", at) + tokens_event(at, 100, 10))

    found: list[codex.Session | None] = []
    resume = session.tail.resume_at
    worker = threading.Thread(
        target=lambda: found.append(codex.read_from(file, resume, session.key, session.project, session.models)),
        daemon=True,
    )
    worker.start()
    worker.join(10)

    assert found and found[0] is not None, "read_from did not come back"
    assert [m.usage and (m.usage.input, m.usage.output) for m in found[0].messages if m.role == "assistant"] == [
        (100, 10)
    ]


def test_a_token_count_line_with_a_carriage_return_is_found_when_reading_on(tmp_path: Path) -> None:
    at = "2025-10-29T01:00:00.000Z"
    first = tokens_event(at, 100, 10).replace('"payload":', '"payload":\r', 1)
    file = write(
        tmp_path,
        rollout_name(),
        meta() + user_item("one", at) + assistant_item("first", at) + first + user_item("two", at),
    )
    session = only(list(codex.read(tmp_path)))
    assert session.tail is not None
    with file.open("a", encoding="utf-8") as handle:
        handle.write(assistant_item("second", at) + tokens_event(at, 250, 30))

    read_on = codex.read_from(file, session.tail.resume_at, session.key, session.project, session.models)

    assert read_on is not None
    answers = [m for m in read_on.messages if m.role == "assistant"]
    assert [(m.text, m.usage and (m.usage.input, m.usage.output)) for m in answers] == [("second", (150, 20))]


# -- damage --------------------------------------------------------------------------------


def test_a_truncated_last_line_is_skipped_silently(tmp_path: Path) -> None:
    content = meta() + turn("fix it", "fixed", 1)
    partial = assistant_item("this reply is still being writ", "2025-10-29T01:00:09.000Z")[:60]
    write(tmp_path, rollout_name(), content + partial)

    session = only(list(codex.read(tmp_path)))

    assert [m.text for m in session.messages] == ["fix it", "fixed"]
    assert session.problems == []


def test_malformed_lines_and_unknown_types_are_skipped_and_counted(tmp_path: Path) -> None:
    content = (
        meta()
        + turn("fix it", "fixed", 1)
        + "{this is not json\n"
        + line({"timestamp": "2025-10-29T01:00:02.000Z", "type": "mystery", "payload": {}})
        + turn("and then", "done", 3)
    )
    write(tmp_path, rollout_name(), content)

    session = only(list(codex.read(tmp_path)))

    assert [m.text for m in session.messages] == ["fix it", "fixed", "and then", "done"]
    assert session.problems == ["2 lines skipped: 1 not JSON, 1 unknown type 'mystery'"]


def test_bytes_that_are_not_utf8_are_replaced_and_told(tmp_path: Path) -> None:
    content = (meta() + turn("caf\u00e9 time", "ok", 1)).encode().replace("caf\u00e9".encode(), b"caf\xe9")
    write(tmp_path, rollout_name(), content)

    session = only(list(codex.read(tmp_path)))

    assert [m.text for m in session.messages] == ["caf\ufffd time", "ok"]  # the event mirrors it, damaged alike
    assert session.problems == ["2 lines not valid UTF-8: decoded with replacement characters"]


def test_a_session_without_messages_is_not_yielded(tmp_path: Path) -> None:
    write(tmp_path, rollout_name(1, "empty-1"), meta("empty-1") + turn_context("gpt-5", "2025-10-29T01:00:00Z"))
    write(tmp_path, rollout_name(2, "empty-2"), "")
    write(
        tmp_path, rollout_name(3, "context-only"), meta("context-only") + user_item(ENVIRONMENT, "2025-10-29T01:00:00Z")
    )
    write(tmp_path, rollout_name(4, "real"), meta("real") + turn("hello", "hi", 1))

    assert [s.key for s in codex.read(tmp_path)] == ["real"]


def test_the_same_session_id_in_two_files_gets_two_keys(tmp_path: Path) -> None:
    write(tmp_path, "sessions/" + rollout_name(), meta() + turn("hello", "hi", 1))
    write(
        tmp_path, f"archived_sessions/rollout-2025-10-29T00-59-38-{SESSION_ID}.jsonl", meta() + turn("hello", "hi", 1)
    )

    keys = [s.key for s in codex.read(tmp_path)]

    assert keys == [SESSION_ID, f"{SESSION_ID}@sessions/{rollout_name()}"]


# -- check() -------------------------------------------------------------------------------


def test_check_accepts_a_sessions_folder_a_folder_under_it_and_a_rollout(tmp_path: Path) -> None:
    sessions_dir = tmp_path / "home" / "sessions"
    file = write(sessions_dir, rollout_name(), normal_session())
    bare = write(tmp_path, "bare/rollout-2025-08-18-x.jsonl", line({"id": "x", "timestamp": "2025-08-18T01:16:13Z"}))
    starting = write(tmp_path, "starting/rollout-2025-10-29T00-59-38-y.jsonl", "")  # created, nothing written yet

    assert codex.check(sessions_dir) is None
    assert codex.check(sessions_dir / "2025" / "10") is None
    assert codex.check(tmp_path / "home") is None
    assert codex.check(file) is None
    assert codex.check(bare) is None
    assert codex.check(starting) is None
    assert codex.check(str(file)) is None


def test_check_says_what_was_expected(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    empty = tmp_path / "empty"
    empty.mkdir()
    fresh = tmp_path / "fresh" / "sessions"
    fresh.mkdir(parents=True)
    claude = write(
        tmp_path,
        "claude/7f3c2a10.jsonl",
        line({"type": "user", "sessionId": "7f3c2a10", "message": {"role": "user", "content": "hi"}, "uuid": "a"}),
    )
    gemini = write(tmp_path, "gemini/session-1.json", json.dumps({"sessionId": "s", "messages": []}))
    wrong_rollout = write(tmp_path, "odd/rollout-2025-01-01-x.jsonl", "just some text\n")

    for path in (missing, empty, fresh, fresh.parent, claude, gemini, wrong_rollout.parent, wrong_rollout):
        reason = codex.check(path)
        assert reason is not None, path
        assert str(path) in reason
        assert "rollout-*.jsonl" in reason
    assert "does not exist" in (codex.check(missing) or "")
    assert "no Codex session yet" in (codex.check(fresh) or "")


# -- order, and nothing written -------------------------------------------------------------


def test_sessions_come_in_the_order_of_their_paths_every_time(tmp_path: Path) -> None:
    for day, second, session_id in (
        ("2025/11/02", 5, "c"),
        ("2025/10/29", 59, "b"),
        ("2025/10/29", 1, "a"),
        ("2025/12/01", 0, "d"),
    ):
        stamp = day.replace("/", "-")
        write(
            tmp_path,
            f"{day}/rollout-{stamp}T00-00-{second:02d}-{session_id}.jsonl",
            meta(session_id) + turn(session_id, "ok", 1),
        )

    first = [s.key for s in codex.read(tmp_path)]
    again = [s.key for s in codex.read(tmp_path)]

    assert first == ["a", "b", "c", "d"]
    assert again == first


def snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    return {
        path.relative_to(root).as_posix(): (
            path.stat().st_mtime_ns,
            path.stat().st_size,
            hashlib.sha256(path.read_bytes()).hexdigest(),
        )
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_reading_writes_nothing(tmp_path: Path) -> None:
    parent_and_fork(tmp_path)
    write(tmp_path, "sessions/" + rollout_name(), normal_session() + '{"cut": ')
    write(tmp_path, "session_index.jsonl", line({"id": SESSION_ID, "thread_name": "named"}))
    before = snapshot(tmp_path)
    folders_before = sorted(p.as_posix() for p in tmp_path.rglob("*"))

    assert codex.check(tmp_path / "sessions") is None
    assert len(list(codex.read(tmp_path / "sessions"))) == 3

    assert snapshot(tmp_path) == before
    assert sorted(p.as_posix() for p in tmp_path.rglob("*")) == folders_before
