"""Seed 000: search_workspace with YYYY-MM and YYYY-MM-DD date ranges, through Python and Datasette."""

import pytest
from conftest import started_datasette

from archivist.errors import ArchivistError
from archivist.queries.catalog import canned_queries
from archivist.workspace import archive_path

FILES = {  # seed 000's scenarios
    # Scenario "Filter by specific day"
    "conversations/2025-11-10/001-brainstorm-feature/conversation.md": "# Brainstorm\n\nA test of the feature idea: authentication.\n",
    "conversations/2025-11-10/002-debug-auth/conversation.md": "# Debug auth\n\nauthentication test failing\n",
    "conversations/2025-11-11/001-plan-redesign/conversation.md": "# Plan\n\nauthentication test redesign feature\n",
    # Scenario "Filter by month (backward compatibility)"
    "conversations/2025-11/001-old-conversation/conversation.md": "# Old\n\nthe old feature test\n",
    "conversations/2025-11-01/001-first-day/conversation.md": "# First\n\nfeature test on the first\n",
    "conversations/2025-11-30/001-last-day/conversation.md": "# Last\n\nfeature test on the last\n",
    # Other months, which a November filter must exclude
    "conversations/2025-10/001-october/conversation.md": "# October\n\nfeature test authentication in october\n",
    "conversations/2025-12-01/001-december/conversation.md": "# December\n\nfeature test authentication in december\n",
    "conversations/2025-11-1/001-malformed-folder/conversation.md": "# Not a date folder\n\nfeature test\n",
    # Not conversations: never returned by search_workspace
    "reports/cmd/report_20251110.md": "# Report\n\nauthentication feature test\n",
    "notes/n.md": "# Note\n\nauthentication feature test\n",
}


def paths(rows):
    return sorted(row["path"] for row in rows)


def test_day_filter_returns_only_that_days_conversations(archive):
    rows = archive.run("search_workspace", {"query": "authentication", "date_range": "2025-11-10"})
    assert paths(rows) == [
        "conversations/2025-11-10/001-brainstorm-feature",
        "conversations/2025-11-10/002-debug-auth",
    ]


def test_month_filter_matches_old_and_new_folders(archive):
    rows = archive.run("search_workspace", {"query": "feature", "date_range": "2025-11"})
    assert paths(rows) == [
        "conversations/2025-11-01/001-first-day",
        "conversations/2025-11-10/001-brainstorm-feature",
        "conversations/2025-11-11/001-plan-redesign",
        "conversations/2025-11-30/001-last-day",
        "conversations/2025-11/001-old-conversation",
    ]


def test_no_filter_searches_every_conversation_in_both_layouts(archive):
    rows = archive.run("search_workspace", {"query": "test"})
    assert paths(rows) == [
        "conversations/2025-10/001-october",
        "conversations/2025-11-01/001-first-day",
        "conversations/2025-11-10/001-brainstorm-feature",
        "conversations/2025-11-10/002-debug-auth",
        "conversations/2025-11-11/001-plan-redesign",
        "conversations/2025-11-30/001-last-day",
        "conversations/2025-11/001-old-conversation",
        "conversations/2025-12-01/001-december",
    ]


def test_a_month_only_conversation_never_matches_a_day_filter(archive):
    rows = archive.run("search_workspace", {"query": "old", "date_range": "2025-11-01"})
    assert rows == []


def test_future_dates_are_valid_and_return_nothing(archive):
    assert archive.run("search_workspace", {"query": "test", "date_range": "2030-01"}) == []


def test_very_old_dates_work(archive):
    assert archive.run("search_workspace", {"query": "test", "date_range": "1999-12-31"}) == []


@pytest.mark.parametrize(
    "bad", ["2025-11-1", "2025/11", "nov", "2025-1", "2025-13", "2025-02-30", "2025-11-10x", "11-2025"]
)
def test_malformed_date_ranges_are_errors_not_empty_results(archive, bad):
    with pytest.raises(ArchivistError) as error:
        archive.run("search_workspace", {"query": "test", "date_range": bad})
    assert error.value.code == "INVALID_DATE_RANGE"
    assert "YYYY-MM" in error.value.message and "YYYY-MM-DD" in error.value.message


@pytest.mark.parametrize("query", ["", " ", "a"])
def test_a_missing_or_one_character_query_is_invalid(archive, query):
    with pytest.raises(ArchivistError) as error:
        archive.run("search_workspace", {"query": query})
    assert error.value.code == "INVALID_QUERY"


def test_results_are_ranked_with_scores_and_highlighted_excerpts(archive):
    rows = archive.run("search_workspace", {"query": "authentication", "date_range": "2025-11-10"})
    assert [row["score"] for row in rows] == sorted((row["score"] for row in rows), reverse=True)
    assert all("<mark>authentication</mark>" in row["excerpt"] for row in rows)
    assert set(rows[0]) == {"id", "conversation", "path", "type", "date", "date_precision", "score", "excerpt"}


def test_conversation_type_and_limit_filter(archive):
    rows = archive.run("search_workspace", {"query": "test", "conversation_type": "debug"})
    assert paths(rows) == ["conversations/2025-11-10/002-debug-auth"]
    assert len(archive.run("search_workspace", {"query": "test", "limit": 3})) == 3
    with pytest.raises(ArchivistError) as error:
        archive.run("search_workspace", {"query": "test", "limit": 101})
    assert error.value.code == "INVALID_PARAMETER"


def test_fts_syntax_in_a_query_is_searched_as_text(archive):
    for query in ['"unbalanced', "feature AND", "NOT", "test*)", "a:b"]:
        archive.run("search_workspace", {"query": query})  # never a raw SQL error


def test_the_description_states_both_formats():
    description = canned_queries()["search_workspace"]["description"]
    assert "YYYY-MM (a month: matches every day of it" in description
    assert "YYYY-MM-DD (that day only)" in description


async def test_datasette_json_gives_the_same_rows(workspace, archive):
    datasette = await started_datasette(archive_path(workspace))
    response = await datasette.client.get(
        "/archive/search_workspace.json?query=feature&date_range=2025-11&_shape=array"
    )
    assert response.status_code == 200
    assert response.json() == archive.run("search_workspace", {"query": "feature", "date_range": "2025-11"})


async def test_datasette_json_answers_400_with_the_error_body(workspace):
    datasette = await started_datasette(archive_path(workspace))
    response = await datasette.client.get("/archive/search_workspace.json?query=test&date_range=2025-11-1")
    assert response.status_code == 400
    body = response.json()
    assert (body["success"], body["code"]) == (False, "INVALID_DATE_RANGE")
    assert body["error"].startswith("❌ Invalid date_range '2025-11-1'")
