"""Zed's agent threads, read in place from its ``threads.db``.

Zed (the editor) keeps the threads of its agent panel in the SQLite database ``threads.db`` of
the folder ``threads`` of its data folder, as its own code writes it (zed-industries/zed
``crates/agent/src/db.rs``; the data folder in ``crates/paths/src/paths.rs``):
``~/.local/share/zed`` on Linux (``$XDG_DATA_HOME/zed``), ``~/Library/Application
Support/Zed`` on macOS, ``~/AppData/Local/Zed`` on Windows. agentsview reads the same
(kenn-io/agentsview ``internal/parser/zed.go``, ``zed_helpers.go``, ``zed_paths.go``).

Its table ``threads`` holds a row a thread: ``id``, ``summary`` (the title), ``updated_at``
(RFC 3339), ``data_type`` and ``data``: the thread's JSON document, zstd-compressed where
``data_type`` is ``zstd`` (what Zed writes) and plain where it is ``json``. Columns later
versions added are read where they are there: ``parent_id`` (a sub-agent's thread names the
thread that started it), ``folder_paths`` and ``folder_paths_order`` (the project's folders,
one a line, and the order they were opened in: the first opened is the project),
``created_at`` and ``merged_into`` (a duplicate Zed folded into another thread: it is not read,
the thread it was folded into is). The document is read by ``archivist.agents.zed.thread``.

Zed keeps no time for a message: a session's times are its row's ``created_at`` and
``updated_at``. A document larger than 64 MB once uncompressed, that is not JSON, or whose
``data_type`` is of no known kind, is skipped and told as a problem; a database another program
holds locked past a brief wait is ``Unavailable``; one that cannot be read, is damaged or lacks
``threads`` is ``Unread``. Nothing is ever written, not even a ``-wal`` or ``-shm`` file.
"""

from __future__ import annotations

import io
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import zstandard

from archivist import agents
from archivist.agents import NotJSON, Root, Session, Unread, databases
from archivist.agents.zed.thread import Row, session

KIND = "zed"
DATABASE = "threads.db"
FOLDER = "threads"
_EXPECTED = "expected Zed's threads folder (holding threads.db), its data folder, or its threads.db"
NEEDED = ("id", "summary", "updated_at", "data_type", "data")
COLUMNS = (*NEEDED, "parent_id", "folder_paths", "folder_paths_order", "created_at", "merged_into")
MAX_DOCUMENT_BYTES = databases.MAX_VALUE_BYTES  # a document larger than this, uncompressed, is not held
_CHUNK = 1024 * 1024


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not Zed's threads folder, its data folder or its ``threads.db``, or None."""
    root = Path(path).expanduser()
    if reason := agents.no_source(root, _EXPECTED):
        return reason
    database = _database(root) if agents.is_dir(root) else root
    if database is None:
        return f"{root} holds no {DATABASE}: {_EXPECTED}."
    if databases.irregular(database) is not None:
        return None  # (told when it is read)
    found = databases.tables_of(database)
    if isinstance(found, str):
        return f"{found}: {_EXPECTED}."
    return None if "threads" in found else f"{database} has no threads table: not Zed's database: {_EXPECTED}."


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[Session]:
    """Every thread of the database, in the order they began."""
    problems = problems if problems is not None else []
    root = Root(Path(path).expanduser(), problems)
    database = root.path if root.named is not None else _database(root.path)
    if database is None or (root.named is None and not root.allows(database)):
        return
    if not databases.openable(database, problems):
        return
    rows: list[dict[str, Any]] = []
    with databases.reading(database, problems):
        with closing(databases.connect(database, problems)) as connection:
            rows = _rows(connection, database, problems)
    skipped: dict[str, int] = {}
    for row in rows:
        found = _session(row, database, skipped)
        if found is not None:
            yield found
    problems.extend(f"{database.name}: {text}" for text in agents.skipped_problems(skipped, "thread"))


def _database(folder: Path) -> Path | None:
    """The ``threads.db`` of a threads folder or of the data folder around it."""
    for database in (folder / DATABASE, folder / FOLDER / DATABASE):
        if os.path.lexists(database):
            return database
    return None


def _rows(connection: sqlite3.Connection, database: Path, problems: list[str]) -> list[dict[str, Any]]:
    """The rows of ``threads`` (NULL where a column is not there, or a value too large to hold)."""
    if "threads" not in databases.tables(connection):
        problems.append(Unread(f"{database.name} has no threads table: not Zed's database: not read"))
        return []
    present = {str(row[1]) for row in connection.execute('PRAGMA table_info("threads")').fetchall()}
    missing = [column for column in NEEDED if column not in present]
    if missing:
        problems.append(Unread(f"{database.name}: its threads table has no {', '.join(missing)}: not read"))
        return []
    chosen = ", ".join(databases.bounded(c) if c in present else f"NULL AS {c}" for c in COLUMNS)
    order = "created_at, updated_at, id" if "created_at" in present else "updated_at, id"
    query = f'SELECT {chosen}, typeof("data") FROM threads ORDER BY {order}'
    return [dict(zip((*COLUMNS, "stored"), row, strict=True)) for row in connection.execute(query).fetchall()]


def _text(value: Any) -> str | None:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return value if isinstance(value, str) else None


def _session(row: dict[str, Any], database: Path, skipped: dict[str, int]) -> Session | None:
    key = agents.text_or_none(_text(row["id"]))
    if key is None or len(key) > databases.MAX_ID_BYTES:
        skipped["of no id"] = skipped.get("of no id", 0) + 1
        return None
    if agents.text_or_none(_text(row["merged_into"])):
        return None  # (a duplicate Zed folded into another thread, which is read)
    document = _document(row, skipped)
    if document is None:
        return None
    about = Row(
        key=key,
        summary=agents.text_or_none(_text(row["summary"])),
        project=_project(_text(row["folder_paths"]), _text(row["folder_paths_order"])),
        parent=agents.text_or_none(_text(row["parent_id"])),
        created=agents.iso_utc(_text(row["created_at"])),
        updated=agents.iso_utc(_text(row["updated_at"])),
        files=[database],
    )
    return session(about, document)


def _document(row: dict[str, Any], skipped: dict[str, int]) -> dict[str, Any] | None:
    """A row's document as JSON; None (counted in ``skipped`` by its reason) where it cannot be."""
    data, kind = row["data"], (_text(row["data_type"]) or "").strip().lower()
    reason = None
    if data is None:
        reason = "of no data" if row["stored"] == "null" else f"of data over {agents.size_text(MAX_DOCUMENT_BYTES)}"
    elif kind not in ("zstd", "json", ""):
        reason = "of a data_type of no known kind"
    else:
        raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
        text = _unpacked(raw, reason_to=skipped) if kind == "zstd" else raw
        if text is None:
            return None
        try:
            value = agents.json_value(text.decode("utf-8", "replace"))
        except NotJSON:
            value = None
        if isinstance(value, dict):
            return value
        reason = "of data that is no JSON document"
    skipped[reason] = skipped.get(reason, 0) + 1
    return None


def _unpacked(data: bytes, reason_to: dict[str, int]) -> bytes | None:
    """zstd-compressed ``data`` uncompressed, read up to ``MAX_DOCUMENT_BYTES``; None (counted in
    ``reason_to``) where it is not zstd or holds more."""
    held: list[bytes] = []
    size = 0
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
        with reader:
            while piece := reader.read(_CHUNK):
                size += len(piece)
                if size > MAX_DOCUMENT_BYTES:
                    reason = f"of data over {agents.size_text(MAX_DOCUMENT_BYTES)} uncompressed"
                    reason_to[reason] = reason_to.get(reason, 0) + 1
                    return None
                held.append(piece)
    except zstandard.ZstdError:
        reason_to["of data that is not zstd as its data_type says"] = (
            reason_to.get("of data that is not zstd as its data_type says", 0) + 1
        )
        return None
    return b"".join(held)


def _project(paths: str | None, order: str | None) -> str | None:
    """The folder first opened of the project's folders (``folder_paths``, one a line, sorted;
    ``folder_paths_order``: for each, when it was opened)."""
    folders = [line.strip() for line in (paths or "").split("\n") if line.strip()]
    if not folders:
        return None
    places = [part.strip() for part in (order or "").split(",")]
    if len(places) == len(folders) and all(place.isdigit() for place in places):
        return min(zip(places, folders, strict=True), key=lambda pair: int(pair[0]))[1]
    return folders[0]
