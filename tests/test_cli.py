import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT, SAMPLE

from archivist.cli import cli


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_index_prints_a_one_line_summary_and_is_incremental(tmp_path):
    workspace = tmp_path / "ws"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))  # as after `make serve`
    first = invoke("index", workspace)
    assert first.exit_code == 0
    assert first.stderr == ""  # no progress bar, nor its label, where stderr is not a terminal
    assert f"{workspace}: 28 indexed, 0 unchanged, 0 removed, 2 skipped, 0 degraded (55 documents" in first.stdout
    second = invoke("index", workspace)
    assert "0 indexed, 28 unchanged, 0 removed" in second.stdout


def test_index_can_write_the_archive_elsewhere_and_list_problems(tmp_path):
    workspace = tmp_path / "ws"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes/empty.md").write_text("", encoding="utf-8")
    result = invoke("index", workspace, "--db", tmp_path / "elsewhere.db", "--show-problems")
    assert result.exit_code == 0
    assert "skipped: notes/empty.md: empty file" in result.stdout
    assert (tmp_path / "elsewhere.db").exists() and not (workspace / ".archivist").exists()


def test_index_of_a_missing_workspace_fails_with_the_code(tmp_path):
    result = invoke("index", tmp_path / "missing")
    assert result.exit_code == 1
    assert "[DIRECTORY_NOT_FOUND]" in result.stderr


def test_search_prints_results_and_json(sample_workspace):
    human = invoke("search", sample_workspace, "authentication", "--date-range", "2025-11-10")
    assert human.exit_code == 0
    assert "Debugging intermittent JWT authentication failures" in human.stdout
    as_json = invoke(
        "search", sample_workspace, "authentication", "--date-range", "2025-11-10", "--json", "--output", "full"
    )
    rows = json.loads(as_json.stdout)["results"]
    assert {r["path"] for r in rows} == {
        "conversations/2025-11-10/001-brainstorm-feature",
        "conversations/2025-11-10/002-debug-auth",
    }
    # the same two with --conversations, the conversation search of earlier versions
    args = ("search", sample_workspace, "authentication", "--date-range", "2025-11-10", "--conversations")
    earlier = invoke(*args)
    assert "Debugging intermittent JWT authentication failures" in earlier.stdout
    assert {r["path"] for r in json.loads(invoke(*args, "--json").stdout)["results"]} == {r["path"] for r in rows}


def test_search_finds_every_kind(sample_workspace):
    found = json.loads(invoke("search", sample_workspace, "authentication", "--json").stdout)
    assert {r["kind"] for r in found["results"]} == {"conversation", "note", "memory", "report"}
    assert found["mode"] == "keyword"  # the archive has no embeddings yet


def test_search_reports_from_the_cli(sample_workspace):
    result = invoke(
        "search", sample_workspace, "decode response", "--reports", "--command", "analyze_zoom_speech_sdk_log", "--json"
    )
    rows = json.loads(result.stdout)["results"]
    assert [r["report_name"] for r in rows] == [
        "Zoom_Speech_SDK_日志分析报告_20251120_decode_response_v6.md",
        "Zoom_Speech_SDK_日志分析报告_20251105_v2.md",
    ]


def test_search_errors_go_to_stderr_with_a_non_zero_exit(sample_workspace):
    result = invoke("search", sample_workspace, "auth", "--date-range", "2025-11-1")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "Invalid date_range '2025-11-1'" in result.stderr and "[INVALID_DATE_RANGE]" in result.stderr
    unindexed = invoke("search", sample_workspace / "nowhere", "auth")
    assert unindexed.exit_code == 1 and "archivist index" in unindexed.stderr


def test_status_counts_documents_by_kind(sample_workspace):
    result = invoke("status", sample_workspace, "--json")
    status = json.loads(result.stdout)
    assert status["documents"] == {"conversation": 13, "memory": 13, "note": 5, "record": 18, "report": 6}


# --- docs/mcp-clients.md's set-up, run as a client would run it ---------------------------------

BIN = Path(sys.executable).parent  # where this environment installed the `archivist` command
PLACEHOLDER = "/path/to/workspace"
README_PORT = "8765"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}
SEARCH_TOOL, SEARCH_ARGUMENTS = "search_workspace", {"query": "authentication", "date_range": "2025-11-10"}
FOUND = {"conversations/2025-11-10/001-brainstorm-feature", "conversations/2025-11-10/002-debug-auth"}
# `claude mcp add [options] <name> <commandOrUrl> [args...]`: the options that take a value
CLAUDE_OPTIONS = {"-s": "scope", "--scope": "scope", "-e": "env", "--env": "env", "-t": "transport"}
CLAUDE_OPTIONS |= {"--transport": "transport", "-H": "header", "--header": "header"}


@dataclass
class Launch:
    """How a client starts a stdio server: command, arguments and environment."""

    source: str
    command: list[str]
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Remote:
    """How a client reaches an HTTP server: its URL and headers."""

    source: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)


def section(document: Path, heading: str) -> str:
    text = document.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    return text[start : text.index("\n## ", start + 1)]


def readme_mcp_section() -> str:
    """The set-up of clients: docs/mcp-clients.md's, and the README's example among its ways in."""
    return section(ROOT / "docs" / "mcp-clients.md", "Adding the server to a client") + section(
        ROOT / "README.md", "Three ways in"
    )


def fenced(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", readme_mcp_section(), re.S | re.M)


def claude_mcp_add(line: str) -> Launch | Remote:
    """One `claude mcp add` line, read with the real command's syntax."""
    words = shlex.split(line)
    assert words[:3] == ["claude", "mcp", "add"], line
    before, after = (words[3 : words.index("--")], words[words.index("--") + 1 :]) if "--" in words else (words[3:], [])
    options: dict[str, list[str]] = {}
    positional = []
    it = iter(before)
    for word in it:
        if word in CLAUDE_OPTIONS:
            options.setdefault(CLAUDE_OPTIONS[word], []).append(next(it))
        else:
            assert not word.startswith("-"), f"unknown option {word} in {line}"
            positional.append(word)
    assert positional[0] == "archivist", line
    assert set(options.get("scope", [])) <= {"user", "project", "local"}, line
    if options.get("transport") == ["http"]:
        assert len(positional) == 2 and not after, line
        headers = dict(header.split(": ", 1) for header in options.get("header", []))
        return Remote(line, positional[1], headers)
    assert options.get("transport", ["stdio"]) == ["stdio"] and len(positional) == 1 and after, line
    return Launch(line, after, dict(pair.split("=", 1) for pair in options.get("env", [])))


def readme_clients() -> tuple[list[Launch], list[Remote]]:
    launches: list[Launch] = []
    remotes: list[Remote] = []
    for block in fenced("bash"):
        for line in block.splitlines():
            if line.startswith("claude mcp add"):
                found = claude_mcp_add(line)
                if isinstance(found, Launch):
                    launches.append(found)
                else:
                    remotes.append(found)
    for block in fenced("json"):
        config = json.loads(block)
        for name, server in config["mcpServers"].items():
            assert name == "archivist"
            source = " ".join(block.split())
            if "url" in server:
                remotes.append(Remote(source, server["url"], server.get("headers", {})))
            else:
                launches.append(Launch(source, [server["command"], *server.get("args", [])], server.get("env", {})))
    return launches, remotes


def readme_http_server() -> Launch:
    """docs/mcp-clients.md's `[VAR=value ...] archivist mcp ... --http` line."""
    lines = [line for block in fenced("bash") for line in block.splitlines() if not line.startswith("claude ")]
    (line,) = [line for line in lines if "archivist mcp" in line and "--http" in line]
    words = shlex.split(line)
    env = {}
    while "=" in words[0]:
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    assert "--http" in words
    return Launch(line, words, env)


LAUNCHES, REMOTES = readme_clients()


def client_environment(extra: dict[str, str]) -> dict[str, str]:
    """What a client gives the server: a small environment with `archivist` on PATH, plus its own."""
    keep = {key: os.environ[key] for key in ("HOME", "LANG") if key in os.environ}
    return {**keep, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "HF_HUB_OFFLINE": "1", **extra}


def substituted(words: list[str] | dict[str, str], workspace: Path, port: str = README_PORT):
    def one(text: str) -> str:
        return text.replace(PLACEHOLDER, str(workspace)).replace(f":{README_PORT}/", f":{port}/")

    if isinstance(words, dict):
        return {key: one(value) for key, value in words.items()}
    return [port if word == README_PORT else one(word) for word in words]


def stdio_call(command: list[str], env: dict[str, str], cwd: Path) -> dict:
    """initialize, then one tools/call, as raw JSON-RPC lines: the tools/call answer."""
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    watchdog = threading.Timer(120, process.kill)
    watchdog.start()
    try:
        messages = [
            INITIALIZE,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": SEARCH_TOOL, "arguments": SEARCH_ARGUMENTS},
            },
        ]
        process.stdin.write("".join(json.dumps(message) + "\n" for message in messages))
        process.stdin.flush()
        answers = {}
        while 2 not in answers:
            line = process.stdout.readline()
            assert line, f"the server stopped: {process.stderr.read()}"
            answer = json.loads(line)
            answers[answer.get("id")] = answer
        assert answers[1]["result"]["serverInfo"]["name"] == "archivist"
        return answers[2]
    finally:
        watchdog.cancel()
        process.kill()
        process.communicate(timeout=10)


def test_the_readme_shows_each_way_to_add_the_server():
    assert {launch.source[:6] for launch in LAUNCHES} == {"claude", '{"mcpS'}  # Claude Code, and the JSON blocks
    assert any(PLACEHOLDER in launch.command for launch in LAUNCHES)
    assert any("ARCHIVIST_WORKSPACE" in launch.env and PLACEHOLDER not in launch.command for launch in LAUNCHES)
    assert len(REMOTES) >= 2 and readme_http_server().env.get("ARCHIVIST_TOKEN")
    assert all(remote.headers.get("Authorization", "").startswith("Bearer ") for remote in REMOTES)


@pytest.mark.parametrize("launch", LAUNCHES, ids=lambda launch: launch.source[:60])
def test_the_readme_stdio_commands_start_the_server_from_any_folder(launch, sample_workspace, tmp_path):
    elsewhere = tmp_path / "client-home"  # a client's working directory, nothing to do with the workspace
    elsewhere.mkdir()
    env = client_environment(substituted(launch.env, sample_workspace))
    assert shutil.which(launch.command[0], path=env["PATH"]) == str(BIN / "archivist")
    answer = stdio_call(substituted(launch.command, sample_workspace), env, elsewhere)
    result = answer["result"]
    assert not result.get("isError") and result["structuredContent"]["success"] is True
    assert {row["path"] for row in result["structuredContent"]["results"]} == FOUND
    assert list(elsewhere.iterdir()) == []


def test_the_readme_http_server_answers_the_readme_clients(sample_workspace, tmp_path):
    import asyncio

    import httpx
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    elsewhere = tmp_path / "anywhere"
    elsewhere.mkdir()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = str(sock.getsockname()[1])
    server = readme_http_server()
    process = subprocess.Popen(  # its log goes nowhere: an unread pipe would fill and stall it
        substituted(server.command, sample_workspace, port),
        cwd=elsewhere,
        env=client_environment(server.env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    async def call(remote: Remote) -> dict:
        url = substituted({"url": remote.url}, sample_workspace, port)["url"]
        async with httpx.AsyncClient(headers=remote.headers) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                result = await client.call_tool(SEARCH_TOOL, SEARCH_ARGUMENTS)
        assert not result.is_error
        return result.structured_content

    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, f"exited with {process.returncode}"
            try:
                with socket.create_connection(("127.0.0.1", int(port)), timeout=0.5):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
        for remote in REMOTES:
            assert {row["path"] for row in asyncio.run(call(remote))["results"]} == FOUND, remote.source
        url = substituted({"url": REMOTES[0].url}, sample_workspace, port)["url"]
        refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert refused.status_code == 401 and refused.json()["code"] == "UNAUTHORIZED"  # the header is needed
    finally:
        process.kill()
        process.wait(timeout=10)
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("given", ["argument", "environment"])
def test_mcp_takes_a_relative_workspace_from_the_current_folder(given, sample_workspace):
    relative = sample_workspace.name
    command, env = [str(BIN / "archivist"), "mcp"], client_environment({})
    if given == "argument":
        command.append(relative)
    else:
        env["ARCHIVIST_WORKSPACE"] = relative
    answer = stdio_call(command, env, sample_workspace.parent)
    assert {row["path"] for row in answer["result"]["structuredContent"]["results"]} == FOUND


# --- Bad input: one line, exit status 1, nothing created ---------------------------------------

# each command with the arguments it needs besides WORKSPACE
COMMANDS = {
    "index": [],
    "embed": [],
    "serve": [],
    "status": [],
    "search": ["authentication"],
    "mcp": [],
}
# the commands that read an archive and never create one (serve does with --no-index)
READERS = {"status": [], "search": ["authentication"], "mcp": [], "serve": ["--no-index"]}


def listing(root: Path) -> dict[str, bytes | None]:
    """Every file and folder under root, with each file's content."""
    return {str(path.relative_to(root)): path.read_bytes() if path.is_file() else None for path in root.rglob("*")}


def refused(*args: object, env: dict[str, str] | None = None) -> str:
    """Run the CLI with bad input: the one line it prints on stderr (checked: exit 1, nothing else)."""
    clean: dict[str, str | None] = {"ARCHIVIST_WORKSPACE": None, "ARCHIVIST_ALLOW_WORKSPACES": None}
    clean |= {"ARCHIVIST_TOKEN": None, "ARCHIVIST_MCP_TOKEN": None, "ARCHIVIST_ALLOW_ORIGINS": None}
    result = CliRunner(env={**clean, **(env or {})}).invoke(cli, [str(a) for a in args])
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert result.stderr.endswith("\n") and result.stderr.count("\n") == 1, result.stderr
    return result.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_no_workspace_is_one_line(command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = refused(command, env={"XDG_DATA_HOME": str(tmp_path / "data")})  # (no archive of one's own history)
    assert "No workspace given" in line and f"archivist {command}" in line
    if command == "mcp":
        assert "ARCHIVIST_WORKSPACE" in line  # the two ways to give it
    assert listing(tmp_path) == {}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_missing_workspace_is_one_line(command, tmp_path):
    (tmp_path / "other.md").write_text("# Other\n", encoding="utf-8")
    before = listing(tmp_path)
    line = refused(command, tmp_path / "missing", *COMMANDS[command])
    assert f"Workspace not found: no folder at {tmp_path / 'missing'}:" in line
    assert "[DIRECTORY_NOT_FOUND]" in line
    assert listing(tmp_path) == before


@pytest.mark.parametrize("command", COMMANDS)
def test_a_file_as_workspace_is_one_line(command, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n", encoding="utf-8")
    before = listing(tmp_path)
    line = refused(command, notes, *COMMANDS[command])
    assert f"Workspace is not a folder: {notes} is a file" in line
    assert listing(tmp_path) == before


@pytest.mark.parametrize("command", READERS)
def test_a_folder_without_an_archive_is_one_line_and_stays_as_it_was(command, tmp_path):
    folder = tmp_path / "notes"
    (folder / "conversations").mkdir(parents=True)
    (folder / "todo.md").write_text("# To do\n", encoding="utf-8")
    before = listing(tmp_path)
    line = refused(command, folder, *READERS[command])
    assert f"No archive in {folder}: run `archivist index {folder}` first" in line
    assert listing(tmp_path) == before  # no .archivist/ folder made


@pytest.mark.parametrize("command", READERS)
def test_a_missing_db_option_is_one_line(command, sample_workspace, tmp_path):
    elsewhere = tmp_path / "elsewhere.db"
    before = listing(tmp_path)
    line = refused(command, sample_workspace, "--db", elsewhere, *READERS[command])
    assert f"No archive at {elsewhere}: run `archivist index {sample_workspace} --db {elsewhere}` first" in line
    assert listing(tmp_path) == before


NOT_ARCHIVES = {"garbage": b"not a database\n", "empty": b""}  # an empty file is an empty database


@pytest.mark.parametrize(
    "command, content",
    [(command, "garbage") for command in [*READERS, "index", "embed"]] + [(command, "empty") for command in READERS],
)
def test_a_file_that_is_not_an_archive_is_one_line(command, content, tmp_path):
    folder = tmp_path / "notes"
    (folder / ".archivist").mkdir(parents=True)
    (folder / ".archivist/archive.db").write_bytes(NOT_ARCHIVES[content])
    before = listing(tmp_path)
    line = refused(command, folder, *READERS.get(command, []))
    assert f"Not an Archivist archive: {folder / '.archivist/archive.db'}" in line
    assert listing(tmp_path) == before


SERVERS = {"serve": [], "mcp --http": ["--http"]}  # the commands that serve HTTP, with what makes them do so


@pytest.mark.parametrize("command", SERVERS)
@pytest.mark.parametrize("token", ["ARCHIVIST_TOKEN", "ARCHIVIST_MCP_TOKEN"])
def test_no_token_beside_a_token_is_one_line(command, token, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    args = [command.split()[0], folder, *SERVERS[command], "--no-token"]
    line = refused(*args, env={token: "s3cret"})
    assert "--no-token and ARCHIVIST_TOKEN disagree" in line and "[INVALID_PARAMETER]" in line
    assert "s3cret" not in line
    assert listing(tmp_path) == {"notes": None}  # refused before anything is indexed


@pytest.mark.parametrize("command", SERVERS)
@pytest.mark.parametrize("origin", ["null", "127.0.0.1:3000", "http://127.0.0.1:3000/app", "ftp://example.com"])
@pytest.mark.parametrize("given", ["option", "environment"])
def test_an_allowed_origin_that_is_no_origin_is_one_line(command, origin, given, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    args = [command.split()[0], folder, *SERVERS[command]]
    if given == "option":
        line = refused(*args, "--allow-origin", "http://127.0.0.1:3000", "--allow-origin", origin)
    else:
        line = refused(*args, env={"ARCHIVIST_ALLOW_ORIGINS": f"http://127.0.0.1:3000, {origin}"})
    assert f"Not an origin: {origin!r}" in line and "--allow-origin http://127.0.0.1:3000" in line, line
    assert "[INVALID_PARAMETER]" in line
    assert listing(tmp_path) == {"notes": None}


def test_the_argument_wins_over_the_environment_and_home_is_expanded(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    result = CliRunner(env={"ARCHIVIST_WORKSPACE": str(tmp_path / "missing"), "HOME": str(tmp_path)}).invoke(
        cli, ["mcp", "~/notes"]
    )
    assert result.exit_code == 1 and f"No archive in {folder}:" in result.stderr
    assert listing(tmp_path) == {"notes": None}


def test_search_without_a_query_is_one_line(sample_workspace):
    line = refused("search", sample_workspace)
    assert "No query given" in line and "[INVALID_QUERY]" in line


@pytest.mark.parametrize("env", [{}, {"ARCHIVIST_WORKSPACE": ""}], ids=["unset", "empty"])
def test_mcp_started_without_a_workspace_says_so_in_one_line(env, tmp_path):
    """As a client starts it: a working directory of its own, nothing on stdout, one line on stderr."""
    done = subprocess.run(
        [str(BIN / "archivist"), "mcp"],
        cwd=tmp_path,
        env=client_environment({**env, "XDG_DATA_HOME": str(tmp_path / "data")}),
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "No workspace given" in done.stderr and "ARCHIVIST_WORKSPACE" in done.stderr
    assert listing(tmp_path) == {}


def test_a_workspace_whose_path_has_uri_characters_is_read_as_named(tmp_path):
    """'#', '?' and '%' in a path are the folder's name, not parts of a SQLite URI."""
    workspace = tmp_path / "notes #1?x=%20"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))
    assert invoke("index", workspace).exit_code == 0
    found = invoke("search", workspace, "authentication", "--json", "--mode", "keyword")
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)["total"] > 0
    assert invoke("status", workspace).exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [workspace.name]  # no stray file at the cut name


@pytest.mark.parametrize("command", ["index", "search", "status", "embed"])
def test_a_workspace_or_archive_path_that_is_not_utf_8_is_refused_plainly(tmp_path, command):
    workspace = Path(os.fsdecode(bytes(tmp_path) + b"/ws-\xff"))
    workspace.mkdir()
    result = invoke(command, workspace, *(["proxy"] if command == "search" else []))
    assert result.exit_code == 1 and "[INVALID_PARAMETER]" in result.stderr, result.output
    assert "not valid UTF-8" in result.stderr and not (workspace / ".archivist").exists()
    archive = Path(os.fsdecode(bytes(tmp_path) + b"/a-\xfe.db"))
    good = tmp_path / "good"
    good.mkdir()
    result = invoke(command, good, "--db", archive, *(["proxy"] if command == "search" else []))
    assert result.exit_code == 1 and "archive's path is not valid UTF-8" in result.stderr, result.output
    assert not os.path.lexists(archive)


@pytest.mark.parametrize("flag", [["--no-token"], ["--allow-origin", "http://127.0.0.1:3000"]])
def test_the_http_servers_flags_without_http_are_one_line(flag, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    line = refused("mcp", folder, *flag)
    assert f"{flag[0]} is for the HTTP server: give --http too" in line and "[INVALID_PARAMETER]" in line


def test_an_allowed_origin_in_the_environment_leaves_a_stdio_server_alone(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    # refused for its missing archive, not for the setting
    line = refused("mcp", folder, env={"ARCHIVIST_ALLOW_ORIGINS": "http://127.0.0.1:3000"})
    assert "is for the HTTP server" not in line and "archivist index" in line


def test_archivist_alone_says_where_to_start() -> None:
    """`archivist` with no command lists the commands and names the one to one's own history."""
    result = CliRunner().invoke(cli, [])
    assert "archivist serve --discover" in result.output
    assert "Commands:" in result.output and "serve" in result.output
    started = invoke("serve", "--help")
    assert "--discover" in started.output


def test_without_a_workspace_the_reading_commands_read_ones_own_history(tmp_path):
    """Once `serve --discover` (or index) has made one's own history's archive in the data folder,
    `archivist mcp`, `status` and `usage` read it when no workspace is named."""
    data = tmp_path / "data"
    own = data / "archivist"
    env = {"XDG_DATA_HOME": str(data), "ARCHIVIST_WORKSPACE": ""}
    own.mkdir(parents=True)
    logs = ROOT / "sample-agent-logs" / "claude-code" / "projects"
    made = CliRunner(env=env).invoke(cli, ["index", str(own), "--source", f"claude-code={logs}"])
    assert made.exit_code == 0, made.output
    told = CliRunner(env=env).invoke(cli, ["status"])
    assert told.exit_code == 0, told.output
    assert str(own) in told.output and "claude-code" in told.output
    used = CliRunner(env=env).invoke(cli, ["usage", "--json"])
    assert used.exit_code == 0, used.output
    served = subprocess.run(
        [str(BIN / "archivist"), "mcp"],
        cwd=tmp_path,
        env=client_environment(env),
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert served.returncode == 0, served.stderr
    assert json.loads(served.stdout.splitlines()[0])["result"]["serverInfo"]
    (data / "archivist" / ".archivist" / "archive.db").unlink()
    line = refused("status", env=env)
    assert "No workspace given" in line
