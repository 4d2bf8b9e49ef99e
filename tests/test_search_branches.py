"""The search's branches filter: conversations by the git branch they ran on, on every surface."""

from __future__ import annotations

import json

import pytest
import sqlite_utils
from click.testing import CliRunner
from conftest import sample_source, write_files

from archivist.archive.indexer import index_workspace
from archivist.cli import cli
from archivist.queries import filters
from archivist.queries.lists import items
from archivist.queries.runner import Archive
from archivist.web.search_navigation import CHIP_KEYS
from archivist.workspace import archive_path

KINDS = ("claude-code", "codex", "gemini-cli", "aider")


@pytest.fixture(scope="module")
def logs_archive(tmp_path_factory):
    workspace = write_files(tmp_path_factory.mktemp("branches") / "ws", {"notes/a.md": "# A\n\nalpha proxy\n"})
    index_workspace(workspace, log_sources=[(kind, sample_source(kind)) for kind in KINDS])
    return workspace


def branches(workspace) -> dict[int, str | None]:
    """Each session's branch, as the archive stores it in the session's facts."""
    db = sqlite_utils.Database(archive_path(workspace))
    return dict(db.execute("select id, extra ->> 'branch' from documents where kind = 'conversation'").fetchall())


def search(workspace, **params):
    with Archive.for_workspace(workspace) as archive:
        return archive.search({"mode": "recent", "page_size": "100", **params})


def test_a_session_is_found_by_its_branch_and_only_by_it(logs_archive):
    stored = branches(logs_archive)
    named = sorted({branch for branch in stored.values() if branch})
    assert named, "the samples name some branch"
    for branch in named:
        found = {result["id"] for result in search(logs_archive, branches=branch)["results"]}
        assert found == {id_ for id_, value in stored.items() if value == branch}, branch
    assert search(logs_archive, branches="no-such-branch")["results"] == []
    both = {result["id"] for result in search(logs_archive, branches=",".join(named))["results"]}
    assert both == {id_ for id_, value in stored.items() if value in named}


def test_the_filter_narrows_words_and_is_echoed_and_counted(logs_archive):
    stored = branches(logs_archive)
    found = search(logs_archive, mode="keyword", query="flaky")["results"]
    branch = next(stored[result["id"]] for result in found if stored.get(result["id"]))
    answer = search(logs_archive, mode="keyword", query="flaky", branches=branch, output="full")
    assert answer["filters"]["branches"] == [branch]
    assert answer["results"] and all(stored[result["id"]] == branch for result in answer["results"])
    assert answer["facets"]["branch"] == {branch: len(answer["results"])}
    unfiltered = search(logs_archive, output="full")
    assert sum(unfiltered["facets"]["branch"].values()) == sum(1 for value in stored.values() if value)


def test_a_branch_is_a_facet_a_chip_and_an_option(logs_archive):
    assert ("branches", "branch") in CHIP_KEYS
    assert filters.named("branches").facet in filters.FACETS
    branch = next(value for value in branches(logs_archive).values() if value)
    result = CliRunner().invoke(cli, ["search", str(logs_archive), "--mode", "recent", "--branch", branch, "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    stored = branches(logs_archive)
    assert body["total"] >= 1 and all(stored[r["id"]] == branch for r in body["results"])


def test_a_hostile_branch_value_finds_nothing_and_fails_nothing(logs_archive):
    everything = search(logs_archive)["total"]
    for value in ("b:OR", "*", "x" * 2000, "main)", 'a"b', '"', " , "):
        answer = search(logs_archive, branches=value)
        # a value that names no branch at all (a lone quote, commas): no filter
        assert answer["total"] == (0 if items(value) else everything), value
