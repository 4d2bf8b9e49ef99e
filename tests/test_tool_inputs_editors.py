"""Editor agents' tool calls keep their input and the edits their edit tools make: each log is
indexed through the indexer, and the stored call, its file rows and its diff are checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tool_calls import NEW, OLD, REPLACED, dump, indexed_calls, lines

from archivist.agents.cursor import bubbles as cursor_bubbles
from archivist.agents.tool_edits import editor_call, search_replace_blocks
from archivist.queries.diffs import diff_text


def the_call(calls: list[tuple[dict[str, Any], list[tuple[str, int]]]], name: str) -> tuple[dict[str, Any], list]:
    (found,) = [(call, rows) for call, rows in calls if call["name"] == name]
    return found


def test_amp_s_edit_file_and_create_file_are_edits_and_a_bad_input_stays_text(tmp_path: Path) -> None:
    uses = [
        {
            "type": "tool_use",
            "id": "t1",
            "name": "edit_file",
            "input": {"path": "calc.py", "old_str": OLD, "new_str": NEW},
        },
        {"type": "tool_use", "id": "t2", "name": "create_file", "input": {"path": "new.txt", "content": "one\ntwo"}},
        {"type": "tool_use", "id": "t3", "name": "Bash", "input": {"cmd": "pytest -q", "cwd": "/w"}},
        {"type": "tool_use", "id": "t4", "name": "edit_file", "input": "{not json"},
        {"type": "tool_use", "id": "t5", "name": "edit_file", "input": {"path": "x.py", "old_str": 1, "new_str": []}},
    ]
    dump(
        tmp_path / "amp" / "threads" / "T-1.json",
        {
            "v": 3,
            "id": "T-1",
            "created": 1761820800000,
            "messages": [{"role": "user", "content": "fix add"}, {"role": "assistant", "content": uses}],
        },
    )
    calls = indexed_calls(tmp_path, "amp", tmp_path / "amp")
    edited, rows = the_call(calls, "Bash")[0], None
    assert edited == {"name": "Bash", "files": [], "commands": ["pytest -q"], "input": '{"cwd":"/w"}'}
    (edited, rows), (created, created_rows), (text_input, _), (wrong, wrong_rows) = [
        (call, rows) for call, rows in calls if call["name"] != "Bash"
    ]
    assert edited["input"] == '{"path":"calc.py"}' and rows == [("calc.py", 1)]
    assert diff_text(edited["edits"][0]) == (REPLACED, 6)
    assert created["edits"] == [{"file": "new.txt", "new": "one\ntwo"}] and created_rows == [("new.txt", 1)]
    assert diff_text(created["edits"][0])[0] == "--- /dev/null\n+++ new.txt\n@@ -0,0 +1,2 @@\n+one\n+two"
    assert text_input["input"] == "{not json" and "edits" not in text_input
    assert json.loads(wrong["input"]) == {"path": "x.py", "old_str": 1, "new_str": []} and "edits" not in wrong
    assert wrong_rows == [("x.py", 0)]


def cline_task(root: Path, task_id: str, assistant: list[dict[str, Any]]) -> None:
    dump(
        root / "tasks" / task_id / "api_conversation_history.json",
        [
            {"role": "user", "content": [{"type": "text", "text": "<task>fix add</task>"}]},
            {"role": "assistant", "content": assistant},
        ],
    )


def test_cline_s_replace_in_file_blocks_are_one_edit_each_and_write_to_file_writes_whole(tmp_path: Path) -> None:
    diff = (
        "------- SEARCH\n    return a - b\n=======\n    return a + b\n+++++++ REPLACE\n"
        "------- SEARCH\ndef add\n=======\ndef plus\n+++++++ REPLACE\n"
    )
    written = "<write_to_file>\n<path>notes.md</path>\n<content>\n# Notes\n</content>\n</write_to_file>"
    cline_task(
        tmp_path / "cline",
        "1",
        [
            {"type": "text", "text": written},
            {"type": "tool_use", "name": "replace_in_file", "input": {"path": "calc.py", "diff": diff}},
            {"type": "tool_use", "name": "replace_in_file", "input": ["not", "an", "object"]},
        ],
    )
    calls = indexed_calls(tmp_path, "cline", tmp_path / "cline")
    (whole, whole_rows), (blocks, rows), (listed, _) = calls
    assert whole["name"] == "write_to_file" and whole["input"] == '{"path":"notes.md"}'
    assert whole["edits"] == [{"file": "notes.md", "new": "# Notes"}] and whole_rows == [("notes.md", 1)]
    assert blocks["input"] == '{"path":"calc.py"}' and rows == [("calc.py", 1)]
    assert [(edit["old"], edit["new"]) for edit in blocks["edits"]] == [
        ("    return a - b", "    return a + b"),
        ("def add", "def plus"),
    ]
    assert (
        diff_text(blocks["edits"][0])[0]
        == "--- calc.py\n+++ calc.py\n@@ -1 +1 @@\n-    return a - b\n+    return a + b"
    )
    assert listed["input"] == '["not","an","object"]' and "edits" not in listed


def test_roo_code_s_apply_diff_insert_content_and_search_and_replace(tmp_path: Path) -> None:
    diff = "<<<<<<< SEARCH\n:start_line:2\n-------\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE"
    cline_task(
        tmp_path / "roo",
        "1",
        [
            {"type": "tool_use", "name": "apply_diff", "input": {"path": "calc.py", "diff": diff}},
            {"type": "tool_use", "name": "insert_content", "input": {"path": "calc.py", "line": 3, "content": "x = 1"}},
            {
                "type": "tool_use",
                "name": "search_and_replace",
                "input": {"path": "calc.py", "search": "add", "replace": "plus", "use_regex": False},
            },
            {"type": "tool_use", "name": "apply_diff", "input": {"path": "calc.py", "diff": 42}},
        ],
    )
    calls = indexed_calls(tmp_path, "roo-code", tmp_path / "roo")
    (applied, rows), (inserted, _), (replaced, _), (hostile, hostile_rows) = calls
    assert applied["edits"] == [{"file": "calc.py", "old": "    return a - b", "new": "    return a + b"}]
    assert rows == [("calc.py", 1)]
    assert inserted["input"] == '{"path":"calc.py","line":3}'
    assert diff_text(inserted["edits"][0])[0] == "--- calc.py\n+++ calc.py\n@@ -2,0 +3,1 @@\n+x = 1"
    assert replaced["input"] == '{"path":"calc.py","use_regex":false}'
    assert replaced["edits"] == [{"file": "calc.py", "old": "add", "new": "plus"}]
    assert hostile["input"] == '{"path":"calc.py","diff":42}' and "edits" not in hostile
    assert hostile_rows == [("calc.py", 0)]


def test_the_copilot_cli_s_editor_tools_are_edits_and_their_command_no_shell_command(tmp_path: Path) -> None:
    requests = [
        {
            "name": "str_replace_editor",
            "arguments": {"command": "str_replace", "path": "/w/calc.py", "old_str": OLD, "new_str": NEW},
        },
        {"name": "create", "arguments": json.dumps({"path": "/w/new.txt", "file_text": "hi"})},
        {"name": "bash", "arguments": {"command": "ls -la", "description": "list"}},
        {"name": "edit", "arguments": "{broken"},
    ]
    dump(
        tmp_path / "copilot" / "session-state" / "s1" / "events.jsonl",
        lines(
            {"type": "user.message", "timestamp": "2025-11-28T04:00:00Z", "data": {"content": "fix add"}},
            {
                "type": "assistant.message",
                "timestamp": "2025-11-28T04:00:05Z",
                "data": {"content": "ok", "toolRequests": requests},
            },
        ),
    )
    calls = indexed_calls(tmp_path, "copilot", tmp_path / "copilot")
    (replaced, rows), (created, _), (shell, _), (broken, _) = calls
    assert replaced["commands"] == [] and replaced["input"] == '{"command":"str_replace","path":"/w/calc.py"}'
    assert rows == [("/w/calc.py", 1)]
    assert diff_text(replaced["edits"][0])[0] == REPLACED.replace("calc.py", "/w/calc.py")
    assert created["edits"] == [{"file": "/w/new.txt", "new": "hi"}] and created["input"] == '{"path":"/w/new.txt"}'
    assert shell["commands"] == ["ls -la"] and shell["input"] == '{"description":"list"}'
    assert broken["input"] == "{broken" and "edits" not in broken


def test_copilot_chat_s_edits_come_from_the_arguments_of_its_tool_rounds(tmp_path: Path) -> None:
    replacements = [
        {"filePath": "/w/calc.py", "oldString": OLD, "newString": NEW, "explanation": "fix"},
        {"filePath": "/w/util.py", "oldString": "a", "newString": "b"},
    ]
    rounds = [
        {
            "id": "c1",
            "name": "replace_string_in_file",
            "arguments": json.dumps({"filePath": "/w/calc.py", "oldString": OLD, "newString": NEW}),
        },
        {
            "id": "c2",
            "name": "multi_replace_string_in_file",
            "arguments": json.dumps({"explanation": "both", "replacements": replacements}),
        },
        {"id": "c3", "name": "create_file", "arguments": "not json at all"},
    ]
    response = [
        {"kind": "toolInvocationSerialized", "toolId": "copilot_replaceString", "toolCallId": "c1"},
        {"kind": "toolInvocationSerialized", "toolId": "copilot_multiReplaceString", "toolCallId": "c2"},
        {"kind": "toolInvocationSerialized", "toolId": "copilot_createFile", "toolCallId": "c3"},
    ]
    request = {
        "requestId": "r1",
        "timestamp": 1761820800000,
        "message": {"text": "fix add"},
        "response": response,
        "result": {"metadata": {"toolCallRounds": [{"response": "", "toolCalls": rounds}]}},
    }
    dump(
        tmp_path / "code" / "workspaceStorage" / "abc" / "chatSessions" / "s1.json",
        {"version": 3, "sessionId": "s1", "creationDate": 1761820800000, "requests": [request]},
    )
    calls = indexed_calls(tmp_path, "copilot", tmp_path / "code")
    (replaced, rows), (multi, multi_rows), (created, _) = calls
    assert replaced["name"] == "copilot_replaceString" and replaced["input"] == '{"filePath":"/w/calc.py"}'
    assert rows == [("/w/calc.py", 1)]
    assert diff_text(replaced["edits"][0])[0] == REPLACED.replace("calc.py", "/w/calc.py")
    assert [edit["file"] for edit in multi["edits"]] == ["/w/calc.py", "/w/util.py"]
    assert multi["input"] == '{"explanation":"both"}' and multi_rows == [("/w/calc.py", 1), ("/w/util.py", 1)]
    assert created["input"] == "not json at all" and "edits" not in created


def test_cursor_s_transcripts_keep_search_replace_write_and_multi_edits(tmp_path: Path) -> None:
    uses = [
        {
            "type": "tool_use",
            "name": "search_replace",
            "input": {"file_path": "calc.py", "old_string": OLD, "new_string": NEW},
        },
        {"type": "tool_use", "name": "write", "input": {"file_path": "new.txt", "contents": "hi"}},
        {
            "type": "tool_use",
            "name": "MultiEdit",
            "input": {
                "file_path": "calc.py",
                "edits": [{"old_string": "add", "new_string": "plus"}, {"old_string": "b", "new_string": "c"}],
            },
        },
        {
            "type": "tool_use",
            "name": "search_replace",
            "input": {"file_path": "calc.py", "old_string": None, "new_string": {"x": 1}},
        },
    ]
    dump(
        tmp_path / "projects" / "w" / "agent-transcripts" / "t1.jsonl",
        lines(
            {"role": "user", "message": {"content": [{"type": "text", "text": "<user_query>fix add</user_query>"}]}},
            {"role": "assistant", "message": {"content": uses}},
        ),
    )
    calls = indexed_calls(tmp_path, "cursor", tmp_path / "projects")
    (replaced, rows), (written, _), (multi, _), (hostile, _) = calls
    assert replaced["input"] == '{"file_path":"calc.py"}' and rows == [("calc.py", 1)]
    assert diff_text(replaced["edits"][0]) == (REPLACED, 6)
    assert written["edits"] == [{"file": "new.txt", "new": "hi"}]
    assert [(edit["old"], edit["new"]) for edit in multi["edits"]] == [("add", "plus"), ("b", "c")]
    assert multi["input"] == '{"file_path":"calc.py"}'
    assert json.loads(hostile["input"]) == {"file_path": "calc.py", "old_string": None, "new_string": {"x": 1}}
    assert "edits" not in hostile


def test_kiro_s_str_replace_and_fs_write_are_edits(tmp_path: Path) -> None:
    payloads = [
        {"type": "user", "content": [{"type": "text", "text": "fix add"}]},
        {
            "type": "tool_call",
            "toolCallId": "t1",
            "toolName": "strReplace",
            "args": {"path": "calc.py", "oldStr": OLD, "newStr": NEW},
        },
        {"type": "tool_call", "toolCallId": "t2", "toolName": "fsWrite", "args": {"path": "new.txt", "text": "hi"}},
        {"type": "tool_call", "toolCallId": "t3", "toolName": "strReplace", "args": "oldStr=1"},
    ]
    dump(
        tmp_path / ".kiro" / "sessions" / "0123" / "s1" / "messages.jsonl",
        lines(*({"id": f"e{n}", "timestamp": f"2026-09-30T05:30:0{n}Z", "payload": p} for n, p in enumerate(payloads))),
    )
    dump(tmp_path / ".kiro" / "sessions" / "0123" / "s1" / "session.json", {"id": "s1", "title": "add"})
    calls = indexed_calls(tmp_path, "kiro", tmp_path / ".kiro")
    (replaced, rows), (written, _), (hostile, _) = calls
    assert replaced["input"] == '{"path":"calc.py"}' and rows == [("calc.py", 1)]
    assert diff_text(replaced["edits"][0]) == (REPLACED, 6)
    assert written["edits"] == [{"file": "new.txt", "new": "hi"}] and written["input"] == '{"path":"new.txt"}'
    assert hostile["input"] == "oldStr=1" and "edits" not in hostile


def test_the_kiro_cli_s_fs_write_commands_are_edits() -> None:
    created = editor_call("fs_write", {"command": "create", "path": "a.md", "file_text": "# A"})
    inserted = editor_call("fs_write", {"command": "insert", "path": "a.md", "insert_line": 1, "new_str": "b"})
    replaced = editor_call("fs_write", {"command": "str_replace", "path": "a.md", "old_str": "# A", "new_str": "# B"})
    assert (created.input, created.files, created.edits[0].new) == (
        '{"command":"create","path":"a.md"}',
        ["a.md"],
        "# A",
    )
    assert inserted.edits[0].patch == "@@ -1,0 +2,1 @@\n+b"
    assert (replaced.edits[0].old, replaced.edits[0].new) == ("# A", "# B")


def test_windsurf_keeps_a_step_s_input_and_a_code_action_s_new_content_as_the_file_written(tmp_path: Path) -> None:
    steps = [
        {"type": "user_input", "user_input": {"user_response": "fix add"}},
        {"type": "code_action", "code_action": {"path": "file:///w/calc.py", "new_content": NEW}},
        {"type": "run_command", "run_command": {"command_line": "ls", "cwd": "/w", "stdout": "a.py", "blocking": True}},
        {"type": "code_action", "code_action": {"path": "file:///w/x.py", "new_content": ["not", "text"]}},
    ]
    dump(tmp_path / ".windsurf" / "transcripts" / "t1.jsonl", lines(*steps))
    calls = indexed_calls(tmp_path, "windsurf", tmp_path / ".windsurf" / "transcripts")
    (written, rows), (command, _), (hostile, hostile_rows) = calls
    assert written["input"] == '{"path":"file:///w/calc.py"}' and rows == [("/w/calc.py", 1)]
    assert diff_text(written["edits"][0])[0].splitlines()[:3] == ["--- /dev/null", "+++ /w/calc.py", "@@ -0,0 +1,2 @@"]
    assert command["commands"] == ["ls"] and json.loads(command["input"]) == {"cwd": "/w", "blocking": True}
    assert json.loads(hostile["input"])["new_content"] == ["not", "text"] and "edits" not in hostile
    assert hostile_rows == [("/w/x.py", 0)]


def test_search_replace_blocks_need_all_three_markers() -> None:
    assert search_replace_blocks("<<<<<<< SEARCH\na\n=======\nb\n") == []
    assert search_replace_blocks("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE") == [("a", "b")]


def test_a_cursor_bubble_s_call_keeps_its_raw_arguments_else_its_params() -> None:
    replaced, _ = cursor_bubbles.tool_call(
        {
            "name": "search_replace",
            "rawArgs": json.dumps({"file_path": "calc.py", "old_string": OLD, "new_string": NEW}),
            "params": json.dumps({"relativeWorkspacePath": "calc.py"}),
        }
    )
    assert replaced is not None and replaced.input == '{"file_path":"calc.py"}' and replaced.files == ["calc.py"]
    assert diff_text(vars(replaced.edits[0])) == (REPLACED, 6)
    written, _ = cursor_bubbles.tool_call({"name": "write", "params": {"file_path": "new.txt", "contents": "hi"}})
    assert written is not None and (written.input, written.edits[0].new) == ('{"file_path":"new.txt"}', "hi")
    broken, _ = cursor_bubbles.tool_call({"name": "search_replace", "rawArgs": "{cut", "params": 7})
    assert broken is not None and (broken.input, broken.edits) == ("{cut", [])


def test_cline_s_panel_tells_an_edited_file_s_blocks_and_a_new_file_s_content(tmp_path: Path) -> None:
    blocks = "------- SEARCH\n    return a - b\n=======\n    return a + b\n+++++++ REPLACE"
    panel = [
        {"ts": 1761820800000, "type": "say", "say": "task", "text": "fix add"},
        {
            "ts": 1761820801000,
            "type": "ask",
            "ask": "tool",
            "text": json.dumps({"tool": "editedExistingFile", "path": "calc.py", "content": blocks}),
        },
        {
            "ts": 1761820802000,
            "type": "ask",
            "ask": "tool",
            "text": json.dumps({"tool": "newFileCreated", "path": "new.txt", "content": "hi"}),
        },
    ]
    dump(tmp_path / "cline" / "tasks" / "1" / "ui_messages.json", panel)
    calls = indexed_calls(tmp_path, "cline", tmp_path / "cline")
    (edited, rows), (created, _) = calls
    assert edited["input"] == '{"tool":"editedExistingFile","path":"calc.py"}' and rows == [("calc.py", 1)]
    assert edited["edits"] == [{"file": "calc.py", "old": "    return a - b", "new": "    return a + b"}]
    assert created["edits"] == [{"file": "new.txt", "new": "hi"}]
