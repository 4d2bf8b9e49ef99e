"""Amp's threads: what is read, what is skipped and why, and hostile input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from archivist.agents import Session, amp

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "amp"


def write(folder: Path, name: str, thread: Any) -> Path:
    threads = folder / "threads"
    threads.mkdir(parents=True, exist_ok=True)
    file = threads / name
    file.write_bytes(
        thread if isinstance(thread, bytes) else (thread if isinstance(thread, str) else json.dumps(thread)).encode()
    )
    return file


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(amp.read(path, problems)), problems


def thread(*messages: Any, **more: Any) -> dict[str, Any]:
    return {"v": 3, "id": "T-1", "created": 1761820800000, "messages": list(messages), **more}


def test_the_sample_is_read_with_its_tools_thinking_usage_and_image() -> None:
    (session,), problems = read(SAMPLE)
    assert problems == [] and session.problems == []
    assert (session.key, session.agent) == ("T-0198c2d4-5e6f-7a8b-9c0d-1e2f3a4b5c6d", "amp")
    assert session.title == "High water an hour late after the clock change"
    assert session.project == "/Users/ben/code/tide-tables" and session.models == ["claude-sonnet-4-5-20250929"]
    assert session.branch == "main"  # its tree's repository ref, refs/heads/main
    assert (session.started, session.last) == ("2025-10-30T10:40:01Z", "2025-10-30T10:40:31Z")
    roles = [m.role for m in session.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant", "system"]
    assert session.messages[-1].text == "Amp's summary of the thread so far:\n\nFixed a DST bug in HighWater."
    first = session.messages[0]
    image = "/Users/ben/code/tide-tables/docs/late-tide.png"  # its sourcePath: the file it was attached from
    assert first.text.endswith(f"predict/harmonics.go.\n\n[image: {image}]") and "iVBOR" not in first.text
    assert [(a.type, a.name, a.size) for a in first.attachments] == [("image/png", image, 70)]
    assert session.messages[1].thinking.startswith("An hour off") and "An hour" not in session.messages[1].text
    calls = [(c.name, c.files, c.commands) for m in session.messages for c in m.tool_calls]
    assert calls == [
        ("Read", ["/Users/ben/code/tide-tables/predict/harmonics.go"], []),
        ("Bash", [], ["go test ./predict/..."]),
        ("edit_file", ["/Users/ben/code/tide-tables/predict/harmonics.go"], []),
    ]
    assert session.messages[2].tool_output.startswith("1: func HighWater") and session.messages[2].text == ""
    assert session.messages[4].tool_output.startswith("--- FAIL") and session.messages[6].tool_output.startswith("@@")
    spent = [m.usage for m in session.messages if m.usage]
    total = spent[0] + spent[1] + spent[2] + spent[3]
    assert (total.input, total.output, total.cache_write, total.cache_read) == (18, 417, 5060, 60880)
    assert amp.check(SAMPLE) is None and amp.check(SAMPLE / "threads") is None


def test_times_come_from_the_messages_else_the_thread_and_the_title_from_the_first_request(tmp_path: Path) -> None:
    write(
        tmp_path,
        "T-1.json",
        thread(
            {"role": "user", "content": "  fix the   build  ", "meta": {}},
            {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "state": {"type": "complete"}},
            env={"initial": {"trees": [{"displayName": "build-tools"}]}},
        ),
    )
    (session,), _ = read(tmp_path)
    assert (session.title, session.project, session.branch) == ("fix the build", "build-tools", None)
    assert session.started == session.last == "2025-10-30T10:40:00Z"  # the thread's created: no message has a time
    assert all(m.timestamp is None and m.usage is None for m in session.messages)


def test_the_branch_is_the_first_tree_s_ref_and_a_wrong_value_none(tmp_path: Path) -> None:
    refs = ["refs/heads/fix/dst", "a1b2c3d", "refs/heads/", 7, None]
    for n, ref in enumerate(refs):
        tree = {"uri": "file:///w", "repository": {"type": "git", "ref": ref}}
        write(
            tmp_path,
            f"T-{n}.json",
            thread({"role": "user", "content": "go"}, id=f"T-{n}", env={"initial": {"trees": [tree]}}),
        )
    write(tmp_path, "T-8.json", thread({"role": "user", "content": "go"}, id="T-8", env={"initial": {"trees": [5]}}))
    write(tmp_path, "T-9.json", thread({"role": "user", "content": "go"}, id="T-9", env={"initial": {"trees": "x"}}))
    found, problems = read(tmp_path)
    assert problems == [] and [s.branch for s in found] == ["fix/dst", "a1b2c3d", None, None, None, None, None]


def test_a_tool_that_failed_or_was_cancelled_says_so(tmp_path: Path) -> None:
    write(
        tmp_path,
        "T-1.json",
        thread(
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "a", "name": "Bash", "input": {"command": "make"}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "toolUseID": "a",
                        "run": {"status": "error", "error": {"message": "exit 2"}},
                    },
                    {"type": "tool_result", "toolUseID": "b", "run": {"status": "cancelled"}},
                    {
                        "type": "tool_result",
                        "toolUseID": "c",
                        "run": {"status": "in-progress", "progress": ["step 1", "step 2"]},
                    },
                ],
            },
        ),
    )
    (session,), _ = read(tmp_path)
    assert [m.tool_output for m in session.messages if m.role == "tool"] == ["exit 2", "[cancelled]", "step 1\nstep 2"]
    assert session.messages[1].tool_calls[0].commands == ["make"]


def test_amp_s_notes_are_system_messages_of_their_summaries_and_texts(tmp_path: Path) -> None:
    notes = [
        {"role": "user", "content": "tidy the parser"},
        {"role": "info", "content": [{"type": "summary", "summary": {"type": "message", "summary": " Split it. "}}]},
        {"role": "info", "content": "Handed off to T-2.", "meta": {"sentAt": 1761820860000}},
        {"role": "info", "content": [{"type": "summary", "summary": 7}, {"type": "summary"}, 4, {"type": "text"}]},
    ]
    write(tmp_path, "T-1.json", thread(*notes))
    (session,), _ = read(tmp_path)
    assert [(m.role, m.text, m.timestamp) for m in session.messages] == [
        ("user", "tidy the parser", None),
        ("system", "Amp's summary of the thread so far:\n\nSplit it.", None),
        ("system", "Handed off to T-2.", "2025-10-30T10:41:00Z"),
    ]  # a note of no text is no message


def test_hostile_values_are_skipped_and_counted_never_raised(tmp_path: Path) -> None:
    write(tmp_path, "T-a-broken.json", '{"id": "T-x", "messages": [')
    write(tmp_path, "T-b-deep.json", "[" * 5000 + "]" * 5000)
    write(tmp_path, "T-c-notes.json", {"id": "T-c", "messages": [{"role": "info", "content": []}]})
    write(tmp_path, "T-d-list.json", [1, 2])
    write(
        tmp_path,
        "T-e-good.json",
        b'{"id": "T-e", "title": ["x"], "created": "soon", "env": {"initial": {"trees": "x"}}, "messages": ['
        b'7, {"role": "robot", "content": "?"}, {"role": "user", "content": 5},'
        b'{"role": "user", "content": [3, {"type": "text", "text": "caf\xff"}, {"type": "image", "source": "x"}]},'
        b'{"role": "assistant", "content": [{"type": "tool_use", "name": 4, "input": {"path": [1, " a.py "]}}],'
        b' "usage": {"model": 9, "inputTokens": "12", "outputTokens": 1e400, "cacheReadInputTokens": -3}}]}',
    )
    found, problems = read(tmp_path)
    (session,) = found
    assert session.key == "T-e" and session.project is None and session.started is None
    assert session.problems == ["3 messages of no known shape skipped"]
    assert session.messages[0].text == "caf\ufffd\n\n[image]" and session.messages[0].attachments[0].size is None
    call = session.messages[1].tool_calls[0]
    assert (call.name, call.files) == ("tool", ["a.py"]) and session.messages[1].usage is None and session.models == []
    assert len(problems) == 4
    assert any(p.startswith("T-a-broken.json: ") for p in problems) and any(
        p.startswith("T-b-deep.json: ") for p in problems
    )
    assert "T-c-notes.json: no message to read" in problems
    assert "T-d-list.json: not an Amp thread (no id and messages)" in problems


def test_newer_amp_s_logs_are_no_source_and_check_says_why(tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "threads"
    logs.mkdir(parents=True)
    (logs / "T-9.log").write_text("2026-06-01 thread opened\n")
    reason = amp.check(logs) or ""
    assert "holds only .log files" in reason and "keep threads on Amp's servers" in reason
    assert read(logs) == ([], [])
    (tmp_path / "empty").mkdir()
    assert "holds no Amp thread" in (amp.check(tmp_path / "empty") or "")
    assert "is not an Amp thread" in (amp.check(write(tmp_path, "other.json", {"a": 1})) or "")
    assert "does not exist" in (amp.check(tmp_path / "nowhere") or "")


def test_a_link_that_leads_out_is_never_opened_and_nothing_is_written(tmp_path: Path) -> None:
    secret = tmp_path / "outside.json"
    secret.write_text(json.dumps(thread({"role": "user", "content": "hunter2"})))
    source = tmp_path / "amp"
    write(source, "T-1.json", thread({"role": "user", "content": "hello"}))
    (source / "threads" / "T-2.json").symlink_to(secret)
    before = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in source.rglob("*") if not p.is_symlink()}
    found, problems = read(source)
    assert [m.text for s in found for m in s.messages] == ["hello"]
    assert len(problems) == 1 and "leads out of the source" in problems[0]
    after = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in source.rglob("*") if not p.is_symlink()}
    assert before == after and sorted(p.name for p in (source / "threads").iterdir()) == ["T-1.json", "T-2.json"]


def test_one_thread_id_in_two_files_gets_two_keys(tmp_path: Path) -> None:
    write(tmp_path, "T-1.json", thread({"role": "user", "content": "hello"}))
    write(tmp_path, "T-1 copy.json", thread({"role": "user", "content": "other words"}))
    sessions, _ = read(tmp_path)
    assert sorted((s.key, s.title) for s in sessions) == [("T-1", "other words"), ("T-1@threads/T-1.json", "hello")]
    (alone,), _ = read(tmp_path / "threads" / "T-1.json")
    assert alone.key == "T-1"


def test_an_image_a_tool_returns_is_an_attachment_and_its_data_never_kept(tmp_path: Path) -> None:
    data = "iVBORw0KGgo" + "A" * 2000
    image = {"type": "image", "source": {"type": "base64", "mediaType": "image/png", "data": data}}
    write(
        tmp_path,
        "T-1.json",
        thread(
            {"role": "user", "content": "look at the screenshot"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "a"}}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "toolUseID": "t1", "run": {"status": "done", "result": [image]}},
                    {"type": "tool_result", "toolUseID": "t2", "run": {"status": "done", "result": {"shot": image}}},
                ],
            },
        ),
    )
    (session,), _ = read(tmp_path)
    first, second = session.messages[2:]
    assert (first.tool_output, json.loads(second.tool_output)) == ("[image]", {"shot": "[image]"})
    assert [(a.type, a.size) for m in (first, second) for a in m.attachments] == [("image/png", 1508)] * 2


def test_a_tool_result_written_twice_is_one_tool_message_with_its_later_state(tmp_path: Path) -> None:
    """Amp writes a run's result again, under the same toolUseID, in a later user message (a run
    that waited, then ended) or twice in one: one tool use is one tool message, never two."""

    def result(use: str, run: dict[str, Any]) -> dict[str, Any]:
        return {"type": "tool_result", "toolUseID": use, "run": run}

    def calls(*uses: str) -> dict[str, Any]:
        blocks = [{"type": "tool_use", "id": use, "name": "Bash", "input": {"cmd": f"echo {use}"}} for use in uses]
        return {"role": "assistant", "content": blocks}

    write(
        tmp_path,
        "T-1.json",
        thread(
            {"role": "user", "content": "run both"},
            calls("a", "b"),
            {
                "role": "user",
                "content": [
                    result("a", {"status": "done", "result": {"output": "a", "exitCode": 0}}),
                    result("b", {"status": "in-progress", "progress": {"output": "b so far"}}),
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "b is still running."}]},
            {
                "role": "user",
                "content": [
                    result("b", {"status": "done", "result": {"output": "b done", "exitCode": 0}}),
                    result("a", {"status": "done"}),  # told again with nothing in it: the first stands
                    {"type": "text", "text": "and now?"},
                ],
            },
            calls("c"),
            {
                "role": "user",
                "content": [
                    result("c", {"status": "done", "result": {"output": "c", "exitCode": 0}}),
                    result("c", {"status": "done", "result": {"output": "c", "exitCode": 0}}),
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "run": {"status": "done", "result": "no id"}}]},
        ),
    )
    (session,), problems = read(tmp_path)
    assert problems == [] and session.problems == []
    said = [(m.role, m.text or m.tool_output) for m in session.messages]
    assert said == [
        ("user", "run both"),
        ("assistant", ""),
        ("tool", "a"),
        ("tool", "b done"),  # where it was first given, in its later state
        ("assistant", "b is still running."),
        ("user", "and now?"),
        ("assistant", ""),
        ("tool", "c"),
        ("tool", "no id"),  # a result naming no tool use is kept as it is
    ]
    calls_made = sum(len(m.tool_calls) for m in session.messages)
    assert calls_made == 3 and sum(m.role == "tool" for m in session.messages) == 4
