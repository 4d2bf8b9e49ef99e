"""What the MCP tools answer: each one's shape (the fields docs/mcp.md names for it), and the shaping of its rows.

Fields are not required: a failed call's structured content is the docs/errors.md body
({"success": false, "error", "code"}). tools/list names no output schema: the answer comes as
structured content and as its JSON text all the same.
"""

from __future__ import annotations

import json
from typing import Any

from typing_extensions import TypedDict

from archivist.errors import ArchivistError
from archivist.jsonvalues import json_list
from archivist.queries import diffs
from archivist.queries.newest import empty_hint, range_told
from archivist.queries.rules import INCLUDABLE


class Outcome(TypedDict, total=False):
    success: bool
    error: str
    code: str
    # every answer while an index run is still storing agent logs, or after one that stopped: its state
    # (building, stopped), source, percent and since (archive.building); left out once the archive is built
    building: dict[str, Any] | None


class Rows(Outcome, total=False):
    num_results: int
    results: list[dict[str, Any]]


class UsageRows(Rows, total=False):
    no_usage_recorded: list[dict[str, Any]]  # each agent of the range whose logs record no usage: agent, sessions
    hint: str  # an empty answer's: where the newest session is, and the start_date that reaches it


class ActivityRows(Rows, total=False):
    range: dict[str, Any]  # the range it covers: start_date, end_date, default, newest, note
    hint: str  # an empty answer's: where the newest session is, and the start_date that reaches it


class Report(Outcome, total=False):
    report_name: str
    command_name: str
    date: str | None
    title: str | None
    path: str | None  # (absolute: none before a first index run has ended)
    content: str


class Document(Outcome, total=False):
    id: int
    kind: str
    type: str | None
    title: str | None
    path: str
    date: str | None
    tags: list[str]
    extra: dict[str, Any] | None
    embedded: bool
    body: str


class SearchResponse(Outcome, total=False):
    """The search's answer: the fields of ``queries.response.FIELDS`` (tests/test_search_response.py)."""

    query: str
    mode: str
    total: int
    matched: dict[str, int | None] | None
    sort: str
    page: int
    page_size: int
    total_pages: int
    has_more: bool
    results: list[dict[str, Any]]  # each with entity_type, entity_id, title, score and rank (response.RESULT)
    building: dict[str, Any] | None
    facets: dict[str, Any]
    filters: dict[str, Any]


class Conversation(Outcome, total=False):
    document_id: int | None
    total: int
    offset: int
    limit: int
    has_more: bool
    next_offset: int | None
    price: float | None  # the session's, at the price data's prices; null where none could be priced
    stated_cost: float | None  # what the session's log says it cost (Aider's); null where it says nothing
    subagents: list[dict[str, Any]]
    num_results: int
    messages: list[dict[str, Any]]


class Embedded(Outcome, total=False):
    embedded: int
    skipped: int
    total_files: int


class EmbeddingStatus(Outcome, total=False):
    total_chunks: int
    num_documents: int
    pending: int
    db_path: str
    model: str | None
    recent_embeddings: list[dict[str, Any]]


def rows_payload(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A list query's rows, as seeds 001 and 003 return them."""
    return {"success": True, "num_results": len(rows), "results": rows}


def only_row(rows: list[dict[str, Any]], missing: ArchivistError) -> dict[str, Any]:
    """The one row of a query that names one thing; ``missing`` where there is none (the thing was
    found by the query's checks, and is gone or not whole: removed since, or a run still writing)."""
    if not rows:
        raise missing
    return rows[0]


def row_payload(rows: list[dict[str, Any]], missing: ArchivistError) -> dict[str, Any]:
    """A query's one row (get_report's), as it is."""
    return {"success": True, **only_row(rows, missing)}


def document_payload(rows: list[dict[str, Any]], missing: ArchivistError) -> dict[str, Any]:
    """get_document's row: its tags a list, its extra (an agent log's session) an object, embedded a boolean."""
    row = only_row(rows, missing)
    return {
        "success": True,
        **row,
        "tags": json.loads(row["tags"] or "[]"),
        "extra": json.loads(row["extra"]) if row["extra"] else None,
        "embedded": bool(row["embedded"]),
    }


CONVERSATION_LIMIT = 50  # get_conversation's default page, as its SQL has it
PAGING = ("document_id", "total", "has_more", "next_offset")


def models_payload(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The rows of a query that lists models (list_conversations', usage's), each one's models as a list."""
    return rows_payload([{**row, "models": json.loads(row["models"] or "[]")} for row in rows])


ACTIVITY_JSON = ("agents", "models", "newest", "files_touched", "top_commands")


def activity_payload(
    rows: list[dict[str, Any]], newest: str | None = None, given: dict[str, Any] | None = None
) -> dict[str, Any]:
    """project_activity's rows, each one's lists as lists, with the range they cover (by default the 30
    days to the newest day with a message) and, where there are none, a hint."""
    payload = rows_payload([{**row, **{key: json.loads(row[key] or "[]") for key in ACTIVITY_JSON}} for row in rows])
    return with_hint({**payload, "range": range_told(newest, given)}, newest)


def with_hint(payload: dict[str, Any], newest: str | None) -> dict[str, Any]:
    """A list's answer, with a hint where it is empty: where the newest session is, and how to reach it."""
    return {**payload, "hint": empty_hint(newest)} if not payload.get("num_results") else payload


def file_history_payload(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """file_history's rows: the paging once, then each call (with its session's document_id), its
    commands as a list, whether it changed the file, and each change it made to the file as its
    diff (``diffs``: file, diff (text, at most diffs.DIFF_LINES lines), diff_lines (its lines in
    all) and diff_cut (true when the diff was cut)), never the texts whole."""
    first = rows[0] if rows else {"total": 0, "has_more": 0, "next_offset": None}
    calls = [
        {
            **{key: value for key, value in row.items() if key not in (*PAGING[1:], "edits")},
            "commands": json.loads(row["commands"] or "[]"),
            "changed": bool(row.get("changed")),
            "diffs": diffs.stored_diffs(row.get("edits"), row["file"]),
        }
        for row in rows
    ]
    return {
        **rows_payload(calls),
        "total": first["total"],
        "has_more": bool(first["has_more"]),
        "next_offset": first["next_offset"],
    }


SESSION_FIGURES = ("session_price", "session_stated_cost", "subagents")


def conversation_payload(rows: list[dict[str, Any]], offset: int | None, limit: int | None) -> dict[str, Any]:
    """get_conversation's rows as one page: the paging and the session's figures once, then the messages.

    The session's figures: price (at the price data's prices) and stated_cost (what its log says),
    and subagents (the sub-agent sessions it started, and theirs). Each message's tool calls are
    a list, each call's edits shown as diffs (``diffs``, as file_history gives them); its usage,
    price and attachments are there only where it has them, thinking and tool_output only when
    asked for (include), so that a page stays small.
    """
    first = rows[0] if rows else {"document_id": None, "total": 0, "has_more": 0, "next_offset": None}
    messages = []
    for row in rows:
        message = {key: value for key, value in row.items() if key not in (*PAGING, *SESSION_FIGURES)}
        message["tool_calls"] = [_call(call) for call in json.loads(message["tool_calls"] or "[]")]
        for part, empty in (("usage", None), ("attachments", "[]")):  # only where the message has them
            value = message.pop(part, empty)
            if value not in (None, empty):
                message[part] = json.loads(value)
        for part in (*INCLUDABLE, "price"):
            if message.get(part) is None:
                message.pop(part, None)
        messages.append(message)
    return {
        "success": True,
        "document_id": first["document_id"],
        "total": first["total"],
        "offset": offset or 0,
        "limit": limit or CONVERSATION_LIMIT,
        "has_more": bool(first["has_more"]),
        "next_offset": first["next_offset"],
        "price": first.get("session_price"),
        "stated_cost": first.get("session_stated_cost"),
        "subagents": json_list(first.get("subagents")),
        "num_results": len(messages),
        "messages": messages,
    }


def _call(call: Any) -> Any:
    """A stored tool call as MCP gives it: its edits as diffs (never their texts whole)."""
    if not isinstance(call, dict) or "edits" not in call:
        return call
    shown = {key: value for key, value in call.items() if key != "edits"}
    return {**shown, "diffs": [diffs.shown_diff(edit) for edit in diffs.edits_of(call)]}


def embedding_status_payload(rows: list[dict[str, Any]], job: dict[str, Any] | None) -> dict[str, Any]:
    """embedding_status's row, its recent embeddings a list, with the latest embedding job."""
    (row,) = rows
    return {"success": True, **row, "recent_embeddings": json.loads(row["recent_embeddings"] or "[]"), "job": job}
