"""A search's words as FTS5 terms: the query's, quoted, with the filter words kept apart (``archivist_fts``)."""

from __future__ import annotations

import re

from archivist import vocabulary

_TERM_RE = re.compile(r'"([^"]*)"|(\S+)')
_PUNCTUATION_ONLY_RE = re.compile(r"^\W+$")


def fts_query(
    query: str | None,
    mode: str | None = "all",
    columns: str | None = "title body",
    leave_out: frozenset[str] = frozenset(),
) -> str:
    """An FTS5 MATCH expression. ``all``/``any``: escaped terms ANDed/ORed; ``raw``: as given.

    Terms search every column without a column filter (a column filter makes the
    FTS engine read positions, and BM25 counts documents per term: it costs), except
    terms that could find a filter word (``vocabulary.is_filter_word``: ``p95``,
    ``y2024``, ``kmemory``), which are kept to the text ``columns`` (documents: the
    title and body; message_index: the text). An empty query becomes ``""``, which
    matches nothing instead of failing, and so does one whose every term is in ``leave_out``
    (quoted terms, as ``plain_terms`` gives them: the words that weigh nothing).
    """
    query = (query or "").strip()
    if mode == "raw":
        if columns != "title body" and _names_a_column(query):
            return '""'  # a column of documents (title: …) that the other table has not
        return query or '""'
    terms = []
    for match in _TERM_RE.finditer(query):
        term = match[1] if match[1] is not None else match[2]
        if term and not _PUNCTUATION_ONLY_RE.match(term):
            quoted = '"' + term.replace('"', '""') + '"'
            if quoted in leave_out:
                continue
            terms.append(
                "{" + (columns or "title body") + "} : " + quoted if vocabulary.is_filter_word(term) else quoted
            )
    if not terms:
        return '""'
    return (" OR " if mode == "any" else " ").join(terms)


def plain_terms(query: str | None) -> list[str]:
    """The query's terms as ``fts_query`` quotes them, those that could find a filter word left out, each once."""
    terms = []
    for match in _TERM_RE.finditer((query or "").strip()):
        term = match[1] if match[1] is not None else match[2]
        if term and not _PUNCTUATION_ONLY_RE.match(term) and not vocabulary.is_filter_word(term):
            terms.append('"' + term.replace('"', '""') + '"')
    return list(dict.fromkeys(terms))


_QUOTED_RE = re.compile(r'"(?:[^"]|"")*"')


def _names_a_column(query: str) -> bool:
    """Whether a raw FTS5 expression has a column filter (``title : x``, ``{title body}: x``)."""
    return ":" in _QUOTED_RE.sub("", query)


def phrase(query: str | None) -> str:
    """The whole query as one quoted FTS5 phrase (substring search in a trigram index)."""
    text = (query or "").strip()
    return '"' + text.replace('"', '""') + '"' if text else '""'
