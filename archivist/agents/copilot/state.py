"""Copilot Chat's oldest sessions: those VS Code kept in a window's ``state.vscdb`` before it wrote each
to a file of ``chatSessions`` (see ``copilot``).

VS Code's chat service stored every session of a workspace as one JSON array under the key
``interactive.sessions`` of the ``ItemTable`` of that workspace's ``state.vscdb``
(microsoft/vscode ``contrib/chat/common/chatServiceImpl.ts``: ``serializedChatKey``; the global
``globalStorage/state.vscdb`` is read too, where an empty window's may be), and from early 2025 moved them to ``chatSessions`` files
(``chatSessionStore.ts``: ``migrateDataIfNeeded``), leaving the key behind. The databases are
opened read-only (``archivist.agents.databases``) and never written; one that is no regular file
(a pipe) is told and never opened, one left with a write unfinished is read as before it and told.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from archivist.agents import (
    MAX_FILE_BYTES,
    NotJSON,
    Root,
    Session,
    Unavailable,
    Unread,
    databases,
    is_dir,
    is_file,
    json_value,
    size_text,
    text_or_none,
)
from archivist.agents.copilot.requests import chat_session, workspace_folder

STATE = "state.vscdb"
KEY = "interactive.sessions"
TABLE = "ItemTable"
GLOBAL = "globalStorage"


def state_databases(root: Root) -> list[Path]:
    """The state databases of a source (VS Code's ``User`` folder, its ``workspaceStorage``, one
    workspace's folder, ``globalStorage``), each once, in name order: the workspaces', then the global one."""
    path = root.path
    found = [path / STATE]
    for holder in (path, path / "workspaceStorage"):
        if is_dir(holder) and root.allows(holder):
            found += [folder / STATE for folder in root.folders(holder) if folder.name != GLOBAL]
    found.append(path / GLOBAL / STATE)
    return [file for file in dict.fromkeys(found) if _there(file) and _allowed(root, file)]


def holds_sessions(database: Path) -> str | None:
    """Why ``database`` holds none of Copilot Chat's older sessions (a sentence to end with what was
    expected), or None when it does; Unavailable while another program holds it locked."""
    found = databases.tables_of(database)
    if isinstance(found, str):
        return found
    if TABLE not in found:
        return f"{database} has no {TABLE}: it is not a VS Code state database"
    try:
        with closing(databases.connect(database)) as connection:
            row = connection.execute(f"SELECT 1 FROM {TABLE} WHERE key = ?", [KEY]).fetchone()
    except sqlite3.Error as error:
        if databases.locked(error):
            raise databases.unavailable(database, error) from None
        return f"{database} cannot be read ({error})"
    return None if row else f"{database} holds no {KEY} (the chat sessions VS Code kept there before 2025)"


def has_sessions(database: Path) -> bool:
    """Whether ``database`` holds Copilot Chat's older sessions (a locked one may: True)."""
    try:
        return holds_sessions(database) is None
    except Unavailable:
        return True


def state_sessions(database: Path, root: Root, seen: set[str]) -> Iterator[Session]:
    """The sessions ``database`` keeps under ``interactive.sessions``, but those ``seen`` (a session whose
    file was read: the file is the newer copy). A locked database is Unavailable, a damaged one Unread."""
    shown = _shown(database)
    irregular = databases.irregular(database, shown)
    if irregular is not None:
        root.problems.append(irregular)
        return
    value = _value(database, shown, root)
    if value is None:
        return
    try:
        data = json_value(value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value))
    except NotJSON as error:
        root.problems.append(Unread(f"{shown}: {KEY} not read ({error})"))
        return
    if not isinstance(data, list):
        root.problems.append(f"{shown}: {KEY} is not a list of sessions: not read")
        return
    workspace = database.parent
    project = workspace_folder(workspace, root)
    skipped = 0
    keys: set[str] = set()
    for index, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("requests"), list):
            skipped += 1
            continue
        session_id = text_or_none(item.get("sessionId"))
        if session_id in seen:
            continue
        name = session_id or f"{KEY}#{index}"
        key = name if workspace.name == GLOBAL else f"{workspace.name}/{name}"
        key = f"{key}#{index}" if key in keys else key  # a session id the list holds twice
        keys.add(key)
        session = chat_session(item, key, project, [database], [])
        if session is not None:
            yield session
    if skipped:
        root.problems.append(f"{shown}: {skipped} of {KEY} skipped: not a chat session")


def _value(database: Path, shown: str, root: Root) -> Any:
    """The value of ``interactive.sessions`` (None: not there, or not read: told)."""
    with databases.reading(database, root.problems, shown):
        with closing(databases.connect(database, root.problems, shown=shown)) as connection:
            if TABLE not in databases.tables(connection):
                root.problems.append(f"{shown}: no {TABLE}: not a VS Code state database")
                return None
            row = connection.execute(f"SELECT length(value) FROM {TABLE} WHERE key = ?", [KEY]).fetchone()
            if row is None:
                return None
            if isinstance(row[0], int) and row[0] > MAX_FILE_BYTES:
                root.left_out(f"{shown}: {KEY} not read: more than {size_text(MAX_FILE_BYTES)}")
                return None
            found = connection.execute(f"SELECT value FROM {TABLE} WHERE key = ?", [KEY]).fetchone()
            return found[0] if found else None
    return None


def _there(file: Path) -> bool:
    """Whether a state database is there: a regular file, or something else of its name (a pipe),
    which a reading tells and never opens."""
    return is_file(file) or (file.exists() and not is_dir(file))


def _allowed(root: Root, file: Path) -> bool:
    return file == root.path or (root.allows(file.parent) and root.allows(file))


def _shown(database: Path) -> str:
    """A database as its problems name it: with its workspace's folder (every one is ``state.vscdb``)."""
    return f"{database.parent.name}/{database.name}"
