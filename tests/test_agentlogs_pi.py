"""The pi coding agent's sessions: what is read, what is skipped and why, and hostile input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from archivist.agents import Session, pi

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "pi"
HEADER = {"type": "session", "version": 3, "id": "s-1", "timestamp": "2025-12-01T08:00:00.000Z", "cwd": "/w"}


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(pi.read(path, problems)), problems


def write(sessions: Path, name: str, *lines: Any, folder: str = "--w--") -> Path:
    (sessions / folder).mkdir(parents=True, exist_ok=True)
    file = sessions / folder / name
    file.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return file


def message(role: str, content: Any, **more: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "timestamp": "2025-12-01T08:00:05.000Z",
        "message": {"role": role, "content": content, **more},
    }


def test_the_sample_is_read_with_its_tools_edits_thinking_usage_and_titles() -> None:
    (notes, tides), problems = read(SAMPLE / "sessions")
    assert problems == [] and notes.problems == [] and tides.problems == []
    assert (tides.key, tides.agent, tides.title) == (
        "5b0e3c7a-1d24-4f6e-9a8b-2c7d1e4f6a90",
        "pi",
        "Winter tide times an hour late",
    )
    assert tides.project == "/home/dev/src/tidepool" and tides.models == ["claude-sonnet-4-5"]
    assert (tides.started, tides.last) == ("2025-11-18T14:02:11Z", "2025-11-18T14:02:53Z")
    roles = ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
    assert [m.role for m in tides.messages] == roles
    assert tides.messages[1].thinking.startswith("An hour off only in winter")
    calls = [(c.name, c.files, c.commands, c.input) for m in tides.messages for c in m.tool_calls]
    assert calls == [
        ("read", ["tidepool/times.py"], [], '{"path":"tidepool/times.py"}'),
        ("edit", ["tidepool/times.py"], [], '{"path":"tidepool/times.py"}'),
        ("bash", [], ["python -m pytest tests/test_times.py -q"], '{"timeout":120}'),
    ]
    (edit,) = tides.messages[3].tool_calls[0].edits
    assert (edit.old, edit.new) == (
        "def local(when):\n    return when + UTC_OFFSET\n",
        "def local(when):\n    return when.astimezone(ZONE)\n",
    )
    assert tides.messages[6].tool_output == "4 passed in 0.21s"
    spent = [m.usage for m in tides.messages if m.usage]
    total = spent[0] + spent[1] + spent[2] + spent[3]
    assert (total.input, total.output, total.cache_read, total.cache_write) == (16, 308, 18896, 6540)
    assert total.cost is not None and round(total.cost, 6) == 0.034861


def test_a_version_1_session_is_keyed_by_its_file_name_and_its_header_names_the_model() -> None:
    (notes, _), _ = read(SAMPLE / "sessions")
    assert notes.key == "0c1f9e2d-6a3b-4c58-8d7e-5f4a2b1c0d93" and notes.models == ["gpt-5"]
    assert notes.title == "Sort the reading list in drafts/ by author's surname."  # not the command before it
    assert notes.messages[0].text == "!ls drafts" and notes.messages[0].tool_output.startswith("ferry-timetable.md")
    (write_call,) = notes.messages[2].tool_calls
    assert write_call.edits[0].old is None and write_call.edits[0].new.startswith("- Atwood")
    assert notes.messages[4].usage is not None and notes.messages[4].usage.cache_read == 1792


def test_pi_s_folder_its_sessions_a_directory_s_folder_and_one_file_are_each_a_source(tmp_path: Path) -> None:
    sessions = tmp_path / ".pi" / "agent" / "sessions"
    file = write(sessions, "2025-12-01T08-00-00-000Z_s-1.jsonl", HEADER, message("user", "hello"))
    for source in (tmp_path / ".pi", tmp_path / ".pi" / "agent", sessions, file.parent, file):
        assert pi.check(source) is None, source
        (session,), problems = read(source)
        assert (session.key, session.title, problems) == ("s-1", "hello", [])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert "holds no pi sessions folder" in (pi.check(elsewhere) or "")
    (tmp_path / "new" / "sessions").mkdir(parents=True)
    assert "holds no pi session yet" in (pi.check(tmp_path / "new") or "")


def test_an_extension_s_message_is_not_the_conversation_and_hostile_lines_are_counted(tmp_path: Path) -> None:
    write(
        tmp_path,
        "s.jsonl",
        {**HEADER, "version": 2},
        "not json",
        "[]",
        {"type": "mystery"},
        message("hookMessage", "injected by an extension", customType="x", display=True),
        message("custom", "also an extension's", customType="x", display=False),
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
    assert skipped == "4 lines skipped: 1 not JSON, 1 not a JSON object, 1 unknown entry, 1 unknown message role"


def test_a_session_without_messages_is_told_and_a_link_that_leads_out_is_never_opened(tmp_path: Path) -> None:
    write(tmp_path / "home", "empty.jsonl", HEADER, {"type": "label", "label": "x"})
    outside = write(tmp_path / "outside", "s-1.jsonl", HEADER, message("user", "secret"))
    (tmp_path / "home" / "--w--" / "s-1.jsonl").symlink_to(outside)
    found, problems = read(tmp_path / "home")
    assert found == []
    assert any("symbolic link that leads out" in problem for problem in problems)
    assert "--w--/empty.jsonl: no message" in problems
