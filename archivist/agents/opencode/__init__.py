"""OpenCode's sessions, read in place: its SQLite database and its older JSON storage.

OpenCode keeps its data in ``$XDG_DATA_HOME/opencode`` (``~/.local/share/opencode`` on
every system), as its own code writes it (sst/opencode ``packages/opencode/src/session``,
``storage``):

- from 1.2, ``opencode.db`` (``opencode-<channel>.db`` for other release channels), opened
  read-only (``archivist.databases``): tables ``session`` (``id``, ``parent_id``,
  ``directory``, ``title``, ``time_created``, ``time_updated``), ``message`` and ``part``
  (``session_id``, ``message_id``, and the record as JSON in ``data``);
- before it, ``storage/``: ``session/<project id>/<session id>.json``,
  ``message/<session id>/<message id>.json`` and ``part/<message id>/<part id>.json``. A
  session the database holds too is read from the database.

The older Go OpenCode (opencode-ai/opencode, archived) kept each project's sessions in that
project's ``.opencode/opencode.db``, with tables ``sessions`` and ``messages`` of the shape its
successor Crush kept: a database of those tables is read as ``archivist.agents.crush.store``
reads Crush's (the project: the folder holding ``.opencode``). It is read here, not as a kind of
its own, because a user gives either OpenCode's folder as an ``opencode`` source, and the tables
tell which OpenCode wrote it.

The source is that folder, its ``storage`` folder, a Go OpenCode project (the folder holding
``.opencode``: its database is read after the data folder's, where a folder is both) or its ``.opencode``
folder, or one database. A message is a user's
or an assistant's (``modelID``: the models); its parts in order: ``text`` (a ``synthetic``
one, written by OpenCode itself, is left out, but for its note of a call it made for the user, "Called
the Read tool with the following input: {…}" for a file attached with @: that call, with its file),
``reasoning`` (thinking), ``tool`` (a call
with the ``filePath`` or ``path`` and the ``command`` of its input, its output a tool
message after it), ``file`` (an attachment, ``[file: NAME]`` in the text: its data is never
kept); step, snapshot, patch and the other bookkeeping parts are skipped. An assistant
message's ``tokens`` and ``cost`` are its usage. Times are the messages' (Unix ms),
else the session's. The title is the session's, unless it is OpenCode's default ("New
session - …"): then the first request. A sub-agent's session names its parent.

A database locked past a brief wait is ``Unavailable``; one that cannot be read, is no regular
file (a pipe is never opened), is no SQLite database or is damaged is ``Unread`` (an empty file
holds nothing), and the rest of the source is read: ``check`` never refuses a folder for it, only
for a database that is read and is another program's, where nothing else of OpenCode's is there. A session two databases hold
(both took it from the same storage) is read from the first, ``opencode.db``. The messages and
parts are read in one pass over each table, then by rowid: nothing says the tables have an index
on ``session_id``. A record over 64 MB, or a JSON file that is not JSON, is told in its
session's problems; a file over 1 GB is not read; a storage file whose name is no plain id (a
``..`` would lead out of the storage) is not read. Nothing is ever written.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import SESSION_PART, WHOLE_SESSION, databases
from archivist.agents.crush import store as crush_store
from archivist.agents.tool_edits import parsed_arguments, with_input

KIND = "opencode"
EXPECTED = (
    "OpenCode's data folder (~/.local/share/opencode), its storage folder, or its opencode.db "
    "(or a project of the Go OpenCode, or its .opencode folder)"
)
TABLES = frozenset({"session", "message", "part"})
DEFAULT_TITLES = ("New session - ", "Child session - ")
DATABASE = "opencode.db"
GO_FOLDER = ".opencode"  # a project's folder of the Go OpenCode's database
MAX_VALUE_BYTES = databases.MAX_VALUE_BYTES  # the largest record read whole
MAX_ID_BYTES = databases.MAX_ID_BYTES  # an id longer than this is none of OpenCode's
ROWIDS_AT_ONCE = 500  # the rows asked for by one query
TOO_LARGE = f"a record not read: over {agents.size_text(MAX_VALUE_BYTES)}"
INLINE_BYTES = 64 * 1024  # a record larger than this is read alone, when its turn comes
WHOLE_CHARS = WHOLE_SESSION  # a session whose messages hold more text is given in parts (``Session.more``),
PART_CHARS = SESSION_PART  # of this much text each; a text part longer is messages of its own, of this much each
CALLED = re.compile(r"Called the (?P<tool>\S+) tool with the following input: (?P<input>.*)", re.DOTALL)
PLAIN_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")  # an id that names a folder of the storage, never ".."


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of OpenCode's sessions (a sentence), or None."""
    path = Path(path).expanduser()
    if (reason := agents.no_source(path, EXPECTED)) is not None:
        return reason
    if path.is_file():
        found = databases.tables_of(path)
        if isinstance(found, str):
            return f"{found}: expected {EXPECTED}."
        if not found >= TABLES and not crush_store.is_store(found):
            return f"{path} has no session, message and part tables: expected {EXPECTED}."
        return None
    root = agents.Root(path)
    if _session_files(_storage(root), root):
        return None
    reasons = []
    for database in _databases(root):
        found = databases.tables_of(database)
        if isinstance(found, str) or found >= TABLES or crush_store.is_store(found):
            return None  # (OpenCode's, or damaged: told when it is read, and the rest of the source is read)
        reasons.append(f"{database} has no session, message and part tables")
    if reasons:
        return f"{reasons[0]}: expected {EXPECTED}."
    return f"{path} holds neither opencode.db nor storage/session/: expected {EXPECTED}."


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every session, each once: the databases' (``opencode.db``'s first, then the other channels'),
    in the order they began, then those only the JSON storage holds. A session two databases hold
    (both took it from the same storage) is read from the first."""
    problems = problems if problems is not None else []
    root = agents.Root(Path(path).expanduser(), problems)
    if root.named is not None and not agents.is_file(root.path):  # (a pipe would never end)
        root.problems.append(agents.Unread(f"{root.path.name} is not a regular file: not read"))
        return
    seen: set[str] = set()
    for database in [root.path] if root.path.is_file() else _databases(root):
        for session in _from_database(database, root):
            if session.key not in seen:
                seen.add(session.key)
                yield session
    if root.path.is_dir():
        storage = _storage(root)
        for file in _session_files(storage, root):
            stored = _from_storage(file, storage, root) if file.stem not in seen else None
            if stored is not None and stored.key not in seen:
                seen.add(stored.key)
                yield stored


def _databases(root: agents.Root) -> list[Path]:
    """The databases of a data folder: ``opencode.db``, then ``opencode-<channel>.db``, then a Go
    OpenCode project's ``.opencode/opencode.db`` (an empty file holds nothing; one that cannot be read,
    or is not a database, is told when it is read)."""
    found = [
        file
        for file in root.entries(root.path)
        if file.name.endswith(".db") and (file.name == DATABASE or file.name.startswith("opencode-")) and _held(file)
    ]
    project = [
        file
        for folder in root.folders(root.path)
        if folder.name == GO_FOLDER
        for file in root.entries(folder)
        if file.name == DATABASE and _held(file)
    ]
    return sorted(found, key=lambda file: file.name != DATABASE) + project


def _held(file: Path) -> bool:
    """Whether a database file may hold sessions: a file that is not empty, or something else there
    that is no folder (told when it is read)."""
    return _size(file) != 0 if agents.is_file(file) else file.exists() and not agents.is_dir(file)


def _size(file: Path) -> int | None:
    try:
        return file.stat().st_size
    except OSError:
        return None


def _storage(root: agents.Root) -> Path:
    folder = root.path / "storage"
    return folder if agents.is_dir(folder) and root.allows(folder) else root.path


def _session_files(storage: Path, root: agents.Root) -> list[Path]:
    sessions = storage / "session"
    if not agents.is_dir(sessions) or not root.allows(sessions):
        return []
    return [file for project in root.folders(sessions) for file in root.files(project, ".json")]


# --- the database -------------------------------------------------------------------------------


def _from_database(database: Path, root: agents.Root) -> Iterator[agents.Session]:
    """A database's sessions; one that cannot be read, is no regular file (never opened), is not a
    database or is damaged is Unread."""
    irregular = databases.irregular(database)
    if irregular is not None:
        root.problems.append(irregular)
        return
    with databases.reading(database, root.problems):
        with closing(databases.connect(database, root.problems)) as connection:
            found = databases.tables(connection)
            if not found >= TABLES and crush_store.is_store(found):
                yield from crush_store.sessions(connection, database, KIND)  # (the Go OpenCode's)
                return
            if not found >= TABLES:
                root.problems.append(f"{database.name}: no session, message and part tables: not read")
                return
            rows = connection.execute(
                f"SELECT {databases.bounded('id', MAX_ID_BYTES)}, {databases.bounded('parent_id', MAX_ID_BYTES)}, "
                f"{databases.bounded('directory', MAX_VALUE_BYTES)}, {databases.bounded('title', MAX_VALUE_BYTES)}, time_created, time_updated FROM session "
                "ORDER BY time_created, id"
            ).fetchall()
            messages = databases.rowids_by(connection, "message", "session_id", "time_created, id")
            parts = databases.rowids_by(connection, "part", "session_id", "id")
            for key, parent, directory, title, created, updated in rows:
                if key is None:
                    continue  # (no id, or one that is none of OpenCode's: nothing is linked to it)
                info = {"id": key, "parentID": parent, "directory": directory, "title": title}
                info["time"] = {"created": created, "updated": updated}
                rowids = (messages.pop(key, []), parts.pop(key, []))

                def read(
                    info: dict[str, Any] = info, rowids: tuple[list[int], list[int]] = rowids
                ) -> agents.Session | None:
                    problems: list[str] = []
                    return _session(info, _records(connection, *rowids, problems), [database], problems)

                session = read()
                if session is not None:
                    session.again = read if session.more is not None else None
                    yield session


def _records(
    connection: sqlite3.Connection, message_rowids: list[int], part_rowids: list[int], problems: list[str]
) -> Iterator[tuple[Any, Iterator[Any]]]:
    """A session's messages (their rowids), each with its parts, in order, read as they are taken:
    which message each part is of is read first, its data when its message's turn comes."""
    by_message: dict[Any, list[int]] = {}
    column = databases.bounded("message_id", MAX_ID_BYTES)
    for start in range(0, len(part_rowids), ROWIDS_AT_ONCE):
        chunk = part_rowids[start : start + ROWIDS_AT_ONCE]
        query = f"SELECT rowid, {column} FROM part WHERE rowid IN ({', '.join('?' * len(chunk))})"
        owners = dict(connection.execute(query, chunk).fetchall())
        for rowid in chunk:
            if rowid in owners:
                by_message.setdefault(owners[rowid], []).append(rowid)
    for message_id, data, stored in _rows(connection, "message", "id", message_rowids):
        parts = _rows(connection, "part", "message_id", by_message.get(message_id, []))
        yield _json(data, stored, problems), (_json(data, stored, problems) for _, data, stored in parts)


def _rows(connection: sqlite3.Connection, table: str, key: str, rowids: list[int]) -> Iterator[tuple[Any, ...]]:
    """The ``key``, ``data`` and data's type of the rows of ``table`` of these rowids, in their order,
    read as they are taken: ``ROWIDS_AT_ONCE`` at a time, and a record over ``INLINE_BYTES`` alone,
    when its turn comes (memory holds one large record at a time)."""
    identity = databases.bounded(key, MAX_ID_BYTES)
    inline = f'{identity}, {databases.bounded("data", min(INLINE_BYTES, MAX_VALUE_BYTES))}, typeof("data")'
    alone = (
        f'SELECT {identity}, {databases.bounded("data", MAX_VALUE_BYTES)}, typeof("data") FROM {table} WHERE rowid = ?'
    )
    for start in range(0, len(rowids), ROWIDS_AT_ONCE):
        chunk = rowids[start : start + ROWIDS_AT_ONCE]
        query = f"SELECT rowid, {inline} FROM {table} WHERE rowid IN ({', '.join('?' * len(chunk))})"
        found = {row[0]: tuple(row[1:]) for row in connection.execute(query, chunk).fetchall()}
        for rowid in chunk:
            row = found.pop(rowid, None)
            if row is not None and row[1] is None and row[2] != "null":  # larger than INLINE_BYTES
                row = connection.execute(alone, [rowid]).fetchone() or row
            if row is not None:
                yield row


def _json(data: Any, stored: Any, problems: list[str]) -> Any:
    """A record's JSON value (None: not read, told in ``problems``); ``stored``: the type SQLite keeps it as."""
    if data is None and stored != "null":
        problems.append(TOO_LARGE)
        return None
    try:
        return agents.json_value(data)
    except agents.NotJSON as error:
        problems.append(f"a record not read: {error}")
        return None


# --- the JSON storage -----------------------------------------------------------------------------


def _from_storage(file: Path, storage: Path, root: agents.Root) -> agents.Session | None:
    problems: list[str] = []
    if PLAIN_ID.fullmatch(file.stem) is None:
        root.problems.append(f"{file.name}: not read: its name is no session id")
        return None
    info = agents.json_file(file, root)
    if not isinstance(info, dict):
        root.problems.append(f"{file.name}: not a session ({'; '.join(problems) or 'not a JSON object'})")
        return None
    records: list[tuple[Any, Iterator[Any]]] = []
    folder = storage / "message" / file.stem
    message_files = root.files(folder, ".json") if _allowed(root, storage / "message", folder) else []
    for message_file in message_files:
        message = agents.json_file(message_file, root)
        part_folder = storage / "part" / message_file.stem
        allowed = PLAIN_ID.fullmatch(message_file.stem) and _allowed(root, storage / "part", part_folder)
        part_files = root.files(part_folder, ".json") if allowed else []
        records.append((message, (agents.json_file(part, root) for part in part_files)))  # (read when its turn comes)
    records.sort(key=lambda record: _created(record[0]))
    return _session({**info, "id": info.get("id") or file.stem}, records, [file, *message_files], problems)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _allowed(root: agents.Root, holder: Path, folder: Path) -> bool:
    """Whether the folder a record's id names is there in its ``holder`` and may be entered: no link
    leads out, and it resolves inside the source."""
    return all(agents.is_dir(path) and root.allows(path) for path in (holder, folder)) and agents.within(
        os.path.realpath(folder), root.real
    )


def _created(message: Any) -> float:
    time = message.get("time") if isinstance(message, dict) else None
    created = time.get("created") if isinstance(time, dict) else None
    return float(created) if isinstance(created, int | float) and abs(created) < 1e18 else 0.0


# --- a session ----------------------------------------------------------------------------------


def _session(
    info: dict[str, Any], records: Iterable[tuple[Any, Iterable[Any]]], files: list[Path], problems: list[str]
) -> agents.Session | None:
    """A session of its records (each message with its parts), read whole; one whose messages hold
    more than ``WHOLE_CHARS`` of text, given in parts (``Session.more``) as the rest is read."""
    reading = _Reading(records)

    first_request: list[str] = []  # (of its first part: the session's messages may be a later part's when it ends)

    def made(messages: list[agents.Message]) -> agents.Session:
        first_request.append(crush_store.first_request_of(messages))
        return agents.Session(
            key=str(info["id"]),
            agent=KIND,
            title="",
            messages=messages,
            project=agents.text_or_none(info.get("directory")),
            models=reading.models,
            files=files,
            problems=problems,
            parent=agents.text_or_none(info.get("parentID")),
        )

    def finish(session: agents.Session) -> None:
        reading.finish(session, info, first_request[0])

    return agents.read_in_parts(iter(reading), made, finish, WHOLE_CHARS, PART_CHARS)


class _Reading:
    """A session's messages as its records are read (the models they name, the first and last time
    they were written, those of no known shape counted), and its fields once they are all read."""

    def __init__(self, records: Iterable[tuple[Any, Iterable[Any]]]) -> None:
        self.records = records
        self.models: list[str] = []
        self.skipped = 0
        self.stamps: list[str] = []  # the first and last time of a message

    def __iter__(self) -> Iterator[agents.Message]:
        for message, parts in self.records:
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
                self.skipped += 1
                continue
            for found in _messages(message, parts, self.models):
                at = found.timestamp
                if at:
                    self.stamps = [min(at, self.stamps[0]), max(at, self.stamps[1])] if self.stamps else [at, at]
                yield found

    def finish(self, session: agents.Session, info: dict[str, Any], first_request: str) -> None:
        """``session``'s title and times, and what was skipped, once its records are read."""
        if self.skipped:
            session.problems.append(f"{self.skipped} message(s) of no known shape skipped")
        time = _mapping(info.get("time"))
        times = sorted(
            stamp
            for stamp in [*self.stamps, agents.iso_utc(time.get("created")), agents.iso_utc(time.get("updated"))]
            if stamp
        )
        title = agents.text_or_none(info.get("title"))
        if title is None or title.startswith(DEFAULT_TITLES):
            title = first_request
        session.title = agents.short_title(title)
        session.started, session.last = (times[0], times[-1]) if times else (None, None)


def _messages(message: dict[str, Any], parts: Iterable[Any], models: list[str]) -> Iterator[agents.Message]:
    """A message and the tool results its parts hold, in order, given as its parts are read: a text
    part of over ``PART_CHARS`` is messages of its own (after the text before it), of at most that
    much each (``pieces``), so that nothing holds it twice or joins it whole."""
    time = _mapping(message.get("time"))
    timestamp = agents.iso_utc(time.get("created"))
    model = agents.text_or_none(message.get("modelID"))
    if model and model not in models:
        models.append(model)
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[agents.ToolCall] = []
    outputs: list[str] = []
    attached: list[agents.Attachment] = []
    assistant = message["role"] == "assistant"
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str) and part.get("synthetic"):
            if (made := _call_made_for_the_user(part["text"])) is not None:
                calls.append(made)
        elif kind == "text" and isinstance(part.get("text"), str):
            if len(part["text"]) > PART_CHARS:
                if any(texts):
                    joined = "\n\n".join(text for text in texts if text)
                    yield agents.Message(message["role"], joined, timestamp, model if assistant else None)
                    texts = []
                for piece in agents.pieces(part["text"].strip(), PART_CHARS):
                    yield agents.Message(message["role"], piece, timestamp, model if assistant else None)
                continue
            texts.append(part["text"].strip())
        elif kind == "reasoning" and isinstance(part.get("text"), str):
            thinking.append(part["text"].strip())
        elif kind == "file":
            url = part.get("url")
            inlined = url if isinstance(url, str) and url.startswith("data:") else None
            attached.append(agents.attachment(part.get("mime"), part.get("filename"), data=inlined))
            texts.append(attached[-1].placeholder())
        elif kind == "tool":
            state = _mapping(part.get("state"))
            arguments = _mapping(state.get("input"))
            command = arguments.get("command")
            call = agents.ToolCall(
                name=agents.text_or_none(part.get("tool")) or "tool",
                files=agents.named_files(arguments, ("filePath", "path")),
                commands=[command.strip()] if isinstance(command, str) and command.strip() else [],
            )
            calls.append(with_input(call, state.get("input")))
            output = state.get("output") if isinstance(state.get("output"), str) else state.get("error")
            if isinstance(output, str) and output.strip():
                outputs.append(output.strip())
    yield agents.Message(
        message["role"],
        "\n\n".join(text for text in texts if text),
        timestamp,
        model if assistant else None,
        calls,
        thinking="\n\n".join(text for text in thinking if text),
        usage=_usage(message) if assistant else None,
        attachments=attached,
    )
    for output in outputs:
        yield agents.Message("tool", "", timestamp, tool_output=output)


def _call_made_for_the_user(text: str) -> agents.ToolCall | None:
    """The tool call a synthetic text says OpenCode made for the user ("Called the Read tool with the
    following input: {…}", a file attached with @), with the file it names; None for another text."""
    said = CALLED.fullmatch(text.strip())
    if said is None:
        return None
    arguments = parsed_arguments(said["input"])
    call = agents.ToolCall(name=said["tool"], files=agents.named_files(_mapping(arguments), ("filePath", "path")))
    return with_input(call, arguments)


def _usage(message: dict[str, Any]) -> agents.Usage | None:
    """An assistant message's ``tokens`` (its ``input`` without the cache's, ``output`` and
    ``reasoning``, ``cache.read`` and ``cache.write``) and the ``cost`` OpenCode worked out."""
    tokens = _mapping(message.get("tokens"))
    cache = _mapping(tokens.get("cache"))
    return agents.usage(
        input=tokens.get("input"),
        output=agents.whole_count(tokens.get("output")) + agents.whole_count(tokens.get("reasoning")),
        cache_write=cache.get("write"),
        cache_read=cache.get("read"),
        cost=message.get("cost"),
    )
