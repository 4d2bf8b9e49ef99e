"""Kimi CLI's sessions: what is read, what is skipped and why, and hostile input."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from archivist.agents import Session, kimi_cli

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "kimi-cli"
WORK_DIR = "/home/mei/code/invoice-tool"
HASHED = hashlib.md5(WORK_DIR.encode()).hexdigest()


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(kimi_cli.read(path, problems)), problems


def event(at: float, kind: str, payload: Any) -> dict[str, Any]:
    return {"timestamp": at, "message": {"type": kind, "payload": payload}}


def write_wire(home: Path, session_id: str, *lines: Any) -> Path:
    folder = home / "sessions" / HASHED / session_id
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "wire.jsonl"
    texts = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    file.write_text("\n".join([json.dumps({"type": "metadata", "protocol_version": "1.3"}), *texts]) + "\n")
    return file


def test_the_sample_is_read_from_its_wire_logs_with_tools_edits_thinking_and_usage() -> None:
    (older, session), problems = read(SAMPLE)
    assert problems == [] and session.problems == [] and older.problems == []
    assert (session.key, session.agent) == ("3c1e9f0a-6b7d-4e2a-9f51-8d0c2b7a4e16", "kimi-cli")
    assert session.title == "Invoice totals off by a cent"  # state.json's custom_title
    assert session.project == WORK_DIR and session.models == []  # kimi.json's work directory; no log names a model
    assert (session.started, session.last) == ("2025-11-14T11:30:12Z", "2025-11-14T11:30:27Z")
    roles = [m.role for m in session.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
    assert session.messages[1].thinking.startswith("A one-cent drift") and "drift" not in session.messages[1].text
    calls = [(c.name, c.files, c.commands) for m in session.messages for c in m.tool_calls]
    file = f"{WORK_DIR}/src/invoice/totals.py"
    assert calls == [
        ("ReadFile", [file], []),
        ("StrReplaceFile", [file], []),
        ("Shell", [], ["python -m pytest tests/test_totals.py -q"]),
    ]
    (edit,) = session.messages[3].tool_calls[0].edits
    assert edit.old is not None and edit.old.strip().startswith("return sum(round(") and "quantize" in (edit.new or "")
    assert session.messages[3].tool_calls[0].input == json.dumps({"path": file}, separators=(",", ":"))
    assert session.messages[6].tool_output == "Command executed successfully.\n....\n4 passed in 0.12s"
    spent = [m.usage for m in session.messages if m.usage]
    total = spent[0] + spent[1] + spent[2] + spent[3]
    assert (total.input, total.output, total.cache_read, total.cache_write) == (1785, 369, 46080, 0)
    assert older.key == "0b7d2c44-1e9a-4f3b-8c6d-5a2e9f107b38" and older.project == WORK_DIR
    assert older.title == "Add a --currency option to the export command."  # its first request: no title given
    assert [m.role for m in older.messages] == ["user", "assistant", "tool", "assistant"]
    assert older.messages[1].tool_calls[0].edits[0].old is None  # WriteFile: the file written whole
    assert older.messages[2].tool_output == "File successfully overwritten. Current size: 52 bytes."
    for path in (SAMPLE, SAMPLE / "sessions", SAMPLE / "sessions" / HASHED, session.files[0], session.files[0].parent):
        assert kimi_cli.check(path) is None, path


def test_each_step_is_one_assistant_message_with_its_usage_even_after_its_tool_results(tmp_path: Path) -> None:
    usage = {"input_other": 10, "output": 5, "input_cache_read": 100, "input_cache_creation": 2}
    write_wire(
        tmp_path,
        "s1",
        event(1768390212, "TurnBegin", {"user_input": "hello"}),
        event(1768390213, "StepBegin", {"n": 1}),
        event(1768390214, "ToolCall", {"id": "a", "function": {"name": "Glob", "arguments": '{"pattern": "*.py"}'}}),
        event(1768390215, "ToolResult", {"tool_call_id": "a", "return_value": {"is_error": False, "output": "a.py"}}),
        event(1768390216, "ContentPart", {"type": "text", "text": "Found one."}),
        event(1768390217, "StatusUpdate", {"token_usage": usage}),
        event(1768390218, "TurnEnd", {}),
    )
    (session,), _ = read(tmp_path)
    assert [m.role for m in session.messages] == ["user", "assistant", "tool"]
    step = session.messages[1]
    assert step.text == "Found one." and step.tool_calls[0].input == '{"pattern":"*.py"}'
    assert step.usage is not None and (step.usage.input, step.usage.cache_read, step.usage.cache_write) == (10, 100, 2)
    assert session.project is None  # no kimi.json: the work directory is not known
    assert session.title == "hello"


def test_a_failed_tool_says_its_message_and_several_replacements_are_several_edits(tmp_path: Path) -> None:
    edits = [{"old": "a", "new": "b"}, {"old": "c", "new": "d", "replace_all": True}]
    args = json.dumps({"path": "/w/x.py", "edit": edits})
    write_wire(
        tmp_path,
        "s1",
        event(1, "TurnBegin", {"user_input": [{"type": "text", "text": "edit it"}]}),
        event(2, "ToolCall", {"id": "e", "function": {"name": "StrReplaceFile", "arguments": args}}),
        event(
            3,
            "ToolResult",
            {"tool_call_id": "e", "return_value": {"is_error": True, "output": "", "message": "No match."}},
        ),
    )
    (session,), _ = read(tmp_path)
    (call,) = session.messages[1].tool_calls
    assert [(e.file, e.old, e.new) for e in call.edits] == [("/w/x.py", "a", "b"), ("/w/x.py", "c", "d")]
    assert session.messages[2].tool_output == "No match."


def test_hostile_lines_are_skipped_and_counted_never_raised(tmp_path: Path) -> None:
    write_wire(
        tmp_path,
        "s1",
        "not json",
        "[1, 2]",
        {"timestamp": "x", "message": "nope"},
        event(1, "Mystery", {}),
        event(
            1e30,
            "TurnBegin",
            {"user_input": ["hi", {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
        ),
        event(2, "ToolCall", {"id": 3, "function": {"name": ["x"], "arguments": "{not json"}}),
        event(3, "ToolResult", {"tool_call_id": "x", "return_value": None}),
        event(4, "StatusUpdate", {"token_usage": {"input_other": -4, "output": "9"}}),
        event(5, "ContentPart", {"type": "audio", "data": 1}),
    )
    (session,), problems = read(tmp_path)
    assert problems == []
    assert session.messages[0].text == "hi\n[image]" and session.messages[0].timestamp is None
    assert session.messages[1].tool_calls[0].name == "tool" and session.messages[1].tool_calls[0].input == "{not json"
    (skipped,) = session.problems
    assert skipped.startswith("6 lines skipped:") and "unknown event 'Mystery'" in skipped


def test_a_log_with_no_message_is_told_and_a_folder_without_sessions_is_refused(tmp_path: Path) -> None:
    write_wire(tmp_path, "s1", event(1, "TurnEnd", {}))
    sessions, problems = read(tmp_path)
    assert sessions == [] and problems == [f"sessions/{HASHED}/s1/wire.jsonl: no message"]
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    assert "holds no Kimi CLI sessions folder" in (kimi_cli.check(empty) or "")


def test_a_link_that_leads_out_is_never_opened(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_wire(outside, "s1", event(1, "TurnBegin", {"user_input": "secret"}))
    home = tmp_path / "home"
    (home / "sessions" / HASHED).mkdir(parents=True)
    (home / "sessions" / HASHED / "s1").symlink_to(outside / "sessions" / HASHED / "s1")
    sessions, problems = read(home)
    assert sessions == [] and any("symbolic link that leads out" in problem for problem in problems)


def test_a_session_of_the_versions_before_the_wire_log_is_read_from_its_context(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / HASHED
    folder.mkdir(parents=True)
    (tmp_path / "kimi.json").write_text(json.dumps({"work_dirs": [{"path": WORK_DIR, "kaos": "local"}]}))
    call = {"type": "function", "id": "Shell:0", "function": {"name": "Shell", "arguments": '{"command": "ls"}'}}
    records = [
        {"role": "_system_prompt", "content": "You are Kimi CLI."},
        {"role": "_checkpoint", "id": 0},
        {"role": "user", "content": [{"type": "text", "text": "list the files"}]},
        {"role": "user", "content": [{"type": "text", "text": "<system>CHECKPOINT 1</system>"}]},
        {"role": "assistant", "content": [{"type": "think", "think": "ls will do"}], "tool_calls": [call]},
        {"role": "tool", "content": "<system>Command executed successfully.</system>", "tool_call_id": "Shell:0"},
        {"role": "_usage", "token_count": 612},
        {"role": "assistant", "content": "Two files."},
        {"role": "narrator", "content": "?"},
    ]
    (folder / "s-0.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    (session,), problems = read(tmp_path)
    assert problems == [] and session.problems == ["1 line skipped: 1 unknown role"]
    assert (session.key, session.project, session.title) == ("s-0", WORK_DIR, "list the files")
    assert [m.role for m in session.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]  # the CHECKPOINT note left out
    assert session.messages[1].thinking == "ls will do" and session.messages[1].tool_calls[0].commands == ["ls"]
    assert session.started is None and all(m.timestamp is None for m in session.messages)  # the context has no times
