"""The sample agent logs: one small source of every kind, read by its reader and indexed beside the sample workspace."""

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT, SAMPLE

from archivist.agents import registry
from archivist.archive import sessions
from archivist.cli import cli

LOGS = ROOT / "sample-agent-logs"

# Each kind: where its source is in its sample folder (as a user would give it to --source), and how many
# sessions it holds.
# How many sessions each kind's sample holds; where the sample is, the kind's registry entry says.
COUNTS = {
    "claude-code": 2,  # a session and its sub-agent
    "codex": 1,
    "gemini-cli": 1,
    "claude-export": 2,
    "chatgpt-export": 2,
    "aider": 2,
    "specstory": 1,
    "llm": 2,
    "cline": 1,
    "roo-code": 2,  # a task with its conversation file, and one with only its panel
    "kilo-code": 1,
    "gptme": 2,  # a conversation with its config.toml, and an older one in the tool form
    "continue": 1,
    "crush": 2,  # a session and its sub-agent
    "opencode": 4,  # a session and its sub-agent, one of the older storage, one of a Go OpenCode project
    "copilot": 4,
    "copilot-vs": 2,  # an agent conversation spread over two trace files, with a patch and usage, and an ask
    "goose": 2,
    "qwen-code": 1,
    "qoder": 2,  # a session and its sub-agent
    "antigravity": 1,  # a conversation with its transcript and artifacts
    "trae": 2,  # one in the shared database, one in a workspace's
    "junie": 2,  # a session with an edit, a command, thinking and usage, and an older one without event times
    "kiro": 2,  # a workspace session of the agent extension, and a Kiro CLI session
    "amp": 1,
    "cursor": 2,  # a composer with tools, thinking, usage and an image; an older one inline
    "windsurf": 1,
    "kimi-cli": 2,  # a session with its wire log, and an older one with only its context
    "openclaw": 2,  # a session of the main agent, and one of another agent after a compaction
    "forge": 2,  # a titled conversation with an edit, a command and usage, and an untitled one
    "hermes": 3,  # a session of state.db with an edit and usage, one JSONL transcript, one session snapshot
    "grok-cli": 2,  # a session of chat format 1 with an edit and usage, and one of the older format 0
    "pi": 2,  # a session of format version 3 with its title, and one of version 1
    "openhands": 2,  # a conversation with usage per response, and one with a rejected call
    "codebuff": 2,  # a chat with tools, a sub-agent and usage, and one of a plain answer
    "cline-cli": 2,  # a session with an edit, a command and usage, and its sub-agent
    "warp": 1,  # a conversation of two prompts and the two commands the agent ran
    "zed": 2,  # a thread with an edit, a command, thinking and usage, and its sub-agent
}
# Kinds whose store keeps the person's prompts and the agent's calls, never its answers.
PROMPTS_ONLY = {"warp"}
SOURCES = {
    name: (kind.sample, COUNTS[name]) for name, kind in registry.kinds(registry.manager(entry_points=False)).items()
}


def read_sessions(kind):
    problems: list[str] = []
    found = list(sessions.module(kind).read(LOGS / SOURCES[kind][0], problems))
    assert problems == []
    return found


def calls(session):
    return [call for message in session.messages for call in message.tool_calls]


def commands(session):
    return [command for call in calls(session) for command in call.commands]


def files(session):
    return [file for call in calls(session) for file in call.files]


def by_title(found, title):
    (session,) = [session for session in found if session.title == title]
    return session


def test_every_kind_has_a_sample():
    built_in = registry.kinds(registry.manager(entry_points=False))
    assert sorted(folder.name for folder in LOGS.iterdir() if folder.is_dir()) == list(built_in)
    assert set(COUNTS) == set(built_in) and all(kind.sample for kind in built_in.values())
    assert all(sample.startswith(f"{name}/") or sample == name for name, (sample, _) in SOURCES.items())
    assert not (SAMPLE / "sample-agent-logs").exists()  # beside the workspace, never walked as its files


def test_make_serve_reads_every_sample():
    """The Makefile's sources are the registry's samples: python -m archivist.agents.registry."""
    import subprocess
    import sys

    made = subprocess.run(
        [sys.executable, "-m", "archivist.agents.registry"], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.split()
    assert made == [
        part for name, (sample, _) in SOURCES.items() for part in ("--source", f"{name}=sample-agent-logs/{sample}")
    ]
    assert "SAMPLE_SOURCES = $(shell $(BIN)/python -m archivist.agents.registry)" in (ROOT / "Makefile").read_text()


@pytest.mark.parametrize("kind", SOURCES)
def test_each_sample_is_a_source_of_its_kind_with_whole_sessions(kind):
    path, count = SOURCES[kind]
    assert sessions.module(kind).check(LOGS / path) is None
    found = read_sessions(kind)
    assert len(found) == count
    for session in found:
        assert session.agent == kind and session.title and session.problems == []
        assert any(message.role == "user" and message.text for message in session.messages)
        if kind not in PROMPTS_ONLY:
            assert any(message.role == "assistant" and message.text for message in session.messages)
        assert "2025-10-01" <= session.started <= session.last < "2026-01-01"


def test_claude_code_a_session_with_thinking_tools_and_a_sub_agent():
    main, agent = read_sessions("claude-code")
    assert main.title == "Fix flaky keep-alive ping test"
    assert main.project == "/home/dev/src/captions-gateway" and main.branch == "fix/flaky-keepalive-test"
    assert main.models == ["claude-sonnet-4-5-20250929"]
    assert [call.name for call in calls(main)] == ["Read", "Read", "Task", "Edit", "Bash"]
    assert "/home/dev/src/captions-gateway/tests/test_keepalive.py" in files(main)
    assert commands(main) == ["uv run pytest tests/test_keepalive.py --count 50 -q"]
    assert any(message.thinking for message in main.messages)
    assert agent.parent == main.key and agent.title == "Find tests that sleep on the real clock"
    assert agent.models == ["claude-haiku-4-5-20251001"]


def test_codex_a_rollout_with_shell_calls_a_patch_and_reasoning():
    (session,) = read_sessions("codex")
    assert session.project == "/home/dev/src/report-service" and session.branch == "fix/export-504"
    assert session.models == ["gpt-5-codex"]
    assert "helm template charts/report-service | grep -n proxy-" in commands(session)
    assert "charts/report-service/values.yaml" in files(session)
    assert any(message.thinking for message in session.messages)
    outputs = "\n".join(message.tool_output for message in session.messages)
    assert "AWS_SECRET_ACCESS_KEY=" in outputs  # something for secret masking to find


def test_gemini_cli_a_session_with_its_project_from_the_project_root_file():
    (session,) = read_sessions("gemini-cli")
    assert session.title == "Fix admin portal logout after 15 minutes"
    assert session.project == "/home/dev/src/meeting-rooms-portal" and session.models == ["gemini-2.5-pro"]
    assert "/home/dev/src/meeting-rooms-portal/src/server/session.ts" in files(session)
    assert commands(session) == ["npm test -- src/server/session.test.ts"]


def test_the_exports_follow_their_current_branch():
    claude = read_sessions("claude-export")
    assert [session.title for session in claude] == [
        "Scaling media-worker on queue depth",
        "401s after rotating the JWT signing key",
    ]
    assert "[attachment: hpa.yaml]" in claude[0].messages[0].text
    chatgpt = read_sessions("chatgpt-export")
    pac = by_title(chatgpt, "PAC file without DNS lookups")
    first = next(message for message in pac.messages if message.role == "user")
    assert "203.0.113.0/24" in first.text  # the edited question, not the one it replaced
    left = next(index for index, message in enumerate(pac.messages) if "Which host names" in message.text)
    assert pac.messages[left - 2].text.startswith("[another branch, not the current one: the next 2 message(s)")
    assert pac.messages[0].role == "system" and "Be concise." in pac.messages[0].text  # custom instructions
    ping = by_title(chatgpt, "Websocket ping interval for proxies")
    assert [call.name for call in calls(ping)] == ["python"] and ping.models == ["gpt-5"]


def test_aider_two_sessions_of_one_history():
    first, second = read_sessions("aider")
    assert first.started == "2025-10-21T14:03:27Z" and second.started == "2025-10-22T09:41:12Z"
    assert second.last == second.started  # a later interrupted run holds nothing, so no file time is used
    assert commands(first) == ["pytest tests/test_resolver.py -q"]
    assert "src/proxy/resolver.py" in files(second)
    assert first.models == ["anthropic/claude-sonnet-4-5-20250929"]


def test_specstory_a_cursor_transcript():
    (session,) = read_sessions("specstory")
    assert session.title == "Session cookies or JWTs for the admin portal"
    assert session.models == ["claude-4.5-sonnet-thinking"]
    assert "src/server/auth.ts" in files(session)
    assert any("npm test" in command for command in commands(session))


def test_llm_a_log_database_of_llm_0_36_read_only():
    database = LOGS / "llm" / "logs.db"
    assert database.stat().st_size < 100_000
    with database.open("rb") as handle:
        header = handle.read(20)
    assert header[18:20] == b"\x01\x01"  # rollback journal, not WAL
    found = read_sessions("llm")
    pods = next(session for session in found if session.models == ["gpt-4.1-mini", "gpt-4.1-mini-2025-04-14"])
    assert "kubectl --context prod-eu-1 -n platform get pods -l app=media-worker" in commands(pods)
    pasted = next(session for session in found if session is not pods)
    assert any("sk-ant-api03-" in message.text for message in pasted.messages if message.role == "user")
    with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True) as connection:
        tables = {name for (name,) in connection.execute("select name from sqlite_master where type = 'table'")}
    assert {"threads", "turns", "messages", "parts"} <= tables
    assert not database.with_name("logs.db-wal").exists() and not database.with_name("logs.db-shm").exists()


def fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_the_sample_workspace_indexes_every_kind_and_finds_the_flaky_test(tmp_path):
    workspace = tmp_path / "workspace"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))
    before = fingerprint(LOGS)
    arguments = ["index", str(workspace)]
    for kind, (path, _) in SOURCES.items():
        arguments += ["--source", f"{kind}={LOGS / path}"]
    runner = CliRunner()
    indexed = runner.invoke(cli, arguments)
    assert indexed.exit_code == 0, indexed.output
    listed = runner.invoke(cli, ["sources", str(workspace), "--json"])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)
    assert [(row["kind"], row["path"], row["documents"]) for row in rows] == [
        (kind, str(LOGS / path), count) for kind, (path, count) in SOURCES.items()
    ]
    assert all(row["messages"] > 0 for row in rows)
    found = runner.invoke(cli, ["search", str(workspace), "flaky test"])
    assert found.exit_code == 0, found.output
    assert "Fix flaky keep-alive ping test" in found.output and "claude-code" in found.output
    assert fingerprint(LOGS) == before  # read in place, never changed


def test_cline_a_task_in_the_xml_tool_format_with_its_workspace_from_the_task_list():
    (task,) = read_sessions("cline")
    assert task.key == "1763900000000" and task.project == "/home/ana/projects/fetcher"
    assert task.title.startswith("The retry helper in src/net/retry.ts never backs off")
    assert task.models == ["claude-sonnet-4-5-20250929"]
    assert [call.name for call in calls(task)] == [
        "read_file",
        "replace_in_file",
        "execute_command",
        "attempt_completion",
        "attempt_completion",
    ]
    assert files(task) == ["src/net/retry.ts", "src/net/retry.ts"] and commands(task) == ["npm test -- retry"]
    roles = ["user", *["assistant", "tool"] * 4, "user", "assistant", "system", "assistant"]
    assert [message.role for message in task.messages] == roles
    # the feedback on the completion is the person's; the notice that no tool was used, the extension's
    assert (
        task.messages[9].text.startswith("Also log each retry's delay")
        and "<feedback>" not in task.messages[8].tool_output
    )
    assert (
        task.messages[11].text.startswith("[ERROR] You did not use a tool") and "Reminder" not in task.messages[11].text
    )
    assert not any("<environment_details>" in message.text or "<task>" in message.text for message in task.messages)
    assert task.messages[1].thinking == "Read the helper before changing it."
    assert "PASS src/net/retry.test.ts" in task.messages[6].tool_output and task.messages[6].text == ""
    assert task.messages[7].text.startswith("The retry helper now waits 1, 2, 4, 8")  # what the completion says
    assert (task.started, task.last) == ("2025-11-23T12:13:20Z", "2025-11-23T12:14:10Z")


def test_roo_code_a_task_with_native_tool_calls_and_reasoning_and_one_read_from_its_panel():
    task, panel = read_sessions("roo-code")
    assert task.project == "/home/ana/projects/ledger" and task.models == []  # Roo keeps no model id
    assert task.title == "Why does the monthly report show February twice? Find the bug in src/report.py."
    assert [call.name for call in calls(task)] == ["read_file", "apply_diff", "execute_command"]
    assert commands(task) == ["python -m pytest tests/test_report.py -q"]
    assert task.messages[1].thinking.startswith("A month loop that adds 30 days")
    assert [message.tool_output for message in task.messages if message.role == "tool"][-1] == "4 passed in 0.21s"
    assert [message.role for message in panel.messages] == [
        "user",
        *["assistant"] * 3,
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert [call.name for call in calls(panel)] == ["readFile", "appliedDiff", "execute_command"]
    assert panel.messages[1].thinking == "Read the defaults before renaming the key."
    assert panel.messages[4].text == "Keep reading the old name for one release, with a warning."
    assert sum(message.usage.input for message in panel.messages if message.usage) == 9260  # as its task list says


def test_continue_a_session_with_its_workspace_uri_and_reasoning_times():
    (session,) = read_sessions("continue")
    assert session.title == "ISO dates in the CSV export" and session.project == "/home/ana/projects/books"
    assert session.models == ["Claude Sonnet 4.5"]
    assert [call.name for call in calls(session)] == ["read_file", "edit_existing_file", "run_terminal_command"]
    assert files(session) == ["src/export/csv.py", "src/export/csv.py"]
    assert commands(session) == ["pytest tests/test_csv_export.py -q"]
    assert (session.started, session.last) == ("2025-11-25T19:46:40Z", "2025-11-25T19:46:55Z")
    assert not any("def write_rows" in message.text for message in session.messages)  # context items and results apart


def test_opencode_sessions_of_its_database_with_a_sub_agent_and_one_of_its_older_storage():
    main, agent, go, old = read_sessions("opencode")
    assert main.title == "Rate limit the shorten endpoint" and main.project == "/home/ana/projects/shorty"
    assert main.models == ["claude-sonnet-4-5"] and agent.models == ["claude-haiku-4-5"]
    assert [call.name for call in calls(main)] == ["Read", "read", "edit", "bash"]  # a file attached, then the tools
    assert commands(main) == ["bun test test/limit.test.ts"]
    assert files(main) == ["src/app.ts"] + ["/home/ana/projects/shorty/src/app.ts"] * 2
    assert main.messages[1].thinking == "Find where the route is declared before adding middleware."
    assert [message.tool_output for message in main.messages if message.role == "tool"][-1] == "2 pass\n0 fail"
    assert agent.parent == main.key and old.title == "Why are short links case-sensitive?"
    assert go.title == "List the files of this project" and go.project == str(LOGS / "opencode")


def test_copilot_vs_code_s_sessions_whole_and_as_a_log_and_a_cli_session():
    whole, logged, older, cli = read_sessions("copilot")
    assert whole.title == "Cache the forecast lookups" and whole.project == "/home/ana/projects/weather-api"
    assert whole.models == ["copilot/gpt-4.1"] and whole.last == "2025-11-28T03:20:22Z"  # when the answer completed
    assert [call.name for call in calls(whole)] == ["copilot_readFile", "edit", "run_in_terminal"]
    assert commands(whole) == ["pytest tests/test_forecast.py -q"]
    assert whole.messages[-1].tool_output == "5 passed in 0.34s"
    assert logged.title == "Stale forecast after midnight"  # a title the log set after the first state
    assert logged.messages[-1].text.startswith("The cache key is the city alone, so an entry made before midnight")
    assert older.started == "2025-10-21T10:00:00Z" and older.title.startswith("The forecast tests take forty seconds")
    assert [(a.type, a.size) for m in older.messages for a in m.attachments] == [("image/png", 24)]  # state.vscdb's
    assert cli.project == "/home/ana/projects/weather-api" and cli.models == ["claude-sonnet-4.5"]
    assert commands(cli) == ["curl -s localhost:8000/health"] and files(cli) == [
        "/home/ana/projects/weather-api/app/main.py"
    ]


def test_cursor_a_composer_of_bubbles_and_an_older_one_inline():
    retry, signature = read_sessions("cursor")
    assert retry.title == "Retry webhook deliveries on 429" and retry.project == "/home/ana/projects/hooks"
    assert retry.models == ["claude-4.5-sonnet-thinking"] and signature.models == ["gpt-5"]
    assert [call.name for call in calls(retry)] == ["read_file", "search_replace", "run_terminal_cmd"]
    assert commands(retry) == ["pytest tests/test_sender.py -q"] and files(retry) == ["src/hooks/sender.py"] * 2


def test_goose_its_database_and_an_older_session_file():
    found = {session.title: session for session in read_sessions("goose")}
    fix = found["Fix Friday date bug"]
    assert commands(fix) == ["pytest tests/test_dates.py -k next_business_day -q"]
    assert "/home/dev/projects/calendar-api/calendar_api/dates.py" in files(fix)
    assert "Summarise whiteboard photo" in found
