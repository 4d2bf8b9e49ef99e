"""What the usage, activity and file-history queries read, kept beside a session's messages
(migrations 17 and 18).

``usage_hours`` sums a session's responses that carry usage by the hour (UTC: of the
message's time, else of the session's start) and the model (the message's, else the
session's last), with the session's agent and project: a year of usage is a scan of a few
thousand rows. ``file_calls`` names each file a tool call names, by its path (``\\`` as
``/``) and by its name (its last part), with the message and the call's place in it: a
file's history is an index lookup. ``message_hours`` counts a session's messages (every
role) by the hour, with its agent and project: sessions and messages per day or week;
``command_calls`` names each command a tool call ran, with its message: a project's commands
are a range of an index, not its sessions' messages read whole. All are written when a
session's messages are (``archive.sessions``): the session's usage and message rows again, a
message's files and commands with it; a message deleted takes its files and commands, a
document its usage and message counts.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archivist.archive.database import Database

# the usage rows of the documents that {documents} (a SELECT of ids) names
USAGE_HOURS_SQL = """
SELECT m.document_id, substr(coalesce(m.timestamp, d.extra ->> '$.started'), 1, 13),
       coalesce(m.model, d.extra ->> '$.models[#-1]'), coalesce(d.extra ->> '$.agent', d.type),
       d.extra ->> '$.project',
       sum(m.input_tokens), sum(m.output_tokens), sum(m.cache_write_tokens), sum(m.cache_read_tokens),
       sum(m.price), count(m.price), sum(m.cost), count(*),
       min(coalesce(m.timestamp, d.extra ->> '$.started')), max(coalesce(m.timestamp, d.extra ->> '$.started'))
FROM messages m JOIN documents d ON d.id = m.document_id
WHERE m.document_id IN ({documents}) AND m.input_tokens IS NOT NULL
GROUP BY m.document_id, 2, 3
"""
# the message counts by the hour of the documents that {documents} names (every role)
MESSAGE_HOURS_ROWS_SQL = """
SELECT m.document_id, substr(coalesce(m.timestamp, d.extra ->> '$.started'), 1, 13),
       coalesce(d.extra ->> '$.agent', d.type), d.extra ->> '$.project', count(*)
FROM messages m JOIN documents d ON d.id = m.document_id
WHERE m.document_id IN ({documents})
GROUP BY m.document_id, 2
"""
DELETE_USAGE_SQL = "DELETE FROM usage_hours WHERE document_id = ?"
DELETE_MESSAGE_HOURS_SQL = "DELETE FROM message_hours WHERE document_id = ?"
INSERT_FILE_SQL = "INSERT INTO file_calls (message_id, call, file, name) VALUES (?, ?, ?, ?)"
INSERT_COMMAND_SQL = "INSERT INTO command_calls (message_id, call, command) VALUES (?, ?, ?)"


def write_hours(db: Database, document_id: int) -> None:
    """A session's usage rows and its message counts by the hour, written again from its messages."""
    db.execute(DELETE_USAGE_SQL, [document_id])
    db.execute(f"INSERT INTO usage_hours {USAGE_HOURS_SQL.format(documents='?')}", [document_id])
    db.execute(DELETE_MESSAGE_HOURS_SQL, [document_id])
    db.execute(f"INSERT INTO message_hours {MESSAGE_HOURS_ROWS_SQL.format(documents='?')}", [document_id])


def write_all_usage(db: Database) -> None:
    """Every session's usage rows, written again (the messages were priced again)."""
    db.execute("DELETE FROM usage_hours")
    db.execute(f"INSERT INTO usage_hours {USAGE_HOURS_SQL.format(documents='SELECT id FROM documents')}")


def write_calls(db: Database, messages: list[dict[str, Any]]) -> None:
    """The files and the commands the tool calls of these ``messages`` rows name (their ``id`` and
    ``tool_calls``)."""
    files, commands = [], []
    for message in messages:
        if message["tool_calls"] == "[]":
            continue
        for place, call in enumerate(json.loads(message["tool_calls"])):
            for file in call.get("files") or []:
                path = str(file).replace("\\", "/")
                files.append((message["id"], place, path, path.rsplit("/", 1)[-1]))
            for command in call.get("commands") or []:
                if isinstance(command, str):
                    commands.append((message["id"], place, command))
    if files:
        db.conn.executemany(INSERT_FILE_SQL, files)
    if commands:
        db.conn.executemany(INSERT_COMMAND_SQL, commands)
