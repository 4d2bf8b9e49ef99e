"""Codebuff's chats: what is read, what is skipped and why, and hostile input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from archivist.agents import Session, codebuff

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "codebuff"


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(codebuff.read(path, problems)), problems


def write(home: Path, chat: str, messages: Any, project: str = "app") -> Path:
    folder = home / "projects" / project / "chats" / chat
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "chat-messages.json"
    file.write_text(messages if isinstance(messages, str) else json.dumps(messages))
    return file


def said(variant: str, content: str = "", **more: Any) -> dict[str, Any]:
    return {"id": "m", "variant": variant, "content": content, "timestamp": "2025-12-01T08:00:00.000Z", **more}


def test_the_sample_is_read_with_its_tools_edits_sub_agents_thinking_and_usage() -> None:
    (dim, warm), problems = read(SAMPLE)
    assert problems == [] and dim.problems == [] and warm.problems == []
    assert (dim.key, dim.agent, dim.project) == ("lantern/2025-12-14T10-02-41.307Z", "codebuff", "lantern")
    assert dim.title == "Make `lantern --dim` lower the brightness by ten percent instead of halving it."
    assert dim.models == ["anthropic/claude-sonnet-4.5"]
    assert (dim.started, dim.last) == ("2025-12-14T10:02:41Z", "2025-12-14T10:03:10Z")
    roles = ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant", "system"]
    assert [m.role for m in dim.messages] == roles
    first = dim.messages[1]
    assert first.thinking.startswith("The dim flag") and first.text.startswith("File Picker:\n\nRelevant:")
    calls = [(c.name, c.files, c.commands, c.input) for m in dim.messages for c in m.tool_calls]
    assert calls == [
        ("read_files", ["lantern/levels.py"], [], '{"paths":["lantern/levels.py"]}'),
        ("str_replace", ["lantern/levels.py"], [], '{"path":"lantern/levels.py"}'),
        (
            "run_terminal_command",
            [],
            ["python -m pytest tests/test_levels.py -q"],
            '{"process_type":"SYNC","timeout_seconds":60}',
        ),
    ]
    (edit,) = dim.messages[3].tool_calls[0].edits
    assert (
        edit.old is not None and edit.old.startswith("DIM_FACTOR") and edit.new is not None and "DIM_STEP" in edit.new
    )
    assert dim.messages[6].tool_output == "3 passed in 0.08s"
    usage = first.usage
    assert usage is not None and (usage.input, usage.output, usage.cache_write, usage.cache_read, usage.cost) == (
        5210,
        388,
        2940,
        11800,
        None,
    )
    assert dim.messages[8].text == "Network error: the request was cancelled."
    assert [m.role for m in warm.messages] == ["user", "assistant"] and warm.models == []


def test_each_folder_of_the_layout_and_one_chat_file_are_a_source(tmp_path: Path) -> None:
    file = write(tmp_path, "2025-12-01T08-00-00.000Z", [said("user", "hello")])
    chat = file.parent
    for source in (tmp_path, tmp_path / "projects", chat.parent.parent, chat.parent, chat, file):
        assert codebuff.check(source) is None, source
        (session,), problems = read(source)
        assert (session.key, session.title, session.project, problems) == (
            "app/2025-12-01T08-00-00.000Z",
            "hello",
            "app",
            [],
        )
    (tmp_path / "empty" / "projects").mkdir(parents=True)
    assert "holds no Codebuff chat yet" in (codebuff.check(tmp_path / "empty") or "")
    (tmp_path / "elsewhere").mkdir()
    assert "holds no Codebuff projects folder" in (codebuff.check(tmp_path / "elsewhere") or "")


def test_an_image_is_measured_and_interface_blocks_are_skipped(tmp_path: Path) -> None:
    image = {"type": "image", "image": "AAAA", "mediaType": "image/png", "filename": "shot.png"}
    plan = {"type": "plan", "content": "1. look"}
    write(
        tmp_path,
        "c",
        [
            said("user", "what is this?", blocks=[image]),
            said("ai", blocks=[plan, {"type": "text", "content": "A lamp."}]),
        ],
    )
    (session,), problems = read(tmp_path)
    assert problems == [] and session.problems == []
    assert (
        session.messages[0].text == "what is this?\n[image: shot.png]" and session.messages[0].attachments[0].size == 3
    )
    assert session.messages[1].text == "A lamp."


def test_hostile_messages_and_blocks_are_skipped_and_counted_never_raised(tmp_path: Path) -> None:
    deep: dict[str, Any] = {"type": "text", "content": "bottom"}
    for _ in range(40):
        deep = {"type": "agent", "agentName": "a", "blocks": [deep]}
    write(
        tmp_path,
        "c",
        [
            "x",
            said("wizard", "hi"),
            said("user", "hello", timestamp=1e40),
            said("ai", blocks=[7, {"type": "mystery"}, {"type": "tool", "toolName": 5, "input": "{"}, deep]),
            said("ai", metadata={"usage": {"inputTokens": -1}, "model": ["x"]}, content="ok"),
            said(
                "ai", blocks=[{"type": "tool", "toolName": "str_replace", "input": {"path": "a", "replacements": [1]}}]
            ),
        ],
    )
    (session,), problems = read(tmp_path)
    assert problems == [] and session.title == "hello"
    assert session.problems == [
        "5 parts skipped: 1 not a JSON object, 1 unknown variant, 1 a block that is not a JSON object, "
        "1 unknown block, 1 a sub-agent nested too deeply"
    ]
    assert session.messages[1].tool_calls[0].name == "tool" and session.messages[1].tool_calls[0].input == "{"
    assert session.messages[-2].tool_calls[0].edits == [] and session.models == []


def test_a_file_that_is_not_a_list_is_told_and_a_link_that_leads_out_is_never_opened(tmp_path: Path) -> None:
    write(tmp_path / "home", "a", {"not": "a list"})
    outside = write(tmp_path / "outside", "b", [said("user", "secret")])
    link = tmp_path / "home" / "projects" / "app" / "chats" / "b"
    link.symlink_to(outside.parent)
    found, problems = read(tmp_path / "home")
    assert (
        found == [] and "projects/app/chats/a/chat-messages.json: 1 part skipped: 1 not a list of messages" in problems
    )
    assert any("symbolic link that leads out" in problem for problem in problems)
