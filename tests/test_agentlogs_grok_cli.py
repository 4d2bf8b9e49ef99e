"""Grok CLI's sessions: what is read, what is skipped and why, and hostile input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from archivist.agents import Session, grok_cli, registry

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "grok-cli"
INVOICES = SAMPLE / "sessions" / "%2Fhome%2Fdev%2Fsrc%2Finvoice-api" / "019a9b3e-5c21-7d40-8e11-3f6a2b7c9d01"


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(grok_cli.read(path, problems)), problems


def lines(*rows: Any) -> str:
    return "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows)


def session_folder(home: Path, cwd: str = "/w/app", sid: str = "s-1", **files: str) -> Path:
    folder = home / "sessions" / cwd.replace("/", "%2F") / sid
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name.replace("__", ".")).write_text(text)
    return folder


def test_the_sample_is_read_with_its_calls_edit_thinking_times_and_usage() -> None:
    (dotfiles, invoices), problems = read(SAMPLE)
    assert problems == [] and dotfiles.problems == [] and invoices.problems == []
    assert (invoices.key, invoices.agent, invoices.title) == (
        "019a9b3e-5c21-7d40-8e11-3f6a2b7c9d01",
        "grok-cli",
        "Fix EUR currency symbol in PDF export",
    )
    assert invoices.project == "/home/dev/src/invoice-api" and invoices.branch == "fix/eur-symbol"
    assert invoices.models == ["grok-code-fast-1"]
    assert (invoices.started, invoices.last) == ("2025-11-18T09:12:01Z", "2025-11-18T09:12:33Z")
    roles = [m.role for m in invoices.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "user", "assistant", "tool", "assistant"]
    first = invoices.messages[0]
    assert first.text.startswith("The PDF export shows a dollar sign") and "<user_query>" not in first.text
    assert first.timestamp == "2025-11-18T09:12:04Z"
    assert invoices.messages[1].thinking.startswith("The symbol is probably looked up")
    assert invoices.messages[5].text == "also run the pdf tests"  # an interjection is the user's
    calls = [(c.name, c.files, c.commands) for m in invoices.messages for c in m.tool_calls]
    assert calls == [
        ("read_file", ["invoice_api/pdf/currency.py"], []),
        ("search_replace", ["invoice_api/pdf/currency.py"], []),
        ("run_terminal_command", [], ["pytest tests/pdf -q"]),
    ]
    (edit,) = invoices.messages[3].tool_calls[0].edits
    assert (edit.old, edit.new) == ('    "EUR": "$",\n', '    "EUR": "€",\n')
    assert invoices.messages[3].tool_calls[0].input == '{"file_path":"invoice_api/pdf/currency.py"}'
    assert [m.timestamp for m in invoices.messages[2:5]] == [
        "2025-11-18T09:12:10Z",
        "2025-11-18T09:12:15Z",
        "2025-11-18T09:12:16Z",
    ]
    (spent,) = [m.usage for m in invoices.messages if m.usage]
    assert invoices.messages[-1].usage is spent
    assert (spent.input, spent.output, spent.cache_read) == (41230 - 35840, 612, 35840)
    assert spent.cost is not None and round(spent.cost, 6) == 0.02315


def test_the_older_chat_format_reads_calls_as_functions_and_thinking_inline() -> None:
    (dotfiles, _), _ = read(SAMPLE)
    assert dotfiles.title == "Which shell the install script assumes" and dotfiles.project == "/home/dev/src/dotfiles"
    assert [m.role for m in dotfiles.messages] == ["user", "assistant", "tool", "assistant"]
    assert dotfiles.messages[1].tool_calls[0].name == "read_file"
    assert dotfiles.messages[1].tool_calls[0].files == ["install.sh"]
    assert dotfiles.messages[1].thinking == "The shebang line of install.sh will say."
    assert dotfiles.messages[2].tool_output.startswith("#!/usr/bin/env zsh")
    assert [m.timestamp for m in dotfiles.messages] == [
        "2025-10-27T18:40:14Z",
        "2025-10-27T18:40:19Z",
        "2025-10-27T18:40:19Z",
        "2025-10-27T18:40:24Z",
    ]
    usage = dotfiles.messages[-1].usage
    assert usage is not None and (usage.input, usage.output, usage.cache_read, usage.cost) == (416, 88, 8704, None)


def test_every_level_of_the_layout_is_a_source() -> None:
    sessions = SAMPLE / "sessions"
    for source in (SAMPLE, sessions, INVOICES.parent, INVOICES, INVOICES / "chat_history.jsonl"):
        assert grok_cli.check(source) is None
        found, problems = read(source)
        assert problems == [] and "019a9b3e-5c21-7d40-8e11-3f6a2b7c9d01" in [s.key for s in found]


def test_a_folder_of_something_else_is_refused_with_what_was_expected(tmp_path: Path) -> None:
    assert "holds no Grok CLI sessions folder" in str(grok_cli.check(tmp_path))
    (tmp_path / "sessions").mkdir()
    assert "holds no Grok CLI session yet" in str(grok_cli.check(tmp_path))
    other = tmp_path / "chat_history.jsonl"
    other.write_text("[1, 2]\n")
    assert "is not a Grok CLI chat history" in str(grok_cli.check(other))


def test_a_session_without_summary_or_updates_takes_its_project_from_its_folder(tmp_path: Path) -> None:
    session_folder(
        tmp_path,
        chat_history__jsonl=lines(
            {"type": "user", "content": "hello"},
            {"type": "assistant", "content": "hi", "model_id": "grok-4"},
        ),
    )
    (session,), problems = read(tmp_path)
    assert problems == [] and session.key == "s-1" and session.project == "/w/app"
    assert session.title == "hello" and session.models == ["grok-4"]
    assert session.started is None and all(m.timestamp is None for m in session.messages)


def test_bad_rows_are_skipped_and_told_and_the_rest_is_kept(tmp_path: Path) -> None:
    session_folder(
        tmp_path,
        chat_history__jsonl=lines(
            "not json",
            [1, 2],
            {"type": "weather", "content": "sunny"},
            {"type": "user", "content": [{"type": "text", "text": "first"}]},
            {"type": "assistant", "content": "", "tool_calls": [{"id": "c", "arguments": "{}"}, "x"]},
            {"type": "assistant", "content": "done", "tool_calls": [{"id": "d", "name": "run", "arguments": "oops"}]},
            {"type": "tool_result", "tool_call_id": "d", "content": {"ok": True}},
            {"type": "backend_tool_call", "kind": {"action": {"type": "search"}}},
        ),
        updates__jsonl=lines("{", {"timestamp": "soon", "params": {"update": {"usage": {"inputTokens": -4}}}}, 7),
        summary__json="{not json",
    )
    (session,), problems = read(tmp_path)
    assert [m.role for m in session.messages] == ["user", "assistant", "tool"]
    assert session.messages[1].tool_calls[0].input == "oops"
    assert session.messages[2].tool_output == '{"ok":true}'
    told = " | ".join(session.problems + problems)
    assert "skipped" in told and "not a JSON object" in told and "unknown row" in told
    assert "a tool call without a name" in told and "a server tool call without a tool type" in told
    assert "updates.jsonl" in told and "summary.json" in told


def test_a_folder_whose_chat_yields_nothing_is_told(tmp_path: Path) -> None:
    session_folder(tmp_path, chat_history__jsonl=lines({"type": "system", "content": "You are Grok"}))
    found, problems = read(tmp_path)
    assert found == [] and problems == ["sessions/%2Fw%2Fapp/s-1: no message"]


def test_injected_context_is_left_out_and_a_wrapped_prompt_unwrapped(tmp_path: Path) -> None:
    session_folder(
        tmp_path,
        chat_history__jsonl=lines(
            {"type": "user", "content": "<rules>be brief</rules>", "synthetic_reason": "project_instructions"},
            {"type": "user", "content": "<user_info>linux</user_info>\n<user_query>fix it</user_query>"},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]},
            {"type": "assistant", "content": "fixed"},
        ),
    )
    (session,), _ = read(tmp_path)
    assert [(m.role, m.text, m.thinking) for m in session.messages] == [
        ("user", "fix it", ""),
        ("assistant", "fixed", "think"),
    ]


def test_a_sub_agent_names_its_parent(tmp_path: Path) -> None:
    chat = lines({"type": "user", "content": "look"}, {"type": "assistant", "content": "seen"})
    summary = json.dumps({"info": {"id": "s-2"}, "session_kind": "subagent", "parent_session_id": "s-1"})
    session_folder(tmp_path, sid="s-2", chat_history__jsonl=chat, summary__json=summary)
    (session,), _ = read(tmp_path)
    assert session.parent == "s-1"


def test_the_kind_is_registered_with_its_home_and_variable() -> None:
    kind = registry.kinds(registry.manager(entry_points=False))["grok-cli"]
    ((folder, under, env),) = [(place.folder, place.under, place.env) for place in kind.locations]
    assert (folder, under, env) == ("~/.grok", "sessions", "GROK_HOME")
