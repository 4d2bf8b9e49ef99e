"""The examples of the README and docs/ run: every `archivist` command of their shell blocks against a copy of the
sample workspace (its synopses once bare and once with each option they show), its summary line
as the sample's index prints it, and the repository's top level served as a configuration folder
(its changed template and its one-file plugin)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sqlite3
from pathlib import Path

import doc_blocks
import httpx
import pytest
from click.testing import CliRunner
from conftest import ROOT, SAMPLE
from test_mcp import launcher

from archivist.archive.indexer import index_workspace
from archivist.cli import cli
from archivist.workspace import archive_path

ARCHIVIST = ".venv/bin/archivist"
# the commands an example names that no test of the examples runs, and why
NOT_RUN = {
    "serve": "starts a server: tests/test_deployment.py serves it",
    "mcp": "starts a server: tests/test_mcp.py runs it",
    "watch": "runs until stopped: tests/test_watch.py runs it",
    "embed": "loads the embedding model: tests/test_semantic.py embeds",
}
GLOBAL_OPTIONS = ("-v", "--verbose")
# what a synopsis's placeholders stand for in the sample
SYNOPSIS_VALUES = {"DATE": "2025-11-01", "N": "5"}
SOURCE = "claude-code"
SOURCES = ROOT / "docs" / "sources.md"  # where the summary line an index prints is shown


def subcommand(line: str) -> str | None:
    """The command an `archivist` line runs (``index`` in ``archivist -v index W``); None for another program."""
    words = shlex.split(line)
    if not words or words[0] != ARCHIVIST:
        return None
    return next((word for word in words[1:] if word not in GLOBAL_OPTIONS), None)


def runs(line: str) -> bool:
    """Whether this test covers a shell line: it runs it, or names it in NOT_RUN with the reason."""
    return subcommand(line) is not None


def invocations(line: str, values: dict[str, str]) -> list[list[str]]:
    """The arguments a line runs with: itself, or for a synopsis (``[--by day|month]``) the bare
    command and the command with each optional part, each of its choices in turn."""
    words = shlex.split(line)[1:]
    bare = [word for word in words if not word.startswith("[") and not word.endswith("]")]
    bare = [word for word in bare if "[" not in word]
    runs = [bare]
    for group in re.findall(r"\[([^\]]+)\]", line):
        option, *rest = group.split()
        choices = rest[0].split("|") if rest else [None]
        runs += [[*bare, option, *([choice] if choice else [])] for choice in choices]
    return [[values.get(word, word) for word in run] for run in runs]


def example_lines() -> list[tuple[str, str]]:
    """Each `archivist` line of the shell blocks of the README and docs/ that no marker leaves out, with its block."""
    return [
        (block.name, line)
        for block in doc_blocks.all_blocks()
        if block.language in doc_blocks.SHELL and block.not_run is None
        for line in doc_blocks.commands(block)
        if subcommand(line) is not None
    ]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A home folder whose Claude Code projects are the sample's."""
    home = tmp_path_factory.mktemp("home")
    shutil.copytree(ROOT / "sample-agent-logs" / SOURCE / "projects", home / ".claude" / "projects")
    return home


@pytest.fixture
def workspace(tmp_path, home) -> Path:
    """A copy of the sample workspace, indexed with the Claude Code sample as a source."""
    workspace = tmp_path / "sample-workspace"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))
    index_workspace(workspace, log_sources=[(SOURCE, home / ".claude" / "projects")])
    return workspace


def test_the_examples_name_commands_the_cli_has() -> None:
    lines = example_lines()
    assert len(lines) >= 10
    named = {subcommand(line) for _, line in lines}
    assert named <= set(cli.commands), f"commands the CLI lacks: {named - set(cli.commands)}"
    assert NOT_RUN.keys() <= set(cli.commands)


@pytest.mark.parametrize(("block", "line"), example_lines(), ids=[line for _, line in example_lines()])
def test_a_documented_example_runs_on_the_sample(block: str, line: str, workspace: Path, home: Path) -> None:
    if subcommand(line) in NOT_RUN:
        pytest.skip(NOT_RUN[str(subcommand(line))])
    with sqlite3.connect(archive_path(workspace)) as db:
        (changed,) = db.execute("select name from file_calls where changed order by name limit 1").fetchone()
    values = {**SYNOPSIS_VALUES, "WORKSPACE": str(workspace), "PATH": changed}
    for arguments in invocations(line, values):
        result = CliRunner().invoke(cli, arguments, env={"HOME": str(home)})
        assert result.exit_code == 0, f"{block}: archivist {shlex.join(arguments)}\n{result.output}"
        if "--json" in arguments:
            json.loads(result.stdout)


def test_a_synopsis_runs_bare_and_with_each_option_and_choice() -> None:
    line = f"{ARCHIVIST} usage WORKSPACE [--since DATE] [--by day|month] [--json]"
    assert invocations(line, {"WORKSPACE": "w", "DATE": "d"}) == [
        ["usage", "w"],
        ["usage", "w", "--since", "d"],
        ["usage", "w", "--by", "day"],
        ["usage", "w", "--by", "month"],
        ["usage", "w", "--json"],
    ]


def test_the_summary_line_is_the_one_indexing_the_sample_prints(tmp_path: Path) -> None:
    (shown,) = [block for block in doc_blocks.blocks(SOURCES) if block.body.startswith("sample-workspace: ")]
    workspace = tmp_path / "sample-workspace"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))
    result = CliRunner().invoke(cli, ["index", str(workspace)])
    assert result.exit_code == 0, result.output
    printed = [line for line in result.output.splitlines() if line.startswith(f"{workspace}: ")]
    seconds = re.compile(r"\d+\.\d+s\)")
    assert [seconds.sub("s)", line.replace(str(workspace), "sample-workspace")) for line in printed] == [
        seconds.sub("s)", shown.body.strip())
    ]


@pytest.fixture
def launched(tmp_path):
    with launcher(tmp_path) as start:
        yield start


def test_the_top_level_serves_its_changed_template_and_its_plugins_page(launched, tmp_path: Path) -> None:
    workspace = tmp_path / "sample-workspace"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))
    index_workspace(workspace)
    server = launched("serve", str(workspace), "--no-index", "--config-dir", str(ROOT))
    with httpx.Client(base_url=server.base, headers=server.headers) as client:
        home = client.get("/")
        assert home.status_code == 200 and '<a href="/-/sample">What the sample holds</a>' in home.text
        assert "Data license:" in home.text  # the rest of Datasette's footer, kept
        page = client.get("/-/sample")
    with sqlite3.connect(archive_path(workspace)) as db:
        kinds = db.execute("select kind, count(*) from documents group by kind order by kind").fetchall()
    assert page.status_code == 200 and "<h1>What the sample holds</h1>" in page.text
    rows = re.findall(r"<tr><td>(\w+)</td><td>(\d+)</td></tr>", page.text)
    assert [(kind, int(count)) for kind, count in rows] == kinds and len(kinds) == 5


def test_the_examples_are_read_from_the_readme_and_docs() -> None:
    documents = {block.split(":")[0] for block, _ in example_lines()}
    assert {"README.md", "docs/configuration.md", "docs/sources.md"} <= documents
