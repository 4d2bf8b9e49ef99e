"""The archive's schema, created and upgraded by the numbered migrations of ``migrations``.

An archive records the schema version it was brought to (SQLite's ``user_version``):
opening one that is up to date reads that number and nothing else, so that neither
sqlite-utils nor the migrations are imported on the way to an index run or a search.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from archivist.archive.database import Database, connect_read_only, sqlite3

# How many migrations ``migrations`` has (a test checks it): an archive at this version needs none.
SCHEMA_VERSION = 23
# Every migration's work, as one script for a new archive (``python -m archivist.archive.migrations``).
NEW_ARCHIVE_SQL = Path(__file__).with_name("new_archive.sql")

# The llm library's collections in those tables: one vector per chunk, and one per
# document (the normalised mean of its chunks), so that `llm similar` works on the
# archive. The semantic layer makes them through llm when embedding first starts; an
# archive never embedded has none.
CHUNKS_COLLECTION = "archivist_chunks"
DOCUMENTS_COLLECTION = "archivist_documents"

EMBEDDED_SQL = "SELECT EXISTS (SELECT 1 FROM collections WHERE name = ?)"

# Ids of one session's messages: document_id * MESSAGE_IDS + seq (a session keeps its first MESSAGE_IDS).
MESSAGE_IDS = 1 << 20


def is_embedded(path: Path) -> bool:
    """Whether the archive at ``path`` has been embedded (its chunks collection exists; its vectors are then
    kept current): read only, never created."""
    try:
        conn = connect_read_only(path)
        try:
            return bool(conn.execute(EMBEDDED_SQL, [CHUNKS_COLLECTION]).fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return False  # no archive, or one from before embeddings (no collections table)


# A new archive's page size: an agent log's message of 2 to 4 KB (a tool's output, thinking)
# leaves most of a 4 KB page empty beside it; at 8 KB the archive of bench/agentlog_index.py's
# sessions is 29% smaller (1.54 to 1.11 bytes per byte of log), and at 16 or 64 KB no smaller.
PAGE_SIZE = 8192


def open_archive(path: Path) -> Database:
    """Open (creating if needed) an archive and bring its schema up to date."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = Database(path)
    db.execute("PRAGMA busy_timeout = 10000")  # Datasette (enrichment jobs) may be writing too
    db.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # (a new archive's; an existing one keeps its own)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    if schema_version(db.conn) != SCHEMA_VERSION:
        migrate(db.conn)
    return db


def migrate(conn: Any) -> None:
    """Apply every migration the archive on ``conn`` lacks, and record its schema version.

    A new (empty) database gets them all from ``new_archive.sql``, the schema they make,
    in one script.
    """
    if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
        conn.executescript(NEW_ARCHIVE_SQL.read_text(encoding="utf-8"))
    else:
        import sqlite_utils

        from archivist.archive.migrations import migrations

        migrations.apply(sqlite_utils.Database(conn))
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def schema_version(conn: Any) -> int:
    """The schema version an archive was last brought to (0: none recorded)."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


# The tables every archive has; a database without them is not an archive.
ARCHIVE_TABLES = ("documents", "files", "archive_meta", "index_runs")


def archive_problem(db: Any) -> str | None:
    """Why ``db`` (a connection, or a database object holding one as ``conn``) is not an
    archive this version's queries can read, or None. Reads only.

    "older" means an archive written by an earlier version: ``upgrade`` (or
    ``archivist index``) brings it up to date, and nothing of it is lost.
    """
    conn = getattr(db, "conn", db)
    found = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    missing = [name for name in ARCHIVE_TABLES if name not in found]
    if missing:
        return f"it lacks the tables that archivist index creates ({', '.join(missing)})"
    if schema_version(conn) == SCHEMA_VERSION:
        return None
    import sqlite_utils  # an archive that has not recorded its version: ask the migrations

    from archivist.archive.migrations import migrations

    return "older" if migrations.pending(sqlite_utils.Database(conn)) else None


def upgrade(path: Path) -> bool:
    """Apply the migrations an existing archive lacks; whether there were any.

    An archive that lacks none is only read (on a full disk too: ``connect_read_only``).
    """
    conn = connect_read_only(path)
    try:
        if archive_problem(conn) != "older":
            return False
    finally:
        conn.close()
    open_archive(path).close()
    return True
