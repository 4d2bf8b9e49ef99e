"""Cline's and Roo Code's task folders: what is read, what is skipped, and hostile input."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from archivist.agents import Unread, Usage, cline, roo_code
from archivist.agents.cline import tasks as cline_tasks
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
        f"task {key}: no conversation to read (neither {cline_tasks.HISTORY} nor {cline_tasks.UI} holds one)"
        for key in ("1", "2", "3")
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
        by_agent = {row["key"]: row for row in archive.run("usage", {"group_by": "agent"})}
    assert [hit["entity_type"] for hit in backoff["results"]] == ["cline"]
    assert [hit["entity_type"] for hit in february["results"]] == ["roo-code"]
    assert {hit["entity_type"] for hit in tests["results"]} == {"cline", "roo-code"}
    assert all(hit["message"]["role"] == "assistant" for hit in tests["results"])
    # each request's tokens, from the panel's api_req_started messages, whether the conversation
    # was read from its file or from the panel
    assert by_agent["cline"]["input_tokens"] == 12450 and by_agent["roo-code"]["input_tokens"] == 9120 + 9260


@pytest.mark.parametrize("reader", [cline, roo_code])
def test_a_sample_s_completion_results_are_the_answers_the_conversation_keeps(reader) -> None:
    """The panel's ``completion_result`` says again what the model answered: read from the conversation
    file, each is an assistant message's text; read from the panel alone, each is one too."""
    for session in reader.read(SAMPLES / reader.KIND):
        (folder,) = {file.parent for file in session.files}
        panel = json.loads((folder / "ui_messages.json").read_text(encoding="utf-8"))
        results = [entry["text"] for entry in panel if entry.get("say") == "completion_result"]
        answers = [m.text for m in session.messages if m.role == "assistant"]
        assert results and all(any(result in answer for answer in answers) for result in results)


def test_a_search_replace_diff_is_the_call_s_edit_and_leaves_its_input() -> None:
    (session,) = [s for s in roo_code.read(SAMPLES / "roo-code") if s.title.startswith("Why does the monthly")]
    (call,) = [c for m in session.messages for c in m.tool_calls if c.name == "apply_diff"]
    assert [(e.file, e.old, e.new) for e in call.edits] == [
        (
            "src/report.py",
            "        day += timedelta(days=30)",
            "        day = (day.replace(day=1) + timedelta(days=32)).replace(day=1)",
        )
    ]
    assert json.loads(call.input) == {"path": "src/report.py"} and "SEARCH" not in call.input


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


ENV = "<environment_details>\n# Current Working Directory (/w/app) Files\na.py\n</environment_details>"
REMINDER = "# Reminder: Instructions for Tool Use\n\nTool uses are formatted using XML-style tags."


def said(*texts: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text} for text in texts]


# A task in Cline's shape: tool results, the notices the extension writes into the conversation,
# and the person's answers and feedback that it wraps into the results and notices.
CLINE_TASK = [
    {"role": "user", "content": said("<task>\nTag the release\n</task>", ENV)},
    {"role": "assistant", "content": said("<read_file>\n<path>a.py</path>\n</read_file>")},
    {
        "role": "user",
        "content": said("[read_file for 'a.py'] Result:", "x = '<feedback>'\n<answer>\n42\n</answer>", ENV),
    },
    {"role": "assistant", "content": said("The file sets x.")},
    {
        "role": "user",
        "content": said(
            f"[ERROR] You did not use a tool in your previous response! Please retry with a tool use.\n\n{REMINDER}",
            ENV,
        ),
    },
    {
        "role": "assistant",
        "content": said("<ask_followup_question>\n<question>Which one's next?</question>\n</ask_followup_question>"),
    },
    {
        "role": "user",
        "content": said(
            "[ask_followup_question for 'Which one's next?\nA or B'] Result:", "<answer>\nB\n</answer>", ENV
        ),
    },
    {
        "role": "assistant",
        "content": said("<execute_command>\n<command>git tag -m 'v1' v1</command>\n</execute_command>"),
    },
    {
        "role": "user",
        "content": said(
            "[execute_command for 'git tag -m 'v1' v1'] Result:",
            "Command executed.",
            "The user provided the following feedback:\n<feedback>\nalso push it\n</feedback>",
            ENV,
        ),
    },
    {
        "role": "assistant",
        "content": said("<attempt_completion>\n<result>Tagged and pushed.</result>\n</attempt_completion>"),
    },
    {
        "role": "user",
        "content": said(
            "[TASK RESUMPTION] This task was interrupted 5 minutes ago. It may or may not be complete.\n\n"
            "Note: If you previously attempted a tool use that the user did not provide a result for, assume it failed.",
            "New instructions for task continuation:\n<user_message>\nnow write the notes\n</user_message>",
            ENV,
        ),
    },
    {"role": "assistant", "content": said("<new_task>\n<context>Notes</context>\n</new_task>")},
    {
        "role": "user",
        "content": said("[new_task for creating a new task] Result:", "The user declined to create a new task."),
    },
    {
        "role": "assistant",
        "content": said("<attempt_completion>\n<result>Notes written.</result>\n</attempt_completion>"),
    },
    {
        "role": "user",
        "content": said(
            "[attempt_completion] Result:",
            "The user has provided feedback on the results. Consider their input to continue the task, "
            "and then attempt completion again.\n<feedback>\nthanks, that is all\n</feedback>",
            ENV,
        ),
    },
]


def test_tool_results_and_notices_are_not_the_persons_turns(tmp_path: Path) -> None:
    task(tmp_path / "ext", "1", CLINE_TASK)
    (session,) = read(tmp_path / "ext")[0]
    users = [message.text for message in session.messages if message.role == "user"]
    assert users == ["Tag the release", "B", "also push it", "now write the notes", "thanks, that is all"]
    assert [message.text for message in session.messages if message.role == "system"] == [
        "[ERROR] You did not use a tool in your previous response! Please retry with a tool use.",
        "[TASK RESUMPTION] This task was interrupted 5 minutes ago. It may or may not be complete.",
    ]
    outputs = [message.tool_output for message in session.messages if message.role == "tool"]
    assert outputs == [
        "x = '<feedback>'\n<answer>\n42\n</answer>",  # a file's text, however it reads, is the tool's
        "Command executed.\n\nThe user provided the following feedback:",
        "The user declined to create a new task.",
        "The user has provided feedback on the results. Consider their input to continue the task, "
        "and then attempt completion again.",
    ]
    assert not any(REMINDER in message.text or "<environment_details>" in message.text for message in session.messages)
    roles = [message.role for message in session.messages]
    assert roles[:6] == ["user", "assistant", "tool", "assistant", "system", "assistant"]


def request(ts: int, tokens_in: int, tokens_out: int, cost: float) -> dict[str, object]:
    counts = {"request": "<task>…", "tokensIn": tokens_in, "tokensOut": tokens_out, "cacheWrites": 0, "cacheReads": 0}
    return {"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps({**counts, "cost": cost})}


# The panel of a task whose conversation file was never written (or was pruned), in Cline's shape.
PANEL = [
    {
        "ts": 1000,
        "type": "say",
        "say": "task",
        "text": "Run the tests",
        "images": ["data:image/png;base64,iVBORw0KGgo="],
    },
    request(1100, 900, 40, 0.01),
    {"ts": 1200, "type": "say", "say": "reasoning", "text": "Find the test command first."},
    {"ts": 1300, "type": "say", "say": "text", "text": "I'll read the package file."},
    {"ts": 1400, "type": "ask", "ask": "tool", "text": json.dumps({"tool": "readFile", "path": "package.json"})},
    {"ts": 1450, "type": "say", "say": "checkpoint_created"},
    request(1500, 1200, 30, 0.02),
    {"ts": 1600, "type": "ask", "ask": "command", "text": "npm test"},
    {"ts": 1700, "type": "ask", "ask": "command_output", "text": "PASS a.test.js"},
    {"ts": 1701, "type": "ask", "ask": "command_output", "text": "Tests: 1 passed"},
    request(1800, 1500, 20, 0.03),
    {"ts": 1900, "type": "say", "say": "completion_result", "text": "The tests pass."},
    {"ts": 1901, "type": "ask", "ask": "completion_result", "text": ""},
    {"ts": 2000, "type": "say", "say": "user_feedback", "text": "and the lint?"},
    request(2100, 1600, 10, 0.04),
    {"ts": 2200, "type": "ask", "ask": "followup", "text": json.dumps({"question": "Which linter?", "options": ["a"]})},
    {"ts": 2300, "type": "say", "say": "error", "text": "Cline tried to use read_file without a path."},
    {"ts": 2400, "type": "say", "say": "partial_thing", "text": "?", "partial": True},
]


def test_a_task_with_only_its_panel_is_read_from_the_panel(tmp_path: Path) -> None:
    folder = tmp_path / "ext" / "tasks" / "1763900000000"
    folder.mkdir(parents=True)
    panel = [{**entry, "ts": 1763900000000 + int(entry["ts"])} for entry in PANEL]  # type: ignore[call-overload]
    (folder / cline_tasks.UI).write_text(json.dumps(panel), encoding="utf-8")
    (session,), problems = read(tmp_path / "ext")
    assert problems == [] and session.problems == []
    assert [(message.role, message.text) for message in session.messages] == [
        ("user", "Run the tests\n\n[image]"),
        ("assistant", "I'll read the package file."),
        ("assistant", ""),
        ("tool", ""),
        ("assistant", "The tests pass."),
        ("user", "and the lint?"),
        ("assistant", "Which linter?"),
        ("system", "Cline tried to use read_file without a path."),
    ]
    first, command, output = session.messages[1:4]
    assert first.thinking == "Find the test command first." and session.messages[0].attachments[0].type == "image"
    assert [(call.name, call.files) for call in first.tool_calls] == [("readFile", ["package.json"])]
    assert [call.commands for call in command.tool_calls] == [["npm test"]]
    assert output.tool_output == "PASS a.test.js\nTests: 1 passed"
    usages = [message.usage for message in session.messages if message.role == "assistant"]
    assert usages == [
        Usage(900, 40, cost=0.01),
        Usage(1200, 30, cost=0.02),
        Usage(1500, 20, cost=0.03),
        Usage(1600, 10, cost=0.04),
    ]
    assert session.title == "Run the tests [image]" and session.models == []
    assert (session.started, session.last) == ("2025-11-23T12:13:21Z", "2025-11-23T12:13:22Z")


def test_the_task_lists_tokens_count_where_no_request_says_its_own(tmp_path: Path) -> None:
    history = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    task(tmp_path / "ext", "1", history, ui_messages=[{"ts": 1, "type": "say", "say": "api_req_started", "text": "{}"}])
    (tmp_path / "ext" / "state").mkdir()
    listed = [{"id": "1", "tokensIn": 10, "tokensOut": 5, "cacheWrites": 2, "cacheReads": 3, "totalCost": 0.5}]
    (tmp_path / "ext" / "state" / "taskHistory.json").write_text(json.dumps(listed), encoding="utf-8")
    (session,) = read(tmp_path / "ext")[0]
    assert session.messages[-1].usage == Usage(10, 5, 2, 3, 0.5)
