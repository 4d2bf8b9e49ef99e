"""The unified search's parameters (``search``), declared once: what each one is, means, and where
``archivist search`` and the search page show it; and the seed systems' other names for them.

``declarations`` declares the ``search`` query with these; every surface of the search
(GET /api/search, the search page, the MCP ``search`` tool, ``archivist search``, the canned
query) is derived from them. The list filters are declared in ``filters``, each with its stored
key, chip, facet and examples.
"""

from __future__ import annotations

import dataclasses

from archivist.queries import params, rules
from archivist.queries.filters import FILTERS
from archivist.queries.params import QUERY_LIMITS, SEARCH_DATES, Alias, Param, Value, as_given


def _choice(
    name: str,
    choices: tuple[str, ...],
    description: str,
    default: Value,
    metavar: str,
    form: str | None = None,
    brief: str = "",
) -> Param:
    """One of ``choices``: an option of ``archivist search`` (--name), and a field of the search page's (``form``)."""
    flag = "--" + name.replace("_", "-")
    rule = rules.one_of(name, choices)
    return Param(name, rule, description, default=default, flags=(flag,), metavar=metavar, form=form, brief=brief)


def _whole(
    name: str,
    high: int,
    description: str,
    default: int | None = None,
    form: str | None = None,
    example: int | None = None,
    brief: str = "",
) -> Param:
    """A whole number from 1 to ``high``, ``default`` where none is given (none: another's name, whose
    default stands): an option of ``archivist search`` (--name)."""
    flag = "--" + name.replace("_", "-")
    rule = rules.bounded_int(name, 1, high, example=example)
    param = Param(name, rule, description, type="integer", flags=(flag,), metavar="N", form=form, brief=brief)
    return param if default is None else dataclasses.replace(param, default=default)


FILTER_PARAMS = tuple(f.param for f in FILTERS)

SEARCH_PARAMS = (
    Param(
        "query",
        rules.optional_query,
        "Words to search for. Optional in the recent, tag, scan, faceted and similar modes; in recent, tag and "
        "faceted every word must match. " + QUERY_LIMITS,
        flags=("QUERY",),
        form="search",
    ),
    _choice(
        "mode",
        rules.MODES,
        "hybrid (default: keyword and semantic rankings fused), keyword (BM25; every word first, and when fewer "
        "than 100 documents hold every word, all the documents holding only some of them after those), semantic "
        "(the 100 nearest documents), similar (the 100 documents nearest to document, an id or path), tag (tags "
        "required, newest first), recent (newest first), scan (like hybrid, or newest first without a query; with "
        "output=full, short excerpts), faceted (every filter; hybrid ranking with a query, newest first without).",
        default="hybrid",
        brief="hybrid: keyword and semantic fused.",
        metavar="MODE",
        form="radio",
    ),
    _choice(
        "sort",
        rules.SORTS,
        "The order of the matches: relevance (default: the mode's ranking), newest or oldest first, or the "
        "sessions that used the most tokens or cost the most first (usage at the price data's prices). Results "
        "with no date, tokens or cost come last. A sort other than the ranking's own orders every match, not "
        "only the best: with a common word it costs time as the matches grow.",
        default="relevance",
        metavar="SORT",
        brief="The order of results.",
        form="hidden",
    ),
    *FILTER_PARAMS[:3],  # entities, types and tags come before match_all and the dates
    Param(
        "match_all",
        rules.boolean("match_all"),
        "true: every tag must be present; false (default): any tag.",
        type="boolean",
        brief="true: every tag must be present.",
        flags=("--match-all",),
        form="hidden",
    ),
    *params.dates(SEARCH_DATES, flags=True),
    *FILTER_PARAMS[3:],
    _choice(
        "match_mode",
        ("simple", "raw"),
        'simple (default: the words, FTS syntax escaped) or raw (FTS5 syntax: "phrases", prefix*, AND, OR, NOT, NEAR).',
        default="simple",
        metavar="simple|raw",
        brief="raw: the query in FTS5 syntax.",
        form="hidden",
    ),
    Param(
        "min_similarity",
        rules.number("min_similarity", -1, 1),
        "Drop semantic candidates below this cosine similarity, -1 to 1 (default 0.32 for semantic and hybrid, so "
        "that unrelated text finds nothing; none for similar; -1 keeps every candidate).",
        type="number",
        brief="Least cosine similarity.",
        flags=("--min-similarity",),
        metavar="X",
        form="hidden",
    ),
    Param(
        "document",
        as_given,
        "mode=similar: the document to find neighbours of: its id, its path, or the path of any file of it.",
        also=("integer",),
        brief="mode=similar: the document (id or path).",
        flags=("--document",),
        metavar="ID|PATH",
    ),
    _whole("page", 10_000, "Page number, from 1 (default 1).", 1, example=1, brief="Page."),
    _whole("page_size", 100, "Results per page, 1 to 100 (default 10).", 10, form="hidden", brief="Results per page."),
    _whole("limit", 100, "Another name for page_size."),
    _choice(
        "output",
        rules.OUTPUTS,
        "brief (the default of /api/search, of MCP and of archivist search --json: query, mode, total, matched "
        "(the total split by how results matched: all the words, some, or only by meaning), sort, page, "
        "page_size, total_pages, has_more, building (while the archive is still being built), and per result id, kind, type, entity_type and entity_id (a record's entity type and tracker id, "
        "else its type, or kind, and its id), "
        "tags (memories), agent (conversations), title, date, score, rank, matched (some or meaning: the words were only partly found, or not; left "
        "out where every word was), "
        "message (the index of an agent log's matching message: get_conversation's offset) and a snippet of at "
        "most 200 characters, left out where the title says it all) or full (the default of the canned query: "
        "every field (path, tags, product_id, the host of a synced conversation, ...), message as an object (index, role, timestamp, snippet, link), "
        "longer highlighted excerpts, facet counts per kind, type, month, day, tag, product, agent, project and "
        "model over the first 200 results, and the filters as understood).",
        default=rules.API_OUTPUT,
        metavar="brief|full",
        brief="brief: a snippet each; full: paths, excerpts, facets.",
    ),
    # seed 002's name with no counterpart: a boost this archive does not use
    Param(
        "encoding_context",
        as_given,
        "Accepted from the memory service's callers; it has no effect here.",
        type="object",
        brief="Accepted, without effect.",
        default=None,
        in_sql=False,
    ),
)

SEARCH_ALIASES = (
    Alias("kinds", "entities"),
    Alias("memory_type", "types", seed="memory service"),
    Alias("k", "page_size", seed="memory service"),
    Alias("source_path", "document"),
)
