"""OpenClaw's sessions: what is read, what is skipped and why, and hostile input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from archivist.agents import Session, openclaw

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "openclaw"
HEADER = {"type": "session", "version": 3, "id": "s-1", "timestamp": "2026-02-19T08:00:00.000Z", "cwd": "/w"}


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(openclaw.read(path, problems)), problems


def write(home: Path, name: str, *lines: Any, agent: str = "main") -> Path:
    folder = home / "agents" / agent / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / name
    file.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return file


def message(role: str, content: Any, **more: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "x",
        "timestamp": "2026-02-19T08:00:05.000Z",
        "message": {"role": role, "content": content, **more},
    }


def test_the_sample_is_read_with_its_tools_edits_thinking_usage_and_summaries() -> None:
    (coder, main), problems = read(SAMPLE)
    assert problems == [] and main.problems == [] and coder.problems == []
    assert (main.key, main.agent, main.title) == (
        "7e2d4c1a-93b5-4f08-a6d1-2c5e8b9f0a37",
        "openclaw",
        "Basil repotting note",
    )
    assert main.project == "/home/ana/.openclaw/workspace" and main.models == ["claude-sonnet-4-5"]
    assert (main.started, main.last) == ("2025-12-19T08:00:00Z", "2025-12-19T08:00:13Z")
    assert [m.role for m in main.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert main.messages[1].thinking.startswith("The notes live") and main.messages[1].text == ""
    calls = [(c.name, c.files, c.input) for m in main.messages for c in m.tool_calls]
    assert calls == [
        ("read", ["notes/garden.md"], '{"path":"notes/garden.md"}'),
        ("edit", ["notes/garden.md"], '{"path":"notes/garden.md"}'),
    ]
    (edit,) = main.messages[3].tool_calls[0].edits
    assert edit.new is not None and edit.new.endswith("- Repot the basil this weekend.\n") and edit.old is not None
    assert main.messages[2].tool_output.startswith("# Garden")
    spent = [m.usage for m in main.messages if m.usage]
    total = spent[0] + spent[1] + spent[2]
    assert (total.input, total.output, total.cache_read, total.cache_write) == (12, 201, 19036, 9624)
    assert total.cost is not None and round(total.cost, 6) == 0.044849
    assert coder.title == "Why does the servo test fail only on a cold start?"  # not the command run before it
    assert [m.role for m in coder.messages] == ["system", "user", "user", "assistant", "tool", "assistant"]
    assert coder.messages[0].text.startswith("Earlier: the bird feeder")  # the compaction's summary
    assert coder.messages[1].text == "!pytest tests/test_servo.py -q" and coder.messages[1].tool_output.startswith(
        "1 failed"
    )
    assert coder.messages[3].tool_calls[0].commands == ["grep -n warm_up feeder/servo.py"]
    assert coder.models == ["gpt-5.1-codex"]
    for path in (SAMPLE, SAMPLE / "agents", SAMPLE / "agents" / "main", main.files[0].parent, main.files[0]):
        assert openclaw.check(path) is None, path


def test_an_image_is_measured_and_an_error_told_and_the_older_tool_use_read(tmp_path: Path) -> None:
    write(
        tmp_path,
        "s-1.jsonl",
        HEADER,
        message(
            "user",
            [{"type": "text", "text": "what is this?"}, {"type": "image", "mimeType": "image/png", "data": "AAAA"}],
        ),
        message(
            "assistant", [{"type": "tool_use", "id": "t", "name": "write", "input": {"path": "a.txt", "content": "hi"}}]
        ),
        message("toolResult", [], toolCallId="t", isError=True),
        message("assistant", [], errorMessage="rate limited", stopReason="error"),
    )
    (session,), problems = read(tmp_path)
    assert problems == [] and session.problems == []
    assert session.messages[0].text == "what is this?\n[image]" and session.messages[0].attachments[0].size == 3
    (call,) = session.messages[1].tool_calls
    assert (call.name, call.edits[0].old, call.edits[0].new, call.input) == ("write", None, "hi", '{"path":"a.txt"}')
    assert session.messages[2].tool_output == "error" and session.messages[3].text == "rate limited"


def test_hostile_lines_are_skipped_and_counted_never_raised(tmp_path: Path) -> None:
    write(
        tmp_path,
        "s-1.jsonl",
        HEADER,
        "not json",
        "[]",
        {"type": "mystery"},
        {"type": "message", "message": "nope"},
        message("wizard", "hi"),
        message("user", "hello", timestamp=1e40),
        message("assistant", [{"type": "toolCall", "name": 7, "arguments": "{"}], usage={"input": -1, "cost": "x"}),
        {"type": "session_info", "name": ["x"]},
    )
    (session,), problems = read(tmp_path)
    assert problems == []
    assert [m.role for m in session.messages] == ["user", "assistant"] and session.title == "hello"
    assert session.messages[1].tool_calls[0].name == "tool" and session.messages[1].usage is None
    (skipped,) = session.problems
    assert skipped == "5 lines skipped: 1 not JSON, 1 not a JSON object, 2 unknown entry, 1 unknown message role"


def test_reset_and_deleted_transcripts_are_read_and_a_shared_id_gets_two_keys(tmp_path: Path) -> None:
    said = message("user", "again")
    write(tmp_path, "s-1.jsonl", HEADER, said)
    write(tmp_path, "s-1.jsonl.reset.2026-02-17T09-39-39.691Z", HEADER, said)
    write(tmp_path, "sessions.json", {"agent:main:main": {"sessionId": "s-1"}})
    found, problems = read(tmp_path)
    assert problems == []
    assert [s.key for s in found] == ["s-1", "s-1@agents/main/sessions/s-1.jsonl.reset.2026-02-17T09-39-39.691Z"]


def test_a_transcript_without_messages_is_told_and_a_folder_without_agents_refused(tmp_path: Path) -> None:
    write(tmp_path, "s-1.jsonl", HEADER, {"type": "label", "label": "x"})
    found, problems = read(tmp_path)
    assert found == [] and problems == ["agents/main/sessions/s-1.jsonl: no message"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert "holds no OpenClaw agents folder" in (openclaw.check(elsewhere) or "")


def test_a_link_that_leads_out_is_never_opened(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", "s-1.jsonl", HEADER, message("user", "secret"))
    home = tmp_path / "home"
    folder = home / "agents" / "main" / "sessions"
    folder.mkdir(parents=True)
    (folder / "s-1.jsonl").symlink_to(outside)
    found, problems = read(home)
    assert found == [] and any("symbolic link that leads out" in problem for problem in problems)
