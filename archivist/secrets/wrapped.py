"""Keys wrapped across lines: a token that a terminal or an editor cut at the end of a line,
read joined with the start of the lines that follow."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from archivist.secrets.anchors import _TOKEN_PREFIXES, _Hits
from archivist.secrets.formats import _library, _token_formats
from archivist.secrets.spans import _Span

_TOKEN_RUN = re.compile(r"[A-Za-z0-9_+/=.-]*")
_LINE_BREAK = re.compile(r"\r?\n|\\r\\n|\\n")  # a line break, or one escaped in JSON text
WRAP_COLUMN = 60  # a line at least this long that ends with a whole token may have been wrapped in it
WRAPPED_LINES = 8  # lines a wrapped token may run over
MAX_TOKEN = 4096  # characters of one line's part of a token (a JWT's is the longest): a longer run is no key


def _wrapped(text: str, hits: _Hits) -> Iterator[_Span]:
    """Tokens that a terminal or an editor wrapped across lines, found by reading them joined.

    A token cut short on its line (no detector finds it whole there) goes on at the start of
    the next; one that is whole on its line goes on only where that line is as long as a
    wrapping column (else the next line's first word is a word).
    """
    examined = -1  # where the last run looked at ends: each run of token characters is looked at once
    for position in hits.of(*_TOKEN_PREFIXES):
        if position < examined or (position and text[position - 1].isalnum()):
            continue  # inside a run already looked at, or inside a word (task-list): no token starts there
        pieces = [(position, _TOKEN_RUN.match(text, position).end())]  # type: ignore[union-attr]
        examined = pieces[0][1]
        if pieces[0][1] - position > MAX_TOKEN or not _LINE_BREAK.match(text, pieces[0][1]):
            continue
        first = text[pieces[0][0] : pieces[0][1]]
        whole = any(span.start == 0 and span.end == len(first) for span in _token_spans(first))
        while len(pieces) < WRAPPED_LINES:
            end = pieces[-1][1]
            brk = _LINE_BREAK.match(text, end)
            if brk is None or (whole and end - _line_start(text, pieces[-1][0]) < WRAP_COLUMN):
                break
            follow = _TOKEN_RUN.match(text, brk.end()).end()  # type: ignore[union-attr]
            if follow == brk.end() or follow - brk.end() > MAX_TOKEN:
                break
            pieces.append((brk.end(), follow))
            examined = follow
        if len(pieces) == 1:
            continue
        joined = "".join(text[a:b] for a, b in pieces)
        offsets = list(itertools.accumulate(b - a for a, b in pieces))
        for span in _token_spans(joined):
            if span.start < offsets[0] < span.end:  # it runs past the first line: the wrap matters
                yield _Span(position + span.start, _unjoined(span.end, pieces, offsets), span.kind, span.rank)


def _token_spans(text: str) -> Iterator[_Span]:
    hits = _Hits(text)
    return itertools.chain(_library(text, hits), _token_formats(text, hits))


def _line_start(text: str, position: int) -> int:
    """Where the line holding ``position`` starts: after a line break, or one escaped in JSON."""
    return max(text.rfind("\n", 0, position) + 1, text.rfind("\\n", 0, position) + 2 if "\\n" in text else 0)


def _unjoined(position: int, pieces: list[tuple[int, int]], offsets: list[int]) -> int:
    """Where a position in the joined token is in the text."""
    before = 0
    for (start, _), through in zip(pieces, offsets):
        if position <= through:
            return start + position - before
        before = through
    return pieces[-1][1]
