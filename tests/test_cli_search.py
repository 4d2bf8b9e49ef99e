"""`archivist search WORKSPACE QUERY`: the unified search of /api/search and the MCP search tool, from the shell.

The archives are real (the sample workspace with the sample agent logs, a workspace of notes
alone), the command is the real one (click's runner, and the installed script in a process of
its own), and its --json is compared with what GET /api/search answers for the same parameters.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import SAMPLE, sample_source, started_datasette, write_files

from archivist import cli as cli_module
from archivist.archive import schema
from archivist.cli import cli
from archivist.queries import rules
from archivist.workspace import archive_path

BIN = Path(sys.executable).parent
# the kinds whose samples these searches are written against
SOURCES = ("claude-code", "codex", "gemini-cli", "claude-export", "chatgpt-export", "aider", "specstory", "llm")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """The sample workspace and the sample agent logs, indexed by the CLI (not embedded)."""
    root = tmp_path_factory.mktemp("cli-search") / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".archivist"))
    arguments = ["index", str(root)]
    for kind in SOURCES:
        arguments += ["--source", f"{kind}={sample_source(kind)}"]
    indexed = CliRunner().invoke(cli, arguments)
    assert indexed.exit_code == 0, indexed.output
    assert indexed.stderr == ""  # no progress label when stderr is not a terminal
    return root


def run(*args: object, env: dict[str, str | None] | None = None):
    return CliRunner(env=env).invoke(cli, [str(arg) for arg in args])


def searched(workspace: Path, *args: object) -> dict:
    """The --json of `archivist search WORKSPACE ARGS...` (which must succeed, quietly)."""
    result = run("search", workspace, *args, "--json")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    return json.loads(result.stdout)


async def api(workspace: Path, params: dict[str, str]) -> dict:
    datasette = await started_datasette(archive_path(workspace))
    response = await datasette.client.get("/api/search", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def ids(response: dict) -> list[int]:
    return [hit["id"] for hit in response["results"]]


# Each filter: the query, the options, and the same filter as /api/search's parameters.
FILTERS = [
    ("authentication", ["--kind", "memory"], {"entities": "memory"}),
    ("authentication", ["--kind", "memory", "--kinds", "note"], {"entities": "memory,note"}),
    ("authentication", ["--entities", "memory,note"], {"entities": "memory,note"}),
    ("authentication", ["--type", "debug"], {"types": "debug"}),
    ("sqlite", ["--tag", "decision"], {"tags": "decision"}),
    ("sqlite", ["--tag", "ops", "--tag", "sqlite", "--match-all"], {"tags": "ops,sqlite", "match_all": "true"}),
    ("authentication", ["--start-date", "2025-11-11"], {"start_date": "2025-11-11"}),
    ("authentication", ["--end-date", "2025-11-10"], {"end_date": "2025-11-10"}),
    ("authentication", ["--date-range", "2025-11"], {"start_date": "2025-11", "end_date": "2025-11"}),
    ("authentication", ["--date-range", "2025-11-10"], {"start_date": "2025-11-10", "end_date": "2025-11-10"}),
    ("cycle", ["--product-id", "598"], {"product_ids": "598"}),
    ("meeting", ["--product-ids", "598,601"], {"product_ids": "598,601"}),
    ("test", ["--agent", "claude-code"], {"agents": "claude-code"}),
    ("test", ["--project", "captions-gateway"], {"projects": "captions-gateway"}),
    ("test", ["--model", "claude-sonnet-4-5-20250929"], {"models": "claude-sonnet-4-5-20250929"}),
    ("test", ["--file", "test_keepalive.py"], {"files": "test_keepalive.py"}),
    ("auth*", ["--match-mode", "raw"], {"match_mode": "raw"}),
    ("authentication", ["--page", "2", "--page-size", "3"], {"page": "2", "page_size": "3"}),
    ("authentication", ["--limit", "3"], {"limit": "3"}),
    ("tokens", ["--mode", "scan"], {"mode": "scan"}),
    ("tokens", ["--mode", "faceted", "--kind", "conversation"], {"mode": "faceted", "entities": "conversation"}),
]


@pytest.mark.parametrize(("query", "options", "params"), FILTERS, ids=lambda value: str(value))
async def test_every_filter_reaches_the_search_and_the_json_is_the_apis(workspace, query, options, params):
    found = searched(workspace, query, *options)
    everything = searched(workspace, query)
    assert (found["total"], found["results"]) != (everything["total"], everything["results"])  # it made a difference
    assert found == await api(workspace, {"query": query, "mode": "keyword", **params})


async def test_without_a_query_recent_tag_and_faceted_list_by_filters(workspace):
    recent = searched(workspace, "--mode", "recent", "--kind", "memory")
    assert recent["total"] == 13 and {hit["kind"] for hit in recent["results"]} == {"memory"}
    dates = [hit["date"] for hit in recent["results"]]
    assert dates == sorted(dates, reverse=True)
    assert recent == await api(workspace, {"mode": "recent", "entities": "memory"})
    tagged = searched(workspace, "--mode", "tag", "--tag", "ops", "--output", "full")
    assert tagged["total"] and all("ops" in hit["tags"] for hit in tagged["results"])


def test_the_default_mode_is_keyword_while_the_archive_has_no_embeddings(workspace):
    assert searched(workspace, "authentication")["mode"] == "keyword"
    assert not schema.is_embedded(archive_path(workspace))


def test_the_human_list_shows_each_hit_and_the_page(workspace):
    result = run("search", workspace, "flaky test", "--page-size", "3")
    assert result.exit_code == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    # title, then kind, agent, date and score; a one-line snippet; the path and id to open it
    assert lines[0].startswith("1. Fix flaky keep-alive ping test  [conversation · claude-code · 2025-11-24 · score ")
    assert "test_keepalive.py" in lines[1] and len(lines[1]) <= 4 + cli_module.SNIPPET_WIDTH
    assert lines[2].startswith("   claude-code:") and " · id " in lines[2] and lines[2].endswith("· message #0")
    # the total split by how the results matched, and where the next page is
    assert lines[-1] == "Page 1 of 5 · 13 results (1 with every word, 12 with some) · next: --page 2"
    assert sum(line[:1].isdigit() for line in lines[:-1]) == 3
    last = run("search", workspace, "flaky test", "--page-size", "3", "--page", "100")
    assert last.exit_code == 0 and "the last page is" in last.stdout
    nothing = run("search", workspace, "zzyzx quux")
    assert nothing.exit_code == 0 and nothing.stdout == "" and nothing.stderr == "No results.\n"


def test_a_snippet_is_one_line_with_its_highlights():
    excerpt = "...the <mark>proxy</mark>\n\ntimeout " + "x" * 300
    line = cli_module.snippet_line(excerpt, width=30)
    assert "\n" not in line and line.endswith("…")
    assert click.unstyle(line) == "...the proxy timeout xxxxxxxxx…" and "\x1b[" in line  # proxy highlighted
    assert click.unstyle(cli_module.snippet_line("a <mark>b</mark> c")) == "a b c"
    # text that ends where the line does is whole: no "…"
    assert click.unstyle(cli_module.snippet_line("foo <mark>bar</mark>", width=7)) == "foo bar"
    assert click.unstyle(cli_module.snippet_line("foo <mark>bar</mark> x", width=7)) == "foo bar…"


# --- the searches of earlier versions ---------------------------------------------------------------


def test_the_conversation_search_of_earlier_versions_is_still_there(workspace):
    result = run("search", workspace, "authentication", "--conversations", "--date-range", "2025-11", "--json")
    rows = json.loads(result.stdout)["results"]
    assert {row["path"] for row in rows} == {
        "conversations/2025-11-10/001-brainstorm-feature",
        "conversations/2025-11-10/002-debug-auth",
        "conversations/2025-11-11/001-plan-redesign",
    }
    assert all("conversation" in row for row in rows)  # search_workspace's rows
    typed = run("search", workspace, "authentication", "--conversations", "--type", "debug")
    assert typed.exit_code == 0 and "1. Debugging intermittent JWT authentication failures  [debug" in typed.stdout


# --- bad input: one line on stderr, exit status 1, nothing on stdout --------------------------------

ERRORS = [
    (["authentication", "--start-date", "blursday"], "INVALID_DATE", "Invalid start_date 'blursday'"),
    (["authentication", "--end-date", "2025-13-45"], "INVALID_DATE", "Invalid end_date"),
    (["authentication", "--date-range", "2025-11-1"], "INVALID_DATE_RANGE", "Invalid date_range '2025-11-1'"),
    (["authentication", "--date-range", "nov"], "INVALID_DATE_RANGE", "Invalid date_range 'nov'"),
    (["authentication", "--date-range", "2025-11", "--start-date", "2025-10"], "INVALID_PARAMETER", "--date-range"),
    (["authentication", "--mode", "fuzzy"], "INVALID_PARAMETER", "Unknown mode 'fuzzy'"),
    (["authentication", "--page-size", "0"], "INVALID_PARAMETER", "Invalid page_size '0'"),
    (["authentication", "--page-size", "101"], "INVALID_PARAMETER", "Invalid page_size '101'"),
    (["authentication", "--limit", "many"], "INVALID_PARAMETER", "Invalid limit 'many'"),
    (["authentication", "--page-size", "5", "--limit", "6"], "INVALID_PARAMETER", "page_size"),
    (["authentication", "--page", "0"], "INVALID_PARAMETER", "Invalid page '0'"),
    (["authentication", "--product-id", "x"], "INVALID_PARAMETER", "Invalid product_ids"),
    (["authentication", "--min-similarity", "2"], "INVALID_PARAMETER", "Invalid min_similarity '2'"),
    (["authentication", "--match-mode", "regex"], "INVALID_PARAMETER", "Unknown match_mode 'regex'"),
    (["authentication", "--kind", "epic"], "INVALID_ENTITY_TYPE", "epic"),
    (['"unclosed', "--match-mode", "raw"], "INVALID_SEARCH_SYNTAX", ""),
    (["a"], "INVALID_QUERY", ""),
    ([""], "INVALID_QUERY", "empty"),
    ([], "INVALID_QUERY", "No query given"),
    (["--mode", "tag"], "INVALID_PARAMETER", "mode=tag needs tags"),
    (["--mode", "similar"], "INVALID_PARAMETER", "mode=similar needs a document"),
    (["authentication", "--command", "analyze"], "INVALID_PARAMETER", "--command goes with --reports"),
    (["authentication", "--reports", "--mode", "keyword"], "INVALID_PARAMETER", "--reports takes no --mode"),
    (["authentication", "--conversations", "--kind", "note"], "INVALID_PARAMETER", "--conversations takes no --kind"),
    (["authentication", "--conversations", "--reports"], "INVALID_PARAMETER", "two searches"),
    (["authentication", "--conversations", "--date-range", "2025-11-1"], "INVALID_DATE_RANGE", "2025-11-1"),
]


@pytest.mark.parametrize(("args", "code", "words"), ERRORS, ids=lambda value: str(value))
def test_bad_input_is_one_line_and_a_non_zero_exit(workspace, args, code, words):
    result = run("search", workspace, *args)
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("❌ "), result.stderr
    assert result.stderr.rstrip().endswith(f"[{code}]") and words in result.stderr


def test_the_help_names_every_mode():
    text = run("search", "--help").stdout
    assert all(mode in text for mode in rules.MODES)


# --- a workspace of notes alone ---------------------------------------------------------------------

NOTES = {
    "notes/2025-06-24_10-17-43_pull-request-review.md": "---\ntitle: Reviewing a pull request\ntags: [git]\n---\n"
    "How we review a pull request: behaviour first, then tests, style last.\n",
    "notes/2025-07-01_09-00-00_release.md": "# Release checklist\n\nTag, build, publish, announce.\n",
    "notes/ideas.txt": "A pull request template would save reviewers time.\n",
}


def test_a_workspace_of_notes_alone_is_found(tmp_path):
    workspace = write_files(tmp_path / "notes-only", NOTES)
    assert run("index", workspace).exit_code == 0
    result = run("search", workspace, "pull request")
    assert result.exit_code == 0, result.output
    assert "1. Reviewing a pull request  [note · 2025-06-24 · score " in result.stdout
    assert "notes/2025-06-24_10-17-43_pull-request-review.md · id " in result.stdout
    assert "Page 1 of 1 · 2 results" in result.stdout
    found = searched(workspace, "pull request")
    assert {hit["kind"] for hit in found["results"]} == {"note"} and found["total"] == 2


# --- the installed command, in a process of its own ---------------------------------------------------


def command(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [str(BIN / "archivist"), *map(str, args)], capture_output=True, text=True, timeout=120, env=env, cwd=cwd
    )


def test_the_installed_command_searches_and_keeps_stderr_quiet(tmp_path):
    workspace = write_files(tmp_path / "notes-only", NOTES)
    indexed = command("index", workspace)
    assert indexed.returncode == 0 and indexed.stderr == "", indexed.stderr  # no "Indexing" label in a pipe
    assert indexed.stdout.startswith(f"{workspace}: 3 indexed")
    found = command("search", workspace, "pull request", "--mode", "keyword")
    assert found.returncode == 0 and found.stderr == "", found.stderr
    assert "Reviewing a pull request" in found.stdout and "\x1b[" not in found.stdout  # no styles in a pipe
    as_json = command("search", workspace, "pull request", "--mode", "keyword", "--json")
    assert json.loads(as_json.stdout) == searched(workspace, "pull request", "--mode", "keyword")
    bad = command("search", workspace, "pull request", "--page-size", "500")
    assert bad.returncode == 1 and bad.stdout == "" and bad.stderr.count("\n") == 1


def test_verbose_tells_each_step_on_stderr(tmp_path):
    workspace = write_files(tmp_path / "notes-only", NOTES)
    indexed = command("-v", "index", workspace)
    assert indexed.returncode == 0
    assert indexed.stderr == f"Indexing {workspace} into {archive_path(workspace)}\n"
    found = command("--verbose", "search", workspace, "pull request")
    assert found.returncode == 0 and "Reviewing a pull request" in found.stdout
    lines = found.stderr.splitlines()
    assert lines[0].startswith("Mode: keyword (the archive has no embeddings yet")
    assert lines[1] == f"Searching {archive_path(workspace)}: query='pull request' mode='keyword' output='full'"
    assert lines[2].startswith("2 results in ") and len(lines) == 3


def test_searching_imports_no_server_model_or_watcher(tmp_path):
    """The command line loads what its command needs: a keyword search needs no web server, MCP, model or watcher."""
    workspace = write_files(tmp_path / "notes-only", NOTES)
    assert command("index", workspace).returncode == 0
    heavy = ("datasette", "llm", "mcp", "torch", "sentence_transformers", "watchfiles", "uvicorn", "onnxruntime")
    probe = (
        "import sys; from archivist.cli import cli\n"
        "try:\n    cli()\nexcept SystemExit:\n    pass\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r})), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "search", str(workspace), "pull request", "--mode", "keyword"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "Reviewing a pull request" in done.stdout
    assert done.stderr == "[]\n"
    loaded = subprocess.run(
        [sys.executable, "-c", "import json, sys, archivist.cli; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    modules = {name.split(".")[0] for name in json.loads(loaded.stdout)}
    assert not modules & {*heavy, "sqlite_utils", "dateparser", "yaml", "numpy"}


# --- logging --------------------------------------------------------------------------------------


def test_the_archivist_logger_is_one_plain_line_and_libraries_info_stays_out(capsys):
    restore = cli_module.log_to_stderr()
    try:
        logging.getLogger("archivist.semantic.model").info("embedding model ready (0.4s)")
        logging.getLogger("mcp.server.lowlevel.server").info("Processing request of type CallToolRequest")
        logging.getLogger("some.library").warning("disk almost full")
        logging.basicConfig(level=logging.INFO)  # a library's own configuration adds nothing
        logging.getLogger("archivist").info("again")
    finally:
        restore()
    logging.getLogger("archivist").info("after: not shown")
    assert capsys.readouterr().err == "embedding model ready (0.4s)\ndisk almost full\nagain\n"


def mcp_call(workspace: Path, arguments: dict) -> tuple[dict, str]:
    """`archivist mcp WORKSPACE` as a client runs it: initialize, one search; its answer and all of its stderr."""
    process = subprocess.Popen(
        [str(BIN / "archivist"), "mcp", str(workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    watchdog = threading.Timer(180, process.kill)
    watchdog.start()
    try:
        messages = [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": arguments}},
        ]
        assert process.stdin and process.stdout and process.stderr
        process.stdin.write("".join(json.dumps(message) + "\n" for message in messages))
        process.stdin.flush()
        answer: dict = {}
        while answer.get("id") != 2:
            line = process.stdout.readline()
            assert line, "the server stopped"
            answer = json.loads(line)
        process.stdin.close()  # the client is done: the server stops
        stderr = process.stderr.read()
        process.wait(timeout=60)
        return answer["result"], stderr
    finally:
        watchdog.cancel()
        process.kill()


def test_mcp_over_stdio_writes_nothing_on_stderr_for_a_keyword_search(workspace):
    result, stderr = mcp_call(workspace, {"query": "authentication", "mode": "keyword"})
    assert not result.get("isError") and result["structuredContent"]["total"] > 0
    assert stderr == ""


# --- an embedded archive: hybrid by default, semantic filters ----------------------------------------


def test_an_embedded_archive_searches_hybrid_by_default(embedded_sample):
    assert schema.is_embedded(archive_path(embedded_sample))
    hybrid = searched(embedded_sample, "authentication")
    assert hybrid["mode"] == "hybrid" and hybrid["total"] > 0
    assert hybrid == searched(embedded_sample, "authentication", "--mode", "hybrid")
    loose = searched(embedded_sample, "sign-in problems", "--mode", "semantic", "--min-similarity", "-1")
    strict = searched(embedded_sample, "sign-in problems", "--mode", "semantic", "--min-similarity", "0.5")
    assert loose["total"] > strict["total"]
    full = searched(
        embedded_sample, "sign-in problems", "--mode", "semantic", "--min-similarity", "-1", "--output", "full"
    )
    assert full["total"] == loose["total"] and full["filters"]["min_similarity"] == -1
    document = hybrid["results"][0]["id"]
    similar = searched(embedded_sample, "--mode", "similar", "--document", document)
    assert similar["total"] > 0 and document not in ids(similar)


def test_mcp_over_stdio_tells_at_most_that_the_model_is_ready(embedded_sample):
    result, stderr = mcp_call(embedded_sample, {"query": "authentication", "mode": "hybrid"})
    assert not result.get("isError") and result["structuredContent"]["total"] > 0
    lines = stderr.splitlines()
    assert len(lines) <= 1, stderr  # no library's INFO, no progress bar
    assert all(line.startswith("embedding model ready") for line in lines), stderr
