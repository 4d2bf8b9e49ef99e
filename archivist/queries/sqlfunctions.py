"""The SQL functions the canned queries call, registered on every connection (``register``).

Each function lives with its job: ``terms`` (the query's words as FTS5 terms), ``expressions``
(a search's FTS5 expressions, its filters through ``archivist.vocabulary``), ``periods`` (the
time filter), ``excerpts`` (snippets, excerpts, previews), ``lists`` (list and limit
parameters), ``facet_counts`` (the facets aggregate), ``vector_search`` (search by meaning),
``links`` (report links) and ``archive.building`` (whether the archive is still being built).
"""

from __future__ import annotations

from typing import Any

from archivist.archive import building
from archivist.archive.searched import stored_searched_text
from archivist.queries.excerpts import around, count_matches, excerpt, preview, snippet
from archivist.queries.expressions import search_words, weighed_terms
from archivist.queries.facet_counts import FACETS, FacetCounts
from archivist.queries.links import make_report_link
from archivist.queries.lists import clamp_limit, in_projects, list_json
from archivist.queries.periods import date_words, time_bound
from archivist.queries.terms import fts_query, phrase
from archivist.queries.vector_search import (
    SIMILARITY_FLOOR,
    database_file,
    load_sqlite_vec,
    make_embed,
    make_nearest,
    model_id,
)


def register(conn: Any, settings: dict[str, Any] | None = None) -> None:
    """Register every function on a sqlite3 connection."""
    settings = settings or {}
    load_sqlite_vec(conn)
    db_file = database_file(conn)
    nearest = make_nearest(db_file)
    functions = {
        ("archivist_fts", 1): lambda q: fts_query(q, "all"),
        ("archivist_fts", 2): fts_query,
        ("archivist_fts", 3): fts_query,
        ("archivist_snippet", 3): snippet,
        ("archivist_preview", 2): preview,
        ("archivist_around", 3): around,
        ("archivist_searched", 2): stored_searched_text,
        ("archivist_phrase", 1): phrase,
        ("archivist_count", 2): count_matches,
        ("archivist_excerpt", 3): excerpt,
        ("archivist_limit", 3): clamp_limit,
        ("archivist_list", 1): list_json,
        ("archivist_list", 2): list_json,
        ("archivist_in_projects", 2): in_projects,
        ("archivist_time", 2): time_bound,
        ("archivist_date_words", 4): date_words,
        ("archivist_search_words", 1): search_words,
        ("archivist_weighed_terms", 3): weighed_terms,
        ("archivist_report_link", 3): make_report_link(settings.get("report_link_base_url")),
        ("archivist_embed", 1): make_embed(db_file),
        ("archivist_model", 0): model_id,
        ("archivist_similarity_floor", 0): lambda: float(settings.get("similarity_floor", SIMILARITY_FLOOR)),
        ("archivist_nearest", 3): nearest,
        ("archivist_nearest", 4): nearest,
        ("archivist_building", 1): building.state_json,
    }
    for (name, arity), function in functions.items():
        # archivist_nearest reads vectors that change between runs, and archivist_time
        # reads the clock for "yesterday", archivist_building whether a process is alive: none is deterministic
        deterministic = name not in ("archivist_nearest", "archivist_time", "archivist_building")
        conn.create_function(name, arity, function, deterministic=deterministic)
    conn.create_aggregate("archivist_facets", len(FACETS), FacetCounts)
