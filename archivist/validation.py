"""Checking canned-query parameters before any SQL runs (SPEC §5).

Every surface (Datasette pages and JSON, the CLI, MCP) passes its parameters
through ``prepare`` so that bad input gets the same clear error everywhere and
no raw SQL error ever reaches a user.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import ArchivistError

Execute = Callable[[str, dict[str, str]], list[dict[str, Any]]]
Check = Callable[[dict[str, str], Execute], None]

_DATE_RANGE_RE = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")
_COMMAND_RE = re.compile(r"^\w[\w.\- ]*$")
_TYPE_RE = re.compile(r"^[\w.\-]*$")


def text(value: Any) -> str:
    """Parameters travel as text, as they do in a URL."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else ""
    return str(value).strip()


def require_query(value: str, tool: str, example: str) -> str:
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


def bounded_int(name: str, low: int, high: int) -> Callable[[str], str]:
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
                f"Try {name}={min(high, max(low, 10))}.",
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
                "Call list_commands to see the commands that have reports.",
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


@dataclass(frozen=True)
class QuerySpec:
    params: dict[str, Callable[[str], str]]
    checks: tuple[Check, ...] = field(default_factory=tuple)
    embeds_query: bool = False  # its SQL embeds :query (unless mode is keyword)

    def needs_model(self, params: dict[str, str]) -> bool:
        return self.embeds_query and params.get("mode") != "keyword"


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
    "list_command_reports": QuerySpec(
        {"command": command_name("command", required=True)}, (_listed_command_exists,)
    ),
    "get_report": QuerySpec({"path": workspace_path}, (_report_exists,)),
    "search_semantic": QuerySpec(
        {
            "query": lambda v: require_query(v, "search_semantic", "authentication patterns"),
            "conversation_type": conversation_type,
            "date_range": date_range,
            "limit": bounded_int("limit", 1, 100),
        },
        embeds_query=True,
    ),
    "find_document": QuerySpec({"document": required_text("document", "42")}, (_document_exists,)),
    "similar": QuerySpec(
        {"document": required_text("document", "42"), "limit": bounded_int("limit", 1, 100)}, (_document_exists,)
    ),
    "embedding_status": QuerySpec({}),
    "search_documents": QuerySpec(
        {
            "query": lambda v: require_query(v, "search_documents", "authentication"),
            "mode": one_of("mode", ("hybrid", "keyword", "semantic")),
            "limit": bounded_int("limit", 1, 100),
        },
        embeds_query=True,
    ),
    "search_commands": QuerySpec(
        {"query": lambda v: require_query(v, "search_commands", "proxy")}, (_reports_exist,)
    ),
}


def prepare(name: str, raw: dict[str, Any], execute: Execute, strict: bool = True) -> dict[str, str]:
    """Validated text parameters for canned query ``name``, or an ArchivistError."""
    spec = QUERIES[name]
    if strict:
        unknown = sorted(set(raw) - set(spec.params))
        if unknown:
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"Unknown parameter{'s' if len(unknown) > 1 else ''} for {name}: {', '.join(unknown)}",
                f"{name} takes: {', '.join(spec.params) or 'no parameters'}.",
                "Remove the unknown parameter.",
            )
    params = {key: validate(text(raw.get(key))) for key, validate in spec.params.items()}
    for check in spec.checks:
        check(params, execute)
    return params
