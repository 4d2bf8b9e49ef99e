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
``goose_messages`` says (text, tool calls with their files and shell commands, tool output
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
``Unavailable``; a damaged one, or one of a schema without these columns, is ``Unread``
(the older files beside it are still read, its sessions among them where they are there);
a message that is not JSON, or of no known shape, is skipped and counted in its session's
problems. Nothing is ever written, not even a ``-wal`` or ``-shm`` file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from archivist.agents import (
    LONG_LINE,
    NotJSON,
    Root,
    Session,
    Unread,
    databases,
    head_lines,
    is_dir,
    is_file,
    json_value,
    lines,
    replaced_problems,
    text_or_none,
)
from archivist.agents.goose_messages import Info, Record, session, tokens

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
MESSAGE_COLUMNS = ("session_id", "role", "content_json", "created_timestamp", "metadata_json")


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of Goose's sessions (a sentence), or None."""
    path = Path(path).expanduser()
    if not path.exists():
        return f"{path} does not exist: expected {EXPECTED}."
    if path.is_file():
        if databases.is_sqlite(path):
            return _check_database(path)
        return None if _looks_like_session(path) else f"{path} is not a Goose session file: expected {EXPECTED}."
    root = Root(path)
    folder = _folder(root)
    database = _database(folder, root)
    if database is not None:
        return _check_database(database)
    for file in root.files(folder, ".jsonl"):
        return None if _looks_like_session(file) else f"{file} is not a Goose session file: expected {EXPECTED}."
    return f"{path} holds neither {DATABASE} nor session .jsonl files: expected {EXPECTED}."


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Every session: the database's, in the order they began, then those only a session file holds."""
    problems = problems if problems is not None else []
    root = Root(Path(path).expanduser(), problems)
    if root.named is not None:
        if databases.is_sqlite(root.path):
            yield from _from_database(root.path, root)
        else:
            found = _from_file(root.path, root)
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
            found = _from_file(file, root)
            if found is not None:
                yield found


def _folder(root: Root) -> Path:
    folder = root.path / "sessions"
    return folder if is_dir(folder) and root.allows(folder) else root.path


def _database(folder: Path, root: Root) -> Path | None:
    file = folder / DATABASE
    if is_file(file) and root.allows(file) and databases.is_sqlite(file):
        return file
    return None


# --- the database -------------------------------------------------------------------------------


def _check_database(database: Path) -> str | None:
    try:
        with closing(databases.connect(database)) as connection:
            missing = _missing(connection)
    except sqlite3.Error as error:
        if databases.locked(error):
            raise databases.unavailable(database, error) from None
        return f"{database} cannot be opened read-only as a SQLite database ({error}): expected {EXPECTED}."
    except OSError as error:
        return f"{database} cannot be read ({error.strerror or error}): expected {EXPECTED}."
    return f"{database} {missing}: expected {EXPECTED}." if missing else None


def _missing(connection: sqlite3.Connection) -> str | None:
    """What the database lacks of the tables and columns read here, said with its schema version; None if nothing."""
    lacking = [
        f"{table}.{column}"
        for table, columns in NEEDED.items()
        for column in columns
        if column not in _columns(connection, table)
    ]
    if not lacking:
        return None
    version = _schema(connection)
    if version is None:
        return f"has no {', '.join(lacking)}: not Goose's session database"
    newer = f", newer than the {KNOWN_SCHEMA} read here," if version > KNOWN_SCHEMA else ""
    return f"is of Goose's schema version {version}{newer} and has no {', '.join(lacking)}: its sessions cannot be read"


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in connection.execute(f"PRAGMA table_info({table})").fetchall()}


def _schema(connection: sqlite3.Connection) -> int | None:
    if "version" not in _columns(connection, "schema_version"):
        return None
    (version,) = connection.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return version if isinstance(version, int) else None


def _select(connection: sqlite3.Connection, table: str, wanted: tuple[str, ...]) -> str:
    """The columns to select from ``table``: those it has, NULL for the others."""
    present = _columns(connection, table)
    return ", ".join(f'"{column}"' if column in present else f"NULL AS {column}" for column in wanted)


def _from_database(database: Path, root: Root) -> Iterator[Session]:
    try:
        with closing(databases.connect(database)) as connection:
            missing = _missing(connection)
            if missing:
                root.problems.append(Unread(f"{database.name} {missing}"))
                return
            rows = connection.execute(
                f"SELECT {_select(connection, 'sessions', SESSION_COLUMNS)} FROM sessions ORDER BY {ORDER}"
            ).fetchall()
            query = (
                f"SELECT {_select(connection, 'messages', MESSAGE_COLUMNS)} FROM messages "
                "WHERE session_id = ? ORDER BY rowid"
            )
            for row in rows:
                values = dict(zip(SESSION_COLUMNS, row, strict=True))
                messages = connection.execute(query, [values["id"]]).fetchall()
                found = session(
                    _info(values), [_record(*message[1:]) for message in messages], [database], root.problems
                )
                if found is not None:
                    yield found
    except sqlite3.Error as error:
        if databases.locked(error):
            raise databases.unavailable(database, error) from None
        root.problems.append(Unread(f"{database.name} cannot be read ({error})"))
    except OSError as error:
        root.problems.append(Unread(f"{database.name} cannot be read ({error.strerror or error})"))


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


def _record(role: Any, content: Any, created: Any, metadata: Any) -> Record | str:
    """A row of ``messages`` as a record; a string saying why, where its content is no JSON."""
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


# --- the older session files ----------------------------------------------------------------------


def _looks_like_session(file: Path) -> bool:
    try:
        with file.open("rb") as handle:
            first = next(head_lines(handle), b"")
        value = json_value(first.decode("utf-8", "replace").lstrip("\ufeff"))
    except (OSError, NotJSON):
        return False
    return isinstance(value, dict) and ("message_count" in value or ("role" in value and "content" in value))


def _from_file(file: Path, root: Root) -> Session | None:
    """A session file: its first line's metadata, then its messages."""
    records: list[Record | str] = []
    metadata: dict[str, Any] = {}
    replaced = 0
    notes: list[str] = []
    try:
        with file.open("rb") as handle:
            for number, (raw, _) in enumerate(lines(handle)):
                if raw is None:
                    records.append(LONG_LINE)
                    continue
                text, bad = _decode(raw)
                if not text.strip():
                    continue
                try:
                    value = json_value(text.lstrip("\ufeff"))
                except NotJSON as error:
                    records.append(str(error))
                    continue
                replaced += bad
                if number == 0 and isinstance(value, dict) and "role" not in value and "content" not in value:
                    metadata = value
                elif isinstance(value, dict):
                    records.append(
                        Record(value.get("role"), value.get("created"), value.get("content"), value.get("metadata"))
                    )
                else:
                    records.append("not a JSON object")
    except OSError as error:
        notes.append(Unread(f"{file.name}: reading stopped ({error.strerror or error})"))
    info = Info(
        key=file.stem,
        title=text_or_none(metadata.get("description")),
        project=text_or_none(metadata.get("working_dir")),
        tokens=tokens(
            metadata.get("accumulated_input_tokens"),
            metadata.get("accumulated_output_tokens"),
            metadata.get("input_tokens"),
            metadata.get("output_tokens"),
        ),
    )
    found = session(info, records, [file], root.problems)
    if found is None:
        root.problems.extend(notes)
        return None
    found.problems.extend([*replaced_problems(replaced), *notes])
    return found


def _decode(data: bytes) -> tuple[str, int]:
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace"), 1
