"""Keys wrapped across lines: a token that a terminal or an editor cut at the end of a line,
read joined with the start of the lines that follow."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from archivist.secrets.anchors import _TOKEN_PREFIXES, _Hits
from archivist.secrets.formats import _ESCAPES, _library, _token_formats
from archivist.secrets.spans import _Span
from archivist.secrets.values import _mixed

_TOKEN_RUN = re.compile(r"[A-Za-z0-9_+/=.-]*")
_LINE_BREAK = re.compile(r"\r?\n|\\r\\n|\\n")  # a line break, or one escaped in JSON text
WRAPPED_LINES = 8  # lines a wrapped token may run over
MAX_TOKEN = 4096  # characters of one line's part of a token (a JWT's is the longest): a longer run is no key
MIN_KEY_REST = 8  # characters of a key that complete it on the next line, after a line where it looks whole
_KEY_REST = re.compile(rf"([A-Za-z0-9_-]{{{MIN_KEY_REST},}})\.?")


def _wrapped(text: str, hits: _Hits) -> Iterator[_Span]:
    """Tokens that a terminal or an editor wrapped across lines, found by reading them joined.

    A token cut short on its line (no detector finds it whole there) goes on at the start of
    the next. One that is whole on its line goes on only where the next line starts with what
    completes a key (``_key_rest``), however long its line: a key of 108 characters alone on
    its line, then ``echo done``, is whole there, and ``echo`` a word.
    """
    examined = -1  # where the last run looked at ends: each run of token characters is looked at once
    for position in hits.of(*_TOKEN_PREFIXES):
        if position < examined or (
            position and text[position - 1].isalnum() and text[position - 2 : position] not in _ESCAPES
        ):
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
            if brk is None:
                break
            follow = _TOKEN_RUN.match(text, brk.end()).end()  # type: ignore[union-attr]
            if follow == brk.end() or follow - brk.end() > MAX_TOKEN:
                break
            if whole and not _key_rest(text[brk.end() : follow]):
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


def _key_rest(run: str) -> bool:
    """Whether a line's first run of token characters is the rest of a key wrapped onto it: the
    characters keys are made of (a full stop after them ends a sentence), at least
    ``MIN_KEY_REST`` of them, mixing upper case, lower case and digits as a generated key does.
    A word (``Done5``), a name (``ANTHROPIC_API_KEY=…``) or a path is not."""
    rest = _KEY_REST.fullmatch(run)
    return rest is not None and _mixed(rest.group(1))


def _token_spans(text: str) -> Iterator[_Span]:
    hits = _Hits(text)
    return itertools.chain(_library(text, hits), _token_formats(text, hits))


def _unjoined(position: int, pieces: list[tuple[int, int]], offsets: list[int]) -> int:
    """Where a position in the joined token is in the text."""
    before = 0
    for (start, _), through in zip(pieces, offsets):
        if position <= through:
            return start + position - before
        before = through
    return pieces[-1][1]
