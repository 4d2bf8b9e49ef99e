"""Agent-log sources in the archive: which are remembered, and their sessions as conversations.

A source is a kind and an absolute path (``--source KIND=PATH``), remembered in the
``log_sources`` table so that every later ``archivist index`` reads it again. A source
is read whole when any of its files changed (size or modification time), and not at
all otherwise. Each session becomes one ``conversation`` document whose type is its
agent (the kind), whose body is its user and assistant messages (thinking and raw tool
output stay out of the search), and whose messages are rows of ``messages``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import sqlite_utils

from archivist.build import dates, ingest, schema, secrets
from archivist.build.agentlogs import Session
from archivist.errors import ArchivistError
from archivist.workspace import malformed

# Each kind's module in this package.
MODULES = {
    "claude-code": "claude_code",
    "codex": "codex",
    "gemini-cli": "gemini_cli",
    "claude-export": "claude_export",
    "chatgpt-export": "chatgpt_export",
    "aider": "aider",
    "specstory": "specstory",
    "llm": "llm_logs",
}
KINDS = tuple(MODULES)

SOURCES_SQL = "SELECT id, kind, path, fingerprint FROM log_sources ORDER BY id"
SOURCE_KEYS_SQL = "SELECT key, id FROM documents WHERE source = :source"
SOURCE_HASHES_SQL = "SELECT key, id, content_hash FROM documents WHERE source = :source"
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
    return importlib.import_module(f"archivist.build.agentlogs.{MODULES[kind]}")


def invalid_source(problem: str, why: str, hint: str = "") -> ArchivistError:
    return ArchivistError("INVALID_SOURCE", problem, why, hint)


def parse_argument(value: str) -> tuple[str, Path]:
    """``KIND=PATH`` as given on the command line: the kind, and the path made absolute."""
    kind, sep, path = value.partition("=")
    kind = kind.strip()
    if not sep or not path.strip():
        raise invalid_source(
            f"Invalid source {value!r}",
            "A source is KIND=PATH, e.g. claude-code=~/.claude/projects.",
            "Known kinds: " + ", ".join(KINDS) + ".",
        )
    if kind not in MODULES:
        raise invalid_source(
            f"Unknown source kind {kind!r}",
            "Known kinds: " + ", ".join(KINDS) + ".",
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
    if problem:
        raise invalid_source(f"Not a {kind} source: {path}", problem, "Check the path and the kind.")


def default_locations(environ: dict[str, str] | None = None, home: Path | None = None) -> list[tuple[str, Path]]:
    """Where each kind keeps its logs by default on this machine (not all need exist)."""
    environ = dict(os.environ if environ is None else environ)
    home = home or Path.home()
    claude = [Path(part).expanduser() for part in environ.get("CLAUDE_CONFIG_DIR", "").split(",") if part.strip()]
    codex = Path(environ["CODEX_HOME"]).expanduser() if environ.get("CODEX_HOME") else home / ".codex"
    llm_dir = Path(environ["LLM_USER_PATH"]).expanduser() if environ.get("LLM_USER_PATH") else None
    llm_dirs = (
        [llm_dir]
        if llm_dir
        else [home / ".config" / "io.datasette.llm", home / "Library/Application Support/io.datasette.llm"]
    )
    return [
        *(
            ("claude-code", folder / "projects")
            for folder in (claude or [home / ".claude", home / ".config" / "claude"])
        ),
        ("codex", codex / "sessions"),
        ("gemini-cli", home / ".gemini" / "tmp"),
        *(("llm", folder / "logs.db") for folder in llm_dirs),
    ]


def discover(environ: dict[str, str] | None = None, home: Path | None = None) -> list[tuple[str, Path]]:
    """The default locations that exist and hold a source of their kind."""
    return [
        (kind, path)
        for kind, path in default_locations(environ, home)
        if path.exists() and not module(kind).check(path)
    ]


def add(db: sqlite_utils.Database, kind: str, path: Path) -> bool:
    """Remember a source (already checked); whether it was new."""
    existing = db.execute("SELECT 1 FROM log_sources WHERE kind = ? AND path = ?", [kind, str(path)]).fetchone()
    if existing:
        return False
    db.table("log_sources").insert({"kind": kind, "path": str(path), "added_at": _now()})
    return True


def remove(db: sqlite_utils.Database, kind: str, path: Path) -> int:
    """Forget a source and its documents; how many documents went. INVALID_SOURCE if it is not remembered."""
    row = db.execute("SELECT id FROM log_sources WHERE kind = ? AND path = ?", [kind, str(path)]).fetchone()
    if row is None:
        raise invalid_source(
            f"No {kind} source at {path} in this archive",
            "Only remembered sources can be removed.",
            "List them with: archivist sources WORKSPACE",
        )
    removed = _delete_documents(db, f"log:{row[0]}", keep=set())
    db.execute("DELETE FROM log_sources WHERE id = ?", [row[0]])
    return removed


def paths(db: sqlite_utils.Database) -> list[Path]:
    """Where the remembered sources are (an archive from before sources: none)."""
    if not db["log_sources"].exists():
        return []
    return [Path(row[0]) for row in db.execute("SELECT path FROM log_sources ORDER BY id")]


def listing(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    return [
        dict(zip(("kind", "path", "added_at", "read_at", "documents", "messages"), row))
        for row in db.execute(LISTING_SQL)
    ]


def log_files(kind: str, path: Path) -> list[Path]:
    """The files and folders of a source that hold its logs (not a whole repository around them)."""
    if kind == "aider" and path.is_dir():
        return [path / ".aider.chat.history.md"]
    if kind == "specstory" and path.is_dir() and (path / ".specstory").is_dir():
        return [path / ".specstory"]
    if kind == "llm":
        database = path / "logs.db" if path.is_dir() else path
        return [database, database.with_name(database.name + "-wal")]  # changes wait in the log
    return [path]


def fingerprint(kind: str, path: Path) -> str:
    """What changes when any log file of the source changes: every file's path, size and modification time."""
    digest = hashlib.sha256(f"masking rules {secrets.RULES_VERSION}, parser {ingest.PARSER_VERSION}\n".encode())
    for part in log_files(kind, path):
        for file_path, stat in _files(part):
            digest.update(f"{file_path}\x00{stat.st_size}\x00{stat.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _files(path: Path) -> Iterator[tuple[str, os.stat_result]]:
    try:
        if not path.exists():
            return
        if path.is_file():
            yield str(path), path.stat()
            return
        for folder, subfolders, names in os.walk(path):
            subfolders.sort()
            for name in sorted(names):
                full = os.path.join(folder, name)
                try:
                    yield full, os.stat(full)
                except OSError:
                    continue
    except OSError:
        return


def index_sources(db: sqlite_utils.Database) -> tuple[int, int, list[ingest.Problem]]:
    """Read every remembered source that changed: (sources read, sources unchanged, problems)."""
    read = unchanged = 0
    problems: list[ingest.Problem] = []
    for source_id, kind, path, known in db.execute(SOURCES_SQL).fetchall():
        current = fingerprint(kind, Path(path))
        if current == known:
            unchanged += 1
            continue
        problems.extend(_read_source(db, source_id, kind, Path(path)))
        db.execute("UPDATE log_sources SET fingerprint = ?, read_at = ? WHERE id = ?", [current, _now(), source_id])
        read += 1
    return read, unchanged, problems


def _read_source(db: sqlite_utils.Database, source_id: int, kind: str, path: Path) -> list[ingest.Problem]:
    source = f"log:{source_id}"
    problems: list[ingest.Problem] = []
    if not path.exists():
        problems.append(ingest.Problem(f"{kind}:{path}", "skipped", "the source is no longer there"))
        return problems
    known = {key: (id_, content_hash) for key, id_, content_hash in db.execute(SOURCE_HASHES_SQL, {"source": source})}
    existing = {key: id_ for key, (id_, _) in known.items()}
    seen: set[str] = set()
    now = _now()
    read_problems: list[str] = []
    for session in module(kind).read(path, read_problems):
        key, content_hash = f"{source}:{session.key}", session_hash(session)
        seen.add(key)
        if len(session.messages) > schema.MESSAGE_IDS:
            session.problems.append(f"only its first {schema.MESSAGE_IDS} of {len(session.messages)} messages are kept")
        problems.extend(ingest.Problem(f"{session.agent}:{session.key}", "degraded", p) for p in session.problems)
        if key in known and known[key][1] == content_hash:
            continue  # read again, but unchanged: nothing to write
        document, messages = _document(session, source, now, content_hash)
        if document["key"] in existing:
            document["id"] = existing[document["key"]]
            db.table("documents").upsert(document, pk="id")
        else:
            document["id"] = db.table("documents").insert(document).last_pk
        db.execute(DELETE_MESSAGES_SQL, {"id": document["id"]})
        db.table("messages").insert_all(
            {**message, "id": document["id"] * schema.MESSAGE_IDS + message["seq"], "document_id": document["id"]}
            for message in messages
        )
    _delete_documents(db, source, keep=seen, existing=existing)
    problems.extend(ingest.Problem(f"{kind}:{path}", "degraded", problem) for problem in read_problems)
    return problems


def _delete_documents(
    db: sqlite_utils.Database, source: str, keep: set[str], existing: dict[str, int] | None = None
) -> int:
    if existing is None:
        existing = dict(db.execute(SOURCE_KEYS_SQL, {"source": source}).fetchall())
    gone = [id_ for key, id_ in existing.items() if key not in keep]
    for id_ in gone:
        db.execute(DELETE_MESSAGES_SQL, {"id": id_})
        db.execute(DELETE_DOCUMENT_SQL, {"id": id_})
    return len(gone)


def session_hash(session: Session) -> str:
    """A digest of everything stored of a session: one read again unchanged is not written again."""
    digest = hashlib.sha256()

    def add(*values: object) -> None:
        for value in values:
            digest.update(str(value).encode("utf-8", "surrogatepass"))
            digest.update(b"\x00")

    add(
        secrets.RULES_VERSION,
        ingest.PARSER_VERSION,
        session.title,
        session.agent,
        session.project,
        session.models,
        session.branch,
        session.started,
    )
    add(session.last, session.parent, [str(path) for path in session.files])
    for m in session.messages:
        add(m.role, m.timestamp, m.model, m.text, m.thinking, m.tool_output)
        for call in m.tool_calls:
            add(call.name, call.files, call.commands)
    return digest.hexdigest()


def _document(
    session: Session, source: str, now: str, content_hash: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One session as a ``documents`` row and its ``messages`` rows, its secrets masked.

    Secrets (keys, tokens, private keys, passwords: ``build.secrets``) never reach the
    archive, and so never the search index or the model; the document counts them.
    """
    masked = 0

    def safe(text: str) -> str:
        nonlocal masked
        text, found = secrets.mask(text)
        masked += found
        return text

    messages = [
        {
            "seq": seq,
            "role": message.role,
            "timestamp": message.timestamp,
            "model": message.model,
            "text": safe(message.text),
            "thinking": safe(message.thinking),
            "tool_output": safe(message.tool_output),
            "tool_calls": json.dumps(
                [
                    {"name": c.name, "files": c.files, "commands": [safe(x) for x in c.commands]}
                    for c in message.tool_calls
                ],
                ensure_ascii=False,
            ),
        }
        for seq, message in enumerate(session.messages[: schema.MESSAGE_IDS])
    ]
    said = [(m["role"], str(m["text"]).strip()) for m in messages]
    body = "\n\n".join(f"{role}: {text}" for role, text in said if role in ("user", "assistant") and text)
    files = sorted({file for m in session.messages for c in m.tool_calls for file in c.files})
    commands = [command for m in session.messages for c in m.tool_calls for command in c.commands]
    document: dict[str, Any] = {
        "key": f"{source}:{session.key}",
        "kind": "conversation",
        "type": session.agent,
        "title": safe(session.title),
        "path": f"{session.agent}:{session.key}",
        "name": session.key.rsplit("/", 1)[-1],
        "source": source,
        "body": body,
        "tags": [],
        "extra": {
            "agent": session.agent,
            "project": session.project,
            "models": session.models,
            "branch": session.branch,
            "started": session.started,
            "last": session.last,
            "messages": len(messages),
            "parent": session.parent,
            "files": [str(path) for path in session.files],
            "touched_files": files,
            "commands": len(commands),
            "secrets_masked": masked,
        },
    }
    document, messages = ingest.storable(document), [ingest.storable(message) for message in messages]
    date = dates.from_value(session.started) if session.started else None
    document.update(date.columns() if date else dates.NO_DATE_COLUMNS)
    document["filter_tokens"] = ingest.filter_tokens(
        {
            **document,
            "agent": session.agent,
            "project": session.project,
            "models": session.models,
            "files": files,
            "more_days": _more_days(session.started, session.last),
        }
    )
    document["content_hash"] = content_hash
    document["tags"] = json.dumps(document["tags"])
    document["extra"] = json.dumps(document["extra"], ensure_ascii=False)
    document["indexed_at"] = now
    return document, messages


MAX_DAYS = 31  # a session's days beyond its first that a date filter finds it on


def _more_days(started: str | None, last: str | None) -> list[str]:
    """The days after its first that a session ran on (it matches a date filter on any of them)."""
    first, final = dates.from_value(started) if started else None, dates.from_value(last) if last else None
    if first is None or final is None:
        return []
    day, end = first.value.date(), final.value.date()
    days: list[str] = []
    while day < end and len(days) < MAX_DAYS:
        day += dt.timedelta(days=1)
        days.append(day.isoformat())
    return days


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
