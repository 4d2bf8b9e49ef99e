"""The MCP tools (SPEC §4): each one a thin call of a canned query or of the embedding API.

The same tools are registered on the standalone server (``archivist mcp``) and on
datasette-mcp's server inside ``archivist serve`` (its ``register_mcp_tools`` hook).
There is no SQL here: tools name a canned query of the package and pass their
arguments through the one validation layer, so every error is the SPEC §5 body.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field, ValidationError
from typing_extensions import TypedDict

from archivist.errors import ArchivistError
from archivist.mcp.calls import Workspaces, internal_error, search_params, tool_error, tool_result
from archivist.queries.rules import AGENTS, API_OUTPUT, INCLUDABLE
from archivist.queries.validation import MAX_QUERY_CHARS, MAX_QUERY_WORDS

logger = logging.getLogger(__name__)

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITES_ARCHIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

DATE_RANGE = (
    "Filter by date range. Supports YYYY-MM (month) or YYYY-MM-DD (day) format. Month format matches "
    "all days within that month (in both the YYYY-MM/ and YYYY-MM-DD/ folder layouts). "
    "Examples: '2025-11' or '2025-11-10'. Empty: all dates."
)
WORKSPACE_PATH = (
    "Another workspace to search instead of the server's own: one of those the server's operator allowed "
    "(--allow-workspace), indexed with `archivist index`. Default: the server's workspace."
)
QUERY_LIMITS = f"At least 2 characters; at most {MAX_QUERY_WORDS} words and {MAX_QUERY_CHARS} characters."
EMBED_WAIT_SECONDS = 45.0  # below the 60 s that common MCP clients wait for an answer

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


class Conversation(Outcome, total=False):
    document_id: int | None
    total: int
    offset: int
    limit: int
    has_more: bool
    next_offset: int | None
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


def _result(payload: dict[str, Any]) -> CallToolResult:
    return CallToolResult.model_validate(tool_result(payload))


def _error(error: ArchivistError) -> CallToolResult:
    return CallToolResult.model_validate(tool_error(error))


async def answer(work: Callable[[threading.Event], dict[str, Any]]) -> CallToolResult:
    """The tool's structured result, or its SPEC §5 error; never an exception.

    The work runs in a worker thread, so a slow call never delays the others. When
    the caller cancels or goes away, the flag it is given is raised and the query
    running for it stops at its next progress check.
    """
    cancel = threading.Event()
    try:
        return _result(await anyio.to_thread.run_sync(work, cancel, abandon_on_cancel=True))
    except ArchivistError as error:
        return _error(error)
    except Exception:  # a bug must still reach the client as a tool error, without its details
        logger.exception("An Archivist tool failed")
        return _error(internal_error())
    finally:
        cancel.set()


def rows_payload(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A list query's rows, as seeds 001 and 003 return them."""
    return {"success": True, "num_results": len(rows), "results": rows}


def document_payload(row: dict[str, Any]) -> dict[str, Any]:
    """get_document's row: its tags a list, its extra (an agent log's session) an object, embedded a boolean."""
    return {
        "success": True,
        **row,
        "tags": json.loads(row["tags"] or "[]"),
        "extra": json.loads(row["extra"]) if row["extra"] else None,
        "embedded": bool(row["embedded"]),
    }


CONVERSATION_LIMIT = 50  # get_conversation's default page, as its SQL has it
PAGING = ("document_id", "total", "has_more", "next_offset")


def conversations_payload(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """list_conversations' rows, each one's models as a list."""
    return rows_payload([{**row, "models": json.loads(row["models"] or "[]")} for row in rows])


def conversation_payload(rows: list[dict[str, Any]], offset: int | None, limit: int | None) -> dict[str, Any]:
    """get_conversation's rows as one page: the paging once, then the messages.

    Each message's tool calls are a list; thinking and tool_output are there only when
    asked for (include), so that a page stays small.
    """
    first = rows[0] if rows else {"document_id": None, "total": 0, "has_more": 0, "next_offset": None}
    messages = []
    for row in rows:
        message = {key: value for key, value in row.items() if key not in PAGING}
        message["tool_calls"] = json.loads(message["tool_calls"] or "[]")
        for part in INCLUDABLE:
            if message[part] is None:
                del message[part]
        messages.append(message)
    return {
        "success": True,
        "document_id": first["document_id"],
        "total": first["total"],
        "offset": offset or 0,
        "limit": limit or CONVERSATION_LIMIT,
        "has_more": bool(first["has_more"]),
        "next_offset": first["next_offset"],
        "num_results": len(messages),
        "messages": messages,
    }


def _kind(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def invalid_arguments(tool: str, error: ValidationError) -> ArchivistError:
    """The SDK's schema check, in SPEC §5 terms: which arguments, what they must be (never their values)."""
    problems = []
    for item in error.errors():
        name = ".".join(str(part) for part in item["loc"]) or "arguments"
        problems.append(f"{name}: {item['msg'].lower()} (got {_kind(item.get('input'))})")
    return ArchivistError(
        "INVALID_PARAMETER",
        f"Invalid arguments for {tool}",
        "; ".join(dict.fromkeys(problems)) + ".",
        "Send each argument with the type its input schema gives (tools/list).",
    )


def apply_error_contract(server: MCPServer) -> None:
    """Every tools/call answer follows SPEC §5, also when the SDK rejects the call before a tool runs.

    Wrong JSON types, unknown arguments and unknown tools become INVALID_PARAMETER
    tool errors with the SPEC body; anything unexpected is INTERNAL_ERROR without
    its details. Works on any MCPServer, datasette-mcp's included.
    """
    call_tool = server.call_tool
    known: dict[str, set[str]] = {}

    async def checked_call_tool(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if not known:
            known.update(
                {
                    tool.name: set((tool.input_schema or {}).get("properties") or {})
                    for tool in await server.list_tools()
                }
            )
        if name not in known:
            return _error(
                ArchivistError(
                    "INVALID_PARAMETER",
                    f"Unknown tool: {name[:100]!r}",
                    "Tools: " + ", ".join(sorted(known)) + ".",
                    "Call tools/list to see each tool's arguments.",
                )
            )
        unknown = sorted(str(key)[:100] for key in arguments if key not in known[name])
        if unknown:
            return _error(
                ArchivistError(
                    "INVALID_PARAMETER",
                    f"Unknown argument{'s' if len(unknown) > 1 else ''} for {name}: {', '.join(unknown)}",
                    f"{name} takes: {', '.join(sorted(known[name])) or 'no arguments'}.",
                    "Remove the unknown argument.",
                )
            )
        try:
            return await call_tool(name, arguments, context)
        except UnexpectedToolError:
            logger.exception("Tool %r failed", name)
            return _error(internal_error())
        except ToolError as error:
            if isinstance(error.__cause__, ValidationError):
                return _error(invalid_arguments(name, error.__cause__))
            return _error(ArchivistError("INVALID_PARAMETER", str(error)[:2000]))

    server.call_tool = checked_call_tool  # type: ignore[method-assign]


class Progress:
    """MCP progress notifications for work running in a worker thread (no-ops without a progress token)."""

    def __init__(self, context: Context | None) -> None:
        """Made on the event loop's thread; called from any other."""
        self._context = context
        self._token = anyio.lowlevel.current_token()

    def __call__(self, done: float, total: float | None = None, message: str | None = None) -> None:
        if self._context is None:
            return
        try:
            anyio.from_thread.run(self._context.report_progress, done, total, message, token=self._token)
        except Exception:  # a client gone away must not stop the work
            logger.debug("progress notification not sent", exc_info=True)


def register_tools(server: MCPServer, workspaces: Workspaces, test_fixtures: bool = False) -> None:
    """Register every Archivist tool on an MCP server (and the conformance suite's fixture tool if asked)."""
    apply_error_contract(server)

    async def rows(name: str, params: dict[str, Any], workspace_path: str | None) -> CallToolResult:
        return await answer(lambda cancel: rows_payload(workspaces.archive(workspace_path).run(name, params, cancel)))

    @server.tool(annotations=READ_ONLY)
    async def search_workspace(
        query: Annotated[
            str, Field(description="Words to find in conversations (every word must match). " + QUERY_LIMITS)
        ],
        date_range: Annotated[str, Field(description=DATE_RANGE)] = "",
        conversation_type: Annotated[
            str,
            Field(
                description="Only conversations of this type: brainstorm, debug, plan, review, research, design, ..."
            ),
        ] = "",
        limit: Annotated[int | None, Field(description="Most results to return, 1-100 (default 20).")] = None,
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Rows]:
        """Full-text search over conversations, ranked by BM25, optionally within a month or a day."""
        params = {"query": query, "date_range": date_range, "conversation_type": conversation_type, "limit": limit}
        return await rows("search_workspace", params, workspace_path)

    @server.tool(annotations=READ_ONLY)
    async def search_reports(
        query: Annotated[
            str, Field(description="Text to find in analysis reports (case-insensitive substring). " + QUERY_LIMITS)
        ],
        command_filter: Annotated[
            str, Field(description="Only reports of this command (a folder name under reports/).")
        ] = "",
        max_results: Annotated[int | None, Field(description="Most results to return, 1-100 (default 10).")] = None,
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Rows]:
        """Search analysis reports: ranked by number of matches, then newer first; excerpt, date, link and path."""
        params = {"query": query, "command_filter": command_filter, "max_results": max_results}
        return await rows("search_reports", params, workspace_path)

    @server.tool(annotations=READ_ONLY)
    async def list_command_reports(
        command: Annotated[str, Field(description="A command name, as search_commands or search_reports return it.")],
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Rows]:
        """Every report of one command, newest first."""
        return await rows("list_command_reports", {"command": command}, workspace_path)

    @server.tool(annotations=READ_ONLY)
    async def get_report(
        path: Annotated[
            str,
            Field(
                description="The report's path, as search_reports returns it (absolute) or relative to the workspace."
            ),
        ],
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Report]:
        """The full text of one report."""

        def work(cancel: threading.Event) -> dict[str, Any]:
            (row,) = workspaces.archive(workspace_path).run("get_report", {"path": path}, cancel)
            return {"success": True, **row}

        return await answer(work)

    @server.tool(annotations=READ_ONLY)
    async def get_document(
        document: Annotated[
            str | int,
            Field(
                description="The document: its id (as search and list_conversations give it), its path, or the "
                "path of any file of it (a conversation folder's chat.md names the conversation), relative to the "
                "workspace or absolute."
            ),
        ],
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Document]:
        """One document whole, of any kind: id, kind, type, title, path, date, tags, its product (a record's), file (its absolute path), link, whether it is embedded, and body (its text). A conversation read from an agent log has its title and opening prompt here, and its messages in get_conversation."""

        def work(cancel: threading.Event) -> dict[str, Any]:
            (row,) = workspaces.archive(workspace_path).run("get_document", {"document": document}, cancel)
            return document_payload(row)

        return await answer(work)

    @server.tool(annotations=READ_ONLY)
    async def search_commands(
        query: Annotated[str, Field(description="Text to find in command names and their reports. " + QUERY_LIMITS)],
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Rows]:
        """Commands whose name or whose reports contain the query."""
        return await rows("search_commands", {"query": query}, workspace_path)

    @server.tool(annotations=READ_ONLY)
    async def search(
        query: Annotated[
            str,
            Field(
                description="Search words (optional in faceted, recent, tag, scan and similar modes). " + QUERY_LIMITS
            ),
        ] = "",
        mode: Annotated[
            str, Field(description="hybrid (default), keyword, semantic, similar, tag, recent, scan or faceted.")
        ] = "hybrid",
        entities: Annotated[
            Listing,
            Field(
                description="Kinds (conversation, report, memory, record, note) or record entity types (product, feature, test, bug)."
            ),
        ] = None,
        types: Annotated[
            Listing,
            Field(
                description="Memory types (note, decision, task, ...), entity types, conversation types or report commands."
            ),
        ] = None,
        tags: Annotated[Listing, Field(description="Tags: any of them, or all with match_all.")] = None,
        match_all: Annotated[
            bool, Field(description="True: every tag must be present. False (default): any tag.")
        ] = False,
        start_date: Annotated[
            str,
            Field(
                description="From this date: ISO date or datetime, YYYY-MM, YYYY, or natural language such as 'last week' or 'yesterday'. A plain date is the calendar day as the documents were written."
            ),
        ] = "",
        end_date: Annotated[str, Field(description="Until this date, same forms as start_date, e.g. 'today'.")] = "",
        product_ids: Annotated[
            list[int] | str | None, Field(description="Only records of these products (positive whole numbers).")
        ] = None,
        agents: Annotated[
            Listing,
            Field(
                description="Conversations of these agents: claude-code, codex, gemini-cli, claude-export, chatgpt-export, aider, specstory, llm, or workspace."
            ),
        ] = None,
        projects: Annotated[
            Listing, Field(description="Conversations of these projects: a full path, or its last folder's name.")
        ] = None,
        models: Annotated[Listing, Field(description="Conversations that used these models.")] = None,
        files: Annotated[
            Listing, Field(description="Conversations that touched these files: a full path, or a file name.")
        ] = None,
        match_mode: Annotated[
            str,
            Field(description='simple (default: plain words) or raw (FTS5 syntax: "phrases", prefix*, AND, OR, NOT).'),
        ] = "simple",
        min_similarity: Annotated[
            float | None,
            Field(
                description="Drop semantic candidates below this cosine similarity (default: a floor calibrated so that unrelated text matches nothing)."
            ),
        ] = None,
        document: Annotated[
            str | int,
            Field(
                description="mode=similar: the document to find neighbours of: its id, its path, or the path of "
                "any file of it."
            ),
        ] = "",
        page: Annotated[int | None, Field(description="Page number, from 1.")] = None,
        page_size: Annotated[int | None, Field(description="Results per page, 1-100 (default 10).")] = None,
        limit: Annotated[int | None, Field(description="Another name for page_size.")] = None,
        kinds: Annotated[Listing, Field(description="Another name for entities.")] = None,
        memory_type: Annotated[Listing, Field(description="Another name for types (the memory service's).")] = None,
        k: Annotated[int | None, Field(description="Another name for page_size (the memory service's).")] = None,
        source_path: Annotated[str, Field(description="Another name for document.")] = "",
        output: Annotated[
            str,
            Field(
                description="'brief' (default): query, mode, total, page, page_size, total_pages, has_more, and per "
                "result id, kind, type, entity_type and entity_id (records), tags (memories), agent (conversations), "
                "title, date, score, rank, message (an agent log's matching message) and a snippet of at most 200 "
                "characters (left out where the title says it all). 'full': every field (path, tags, product_id, ...), "
                "longer highlighted excerpts, facet counts per kind/type/month/day/tag/product/agent/project/model, "
                "and the filters as understood."
            ),
        ] = API_OUTPUT,
        encoding_context: Annotated[
            dict[str, Any] | None,
            Field(description="Accepted from the memory service's callers; it has no effect here."),
        ] = None,
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, SearchResponse]:
        """Search everything (conversations, reports, memories, records, notes) with filters, dates and pagination. Each result's id is its handle: get_document(document=id) returns the document whole; for a conversation, get_conversation(document=id, offset=message) reads its messages from the one that matched. The default answer is brief (a snippet per result); output='full' adds paths, tags, longer excerpts and facet counts."""
        params = search_params(
            {
                "query": query,
                "mode": mode,
                "entities": entities,
                "types": types,
                "tags": tags,
                "match_all": match_all,
                "start_date": start_date,
                "end_date": end_date,
                "product_ids": product_ids,
                "agents": agents,
                "projects": projects,
                "models": models,
                "files": files,
                "match_mode": match_mode,
                "min_similarity": min_similarity,
                "document": document,
                "page": page,
                "page_size": page_size,
                "limit": limit,
                "kinds": kinds,
                "memory_type": memory_type,
                "k": k,
                "source_path": source_path,
                "output": output,
                "encoding_context": encoding_context,
            }
        )
        return await answer(lambda cancel: workspaces.archive(workspace_path).search(params, cancel))

    @server.tool(annotations=READ_ONLY)
    async def list_conversations(
        agents: Annotated[
            Listing,
            Field(
                description="Only these agents: "
                + ", ".join(AGENTS)
                + " (workspace: the conversations written in the workspace itself). Default: every agent."
            ),
        ] = None,
        projects: Annotated[
            Listing,
            Field(
                description="Only these projects: a project's full path (the session's working directory) or its "
                "last folder name, e.g. 'api' for /home/ana/api. Default: every project."
            ),
        ] = None,
        start_date: Annotated[
            str,
            Field(
                description="From this date: ISO date or datetime, YYYY-MM, YYYY, or natural language such as 'last week' or 'yesterday'. A session matches when it ran at some time in the range (one past midnight matches both days)."
            ),
        ] = "",
        end_date: Annotated[str, Field(description="Until this date, same forms as start_date, e.g. 'today'.")] = "",
        limit: Annotated[int | None, Field(description="Most conversations to return, 1-100 (default 20).")] = None,
        offset: Annotated[
            int | None,
            Field(
                description="Conversations to skip (default 0). Next page: offset + limit; fewer results than limit is the last page."
            ),
        ] = None,
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Rows]:
        """Recent conversations, newest first (by last message): agent-log sessions and the workspace's own, each with id, title, agent, project, models, branch, started, last, messages (count), path and parent. Page with offset and limit; read one with get_conversation."""
        params = {
            "agents": agents,
            "projects": projects,
            "start_date": start_date,
            "end_date": end_date,
            "limit": limit,
            "offset": offset,
        }
        return await answer(
            lambda cancel: conversations_payload(
                workspaces.archive(workspace_path).run("list_conversations", params, cancel)
            )
        )

    @server.tool(annotations=READ_ONLY)
    async def get_conversation(
        document: Annotated[
            str | int,
            Field(
                description="The conversation: its id or its path, as list_conversations or search give them, or "
                "the path of any file of it."
            ),
        ],
        offset: Annotated[
            int | None,
            Field(description="Index of the first message to return (default 0). Next page: the answer's next_offset."),
        ] = None,
        limit: Annotated[int | None, Field(description="Most messages to return, 1-200 (default 50).")] = None,
        include: Annotated[
            Listing,
            Field(
                description="Parts of each message left out by default to keep answers small: thinking, tool_output (raw tool results). Default: neither."
            ),
        ] = None,
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Conversation]:
        """One conversation's messages in order, a page at a time: seq, role, timestamp, model, text and tool_calls (name, files, commands). Read a long session in pages: start at offset 0, then call again with offset=next_offset while has_more is true (total says how many messages there are). A conversation written in the workspace is one message of role 'document'."""
        params = {"document": document, "offset": offset, "limit": limit, "include": include}
        return await answer(
            lambda cancel: conversation_payload(
                workspaces.archive(workspace_path).run("get_conversation", params, cancel), offset, limit
            )
        )

    @server.tool(annotations=READ_ONLY)
    async def search_semantic(
        query: Annotated[
            str, Field(description="What to find, in plain words: documents nearest in meaning. " + QUERY_LIMITS)
        ],
        conversation_type: Annotated[str, Field(description="Only documents of this type.")] = "",
        date_range: Annotated[str, Field(description=DATE_RANGE)] = "",
        limit: Annotated[int | None, Field(description="Most results, 1-100 (default 10).")] = None,
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Rows]:
        """Semantic search (all-MiniLM-L6-v2 embeddings): documents by cosine similarity, with their best passage."""
        params = {"query": query, "conversation_type": conversation_type, "date_range": date_range, "limit": limit}
        return await rows("search_semantic", params, workspace_path)

    @server.tool(annotations=READ_ONLY)
    async def get_similar(
        source_path: Annotated[
            str,
            Field(
                description="The document: its id, its path, or the path of any file of it (a conversation folder's "
                "chat.md names the conversation), relative to the workspace or absolute."
            ),
        ] = "",
        limit: Annotated[int | None, Field(description="Most results, 1-100 (default 10).")] = None,
        document: Annotated[str | int, Field(description="Another name for source_path.")] = "",
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, Rows]:
        """The documents most similar in meaning to one document, excluding itself, with scores."""

        params = {"source_path": source_path, "document": document, "limit": limit}
        return await rows("similar", params, workspace_path)

    @server.tool(annotations=WRITES_ARCHIVE)
    async def embed_document(
        path: Annotated[str, Field(description="A file or folder inside the workspace (relative, or absolute).")],
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, Embedded]:
        """Embed the new or changed documents under one path; unchanged ones are skipped. Sends progress."""
        progress = Progress(ctx)

        def work(cancel: threading.Event) -> dict[str, Any]:
            if not path:
                raise ArchivistError(
                    "PATH_NOT_FOUND",
                    "A path is required",
                    "embed_document embeds the documents under one path.",
                    "Try path='conversations/2025-11-10', or call embed_workspace.",
                )
            workspace, db_path = workspaces.embedding_target(workspace_path)
            job = workspaces.jobs.start(workspace, path, db_path)
            return workspaces.jobs.wait(job, EMBED_WAIT_SECONDS, progress, cancel)

        return await answer(work)

    @server.tool(annotations=WRITES_ARCHIVE)
    async def embed_workspace(
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
        background: Annotated[
            bool,
            Field(
                description=f"True: start the job and answer at once. False (default): wait up to {EMBED_WAIT_SECONDS:g} s, with progress; a longer job goes on in the background. get_embedding_status shows a job's state."
            ),
        ] = False,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, Embedded]:
        """Embed every new or changed document of the workspace; unchanged ones are skipped. Sends progress."""
        progress = Progress(ctx)

        def work(cancel: threading.Event) -> dict[str, Any]:
            workspace, db_path = workspaces.embedding_target(workspace_path)
            job = workspaces.jobs.start(workspace, None, db_path)
            return workspaces.jobs.wait(job, 0 if background else EMBED_WAIT_SECONDS, progress, cancel)

        return await answer(work)

    @server.tool(annotations=READ_ONLY)
    async def get_embedding_status(
        workspace_path: Annotated[str | None, Field(description=WORKSPACE_PATH)] = None,
    ) -> Annotated[CallToolResult, EmbeddingStatus]:
        """Embedding coverage: total_chunks, num_documents, pending, db_path, model, recent embeddings, and the latest job."""

        def work(cancel: threading.Event) -> dict[str, Any]:
            _workspace, db_path = workspaces.embedding_target(workspace_path)
            (row,) = workspaces.archive(workspace_path).run("embedding_status", {}, cancel)
            job = workspaces.jobs.latest(db_path)
            return {
                "success": True,
                **row,
                "recent_embeddings": json.loads(row["recent_embeddings"] or "[]"),
                "job": job.status() if job else None,
            }

        return await answer(work)

    if test_fixtures:

        @server.tool(annotations=READ_ONLY)
        async def test_tool_with_progress(ctx: Context | None = None) -> str:
            """The conformance suite's progress fixture: three progress notifications through the embedding tools' path."""
            progress = Progress(ctx)

            def work(cancel: threading.Event) -> dict[str, Any]:
                for step in range(3):
                    progress(step, 3, f"step {step + 1} of 3")
                return {"success": True}

            result = await answer(work)
            return result.content[0].text  # type: ignore[union-attr]


def create_server(
    default_archive: Path,
    workspace: Path | None = None,
    allowed: Iterable[Path] = (),
    test_fixtures: bool = False,
    workspaces: Workspaces | None = None,
) -> MCPServer:
    """The standalone server's tools on ``default_archive`` (or on ``workspaces``, already open)."""
    from archivist.mcp import INSTRUCTIONS, NAME

    server = MCPServer(NAME, instructions=INSTRUCTIONS)
    register_tools(server, workspaces or Workspaces(default_archive, workspace, allowed), test_fixtures)
    return server
