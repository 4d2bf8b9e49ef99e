"""The MCP tools (SPEC §4): each one a thin call of a canned query or of the embedding API.

The same tools are registered on the standalone server (``archivist mcp``) and on
datasette-mcp's server inside ``archivist serve`` (its ``register_mcp_tools`` hook).
There is no SQL here: tools name a canned query of metadata.yml and pass their
arguments through the one validation layer, so every error is the SPEC §5 body.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Annotated, Any, Callable

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field
from typing_extensions import TypedDict

from .errors import ArchivistError
from .queries import Archive
from .workspace import archive_path

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITES_ARCHIVE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

DATE_RANGE = (
    "Filter by date range. Supports YYYY-MM (month) or YYYY-MM-DD (day) format. Month format matches "
    "all days within that month (in both the YYYY-MM/ and YYYY-MM-DD/ folder layouts). "
    "Examples: '2025-11' or '2025-11-10'. Empty: all dates."
)
WORKSPACE_PATH = (
    "Workspace folder to search instead of the server's own (it must have been indexed with "
    "`archivist index`). Default: the server's workspace."
)

Listing = list[str] | str | None


# Output schemas. Fields are not required: a failed call's structured content is the SPEC §5
# body ({"success": false, "error", "code"}) and clients check it against the same schema.
class Outcome(TypedDict, total=False):
    success: bool
    error: str
    code: str


class Rows(Outcome, total=False):
    num_results: int
    results: list[dict[str, Any]]


class Report(Outcome, total=False):
    report_name: str
    command_name: str
    date: str | None
    title: str | None
    path: str
    content: str


class SearchResponse(Outcome, total=False):
    query: str
    mode: str
    total: int
    page: int
    page_size: int
    total_pages: int
    has_more: bool
    results: list[dict[str, Any]]
    facets: dict[str, Any]
    filters: dict[str, Any]


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


class Workspaces:
    """Archives opened on demand: the server's own, or another indexed workspace's."""

    def __init__(self, default_archive: Path | Callable[[], Path], default_workspace: Path | None = None) -> None:
        # a callable when the archive is only known later (Datasette adds its database after its plugins load)
        self._default = default_archive
        self._default_workspace = default_workspace
        self._open: dict[Path, Archive] = {}
        self._lock = threading.Lock()

    @property
    def default_archive(self) -> Path:
        return Path(self._default() if callable(self._default) else self._default)

    def embedding_target(self, workspace_path: str | None) -> tuple[Path, Path]:
        """(workspace, archive) for the embedding API."""
        if workspace_path:
            folder = self.workspace(workspace_path)
            return folder, archive_path(folder)
        return self.workspace(None), self.default_archive

    def workspace(self, workspace_path: str | None) -> Path:
        if not workspace_path:
            return self._default_workspace or self.default_archive.parent.parent
        folder = Path(workspace_path).expanduser()
        if not folder.is_dir():
            raise ArchivistError(
                "DIRECTORY_NOT_FOUND",
                f"Workspace not found: {workspace_path}",
                "workspace_path must be an existing folder.",
                "Leave workspace_path out to use the server's workspace.",
            )
        return folder.resolve()

    def archive(self, workspace_path: str | None) -> Archive:
        path = self.default_archive if not workspace_path else archive_path(self.workspace(workspace_path))
        path = path.resolve()
        with self._lock:
            if path not in self._open:
                if not path.exists():
                    raise ArchivistError(
                        "DIRECTORY_NOT_FOUND",
                        f"No archive for workspace {workspace_path or path.parent.parent}",
                        "The workspace has not been indexed yet.",
                        "Run: archivist index WORKSPACE",
                    )
                self._open[path] = Archive(path)
            return self._open[path]


def _result(payload: dict[str, Any]) -> CallToolResult:
    text = json.dumps(payload, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)


def _error(error: ArchivistError) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=error.message)], structured_content=error.to_dict(), is_error=True
    )


def answer(work: Callable[[], dict[str, Any]]) -> CallToolResult:
    """The tool's structured result, or its SPEC §5 error; never an exception."""
    try:
        return _result(work())
    except ArchivistError as error:
        return _error(error)
    except Exception as error:  # a bug must still reach the client as a tool error
        return _error(ArchivistError("INTERNAL_ERROR", "The tool failed", f"{type(error).__name__}: {error}", "Report this."))


def rows_payload(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A list query's rows, as seeds 001 and 003 return them."""
    return {"success": True, "num_results": len(rows), "results": rows}


def register_tools(server: MCPServer, workspaces: Workspaces) -> None:
    """Register every Archivist tool on an MCP server."""

    def rows(name: str, params: dict[str, Any], workspace_path: str | None) -> CallToolResult:
        return answer(lambda: rows_payload(workspaces.archive(workspace_path).run(name, params)))

    @server.tool(annotations=READ_ONLY)
    def search_workspace(
        query: Annotated[str, Field(description="Words to find in conversations (every word must match). At least 2 characters.")],
        date_range: Annotated[str, Field(description=DATE_RANGE)] = "",
        conversation_type: Annotated[str, Field(description="Only conversations of this type: brainstorm, debug, plan, review, research, design, ...")] = "",
        limit: Annotated[int | None, Field(description="Most results to return, 1-100 (default 20).")] = None,
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Rows]:
        """Full-text search over conversations, ranked by BM25, optionally within a month or a day."""
        params = {"query": query, "date_range": date_range, "conversation_type": conversation_type, "limit": limit}
        return rows("search_workspace", params, workspace_path)

    @server.tool(annotations=READ_ONLY)
    def search_reports(
        query: Annotated[str, Field(description="Text to find in analysis reports (case-insensitive substring).")],
        command_filter: Annotated[str, Field(description="Only reports of this command (a folder name under reports/).")] = "",
        max_results: Annotated[int | None, Field(description="Most results to return, 1-100 (default 10).")] = None,
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Rows]:
        """Search analysis reports: ranked by number of matches, then newer first; excerpt, date, link and path."""
        params = {"query": query, "command_filter": command_filter, "max_results": max_results}
        return rows("search_reports", params, workspace_path)

    @server.tool(annotations=READ_ONLY)
    def list_command_reports(
        command: Annotated[str, Field(description="A command name, as search_commands or search_reports return it.")],
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Rows]:
        """Every report of one command, newest first."""
        return rows("list_command_reports", {"command": command}, workspace_path)

    @server.tool(annotations=READ_ONLY)
    def get_report(
        path: Annotated[str, Field(description="The report's path, as search_reports returns it (absolute) or relative to the workspace.")],
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Report]:
        """The full text of one report."""

        def work() -> dict[str, Any]:
            (row,) = workspaces.archive(workspace_path).run("get_report", {"path": path})
            return {"success": True, **row}

        return answer(work)

    @server.tool(annotations=READ_ONLY)
    def search_commands(
        query: Annotated[str, Field(description="Text to find in command names and their reports.")],
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Rows]:
        """Commands whose name or whose reports contain the query."""
        return rows("search_commands", {"query": query}, workspace_path)

    @server.tool(annotations=READ_ONLY)
    def search(
        query: Annotated[str, Field(description="Search words (optional in faceted, recent, tag, scan and similar modes). At least 2 characters.")] = "",
        mode: Annotated[str, Field(description="hybrid (default), keyword, semantic, similar, tag, recent, scan or faceted.")] = "hybrid",
        entities: Annotated[Listing, Field(description="Kinds (conversation, report, memory, record, note) or record entity types (product, feature, test, bug).")] = None,
        types: Annotated[Listing, Field(description="Memory types (note, decision, task, ...), entity types, conversation types or report commands.")] = None,
        tags: Annotated[Listing, Field(description="Tags: any of them, or all with match_all.")] = None,
        match_all: Annotated[bool, Field(description="True: every tag must be present. False (default): any tag.")] = False,
        start_date: Annotated[str, Field(description="From this date (UTC): ISO date or datetime, YYYY-MM, YYYY, or natural language such as 'last week' or 'yesterday'.")] = "",
        end_date: Annotated[str, Field(description="Until this date (UTC), same forms as start_date, e.g. 'today'.")] = "",
        product_ids: Annotated[list[int] | str | None, Field(description="Only records of these products.")] = None,
        match_mode: Annotated[str, Field(description="simple (default: plain words) or raw (FTS5 syntax: \"phrases\", prefix*, AND, OR, NOT).")] = "simple",
        min_similarity: Annotated[float | None, Field(description="Drop semantic candidates below this cosine similarity.")] = None,
        document: Annotated[str, Field(description="mode=similar: the document (id or path) to find neighbours of.")] = "",
        page: Annotated[int | None, Field(description="Page number, from 1.")] = None,
        page_size: Annotated[int | None, Field(description="Results per page, 1-100 (default 10).")] = None,
        limit: Annotated[int | None, Field(description="Another name for page_size.")] = None,
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, SearchResponse]:
        """Search everything (conversations, reports, memories, records, notes) with facets, dates and pagination."""
        params = {
            "query": query, "mode": mode, "entities": entities, "types": types, "tags": tags, "match_all": match_all,
            "start_date": start_date, "end_date": end_date, "product_ids": product_ids, "match_mode": match_mode,
            "min_similarity": min_similarity, "document": document, "page": page, "page_size": page_size, "limit": limit,
        }
        return answer(lambda: workspaces.archive(workspace_path).search(params))

    @server.tool(annotations=READ_ONLY)
    def search_semantic(
        query: Annotated[str, Field(description="What to find, in plain words: documents nearest in meaning.")],
        conversation_type: Annotated[str, Field(description="Only documents of this type.")] = "",
        date_range: Annotated[str, Field(description=DATE_RANGE)] = "",
        limit: Annotated[int | None, Field(description="Most results, 1-100 (default 10).")] = None,
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Rows]:
        """Semantic search (all-MiniLM-L6-v2 embeddings): documents by cosine similarity, with their best passage."""
        params = {"query": query, "conversation_type": conversation_type, "date_range": date_range, "limit": limit}
        return rows("search_semantic", params, workspace_path)

    @server.tool(annotations=READ_ONLY)
    def get_similar(
        document: Annotated[str, Field(description="A document id or path (relative to the workspace, or absolute).")],
        limit: Annotated[int | None, Field(description="Most results, 1-100 (default 10).")] = None,
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Rows]:
        """The documents most similar in meaning to one document, excluding itself, with scores."""
        return rows("similar", {"document": document, "limit": limit}, workspace_path)

    @server.tool(annotations=WRITES_ARCHIVE)
    def embed_document(
        path: Annotated[str, Field(description="A file or folder inside the workspace (relative, or absolute).")],
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Embedded]:
        """Embed the new or changed documents under one path; unchanged ones are skipped."""
        from .embeddings import embed_workspace

        def work() -> dict[str, Any]:
            workspace, db_path = workspaces.embedding_target(workspace_path)
            return embed_workspace(workspace, path, db_path).to_dict(with_total_files=True)

        return answer(work)

    @server.tool(annotations=WRITES_ARCHIVE)
    def embed_workspace(
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Embedded]:
        """Embed every new or changed document of the workspace; unchanged ones are skipped."""
        from .embeddings import embed_workspace as embed

        def work() -> dict[str, Any]:
            workspace, db_path = workspaces.embedding_target(workspace_path)
            return embed(workspace, None, db_path).to_dict()

        return answer(work)

    @server.tool(annotations=READ_ONLY)
    def get_embedding_status(
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, EmbeddingStatus]:
        """Embedding coverage: total_chunks, num_documents, pending, db_path, model, recent embeddings."""

        def work() -> dict[str, Any]:
            (row,) = workspaces.archive(workspace_path).run("embedding_status", {})
            return {"success": True, **row, "recent_embeddings": json.loads(row["recent_embeddings"] or "[]")}

        return answer(work)


def bearer_token_required(app: Callable, token: str) -> Callable:
    """An ASGI wrapper: HTTP requests must carry ``Authorization: Bearer <token>``."""
    expected = f"Bearer {token}".encode()

    async def checked(scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http" and dict(scope.get("headers") or []).get(b"authorization") != expected:
            body = json.dumps(
                ArchivistError(
                    "UNAUTHORIZED",
                    "Missing or wrong bearer token",
                    "This server was started with ARCHIVIST_MCP_TOKEN set.",
                    "Send the header: Authorization: Bearer <token>",
                ).to_dict()
            ).encode()
            await send({"type": "http.response.start", "status": 401,
                        "headers": [[b"content-type", b"application/json"], [b"www-authenticate", b"Bearer"]]})
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return checked


def create_server(default_archive: Path, workspace: Path | None = None) -> MCPServer:
    from .mcp_stdio import INSTRUCTIONS, NAME

    server = MCPServer(NAME, instructions=INSTRUCTIONS)
    register_tools(server, Workspaces(default_archive, workspace))
    return server

