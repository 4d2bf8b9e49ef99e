"""Crush's sessions, read in place: a project's ``.crush/crush.db``.

Crush (charmbracelet/crush) keeps each project's sessions in a database in that project's
``.crush`` folder (its ``data_directory``), in the tables it took over from the Go OpenCode:
``archivist.agents.crush.store`` reads them, and says where their shape comes from. The older Go
OpenCode's ``.opencode/opencode.db`` is of the same shape and is read by the kind ``opencode``
(``archivist.agents.opencode``), beside the newer OpenCode's database: a user gives OpenCode's
folder as an ``opencode`` source whichever OpenCode wrote it, so one kind there is clearer than a
third kind for an archived program, and its reading here is shared, not repeated.

The source is a project (the folder holding ``.crush``), its ``.crush`` folder, or the database.
Crush keeps no database in a fixed place (each project has its own), so the kind names no default
location: ``sources --discover`` finds none, and each project is given as a source.

The database is opened read-only (``archivist.agents.databases``): one locked past a brief wait is
``Unavailable``; one that is no regular file (a pipe is never opened), is no SQLite database, is
damaged or has no ``sessions`` and ``messages`` tables is ``Unread``, a problem of the reading
(an empty file holds nothing). Nothing is ever written.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

from archivist.agents import Root, Session, Unread, databases, is_file, no_source
from archivist.agents.crush import store as crush_store

KIND = "crush"
DATABASE = "crush.db"
FOLDER = ".crush"
EXPECTED = "a project holding .crush/crush.db, its .crush folder, or that crush.db"


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of Crush's sessions (a sentence), or None."""
    path = Path(path).expanduser()
    if (reason := no_source(path, EXPECTED)) is not None:
        return reason
    database = _database(Root(path))
    if database is None:
        return f"{path} holds neither {DATABASE} nor {FOLDER}/{DATABASE}: expected {EXPECTED}."
    found = databases.tables_of(database)
    if isinstance(found, str):
        # (a folder's damaged database is told when it is read; a file given is refused)
        return None if database != path else f"{found}: expected {EXPECTED}."
    if not crush_store.is_store(found):
        return f"{database} has no sessions and messages tables: expected {EXPECTED}."
    return None


def log_files(path: Path) -> list[Path]:
    """What of a source holds its logs: the database, and its write-ahead log, where changes wait."""
    database = _database(Root(path)) or Path(path) / FOLDER / DATABASE
    return [database, database.with_name(database.name + "-wal")]


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Every session of the database, in the order they began."""
    problems = problems if problems is not None else []
    root = Root(Path(path).expanduser(), problems)
    database = _database(root)
    if database is None:
        return
    irregular = databases.irregular(database)
    if irregular is not None:
        problems.append(irregular)
        return
    if _size(database) == 0:
        return  # (an empty file holds nothing)
    with databases.reading(database, problems):
        with closing(databases.connect(database, problems)) as connection:
            if not crush_store.is_store(databases.tables(connection)):
                problems.append(Unread(f"{database.name}: no sessions and messages tables: not read"))
                return
            yield from crush_store.sessions(connection, database, KIND)


def _database(root: Root) -> Path | None:
    """The database of a source: the file named, else ``crush.db`` in the folder or in its ``.crush``
    folder (None where there is none, or where a link leads out of the source to it)."""
    if root.named is not None:
        return root.path if os.path.lexists(root.path) else None
    for folder in (root.path, root.path / FOLDER):
        candidate = folder / DATABASE
        if os.path.lexists(candidate) and all(root.allows(step) for step in (folder, candidate) if step != root.path):
            return candidate
    return None


def _size(file: Path) -> int | None:
    try:
        return file.stat().st_size if is_file(file) else None
    except OSError:
        return None
