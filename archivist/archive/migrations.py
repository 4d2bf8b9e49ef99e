"""The archive's migrations: each one a step from one version of the schema to the next.

Applied by ``schema.open_archive`` only when an archive's schema version is not this
package's (a new archive, or one written by an earlier version); they are the only
part of the build that needs sqlite-utils (and, for the embeddings tables, llm's own
migrations).
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import sqlite_utils
from sqlite_utils import Migrations

from archivist.archive.database import sqlite3

migrations = Migrations("archivist")

DOCUMENTS_SQL = """
CREATE TABLE documents (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    type TEXT,
    title TEXT,
    path TEXT NOT NULL,
    name TEXT,
    source TEXT NOT NULL,
    line INTEGER,
    external_id TEXT,
    product_id INTEGER,
    date TEXT,
    date_precision TEXT,
    month TEXT,
    day TEXT,
    created_at TEXT,
    timestamp REAL,
    tags TEXT NOT NULL DEFAULT '[]',
    body TEXT NOT NULL DEFAULT '',
    content_hash TEXT NOT NULL,
    extra TEXT NOT NULL DEFAULT '{}',
    filter_tokens TEXT NOT NULL DEFAULT '',
    indexed_at TEXT NOT NULL
);
CREATE INDEX documents_kind_date ON documents (kind, date);
CREATE INDEX documents_kind_month ON documents (kind, month);
CREATE INDEX documents_kind_type ON documents (kind, type);
CREATE INDEX documents_source ON documents (source);
CREATE INDEX documents_timestamp ON documents (timestamp);
"""

FILES_SQL = """
CREATE TABLE sources (
    path TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    indexed_at TEXT NOT NULL
);
CREATE TABLE files (
    path TEXT PRIMARY KEY,
    source TEXT,
    size INTEGER,
    mtime_ns INTEGER,
    status TEXT NOT NULL,
    reason TEXT
);
CREATE INDEX files_source ON files (source);
CREATE INDEX files_status ON files (status);
CREATE TABLE archive_meta (
    key TEXT PRIMARY KEY,
    value TEXT
);
CREATE TABLE index_runs (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    seconds REAL NOT NULL,
    indexed INTEGER NOT NULL,
    unchanged INTEGER NOT NULL,
    removed INTEGER NOT NULL,
    skipped INTEGER NOT NULL,
    degraded INTEGER NOT NULL
);
CREATE VIEW index_problems AS
    SELECT path, status, reason FROM files WHERE status != 'indexed' ORDER BY path;
"""

# Substring search over reports (seed 001): a trigram index that holds reports only.
REPORTS_TRIGRAM_SQL = """
CREATE VIRTUAL TABLE reports_trigram USING fts5(
    body, content='documents', content_rowid='id', tokenize='trigram'
);
CREATE TRIGGER reports_trigram_ai AFTER INSERT ON documents WHEN new.kind = 'report' BEGIN
    INSERT INTO reports_trigram (rowid, body) VALUES (new.id, new.body);
END;
CREATE TRIGGER reports_trigram_ad AFTER DELETE ON documents WHEN old.kind = 'report' BEGIN
    INSERT INTO reports_trigram (reports_trigram, rowid, body) VALUES ('delete', old.id, old.body);
END;
CREATE TRIGGER reports_trigram_au AFTER UPDATE ON documents BEGIN
    INSERT INTO reports_trigram (reports_trigram, rowid, body)
        SELECT 'delete', old.id, old.body WHERE old.kind = 'report';
    INSERT INTO reports_trigram (rowid, body)
        SELECT new.id, new.body WHERE new.kind = 'report';
END;
"""

CHUNKS_SQL = """
CREATE TABLE chunks (
    id TEXT PRIMARY KEY,
    document_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    content_hash BLOB NOT NULL
);
CREATE INDEX chunks_document ON chunks (document_id);
"""

FILTER_INDEXES_SQL = """
CREATE INDEX documents_month ON documents (month);
CREATE INDEX documents_day ON documents (day);
CREATE INDEX documents_type ON documents (type);
"""

# Filter words again, keyed by time: a contentless FTS table whose rowid orders documents
# newest first (then by id), so "every document matching these filters, newest first"
# reads the index backwards and stops after the rows it needs, with no join and no sort.
# Undated documents are keyed by id alone and so come last. Ids must stay below 2^26.
TIME_KEY = "(CASE WHEN {row}.timestamp IS NULL THEN {row}.id ELSE (CAST({row}.timestamp AS INTEGER) + 1) * 67108864 + {row}.id END)"
FILTERS_BY_TIME_SQL = f"""
CREATE VIRTUAL TABLE filters_by_time USING fts5(
    filter_tokens, content='', detail=none, columnsize=0, tokenize='unicode61'
);
CREATE TRIGGER filters_by_time_ai AFTER INSERT ON documents BEGIN
    INSERT INTO filters_by_time (rowid, filter_tokens) VALUES ({TIME_KEY.format(row="new")}, new.filter_tokens);
END;
CREATE TRIGGER filters_by_time_ad AFTER DELETE ON documents BEGIN
    INSERT INTO filters_by_time (filters_by_time, rowid, filter_tokens)
        VALUES ('delete', {TIME_KEY.format(row="old")}, old.filter_tokens);
END;
CREATE TRIGGER filters_by_time_au AFTER UPDATE ON documents BEGIN
    INSERT INTO filters_by_time (filters_by_time, rowid, filter_tokens)
        VALUES ('delete', {TIME_KEY.format(row="old")}, old.filter_tokens);
    INSERT INTO filters_by_time (rowid, filter_tokens) VALUES ({TIME_KEY.format(row="new")}, new.filter_tokens);
END;
INSERT INTO filters_by_time (rowid, filter_tokens)
    SELECT {TIME_KEY.format(row="documents")}, filter_tokens FROM documents;
"""

# One row per problem (a CSV lists each bad row): the files table keeps each file's
# worst status and all its reasons; a file's problems go when its row does.
PROBLEMS_SQL = """
CREATE TABLE problems (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE UNIQUE INDEX problems_path_reason ON problems (path, reason);
CREATE TRIGGER files_ad_problems AFTER DELETE ON files BEGIN
    DELETE FROM problems WHERE path = old.path;
END;
INSERT OR IGNORE INTO problems (path, status, reason)
    SELECT path, status, coalesce(reason, status) FROM files WHERE status != 'indexed' ORDER BY path;
DROP VIEW index_problems;
CREATE VIEW index_problems AS
    SELECT path, status, reason FROM problems ORDER BY path, id;
"""

# The workspace's absolute path, as the canned queries read it (absolute paths of documents,
# lookups by absolute path): one view, so that no query spells out where the path is kept.
WORKSPACE_ROOT_SQL = """
CREATE VIEW workspace_root AS
    SELECT value AS path FROM archive_meta WHERE key = 'workspace_root';
"""

# Agent-log sources (docs/contract.md: sources), remembered so that every index run reads them again,
# and the messages of the conversations read from them, in order.
LOG_SOURCES_SQL = """
CREATE TABLE log_sources (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    path TEXT NOT NULL,
    added_at TEXT NOT NULL,
    read_at TEXT,
    fingerprint TEXT,
    UNIQUE (kind, path)
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,  -- document_id * 1048576 + seq: one session's messages are one range of ids
    document_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    timestamp TEXT,
    model TEXT,
    text TEXT NOT NULL DEFAULT '',
    thinking TEXT NOT NULL DEFAULT '',
    tool_output TEXT NOT NULL DEFAULT '',
    tool_calls TEXT NOT NULL DEFAULT '[]'
);
CREATE UNIQUE INDEX messages_document ON messages (document_id, seq);
"""

# Messages searched one by one, each with its own filter words (archivist/vocabulary.py's
# words for its session, dated by the message's own time), so that a MATCH finds the message
# and applies agent, project, model, kind and date filters as it searches. Contentless: the
# text is read from ``messages`` (a snippet is made by archivist_snippet); a row goes
# when its message does. Its rowid is the message's id.
#
# A conversation read from an agent log keeps in ``documents.body`` only its opening
# prompt (what its title and excerpt come from): its whole text, which can run to
# megabytes, is ``document_texts`` (built from its messages when the model or a passage
# needs it), so that a session that gains a message never rewrites it.
#
# ``log_files`` is each file of a source as last read; for a JSONL session file, where to
# read on when it grows (from the start of its last response, which new lines may
# continue); a truncated or rewritten one is read again from the start. A source's
# problems are kept with it (``log_sources.problems``) until it is read again, and each
# message counts the secrets masked in it (``messages.secrets``).
MESSAGE_INDEX_SQL = """
DROP TABLE IF EXISTS messages_fts;
DROP TRIGGER IF EXISTS messages_ai;
DROP TRIGGER IF EXISTS messages_ad;
DROP TRIGGER IF EXISTS messages_au;
CREATE VIRTUAL TABLE message_index USING fts5(
    text, filter_tokens, content='', contentless_delete=1, tokenize='porter unicode61'
);
CREATE TRIGGER messages_ad_index AFTER DELETE ON messages BEGIN
    DELETE FROM message_index WHERE rowid = old.id;
END;
CREATE VIEW document_texts AS
    SELECT d.id, d.title, CASE WHEN d.source LIKE 'log:%' THEN coalesce((
        SELECT group_concat(m.role || ': ' || m.text, char(10) || char(10))
        FROM (
            SELECT role, text FROM messages
            WHERE document_id = d.id AND role IN ('user', 'assistant') AND trim(text) != ''
            ORDER BY seq
        ) m
    ), '') ELSE d.body END AS body
    FROM documents d;
CREATE TABLE log_files (
    source_id INTEGER NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    document_id INTEGER,  -- the one session the file holds, when it can be read on from resume_at
    resume_at INTEGER,
    resume_seq INTEGER,
    head_hash TEXT,  -- of its first bytes and of those before resume_at: a rewrite changes it
    PRIMARY KEY (source_id, path)
);
CREATE TRIGGER log_sources_ad_files AFTER DELETE ON log_sources BEGIN
    DELETE FROM log_files WHERE source_id = old.id;
END;
ALTER TABLE log_sources ADD COLUMN problems TEXT NOT NULL DEFAULT '[]';
ALTER TABLE messages ADD COLUMN secrets INTEGER NOT NULL DEFAULT 0;
UPDATE log_sources SET fingerprint = NULL;
"""


@migrations()
def m001_documents(db: sqlite_utils.Database) -> None:
    db.executescript(DOCUMENTS_SQL)
    # filter_tokens lets the FTS engine itself apply kind/type/date filters
    # (the words of archivist/vocabulary.py): matches are narrowed before any ranking.
    db.table("documents").enable_fts(
        ["title", "body", "filter_tokens"], fts_version="FTS5", tokenize="porter unicode61", create_triggers=True
    )


@migrations()
def m002_files_and_runs(db: sqlite_utils.Database) -> None:
    db.executescript(FILES_SQL)


@migrations()
def m003_reports_trigram(db: sqlite_utils.Database) -> None:
    db.executescript(REPORTS_TRIGRAM_SQL)


@migrations()
def m004_embeddings(db: sqlite_utils.Database) -> None:
    """llm's embeddings tables, made by llm's own migrations, and the chunks their vectors belong to."""
    _llm_embeddings_migrations().apply(db)
    db.executescript(CHUNKS_SQL)


@migrations()
def m005_filter_indexes(db: sqlite_utils.Database) -> None:
    """Filters that are not tied to one kind (semantic search's type and date filters)."""
    db.executescript(FILTER_INDEXES_SQL)


@migrations()
def m006_filter_words(db: sqlite_utils.Database) -> None:
    """Recompute every document's filter words: year words and kind/type/date combinations are new."""
    from archivist.documents import filter_tokens

    rows = db.execute("SELECT id, kind, type, month, day, product_id, tags FROM documents").fetchall()
    for id_, kind, type_, month, day, product_id, tags in rows:
        document = {
            "kind": kind,
            "type": type_,
            "month": month,
            "day": day,
            "product_id": product_id,
            "tags": json.loads(tags),
        }
        db.execute("UPDATE documents SET filter_tokens = ? WHERE id = ?", [filter_tokens(document), id_])


@migrations()
def m007_path_index(db: sqlite_utils.Database) -> None:
    """Documents are looked up by path (find_document, similar, search's similar mode)."""
    db.execute("CREATE INDEX documents_path ON documents (path)")


@migrations()
def m008_filters_by_time(db: sqlite_utils.Database) -> None:
    db.executescript(FILTERS_BY_TIME_SQL)


@migrations()
def m009_kind_day_index(db: sqlite_utils.Database) -> None:
    """Activity per day (the activity query) counts from an index, as per month does."""
    db.execute("CREATE INDEX documents_kind_day ON documents (kind, day)")


@migrations()
def m010_problems(db: sqlite_utils.Database) -> None:
    db.executescript(PROBLEMS_SQL)


@migrations()
def m011_workspace_root(db: sqlite_utils.Database) -> None:
    db.executescript(WORKSPACE_ROOT_SQL)


@migrations()
def m012_log_sources(db: sqlite_utils.Database) -> None:
    db.executescript(LOG_SOURCES_SQL)
    # each message's text searchable on its own, so that a hit names its message
    db.table("messages").enable_fts(["text"], fts_version="FTS5", tokenize="porter unicode61", create_triggers=True)


@migrations()
def m013_message_index(db: sqlite_utils.Database) -> None:
    """Message-level search with filters, and JSONL logs read from where they stopped.

    The sources are read again by the next ``archivist index`` (their fingerprints are
    cleared), which fills the message index and shortens the sessions' bodies.
    """
    db.executescript(MESSAGE_INDEX_SQL)


# The documents' full-text index, kept by triggers, can wait while an index run stores
# many new documents: FTS5 writes out the terms it holds at every statement that may
# need undoing on its own (each insert into documents, with its triggers, is one), so
# that storing notes one at a time wrote one small segment each. While ``fts_deferred``
# has its row, a new document is listed in ``fts_pending`` instead, and the run adds
# them all in one statement before it commits (``database.Database.deferred_fts``). A
# pending document that is changed or deleted first is not in the index to be taken out.
DEFERRED_FTS_SQL = """
CREATE TABLE fts_deferred (id INTEGER PRIMARY KEY CHECK (id = 1));
CREATE TABLE fts_pending (id INTEGER PRIMARY KEY);
DROP TRIGGER documents_ai;
DROP TRIGGER documents_ad;
DROP TRIGGER documents_au;
CREATE TRIGGER documents_ai AFTER INSERT ON documents BEGIN
    INSERT INTO documents_fts (rowid, title, body, filter_tokens)
        SELECT new.rowid, new.title, new.body, new.filter_tokens WHERE NOT EXISTS (SELECT 1 FROM fts_deferred);
    INSERT INTO fts_pending (id) SELECT new.rowid WHERE EXISTS (SELECT 1 FROM fts_deferred);
END;
CREATE TRIGGER documents_ad AFTER DELETE ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, title, body, filter_tokens)
        SELECT 'delete', old.rowid, old.title, old.body, old.filter_tokens
        WHERE NOT EXISTS (SELECT 1 FROM fts_pending WHERE id = old.rowid);
    DELETE FROM fts_pending WHERE id = old.rowid;
END;
CREATE TRIGGER documents_au AFTER UPDATE ON documents
WHEN NOT EXISTS (SELECT 1 FROM fts_pending WHERE id = old.rowid) BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, title, body, filter_tokens)
        VALUES ('delete', old.rowid, old.title, old.body, old.filter_tokens);
    INSERT INTO documents_fts (rowid, title, body, filter_tokens)
        VALUES (new.rowid, new.title, new.body, new.filter_tokens);
END;
"""


@migrations()
def m014_deferred_fts(db: sqlite_utils.Database) -> None:
    db.executescript(DEFERRED_FTS_SQL)


# What a message used (the tokens of the model response it is: NULL where the log records
# none) and what was attached to it (images, files: their type, name and size, never their
# data). The sources are read again (sessions.LAYOUT), which fills them.
MESSAGE_USAGE_SQL = """
ALTER TABLE messages ADD COLUMN input_tokens INTEGER;
ALTER TABLE messages ADD COLUMN output_tokens INTEGER;
ALTER TABLE messages ADD COLUMN cache_write_tokens INTEGER;
ALTER TABLE messages ADD COLUMN cache_read_tokens INTEGER;
ALTER TABLE messages ADD COLUMN cost REAL;
ALTER TABLE messages ADD COLUMN attachments TEXT NOT NULL DEFAULT '[]';
"""


@migrations()
def m015_message_usage(db: sqlite_utils.Database) -> None:
    db.executescript(MESSAGE_USAGE_SQL)


# What a response cost at the price data's prices (archive.prices; NULL where the data does
# not know its model), and an index that holds all a usage report reads of the messages that
# carry usage, so that a year of them by day is one scan of it.
MESSAGE_PRICE_SQL = """
ALTER TABLE messages ADD COLUMN price REAL;
CREATE INDEX messages_usage ON messages (
    timestamp, model, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, price, cost, document_id
) WHERE input_tokens IS NOT NULL;
CREATE VIEW price_data AS
    SELECT value AS version FROM archive_meta WHERE key = 'price_data';
"""


@migrations()
def m016_message_price(db: sqlite_utils.Database) -> None:
    db.executescript(MESSAGE_PRICE_SQL)


# What the usage and file-history queries read, kept beside the messages so that a year of a
# heavy user's history is a scan of a few thousand rows, not of every message:
# - usage_hours: each session's responses that carry usage, summed by the hour (UTC) and the
#   model (the session's agent and project with them); rewritten with the session's messages
#   (archive.sessions), every price again when the price data changes (archive.prices);
# - file_calls: each file a tool call names, by its path and by its name (the path's last
#   part), pointing at the message and the call; a message's go with it.
ROLLUPS_SQL = """
CREATE TABLE usage_hours (
    document_id INTEGER NOT NULL,
    hour TEXT,  -- 2025-11-20T09: the hour of the responses' time (else the session's start)
    model TEXT,
    agent TEXT,
    project TEXT,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL,
    price REAL,
    priced INTEGER NOT NULL,  -- the responses with a price
    cost REAL,
    responses INTEGER NOT NULL,
    first TEXT,
    last TEXT
);
CREATE INDEX usage_hours_hour ON usage_hours (
    hour, document_id, model, agent, project, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens,
    price, priced, cost, responses, first, last
);  -- (all a usage report reads: a range of hours is one scan of the index)
CREATE INDEX usage_hours_document ON usage_hours (document_id);
CREATE TABLE file_calls (
    message_id INTEGER NOT NULL,
    call INTEGER NOT NULL,  -- the call's place in its message's tool_calls
    file TEXT NOT NULL,  -- as the call named it, with / for \\
    name TEXT NOT NULL  -- its last part
);
CREATE INDEX file_calls_file ON file_calls (file, message_id);
CREATE INDEX file_calls_name ON file_calls (name, message_id);
CREATE INDEX file_calls_message ON file_calls (message_id);
CREATE TRIGGER messages_ad_files AFTER DELETE ON messages BEGIN
    DELETE FROM file_calls WHERE message_id = old.id;
END;
CREATE TRIGGER documents_ad_usage AFTER DELETE ON documents BEGIN
    DELETE FROM usage_hours WHERE document_id = old.id;
END;
"""

# The rollups of what an archive holds already (sessions stored before them).
FILL_ROLLUPS_SQL = """
INSERT INTO file_calls (message_id, call, file, name)
SELECT id, call, file, substr(file, length(rtrim(file, replace(file, '/', ''))) + 1)
FROM (
    SELECT m.id AS id, c.key AS call, replace(f.value, '\\', '/') AS file
    FROM messages m, json_each(m.tool_calls) c, json_each(c.value, '$.files') f
    WHERE m.tool_calls != '[]' AND f.type = 'text'
);
"""


@migrations()
def m017_rollups(db: sqlite_utils.Database) -> None:
    db.executescript(ROLLUPS_SQL)
    db.executescript(FILL_ROLLUPS_SQL)
    from archivist.archive.rollups import USAGE_HOURS_SQL

    db.execute(f"INSERT INTO usage_hours {USAGE_HOURS_SQL.format(documents='SELECT id FROM documents')}")


# What the activity queries read:
# - message_hours: each session's messages (every role) counted by the hour (UTC: of the
#   message's time, else the session's start), with the session's agent and project, so that
#   sessions and messages per day or week over a range are a scan of its index; rewritten with
#   the session's messages, as usage_hours is (archive.rollups);
# - command_calls: each command a tool call ran, pointing at the message and the call (as
#   file_calls does a file), so that a project's commands are a range of its index; a message's
#   go with it. Filled here from the messages an archive holds.
ACTIVITY_ROLLUPS_SQL = """
CREATE TABLE message_hours (
    document_id INTEGER NOT NULL,
    hour TEXT,  -- 2025-11-20T09: the hour of the messages' time (else the session's start)
    agent TEXT,
    project TEXT,
    messages INTEGER NOT NULL
);
CREATE INDEX message_hours_hour ON message_hours (hour, agent, project, document_id, messages);
CREATE INDEX message_hours_document ON message_hours (document_id);
CREATE TRIGGER documents_ad_message_hours AFTER DELETE ON documents BEGIN
    DELETE FROM message_hours WHERE document_id = old.id;
END;
CREATE TABLE command_calls (
    message_id INTEGER NOT NULL,
    call INTEGER NOT NULL,  -- the call's place in its message's tool_calls
    command TEXT NOT NULL  -- as the call ran it
);
CREATE INDEX command_calls_message ON command_calls (message_id, command);
CREATE TRIGGER messages_ad_commands AFTER DELETE ON messages BEGIN
    DELETE FROM command_calls WHERE message_id = old.id;
END;
INSERT INTO command_calls (message_id, call, command)
SELECT m.id, c.key, cmd.value
FROM messages m, json_each(m.tool_calls) c, json_each(c.value, '$.commands') cmd
WHERE m.tool_calls != '[]' AND cmd.type = 'text';
"""


@migrations()
def m018_activity_rollups(db: sqlite_utils.Database) -> None:
    db.executescript(ACTIVITY_ROLLUPS_SQL)
    from archivist.archive.rollups import MESSAGE_HOURS_ROWS_SQL

    db.execute(f"INSERT INTO message_hours {MESSAGE_HOURS_ROWS_SQL.format(documents='SELECT id FROM documents')}")


BUILDING_SQL = """
CREATE VIEW archive_building AS
    SELECT value FROM archive_meta WHERE key = 'building';
"""


@migrations()
def m019_archive_building(db: sqlite_utils.Database) -> None:
    """What the canned queries read of a run still storing agent logs (``archive.building``)."""
    db.executescript(BUILDING_SQL)


@migrations()
def m020_cache_write_1h(db: sqlite_utils.Database) -> None:
    """Of a response's tokens written to the cache, those written for an hour (priced higher)."""
    db.execute("ALTER TABLE messages ADD COLUMN cache_write_1h_tokens INTEGER")


@migrations()
def m021_file_changes(db: sqlite_utils.Database) -> None:
    """Whether a tool call changed the file it names (its ``edits``), so that a file's history can
    list its changes alone. The sources are read again (sessions.LAYOUT), which fills it."""
    db.execute("ALTER TABLE file_calls ADD COLUMN changed INTEGER NOT NULL DEFAULT 0")


PACK_BATCH = 2000  # messages read and packed at a time (``m022_packed_texts``)
MESSAGE_TEXTS_SQL = """
CREATE VIEW message_texts AS
    SELECT id, document_id, seq, role, timestamp, model, text,
        archivist_text(thinking) AS thinking, archivist_text(tool_output) AS tool_output
    FROM messages;
"""


@migrations()
def m022_packed_texts(db: sqlite_utils.Database) -> None:
    """A message's long thinking and tool output packed (``archive.packed``), as a new archive
    stores them: the messages are read in order of id, ``PACK_BATCH`` at a time. The space the
    texts leave is reused by what is written next (``VACUUM`` gives it back to the disk). The view
    ``message_texts`` shows a message's texts unpacked, for Datasette's JSON."""
    from archivist.archive import packed

    db.executescript(MESSAGE_TEXTS_SQL)
    columns = packed.PACKED_COLUMNS
    unpacked = " OR ".join(f"(typeof({name}) = 'text' AND length({name}) >= {packed.SHORTEST})" for name in columns)
    after = -1
    while True:
        rows = db.execute(
            f"SELECT id, {', '.join(columns)} FROM messages WHERE id > ? AND ({unpacked}) ORDER BY id LIMIT ?",
            [after, PACK_BATCH],
        ).fetchall()
        if not rows:
            return
        db.conn.executemany(
            f"UPDATE messages SET {', '.join(f'{name} = ?' for name in columns)} WHERE id = ?",
            [[*(packed.packed(value) for value in values), id_] for id_, *values in rows],
        )
        after = rows[-1][0]


HOSTS_SQL = """
ALTER TABLE log_sources ADD COLUMN host TEXT;
CREATE TABLE hosts (
    host TEXT PRIMARY KEY,
    synced_at TEXT,
    files INTEGER NOT NULL DEFAULT 0,
    problem TEXT
);
"""


@migrations()
def m023_hosts(db: sqlite_utils.Database) -> None:
    """The machine each source is on (``log_sources.host``: NULL for this one), and each other
    machine synced over SSH (``archivist.hosts``) with its last sync and what failed of it."""
    db.executescript(HOSTS_SQL)


def _llm_embeddings_migrations() -> Any:
    """llm's migrations of its embeddings tables, read without importing llm.

    Importing ``llm`` takes a third of a second (it loads its plugins and models);
    its migrations module needs only sqlite-utils.
    """
    spec = importlib.util.find_spec("llm")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("llm is not installed")
    path = next(iter(spec.submodule_search_locations)) + "/embeddings_migrations.py"
    module_spec = importlib.util.spec_from_file_location("_archivist_llm_embeddings_migrations", path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"cannot read {path}")
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module.embeddings_migrations


def snapshot() -> str:
    """The SQL that makes a new archive as every migration, applied in turn, makes it.

    Written to ``new_archive.sql`` (``python -m archivist.archive.migrations``), so that a
    new archive is one script and none of this module; a test checks that the file is
    this text.
    """
    conn = sqlite3.connect(":memory:")
    migrations.apply(sqlite_utils.Database(conn))
    shadow = {row[0] for row in conn.execute("SELECT name FROM pragma_table_list WHERE type = 'shadow'")}
    objects = [
        (type_, name, sql)
        for type_, name, sql in conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid"
        )
        if not name.startswith("sqlite_") and name not in shadow
    ]
    lines = ["-- Made by python -m archivist.archive.migrations: do not edit.", "BEGIN;"]
    lines += [f"{sql};" for _, _, sql in objects]
    for type_, name, sql in objects:
        if type_ != "table" or sql.upper().startswith("CREATE VIRTUAL"):
            continue
        columns = [row[1] for row in conn.execute("SELECT * FROM pragma_table_info(?)", [name])]
        values = " || ',' || ".join(f'quote("{column}")' for column in columns)
        for (row,) in conn.execute(f'SELECT {values} FROM "{name}" ORDER BY rowid'):
            lines.append(f'INSERT INTO "{name}" VALUES ({row});')
    lines.append("COMMIT;")
    conn.close()
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(snapshot(), end="")
