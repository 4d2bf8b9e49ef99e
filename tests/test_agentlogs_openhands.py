"""OpenHands' conversations: what is read, what is skipped and why, and hostile input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from archivist.agents import Session, openhands

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "openhands"
STATE = {"id": "c-1", "agent": {"llm": {"model": "m"}}, "workspace": {"working_dir": "/w"}}


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(openhands.read(path, problems)), problems


def write(conversations: Path, name: str, *events: Any, state: Any = STATE) -> Path:
    folder = conversations / name
    (folder / "events").mkdir(parents=True, exist_ok=True)
    if state is not None:
        (folder / "base_state.json").write_text(json.dumps(state))
    for index, event in enumerate(events):
        text = event if isinstance(event, str) else json.dumps(event)
        (folder / "events" / f"event-{index:05d}-{index:08x}.json").write_text(text)
    return folder


def said(role: str, text: str, **more: Any) -> dict[str, Any]:
    message = {"role": role, "content": [{"type": "text", "text": text}]}
    return {"kind": "MessageEvent", "timestamp": "2025-12-01T08:00:00.5", "llm_message": message, **more}


def action(name: str, arguments: Any, **more: Any) -> dict[str, Any]:
    call = {"id": "t", "name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}
    return {"kind": "ActionEvent", "timestamp": "2025-12-01T08:00:01", "tool_name": name, "tool_call": call, **more}


def test_the_sample_is_read_with_its_tools_edits_thinking_and_usage() -> None:
    (lantern, changelog), problems = read(SAMPLE / "conversations")
    assert problems == [] and lantern.problems == [] and changelog.problems == []
    assert (lantern.key, lantern.agent, lantern.project) == (
        "4f1c2a9e-7b3d-4e8f-9a0b-6c5d2e1f3a7b",
        "openhands",
        "/home/dev/src/lantern",
    )
    assert lantern.title == "The lantern CLI prints brightness as a fraction. Make it print a percentage."
    assert lantern.models == ["litellm_proxy/claude-sonnet-4-5-20250929"]
    assert (lantern.started, lantern.last) == ("2025-12-09T10:14:05Z", "2025-12-09T10:14:19Z")
    assert [m.role for m in lantern.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert lantern.messages[1].thinking.startswith("The print is probably") and lantern.messages[1].text.startswith(
        "I'll"
    )
    calls = [(c.name, c.files, c.commands, c.input) for m in lantern.messages for c in m.tool_calls]
    assert calls == [
        ("terminal", [], ["grep -rn brightness lantern/cli.py"], '{"summary":"Find where brightness is printed"}'),
        (
            "file_editor",
            ["/home/dev/src/lantern/lantern/cli.py"],
            [],
            '{"command":"str_replace","path":"/home/dev/src/lantern/lantern/cli.py"}',
        ),
    ]
    (edit,) = lantern.messages[3].tool_calls[0].edits
    assert (edit.old, edit.new) == ('    print(f"brightness: {level:.2f}")', '    print(f"brightness: {level:.0%}")')
    assert lantern.messages[2].tool_output == '18:    print(f"brightness: {level:.2f}")'
    spent = [m.usage for m in lantern.messages if m.role == "assistant"]
    assert [(u.input, u.output, u.cache_read, u.cache_write) for u in spent if u] == [
        (4, 118, 0, 8100),
        (4, 201, 8100, 86),
        (113, 93, 8100, 104),
    ]
    assert spent[-1] is not None and spent[-1].cost == 0.041817  # the conversation's cost, on its last reply


def test_an_image_a_rejected_call_and_usage_without_response_ids() -> None:
    (_, changelog), _ = read(SAMPLE / "conversations")
    assert changelog.key == "b27e90d4-c1a8-4f3e-8d5b-6a0c9e7f2d18" and changelog.models == ["openai/gpt-5"]
    first = changelog.messages[0]
    assert first.text.endswith("[image]") and first.attachments[0].type == "image/png"
    (create,) = changelog.messages[1].tool_calls
    assert create.edits[0].old is None and create.edits[0].new.startswith("# Changelog")
    assert changelog.messages[1].thinking.startswith("The project keeps no CHANGELOG")
    assert changelog.messages[2].tool_output == "Put it in docs/CHANGES.md instead."
    usage = changelog.messages[3].usage
    assert usage is not None and (usage.input, usage.output, usage.cache_read, usage.cost) == (4830, 240, 4480, 0.01394)


def test_openhands_folder_its_conversations_and_one_conversation_are_each_a_source(tmp_path: Path) -> None:
    conversations = tmp_path / ".openhands" / "conversations"
    folder = write(conversations, "0123456789abcdef0123456789abcdef", said("user", "hello"), state=None)
    for source in (tmp_path / ".openhands", conversations, folder):
        assert openhands.check(source) is None, source
        (session,), problems = read(source)
        assert (session.key, session.title, session.models, problems) == (
            "01234567-89ab-cdef-0123-456789abcdef",
            "hello",
            [],
            [],
        )
    assert "is a file" in (openhands.check(folder / "events" / "event-00000-00000000.json") or "")
    (tmp_path / "empty" / "conversations").mkdir(parents=True)
    assert "holds no OpenHands conversation yet" in (openhands.check(tmp_path / "empty") or "")
    assert "holds no OpenHands conversations folder" in (openhands.check(tmp_path / "empty" / "..") or "")


def test_the_calls_of_one_response_are_one_message_and_condensations_are_kept(tmp_path: Path) -> None:
    write(
        tmp_path,
        "c",
        said("user", "look around"),
        action("terminal", {"command": "ls"}, llm_response_id="r1", thought=[{"type": "text", "text": "Two looks."}]),
        action("terminal", {"command": "pwd"}, llm_response_id="r1"),
        {
            "kind": "ObservationEvent",
            "observation": {"content": [], "is_error": True, "metadata": {"working_dir": "/x"}},
        },
        {"kind": "AgentErrorEvent", "error": "terminal is busy"},
        {"kind": "CondensationSummaryEvent", "summary": "Looked at the folder."},
        {"kind": "PauseEvent"},
        state={"stats": {"usage_to_metrics": {"agent": {"token_usages": [{"response_id": "r1", "prompt_tokens": 9}]}}}},
    )
    (session,), problems = read(tmp_path)
    assert problems == [] and session.problems == []
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "tool", "system"]
    assert [c.commands for c in session.messages[1].tool_calls] == [["ls"], ["pwd"]]
    assert session.messages[1].text == "Two looks." and session.messages[1].usage is not None
    assert session.messages[1].usage.input == 9
    assert [m.tool_output for m in session.messages[2:4]] == ["error", "terminal is busy"]
    assert session.project == "/x" and session.key == "c"  # no state: the working directory the terminal told


def test_hostile_events_are_skipped_and_counted_never_raised(tmp_path: Path) -> None:
    write(
        tmp_path,
        "c",
        "not json",
        "[]",
        {"kind": "Mystery"},
        {"kind": "MessageEvent", "llm_message": {"role": "wizard", "content": "hi"}},
        said("user", "hello", timestamp=1e40),
        action("terminal", "{", tool_name=7, tool_call={"name": 8}),
        {"kind": "ActionEvent", "tool_name": "file_editor", "tool_call": {"arguments": "[1]"}, "action": "x"},
        {"kind": "ObservationEvent", "observation": ["x"]},
        state={"id": ["x"], "agent": "x", "stats": {"usage_to_metrics": {"a": {"accumulated_cost": "x"}, "b": 3}}},
    )
    (session,), problems = read(tmp_path)
    assert any("not JSON" in problem for problem in problems)  # the file that is no JSON: not read, told
    assert [m.role for m in session.messages] == ["user", "assistant", "tool"] and session.title == "hello"
    assert session.messages[1].tool_calls[0].input == "[1]" and session.models == []
    assert session.problems == [
        "4 events skipped: 1 not a JSON object, 1 unknown event, 1 unknown message role, 1 an action without its tool"
    ]


def test_a_conversation_without_messages_is_told_and_a_link_that_leads_out_is_never_opened(tmp_path: Path) -> None:
    write(tmp_path / "home", "empty", {"kind": "PauseEvent"})
    outside = write(tmp_path / "outside", "c", said("user", "secret"))
    (tmp_path / "home" / "c").symlink_to(outside)
    found, problems = read(tmp_path / "home")
    assert found == [] and "empty: no message" in problems
    assert any("symbolic link that leads out" in problem for problem in problems)
