"""Markdown-aware chunking: sections and paragraphs packed into ~200-token chunks.

MiniLM reads at most 256 word pieces. A chunk holds up to ``MAX_WORDS`` words
(about 1.3 word pieces each), breaks at a heading or paragraph where it can,
and overlaps the previous chunk by up to ``OVERLAP_WORDS`` words, except after
a heading, where a new section starts clean.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_WORDS = 170
MIN_WORDS = 60
OVERLAP_WORDS = 30
VERSION = "1"  # part of every embedding signature: changing chunking re-embeds

_WORD_RE = re.compile(r"\S+")
_HEADING_RE = re.compile(r"^#{1,6}\s", re.M)
_SENTENCE_END_RE = re.compile(r"[.!?:;]['\")\]]*$")


@dataclass(frozen=True)
class Chunk:
    seq: int
    start: int  # character offsets into the document body
    end: int
    text: str


def _boundaries(text: str, spans: list[tuple[int, int]]) -> tuple[set[int], set[int]]:
    """Word indexes that begin a paragraph, and those that begin a heading."""
    paragraphs, headings = {0}, set()
    heading_offsets = {m.start() for m in _HEADING_RE.finditer(text)}
    for index in range(1, len(spans)):
        gap = text[spans[index - 1][1] : spans[index][0]]
        if "\n" in gap and spans[index][0] in heading_offsets:
            headings.add(index)
            paragraphs.add(index)
        elif gap.count("\n") >= 2:
            paragraphs.add(index)
    return paragraphs, headings


def _end_of_window(
    start: int, total: int, spans: list[tuple[int, int]], text: str, paragraphs: set[int], headings: set[int]
) -> int:
    limit = start + MAX_WORDS
    if limit >= total:
        return total
    for breaks in (headings, paragraphs):  # the last section, else paragraph, break that fits
        for end in range(limit, start + MIN_WORDS, -1):
            if end in breaks:
                return end
    for end in range(limit, start + MIN_WORDS, -1):  # else the last sentence end
        if _SENTENCE_END_RE.search(text[spans[end - 1][0] : spans[end - 1][1]]):
            return end
    return limit


def chunk(body: str, title: str | None = None) -> list[Chunk]:
    """Chunks of a document; each chunk's text starts with the title, for context."""
    spans = [m.span() for m in _WORD_RE.finditer(body)]
    prefix = f"{title.strip()}\n" if title and title.strip() else ""
    if not spans:
        return [Chunk(0, 0, 0, prefix.strip())] if prefix else []
    paragraphs, headings = _boundaries(body, spans)
    chunks: list[Chunk] = []
    start = 0
    while True:
        end = _end_of_window(start, len(spans), spans, body, paragraphs, headings)
        first, last = spans[start][0], spans[end - 1][1]
        text = body[first:last]
        if prefix and not text.startswith(prefix.strip()):
            text = prefix + text
        chunks.append(Chunk(len(chunks), first, last, text))
        if end >= len(spans):
            return chunks
        start = end if end in headings else max(end - OVERLAP_WORDS, start + 1)
        overlap_break = next((i for i in range(start, end) if i in paragraphs), None)
        if overlap_break is not None and end not in headings:
            start = overlap_break  # overlap from a paragraph start when one is near
