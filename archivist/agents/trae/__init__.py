"""Trae's agent and chat sessions, read in place from the editor's state databases.

Trae (ByteDance's fork of VS Code; its builds Trae, Trae CN and TRAE SOLO CN) keeps its state as
VS Code does: SQLite files named ``state.vscdb`` whose ``ItemTable (key, value)`` holds JSON
values, one under ``globalStorage`` and one per window under ``workspaceStorage/<id>``, whose
``workspace.json`` names the folder the window was opened on. Trae's code is not public: the
shape read here is the one kenn-io/agentsview reads (``internal/parser/trae_provider.go`` and
``trae_provider_test.go``). The key ``memento/icube-ai-agent-storage`` holds
``{"list": [...], "currentSessionId": ...}``; each entry of ``list`` is one session:
``sessionId``, ``createdAt`` and ``updatedAt`` (Unix ms, or ISO text), ``model``, and
``messages``, each with ``role`` (user or assistant), ``content``, ``timestamp``, ``model``
and ``turnIndex``; an agent's answer whose ``content`` is empty keeps its text in
``agentTaskContent``: a string, or an object whose ``content``, ``text`` or ``proposal`` is
it, else whose ``guideline.planItems`` hold it (each item's ``content``, a line apart).

The source is Trae's ``User`` folder, its ``globalStorage`` or ``workspaceStorage`` folder, one
workspace's folder, or one ``state.vscdb`` (found as ``archivist.agents.cursor.places`` finds
Cursor's). A session is keyed by its ``sessionId``; one listed by two databases is read from
the first (the shared one, then the workspaces in order), and has that workspace's project.
Its title is its ``title`` where it has one, else its first request. The log records no tool
calls apart from an answer's text, and no tokens or cost.

Skipped, and why: a message of another role, or with no text (told, counted); an entry of the
list that is no session (no ``sessionId``: told, counted); a value over ``MAX_VALUE_BYTES`` or
not JSON (told as Unread). The other keys of ItemTable are settings, sign-in state and the
input box's history, not conversations. Newer versions keep their sessions in
``ModularData/ai-agent/database.db`` beside the ``User`` folder, a file that is not an SQLite
database (encrypted, as agentsview's ``trae_layout.go`` finds it): it is never read, and
``archivist.agents.unreadable`` lists it. A database locked past a brief wait is
``Unavailable``; a damaged one, or one that is no regular file, is ``Unread``, and the
source's other databases are read. Nothing is ever written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist.agents import (
    Message,
    NotJSON,
    Root,
    Session,
    Unread,
    databases,
    is_file,
    iso_utc,
    json_value,
    no_source,
    relative_path,
    short_title,
    size_text,
    skipped_problems,
    text_or_none,
)
from archivist.agents.cursor.places import DATABASE, WORKSPACE_FILE, Workspace, global_databases, workspaces

KIND = "trae"
EXPECTED = (
    "Trae's User folder (~/.config/Trae/User, ~/Library/Application Support/Trae/User or "
    "~/AppData/Roaming/Trae/User, or those of Trae CN), its globalStorage or workspaceStorage folder, "
    "one workspace's folder, or one state.vscdb"
)
ITEMS = "ItemTable"
STORAGE = "memento/icube-ai-agent-storage"
MAX_VALUE_BYTES = databases.MAX_VALUE_BYTES  # the sessions' list, read whole
ANSWER_KEYS = ("content", "text", "proposal")  # where an agent's answer keeps its text in agentTaskContent


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of Trae's sessions (a sentence), or None."""
    path = Path(path).expanduser()
    if (reason := no_source(path, EXPECTED)) is not None:
        return reason
    if path.is_file():
        found = databases.tables_of(path)
        if isinstance(found, str):
            return f"{found}: expected {EXPECTED}."
        if ITEMS not in found:
            return f"{path} has no ItemTable table: expected {EXPECTED}."
        return None
    root = Root(path)
    windows = workspaces(root)
    if global_databases(root, windows) or any(window.database for window in windows):
        return None
    return f"{path} holds no {DATABASE} (globalStorage/{DATABASE}, workspaceStorage/*/{DATABASE}): expected {EXPECTED}."


def log_files(path: Path) -> list[Path]:
    """The files that hold a source's sessions: its databases (with their ``-wal``) and the
    workspaces' ``workspace.json``."""
    root = Root(Path(path).expanduser())
    windows = workspaces(root)
    found: list[Path] = []
    for database in global_databases(root, windows) + [w.database for w in windows if w.database]:
        found.append(database)
        wal = database.with_name(database.name + "-wal")
        found += [wal] if is_file(wal) and root.allows(wal) else []
    found += [w.folder / WORKSPACE_FILE for w in windows if w.project is not None]
    return found or [root.path]


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Every session: those of the shared database, then each workspace's, each database's by id."""
    problems = problems if problems is not None else []
    root = Root(Path(path).expanduser(), problems)
    if root.named is not None and not is_file(root.path):  # (a pipe would never end)
        root.problems.append(Unread(f"{root.path.name} is not a regular file: not read"))
        return
    windows = workspaces(root)
    places: list[tuple[Path, Workspace | None]] = [(database, None) for database in global_databases(root, windows)]
    places += [(window.database, window) for window in windows if window.database]
    state = _State(root)
    for database, window in places:
        yield from _sessions(database, window, state)
    for problem in skipped_problems(state.unread, "listed session"):
        root.problems.append(Unread(problem))


@dataclass
class _State:
    """What a reading has found so far."""

    root: Root
    seen: set[str] = field(default_factory=set)
    unread: dict[str, int] = field(default_factory=dict)  # entries of a list that are no session, by reason

    def shown(self, file: Path) -> str:
        return file.name if self.root.named is not None else relative_path(file, self.root.path)


def _sessions(database: Path, window: Workspace | None, state: _State) -> Iterator[Session]:
    """The sessions of one database's list, by id."""
    shown = state.shown(database)
    told = databases.irregular(database, shown)
    if told is not None:
        state.root.problems.append(told)
        return
    try:
        with closing(databases.connect(database, state.root.problems, shown=shown)) as connection:
            stored = _stored(connection)
    except (sqlite3.Error, OSError) as error:
        if isinstance(error, sqlite3.Error) and databases.locked(error):
            raise databases.unavailable(database, error) from None
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        state.root.problems.append(Unread(f"{shown} cannot be read ({reason})"))
        return
    if stored is None:
        return
    if isinstance(stored, Unread):
        state.root.problems.append(Unread(f"{shown}: its sessions' list not read ({stored})"))
        return
    listed = stored.get("list") if isinstance(stored, dict) else None
    entries = []
    for entry in listed if isinstance(listed, list) else []:
        session_id = text_or_none(entry.get("sessionId")) if isinstance(entry, dict) else None
        if session_id is None:
            state.unread["no sessionId"] = state.unread.get("no sessionId", 0) + 1
        else:
            entries.append((session_id, entry))
    for session_id, entry in sorted(entries, key=lambda pair: pair[0]):
        if session_id in state.seen:
            continue
        state.seen.add(session_id)
        session = _session(session_id, entry, window.project if window else None, database)
        if session is not None:
            yield session


def _stored(connection: sqlite3.Connection) -> Any:
    """The JSON value of the sessions' key; None where there is none; ``Unread`` (why) where it is
    too large or no JSON. A blob's size is known without reading it."""
    if ITEMS not in databases.tables(connection):
        return None
    row = connection.execute(
        f"SELECT CASE WHEN {databases.byte_size('value')} <= ? THEN value END, typeof(value) FROM {ITEMS} WHERE key = ?",
        [MAX_VALUE_BYTES, STORAGE],
    ).fetchone()
    if row is None or row[1] == "null":
        return None
    value = row[0]
    if value is None:
        return Unread(f"value over {size_text(MAX_VALUE_BYTES)}")
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        return Unread("not JSON text")
    try:
        return json_value(value)
    except NotJSON as error:
        return Unread(str(error))


def _session(session_id: str, entry: dict[str, Any], project: str | None, database: Path) -> Session | None:
    """One entry of the list as a session; None where no message holds text."""
    default_model = text_or_none(entry.get("model"))
    started = iso_utc(entry.get("createdAt")) or iso_utc(entry.get("updatedAt"))
    messages: list[Message] = []
    models: list[str] = []
    skipped: dict[str, int] = {}
    listed = entry.get("messages")
    for item in listed if isinstance(listed, list) else []:
        message = _message(item, default_model, skipped)
        if message is None:
            continue
        if message.model and message.model not in models:
            models.append(message.model)
        messages.append(message)
    if not messages:
        return None
    if default_model and default_model not in models:
        models.insert(0, default_model)
    times = sorted(time for time in [started, iso_utc(entry.get("updatedAt"))] if time)
    times += sorted(message.timestamp for message in messages if message.timestamp)
    times.sort()
    title = text_or_none(entry.get("title"))
    if title is None:
        asked = [message.text for message in messages if message.role == "user"]
        title = (asked or [messages[0].text])[0]
    return Session(
        key=session_id,
        agent=KIND,
        title=short_title(title),
        messages=messages,
        project=project,
        models=models,
        started=times[0] if times else None,
        last=times[-1] if times else None,
        files=[database],
        problems=skipped_problems(skipped, "message"),
    )


def _message(item: Any, default_model: str | None, skipped: dict[str, int]) -> Message | None:
    """One message of a session; None (counted in ``skipped``) where it is of no known role or holds no text."""
    if not isinstance(item, dict):
        skipped["not an object"] = skipped.get("not an object", 0) + 1
        return None
    role = text_or_none(item.get("role"))
    role = role.lower() if role else None
    if role not in ("user", "assistant"):
        skipped[f"role {role or 'missing'}"] = skipped.get(f"role {role or 'missing'}", 0) + 1
        return None
    content = item.get("content")
    text = content if isinstance(content, str) else ""
    if not text.strip() and role == "assistant":
        text = _answer(item.get("agentTaskContent"))
    if not text.strip():
        skipped["no text"] = skipped.get("no text", 0) + 1
        return None
    model = text_or_none(item.get("model")) or default_model if role == "assistant" else None
    return Message(role=str(role), text=text, timestamp=iso_utc(item.get("timestamp")), model=model)


def _answer(task: Any) -> str:
    """The text an agent's answer keeps in ``agentTaskContent``: the text itself, its ``content``,
    ``text`` or ``proposal``, else its plan's items."""
    if isinstance(task, str):
        return task
    if not isinstance(task, dict):
        return ""
    for key in ANSWER_KEYS:
        value = task.get(key)
        if isinstance(value, str) and value.strip():
            return value
    guideline = task.get("guideline")
    items = guideline.get("planItems") if isinstance(guideline, dict) else None
    texts = [item.get("content") for item in items if isinstance(item, dict)] if isinstance(items, list) else []
    return "\n".join(text for text in texts if isinstance(text, str) and text)
