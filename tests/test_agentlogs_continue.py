"""Continue's sessions: what is read, what is skipped, and hostile input."""

from __future__ import annotations

import json
from pathlib import Path

from archivist.agents import Usage, continue_dev


def write(folder: Path, sid: str, session: object, listed: list | None = None) -> Path:
    sessions = folder / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    text = session if isinstance(session, str) else json.dumps(session)
    (sessions / f"{sid}.json").write_text(text, encoding="utf-8")
    if listed is not None:
        (sessions / "sessions.json").write_text(json.dumps(listed), encoding="utf-8")
    return sessions / f"{sid}.json"


def read(path: Path) -> tuple[list, list[str]]:
    problems: list[str] = []
    return list(continue_dev.read(path, problems)), problems


def item(role: str, content: object, **more: object) -> dict:
    return {"message": {"role": role, "content": content}, "contextItems": [], **more}


def test_a_command_line_session_keeps_its_tool_output_in_the_call_states(tmp_path: Path) -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "Bash", "arguments": json.dumps({"command": "ls -la"})},
    }
    history = [
        item("user", "list the files"),
        item(
            "assistant",
            "Listing.",
            toolCallStates=[
                {"toolCallId": "c1", "status": "done", "output": [{"name": "Tool Result", "content": "a.txt"}]}
            ],
        ),
        item("assistant", "There is one file, a.txt."),
    ]
    history[1]["message"]["toolCalls"] = [call]
    write(
        tmp_path,
        "s1",
        {"sessionId": "s1", "title": "New Session", "workspaceDirectory": "/srv/app", "history": history},
    )
    (session,), problems = read(tmp_path)
    assert problems == [] and session.title == "list the files"  # the default title gives way to the request
    assert session.project == "/srv/app" and session.started is None  # no time anywhere: none made up
    assert [(m.role, m.tool_output) for m in session.messages] == [
        ("user", ""),
        ("assistant", ""),
        ("tool", "a.txt"),
        ("assistant", ""),
    ]
    assert session.messages[1].tool_calls[0].commands == ["ls -la"]


SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "continue"


def test_the_sample_s_context_item_is_an_attachment_of_its_request_and_its_text_the_request_s_output() -> None:
    (session,), problems = read(SAMPLE)
    asked = session.messages[0]
    path = "/home/ana/projects/books/src/export/csv.py"
    assert problems == [] and asked.role == "user" and asked.text.endswith(f"keep the header row.\n\n[file: {path}]")
    assert [(a.type, a.name, a.size) for a in asked.attachments] == [("file", path, 43)]
    assert asked.tool_output == f"{path}:\n```python\ndef write_rows(rows):\n    ...\n```"
    assert session.title == "ISO dates in the CSV export"


def test_context_items_of_every_shape_are_named_as_they_can_be_and_a_wrong_value_skipped(tmp_path: Path) -> None:
    items = [
        {"name": "docs", "description": "Python csv module", "content": "csv.writer(f)", "uri": {"value": 5}},
        {"name": "terminal", "content": ["not", "text"]},
        {"uri": {"type": "url", "value": "https://docs.python.org/3/library/csv.html"}, "content": "  "},
        7,
        {},
    ]
    history = [
        item("user", "explain", contextItems=items),
        item("tool", "ran", contextItems=[{"name": "selection", "content": "x = 1"}]),
        item("thinking", "", contextItems="not a list"),
        item("assistant", "Done.", contextItems={"name": "odd"}),
    ]
    write(tmp_path, "s1", {"sessionId": "s1", "history": history})
    (session,), problems = read(tmp_path)
    asked, tool, answer = session.messages
    assert problems == [] and session.problems == []
    assert [(a.type, a.name, a.size) for a in asked.attachments] == [
        ("file", "Python csv module", 13),
        ("file", "terminal", None),
        ("file", "https://docs.python.org/3/library/csv.html", 2),
    ]  # (an item that names nothing and holds no text is none)
    assert asked.text == (
        "explain\n\n[file: Python csv module] [file: terminal] [file: https://docs.python.org/3/library/csv.html]"
    )
    assert asked.tool_output == "Python csv module:\ncsv.writer(f)"
    assert (tool.tool_output, tool.text) == ("ran\n\nselection:\nx = 1", "[file: selection]")
    assert (answer.text, answer.attachments, answer.tool_output) == ("Done.", [], "")


def test_old_and_damaged_files_are_told_and_the_others_read(tmp_path: Path) -> None:
    write(tmp_path, "a-python", {"session_state": {"history": []}, "title": "old", "session_id": "x"})
    write(tmp_path, "b-broken", "{not json")
    write(tmp_path, "c-deep", "[" * 5000 + "]" * 5000)
    write(tmp_path, "d-empty", {"history": [1, "x", {"message": {"role": "robot"}}]})
    deep_arguments = {"name": "read_file", "arguments": "[" * 5000 + "]" * 5000}
    assistant = item("assistant", "ok")
    assistant["message"]["toolCalls"] = [{"id": "1", "type": "function", "function": deep_arguments}]
    write(
        tmp_path,
        "e-good",
        {
            "title": "Screenshot",
            "workspaceDirectory": "file:///c%3A/Users/ana/app",
            "history": [
                item(
                    "user",
                    [
                        {"type": "text", "text": "what is this?"},
                        {"type": "imageUrl", "imageUrl": {"url": "data:image/png;base64," + "A" * 5000}},
                    ],
                ),
                assistant,
            ],
        },
        listed=[{"sessionId": "e-good", "dateCreated": "1764100000000"}, {"bad": 1}, "x"],
    )
    found, problems = read(tmp_path)
    (session,) = found
    assert session.key == "e-good" and session.project == "c:/Users/ana/app"
    assert session.messages[0].text == "what is this?\n\n[image]" and session.started == "2025-11-25T19:46:40Z"
    assert session.messages[1].tool_calls[0].name == "read_file" and session.messages[1].tool_calls[0].files == []
    assert problems[0] == "a-python.json: a session of Continue's first (Python) server, not read"
    assert any(problem.startswith("b-broken.json: ") for problem in problems)
    assert any(problem.startswith("c-deep.json: ") for problem in problems)
    assert "d-empty.json: no message to read" in problems


def test_a_source_that_is_not_continue_s_says_what_was_expected(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "other.json").write_text("{}")
    assert "holds no Continue session" in (continue_dev.check(tmp_path / "empty") or "")
    assert "is not a Continue session" in (continue_dev.check(tmp_path / "other.json") or "")
    assert "does not exist" in (continue_dev.check(tmp_path / "nowhere") or "")


def answer_with(text: str, prompt: int, completion: int, cached: int = 0, written: int = 0) -> dict:
    answer = item("assistant", text)
    details = {"cachedTokens": cached, "cacheWriteTokens": written}
    answer["message"]["usage"] = {
        "promptTokens": prompt,
        "completionTokens": completion,
        "promptTokensDetails": details,
    }
    return answer


def test_the_command_line_s_session_usage_beyond_its_answers_and_its_cost_go_on_the_last_answer(tmp_path: Path) -> None:
    history = [item("user", "add a retry"), answer_with("Added.", 5000, 120, 4000, 300), item("assistant", "Tested.")]
    totals = {  # both answers, and a compaction no message keeps
        "promptTokens": 9000,
        "completionTokens": 300,
        "promptTokensDetails": {"cachedTokens": 7000, "cacheWriteTokens": 500},
        "totalCost": 0.0421,
    }
    write(
        tmp_path,
        "s1",
        {"sessionId": "s1", "title": "Retry", "workspaceDirectory": "/srv/app", "history": history, "usage": totals},
    )
    (session,), problems = read(tmp_path)
    assert problems == [] and [m.usage for m in session.messages] == [
        None,
        Usage(input=1000, output=120, cache_write=300, cache_read=4000),
        Usage(input=1000, output=180, cache_write=200, cache_read=3000, cost=0.0421),
    ]
    total = sum((m.usage for m in session.messages if m.usage), Usage())
    assert (total.input + total.cache_read, total.output, total.cache_write) == (9000, 300, 500)


def test_a_session_usage_its_answers_already_hold_adds_only_its_cost_and_a_bad_one_nothing(tmp_path: Path) -> None:
    held = {
        "promptTokens": 5000,
        "completionTokens": 120,
        "promptTokensDetails": {"cachedTokens": 4000},
        "totalCost": 0.01,
    }
    history = [item("user", "go"), answer_with("Done.", 5000, 120, 4000)]
    write(tmp_path, "s1", {"sessionId": "s1", "title": "t", "history": history, "usage": held})
    bad = {"promptTokens": "many", "completionTokens": -4, "totalCost": float("inf")}
    write(
        tmp_path,
        "s2",
        {"sessionId": "s2", "title": "t", "history": [item("user", "go"), item("assistant", "ok")], "usage": bad},
    )
    write(
        tmp_path,
        "s3",
        {"sessionId": "s3", "title": "t", "history": [item("user", "go"), item("assistant", "ok")], "usage": [1]},
    )
    (first, second, third), problems = read(tmp_path)
    assert first.messages[-1].usage == Usage(input=1000, output=120, cache_read=4000, cost=0.01)
    assert second.messages[-1].usage is None and third.messages[-1].usage is None and problems == []
