"""GET /search: the query box, modes, facets, timeline, results and pages; and what each keystroke asks.

A keystroke's search (``keystroke``): the words typed so far, the last one as a prefix. ``authen``
finds ``authentication``: the typed words become quoted FTS5 terms, all required (joined by AND,
which FTS5 needs before a parenthesised group), and the word still being typed a prefix
(``"authen"*``), run as a raw query (match_mode=raw) ranked by keyword. The index stems its words
(``authentication`` is stored as ``authent``), so a prefix longer than a word's stem
(``authenticat``) finds nothing by itself: the last word also matches its own shorter forms as
whole words (``"authent"``), down to ``SHORTEST_STEM`` letters.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlencode

from datasette.utils.asgi import Response

from archivist import vocabulary
from archivist.queries.rules import MAX_QUERY_CHARS, MAX_QUERY_WORDS, SORTS
from archivist.queries.totals import MATCHED_WORDS, matched_counts
from archivist.web.app import highlighted, plugin_name, unknown_search_parameters
from archivist.web.page_queries import QueryFailed, canned, search
from archivist.web.rendering import needs_archive, render_page
from archivist.web.search_navigation import active_filters, cleared, facet_groups, pages, timeline
from archivist.web.urls import DEFAULT_MODE, DEFAULT_SORT, FORM, KEPT, SearchState, document_url, search_params
from archivist.workspace import DATABASE_NAME

if TYPE_CHECKING:
    from datasette.app import Datasette


PAGE_MODES = ("hybrid", "keyword", "semantic")
LIVE = "live"  # a keystroke's request: its results alone, ranked by keyword with the last word a prefix
RESULTS_TEMPLATE = "_archivist_results.html"  # the part of the page a keystroke's answer replaces
NAMED_MODES = ("similar",)  # lists the mode control names while they are shown, though a new search leaves them
FACET_WINDOW = 200  # the search response counts its facets over this many results


SHORTEST_STEM = 4  # a shorter stem as a whole word (the, run) finds too much that was never typed
LONGEST_SUFFIX = 8  # the most letters the stemmer takes off a word (generalization: gener)
SHORTEST_PREFIX = 3  # a prefix of one or two letters matches a good part of the index (`"re"*`: seconds at 1M messages)
KINDS_AS_WORDS = tuple(
    vocabulary.KIND.prefix + kind for kind in vocabulary.KINDS
)  # the first letters of a kind's filter word
_TERM_RE = re.compile(r'"([^"]*)"|(\S+)')
_PUNCTUATION_ONLY_RE = re.compile(r"^\W+$")
_ASCII_LETTERS_RE = re.compile(r"^[A-Za-z]+$")  # what the porter stemmer stems


class Keystroke(NamedTuple):
    """A keystroke's search: its query and match mode (``raw`` where it holds a prefix)."""

    query: str
    match_mode: str


def keystroke(text: str) -> Keystroke:
    """The search one keystroke runs for ``text``, as typed so far.

    A word that could find a filter word (``p95``, ``y2024``, ``krec``) leaves the query as typed,
    in the simple match mode: its words are kept to the text there (``terms.fts_query``), which a
    raw query cannot do for an agent log's messages. So does a query too long for its prefix.
    """
    if not _fits(text):
        return Keystroke(text.strip(), "simple")  # the search says it is too long, as typed
    words = _words(text)
    if not words:
        return Keystroke("", "simple")
    if any(_filter_prone(word) for word, _ in words):
        return Keystroke(text.strip(), "simple")
    *typed, (last, phrase) = words
    exact = [_quoted(word) for word, _ in typed]
    expression: str | None
    if len(last) < SHORTEST_PREFIX and exact:
        expression = " AND ".join(exact)  # a letter just typed: the words before it, until it is a prefix
    elif phrase or len(last) < SHORTEST_PREFIX:
        expression = " AND ".join([*exact, _quoted(last)])
    else:
        expression = _with_prefix(exact, last)
    if expression is None:
        return Keystroke(text.strip(), "simple")
    return Keystroke(expression, "raw")


def _words(text: str) -> list[tuple[str, bool]]:
    """The typed words (a quoted phrase as one, marked as such), punctuation-only words left out."""
    found = []
    for match in _TERM_RE.finditer(text):
        phrase = match[1] is not None
        word = match[1] if phrase else match[2]
        if word and word.strip() and not _PUNCTUATION_ONLY_RE.match(word):
            found.append((word, phrase))
    return found


def _filter_prone(word: str) -> bool:
    """Whether a word, or a word it begins, could be a filter word (``vocabulary.is_filter_word``)."""
    lowered = word.lower()
    return vocabulary.is_filter_word(word) or any(kind.startswith(lowered) for kind in KINDS_AS_WORDS)


def _quoted(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def _with_prefix(exact: list[str], last: str) -> str | None:
    """The words, the last as a prefix or one of its shorter forms, as long as the search takes;
    None where even the prefix alone makes it too long. The stemmer takes at most ``LONGEST_SUFFIX``
    letters off a word, so the shorter forms are its forms with at most as many letters less."""
    stems = (
        [_quoted(last[:size]) for size in range(len(last) - 1, max(SHORTEST_STEM, len(last) - LONGEST_SUFFIX) - 1, -1)]
        if _ASCII_LETTERS_RE.match(last)
        else []
    )
    while True:
        forms = [_quoted(last) + "*", *stems]
        expression = " AND ".join([*exact, "(" + " OR ".join(forms) + ")" if stems else forms[0]])
        if _fits(expression):
            return expression
        if not stems:
            return None
        stems.pop()


def _fits(expression: str) -> bool:
    return len(expression) <= MAX_QUERY_CHARS and len(expression.split()) <= MAX_QUERY_WORDS


async def product_names(datasette: Datasette) -> dict[str, str]:
    """Product ids to the titles of their product records."""
    found = await search(datasette, {"mode": "recent", "entities": "product", "page_size": "100"})
    return {str(item["entity_id"]): item["title"] for item in found["results"] if item.get("entity_id")}


async def document_title(datasette: Datasette, document: str) -> str:
    """The title of the document a similar search starts from (given by id or path), else its path."""
    found = await canned(datasette, "find_document", {"document": document})
    return str(found[0]["title"] or found[0]["path"]) if found else document


def listed(params: dict[str, str], mode: str) -> dict[str, str]:
    """The search a page runs: without words it lists newest first, whatever ranking is chosen for words."""
    return dict(params, mode="recent") if not params.get("query") and mode in PAGE_MODES else params


def asked_by_keystroke(params: dict[str, str]) -> dict[str, str]:
    """The search one keystroke runs: the words typed so far by keyword, the last one a prefix
    (``keystroke``); a query already in FTS5 syntax (match_mode=raw) as it is."""
    if params.get("match_mode") == "raw" or not params.get("query"):
        return listed(dict(params, mode="keyword"), "keyword")
    query, match_mode = keystroke(params["query"])
    return listed(dict(params, query=query, match_mode=match_mode, mode="keyword"), "keyword")


@needs_archive
async def search_page(datasette: Datasette, request: Any) -> Response:
    """GET /search: query box, modes, facets, timeline, results and pages; with ``live``, the results
    alone of the words typed so far (``asked_by_keystroke``), as the page's script asks them."""
    params = search_params(request.args)
    live = params.pop(LIVE, None) is not None
    state = SearchState(datasette, params)
    mode = params.get("mode", DEFAULT_MODE)
    # the form ranks words by one of the page's modes; a list by another mode (recent,
    # similar, ...) is left by a new search, which starts as hybrid
    context: dict[str, Any] = {
        "state": state,
        "params": params,
        "modes": PAGE_MODES,
        "mode": mode,
        "form_mode": mode if mode in PAGE_MODES else None if mode in NAMED_MODES else DEFAULT_MODE,
        "named_mode": mode if mode in NAMED_MODES else None,
        "form": FORM,
        "shortest_prefix": SHORTEST_PREFIX,
        "kept": KEPT,
        "plugin_name": plugin_name(),  # the static files' mount: the page's script
    }
    template = RESULTS_TEMPLATE if live else "archivist_search.html"
    unknown = unknown_search_parameters(params)
    if unknown is not None:
        failure = QueryFailed(400, unknown.code, unknown.message)
        return await render_page(datasette, request, template, {**context, "failure": failure}, status=400)
    wanted = listed(params, mode)
    try:
        response = await search(datasette, {**(asked_by_keystroke(params) if live else wanted), "output": "full"})
        products = (
            await product_names(datasette)
            if (response["facets"].get("product_id") or params.get("product_ids"))
            else {}
        )
        similar_to = await document_title(datasette, params["document"]) if params.get("document") else None
    except QueryFailed as failure:
        return await render_page(datasette, request, template, {**context, "failure": failure}, status=failure.status)
    if live:
        response["query"] = params.get("query", "") if response["query"] else ""  # as typed, where it had words
    for result in response["results"]:
        result["excerpt_html"] = highlighted(result.get("excerpt")) or result.get("excerpt") or ""
        result["href"] = document_url(datasette, result["id"])
        if message := result.get("message"):  # the message of a session that matched: a link straight to it
            seq = message["index"]
            message["href"] = f"{result['href']}?{urlencode({'m': seq})}#m{seq}"
            message["snippet_html"] = highlighted(message.get("snippet")) or message.get("snippet") or ""
    context.update(
        response=response,
        facet_groups=facet_groups(state, response["facets"], products),
        filters=active_filters(state, products, similar_to),
        clear_url=cleared(state, PAGE_MODES),
        timeline=timeline(state, response["facets"]),
        pages=pages(state, response["page"], response["total_pages"]) if response["total_pages"] > 1 else [],
        previous_url=state.page_url(response["page"] - 1) if response["page"] > 1 else None,
        next_url=state.page_url(response["page"] + 1) if response["has_more"] else None,
        partial_facets=response["total"] > FACET_WINDOW,
        facet_window=FACET_WINDOW,
        mode_urls={mode: state.url(mode=None if mode == DEFAULT_MODE else mode, document=None) for mode in PAGE_MODES},
        sort=response["sort"],
        sort_urls={sort: state.url(sort=None if sort == DEFAULT_SORT else sort) for sort in SORTS},
        matched_counts=matched_counts(response["matched"]),
        matched_words=MATCHED_WORDS,  # (a partial match's badge, as archivist search says it)
        api_url=datasette.urls.path("/api/search")
        + SearchState(datasette, wanted).query_string(page=params.get("page"), output="full"),
        canned_url=datasette.urls.path(f"/{DATABASE_NAME}/search")
        + SearchState(datasette, wanted).query_string(page=params.get("page")),
    )
    return await render_page(datasette, request, template, context)
