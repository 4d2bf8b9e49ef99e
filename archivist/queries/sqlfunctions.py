"""SQL functions the canned queries call; registered on every connection."""

from __future__ import annotations

import datetime as dt
import functools
import importlib.util
import itertools
import json
import os
import re
import urllib.parse
from collections import deque
from collections.abc import Iterable
from typing import Any

from archivist import dates

DATABASE_LIST_SQL = "PRAGMA database_list"
_TERM_RE = re.compile(r'"([^"]*)"|(\S+)')
_PUNCTUATION_ONLY_RE = re.compile(r"^\W+$")
# terms that could be a filter word: a letter and digits, or a kind word
_FILTER_WORD_RE = re.compile(r"^[ktymdpg]\w*\d|^k(conversation|report|memory|record|note)", re.IGNORECASE)


def fts_query(query: str | None, mode: str | None = "all", columns: str | None = "title body") -> str:
    """An FTS5 MATCH expression. ``all``/``any``: escaped terms ANDed/ORed; ``raw``: as given.

    Terms search every column without a column filter (a column filter makes the
    FTS engine read positions, and BM25 counts documents per term: it costs), except
    terms shaped like the filter words of ``documents.filter_tokens`` (``p95``,
    ``y2024``, ``kmemory``), which are kept to the text ``columns`` (documents: the
    title and body; message_index: the text). An empty query becomes ``""``, which
    matches nothing instead of failing.
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
            terms.append("{" + (columns or "title body") + "} : " + quoted if _FILTER_WORD_RE.search(term) else quoted)
    if not terms:
        return '""'
    return (" OR " if mode == "any" else " ").join(terms)


_WORD_RE = re.compile(r"\w+")
_QUOTED_RE = re.compile(r'"(?:[^"]|"")*"')


def _names_a_column(query: str) -> bool:
    """Whether a raw FTS5 expression has a column filter (``title : x``, ``{title body}: x``)."""
    return ":" in _QUOTED_RE.sub("", query)


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


def phrase(query: str | None) -> str:
    """The whole query as one quoted FTS5 phrase (substring search in a trigram index)."""
    text = (query or "").strip()
    return '"' + text.replace('"', '""') + '"' if text else '""'


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


def clamp_limit(value: Any, default: int, maximum: int) -> int:
    """A LIMIT value: the default when blank, within 1..maximum otherwise."""
    try:
        number = int(str(value).strip()) if str(value or "").strip() else default
    except ValueError:
        number = default
    return max(1, min(maximum, number))


def items(value: Any) -> list[str]:
    """A list parameter: comma-separated text (as in a URL) or a JSON array; blanks dropped."""
    text = str(value or "").strip()
    values: list[Any] = []
    if text.startswith("["):
        try:
            parsed = json.loads(text)
            values = parsed if isinstance(parsed, list) else [text]
        except json.JSONDecodeError:
            values = text.strip("[]").split(",")
    elif text:
        values = text.split(",")
    unique: list[str] = []
    for item in values:
        item = str(item).strip().strip('"').strip()
        if item and item not in unique:
            unique.append(item)
    return unique


def list_json(value: Any, style: str | None = "") -> str:
    """``items`` as a JSON array; ``style`` ``lower`` folds case, ``tag`` normalizes as documents do."""
    found = items(value)
    if style == "tag" and found:
        from archivist.documents import normalize_tags  # the same rule that stored the tags

        found = normalize_tags(found)
    elif style == "lower":
        found = list(dict.fromkeys(item.lower() for item in found))
    return json.dumps(found)


def time_bound(value: Any, end: Any = 0) -> float | None:
    """A start_date / end_date as a unix time (dates.parse_bound: one UTC rule for every form)."""
    bound = dates.parse_bound(str(value or ""), end=bool(end))
    return None if bound is None else bound.timestamp()


def _utc(timestamp: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(timestamp, dt.UTC)


def date_words(start: float | None, end: float | None, first: float | None, last: float | None) -> str | None:
    """``{"words": [...], "edge_days": [...]}`` for a time filter (dates.period_words), or NULL without one.

    ``first`` and ``last`` are the archive's oldest and newest document times: an
    open bound stops at the years around them, so the words stay few.
    """
    if start is None and end is None:
        return None
    if first is None or last is None:
        return json.dumps({"words": [], "edge_days": []})
    # a document's day is its author's, up to a day either side of its UTC time
    low = dt.datetime(_utc(first - 86400).year, 1, 1, tzinfo=dt.UTC)
    high = dt.datetime(_utc(last + 86400).year, 12, 31, 23, 59, 59, tzinfo=dt.UTC)
    words, edge_days = dates.period_words(
        low if start is None else max(low, _utc(start)), high if end is None else min(high, _utc(end))
    )
    return json.dumps({"words": words, "edge_days": edge_days})


KIND_WORDS = ("conversation", "report", "memory", "record", "note")


def _hex(value: Any) -> str:
    return str(value).encode("utf-8", "surrogatepass").hex().upper()


def _integer(value: Any) -> int:
    """As SQL's CAST(value AS INTEGER): the leading number, else 0."""
    found = re.match(r"\s*[-+]?\d+", str(value))
    return int(found.group()) if found else 0


def filter_words(filters: str | None, date_spec: str | None) -> str:
    """The search's filters as FTS words (documents.filter_tokens), one OR group per filter.

    ``filters`` is a JSON object of the parsed lists (entities, types, tags, match_all,
    product_ids, agents, projects, models, files); ``date_spec`` is ``date_words``'s.
    Answers ``{"documents", "messages", "files"}``: the groups ANDed for documents_fts,
    those for message_index (``_message_groups``), and the files group alone (files
    touched are a session's, not a message's); each null when there is none. Kind, type
    and date make one word per combination (bugs of May 2024 are
    ``krecordt627567m202405``, a short list in the index); no document carries the word
    ``x``: filters that exclude everything match nothing.
    """
    given = json.loads(filters or "{}")

    def items(key: str) -> list[Any]:
        value = given.get(key) or []
        return value if isinstance(value, list) else []

    entities, types, spec = items("entities"), items("types"), json.loads(date_spec) if date_spec else None
    days = [str(word) for word in spec.get("words", [])] if spec is not None else None
    groups: list[str] = []
    if entities or types or days is not None:
        prefixes = [
            ("k" + str(kind), None) if kind in KIND_WORDS else ("krecordt" + _hex(kind), _hex(kind))
            for kind in entities
        ] or [("", None)]
        codes: list[str | None] = [_hex(kind) for kind in types] or [None]
        scope = {
            prefix + ("t" + code if fixed is None and code is not None else "") + day: None
            for prefix, fixed in prefixes
            for code in codes
            if fixed is None or code is None or code == fixed
            for day in ([""] if days is None else days)
        }
        groups.append(_any_of(word for word in scope if word))
    if tags := items("tags"):
        groups.append("(" + (" AND " if given.get("match_all") else " OR ").join("g" + _hex(t) for t in tags) + ")")
    if products := items("product_ids"):
        groups.append(_any_of(f"p{_integer(p)}" for p in products))
    # conversations by agent, project (a path, or its last folder's name) and model: any of each list
    named = {
        "a": [_hex(v) for v in items("agents")],
        "j": [_hex(str(v).rstrip("/")) for v in items("projects")],
        "o": [_hex(v) for v in items("models")],
    }
    groups.extend(_any_of(letter + code for code in codes_) for letter, codes_ in named.items() if codes_)
    files = [_hex(v) for v in items("files")]
    documents = groups + ([_any_of("f" + code for code in files)] if files else [])
    # no message has tags or a product: with those filters, no message matches
    messages = "(x)" if tags or products else _message_groups(entities, types, days, named)
    return json.dumps(
        {
            "documents": " AND ".join(documents) or None,
            "messages": messages,
            "files": _any_of("f" + code for code in files) if files else None,
        }
    )


FILTER_KEYS = ("entities", "types", "tags", "match_all", "product_ids", "agents", "projects", "models", "files")
KEYWORD_RANKINGS = ("keyword", "hybrid")


def search_words(spec: str | None) -> str:
    """The FTS5 expressions of one search (search.sql), as a JSON object.

    ``spec`` is a JSON object of the search's parsed inputs: ``query``, ``match_mode``
    (all or raw), ``ranking``, the filter lists (``FILTER_KEYS``), ``start_at`` and
    ``end_at`` (Unix seconds), and ``first`` and ``last`` (the archive's oldest and newest
    document times). The filters become FTS words (``filter_words``, the time filter by
    ``date_words``) and the query's words FTS terms (``fts_query``); the answer has one
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
    """
    given = json.loads(spec or "{}")
    # the query as every other function is given it: a NUL ends a text passed to a function,
    # not a JSON string (FTS5 would read the expression only up to it)
    query = str(given.get("query") or "").partition("\x00")[0]
    raw = given.get("match_mode") == "raw"
    ranking = given.get("ranking")
    dated = date_words(given.get("start_at"), given.get("end_at"), given.get("first"), given.get("last"))
    groups = json.loads(filter_words(json.dumps({key: given.get(key) for key in FILTER_KEYS}), dated))

    def words(mode: str, columns: str = "title body") -> str | None:
        if not query:
            return None
        # raw queries keep to the title and body as a whole (fts_query does it per term)
        prefix = "{title body} : " if raw and columns == "title body" else ""
        return prefix + "(" + fts_query(query, "raw" if raw else mode, columns) + ")"

    def both(first: str | None, second: str | None) -> str | None:
        """``first AND second``, or ``first`` alone without a second (null without a first)."""
        return None if first is None else first + (" AND " + second if second is not None else "")

    all_words, any_words = words("all"), words("any")
    filter_group = groups.get("documents")
    filters = None if filter_group is None else f"filter_tokens : ({filter_group})"
    message_filters = None if groups.get("messages") is None else f"filter_tokens : ({groups['messages']})"
    all_and_filters = both(all_words, filters) if all_words is not None else filters
    message_some = both(words("any", "text"), message_filters)
    several_filters = filter_group is not None and " and " in filter_group.lower()
    nothing = '""'
    return json.dumps(
        {
            "every_word": (all_and_filters or nothing) if ranking in KEYWORD_RANKINGS else nothing,
            # one word: documents with some of the words are those with every word, found already
            "some_words": (both(any_words, filters) or nothing)
            if ranking in KEYWORD_RANKINGS and any_words != all_words
            else nothing,
            "newest_matches": (all_and_filters or nothing)
            if ranking == "newest" and (all_words is not None or several_filters)
            else nothing,
            "newest_by_time": filter_group
            if ranking == "newest" and all_words is None and filter_group is not None and not several_filters
            else nothing,
            "filters": (filters or nothing) if ranking in ("semantic", "hybrid", "similar") else nothing,
            "highlight": any_words or all_words or nothing,
            "message_every": (both(words("all", "text"), message_filters) or nothing)
            if ranking in (*KEYWORD_RANKINGS, "newest")
            else nothing,
            "message_some": (message_some or nothing) if ranking in KEYWORD_RANKINGS else nothing,
            "message_best": message_some or nothing,
            "session_files": None if groups.get("files") is None else f"filter_tokens : ({groups['files']})",
            "everything": all_and_filters is None,
            "edge_days": json.loads(dated)["edge_days"] if dated else [],
        }
    )


def _any_of(words: Iterable[str]) -> str:
    return "(" + (" OR ".join(words) or "x") + ")"


def _message_groups(
    entities: list[Any], types: list[Any], days: list[str] | None, named: dict[str, list[str]]
) -> str | None:
    """The filters as message_index's words (store._insert_messages), or "x" when no message can match.

    Every message is a conversation's, so a kind filter only asks whether conversations
    are among its kinds. A date is carried by the rarest group that can hold it: an
    agent's or a project's words of that date (``a<hex>m202507``: the messages of one
    agent in one month, a short list) else the type's, else the date alone; FTS5 reads
    every list of a query to rank its matches, so shorter lists answer sooner.
    """
    if entities and "conversation" not in entities:
        return "(x)"
    days_ = None if days is None else days or ["x"]  # a date range no message can be in
    carrier = next((letter for letter in ("a", "j") if named[letter]), "t" if types else None)
    groups = []
    if types:
        codes = [_hex(kind) for kind in types]
        dated = days_ if carrier == "t" and days_ is not None else [""]
        groups.append(_any_of("t" + code + day for code in codes for day in dated))
    for letter in ("a", "j", "o"):
        if named[letter]:
            dated = days_ if carrier == letter and days_ is not None else [""]
            groups.append(_any_of(letter + code + day for code in named[letter] for day in dated))
    if days_ is not None and carrier is None:
        groups.append(_any_of(days_))
    return " AND ".join(groups) or None


FACETS = ("kind", "type", "month", "day", "tags", "product_id", "agent", "project", "model")
LIST_FACETS = frozenset(("tags", "model"))  # JSON arrays: each of their values counts
ALL_VALUES = frozenset(("kind", "type", "month", "day", "agent"))  # every value listed; others: the first 50
FACET_VALUES = 50
PERIODS = frozenset(("month", "day"))  # newest first; the others: most first, then by value


def _sql_order(value: Any) -> tuple[int, Any]:
    """SQLite's order of values: numbers before text."""
    return (1, value) if isinstance(value, str) else (0, value)


class FacetCounts:
    """``archivist_facets(kind, type, month, day, tags, product_id, agent, project, models)``: an
    aggregate of the documents of a search, answering each facet's counts as one JSON object,
    every facet named: ``{"kind": {"note": 12, ...}, "type": {...}, ...}``.

    Each facet's values come most first (months and days: newest first), then by value; 50
    at most, but for kind, type, month, day and agent. NULLs are not counted; ``tags`` and
    ``models`` are JSON arrays, each of whose values counts.
    """

    def __init__(self) -> None:
        self.counts: dict[str, dict[Any, int]] = {facet: {} for facet in FACETS}

    def step(self, *values: Any) -> None:
        for facet, value in zip(FACETS, values, strict=False):
            if value is None:
                continue
            counts = self.counts[facet]
            if facet not in LIST_FACETS:
                counts[value] = counts.get(value, 0) + 1
                continue
            if value == "[]":
                continue
            try:
                found = json.loads(value)
            except ValueError:  # not JSON: the text is the one value
                found = [value]
            for item in found if isinstance(found, list) else [found]:
                if item is None:
                    continue
                if isinstance(item, bool):  # json_each's 1 and 0
                    item = int(item)
                elif isinstance(item, (list, dict)):
                    item = json.dumps(item, separators=(",", ":"))
                counts[item] = counts.get(item, 0) + 1

    def finalize(self) -> str:
        parts = []
        for facet in FACETS:
            counts = self.counts[facet]
            if facet in PERIODS:
                ordered = sorted(counts.items(), key=lambda item: _sql_order(item[0]), reverse=True)
            else:
                ordered = sorted(counts.items(), key=lambda item: (-item[1], _sql_order(item[0])))
            if facet not in ALL_VALUES:
                ordered = ordered[:FACET_VALUES]
            values = ",".join(f"{json.dumps(str(value), ensure_ascii=False)}:{n}" for value, n in ordered)
            parts.append(f'"{facet}":{{{values}}}')
        return "{" + ",".join(parts) + "}"


def file_url(absolute_path: str | None) -> str | None:
    if not absolute_path:
        return None
    return "file://" + urllib.parse.quote(absolute_path)


def make_report_link(base_url: str | None):
    def report_link(command: str | None, name: str | None, absolute_path: str | None) -> str | None:
        if base_url and command and name:
            return f"{base_url.rstrip('/')}/{urllib.parse.quote(command)}/{urllib.parse.quote(name)}"
        return file_url(absolute_path)

    return report_link


def database_file(conn: Any) -> str:
    """The file behind a connection's main database ('' for an in-memory one)."""
    for _seq, name, path in conn.execute(DATABASE_LIST_SQL).fetchall():
        if name == "main":
            return path or ""
    return ""


def make_embed(db_file: str):
    def embed_query(text: str | None) -> bytes | None:
        """The query's vector; none for an archive without vectors (nothing to search by meaning
        there: the model is not loaded for it)."""
        from archivist.semantic import vectors

        if db_file and not vectors.searchable(db_file):
            return None
        from archivist.semantic.onnx_model import query_vector  # the model loads on the first query, not before

        return query_vector(text or "")

    return embed_query


def model_id() -> str:
    """The embedding model's id, as llm knows it (the model itself is not loaded)."""
    from archivist.semantic.onnx_model import MODEL_ID

    return MODEL_ID


def make_nearest(db_file: str):
    def nearest(query: bytes | None, collection: str, k: Any, allowed: str | None = None) -> str:
        if query is None:
            return "[]"  # nothing to search by meaning (a keyword search): the vectors are not needed
        from archivist.semantic import vectors

        return vectors.nearest(db_file, query, collection, int(k or 10), allowed)

    return nearest


def load_sqlite_vec(conn: Any) -> None:
    """sqlite-vec's functions (vec_distance_cosine, …) for hand-written SQL; needs pysqlite3."""
    if not hasattr(conn, "enable_load_extension"):
        return
    conn.enable_load_extension(True)
    try:
        conn.load_extension(sqlite_vec_path())
    finally:
        conn.enable_load_extension(False)


@functools.cache
def sqlite_vec_path() -> str:
    """``sqlite_vec.loadable_path()``, found without importing sqlite_vec: it imports numpy, a
    sixth of a second before any first query of a new process."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or spec.origin is None:
        raise ImportError("sqlite-vec is not installed")
    return os.path.join(os.path.dirname(spec.origin), "vec0")


# Semantic matches below this cosine similarity are dropped by default: the highest floor that
# clears every nonsense query of bench/similarity_floor.py while keeping 96% of SciFact's
# relevant train documents (hybrid test nDCG@10 0.722 with it, 0.721 without).
SIMILARITY_FLOOR = 0.32


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
        ("archivist_phrase", 1): phrase,
        ("archivist_count", 2): count_matches,
        ("archivist_excerpt", 3): excerpt,
        ("archivist_limit", 3): clamp_limit,
        ("archivist_list", 1): list_json,
        ("archivist_list", 2): list_json,
        ("archivist_time", 2): time_bound,
        ("archivist_date_words", 4): date_words,
        ("archivist_search_words", 1): search_words,
        ("archivist_report_link", 3): make_report_link(settings.get("report_link_base_url")),
        ("archivist_embed", 1): make_embed(db_file),
        ("archivist_model", 0): model_id,
        ("archivist_similarity_floor", 0): lambda: float(settings.get("similarity_floor", SIMILARITY_FLOOR)),
        ("archivist_nearest", 3): nearest,
        ("archivist_nearest", 4): nearest,
    }
    for (name, arity), function in functions.items():
        # archivist_nearest reads vectors that change between runs, and archivist_time
        # reads the clock for "yesterday": neither is deterministic
        deterministic = name not in ("archivist_nearest", "archivist_time")
        conn.create_function(name, arity, function, deterministic=deterministic)
    conn.create_aggregate("archivist_facets", len(FACETS), FacetCounts)
