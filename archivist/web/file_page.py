"""GET /file?path=…: a file's history, from the ``file_history`` canned query: every tool call of
the agent logs that read or changed it, newest first, each linked to its message, each change
shown as its diff; ``changes=1``: only the calls that changed it. A full path or a file name
alone; linked from every file path a conversation page shows."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from datasette.utils.asgi import Response

from archivist.jsonvalues import json_list
from archivist.queries import diffs
from archivist.web.conversations import diff_view, message_url
from archivist.web.page_queries import QueryFailed, canned
from archivist.web.rendering import needs_archive, render_page
from archivist.web.urls import file_url

if TYPE_CHECKING:
    from datasette.app import Datasette

PAGE_SIZE = 50


@needs_archive
async def file_page(datasette: Datasette, request: Any) -> Response:
    """GET /file: a page of the file's calls; a bad path, offset or changes is a 400 with the query's message."""
    path = request.args.get("path", "")
    offset = request.args.get("offset", "")
    changes = request.args.get("changes", "")
    context: dict[str, Any] = {"path": path, "action": datasette.urls.path("/file"), "changes": changes}
    try:
        params = {"path": path, "offset": offset, "limit": str(PAGE_SIZE), "changes": changes}
        rows = await canned(datasette, "file_history", params)
    except QueryFailed as failure:
        return await render_page(datasette, request, "archivist_file.html", {**context, "failure": failure}, 400)
    only_changes = changes.strip().lower() not in ("", "0", "false", "no", "off")
    first = rows[0] if rows else {"total": 0, "next_offset": None}
    start = int(offset) if offset.strip().isdigit() else 0

    def page_url(at: int) -> str:
        return file_url(datasette, path, at) + ("&changes=1" if only_changes else "")

    context.update(
        calls=[call_view(datasette, row) for row in rows],
        total=first["total"],
        only_changes=only_changes,
        every_call_url=file_url(datasette, path),
        changes_url=file_url(datasette, path) + "&changes=1",
        sessions=len({row["document_id"] for row in rows}),
        next_url=page_url(first["next_offset"]) if first["next_offset"] else None,
        previous_url=page_url(max(0, start - PAGE_SIZE)) if start > 0 else None,
        first=start + 1,
        last=start + len(rows),
    )
    return await render_page(datasette, request, "archivist_file.html", context)


def call_view(datasette: Datasette, row: dict[str, Any]) -> dict[str, Any]:
    """One call of a file's history as its row shows it: its commands, its link, its time, and
    the changes it made to this file, each as its diff."""
    edits = diffs.edits_of({"edits": json_list(row.get("edits"))}, row["file"])
    return {
        **row,
        "commands": json.loads(row["commands"] or "[]"),
        "href": message_url(datasette, row["document_id"], row["seq"]),
        "when": _when(row["timestamp"]),
        "diffs": [diff_view(edit) for edit in edits],
    }


def _when(timestamp: str | None) -> str:
    return (timestamp or "")[:16].replace("T", " ")
