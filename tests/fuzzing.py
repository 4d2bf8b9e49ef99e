"""Hostile arguments for every MCP tool and HTTP surface, and what every answer must satisfy (docs/errors.md).

One home for the strategies and the checks, shared by tests/test_fuzz.py (a bounded
run inside the test suite) and bench/fuzz.py (the long run). Arguments mix valid
values with wrong JSON types, huge strings, thousands of words, NUL and control
characters, unicode, FTS5 syntax, SQL fragments, path traversal and out-of-range
numbers. A check returns the properties an answer breaks, as ``Violation``s:

- the call answered (no exception reached the client) within the time bound;
- an error is ``isError`` with the structured body ``{"success": false, "error", "code"}``,
  a code of archivist/errors.py, never ``INTERNAL_ERROR``;
- no text carries raw SQL, an SQLite error or a traceback;
- a success has the tool's shape, and its text is its structured content;
- a ``workspace_path`` outside the allowed workspace never succeeds, and nothing is written
  into a folder outside it.

The embedding tools only ever get a ``workspace_path`` or ``path`` that must fail fast:
never a real folder of the machine, never the whole sample workspace.

The agent logs of every kind registered are damaged here too (the section "agent logs" below):
each kind's sample, damaged in one file or store, indexed as a source.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
import shutil
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote as url_quote
from urllib.parse import unquote, urlencode

from anyio.from_thread import BlockingPortal, start_blocking_portal
from conftest import LOGS, sample_source
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy
from mcp import Client
from test_agentlogs_mutations import time_limit

from archivist.errors import CODES
from archivist.queries.filters import FILTERS

T = TypeVar("T")

TOOLS = (
    "search_workspace",
    "search_reports",
    "list_command_reports",
    "get_report",
    "search_commands",
    "search",
    "search_semantic",
    "get_similar",
    "embed_document",
    "embed_workspace",
    "get_embedding_status",
    "list_conversations",
    "get_conversation",
    "usage",
    "file_history",
    "activity",
)
EMBEDDING_TOOLS = ("embed_document", "embed_workspace")
ROW_TOOLS = (
    "search_workspace",
    "search_reports",
    "list_command_reports",
    "search_commands",
    "search_semantic",
    "get_similar",
    "list_conversations",
    "usage",
    "file_history",
    "activity",
)

# Text that only an SQL error, SQLite itself or a Python traceback puts in an answer.
LEAK_MARKERS = (
    "SELECT ",
    "no such column",
    "no such table",
    "no such function",
    "sqlite3.",
    "OperationalError",
    "ProgrammingError",
    "IntegrityError",
    "DatabaseError",
    "Traceback",
    'near "',
    "fts5:",
    "unrecognized token",
    'File "/',
)

# The same properties, named once: test and bench count and report them by these names.
EXCEPTION = "exception"
HANG = "hang"
NO_BODY = "error without the error body"
INTERNAL = "INTERNAL_ERROR"
LEAK = "raw SQL / traceback leak"
SHAPE = "bad success shape"
FOREIGN = "foreign workspace answered"
WROTE = "wrote outside the workspace"
SERVER_ERROR = "HTTP 5xx"
LOST = "sessions lost"  # an agent-log source damaged: a session the damage spares, not stored
NOT_UTF8_STORED = "text stored that is not UTF-8"  # a lone surrogate, or a byte that is not UTF-8, in the archive
PROPERTIES = (EXCEPTION, HANG, NO_BODY, INTERNAL, LEAK, SHAPE, FOREIGN, WROTE, SERVER_ERROR, LOST, NOT_UTF8_STORED)


@dataclass(frozen=True)
class Violation:
    property: str
    detail: str


@dataclass(frozen=True)
class Place:
    """The folders a run works with, and values read from the server's archive."""

    workspace: Path  # the server's own, and the only allowed one (a disposable copy of the sample)
    foreign: Path  # an indexed workspace the server was not given
    bare: Path  # an empty folder: nothing may ever be written into it
    commands: tuple[str, ...]  # report commands of the archive
    report_paths: tuple[str, ...]
    documents: tuple[str, ...]  # ids and paths of documents
    conversations: tuple[str, ...] = ()  # ids and paths of conversations, the longest agent-log session first
    projects: tuple[str, ...] = ()  # the agent-log sessions' projects: paths and last folder names
    models: tuple[str, ...] = ()  # the models the agent-log sessions used

    def found(self, name: str) -> tuple[str, ...]:
        """The values of list filter ``name`` that the archive holds, where they were read."""
        return {"projects": self.projects, "models": self.models}.get(name, ())

    def __repr__(self) -> str:
        return f"Place({self.workspace})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # short in hypothesis's reports too
        printer.text(repr(self))


# --- values ------------------------------------------------------------------------------------

WORDS = (
    "authentication",
    "proxy",
    "timeout",
    "borders",
    "kubernetes",
    "debug",
    "jwt",
    "token",
    "cluster",
    "health",
    "feature",
    "flag",
    "deploy",
    "memory",
    "report",
    "the",
    "a",
    "of",
    "and",
    "zzzz",
)
FTS_FRAGMENTS = (
    '"',
    '""',
    "*",
    "NEAR(",
    "NEAR(a b, 3)",
    ")",
    "(",
    "AND",
    "OR",
    "NOT",
    "-",
    "^",
    ":",
    "+",
    "title:",
    "{a b}:x",
    "a*",
    '"unclosed',
    "NEAR",
    "col:",
    "^start",
    "a OR",
    "AND b",
    "NOT NOT",
    "(((",
    ")))",
    "'",
    "''",
    "\\",
)
SQL_FRAGMENTS = (
    "' OR 1=1 --",
    "'; DROP TABLE documents; --",
    '" OR ""="',
    "1; SELECT * FROM sqlite_master",
    "' UNION SELECT 1,2,3 --",
    "%",
    "_",
    "%%",
    "/*",
    "*/",
    "-- ",
    "x' --",
    "?",
    ":query",
    "@p",
    "$p",
    "\\x00",
    "char(0)",
    "randomblob(1000000000)",
    "') OR ('1'='1",
    "%' AND 1=1 AND '%'='",
)
TRAVERSAL = (
    "../../etc/passwd",
    "../outside",
    "..",
    "../",
    "/etc/passwd",
    "/etc",
    "/",
    "/root",
    "~",
    "~root",
    "~root/.ssh",
    "~nouser/x",
    "~nouser",
    "..\\..\\windows\\win.ini",
    "file:///etc/passwd",
    "%2e%2e%2fetc%2fpasswd",
    "conversations/../../..",
    "reports/../../../etc/passwd",
    "/proc/self/environ",
    "//etc//passwd",
    "\\\\server\\share",
    "a/\x00/b",
    "/tmp/\x00x",
    "reports/\x00",
    "x" * 300,
    "a/" * 150,
    ("n" * 300) + "/x",
    "/" + "y" * 300,
    "./././",
    "conversations/./../",
    " ",
    "\t",
    "\n",
    "con",
    "aux.md",
    "-rf",
    "--help",
)
UNICODE = (
    "é",
    "日本語の検索",
    "🔍🦀",
    "\u202eevil\u202c",
    "e\u0301",
    "\ufeffbom",
    "\u2028\u2029",
    "Ａｕｔｈ",
    "ß",
    "İ",
    "\U0001f600" * 50,
    "\u0000",
    "\x7f",
    "\x1b[31m",
    "\r\n",
    "\x08\x07",
)
DATE_RANGES = ("2025-11", "2025-11-10", "2025-10", "2024-02-29", "")
BAD_DATE_RANGES = (
    "2025-11-1",
    "2025/11",
    "nov",
    "2025-13",
    "2025-02-30",
    "0000-00",
    "9999-99-99",
    "2025-11-10T00:00",
    "-2025-11",
)
DATES = ("2025-10", "2025-11-10", "2024", "last week", "yesterday", "today", "3 days ago", "2024-01-31T09:00:00Z", "")
BAD_DATES = (
    "2025-13-45",
    "not a date",
    "10000-01-01",
    "-1",
    "1e308",
    "last millennium",
    "99999 years ago",
    "0000-00-00",
)
MODES = ("hybrid", "keyword", "semantic", "similar", "tag", "recent", "scan", "faceted")
FILTER_VALUES = {f.name: f.examples for f in FILTERS}  # each list filter's values (archivist/queries/filters.py)
KIND_VALUES = tuple(value for value in FILTER_VALUES["entities"] if value != "epic")
TYPE_VALUES = FILTER_VALUES["types"]
AGENT_VALUES = FILTER_VALUES["agents"]
INCLUDE_VALUES = ("thinking", "tool_output", "THINKING", " tool_output ", "", "tool_calls")
PROJECT_VALUES = FILTER_VALUES["projects"]
MODEL_VALUES = FILTER_VALUES["models"]
ROLE_VALUES = FILTER_VALUES["roles"]
TOOL_VALUES = FILTER_VALUES["tools"]
FILE_VALUES = FILTER_VALUES["files"]
EXTRA_KEYS = ("bogus", "sql", "__proto__", "workspace", "query ", "Query", "_shape", "constructor", "", " ", "\x00")


def unicode_text(max_size: int = 40) -> SearchStrategy[str]:
    """Any text: control characters and every unicode category but lone surrogates (JSON cannot carry them)."""
    return st.text(st.characters(codec="utf-8"), max_size=max_size)


def _repeated(unit: str, count: int) -> str:
    return (unit * (count // max(1, len(unit)) + 1))[:count]


def huge_text() -> SearchStrategy[str]:
    """Up to ~70,000 characters of one unit repeated."""
    units = st.sampled_from(("x", "auth ", "é", "\x00", '"', "NEAR(", "日本", "a*", "' OR 1=1 ", "../", "🔍", " "))
    return st.builds(_repeated, units, st.integers(200, 70_000))


def _words(seed: int, count: int, style: int) -> str:
    rng = random.Random(seed)
    pool = WORDS if style == 0 else WORDS + FTS_FRAGMENTS if style == 1 else WORDS + SQL_FRAGMENTS + UNICODE
    return " ".join(rng.choice(pool) for _ in range(count))


def many_words() -> SearchStrategy[str]:
    """Up to 3,000 words, plain or mixed with FTS5 syntax, SQL and unicode."""
    return st.builds(_words, st.integers(0, 2**32), st.integers(10, 3_000), st.integers(0, 2))


def long_query() -> SearchStrategy[str]:
    """20 to 64 common words: a long query that is still accepted, the costly kind to rank."""
    return st.builds(_words, st.integers(0, 2**32), st.integers(20, 64), st.just(0))


def fragments(pool: Iterable[str]) -> SearchStrategy[str]:
    """Words and syntax pieces glued with spaces, or with nothing."""
    pieces = st.lists(st.sampled_from(tuple(pool) + WORDS), min_size=1, max_size=8)
    return st.builds(lambda parts, glue: glue.join(parts), pieces, st.sampled_from((" ", "")))


def hostile_text() -> SearchStrategy[str]:
    """Strings no caller should send: the server must answer them with a clear error or a result."""
    return st.one_of(
        unicode_text(),
        st.text(st.characters(max_codepoint=0x1F), max_size=10),
        st.sampled_from(UNICODE + TRAVERSAL + SQL_FRAGMENTS + FTS_FRAGMENTS),
        fragments(FTS_FRAGMENTS),
        fragments(SQL_FRAGMENTS),
        huge_text(),
        many_words(),
    )


def json_junk() -> SearchStrategy[Any]:
    """JSON values that are not strings: null, booleans, numbers, lists, objects."""
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False)
    )
    return st.one_of(
        scalars,
        st.lists(st.one_of(scalars, st.text(max_size=5)), max_size=4),
        st.dictionaries(st.text(max_size=5), st.one_of(scalars, st.text(max_size=5)), max_size=3),
    )


@dataclass(frozen=True)
class Parameter:
    """A parameter's well-typed values (plausible, right or wrong), and hostile ones (any text, any JSON type)."""

    valid: SearchStrategy[Any]
    hostile: SearchStrategy[Any]


def text_parameter(valid: SearchStrategy[str]) -> Parameter:
    return Parameter(valid, st.one_of(hostile_text(), hostile_text(), json_junk()))


def int_parameter(low: int, high: int, more_edges: tuple[int, ...] = ()) -> Parameter:
    """An integer: in range; or out of range, huge, or a string, float, bool, null, list."""
    edges = st.sampled_from(
        (0, -1, low - 1, high + 1, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**30, -(10**30)) + more_edges
    )
    text_numbers = st.sampled_from(("10", " 5 ", "1e3", "0x10", "-0", "5.0", "", "٣", "1_000"))
    return Parameter(
        st.integers(low, high), st.one_of(edges, edges, st.integers(), text_numbers, json_junk(), hostile_text())
    )


def float_parameter() -> Parameter:
    hostile = st.one_of(
        st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(("0.3", "nan", "inf")), json_junk()
    )
    return Parameter(st.floats(-1, 1), hostile)


def bool_parameter() -> Parameter:
    return Parameter(
        st.booleans(), st.one_of(st.sampled_from(("true", "yes", "maybe", "1", "")), st.integers(-2, 2), json_junk())
    )


def listing_parameter(values: tuple[str, ...]) -> Parameter:
    """A list: a JSON list or a comma-separated string of known values; or lists of anything, text, junk."""
    valid = st.lists(st.sampled_from(values), min_size=1, max_size=4)
    hostile = st.one_of(st.lists(st.one_of(hostile_text(), json_junk()), max_size=4), hostile_text(), json_junk())
    return Parameter(st.one_of(valid, valid.map(",".join)), hostile)


def _is_inside(value: str, root: Path) -> bool:
    """Whether a caller's path could name something that exists inside ``root`` (or nothing at all)."""
    for candidate in {value, value.strip()}:
        if not candidate.strip():
            return True  # empty: the whole workspace
        try:
            path = Path(candidate).expanduser()
            target = (path if path.is_absolute() else root / path).resolve()
            if target.is_relative_to(root.resolve()) and target.exists():
                return True
        except (ValueError, OSError, RuntimeError):
            continue
    return False


def _names_a_folder(value: str, allowed: Path) -> bool:
    """Whether a workspace_path could name an existing folder other than ``allowed`` (or the default)."""
    for candidate in {value, value.strip()}:
        if not candidate.strip():
            return True  # empty: the server's own workspace
        try:
            folder = Path(candidate).expanduser()
            if folder.is_dir() and folder.resolve() != allowed.resolve():
                return True
        except (ValueError, OSError, RuntimeError):
            continue
    return False


def is_foreign(value: Any, workspace: Path) -> bool:
    """A workspace_path string that names anything but the allowed workspace (empty names the default)."""
    if not isinstance(value, str) or value.strip() in ("", "null"):
        return False  # the MCP SDK reads the string "null" as JSON null for an optional argument: the default
    try:
        return Path(value).expanduser().resolve() != workspace.resolve()
    except (ValueError, OSError, RuntimeError):
        return True


def workspace_parameter(place: Place, writes: bool) -> Parameter:
    """workspace_path: the server's own (for reading tools), others that must be refused, or junk.

    For the embedding tools, only values that cannot name a real folder (but ``place.bare``,
    which is empty and disposable): code without the allowed list indexes any folder it is given.
    """
    missing = st.builds(lambda name: f"/nonexistent-archivist-fuzz/{name}", unicode_text(30))
    refused = st.one_of(
        st.just(str(place.bare)),
        st.just(str(place.bare) + "/"),
        missing,
        st.sampled_from(("/no/such/folder", "~nouser/x", "\x00", "/tmp/\x00x", "n" * 300, "/" + "y" * 300)),
    )
    if writes:
        anything = st.one_of(hostile_text(), refused).filter(lambda v: not _names_a_folder(v, place.bare))
        return Parameter(refused, st.one_of(anything, json_junk()))
    own = st.sampled_from(
        (str(place.workspace), str(place.workspace) + "/", str(place.workspace) + "/./conversations/..")
    )
    foreign = st.sampled_from(
        (str(place.foreign), str(place.foreign) + "/", "/", "/etc", "~root", "~", ".", "sample-workspace")
    )
    return Parameter(st.one_of(st.none(), own), st.one_of(foreign, refused, hostile_text(), json_junk()))


def embed_path_parameter(place: Place) -> Parameter:
    """embed_document's path: never anything that exists inside the workspace, so that it fails fast."""

    def outside(value: str) -> bool:
        return not _is_inside(value, place.workspace)

    missing = st.builds(lambda name: f"conversations/no-such-{name}", unicode_text(30))
    traversal = st.sampled_from(TRAVERSAL).filter(outside)
    return Parameter(st.one_of(missing, traversal), st.one_of(hostile_text().filter(outside), traversal, json_junk()))


@functools.cache
def parameters(tool: str, place: Place) -> dict[str, Parameter]:
    """Every parameter of a tool (the tool's input schema must list exactly these)."""
    query = text_parameter(
        st.one_of(
            st.sampled_from(WORDS),
            fragments(()),
            st.sampled_from(("proxy timeout", "authentication patterns")),
            long_query(),
        )
    )
    date_range = text_parameter(st.sampled_from(DATE_RANGES + DATE_RANGES + BAD_DATE_RANGES))
    kind = text_parameter(st.sampled_from(TYPE_VALUES))
    command = text_parameter(st.sampled_from(place.commands + place.commands + ("nope", "../x", "")))
    sqlite_edges = st.sampled_from((2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 10**30)).map(
        str
    )  # ids SQLite cannot hold
    document = text_parameter(st.one_of(st.sampled_from(place.documents), st.integers(-5, 100).map(str), sqlite_edges))
    limit = int_parameter(1, 100)
    dates = text_parameter(st.sampled_from(DATES + DATES + BAD_DATES))
    # a conversation (most often one with messages), or any document, or an id that is none
    conversation = text_parameter(
        st.one_of(
            st.sampled_from(place.conversations or place.documents),
            st.sampled_from(place.conversations or place.documents),
            st.sampled_from(place.documents),
            st.integers(-5, 100).map(str),
            sqlite_edges,
        )
    )
    # huge offsets and limits: around the offset rule's bound (10,000,000), and a float's last exact integer
    big_edges = (9_999_999, 10_000_000, 10_000_001, 2**53)
    agents = listing_parameter(AGENT_VALUES)
    projects = listing_parameter(place.projects + PROJECT_VALUES)
    table: dict[str, dict[str, Parameter]] = {
        "search_workspace": {"query": query, "date_range": date_range, "conversation_type": kind, "limit": limit},
        "search_reports": {"query": query, "command_filter": command, "max_results": limit},
        "list_command_reports": {"command": command},
        "get_report": {"path": text_parameter(st.sampled_from(place.report_paths + TRAVERSAL[:4]))},
        "search_commands": {"query": query},
        "search": {
            "query": Parameter(st.one_of(st.just(""), query.valid, query.valid, query.valid), query.hostile),
            "mode": text_parameter(st.sampled_from(MODES + MODES + ("", "HYBRID", "sql"))),
            **{f.name: listing_parameter(f.examples + place.found(f.name)) for f in FILTERS},
            "match_all": bool_parameter(),
            "start_date": dates,
            "end_date": dates,
            "product_ids": Parameter(
                st.one_of(st.lists(st.sampled_from((598, 601, 1)), max_size=3), st.just("598,601")),
                st.one_of(st.lists(st.integers(-(2**70), 2**70), max_size=4), listing_parameter(("598", "x")).hostile),
            ),
            "match_mode": text_parameter(st.sampled_from(("simple", "raw", "", "RAW", "regex"))),
            "sort": text_parameter(st.sampled_from(("relevance", "newest", "oldest", "tokens", "cost", "", "size"))),
            "min_similarity": float_parameter(),
            "document": document,
            "page": int_parameter(1, 10_000),
            "page_size": limit,
            "limit": limit,
            # the memory service's names for some of the above
            "kinds": listing_parameter(KIND_VALUES),
            "memory_type": listing_parameter(TYPE_VALUES),
            "k": limit,
            "source_path": document,
            "output": text_parameter(st.sampled_from(("full", "scan", "", "json"))),
            "encoding_context": Parameter(
                st.one_of(st.none(), st.dictionaries(st.sampled_from(WORDS), st.sampled_from(WORDS), max_size=2)),
                st.one_of(st.dictionaries(st.text(max_size=8), json_junk() | hostile_text(), max_size=3), json_junk()),
            ),
        },
        "search_semantic": {"query": query, "conversation_type": kind, "date_range": date_range, "limit": limit},
        "get_similar": {"document": document, "source_path": document, "limit": limit},
        "embed_document": {"path": embed_path_parameter(place)},
        "embed_workspace": {"background": bool_parameter()},
        "get_embedding_status": {},
        "list_conversations": {
            "agents": agents,
            "projects": projects,
            "start_date": dates,
            "end_date": dates,
            "limit": limit,
            "offset": int_parameter(0, 30, big_edges),
            "include": text_parameter(st.sampled_from(("usage", "", "usage,usage", "cost"))),
        },
        "activity": {"start_date": dates, "end_date": dates, "agents": agents, "projects": projects},
        "file_history": {
            "path": text_parameter(st.sampled_from(("keepalive.py", "src/app.py", "/etc/passwd", "..", "*"))),
            "limit": limit,
            "offset": int_parameter(0, 30, big_edges),
            "changes": bool_parameter(),
        },
        "usage": {
            "group_by": text_parameter(
                st.sampled_from(("day", "month", "block", "model", "agent", "project", "session", ""))
            ),
            "start_date": dates,
            "end_date": dates,
            "agents": agents,
            "projects": projects,
            "limit": limit,
            "offset": int_parameter(0, 30, big_edges),
        },
        "get_conversation": {
            "document": conversation,
            "offset": int_parameter(0, 12, big_edges),
            "limit": int_parameter(1, 200, big_edges),
            "include": listing_parameter(INCLUDE_VALUES),
        },
    }
    return {**table[tool], "workspace_path": workspace_parameter(place, tool in EMBEDDING_TOOLS)}


# Parameters a call carries (as one of the names) unless the fuzzer leaves them out on purpose.
REQUIRED: dict[str, tuple[tuple[str, ...], ...]] = {
    "search_workspace": (("query",),),
    "search_reports": (("query",),),
    "search": (("query",),),
    "list_command_reports": (("command",),),
    "get_report": (("path",),),
    "search_commands": (("query",),),
    "search_semantic": (("query",),),
    "get_similar": (("document", "source_path"),),
    "embed_document": (("path",),),
    "get_conversation": (("document",),),
}
# Never left out, never well-typed and valid: without it, the tool would embed the server's workspace.
ALWAYS_FAILING = {"embed_workspace": "workspace_path", "embed_document": "path"}


def _one_in(n: int) -> SearchStrategy[bool]:
    return st.sampled_from((True,) + (False,) * (n - 1))


@st.composite
def _arguments(draw: st.DrawFn, tool: str, place: Place) -> dict[str, Any]:
    table = parameters(tool, place)
    names = sorted(table)
    arguments: dict[str, Any] = {}
    for alternatives in REQUIRED.get(tool, ()):
        name = draw(st.sampled_from(alternatives))
        arguments[name] = draw(table[name].valid)
    for name in draw(st.lists(st.sampled_from(names), max_size=4, unique=True)):  # some optional ones, well-typed
        arguments[name] = draw(table[name].valid)
    hostile = min(len(names), draw(st.sampled_from((0, 0, 1, 1, 1, 2, 3))))
    for name in draw(st.lists(st.sampled_from(names), min_size=hostile, max_size=hostile, unique=True)):
        arguments[name] = draw(table[name].hostile)
    if tool in ALWAYS_FAILING:
        name = ALWAYS_FAILING[tool]
        arguments.setdefault(name, draw(table[name].valid))
    elif arguments and draw(_one_in(10)):  # a required one left out, at times
        del arguments[draw(st.sampled_from(sorted(arguments)))]
    if draw(_one_in(12)):  # unknown arguments
        keys = st.one_of(st.sampled_from(EXTRA_KEYS), st.text(max_size=8))
        arguments = {**draw(st.dictionaries(keys, json_junk() | hostile_text(), min_size=1, max_size=2)), **arguments}
    return arguments


@functools.cache
def tool_arguments(tool: str, place: Place) -> SearchStrategy[dict[str, Any]]:
    """Arguments for one call: a well-typed call with 0-3 hostile parameters, at times a missing or an unknown one."""
    return _arguments(tool, place)


# --- a catalogue: every nasty value in every parameter, deterministically ------------------------

NASTY_STRINGS = (
    "",
    " ",
    "a",
    "\x00",
    "a/\x00/b",
    "\x00" * 10,
    "\x01\x1f\x7f\x1b[31m",
    "x" * 300,
    "/" + "y" * 300,
    ("n" * 300) + "/x",
    "~nouser/x",
    "~root",
    "~",
    "../../etc/passwd",
    "/etc/passwd",
    "/",
    "..",
    "reports/../../x",
    "\\\\server\\share",
    '"',
    'NEAR("a" b',
    "a AND",
    "* OR ^",
    "title:x",
    "x:y",
    "' OR 1=1 --",
    "1; SELECT * FROM sqlite_master",
    "%",
    "_",
    "\u202eevil\u202c",
    "🔍" * 100,
    "日本語の検索",
    "e\u0301" * 50,
    _repeated("x", 70_000),
    _repeated("\x00", 5_000),
    _words(1, 3_000, 1),
    _words(2, 65, 0),
    _words(3, 64, 0),
    _repeated("ab ", 2_001),
    str(2**63 - 1),
    str(2**63),
    str(-(2**63) - 1),
    "1e308",
    "-0",
    "NaN",
)
NASTY_OTHERS = (
    None,
    True,
    False,
    0,
    -1,
    101,
    2**63,
    -(2**63) - 1,
    10**30,
    1.5,
    -1e308,
    [],
    ["a", 1],
    [None],
    {},
    {"a": 1},
)
NASTY = NASTY_STRINGS + NASTY_OTHERS
# One of each kind, for a bounded run: what once broke a tool is in here.
CORE_STRINGS = (
    "",
    "a",
    "\x00",
    "a/\x00/b",
    "x" * 300,
    "~nouser/x",
    "../../etc/passwd",
    "/",
    'NEAR("a" b',
    "a AND",
    "x:y",
    "-0",
    "' OR 1=1 --",
    _repeated("x", 70_000),
    _words(1, 3_000, 1),
    _words(2, 65, 0),
    str(2**63),
)
CORE = CORE_STRINGS + (None, True, 0, -1, 2**63, 1.5, [], {"a": 1})

CLAUDE_CODE_SESSION = "claude-code:-home-dev-src-captions-gateway/3f6d2b1e-8c4a-4e7f-9b2d-5a1c0e9f7d43"
BASE_CALLS: dict[str, dict[str, Any]] = {  # a call that answers (the embedding tools': one that must fail)
    "search_workspace": {"query": "authentication"},
    "search_reports": {"query": "proxy timeout"},
    "list_command_reports": {"command": "k8s-cluster-health"},
    "get_report": {"path": "reports/k8s-cluster-health/baseline-notes.md"},
    "search_commands": {"query": "proxy"},
    "search": {"query": "borders", "mode": "keyword"},
    "search_semantic": {"query": "authentication patterns"},
    "get_similar": {"document": "conversations/2025-11-10/002-debug-auth"},
    "embed_document": {"path": "conversations/no-such-document"},
    "embed_workspace": {"workspace_path": "/nonexistent-archivist-fuzz/workspace"},
    "get_embedding_status": {},
    "list_conversations": {"agents": "claude-code,workspace", "start_date": "2025-10", "limit": 10},
    "usage": {"group_by": "model", "start_date": "2025-10"},
    "file_history": {"path": "keepalive.py"},
    "activity": {"start_date": "2025-01-01"},
    "get_conversation": {  # the sample's Claude Code session: thinking, tool calls and their output
        "document": CLAUDE_CODE_SESSION,
        "offset": 2,
        "limit": 5,
        "include": "thinking,tool_output",
    },
}


def catalogue(tool: str, place: Place, values: tuple[Any, ...] = NASTY) -> list[dict[str, Any]]:
    """The base call with each parameter set to each value, in turn (embedding tools: safe values only)."""
    calls = []
    for name in sorted(parameters(tool, place)):
        for value in values:
            if tool in EMBEDDING_TOOLS and isinstance(value, str):
                if name == "path" and _is_inside(value, place.workspace):
                    continue
                if name == "workspace_path" and _names_a_folder(value, place.bare):
                    continue
            if tool == "embed_workspace" and name == "workspace_path" and value is None:
                continue  # the server's own workspace: it would be embedded
            calls.append({**BASE_CALLS[tool], name: value})
    if tool == "search":  # FTS5 syntax reaches the parser only in raw mode
        calls += [{"query": value, "match_mode": "raw", "mode": "keyword"} for value in values]
    return calls


def http_catalogue(
    place: Place, values: tuple[str, ...] = NASTY_STRINGS, every_key: bool = True
) -> list[tuple[str, list[tuple[str, str]]]]:
    """/api/search and each canned query's JSON with a key set to each value (every key beside a plausible
    first one, or the first key only), and the search and document pages with each value."""
    requests = []
    surfaces = [("/api/search", SEARCH_KEYS)] + [
        (f"/archive/{name}.json", keys) for name, keys in sorted(CANNED.items())
    ]
    for path, keys in surfaces:
        first = (keys[0], _first_value(path, keys[0], place))
        for key in keys if every_key else keys[:1]:
            for value in values:
                requests.append((path, [first, (key, value)] if key != keys[0] else [(key, value)]))
    for value in values:
        requests.append((f"/document/{quote(value) or '%20'}", []))
        requests.append(("/search", [("query", value)]))
    return [request for request in requests if fits_in_a_url(request)]


def _first_value(path: str, key: str, place: Place) -> str:
    """A value of a surface's first key that answers, to set beside a nasty one."""
    if path == "/archive/get_conversation.json" and place.conversations:
        return place.conversations[0]
    return {"query": "authentication", "agents": "claude-code,workspace", "by": "month"}.get(key, place.documents[0])


# --- HTTP --------------------------------------------------------------------------------------

SEARCH_KEYS = (
    "query",
    "mode",
    *(f.name for f in FILTERS[:3]),
    "match_all",
    "start_date",
    "end_date",
    *(f.name for f in FILTERS[3:]),
    "match_mode",
    "sort",
    "min_similarity",
    "document",
    "page",
    "page_size",
    "limit",
    "kinds",
    "memory_type",
    "k",
    "source_path",
    "output",
)
CANNED = {  # canned query: its parameters, the one it needs first
    "search_workspace": ("query", "date_range", "conversation_type", "limit"),
    "search_reports": ("query", "command_filter", "max_results"),
    "list_command_reports": ("command",),
    "get_report": ("path",),
    "search_commands": ("query",),
    "search_semantic": ("query", "conversation_type", "date_range", "limit"),
    "similar": ("document", "limit"),
    "find_document": ("document",),
    "get_document": ("document",),
    "activity": ("by", "kind"),
    "check_search_syntax": ("query",),
    "search": SEARCH_KEYS,
    "list_conversations": ("agents", "projects", "start_date", "end_date", "limit", "offset", "include"),
    "get_conversation": ("document", "offset", "limit", "include"),
    "usage": ("group_by", "start_date", "end_date", "agents", "projects", "limit", "offset"),
    "file_history": ("path", "limit", "offset", "changes"),
    "project_activity": ("start_date", "end_date", "agents", "projects"),
}
SPECIAL_KEYS = ("_shape", "_size", "_json", "_nl", "_trace", "_timelimit", "_sort", "_facet", "_next", "_sql")


@functools.cache
def http_valid(key: str, place: Place, query: str = "") -> SearchStrategy[str]:
    """A plausible value for a query-string key (of the canned ``query``, where it matters)."""
    if query == "get_conversation" and key == "document" and place.conversations:
        return st.sampled_from(place.conversations)
    plausible: dict[str, SearchStrategy[str]] = {
        "query": st.sampled_from(WORDS + ("proxy timeout",)),
        "mode": st.sampled_from(MODES),
        "date_range": st.sampled_from(DATE_RANGES),
        **{f.name: st.sampled_from(f.examples + place.found(f.name)) for f in FILTERS},
        "entities": st.sampled_from(KIND_VALUES + ("feature,bug",)),
        "kinds": st.sampled_from(KIND_VALUES),
        "types": st.sampled_from(TYPE_VALUES),
        "memory_type": st.sampled_from(TYPE_VALUES),
        "match_all": st.sampled_from(("true", "false")),
        "start_date": st.sampled_from(DATES),
        "end_date": st.sampled_from(DATES),
        "product_ids": st.just("598,601"),
        "match_mode": st.sampled_from(("simple", "raw")),
        "sort": st.sampled_from(("relevance", "newest", "oldest", "tokens", "cost")),
        "min_similarity": st.sampled_from(("0.2", "-1", "1")),
        "output": st.just("full"),
        "document": st.sampled_from(place.documents),
        "source_path": st.sampled_from(place.documents),
        "path": st.sampled_from(place.report_paths),
        "command": st.sampled_from(place.commands),
        "command_filter": st.sampled_from(place.commands),
        "by": st.sampled_from(("month", "day")),
        "kind": st.sampled_from(KIND_VALUES[:5]),
        "agents": st.sampled_from(AGENT_VALUES + ("claude-code,workspace", "codex,llm")),
        "projects": st.sampled_from(place.projects + PROJECT_VALUES),
        "models": st.sampled_from(place.models + MODEL_VALUES),
        "files": st.sampled_from(FILE_VALUES),
        "tools": st.sampled_from(TOOL_VALUES),
        "roles": st.sampled_from(ROLE_VALUES + ("user,document", "assistant,tool")),
        "include": st.sampled_from(
            ("usage",) if query == "list_conversations" else INCLUDE_VALUES + ("thinking,tool_output",)
        ),
        "changes": st.sampled_from(("true", "false", "1", "0")),
        "offset": st.integers(0, 12).map(str),
    }
    return plausible.get(key, st.integers(1, 100).map(str))  # limits, pages, sizes


@st.composite
def query_string(draw: st.DrawFn, keys: tuple[str, ...], place: Place, query: str = "") -> list[tuple[str, str]]:
    """(key, value) pairs: plausible values of the surface's keys (the first one nearly always), 0-2 hostile
    ones (repeating a key at times), at times special or unknown keys."""
    pairs: list[tuple[str, str]] = []
    if keys:
        chosen = draw(st.lists(st.sampled_from(keys[1:]), max_size=4, unique=True)) if keys[1:] else []
        if not draw(_one_in(10)):
            chosen.insert(0, keys[0])
        for key in chosen:
            pairs.append((key, draw(http_valid(key, place, query))))
        for key in draw(st.lists(st.sampled_from(keys), min_size=0, max_size=draw(st.sampled_from((0, 0, 1, 1, 2))))):
            pairs.append((key, draw(st.one_of(hostile_text(), st.integers(-(2**70), 2**70).map(str)))))
    if draw(_one_in(5)):  # Datasette's own parameters
        special = st.sampled_from(("array", "objects", "max", "1", "-1", "0", "x", "999999999999"))
        pairs.append((draw(st.sampled_from(SPECIAL_KEYS)), draw(special)))
    if draw(_one_in(8)):
        pairs.append((draw(st.sampled_from(EXTRA_KEYS + ("sql",))), draw(hostile_text())))
    return draw(st.permutations(pairs))


@functools.cache
def http_requests(place: Place) -> SearchStrategy[tuple[str, list[tuple[str, str]]]]:
    """(path, query string) for /api/search, the canned queries' JSON, and the pages."""
    api = st.tuples(st.just("/api/search"), query_string(SEARCH_KEYS, place))
    canned = st.sampled_from(sorted(CANNED)).flatmap(
        lambda name: st.tuples(st.just(f"/archive/{name}.json"), query_string(CANNED[name], place, name))
    )
    document_id = st.one_of(
        st.sampled_from(place.documents), st.integers(-(2**70), 2**70).map(str), hostile_text()
    ).filter(bool)
    pages = st.one_of(
        st.tuples(st.just("/"), query_string((), place)),
        st.tuples(st.just("/search"), query_string(SEARCH_KEYS, place)),
        st.tuples(document_id.map(lambda i: f"/document/{quote(i)}"), query_string((), place)),
        st.tuples(document_id.map(lambda i: f"/document/{quote(i)}/source"), query_string(("file",), place)),
    )
    return st.one_of(api, api, canned, canned, pages).filter(fits_in_a_url)


MAX_QUERY_STRING = 60_000  # httpx refuses longer URL components (65,536 characters)


def fits_in_a_url(request: tuple[str, list[tuple[str, str]]]) -> bool:
    path, params = request
    return len(path) + len(urlencode(params)) <= MAX_QUERY_STRING


def quote(value: str) -> str:
    return url_quote(value, safe="")


# --- checks ------------------------------------------------------------------------------------


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def leaks(text: str, given: Any) -> list[str]:
    """Markers of raw SQL or a traceback in ``text`` that the caller did not send itself."""
    sent = " ".join(_strings(given)).lower()
    return [marker for marker in LEAK_MARKERS if marker in text and marker.lower() not in sent]


def error_body(body: Any) -> str | None:
    """What is wrong with an error body, or None when it is the docs/errors.md body."""
    if not isinstance(body, dict):
        return f"no structured body: {body!r:.200}"
    if body.get("success") is not False or not isinstance(body.get("error"), str) or not body["error"].strip():
        return f"not {{success: false, error: str}}: {json.dumps(body, ensure_ascii=False)[:300]}"
    if body.get("code") not in CODES:
        return f"unknown code {body.get('code')!r}"
    if not body["error"].startswith("❌"):
        return f"message not in the ❌ / ℹ️ / 💡 form: {body['error'][:200]!r}"
    return None


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def success_shape(tool: str, body: Any) -> str | None:
    """What is wrong with a tool's successful answer, or None."""
    if not isinstance(body, dict):
        return f"structured content is {type(body).__name__}"
    if body.get("success", True) is not True:
        return f"success is {body.get('success')!r} on a result that is not an error"
    if tool in ROW_TOOLS:
        results = body.get("results")
        if not isinstance(results, list) or not all(isinstance(row, dict) for row in results):
            return "results is not a list of objects"
        if body.get("num_results") != len(results) or len(results) > 100:
            return f"num_results {body.get('num_results')!r} for {len(results)} results"
        if tool in ("list_conversations", "usage") and not all(isinstance(row.get("models"), list) for row in results):
            return "a row whose models is not a list"
    elif tool == "get_conversation":
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(isinstance(message, dict) for message in messages):
            return "messages is not a list of objects"
        if not all(_is_count(body.get(key)) for key in ("total", "offset", "limit", "num_results")):
            return "total, offset, limit or num_results is not a count"
        if body["num_results"] != len(messages) or not 1 <= body["limit"] <= 200 or len(messages) > body["limit"]:
            return f"num_results {body['num_results']} / limit {body['limit']} for {len(messages)} messages"
        if not isinstance(body.get("has_more"), bool) or body["has_more"] != (body.get("next_offset") is not None):
            return f"has_more {body.get('has_more')!r} with next_offset {body.get('next_offset')!r}"
        if body["offset"] + len(messages) > body["total"] or (
            body["has_more"] and body["next_offset"] != body["offset"] + len(messages)
        ):
            return f"offset {body['offset']} + {len(messages)} messages against total {body['total']}"
    elif tool == "get_report":
        if not isinstance(body.get("content"), str) or not isinstance(body.get("path"), str):
            return "a report without content or path"
    elif tool == "search":
        results = body.get("results")
        if not all(_is_count(body.get(key)) for key in ("total", "page", "page_size", "total_pages")):
            return "total, page, page_size or total_pages is not a count"
        if not isinstance(results, list) or not body["page"] >= 1 or not 1 <= body["page_size"] <= 100:
            return f"page {body['page']} / page_size {body['page_size']} out of range, or no results list"
        if len(results) > body["page_size"] or not isinstance(body.get("has_more"), bool):
            return f"{len(results)} results for page_size {body['page_size']}, or has_more not a boolean"
    elif tool in EMBEDDING_TOOLS:
        if body.get("success") is not True or not (_is_count(body.get("embedded")) and _is_count(body.get("skipped"))):
            return "embedded / skipped are not counts"
    elif tool == "get_embedding_status":
        if not (_is_count(body.get("total_chunks")) and _is_count(body.get("num_documents"))):
            return "total_chunks / num_documents are not counts"
        if not isinstance(body.get("recent_embeddings"), list):
            return "recent_embeddings is not a list"
    return None


def result_text(result: Any) -> str:
    parts = [getattr(item, "text", "") or "" for item in (result.content or [])]
    if result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def tool_violations(tool: str, arguments: dict[str, Any], result: Any, place: Place) -> list[Violation]:
    """The properties one tool answer breaks (``result``: the client's CallToolResult)."""
    found: list[Violation] = []
    body = result.structured_content
    text = result_text(result)
    marks = leaks(text, arguments)
    if marks:
        found.append(Violation(LEAK, f"{marks} in {text[:400]!r}"))
    if result.is_error:
        problem = error_body(body)
        if problem is not None:
            found.append(Violation(NO_BODY, f"{problem}; text: {text[:300]!r}"))
        elif body["code"] == "INTERNAL_ERROR":
            found.append(Violation(INTERNAL, body["error"][:400]))
    else:
        problem = success_shape(tool, body)
        if problem is None:
            try:
                json.dumps(body, allow_nan=False)
                first = json.loads(result.content[0].text) if result.content else None
            except (ValueError, TypeError, AttributeError) as error:
                problem = f"not strict JSON, or text that is not JSON: {error}"
            else:
                if first != body:
                    problem = "the text content is not the structured content"
        if problem is not None:
            found.append(Violation(SHAPE, f"{problem}: {text[:300]!r}"))
        if is_foreign(arguments.get("workspace_path"), place.workspace):
            found.append(
                Violation(FOREIGN, f"workspace_path={arguments['workspace_path']!r:.200} answered: {text[:200]!r}")
            )
    return found


def written_outside(place: Place) -> list[Violation]:
    """Anything written into the bare folder, removed again so that later calls start clean."""
    found = sorted(item.name for item in place.bare.iterdir())
    if not found:
        return []
    for item in place.bare.iterdir():
        shutil.rmtree(item) if item.is_dir() else item.unlink()
    return [Violation(WROTE, f"{place.bare} received {found}")]


def http_violations(
    path: str, params: list[tuple[str, str]], status: int, content_type: str, body: str
) -> list[Violation]:
    """The properties one HTTP answer breaks."""
    found: list[Violation] = []
    if status >= 500:
        found.append(Violation(SERVER_ERROR, f"{status}: {body[:300]!r}"))
    marks = leaks(body, [unquote(path), params])  # a page may show what the caller sent, decoded
    if marks:
        found.append(Violation(LEAK, f"{marks} in {status} {body[:400]!r}"))
    data: Any = None
    if "json" in content_type:
        try:
            data = json.loads(body)
        except ValueError:
            found.append(Violation(NO_BODY, f"{status} {content_type} that is not JSON: {body[:200]!r}"))
    if status == 400 and (path == "/api/search" or path.endswith(".json")):
        problem = error_body(data)
        if problem is not None:
            found.append(Violation(NO_BODY, f"400 {problem}"))
    if isinstance(data, dict) and data.get("code") == "INTERNAL_ERROR":
        found.append(Violation(INTERNAL, str(data.get("error"))[:400]))
    return found


def outcome_label(result: Any) -> str:
    """'ok', or the error code of a tool answer (for counts)."""
    if not result.is_error:
        return "ok"
    body = result.structured_content
    return str(body.get("code")) if isinstance(body, dict) and body.get("code") else "(no code)"


# --- calling ------------------------------------------------------------------------------------


class Caller:
    """An event loop on its own thread, for synchronous code (hypothesis) to await with a time bound.

    ``target`` is anything ``mcp.Client`` takes (an in-process server, stdio parameters, a
    URL); without one, only ``run`` is available (for Datasette's async client).
    """

    def __init__(self, target: Any = None, timeout: float = 10.0) -> None:
        self.target = target
        self.timeout = timeout
        self._stack = contextlib.ExitStack()
        self.portal: BlockingPortal | None = None
        self.client: Client | None = None

    def __enter__(self) -> Caller:
        self.portal = self._stack.enter_context(start_blocking_portal())
        if self.target is not None:
            self.client = self._stack.enter_context(self.portal.wrap_async_context_manager(Client(self.target)))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def run(self, function: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        """Await ``function(*args, **kwargs)`` on the loop: its value, TimeoutError past the bound, or its exception."""
        assert self.portal is not None, "use Caller as a context manager"
        future = self.portal.start_task_soon(functools.partial(function, *args, **kwargs))
        try:
            return future.result(timeout=self.timeout)
        except TimeoutError:
            future.cancel()
            raise

    def call_tool(self, tool: str, arguments: dict[str, Any], place: Place) -> tuple[str, list[Violation]]:
        """One tool call as a client sends it (JSON), checked: an outcome label and what it broke."""
        assert self.client is not None
        sent = json.loads(json.dumps(arguments))  # exactly what a JSON-RPC client can send
        try:
            result = self.run(self.client.call_tool, tool, sent)
        except TimeoutError:
            return HANG, [Violation(HANG, f"no answer within {self.timeout:g} s")] + written_outside(place)
        except Exception as error:
            return EXCEPTION, [Violation(EXCEPTION, f"{type(error).__name__}: {str(error)[:300]}")] + written_outside(
                place
            )
        return outcome_label(result), tool_violations(tool, sent, result, place) + written_outside(place)

    def get(self, datasette: Any, path: str, params: list[tuple[str, str]]) -> tuple[str, list[Violation]]:
        """One GET through Datasette's own client, checked: the status (as a label) and what it broke."""
        try:
            response = self.run(datasette.client.get, path, params=params)
        except TimeoutError:
            return HANG, [Violation(HANG, f"no answer within {self.timeout:g} s")]
        except Exception as error:
            return EXCEPTION, [Violation(EXCEPTION, f"{type(error).__name__}: {str(error)[:300]}")]
        content_type = response.headers.get("content-type", "")
        return str(response.status_code), http_violations(
            path, params, response.status_code, content_type, response.text
        )


def prepare_place(workspace: Path, scratch: Path) -> Place:
    """A Place around an indexed (and embedded) ``workspace``, with the sample agent logs indexed and embedded
    into it: a foreign workspace and a bare folder in ``scratch``."""
    from archivist.agents import registry
    from archivist.archive.indexer import index_workspace
    from archivist.queries.runner import Archive
    from archivist.semantic.embeddings import embed_workspace
    from archivist.workspace import archive_path

    # the sample agent logs beside the sample workspace: one source of every kind
    index_workspace(workspace, log_sources=[(kind, sample_source(kind)) for kind in registry.names()])
    embed_workspace(workspace)  # the sessions' documents: remembered sources are read again

    foreign = scratch / "foreign"
    note = foreign / "conversations" / "2025-01-02" / "001-debug-printer" / "conversation.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("# Printer jam\n\nThe printer jams on duplex. authentication proxy timeout\n", encoding="utf-8")
    index_workspace(foreign)
    bare = scratch / "bare"
    bare.mkdir(exist_ok=True)
    with Archive(archive_path(workspace)) as archive:
        commands = tuple(row["command_name"] for row in archive.run("list_commands"))
        reports = tuple(
            row["path"] for command in commands for row in archive.run("list_command_reports", {"command": command})
        )
        newest = archive.search({"mode": "recent", "page_size": 20})["results"]
        talks = sorted(archive.run("list_conversations", {"limit": "100"}), key=lambda row: -row["messages"])
    documents = tuple(str(item["id"]) for item in newest) + tuple(item["path"] for item in newest if item.get("path"))
    conversations = tuple(str(row["id"]) for row in talks) + tuple(row["path"] for row in talks)
    folders = {row["project"] for row in talks if row["project"]}
    projects = tuple(sorted(folders | {folder.rstrip("/").rsplit("/", 1)[-1] for folder in folders}))
    models = tuple(sorted({model for row in talks for model in json.loads(row["models"] or "[]")}))
    assert CLAUDE_CODE_SESSION in conversations, "the sample's Claude Code session was not indexed"
    return Place(
        workspace.resolve(),
        foreign.resolve(),
        bare.resolve(),
        commands,
        reports,
        documents,
        conversations,
        projects,
        models,
    )


# --- agent logs: damaged sources and stores of every kind ----------------------------------------
#
# Every kind registered (archivist.agents.registry) is fuzzed through its sample: a private copy
# of the kind's folder in sample-agent-logs/ (the registry entry's ``sample`` names the source in
# it) damaged in one file, then indexed as `archivist index WS --source KIND=PATH` indexes it
# (reading, masking, storing). The damage depends on the form of the file:
#
# - any file: renamed with bytes that are not UTF-8;
# - a JSON document, JSONL lines or a text transcript: cut at a byte, a line cut short, bytes
#   that are not UTF-8, NUL and control bytes, a line of brackets never closed, lines
#   reordered; and one value (a JSON value, a text line) of another type, huge, nested deeply,
#   or hostile text: lone surrogates escaped in JSON (``\ud800``, ``\udfff``, a high surrogate
#   ending a string), NULs, control characters, bytes that are not UTF-8;
# - a SQLite store: one cell of another storage class (or, where it holds JSON, one value of
#   that JSON changed as above), huge, nested deeply or hostile; a row deleted; the file
#   truncated; a page of it overwritten with garbage.
#
# What the run must keep: no exception escapes, nothing runs past the time bound, every text
# the archive holds is UTF-8 (no lone surrogate, no byte that is not UTF-8), and every session
# the sample holds without the damaged file is stored. Used by tests/test_fuzz.py (a few
# examples of each kind, and hostile text and broken stores for each), tests/test_hostile_text.py
# and bench/fuzz.py (hundreds of each kind).

SQLITE, JSON_DOCUMENT, JSONL, TEXT = "sqlite", "json", "jsonl", "text"
SQLITE_MAGIC = b"SQLite format 3\x00"
JOURNALS = ("-wal", "-shm", "-journal")  # what opening a database leaves beside it: never part of a sample

# The forms of each kind's sample files. A kind registered without an entry here fails
# tests/test_fuzz.py: the damage its sample gets is declared, and so checked, before it counts as fuzzed.
SAMPLE_FORMS: dict[str, frozenset[str]] = {
    "aider": frozenset({TEXT}),
    "amp": frozenset({JSON_DOCUMENT}),
    "chatgpt-export": frozenset({JSON_DOCUMENT}),
    "claude-code": frozenset({JSON_DOCUMENT, JSONL}),
    "claude-export": frozenset({JSON_DOCUMENT}),
    "cline": frozenset({JSON_DOCUMENT}),
    "codex": frozenset({JSONL}),
    "continue": frozenset({JSON_DOCUMENT}),
    "crush": frozenset({SQLITE}),
    "copilot": frozenset({JSON_DOCUMENT, JSONL, SQLITE}),
    "cursor": frozenset({JSON_DOCUMENT, JSONL, SQLITE}),
    "gemini-cli": frozenset({JSON_DOCUMENT, TEXT}),
    "gptme": frozenset({JSONL, TEXT}),
    "goose": frozenset({JSONL, SQLITE}),
    "kilo-code": frozenset({JSON_DOCUMENT}),
    "kiro": frozenset({JSON_DOCUMENT, JSONL}),
    "llm": frozenset({SQLITE}),
    "opencode": frozenset({JSON_DOCUMENT, SQLITE}),
    "qwen-code": frozenset({JSONL}),
    "roo-code": frozenset({JSON_DOCUMENT}),
    "specstory": frozenset({TEXT}),
    "windsurf": frozenset({JSONL}),
    "kimi-cli": frozenset({JSON_DOCUMENT, JSONL}),
    "openclaw": frozenset({JSON_DOCUMENT, JSONL}),
    "grok-cli": frozenset({JSON_DOCUMENT, JSONL}),
    "hermes": frozenset({JSON_DOCUMENT, JSONL, SQLITE}),
    "forge": frozenset({SQLITE}),
    "pi": frozenset({JSONL}),
    "openhands": frozenset({JSON_DOCUMENT}),
    "codebuff": frozenset({JSON_DOCUMENT}),
    "cline-cli": frozenset({JSON_DOCUMENT}),
    "warp": frozenset({SQLITE}),
    "zed": frozenset({SQLITE}),
    "trae": frozenset({JSON_DOCUMENT, SQLITE}),
    "qoder": frozenset({JSON_DOCUMENT, JSONL}),
    "antigravity": frozenset({JSON_DOCUMENT, JSONL, TEXT, SQLITE}),
    "junie": frozenset({JSONL}),
    "copilot-vs": frozenset({JSONL}),
}

# The damages of each form of file (a kind gets those of the forms its sample holds).
TEXT_DAMAGES = ("cut", "line cut", "invalid UTF-8", "control bytes", "brackets", "reordered")
NAME = "name not UTF-8"  # the file renamed with bytes that are not UTF-8 (Python names them with surrogates)
FORM_DAMAGES = {
    JSON_DOCUMENT: (*TEXT_DAMAGES, "wrong type", "huge", "deep", "hostile text", NAME),
    JSONL: (*TEXT_DAMAGES, "wrong type", "huge", "deep", "hostile text", NAME),
    TEXT: (*TEXT_DAMAGES, "huge", "hostile text", NAME),
    SQLITE: ("truncated", "garbage page", "row deleted", "wrong type", "huge", "deep", "hostile text", NAME),
}

# Hostile text, in pieces: lone surrogates (written as JSON escapes where the file is JSON, as the
# bytes UTF-8 refuses elsewhere), NUL and control characters, bytes that are not UTF-8.
SURROGATES = ("\ud800", "\udbff", "\udc00", "\udfff", "\ude00\ud83d")
HIGH_SURROGATE = "\ud83d"  # the first half of an emoji: what ends a string JavaScript cut in two
CONTROLS = ("\x00", "\x01", "\x07", "\x08", "\x0b", "\x0c", "\x1b", "\x1f", "\x7f", "\x85", "\x9f")
CONTROLS += ("\u2028", "\u2029", "\u200b", "\ufeff", "\ufffe", "\uffff", "\U0010ffff")
NOT_UTF8 = (b"\x80", b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xc0\xaf", b"\xfe")
HUGE_PIECES = ("x", " ", "a b ", "\\", '"', "<", ">", "`", "*", "#", "é", "😀", "{[", "</", "\x00", "\ud800")
LOG_HUGE_BYTES = 3 * 1024 * 1024  # the largest huge value (tests/test_fuzz.py writes smaller ones)
DEEP_LEVELS = (150, 5_000)  # past MAX_DEPTH, up to past Python's recursion limit


def file_form(data: bytes) -> str:
    """What a sample's file is: a SQLite database, a JSON document, JSON lines, or text."""
    if data.startswith(SQLITE_MAGIC):
        return SQLITE
    try:
        json.loads(data)
        return JSON_DOCUMENT
    except ValueError:
        pass
    lines = [line for line in data.split(b"\n") if line.strip()]
    try:
        for line in lines:
            json.loads(line)
    except ValueError:
        return TEXT
    return JSONL if lines else TEXT


@dataclass(frozen=True)
class LogSample:
    """A kind's sample: its folder in sample-agent-logs (copied whole), its source in that folder, its files."""

    kind: str
    folder: str
    source: str
    forms: tuple[tuple[str, str], ...]  # each file (relative to the folder) and its form

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(file for file, _ in self.forms)

    def form(self, file: str) -> str:
        return dict(self.forms)[file]

    def damages(self) -> tuple[str, ...]:
        """Every damage its files get, in a stable order."""
        return damages_of(form for _, form in self.forms)


def damages_of(forms: Iterable[str]) -> tuple[str, ...]:
    """Every damage files of ``forms`` get, in a stable order."""
    forms = set(forms)
    found: list[str] = []
    for form in FORM_DAMAGES:
        if form in forms:
            found += [how for how in FORM_DAMAGES[form] if how not in found]
    return tuple(found)


def log_kinds() -> tuple[str, ...]:
    """Every kind registered: a new one is fuzzed, or fails the tests, from the day it is registered."""
    from archivist.agents import registry

    return registry.names()


@functools.cache
def log_sample(kind: str) -> LogSample:
    from archivist.agents import registry

    sample = registry.get(kind).sample
    assert sample, f"the kind {kind} has no sample (its registry entry's sample): nothing to fuzz"
    folder, _, source = sample.partition("/")
    base = pristine(folder)
    files = sorted(path.relative_to(base).as_posix() for path in base.rglob("*") if path.is_file())
    return LogSample(
        kind, folder, source or ".", tuple((file, file_form((base / file).read_bytes())) for file in files)
    )


@functools.cache
def pristine(folder: str) -> Path:
    """A private copy of a sample folder, made once per process: a sample's database is never opened
    where it is (SQLite writes beside a database it opens in WAL mode, even to read it)."""
    import atexit
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix="archivist-samples-"))
    atexit.register(shutil.rmtree, scratch, True)
    return _copy_folder(LOGS / folder, scratch / folder)


def _copy_folder(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(*(f"*{end}" for end in JOURNALS)))
    return target


def copy_log_sample(kind: str, into: Path) -> Path:
    """A copy of the kind's sample folder under ``into``; returns the source in it."""
    sample = log_sample(kind)
    return _copy_folder(pristine(sample.folder), into / sample.folder) / sample.source


def read_keys(kind: str, source: Path) -> set[str]:
    """The keys of the sessions the kind's reader reads from ``source`` (none where reading fails)."""
    from archivist.archive import sessions

    try:
        return {session.key for session in sessions.module(kind).read(source, [])}
    except Exception:
        return set()


@functools.cache
def sample_keys(kind: str) -> frozenset[str]:
    sample = log_sample(kind)
    return frozenset(read_keys(kind, pristine(sample.folder) / sample.source))


@functools.cache
def kept_keys(kind: str, file: str) -> frozenset[str]:
    """The sessions the sample holds without ``file``: what a damage to that file must leave stored."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="archivist-fuzz-without-") as scratch:
        source = copy_log_sample(kind, Path(scratch))
        (Path(scratch) / log_sample(kind).folder / file).unlink()
        return frozenset(read_keys(kind, source)) & sample_keys(kind)


# --- where a value is in a file, and how one is written ---


@dataclass(frozen=True)
class Spot:
    """A value in a sample's file: a JSON document's (at ``path``), a JSONL or text line's, a database
    cell's (the cell itself where ``path`` is None, else a value of the JSON it holds)."""

    file: str
    line: int | None = None
    cell: tuple[str, int, str] | None = None  # table, rowid, column
    path: tuple[Any, ...] | None = None

    def __repr__(self) -> str:
        where = [self.file]
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.cell is not None:
            where.append("{}[{}].{}".format(*self.cell))
        if self.path is not None:
            where.append(json.dumps(list(self.path), ensure_ascii=False))
        return " ".join(where)


@dataclass(frozen=True)
class New:
    """A value to write. Each mark in it stands for bytes written as they are (bytes that are not UTF-8,
    JSON nested deeper than ``json`` writes): inside a string, or, ``bare``, for the whole value."""

    value: Any
    marks: tuple[tuple[str, bytes], ...] = ()
    bare: bool = False


Change = Callable[[Any], New]


def _mark(number: int) -> str:
    return f"\ue000{number}\ue001"  # private-use characters: in no sample, never escaped by json.dumps


def hostile_new(pieces: Iterable[str | bytes], before: str = "") -> New:
    """Text of ``pieces`` (after ``before``): a str piece as it is, a bytes piece written raw."""
    text, marks = before, []
    for piece in pieces:
        if isinstance(piece, bytes):
            marks.append((_mark(len(marks)), piece))
            text += marks[-1][0]
        else:
            text += piece
    return New(text, tuple(marks))


def json_bytes(value: Any, news: Iterable[New], indent: int | None = None) -> bytes:
    """``value`` as JSON: a lone surrogate in a string as its escape (``\\ud800``), the marks as their bytes."""
    data = json.dumps(value, ensure_ascii=False, indent=indent).encode("utf-8", "backslashreplace")
    for new in news:
        for mark, raw in new.marks:
            data = data.replace(json.dumps(mark, ensure_ascii=False).encode() if new.bare else mark.encode(), raw)
    return data


def raw_bytes(new: New) -> bytes:
    """A text written as bytes: a lone surrogate as the three bytes UTF-8 refuses, the marks as their bytes."""
    data = str(new.value).encode("utf-8", "surrogatepass")
    for mark, raw in new.marks:
        data = data.replace(mark.encode(), raw)
    return data


def _indent(data: bytes) -> int | None:
    """The indent of a pretty-printed JSON document (None: on one line)."""
    lines = data.split(b"\n")
    if len(lines) < 3:
        return None
    return len(lines[1]) - len(lines[1].lstrip(b" ")) or None


# Kinds whose sample's texts stand in strings holding JSON (OpenTelemetry attributes): their spots go into them.
NESTED_JSON = frozenset({"copilot-vs"})
IN_JSON = "\ue002json text\ue003"  # a path's step into the JSON a string holds (private-use: no sample's key)


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = json.loads(value) if key == IN_JSON else value[key]
    return value


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    if IN_JSON in path:  # the JSON a string holds changed, and written back as that string
        step = path.index(IN_JSON)
        inner = _replaced(json.loads(_at(value, path[:step])), path[step + 1 :], new)
        return _replaced(value, path[:step], json.dumps(inner, ensure_ascii=False))
    _at(value, path[:-1])[path[-1]] = new
    return value


def _paths(value: Any, prefix: tuple[Any, ...] = (), nested: bool = False) -> Iterable[tuple[Any, ...]]:
    if nested and (inner := _json_container(value)) is not None:  # (its values, not the string itself)
        yield from _paths(inner, (*prefix, IN_JSON), nested)
        return
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*prefix, key), nested)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*prefix, index), nested)


def _split_lines(data: bytes) -> list[bytes]:
    pieces = data.split(b"\n")
    return [piece + b"\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])


def _json_container(text: Any) -> Any:
    """The JSON object or list a cell's text holds, or None."""
    if not isinstance(text, str) or not text.lstrip().startswith(("{", "[")):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict | list) else None


def _connect(path: Path) -> Any:
    import sqlite3

    connection = sqlite3.connect(path, isolation_level=None)
    for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        connection.execute(f'DROP TRIGGER "{name}"')  # full-text triggers: the readers never read those tables
    return connection


def _tables(connection: Any) -> list[str]:
    """The tables a reader may read: not a virtual table, nor one of its shadow tables, nor SQLite's own."""
    rows = connection.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    virtual = [name for name, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL")]
    return [
        name
        for name, _ in rows
        if name not in virtual
        and not name.startswith("sqlite_")
        and not any(name.startswith(f"{table}_") for table in virtual)
    ]


def _cell_columns(connection: Any, table: str) -> list[str]:
    """A table's columns but an INTEGER PRIMARY KEY (the rowid itself: it can only be an integer)."""
    return [
        name
        for _, name, kind, _, _, key in connection.execute(f'PRAGMA table_info("{table}")')
        if not (key == 1 and kind.upper() == "INTEGER")
    ]


@functools.cache
def spots(kind: str, file: str, texts_only: bool = False) -> tuple[Spot, ...]:
    """Every value of a sample's file (``texts_only``: every string holding a space, a text of a
    language: a message, a title, a command; never an id, a role, a type, a time)."""

    def wanted(value: Any) -> bool:
        return not texts_only or (isinstance(value, str) and " " in value.strip())

    path = pristine(log_sample(kind).folder) / file
    form = log_sample(kind).form(file)
    found: list[Spot] = []
    if form == JSON_DOCUMENT:
        value = json.loads(path.read_bytes())
        found = [Spot(file, path=place) for place in _paths(value) if wanted(_at(value, place))]
    elif form in (JSONL, TEXT):
        for index, line in enumerate(_split_lines(path.read_bytes())):
            if form == TEXT:
                if line.strip() and wanted(line.decode("utf-8", "replace")):
                    found.append(Spot(file, line=index))
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            nested = kind in NESTED_JSON
            found += [
                Spot(file, line=index, path=place)
                for place in _paths(record, nested=nested)
                if wanted(_at(record, place))
            ]
    else:
        import tempfile

        with tempfile.TemporaryDirectory() as scratch:
            copy = Path(scratch) / "copy.db"
            shutil.copyfile(path, copy)
            connection = _connect(copy)
            for table in _tables(connection):
                for column in _cell_columns(connection, table):
                    for rowid, value in connection.execute(f'SELECT rowid, "{column}" FROM "{table}" ORDER BY rowid'):
                        cell = (table, rowid, column)
                        inner = _json_container(value)
                        if inner is not None:
                            found += [Spot(file, cell=cell, path=p) for p in _paths(inner) if wanted(_at(inner, p))]
                        if (inner is None and wanted(value)) or not texts_only:
                            found.append(Spot(file, cell=cell))
            connection.close()
    return tuple(found)


def write_changes(folder: Path, kind: str, changes: Iterable[tuple[Spot, Change]]) -> None:
    """Each spot's value changed in the copy of a kind's sample folder at ``folder``."""
    by_file: dict[str, list[tuple[Spot, Change]]] = {}
    for spot, change in changes:
        by_file.setdefault(spot.file, []).append((spot, change))
    for file, edits in by_file.items():
        form = log_sample(kind).form(file)
        path = folder / file
        if form == SQLITE:
            _change_cells(path, edits)
        elif form == JSON_DOCUMENT:
            data = path.read_bytes()
            value, news = json.loads(data), []
            for spot, change in edits:
                assert spot.path is not None
                news.append(change(_at(value, spot.path)))
                value = _replaced(value, spot.path, news[-1].value)
            path.write_bytes(json_bytes(value, news, _indent(data)) + b"\n")
        else:
            lines = _split_lines(path.read_bytes())
            for index in sorted({spot.line for spot, _ in edits if spot.line is not None}):
                end = b"\n" if lines[index].endswith(b"\n") else b""
                here = [(spot, change) for spot, change in edits if spot.line == index]
                if form == TEXT:
                    text = lines[index].rstrip(b"\n").decode("utf-8", "surrogateescape")
                    for _, change in here:
                        new = change(text)
                        text = raw_bytes(new).decode("utf-8", "surrogateescape")
                    lines[index] = text.encode("utf-8", "surrogateescape") + end
                    continue
                record, news = json.loads(lines[index]), []
                for spot, change in here:
                    assert spot.path is not None
                    news.append(change(_at(record, spot.path)))
                    record = _replaced(record, spot.path, news[-1].value)
                lines[index] = json_bytes(record, news) + end
            path.write_bytes(b"".join(lines))


def _change_cells(path: Path, edits: list[tuple[Spot, Change]]) -> None:
    connection = _connect(path)
    cells: dict[tuple[str, int, str], list[tuple[Spot, Change]]] = {}
    for spot, change in edits:
        assert spot.cell is not None
        cells.setdefault(spot.cell, []).append((spot, change))
    for (table, rowid, column), here in cells.items():
        old, storage = connection.execute(
            f'SELECT "{column}", typeof("{column}") FROM "{table}" WHERE rowid = ?', [rowid]
        ).fetchone()
        value: Any
        text: bytes | None = None  # a text, written as these bytes
        if all(spot.path is not None for spot, _ in here):
            inner, news = _json_container(old), []
            for spot, change in here:
                assert spot.path is not None
                news.append(change(_at(inner, spot.path)))
                inner = _replaced(inner, spot.path, news[-1].value)
            text = json_bytes(inner, news)
        else:
            new = here[-1][1](old)
            value = new.value
            if isinstance(value, str):
                text = raw_bytes(new)
        mark = "?"
        if text is not None and storage == "blob":
            value = text  # JSON held as a blob stays a blob
        elif text is not None:
            try:
                value = text.decode("utf-8")
            except UnicodeDecodeError:
                value, mark = text, "CAST(? AS TEXT)"  # bytes that are not UTF-8, held as text (SQLite never checks)
        connection.execute(f'UPDATE OR IGNORE "{table}" SET "{column}" = {mark} WHERE rowid = ?', [value, rowid])
    connection.close()


# --- damage ---


@dataclass(frozen=True)
class LogDamage:
    """One damage to a copy of a kind's sample: what it is (shown when an example fails), and how it is written."""

    kind: str
    file: str
    how: str
    what: str
    write: Callable[[Path], None]  # given the copy's folder (the kind's folder in sample-agent-logs)

    def __repr__(self) -> str:
        return f"{self.kind} {self.file}: {self.what}"


def hostile_pieces() -> SearchStrategy[tuple[str | bytes, ...]]:
    """Hostile text in pieces: lone surrogates, NUL and control characters, bytes that are not UTF-8, any
    text (but line breaks); half the time ending with a high surrogate, as a string cut inside an emoji."""
    text = st.text(max_size=8).map(lambda value: value.replace("\n", " ").replace("\r", " "))
    piece = st.one_of(st.sampled_from(SURROGATES), st.sampled_from(CONTROLS), st.sampled_from(NOT_UTF8), text)
    return st.builds(
        lambda pieces, cut: (*pieces, *((HIGH_SURROGATE,) if cut else ())),
        st.lists(piece, min_size=1, max_size=8),
        st.booleans(),
    )


def _shown(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 80 else f"{shown[:50]}…{shown[-20:]} ({len(value)} long)"


def _json_type(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


_JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
_JSON_VALUES = st.one_of(
    _JSON_SCALARS,
    st.lists(_JSON_SCALARS, max_size=3),
    st.dictionaries(st.text(max_size=8), _JSON_SCALARS, max_size=3),
)
# A cell of another storage class: NULL, an integer at SQLite's edges, a real, a blob (not UTF-8), text.
_CELL_VALUES = st.one_of(
    st.none(),
    st.sampled_from((0, -1, 2**63 - 1, -(2**63), 1, 10**18)),
    st.floats(allow_nan=False),
    st.builds(lambda head, bad: head + bad, st.binary(max_size=12), st.sampled_from(NOT_UTF8)),
    st.text(max_size=20),
)


def _deep(levels: int, opener: str) -> New:
    text = "[" * levels + "0" + "]" * levels if opener == "[" else '{"a": ' * levels + "0" + "}" * levels
    return New(_mark(0), ((_mark(0), text.encode()),), bare=True)


@st.composite
def value_change(draw: st.DrawFn, how: str, old: Any, cell: bool, huge: int) -> tuple[str, Change]:
    """A change of one value ``how`` (``cell``: a database cell itself, whose types are SQLite's)."""
    if how == "wrong type":
        values = _CELL_VALUES if cell else _JSON_VALUES
        new = draw(values.filter(lambda value: type(value) is not type(old) and _json_type(value) != _json_type(old)))
        return f"= {_shown(new)}", lambda _old: New(new)
    if how == "huge":
        unit = "".join(draw(st.lists(st.sampled_from(HUGE_PIECES), min_size=1, max_size=3)))
        size = draw(st.integers(min(50_000, huge), huge))
        text = unit * (size // len(unit) + 1)
        return f"= {_shown(text)}", lambda _old: New(text)
    if how == "deep":
        levels, opener = draw(st.integers(*DEEP_LEVELS)), draw(st.sampled_from("[{"))
        return f"= JSON nested {levels} levels deep ({opener})", lambda _old: _deep(levels, opener)
    pieces = draw(hostile_pieces())
    if isinstance(old, str) and draw(st.booleans()):
        return f"+= {pieces!r}", lambda old: hostile_new(pieces, f"{old} ")
    return f"= {pieces!r}", lambda _old: hostile_new(pieces)


def _rewrite(file: str, edit: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def write(folder: Path) -> None:
        path = folder / file
        path.write_bytes(edit(path.read_bytes()))

    return write


def _inserted(lines: list[bytes], index: int, line: bytes) -> bytes:
    before = lines[:index]
    if before and not before[-1].endswith(b"\n"):
        before[-1] += b"\n"
    return b"".join([*before, line, *lines[index:]])


@st.composite
def text_damage(draw: st.DrawFn, file: str, data: bytes, how: str) -> tuple[str, Callable[[Path], None]]:
    """A damage to the bytes of a JSON, JSONL or text file."""
    lines = _split_lines(data)
    if how == "cut":
        at = draw(st.integers(0, max(0, len(data) - 1)))
        return f"cut at byte {at}", _rewrite(file, lambda data: data[:at])
    if how == "line cut":
        index = draw(st.integers(0, max(0, len(lines) - 1)))
        keep = draw(st.integers(0, max(0, len(lines[index].rstrip(b"\n")) - 1))) if lines else 0
        cut = [*lines[:index], lines[index][:keep] + b"\n", *lines[index + 1 :]] if lines else []
        return f"line {index} cut at byte {keep}", _rewrite(file, lambda _data: b"".join(cut))
    if how in ("invalid UTF-8", "control bytes"):
        at = draw(st.integers(0, len(data)))
        pool = NOT_UTF8 if how == "invalid UTF-8" else tuple(c.encode() for c in CONTROLS)
        bad = b"".join(draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4)))
        return f"{bad!r} at byte {at}", _rewrite(file, lambda data: data[:at] + bad + data[at:])
    if how == "brackets":
        index = draw(st.integers(0, len(lines)))
        count, opener = draw(st.integers(1, 100_000)), draw(st.sampled_from(("[", "{", '{"a":', '[{"a":')))
        line = (opener * count).encode() + b"\n"
        return f"{count} × {opener!r} as line {index}", _rewrite(file, lambda _data: _inserted(lines, index, line))
    index = draw(st.integers(0, max(0, len(lines) - 1)))  # reordered
    rest = [line if line.endswith(b"\n") else line + b"\n" for line in lines[index:]]
    order = draw(st.permutations(range(len(rest))))
    shuffled = b"".join([*lines[:index], *(rest[position] for position in order)])
    return f"lines from {index} reordered", _rewrite(file, lambda _data: shuffled)


def _page_size(data: bytes) -> int:
    size = int.from_bytes(data[16:18], "big")
    return 65_536 if size == 1 else size or 4096


@st.composite
def store_damage(
    draw: st.DrawFn, kind: str, file: str, data: bytes, how: str, huge: int
) -> tuple[str, Callable[[Path], None]]:
    """A damage to a SQLite file: its bytes, or a row."""
    page = _page_size(data)
    pages = max(1, len(data) // page)
    if how == "truncated":
        at = draw(st.one_of(st.integers(0, pages - 1).map(lambda number: number * page), st.integers(0, len(data) - 1)))
        return f"truncated at byte {at}", _rewrite(file, lambda data: data[:at])
    if how == "garbage page":
        number, seed_ = draw(st.integers(0, pages - 1)), draw(st.integers(0, 2**32))
        header = number == 0 and draw(st.booleans())  # page 1 with the database header kept, or not
        start = number * page + (100 if header else 0)
        garbage = random.Random(seed_).randbytes(page - (100 if header else 0))
        what = f"page {number + 1} of {pages} garbage{' (header kept)' if header else ''}"
        return what, _rewrite(file, lambda data: data[:start] + garbage + data[start + len(garbage) :])
    cells = spots(kind, file)
    if how == "row deleted":
        table, rowid, _ = draw(st.sampled_from(sorted({spot.cell for spot in cells if spot.cell is not None})))

        def delete(folder: Path) -> None:
            connection = _connect(folder / file)
            connection.execute(f'DELETE FROM "{table}" WHERE rowid = ?', [rowid])
            connection.close()

        return f"{table} row {rowid} deleted", delete
    spot = draw(value_spot(kind, file, how))
    what, change = draw(value_change(how, _value_at(kind, spot), spot.path is None, huge))
    return f"{spot!r} {what}", lambda folder: write_changes(folder, kind, [(spot, change)])


def value_spot(kind: str, file: str, how: str) -> SearchStrategy[Spot]:
    """A value of the file to change ``how``: hostile text and huge values half the time in place of a
    text (a message, a title, a command: where a reader looks into the text), else anywhere."""
    texts = spots(kind, file, texts_only=True)
    anywhere = st.sampled_from(spots(kind, file))
    if how not in ("hostile text", "huge") or not texts:
        return anywhere
    return st.sampled_from((True, False)).flatmap(lambda in_text: st.sampled_from(texts) if in_text else anywhere)


def _value_at(kind: str, spot: Spot) -> Any:
    """The value a spot holds in the sample."""
    path = pristine(log_sample(kind).folder) / spot.file
    form = log_sample(kind).form(spot.file)
    if form == SQLITE:
        import sqlite3

        assert spot.cell is not None
        table, rowid, column = spot.cell
        connection = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
        (value,) = connection.execute(f'SELECT "{column}" FROM "{table}" WHERE rowid = ?', [rowid]).fetchone()
        connection.close()
        return value if spot.path is None else _at(_json_container(value), spot.path)
    if form == JSON_DOCUMENT:
        assert spot.path is not None
        return _at(json.loads(path.read_bytes()), spot.path)
    assert spot.line is not None
    line = _split_lines(path.read_bytes())[spot.line]
    if form == TEXT:
        return line.rstrip(b"\n").decode("utf-8", "replace")
    assert spot.path is not None
    return _at(json.loads(line), spot.path)


def _renamed(file: str, bad: str) -> Callable[[Path], None]:
    def write(folder: Path) -> None:
        path = folder / file
        path.rename(path.with_name(f"{path.stem}{bad}{path.suffix}"))

    return write


@st.composite
def log_damage(draw: st.DrawFn, kind: str, how: str | None = None, huge: int = LOG_HUGE_BYTES) -> LogDamage:
    """One damage to one file of the kind's sample (``how``: that damage, to a file it applies to; ``huge``:
    the largest huge value, in characters)."""
    sample = log_sample(kind)
    files = [file for file in sample.files if how is None or how in FORM_DAMAGES[sample.form(file)]]
    assert files, f"no file of the {kind} sample takes the damage {how!r}"
    file = draw(st.sampled_from(files))
    form = sample.form(file)
    if how is None:
        how = draw(st.sampled_from(FORM_DAMAGES[form]))
    data = (pristine(sample.folder) / file).read_bytes()
    if how == NAME:
        bad = b"".join(draw(st.lists(st.sampled_from(NOT_UTF8), min_size=1, max_size=3)))
        what, write = f"renamed with {bad!r}", _renamed(file, os.fsdecode(bad))
    elif form == SQLITE:
        what, write = draw(store_damage(kind, file, data, how, huge))
    elif how in TEXT_DAMAGES:
        what, write = draw(text_damage(file, data, how))
    else:
        spot = draw(value_spot(kind, file, how))
        what, change = draw(value_change(how, _value_at(kind, spot), False, huge))
        what = f"{spot!r} {what}"

        def write(folder: Path, spot: Spot = spot, change: Change = change) -> None:
            write_changes(folder, kind, [(spot, change)])

    return LogDamage(kind, file, how, what, write)


# --- a damaged source indexed, and what the run must keep ---


@dataclass
class LogOutcome:
    """What indexing a damaged source did: its outcome, the sessions stored, the problems told, the properties broken."""

    label: str
    stored: int = 0
    problems: int = 0
    violations: list[Violation] = field(default_factory=list)


def stored_sessions(db_path: Path) -> dict[str, set[str]]:
    """The keys of the sessions stored from each agent-log source (by its path), as stored (masked)."""
    import sqlite3

    connection = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        paths = dict(connection.execute("SELECT id, path FROM log_sources").fetchall())
        found: dict[str, set[str]] = {path: set() for path in paths.values()}
        for (key,) in connection.execute("SELECT key FROM documents WHERE source LIKE 'log:%'"):
            _, source, session = key.split(":", 2)
            found[paths[int(source)]].add(session)
    finally:
        connection.close()
    return found


def not_utf8_stored(db_path: Path) -> list[Violation]:
    """A violation for each column of the archive holding a text that is not UTF-8 (a lone surrogate written
    as its three bytes included): the first such value of each."""
    import sqlite3

    connection = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    connection.text_factory = bytes
    found = []
    try:
        tables = [
            name.decode()
            for name, sql in connection.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
            if not (sql or b"").upper().startswith(b"CREATE VIRTUAL")
        ]
        for table in tables:
            for column in [row[1].decode() for row in connection.execute(f'PRAGMA table_info("{table}")')]:
                rows = connection.execute(f'SELECT "{column}" FROM "{table}" WHERE typeof("{column}") = \'text\'')
                for (value,) in rows:
                    try:
                        value.decode("utf-8")
                    except UnicodeDecodeError:
                        found.append(Violation(NOT_UTF8_STORED, f"{table}.{column}: {value[:120]!r}"))
                        break
    finally:
        connection.close()
    return found


@functools.cache
def _empty_archive() -> Path:
    """An empty workspace indexed once per process: its archive, fresh, of the schema of this version."""
    import atexit
    import tempfile

    from archivist.archive.indexer import index_workspace
    from archivist.workspace import archive_path

    workspace = Path(tempfile.mkdtemp(prefix="archivist-empty-"))
    atexit.register(shutil.rmtree, workspace, True)
    index_workspace(workspace)
    return archive_path(workspace).parent


def fresh_workspace(workspace: Path) -> Path:
    """An empty workspace with a fresh archive (a copy of ``_empty_archive``: a third of an index's time)."""
    from archivist.workspace import archive_path

    workspace.mkdir(parents=True)
    shutil.copytree(_empty_archive(), archive_path(workspace).parent)
    return workspace


def index_log_damage(damage: LogDamage, scratch: Path, timeout: float) -> LogOutcome:
    """A copy of the kind's sample, damaged, checked and indexed as a source of a fresh workspace's archive
    (as `archivist index WS --source KIND=PATH` does): what it did, and the properties it broke."""
    import traceback

    from archivist.archive import sessions
    from archivist.archive.indexer import index_workspace
    from archivist.errors import ArchivistError
    from archivist.secrets import Masker
    from archivist.workspace import archive_path, secret_key

    source = copy_log_sample(damage.kind, scratch / "logs")
    damage.write(scratch / "logs" / log_sample(damage.kind).folder)
    workspace = fresh_workspace(scratch / "workspace")
    label = "stored"
    try:
        with time_limit(timeout):
            try:
                sessions.check(damage.kind, source)
            except ArchivistError:
                label = "refused by check"  # the command line would refuse it; indexed all the same
            summary = index_workspace(workspace, log_sources=[(damage.kind, source)])
    except AssertionError as error:  # time_limit's: past the bound
        return LogOutcome("hang", violations=[Violation(HANG, str(error))])
    except Exception as error:  # the property under test: nothing escapes
        where = traceback.extract_tb(error.__traceback__)[-1]
        detail = f"{type(error).__name__}: {str(error)[:300]} (at {Path(where.filename).name}:{where.lineno})"
        return LogOutcome("exception", violations=[Violation(EXCEPTION, detail)])
    db_path = archive_path(workspace)
    stored = stored_sessions(db_path).get(str(source), set())
    outcome = LogOutcome(label, len(stored), len(summary.problems), not_utf8_stored(db_path))
    if summary.problems and label == "stored":
        outcome.label = "stored, problems told"
    masker = Masker(secret_key(db_path))
    lost = sorted(key for key in kept_keys(damage.kind, damage.file) if masker.name(key) not in stored)
    if lost:
        outcome.violations.append(Violation(LOST, f"sessions the damaged file does not hold, not stored: {lost}"))
    return outcome
