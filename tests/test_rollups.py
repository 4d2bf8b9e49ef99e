"""The rollups the usage and file-history queries read stay what the messages say: when stored,
read on, removed, priced again, and when an archive written before them is upgraded."""

from __future__ import annotations

import shutil

import sqlite_utils
from conftest import sample_source, write_files
from test_agentlog_appends_codex import SAMPLE as CODEX_ROLLOUT

from archivist.archive import migrations, rollups, sessions
from archivist.archive.database import Database
from archivist.archive.indexer import index_workspace
from archivist.archive.migrations import FILL_ROLLUPS_SQL
from archivist.workspace import archive_path

KINDS = ("claude-code", "codex", "cursor", "aider", "opencode", "gemini-cli")
FILES_SQL = """
SELECT m.id, c.key, replace(f.value, '\\', '/') FROM messages m, json_each(m.tool_calls) c, json_each(c.value, '$.files') f
ORDER BY 1, 2, 3
"""
USAGE_SQL = (
    "SELECT document_id, hour, model, agent, project, input_tokens, output_tokens, cache_write_tokens, "
    "cache_read_tokens, round(price, 9), priced, cost, responses, first, last FROM usage_hours ORDER BY 1, 2, 3"
)


def expected_usage(db) -> list[tuple]:
    return db.execute(
        f"SELECT * FROM ({rollups.USAGE_HOURS_SQL.format(documents='SELECT id FROM documents')}) ORDER BY 1, 2, 3"
    ).fetchall()


MESSAGE_HOURS_SQL = "SELECT document_id, hour, agent, project, messages FROM message_hours ORDER BY 1, 2"
# each session's messages by the hour, counted from the messages as they are
COUNTED_SQL = """
SELECT m.document_id, substr(coalesce(m.timestamp, d.extra ->> '$.started'), 1, 13) AS hour,
       coalesce(d.extra ->> '$.agent', d.type), d.extra ->> '$.project', count(*)
FROM messages m JOIN documents d ON d.id = m.document_id GROUP BY 1, 2 ORDER BY 1, 2
"""


COMMANDS_SQL = """
SELECT m.id, c.key, cmd.value FROM messages m, json_each(m.tool_calls) c, json_each(c.value, '$.commands') cmd
ORDER BY 1, 2, 3
"""


def state(path) -> tuple[list[tuple], ...]:
    db = sqlite_utils.Database(path)
    return (
        db.execute("SELECT message_id, call, file FROM file_calls ORDER BY 1, 2, 3").fetchall(),
        db.execute(USAGE_SQL).fetchall(),
        db.execute(MESSAGE_HOURS_SQL).fetchall(),
        db.execute("SELECT message_id, call, command FROM command_calls ORDER BY 1, 2, 3").fetchall(),
    )


def assert_current(path) -> None:
    db = sqlite_utils.Database(path)
    files, usage, hours, commands = state(path)
    assert files == db.execute(FILES_SQL).fetchall()
    assert commands == db.execute(COMMANDS_SQL).fetchall()
    assert usage == [
        (*row[:9], round(row[9], 9) if row[9] is not None else None, *row[10:]) for row in expected_usage(db)
    ]
    assert hours == db.execute(COUNTED_SQL).fetchall()


def test_the_rollups_are_the_messages_when_stored_and_when_a_source_is_removed(tmp_path):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[(kind, sample_source(kind)) for kind in KINDS])
    path = archive_path(workspace)
    assert_current(path)
    files, usage, hours, commands = state(path)
    assert len(files) > 10 and len(usage) > 5 and len(hours) > len(usage) and len(commands) > 3
    db = Database(path)
    with db.atomic():
        sessions.remove(db, "codex", sample_source("codex"))
    db.close()
    assert_current(path)
    assert len(state(path)[1]) < len(usage)


def test_a_rollout_read_on_keeps_them_as_a_whole_read_does(tmp_path):
    lines = CODEX_ROLLOUT.read_text(encoding="utf-8").splitlines(keepends=True)
    logs = tmp_path / "logs" / "2025" / "11" / "20"
    logs.mkdir(parents=True)
    rollout = logs / CODEX_ROLLOUT.name
    rollout.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[("codex", tmp_path / "logs")])
    with rollout.open("a", encoding="utf-8") as handle:
        handle.write("".join(lines[len(lines) // 2 :]))
    index_workspace(workspace)
    assert_current(archive_path(workspace))


def test_an_archive_written_before_them_is_filled_by_its_upgrade(tmp_path):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[(kind, sample_source(kind)) for kind in KINDS])
    before = state(archive_path(workspace))
    copy = tmp_path / "copy.db"
    shutil.copy(archive_path(workspace), copy)
    db = sqlite_utils.Database(copy)
    db.execute("DELETE FROM file_calls")
    db.execute("DELETE FROM usage_hours")
    db.executescript(FILL_ROLLUPS_SQL)  # what migration 17 does with the messages it finds
    db.execute(f"INSERT INTO usage_hours {rollups.USAGE_HOURS_SQL.format(documents='SELECT id FROM documents')}")
    for table, trigger in (("message_hours", "documents_ad_message_hours"), ("command_calls", "messages_ad_commands")):
        db.execute(f"DROP TABLE {table}")  # and what migration 18 does
        db.execute(f"DROP TRIGGER {trigger}")
    migrations.m018_activity_rollups(db)
    db.conn.commit()
    assert state(copy) == before
