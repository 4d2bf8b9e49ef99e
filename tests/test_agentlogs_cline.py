"""Cline's and Roo Code's task folders: what is read, what is skipped, and hostile input."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from archivist.agents import Unread, cline, cline_tasks, roo_code
from archivist.archive.indexer import index_workspace
from archivist.queries.runner import Archive

SAMPLES = Path(__file__).resolve().parent.parent / "sample-agent-logs"


def task(root: Path, task_id: str, history: object, **files: object) -> Path:
    folder = root / "tasks" / task_id
    folder.mkdir(parents=True)
    text = history if isinstance(history, str) else json.dumps(history)
    (folder / cline_tasks.HISTORY).write_text(text, encoding="utf-8")
    for name, value in files.items():
        (folder / f"{name}.json").write_text(json.dumps(value), encoding="utf-8")
    return folder


def read(path: Path) -> tuple[list, list[str]]:
    problems: list[str] = []
    return list(cline.read(path, problems)), problems


def test_every_layout_of_a_source_is_accepted_and_anything_else_says_what_was_expected(tmp_path: Path) -> None:
    folder = task(tmp_path / "ext", "1", [{"role": "user", "content": "hello there"}])
    for source in (tmp_path / "ext", tmp_path / "ext" / "tasks", folder):
        assert cline.check(source) is None
        assert [session.key for session in read(source)[0]] == ["1"]
    (tmp_path / "empty").mkdir()
    (tmp_path / "file.json").write_text("{}")
    assert "holds no task folder" in (cline.check(tmp_path / "empty") or "")
    assert "is not a folder" in (cline.check(tmp_path / "file.json") or "")
    assert "does not exist" in (roo_code.check(tmp_path / "nowhere") or "")
    assert (cline.check(tmp_path / "empty") or "").endswith(f"expected {cline.EXPECTED}.")


def test_damaged_files_are_told_and_the_other_tasks_read(tmp_path: Path) -> None:
    root = tmp_path / "ext"
    task(root, "1", "[{not json")
    task(root, "2", "[" * 5000 + "]" * 5000)
    task(root, "3", {"role": "user"})  # not a list
    task(root, "4", [1, "x", {"role": "robot", "content": "?"}, {"role": "user", "content": "the real one"}])
    (root / "tasks" / "5").mkdir()  # neither file: not a task
    found, problems = read(root)
    assert [(session.key, session.title) for session in found] == [("4", "the real one")]
    assert found[0].problems == ["3 messages skipped: 3 record of no known shape"]
    assert [problem for problem in problems if problem.startswith("task ")] == [
        f"task {key}: no conversation to read ({cline_tasks.HISTORY} missing or empty)" for key in ("1", "2", "3")
    ]


def test_a_link_that_leads_out_is_never_opened(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps([{"role": "user", "content": "the password is hunter2"}]))
    folder = task(tmp_path / "ext", "1", [{"role": "user", "content": "a task"}])
    (folder / cline_tasks.UI).symlink_to(secret)
    (tmp_path / "ext" / "tasks" / "2").symlink_to(tmp_path, target_is_directory=True)
    found, problems = read(tmp_path / "ext")
    assert [session.key for session in found] == ["1"]
    assert all(isinstance(problem, Unread) for problem in problems) and len(problems) == 2
    assert not any("hunter2" in message.text for session in found for message in session.messages)


def test_xml_tools_are_calls_and_unclosed_tags_cost_linear_time(tmp_path: Path) -> None:
    text = "Reading.\n<read_file>\n<path>a.py</path>\n</read_file>\n<ask_followup_question>\n<question>Which one?</question>\n</ask_followup_question>"
    said, calls = cline_tasks._xml_tools(text)
    assert said == "Reading.\n\nWhich one?" and [(c.name, c.files) for c in calls] == [("read_file", ["a.py"])]
    hostile = "<read_file>" * 200_000 + "<execute_command>" * 200_000
    started = time.perf_counter()
    said, calls = cline_tasks._xml_tools(hostile)
    assert time.perf_counter() - started < 2 and calls == [] and said == hostile


def test_images_are_placeholders_and_environment_details_never_text(tmp_path: Path) -> None:
    history = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<task>\nWhat is on this screen?\n</task>"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo" * 1000},
                },
                {
                    "type": "text",
                    "text": "<environment_details>\n# Current Working Directory (/w/app) Files\n</environment_details>",
                },
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "A login form."}]},
    ]
    task(tmp_path / "ext", "1763900000000", history)
    (session,) = read(tmp_path / "ext")[0]
    assert session.messages[0].text == "What is on this screen?\n\n[image]"
    assert session.project == "/w/app"  # from the environment details, without a task list
    assert session.started == session.last == "2025-11-23T12:13:20Z"  # no times: the task id is its start


def test_the_samples_index_and_are_found_by_their_words(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes" / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    index_workspace(workspace, log_sources=[("cline", SAMPLES / "cline"), ("roo-code", SAMPLES / "roo-code")])
    with Archive.for_workspace(workspace) as archive:
        backoff = archive.search({"query": "backs off", "mode": "keyword", "agents": "cline", "output": "full"})
        february = archive.search({"query": "february", "mode": "keyword", "output": "full"})
        tests = archive.search({"query": "tests pass", "mode": "keyword", "roles": "assistant", "output": "full"})
    assert [hit["entity_type"] for hit in backoff["results"]] == ["cline"]
    assert [hit["entity_type"] for hit in february["results"]] == ["roo-code"]
    assert {hit["entity_type"] for hit in tests["results"]} == {"cline", "roo-code"}
    assert all(hit["message"]["role"] == "assistant" for hit in tests["results"])


@pytest.mark.skipif(os.name == "nt", reason="permissions")
def test_an_unreadable_file_is_told_not_fatal(tmp_path: Path) -> None:
    folder = task(tmp_path / "ext", "1", [{"role": "user", "content": "a task"}], ui_messages=[{"ts": 1}])
    (folder / cline_tasks.UI).chmod(0)
    try:
        found, _ = read(tmp_path / "ext")
    finally:
        (folder / cline_tasks.UI).chmod(0o644)
    if os.geteuid() != 0:  # (root reads it anyway)
        assert any("ui_messages.json: not read" in problem for problem in found[0].problems)
    assert [session.key for session in found] == ["1"]
