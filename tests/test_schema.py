"""A new archive made from new_archive.sql is the archive the migrations make, and its version is recorded."""

import sqlite_utils

from archivist.archive import schema
from archivist.archive.database import sqlite3
from archivist.archive.migrations import migrations, snapshot


def _contents(conn):
    """Every schema object, and every row of every plain table (when a migration ran left aside)."""
    objects = sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"))
    rows = {}
    for (name,) in conn.execute("SELECT name FROM pragma_table_list WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"):
        columns = [c[1] for c in conn.execute("SELECT * FROM pragma_table_info(?)", [name]) if c[1] != "applied_at"]
        rows[name] = sorted(conn.execute(f'SELECT {", ".join(columns)} FROM "{name}"').fetchall(), key=repr)
    return objects, rows


def test_the_schema_version_is_the_number_of_migrations():
    assert len(migrations.pending(sqlite_utils.Database(memory=True))) == schema.SCHEMA_VERSION


def test_a_new_archive_is_what_the_migrations_make(tmp_path):
    made = schema.open_archive(tmp_path / "new.db")
    migrated = sqlite3.connect(tmp_path / "migrated.db")
    migrations.apply(sqlite_utils.Database(migrated))
    assert _contents(made.conn) == _contents(migrated)
    assert schema.schema_version(made.conn) == schema.SCHEMA_VERSION
    assert not migrations.pending(sqlite_utils.Database(made.conn))


def test_new_archive_sql_is_current():
    """Run ``python -m archivist.archive.migrations > archivist/build/new_archive.sql`` after adding a migration."""
    written = schema.NEW_ARCHIVE_SQL.read_text(encoding="utf-8")
    strip = lambda text: [line for line in text.splitlines() if '_sqlite_migrations" VALUES' not in line]  # noqa: E731
    assert strip(written) == strip(snapshot())
    names = [line.split(",")[1:3] for line in written.splitlines() if '_sqlite_migrations" VALUES' in line]
    assert names == [line.split(",")[1:3] for line in snapshot().splitlines() if '_sqlite_migrations" VALUES' in line]


def test_an_archive_that_recorded_no_version_is_brought_up_to_date_and_recorded(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    migrations.apply(sqlite_utils.Database(conn), stop_before="m013_message_index")
    conn.close()
    assert schema.archive_problem(sqlite3.connect(path)) == "older"
    db = schema.open_archive(path)
    assert db.exists("message_index") and schema.schema_version(db.conn) == schema.SCHEMA_VERSION
    assert schema.archive_problem(db) is None
