"""Incremental, transactional indexing of a workspace into its archive."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import logging
import multiprocessing
import os
import time
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist import documents
from archivist.archive import building, database, schema, sessions
from archivist.archive.database import Database, sqlite3
from archivist.archive.pace import Progress
from archivist.documents import Problem
from archivist.errors import ArchivistError
from archivist.workspace import archive_files, archive_path, secret_key

SOURCE_FILES_SQL = "SELECT path, source, size, mtime_ns, status FROM files"
SOURCE_HASHES_SQL = "SELECT path, content_hash FROM sources"
DOCUMENT_KEYS_SQL = "SELECT key, id FROM documents WHERE source = :source"
DELETE_DOCUMENT_SQL = "DELETE FROM documents WHERE id = :id"
DELETE_SOURCE_DOCUMENTS_SQL = "DELETE FROM documents WHERE source = :source"
DELETE_SOURCE_SQL = "DELETE FROM sources WHERE path = :source"
DELETE_SOURCE_FILES_SQL = "DELETE FROM files WHERE source = :source"
DELETE_FILE_SQL = "DELETE FROM files WHERE path = :path"
DELETE_PROBLEM_FILES_SQL = "DELETE FROM files WHERE source IS NULL"  # their problems go too (a trigger)
STATUS_COUNTS_SQL = "SELECT status, count(*) FROM files GROUP BY status"
PROBLEMS_SQL = "SELECT path, status, reason FROM index_problems"
META_SQL = "SELECT value FROM archive_meta WHERE key = :key"
WRITE_CACHE_KB = 131072  # SQLite's page cache while indexing: 128 MB
INSERT_PROBLEM_SQL = "INSERT OR IGNORE INTO problems (path, status, reason) VALUES (:path, :status, :reason)"
INSERT_PROBLEM_FILE_SQL = "INSERT OR IGNORE INTO files (path, source, status) VALUES (:path, NULL, :status)"
# A file's status is its worst problem's, its reason all of them.
FILE_STATUS_SQL = """
UPDATE files SET
    status = (SELECT CASE WHEN max(p.status = 'skipped') THEN 'skipped' ELSE 'degraded' END
              FROM problems p WHERE p.path = files.path),
    reason = (SELECT group_concat(reason, '; ') FROM (SELECT reason FROM problems p WHERE p.path = files.path ORDER BY id))
WHERE path IN (SELECT value FROM json_each(:paths))
"""
# From this many sources to read, a worker process parses them, PARSE_BATCH at a time, while
# this one stores them (bench/first_call.py: all of ../shared/eval/markdown, 1,469 files)
PARALLEL_SOURCES = 500
PARSE_BATCH = 50
FTS_BATCH = 250  # documents stored between two additions to the full-text index
logger = logging.getLogger(__name__)
# Errors that come from what a source holds, not from the archive (locked, full): they skip that source.
DATA_ERRORS = (
    sqlite3.IntegrityError,
    sqlite3.InterfaceError,
    sqlite3.ProgrammingError,
    sqlite3.DataError,
    OverflowError,
    TypeError,
    ValueError,
)


@dataclass
class Summary:
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: int = 0
    degraded: int = 0
    documents: int = 0
    seconds: float = 0.0
    problems: list[Problem] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.indexed} indexed, {self.unchanged} unchanged, {self.removed} removed, "
            f"{self.skipped} skipped, {self.degraded} degraded "
            f"({self.documents} documents, {self.seconds:.2f}s)"
        )


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def index_workspace(
    workspace: Path,
    db_path: Path | None = None,
    reports_dir: str | None = None,
    progress: Callable[[Iterable[Any]], Iterable[Any]] | None = None,
    log_sources: Iterable[tuple[str, Path]] = (),
    log_progress: Progress | None = None,
) -> Summary:
    """Bring the archive up to date with the workspace and its agent-log sources.

    The workspace's documents are written in one transaction; then the agent logs, whose
    sessions are committed as they are read (a large source read for the first time, its
    newest first): a search finds them meanwhile, and a run that stops keeps what it stored.
    ``reports_dir`` defaults to the one the archive was last indexed with, else ``reports``.
    ``log_sources`` (kind, absolute path; checked by the caller) are remembered first.
    ``progress`` wraps the workspace's sources as they are read; ``log_progress`` hears the
    bytes of each agent-log source read whole (``archive.pace.Progress``).
    """
    workspace = Path(workspace)
    if not workspace.is_dir():
        raise ArchivistError(
            "DIRECTORY_NOT_FOUND",
            f"Workspace not found: {workspace}",
            "The workspace must be an existing folder.",
            "Check the path, or create the folder first.",
        )
    db_path = Path(db_path) if db_path else archive_path(workspace)
    started = time.perf_counter()
    started_at = _now()
    try:
        db = schema.open_archive(db_path)
    except sqlite3.OperationalError as error:
        if not unwritable(error):
            raise
        raise not_written(db_path, error) from None
    # a second of agent logs (the pages of ~40 MB stored between commits) held in memory until
    # the commit, not spilled to the log as it fills SQLite's default 2 MB (bench/agentlog_index.py)
    db.execute(f"PRAGMA cache_size = -{WRITE_CACHE_KB}")
    try:
        reports_dir = reports_dir or _meta(db, "reports_dir") or "reports"
        files, walk_problems = documents.walk(workspace, exclude=archive_files(db_path))
        sources, type_problems = documents.group_sources(files, reports_dir)
        key = secret_key(db_path)
        problems = walk_problems + type_problems
        with db.atomic():  # the workspace's own documents: all of them, or none
            for kind, path in log_sources:
                sessions.add(db, kind, path)
            summary = _apply(db, workspace, sources, problems, progress, key)
            _record_workspace(db, workspace, reports_dir)  # (with its documents: their files are known)
        with db.atomic():  # the agent logs: committed as they are read (archive.pace)
            read, unchanged, log_problems = sessions.index_sources(db, key, log_progress)
            summary.indexed += read
            summary.unchanged += unchanged
            problems.extend(log_problems)
            building.finished(db)
            _store_problems(db, problems, summary)
            summary.documents = db.count("documents")
            summary.seconds = time.perf_counter() - started
            _record_run(db, workspace, reports_dir, summary, started_at)
    except sqlite3.OperationalError as error:
        if not unwritable(error):
            raise
        raise not_written(db_path, error) from None
    finally:
        building.ended()
        db.close()
    return summary


def unwritable(error: Exception) -> bool:
    """Whether SQLite failed for want of a disk to write on: full, failing, read-only, or no file to be made there."""
    return database.unwritable(error) or database.primary_code(error) == sqlite3.SQLITE_CANTOPEN


def not_written(db_path: Path, error: Exception) -> ArchivistError:
    """The error of a run that could not write its archive: what it committed stays (its
    workspace documents all or none; of its agent logs, what was stored up to the last commit)."""
    return database.not_written(
        db_path,
        error,
        "The run stopped; the archive keeps what it had before, and the agent-log sessions committed "
        "as they were read (a search finds them).",
        "run archivist index again: it reads on from what is stored.",
    )


def _meta(db: Database, key: str) -> str | None:
    row = db.execute(META_SQL, {"key": key}).fetchone()
    return row[0] if row else None


def _apply(
    db: Database,
    workspace: Path,
    sources: dict[str, documents.Source],
    problems: list[documents.Problem],
    progress: Callable[[Iterable[Any]], Iterable[Any]] | None,
    key: bytes | None,
) -> Summary:
    summary = Summary()
    known_files = {row[0]: row[1:] for row in db.execute(SOURCE_FILES_SQL).fetchall()}
    known_hashes = dict(db.execute(SOURCE_HASHES_SQL).fetchall())
    vanished = set(known_hashes) - set(sources)
    for source_path in sorted(vanished):
        db.execute(DELETE_SOURCE_DOCUMENTS_SQL, {"source": source_path})
        db.execute(DELETE_SOURCE_SQL, {"source": source_path})
        db.execute(DELETE_SOURCE_FILES_SQL, {"source": source_path})
        summary.removed += 1
    db.execute(DELETE_PROBLEM_FILES_SQL)
    stale_files = set(known_files) - {f.path for s in sources.values() for f in s.files}
    for path in stale_files:
        db.execute(DELETE_FILE_SQL, {"path": path})
    if _meta(db, "parser_version") != str(documents.PARSER_VERSION):
        known_files = {}  # documents made by another parser: read and store every source again
        known_hashes = {path: None for path in known_hashes}
    ordered = [sources[path] for path in sorted(sources)]
    to_read = [s for s in ordered if not (_unchanged_on_disk(s, known_files) and s.path in known_hashes)]
    summary.unchanged += len(ordered) - len(to_read)
    read_now: list[tuple[documents.Source, str, set[str]]] = []
    parsed_in_order: Generator[documents.Parsed, None, None] = _parsed(workspace, to_read, key)
    try:
        # the new documents enter the full-text index in one statement at the end, or, while a
        # worker process parses the next sources, FTS_BATCH at a time
        batch = FTS_BATCH if _in_parallel(to_read) else len(to_read) + 1
        with db.deferred_fts():
            pending = 0
            for source in progress(to_read) if progress is not None else to_read:
                parsed = next(parsed_in_order)
                pending += len(parsed.documents)
                parsed = _index_source(db, source, parsed, known_hashes.get(source.path), summary)
                problems.extend(parsed.problems)  # (a source that could not be stored: why)
                read_now.append(_read_of(source, parsed))
                if pending >= batch:
                    db.index_pending()
                    pending = 0
    finally:
        parsed_in_order.close()  # (a worker process stops)
    _store_sources(db, read_now)
    return summary


def _in_parallel(sources: list[documents.Source]) -> bool:
    """Whether a worker process parses these sources (``_parsed``)."""
    return len(sources) >= PARALLEL_SOURCES and (os.cpu_count() or 1) > 1


def _parsed(
    workspace: Path, sources: list[documents.Source], key: bytes | None
) -> Generator[documents.Parsed, None, None]:
    """Each source parsed, in order. Many of them, with more than one core: a worker process
    parses them, a batch at a time, while this one stores what came (SQLite's writing is the
    longer half); should the worker fail, this process parses what is left."""
    if not _in_parallel(sources):
        yield from (documents.parse(workspace, source, key) for source in sources)
        return
    done = 0
    try:
        pool = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=documents.exit_with_parent,
            initargs=(os.getpid(),),
        )
    except Exception:  # no process to be had here (a sandbox): parsed here
        logger.debug("no worker process for parsing", exc_info=True)
    else:
        try:
            batches = [sources[start : start + PARSE_BATCH] for start in range(0, len(sources), PARSE_BATCH)]
            for batch in pool.map(documents.parse_all, itertools.repeat(workspace), batches, itertools.repeat(key)):
                for parsed in batch:
                    done += 1
                    yield parsed
        except Exception:  # the worker died, or its answer could not be read: the rest is parsed here
            logger.warning("the parsing process failed; parsing in this one", exc_info=True)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
    yield from (documents.parse(workspace, source, key) for source in sources[done:])


def _index_source(
    db: Database, source: documents.Source, parsed: documents.Parsed, known_hash: str | None, summary: Summary
) -> documents.Parsed:
    """Store the documents of a new or changed source, as read; what was read (``unparsed`` where it
    could not be stored).

    A source whose documents cannot be stored is skipped alone, with the reason.
    """
    skipped = {p.path for p in parsed.problems if p.status == "skipped"}
    counted = not {info.path for info in source.files} <= skipped  # else it counts as skipped only
    if known_hash == parsed.content_hash:
        summary.unchanged += counted  # touched, not changed
    else:
        try:
            # No savepoint: releasing one makes FTS5 write out its pending terms, which
            # for one note at a time doubled the time of a whole index run. Nothing of a
            # source is half stored all the same: on an error all its documents go below.
            _store_documents(db, source, parsed.documents)
        except DATA_ERRORS as error:
            parsed = documents.unparsed(source, f"could not be stored ({type(error).__name__}: {error})")
            _store_documents(db, source, [])
            counted = False
        summary.indexed += counted
    return parsed


def _unchanged_on_disk(source: documents.Source, known_files: dict[str, tuple[Any, ...]]) -> bool:
    for info in source.files:
        known = known_files.get(info.path)
        if known is None or known[0] != source.path or known[1] != info.size or known[2] != info.mtime_ns:
            return False
        if known[3] == "skipped":
            return False
    return True


def _store_documents(db: Database, source: documents.Source, documents: list[dict[str, Any]]) -> None:
    existing = dict(db.execute(DOCUMENT_KEYS_SQL, {"source": source.path}).fetchall())
    now = _now()
    rows = []
    for document in documents:
        row = {**document, "indexed_at": now}
        if document["key"] in existing:
            row["id"] = existing.pop(document["key"])
        rows.append(row)
    for stale_id in existing.values():
        db.execute(DELETE_DOCUMENT_SQL, {"id": stale_id})
    updates = [row for row in rows if "id" in row]
    inserts = [row for row in rows if "id" not in row]
    db.upsert("documents", updates, pk="id")
    db.insert("documents", inserts)


def _store_sources(db: Database, read: list[tuple[documents.Source, str, set[str]]]) -> None:
    """Remember the sources read (their hashes, their files) all at once, after their documents:
    each source with its content hash and the paths of its files skipped (``_read_of``).

    One statement for all: a statement that may need undoing on its own (an ``INSERT OR
    REPLACE``) makes FTS5 write out the terms it holds, which once per note doubled the
    time of a whole index run.
    """
    now = _now()
    db.upsert(
        "sources",
        [
            {"path": s.path, "kind": s.kind, "content_hash": content_hash, "indexed_at": now}
            for s, content_hash, _ in read
        ],
        pk="path",
    )
    db.executemany(DELETE_SOURCE_FILES_SQL, [{"source": source.path} for source, _, _ in read])
    rows = []
    for source, _, skipped in read:
        rows += [
            {
                "path": info.path,
                "source": source.path,
                "size": info.size,
                "mtime_ns": info.mtime_ns,
                "status": "skipped" if info.path in skipped else "indexed",
                "reason": None,
            }
            for info in source.files
        ]
    db.insert("files", rows, replace=True)


def _read_of(source: documents.Source, parsed: documents.Parsed) -> tuple[documents.Source, str, set[str]]:
    """What ``_store_sources`` keeps of a source read until the end of the run: not its documents
    (they are stored), only its hash and its files skipped, so that a large workspace's texts are
    not all held at once."""
    return source, parsed.content_hash, {p.path for p in parsed.problems if p.status == "skipped"}


def _store_problems(db: Database, problems: list[documents.Problem], summary: Summary) -> None:
    """Record every problem of this run, one row each; unchanged sources keep theirs from before."""
    for problem in problems:
        db.execute(INSERT_PROBLEM_FILE_SQL, {"path": problem.path, "status": problem.status})
        db.execute(INSERT_PROBLEM_SQL, {"path": problem.path, "status": problem.status, "reason": problem.reason})
    db.execute(FILE_STATUS_SQL, {"paths": json.dumps(sorted({problem.path for problem in problems}))})
    counts = dict(db.execute(STATUS_COUNTS_SQL).fetchall())
    summary.skipped = counts.get("skipped", 0)
    summary.degraded = counts.get("degraded", 0)
    summary.problems = [documents.Problem(*row) for row in db.execute(PROBLEMS_SQL)]


def _record_workspace(db: Database, workspace: Path, reports_dir: str) -> None:
    """Where the workspace whose documents are stored is, and its reports' folder: committed with the
    documents, so that a page shows their files while the agent logs are still read."""
    db.upsert(
        "archive_meta",
        [
            {"key": "workspace_root", "value": str(workspace.resolve())},
            {"key": "reports_dir", "value": reports_dir},
        ],
        pk="key",
    )


def _record_run(db: Database, workspace: Path, reports_dir: str, summary: Summary, started_at: str) -> None:
    db.upsert(
        "archive_meta",
        [
            {"key": "parser_version", "value": str(documents.PARSER_VERSION)},
            {"key": "last_indexed_at", "value": _now()},
        ],
        pk="key",
    )
    db.insert(
        "index_runs",
        [
            {
                "started_at": started_at,
                "finished_at": _now(),
                "seconds": round(summary.seconds, 3),
                "indexed": summary.indexed,
                "unchanged": summary.unchanged,
                "removed": summary.removed,
                "skipped": summary.skipped,
                "degraded": summary.degraded,
            }
        ],
    )
