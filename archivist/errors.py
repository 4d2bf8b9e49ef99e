"""The one error contract shared by the CLI, the JSON API and MCP (docs/errors.md)."""

from __future__ import annotations

from typing import Any

CODES = frozenset(
    {
        "INVALID_QUERY",
        "INVALID_DATE_RANGE",
        "INVALID_DATE",
        "INVALID_COMMAND_FILTER",
        "INVALID_ENTITY_TYPE",
        "INVALID_SEARCH_SYNTAX",
        "INVALID_PARAMETER",
        "SEARCH_TIMED_OUT",  # a query stopped at its time limit: not the caller's mistake, worth another try
        "SEARCH_BUSY",  # a query that found no turn within its time limit: it never ran; worth another try
        "PATH_NOT_FOUND",
        "DOCUMENT_NOT_FOUND",
        "DIRECTORY_NOT_FOUND",
        "PROJECT_NOT_FOUND",  # the project page: no agent session of that project in the range
        "INVALID_SOURCE",  # docs/contract.md: sources: an agent-log source that is missing or not of its kind
        "ARCHIVE_NOT_WRITTEN",  # an archive could not be written (nor read, where that needs room): a full disk, say
        # beyond the first contract: the HTTP token, a foreign Host or Origin, and a failure that is not the caller's
        "UNAUTHORIZED",
        "FORBIDDEN",
        "INTERNAL_ERROR",
    }
)


class ArchivistError(Exception):
    """A user-facing error: what was wrong, why, and what to try."""

    def __init__(self, code: str, problem: str, why: str = "", hint: str = "") -> None:
        if code not in CODES:
            raise ValueError(f"unknown error code {code!r}")
        self.code = code
        self.problem = problem
        self.why = why
        self.hint = hint
        super().__init__(self.message)

    @property
    def message(self) -> str:
        lines = [f"❌ {self.problem}"]
        if self.why:
            lines.append(f"ℹ️ {self.why}")
        if self.hint:
            lines.append(f"💡 {self.hint}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"success": False, "error": self.message, "code": self.code}


def took_too_long(limit_ms: int | float) -> ArchivistError:
    """A query stopped at the time limit (the web's SQL limit, every MCP call's limit): SEARCH_TIMED_OUT."""
    return ArchivistError(
        "SEARCH_TIMED_OUT",
        "The search took too long",
        f"It ran past the time limit of {limit_ms:g} ms and was stopped; nothing was changed.",
        "Try again, or narrow it (a filter, a shorter date range, rarer words).",
    )


def busy(room: int, patience_s: float | None) -> ArchivistError:
    """A query that found no turn to run in within its time limit (``queries.line``): SEARCH_BUSY."""
    waited = "" if patience_s is None else f" for {patience_s * 1000:g} ms"
    return ArchivistError(
        "SEARCH_BUSY",
        "The server is busy",
        f"Its {room} searches at a time were all taken{waited}, so this one was not run; nothing was changed.",
        "Try again in a moment.",
    )


def cancelled() -> ArchivistError:
    return ArchivistError("INVALID_PARAMETER", "The call was cancelled", "Its caller stopped waiting for it.")
