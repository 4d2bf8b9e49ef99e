"""Google Antigravity's conversations from its brain's plain files: what is read, what is skipped and why,
and what is refused (its encrypted conversations)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from archivist.agents import Edit, Session, antigravity

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "antigravity"
FIXED = "3b8e1f52-7c4d-4a91-9e06-5d2f8a1c7b34"
PLANNED = "9c41d7e0-2b6a-4f38-8d15-e7a3b90c4f21"
ID = "68b6d305-c8a9-45b4-96c8-fbaff15fa2f3"


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(antigravity.read(path, problems)), problems


def write(home: Path, lines: list[Any], name: str = "transcript.jsonl", conversation: str = ID) -> Path:
    logs = home / "brain" / conversation / ".system_generated" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    file = logs / name
    file.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return file


def step(index: int, source: str, kind: str, **more: Any) -> dict[str, Any]:
    return {
        "step_index": index,
        "source": source,
        "type": kind,
        "status": "DONE",
        "created_at": f"2025-11-20T10:00:0{index}Z",
        **more,
    }


def test_the_sample_is_read_with_its_requests_answers_tools_edit_artifacts_and_title() -> None:
    (fixed,), problems = read(SAMPLE)
    assert problems == [] and fixed.problems == []
    assert (fixed.key, fixed.agent, fixed.title, fixed.titled) == (
        FIXED,
        "antigravity",
        "Fixing Tide Table Daylight Saving",
        True,
    )
    assert fixed.project == "/home/noor/src/tidewatch"
    assert fixed.models == ["Gemini 3 Pro (High)"]
    assert (fixed.started, fixed.last) == ("2025-11-24T09:02:11Z", "2025-11-24T09:02:37Z")
    roles = [m.role for m in fixed.messages]
    assert roles == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "assistant",
        "tool",
        "assistant",
        "assistant",
    ]
    request = fixed.messages[0]
    assert (
        request.text
        == "The tide table shows high water an hour late after the clocks change. Fix the conversion in tides.py."
    )
    look = fixed.messages[1]
    assert look.thinking.startswith("**Locating the conversion**") and look.model == "Gemini 3 Pro (High)"
    (view,) = look.tool_calls
    assert (view.name, view.files) == ("view_file", ["/home/noor/src/tidewatch/tidewatch/tides.py"])
    assert json.loads(view.input)["toolSummary"] == "View tides.py"  # decoded: older versions JSON-encode each argument
    assert fixed.messages[2].tool_output.startswith("Showing lines 40 to 44 of tides.py")
    (edit,) = fixed.messages[3].tool_calls
    assert edit.edits == [
        Edit(
            "/home/noor/src/tidewatch/tidewatch/tides.py",
            "    local = moment + timedelta(hours=OFFSET)\n",
            "    local = moment.astimezone(ZoneInfo(station.zone))\n",
        )
    ]
    assert "TargetContent" not in edit.input and "ReplacementContent" not in edit.input
    (run,) = fixed.messages[5].tool_calls
    assert run.commands == ["python -m pytest tests/test_tides.py -q"] and "CommandLine" not in run.input
    task = fixed.messages[6]  # the artifact, at its time, between the command and its output
    assert task.text.startswith("[ARTIFACT_TYPE_TASK — task.md]\nChecklist for fixing the daylight saving offset\n")
    assert "- [x] Run the tide tests" in task.text
    assert fixed.messages[-1].text.startswith("[ARTIFACT_TYPE_WALKTHROUGH — walkthrough.md]")
    assert len(fixed.files) == 3


def test_a_conversation_whose_brain_holds_only_a_plan_is_that_plan(tmp_path: Path) -> None:
    folder = tmp_path / "brain" / PLANNED
    folder.mkdir(parents=True)
    (folder / "implementation_plan.md").write_text("# Station pages\n\nAdd a page per station.\n")
    meta = {
        "artifactType": "ARTIFACT_TYPE_IMPLEMENTATION_PLAN",
        "summary": "Plan for a page per tide station",
        "updatedAt": "2025-12-02T16:45:09.530117264Z",
    }
    (folder / "implementation_plan.md.metadata.json").write_text(json.dumps(meta))
    (planned,), problems = read(tmp_path)
    assert (planned.key, planned.title, planned.titled, planned.project) == (
        PLANNED,
        "Plan for a page per tide station",
        False,
        None,
    )
    (plan,) = planned.messages
    assert plan.role == "assistant" and plan.timestamp == "2025-12-02T16:45:09Z" and problems == []
    assert (
        plan.text
        == "[ARTIFACT_TYPE_IMPLEMENTATION_PLAN — implementation_plan.md]\nPlan for a page per tide station\n\n# Station pages\n\nAdd a page per station.\n"
    )


def test_steps_are_read_in_step_order_and_what_is_no_step_is_told(tmp_path: Path) -> None:
    write(
        tmp_path,
        [
            step(2, "MODEL", "PLANNER_RESPONSE", content="there are three files"),
            step(0, "USER_EXPLICIT", "USER_INPUT", content="list the files"),
            "not json",
            [1, 2],
            {"step_index": 5},
            step(1, "SYSTEM", "CONVERSATION_HISTORY"),
            step(3, "SYSTEM", "ERROR_MESSAGE", error="There was a problem parsing the tool call."),
        ],
    )
    (session,), problems = read(tmp_path)
    assert [(m.role, m.text) for m in session.messages] == [
        ("user", "list the files"),
        ("assistant", "there are three files"),
        ("system", "There was a problem parsing the tool call."),
    ]
    assert session.title == "list the files" and not session.titled
    assert session.problems == ["3 lines skipped: 1 not JSON, 2 no step (an object with a source or type)"]
    assert problems == []


def test_the_whole_transcript_is_read_before_the_cut_one(tmp_path: Path) -> None:
    write(tmp_path, [step(0, "USER_EXPLICIT", "USER_INPUT", content="cut <truncated 9 bytes>")])
    write(tmp_path, [step(0, "USER_EXPLICIT", "USER_INPUT", content="whole request")], "transcript_full.jsonl")
    (session,), _ = read(tmp_path)
    assert session.messages[0].text == "whole request"


def test_plain_arguments_and_several_replacements_make_edits(tmp_path: Path) -> None:
    chunks = [
        {"TargetContent": "a = 1", "ReplacementContent": "a = 2"},
        {"TargetContent": "b", "ReplacementContent": "c"},
    ]
    calls = [
        {
            "name": "multi_replace_file_content",
            "args": {"TargetFile": "/w/app.py", "ReplacementChunks": chunks, "toolSummary": "Edit"},
        },
        {"name": "write_to_file", "args": {"TargetFile": "/w/new.json", "CodeContent": "{}", "Overwrite": True}},
    ]
    write(tmp_path, [step(0, "MODEL", "PLANNER_RESPONSE", tool_calls=calls)])
    (session,), _ = read(tmp_path)
    many, whole = session.messages[0].tool_calls
    assert many.edits == [Edit("/w/app.py", "a = 1", "a = 2"), Edit("/w/app.py", "b", "c")]
    assert json.loads(many.input) == {"TargetFile": "/w/app.py", "toolSummary": "Edit"}
    assert whole.edits == [Edit("/w/new.json", None, "{}")] and whole.files == ["/w/new.json"]


def test_history_gives_the_workspace_and_the_prompts_a_brain_lacks(tmp_path: Path) -> None:
    rows = [
        {"display": "fix the bug", "timestamp": 1763632800000, "workspace": "/x/proj", "conversationId": ID},
        {"display": "no conversation"},
    ]
    (tmp_path / "history.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (tmp_path / "brain" / ID).mkdir(parents=True)
    (tmp_path / "brain" / ID / "plan.md").write_text("# Plan\n")
    (session,), problems = read(tmp_path)
    assert session.project == "/x/proj"
    first = session.messages[0]
    assert (first.role, first.text, first.timestamp) == (
        "user",
        "fix the bug",
        "2025-11-20T10:00:00Z",
    )
    assert session.title == "fix the bug" and problems == []


def test_a_damaged_title_store_is_told_and_the_conversations_still_read(tmp_path: Path) -> None:
    write(tmp_path, [step(0, "USER_EXPLICIT", "USER_INPUT", content="hello")])
    (tmp_path / "conversation_summaries.db").write_bytes(b"not a database at all" * 10)
    (session,), problems = read(tmp_path)
    assert session.title == "hello"
    assert len(problems) == 1 and problems[0].startswith("conversation_summaries.db: not read")


def test_a_title_store_without_the_conversation_leaves_its_first_request(tmp_path: Path) -> None:
    write(tmp_path, [step(0, "USER_EXPLICIT", "USER_INPUT", content="<USER_REQUEST>\nhello\n</USER_REQUEST>")])
    db = sqlite3.connect(tmp_path / "conversation_summaries.db")
    db.execute("CREATE TABLE conversation_summaries (conversation_id text PRIMARY KEY, title text)")
    db.execute("INSERT INTO conversation_summaries VALUES ('other', 'Other'), (?, NULL)", (ID,))
    db.commit()
    db.close()
    (session,), _ = read(tmp_path)
    assert (session.title, session.titled) == ("hello", False)


def test_the_encrypted_conversations_are_refused_with_their_reason(tmp_path: Path) -> None:
    folder = tmp_path / "conversations"
    folder.mkdir()
    (folder / f"{ID}.pb").write_bytes(bytes(range(64)))
    for path in (folder, folder / f"{ID}.pb"):
        reason = antigravity.check(path)
        assert reason is not None and "cannot be read" in reason and "AES-encrypted" in reason
    reason = antigravity.check(tmp_path)
    assert reason is not None and "holds no conversation of Antigravity's brain" in reason
    assert list(antigravity.read(tmp_path)) == []


def test_check_takes_the_folder_its_brain_a_conversation_and_a_transcript() -> None:
    transcript = SAMPLE / "brain" / FIXED / ".system_generated" / "logs" / "transcript.jsonl"
    for path in (SAMPLE, SAMPLE / "brain", SAMPLE / "brain" / FIXED, transcript):
        assert antigravity.check(path) is None, path
    reason = antigravity.check(SAMPLE / "brain" / FIXED / "task.md")
    assert reason is not None and "is not an Antigravity transcript" in reason
