"""Agent-log sources read into the archive: each session of a source as a conversation.

A source (``sources``: a kind and a path, remembered in ``log_sources``) none of whose
files changed (size or modification time) is not read at all; one whose session files
only grew is read on from where each stopped (``log_files``, kinds with ``read_from``);
any other change reads it whole, with the reader its kind's registry entry names.

Each session becomes one ``conversation`` document whose type is its agent (the kind),
whose body is its opening prompt, and whose messages are rows of ``messages``, each
searched on its own in ``message_index`` with its filter words (thinking and raw tool
output stay out of the search).

Secrets are masked (``archivist.secrets``) in every field a session carries text in before
anything of it is stored: its key and title, its project (working directory), branch,
models and log files, each message's text, thinking, tool output, tool names, files
and commands, and its problems; and in the paths of ``log_files``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archivist import documents
from archivist.agents import (
    Root,
    Session,
    Tail,
    Unavailable,
    Unread,
    Usage,
    archives,
    databases,
    registry,
    valid_session,
)
from archivist.agents.claude_code.lines import LOOKED_FILES
from archivist.archive import prices, rollups, schema, session_worker, sources
from archivist.archive.database import Database, sqlite3
from archivist.archive.pace import NEWEST_FIRST, Pace, Progress
from archivist.archive.prepared import LAYOUT as LAYOUT
from archivist.archive.prepared import Prepared, mask_session, new_masker, prepare_parts, session_hash
from archivist.archive.searched import searched_text
from archivist.archive.session_rows import USAGE_COLUMNS, Before, document_rows, stored_usage

# The sources' own functions, named here too for the callers that know them here (the command line).
from archivist.archive.sources import add as add
from archivist.archive.sources import check as check
from archivist.archive.sources import default_locations as default_locations
from archivist.archive.sources import discover as discover
from archivist.archive.sources import listing as listing
from archivist.archive.sources import module as module
from archivist.archive.sources import now as _now
from archivist.archive.sources import parse_argument as parse_argument
from archivist.archive.sources import paths as paths
from archivist.archive.sources import remove as remove
from archivist.archive.sources import unreadable_found as unreadable_found

if TYPE_CHECKING:
    from archivist.secrets import Masker

logger = logging.getLogger(__name__)
SOURCES_SQL = "SELECT id, kind, path, fingerprint, problems FROM log_sources ORDER BY id"
NO_READER = (
    "not read: no installed plugin reads {kind} logs; what the archive holds of the source is kept, "
    "and it is read again once the package that adds the kind is installed"
)
SOURCE_HASHES_SQL = "SELECT key, id, content_hash FROM documents WHERE source = :source"
KEPT = "what the archive holds of it is kept, and it is read again on the next run"
SAME_KEY = "a second session with the key of one read before it from this source: not stored"


def __getattr__(name: str) -> tuple[str, ...]:
    """``KINDS``: the names of the kinds registered now (``archivist.agents.kinds.KINDS``)."""
    if name == "KINDS":
        return registry.names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


HEAD_BYTES = 65536  # a log file's first bytes, and
EDGE_BYTES = 4096  # those before where reading resumes: hashed, so that a rewrite is told from an append
INSERT_MESSAGE_SQL = """
INSERT INTO messages (
    id, document_id, seq, role, timestamp, model, text, thinking, tool_output, tool_calls, secrets,
    input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost, attachments, price, cache_write_1h_tokens
) VALUES (
    :id, :document_id, :seq, :role, :timestamp, :model, :text, :thinking, :tool_output, :tool_calls, :secrets,
    :input_tokens, :output_tokens, :cache_write_tokens, :cache_read_tokens, :cost, :attachments, :price,
    :cache_write_1h_tokens
)
"""
# the usage of a session's messages before seq (those kept when it is read on)
USAGE_BEFORE_SQL = """
SELECT coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0), coalesce(sum(cache_write_tokens), 0),
       coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_1h_tokens), 0), sum(cost), count(input_tokens)
FROM messages WHERE document_id = :id AND seq < :seq
"""
INSERT_MESSAGE_INDEX_SQL = "INSERT INTO message_index (rowid, text, filter_tokens) VALUES (?, ?, ?)"
LOG_FILES_SQL = (
    "SELECT path, size, mtime_ns, document_id, resume_at, resume_seq, head_hash FROM log_files WHERE source_id = ?"
)
# what the messages from seq on held: they are read again (the last response may have grown)
REPLACED_SQL = """
SELECT coalesce(sum(secrets), 0),
       coalesce(sum((SELECT sum(json_array_length(c.value, '$.commands')) FROM json_each(m.tool_calls) c)), 0)
FROM messages m WHERE document_id = :id AND seq >= :seq
"""
DELETE_MESSAGES_FROM_SQL = "DELETE FROM messages WHERE document_id = :id AND seq >= :seq"
STORED_SESSION_SQL = "SELECT key, title, body, extra, content_hash, type FROM documents WHERE id = ?"
# what the rollups and the usage totals take of the messages from seq on (those read again)
HOUR_FIELDS = (
    "timestamp", "model", "input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens", "price", "cost"
)  # fmt: skip
REPLACED_ROWS_SQL = (
    f"SELECT seq, {', '.join(HOUR_FIELDS)}, cache_write_1h_tokens FROM messages WHERE document_id = :id AND seq >= :seq"
)


def fingerprint(kind: str, path: Path, files: list[tuple[str, os.stat_result]] | None = None) -> str:
    """What changes when any log file of the source changes: every file's path, size and modification
    time; and when a setting that bounds the reading changes (a limit raised reads again).
    ``files``: the source's files with their status, where they were just listed."""
    from archivist import secrets  # (its patterns take a while to compile: only where logs are read)

    digest = hashlib.sha256(
        f"masking rules {secrets.RULES_VERSION}, parser {documents.PARSER_VERSION}, layout {LAYOUT}\n".encode()
    )
    for name in archives.SETTINGS:
        digest.update(f"{name}={os.environ.get(name, '')}\n".encode("utf-8", "surrogateescape"))
    for file_path, stat in _source_files(kind, path) if files is None else files:
        digest.update(f"{file_path}\x00{stat.st_size}\x00{stat.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _source_files(kind: str, path: Path) -> Iterator[tuple[str, os.stat_result]]:
    for part in sources.log_files(kind, path):
        yield from _files(part)


def _files(path: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Each file under ``path`` with its status, a folder's files in name order before its
    folders: a link's target's where it stays in the source, else the link's own (what it
    leads to is never read, nor looked at); a link to a folder is not entered."""
    try:
        if not path.exists():
            return
        if path.is_file():
            yield str(path), path.stat()
            return
        yield from _folder_files(str(path), Root(path))
    except OSError:
        return


def _folder_files(folder: str, root: Root) -> Iterator[tuple[str, os.stat_result]]:
    """The files of ``folder`` and of the folders under it, as ``_files`` lists them; nothing of a
    folder that cannot be read."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return
    folders = []
    for entry in entries:
        try:
            if entry.is_dir():
                if not entry.is_symlink():
                    folders.append(entry.path)
                continue
            if not entry.is_symlink():
                yield entry.path, entry.stat(follow_symlinks=False)
            else:
                yield entry.path, os.stat(entry.path) if root.allows(Path(entry.path)) else os.lstat(entry.path)
        except OSError:
            continue
    for subfolder in folders:
        yield from _folder_files(subfolder, root)


def index_sources(
    db: Database, key: bytes | None, progress: Progress | None = None
) -> tuple[int, int, list[documents.Problem]]:
    """Read every remembered source that changed: (sources read, sources unchanged, problems).

    A source whose only changes are lines appended to session files is read on from
    where each stopped; any other change reads it whole, committing what it stored as it
    goes (``pace``), a large one read for the first time its newest sessions first. Each
    source's problems are kept with it, and told again while it is unchanged. ``key``: the
    archive's, that tags the secrets masked (``workspace.secret_key``); ``progress`` hears
    the bytes of each source read whole as they are read. The private copies of agents'
    databases that a run killed before its end left are removed first (``databases``).
    """
    databases.remove_left_copies()
    read = unchanged = 0
    problems: list[documents.Problem] = []
    masker: Masker | None = None
    for source_id, kind, path, known, stored_problems in db.execute(SOURCES_SQL).fetchall():
        kept = [documents.Problem(*problem) for problem in json.loads(stored_problems or "[]")]
        try:
            files = list(_source_files(kind, Path(path)))
            current = fingerprint(kind, Path(path), files)
        except registry.UnknownKind:  # the package that added the kind is gone: nothing of it changes
            problems.extend([*kept, documents.Problem(f"{kind}:{path}", "skipped", NO_READER.format(kind=kind))])
            unchanged += 1
            continue
        except registry.NotAReader as refused:  # a plugin's reader that is not one: its source waits
            problems.extend([*kept, documents.Problem(f"{kind}:{path}", "skipped", f"not read: {refused}; {KEPT}")])
            unchanged += 1
            continue
        if current == known:
            unchanged += 1
            problems.extend(kept)
            continue
        masker = masker or new_masker(key)
        try:
            appended = _read_appends(db, source_id, kind, masker, dict(files))
            # read on: what was read before is not read again, and its problems stand
            found = (
                _read_source(db, source_id, kind, Path(path), masker, progress) if appended is None else kept + appended
            )
        except Unavailable as error:  # nothing of it changes; read again next time
            problems.extend([*kept, documents.Problem(f"{kind}:{path}", "skipped", masker.name(str(error)))])
            read += 1
            continue
        except OSError as error:  # (the source itself cannot be opened: the same)
            reason = f"not read ({error.strerror or error}): {KEPT}"
            problems.extend([*kept, documents.Problem(f"{kind}:{path}", "skipped", masker.name(reason))])
            read += 1
            continue
        except sqlite3.Error:  # the archive's own (a full disk): told by the indexer
            raise
        except Exception as error:  # a reader's fault on what a file holds: the other sources are read
            logger.debug("reading %s:%s failed", kind, masker.name(str(path)), exc_info=True)
            reason = f"not read: its reader failed ({type(error).__name__}: {str(error)[:200]}): {KEPT}"
            problems.extend([*kept, documents.Problem(f"{kind}:{path}", "skipped", masker.name(reason))])
            read += 1
            continue
        found = list({(p.path, p.status, p.reason): p for p in found}.values())
        db.execute(
            "UPDATE log_sources SET fingerprint = ?, read_at = ?, problems = ? WHERE id = ?",
            [current, _now(), json.dumps([[p.path, p.status, p.reason] for p in found], ensure_ascii=False), source_id],
        )
        problems.extend(found)
        read += 1
    if read:
        prices.price_again(db)  # (the messages priced by an earlier version of the price data)
    return read, unchanged, problems


def _read_source(
    db: Database, source_id: int, kind: str, path: Path, masker: Masker, progress: Progress | None = None
) -> list[documents.Problem]:
    """Read a whole source: sessions new or changed are written, those gone are deleted (but
    where the reading was incomplete: a session not read may be in the part not read).
    What is stored is committed as it goes; a large source of which nothing is stored yet
    stores its newest sessions first, where its kind can read them alone (``newest``)."""
    source = f"log:{source_id}"
    host = _host(db, source_id)
    problems: list[documents.Problem] = []
    db.execute("DELETE FROM log_files WHERE source_id = ?", [source_id])
    if not path.exists():
        problems.append(documents.Problem(f"{kind}:{path}", "skipped", "the source is no longer there"))
        return problems
    files = list(_source_files(kind, path))  # as they were before reading: a later change reads again
    pace = Pace(db, f"{kind}: {masker.name(str(path))}", files, progress)
    known = {key: (id_, content_hash) for key, id_, content_hash in db.execute(SOURCE_HASHES_SQL, {"source": source})}
    now = _now()
    # a large source of which nothing is stored: its newest sessions first, read alone (a kind
    # that can: ``newest``), committed before the rest
    first = NEWEST_FIRST if not known and pace.large() and hasattr(sources.module(kind), "newest") else 0
    existing = {key: id_ for key, (id_, _) in known.items()}
    seen: set[str] = set()
    newest: set[str] = set()  # (the whole read stores them again, and tells what they tell)
    tails: dict[str, tuple[int, Tail]] = {}
    read_problems: list[str] = []
    if pace.in_worker():  # read and masked in a worker process
        hashes = {key: hash_ for key, (_, hash_) in known.items()}
        read = session_worker.prepared(kind, path, source, hashes, now, masker.key, read_problems, first, host)
    else:
        read = session_worker.read_here(kind, path, read_problems, first, host)
    for session in read:
        if first:
            if session is None:  # the newest are stored: they are there for a search
                first = 0
                pace.commit()
            else:
                _store_session(db, session, source, known, existing, newest, now, masker, [])
            continue
        assert session is not None
        tail = _store_session(db, session, source, known, existing, seen, now, masker, problems)
        if tail is not None:
            tails[str(tail[1].file)] = tail
        pace.stored(session)
    pace.finished()
    if any(isinstance(problem, Unread) for problem in read_problems):
        read_problems.append("read in part: what the archive holds of the part not read is kept")
    else:
        sources.delete_documents(db, source, keep=seen, existing=existing)
    _remember_files(db, source_id, files, tails, masker)
    problems.extend(documents.Problem(f"{kind}:{path}", "degraded", masker.name(problem)) for problem in read_problems)
    return problems


def _host(db: Database, source_id: int) -> str | None:
    """The machine a source is on (``log_sources.host``): None for this one."""
    row = db.execute("SELECT host FROM log_sources WHERE id = ?", [source_id]).fetchone()
    return row[0] if row else None


def _store_session(
    db: Database,
    session: Session | Prepared,
    source: str,
    known: dict[str, tuple[int, str]],
    existing: dict[str, int],
    seen: set[str],
    now: str,
    masker: Masker,
    problems: list[documents.Problem],
) -> tuple[int, Tail] | None:
    """Store one session read (unless it is stored as it is), or one prepared in a worker process,
    or one part of a session read in parts (``prepared.prepare_parts``); its document and where
    to read on."""
    if isinstance(session, Session):
        found = None
        for ready in prepare_parts(session, source, lambda key: known.get(key, (0, None))[1], now, masker):
            found = _store_session(db, ready, source, known, existing, seen, now, masker, problems)
        return found
    if session.part in ("more", "last"):
        return _store_part(db, session, known, existing, problems)
    if session.key in seen:  # (a reader's fault: a key is one session of the source)
        problems.append(documents.Problem(session.label, "degraded", SAME_KEY))
        return None
    seen.add(session.key)
    problems.extend(documents.Problem(session.label, "degraded", p) for p in session.problems)
    if session.rows is None or known.get(session.key, (0, ""))[1] == session.content_hash:
        document_id = known[session.key][0]  # read again, but unchanged: nothing to write
    else:
        document, messages = session.rows
        if document["key"] in existing:
            document["id"] = existing[document["key"]]
            db.upsert("documents", [document], pk="id")
        else:
            document["id"] = db.insert("documents", [document])
        document_id = existing[document["key"]] = document["id"]
        known[session.key] = (document_id, session.content_hash)
        db.execute(sources.DELETE_MESSAGES_SQL, {"id": document_id})
        _insert_messages(db, document_id, messages, document, whole=True, hours=session.part == "whole")
    return (document_id, session.tail) if session.tail is not None else None


def _store_part(
    db: Database,
    part: Prepared,
    known: dict[str, tuple[int, str]],
    existing: dict[str, int],
    problems: list[documents.Problem],
) -> tuple[int, Tail] | None:
    """Add a part of a session read in parts to the session its first part stored: its messages,
    and its document row as counted so far; its last, the session's hour rollups and problems."""
    assert part.rows is not None
    document, messages = part.rows
    document_id = existing.get(part.key)
    if document_id is None:  # (its first part was not stored)
        return None
    db.update("documents", document_id, {name: value for name, value in document.items() if name != "key"})
    _insert_messages(db, document_id, messages, document, whole=True, hours=False)
    known[part.key] = (document_id, part.content_hash)
    if part.part != "last":
        return None
    rollups.write_hours(db, document_id)
    problems.extend(documents.Problem(part.label, "degraded", p) for p in part.problems)
    return (document_id, part.tail) if part.tail is not None else None


def _remember_files(
    db: Database,
    source_id: int,
    files: list[tuple[str, os.stat_result]],
    tails: dict[str, tuple[int, Tail]],
    masker: Masker,
) -> None:
    """The source's files as they were read, each by its path masked (as ``_read_appends`` looks them up)."""
    rows = []
    for file, stat in files:
        document_id, tail = tails.get(file, (None, None))
        rows.append(
            {
                "source_id": source_id,
                "path": masker.name(file),
                "size": stat.st_size,
                "mtime_ns": stat.st_mtime_ns,
                "document_id": document_id,
                "resume_at": tail.resume_at if tail else None,
                "resume_seq": tail.resume_seq if tail else None,
                "head_hash": _head_hash(Path(file), tail.resume_at, stat.st_size) if tail else None,
            }
        )
    db.insert("log_files", rows, replace=True)


LOOK_AHEAD = LOOKED_FILES  # the session files read on ahead when a watch starts: as many as claude-code keeps looks of


def look_ahead(db: Database, key: bytes | None, files: int = LOOK_AHEAD) -> int:
    """Read on, storing nothing, the ``files`` session files changed last of the sources whose kind
    reads on, each as it was when last read: their readers keep what their earlier lines hold
    (``claude_code.lines``), so the first append read on after a watch starts costs what its own
    lines cost. How many were read; a file that cannot be read is left for its next reading on."""
    masker = new_masker(key)
    found = []
    for source_id, kind, path, _, _ in db.execute(SOURCES_SQL).fetchall():
        try:
            reader = getattr(sources.module(kind), "read_from", None)
            listed = list(_source_files(kind, Path(path))) if reader is not None else []
        except (registry.UnknownKind, registry.NotAReader, OSError):
            continue
        if reader is None:
            continue
        stored = {row[0]: row for row in db.execute(LOG_FILES_SQL, [source_id]).fetchall()}
        for file, stat in listed:
            row = stored.get(_masked_path(masker, file))
            if row is not None and _as_read(row, stat):
                found.append((stat.st_mtime_ns, file, reader, f"log:{source_id}", row))
    found.sort(key=lambda candidate: candidate[0], reverse=True)
    read = 0
    for _, file, reader, source, (_, _, _, document_id, resume_at, _, _) in found[:files]:
        session = db.execute(STORED_SESSION_SQL, [document_id]).fetchone()
        if session is None or Path(file).is_symlink():
            continue
        try:
            extra = json.loads(session[3])
            reader(Path(file), resume_at, session[0][len(source) + 1 :], extra.get("project"), extra.get("models"))
        except Exception:  # (a reader's fault: its next reading on tells it)
            logger.debug("reading on %s ahead failed", masker.name(file), exc_info=True)
            continue
        read += 1
    return read


def _as_read(row: tuple[Any, ...], stat: os.stat_result) -> bool:
    """Whether a file's ``log_files`` row says where its session is read on, and the file is as it was then."""
    return row[3] is not None and bool(row[4]) and (stat.st_size, stat.st_mtime_ns) == tuple(row[1:3])


MASKED_PATHS = 65536  # the paths whose masked names are kept for the next reading on
_masked_paths: dict[tuple[bytes | None, str], str] = {}


def _masked_path(masker: Masker, file: str) -> str:
    """A file's path masked as ``log_files`` keeps it, kept for the next run of this process (a
    watched source's hundreds of files are masked once, not on every append)."""
    masked = _masked_paths.get((masker.key, file))
    if masked is None:
        if len(_masked_paths) >= MASKED_PATHS:
            _masked_paths.clear()
        masked = _masked_paths[masker.key, file] = masker.name(file)
    return masked


def _head_hash(file: Path, resume_at: int, size: int) -> str | None:
    """A digest of a file's first bytes (of its first ``size``) and of those just before
    ``resume_at``; None if unreadable."""
    digest = hashlib.sha256()
    try:
        with file.open("rb") as handle:
            digest.update(handle.read(min(HEAD_BYTES, size)))
            start = max(0, resume_at - EDGE_BYTES)
            handle.seek(start)
            digest.update(handle.read(resume_at - start))
    except OSError:
        return None
    return digest.hexdigest()


def _read_appends(
    db: Database, source_id: int, kind: str, masker: Masker, current: dict[str, os.stat_result]
) -> list[documents.Problem] | None:
    """Read on the session files that only grew since the last read; None if anything else changed.
    ``current``: the source's files with their status, as its fingerprint was made of them.

    Each such file is read from where its last response began (``Tail``); what is read
    replaces the session's messages from there, and the session's counts, times, models
    and files follow. Files added, removed, shortened or rewritten: None (read it whole).
    """
    reader = getattr(sources.module(kind), "read_from", None)
    if reader is None:
        return None
    by_path = {row[0]: row for row in db.execute(LOG_FILES_SQL, [source_id]).fetchall()}
    if not by_path or len(by_path) != len(current):
        return None
    stored = {}
    for file in current:
        row = by_path.get(_masked_path(masker, file))  # paths are kept masked
        if row is None:
            return None
        stored[file] = row
    changed = [file for file, stat in current.items() if (stat.st_size, stat.st_mtime_ns) != tuple(stored[file][1:3])]
    for file in changed:
        _, size, _, document_id, resume_at, _, head_hash = stored[file]
        grown = current[file].st_size >= size
        if Path(file).is_symlink():
            return None  # the whole reading judges where a link leads before anything is opened
        if document_id is None or not grown or _head_hash(Path(file), resume_at, size) != head_hash:
            return None
    problems: list[documents.Problem] = []
    source = f"log:{source_id}"
    host = _host(db, source_id)
    for file in changed:
        _, _, _, document_id, resume_at, resume_seq, _ = stored[file]
        row = db.execute(STORED_SESSION_SQL, [document_id]).fetchone()
        if row is None:
            return None
        key, title, body, extra_json, content_hash, agent = row
        extra = json.loads(extra_json)
        session = reader(Path(file), resume_at, key[len(source) + 1 :], extra.get("project"), extra.get("models"))
        if session is None:
            return None
        session = session_worker.on_host(valid_session(session), host)
        problems.extend(
            documents.Problem(f"{kind}:{session.key}", "degraded", masker.name(p)) for p in session.problems
        )
        stat = current[file]
        stored_row = (title, body, extra, content_hash, agent)
        tail = _read_on(db, document_id, session, resume_seq, stored_row, source, masker)
        if tail is None:
            tail = Tail(Path(file), resume_at, resume_seq)
        db.execute(
            "UPDATE log_files SET size = ?, mtime_ns = ?, resume_at = ?, resume_seq = ?, head_hash = ?"
            " WHERE source_id = ? AND path = ?",
            [stat.st_size, stat.st_mtime_ns, tail.resume_at, tail.resume_seq, _head_hash(Path(file), tail.resume_at, stat.st_size),
             source_id, _masked_path(masker, file)],
        )  # fmt: skip
    return problems


def _read_on(
    db: Database,
    document_id: int,
    read: Session,
    resume_seq: int,
    stored: tuple[str, str, dict[str, Any], str, str],
    source: str,
    masker: Masker,
) -> Tail | None:
    """Store what was read on, masked: messages from ``resume_seq`` replaced; where to read on next."""
    title, body, extra, content_hash, agent = stored
    replaced = [
        dict(zip(("seq", *HOUR_FIELDS, "cache_write_1h_tokens"), row, strict=True))
        for row in db.conn.execute(REPLACED_ROWS_SQL, {"id": document_id, "seq": resume_seq})
    ]
    replaced_secrets, replaced_commands = db.execute(REPLACED_SQL, {"id": document_id, "seq": resume_seq}).fetchone()
    stamps = [stamp for stamp in (extra.get("last"), read.last) if stamp]
    session = Session(
        key=read.key,
        agent=read.agent,
        title=read.title if read.titled else title,
        messages=read.messages,
        project=extra.get("project"),
        models=list(dict.fromkeys([*extra.get("models", []), *read.models])),
        branch=extra.get("branch"),
        host=read.host,
        started=extra.get("started") or read.started,
        last=max(stamps) if stamps else None,
        files=[Path(file) for file in extra.get("files", [])],
        parent=extra.get("parent"),
    )
    before = Before(
        messages=resume_seq,
        secrets=extra.get("secrets_masked", 0) - replaced_secrets,
        commands=extra.get("commands", 0) - replaced_commands,
        touched=extra.get("touched_files", []),
        roles=extra.get("roles", []),
        head=body,
        tools=extra.get("tools", []),
    )
    before.usage, before.responses = _usage_before(db, document_id, resume_seq, extra, replaced)
    digest = hashlib.sha256(f"{content_hash}\x00{session_hash(read)}\x00{resume_seq}".encode()).hexdigest()
    session, found = mask_session(session, masker)  # (what was stored is masked already: it counts nothing)
    document, messages = document_rows(session, source, _now(), digest, found, before)
    document["id"] = document_id
    db.update("documents", document_id, {k: v for k, v in document.items() if k != "key"})
    db.execute(DELETE_MESSAGES_FROM_SQL, {"id": document_id, "seq": resume_seq})
    _insert_messages(db, document_id, messages, document, whole=False, hours=False)
    _hours_on(db, document_id, document, messages, replaced, rollups.context({"extra": extra, "type": agent}))
    if read.tail is None:
        return None
    return Tail(read.tail.file, read.tail.resume_at, resume_seq + read.tail.resume_seq)


def _usage_before(
    db: Database, document_id: int, resume_seq: int, extra: dict[str, Any], replaced: list[dict[str, Any]]
) -> tuple[Usage, int]:
    """The usage of a session's messages before ``resume_seq``, and how many carry it: the session's
    total as stored less that of the ``replaced`` messages, where that total is whole counts and
    none of them states a cost (a cost taken away is not the sum of the others); else summed
    from its messages."""
    total = extra.get("usage", False)
    kept = _usage_less(total, replaced) if not any(row["cost"] is not None for row in replaced) else None
    if kept is not None:
        return kept
    *counts, cost, responses = db.execute(USAGE_BEFORE_SQL, {"id": document_id, "seq": resume_seq}).fetchone()
    return stored_usage(dict(zip(USAGE_COLUMNS.values(), counts, strict=True)), cost), responses


def _usage_less(total: Any, replaced: list[dict[str, Any]]) -> tuple[Usage, int] | None:
    """A session's ``usage`` as its ``extra`` holds it (None: no response) less the ``replaced``
    messages' tokens; None where it is not such a total, or would go below nought."""
    if total is None:
        total = {**dict.fromkeys(USAGE_COLUMNS, 0), "cost": None, "responses": 0}
    if not isinstance(total, dict):
        return None
    if not all(_count(total.get(name)) for name in (*USAGE_COLUMNS, "responses")):
        return None
    counts: dict[str, int] = {name: total[name] for name in (*USAGE_COLUMNS, "responses")}
    cost = total.get("cost")
    if cost is not None and (not isinstance(cost, (int, float)) or isinstance(cost, bool)):
        return None
    for row in replaced:
        for name, column in USAGE_COLUMNS.items():
            counts[name] -= row[column] or 0
        counts["responses"] -= row["input_tokens"] is not None
    if any(value < 0 for value in counts.values()):
        return None
    responses = counts.pop("responses")
    return Usage(**counts, cost=float(cost) if cost is not None else None), responses


def _count(value: Any) -> bool:
    """Whether a value of ``extra`` is a count: a whole number, not a truth value."""
    return isinstance(value, int) and not isinstance(value, bool)


def _hours_on(
    db: Database,
    document_id: int,
    document: dict[str, Any],
    messages: list[dict[str, Any]],
    replaced: list[dict[str, Any]],
    before: tuple[str | None, ...],
) -> None:
    """A session's hour rollups after it was read on: the messages new since its last reading
    added to its rows, where those ``replaced`` came back as they were and the session's start,
    last model, agent and project (``before``) stand; else written again from all its messages."""
    new = {message["seq"]: message for message in messages}
    unchanged = rollups.context(document) == before and all(
        row["seq"] in new and all(new[row["seq"]][name] == row[name] for name in HOUR_FIELDS) for row in replaced
    )
    if not unchanged:
        rollups.write_hours(db, document_id)
        return
    again = {row["seq"] for row in replaced}
    rollups.add_hours(db, document_id, document, [message for message in messages if message["seq"] not in again])


def _insert_messages(
    db: Database,
    document_id: int,
    messages: list[dict[str, Any]],
    document: dict[str, Any],
    whole: bool,
    hours: bool = True,
) -> None:
    """Store a session's messages (``session_rows.document_rows``), each one's text with its
    filter words in ``message_index``, and what the rollups count of them: from these rows where
    they are the ``whole`` session, else from all its messages stored (some were read on); the
    hour rollups not yet where ``hours`` is False (a session read in parts: after its last)."""
    base = document_id * schema.MESSAGE_IDS
    indexed = []
    for message in messages:
        message["id"], message["document_id"] = base + message["seq"], document_id
        if message["filter_tokens"] is not None:
            indexed.append(
                (message["id"], searched_text(message["text"], message["call_words"]), message["filter_tokens"])
            )
    db.conn.executemany(INSERT_MESSAGE_SQL, messages)
    db.conn.executemany(INSERT_MESSAGE_INDEX_SQL, indexed)
    rollups.write_calls(db, messages)
    if not hours:
        return
    if whole:
        rollups.write_hours_of(db, document_id, document, messages)
    else:
        rollups.write_hours(db, document_id)  # (of all its messages: those read on replace the last ones)
