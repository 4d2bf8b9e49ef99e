"""Goose's sessions, read in place: its ``sessions.db`` and the older session files beside it.

Goose (Block's agent, its command line and its desktop app) keeps its sessions in the folder
``sessions`` of its data folder, as its own code writes them (block/goose
``crates/goose/src/session/session_manager.rs``, ``migrations.rs``, ``legacy.rs``; the data
folder in ``crates/goose/src/config/paths.rs``): ``~/.local/share/goose`` on Linux and on
macOS (the ``etcetera`` crate's XDG layout, which ``$XDG_DATA_HOME`` moves),
``~/AppData/Roaming/Block/goose/data`` on Windows, and ``$GOOSE_PATH_ROOT/data`` wherever
that variable names an absolute folder. Goose's logging guide says the same.

- From Goose 1.10, ``sessions.db``, SQLite in WAL mode, opened read-only
  (``archivist.agents.databases``): a table ``sessions`` (``id`` such as ``20251108_1``,
  ``name``, else the older ``description``: the title; ``working_dir``: the project;
  ``created_at``, ``updated_at``; ``model_config_json`` whose ``model_name`` is the model;
  the token counts ``input_tokens``, ``output_tokens`` and their ``accumulated_*``) and a
  table ``messages`` (``session_id``, ``role``, ``content_json``: the message's parts as
  JSON, ``created_timestamp``: Unix seconds, ``metadata_json``), read in the order they were
  written. A table is read by its columns' names: Goose's migrations (``schema_version``)
  only add columns, so a later version is read as long as those named here are there; one
  without them is not read, and ``check`` says which version it is.
- Before it, ``<session id>.jsonl``: a first line of metadata (``working_dir``,
  ``description``, ``message_count``, the same token counts), then one message a line. Goose
  copied them into the database once and left them there: a session the database holds is
  read from the database.

The source is that ``sessions`` folder, the data folder around it, ``sessions.db`` or one
session file. Every session is read, whatever its ``session_type`` (the user's, a
schedule's, a sub-agent's: the schema links none to a parent). A message's parts are read as
``messages`` says (text, tool calls with their files and shell commands, tool output
apart, thinking apart, images as attachments).
Times are the messages' own, else the session's ``created_at``/``updated_at``; never a
file's. The title is the session's name (Goose's generated one, or the user's), else the
first request.

Token usage: Goose counts tokens per session, never per message, so the session's totals
(``accumulated_input_tokens``, ``accumulated_output_tokens``; in older sessions that lack
them, the counts it kept of the last response) are put on the session's last assistant
message: a session's total is the sum over its messages, as for every kind. The session
keeps the prompt's tokens as one number, which recent versions make take in the tokens read
from and written to the cache (``Usage::from_cache_exclusive_input`` in
``crates/goose/src/providers/formats/anthropic.rs``): it is the ``input`` here, as no split is
recorded. Its ``accumulated_cost`` (a price Goose works out, in a unit its schema does not
state) is not read.

Not read: the recipes, the extensions' state, the schedules, and the ``threads`` tables of
later versions. A database another program holds locked past a brief wait is
``Unavailable``; one that cannot be read, is no regular file (a pipe is never opened), is no
SQLite database, is damaged, or whose ``sessions`` or ``messages`` is missing (a view of that
name is not read: a view may be a query that never ends) or lacks these columns, is ``Unread``
(the older files beside it are still read, its sessions among them where they are there); an
empty ``sessions.db`` holds nothing. ``check`` refuses a folder for its ``sessions.db`` only
where it is another program's database and no session file is beside it: a damaged one is a
problem of the reading, never a reason to leave the rest of the source unread. A message that is not JSON, larger than 64 MB, or of no known shape is skipped and
counted in its session's problems. The messages are read in one pass over ``messages`` and
then by rowid, as nothing says the table has an index on ``session_id``. Nothing is ever
written, not even a ``-wal`` or ``-shm`` file.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from archivist.agents import (
    NotJSON,
    Root,
    Session,
    Unread,
    databases,
    is_dir,
    is_file,
    json_value,
    no_source,
    size_text,
    text_or_none,
)
from archivist.agents.goose.messages import Info, Record, from_file, looks_like_session, session, tokens

KIND = "goose"
EXPECTED = (
    "Goose's sessions folder (~/.local/share/goose/sessions), its data folder, its sessions.db, or one session's .jsonl"
)
DATABASE = "sessions.db"
KNOWN_SCHEMA = 13  # the latest schema_version of sessions.db whose columns were read here
NEEDED = {"sessions": ("id",), "messages": ("session_id", "role", "content_json")}
SESSION_COLUMNS = (
    "id",
    "name",
    "description",
    "working_dir",
    "created_at",
    "updated_at",
    "model_config_json",
    "input_tokens",
    "output_tokens",
    "accumulated_input_tokens",
    "accumulated_output_tokens",
)
ORDER = f"{SESSION_COLUMNS.index('created_at') + 1}, 1"  # by the columns selected: when they began, then id
MESSAGE_COLUMNS = ("role", "content_json", "created_timestamp", "metadata_json")
MAX_VALUE_BYTES = databases.MAX_VALUE_BYTES  # the largest value read whole (a message's content)
MAX_ID_BYTES = databases.MAX_ID_BYTES  # a session id longer than this is none of Goose's: its session is not read
TOO_LARGE = f"over {size_text(MAX_VALUE_BYTES)}"  # the reason a message too large to hold is skipped


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of Goose's sessions (a sentence), or None."""
    path = Path(path).expanduser()
    if (reason := no_source(path, EXPECTED)) is not None:
        return reason
    if path.is_file():
        if databases.is_sqlite(path) or path.suffix == ".db":
            return _check_database(path)
        return None if looks_like_session(path) else f"{path} is not a Goose session file: expected {EXPECTED}."
    root = Root(path)
    folder = _folder(root)
    database = _database(folder, root)
    foreign = _foreign(database) if database is not None else None
    if database is not None and foreign is None:
        return None  # (Goose's, or damaged: told when it is read, and the files beside it are read)
    for file in root.files(folder, ".jsonl"):
        if looks_like_session(file):
            return None
        return foreign or f"{file} is not a Goose session file: expected {EXPECTED}."
    return foreign or f"{path} holds neither {DATABASE} nor session .jsonl files: expected {EXPECTED}."


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Every session: the database's, in the order they began, then those only a session file holds."""
    problems = problems if problems is not None else []
    root = Root(Path(path).expanduser(), problems)
    if root.named is not None:
        if not is_file(root.path):  # (a pipe would never end)
            root.problems.append(Unread(f"{root.path.name} is not a regular file: not read"))
        elif databases.is_sqlite(root.path) or root.path.suffix == ".db":
            yield from _from_database(root.path, root)
        else:
            found = from_file(root.path, root)
            if found is not None:
                yield found
        return
    folder = _folder(root)
    seen: set[str] = set()
    database = _database(folder, root)
    if database is not None:
        for found in _from_database(database, root):
            seen.add(found.key)
            yield found
    for file in root.files(folder, ".jsonl"):
        if file.stem not in seen:
            found = from_file(file, root)
            if found is not None:
                yield found


def _folder(root: Root) -> Path:
    folder = root.path / "sessions"
    return folder if is_dir(folder) and root.allows(folder) else root.path


def _database(folder: Path, root: Root) -> Path | None:
    """The folder's sessions.db, unless an empty file (which holds no session); one that cannot be
    read, is not a database or is no regular file (a pipe), is told when it is read."""
    file = folder / DATABASE
    if not (os.path.lexists(file) and root.allows(file) and file.exists()):
        return None
    return None if is_file(file) and _size(file) == 0 else file


def _size(file: Path) -> int | None:
    try:
        return file.stat().st_size
    except OSError:
        return None


# --- the database -------------------------------------------------------------------------------


def _check_database(database: Path) -> str | None:
    """Why a source that is one database is not Goose's (a sentence), or None."""
    reason = _not_a_database(database)
    if reason:
        return f"{database} {reason}: expected {EXPECTED}."
    try:
        missing = _missing_in(database)
    except sqlite3.Error as error:
        return f"{database} cannot be opened read-only as a SQLite database ({error}): expected {EXPECTED}."
    except OSError as error:
        return f"{database} cannot be read ({error.strerror or error}): expected {EXPECTED}."
    return f"{database} {missing}: expected {EXPECTED}." if missing else None


def _foreign(database: Path) -> str | None:
    """Why the sessions.db of a folder is another program's (a sentence): a database that is read and
    lacks what Goose's has. None where it is Goose's, or cannot be read (no regular file, no SQLite
    database, damaged): that is told when the source is read, and the files beside it are read."""
    if databases.irregular(database) is not None or _not_a_database(database):
        return None
    try:
        missing = _missing_in(database)
    except (sqlite3.Error, OSError):
        return None
    return f"{database} {missing}: expected {EXPECTED}." if missing else None


def _missing_in(database: Path) -> str | None:
    """What ``database`` lacks of Goose's tables (``_missing``), or None; raises ``Unavailable``
    where another program holds it locked, and the error of one that cannot be opened or read."""
    try:
        with closing(databases.connect(database)) as connection:
            return _missing(connection)
    except sqlite3.Error as error:
        if databases.locked(error):
            raise databases.unavailable(database, error) from None
        raise


def _not_a_database(database: Path) -> str | None:
    """Why ``database`` cannot be opened as a SQLite database (a phrase), or None."""
    try:
        with database.open("rb") as handle:
            header = handle.read(len(databases.SQLITE_HEADER))
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    return None if header == databases.SQLITE_HEADER else "is not a SQLite database"


def _missing(connection: sqlite3.Connection) -> str | None:
    """What the database lacks of the tables and columns read here, said with its schema version; None if
    nothing. A view of the same name is no table (a view may be a query that never ends)."""
    tables = databases.tables(connection)
    lacking = [
        f"{table}.{column}"
        for table, columns in NEEDED.items()
        for column in columns
        if table not in tables or column not in _columns(connection, table)
    ]
    if not lacking:
        return None
    version = _schema(connection, tables)
    if version is None:
        return f"has no {', '.join(lacking)}: not Goose's session database"
    newer = f", newer than the {KNOWN_SCHEMA} read here," if version > KNOWN_SCHEMA else ""
    return f"is of Goose's schema version {version}{newer} and has no {', '.join(lacking)}: its sessions cannot be read"


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in connection.execute(f"PRAGMA table_info({table})").fetchall()}


def _schema(connection: sqlite3.Connection, tables: set[str]) -> int | None:
    if "schema_version" not in tables or "version" not in _columns(connection, "schema_version"):
        return None
    (version,) = connection.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return version if isinstance(version, int) else None


def _select(connection: sqlite3.Connection, table: str, wanted: tuple[str, ...]) -> str:
    """The columns to select from ``table``: those it has (NULL where a value is too large to
    hold), NULL for the others."""
    present = _columns(connection, table)
    return ", ".join(
        databases.bounded(column, MAX_VALUE_BYTES) if column in present else f"NULL AS {column}" for column in wanted
    )


def _from_database(database: Path, root: Root) -> Iterator[Session]:
    irregular = databases.irregular(database)
    if irregular is not None:
        root.problems.append(irregular)
        return
    reason = _not_a_database(database)
    if reason:
        root.problems.append(Unread(f"{database.name} {reason}"))
        return
    with databases.reading(database, root.problems):
        with closing(databases.connect(database, root.problems)) as connection:
            missing = _missing(connection)
            if missing:
                root.problems.append(Unread(f"{database.name} {missing}"))
                return
            rows = connection.execute(
                f"SELECT {_select(connection, 'sessions', SESSION_COLUMNS)} FROM sessions ORDER BY {ORDER}"
            ).fetchall()
            groups = databases.rowids_by(connection, "messages", "session_id", "rowid")
            columns = f'{_select(connection, "messages", MESSAGE_COLUMNS)}, typeof("content_json")'
            unnamed = 0
            for row in rows:
                values = dict(zip(SESSION_COLUMNS, row, strict=True))
                if values["id"] is None or len(str(values["id"])) > MAX_ID_BYTES:
                    unnamed += 1
                    continue
                messages = databases.by_rowid(connection, "messages", columns, groups.pop(values["id"], []))
                found = session(_info(values), [_record(*message) for message in messages], [database], root.problems)
                if found is not None:
                    yield found
            if unnamed:
                root.problems.append(
                    f"{database.name}: {unnamed} session(s) skipped: no id, or one over {MAX_ID_BYTES} bytes"
                )


def _info(values: dict[str, Any]) -> Info:
    config = _json(values["model_config_json"])
    model = text_or_none(config.get("model_name")) if isinstance(config, dict) else None
    return Info(
        key=str(values["id"]),
        title=text_or_none(values["name"]) or text_or_none(values["description"]),
        project=text_or_none(values["working_dir"]),
        model=model,
        created=values["created_at"],
        updated=values["updated_at"],
        tokens=tokens(
            values["accumulated_input_tokens"],
            values["accumulated_output_tokens"],
            values["input_tokens"],
            values["output_tokens"],
        ),
    )


def _record(role: Any, content: Any, created: Any, metadata: Any, stored: Any = "text") -> Record | str:
    """A row of ``messages`` as a record; a string saying why, where its content is too large to
    hold (``stored``: the type SQLite keeps it as) or no JSON."""
    if content is None and stored != "null":
        return TOO_LARGE
    try:
        parts = _json(content, strict=True)
    except NotJSON as error:
        return str(error)
    return Record(role, created, parts, _json(metadata))


def _json(value: Any, strict: bool = False) -> Any:
    """A column's JSON value (text, or bytes stored as a blob); None where there is none, or
    (unless ``strict``, which raises NotJSON) where it is not JSON."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    try:
        return json_value(value) if isinstance(value, str) else None
    except NotJSON:
        if strict:
            raise
        return None
