"""The canned queries, read from the package: each one's title, description, parameters and SQL."""

from __future__ import annotations

import functools
from importlib.resources import files
from typing import Any

import yaml

from archivist.errors import ArchivistError

# Settings of the ``archivist`` plugin block that the queries read, and their defaults.
DEFAULT_SETTINGS: dict[str, Any] = {
    # Links in search_reports results point here when set: <base>/<command>/<file>.
    # Without it they are file:// URLs of the report on this machine.
    "report_link_base_url": None,
}


@functools.cache
def canned_queries() -> dict[str, dict[str, Any]]:
    """Every canned query by name, in Datasette's form (title, description, params, sql)."""
    text = (files("archivist.queries") / "canned.yml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def sql_for(name: str) -> str:
    try:
        return canned_queries()[name]["sql"]
    except KeyError:
        raise ArchivistError(
            "INVALID_PARAMETER",
            f"Unknown query '{name}'",
            "Canned queries: " + ", ".join(sorted(canned_queries())) + ".",
            "Use one of the names above.",
        ) from None
