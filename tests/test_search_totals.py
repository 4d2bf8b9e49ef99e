"""A search's honest total: how many results hold every word, how many only some, how many were
found only by meaning; the facets and the timeline count the same results; and the orders a list
can be sorted in (relevance, newest, oldest, tokens, cost) over every match."""

from __future__ import annotations

import datetime as dt
import re

import pytest
import sqlite_utils
from click.testing import CliRunner
from conftest import sample_source, started_datasette, write_files
from mcp import Client

from archivist.archive.indexer import index_workspace
from archivist.cli import cli
from archivist.errors import ArchivistError
from archivist.mcp.tools import create_server
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

FIRST_DAY = dt.date(2024, 1, 1)
# notes by the words they hold, each on its own day from FIRST_DAY on
GROUPS = (
    ("alpha beta", 30),  # every word of "alpha beta"
    ("alpha", 250),  # some of them: more than the 100 that the list once stopped at
    ("gamma delta", 120),  # every word of "gamma delta", 100 or more
    ("gamma", 15),  # some of them, not listed, as 100 or more hold every word
)


def note_days() -> dict[str, tuple[str, dt.date]]:
    """Each note's file name, with its words and its day."""
    notes, day = {}, 0
    for words, count in GROUPS:
        for n in range(count):
            date = FIRST_DAY + dt.timedelta(days=day)
            name = f"notes/{date.isoformat()}_12-00-00_{words.replace(' ', '-')}-{n}.md"
            notes[name] = (words, date)
            day += 1
    return notes


@pytest.fixture(scope="module")
def notes_workspace(tmp_path_factory):
    files = {
        name: f"# Note {words} {name[-8:-3]}\n\nSome text about {words}.\n" for name, (words, _) in note_days().items()
    }
    workspace = write_files(tmp_path_factory.mktemp("totals") / "ws", files)
    index_workspace(workspace)
    return workspace


def search(workspace, **params) -> dict:
    with Archive.for_workspace(workspace) as archive:
        return archive.search({"mode": "keyword", **params})


def every_page(workspace, **params) -> list[dict]:
    """Every result of a search, page by page."""
    results, page = [], 1
    while True:
        found = search(workspace, page_size=100, page=page, **params)
        results += found["results"]
        if not found["has_more"]:
            return results
        page += 1


def test_the_total_counts_every_result_and_splits_it_by_the_words_they_hold(notes_workspace):
    found = search(notes_workspace, query="alpha beta")
    assert (found["total"], found["matched"]) == (280, {"all": 30, "some": 250})
    assert found["total_pages"] == 28 and found["has_more"]
    results = every_page(notes_workspace, query="alpha beta")
    assert len(results) == len({result["id"] for result in results}) == 280  # every one can be paged to
    assert [result["matched"] for result in results] == ["all"] * 30 + ["some"] * 250  # every word first
    assert all("beta" in result["title"] for result in results[:30])
    assert not any("beta" in result["title"] for result in results[30:])
    brief = search(notes_workspace, query="alpha beta", output="brief")
    assert brief["matched"] == {"all": 30, "some": 250} and brief["total"] == 280
    assert [result.get("matched") for result in brief["results"]] == [None] * 10  # every word: left out


def test_with_a_hundred_holding_every_word_the_others_are_neither_listed_nor_counted(notes_workspace):
    found = search(notes_workspace, query="gamma delta")
    assert (found["total"], found["matched"]) == (120, {"all": 120, "some": None})
    assert {result["matched"] for result in every_page(notes_workspace, query="gamma delta")} == {"all"}
    assert search(notes_workspace, query="gamma delta", output="brief")["matched"] == {"all": 120}
    one_word = search(notes_workspace, query="gamma")
    assert (one_word["total"], one_word["matched"]) == (135, {"all": 135, "some": None})


def test_the_facets_and_the_timeline_count_what_the_total_counts(notes_workspace):
    # within the 200 results the facets count, they count every one of them, as the total does
    found = search(notes_workspace, query="beta gamma")  # 30 + 135 with some of the words, none with both
    assert (found["total"], found["matched"]) == (165, {"all": 0, "some": 165})
    assert sum(found["facets"]["kind"].values()) == 165
    assert sum(found["facets"]["month"].values()) == 165  # the timeline's bars
    assert sum(found["facets"]["day"].values()) == 165
    # beyond them, they count the first 200, and the page says so
    wide = search(notes_workspace, query="alpha beta")
    assert sum(wide["facets"]["kind"].values()) == 200


def days(results: list[dict]) -> list[str]:
    return [result["date"] for result in results]


@pytest.mark.parametrize("mode", ["keyword", "recent"])
def test_newest_and_oldest_first_order_every_match_not_only_the_best(notes_workspace, mode):
    query = "alpha" if mode == "keyword" else ""
    everything = [date.isoformat() for words, date in note_days().values() if mode == "recent" or "alpha" in words]
    oldest = search(notes_workspace, query=query, mode=mode, sort="oldest", page_size=20)
    assert days(oldest["results"]) == everything[:20] and oldest["sort"] == "oldest"
    assert [result["rank"] for result in oldest["results"]] == list(range(1, 21))
    newest = search(notes_workspace, query=query, mode=mode, sort="newest", page_size=20, page=2)
    assert days(newest["results"]) == everything[::-1][20:40]
    assert newest["total"] == oldest["total"] == len(everything)
    last = search(
        notes_workspace, query=query, mode=mode, sort="oldest", page_size=100, page=oldest["total"] // 100 + 1
    )
    assert days(last["results"])[-1] == everything[-1]


def test_a_sort_keeps_the_split_and_what_has_no_date_comes_last(tmp_path):
    workspace = write_files(
        tmp_path / "ws",
        {"notes/2025-03-01_09-00-00_dated.md": "# Dated\n\nkiwi fruit\n", "notes/undated.md": "# Undated\n\nkiwi\n"},
    )
    index_workspace(workspace)
    for sort in ("newest", "oldest"):
        found = search(workspace, query="kiwi fruit", sort=sort)
        assert [result["title"] for result in found["results"]] == ["Dated", "Undated"], sort
        assert found["matched"] == {"all": 1, "some": 1}


@pytest.fixture(scope="module")
def logs_workspace(tmp_path_factory):
    workspace = write_files(tmp_path_factory.mktemp("sorted") / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    kinds = ("claude-code", "codex", "gemini-cli", "aider", "opencode", "cline", "goose", "llm")
    index_workspace(workspace, log_sources=[(kind, sample_source(kind)) for kind in kinds])
    return workspace


def test_tokens_and_cost_sort_the_sessions_that_used_the_most_first(logs_workspace):
    db = sqlite_utils.Database(archive_path(logs_workspace))
    tokens, cost = {}, {}
    for row in db.query(
        "select document_id, sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)"
        " + coalesce(cache_write_tokens, 0) + coalesce(cache_read_tokens, 0)) as tokens, sum(price) as cost"
        " from messages group by document_id"
    ):
        if row["tokens"]:
            tokens[row["document_id"]] = row["tokens"]
        if row["cost"] is not None:
            cost[row["document_id"]] = row["cost"]
    assert len(tokens) >= 6 and len(cost) >= 4
    everything = search(logs_workspace, mode="recent", page_size=100)["total"]
    by_tokens = search(logs_workspace, mode="recent", sort="tokens", page_size=100)["results"]
    ids = [result["id"] for result in by_tokens]
    assert len(ids) == everything
    assert [tokens[id] for id in ids[: len(tokens)]] == sorted(tokens.values(), reverse=True)
    assert set(ids[len(tokens) :]).isdisjoint(tokens)  # what used no tokens comes last
    by_cost = [result["id"] for result in search(logs_workspace, mode="recent", sort="cost", page_size=100)["results"]]
    assert [round(cost[id], 9) for id in by_cost[: len(cost)]] == sorted(
        (round(c, 9) for c in cost.values()), reverse=True
    )
    # with words: only the matches, in the same order
    matches = search(logs_workspace, query="the", sort="tokens", page_size=100)["results"]
    used = [tokens[result["id"]] for result in matches if result["id"] in tokens]
    assert used == sorted(used, reverse=True) and len(used) >= 3


def test_a_sort_that_does_not_exist_is_a_clear_error_everywhere(notes_workspace):
    with Archive.for_workspace(notes_workspace) as archive, pytest.raises(ArchivistError) as caught:
        archive.search({"query": "alpha", "sort": "size"})
    assert caught.value.code == "INVALID_PARAMETER" and "sort" in str(caught.value)
    ran = CliRunner().invoke(cli, ["search", str(notes_workspace), "alpha", "--sort", "size"])
    assert ran.exit_code == 1 and "Unknown sort 'size'" in ran.output and "INVALID_PARAMETER" in ran.output
    assert isinstance(ran.exception, SystemExit)  # a clean exit, no traceback


async def test_the_mcp_tool_and_the_api_answer_the_split_and_the_sort(notes_workspace):
    async with Client(create_server(archive_path(notes_workspace), notes_workspace)) as client:
        result = await client.call_tool("search", {"query": "alpha beta", "mode": "keyword", "sort": "oldest"})
        assert not result.is_error
        body = result.structured_content
        assert (body["total"], body["matched"], body["sort"]) == (280, {"all": 30, "some": 250}, "oldest")
        bad = await client.call_tool("search", {"query": "alpha", "sort": "biggest"})
        assert bad.is_error and bad.structured_content["code"] == "INVALID_PARAMETER"
    datasette = await started_datasette(archive_path(notes_workspace))
    response = await datasette.client.get("/api/search", params={"query": "alpha", "sort": "<script>"})
    assert response.status_code == 400 and response.json()["code"] == "INVALID_PARAMETER"
    assert response.headers["content-type"].startswith("application/json")
    page = await datasette.client.get("/search", params={"query": "alpha", "sort": "<script>"})
    assert page.status_code == 400 and "Unknown sort &#39;&lt;script&gt;&#39;" in page.text


async def test_the_search_page_says_the_split_marks_partial_matches_and_links_each_sort(notes_workspace):
    datasette = await started_datasette(archive_path(notes_workspace))
    page = (await datasette.client.get("/search", params={"query": "alpha beta", "mode": "keyword"})).text
    assert "280</strong> results" in page and "(30 with every word, 250 with some)" in page
    assert 'aria-label="Sort"' in page and "<strong>relevance</strong>" in page
    links = dict(re.findall(r'<a href="([^"]*sort=(\w+)[^"]*)"', page)[i][::-1] for i in range(4))
    assert set(links) == {"newest", "oldest", "tokens", "cost"}
    oldest = (await datasette.client.get(links["oldest"].replace("&amp;", "&"))).text
    first_day = FIRST_DAY.isoformat()
    assert re.search(r'class="archivist-hit".*?<time>([^<]*)</time>', oldest, re.S)[1] == first_day
    assert "<strong>oldest</strong>" in oldest
    partial = (
        await datasette.client.get("/search", params={"query": "alpha beta", "mode": "keyword", "page": "4"})
    ).text
    assert partial.count(">some words</span>") == 10  # the fourth page: only some of the words


@pytest.mark.parametrize("query", ["authentication", "proxy timeout", "kubernetes deployment rollback"])
def test_a_hybrid_total_is_every_word_some_words_and_meaning_each_result_says_which(embedded_sample, query):
    with Archive.for_workspace(embedded_sample) as archive:
        found = archive.search({"query": query, "page_size": 100})
        semantic = archive.search({"query": query, "mode": "semantic", "page_size": 100})
        keyword = archive.search({"query": query, "mode": "keyword", "page_size": 100})
    assert set(found["matched"]) == {"all", "some", "meaning"}
    assert sum(found["matched"].values()) == found["total"] == len(found["results"])
    labels = [result["matched"] for result in found["results"]]
    assert {label: labels.count(label) for label in found["matched"]} == found["matched"]
    # every word and some words are the keyword search's; meaning, the semantic one's others
    assert (found["matched"]["all"], found["matched"]["some"]) == (
        keyword["matched"]["all"],
        keyword["matched"]["some"],
    )
    by_words = {result["id"] for result in keyword["results"]}
    assert {r["id"] for r in found["results"] if r["matched"] == "meaning"} == {
        r["id"] for r in semantic["results"] if r["id"] not in by_words
    }
    assert semantic["matched"] == {"meaning": semantic["total"]}
