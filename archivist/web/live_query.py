"""What one keystroke of the search page asks: the words typed so far, the last one as a prefix.

``authen`` finds ``authentication``: the typed words become quoted FTS5 terms, all required,
and the word still being typed a prefix (``"authen"*``), run as a raw query (match_mode=raw)
ranked by keyword. The words are joined by AND, which FTS5 needs
before a parenthesised group. The index stems its words (``authentication`` is stored as ``authent``),
so a prefix longer than a word's stem (``authenticat``) finds nothing by itself: the last
word also matches its own shorter forms as whole words (``"authent"``), down to
``SHORTEST_STEM`` letters.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from archivist import vocabulary
from archivist.queries.rules import MAX_QUERY_CHARS, MAX_QUERY_WORDS

SHORTEST_STEM = 4  # a shorter stem as a whole word (the, run) finds too much that was never typed
LONGEST_SUFFIX = 8  # the most letters the stemmer takes off a word (generalization: gener)
SHORTEST_PREFIX = 2  # a one-letter prefix matches most of the index
KINDS_AS_WORDS = tuple("k" + kind for kind in vocabulary.KINDS)  # the first letters of a kind's filter word
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
