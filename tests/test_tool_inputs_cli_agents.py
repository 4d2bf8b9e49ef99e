"""Command-line agents' tool calls keep their input and the edits their edit tools make: each log
is indexed through the indexer, and the stored call, its file rows and its diff are checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_agentlogs_crush import part, stop, write
from tool_calls import NEW, OLD, REPLACED, Calls, dump, indexed_calls, lines

from archivist.agents import Edit
from archivist.agents.apply_patch import find_patch
from archivist.agents.tool_edits import edits_of
from archivist.queries.diffs import diff_text

WRITTEN = "--- /dev/null\n+++ notes.txt\n@@ -0,0 +1,2 @@\n+one\n+two"


def diffs(call: dict[str, Any]) -> list[str]:
    return [diff_text(edit)[0] for edit in call.get("edits", [])]


def check_replaced_and_written(calls: Calls, hostile: int) -> None:
    """The first call replaced OLD by NEW in calc.py, the second wrote notes.txt whole, and the
    last ``hostile`` calls kept their input as it came, with no edits."""
    (replaced, replaced_rows), (written, written_rows) = calls[0], calls[1]
    assert [edit.get("old") for edit in replaced["edits"]] == [OLD]
    assert diffs(replaced) == [REPLACED] and replaced_rows == [("calc.py", 1)]
    assert OLD not in replaced["input"] and "calc.py" in replaced["input"]
    assert diffs(written) == [WRITTEN] and written_rows == [("notes.txt", 1)]
    assert "one" not in written.get("input", "")
    for call, rows in calls[-hostile:]:
        assert "edits" not in call and call["input"] and all(changed == 0 for _, changed in rows)


def test_opencode_s_edit_write_and_patch_are_edits_and_bad_inputs_stay_text(tmp_path: Path) -> None:
    storage = tmp_path / "opencode" / "storage"
    session = "ses_5b00000000edits"
    dump(
        storage / "session" / "proj" / f"{session}.json",
        {"id": session, "projectID": "proj", "directory": "/w", "title": "Fix add", "time": {"created": 1764113600000}},
    )
    dump(
        storage / "message" / session / "msg_a1.json",
        {"id": "msg_a1", "sessionID": session, "role": "user", "time": {"created": 1764113600000}},
    )
    dump(
        storage / "part" / "msg_a1" / "prt_a1.json",
        {"id": "prt_a1", "messageID": "msg_a1", "type": "text", "text": "Fix add"},
    )
    message = {
        "id": "msg_a2",
        "sessionID": session,
        "role": "assistant",
        "time": {"created": 1764113610000},
        "modelID": "gpt-5",
    }
    dump(storage / "message" / session / "msg_a2.json", message)
    patch = "*** Begin Patch\n*** Update File: calc.py\n@@ def add(a, b):\n-    return a - b\n+    return a + b\n*** End Patch"
    inputs = [
        ("edit", {"filePath": "calc.py", "oldString": OLD, "newString": NEW, "replaceAll": False}),
        ("write", {"filePath": "notes.txt", "content": "one\ntwo"}),
        ("patch", {"patchText": patch}),
        ("bash", {"command": "pytest -q", "description": "Run the tests"}),
        ("edit", "{not json"),
        ("edit", {"filePath": "calc.py", "oldString": 3, "newString": ["x"]}),
    ]
    for number, (tool, given) in enumerate(inputs):
        state = {"status": "completed", "input": given, "output": "done"}
        dump(
            storage / "part" / "msg_a2" / f"prt_b{number}.json",
            {"id": f"prt_b{number}", "messageID": "msg_a2", "type": "tool", "tool": tool, "state": state},
        )
    calls = indexed_calls(tmp_path, "opencode", tmp_path / "opencode")
    assert [call["name"] for call, _ in calls] == ["edit", "write", "patch", "bash", "edit", "edit"]
    check_replaced_and_written(calls, hostile=2)
    patched, rows = calls[2]
    assert "input" not in patched and rows == [("calc.py", 1)]
    assert diffs(patched) == ["--- calc.py\n+++ calc.py\n@@ def add(a, b):\n-    return a - b\n+    return a + b"]
    assert calls[3][0]["input"] == '{"description":"Run the tests"}'  # the command is kept once, in commands
    assert calls[4][0]["input"] == "{not json"
    assert json.loads(calls[5][0]["input"]) == inputs[5][1]


def test_crush_s_edit_write_and_multiedit_are_edits_and_a_bad_input_stays_text(tmp_path: Path) -> None:
    session, at = "5f0c7a4e-1b2d-4c3e-9a8b-0d1e2f3a4b5c", 1764583200

    def call(identity: str, name: str, given: Any) -> dict[str, Any]:
        text = given if isinstance(given, str) else json.dumps(given)
        return part("tool_call", id=identity, name=name, input=text, finished=True)

    several = {
        "file_path": "calc.py",
        "edits": [{"old_string": "a - b", "new_string": "a + b"}, {"old_string": "add", "new_string": "plus"}],
    }
    parts = [
        call("t1", "edit", {"file_path": "calc.py", "old_string": OLD, "new_string": NEW}),
        call("t2", "write", {"file_path": "notes.txt", "content": "one\ntwo"}),
        call("t3", "multiedit", several),
        call("t6", "patch", {"patch_text": "*** Begin Patch\n*** Add File: docs/a.md\n+# A\n*** End Patch"}),
        call("t4", "edit", "{not json"),
        call("t5", "write", {"file_path": "x.txt", "content": {"not": "text"}}),
        stop(at + 1),
    ]
    write(
        tmp_path / "crush" / ".crush" / "crush.db",
        "claude-sonnet-4-5",
        [(session, None, "Fix add", 2, 10, 10, 0.0, at + 1, at)],
        [(session, "user", [part("text", text="Fix add"), stop(at)], at), (session, "assistant", parts, at + 1)],
    )
    calls = indexed_calls(tmp_path, "crush", tmp_path / "crush")
    assert [call["name"] for call, _ in calls] == ["edit", "write", "multiedit", "patch", "edit", "write"]
    check_replaced_and_written(calls, hostile=2)
    (multi, rows) = calls[2]
    assert [(edit["old"], edit["new"]) for edit in multi["edits"]] == [("a - b", "a + b"), ("add", "plus")]
    assert json.loads(multi["input"]) == {"file_path": "calc.py"} and rows == [("calc.py", 1)]
    patched, rows = calls[3]  # (the Go OpenCode's patch tool, read by the same reader)
    assert "input" not in patched and diffs(patched) == ["--- /dev/null\n+++ docs/a.md\n@@ -0,0 +1,1 @@\n+# A"]
    assert rows == [("docs/a.md", 1)]
    assert calls[4][0]["input"] == "{not json"
    assert json.loads(calls[5][0]["input"]) == {"file_path": "x.txt", "content": {"not": "text"}}


def gemini_call(identity: str, name: str, args: Any) -> dict[str, Any]:
    return {
        "id": identity,
        "name": name,
        "args": args,
        "status": "success",
        "result": [],
        "timestamp": "2025-11-11T14:02:50Z",
    }


def test_gemini_cli_s_replace_and_write_file_are_edits_and_bad_args_stay_text(tmp_path: Path) -> None:
    calls = [
        gemini_call(
            "c1", "replace", {"file_path": "calc.py", "old_string": OLD, "new_string": NEW, "expected_replacements": 1}
        ),
        gemini_call("c2", "write_file", {"file_path": "notes.txt", "content": "one\ntwo"}),
        gemini_call("c3", "replace", "not an object"),
        gemini_call("c4", "replace", {"file_path": "calc.py", "old_string": 5, "new_string": NEW}),
    ]
    chat = {
        "sessionId": "5d0c7a9e-3b61-4f2a-8e47-c19a0b6d2f00",
        "projectHash": "d01c",
        "startTime": "2025-11-11T14:02:37Z",
        "lastUpdated": "2025-11-11T14:04:13Z",
        "messages": [
            {"id": "u1", "timestamp": "2025-11-11T14:02:37Z", "type": "user", "content": "Fix add"},
            {
                "id": "g1",
                "timestamp": "2025-11-11T14:02:43Z",
                "type": "gemini",
                "content": "",
                "model": "gemini-2.5-pro",
                "toolCalls": calls,
            },
        ],
    }
    dump(tmp_path / "tmp" / "proj" / "chats" / "session-2025-11-11T14-02-5d0c7a9e.json", chat)
    stored = indexed_calls(tmp_path, "gemini-cli", tmp_path / "tmp")
    assert [call["name"] for call, _ in stored] == ["replace", "write_file", "replace", "replace"]
    check_replaced_and_written(stored, hostile=2)
    assert json.loads(stored[0][0]["input"]) == {"file_path": "calc.py", "expected_replacements": 1}
    assert stored[2][0]["input"] == "not an object"
    assert json.loads(stored[3][0]["input"]) == {"file_path": "calc.py", "old_string": 5, "new_string": NEW}


def test_qwen_code_s_edit_and_write_file_are_edits_and_bad_args_stay_text(tmp_path: Path) -> None:
    session = "3f2a9c1e-7b4d-4e8a-9c21-5d6e7f8a9b00"

    def record(number: int, kind: str, role: str, parts: list[Any]) -> dict[str, Any]:
        return {
            "uuid": f"a1000000-0000-4000-8000-00000000000{number}",
            "parentUuid": f"a1000000-0000-4000-8000-00000000000{number - 1}" if number > 1 else None,
            "sessionId": session,
            "timestamp": f"2025-12-14T09:12:0{number}.000Z",
            "type": kind,
            "message": {"role": role, "parts": parts},
            "cwd": "/w",
        }

    calls = [
        {
            "functionCall": {
                "id": "c1",
                "name": "edit",
                "args": {"file_path": "calc.py", "old_string": OLD, "new_string": NEW},
            }
        },
        {"functionCall": {"id": "c2", "name": "write_file", "args": {"file_path": "notes.txt", "content": "one\ntwo"}}},
        {"functionCall": {"id": "c3", "name": "edit", "args": ["calc.py", OLD]}},
        {"functionCall": {"id": "c4", "name": "write_file", "args": {"file_path": "x.txt", "content": None}}},
    ]
    text = lines(record(1, "user", "user", [{"text": "Fix add"}]), record(2, "assistant", "model", calls))
    dump(tmp_path / "qwen" / "projects" / "-w" / "chats" / f"{session}.jsonl", text)
    stored = indexed_calls(tmp_path, "qwen-code", tmp_path / "qwen")
    assert [call["name"] for call, _ in stored] == ["edit", "write_file", "edit", "write_file"]
    check_replaced_and_written(stored, hostile=2)
    assert json.loads(stored[2][0]["input"]) == ["calc.py", OLD]
    assert json.loads(stored[3][0]["input"]) == {"file_path": "x.txt", "content": None}


def test_goose_s_text_editor_is_edits_and_bad_arguments_stay_text(tmp_path: Path) -> None:
    def request(identity: str, arguments: Any) -> dict[str, Any]:
        value = {"name": "developer__text_editor", "arguments": arguments}
        return {"type": "toolRequest", "id": identity, "toolCall": {"status": "success", "value": value}}

    requests = [
        request("t1", {"command": "str_replace", "path": "calc.py", "old_str": OLD, "new_str": NEW}),
        request("t2", {"command": "write", "path": "notes.txt", "file_text": "one\ntwo"}),
        request("t3", {"command": "insert", "path": "calc.py", "insert_line": 2, "new_str": "# done"}),
        request("t4", "not an object"),
        request("t5", {"command": "str_replace", "path": "calc.py", "old_str": [OLD], "new_str": NEW}),
    ]
    text = lines(
        {"working_dir": "/w", "description": "Fix add", "message_count": 2},
        {"role": "user", "created": 1759415400, "content": [{"type": "text", "text": "Fix add"}]},
        {"role": "assistant", "created": 1759415409, "content": requests},
    )
    dump(tmp_path / "goose" / "sessions" / "20251002_150000.jsonl", text)
    stored = indexed_calls(tmp_path, "goose", tmp_path / "goose" / "sessions")
    assert len(stored) == 5
    check_replaced_and_written(stored, hostile=2)
    inserted, rows = stored[2]
    assert diffs(inserted) == ["--- calc.py\n+++ calc.py\n@@ -2,0 +3,1 @@\n+# done"] and rows == [("calc.py", 1)]
    assert json.loads(inserted["input"]) == {"command": "insert", "path": "calc.py", "insert_line": 2}
    assert stored[3][0]["input"] == "not an object"


def test_continue_s_find_and_replace_and_new_file_are_edits_and_bad_arguments_stay_text(tmp_path: Path) -> None:
    def call(identity: str, name: str, arguments: Any) -> dict[str, Any]:
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return {"id": identity, "type": "function", "function": {"name": name, "arguments": text}}

    calls = [
        call("c1", "single_find_and_replace", {"filepath": "calc.py", "old_string": OLD, "new_string": NEW}),
        call("c2", "create_new_file", {"filepath": "notes.txt", "contents": "one\ntwo"}),
        call("c3", "edit_existing_file", {"filepath": "calc.py", "changes": "// ... existing code ...\nx = 1"}),
        call("c4", "single_find_and_replace", "{not json"),
    ]
    session = "6f1c2a9e-3b7d-4e8a-9c0f-1d2e3f4a5b00"
    history = [
        {"message": {"role": "user", "content": [{"type": "text", "text": "Fix add"}]}, "contextItems": []},
        {"message": {"role": "assistant", "content": "Fixing.", "toolCalls": calls}, "contextItems": []},
    ]
    dump(
        tmp_path / "continue" / "sessions" / f"{session}.json",
        {"sessionId": session, "title": "Fix add", "workspaceDirectory": "file:///w", "history": history},
    )
    listed = [
        {"sessionId": session, "title": "Fix add", "dateCreated": "1764100000000", "workspaceDirectory": "file:///w"}
    ]
    dump(tmp_path / "continue" / "sessions" / "sessions.json", listed)
    stored = indexed_calls(tmp_path, "continue", tmp_path / "continue")
    assert [call["name"] for call, _ in stored] == [
        "single_find_and_replace",
        "create_new_file",
        "edit_existing_file",
        "single_find_and_replace",
    ]
    check_replaced_and_written(stored, hostile=2)
    assert "existing code" in stored[2][0]["input"]  # a sketch of a change, not a replacement: kept as input
    assert stored[3][0]["input"] == "{not json"


def test_a_patch_tool_gives_one_edit_per_file_of_its_patch() -> None:
    patch = "\n".join(
        [
            "*** Begin Patch",
            "*** Add File: new.txt",
            "+hello",
            "*** Update File: calc.py",
            "*** Move to: sums.py",
            "@@ def add(a, b):",
            "-    return a - b",
            "+    return a + b",
            "*** End of File",
            "*** Delete File: old.py",
            "*** End Patch",
        ]
    )
    found, held = edits_of("patch", {"patchText": patch})
    assert held == {"patchText"}
    assert [(edit.file, edit.new) for edit in found[:1]] == [("new.txt", "hello")]
    assert [(edit.file, edit.patch) for edit in found] == [
        ("new.txt", None),
        ("calc.py", ""),  # moved: changed where it was, as a deletion
        ("sums.py", "@@ def add(a, b):\n-    return a - b\n+    return a + b\n*** End of File"),
        ("old.py", ""),
    ]
    assert find_patch(patch) is not None
    assert edits_of("patch", {"patchText": "no patch here"}) == ([], set())


def test_an_edit_of_no_file_or_of_texts_that_are_not_text_is_no_edit() -> None:
    def edits(name: str, arguments: dict[str, object]) -> list[object]:
        return edits_of(name, arguments)[0]

    assert edits("edit", {"oldString": OLD, "newString": NEW}) == []
    assert edits("edit", {"filePath": "  ", "oldString": OLD, "newString": NEW}) == []
    assert edits("edit", {"filePath": "a.py", "newString": NEW}) == []  # no old text: not a write tool
    assert edits("multiedit", {"filePath": "a.py", "edits": [{"oldString": "a", "newString": "b"}, "x"]}) == []
    assert edits("developer__text_editor", {"command": ["write"], "path": "a.py", "file_text": "x"}) == []
    inserted = edits(
        "developer__text_editor", {"command": "insert", "path": "a.py", "insert_line": True, "new_str": "x"}
    )
    assert inserted == [Edit("a.py", patch="@@ +1 @@\n+x")]  # (a line that is no number: the place is not said)
