"""The FTS5 expressions of one search: its query's words and its filters' (``archivist_search_words``)."""

from __future__ import annotations

import json

from archivist import vocabulary
from archivist.queries.periods import date_words
from archivist.queries.terms import fts_query, plain_terms

KEYWORD_RANKINGS = ("keyword", "hybrid")


def search_words(spec: str | None) -> str:
    """The FTS5 expressions of one search (search.sql), as a JSON object.

    ``spec`` is a JSON object of the search's parsed inputs: ``query``, ``match_mode``
    (all or raw), ``ranking``, the filter lists (``vocabulary.FILTERS``), ``start_at`` and
    ``end_at`` (Unix seconds), and ``first`` and ``last`` (the archive's oldest and newest
    document times). The filters become FTS words (``vocabulary.expressions``, the time
    filter by ``date_words``) and the query's words FTS terms (``fts_query``); the answer has one
    expression per use, ``""`` (which matches nothing) where the ranking does not need it,
    since the FTS engine runs any expression it is given:

    - ``every_word``, ``some_words``: documents with every word (or some: only for several
      words), and the filters (keyword and hybrid rankings);
    - ``newest_matches``: words, or several filters ANDed, as a filter of documents sorted
      by time (usually few matches: a forward intersection is faster); ``newest_by_time``:
      the filters of one group (one kind, bugs of May), read backwards in filters_by_time
      (newest first) to stop early;
    - ``filters``: the filters alone (semantic, hybrid and similar rankings);
    - ``highlight``: the words for an excerpt's highlights;
    - ``message_every``, ``message_some``: an agent log's messages with every word (also
      newest first) or some (message_index, with the filters a message holds; a raw query
      that names a column of documents finds no message); ``message_best``: some words, to
      name a session's best message;
    - ``session_files``: the files filter, a session's (null without one);
    - ``everything``: no words and no filters; ``edge_days``: the days a bound with a time
      of day cuts (``date_words``).

    ``weightless`` (a JSON list of quoted terms, as ``weighed_terms`` lists them) names the words
    that more than half the documents hold: BM25 weighs them nothing, so the some-words
    expressions (``some_words``, ``message_some``) leave them out; a document that holds only
    such words is not listed as holding some of the words.

    A filter of each hit's own (``roles``) asks of a document's own text as a hit (by its
    words or its meaning) what ``vocabulary.Expressions.whole`` says, and of a document
    listed by its filters alone (newest first, without words) what it holds as a whole.
    """
    given = json.loads(spec or "{}")
    # the query as every other function is given it: a NUL ends a text passed to a function,
    # not a JSON string (FTS5 would read the expression only up to it)
    query = str(given.get("query") or "").partition("\x00")[0]
    raw = given.get("match_mode") == "raw"
    ranking = given.get("ranking")
    dated = date_words(given.get("start_at"), given.get("end_at"), given.get("first"), given.get("last"))
    period = json.loads(dated) if dated else None
    days = [str(word) for word in period.get("words", [])] if period is not None else None
    groups = vocabulary.expressions({key: given.get(key) for key in vocabulary.FILTERS}, days)

    listed = given.get("weightless")
    weightless = (
        frozenset(term for term in listed if isinstance(term, str)) if isinstance(listed, list) else frozenset()
    )

    def words(mode: str, columns: str = "title body", leave_out: frozenset[str] = frozenset()) -> str | None:
        if not query:
            return None
        # raw queries keep to the title and body as a whole (fts_query does it per term)
        prefix = "{title body} : " if raw and columns == "title body" else ""
        return prefix + "(" + fts_query(query, "raw" if raw else mode, columns, leave_out) + ")"

    def both(first: str | None, second: str | None) -> str | None:
        """``first AND second``, or ``first`` alone without a second (null without a first)."""
        return None if first is None else first + (" AND " + second if second is not None else "")

    all_words, any_words = words("all"), words("any")
    filter_group = groups.documents
    filters = None if filter_group is None else f"filter_tokens : ({filter_group})"
    # a document's own text as a hit (its words, its meaning): a filter of each hit's own
    # (roles) may ask less of it than of the document as a whole (``vocabulary.Expressions``)
    hits = filters if groups.whole is None else f"filter_tokens : ({groups.whole})"
    message_filters = None if groups.messages is None else f"filter_tokens : ({groups.messages})"
    all_and_filters = both(all_words, hits) if all_words is not None else filters
    some_words = words("any", leave_out=weightless)
    message_some = both(words("any", "text", weightless), message_filters)
    several_filters = filter_group is not None and " and " in filter_group.lower()
    nothing = '""'
    return json.dumps(
        {
            "every_word": (all_and_filters or nothing) if ranking in KEYWORD_RANKINGS else nothing,
            # one word: documents with some of the words are those with every word, found already
            "some_words": (both(some_words, hits) or nothing)
            if ranking in KEYWORD_RANKINGS and any_words != all_words
            else nothing,
            "newest_matches": (all_and_filters or nothing)
            if ranking == "newest" and (all_words is not None or several_filters)
            else nothing,
            "newest_by_time": filter_group
            if ranking == "newest" and all_words is None and filter_group is not None and not several_filters
            else nothing,
            "filters": (hits or nothing) if ranking in ("semantic", "hybrid", "similar") else nothing,
            "highlight": any_words or all_words or nothing,
            "message_every": (both(words("all", "text"), message_filters) or nothing)
            if ranking in (*KEYWORD_RANKINGS, "newest")
            else nothing,
            "message_some": (message_some or nothing) if ranking in KEYWORD_RANKINGS else nothing,
            "message_best": both(words("any", "text"), message_filters) or nothing,
            "session_files": None if groups.session is None else f"filter_tokens : ({groups.session})",
            "everything": all_and_filters is None,
            "edge_days": period["edge_days"] if period is not None else [],
        }
    )


def weighed_terms(query: str | None, match_mode: str | None, ranking: str | None) -> str:
    """The query's words whose weight a some-words pass asks for (a JSON list of quoted FTS5 terms).

    Only a keyword or hybrid ranking of several plain words has a some-words pass; a raw query's
    words are its own expression, and a word that could find a filter word is kept to the text.
    """
    if match_mode == "raw" or ranking not in KEYWORD_RANKINGS:
        return "[]"
    terms = plain_terms(str(query or "").partition("\x00")[0])
    return json.dumps(terms if len(terms) > 1 else [])
