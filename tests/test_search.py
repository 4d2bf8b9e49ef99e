"""The unified faceted search (docs/contract.md: canned queries, `search`): seeds 002 (faceted memory search) and 004
(search over tracker records, REST endpoint)."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from conftest import started_datasette

from archivist.errors import ArchivistError
from archivist.queries import declarations
from archivist.queries.catalog import sql_for
from archivist.workspace import archive_path

NOW = dt.datetime.now(dt.UTC)


def _ts(year: int, month: int, day: int) -> float:
    return dt.datetime(year, month, day, tzinfo=dt.UTC).timestamp()


def _ago(days: int) -> str:
    return (NOW - dt.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _lines(*rows: dict) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


# Seed 002's integration data, as agent memories.
SEED_002 = [
    {
        "content": "Python async testing guide",
        "content_hash": "hash1",
        "tags": ["python", "testing", "async"],
        "memory_type": "note",
        "created_at": _ts(2024, 6, 1),
    },
    {
        "content": "JavaScript testing tutorial",
        "content_hash": "hash2",
        "tags": ["javascript", "testing"],
        "memory_type": "note",
        "created_at": _ts(2024, 7, 1),
    },
    {
        "content": "Task: Review Python code",
        "content_hash": "hash3",
        "tags": ["python", "review"],
        "memory_type": "task",
        "created_at": _ts(2024, 8, 1),
    },
]

# Seed 004's tracker: features carry no timestamp; bugs and tests do.
RECORDS = [
    {
        "entity_type": "product",
        "entity_id": 598,
        "title": "Canvas editor",
        "body": "Design tool for media frames",
        "product_id": 598,
    },
    {
        "entity_type": "feature",
        "entity_id": 12345,
        "title": "Borders & Corners on Media & Frames",
        "body": "Rounded corners and border styles for images and frames.",
        "product_id": 598,
        "timestamp": None,
    },
    {
        "entity_type": "feature",
        "entity_id": 12346,
        "title": "Video mode",
        "body": "Play video inside frames.",
        "product_id": 601,
    },
    {
        "entity_type": "bug",
        "entity_id": 2342289,
        "title": "'Presentation' design has no 'Border style' option",
        "body": "The border picker is missing in presentation designs.",
        "product_id": 601,
        "timestamp": _ago(2),
    },
    {
        "entity_type": "bug",
        "entity_id": 2342290,
        "title": "Borders vanish after export",
        "body": "Exported PDFs lose every border.",
        "product_id": 700,
        "timestamp": _ago(40),
    },
    {
        "entity_type": "test",
        "entity_id": 901,
        "title": "Regression run: borders and corners",
        "body": "Exploratory test of frame borders.",
        "product_id": 598,
        "timestamp": _ago(1),
    },
    {
        "entity_type": "test",
        "entity_id": 902,
        "title": "Video mode smoke test",
        "body": "Checks video playback.",
        "product_id": 601,
        "timestamp": _ago(3),
    },
]

FILES = {
    "memories/faceted.jsonl": _lines(
        *SEED_002,
        {
            "content": "Python packaging notes without a date",
            "content_hash": "undated",
            "tags": ["python"],
            "memory_type": "note",
        },
        {
            "content": "Python testing checklist for late July",
            "content_hash": "late-july",
            "tags": ["python", "testing"],
            "memory_type": "reference",
            "created_at": "2024-07-31T18:30:00Z",
        },
    ),
    "records/testio.jsonl": _lines(*RECORDS),
    "records/more.csv": "entity_type,entity_id,title,body,product_id,timestamp\n"
    "bug,777,Border radius ignored on Safari,Safari drops the border radius.,598,2024-06-20T08:00:00Z\n",
    "conversations/2024-06/001-testing-plan/conversation.md": "# Testing plan for borders\n\nWe need testing for frame borders.\n",
    "conversations/2024-06-15/002-debug-borders/conversation.md": "# Debug: borders lost\n\nThe border export bug again.\n\n"
    + "We traced every step of the export pipeline, from layout to the PDF writer, and compared outputs. " * 8,
    "notes/handbook.md": "# Handbook\n\nNothing about the topic at all.\n",
}


@pytest.fixture(scope="module")
def embedded(workspace: Path) -> Path:
    from archivist.semantic.embeddings import embed_workspace

    embed_workspace(workspace)
    return workspace


def ids(response: dict) -> list[str]:
    return [result["entity_id"] for result in response["results"]]


def error_of(archive, params: dict) -> ArchivistError:
    with pytest.raises(ArchivistError) as caught:
        archive.search(params)
    return caught.value


# --- seed 002: faceted search over memories ---------------------------------------------


def test_seed_002_integration_case(archive, embedded):
    """Seed 002's end-to-end case: query "testing", tags python/testing, May to July 2024, notes.

    The seed's comment expects only hash1 for "python OR testing", but hash2 (a note
    tagged testing, created 2024-07-01) meets every facet it names when tags are ORed;
    with match_all (python AND testing) hash1 alone does. Both are checked here.
    """
    facets = {
        "query": "testing",
        "mode": "faceted",
        "tags": ["python", "testing"],
        "start_date": "2024-05-01",
        "end_date": "2024-07-31",
        "types": "note",
        "page": 1,
        "page_size": 10,
    }
    assert sorted(ids(archive.search({**facets, "match_all": False}))) == ["hash1", "hash2"]
    result = archive.search({**facets, "match_all": True})
    assert ids(result) == ["hash1"]
    assert result["total"] == 1
    assert result["filters"]["tags"] == ["python", "testing"]
    assert result["filters"]["types"] == ["note"]
    assert result["filters"]["match_all"] is True
    # hash3 is python but a task; hash2 is out of a June-only range
    june = archive.search({**facets, "end_date": "2024-06-30"})
    assert ids(june) == ["hash1"]


def test_seed_002_all_facets_every_result_matches_them(archive, embedded):
    result = archive.search(
        {
            "query": "test query",
            "mode": "faceted",
            "tags": "python,testing",
            "start_date": "2024-01-01",
            "end_date": "2024-12-31",
            "types": "note",
            "page_size": 10,
        }
    )
    assert len(result["results"]) > 0
    assert result["total"] >= len(result["results"])
    for memory in result["results"]:
        assert memory["entity_type"] == "note"
        assert {"python", "testing"} & set(memory["tags"])


def test_seed_002_without_query_sorts_by_recency(archive):
    result = archive.search({"query": "", "mode": "faceted", "tags": "python", "start_date": "2024-01-01"})
    stamps = [memory["created_at"] for memory in result["results"]]
    assert stamps == sorted(stamps, reverse=True)
    # the undated python memory is excluded by the time filter
    assert ids(result) == ["hash3", "late-july", "hash1"]
    everything = archive.search({"mode": "faceted", "tags": "python"})
    assert ids(everything)[-1] == "undated"  # no date: last when nothing filters by time


def test_tags_or_by_default_and_with_match_all(archive):
    any_tag = archive.search({"mode": "tag", "tags": "python,testing"})
    assert set(ids(any_tag)) == {"hash1", "hash2", "hash3", "undated", "late-july"}
    all_tags = archive.search({"mode": "tag", "tags": "python,testing", "match_all": "true"})
    assert set(ids(all_tags)) == {"hash1", "late-july"}
    three = archive.search({"mode": "tag", "tags": "python, testing, #ASYNC", "match_all": True})
    assert ids(three) == ["hash1"]


def test_pagination_metadata(archive):
    first = archive.search({"mode": "recent", "page_size": 3})
    total = first["total"]
    assert total == 16  # every document
    assert (first["page"], first["page_size"], first["total_pages"], first["has_more"]) == (1, 3, 6, True)
    seen = []
    for page in range(1, 7):
        response = archive.search({"mode": "recent", "page_size": 3, "page": page})
        seen += [result["id"] for result in response["results"]]
        assert [r["rank"] for r in response["results"]] == list(range((page - 1) * 3 + 1, min(page * 3, total) + 1))
    assert len(seen) == len(set(seen)) == total
    last = archive.search({"mode": "recent", "page_size": 3, "page": 6})
    assert last["has_more"] is False and len(last["results"]) == 1
    beyond = archive.search({"mode": "recent", "page_size": 3, "page": 7})
    assert beyond["results"] == [] and beyond["total"] == total and beyond["has_more"] is False
    assert archive.search({"mode": "recent", "limit": 4})["page_size"] == 4


# --- seed 004: search over tracker records ------------------------------------------------


def test_seed_004_ranked_results_from_every_entity_type(archive):
    result = archive.search({"query": "borders", "mode": "keyword"})
    kinds = {(r["kind"], r["entity_type"]) for r in result["results"]}
    assert {("record", "feature"), ("record", "bug"), ("record", "test"), ("conversation", "debug")} <= kinds
    scores = [r["score"] for r in result["results"]]
    assert scores == sorted(scores, reverse=True)
    assert [r["rank"] for r in result["results"]] == list(range(1, len(scores) + 1))
    top = result["results"][0]
    assert {"entity_type", "entity_id", "title", "score", "rank", "kind", "id", "date", "excerpt", "path"} <= set(top)
    assert result["query"] == "borders" and result["total"] == len(result["results"])
    assert any("<mark>" in r["excerpt"] for r in result["results"])


def test_seed_004_entities_and_product_filters(archive):
    result = archive.search({"query": "borders", "mode": "keyword", "entities": "feature,bug"})
    assert {r["entity_type"] for r in result["results"]} == {"feature", "bug"}
    assert set(ids(result)) == {"12345", "2342289", "2342290", "777"}
    as_json = archive.search({"query": "borders", "mode": "keyword", "entities": '["Feature", "bug"]'})
    assert as_json["results"] == result["results"]
    scoped = archive.search({"query": "borders", "mode": "keyword", "product_ids": "598,601"})
    assert {r["product_id"] for r in scoped["results"]} == {598, 601}
    assert "2342290" not in ids(scoped)  # product 700
    kinds = archive.search({"query": "borders", "mode": "keyword", "entities": "conversation"})
    assert {r["kind"] for r in kinds["results"]} == {"conversation"}


def test_seed_004_dates_iso_and_natural_language(archive):
    last_week = archive.search({"query": "borders", "mode": "keyword", "start_date": "last week"})
    assert set(ids(last_week)) == {"2342289", "901"}  # 2 and 1 days ago; not 40 days ago
    until_today = archive.search(
        {"query": "borders", "mode": "keyword", "start_date": "2024-01-01", "end_date": "today"}
    )
    assert "2342290" in ids(until_today)
    # features have no timestamp: any time filter excludes them
    assert "12345" not in ids(until_today)
    yesterday = archive.search(
        {"mode": "recent", "entities": "record", "start_date": "yesterday", "end_date": "yesterday"}
    )
    assert ids(yesterday) == ["901"]
    june = archive.search({"query": "border", "mode": "keyword", "start_date": "2024-06", "end_date": "2024-06"})
    # the CSV bug by its tracker id, and the June conversations by their ids in the archive
    conversations = {r["id"] for r in june["results"] if r["kind"] == "conversation"}
    assert set(ids(june)) == {"777", *conversations} and len(conversations) == 2
    assert {r["path"] for r in june["results"] if r["kind"] == "conversation"} == {
        "conversations/2024-06/001-testing-plan",
        "conversations/2024-06-15/002-debug-borders",
    }


def test_month_only_dates_need_the_whole_month(archive):
    whole = archive.search(
        {"mode": "recent", "entities": "conversation", "start_date": "2024-06-01", "end_date": "2024-06-30"}
    )
    assert len(whole["results"]) == 2
    part = archive.search(
        {"mode": "recent", "entities": "conversation", "start_date": "2024-06-10", "end_date": "2024-06-30"}
    )
    assert [r["path"] for r in part["results"]] == ["conversations/2024-06-15/002-debug-borders"]


def test_datetime_bounds_cut_inside_a_day(archive):
    evening = archive.search({"mode": "recent", "tags": "testing", "start_date": "2024-07-31T18:00:00Z"})
    assert ids(evening) == ["late-july"]
    later = archive.search({"mode": "recent", "tags": "testing", "start_date": "2024-07-31T19:00:00"})
    assert ids(later) == []
    before = archive.search({"mode": "recent", "tags": "testing", "end_date": "2024-07-31T18:00:00Z"})
    assert ids(before) == ["hash2", "hash1"]
    assert before["filters"]["end_date"] == "2024-07-31T18:00:00Z"


def test_seed_004_empty_query_is_a_helpful_error(archive):
    error = error_of(archive, {"query": ""})
    assert error.code == "INVALID_QUERY"
    assert error.message.startswith("❌ Search query cannot be empty")
    assert "ℹ️" in error.message and "💡" in error.message
    assert error_of(archive, {"query": "b", "mode": "keyword"}).code == "INVALID_QUERY"
    assert error_of(archive, {"query": "  ", "mode": "semantic"}).code == "INVALID_QUERY"


def test_seed_004_invalid_fts_syntax_is_a_friendly_error(archive):
    for query in ['"unterminated', "borders AND", "NOT", "nosuchcolumn: x", "(borders"]:
        error = error_of(archive, {"query": query, "mode": "keyword", "match_mode": "raw"})
        assert error.code == "INVALID_SEARCH_SYNTAX", query
        assert error.message.startswith("❌ Invalid search syntax")
        assert "fts5:" not in error.message and "sqlite" not in error.message.lower()


def test_raw_mode_passes_fts5_syntax_and_simple_mode_escapes_it(archive):
    def found(query, mode="raw"):
        return {
            r["entity_id"] or r["path"]
            for r in archive.search({"query": query, "mode": "keyword", "match_mode": mode})["results"]
        }

    assert found('"border style"') == {"2342289", "12345"}  # "border styles" stems to the phrase
    assert found("vide*") == {"12346", "902"}
    assert found("borders NOT export") == found("borders") - found("export")
    assert found("video OR presentation") == {"12346", "902", "2342289"}
    assert found("video AND smoke") == {"902"}
    # simple mode treats the same characters as words
    assert found('"border style" OR (', "simple") >= {"2342289", "12345"}
    assert found("vide*", "simple") == set()


def test_invalid_inputs_are_clear_errors(archive):
    error = error_of(archive, {"query": "borders", "entities": "feature,epic"})
    assert error.code == "INVALID_ENTITY_TYPE"
    assert "'epic'" in error.message
    assert "conversation, report, memory, record, note, product, feature, test, bug" in error.message
    assert error_of(archive, {"mode": "recent", "start_date": "the day after never"}).code == "INVALID_DATE"
    assert error_of(archive, {"mode": "recent", "end_date": "2024-13"}).code == "INVALID_DATE"
    reversed_range = error_of(archive, {"mode": "recent", "start_date": "2024-08-01", "end_date": "2024-07-01"})
    assert reversed_range.code == "INVALID_DATE" and "after" in reversed_range.message
    for params in (
        {"page": "0"},
        {"page": "x"},
        {"page_size": "101"},
        {"limit": "0"},
        {"limit": "101"},
        {"page_size": "5", "limit": "6"},
        {"product_ids": "598,abc"},
        {"match_all": "maybe"},
        {"min_similarity": "2"},
    ):
        assert error_of(archive, {"mode": "recent", **params}).code == "INVALID_PARAMETER", params
    assert error_of(archive, {"query": "borders", "mode": "fuzzy"}).code == "INVALID_PARAMETER"
    assert error_of(archive, {"query": "borders", "match_mode": "regex"}).code == "INVALID_PARAMETER"
    assert error_of(archive, {"mode": "tag"}).code == "INVALID_PARAMETER"
    assert error_of(archive, {"mode": "similar"}).code == "INVALID_PARAMETER"
    assert error_of(archive, {"mode": "similar", "document": "no/such/file.md"}).code == "DOCUMENT_NOT_FOUND"
    assert error_of(archive, {"query": "borders", "colour": "red"}).code == "INVALID_PARAMETER"


# --- modes -----------------------------------------------------------------------------------


def test_hybrid_is_the_default_and_finds_by_meaning(archive, embedded):
    hybrid = archive.search({"query": "rounded corners on pictures"})
    assert hybrid["mode"] == "hybrid"
    assert ids(hybrid)[0] == "12345"
    semantic = archive.search({"query": "picture frame outlines", "mode": "semantic", "entities": "feature"})
    assert {r["entity_type"] for r in semantic["results"]} == {"feature"}
    assert ids(semantic)[0] == "12345"
    # found by meaning, not by words: the excerpt is the best passage, without highlights
    assert all("<mark>" not in r["excerpt"] and r["excerpt"] for r in semantic["results"])
    similarities = [r["score"] for r in semantic["results"]]
    assert similarities == sorted(similarities, reverse=True)
    threshold = (similarities[0] + similarities[-1]) / 2
    strict = archive.search({"query": "picture frame outlines", "mode": "semantic", "min_similarity": threshold})
    assert strict["results"] and all(r["score"] >= threshold for r in strict["results"])
    assert strict["total"] < archive.search({"query": "picture frame outlines", "mode": "semantic"})["total"]


def test_similar_scan_recent_modes(archive, embedded):
    feature = archive.search({"query": "borders corners", "mode": "keyword", "entities": "feature"})["results"][0]
    similar = archive.search({"mode": "similar", "document": str(feature["id"])})
    assert feature["id"] not in [r["id"] for r in similar["results"]]
    assert similar["results"] and all(-1 <= r["score"] <= 1 for r in similar["results"])
    by_path = archive.search({"mode": "similar", "document": feature["path"], "entities": "memory"})
    assert {r["kind"] for r in by_path["results"]} == {"memory"}
    scan = archive.search({"query": "border", "mode": "scan"})
    full = archive.search({"query": "border"})
    assert [r["id"] for r in scan["results"]] == [r["id"] for r in full["results"]]
    assert max(len(r["excerpt"]) for r in scan["results"]) < max(len(r["excerpt"]) for r in full["results"])
    recent = archive.search({"mode": "recent", "query": "video"})
    assert ids(recent) == ["902", "12346"]  # dated first (newest first), undated last


def test_facets_count_every_match(archive):
    result = archive.search({"query": "borders", "mode": "keyword"})
    facets = result["facets"]
    assert sum(facets["kind"].values()) == result["total"]
    assert facets["kind"]["record"] == 5
    assert facets["type"]["bug"] == 3
    assert facets["product_id"] == {"598": 3, "601": 1, "700": 1}
    memories = archive.search({"mode": "recent", "entities": "memory"})
    assert memories["facets"]["tags"]["python"] == 4
    assert memories["facets"]["month"]["2024-07"] == 2


def test_ingested_memories_and_records_carry_their_fields(archive):
    memory = archive.search({"mode": "tag", "tags": "async"})["results"][0]
    assert (memory["kind"], memory["entity_type"], memory["entity_id"]) == ("memory", "note", "hash1")
    assert memory["tags"] == ["python", "testing", "async"] and memory["created_at"] == "2024-06-01T00:00:00Z"
    feature = archive.search({"query": "corners", "mode": "keyword", "entities": "feature"})["results"][0]
    assert (feature["entity_id"], feature["product_id"], feature["date"], feature["created_at"]) == (
        "12345",
        598,
        None,
        None,
    )
    csv_bug = archive.search({"query": "safari", "mode": "keyword"})["results"][0]
    assert (csv_bug["entity_type"], csv_bug["entity_id"], csv_bug["product_id"]) == ("bug", "777", 598)
    assert csv_bug["created_at"] == "2024-06-20T08:00:00Z"


def test_query_plan_filters_inside_the_fts_match(archive):
    """Filters are FTS words: the documents table is only read by id, never scanned."""
    params = {name: "" for name in declarations.QUERIES["search"].sql_params}
    for case in (
        {"query": "borders", "mode": "keyword", "entities": "bug", "start_date": "2024-01", "product_ids": "598"},
        {"mode": "recent", "tags": "python,testing", "match_all": "true"},
    ):
        plan = archive.conn.execute("explain query plan " + sql_for("search"), {**params, **case}).fetchall()
        details = [row[3] for row in plan]
        assert not [detail for detail in details if re.fullmatch(r"SCAN (d|documents)", detail)], details
        assert any("VIRTUAL TABLE INDEX" in detail for detail in details)


# --- REST ------------------------------------------------------------------------------------


async def test_rest_search_returns_exactly_what_the_search_returns(archive, workspace, embedded):
    datasette = await started_datasette(archive_path(workspace))
    for query_string, params in (
        ("query=borders&entities=feature,bug", {"query": "borders", "entities": "feature,bug"}),
        (
            "query=borders&entities=feature&entities=bug&mode=keyword",
            {"query": "borders", "entities": "feature,bug", "mode": "keyword"},
        ),
        (
            "query=video%20mode&product_ids=598,601&start_date=last%20week",
            {"query": "video mode", "product_ids": "598,601", "start_date": "last week"},
        ),
        (
            "mode=faceted&tags=python,testing&match_all=true",
            {"mode": "faceted", "tags": "python,testing", "match_all": "true"},
        ),
    ):
        response = await datasette.client.get("/api/search?" + query_string)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("application/json")
        assert response.json() == archive.search({**params, "output": "brief"})  # the MCP tool's default
        full = await datasette.client.get("/api/search?" + query_string + "&output=full")
        assert full.json() == archive.search({**params, "output": "full"}) == archive.search(params)
    bad = await datasette.client.get("/api/search?query=borders&entities=feature,epic")
    assert bad.status_code == 400
    assert bad.json()["code"] == "INVALID_ENTITY_TYPE" and bad.json()["success"] is False
    empty = await datasette.client.get("/api/search?query=")
    assert empty.status_code == 400 and empty.json()["code"] == "INVALID_QUERY"
    syntax = await datasette.client.get("/api/search?query=borders%20AND&match_mode=raw&mode=keyword")
    assert syntax.status_code == 400 and syntax.json()["code"] == "INVALID_SEARCH_SYNTAX"
    unknown = await datasette.client.get("/api/search?query=borders&entity=bug")
    assert unknown.status_code == 400 and "entity" in unknown.json()["error"]
    # the canned query itself answers with the same response, one JSON row
    canned = await datasette.client.get("/archive/search.json?query=borders&entities=feature,bug&_shape=array")
    assert json.loads(canned.json()[0]["response"]) == archive.search({"query": "borders", "entities": "feature,bug"})


async def test_the_search_page_shows_the_response_as_indented_json(workspace):
    datasette = await started_datasette(archive_path(workspace))
    page = await datasette.client.get("/archive/search?query=borders&mode=keyword&entities=bug")
    assert page.status_code == 200
    assert '<pre class="archivist-json">' in page.text
    assert (
        "&#34;entity_type&#34;: &#34;bug&#34;" in page.text or "&quot;entity_type&quot;: &quot;bug&quot;" in page.text
    )
    bad = await datasette.client.get("/archive/search?query=borders&entities=epic")
    assert bad.status_code == 400 and "Invalid entity type" in bad.text


def test_words_shaped_like_filter_words_only_match_text(archive):
    # documents of product 598 carry the filter word p598, memories kmemory, June 2024 y2024
    for query in ("p598", "kmemory", "y2024", "m202406 p598"):
        assert archive.search({"query": query, "mode": "keyword"})["total"] == 0, query
    assert archive.search({"query": "p598", "mode": "keyword", "match_mode": "raw"})["total"] == 0
