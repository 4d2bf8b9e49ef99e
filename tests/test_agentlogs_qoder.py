"""Qoder's sessions: Claude Code's lines made Qoder's, with the title and folder of its sidecar.

The sample (``sample-agent-logs/qoder/projects``) is what ``build_sample`` writes, in the shape
kenn-io/agentsview reads (``internal/parser/qoder.go`` and ``qoder_test.go``); run this file to
write it again: ``.venv/bin/python tests/test_agentlogs_qoder.py``.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from archivist.agents import qoder, registry

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "qoder" / "projects"
FOLDER = "-home-dev-projects-invoice-service"
PROJECT = "/home/dev/projects/invoice-service"
SESSION = "7c2e4a91-5b3d-4f6e-8a1c-9d0b2e4f6a83"
AGENT = "agent-b81f2c04"
EDITED = f"{PROJECT}/invoices/models.py"


def line(kind: str, uuid: str, parent: str | None, time: str, message: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": PROJECT,
        "sessionId": SESSION,
        "version": "1.0.8",
        "type": kind,
        "message": message,
        "uuid": uuid,
        "timestamp": time,
        **more,
    }


def usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 1200,
        "output_tokens": output_tokens,
    }


def answer(message_id: str, content: list[dict[str, Any]], tokens: tuple[int, int]) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": "auto",
        "stop_reason": "end_turn",
        "usage": usage(*tokens),
        "content": content,
    }


def session_lines() -> list[dict[str, Any]]:
    edit = {
        "file_path": EDITED,
        "old_string": "    total: Decimal",
        "new_string": "    amount_due: Decimal",
    }
    return [
        {"type": "agent-setting", "agentSetting": "default", "entrypoint": "ide", "sessionId": SESSION},
        line(
            "user",
            "u1",
            None,
            "2025-11-12T10:04:11.402Z",
            {"role": "user", "content": "Rename the total field of Invoice to amount_due"},
        ),
        line(
            "assistant",
            "a1",
            "u1",
            "2025-11-12T10:04:16.930Z",
            answer(
                "msg_q1",
                [
                    {"type": "text", "text": "I'll rename the field in the model first."},
                    {"type": "tool_use", "id": "call_q1", "name": "Edit", "input": edit},
                ],
                (2400, 88),
            ),
        ),
        line(
            "user",
            "u2",
            "a1",
            "2025-11-12T10:04:17.211Z",
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_q1", "content": "File updated"}]},
        ),
        line(
            "assistant",
            "a2",
            "u2",
            "2025-11-12T10:04:21.054Z",
            answer(
                "msg_q2",
                [{"type": "text", "text": "Renamed Invoice.total to amount_due in invoices/models.py."}],
                (2560, 21),
            ),
        ),
    ]


def agent_lines() -> list[dict[str, Any]]:
    first = line(
        "user",
        "s1",
        None,
        "2025-11-12T10:05:02.118Z",
        {"role": "user", "content": [{"type": "text", "text": "Find every use of Invoice.total under invoices/"}]},
        agentId="b81f2c04",
        isSidechain=True,
    )
    second = line(
        "assistant",
        "s2",
        "s1",
        "2025-11-12T10:05:06.500Z",
        answer("msg_s1", [{"type": "text", "text": "invoices/views.py:42 and invoices/pdf.py:17 use it."}], (900, 19)),
        agentId="b81f2c04",
        isSidechain=True,
    )
    return [first, second]


def write_lines(path: Path, lines: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(item) + "\n" for item in lines), encoding="utf-8")


def build_sample(projects: Path) -> Path:
    """A projects folder: one session with its sidecar and a sub-agent's transcript."""
    folder = projects / FOLDER
    write_lines(folder / f"{SESSION}.jsonl", session_lines())
    sidecar = {"title": "Rename Invoice.total", "working_dir": PROJECT}
    (folder / f"{SESSION}-session.json").write_text(json.dumps(sidecar), encoding="utf-8")
    write_lines(folder / SESSION / "subagents" / f"{AGENT}.jsonl", agent_lines())
    return projects


def read(path: Path) -> tuple[list[Any], list[str]]:
    problems: list[str] = []
    return list(qoder.read(path, problems)), problems


def test_the_sample_is_what_the_script_writes(tmp_path: Path) -> None:
    built = build_sample(tmp_path / "projects")
    files = sorted(p.relative_to(built) for p in built.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(SAMPLE) for p in SAMPLE.rglob("*") if p.is_file())
    assert all((SAMPLE / f).read_bytes() == (built / f).read_bytes() for f in files)
    assert registry.kinds(registry.manager(entry_points=False))["qoder"].sample == "qoder/projects"


def test_a_session_s_messages_edit_usage_title_and_sub_agent() -> None:
    found, problems = read(SAMPLE)
    assert problems == []
    assert [s.key for s in found] == [f"{FOLDER}/{SESSION}", f"{FOLDER}/{SESSION}/{AGENT}"]
    main, agent = found
    assert (main.agent, main.title, main.project) == ("qoder", "Rename Invoice.total", PROJECT)
    assert main.files == [SAMPLE / FOLDER / f"{SESSION}.jsonl", SAMPLE / FOLDER / f"{SESSION}-session.json"]
    assert [m.role for m in main.messages][:3] == ["user", "assistant", "tool"]
    call = main.messages[1].tool_calls[0]
    assert call.name == "Edit" and call.files == [EDITED]
    assert [(e.file, e.old, e.new) for e in call.edits] == [(EDITED, "    total: Decimal", "    amount_due: Decimal")]
    assert main.messages[1].usage is not None and main.messages[1].usage.output == 88
    assert main.started == "2025-11-12T10:04:11Z"
    assert (agent.agent, agent.parent, agent.project) == ("qoder", main.key, PROJECT)
    assert agent.title == "Find every use of Invoice.total under invoices/"


def test_the_flat_layout_of_its_shared_cache_is_one_project(tmp_path: Path) -> None:
    flat = tmp_path / "SharedClientCache" / "cli" / "projects"
    write_lines(flat / f"{SESSION}.jsonl", session_lines())
    assert qoder.check(flat) is None
    found, _ = read(flat)
    assert [(s.key, s.title, s.project) for s in found] == [
        (f"projects/{SESSION}", "Rename the total field of Invoice to amount_due", PROJECT)
    ]


def test_a_sidecar_that_cannot_be_read_is_told_and_the_session_read(tmp_path: Path) -> None:
    projects = build_sample(tmp_path / "projects")
    sidecar = projects / FOLDER / f"{SESSION}-session.json"
    for text, said in [("{not json", "not read ("), ("[1, 2]", "not a JSON object")]:
        sidecar.write_text(text, encoding="utf-8")
        found, _ = read(projects)
        assert found[0].title == "Rename the total field of Invoice to amount_due"
        assert any(said in p and sidecar.name in p for p in found[0].problems)
    sidecar.write_text(json.dumps({"title": 5, "working_dir": ["x"]}), encoding="utf-8")
    found, _ = read(projects)
    assert (found[0].title, found[0].project) == ("Rename the total field of Invoice to amount_due", PROJECT)


def test_a_sidecar_linked_from_outside_is_never_opened(tmp_path: Path) -> None:
    projects = build_sample(tmp_path / "projects")
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps({"title": "secret"}), encoding="utf-8")
    sidecar = projects / FOLDER / f"{SESSION}-session.json"
    sidecar.unlink()
    sidecar.symlink_to(outside)
    found, _ = read(projects)
    assert found[0].title != "secret"


def test_newest_sessions_are_qoder_s_with_their_titles() -> None:
    found = list(qoder.newest(SAMPLE, 5))
    assert found and all(s.agent == "qoder" for s in found)
    assert found[0].title == "Rename Invoice.total"


def test_a_source_that_is_not_qoder_s_says_what_was_expected(tmp_path: Path) -> None:
    (tmp_path / "notes.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
    said = qoder.check(tmp_path) or ""
    assert "not Qoder sessions" in said and said.endswith(f"expected {qoder.EXPECTED}.")
    assert "Claude Code" not in (qoder.check(tmp_path / "missing") or "")


if __name__ == "__main__":
    shutil.rmtree(SAMPLE, ignore_errors=True)
    build_sample(SAMPLE)
    print(f"wrote {SAMPLE}", file=sys.stderr)
