"""Windsurf's Cascade transcripts: what is read, what is skipped and why, and hostile input."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from archivist.agents import Session, Unread, iso_utc, windsurf

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "windsurf" / "transcripts"
TRAJECTORY = "5d0c8e4a-2f7b-4e19-a6c3-9b1d7f0e2a48"


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(windsurf.read(path, problems)), problems


def transcript(file: Path, *steps: Any) -> Path:
    file.parent.mkdir(parents=True, exist_ok=True)
    text = "".join((step if isinstance(step, str) else json.dumps(step)) + "\n" for step in steps)
    file.write_text(text, encoding="utf-8")
    return file


def asked(text: str) -> dict[str, Any]:
    return {"status": "done", "type": "user_input", "user_input": {"user_response": text}}


def answered(text: str, **more: Any) -> dict[str, Any]:
    return {"status": "done", "type": "planner_response", "planner_response": {"response": text}, **more}


def test_the_sample_s_requests_answers_and_tool_steps() -> None:
    (session,), problems = read(SAMPLE)
    assert problems == [] and session.problems == []
    assert (session.key, session.agent) == (TRAJECTORY, "windsurf")
    assert session.title.startswith("The invoice totals are off by a cent")
    assert session.project == "/home/rin/src/ledger"  # the first command's working directory
    roles = ["user", "assistant", "assistant", "tool", "assistant", "user", "assistant", "assistant"]
    assert [m.role for m in session.messages] == roles
    calls = [(c.name, c.files, c.commands) for m in session.messages for c in m.tool_calls]
    assert calls == [
        ("view_file", ["/home/rin/src/ledger/ledger/invoice.py"], []),  # a file:// URI as a path
        ("code_action", ["/home/rin/src/ledger/ledger/invoice.py"], []),
        ("run_command", [], ["python -m pytest tests/test_invoice.py -q"]),
        ("code_action", ["/home/rin/src/ledger/tests/test_invoice.py"], []),
    ]
    assert session.messages[3].tool_output == "......\n6 passed in 0.12s\n"
    assert not any("quantize(CENT" in m.text or "quantize(CENT" in m.tool_output for m in session.messages)
    assert not any("style.md" in m.text for m in session.messages)  # rules_applied is left out
    assert (session.started, session.last) == ("2025-11-20T09:14:02Z", "2025-11-20T09:16:20Z")  # the steps' times
    assert session.messages[3].timestamp == "2025-11-20T09:14:41Z"  # the command's output, when it ran
    assert session.models == []


def test_times_models_and_thinking_where_a_version_writes_them(tmp_path: Path) -> None:
    file = transcript(
        tmp_path / "transcripts" / "t1.jsonl",
        {**asked("Rename the module"), "timestamp": "2026-03-01T10:00:00+01:00"},
        {
            **answered("Renamed it.", timestamp="2026-03-01T09:00:05Z", model_name="SWE-1.5"),
            "planner_response": {"response": "Renamed it.", "thinking": "mv then fix imports"},
        },
    )
    (session,), _ = read(file)
    assert (session.started, session.last) == ("2026-03-01T09:00:00Z", "2026-03-01T09:00:05Z")
    assert session.models == ["SWE-1.5"]
    assert session.messages[1].thinking == "mv then fix imports" and session.messages[1].model == "SWE-1.5"
    assert session.project is None  # one file named alone, with no command: no project


def test_a_transcript_of_steps_without_times_is_dated_by_its_file(tmp_path: Path) -> None:
    file = transcript(tmp_path / "transcripts" / "t1.jsonl", asked("Go"), answered("Gone"))
    os.utime(file, (1764000000, 1764000000))
    (session,), _ = read(file)
    assert session.started == session.last == iso_utc(1764000000) == "2025-11-24T16:00:00Z"
    assert [m.timestamp for m in session.messages] == [None, None]


def test_a_damaged_line_is_skipped_and_told_and_the_rest_read(tmp_path: Path) -> None:
    transcript(
        tmp_path / "transcripts" / "t1.jsonl",
        asked("First"),
        '{"status":"done","type":"planner_resp',
        ["not", "a", "step"],
        answered("Second"),
    )
    (session,), problems = read(tmp_path / "transcripts")
    assert problems == []
    assert [m.text for m in session.messages] == ["First", "Second"]
    assert len(session.problems) == 1 and session.problems[0].startswith("2 lines skipped:")
    assert "no step" in session.problems[0]


def test_values_of_the_wrong_type_never_raise(tmp_path: Path) -> None:
    transcript(
        tmp_path / "transcripts" / "t1.jsonl",
        asked("Go"),
        {"status": "done", "type": "user_input", "user_input": ["x"]},
        {"status": "done", "type": "planner_response", "planner_response": {"response": 3, "thinking": None}},
        {"status": "done", "type": "run_command", "run_command": {"command_line": ["ls"], "cwd": 1, "output": {}}},
        {"status": "done", "type": "code_action", "code_action": {"path": None}, "timestamp": "yesterday"},
        {"status": 1, "type": "mcp_tool", "mcp_tool": "x", "model": {"name": "y"}},
    )
    (session,), _ = read(tmp_path / "transcripts")
    assert [c.name for m in session.messages for c in m.tool_calls] == ["run_command", "code_action", "mcp_tool"]
    assert session.models == []


def test_each_form_of_source_is_read_and_a_project_s_folder_names_its_project(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    transcript(project / ".windsurf" / "transcripts" / "a.jsonl", asked("One"))
    transcript(project / ".windsurf" / "transcripts" / "b.jsonl", asked("Two"))
    (project / ".windsurf" / "transcripts" / "notes.txt").write_text("not a transcript")
    for source in (project, project / ".windsurf", project / ".windsurf" / "transcripts"):
        assert windsurf.check(source) is None
        sessions, problems = read(source)
        assert problems == [] and [(s.key, s.project) for s in sessions] == [("a", str(project)), ("b", str(project))]
    assert windsurf.check(project / ".windsurf" / "transcripts" / "a.jsonl") is None


def test_a_transcript_with_nothing_said_is_no_session(tmp_path: Path) -> None:
    transcript(tmp_path / "transcripts" / "empty.jsonl", {"status": "done", "type": "user_input", "user_input": {}})
    assert read(tmp_path / "transcripts") == ([], [])


def test_links_that_lead_out_of_the_source_are_never_opened(tmp_path: Path) -> None:
    outside = transcript(tmp_path / "elsewhere" / "secret.jsonl", asked("Not for this archive"))
    folder = tmp_path / "transcripts"
    transcript(folder / "a.jsonl", asked("Mine"))
    (folder / "b.jsonl").symlink_to(outside)
    sessions, problems = read(folder)
    assert [s.key for s in sessions] == ["a"]
    assert problems == ["b.jsonl: not opened: a symbolic link that leads out of the source"]
    assert isinstance(problems[0], Unread)
    home = tmp_path / "home"
    (home / ".windsurf").mkdir(parents=True)
    (home / ".windsurf" / "transcripts").symlink_to(tmp_path / "elsewhere")
    assert read(home) == ([], [".windsurf/transcripts: not opened: a symbolic link that leads out of the source"])


@pytest.mark.parametrize(
    ("made", "said"),
    [
        (lambda p: p, "holds no transcripts folder (.windsurf/transcripts)"),
        (lambda p: (p / "transcripts").mkdir() or p / "transcripts", "holds no .jsonl transcript"),
        (lambda p: transcript(p / "transcripts" / "x.jsonl", {"role": "user"}).parent, "is not a Windsurf transcript"),
        (lambda p: transcript(p / "chat.json", asked("x")), "is not a Windsurf transcript"),
        (lambda p: p / "missing", "does not exist"),
    ],
)
def test_a_source_that_is_not_windsurf_s_says_what_was_expected(tmp_path: Path, made: Any, said: str) -> None:
    reason = windsurf.check(made(tmp_path))
    assert reason is not None and said in reason
    assert reason.endswith("or one transcript (<trajectory_id>.jsonl).")


def test_a_source_that_is_a_pipe_is_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "t.jsonl")
    reason = windsurf.check(tmp_path / "t.jsonl")
    assert reason is not None and "neither a regular file nor a folder" in reason
