"""Claude Code and Codex tool calls keep their input and the changes they made to files: each
session is indexed through the real indexer and read back from ``messages.tool_calls``."""

from __future__ import annotations

import json
import random
import shutil
import string
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from conftest import write_files

from archivist.agents import claude_code, codex
from archivist.agents.apply_patch import patch_edits
from archivist.archive.indexer import index_workspace
from archivist.queries.diffs import diff_text, edits_of
from archivist.workspace import archive_path

PROJECT = "-home-ana-shop"
CWD = "/home/ana/shop"
SID = "7b1f0c2e-4d5a-4e6b-9c8d-1a2b3c4d5e6f"
AGENT_ID = "aa2df15cf06a92b22"
NESTED_ID = "a0c3e5f7b9d1e3f50"
TASK_ID = "toolu_01DAjDwYd9kHwNGKp777RZCt"
NESTED_TASK_ID = "toolu_01NestedAgentCall0000001"
RANDOM = random.Random(7)


def aws_key() -> str:
    return "AKIA" + "".join(RANDOM.choice(string.ascii_uppercase + string.digits) for _ in range(16))


# --- Claude Code -------------------------------------------------------------------------


def line(kind: str, n: int, content: Any, **extra: Any) -> dict[str, Any]:
    """A Claude Code line of version 2.1 (the shape of the CLI's own files)."""
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=f"msg_{n:03d}", type="message", model="claude-sonnet-4-5-20250929")
    return {
        "parentUuid": f"u-{n - 1:03d}" if n > 1 else None,
        "isSidechain": False,
        "type": kind,
        "message": message,
        "uuid": f"u-{n:03d}",
        "timestamp": f"2026-08-12T21:56:{n:02d}.000Z",
        "cwd": CWD,
        "sessionId": SID,
        "version": "2.1.228",
        "gitBranch": "main",
        **extra,
    }


def use(n: int, call_id: str, name: str, given: Any) -> dict[str, Any]:
    return line("assistant", n, [{"type": "tool_use", "id": call_id, "name": name, "input": given}])


def result(n: int, call_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return line("user", n, [{"tool_use_id": call_id, "type": "tool_result", "content": text}], **extra)


def write_lines(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))


def claude_code_source(root: Path, secret: str) -> Path:
    """A session that edits, writes and starts a sub-agent (in ``subagents/``), which starts another."""
    project = root / "projects" / PROJECT
    write_lines(
        project / f"{SID}.jsonl",
        [
            {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-08-12T21:56:00.000Z"},
            line("user", 1, "Tidy the shop's settings"),
            use(2, "toolu_e1", "Edit", {"file_path": f"{CWD}/app.py", "old_string": "DEBUG = True\n",
                                        "new_string": f"DEBUG = False\nKEY = '{secret}'\n", "replace_all": False}),
            result(3, "toolu_e1", "The file has been updated."),
            use(4, "toolu_m1", "MultiEdit", {"file_path": f"{CWD}/shop.py", "edits": [
                {"old_string": "def a():", "new_string": "def first():"},
                {"old_string": "def b():", "new_string": "def second():", "replace_all": True},
            ]}),
            result(5, "toolu_m1", "Applied 2 edits."),
            use(6, "toolu_w1", "Write", {"file_path": f"{CWD}/NOTES.md", "content": "# Notes\nship it\n"}),
            result(7, "toolu_w1", "File created."),
            use(8, "toolu_b1", "Bash", {"command": "pytest -q", "description": "Run the tests", "timeout": 60000}),
            result(9, "toolu_b1", "3 passed"),
            use(10, TASK_ID, "Agent", {"description": "Review the settings", "prompt": "Read app.py and report",
                                       "subagent_type": "general-purpose"}),
            result(
                11,
                TASK_ID,
                f"Looks fine.\nagentId: {AGENT_ID} (use SendMessage with to: '{AGENT_ID}' to continue this agent)",
                toolUseResult={"status": "completed", "prompt": "Read app.py and report", "agentId": AGENT_ID,
                               "agentType": "general-purpose", "totalDurationMs": 1725, "totalTokens": 26678,
                               "totalToolUseCount": 1},
            ),
            line("assistant", 12, [{"type": "text", "text": "Done."}]),
            {"type": "last-prompt", "lastPrompt": "Tidy the shop's settings", "sessionId": SID},
        ],
    )  # fmt: skip
    subagents = project / SID / "subagents"
    sub = {"isSidechain": True, "agentId": AGENT_ID}
    write_lines(
        subagents / f"agent-{AGENT_ID}.jsonl",
        [
            {**line("user", 21, "Read app.py and report"), **sub, "parentUuid": None},
            {**use(22, NESTED_TASK_ID, "Agent", {"description": "Check the key", "prompt": "Is KEY set?"}), **sub},
            {
                **result(23, NESTED_TASK_ID, "It is.", toolUseResult={"status": "completed", "agentId": NESTED_ID}),
                **sub,
            },
            {**line("assistant", 24, [{"type": "text", "text": "Looks fine."}]), **sub},
        ],
    )
    meta = {"agentType": "general-purpose", "description": "Review the settings", "toolUseId": TASK_ID, "spawnDepth": 1}
    (subagents / f"agent-{AGENT_ID}.meta.json").write_text(json.dumps(meta))
    nested = {"isSidechain": True, "agentId": NESTED_ID}
    write_lines(
        subagents / f"agent-{NESTED_ID}.jsonl",
        [
            {**line("user", 31, "Is KEY set?"), **nested, "parentUuid": None},
            {**line("assistant", 32, [{"type": "text", "text": "It is."}]), **nested},
        ],
    )
    nested_meta = {"agentType": "general-purpose", "description": "Check the key", "toolUseId": NESTED_TASK_ID,
                   "parentAgentId": AGENT_ID, "spawnDepth": 2}  # fmt: skip
    (subagents / f"agent-{NESTED_ID}.meta.json").write_text(json.dumps(nested_meta))
    return root / "projects"


def indexed(tmp_path: Path, kind: str, source: Path) -> sqlite_utils.Database:
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n"})
    index_workspace(workspace, log_sources=[(kind, source)])
    return sqlite_utils.Database(archive_path(workspace))


def stored_calls(db: sqlite_utils.Database, path: str) -> list[dict[str, Any]]:
    rows = db.query(
        "select m.tool_calls from messages m join documents d on d.id = m.document_id"
        " where d.path = ? and m.tool_calls != '[]' order by m.seq",
        [path],
    )
    return [call for row in rows for call in json.loads(row["tool_calls"])]


def changed_files(db: sqlite_utils.Database) -> dict[str, int]:
    return {
        row["file"]: row["changed"]
        for row in db.query("select file, max(changed) as changed from file_calls group by file")
    }


@pytest.fixture
def claude_code_archive(tmp_path: Path) -> tuple[sqlite_utils.Database, str]:
    secret = aws_key()
    return indexed(tmp_path, "claude-code", claude_code_source(tmp_path / "claude", secret)), secret


def test_claude_code_calls_keep_their_input_and_edits(claude_code_archive) -> None:
    db, secret = claude_code_archive
    calls = {call["name"]: call for call in stored_calls(db, f"claude-code:{PROJECT}/{SID}")}
    edit, multi, write, bash, agent = (calls[name] for name in ("Edit", "MultiEdit", "Write", "Bash", "Agent"))

    assert json.loads(edit["input"]) == {"file_path": f"{CWD}/app.py", "replace_all": False}
    [made] = edit["edits"]
    assert made["file"] == f"{CWD}/app.py" and made["old"] == "DEBUG = True\n"
    assert secret not in json.dumps(calls) and "KEY = '" in made["new"]  # the key in the new text is masked
    assert diff_text(made)[0].splitlines() == [
        f"--- {CWD}/app.py",
        f"+++ {CWD}/app.py",
        "@@ -1 +1,2 @@",
        "-DEBUG = True",
        "+DEBUG = False",
        made["new"].splitlines()[1].join(["+", ""]),
    ]

    assert json.loads(multi["input"]) == {"file_path": f"{CWD}/shop.py"}
    assert [(e["old"], e["new"]) for e in multi["edits"]] == [
        ("def a():", "def first():"),
        ("def b():", "def second():"),
    ]
    assert json.loads(write["input"]) == {"file_path": f"{CWD}/NOTES.md"}
    assert edits_of(write) == [{"file": f"{CWD}/NOTES.md", "new": "# Notes\nship it\n"}]
    assert diff_text(edits_of(write)[0])[0].splitlines()[2:] == ["@@ -0,0 +1,2 @@", "+# Notes", "+ship it"]
    assert bash["commands"] == ["pytest -q"] and json.loads(bash["input"]) == {
        "description": "Run the tests",
        "timeout": 60000,
    }
    assert json.loads(agent["input"]) == {"description": "Review the settings", "prompt": "Read app.py and report",
                                          "subagent_type": "general-purpose"}  # fmt: skip
    assert "edits" not in agent

    changed = changed_files(db)
    assert changed[f"{CWD}/app.py"] == changed[f"{CWD}/shop.py"] == changed[f"{CWD}/NOTES.md"] == 1


def test_an_agent_call_links_forward_to_the_sub_agent_it_started(claude_code_archive) -> None:
    db, _ = claude_code_archive
    [agent] = [call for call in stored_calls(db, f"claude-code:{PROJECT}/{SID}") if call["name"] == "Agent"]
    sub_path = f"claude-code:{agent['agent']}"
    [sub] = db.query("select extra ->> '$.parent' as parent, title from documents where path = ?", [sub_path])
    assert agent["agent"] == f"{PROJECT}/{SID}/agent-{AGENT_ID}"
    assert sub == {"parent": f"{PROJECT}/{SID}", "title": "Review the settings"}  # and it links back

    [nested_call] = [call for call in stored_calls(db, sub_path) if call["name"] == "Agent"]
    assert nested_call["agent"] == f"{PROJECT}/{SID}/agent-{NESTED_ID}"
    [nested] = db.query(
        "select extra ->> '$.parent' as parent from documents where path = ?", [f"claude-code:{nested_call['agent']}"]
    )
    assert nested["parent"] == agent["agent"]


def test_an_agent_call_links_forward_without_metadata(tmp_path: Path) -> None:
    """Before version 2.1 no ``.meta.json`` stood beside a transcript: the call's result names the agent."""
    source = claude_code_source(tmp_path / "claude", aws_key())
    for meta in source.rglob("*.meta.json"):
        meta.unlink()
    db = indexed(tmp_path, "claude-code", source)
    [agent] = [call for call in stored_calls(db, f"claude-code:{PROJECT}/{SID}") if call["name"] == "Agent"]
    assert agent["agent"] == f"{PROJECT}/{SID}/agent-{AGENT_ID}"


def test_claude_code_calls_of_the_wrong_shape_lose_nothing(tmp_path: Path) -> None:
    project = tmp_path / "projects" / PROJECT
    write_lines(
        project / f"{SID}.jsonl",
        [
            line("user", 1, "go"),
            use(2, "toolu_x1", "Edit", "file_path=app.py"),
            use(3, "toolu_x2", "Edit", {"file_path": "app.py", "old_string": 7, "new_string": "x"}),
            use(
                4,
                "toolu_x3",
                "MultiEdit",
                {"file_path": "app.py", "edits": [{"old_string": "a", "new_string": "b"}, 5]},
            ),
            use(5, "toolu_x4", "Write", {"file_path": ["app.py"], "content": "x"}),
            use(6, "toolu_x5", "Read", [1, {"a": None}]),
        ],
    )
    db = indexed(tmp_path, "claude-code", tmp_path / "projects")
    text_input, wrong_old, partly, wrong_file, listed = stored_calls(db, f"claude-code:{PROJECT}/{SID}")
    assert text_input["input"] == "file_path=app.py" and "edits" not in text_input
    assert json.loads(wrong_old["input"]) == {"file_path": "app.py", "old_string": 7, "new_string": "x"}
    assert "edits" not in wrong_old
    assert json.loads(partly["input"])["edits"][1] == 5 and [e["new"] for e in partly["edits"]] == ["b"]
    assert json.loads(wrong_file["input"]) == {"file_path": ["app.py"], "content": "x"} and "edits" not in wrong_file
    assert json.loads(listed["input"]) == [1, {"a": None}]


# --- Codex -------------------------------------------------------------------------------

CODEX_ID = "019aa08a-d948-72d7-8b3e-91a26c4f7d85"
PATCH = """*** Begin Patch
*** Update File: src/app.py
@@ def main():
-    print("hi")
+    print("hello")
*** Add File: src/notes.md
+# Notes
+key = {secret}
*** Delete File: src/old.py
*** End Patch"""


def rollout_line(at: int, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": f"2025-11-20T10:14:{at:02d}.000Z", "type": kind, "payload": payload}


def codex_source(root: Path, secret: str) -> Path:
    patch = PATCH.format(secret=secret)
    heredoc = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: README.md\n@@\n-old\n+new\n*** End Patch\nEOF\n"
    records = [
        rollout_line(0, "session_meta", {"id": CODEX_ID, "timestamp": "2025-11-20T10:14:00.000Z", "cwd": "/home/ana/shop",
                                          "originator": "codex_cli_rs", "cli_version": "0.63.0"}),
        rollout_line(1, "response_item", {"type": "message", "role": "user",
                                           "content": [{"type": "input_text", "text": "Say hello"}]}),
        rollout_line(2, "response_item", {"type": "custom_tool_call", "status": "completed", "call_id": "call_p1",
                                           "name": "apply_patch", "input": patch}),
        rollout_line(3, "response_item", {"type": "custom_tool_call_output", "call_id": "call_p1", "output": "Done!"}),
        rollout_line(4, "response_item", {"type": "function_call", "name": "shell", "call_id": "call_s1",
                                           "arguments": json.dumps({"command": ["bash", "-lc", heredoc],
                                                                    "workdir": "/home/ana/shop"})}),
        rollout_line(5, "response_item", {"type": "function_call_output", "call_id": "call_s1", "output": "Done!"}),
        rollout_line(6, "response_item", {"type": "function_call", "name": "update_plan", "call_id": "call_u1",
                                           "arguments": json.dumps({"plan": [{"step": "Say hello", "status": "completed"}]})}),
        rollout_line(7, "response_item", {"type": "web_search_call", "status": "completed",
                                           "action": {"type": "search", "query": "python print"}}),
        rollout_line(8, "response_item", {"type": "custom_tool_call", "status": "completed", "call_id": "call_p2",
                                           "name": "apply_patch", "input": "*** Begin Patch\n*** Update File: x.py\n"
                                                                           "not a hunk line\n*** End Patch"}),
        rollout_line(9, "response_item", {"type": "function_call", "name": "mcp__files__read", "call_id": "call_m1",
                                           "arguments": "{not json"}),
        rollout_line(10, "response_item", {"type": "message", "role": "assistant",
                                            "content": [{"type": "output_text", "text": "Said hello."}]}),
    ]  # fmt: skip
    path = root / "sessions" / "2025" / "11" / "20" / f"rollout-2025-11-20T10-14-00-{CODEX_ID}.jsonl"
    write_lines(path, records)
    return root / "sessions"


def test_codex_calls_keep_their_input_and_the_edits_of_their_patches(tmp_path: Path) -> None:
    secret = aws_key()
    source = codex_source(tmp_path / "codex", secret)
    [session] = codex.read(source)
    assert session.key.endswith(CODEX_ID)
    db = indexed(tmp_path, "codex", source)
    [path] = [row["path"] for row in db.query("select path from documents where kind = 'conversation'")]
    patch, shell, plan, search, garbage, mcp = stored_calls(db, path)

    assert patch["name"] == "apply_patch" and "input" not in patch  # the patch is kept once: in its edits
    assert [edit["file"] for edit in patch["edits"]] == ["src/app.py", "src/notes.md", "src/old.py"]
    app, notes, old = patch["edits"]
    assert diff_text(app)[0].splitlines() == [
        "--- src/app.py",
        "+++ src/app.py",
        "@@ def main():",
        '-    print("hi")',
        '+    print("hello")',
    ]
    assert "patch" not in notes and notes["new"].startswith("# Notes\nkey = ")  # a file added: written whole
    assert secret not in json.dumps(patch)  # masked in storage
    assert old == {"file": "src/old.py", "patch": ""}

    assert shell["commands"][0].startswith("apply_patch <<'EOF'") and json.loads(shell["input"]) == {
        "workdir": "/home/ana/shop"
    }
    assert shell["edits"] == [{"file": "README.md", "patch": "@@\n-old\n+new"}]
    assert json.loads(plan["input"]) == {"plan": [{"step": "Say hello", "status": "completed"}]}
    assert json.loads(search["input"]) == {"type": "search", "query": "python print"}
    assert (
        "edits" not in garbage
        and garbage["input"].startswith("*** Begin Patch")
        and "not a hunk line" in garbage["input"]
    )
    assert garbage["files"] == ["x.py"]
    assert mcp["input"] == "{not json"

    changed = changed_files(db)
    assert changed["src/app.py"] == changed["src/notes.md"] == changed["src/old.py"] == changed["README.md"] == 1
    assert changed["x.py"] == 0


@pytest.mark.parametrize(
    "body",
    [
        "stray line\n*** Update File: a.py\n+x",
        "*** Add File: a.py\n-not added",
        "*** Delete File: a.py\n+a line",
        "*** Move to: b.py",
        "*** Update File: a.py\n+x\n*** Move to: b.py",
        "",
    ],
)
def test_a_patch_that_does_not_read_gives_no_edit(body: str) -> None:
    assert patch_edits(body) is None


def test_a_moved_file_is_changed_where_it_was_and_where_it_went() -> None:
    edits = patch_edits("*** Update File: a.py\n*** Move to: b.py\n@@\n-x\n+y\n*** End of File")
    assert [(edit.file, edit.patch) for edit in edits or []] == [("a.py", ""), ("b.py", "@@\n-x\n+y\n*** End of File")]


def beside_the_session(source: Path) -> str:
    """Version 2.0's layout: ``agent-<id>.jsonl`` beside the session file, with no metadata."""
    folder = source / PROJECT
    (folder / SID / "subagents" / f"agent-{AGENT_ID}.jsonl").rename(folder / f"agent-{AGENT_ID}.jsonl")
    shutil.rmtree(folder / SID)
    return f"{PROJECT}/agent-{AGENT_ID}"


def inline(source: Path) -> str:
    """The oldest layout: the sub-agent's lines inside the session file (``isSidechain``)."""
    folder = source / PROJECT
    transcript = (folder / SID / "subagents" / f"agent-{AGENT_ID}.jsonl").read_text()
    with (folder / f"{SID}.jsonl").open("a") as handle:
        handle.write(transcript)
    shutil.rmtree(folder / SID)
    return f"{PROJECT}/{SID}/sidechain-{AGENT_ID}"


@pytest.mark.parametrize("layout", [beside_the_session, inline])
def test_an_agent_call_links_forward_in_the_older_layouts(tmp_path: Path, layout) -> None:
    source = claude_code_source(tmp_path / "claude", aws_key())
    key = layout(source)
    sessions = {session.key: session for session in claude_code.read(source)}
    [agent] = [call for m in sessions[f"{PROJECT}/{SID}"].messages for call in m.tool_calls if call.name == "Agent"]
    assert agent.agent == key and sessions[key].parent == f"{PROJECT}/{SID}"
