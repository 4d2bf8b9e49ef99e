"""A session as the rows the archive stores: its ``documents`` row (what ``extra`` counts, its
filter words, its usage totalled) and its ``messages`` rows (tool calls, usage, attachments,
price), made from a session read and masked by ``archive.sessions``; a message's long thinking and tool
output packed (``archive.packed``)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

from archivist import dates, documents
from archivist.agents import Session, ToolCall, Usage, iso_utc
from archivist.archive import packed, prices, schema
from archivist.archive.searched import call_words

HEAD_CHARS = 2000  # the opening prompt kept as a session's body
USAGE_COLUMNS = {
    "input": "input_tokens",
    "output": "output_tokens",
    "cache_write": "cache_write_tokens",
    "cache_read": "cache_read_tokens",
    "cache_write_1h": "cache_write_1h_tokens",
}


@dataclass
class Found:
    """The secrets masked in a session: in each message, and in the fields of the session itself."""

    messages: list[int] = field(default_factory=list)
    session: int = 0


@dataclass
class Before:
    """What a session read on from a message already held before it (``_read_on``)."""

    messages: int = 0
    secrets: int = 0
    commands: int = 0
    touched: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    head: str = ""
    usage: Usage = field(default_factory=Usage)
    responses: int = 0  # the messages with usage among them
    tools: list[str] = field(default_factory=list)  # the tools its calls used


def document_rows(
    session: Session, source: str, now: str, content_hash: str, found: Found, before: Before | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One session, masked (``_masked``, which found ``found``), as a ``documents`` row and
    its ``messages`` rows.

    Secrets (keys, tokens, private keys, passwords: ``archivist.secrets``) never reach the
    archive, and so never the search index or the model; the document counts them. The
    body is the opening prompt (``HEAD_CHARS``); the whole text is ``document_texts``.
    ``before``: the messages are those from ``before.messages`` on of a session held.
    """
    before = before or Before()
    messages = _message_rows(session, found, before.messages)
    touched = sorted({*before.touched, *(file for m in session.messages for c in m.tool_calls for file in c.files)})
    # the roles of the messages searched (those with text, or calls that ran or touched something):
    # a session is listed by them
    roles = sorted({*before.roles, *(str(m["role"]) for m in messages if searched(m))})
    document = documents.storable(_document_row(session, source, messages, found, before, touched))
    document["extra"]["roles"] = roles
    tools = sorted({*before.tools, *(call.name for m in session.messages for call in m.tool_calls)})
    document["extra"]["tools"] = tools
    for row in messages:  # flat rows of text and numbers: only their text needs it
        for name in ("role", "timestamp", "model", "text", "thinking", "tool_output", "tool_calls", "attachments"):
            row[name] = documents.storable(row[name])
        for name in packed.PACKED_COLUMNS:  # (masked and made storable first)
            row[name] = packed.packed(row[name])
    date = dates.from_value(session.started) if session.started else None
    document.update(date.columns() if date else dates.NO_DATE_COLUMNS)
    document["filter_tokens"] = documents.filter_tokens(
        {
            **document,
            "agent": session.agent,
            "project": session.project,
            "models": session.models,
            "files": touched,
            "tools": tools,
            "roles": roles,
            "branch": session.branch,
            "host": session.host,
            "more_days": _more_days(session.started, session.last),
        }
    )
    _message_words(session, messages, document.get("day"))
    document["content_hash"] = content_hash
    document["tags"] = json.dumps(document["tags"])
    document["extra"] = json.dumps(document["extra"], ensure_ascii=False)
    document["indexed_at"] = now
    return document, messages


def searched(row: dict[str, Any]) -> bool:
    """Whether a message row is searched: it has text, or calls that ran or touched something."""
    return bool(row["call_words"] or str(row["text"]).strip())


def _message_words(session: Session, messages: list[dict[str, Any]], day: str | None) -> None:
    """Each message row's filter words (``filter_tokens``; None where it has nothing to search: no
    text, and no command or file of a call, ``archive.searched``).

    A message's filter words are its session's (kind, agent, project, models) dated by the
    message's own day (else the session's ``day``), so a date filter finds the messages written
    that day, and its role.
    """
    by_day: dict[tuple[str | None, str], str] = {}
    for row in messages:
        if not searched(row):
            row["filter_tokens"] = None
            continue
        moment = iso_utc(row["timestamp"])  # (readers give ISO 8601 UTC)
        on = moment[:10] if moment else day
        words = by_day.get((on, row["role"]))
        if words is None:
            words = by_day[on, row["role"]] = documents.filter_tokens(
                {
                    "kind": "conversation",
                    "type": session.agent,
                    "month": on[:7] if on else None,
                    "day": on,
                    "agent": session.agent,
                    "project": session.project,
                    "models": session.models,
                    "roles": [row["role"]],
                    "dated_names": True,
                }
            )
        row["filter_tokens"] = words


def _message_rows(session: Session, found: Found, first: int) -> list[dict[str, Any]]:
    """A session's messages as ``messages`` rows numbered from ``first``: as many as the archive has ids for."""
    room = schema.MESSAGE_IDS - first
    rows: list[dict[str, Any]] = []
    last_model = session.models[-1] if session.models else None  # (of a response that names none)
    for seq, message, secrets in zip(
        range(first, schema.MESSAGE_IDS), session.messages[: max(0, room)], found.messages
    ):
        calls = [_call_row(call) for call in message.tool_calls]
        attached = [{"type": a.type, "name": a.name, "size": a.size} for a in message.attachments]
        used = message.usage if message.usage else None  # (counts all nought: no usage)
        rows.append(
            {
                "seq": seq,
                "role": message.role,
                "timestamp": message.timestamp,
                "model": message.model,
                "text": message.text,
                "call_words": call_words(calls),  # (searched with the text: not a column, archive.searched)
                "thinking": message.thinking,
                "tool_output": message.tool_output,
                "tool_calls": json.dumps(calls, ensure_ascii=False) if calls else "[]",
                "secrets": secrets,
                **{column: getattr(used, name) if used is not None else None for name, column in USAGE_COLUMNS.items()},
                "cost": used.cost if used is not None else None,
                "attachments": json.dumps(attached, ensure_ascii=False) if attached else "[]",
                "price": prices.price(message.model or last_model, used, message.timestamp or session.started),
            }
        )
    return rows


def stored_usage(row: dict[str, Any], cost: float | None) -> Usage:
    """A messages row's token columns (or their sums) as a ``Usage``."""
    return Usage(
        input=row["input_tokens"],
        output=row["output_tokens"],
        cache_write=row["cache_write_tokens"],
        cache_read=row["cache_read_tokens"],
        cost=cost,
        cache_write_1h=row.get("cache_write_1h_tokens") or 0,
    )


def _call_row(call: ToolCall) -> dict[str, Any]:
    """A tool call as ``messages.tool_calls`` holds it: its name, files and commands, and where
    there are: the key of the sub-agent session it started (``agent``), its input (``input``) and
    the changes it made (``edits``: each ``{"file", "old", "new"}`` or ``{"file", "patch"}``)."""
    row: dict[str, Any] = {"name": call.name, "files": call.files, "commands": call.commands}
    if call.agent:
        row["agent"] = call.agent
    if call.input:
        row["input"] = call.input
    if call.edits:
        row["edits"] = [{key: value for key, value in vars(edit).items() if value is not None} for edit in call.edits]
    return row


def _usage(rows: list[dict[str, Any]], before: Before) -> dict[str, Any] | None:
    """A session's token usage: its messages' (those stored before, and these rows), summed; None
    where none is recorded. ``responses`` counts the messages that carry usage."""
    total, responses = before.usage, before.responses
    for row in rows:
        if row["input_tokens"] is not None:
            total += stored_usage(row, row["cost"])
            responses += 1
    if not responses:
        return None
    return {**{name: getattr(total, name) for name in USAGE_COLUMNS}, "cost": total.cost, "responses": responses}


def _document_row(
    session: Session, source: str, messages: list[dict[str, Any]], found: Found, before: Before, touched: list[str]
) -> dict[str, Any]:
    """A session's ``documents`` row, before it is made storable: its fields, and what ``extra`` counts."""
    commands = before.commands + sum(len(c.commands) for m in session.messages for c in m.tool_calls)
    return {
        "key": f"{source}:{session.key}",
        "kind": "conversation",
        "type": session.agent,
        "title": session.title,
        "path": f"{session.agent}:{session.key}",
        "name": session.key.rsplit("/", 1)[-1],
        "source": source,
        "body": before.head or _head(messages),
        "tags": [],
        "extra": {
            "agent": session.agent,
            "project": session.project,
            "models": session.models,
            "branch": session.branch,
            "host": session.host,
            "started": session.started,
            "last": session.last,
            "messages": before.messages + len(messages),
            "parent": session.parent,
            "files": [str(path) for path in session.files],
            "touched_files": touched,
            "commands": commands,
            "secrets_masked": before.secrets + found.session + sum(m["secrets"] for m in messages),
            "usage": _usage(messages, before),
        },
    }


def _head(messages: list[dict[str, Any]]) -> str:
    """A session's opening prompt (else its first words), as its body: at most HEAD_CHARS."""
    said = [m for m in messages if m["role"] in ("user", "assistant") and str(m["text"]).strip()]
    first = next((m for m in said if m["role"] == "user"), said[0] if said else None)
    if first is None:
        return ""
    text = str(first["text"]).strip()
    return text if len(text) <= HEAD_CHARS else text[: HEAD_CHARS - 1].rstrip() + "…"


MAX_DAYS = 31  # a session's days beyond its first that a date filter finds it on


def _more_days(started: str | None, last: str | None) -> list[str]:
    """The days after its first that a session ran on (it matches a date filter on any of them)."""
    first, final = dates.from_value(started) if started else None, dates.from_value(last) if last else None
    if first is None or final is None:
        return []
    day, end = first.value.date(), final.value.date()
    days: list[str] = []
    while day < end and len(days) < MAX_DAYS:
        day += dt.timedelta(days=1)
        days.append(day.isoformat())
    return days
