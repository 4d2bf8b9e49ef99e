"""Search as you type: a keystroke's answer (GET /search?live=1) through the real app on the sample archive."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import urlencode

import pytest
from conftest import SAMPLE, started_datasette

from archivist.archive.indexer import index_workspace
from archivist.queries.rules import MAX_QUERY_CHARS
from archivist.web.search_page import SHORTEST_PREFIX, keystroke
from archivist.workspace import archive_path

HIT_RE = re.compile(r'<li class="archivist-hit" data-id="(\d+)"')


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    workspace = tmp_path_factory.mktemp("live") / "sample"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))
    index_workspace(workspace)
    return workspace


@pytest.fixture
async def app(sample: Path):
    return await started_datasette(archive_path(sample))


async def page(app, params: dict[str, str] | str) -> tuple[int, str]:
    query = params if isinstance(params, str) else urlencode(params)
    response = await app.client.get("/search?" + query)
    return response.status_code, response.text


def hits(html: str) -> list[str]:
    return HIT_RE.findall(html)


# --- what a keystroke asks ---------------------------------------------------------------


def test_the_last_word_is_a_prefix_and_the_words_before_it_whole():
    assert keystroke("proxy timeo") == ('"proxy" AND ("timeo"* OR "time")', "raw")
    assert keystroke("proxy tim") == ('"proxy" AND "tim"*', "raw")
    assert keystroke("authen").query.startswith('("authen"* OR ')


def test_a_prefix_longer_than_its_stem_also_matches_its_shorter_forms_as_words():
    forms = keystroke("authenticat").query
    assert '"authent"' in forms and '"auth"' in forms and '"aut"' not in forms


def test_quotes_are_doubled_and_punctuation_only_words_dropped():
    assert keystroke('say "hi there" it"s -- ') == ('"say" AND "hi there" AND "it""s"*', "raw")
    assert keystroke("*** ((( --") == ("", "simple")


def test_a_letter_just_typed_waits_until_it_is_a_prefix():
    assert keystroke("proxy t") == ('"proxy"', "raw")
    assert keystroke("proxy re") == ('"proxy"', "raw")  # two letters are a prefix of too much of the index
    assert keystroke("re") == ('"re"', "raw")  # alone, a whole word (the page's script waits for three)
    assert keystroke("proxy red") == ('"proxy" AND "red"*', "raw")


@pytest.mark.parametrize("text", ["p95 latenc", "y2024", "krec", "proxy kmemo"])
def test_a_word_that_could_find_a_filter_word_keeps_the_query_as_typed(text):
    assert keystroke(text) == (text, "simple")


def test_a_query_too_long_for_its_prefix_is_searched_as_typed():
    text = "word " * 63 + "authenticat"
    found = keystroke(text)
    assert len(found.query) <= MAX_QUERY_CHARS and len(found.query.split()) <= 64
    assert found.query.endswith('"authenticat"*') or found.match_mode == "simple"


# --- the keystroke's answer ----------------------------------------------------------------


async def test_a_keystrokes_answer_is_the_results_alone_with_the_hits_the_full_page_shows(app):
    typed = "authen"
    status, live = await page(app, {"query": typed, "live": "1"})
    assert status == 200
    assert "<html" not in live and 'id="query"' not in live and "archivist-summary" in live
    asked = keystroke(typed)
    status, full = await page(app, {"query": asked.query, "match_mode": asked.match_mode, "mode": "keyword"})
    assert status == 200
    assert hits(live) and hits(live) == hits(full)
    assert f"for <q>{typed}</q>" in live  # as typed, not as run


async def test_a_prefix_finds_the_whole_word(app):
    _, whole = await page(app, {"query": "authentication", "mode": "keyword", "page_size": "50"})
    _, typed = await page(app, {"query": "authen", "mode": "keyword"})
    _, live = await page(app, {"query": "authen", "live": "1", "page_size": "50"})
    assert hits(whole) and not hits(typed)  # the page's own search finds whole words only
    assert set(hits(whole)) <= set(hits(live))
    assert "<mark>authentication</mark>" in live.lower() or "<mark>authentication" in live.lower()


async def test_every_length_of_a_typed_word_finds_it(app):
    _, whole = await page(app, {"query": "authentication", "mode": "keyword", "page_size": "50"})
    for size in range(SHORTEST_PREFIX, len("authentication") + 1):
        _, live = await page(app, {"query": "authentication"[:size], "live": "1", "page_size": "50"})
        assert set(hits(whole)) <= set(hits(live)), "authentication"[:size]


async def test_every_keystroke_of_several_words_is_answered(app):
    both = {"query": "proxy AND timeout", "match_mode": "raw", "mode": "keyword", "page_size": "50"}
    _, whole = await page(app, both)  # (the keyword page also ranks what holds some of the words)
    typed = "proxy timeout"
    for size in range(SHORTEST_PREFIX, len(typed) + 1):
        status, live = await page(app, {"query": typed[:size], "live": "1", "page_size": "50"})
        assert status == 200 and 'class="archivist-error"' not in live, typed[:size]
        if size >= len("proxy ti"):
            assert hits(whole) and set(hits(whole)) <= set(hits(live)), typed[:size]


async def test_a_keystroke_keeps_the_filters_and_the_sort_and_links_to_the_page_in_its_mode(app):
    _, live = await page(app, {"query": "authen", "entities": "memory", "sort": "newest", "live": "1"})
    kinds = re.findall(r'class="badge kind" href="[^"]*">(\w+)</a>', live)
    assert kinds and set(kinds) == {"memory"}
    assert "kind: memory" in live
    assert "sort=newest" in live  # its links keep the sort chosen
    assert "live=" not in live and "match_mode" not in live  # its links are the page's own URLs
    _, semantic = await page(app, {"query": "authen", "mode": "semantic", "live": "1"})
    assert "<strong>semantic</strong>" in semantic


async def test_a_keystroke_in_fts5_syntax_is_run_as_given(app):
    params = {"query": "authent* NOT token", "match_mode": "raw"}
    _, live = await page(app, {**params, "live": "1"})
    _, full = await page(app, {**params, "mode": "keyword"})
    assert hits(live) and hits(live) == hits(full)


async def test_a_keystroke_without_words_lists_the_newest(app):
    _, live = await page(app, {"query": '"" ***', "live": "1"})
    _, newest = await page(app, {})
    assert hits(live) == hits(newest) and "no words: newest first" in live


HOSTILE = [
    "query=%22&live=1",
    "query=%22%22%22&live=1",
    "query=*&live=1",
    "query=authen*&live=1",
    "query=NEAR(&live=1",
    "query=NEAR(a+b&live=1",
    "query=title:x&live=1",
    "query=a:b:c&live=1",
    "query=((x&live=1",
    "query=x))&live=1",
    "query=%ED%A0%80&live=1",
    "query=ab%ED%A0%80&live=1",
    "query=%00ab&live=1",
    "query=" + "a" * 10_000 + "&live=1",
    "query=" + "ab+" * 3_000 + "&live=1",
    "query=authen&live=1&match_mode=raw",
    "query=(((&live=1&match_mode=raw",
    "query=authen&live=1&mode=nonsense",
    "query=authen&live=1&sort=sideways",
    "query=authen&live=1&page=-1",
    "query=authen&live=1&unknown=1",
    "query=authen&live=1&live=2",
]


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
async def test_hostile_input_is_an_answer_or_a_clear_400_never_a_500(app, query):
    status, html = await page(app, query)
    assert status in (200, 400), (status, html[:300])
    assert "Traceback" not in html and "<html" not in html
    if status == 400:
        assert 'class="archivist-error"' in html and re.search(r'data-code="[A-Z_]+"', html)
    else:
        assert "archivist-summary" in html


async def test_the_full_page_holds_the_region_and_the_script(app):
    status, html = await page(app, {"query": "authentication"})
    assert status == 200
    assert 'id="archivist-live"' in html and "archivist-live.js" in html and "archivist-live.css" in html
    script = await app.client.get(re.search(r'src="([^"]*archivist-live\.js)"', html)[1])
    assert script.status_code == 200 and "replaceState" in script.text
