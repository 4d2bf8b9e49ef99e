"""GET /file?path=…: a file's history, from the ``file_history`` canned query: every tool call of
the agent logs that read or changed it, newest first, each linked to its message. A full path or
a file name alone; linked from every file path a conversation page shows."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from datasette.utils.asgi import Response

from archivist.web.conversations import message_url
from archivist.web.page_queries import QueryFailed, canned
from archivist.web.rendering import needs_archive, render_page
from archivist.web.urls import file_url

if TYPE_CHECKING:
    from datasette.app import Datasette

PAGE_SIZE = 50


@needs_archive
async def file_page(datasette: Datasette, request: Any) -> Response:
    """GET /file: a page of the file's calls; a bad path or offset is a 400 with the query's message."""
    path = request.args.get("path", "")
    offset = request.args.get("offset", "")
    context: dict[str, Any] = {"path": path, "action": datasette.urls.path("/file")}
    try:
        rows = await canned(datasette, "file_history", {"path": path, "offset": offset, "limit": str(PAGE_SIZE)})
    except QueryFailed as failure:
        return await render_page(datasette, request, "archivist_file.html", {**context, "failure": failure}, 400)
    first = rows[0] if rows else {"total": 0, "next_offset": None}
    start = int(offset) if offset.strip().isdigit() else 0
    context.update(
        calls=[
            {
                **row,
                "commands": json.loads(row["commands"] or "[]"),
                "href": message_url(datasette, row["document_id"], row["seq"]),
                "when": _when(row["timestamp"]),
            }
            for row in rows
        ],
        total=first["total"],
        sessions=len({row["document_id"] for row in rows}),
        next_url=file_url(datasette, path, first["next_offset"]) if first["next_offset"] else None,
        previous_url=file_url(datasette, path, max(0, start - PAGE_SIZE)) if start > 0 else None,
        first=start + 1,
        last=start + len(rows),
    )
    return await render_page(datasette, request, "archivist_file.html", context)


def _when(timestamp: str | None) -> str:
    return (timestamp or "")[:16].replace("T", " ")
