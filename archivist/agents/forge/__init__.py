"""Forge's conversations (forgecode, antinomyhq/forge), read in place from its ``.forge.db``.

Forge keeps its conversations in the SQLite database ``.forge.db`` of its folder: ``~/.forge``
(``FORGE_CONFIG`` moves it; releases before it used ``~/forge``). Its table ``conversations``
holds one row a conversation: ``conversation_id``, ``title`` (Forge's generated title),
``created_at`` and ``updated_at`` (SQLite's UTC text, to the nanosecond), ``metrics`` (the
conversation's totals) and ``context``, the whole conversation as JSON: its ``messages``, each
an entry ``{"message": {...}, "usage": {...}}`` whose message is a ``text`` (a ``role`` of
``System``, ``User`` or ``Assistant``, its ``content``, the user's ``raw_content``, the
assistant's ``tool_calls`` of ``name``, ``call_id`` and ``arguments``, its
``reasoning_details``, its ``model`` and ``timestamp``), a ``tool`` result (``call_id``,
``output.values``: texts) or an ``image``. The messages are read in
``archivist.agents.forge.context``. The shape is learned from agentsview's reader
(kenn-io/agentsview ``internal/parser/forge.go`` and ``forge_test.go``) and Forge's own source
(``forge_domain``: ``Usage``, ``FSPatch``, ``Environment::database_path``).

The working directory is the one Forge's system prompt names
(``<current_working_directory>``): the project. Each assistant message keeps its response's
``usage``: ``prompt_tokens`` (which holds the cached tokens: kept apart as read from the
cache), ``completion_tokens``, ``cached_tokens``, each an ``{"actual": n}``, and the ``cost``
the provider stated, where it did. A conversation whose ``context`` is NULL (one never
started) is skipped; one whose ``context`` is no JSON is told in ``problems``.

The source is Forge's folder or its ``.forge.db``. A database another program holds locked
is ``Unavailable``; one that cannot be read or lacks ``conversations`` is told as ``Unread``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import NotJSON, Root, Session, Unread, databases
from archivist.agents.forge.context import Context, when

KIND = "forge"
DATABASE = ".forge.db"
_EXPECTED = "expected Forge's folder (~/.forge, holding .forge.db) or its .forge.db"
COLUMNS = ("conversation_id", "title", "created_at", "updated_at", "context")
NEEDED = ("conversation_id", "context")


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not Forge's folder or its ``.forge.db``, or None."""
    root = Path(path).expanduser()
    if reason := agents.no_source(root, _EXPECTED):
        return reason
    database = root / DATABASE if agents.is_dir(root) else root
    if not os.path.lexists(database):
        return f"{root} holds no {DATABASE}: {_EXPECTED}."
    if databases.irregular(database) is not None:
        return None  # (told when it is read)
    if not databases.is_sqlite(database):
        return f"{database} is not a SQLite database: {_EXPECTED}."
    try:
        with closing(databases.connect(database)) as connection:
            lacking = _missing(connection)
    except sqlite3.Error as error:
        if databases.locked(error):
            raise databases.unavailable(database, error) from None
        return f"{database} cannot be opened read-only as a SQLite database ({error}): {_EXPECTED}."
    except OSError as error:
        return f"{database} cannot be read ({error.strerror or error}): {_EXPECTED}."
    return f"{database} {lacking}: {_EXPECTED}." if lacking else None


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[Session]:
    """Every conversation of the database, in the order they began."""
    problems = problems if problems is not None else []
    root = Root(Path(path).expanduser(), problems)
    database = root.path if root.named is not None else root.path / DATABASE
    if root.named is None and not (os.path.lexists(database) and root.allows(database)):
        return
    if not databases.openable(database, problems):
        return
    rows: list[tuple[Any, ...]] = []
    with databases.reading(database, problems):
        with closing(databases.connect(database, problems)) as connection:
            lacking = _missing(connection)
            if lacking:
                problems.append(Unread(f"{database.name} {lacking}: not read"))
                return
            rows = connection.execute(
                f"SELECT {_select(connection)} FROM conversations WHERE context IS NOT NULL ORDER BY 3, 1"
            ).fetchall()
    for row in rows:
        found = _session(dict(zip(COLUMNS, row, strict=True)), database, problems)
        if found is not None:
            yield found


def _missing(connection: sqlite3.Connection) -> str | None:
    if "conversations" not in databases.tables(connection):
        return "has no conversations table: not Forge's database"
    present = _columns(connection)
    lacking = [column for column in NEEDED if column not in present]
    return f"has no conversations.{', conversations.'.join(lacking)}: not Forge's database" if lacking else None


def _columns(connection: sqlite3.Connection) -> set[str]:
    return {str(row[1]) for row in connection.execute("PRAGMA table_info(conversations)").fetchall()}


def _select(connection: sqlite3.Connection) -> str:
    """The columns read (NULL where a value is too large to hold, or the column is not there)."""
    present = _columns(connection)
    return ", ".join(databases.bounded(column) if column in present else f"NULL AS {column}" for column in COLUMNS)


def _session(values: dict[str, Any], database: Path, problems: list[str]) -> Session | None:
    key = values["conversation_id"]
    if not isinstance(key, str) or not key.strip() or len(key) > databases.MAX_ID_BYTES:
        problems.append(f"{database.name}: a conversation skipped: no id, or one over {databases.MAX_ID_BYTES} bytes")
        return None
    raw = values["context"]
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    try:
        document = agents.json_value(raw) if isinstance(raw, str) else None
    except NotJSON as error:
        problems.append(f"{key}: its context skipped: {error}")
        return None
    context = Context()
    if not context.read(document):
        problems.append(f"{key}: its context skipped: " + ("over 64 MB" if raw is None else "no list of messages"))
        return None
    if not context.messages:
        return None  # (a conversation begun and left before its first prompt)
    title = agents.text_or_none(values["title"])
    first = next((message.text for message in context.messages if message.role == "user" and message.text), "")
    times = [message.timestamp for message in context.messages if message.timestamp]
    started = min(times) if times else when(values["created_at"])
    last = max(times) if times else when(values["updated_at"]) or started
    return Session(
        key=key,
        agent=KIND,
        title=title or agents.short_title(first) or key,
        titled=title is not None,
        messages=context.messages,
        project=context.cwd,
        models=context.models,
        started=started,
        last=last,
        files=[database],
        problems=context.problems(),
    )
