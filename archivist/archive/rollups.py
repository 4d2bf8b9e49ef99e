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
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archivist.archive.database import Database

# what the rollups take of each session of those {documents} (a SELECT of ids) names: its start,
# last model, agent and project, apart (MATERIALIZED), so that a grouping's rows never carry the
# session's whole ``extra`` (SQLite sorts in memory here: a long session's rows would hold it each)
SESSIONS_CTE = """
WITH d AS MATERIALIZED (
    SELECT id, extra ->> '$.started' AS started, extra ->> '$.models[#-1]' AS last_model,
           coalesce(extra ->> '$.agent', type) AS agent, extra ->> '$.project' AS project
    FROM documents WHERE id IN ({documents})
)
"""
# the usage rows of the documents that {documents} names
USAGE_HOURS_SQL = (
    SESSIONS_CTE
    + """
SELECT m.document_id, substr(coalesce(m.timestamp, d.started), 1, 13), coalesce(m.model, d.last_model), d.agent,
       d.project,
       sum(m.input_tokens), sum(m.output_tokens), sum(m.cache_write_tokens), sum(m.cache_read_tokens),
       sum(m.price), count(m.price), sum(m.cost), count(*),
       min(coalesce(m.timestamp, d.started)), max(coalesce(m.timestamp, d.started))
FROM messages m JOIN d ON d.id = m.document_id
WHERE m.input_tokens IS NOT NULL
GROUP BY m.document_id, 2, 3
"""
)
# the message counts by the hour of the documents that {documents} names (every role)
MESSAGE_HOURS_ROWS_SQL = (
    SESSIONS_CTE
    + """
SELECT m.document_id, substr(coalesce(m.timestamp, d.started), 1, 13), d.agent, d.project, count(*)
FROM messages m JOIN d ON d.id = m.document_id
GROUP BY m.document_id, 2
"""
)
DELETE_USAGE_SQL = "DELETE FROM usage_hours WHERE document_id = ?"
DELETE_MESSAGE_HOURS_SQL = "DELETE FROM message_hours WHERE document_id = ?"
INSERT_USAGE_SQL = """
INSERT INTO usage_hours (
    document_id, hour, model, agent, project, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens,
    price, priced, cost, responses, first, last
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
INSERT_MESSAGE_HOURS_SQL = (
    "INSERT INTO message_hours (document_id, hour, agent, project, messages) VALUES (?, ?, ?, ?, ?)"
)
# a session's usage row of an hour and model, and its message count of an hour, with more added
ADD_USAGE_SQL = """
UPDATE usage_hours SET input_tokens = input_tokens + coalesce(:input, 0), output_tokens = output_tokens + coalesce(:output, 0),
    cache_write_tokens = cache_write_tokens + coalesce(:cache_write, 0),
    cache_read_tokens = cache_read_tokens + coalesce(:cache_read, 0),
    price = coalesce(price + :price, price, :price), priced = priced + :priced, cost = coalesce(cost + :cost, cost, :cost),
    responses = responses + :responses, first = coalesce(min(first, :first), first, :first),
    last = coalesce(max(last, :last), last, :last)
WHERE document_id = :document_id AND hour IS :hour AND model IS :model
"""
ADD_MESSAGE_HOURS_SQL = "UPDATE message_hours SET messages = messages + ? WHERE document_id = ? AND hour IS ?"
INSERT_FILE_SQL = "INSERT INTO file_calls (message_id, call, file, name, changed) VALUES (?, ?, ?, ?, ?)"
INSERT_COMMAND_SQL = "INSERT INTO command_calls (message_id, call, command) VALUES (?, ?, ?)"


def write_hours(db: Database, document_id: int) -> None:
    """A session's usage rows and its message counts by the hour, written again from its messages."""
    db.execute(DELETE_USAGE_SQL, [document_id])
    db.execute(f"INSERT INTO usage_hours {USAGE_HOURS_SQL.format(documents='?')}", [document_id])
    db.execute(DELETE_MESSAGE_HOURS_SQL, [document_id])
    db.execute(f"INSERT INTO message_hours {MESSAGE_HOURS_ROWS_SQL.format(documents='?')}", [document_id])


TOKEN_COLUMNS = ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")


def write_hours_of(db: Database, document_id: int, document: dict[str, Any], messages: list[dict[str, Any]]) -> None:
    """A session's usage rows and message counts by the hour, as ``write_hours`` writes them, made
    from its ``document`` row and ``messages`` rows, all of them, at hand: its messages are not
    read back (their numbers stand past their text in a row, on pages of their own)."""
    db.execute(DELETE_USAGE_SQL, [document_id])
    db.execute(DELETE_MESSAGE_HOURS_SQL, [document_id])
    usage, counts = hours_rows(document_id, document, messages)
    db.conn.executemany(INSERT_USAGE_SQL, usage)
    db.conn.executemany(INSERT_MESSAGE_HOURS_SQL, counts)


USAGE_ROW = (
    "document_id", "hour", "model", "agent", "project", "input", "output", "cache_write", "cache_read",
    "price", "priced", "cost", "responses", "first", "last",
)  # fmt: skip


def add_hours(db: Database, document_id: int, document: dict[str, Any], messages: list[dict[str, Any]]) -> None:
    """The usage rows and message counts by the hour of a session's ``messages`` rows that were
    not stored before (its other messages and its ``document`` row's start, last model, agent and
    project as they were when its rows were written: ``context``), added to the rows it has: an
    hour and model it has a row of gets their sums, a new one a row of its own."""
    usage, counts = hours_rows(document_id, document, messages)
    for row in usage:
        added = dict(zip(USAGE_ROW, row, strict=True))
        if not db.conn.execute(ADD_USAGE_SQL, added).rowcount:
            db.conn.execute(INSERT_USAGE_SQL, row)
    for _, hour, agent, project, count in counts:
        if not db.conn.execute(ADD_MESSAGE_HOURS_SQL, [count, document_id, hour]).rowcount:
            db.conn.execute(INSERT_MESSAGE_HOURS_SQL, [document_id, hour, agent, project, count])


def context(document: dict[str, Any]) -> tuple[str | None, ...]:
    """What a session's rollup rows take of its ``documents`` row besides its messages: its start
    (the hour of a message with no time), last model (of a response that names none), agent and project."""
    extra = json.loads(document["extra"]) if isinstance(document["extra"], str) else document["extra"]
    if not isinstance(extra, dict):
        extra = {}
    models = extra.get("models")
    agent = _text(extra.get("agent"))
    return (
        _text(extra.get("started")),
        _text(models[-1]) if isinstance(models, list) and models else None,
        agent if agent is not None else document["type"],
        _text(extra.get("project")),
    )


def hours_rows(
    document_id: int, document: dict[str, Any], messages: list[dict[str, Any]]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The ``usage_hours`` and ``message_hours`` rows of one session, as ``USAGE_HOURS_SQL`` and
    ``MESSAGE_HOURS_ROWS_SQL`` group them: by the hour of each message's time, else of the
    session's start, and for usage by the model, else the session's last."""
    started, last_model, agent, project = context(document)
    responses: dict[tuple[str | None, str | None], list[dict[str, Any]]] = {}
    counts: dict[str | None, int] = {}
    for message in messages:
        moment = message["timestamp"] if message["timestamp"] is not None else started
        hour = moment[:13] if moment is not None else None
        counts[hour] = counts.get(hour, 0) + 1
        if message["input_tokens"] is not None:
            model = message["model"] if message["model"] is not None else last_model
            responses.setdefault((hour, model), []).append(message)
    usage = []
    for (hour, model), group in responses.items():
        stamps = [m["timestamp"] if m["timestamp"] is not None else started for m in group]
        moments: list[str] = [moment for moment in stamps if moment is not None]
        prices = [m["price"] for m in group if m["price"] is not None]
        costs = [m["cost"] for m in group if m["cost"] is not None]
        usage.append(
            (
                document_id, hour, model, agent, project,
                *(_sum([m[column] for m in group]) for column in TOKEN_COLUMNS),
                math.fsum(prices) if prices else None, len(prices),
                math.fsum(costs) if costs else None, len(group),
                min(moments, default=None), max(moments, default=None),
            )
        )  # fmt: skip
    return usage, [(document_id, hour, agent, project, count) for hour, count in counts.items()]


def _sum(values: list[int | None]) -> int | None:
    """SQL's sum: of what is not null; null where nothing is."""
    present = [value for value in values if value is not None]
    return sum(present) if present else None


def _text(value: Any) -> str | None:
    """A value of ``extra`` as ``->>`` gives it where it is text, or None (the readers write text here)."""
    return value if isinstance(value, str) else None


def write_all_usage(db: Database) -> None:
    """Every session's usage rows, written again (the messages were priced again)."""
    db.execute("DELETE FROM usage_hours")
    db.execute(f"INSERT INTO usage_hours {USAGE_HOURS_SQL.format(documents='SELECT id FROM documents')}")


def write_calls(db: Database, messages: list[dict[str, Any]]) -> None:
    """The files and the commands the tool calls of these ``messages`` rows name (their ``id`` and
    ``tool_calls``): a file a call's ``edits`` changed is marked ``changed``."""
    files, commands = [], []
    for message in messages:
        if message["tool_calls"] == "[]":
            continue
        for place, call in enumerate(json.loads(message["tool_calls"])):
            changed = {str(edit["file"]) for edit in call.get("edits") or [] if edit.get("file")}
            named = list(dict.fromkeys([*(str(file) for file in call.get("files") or []), *changed]))
            for file in named:
                path = file.replace("\\", "/")
                files.append((message["id"], place, path, path.rsplit("/", 1)[-1], int(file in changed)))
            for command in call.get("commands") or []:
                if isinstance(command, str):
                    commands.append((message["id"], place, command))
    if files:
        db.conn.executemany(INSERT_FILE_SQL, files)
    if commands:
        db.conn.executemany(INSERT_COMMAND_SQL, commands)
