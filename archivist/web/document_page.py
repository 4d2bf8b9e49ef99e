"""GET /document/{id}: a document rendered with its metadata, similar and nearby documents;
and GET /document/{id}/source: the file it came from, as plain text, its secrets masked."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlencode

from datasette.utils.asgi import Response

from archivist.documents import IGNORED_DIRS
from archivist.errors import ArchivistError
from archivist.queries.rules import document_not_found
from archivist.web.app import is_archive, not_an_archive
from archivist.web.conversations import conversation, parent_session, session_of
from archivist.web.page_queries import QueryFailed, canned, search
from archivist.web.rendering import needs_archive, render_markdown, render_page, shorten
from archivist.web.urls import SearchState, document_url
from archivist.workspace import DATABASE_NAME, archive_files, secret_key

if TYPE_CHECKING:
    from datasette.app import Datasette


SOURCE_MAX_BYTES = 16 * 2**20  # a document's source file, served as text, at most


async def _document(datasette: Datasette, document_id: str) -> dict[str, Any]:
    """get_document's row; DOCUMENT_NOT_FOUND where it has none (a document removed since its check)."""
    rows = await canned(datasette, "get_document", {"document": document_id})
    if not rows:
        missing = document_not_found(document_id)
        raise QueryFailed(404, missing.code, missing.message)
    return rows[0]


async def _more(datasette: Datasette, document: dict[str, Any]) -> list[dict[str, Any]]:
    """Lists of nearby documents: the same day (or month), the same command or product."""
    sections = []

    async def section(title: str, params: dict[str, str], link: str | None = None) -> None:
        found = await search(datasette, {"mode": "recent", "page_size": "7", **params})
        nearby = [item for item in found["results"] if item["id"] != document["id"]][:6]
        for item in nearby:
            item["href"] = document_url(datasette, item["id"])
        if nearby:  # the search page lists them, this document included, newest first
            href = SearchState(datasette, params).url()
            sections.append(
                {"title": title, "items": nearby, "total": found["total"], "href": href, "query_link": link}
            )

    period = document.get("day") or document.get("month")
    if period:
        await section(f"More from {period}", {"start_date": period, "end_date": period})
    if document["kind"] == "report" and document.get("type"):
        command = document["type"]
        link = datasette.urls.path(f"/{DATABASE_NAME}/list_command_reports") + "?" + urlencode({"command": command})
        await section(f"More from the command {command}", {"entities": "report", "types": command}, link)
    elif document["kind"] == "record" and document.get("product_id") is not None:
        name = document.get("product") or str(document["product_id"])
        await section(f"More for the product {name}", {"product_ids": str(document["product_id"])})
    elif document.get("type"):
        await section(
            f"More {document['type']} {document['kind']}s", {"entities": document["kind"], "types": document["type"]}
        )
    return sections


@needs_archive
async def document_page(datasette: Datasette, request: Any) -> Response:
    """GET /document/{id}: the document rendered, its metadata, similar and nearby documents."""
    try:
        document = await _document(datasette, unquote(request.url_vars["id"]))
    except QueryFailed as failure:
        status = 404 if failure.code == "DOCUMENT_NOT_FOUND" else failure.status
        return await render_page(datasette, request, "archivist_document.html", {"failure": failure}, status=status)
    document["tags"] = json.loads(document["tags"] or "[]")
    extra = json.loads(document.pop("extra") or "{}")
    session = session_of(document, extra)
    chat: dict[str, Any] | None = None
    if session is not None:  # an agent-log session: its messages, a page at a time
        try:
            chat = await conversation(datasette, request, document, session)
            session["parent"] = await parent_session(datasette, session)
        except ArchivistError as error:
            problem = QueryFailed(400, error.code, error.message)
            return await render_page(datasette, request, "archivist_document.html", {"failure": problem}, status=400)
        except QueryFailed as failure:
            return await render_page(
                datasette, request, "archivist_document.html", {"failure": failure}, status=failure.status
            )
        if not chat["messages"]:  # no rows (an archive written before they were kept): the body shows
            session, chat = None, None
    failures: dict[str, QueryFailed] = {}  # a part that fails says so; the document still shows
    similar, more = [], []
    try:
        if document["embedded"]:
            similar = await canned(datasette, "similar", {"document": str(document["id"]), "limit": "8"})
    except QueryFailed as failure:
        failures["similar"] = failure
    try:
        more = await _more(datasette, document)
    except QueryFailed as failure:
        failures["more"] = failure
    for item in similar:
        item["href"] = document_url(datasette, item["id"])
    source = datasette.urls.path(f"/document/{document['id']}/source")
    files = [{"path": path, "href": f"{source}?{urlencode({'file': path})}"} for path in extra.get("files") or []]
    if not files:
        files = [{"path": document["path"], "href": source}]
    body, shortened = shorten(document["body"] or "") if chat is None else ("", None)
    context = {
        "document": document,
        "session": session,
        "chat": chat,
        "body_html": render_markdown(body),
        "shortened": shortened,
        "files": files,
        "similar": similar,
        "more": more,
        "failures": failures,
        "tag_urls": {tag: SearchState(datasette, {}).url(tags=tag) for tag in document["tags"]},
        "similar_url": SearchState(datasette, {"mode": "similar", "document": str(document["id"])}).url(),
        "row_url": datasette.urls.row(DATABASE_NAME, "documents", str(document["id"])),
        "json_url": datasette.urls.path(f"/{DATABASE_NAME}/get_document.json")
        + "?"
        + urlencode({"document": document["id"]}),
    }
    return await render_page(datasette, request, "archivist_document.html", context)


def _plain(text: str, status: int = 200) -> Response:
    return Response.text(text, status=status, headers={"X-Content-Type-Options": "nosniff"})


async def document_source(datasette: Datasette, request: Any) -> Response:
    """GET /document/{id}/source[?file=…]: the file a document came from, as plain text, its
    secrets masked as the archive masked them (the same markers as the document's).

    Only a document's own files are served: its path, or one of the files of a
    conversation folder; never anything else of the machine.
    """
    if not await is_archive(datasette):
        return _plain(not_an_archive(datasette).message, status=404)
    try:
        document = await _document(datasette, unquote(request.url_vars["id"]))
    except QueryFailed as failure:
        return _plain(failure.message, status=404 if failure.code == "DOCUMENT_NOT_FOUND" else failure.status)
    if document["file"] is None:  # (the workspace's place, recorded when a first index run ends)
        unplaced = ArchivistError(
            "PATH_NOT_FOUND",
            "The workspace's folder is not recorded yet",
            "An archive records where its workspace lies when its first index run ends: that run is still "
            "reading agent logs, or it stopped.",
            "Wait for it to end, or run archivist index WORKSPACE again (it reads on).",
        )
        return _plain(unplaced.message, status=404)
    root = document["file"][: -len(document["path"])].rstrip("/")
    files = json.loads(document["extra"] or "{}").get("files") or [document["path"]]
    wanted = request.args.get("file") or (files[0] if len(files) == 1 else "")
    if wanted not in files:
        listing = "\n".join(files)
        return _plain(f"❌ Choose one of this document's files with ?file=\n{listing}", status=400)
    path = Path(root, wanted).resolve()
    if not _servable(datasette, Path(root).resolve(), path):
        return _plain(
            f"❌ The file is no longer there: {wanted}\n💡 Run archivist index to bring the archive up to date.",
            status=404,
        )
    with path.open("rb") as file:
        data = file.read(SOURCE_MAX_BYTES + 1)
    text = await asyncio.to_thread(_masked_source, datasette, data[:SOURCE_MAX_BYTES].decode("utf-8", errors="replace"))
    if len(data) > SOURCE_MAX_BYTES:
        text += f"\n\n[… shown: the first {SOURCE_MAX_BYTES // 2**20} MiB of {path.stat().st_size:,} bytes; the rest is in {wanted}]"
    return _plain(text)


def _servable(datasette: Datasette, root: Path, path: Path) -> bool:
    """Whether ``path`` (resolved) is a file the indexer could have read: in the workspace, in no
    folder it skips (``.archivist``, ``.git``, ...), and not the archive's own files or its key
    (a document's file replaced by a link to them is not served)."""
    if not path.is_relative_to(root) or not path.is_file():
        return False
    if any(part in IGNORED_DIRS for part in path.relative_to(root).parts):
        return False
    database = datasette.get_database(DATABASE_NAME).path
    return not database or path not in {file.resolve() for file in archive_files(Path(database))}


def _masked_source(datasette: Datasette, text: str) -> str:
    """A source file's text masked with the archive's key (``workspace.secret_key``), as indexing masked it."""
    from archivist.secrets import Masker

    database = datasette.get_database(DATABASE_NAME).path
    return Masker(secret_key(Path(database), create=False) if database else None)(text)
