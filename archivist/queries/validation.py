"""Checking canned-query parameters before any SQL runs (docs/errors.md).

Every surface (Datasette pages and JSON, the CLI, MCP) passes its parameters
through ``prepare`` so that bad input gets the same clear error everywhere and
no raw SQL error ever reaches a user. Which rule checks which parameter is each
query's declaration (``declarations``); ``QUERIES`` is that declaration as the
checks use it. The rules themselves are in ``rules``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from archivist.errors import ArchivistError
from archivist.queries import declarations
from archivist.queries.rules import MAX_QUERY_CHARS, MAX_QUERY_WORDS, MAX_VALUE_CHARS, Check, Execute, require_query

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_QUERY_WORDS",
    "MAX_VALUE_CHARS",
    "QUERIES",
    "Check",
    "Execute",
    "QuerySpec",
    "check_sizes",
    "prepare",
    "text",
    "unalias",
]


def text(value: Any) -> str:
    """Parameters travel as text, as they do in a URL."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else ""
    if isinstance(value, (list, tuple)):
        return ",".join(text(item) for item in value)  # lists travel comma-separated
    return str(value).strip()


@dataclass(frozen=True)
class QuerySpec:
    """What ``prepare`` needs of one query: its rules by parameter, its checks, when it embeds, its aliases."""

    params: dict[str, Callable[[str], str]]
    checks: tuple[Check, ...] = field(default_factory=tuple)
    embeds: Callable[[dict[str, str]], bool] | None = None  # when its SQL embeds :query
    aliases: dict[str, str] = field(default_factory=dict)  # a seed's name for a parameter -> ours

    def needs_model(self, params: dict[str, str]) -> bool:
        return self.embeds is not None and self.embeds(params)

    @classmethod
    def of(cls, query: declarations.Query) -> QuerySpec:
        return cls({param.name: param.rule for param in query.params}, query.checks, query.embeds, dict(query.aliases))


# Each query's rules, from its declaration: its parameters in declaration order, then its checks.
QUERIES: dict[str, QuerySpec] = {name: QuerySpec.of(query) for name, query in declarations.QUERIES.items()}


def _too_long(name: str, value: str) -> ArchivistError:
    return ArchivistError(
        "INVALID_PARAMETER",
        f"{name} is too long ({len(value)} characters)",
        f"A parameter value has at most {MAX_VALUE_CHARS} characters.",
        f"Shorten {name}.",
    )


def _not_text(name: str) -> ArchivistError:
    return ArchivistError(
        "INVALID_PARAMETER",
        f"{name} is not valid text",
        "It holds a lone surrogate (\\ud800-\\udfff): characters that are not Unicode text, as bytes that "
        "are not UTF-8 become in a command-line argument or a JSON escape.",
        f"Send {name} as UTF-8 text.",
    )


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
        if not _is_text(value):
            raise _not_text(key)
    params = {key: validate(values[key]) for key, validate in spec.params.items()}
    for check in spec.checks:
        check(params, execute)
    return params
