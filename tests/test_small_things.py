"""The smaller things a new user meets: facet labels that tell projects apart, the similar
mode's chip and control, a sort without a query, and what ``archivist status`` lists."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner
from conftest import SAMPLE, sample_source

from archivist.cli import cli


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


# --- archivist status: the sources and the files not read --------------------------------------


def _workspace_with_source(tmp_path: Path) -> tuple[Path, Path]:
    """The sample workspace and a copy of the Claude Code sample source with one file that is not JSON lines."""
    workspace = tmp_path / "ws"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))
    projects = tmp_path / "projects"
    shutil.copytree(sample_source("claude-code"), projects)
    broken = projects / "-home-ana-broken" / "0badf00d-0000-4000-8000-000000000000.jsonl"
    broken.parent.mkdir()
    broken.write_text('{"type": "user", not json\n', encoding="utf-8")
    assert invoke("index", workspace, "--source", f"claude-code={projects}").exit_code == 0
    return workspace, projects


def test_status_lists_each_source_and_every_file_not_read(tmp_path):
    workspace, projects = _workspace_with_source(tmp_path)
    report = json.loads(invoke("status", workspace, "--json").stdout)
    [source] = report["sources"]
    assert source["kind"] == "claude-code" and source["path"] == str(projects)
    assert source["sessions"] == report["documents"]["conversation"] - 13  # the workspace's own 13 besides
    assert source["sessions"] > 0 and source["read_at"]
    unread = {problem["path"]: problem for problem in report["unread"]}
    assert len(unread) == sum(report["problems"].values()) == 3  # the sample's 2 skipped files and the broken log
    assert all(problem["reason"] and problem["status"] in ("skipped", "degraded") for problem in unread.values())
    assert any(
        "0badf00d" in problem["reason"] and path == f"claude-code:{projects}" for path, problem in unread.items()
    )

    told = invoke("status", workspace)
    assert told.exit_code == 0
    assert f"claude-code     {projects}  {source['sessions']} sessions, last read {source['read_at']}" in told.stdout
    for path, problem in unread.items():
        assert f"  {problem['status']}: {path}: {problem['reason']}" in told.stdout


def test_status_of_an_archive_without_sources_says_how_to_add_one(sample_workspace):
    told = invoke("status", sample_workspace)
    assert told.exit_code == 0
    assert "Sources: none (add one with: archivist sources --discover" in told.stdout
    assert json.loads(invoke("status", sample_workspace, "--json").stdout)["sources"] == []
