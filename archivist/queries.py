"""Running the canned queries of metadata.yml by name, outside Datasette.

The SQL lives only in metadata.yml; this module reads it once and runs it on
an archive with the same SQL functions the Datasette plugin registers.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import yaml
from sqlite_utils.utils import sqlite3

from . import sqlfunctions, validation
from .errors import ArchivistError
from .workspace import DATABASE_NAME, METADATA_PATH, archive_path


@functools.cache
def metadata() -> dict[str, Any]:
    return yaml.safe_load(METADATA_PATH.read_text(encoding="utf-8"))


def canned_queries() -> dict[str, dict[str, Any]]:
    return metadata()["databases"][DATABASE_NAME]["queries"]


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


def plugin_settings() -> dict[str, Any]:
    return (metadata().get("plugins") or {}).get("archivist") or {}


def connect(db_path: Path, settings: dict[str, Any] | None = None) -> Any:
    """A read-only connection with the archive's SQL functions registered."""
    conn = sqlite3.connect(f"file:{Path(db_path).resolve()}?mode=ro", uri=True, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    sqlfunctions.register(conn, plugin_settings() if settings is None else settings)
    return conn


def response_of(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A canned query that answers with one JSON ``response`` column (``search``), decoded."""
    return json.loads(rows[0]["response"])


class Archive:
    """One archive file, queried by canned-query name."""

    def __init__(self, db_path: Path, settings: dict[str, Any] | None = None) -> None:
        self.db_path = Path(db_path)
        if not self.db_path.exists():
            raise ArchivistError(
                "DIRECTORY_NOT_FOUND",
                f"No archive at {self.db_path}",
                "The workspace has not been indexed yet.",
                "Run: archivist index WORKSPACE",
            )
        self.conn = connect(self.db_path, settings)

    @classmethod
    def for_workspace(cls, workspace: Path) -> "Archive":
        return cls(archive_path(workspace))

    def execute(self, name: str, params: dict[str, str]) -> list[dict[str, Any]]:
        """Run a canned query as written, with no validation (callers validate)."""
        cursor = self.conn.execute(sql_for(name), params)
        return [dict(row) for row in cursor.fetchall()]

    def run(self, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Validate the parameters, then run the canned query: the rows, or an ArchivistError."""
        sql_for(name)
        prepared = validation.prepare(name, params or {}, self.execute)
        return self.execute(name, prepared)

    def search(self, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The unified search (SPEC §3): the response the REST endpoint and MCP tool return."""
        return response_of(self.run("search", params))

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Archive":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
