"""A canned query's list and limit parameters as its SQL reads them (``archivist_list``, ``archivist_limit``),
and the projects filter of the agent-log views (``archivist_in_projects``)."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any


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
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list):  # (a JSON string is as it is: a name may end in a quote)
            return [item for item in dict.fromkeys(str(value).strip() for value in parsed) if item]
        values: list[Any] = text.strip("[]").split(",") if parsed is None else [text]
    else:
        values = text.split(",") if text else []
    return [item for item in dict.fromkeys(str(value).strip().strip('"').strip() for value in values) if item]


def list_json(value: Any, style: str | None = "") -> str:
    """``items`` as a JSON array; ``style`` ``lower`` folds case, ``tag`` normalizes as documents do."""
    found = items(value)
    if style == "tag" and found:
        from archivist.documents import normalize_tags  # the same rule that stored the tags

        found = normalize_tags(found)
    elif style == "lower":
        found = list(dict.fromkeys(item.lower() for item in found))
    return json.dumps(found)


@lru_cache(maxsize=64)
def _projects(projects: str) -> tuple[frozenset[str], frozenset[str]]:
    """A projects filter (a JSON array, as archivist_list writes it): its paths without a trailing
    separator, and its values as last folder names."""
    wanted = [str(value) for value in json.loads(projects or "[]")]
    return frozenset(value.rstrip("/\\") for value in wanted), frozenset(wanted)


def in_projects(projects: str, project: object) -> bool:
    """Whether an agent-log session's ``project`` is one the filter names, by its full path (a
    trailing separator or not) or by its last folder's name; an empty filter names every one."""
    if projects in ("", "[]"):
        return True
    if not isinstance(project, str):  # (none; or a number, as a column may hold)
        return False
    paths, names = _projects(projects)
    path = project.rstrip("/\\")
    return path in paths or re.split(r"[/\\]", path)[-1] in names
