"""One's own history in one command: `archivist index --discover` and `archivist serve --discover`,
with no workspace named, keep the archive in the platform's data folder, read every agent's logs
found in their default locations (never changing them) and serve them; a missing workspace is
created with --discover, and without it the error says how to create it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import sys
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from conftest import LOGS
from test_mcp import launcher

from archivist.agents import registry
from archivist.cli import cli
from archivist.workspace import archive_path

# Where each sample source lies in a home folder, as its agent writes it there by default on Linux.
HOMES = {
    "claude-code": ("claude-code/projects", ".claude/projects"),
    "codex": ("codex/sessions", ".codex/sessions"),
    "gemini-cli": ("gemini-cli", ".gemini"),
}
SESSIONS_SQL = """
SELECT s.kind, d.title FROM documents d JOIN log_sources s ON d.source = 'log:' || s.id ORDER BY s.kind, d.title
"""
SOURCES_SQL = "SELECT kind, path FROM log_sources ORDER BY kind"


def home_holding(homes: dict[str, tuple[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder holding the sample logs ``homes`` names (sample folder, place in the home),
    and an environment whose every default location and data folder is in it."""
    home = tmp_path / "home"
    for sample, place in homes.values():
        shutil.copytree(LOGS / sample, home / place)
    for name in (*registry.variables(), "XDG_CONFIG_HOME", "XDG_DATA_HOME", "ARCHIVIST_WORKSPACE", "BROWSER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder holding the sample logs of several agents in their default locations, the
    data folder named in it."""
    home = home_holding(HOMES, tmp_path, monkeypatch)
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    return home


def data_workspace(home: Path) -> Path:
    return home / ".local" / "share" / "archivist"


def invoke(*args: object) -> object:
    return CliRunner().invoke(cli, [str(a) for a in args])


def fingerprints(folder: Path) -> dict[str, str]:
    """Each file under ``folder``, by its path, with a hash of its bytes and its modification time."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest() + str(path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def sessions(archive: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(archive) as db:
        return db.execute(SESSIONS_SQL).fetchall()


def test_index_discover_keeps_ones_own_history_in_the_data_folder_and_changes_no_log(home, tmp_path):
    before = fingerprints(home)
    done = invoke("index", "--discover")
    assert done.exit_code == 0, done.output
    archive = archive_path(data_workspace(home))
    assert archive.is_file()
    assert f"Created the workspace {data_workspace(home)}" in done.stderr
    with sqlite3.connect(archive) as db:
        found = db.execute(SOURCES_SQL).fetchall()
    assert {kind for kind, _ in found} == set(HOMES)
    assert all(Path(path).is_relative_to(home) for _, path in found)
    assert {line for line in done.stderr.splitlines() if line.startswith("Found ")} == {
        f"Found {kind}: {path}" for kind, path in found
    }

    # the same sessions as each source named by hand
    named = tmp_path / "named"
    named.mkdir()
    by_hand = [f"--source={kind}={home / place}" for kind, (_, place) in HOMES.items()]
    assert invoke("index", named, *by_hand).exit_code == 0
    assert sessions(archive) == sessions(archive_path(named))
    assert {kind for kind, _ in sessions(archive)} == set(HOMES)
    logs = {key: value for key, value in fingerprints(home).items() if not key.startswith(".local/share/archivist/")}
    assert logs == before

    again = invoke("index", "--discover")  # the second run: the same workspace, nothing new
    assert again.exit_code == 0 and "Created the workspace" not in again.stderr
    assert sessions(archive) == sessions(archive_path(named))


def test_a_missing_workspace_is_created_with_discover_and_told_how_without(home, tmp_path):
    missing = tmp_path / "new" / "history"
    refused = invoke("index", missing)
    assert refused.exit_code == 1 and "[DIRECTORY_NOT_FOUND]" in refused.stderr
    assert f"mkdir -p {missing}" in refused.stderr and f"archivist index {missing} --discover" in refused.stderr
    assert not (tmp_path / "new").exists()
    served = invoke("serve", missing, "--no-index")
    assert "mkdir -p" in served.stderr and "archivist serve" in served.stderr and "--discover" in served.stderr

    done = invoke("index", missing, "--discover")
    assert done.exit_code == 0, done.output
    assert {kind for kind, _ in sessions(archive_path(missing))} == set(HOMES)
    assert not data_workspace(home).exists()  # a named workspace is the one used


def test_no_workspace_without_discover_says_discover(home):
    refused = invoke("index")
    assert refused.exit_code == 1 and "archivist index --discover" in refused.stderr
    assert not data_workspace(home).exists()


def test_discover_and_no_index_are_refused_together(home):
    refused = invoke("serve", "--discover", "--no-index")
    assert refused.exit_code == 1 and "[INVALID_SOURCE]" in refused.stderr
    assert not data_workspace(home).exists()


@pytest.fixture
def launched(tmp_path):
    with launcher(tmp_path) as start:
        yield start


def test_serve_discover_serves_ones_own_history_and_opens_a_browser_only_when_asked(home, launched, tmp_path):
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser"
    browser.write_text(
        f"#!{sys.executable}\nimport sys, pathlib\npathlib.Path({str(opened)!r}).write_text(sys.argv[1])\n"
    )
    browser.chmod(0o755)
    environment = {key: os.environ[key] for key in ("HOME", "XDG_DATA_HOME")} | {"BROWSER": str(browser)}

    server = launched("serve", "--discover", env=environment)
    with httpx.Client(base_url=server.base, headers=server.headers, timeout=60) as client:
        assert client.get("/").status_code == 200
        rows = client.get("/archive/log_sources.json?_shape=array").json()
    assert {row["kind"] for row in rows} == set(HOMES)
    assert f"Serving {data_workspace(home)} at {server.base}/?token={server.token}" in server.output()
    time.sleep(1)
    assert not opened.exists()  # not a terminal, and no --open
    server.stop()

    asked = launched("serve", "--discover", "--open", env=environment)
    deadline = time.monotonic() + 30
    while not opened.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert opened.read_text() == f"{asked.base}/?token={asked.token}"


def test_sources_discover_lists_ones_own_history_from_the_data_folder(home):
    listed = invoke("sources", "--discover", "--json")
    assert listed.exit_code == 0, listed.output
    with sqlite3.connect(archive_path(data_workspace(home))) as db:
        stored = db.execute(SOURCES_SQL).fetchall()
    assert sorted((row["kind"], row["path"]) for row in json.loads(listed.stdout)) == stored
    assert {kind for kind, _ in stored} == set(HOMES)
