"""gptme's conversations: what is read (messages, tool calls in each form, usage, the chat's
configuration), what is skipped and why, and hostile input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from archivist.agents import Session, gptme

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "gptme" / "logs"


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(gptme.read(path, problems)), problems


def write(folder: Path, lines: list[Any], name: str = "2026-01-02-test") -> Path:
    file = folder / name / "conversation.jsonl"
    file.parent.mkdir(parents=True, exist_ok=True)
    with file.open("wb") as handle:
        for line in lines:
            handle.write(line if isinstance(line, bytes) else (json.dumps(line) + "\n").encode())
    return file


def message(role: str, content: str, second: int = 0, **more: Any) -> dict[str, Any]:
    return {"role": role, "content": content, "timestamp": f"2026-01-02T10:00:{second:02d}.000001", **more}


def test_the_sample_is_read_with_its_tools_edits_usage_and_configuration() -> None:
    (older, newer), problems = read(SAMPLE)
    assert problems == [] and older.problems == [] and newer.problems == []
    assert (newer.key, newer.agent, newer.title, newer.project) == (
        "2025-11-04-fix-csv-dates",
        "gptme",
        "Fix CSV date format",
        "~/code/ledger",
    )
    assert newer.models == ["anthropic/claude-sonnet-4-5"] and newer.titled
    assert (newer.started, newer.last) == ("2025-11-04T09:30:12Z", "2025-11-04T09:30:23Z")
    roles = [m.role for m in newer.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]  # no system prompt
    assert newer.messages[0].attachments[0].name == "/home/mei/code/ledger/report.py"
    shell, patch = newer.messages[1].tool_calls[0], newer.messages[3].tool_calls[0]
    assert newer.messages[1].text == "Let me see where the dates are formatted."
    assert shell.commands == ["grep -n strftime report.py"]
    (edit,) = patch.edits
    assert (edit.file, edit.old, edit.new) == (
        "report.py",
        '        row["date"] = day.strftime("%m/%d/%Y")',
        '        row["date"] = day.isoformat()',
    )
    used = newer.messages[1].usage
    assert used is not None and (used.input, used.output, used.cache_write, used.cache_read, used.cost) == (
        3,
        61,
        2911,
        0,
        0.01182,
    )
    assert older.title == "write hello.py that prints the date" and not older.titled and older.project is None
    (save,) = older.messages[1].tool_calls
    assert save.name == "save" and save.files == ["hello.py"] and save.edits[0].old is None
    assert older.messages[1].usage is not None and older.messages[1].usage.input == 1840  # the older flat counts
    assert older.messages[2].tool_output == "Saved to hello.py"


def test_each_tool_form_is_a_call_and_leaves_the_text(tmp_path: Path) -> None:
    content = (
        "First.\n```shell\nls -la\n```\nThen python, not a tool:\n```python\nprint(1)\n```\n"
        '<tool-use>\n<read args="notes.md">\n</read>\n</tool-use>\n'
        '@shell(call_1): {"command": "make test"}\nDone.'
    )
    text, calls = gptme.tool_calls(content)
    assert [call.name for call in calls] == ["shell", "read", "shell"]
    assert calls[0].commands == ["ls -la"] and calls[1].files == ["notes.md"] and calls[2].commands == ["make test"]
    assert "ls -la" not in text and "print(1)" in text and "make test" not in text and text.endswith("Done.")


def test_a_system_message_after_calls_is_their_output_and_others_are_notices(tmp_path: Path) -> None:
    write(
        tmp_path,
        [
            message("system", "prompt", 0, hide=True, pinned=True),
            message("user", "hi", 1),
            message("assistant", "hello", 2),
            message("system", "Interrupted by user", 3),
        ],
    )
    (session,), _ = read(tmp_path)
    assert [(m.role, m.text) for m in session.messages] == [
        ("user", "hi"),
        ("assistant", "hello"),
        ("system", "Interrupted by user"),
    ]


def test_a_source_that_is_not_gptme_s_says_what_was_expected(tmp_path: Path) -> None:
    assert "does not exist" in str(gptme.check(tmp_path / "none"))
    assert "holds no conversation" in str(gptme.check(tmp_path))
    (tmp_path / "other.jsonl").write_text('{"type": "x"}\n', encoding="utf-8")
    assert "is not a gptme conversation" in str(gptme.check(tmp_path / "other.jsonl"))
    assert gptme.check(SAMPLE) is None
    assert gptme.check(SAMPLE / "2025-11-04-fix-csv-dates") is None
    assert gptme.check(SAMPLE / "2025-11-04-fix-csv-dates" / "conversation.jsonl") is None


def test_damaged_lines_and_hostile_values_are_skipped_and_told_never_raised(tmp_path: Path) -> None:
    write(
        tmp_path,
        [
            message("user", "keep me", 1),
            b'{"role": "assistant", "content": "cut\n',
            {"role": "tool", "content": "x"},
            [1, 2],
            message("assistant", "@shell(c): {" + '"a": [' * 50_000, 2, metadata={"usage": "many", "cost": "a lot"}),
            message("assistant", "```patch\n<<<<<<< ORIGINAL\n```", 3, metadata=[1]),
            message("assistant", "```save\n", 4, files=7, timestamp=None),
        ],
    )
    (folder := tmp_path / "2026-01-02-test").joinpath("config.toml").write_bytes(b"[chat\nname = \xff")
    (session,), problems = read(tmp_path)
    assert session.messages[0].text == "keep me" and problems == []
    assert session.problems == [
        "3 lines skipped: 1 not JSON, 2 a line that is no message (an object with a role and content)"
    ]
    assert session.title == "keep me" and folder.is_dir()
