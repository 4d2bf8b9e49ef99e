"""A sub-agent belongs to its parent: whichever folder it ran in, its session takes the project
of the session that started it, so a project's totals count it once, under the parent."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import sqlite_utils
from conftest import write_files

from archivist.agents import claude_code
from archivist.archive.indexer import index_workspace
from archivist.workspace import archive_path

SAMPLE = (
    Path(__file__).parent.parent / "sample-agent-logs" / "claude-code" / "projects" / "-home-dev-src-captions-gateway"
)
PARENT = "/home/dev/src/captions-gateway"


def moved_into_a_sub_folder(tmp_path: Path) -> Path:
    """The sample's project, its sub-agent's lines saying it ran in a sub-folder of the parent's."""
    folder = tmp_path / "projects" / SAMPLE.name
    shutil.copytree(SAMPLE, folder)
    for transcript in folder.glob("*/subagents/*.jsonl"):
        lines = [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
        transcript.write_text("".join(json.dumps({**line, "cwd": f"{PARENT}/web"}) + "\n" for line in lines))
    return folder.parent


def test_a_sub_agent_that_ran_in_a_sub_folder_takes_its_parent_s_project(tmp_path):
    projects = moved_into_a_sub_folder(tmp_path)
    sessions = list(claude_code.read(projects))
    agents = [session for session in sessions if session.parent]
    assert agents and all(session.project == PARENT for session in agents)
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n"})
    index_workspace(workspace, log_sources=[("claude-code", projects)])
    db = sqlite_utils.Database(archive_path(workspace))
    stored = {
        row["project"]
        for row in db.query("select extra ->> '$.project' as project from documents where kind = 'conversation'")
    }
    assert stored == {PARENT}
    hours = {row["project"] for row in db.query("select distinct project from message_hours")}
    assert hours == {PARENT}  # (the activity and project pages count it under the parent)
