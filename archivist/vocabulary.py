"""The filter vocabulary: the words of the FTS column ``filter_tokens`` that a search's filters match.

Both directions of one encoding live here: indexing writes a document's or a message's facts
as words (``words``), a search turns its filter values into the same words, as FTS5
expressions (``expressions``), and ``decode`` reads a word back into its keys and values.
Every key is declared once: its prefix, how a value is normalised (the same on both sides,
so that a filter finds what indexing wrote), and how the value is written after the prefix.

A word is a prefix and a value's code: ``p95`` (product 95), ``g707974686f6e`` (the tag
``python``: its UTF-8 in hex, so that any text is one exact word whatever its characters).
Kind, type and date make one compound word per combination (``krecordt627567m202405``, a
bug of May 2024), so that a filter on kind, type and date is one rare word instead of three
common ones: the FTS engine intersects fewer and shorter lists, and BM25 counts the
documents of every word of a query, filters included. A message of an agent log has its
agent's and project's words dated too (``a<hex>m202507``: one agent's messages of one month,
a short list). The FTS tokenizer folds case; the words are written in lower case.

A key that a search filters on by itself (agents, projects, models, ...) is one entry of
``KEYS``: indexing writes it and a search reads it from that entry alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple


def _hex(text: str) -> str:
    """Any text as one word: its UTF-8 in hex (a lone surrogate as Python's "surrogatepass" writes it)."""
    return text.encode("utf-8", "surrogatepass").hex()


def _unhex(code: str) -> str:
    return bytes.fromhex(code).decode("utf-8", "surrogatepass")


def _integer(value: Any) -> str:
    """As SQL's CAST(value AS INTEGER): the leading number (within 64 bits), else 0."""
    found = re.match(r"\s*([-+]?)0*(\d+)", str(value))
    if not found:
        return "0"
    number = int(found[2]) if len(found[2]) <= 19 else 1 << 63  # (not thousands of digits to read)
    return str(max(-(1 << 63), min((1 << 63) - 1, -number if found[1] == "-" else number)))


def _text(value: Any) -> str:
    return str(value)


def _lower(value: Any) -> str:
    return str(value).lower()


def _folder(value: Any) -> str:
    """A path without its trailing slashes (the root stays ``/``)."""
    return str(value).rstrip("/") or "/"


def _itself(value: str) -> tuple[str, ...]:
    return (value,)


def _and_last_name(path: str) -> tuple[str, ...]:
    """A path is found by itself and by its last name (a project's folder, a file's name)."""
    return (path, path.rsplit("/", 1)[-1])


def _digits(date: str) -> str:
    return date.replace("-", "")


def _dashed(digits: str) -> str:
    return "-".join(part for part in (digits[:4], digits[4:6], digits[6:]) if part)


HEX = "(?:[0-9a-f]{2})+"


@dataclass(frozen=True)
class Key:
    """One fact that a search can filter on, and how its words are made and read."""

    name: str  # what ``decode`` calls it
    prefix: str  # the letter its words start with
    pattern: str  # a regular expression of the code after the prefix
    normalise: Callable[[Any], str]  # a value as indexing writes it and a search reads it
    encode: Callable[[str], str]  # a normalised value as the code after the prefix
    decode: Callable[[str], str]  # the code back into the normalised value
    fact: str = ""  # the field of a document's (or a message's) facts that holds it
    filter: str = ""  # the search filter (a list of values) that reads it
    names: Callable[[str], Iterable[str]] = _itself  # indexing: what a value is found by
    many: bool = False  # the fact is a list: each of its values has its words
    kinds: frozenset[str] | None = None  # the kinds of document that carry it (None: every kind)
    default: str | None = None  # written for a document of those kinds without the fact
    # whether a message of an agent log carries it: "own" (its own words), "session" (its
    # session's only: the search applies it to the session), "none" (no message matches)
    messages: Literal["own", "session", "none"] = "none"
    dated: bool = False  # a message carries it with its day, month and year too (a<hex>m202507)
    every: bool = False  # a search can ask for every value (``match_all``) instead of any

    def word(self, value: Any) -> str:
        return self.prefix + self.encode(self.normalise(value))

    def wanted(self, filters: Mapping[str, Any]) -> list[str]:
        """The values a search's filters ask for of this key, normalised (blanks left out, as indexing does)."""
        given = filters.get(self.filter) or []
        return (
            [self.normalise(value) for value in given if value is not None and value != ""]
            if isinstance(given, list)
            else []
        )

    def written(self, facts: Mapping[str, Any]) -> list[str]:
        """The words indexing writes for this key of a document's or a message's facts."""
        if self.kinds is not None and facts.get("kind") not in self.kinds:
            return []
        value = facts.get(self.fact)
        if self.many:
            if not any(item is not None and item != "" for item in value or []):
                if self.default is None:
                    return []
                value = [self.default]
            values: Iterable[str] = dict.fromkeys(map(self.normalise, value or []))
        elif value is None or value == "":
            if self.default is None:
                return []
            values = (self.normalise(self.default),)
        else:
            values = (self.normalise(value),)
        prefix, encode, names = self.prefix, self.encode, self.names
        if names is _itself:
            return [prefix + encode(value) for value in values if value]
        return [prefix + encode(name) for value in values for name in dict.fromkeys(names(value)) if name]


def text_key(name: str, prefix: str, fact: str, filter: str, **options: Any) -> Key:
    """A key whose values are any text, each written as its UTF-8 in hex."""
    return Key(name, prefix, HEX, options.pop("normalise", _text), _hex, _unhex, fact=fact, filter=filter, **options)


# The compound word's keys: [k<kind>][t<type>][y<YYYY> | m<YYYYMM> | d<YYYYMMDD>]
KINDS = ("conversation", "report", "memory", "record", "note")  # a kind is written as itself
RECORD = "record"  # the kind whose types a search names as entities (bug, feature, ...)
KIND = Key("kind", "k", "|".join(KINDS), _lower, _text, _text, fact="kind", filter="entities")
TYPE = text_key("type", "t", "type", "types")
YEAR = Key("year", "y", r"\d{4}", _text, _digits, _dashed)
MONTH = Key("month", "m", r"\d{6}", _text, _digits, _dashed, fact="month")  # YYYY-MM
DAY = Key("day", "d", r"\d{8}", _text, _digits, _dashed, fact="day")  # YYYY-MM-DD
DATES = (YEAR, MONTH, DAY)


CONVERSATIONS = frozenset(("conversation",))
DOCUMENT_ROLE = "document"  # the role of the workspace's own documents
# What a session's own text is made of: its title and opening prompt, and its chunks for the
# search by meaning (the document_texts view), are its user and assistant messages.
SESSION_TEXT_ROLES = ("user", "assistant")
# The keys a search filters on by itself, in the order of their words and of a search's groups.
# A conversation's agent (an agent-log kind, or "workspace" for the workspace's own), project
# (its path, or its last folder's name), models, the files it touched and the tools it used.
KEYS = (
    Key("product_id", "p", r"-?\d+", _integer, _text, _text, fact="product_id", filter="product_ids"),
    text_key("tag", "g", "tags", "tags", many=True, every=True),
    text_key(
        "agent",
        "a",
        "agent",
        "agents",
        normalise=_lower,
        kinds=CONVERSATIONS,
        default="workspace",
        messages="own",
        dated=True,
    ),
    text_key(
        "project",
        "j",
        "project",
        "projects",
        normalise=_folder,
        names=_and_last_name,
        kinds=CONVERSATIONS,
        messages="own",
        dated=True,
    ),
    text_key("model", "o", "models", "models", many=True, kinds=CONVERSATIONS, messages="own"),
    text_key("file", "f", "files", "files", names=_and_last_name, many=True, kinds=CONVERSATIONS, messages="session"),
    # the tools a session's calls used (Bash, Edit, read_file: as its log names them, any case)
    text_key("tool", "u", "tools", "tools", normalise=_lower, many=True, kinds=CONVERSATIONS, messages="session"),
    # the role of what a hit is: a message's own (user, assistant, ...), or one of the
    # workspace's documents (document); a session holds the roles of its messages, and its own
    # text is a hit only where all of them may be (``Expressions.whole``)
    text_key("role", "r", "roles", "roles", normalise=_lower, many=True, default=DOCUMENT_ROLE, messages="own"),
    # the git branch a session ran on, as its log names it
    text_key("branch", "b", "branch", "branches", kinds=CONVERSATIONS, messages="session"),
    # the machine a session's logs were synced from (``archivist sync``); this machine's carry none
    text_key("host", "h", "host", "hosts", normalise=_lower, kinds=CONVERSATIONS, messages="session"),
)
ROLE = next(key for key in KEYS if key.name == "role")
ALL_KEYS = (KIND, TYPE, *DATES, *KEYS)
FILTERS = ("entities", "types", "match_all", *(key.filter for key in KEYS))  # a search's filter inputs


# --- indexing: a document's or a message's facts as words ---------------------------------------


def words(facts: Mapping[str, Any]) -> list[str]:
    """The words of a document's (or a message's) facts, for its FTS ``filter_tokens`` column.

    ``facts`` holds ``kind``, ``type``, ``month`` (YYYY-MM) and ``day`` (YYYY-MM-DD), and
    each key's ``fact`` (``product_id``, ``tags``, ``agent``, ``project``, ``models``,
    ``files``). Every combination of a prefix (none, kind, type, both) and a date (none,
    year, month, day) is one word; then each key's words. A message (``dated_names``) has
    its dated keys' words with each of its dates too; a session that runs past midnight
    (``more_days``) has each of its days with every prefix.
    """
    kind = KIND.word(facts["kind"])
    prefixes = [kind]
    if facts.get("type"):
        typed = TYPE.word(facts["type"])
        prefixes += [typed, kind + typed]
    dates = ["", *_date_words(facts.get("month"), facts.get("day"))]
    found = [prefix + date for prefix in ["", *prefixes] for date in dates if prefix + date]
    dated: list[str] = []
    for key in KEYS:
        written = key.written(facts)
        found += written
        if key.dated:
            dated += written
    if facts.get("dated_names") and facts.get("day"):
        day = str(facts["day"])
        found.extend(name + date for name in dated for date in _date_words(day[:7], day))
    for day in facts.get("more_days") or []:
        found.extend(prefix + DAY.word(day) for prefix in ["", *prefixes])
    return found


def _date_words(month: Any, day: Any) -> list[str]:
    """A date's words: its year's and month's (known to the month), and its day's (to the day)."""
    found = [YEAR.word(str(month)[:4]), MONTH.word(month)] if month else []
    return found + [DAY.word(day)] if day else found


# --- searching: a search's filter values as the words to match ----------------------------------


class Expressions(NamedTuple):
    """A search's filters as FTS5 expressions of the ``filter_tokens`` column; None: no filter."""

    documents: str | None  # documents_fts: one group per filter, ANDed
    messages: str | None  # message_index: the filters a message holds ("(x)": no message can match)
    session: str | None  # the filters of a message's session alone (the files it touched)
    # documents_fts, for a document's own text as a hit (by its words or its meaning), where a
    # filter of each hit's own (roles) asks less of it than ``documents``; None: the same
    whole: str | None = None


NOTHING = "x"  # no document carries it: filters that exclude everything match nothing


def expressions(filters: Mapping[str, Any], days: list[str] | None = None) -> Expressions:
    """The words a search's ``filters`` match, one OR group per filter (AND for every tag).

    ``filters`` holds lists of values by filter name (``FILTERS``: entities, types, tags,
    product_ids, agents, ...) and ``match_all``; ``days`` is the time filter as date words
    (``dates.period_words``), None without one. Kind, type and date make one word per
    combination: bugs of May 2024 are ``krecordt627567m202405``, a short list in the index.
    """
    entities, types = KIND.wanted(filters), TYPE.wanted(filters)
    chosen = {key: key.wanted(filters) for key in KEYS}
    groups = [] if not (entities or types or days is not None) else [_compound(entities, types, days)]
    session: list[str] = []
    for key, given in chosen.items():
        if given:
            joined = " AND " if key.every and filters.get("match_all") else " OR "
            group = "(" + joined.join(key.prefix + key.encode(value) for value in given) + ")"
            (session if key.messages == "session" else groups).append(group)
    groups += session
    whole = None
    if chosen[ROLE]:
        own = "(" + " OR ".join(ROLE.prefix + ROLE.encode(role) for role in chosen[ROLE]) + ")"
        whole = " AND ".join(group if group != own else _whole_roles(chosen[ROLE]) for group in groups)
    return Expressions(
        " AND ".join(groups) or None,
        _message_groups(entities, types, days, chosen),
        " AND ".join(session) or None,
        whole,
    )


def _whole_roles(roles: list[str]) -> str:
    """The roles group for a document's own text as a hit: a workspace document's role, and a
    session's text (``SESSION_TEXT_ROLES``) only where all of those roles are asked for."""
    wanted = [DOCUMENT_ROLE] if DOCUMENT_ROLE in roles else []
    if all(role in roles for role in SESSION_TEXT_ROLES):
        wanted += SESSION_TEXT_ROLES
    return _any_of(ROLE.prefix + ROLE.encode(role) for role in wanted)


def _any_of(found: Iterable[str]) -> str:
    return "(" + (" OR ".join(found) or NOTHING) + ")"


def _compound(entities: list[str], types: list[str], days: list[str] | None) -> str:
    """Entities (kinds, or the types of records), types and dates as compound words, any of them."""
    prefixes = [
        (KIND.word(entity), None) if entity in KINDS else (KIND.word(RECORD) + TYPE.word(entity), TYPE.word(entity))
        for entity in entities
    ] or [("", None)]
    typed: list[str | None] = [TYPE.word(kind) for kind in types] or [None]
    scope = {
        prefix + (code if fixed is None and code is not None else "") + day: None
        for prefix, fixed in prefixes
        for code in typed
        if fixed is None or code is None or code == fixed
        for day in ([""] if days is None else days)
    }
    return _any_of(word for word in scope if word)


def _message_groups(
    entities: list[str], types: list[str], days: list[str] | None, chosen: dict[Key, list[str]]
) -> str | None:
    """The filters as message_index's words, or "(x)" when no message can match.

    Every message is a conversation's, so a kind filter only asks whether conversations
    are among its kinds. A date is carried by the rarest group that can hold it: a dated
    key's words of that date (an agent's messages of one month, a short list) else the
    type's, else the date alone; FTS5 reads every list of a query to rank its matches, so
    shorter lists answer sooner.
    """
    if entities and "conversation" not in entities:
        return _any_of([])
    if any(given for key, given in chosen.items() if key.messages == "none"):
        return _any_of([])
    days_ = None if days is None else days or [NOTHING]  # a date range no message can be in
    carrier = next((key for key in KEYS if key.dated and chosen[key]), TYPE if types else None)
    groups = []
    if types:
        dated = days_ if carrier is TYPE and days_ is not None else [""]
        groups.append(_any_of(TYPE.word(kind) + day for kind in types for day in dated))
    for key, given in chosen.items():
        if given and key.messages == "own":
            dated = days_ if carrier is key and days_ is not None else [""]
            groups.append(_any_of(key.prefix + key.encode(value) + day for value in given for day in dated))
    if days_ is not None and carrier is None:
        groups.append(_any_of(days_))
    return " AND ".join(groups) or None


# --- reading a word back ------------------------------------------------------------------------

_BY_NAME = {key.name: key for key in ALL_KEYS}
_DATE = "|".join(f"(?P<{key.name}>{key.prefix}{key.pattern})" for key in DATES)
_COMPOUND_RE = re.compile(
    f"(?:{KIND.prefix}(?P<kind>{KIND.pattern}))?(?:{TYPE.prefix}(?P<type>{TYPE.pattern}?))?(?:{_DATE})?"
)
_KEY_RES = {
    key: re.compile(f"{key.prefix}(?P<code>{key.pattern}{'?' if key.pattern == HEX else ''})(?:{_DATE})?")
    for key in KEYS
}


def encode(parts: Iterable[tuple[str, Any]]) -> str:
    """One word of keys and values, in the order ``decode`` reads them: ``encode(decode(word)) == word``."""
    return "".join(_BY_NAME[name].word(value) for name, value in parts)


def decode(word: str) -> list[tuple[str, str]]:
    """A filter word's keys and their normalised values, e.g. ``krecordt627567m202405`` is
    ``[("kind", "record"), ("type", "bug"), ("month", "2024-05")]``; ValueError if not a word."""
    word = word.lower()
    try:
        for key, pattern in _KEY_RES.items():
            found = pattern.fullmatch(word)
            if found and (key.dated or not any(found[date.name] for date in DATES)):
                return [(key.name, key.decode(found["code"])), *_dates(found)]
        found = _COMPOUND_RE.fullmatch(word)
        if found and word:
            parts = [(key.name, key.decode(found[key.name])) for key in (KIND, TYPE) if found[key.name] is not None]
            return parts + _dates(found)
    except UnicodeDecodeError as error:  # hex of bytes that are not UTF-8
        raise ValueError(f"not a filter word: {word!r} ({error.reason})") from error
    raise ValueError(f"not a filter word: {word!r}")


def _dates(found: re.Match[str]) -> list[tuple[str, str]]:
    return [(key.name, key.decode(found[key.name][1:])) for key in DATES if found[key.name]]


_TOKEN_RE = re.compile(r"[^\W_]+")  # the FTS tokenizer's words: letters and digits
_PREFIXES = "".join(sorted({key.prefix for key in ALL_KEYS}))
# what a word of a query must look like to find a filter word once the stemmer has had both:
# a prefix and a digit somewhere after it (p95s is p95 to the stemmer, g6a7s may be g6a7), or a
# kind's word (kmemories is kmemory to the stemmer)
_FILTER_LIKE_RE = re.compile(rf"[{_PREFIXES}][^\W_]*\d|k(?:{'|'.join(kind[:4] for kind in KINDS)})")


def is_filter_word(term: str) -> bool:
    """Whether a term of a query could find a filter word (``p95``, ``y2024``, ``kmemory``), also
    after the stemmer has had it (``p95s``, ``kmemories``): one of its words starts with a key's
    prefix and holds a digit after it, or starts with a kind's word. A superset, to be safe: such
    a term is kept to the text columns, which costs a little and never finds a filter word.
    """
    return any(_FILTER_LIKE_RE.match(token) for token in _TOKEN_RE.findall(term.lower()))
