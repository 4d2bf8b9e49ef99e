"""The some-words pass leaves out the words that more than half the documents hold: BM25 weighs them nothing."""

from __future__ import annotations

import json

import pytest

from archivist.archive.indexer import index_workspace
from archivist.queries.expressions import search_words, weighed_terms
from archivist.queries.runner import Archive
from archivist.queries.terms import fts_query


@pytest.fixture(scope="module")
def large_workspace(tmp_path_factory):
    """1,200 notes that all hold "the" and "printer"; a few hold "duplex" or "toner" besides, none both."""
    root = tmp_path_factory.mktemp("weightless")
    notes = root / "notes"
    notes.mkdir()
    for number in range(1200):
        extra = " duplex" if number % 100 == 7 else " toner" if number % 150 == 11 else ""
        (notes / f"note-{number:04d}.md").write_text(f"# Note {number}\n\nThe printer note {number}{extra}.\n")
    index_workspace(root)
    return root


def test_a_word_most_documents_hold_is_left_out_of_the_some_words_pass(large_workspace):
    with Archive.for_workspace(large_workspace) as archive:
        answer = archive.search({"query": "the printer duplex toner", "mode": "keyword", "page_size": 100})
        alone = archive.search({"query": "duplex toner", "mode": "keyword", "page_size": 100})
    # none holds every word; those with duplex (12) or toner (8) hold some that weigh
    assert answer["matched"] == {"all": 0, "some": 20} and answer["total"] == 20
    assert {result["id"] for result in answer["results"]} == {result["id"] for result in alone["results"]}
    assert all(result["matched"] == "some" for result in answer["results"])


def test_every_word_still_counts_words_most_documents_hold(large_workspace):
    with Archive.for_workspace(large_workspace) as archive:
        answer = archive.search({"query": "the printer", "mode": "keyword", "output": "brief"})
    assert answer["total"] == 1200 and answer["matched"] == {"all": 1200}


def test_a_small_archive_lists_every_document_with_some_words(make_workspace):
    workspace = make_workspace(
        {
            "notes/a.md": "# A\n\nThe printer jams.\n",
            "notes/b.md": "# B\n\nThe printer prints.\n",
            "notes/c.md": "# C\n\nThe duplex unit.\n",
        }
    )
    index_workspace(workspace)
    with Archive.for_workspace(workspace) as archive:
        answer = archive.search({"query": "printer duplex", "mode": "keyword"})
    assert answer["matched"] == {"all": 0, "some": 3}


def test_only_several_plain_words_of_a_keyword_ranking_are_weighed():
    assert json.loads(weighed_terms("the printer p95", "all", "keyword")) == ['"the"', '"printer"']
    assert weighed_terms("printer", "all", "keyword") == "[]"
    assert weighed_terms("the printer", "raw", "keyword") == "[]"
    assert weighed_terms("the printer", "all", "semantic") == "[]"
    assert weighed_terms(None, None, None) == "[]"


def test_words_left_out_leave_an_expression_that_matches_nothing_when_none_is_left():
    assert fts_query("the printer", "any", leave_out=frozenset({'"the"'})) == '"printer"'
    assert fts_query("the", "any", leave_out=frozenset({'"the"'})) == '""'


def test_a_weightless_list_of_the_wrong_type_is_ignored():
    spec = {"query": "the printer", "ranking": "keyword"}
    plain = json.loads(search_words(json.dumps(spec)))
    for hostile in ("the", 3, None, {"a": 1}, [3, None]):
        assert json.loads(search_words(json.dumps({**spec, "weightless": hostile}))) == plain
    left = json.loads(search_words(json.dumps({**spec, "weightless": ['"the"']})))
    assert '"the"' not in left["some_words"] and '"the"' in left["every_word"] and '"the"' in left["highlight"]
