"""What a result shows of its text: snippets, excerpts and previews around the query's words."""

from __future__ import annotations

import functools
import itertools
import re
from collections import deque
from collections.abc import Iterable

_WORD_RE = re.compile(r"\w+")


def _stem(word: str) -> str:
    """A word's stem, roughly as the porter tokenizer finds it (timeouts, timed -> time)."""
    word = word.casefold()
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


SNIPPET_SCAN = 1 << 20  # characters looked through for a first word of the query


def snippet(text: str | None, query: str | None, words: int | None = 24) -> str:
    """About ``words`` words of ``text`` around its first word of the query, those words in
    ``<mark>``; ``...`` where cut. For a table with no copy of its text (message_index).

    Reads the text only up to the window (and no further than ``SNIPPET_SCAN`` characters
    for the first word): a message of megabytes costs what its start costs.
    """
    if not text:
        return ""
    stems = tuple({_stem(word) for word in _WORD_RE.findall(query or "")})
    size = max(1, int(words or 24))

    def hit(token: re.Match[str]) -> bool:
        return bool(stems) and _stem(token.group()).startswith(stems)

    before: deque[re.Match[str]] = deque(maxlen=size // 3)
    seen = 0  # the words before the first hit
    chosen: list[re.Match[str]] = []
    for token in _WORD_RE.finditer(text):
        if chosen:
            if len(chosen) >= size:
                break
            chosen.append(token)
        elif hit(token):
            chosen = [*before, token]
        elif token.start() > SNIPPET_SCAN:
            break
        else:
            before.append(token)
            seen += 1
    if not chosen:  # no word of the query: the start
        seen, chosen = 0, list(itertools.islice(_WORD_RE.finditer(text), size))
    if not chosen:
        return " ".join(text[:SNIPPET_SCAN].split())[:200]
    cut = seen > len(before)  # words before the window: it starts at its first word
    start, end = (chosen[0].start() if cut else 0), chosen[-1].end()
    marked, position = [], start
    for token in chosen:
        if hit(token):
            marked += [text[position : token.start()], "<mark>", token.group(), "</mark>"]
            position = token.end()
    marked.append(text[position:end])
    body = " ".join("".join(marked).split())
    return ("..." if start > 0 else "") + body + ("..." if _NOT_SPACE_RE.search(text, end) else "")


_NOT_SPACE_RE = re.compile(r"\S")


# FTS5 operators of a raw query: not words to look for
_OPERATORS = frozenset(("AND", "OR", "NOT", "NEAR"))
AROUND_HITS = 8  # occurrences of each word of the query weighed for the best stretch
# bytes of a word: ASCII letters, digits and _, and every byte of a non-ASCII character
_WORD_BYTES = frozenset(b"_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") | frozenset(
    range(0x80, 0x100)
)


@functools.lru_cache(maxsize=64)
def _query_stems(query: str) -> tuple[bytes, ...]:
    """The words of ``query`` as lower-case UTF-8 stems, longest first (FTS5 operators left out)."""
    stems = {_stem(word).lower().encode("utf-8") for word in _WORD_RE.findall(query) if word not in _OPERATORS}
    longer = {stem for stem in stems if len(stem) > 1}  # a letter alone says little, and is everywhere
    return tuple(sorted(longer or stems, key=len, reverse=True))


def _word_hits(low: bytes, stem: bytes) -> Iterable[int]:
    """Where words starting with ``stem`` start in ``low`` (a short stem: the whole word)."""
    found, tried, position = 0, 0, low.find(stem)
    while position >= 0 and found < AROUND_HITS and tried < 4 * AROUND_HITS:  # a short stem is in many words
        tried += 1
        after = position + len(stem)
        if (position == 0 or low[position - 1] not in _WORD_BYTES) and (
            len(stem) > 3 or after == len(low) or low[after] not in _WORD_BYTES
        ):
            found += 1
            yield position
        position = low.find(stem, after)


def around(text: str | bytes | None, query: str | None, chars: int | None = 72) -> str | None:
    """About ``chars`` characters of ``text`` on one line, around its stretch with the most
    different words of the query (the first such), plain; ``...`` where cut. NULL when no
    word of the query is in the text (whose words the porter stemmer may still match).

    The words are looked for in the UTF-8 bytes, ASCII letters in any case: a long text
    costs little more than its first hits. SQL passes the text as a BLOB (its UTF-8 bytes:
    ``CAST(text AS BLOB)``), which spares decoding all of it only to encode it again.
    """
    stems = _query_stems(query or "") if text else ()
    if text is None or not stems:
        return None
    if isinstance(text, bytes):
        raw, scanned_all = text[: SNIPPET_SCAN * 4], len(text) <= SNIPPET_SCAN * 4  # (a character: 4 bytes at most)
    else:
        raw, scanned_all = text[:SNIPPET_SCAN].encode("utf-8", "surrogatepass"), len(text) <= SNIPPET_SCAN
    low = raw.lower()  # ASCII letters only, so that positions stay those of raw
    hits = sorted((position, n) for n, stem in enumerate(stems) for position in _word_hits(low, stem))
    if not hits:
        return None
    size = max(8, int(chars or 72))
    # the stretch of the window (most of it, in bytes) with the most different words, the first such
    reach, best, best_words, last = size * 3 // 4, hits[0][0], 0, 0
    seen: dict[int, int] = {}  # the words in the stretch: how many times each
    for position, n in hits:
        seen[n] = seen.get(n, 0) + 1
        while hits[last][0] <= position - reach:
            seen[hits[last][1]] -= 1
            if not seen[hits[last][1]]:
                del seen[hits[last][1]]
            last += 1
        if len(seen) > best_words:
            best, best_words = hits[last][0], len(seen)
    # a little of what comes before the stretch, from a word's start (near the start: from there)
    begin = 0 if best < size // 2 else best - size // 5
    if begin > 0:  # the last space before, else the first after
        space = raw.rfind(b" ", max(0, begin - 12), begin + 1)
        if space < 0:
            space = raw.find(b" ", begin, best)
        begin = space + 1 if space >= 0 else best
    end = begin + size * 8  # bytes enough for twice the characters wanted
    read = raw[begin:end].decode("utf-8", "ignore")
    line = " ".join(read[: size * 2].split())
    more = (
        len(line) > size
        or bool(read[size * 2 :].strip())
        or bool(_NOT_SPACE_BYTES_RE.search(raw, end))
        or not scanned_all
    )
    if len(line) > size:
        cut = line.rfind(" ", 0, size + 1)
        line = line[: cut if cut > size // 2 else size]
    return ("..." if begin > 0 else "") + line + ("..." if more else "")


_NOT_SPACE_BYTES_RE = re.compile(rb"\S")


def preview(text: str | None, limit: int | None = 200) -> str | None:
    """``text`` on one line, at most ``limit`` characters: cut at a word's end, ``...`` where cut."""
    if text is None:
        return None
    size = max(4, int(limit or 200))
    line = " ".join(text.split())
    if len(line) <= size:
        return line
    cut = line.rfind(" ", 0, size - 2)
    return line[: cut if cut > size // 2 else size - 3].rstrip() + "..."


def count_matches(body: str | None, query: str | None) -> int:
    """Case-insensitive count of non-overlapping occurrences of the query in the body."""
    needle = (query or "").strip().casefold()
    if not body or not needle:
        return 0
    return body.casefold().count(needle)


def excerpt(body: str | None, query: str | None, radius: int | None = 100) -> str:
    """About ``radius`` characters either side of the first match, ``...`` where cut."""
    if not body:
        return ""
    radius = int(radius or 100)
    needle = (query or "").strip().casefold()
    position = body.casefold().find(needle) if needle else -1
    if position < 0:
        position, length = 0, 0
    else:
        length = len(needle)
    start = max(0, position - radius)
    end = min(len(body), position + length + radius)
    text = " ".join(body[start:end].split())
    return ("..." if start > 0 else "") + text + ("..." if end < len(body) else "")
