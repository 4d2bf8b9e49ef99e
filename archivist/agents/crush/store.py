"""The SQLite store that Crush and the older Go OpenCode share: its ``sessions`` and ``messages`` tables.

Crush (charmbracelet/crush) began as a fork of the Go OpenCode (opencode-ai/opencode, archived),
and both keep a project's sessions in one database in a folder of that project: ``.crush/crush.db``
and ``.opencode/opencode.db``. The shape read here is theirs, as their own code writes it
(charmbracelet/crush ``internal/db/migrations/20250424200609_initial.sql``, ``internal/db/models.go``,
``internal/message/message.go`` and ``content.go``; the Go OpenCode's ``internal/message/message.go``
marshals the same parts):

- ``sessions``: ``id``, ``parent_session_id`` (a sub-agent's session: its id is the id of the
  ``agent`` tool call that started it), ``title``, ``prompt_tokens``, ``completion_tokens``,
  ``cost``, ``created_at`` and ``updated_at`` (Unix seconds);
- ``messages``: ``id``, ``session_id``, ``role`` (``user``, ``assistant``, ``tool``, ``system``),
  ``model``, ``created_at`` and ``parts``, a JSON list of ``{"type": …, "data": {…}}``:
  ``text`` (``text``; one marked ``hidden`` is a continuation Crush wrote itself, left out),
  ``reasoning`` (``thinking``), ``tool_call`` (``id``, ``name``, ``input``: the arguments as a JSON
  text), ``tool_result`` (``content``: the output, a ``tool`` message), ``image_url`` (``url``) and
  ``binary`` (``Path``, ``MIMEType``, ``Data``: an attachment, ``[image: NAME]`` in the text, its
  data never kept), ``finish`` (the reason a response ended: bookkeeping, skipped).

Columns are looked for, never assumed from a version: a column a version lacks reads as nothing.
A tool call keeps its name, the files its input names (``file_path``, ``path``) and the
``command`` it ran (``bash``). The models are the messages' ``model``. The title is the session's,
unless it is the default ("New Session", "New Agent Session"): then the first request. The project
is the folder that holds the ``.crush`` (or ``.opencode``) folder the database is in.

Usage: neither program records a response's tokens on its message; a session holds only
``cost``, the sum over its responses, and ``prompt_tokens`` and ``completion_tokens``, which each
response overwrites (those of its last response, the cache's tokens counted in them). They are put
on the session's last assistant message, as one usage: its cost is the whole session's, its tokens
only the last response's (the others' are recorded nowhere).

A message whose parts are not JSON, or over ``databases.MAX_VALUE_BYTES``, a part of no known type,
and a message of no known role are skipped and counted in the session's problems. A session is
held whole up to ``WHOLE_SESSION`` characters of text; one that holds more is given in parts of
``SESSION_PART`` (``Session.more``) as the rest is read, its title, times, usage and problems final
once its last part is read. One with no message that holds text is not yielded (a session Crush
made only to ask for a title holds none).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import ROLES, SESSION_PART, WHOLE_SESSION, databases
from archivist.agents.tool_edits import parsed_arguments, with_input

TABLES = frozenset({"sessions", "messages"})
DATA_FOLDERS = (".crush", ".opencode")  # the folder of a project that holds its database
DEFAULT_TITLES = frozenset({"New Session", "New Agent Session"})
FILE_KEYS = ("file_path", "path")
ROWIDS_AT_ONCE = 200  # the messages asked for by one query
INLINE_BYTES = 64 * 1024  # a message's parts larger than this are read alone, when their turn comes
SESSION_COLUMNS = ("id", "parent_session_id", "title", "prompt_tokens", "completion_tokens", "cost")
MESSAGE_COLUMNS = ("role", "model", "created_at")


def project_of(database: Path) -> str | None:
    """The project a database is of: the folder holding its ``.crush`` or ``.opencode`` folder."""
    folder = Path(os.path.abspath(database)).parent
    return str(folder.parent) if folder.name in DATA_FOLDERS else None


def is_store(tables: set[str]) -> bool:
    """Whether a database's tables are this store's."""
    return tables >= TABLES


def sessions(connection: sqlite3.Connection, database: Path, agent: str) -> Iterator[agents.Session]:
    """The sessions of an open store, in the order they began, each read as its turn comes."""
    session_columns = _columns(connection, "sessions")
    message_columns = _columns(connection, "messages")
    selected = ", ".join(_column(name, session_columns) for name in SESSION_COLUMNS)
    times = ", ".join(_column(name, session_columns) for name in ("created_at", "updated_at"))
    order = "created_at, rowid" if "created_at" in session_columns else "rowid"
    rows = connection.execute(f"SELECT {selected}, {times} FROM sessions ORDER BY {order}").fetchall()
    keys = {row[0] for row in rows if isinstance(row[0], str)}
    message_order = "created_at, rowid" if "created_at" in message_columns else "rowid"
    if "session_id" not in message_columns:
        return
    by_session = databases.rowids_by(connection, "messages", "session_id", message_order)
    project = project_of(database)
    for key, parent, title, prompt, completion, cost, created, updated in rows:
        if not isinstance(key, str) or not key.strip():
            continue  # (no id, or one that is none of theirs: nothing is linked to it)
        fields = _Fields(key, agent, project, database, parent, title, (prompt, completion, cost), (created, updated))
        rowids = by_session.pop(key, [])

        def read(fields: _Fields = fields, rowids: list[int] = rowids) -> agents.Session | None:
            problems: list[str] = []
            return _session(fields, _Reading(_messages(connection, message_columns, rowids, problems), keys), problems)

        session = read()
        if session is not None:
            session.again = read if session.more is not None else None
            yield session


@dataclass
class _Fields:
    """What a session's row gives: its key, title, usage and times, and where it is from."""

    key: str
    agent: str
    project: str | None
    database: Path
    parent: Any
    title: Any
    usage: tuple[Any, Any, Any]  # prompt_tokens, completion_tokens, cost
    times: tuple[Any, Any]  # created_at, updated_at


def _session(fields: _Fields, reading: _Reading, problems: list[str]) -> agents.Session | None:
    """A session of its messages, read whole; one whose messages hold more than ``WHOLE_SESSION``
    characters of text, given in parts of ``SESSION_PART`` (``Session.more``) as the rest is read."""

    first_request: list[str] = []  # (of its first part: the session's messages may be a later part's when it ends)

    def made(messages: list[agents.Message]) -> agents.Session:
        first_request.append(first_request_of(messages))
        return agents.Session(
            key=fields.key,
            agent=fields.agent,
            title="",
            messages=messages,
            project=fields.project,
            models=reading.models,
            files=[fields.database],
            problems=problems,
            parent=agents.text_or_none(fields.parent),
        )

    def finish(session: agents.Session) -> None:
        reading.finish(session, fields, first_request[0])

    return agents.read_in_parts(iter(reading), made, finish, WHOLE_SESSION, SESSION_PART)


def first_request_of(messages: list[agents.Message]) -> str:
    """The text of the first request of these messages ("" where none)."""
    return next((message.text for message in messages if message.role == "user" and message.text), "")


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in connection.execute(f'PRAGMA table_info("{table}")').fetchall()}


def _column(name: str, present: set[str]) -> str:
    if name not in present:
        return "NULL"
    if name in ("id", "parent_session_id", "role", "model"):
        return databases.bounded(name, databases.MAX_ID_BYTES)
    if name == "title":
        return databases.bounded(name)
    return f'"{name}"'


def _messages(
    connection: sqlite3.Connection, present: set[str], rowids: list[int], problems: list[str]
) -> Iterator[tuple[Any, Any, Any, Any]]:
    """A session's messages (their rowids) in order, as ``role``, ``model``, ``created_at`` and the
    parts' JSON value (None: not read, told in ``problems``), read as they are taken: parts over
    ``INLINE_BYTES`` alone, when their turn comes."""
    columns = ", ".join(_column(name, present) for name in MESSAGE_COLUMNS)
    parts = "parts" if "parts" in present else None
    inline = f"{databases.bounded(parts, INLINE_BYTES)}, typeof(parts)" if parts else "NULL, 'null'"
    alone = f"SELECT {databases.bounded('parts')} FROM messages WHERE rowid = ?"
    for start in range(0, len(rowids), ROWIDS_AT_ONCE):
        chunk = rowids[start : start + ROWIDS_AT_ONCE]
        query = f"SELECT rowid, {columns}, {inline} FROM messages WHERE rowid IN ({', '.join('?' * len(chunk))})"
        found = {row[0]: row[1:] for row in connection.execute(query, chunk).fetchall()}
        for rowid in chunk:
            if rowid not in found:
                continue
            role, model, created, data, stored = found.pop(rowid)
            if data is None and stored != "null":
                data = (connection.execute(alone, [rowid]).fetchone() or [None])[0]
                if data is None:
                    problems.append(f"a message not read: its parts are over {databases.MAX_VALUE_BYTES // 2**20} MB")
                    continue
            try:
                value = agents.json_value(data) if isinstance(data, str | bytes) else None
            except agents.NotJSON as error:
                problems.append(f"a message not read: {error}")
                continue
            yield role, model, created, value


class _Reading:
    """A session's messages as its records are read (the models they name, the first and last
    time they were written, its last answer, what was skipped), and its fields once all are read."""

    def __init__(self, records: Iterator[tuple[Any, Any, Any, Any]], sessions: set[str]) -> None:
        self.records = records
        self.sessions = sessions
        self.models: list[str] = []
        self.stamps: list[str] = []  # the first and last time of a message
        self.answer: agents.Message | None = None  # the last assistant message read
        self.skipped = {"message": 0, "part": 0}

    def __iter__(self) -> Iterator[agents.Message]:
        for role, model, created, parts in self.records:
            if role not in ROLES or not isinstance(parts, list):
                self.skipped["message"] += 1
                continue
            for message in self._messages(role, model, created, parts):
                at = message.timestamp
                if at:
                    self.stamps = [min(at, self.stamps[0]), max(at, self.stamps[1])] if self.stamps else [at, at]
                if message.role == "assistant":
                    self.answer = message
                yield message

    def _messages(self, role: str, model: Any, created: Any, parts: list[Any]) -> list[agents.Message]:
        """A record's message and the tool results its parts hold."""
        timestamp = agents.iso_utc(created)
        named = agents.text_or_none(model) if role == "assistant" else None
        if named and named not in self.models:
            self.models.append(named)
        texts: list[str] = []
        thinking: list[str] = []
        calls: list[agents.ToolCall] = []
        outputs: list[str] = []
        attached: list[agents.Attachment] = []
        for part in parts:
            kind = part.get("type") if isinstance(part, dict) else None
            data = part.get("data") if isinstance(part, dict) else None
            if not isinstance(data, dict):
                self.skipped["part"] += 1
            elif kind == "text":
                if isinstance(data.get("text"), str) and not data.get("hidden"):
                    texts.append(data["text"].strip())
            elif kind == "reasoning":
                if isinstance(data.get("thinking"), str):
                    thinking.append(data["thinking"].strip())
            elif kind == "tool_call":
                calls.append(_call(data, self.sessions))
            elif kind == "tool_result":
                content = data.get("content")
                if isinstance(content, str) and content.strip():
                    outputs.append(content.strip())
            elif kind in ("image_url", "binary"):
                found = (
                    agents.url_attachment(data.get("url"))
                    if kind == "image_url"
                    else agents.attachment(data.get("MIMEType"), data.get("Path"), data=data.get("Data"))
                )
                attached.append(found)
                texts.append(found.placeholder())
            elif kind != "finish":
                self.skipped["part"] += 1
        made = []
        if role != "tool" or texts or calls:
            text = "\n\n".join(text for text in texts if text)
            reasoned = "\n\n".join(text for text in thinking if text)
            made.append(agents.Message(role, text, timestamp, named, calls, thinking=reasoned, attachments=attached))
        made.extend(agents.Message("tool", "", timestamp, tool_output=output) for output in outputs)
        return made

    def finish(self, session: agents.Session, fields: _Fields, first_request: str) -> None:
        """``session``'s title, times and usage (on its last answer), and what was skipped, once
        its records are read."""
        session.problems.extend(
            f"{count} {what}(s) of no known shape skipped" for what, count in self.skipped.items() if count
        )
        if self.answer is not None:
            self.answer.usage = agents.usage(input=fields.usage[0], output=fields.usage[1], cost=fields.usage[2])
        stamps = sorted(stamp for stamp in [*self.stamps, *(agents.iso_utc(time) for time in fields.times)] if stamp)
        named = agents.text_or_none(fields.title)
        session.title = agents.short_title(first_request if named is None or named in DEFAULT_TITLES else named)
        session.started, session.last = (stamps[0], stamps[-1]) if stamps else (None, None)


def _call(data: dict[str, Any], sessions: set[str]) -> agents.ToolCall:
    """A ``tool_call`` part: its name, the files and command of its input (a JSON text), and the
    session it started where one has its id (Crush's and OpenCode's ``agent`` tool)."""
    given = parsed_arguments(data.get("input"))
    arguments = given if isinstance(given, dict) else {}
    command = arguments.get("command")
    identity = data.get("id")
    call = agents.ToolCall(
        name=agents.text_or_none(data.get("name")) or "tool",
        files=agents.named_files(arguments, FILE_KEYS),
        commands=[command.strip()] if isinstance(command, str) and command.strip() else [],
        agent=identity if isinstance(identity, str) and identity in sessions else None,
    )
    return with_input(call, given)
