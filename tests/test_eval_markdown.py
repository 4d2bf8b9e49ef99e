"""Ingesting real markdown corpora nobody here wrote (../shared/eval/markdown), read in place."""

import pytest
import sqlite_utils
from conftest import EVAL

from archivist import dates
from archivist.archive.indexer import index_workspace

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
        ("degraded", 1),  # a session log with NUL bytes in it, indexed without them
        ("indexed", 1469),
        ("skipped", 5),  # the four .filelist files and a LICENSE
    ]
    assert db.execute("select path, reason from index_problems where status = 'degraded'").fetchall() == [
        (
            "specstory-getspecstory/.specstory/history/2026-06-18_15-50-56Z-pull-switch-to-branch.md",
            "4 NUL bytes removed",
        )
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


def test_a_front_matter_time_zone_never_moves_a_document_off_its_file_name_day(archive):
    # "date: 2025-06-24 17:11:14 PDT" in 2025-06-24_17-11-31_….md is a 2025-06-24 document, not 2025-06-25
    named, moved = 0, []
    for path, day, created_at in archive[1].execute("select path, day, created_at from documents"):
        name_date = dates.from_name(path.rsplit("/", 1)[-1].rsplit(".", 1)[0])
        if name_date is None or name_date.precision == dates.MONTH:
            continue
        named += 1
        if day != name_date.day:
            moved.append((path, day, created_at))
    assert named == 219
    # The one left says another day in its front matter (2025-06-26 15:38:59 PDT), which wins.
    research = "humanlayer-thoughts/thoughts/searchable/shared/research/"
    assert moved == [
        (research + "2025-06-30_13-38-43_claude_code_ci_security_review.md", "2025-06-26", "2025-06-26T22:38:59Z")
    ]
    path = research + "2025-06-24_17-11-31_sessionleaves_endpoint_implementation_plan.md"
    assert dated(archive[1], path) == ("2025-06-24", "second", "2025-06-25T00:11:14Z")


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
