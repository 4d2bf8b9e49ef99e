"""The README's quick start, run as written against a home folder holding sample logs of four
agents where each writes them by default: the archive is made in the platform's data folder,
the pages list every agent's sessions, and no log is changed.

The command is read from the README (its shell block that names this file), so a change there
is a change here; the server is given a free port, and no browser (BROWSER=true, and its
output is not a terminal).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import doc_blocks
import httpx
import pytest
from conftest import ROOT
from markupsafe import escape
from test_mcp import ARCHIVIST, launcher
from test_own_history import data_workspace, fingerprints, home_holding, sessions

from archivist.workspace import archive_path

# Where each sample lies in a home folder, as its agent writes it there by default on Linux.
HOMES = {
    "claude-code": ("claude-code/projects", ".claude/projects"),
    "codex": ("codex/sessions", ".codex/sessions"),
    "gemini-cli": ("gemini-cli/tmp", ".gemini/tmp"),
    "qwen-code": ("qwen-code", ".qwen"),
}
QUICK_START = "tests/test_quick_start.py"


def quick_start() -> list[str]:
    """The README's quick-start command: the one line of the shell block whose marker names this file."""
    (block,) = [
        block
        for block in doc_blocks.blocks(ROOT / "README.md")
        if block.language in doc_blocks.SHELL and QUICK_START in (block.not_run or "")
    ]
    (line,) = doc_blocks.commands(block)
    return shlex.split(line)


def test_the_quick_start_is_one_archivist_command_with_no_workspace() -> None:
    program, *arguments = quick_start()
    assert (ROOT / program).resolve() == Path(ARCHIVIST).resolve()
    assert arguments == ["serve", "--discover"]


def logs(home: Path) -> dict[str, dict[str, str]]:
    """Each copied log folder's files, with a hash of their bytes and their modification times."""
    return {place: fingerprints(home / place) for _, place in HOMES.values()}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder holding the sample logs of four agents in their default places, the data
    folder its default one (XDG_DATA_HOME unset)."""
    return home_holding(HOMES, tmp_path, monkeypatch)


def test_the_quick_start_serves_every_agents_sessions_from_the_data_folder_and_changes_no_log(home, tmp_path):
    before = logs(home)
    _, *arguments = quick_start()
    with launcher(tmp_path) as launched:
        server = launched(*arguments, env={"HOME": str(home), "BROWSER": "true"})
        with httpx.Client(base_url=server.base, headers=server.headers, timeout=60) as client:
            pages = {path: client.get(path) for path in ("/", "/search", "/search?entities=conversation")}
        assert f"Serving {data_workspace(home)} at {server.base}/?token={server.token}" in server.output()
    archive = archive_path(data_workspace(home))
    assert archive.is_file()
    stored = sessions(archive)
    assert {kind for kind, _ in stored} == set(HOMES)
    for path, page in pages.items():
        assert page.status_code == 200, path
    listed = pages["/search?entities=conversation"].text
    for kind, title in stored:
        assert str(escape(title)) in listed, (kind, title)
    for kind in HOMES:
        assert kind in pages["/"].text and kind in pages["/search"].text, kind
    assert logs(home) == before
