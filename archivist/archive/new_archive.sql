-- Made by python -m archivist.archive.migrations: do not edit.
BEGIN;
CREATE TABLE "_sqlite_migrations" (
   "id" INTEGER PRIMARY KEY,
   "migration_set" TEXT,
   "name" TEXT,
   "applied_at" TEXT
);
CREATE UNIQUE INDEX "idx__sqlite_migrations_migration_set_name"
    ON "_sqlite_migrations" ("migration_set", "name");
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
CREATE VIRTUAL TABLE "documents_fts" USING FTS5 (
    "title", "body", "filter_tokens",
    tokenize='porter unicode61',
    content="documents"
);
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
CREATE TABLE "collections" (
   "id" INTEGER PRIMARY KEY,
   "name" TEXT,
   "model" TEXT
);
CREATE UNIQUE INDEX "idx_collections_name"
    ON "collections" ("name");
CREATE TABLE "embeddings" (
   "collection_id" INTEGER REFERENCES "collections"("id"),
   "id" TEXT,
   "embedding" BLOB,
   "content" TEXT,
   "content_blob" BLOB,
   "content_hash" BLOB,
   "metadata" TEXT,
   "updated" INTEGER,
   PRIMARY KEY ("collection_id", "id")
);
CREATE INDEX "idx_embeddings_content_hash"
    ON "embeddings" ("content_hash");
CREATE TABLE chunks (
    id TEXT PRIMARY KEY,
    document_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    content_hash BLOB NOT NULL
);
CREATE INDEX chunks_document ON chunks (document_id);
CREATE INDEX documents_month ON documents (month);
CREATE INDEX documents_day ON documents (day);
CREATE INDEX documents_type ON documents (type);
CREATE INDEX documents_path ON documents (path);
CREATE VIRTUAL TABLE filters_by_time USING fts5(
    filter_tokens, content='', detail=none, columnsize=0, tokenize='unicode61'
);
CREATE TRIGGER filters_by_time_ai AFTER INSERT ON documents BEGIN
    INSERT INTO filters_by_time (rowid, filter_tokens) VALUES ((CASE WHEN new.timestamp IS NULL THEN new.id ELSE (CAST(new.timestamp AS INTEGER) + 1) * 67108864 + new.id END), new.filter_tokens);
END;
CREATE TRIGGER filters_by_time_ad AFTER DELETE ON documents BEGIN
    INSERT INTO filters_by_time (filters_by_time, rowid, filter_tokens)
        VALUES ('delete', (CASE WHEN old.timestamp IS NULL THEN old.id ELSE (CAST(old.timestamp AS INTEGER) + 1) * 67108864 + old.id END), old.filter_tokens);
END;
CREATE TRIGGER filters_by_time_au AFTER UPDATE ON documents BEGIN
    INSERT INTO filters_by_time (filters_by_time, rowid, filter_tokens)
        VALUES ('delete', (CASE WHEN old.timestamp IS NULL THEN old.id ELSE (CAST(old.timestamp AS INTEGER) + 1) * 67108864 + old.id END), old.filter_tokens);
    INSERT INTO filters_by_time (rowid, filter_tokens) VALUES ((CASE WHEN new.timestamp IS NULL THEN new.id ELSE (CAST(new.timestamp AS INTEGER) + 1) * 67108864 + new.id END), new.filter_tokens);
END;
CREATE INDEX documents_kind_day ON documents (kind, day);
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
CREATE VIEW index_problems AS
    SELECT path, status, reason FROM problems ORDER BY path, id;
CREATE VIEW workspace_root AS
    SELECT value AS path FROM archive_meta WHERE key = 'workspace_root';
CREATE TABLE log_sources (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    path TEXT NOT NULL,
    added_at TEXT NOT NULL,
    read_at TEXT,
    fingerprint TEXT, problems TEXT NOT NULL DEFAULT '[]', host TEXT,
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
, secrets INTEGER NOT NULL DEFAULT 0, input_tokens INTEGER, output_tokens INTEGER, cache_write_tokens INTEGER, cache_read_tokens INTEGER, cost REAL, attachments TEXT NOT NULL DEFAULT '[]', price REAL, cache_write_1h_tokens INTEGER);
CREATE UNIQUE INDEX messages_document ON messages (document_id, seq);
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
CREATE TABLE fts_deferred (id INTEGER PRIMARY KEY CHECK (id = 1));
CREATE TABLE fts_pending (id INTEGER PRIMARY KEY);
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
CREATE INDEX messages_usage ON messages (
    timestamp, model, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, price, cost, document_id
) WHERE input_tokens IS NOT NULL;
CREATE VIEW price_data AS
    SELECT value AS version FROM archive_meta WHERE key = 'price_data';
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
);
CREATE INDEX usage_hours_document ON usage_hours (document_id);
CREATE TABLE file_calls (
    message_id INTEGER NOT NULL,
    call INTEGER NOT NULL,  -- the call's place in its message's tool_calls
    file TEXT NOT NULL,  -- as the call named it, with / for \
    name TEXT NOT NULL  -- its last part
, changed INTEGER NOT NULL DEFAULT 0);
CREATE INDEX file_calls_file ON file_calls (file, message_id);
CREATE INDEX file_calls_name ON file_calls (name, message_id);
CREATE INDEX file_calls_message ON file_calls (message_id);
CREATE TRIGGER messages_ad_files AFTER DELETE ON messages BEGIN
    DELETE FROM file_calls WHERE message_id = old.id;
END;
CREATE TRIGGER documents_ad_usage AFTER DELETE ON documents BEGIN
    DELETE FROM usage_hours WHERE document_id = old.id;
END;
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
CREATE VIEW archive_building AS
    SELECT value FROM archive_meta WHERE key = 'building';
CREATE VIEW message_texts AS
    SELECT id, document_id, seq, role, timestamp, model, text,
        archivist_text(thinking) AS thinking, archivist_text(tool_output) AS tool_output
    FROM messages;
CREATE TABLE hosts (
    host TEXT PRIMARY KEY,
    synced_at TEXT,
    files INTEGER NOT NULL DEFAULT 0,
    problem TEXT
);
INSERT INTO "_sqlite_migrations" VALUES (1,'archivist','m001_documents','2026-12-02 08:54:13.225768+00:00');
INSERT INTO "_sqlite_migrations" VALUES (2,'archivist','m002_files_and_runs','2026-12-02 08:54:13.227464+00:00');
INSERT INTO "_sqlite_migrations" VALUES (3,'archivist','m003_reports_trigram','2026-12-02 08:54:13.228753+00:00');
INSERT INTO "_sqlite_migrations" VALUES (4,'llm.embeddings','m001_create_tables','2026-12-02 08:54:13.229889+00:00');
INSERT INTO "_sqlite_migrations" VALUES (5,'llm.embeddings','m002_foreign_key','2026-12-02 08:54:13.236680+00:00');
INSERT INTO "_sqlite_migrations" VALUES (6,'llm.embeddings','m003_add_updated','2026-12-02 08:54:13.239148+00:00');
INSERT INTO "_sqlite_migrations" VALUES (7,'llm.embeddings','m004_store_content_hash','2026-12-02 08:54:13.241522+00:00');
INSERT INTO "_sqlite_migrations" VALUES (8,'llm.embeddings','m005_add_content_blob','2026-12-02 08:54:13.243724+00:00');
INSERT INTO "_sqlite_migrations" VALUES (9,'archivist','m004_embeddings','2026-12-02 08:54:13.244156+00:00');
INSERT INTO "_sqlite_migrations" VALUES (10,'archivist','m005_filter_indexes','2026-12-02 08:54:13.246116+00:00');
INSERT INTO "_sqlite_migrations" VALUES (11,'archivist','m006_filter_words','2026-12-02 08:54:13.279909+00:00');
INSERT INTO "_sqlite_migrations" VALUES (12,'archivist','m007_path_index','2026-12-02 08:54:13.280207+00:00');
INSERT INTO "_sqlite_migrations" VALUES (13,'archivist','m008_filters_by_time','2026-12-02 08:54:13.285294+00:00');
INSERT INTO "_sqlite_migrations" VALUES (14,'archivist','m009_kind_day_index','2026-12-02 08:54:13.285512+00:00');
INSERT INTO "_sqlite_migrations" VALUES (15,'archivist','m010_problems','2026-12-02 08:54:13.286028+00:00');
INSERT INTO "_sqlite_migrations" VALUES (16,'archivist','m011_workspace_root','2026-12-02 08:54:13.286174+00:00');
INSERT INTO "_sqlite_migrations" VALUES (17,'archivist','m012_log_sources','2026-12-02 08:54:13.288142+00:00');
INSERT INTO "_sqlite_migrations" VALUES (18,'archivist','m013_message_index','2026-12-02 08:54:13.295294+00:00');
INSERT INTO "_sqlite_migrations" VALUES (19,'archivist','m014_deferred_fts','2026-12-02 08:54:13.297276+00:00');
INSERT INTO "_sqlite_migrations" VALUES (20,'archivist','m015_message_usage','2026-12-02 08:54:13.299182+00:00');
INSERT INTO "_sqlite_migrations" VALUES (21,'archivist','m016_message_price','2026-12-02 08:54:13.299847+00:00');
INSERT INTO "_sqlite_migrations" VALUES (22,'archivist','m017_rollups','2026-12-02 08:54:13.306990+00:00');
INSERT INTO "_sqlite_migrations" VALUES (23,'archivist','m018_activity_rollups','2026-12-02 08:54:13.308170+00:00');
INSERT INTO "_sqlite_migrations" VALUES (24,'archivist','m019_archive_building','2026-12-02 08:54:13.308429+00:00');
INSERT INTO "_sqlite_migrations" VALUES (25,'archivist','m020_cache_write_1h','2026-12-02 08:54:13.309029+00:00');
INSERT INTO "_sqlite_migrations" VALUES (26,'archivist','m021_file_changes','2026-12-02 08:54:13.309454+00:00');
INSERT INTO "_sqlite_migrations" VALUES (27,'archivist','m022_packed_texts','2026-12-02 08:54:13.310046+00:00');
INSERT INTO "_sqlite_migrations" VALUES (28,'archivist','m023_hosts','2026-12-02 08:54:13.310611+00:00');
COMMIT;
