"""Checking canned-query parameters before any SQL runs (SPEC §5).

Every surface (Datasette pages and JSON, the CLI, MCP) passes its parameters
through ``prepare`` so that bad input gets the same clear error everywhere and
no raw SQL error ever reaches a user.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from archivist.build import dates
from archivist.errors import ArchivistError
from archivist.queries.sqlfunctions import items

Execute = Callable[[str, dict[str, str]], list[dict[str, Any]]]
Check = Callable[[dict[str, str], Execute], None]

# Work per request is bounded (SPEC §5): longer queries are INVALID_QUERY, longer values INVALID_PARAMETER.
MAX_QUERY_WORDS = 64
MAX_QUERY_CHARS = 2000
MAX_VALUE_CHARS = 4096
MAX_ID = 2**63 - 1

_DATE_RANGE_RE = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")
_COMMAND_RE = re.compile(r"^\w[\w.\- ]*$")
_TYPE_RE = re.compile(r"^[\w.\-]*$")


def text(value: Any) -> str:
    """Parameters travel as text, as they do in a URL."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else ""
    if isinstance(value, (list, tuple)):
        return ",".join(text(item) for item in value)  # lists travel comma-separated
    return str(value).strip()


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


def bounded_int(name: str, low: int, high: int, example: int | None = None) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not value:
            return value
        try:
            number = int(value)
        except ValueError:
            number = None
        if number is None or not low <= number <= high:
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"Invalid {name} '{value}'",
                f"{name} must be a whole number from {low} to {high}.",
                f"Try {name}={example if example is not None else min(high, max(low, 10))}.",
            )
        return str(number)

    return check


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


def _reports_exist(params: dict[str, str], execute: Execute) -> None:
    if not execute("list_commands", {}):
        raise ArchivistError(
            "DIRECTORY_NOT_FOUND",
            "No reports in this workspace",
            "Reports are markdown files in reports/<command_name>/ (or the folder given by --reports-dir).",
            "Add reports there and run: archivist index WORKSPACE",
        )


def _filter_command_exists(params: dict[str, str], execute: Execute) -> None:
    if params["command_filter"]:
        _command_exists(params["command_filter"], execute)


def _listed_command_exists(params: dict[str, str], execute: Execute) -> None:
    _command_exists(params["command"], execute)


def _report_exists(params: dict[str, str], execute: Execute) -> None:
    if not execute("get_report", params):
        raise ArchivistError(
            "PATH_NOT_FOUND",
            f"Report not found: {params['path']}",
            "No indexed report has that path.",
            "Use a path returned by search_reports or list_command_reports.",
        )


def _document_exists(params: dict[str, str], execute: Execute) -> None:
    if not execute("find_document", {"document": params["document"]}):
        raise ArchivistError(
            "DOCUMENT_NOT_FOUND",
            f"Document not found: {params['document']}",
            "No document in the archive has that id or path.",
            "Use an id or path returned by a search, or run archivist index first.",
        )


def required_text(name: str, example: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not value:
            raise ArchivistError(
                "INVALID_PARAMETER", f"{name} is required", f"Give the {name} to look up.", f"Try {name}={example}"
            )
        return value

    return check


def one_of(name: str, choices: tuple[str, ...]) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value and value not in choices:
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"Unknown {name} '{value}'",
                f"{name} is one of: {', '.join(choices)}.",
                f"Try {name}={choices[0]}",
            )
        return value

    return check


# --- the unified search -------------------------------------------------------

MODES = ("hybrid", "keyword", "semantic", "similar", "tag", "recent", "scan", "faceted")
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


def number(name: str, low: float, high: float) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not value:
            return value
        try:
            found = float(value)
        except ValueError:
            found = None
        if found is None or not low <= found <= high:
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"Invalid {name} '{value}'",
                f"{name} is a number from {low:g} to {high:g}.",
                f"Try {name}=0.3",
            )
        return str(found)

    return check


def _search_inputs(params: dict[str, str], execute: Execute) -> None:
    """What one parameter alone cannot say: what each mode needs, and bounds in order."""
    mode = params["mode"] or "hybrid"
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
        _document_exists(params, execute)
    if params["page_size"] and params["limit"] and params["page_size"] != params["limit"]:
        raise ArchivistError(
            "INVALID_PARAMETER",
            f"page_size={params['page_size']} and limit={params['limit']} disagree",
            "limit is another name for page_size: the number of results per page.",
            "Give one of them.",
        )
    start, end = dates.parse_bound(params["start_date"]), dates.parse_bound(params["end_date"], end=True)
    if start and end and start > end:
        raise ArchivistError(
            "INVALID_DATE",
            f"start_date '{params['start_date']}' is after end_date '{params['end_date']}'",
            f"The range starts {start:%Y-%m-%d %H:%M:%S} UTC and ends {end:%Y-%m-%d %H:%M:%S} UTC.",
            "Swap them, or leave one out for an open range.",
        )


def _entities_known(params: dict[str, str], execute: Execute) -> None:
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


def _raw_syntax(params: dict[str, str], execute: Execute) -> None:
    if params["match_mode"] == "raw" and params["query"]:
        _fts_syntax(params, execute)


def _fts_syntax(params: dict[str, str], execute: Execute) -> None:
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


def _embeds_search(params: dict[str, str]) -> bool:
    mode = params["mode"] or "hybrid"
    return mode in ("hybrid", "semantic") or (mode in ("scan", "faceted") and bool(params["query"]))


@dataclass(frozen=True)
class QuerySpec:
    params: dict[str, Callable[[str], str]]
    checks: tuple[Check, ...] = field(default_factory=tuple)
    embeds: Callable[[dict[str, str]], bool] | None = None  # when its SQL embeds :query
    aliases: dict[str, str] = field(default_factory=dict)  # a seed's name for a parameter -> ours

    def needs_model(self, params: dict[str, str]) -> bool:
        return self.embeds is not None and self.embeds(params)


QUERIES: dict[str, QuerySpec] = {
    "search_workspace": QuerySpec(
        {
            "query": lambda v: require_query(v, "search_workspace", "authentication"),
            "date_range": date_range,
            "conversation_type": conversation_type,
            "limit": bounded_int("limit", 1, 100),
        }
    ),
    "search_reports": QuerySpec(
        {
            "query": lambda v: require_query(v, "search_reports", "proxy timeout"),
            "command_filter": command_name("command_filter", required=False),
            "max_results": bounded_int("max_results", 1, 100),
        },
        (_reports_exist, _filter_command_exists),
    ),
    "list_commands": QuerySpec({}),
    "list_command_reports": QuerySpec({"command": command_name("command", required=True)}, (_listed_command_exists,)),
    "get_report": QuerySpec({"path": workspace_path}, (_report_exists,)),
    "search_semantic": QuerySpec(
        {
            "query": lambda v: require_query(v, "search_semantic", "authentication patterns"),
            "conversation_type": conversation_type,
            "date_range": date_range,
            "limit": bounded_int("limit", 1, 100),
        },
        embeds=lambda params: True,
    ),
    "find_document": QuerySpec({"document": required_text("document", "42")}, (_document_exists,)),
    "similar": QuerySpec(
        {"document": required_text("document", "42"), "limit": bounded_int("limit", 1, 100)},
        (_document_exists,),
        aliases={"source_path": "document"},
    ),
    "embedding_status": QuerySpec({}),
    "search_commands": QuerySpec({"query": lambda v: require_query(v, "search_commands", "proxy")}, (_reports_exist,)),
    "search": QuerySpec(
        {
            "query": optional_query,
            "mode": one_of("mode", MODES),
            "entities": text_list,
            "types": text_list,
            "tags": text_list,
            "match_all": boolean("match_all"),
            "start_date": date_bound("start_date", end=False),
            "end_date": date_bound("end_date", end=True),
            "product_ids": id_list("product_ids"),
            "match_mode": one_of("match_mode", ("simple", "raw")),
            "min_similarity": number("min_similarity", -1, 1),
            "document": lambda value: value,
            "page": bounded_int("page", 1, 10_000, example=1),
            "page_size": bounded_int("page_size", 1, 100),
            "limit": bounded_int("limit", 1, 100),
            # seed 002's names with no counterpart: its only output, and a boost this archive does not use
            "output": one_of("output", ("full",)),
            "encoding_context": lambda value: value,
        },
        (_search_inputs, _entities_known, _raw_syntax),
        embeds=_embeds_search,
        aliases={"kinds": "entities", "memory_type": "types", "k": "page_size", "source_path": "document"},
    ),
    "document_counts": QuerySpec({}),
    "get_document": QuerySpec({"document": required_text("document", "42")}, (_document_exists,)),
    "activity": QuerySpec({"by": one_of("by", ("month", "day")), "kind": one_of("kind", KINDS)}),
    "check_search_syntax": QuerySpec(
        {"query": lambda v: require_query(v, "check_search_syntax", "proxy NEAR(timeout)")}, (_fts_syntax,)
    ),
}


def _too_long(name: str, value: str) -> ArchivistError:
    return ArchivistError(
        "INVALID_PARAMETER",
        f"{name} is too long ({len(value)} characters)",
        f"A parameter value has at most {MAX_VALUE_CHARS} characters.",
        f"Shorten {name}.",
    )


def check_sizes(raw: dict[str, str]) -> None:
    """The length limits alone, for a surface that forwards parameters in a URL before they are checked."""
    for key, value in raw.items():
        if key == "query" and value:
            require_query(value, "search", "authentication")
        elif len(value) > MAX_VALUE_CHARS:
            raise _too_long(key, value)


def unalias(spec: QuerySpec, raw: dict[str, Any]) -> dict[str, Any]:
    """Seed names turned into ours; a name and its alias given with different values is an error."""
    found = dict(raw)
    for alias, name in spec.aliases.items():
        if alias not in found:
            continue
        value = found.pop(alias)
        if text(value) and text(found.get(name)) and text(value) != text(found.get(name)):
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"{alias} and {name} disagree",
                f"{alias} is another name for {name}.",
                "Give one of them.",
            )
        if text(value):
            found[name] = value
    return found


def prepare(name: str, raw: dict[str, Any], execute: Execute, strict: bool = True) -> dict[str, str]:
    """Validated text parameters for canned query ``name``, or an ArchivistError."""
    spec = QUERIES[name]
    raw = unalias(spec, raw)
    if strict:
        unknown = sorted(set(raw) - set(spec.params))
        if unknown:
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"Unknown parameter{'s' if len(unknown) > 1 else ''} for {name}: {', '.join(unknown)}",
                f"{name} takes: {', '.join(spec.params) or 'no parameters'}.",
                "Remove the unknown parameter.",
            )
    values = {key: text(raw.get(key)) for key in spec.params}
    for key, value in values.items():
        if len(value) > MAX_VALUE_CHARS and key != "query":  # a query's own limits say more
            raise _too_long(key, value)
    params = {key: validate(values[key]) for key, validate in spec.params.items()}
    for check in spec.checks:
        check(params, execute)
    return params
