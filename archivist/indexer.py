"""Incremental, transactional indexing of a workspace into its archive."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import sqlite_utils

from . import ingest, schema
from .errors import ArchivistError
from .workspace import archive_path

SOURCE_FILES_SQL = "SELECT path, source, size, mtime_ns, status FROM files"
SOURCE_HASHES_SQL = "SELECT path, content_hash FROM sources"
DOCUMENT_KEYS_SQL = "SELECT key, id FROM documents WHERE source = :source"
DELETE_DOCUMENT_SQL = "DELETE FROM documents WHERE id = :id"
DELETE_SOURCE_DOCUMENTS_SQL = "DELETE FROM documents WHERE source = :source"
DELETE_SOURCE_SQL = "DELETE FROM sources WHERE path = :source"
DELETE_SOURCE_FILES_SQL = "DELETE FROM files WHERE source = :source"
DELETE_FILE_SQL = "DELETE FROM files WHERE path = :path"
DELETE_PROBLEM_FILES_SQL = "DELETE FROM files WHERE source IS NULL"
STATUS_COUNTS_SQL = "SELECT status, count(*) FROM files GROUP BY status"
PROBLEMS_SQL = "SELECT path, status, reason FROM index_problems"
REPORTS_DIR_SQL = "SELECT value FROM archive_meta WHERE key = 'reports_dir'"



@dataclass
class Summary:
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: int = 0
    degraded: int = 0
    documents: int = 0
    seconds: float = 0.0
    problems: list[ingest.Problem] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.indexed} indexed, {self.unchanged} unchanged, {self.removed} removed, "
            f"{self.skipped} skipped, {self.degraded} degraded "
            f"({self.documents} documents, {self.seconds:.2f}s)"
        )


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def index_workspace(
    workspace: Path,
    db_path: Path | None = None,
    reports_dir: str | None = None,
    progress: Callable[[Iterable[Any]], Iterable[Any]] | None = None,
) -> Summary:
    """Bring the archive up to date with the workspace, in one transaction.

    ``reports_dir`` defaults to the one the archive was last indexed with, else ``reports``.
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
    db = schema.open_archive(db_path)
    try:
        reports_dir = reports_dir or _stored_reports_dir(db) or "reports"
        files, walk_problems = ingest.walk(workspace, exclude={db_path})
        sources, type_problems = ingest.group_sources(files, reports_dir)
        with db.atomic():
            summary = _apply(db, workspace, sources, walk_problems + type_problems, progress)
            summary.seconds = time.perf_counter() - started
            _record_run(db, workspace, reports_dir, summary, started_at)
    finally:
        db.close()
    return summary


def _stored_reports_dir(db: sqlite_utils.Database) -> str | None:
    row = db.execute(REPORTS_DIR_SQL).fetchone()
    return row[0] if row else None


def _apply(
    db: sqlite_utils.Database,
    workspace: Path,
    sources: dict[str, ingest.Source],
    problems: list[ingest.Problem],
    progress: Callable[[Iterable[Any]], Iterable[Any]] | None,
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
    items: Iterable[ingest.Source] = [sources[path] for path in sorted(sources)]
    if progress is not None:
        items = progress(items)
    for source in items:
        if _unchanged_on_disk(source, known_files) and source.path in known_hashes:
            summary.unchanged += 1
            continue
        parsed = ingest.parse(workspace, source)
        problems.extend(parsed.problems)
        skipped = {p.path for p in parsed.problems if p.status == "skipped"}
        counted = not {info.path for info in source.files} <= skipped  # else it counts as skipped only
        if known_hashes.get(source.path) == parsed.content_hash:
            summary.unchanged += counted  # touched, not changed
        else:
            _store_documents(db, source, parsed.documents)
            summary.indexed += counted
        _store_source(db, source, parsed)
    _store_problems(db, problems, summary)
    summary.documents = db.table("documents").count
    return summary


def _unchanged_on_disk(source: ingest.Source, known_files: dict[str, tuple]) -> bool:
    for info in source.files:
        known = known_files.get(info.path)
        if known is None or known[0] != source.path or known[1] != info.size or known[2] != info.mtime_ns:
            return False
        if known[3] == "skipped":
            return False
    return True


def _store_documents(db: sqlite_utils.Database, source: ingest.Source, documents: list[dict[str, Any]]) -> None:
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
    if updates:
        db.table("documents").upsert_all(updates, pk="id")
    if inserts:
        db.table("documents").insert_all(inserts)


def _store_source(db: sqlite_utils.Database, source: ingest.Source, parsed: ingest.Parsed) -> None:
    db.table("sources").upsert(
        {"path": source.path, "kind": source.kind, "content_hash": parsed.content_hash, "indexed_at": _now()},
        pk="path",
    )
    db.execute(DELETE_SOURCE_FILES_SQL, {"source": source.path})
    skipped = {p.path for p in parsed.problems if p.status == "skipped"}
    db.table("files").insert_all(
        (
            {
                "path": info.path,
                "source": source.path,
                "size": info.size,
                "mtime_ns": info.mtime_ns,
                "status": "skipped" if info.path in skipped else "indexed",
                "reason": None,
            }
            for info in source.files
        ),
        pk="path",
        replace=True,
    )


def _store_problems(db: sqlite_utils.Database, problems: list[ingest.Problem], summary: Summary) -> None:
    """Record every problem of this run; unchanged sources keep theirs from before."""
    by_path: dict[str, ingest.Problem] = {}
    for problem in problems:
        current = by_path.get(problem.path)
        if current is None:
            by_path[problem.path] = problem
        elif problem.status == "skipped" or current.status == problem.status:
            status = "skipped" if "skipped" in (current.status, problem.status) else current.status
            by_path[problem.path] = ingest.Problem(problem.path, status, f"{current.reason}; {problem.reason}")
    files = db.table("files")
    for problem in by_path.values():
        if files.count_where("path = ?", [problem.path]):
            files.update(problem.path, {"status": problem.status, "reason": problem.reason})
        else:
            files.insert({"path": problem.path, "source": None, "status": problem.status, "reason": problem.reason})
    counts = dict(db.execute(STATUS_COUNTS_SQL).fetchall())
    summary.skipped = counts.get("skipped", 0)
    summary.degraded = counts.get("degraded", 0)
    summary.problems = [ingest.Problem(*row) for row in db.execute(PROBLEMS_SQL)]


def _record_run(db: sqlite_utils.Database, workspace: Path, reports_dir: str, summary: Summary, started_at: str) -> None:
    db.table("archive_meta").upsert_all(
        [
            {"key": "workspace_root", "value": str(workspace.resolve())},
            {"key": "reports_dir", "value": reports_dir},
            {"key": "last_indexed_at", "value": _now()},
        ],
        pk="key",
    )
    db.table("index_runs").insert(
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
    )
