"""Kilo Code's tasks: what is read (through Cline's reader), the models its environment details
name, what is skipped and why, and hostile input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from archivist.agents import Session, kilo_code

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "kilo-code"
TASK = "0199a2f4-3c1e-7d2a-8b4f-6e5d4c3b2a10"


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(kilo_code.read(path, problems)), problems


def environment(model: str) -> str:
    return (
        "<environment_details>\n# Current Mode\n<slug>code</slug>\n<name>Code</name>\n"
        f"<model>{model}</model>\n\n# Current Workspace Directory (/srv/app) Files\n</environment_details>"
    )


def write_task(folder: Path, history: Any) -> Path:
    task = folder / "tasks" / "t1"
    task.mkdir(parents=True)
    (task / "api_conversation_history.json").write_text(json.dumps(history), encoding="utf-8")
    return task


def test_the_sample_is_read_with_its_tools_edit_usage_model_and_project() -> None:
    (session,), problems = read(SAMPLE)
    assert problems == [] and session.problems == []
    assert (session.key, session.agent, session.project) == (TASK, "kilo-code", "/home/rui/projects/blog")
    assert session.title == 'slugify() keeps accents: "Café" becomes "café". Make it ASCII.'
    assert session.models == ["anthropic/claude-sonnet-4"]
    assert (session.started, session.last) == ("2025-10-02T10:13:20Z", "2025-10-02T10:13:37Z")
    roles = [message.role for message in session.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
    replies = [message for message in session.messages if message.role == "assistant"]
    assert {reply.model for reply in replies} == {"anthropic/claude-sonnet-4"}
    assert replies[0].thinking == "I should read the function first."
    calls = [call for reply in replies for call in reply.tool_calls]
    assert [call.name for call in calls] == ["read_file", "apply_diff", "execute_command", "attempt_completion"]
    assert calls[0].files == ["src/slug.py"] and calls[2].commands == ["python -m pytest tests/test_slug.py -q"]
    (edit,) = calls[1].edits
    assert edit.file == "src/slug.py" and edit.new is not None and "unicodedata.normalize" in edit.new
    used = [reply.usage for reply in replies]
    assert [(u.input, u.output, u.cache_write, u.cache_read, u.cost) for u in used if u] == [
        (10240, 96, 10100, 0, 0.0394),
        (310, 205, 260, 10100, 0.0074),
        (190, 40, 150, 10360, 0.0044),
        (120, 60, 90, 10510, 0.0045),
    ]
    assert all("environment_details" not in message.text for message in session.messages)


def test_each_reply_has_the_model_of_the_turn_before_it(tmp_path: Path) -> None:
    write_task(
        tmp_path,
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "<task>a</task>"}, {"type": "text", "text": environment("m1")}],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "one"}]},
            {"role": "user", "content": "no details here"},
            {"role": "assistant", "content": [{"type": "text", "text": "two"}]},
            {"role": "user", "content": [{"type": "text", "text": environment("m2")}]},
            {"role": "assistant", "content": [{"type": "text", "text": "three"}]},
        ],
    )
    (session,), _ = read(tmp_path)
    assert [m.model for m in session.messages if m.role == "assistant"] == ["m1", "m1", "m2"]
    assert session.models == ["m1", "m2"]


def test_a_model_named_by_the_person_outside_the_details_is_not_taken(tmp_path: Path) -> None:
    text = "# Current Mode\n<model>not-this</model>"
    write_task(tmp_path, [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}])
    (session,), _ = read(tmp_path)
    assert session.models == [] and session.messages[-1].model is None


def test_a_source_that_is_not_kilo_code_s_says_what_was_expected(tmp_path: Path) -> None:
    assert "does not exist" in str(kilo_code.check(tmp_path / "none"))
    assert "kilocode.kilo-code" in str(kilo_code.check(tmp_path))
    assert kilo_code.check(SAMPLE) is None and kilo_code.check(SAMPLE / "tasks" / TASK) is None


def test_damaged_and_hostile_files_are_told_never_raised(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "kilo")
    task = tmp_path / "kilo" / "tasks" / TASK
    (task / "api_conversation_history.json").write_bytes(b'[{"role": "user", "content": [')
    (task / "task_metadata.json").write_bytes(b"\xff\xfe")
    write_task(tmp_path / "kilo2", [{"role": "user", "content": [None, 3, {"text": ["x"]}]}, {"role": 7}, "x"])
    (session,), problems = read(tmp_path / "kilo")
    assert any("api_conversation_history.json" in problem for problem in problems)
    assert session.messages and session.messages[0].role == "user"  # read from the panel
    sessions, _ = read(tmp_path / "kilo2")
    assert all(session.models == [] for session in sessions)
