"""GitHub Copilot in Visual Studio: its traces read into conversations, what is skipped and why, and hostile input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from archivist.agents import Session, copilot_vs

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "copilot-vs" / "traces"
NAME = "_VSGitHubCopilot_traces.jsonl"


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(copilot_vs.read(path, problems)), problems


def span(conversation: str, name: str, start: int, attributes: dict[str, str] | None = None) -> dict[str, Any]:
    given = [{"key": "gen_ai.conversation.id", "value": {"stringValue": conversation}}]
    given += [{"key": key, "value": {"stringValue": value}} for key, value in (attributes or {}).items()]
    return {
        "traceId": "t1",
        "spanId": f"s{start}",
        "name": name,
        "startTimeUnixNano": str(start * 10**9),
        "endTimeUnixNano": str((start + 1) * 10**9),
        "attributes": given,
    }


def line(*spans: dict[str, Any]) -> str:
    return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}]})


def chat(conversation: str, start: int, prompt: str, answer: str, turn: str = "r1") -> dict[str, Any]:
    return span(
        conversation,
        "chat gpt-5",
        start,
        {
            "gen_ai.operation.name": "chat",
            "copilot_chat.root_request_id": turn,
            "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": prompt}]}]),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
            ),
        },
    )


def test_the_sample_is_read_with_its_calls_edit_results_models_and_usage() -> None:
    (dim, ask), problems = read(SAMPLE)
    assert problems == [] and dim.problems == [] and ask.problems == []
    assert (dim.key, dim.agent, dim.project) == ("7d3c9a51-2e8f-4b06-9c1d-5a4e8f2b7c60", "copilot-vs", None)
    assert dim.title == "The Dim button halves the brightness; make it lower it by ten percent instead."
    assert (dim.started, dim.last, dim.models) == ("2025-11-18T09:15:01Z", "2025-11-18T09:15:41Z", ["gpt-5-2025-08-07"])
    assert [m.role for m in dim.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert [file.name for file in dim.files] == sorted(file.name for file in SAMPLE.iterdir())
    calls = [(c.name, c.files, c.input) for m in dim.messages for c in m.tool_calls]
    assert calls == [
        ("get_file", ["src/Lantern/Levels.cs"], '{"filename":"src/Lantern/Levels.cs"}'),
        ("apply_patch", ["src/Lantern/Levels.cs"], '{"explanation":"Dim by a step of ten percent"}'),
        ("run_build", [], '{"configuration":"Debug"}'),
    ]
    (edit,) = dim.messages[3].tool_calls[0].edits
    assert (
        edit.file == "src/Lantern/Levels.cs"
        and edit.patch is not None
        and "+    public const double DimStep" in edit.patch
    )
    assert dim.messages[2].tool_output.startswith("namespace Lantern;")  # the JSON result's Value
    assert dim.messages[6].tool_output == "Build succeeded with 0 warning(s)."
    usage = dim.messages[1].usage
    assert usage is not None and (usage.input, usage.output, usage.cost) == (18422, 96, None)
    last = dim.messages[-1].usage
    assert last is not None and (last.input, last.output) == (20188, 143)  # counts given as intValue
    assert [m.role for m in ask.messages] == ["user", "assistant"] and ask.models == ["claude-sonnet-4.5"]
    assert len(ask.files) == 1


def test_one_trace_file_gives_its_conversations_gathered_from_the_files_beside_it() -> None:
    later = sorted(SAMPLE.iterdir())[1]
    assert copilot_vs.check(later) is None
    sessions, problems = read(later)
    assert problems == []
    assert [s.key for s in sessions] == ["7d3c9a51-2e8f-4b06-9c1d-5a4e8f2b7c60", "e41b6f08-93ac-4d27-b5e2-0f9a7c3d1e84"]
    assert len(sessions[0].messages) == 8  # its first turn is in the earlier file


def test_a_turns_repeated_prompt_is_one_user_message_and_a_span_written_twice_is_read_once(tmp_path: Path) -> None:
    first = chat("c1", 100, "Fix the build", "Looking.")
    copy = chat("c1", 100, "Fix the build", "Looking at the build now.")  # the same span, flushed fuller
    again = chat("c1", 110, "Fix the build", "Done.")
    (tmp_path / f"a{NAME}").write_text(line(first) + "\n")
    (tmp_path / f"b{NAME}").write_text(line(copy, again) + "\n")
    (session,), problems = read(tmp_path)
    assert problems == []
    assert [(m.role, m.text) for m in session.messages] == [
        ("user", "Fix the build"),
        ("assistant", "Looking at the build now."),
        ("assistant", "Done."),
    ]


def test_bad_lines_are_skipped_and_told_and_spans_without_a_conversation_are_passed_over(tmp_path: Path) -> None:
    lonely = span("", "chat gpt-5", 5)
    (tmp_path / f"a{NAME}").write_text(
        "\n".join(["not json", json.dumps({"other": 1}), line(lonely), line(chat("C1", 100, "hi", "hello")), "[]"])
        + "\n"
    )
    (session,), problems = read(tmp_path)
    assert problems == []
    assert session.problems == ["3 lines skipped: 1 not JSON, 2 no OpenTelemetry export of spans"]
    assert [m.text for m in session.messages] == ["hi", "hello"]


def test_a_conversation_of_agent_spans_only_is_told(tmp_path: Path) -> None:
    (tmp_path / f"a{NAME}").write_text(line(span("c9", "invoke_agent GitHub Copilot", 7)) + "\n")
    sessions, problems = read(tmp_path)
    assert sessions == [] and problems == ["conversation c9: no message (only agent spans)"]


def test_what_is_no_source_is_told(tmp_path: Path) -> None:
    assert "holds no *_VSGitHubCopilot_traces.jsonl file" in (copilot_vs.check(tmp_path) or "")
    other = tmp_path / "notes.jsonl"
    other.write_text('{"a": 1}\n')
    assert "is not a Visual Studio Copilot trace file" in (copilot_vs.check(other) or "")
    assert "does not exist" in (copilot_vs.check(tmp_path / "missing") or "")
    shutil.copytree(SAMPLE, tmp_path / "VSGitHubCopilotLogs" / "traces")
    assert copilot_vs.check(tmp_path / "VSGitHubCopilotLogs") is None
    assert len(read(tmp_path / "VSGitHubCopilotLogs")[0]) == 2


def test_hostile_values_never_raise(tmp_path: Path) -> None:
    odd = [
        {"resourceSpans": [1, {"scopeSpans": "x"}, {"scopeSpans": [{"spans": [None, {"attributes": "x"}]}]}]},
        {
            "resourceSpans": [
                {
                    "scopeSpans": [
                        {
                            "spans": [
                                {
                                    "attributes": [{"key": "gen_ai.conversation.id", "value": {"stringValue": "c"}}],
                                    "startTimeUnixNano": "9" * 40,
                                    "name": 3,
                                }
                            ]
                        }
                    ]
                }
            ]
        },
    ]
    output = '[{"role":"assistant","parts":[{"type":"tool_call","name":"t","arguments":"[1"}]}]'
    given = {"gen_ai.input.messages": "[{", "gen_ai.output.messages": output, "gen_ai.usage.input_tokens": "-3"}
    weird = span("c", "chat x", 1, given)
    (tmp_path / f"a{NAME}").write_text("\n".join([*map(json.dumps, odd), line(weird)]) + "\n")
    sessions, _ = read(tmp_path)
    assert [c.input for s in sessions for m in s.messages for c in m.tool_calls] == ["[1"]
