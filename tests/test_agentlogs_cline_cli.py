"""The Cline CLI's sessions: what is read, what is skipped and why, and hostile input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from archivist.agents import Edit, Session, Usage, cline_cli

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "cline-cli"
LEAD = "1763457242000_k3v9x"
PROJECT = "/home/dev/src/captions-gateway"


def write(folder: Path, session: str, name: str, value: Any) -> Path:
    place = folder / "sessions" / session
    place.mkdir(parents=True, exist_ok=True)
    file = place / name
    file.write_bytes(value if isinstance(value, bytes) else json.dumps(value).encode())
    return file


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(cline_cli.read(path, problems)), problems


def messages(*items: Any, session: str = "s1") -> dict[str, Any]:
    return {"version": 1, "sessionId": session, "agent": "lead", "messages": list(items)}


def assistant(*content: Any, **more: Any) -> dict[str, Any]:
    return {"role": "assistant", "ts": 1763457246120, "modelInfo": {"id": "m1"}, "content": list(content), **more}


def test_the_sample_is_read_with_its_title_project_tools_edits_and_usage() -> None:
    (lead, sub), problems = read(SAMPLE)
    assert problems == [] and lead.problems == [] and sub.problems == []
    assert (lead.key, lead.agent, lead.title, lead.project) == (
        LEAD,
        "cline-cli",
        "Make the upstream fetch retry three times with backoff",
        PROJECT,
    )
    assert (lead.started, lead.last, lead.models) == (
        "2025-11-18T09:14:02Z",
        "2025-11-18T09:16:11Z",
        ["claude-sonnet-4-5"],
    )
    assert [m.role for m in lead.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    person = lead.messages[0]
    assert person.text.endswith(f"[file: {PROJECT}/src/upstream.ts]") and person.attachments[0].size == 73
    read_call = lead.messages[1].tool_calls[0]
    assert lead.messages[1].thinking.startswith("Check how the caller") and read_call.files == [
        f"{PROJECT}/src/server.ts"
    ]
    edit = lead.messages[3].tool_calls[0]
    assert edit.name == "editor" and edit.edits[0].old == "\treturn fetch(url);" and "new_text" not in edit.input
    command = lead.messages[5].tool_calls[0]
    assert command.commands == ["npm test -- upstream"] and command.input == ""
    assert lead.messages[6].tool_output.startswith("npm test -- upstream\nPASS test/upstream.test.ts")
    assert lead.messages[7].usage == Usage(input=1320, output=612, cache_write=2890, cache_read=14210, cost=0.0213)
    assert (sub.key, sub.parent, sub.project, sub.models) == (f"{LEAD}__reviewer", LEAD, PROJECT, ["claude-haiku-4-5"])
    assert sub.title.startswith("Review the retry loop")


def test_check_takes_the_data_folder_the_sessions_folder_a_session_folder_and_a_file(tmp_path: Path) -> None:
    sessions = SAMPLE / "sessions"
    for path in (SAMPLE, sessions, sessions / LEAD, sessions / LEAD / f"{LEAD}.messages.json"):
        assert cline_cli.check(path) is None
    assert "holds no Cline CLI session" in (cline_cli.check(tmp_path) or "")
    assert "does not exist" in (cline_cli.check(tmp_path / "nope") or "")
    other = tmp_path / "x.json"
    other.write_text("[1]")
    assert "is not a Cline CLI messages file" in (cline_cli.check(other) or "")
    assert [s.key for s in read(sessions / LEAD)[0]] == [LEAD, f"{LEAD}__reviewer"]


def test_an_apply_patch_call_and_a_file_written_whole_are_edits(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-one\n+two\n*** End Patch"
    write(
        tmp_path,
        "s1",
        "s1.messages.json",
        messages(
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            assistant(
                {"type": "tool_use", "id": "t1", "name": "apply_patch", "input": {"input": patch}},
                {"type": "tool_use", "id": "t2", "name": "editor", "input": {"path": "/p/new.ts", "new_text": "x\n"}},
                {
                    "type": "tool_use",
                    "id": "t3",
                    "name": "run_commands",
                    "input": {"commands": [{"command": "ls", "args": ["-a"]}]},
                },
            ),
        ),
    )
    (session,), problems = read(tmp_path)
    patched, created, listed = session.messages[1].tool_calls
    assert patched.files == ["src/a.ts"] and patched.edits[0].file == "src/a.ts" and patched.input == ""
    assert created.edits == [Edit("/p/new.ts", None, "x\n")] and created.files == ["/p/new.ts"]
    assert listed.commands == ["ls -a"] and problems == []


def test_a_manifest_missing_leaves_times_and_title_to_the_messages(tmp_path: Path) -> None:
    write(
        tmp_path, "s1", "s1.messages.json", messages({"role": "user", "ts": 1763457242000, "content": "Fix the build"})
    )
    (session,), _ = read(tmp_path)
    assert (session.title, session.project, session.started, session.parent) == (
        "Fix the build",
        None,
        "2025-11-18T09:14:02Z",
        None,
    )


def test_hostile_values_are_skipped_and_told_never_raised(tmp_path: Path) -> None:
    write(tmp_path, "a", "a.messages.json", b"{not json")
    write(tmp_path, "b", "b.messages.json", {"messages": "no"})
    write(tmp_path, "c", "c.json", [1, 2])
    write(
        tmp_path,
        "c",
        "c.messages.json",
        messages(
            "text",
            {"role": "system", "content": []},
            {
                "role": "user",
                "content": [{"type": "text", "text": 5}, {"type": "tool_result", "content": {"deep": [1]}}],
            },
            assistant(
                {"type": "tool_use", "name": 5, "input": "not an object"}, metrics={"inputTokens": True, "cost": "1"}
            ),
            {"role": "user", "ts": "yesterday", "content": [{"type": "file", "path": 7, "content": None}]},
            session="c",
        ),
    )
    sessions, problems = read(tmp_path)
    (session,) = sessions
    assert session.key == "c" and session.problems == ["2 messages of no known shape skipped"]
    assert any("a.messages.json" in problem for problem in problems)
    assert "b.messages.json: not a Cline CLI messages file (no messages)" in problems
    assert session.messages[0].tool_output == '{"deep": [1]}' and session.messages[1].tool_calls[0].name == "tool"
    assert session.messages[1].usage is None and session.messages[2].text == "[file]"


def test_a_link_that_leads_out_is_never_opened(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "s9", "s9.messages.json", messages({"role": "user", "content": "secret"}, session="s9"))
    source = tmp_path / "data"
    (source / "sessions").mkdir(parents=True)
    (source / "sessions" / "s9").symlink_to(outside / "sessions" / "s9")
    sessions, problems = read(source)
    assert sessions == [] and any("leads out" in problem or "outside" in problem for problem in problems)
