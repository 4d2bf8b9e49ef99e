"""The rules a canned query's parameters follow, and the checks across parameters.

A rule takes one parameter's value as text and returns it, normalised, or raises the
ArchivistError that says what is wrong (docs/errors.md). A check sees all of a query's
parameters and may look things up in the archive through ``execute``. Which query
uses which rule is declared once, in ``declarations``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from archivist import agents as _agents
from archivist import dates
from archivist.agents import kinds as _kinds
from archivist.errors import ArchivistError
from archivist.queries.lists import items
from archivist.vocabulary import DOCUMENT_ROLE as DOCUMENT_ROLE

MESSAGE_ROLES: tuple[str, ...] = _agents.ROLES  # an agent log's roles
LOG_KINDS: tuple[str, ...] = tuple(_kinds.KINDS)  # the kinds of agent log registered when this is imported

Execute = Callable[[str, dict[str, str]], list[dict[str, Any]]]
Rule = Callable[[str], str]  # a parameter as given, checked and normalised (INVALID_PARAMETER else)
Check = Callable[[dict[str, str], Execute], None]

# Work per request is bounded (docs/errors.md): longer queries are INVALID_QUERY, longer values INVALID_PARAMETER.
MAX_QUERY_WORDS = 64
MAX_QUERY_CHARS = 2000
MAX_VALUE_CHARS = 4096
MAX_PATH_CHARS = 4096  # a file's path (PATH_MAX on Linux)
MAX_ID = 2**63 - 1


@dataclass(frozen=True)
class Limits:
    """A rule whose bounds or choices are data: the MCP schemas and the command line show them.

    It checks a value as any rule does (``check``); ``minimum`` and ``maximum`` bound a
    number, ``choices`` are the values it takes (of each item, for a list).
    """

    check: Rule
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()

    def __call__(self, value: str) -> str:
        return self.check(value)


_DATE_RANGE_RE = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")
_COMMAND_RE = re.compile(r"^\w[\w.\- ]*$")
_TYPE_RE = re.compile(r"^[\w.\-]*$")


def require_query(value: str, tool: str, example: str) -> str:
    words = len(value.split())
    if len(value) > MAX_QUERY_CHARS or words > MAX_QUERY_WORDS:
        raise ArchivistError(
            "INVALID_QUERY",
            f"Search query is too long ({words} words, {len(value)} characters)",
            f"A query has at most {MAX_QUERY_WORDS} words and {MAX_QUERY_CHARS} characters.",
            "Keep the few words that matter most, e.g. the error message's distinctive part.",
        )
    if not value:
        raise ArchivistError(
            "INVALID_QUERY",
            "Search query cannot be empty",
            "Provide a search term of at least 2 characters.",
            f"Try: {tool}(query='{example}')",
        )
    if len(value) < 2:
        raise ArchivistError(
            "INVALID_QUERY",
            f"Search query '{value}' is too short",
            "A search query needs at least 2 characters.",
            f"Try a longer term, e.g. {tool}(query='{example}')",
        )
    return value


def query_text(tool: str, example: str) -> Callable[[str], str]:
    """A required search query; its errors name the tool and an example query."""

    def check(value: str) -> str:
        return require_query(value, tool, example)

    return check


def date_range(value: str) -> str:
    """'' (all dates), YYYY-MM (a whole month) or YYYY-MM-DD (one day); nothing else."""
    if not value:
        return value
    match = _DATE_RANGE_RE.match(value)
    valid = False
    if match:
        try:
            dt.date(int(match[1]), int(match[2]), int(match[3] or 1))
            valid = True
        except ValueError:
            valid = False
    if not valid:
        raise ArchivistError(
            "INVALID_DATE_RANGE",
            f"Invalid date_range '{value}'",
            "date_range must be YYYY-MM (a whole month, every day of it) or YYYY-MM-DD (one day).",
            "Try '2025-11' for November 2025 or '2025-11-10' for that day.",
        )
    return value


def bounded_int(name: str, low: int, high: int, example: int | None = None) -> Limits:
    """A whole number from ``low`` to ``high``, or nothing."""
    shown = example if example is not None else min(high, max(low, 10))
    why = f"{name} must be a whole number from {low} to {high}."
    return Limits(_ranged(name, int, low, high, why, f"Try {name}={shown}."), low, high)


def command_name(name: str, required: bool) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not value and not required:
            return value
        if not value or ".." in value or not _COMMAND_RE.match(value):
            raise ArchivistError(
                "INVALID_COMMAND_FILTER",
                f"Invalid {name} '{value}'" if value else f"{name} is required",
                "A command is the plain name of a folder under reports/: letters, digits, '-', '_' and '.', no slashes.",
                "Call search_commands to see the commands that have reports.",
            )
        return value

    return check


def conversation_type(value: str) -> str:
    if not _TYPE_RE.match(value):
        raise ArchivistError(
            "INVALID_PARAMETER",
            f"Invalid conversation_type '{value}'",
            "A conversation type is one word such as brainstorm, debug, plan, review or research.",
            "Try conversation_type='debug', or leave it empty for every type.",
        )
    return value


def workspace_path(value: str) -> str:
    parts = value.replace("\\", "/").split("/")
    if not value or "\x00" in value or ".." in parts:
        raise ArchivistError(
            "PATH_NOT_FOUND",
            f"Path not found: {value!r}" if value else "A path is required",
            "Paths are relative to the workspace (or absolute inside it) and never leave it.",
            "Use a path returned by search_reports or list_command_reports.",
        )
    return value


def _command_exists(command: str, execute: Execute) -> None:
    commands = [row["command_name"] for row in execute("list_commands", {})]
    if command not in commands:
        raise ArchivistError(
            "DIRECTORY_NOT_FOUND",
            f"No reports found for command '{command}'",
            "There is no reports/" + command + "/ folder with reports in this workspace.",
            "Known commands: " + (", ".join(commands) if commands else "none yet (is the workspace indexed?)"),
        )


def reports_exist(params: dict[str, str], execute: Execute) -> None:
    if not execute("list_commands", {}):
        raise ArchivistError(
            "DIRECTORY_NOT_FOUND",
            "No reports in this workspace",
            "Reports are markdown files in reports/<command_name>/ (or the folder given by --reports-dir).",
            "Add reports there and run: archivist index WORKSPACE",
        )


def filter_command_exists(params: dict[str, str], execute: Execute) -> None:
    if params["command_filter"]:
        _command_exists(params["command_filter"], execute)


def listed_command_exists(params: dict[str, str], execute: Execute) -> None:
    _command_exists(params["command"], execute)


def report_not_found(path: str) -> ArchivistError:
    return ArchivistError(
        "PATH_NOT_FOUND",
        f"Report not found: {path}",
        "No indexed report has that path.",
        "Use a path returned by search_reports or list_command_reports.",
    )


def report_exists(params: dict[str, str], execute: Execute) -> None:
    if not execute("get_report", params):
        raise report_not_found(params["path"])


def document_not_found(document: str) -> ArchivistError:
    return ArchivistError(
        "DOCUMENT_NOT_FOUND",
        f"Document not found: {document}",
        "No document in the archive has that id or path.",
        "Use an id or path returned by a search, or run archivist index first.",
    )


def document_exists(params: dict[str, str], execute: Execute) -> None:
    if not execute("find_document", {"document": params["document"]}):
        raise document_not_found(params["document"])


def required_text(name: str, example: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not value:
            raise ArchivistError(
                "INVALID_PARAMETER", f"{name} is required", f"Give the {name} to look up.", f"Try {name}={example}"
            )
        return value

    return check


def file_path(name: str, example: str) -> Callable[[str], str]:
    """A file's path or name, as an agent log records it: required, no NUL, at most a path's length."""

    def check(value: str) -> str:
        text = value.strip()
        if not text:
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"{name} is required",
                "Give the file's path, or its name.",
                f"Try {name}={example}",
            )
        if "\x00" in text or len(text) > MAX_PATH_CHARS:
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"{name} is not a file's path",
                f"A path has no NUL character and at most {MAX_PATH_CHARS} characters.",
                f"Try {name}={example}",
            )
        return text

    return check


def one_of(name: str, choices: tuple[str, ...]) -> Limits:
    """One of ``choices``, or nothing."""

    def check(value: str) -> str:
        if value and value not in choices:
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"Unknown {name} '{value}'",
                f"{name} is one of: {', '.join(choices)}.",
                f"Try {name}={choices[0]}",
            )
        return value

    return Limits(check, choices=choices)


# --- the unified search -------------------------------------------------------

MODES = ("hybrid", "keyword", "semantic", "similar", "tag", "recent", "scan", "faceted")
DEFAULT_MODE = MODES[0]  # what a search without a mode ranks by
# brief: what a list of results shows; full: every field, the facets and the filters (the SQL's default)
OUTPUTS = ("brief", "full")
SORTS = ("relevance", "newest", "oldest", "tokens", "cost")  # the orders a search lists its matches in
API_OUTPUT = "brief"  # what GET /api/search and the MCP search tool answer unless output=full is asked for
MODES_NEEDING_QUERY = ("hybrid", "keyword", "semantic")
KINDS = ("conversation", "report", "memory", "record", "note")
ENTITY_TYPES = ("product", "feature", "test", "bug")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


def optional_query(value: str) -> str:
    """A query may be left out, but one character is never a useful search."""
    return require_query(value, "search", "authentication") if value else value


def boolean(name: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value.lower() not in _TRUE + _FALSE:
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"Invalid {name} '{value}'",
                f"{name} is true or false.",
                f"Try {name}=true",
            )
        return "true" if value.lower() in _TRUE else ""

    return check


def id_list(name: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        found = items(value)
        bad = [item for item in found if not (item.isascii() and item.isdigit() and 0 < int(item) <= MAX_ID)]
        if bad:
            shown = ", ".join(item[:20] for item in bad[:5])
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"Invalid {name}: {shown}",
                f"{name} are positive whole numbers, comma-separated.",
                f"Try {name}=598,601",
            )
        return ",".join(str(int(item)) for item in found)

    return check


def text_list(value: str) -> str:
    return ",".join(items(value))


def date_bound(name: str, end: bool) -> Callable[[str], str]:
    def check(value: str) -> str:
        try:
            dates.parse_bound(value, end=end)
        except (ValueError, OverflowError):
            raise ArchivistError(
                "INVALID_DATE",
                f"Invalid {name} '{value}'",
                "Dates are ISO (2024-01-31, 2024-01-31T09:00:00Z), a month (2024-01), a year (2024) "
                "or plain English relative to today in UTC (yesterday, last week, 3 days ago).",
                f"Try {name}='2024-01-01' or {name}='last week'",
            ) from None
        return value

    return check


def number(name: str, low: float, high: float) -> Limits:
    """A number from ``low`` to ``high``, or nothing."""
    why = f"{name} is a number from {low:g} to {high:g}."
    return Limits(_ranged(name, float, low, high, why, f"Try {name}=0.3"), low, high)


def _ranged(name: str, parse: Callable[[str], float], low: float, high: float, why: str, hint: str) -> Rule:
    """A value that ``parse`` reads, from ``low`` to ``high`` (INVALID_PARAMETER with ``why`` and ``hint`` else)."""

    def check(value: str) -> str:
        if not value:
            return value
        try:
            found: float | None = parse(value)
        except ValueError:
            found = None
        if found is None or not low <= found <= high:
            raise ArchivistError("INVALID_PARAMETER", f"Invalid {name} '{value}'", why, hint)
        return str(found)

    return check


def search_inputs(params: dict[str, str], execute: Execute) -> None:
    """What one parameter alone cannot say: what each mode needs, and bounds in order.

    A sort without a query lists by that sort (mode recent), where a mode that ranks by words
    has no words to rank.
    """
    mode = params["mode"] or DEFAULT_MODE
    if mode in MODES_NEEDING_QUERY and not params["query"] and params["sort"] not in ("", "relevance"):
        # nothing to rank: the matches are listed by the sort, as the search page lists them
        params["mode"] = mode = "recent"
    if mode in MODES_NEEDING_QUERY and not params["query"]:
        raise ArchivistError(
            "INVALID_QUERY",
            "Search query cannot be empty",
            f"mode={mode} ranks documents by a query: provide a search term of at least 2 characters.",
            "Try: search(query='video mode'), or mode='faceted' (or 'recent') to list by filters alone",
        )
    if mode == "tag" and not params["tags"]:
        raise ArchivistError(
            "INVALID_PARAMETER",
            "mode=tag needs tags",
            "Tag mode lists the documents carrying the given tags, newest first.",
            "Try: search(mode='tag', tags=['python', 'testing'])",
        )
    if mode == "similar":
        if not params["document"]:
            raise ArchivistError(
                "INVALID_PARAMETER",
                "mode=similar needs a document",
                "Similar mode finds the documents nearest in meaning to one document.",
                "Try: search(mode='similar', document='42') with an id or path from a search",
            )
        document_exists(params, execute)
    if params["page_size"] and params["limit"] and params["page_size"] != params["limit"]:
        raise ArchivistError(
            "INVALID_PARAMETER",
            f"page_size={params['page_size']} and limit={params['limit']} disagree",
            "limit is another name for page_size: the number of results per page.",
            "Give one of them.",
        )
    dates_in_order(params, execute)


def dates_in_order(params: dict[str, str], execute: Execute) -> None:
    """start_date (each bound already checked by ``date_bound``) is not after end_date."""
    start, end = dates.parse_bound(params["start_date"]), dates.parse_bound(params["end_date"], end=True)
    if start and end and start > end:
        raise ArchivistError(
            "INVALID_DATE",
            f"start_date '{params['start_date']}' is after end_date '{params['end_date']}'",
            f"The range starts {start:%Y-%m-%d %H:%M:%S} UTC and ends {end:%Y-%m-%d %H:%M:%S} UTC.",
            "Swap them, or leave one out for an open range.",
        )


def entities_known(params: dict[str, str], execute: Execute) -> None:
    wanted = [item.lower() for item in items(params["entities"])]
    if all(item in KINDS + ENTITY_TYPES for item in wanted):
        return  # the usual values: no need to read the archive
    present = [row["type"] for row in execute("document_counts", {}) if row["kind"] == "record" and row["type"]]
    allowed = list(dict.fromkeys([*KINDS, *ENTITY_TYPES, *present]))
    unknown = [item for item in wanted if item not in allowed]
    if unknown:
        raise ArchivistError(
            "INVALID_ENTITY_TYPE",
            f"Invalid entity type: {', '.join(repr(item) for item in unknown)}",
            "Allowed values: " + ", ".join(allowed),
            "Try: search(query='borders', entities=['feature', 'bug'])",
        )


def raw_syntax(params: dict[str, str], execute: Execute) -> None:
    if params["match_mode"] == "raw" and params["query"]:
        fts_syntax(params, execute)


def fts_syntax(params: dict[str, str], execute: Execute) -> None:
    try:
        execute("check_search_syntax", {"query": params["query"]})
    except Exception as error:  # the FTS5 parser's error, whichever sqlite3 module raised it
        raise ArchivistError(
            "INVALID_SEARCH_SYNTAX",
            "Invalid search syntax",
            f"The FTS5 query {params['query'][:200]!r} could not be parsed: {_fts_reason(str(error))}.",
            'Use simpler terms, "quoted phrases", prefix*, AND / OR / NOT, or match_mode=simple',
        ) from None


_FTS_NEAR_RE = re.compile(r'syntax error near "(.*)"$', re.S)
_FTS_COLUMN_RE = re.compile(r"no such column: (.*)$", re.S)


def _fts_reason(error: str) -> str:
    """The FTS5 parser's reason in plain words (never SQLite's own text)."""
    error = error.removeprefix("fts5: ")
    if near := _FTS_NEAR_RE.search(error):
        # the query runs inside "(...)": an error at that ")" is an error at the end of the query
        token = near[1]
        return "it ends too early" if token in (")", "") else f"unexpected {token[:40]!r}"
    if column := _FTS_COLUMN_RE.search(error):
        return f"{column[1][:40]!r} before ':' is not a column (columns: title, body)"
    if "unterminated string" in error:
        return "a quoted phrase is not closed"
    return "it is not valid FTS5 syntax"


def embeds_search(params: dict[str, str]) -> bool:
    """Whether this search's SQL embeds its query (the model is loaded before the SQL runs)."""
    mode = params["mode"] or DEFAULT_MODE
    return mode in ("hybrid", "semantic") or (mode in ("scan", "faceted") and bool(params["query"]))


# --- conversations ------------------------------------------------------------

# The agent of the conversations written as markdown in the workspace itself; the
# others are the kinds of agent-log sources.
WORKSPACE_AGENT = "workspace"
AGENTS = (*LOG_KINDS, WORKSPACE_AGENT)
INCLUDABLE = ("thinking", "tool_output")
USAGE_GROUPS = ("day", "month", "block", "model", "agent", "project")
ACTIVITY_PERIODS = ("day", "week")  # the periods activity_periods counts by
MAX_OFFSET = 10_000_000


def choice_list(choices: tuple[str, ...], unknown: str, about: str, fix: str) -> Limits:
    """Comma-separated values, each one of ``choices`` (case does not matter), kept in order once each.

    A value that is not is INVALID_PARAMETER: ``unknown`` comes before the values (``{s}``: an
    "s" for several), ``about`` lists the choices, ``fix`` says what to try.
    """

    def check(value: str) -> str:
        found = list(dict.fromkeys(item.lower() for item in items(value)))
        wrong = [item for item in found if item not in choices]
        if wrong:
            raise ArchivistError(
                "INVALID_PARAMETER",
                unknown.format(s="s" if len(wrong) > 1 else "") + ", ".join(repr(item[:40]) for item in wrong[:5]),
                about,
                fix,
            )
        return ",".join(found)

    return Limits(check, choices=choices)


agent_list = choice_list(
    AGENTS,
    "Unknown agent{s}: ",
    "Agents: " + ", ".join(AGENTS) + f" ({WORKSPACE_AGENT}: the conversations written in the workspace).",
    "Try agents=claude-code,codex, or leave agents empty for every agent.",
)
include_list = choice_list(
    INCLUDABLE,
    "Cannot include ",
    "include names the parts of each message left out by default: " + ", ".join(INCLUDABLE) + ".",
    "Try include=thinking,tool_output, or leave include empty for the messages alone.",
)
# A hit's role: an agent log's message's (agents.ROLES), or ``document`` for the workspace's own
# documents (archivist.vocabulary says how a session's own text counts).
ROLES = (*MESSAGE_ROLES, DOCUMENT_ROLE)
role_list = choice_list(
    ROLES,
    "Unknown role{s}: ",
    "Roles: " + ", ".join(MESSAGE_ROLES) + f" (an agent log's messages), and {DOCUMENT_ROLE} (the workspace's own "
    "documents).",
    "Try roles=user,assistant, or leave roles empty for every role.",
)


def conversation_page(params: dict[str, str], execute: Execute) -> None:
    """The document is a conversation, and the offset falls inside it (0 always does)."""
    found = execute("find_document", {"document": params["document"]})
    if not found:
        raise document_not_found(params["document"])
    if found[0]["kind"] != "conversation":
        raise ArchivistError(
            "DOCUMENT_NOT_FOUND",
            f"Not a conversation: {params['document']}",
            f"That document is a {found[0]['kind']}; get_conversation reads conversations only.",
            "Use an id or path that list_conversations gives, or a conversation found by a search.",
        )
    offset = int(params["offset"] or 0)
    if offset:
        first = execute(
            "get_conversation", {"document": params["document"], "offset": "0", "limit": "1", "include": ""}
        )
        total = first[0]["total"] if first else 0
        if offset >= total:
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"offset {offset} is past the end of the conversation",
                f"It has {total} message{'' if total == 1 else 's'}: offsets run from 0 to {max(total - 1, 0)}.",
                "Page with the next_offset of the previous answer, and stop when has_more is false.",
            )
