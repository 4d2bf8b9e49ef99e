"""Every detector over a text, each only where its anchors stand (``_detect``), and base64
that decodes to a secret, read again through them."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator

from archivist.secrets.anchors import _AUTHORIZATION_WORDS, _CONTEXT, _TOKEN_PREFIXES, _WORDS, ENCODED, _Hits
from archivist.secrets.context import _assignments, _authorization, _private_keys, _url_passwords
from archivist.secrets.formats import _library, _token_formats
from archivist.secrets.spans import _BY_FORMAT, _Span
from archivist.secrets.wrapped import _wrapped

_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_PRINTABLE = bytes(range(0x20, 0x7F)) + b"\t\n\r"
_PREFIXES = frozenset(_TOKEN_PREFIXES)  # the anchors that token formats, whole or wrapped, start at
ENCODED_DEPTH = 2  # base64 inside base64, at most
MIN_ENCODED = 16  # characters of base64 that can hold a secret's text
MAX_ENCODED = 16384  # longer runs are files (images, archives), not a pasted secret


def _encoded(text: str, hits: _Hits, depth: int) -> Iterator[_Span]:
    """Runs of base64 that decode to text holding a secret: each masked whole.

    Only runs around the base64 form of what a secret's text holds (``_ENCODED_WORDS``) are
    decoded: a run without one cannot hold a secret that any detector here would find.
    """
    done = -1
    for position in hits.of(ENCODED):
        if position < done:
            continue
        start, end = position, position
        while start > 0 and text[start - 1] in _BASE64_CHARS and position - start <= MAX_ENCODED:
            start -= 1
        while end < len(text) and text[end] in _BASE64_CHARS and end - position <= MAX_ENCODED:
            end += 1
        done = end
        padded = end
        while padded < len(text) and padded - end < 2 and text[padded] == "=":
            padded += 1
        if not MIN_ENCODED <= end - start <= MAX_ENCODED or (start and text[start - 1] in "-_"):
            continue
        try:
            decoded = base64.b64decode(text[start:end] + "=" * (-(end - start) % 4), validate=True)
        except (binascii.Error, ValueError):
            continue
        if len(decoded.translate(None, _PRINTABLE)) * 50 > len(decoded):
            continue  # bytes, not text: the word's form stood there by chance
        inner = next(_detect(decoded.decode("ascii", "replace"), depth + 1), None)
        if inner is not None:
            yield _Span(start, padded, f"base64-{inner.kind.removeprefix('base64-')}", _BY_FORMAT)


def _detect(text: str, depth: int = 0) -> Iterator[_Span]:
    hits = _Hits(text)
    if not hits.found:
        return  # nothing a secret starts with, nor the words that name one
    if not hits.found.keys().isdisjoint(_PREFIXES):  # (a text that names a secret only skips these)
        yield from _library(text, hits)
        yield from _token_formats(text, hits)
        if "\n" in text or "\\n" in text:
            yield from _wrapped(text, hits)
    if depth < ENCODED_DEPTH and hits.of(ENCODED):
        yield from _encoded(text, hits, depth)
    if not hits.any(_CONTEXT):
        return
    if hits.of("PRIVATE KEY"):
        yield from _private_keys(text)
    if hits.any(_AUTHORIZATION_WORDS):
        yield from _authorization(text)
    if hits.of("://") and "@" in text:
        yield from _url_passwords(text)
    if hits.any(_WORDS):
        yield from _assignments(text, hits)
