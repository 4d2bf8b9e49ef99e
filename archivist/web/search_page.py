"""GET /search: the query box, modes, facets, timeline, results and pages."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from datasette.utils.asgi import Response

from archivist.queries.rules import SORTS
from archivist.queries.totals import MATCHED_WORDS, matched_counts
from archivist.web.app import highlighted, plugin_name, unknown_search_parameters
from archivist.web.live_query import keystroke
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
    (``live_query``); a query already in FTS5 syntax (match_mode=raw) as it is."""
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
