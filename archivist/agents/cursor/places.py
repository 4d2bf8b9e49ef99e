"""Where Cursor's state databases are in a source: the shared one, each workspace's, and the
Cursor CLI's chats (which are not read: see ``archivist.agents.cursor``). A database that is
there but no regular file (a pipe) is one of them: its reading tells it, and never opens it.

A source never leaves its folder: every file and folder is listed through its ``Root``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from archivist.agents import Root, databases, is_dir, is_file, json_file, too_large, uri_path

DATABASE = "state.vscdb"
WORKSPACE_FILE = "workspace.json"
CLI_STORE = "store.db"
CLI_TABLES = frozenset({"blobs", "meta"})


@dataclass
class Workspace:
    """One window's folder of ``workspaceStorage``: its database, and the project it was opened on."""

    folder: Path
    database: Path | None
    project: str | None


def workspaces(root: Root) -> list[Workspace]:
    """The workspaces of a source: those of its ``workspaceStorage``, the one it is, or the one
    whose database it is (its ``workspace.json`` beside it)."""
    path = root.path
    if root.named is not None:  # one database: a workspace's where its workspace.json is beside it
        beside = path.parent / WORKSPACE_FILE
        if is_file(beside) and root.allows(beside):
            return [Workspace(path.parent, path, project_of(beside, root))]
        return []
    if there(path / DATABASE) and (is_file(path / WORKSPACE_FILE) or path.parent.name == "workspaceStorage"):
        folders = [path]  # one workspace's folder
    elif path.name == "workspaceStorage":
        folders = root.folders(path)
    elif is_dir(path / "workspaceStorage") and root.allows(path / "workspaceStorage"):
        folders = root.folders(path / "workspaceStorage")
    else:
        folders = []
    found = []
    for folder in folders:
        database = folder / DATABASE
        usable = there(database) and root.allows(database)
        described = folder / WORKSPACE_FILE
        project = project_of(described, root) if is_file(described) and root.allows(described) else None
        found.append(Workspace(folder, database if usable else None, project))
    return found


def project_of(file: Path, root: Root) -> str | None:
    """The folder (or workspace file) a window was opened on, as its ``workspace.json`` names it."""
    if too_large(file, 1024 * 1024):
        return None
    value = json_file(file, root)
    if not isinstance(value, dict):
        return None
    return uri_path(value.get("folder")) or uri_path(value.get("workspace"))


def global_databases(root: Root, windows: list[Workspace]) -> list[Path]:
    """The shared database of a source (``globalStorage/state.vscdb``); a source that is one
    database, unless a workspace's."""
    path = root.path
    if root.named is not None:  # (a regular file: a pipe is never opened)
        return [] if windows or not is_file(path) else [path]
    folder = path if path.name == "globalStorage" else path / "globalStorage"
    database = folder / DATABASE
    if folder != path and not (is_dir(folder) and root.allows(folder)):
        return []
    return [database] if there(database) and root.allows(database) else []


def there(database: Path) -> bool:
    """Whether a database is there: a regular file, or something else of its name (a pipe), which a
    reading tells and never opens."""
    return is_file(database) or (database.exists() and not is_dir(database))


def cli_store(path: Path) -> Path | None:
    """The first chat of the Cursor CLI's folder (``~/.cursor``, its ``chats``, or below), or of
    one chat's ``store.db`` (tables ``blobs`` and ``meta``); None where there is none."""
    if path.is_file():
        if path.name != CLI_STORE or not databases.is_sqlite(path):
            return None
        found = databases.tables_of(path)
        return path if isinstance(found, set) and found >= CLI_TABLES else None
    root = Root(path)
    if is_file(path / CLI_STORE):
        return path / CLI_STORE  # one chat's folder: chats/<project>/<chat>
    if path.parent.name == "chats":  # one project's chats
        agents = root.folders(path)
    else:
        chats = path if path.name == "chats" else path / "chats"
        if not (is_dir(chats) and root.allows(chats)):
            return None
        agents = [agent for project in root.folders(chats) for agent in root.folders(project)]
    return next((agent / CLI_STORE for agent in agents if is_file(agent / CLI_STORE)), None)
