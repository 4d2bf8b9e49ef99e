"""Agent-log sources an archive remembers: which there are, and whether a path is one.

A source is a kind and an absolute path (``--source KIND=PATH``), remembered in the
``log_sources`` table so that every later ``archivist index`` reads it again
(``sessions`` reads them). The kinds, their readers and their default locations are
those the registry holds (``archivist.agents.registry``): nothing here names a kind.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from types import ModuleType
from typing import Any

from archivist.agents import Unavailable, registry, unreadable
from archivist.agents.hookspecs import NAME
from archivist.archive.database import Database
from archivist.errors import ArchivistError
from archivist.workspace import malformed

SOURCE_KEYS_SQL = "SELECT key, id FROM documents WHERE source = :source"
DELETE_DOCUMENT_SQL = "DELETE FROM documents WHERE id = :id"
DELETE_MESSAGES_SQL = "DELETE FROM messages WHERE document_id = :id"
LISTING_SQL = """
SELECT s.kind, s.path, s.added_at, s.read_at,
       (SELECT count(*) FROM documents d WHERE d.source = 'log:' || s.id) AS documents,
       (SELECT count(*) FROM messages m JOIN documents d ON d.id = m.document_id
        WHERE d.source = 'log:' || s.id) AS messages
FROM log_sources s ORDER BY s.id
"""


def module(kind: str) -> ModuleType:
    """The module that reads ``kind`` (``registry.UnknownKind`` where no plugin registers it)."""
    return registry.reader(kind)


def invalid_source(problem: str, why: str, hint: str = "") -> ArchivistError:
    return ArchivistError("INVALID_SOURCE", problem, why, hint)


def parse_argument(value: str, registered: bool = True) -> tuple[str, Path]:
    """``KIND=PATH`` as given on the command line: the kind, and the path made absolute.

    ``registered=False`` takes a kind that no plugin registers now too (a source to forget
    whose package was uninstalled since).
    """
    kind, sep, path = value.partition("=")
    kind = kind.strip()
    known = registry.names()
    if not sep or not path.strip():
        raise invalid_source(
            f"Invalid source {value!r}",
            "A source is KIND=PATH, e.g. claude-code=~/.claude/projects.",
            "Known kinds: " + ", ".join(known) + ".",
        )
    if kind not in known and (store := unreadable.stores().get(kind)) is not None:
        raise invalid_source(f"{store.description} cannot be read", store.why[:1].upper() + store.why[1:])
    if kind not in known and (registered or not NAME.match(kind)):
        raise invalid_source(
            f"Unknown source kind {kind!r}",
            "Known kinds: " + ", ".join(known) + ".",
            "Give one of them before the '=', e.g. codex=~/.codex/sessions.",
        )
    path = path.strip()
    if why := malformed(path):
        shown = path.replace("\x00", "\\x00")
        raise invalid_source(f"Invalid {kind} path {shown[:120]!r}", why, "Give the path of the logs on this machine.")
    return kind, Path(os.path.abspath(os.path.expanduser(path)))


def check(kind: str, path: Path) -> None:
    """INVALID_SOURCE, saying what was expected, unless ``path`` is a source of ``kind``."""
    try:
        problem = module(kind).check(path)
    except OSError as error:  # a folder this user may not read, a name the system refuses
        problem = f"It cannot be read: {error.strerror or error}."
    except Unavailable as error:
        raise invalid_source(
            f"Cannot read the {kind} source now: {path}",
            f"{error}.",
            "Try again once the program that holds it has finished writing.",
        ) from None
    if problem:
        raise invalid_source(f"Not a {kind} source: {path}", problem, "Check the path and the kind.")


def default_locations(
    environ: dict[str, str] | None = None, home: Path | None = None, system: str | None = None
) -> list[tuple[str, Path]]:
    """Where each kind keeps its logs by default on this machine (not all need exist).

    ``system``: ``linux``, ``macos`` or ``windows`` (by default, the one this runs on).
    """
    return registry.default_locations(os.environ if environ is None else environ, home or Path.home(), system)


def discover(environ: dict[str, str] | None = None, home: Path | None = None) -> list[tuple[str, Path]]:
    """The default locations that exist and hold a source of their kind (one that another program
    holds locked now is one: it is read once it is free)."""
    return [(kind, path) for kind, path in default_locations(environ, home) if path.exists() and _holds(kind, path)]


def unreadable_found(environ: dict[str, str] | None = None, home: Path | None = None) -> list[str]:
    """The sentence of each store that cannot be read (``agents.unreadable``) found in its default location."""
    there = unreadable.found(os.environ if environ is None else environ, home or Path.home(), registry.this_system())
    return [store.sentence(path) for store, path in there]


def _holds(kind: str, path: Path) -> bool:
    try:
        return not module(kind).check(path)
    except Unavailable:
        return True
    except OSError:
        return False


def log_files(kind: str, path: Path) -> list[Path]:
    """The files and folders of a source that hold its logs (its reader's ``log_files``, else the source itself)."""
    files = getattr(module(kind), "log_files", None)
    return list(files(path)) if files is not None else [path]


def add(db: Database, kind: str, path: Path) -> bool:
    """Remember a source (already checked); whether it was new."""
    existing = db.execute("SELECT 1 FROM log_sources WHERE kind = ? AND path = ?", [kind, str(path)]).fetchone()
    if existing:
        return False
    db.insert("log_sources", [{"kind": kind, "path": str(path), "added_at": now()}])
    return True


def remove(db: Database, kind: str, path: Path) -> int:
    """Forget a source and its documents; how many documents went. INVALID_SOURCE if it is not remembered."""
    row = db.execute("SELECT id FROM log_sources WHERE kind = ? AND path = ?", [kind, str(path)]).fetchone()
    if row is None:
        raise invalid_source(
            f"No {kind} source at {path} in this archive",
            "Only remembered sources can be removed.",
            "List them with: archivist sources WORKSPACE",
        )
    removed = delete_documents(db, f"log:{row[0]}", keep=set())
    db.execute("DELETE FROM log_sources WHERE id = ?", [row[0]])
    return removed


def paths(db: Database) -> list[Path]:
    """Where the remembered sources are (an archive from before sources: none)."""
    if not db.exists("log_sources"):
        return []
    return [Path(row[0]) for row in db.execute("SELECT path FROM log_sources ORDER BY id")]


def listing(db: Database) -> list[dict[str, Any]]:
    return [
        dict(zip(("kind", "path", "added_at", "read_at", "documents", "messages"), row))
        for row in db.execute(LISTING_SQL)
    ]


def delete_documents(db: Database, source: str, keep: set[str], existing: dict[str, int] | None = None) -> int:
    """Delete the documents of ``source`` (``log:<id>``) whose keys are not in ``keep``, and their messages; how many."""
    if existing is None:
        existing = dict(db.execute(SOURCE_KEYS_SQL, {"source": source}).fetchall())
    gone = [id_ for key, id_ in existing.items() if key not in keep]
    for id_ in gone:
        db.execute(DELETE_MESSAGES_SQL, {"id": id_})
        db.execute(DELETE_DOCUMENT_SQL, {"id": id_})
    return len(gone)


def now() -> str:
    """This moment in UTC, to the second, as the archive stores times."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
