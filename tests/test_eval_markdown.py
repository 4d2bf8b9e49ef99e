"""Ingesting real markdown corpora nobody here wrote (../shared/eval/markdown), read in place."""

import pytest
import sqlite_utils

from archivist.indexer import index_workspace
from conftest import EVAL

CORPORA = EVAL / "markdown"
pytestmark = pytest.mark.skipif(not CORPORA.is_dir(), reason="../shared/eval/markdown is not beside this checkout")


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    db_path = tmp_path_factory.mktemp("eval") / "archive.db"
    summary = index_workspace(CORPORA, db_path)
    return summary, sqlite_utils.Database(db_path)


def dated(db, path):
    row = db.execute("select date, date_precision, created_at from documents where path = ?", [path]).fetchone()
    assert row is not None, path
    return row


def test_every_markdown_file_is_indexed_and_nothing_else_is_lost(archive):
    summary, db = archive
    assert summary.documents == 1470  # 1,469 markdown files and one .txt
    assert db.execute("select status, count(*) from files group by status").fetchall() == [
        ("indexed", 1470),
        ("skipped", 5),  # the four .filelist files and a LICENSE
    ]


@pytest.mark.parametrize(
    "path, expected",
    [
        (
            "humanlayer-thoughts/thoughts/searchable/shared/research/2025-06-24_10-17-43_hld-daemon-interface.md",
            ("2025-06-24", "second", "2025-06-24T10:17:43Z"),
        ),
        (
            "specstory-getspecstory/.specstory/history/2026-01-23_17-24-15Z-look-at-the-gh.md",
            ("2026-01-23", "second", "2026-01-23T17:24:15Z"),
        ),
        ("tc39-notes/meetings/2023-01/jan-31.md", ("2023-01-31", "day", "2023-01-31T00:00:00Z")),
        ("tc39-notes/meetings/2012-05/toc.md", ("2012-05", "month", "2012-05-01T00:00:00Z")),
        ("WebAssembly-meetings/main/2023/CG-02-28.md", ("2023-02-28", "day", "2023-02-28T00:00:00Z")),
        ("WebAssembly-meetings/main/2017/CG-07.md", ("2017-07", "month", "2017-07-01T00:00:00Z")),
    ],
)
def test_dates_in_real_layouts_come_out_with_the_right_precision(archive, path, expected):
    assert dated(archive[1], path) == expected


def test_front_matter_date_wins_over_the_file_name(archive):
    # front matter: "date: 2025-06-24 12:22:31 PDT"; file name: 2025-06-24_12-23-58
    path = "humanlayer-thoughts/thoughts/searchable/shared/research/2025-06-24_12-23-58_thoughts-auto-pull.md"
    assert dated(archive[1], path) == ("2025-06-24", "second", "2025-06-24T19:22:31Z")


def test_front_matter_titles_and_tags_are_kept(archive):
    path = "humanlayer-thoughts/thoughts/searchable/shared/research/2025-06-24_12-23-58_thoughts-auto-pull.md"
    tags = archive[1].execute("select tags from documents where path = ?", [path]).fetchone()[0]
    assert tags == '["research", "codebase", "thoughts"]'


def test_every_tc39_meeting_day_and_webassembly_meeting_has_a_date(archive):
    db = archive[1]
    undated = db.execute(
        "select path from documents where date is null and ("
        " path glob 'tc39-notes/meetings/*' or path glob 'WebAssembly-meetings/main/20*/CG-[0-9]*')"
    ).fetchall()
    assert undated == []
