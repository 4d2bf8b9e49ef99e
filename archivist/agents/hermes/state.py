"""Hermes' ``state.db``: its sessions' metadata and messages, read-only (see the package's docstring).

Its table ``sessions`` (``id``, ``model``, ``parent_session_id``,
``started_at``/``ended_at`` in Unix seconds, ``title``, the token counts ``input_tokens``,
``output_tokens``, ``cache_read_tokens``, ``cache_write_tokens``, and the costs
``actual_cost_usd``, else ``estimated_cost_usd``) and its table ``messages`` (``session_id``,
``role``, ``content``, ``tool_calls`` as JSON text, ``tool_call_id``, ``timestamp`` in Unix
seconds, the thinking in ``reasoning``, ``reasoning_content`` or ``reasoning_details``), read by
their columns' names: a column a version lacks is read as NULL.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist.agents import Root, Unread, Usage, databases, text_or_none, usage

NEEDED = {"sessions": ("id",), "messages": ("session_id", "role")}
SESSION_COLUMNS = (
    "id",
    "model",
    "parent_session_id",
    "started_at",
    "ended_at",
    "title",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "actual_cost_usd",
    "estimated_cost_usd",
)
MESSAGE_COLUMNS = (
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "timestamp",
    "reasoning",
    "reasoning_content",
    "reasoning_details",
)
ORDER = f"{SESSION_COLUMNS.index('started_at') + 1}, 1"  # by the columns selected: when they began, then id


@dataclass
class Stored:
    """One session of ``state.db``: its metadata, and its messages as objects of the transcripts' form."""

    id: str
    model: str | None = None
    parent: str | None = None
    started: Any = None
    ended: Any = None
    title: str | None = None
    usage: Usage | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)


def missing(database: Path) -> str | None:
    """What ``database`` lacks of Hermes' tables (a phrase), or None; raises the error of one that
    cannot be opened or read (``Unavailable`` where another program holds it locked)."""
    try:
        with closing(databases.connect(database)) as connection:
            return _missing(connection)
    except sqlite3.Error as error:
        if databases.locked(error):
            raise databases.unavailable(database, error) from None
        raise


def sessions(database: Path, root: Root) -> list[Stored]:
    """Every session of ``database``, in the order they began; what cannot be read is told in ``root``'s problems."""
    if not databases.openable(database, root.problems):
        return []
    found: list[Stored] = []
    with databases.reading(database, root.problems):
        with closing(databases.connect(database, root.problems)) as connection:
            lacking = _missing(connection)
            if lacking:
                root.problems.append(Unread(f"{database.name} {lacking}: not read"))
                return []
            found = _read(connection, database.name, root.problems)
    return found


def _read(connection: sqlite3.Connection, name: str, problems: list[str]) -> list[Stored]:
    rows = connection.execute(
        f"SELECT {_select(connection, 'sessions', SESSION_COLUMNS)} FROM sessions ORDER BY {ORDER}"
    ).fetchall()
    order = "timestamp, rowid" if "timestamp" in _columns(connection, "messages") else "rowid"
    groups = databases.rowids_by(connection, "messages", "session_id", order)
    columns = _select(connection, "messages", MESSAGE_COLUMNS)
    found: list[Stored] = []
    unnamed = 0
    for row in rows:
        values = dict(zip(SESSION_COLUMNS, row, strict=True))
        key = values["id"]
        if not isinstance(key, str) or not key.strip() or len(key) > databases.MAX_ID_BYTES:
            unnamed += 1
            continue
        stored = _stored(key, values)
        messages = databases.by_rowid(connection, "messages", columns, groups.pop(key, []))
        stored.rows = [dict(zip(MESSAGE_COLUMNS, message, strict=True)) for message in messages]
        found.append(stored)
    if unnamed:
        problems.append(f"{name}: {unnamed} session(s) skipped: no id, or one over {databases.MAX_ID_BYTES} bytes")
    return found


def _stored(key: str, values: dict[str, Any]) -> Stored:
    cost = values["actual_cost_usd"] if values["actual_cost_usd"] is not None else values["estimated_cost_usd"]
    return Stored(
        id=key,
        model=text_or_none(values["model"]),
        parent=text_or_none(values["parent_session_id"]),
        started=values["started_at"],
        ended=values["ended_at"],
        title=text_or_none(values["title"]),
        usage=usage(
            input=values["input_tokens"],
            output=values["output_tokens"],
            cache_read=values["cache_read_tokens"],
            cache_write=values["cache_write_tokens"],
            cost=cost,
        ),
    )


def _missing(connection: sqlite3.Connection) -> str | None:
    """The tables and columns read here that the database lacks (a view is no table), or None."""
    tables = databases.tables(connection)
    lacking = [
        f"{table}.{column}"
        for table, columns in NEEDED.items()
        for column in columns
        if table not in tables or column not in _columns(connection, table)
    ]
    return f"has no {', '.join(lacking)}: not Hermes' state database" if lacking else None


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in connection.execute(f"PRAGMA table_info({table})").fetchall()}


def _select(connection: sqlite3.Connection, table: str, wanted: tuple[str, ...]) -> str:
    """The columns to select: those the table has (NULL where a value is too large to hold), NULL for the others."""
    present = _columns(connection, table)
    return ", ".join(databases.bounded(column) if column in present else f"NULL AS {column}" for column in wanted)
