"""The MCP tools (docs/contract.md: surfaces): each one a thin call of a canned query or of the embedding API.

The same tools are registered on the standalone server (``archivist mcp``) and on
datasette-mcp's server inside ``archivist serve`` (its ``register_mcp_tools`` hook).
There is no SQL here, and no parameter: a tool names the canned query it runs, whose
declared parameters (``archivist.queries.declarations``) are its arguments
(``signatures``), passed through the one validation layer, so every error is the error
body of docs/errors.md. What each tool answers is shaped in ``outputs``; how, in ``answering``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations

from archivist.errors import ArchivistError
from archivist.mcp import outputs
from archivist.mcp.answering import Progress, answer, apply_error_contract
from archivist.mcp.calls import Workspaces, search_params
from archivist.mcp.outputs import PAGING
from archivist.mcp.signatures import Untitled, signature, tool_function
from archivist.queries.declarations import EMBED_WAIT_SECONDS, QUERIES, TOOL_PARAMS, WORKSPACE, Param
from archivist.queries.newest import newest_day
from archivist.queries.rules import document_not_found, report_not_found

__all__ = ["PAGING", "TOOLS", "Tool", "create_server", "inputs", "register_tools"]

# (destructive_hint and idempotent_hint mean something only where read_only_hint is false: MCP's spec)
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES_ARCHIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


@dataclass(frozen=True)
class Call:
    """One call of a tool, as its work sees it in a worker thread."""

    workspaces: Workspaces
    query: str | None
    workspace_path: str | None
    arguments: dict[str, Any]
    cancel: threading.Event
    progress: Progress

    def rows(self) -> list[dict[str, Any]]:
        """The tool's canned query on its arguments."""
        assert self.query is not None
        return self.workspaces.archive(self.workspace_path).run(self.query, self.arguments, self.cancel)


@dataclass(frozen=True)
class Tool:
    """One MCP tool: its description, the canned query whose parameters it takes (none: the embedding
    API's, ``TOOL_PARAMS``), the shape of its answer (docs/mcp.md names its fields; tools/list gives no
    schema of it) and the work that makes it."""

    name: str
    description: str
    query: str | None
    output: type
    work: Callable[[Call], dict[str, Any]]
    writes: bool = False  # it writes the archive (else READ_ONLY)
    progress: bool = False  # it sends progress notifications (it takes the MCP context)


def inputs(tool: Tool) -> list[tuple[Param, bool]]:
    """A tool's arguments: its query's parameters and their seed names (or its own), then workspace_path;
    each with whether a call must give it (a parameter with another name is never required alone)."""
    query = QUERIES[tool.query] if tool.query else None
    params = query.inputs if query else TOOL_PARAMS.get(tool.name, ())
    targets = set(query.aliases.values()) if query else set()
    return [(param, param.required and param.name not in targets) for param in (*params, WORKSPACE)]


def _search(call: Call) -> dict[str, Any]:
    return call.workspaces.archive(call.workspace_path).search(search_params(call.arguments), call.cancel)


def _conversation(call: Call) -> dict[str, Any]:
    return outputs.conversation_payload(call.rows(), call.arguments["offset"], call.arguments["limit"])


def _embedding_status(call: Call) -> dict[str, Any]:
    _workspace, db_path = call.workspaces.embedding_target(call.workspace_path)
    job = call.workspaces.jobs.latest(db_path)
    return outputs.embedding_status_payload(call.rows(), job.status() if job else None)


def _embed(path: str | None, seconds: float, call: Call) -> dict[str, Any]:
    workspace, db_path = call.workspaces.embedding_target(call.workspace_path)
    job = call.workspaces.jobs.start(workspace, path, db_path)
    return call.workspaces.jobs.wait(job, seconds, call.progress, call.cancel)


def _embed_document(call: Call) -> dict[str, Any]:
    if not call.arguments["path"]:
        raise ArchivistError(
            "PATH_NOT_FOUND",
            "A path is required",
            "embed_document embeds the documents under one path.",
            "Try path='conversations/2025-11-10', or call embed_workspace.",
        )
    return _embed(call.arguments["path"], EMBED_WAIT_SECONDS, call)


def _embed_workspace(call: Call) -> dict[str, Any]:
    return _embed(None, 0 if call.arguments["background"] else EMBED_WAIT_SECONDS, call)


def _rows(call: Call) -> dict[str, Any]:
    return outputs.rows_payload(call.rows())


def _conversations(call: Call) -> dict[str, Any]:
    """list_conversations' rows; each one's tokens and cost only where include asks for usage."""
    rows = call.rows()
    include = call.arguments.get("include") or ""
    asked = include if isinstance(include, str) else ",".join(str(item) for item in include)
    if "usage" not in asked.lower().split(","):
        rows = [{key: value for key, value in row.items() if key not in ("tokens", "cost")} for row in rows]
    return outputs.models_payload(rows)


def _usage(call: Call) -> dict[str, Any]:
    """usage's rows, each one's usage_recorded true or false (false: an agent whose logs record none),
    and the agents of the range whose logs record no usage, whatever the grouping (no_usage_recorded)."""
    rows = call.rows()
    by_agent = rows
    if call.arguments.get("group_by") != "agent":
        asked = {key: value for key, value in call.arguments.items() if key not in ("limit", "offset")}
        by_agent = call.workspaces.archive(call.workspace_path).run(
            "usage", {**asked, "group_by": "agent"}, call.cancel
        )
    silent = [{"agent": row["agent"], "sessions": row["sessions"]} for row in by_agent if not row["usage_recorded"]]
    answer = outputs.models_payload([{**row, "usage_recorded": bool(row["usage_recorded"])} for row in rows])
    return outputs.with_hint({**answer, "no_usage_recorded": silent}, _newest(call))


def _activity(call: Call) -> dict[str, Any]:
    """project_activity's rows, with the range they cover and, where there are none, a hint."""
    return outputs.activity_payload(call.rows(), _newest(call), call.arguments)


def _newest(call: Call) -> str | None:
    return newest_day(call.workspaces.archive(call.workspace_path).db_path)


TOOLS = (
    Tool(
        "search_workspace",
        "Full-text search over conversations. Ranked by BM25, optionally within a month or a day.",
        "search_workspace",
        outputs.Rows,
        _rows,
    ),
    Tool(
        "search_reports",
        "Search analysis reports by text. Ranked by number of matches, then newer first; each with excerpt, date, "
        "link and path.",
        "search_reports",
        outputs.Rows,
        _rows,
    ),
    Tool(
        "list_command_reports",
        "Every report of one command, newest first.",
        "list_command_reports",
        outputs.Rows,
        _rows,
    ),
    Tool(
        "get_report",
        "The full text of one report.",
        "get_report",
        outputs.Report,
        lambda call: outputs.row_payload(call.rows(), report_not_found(call.arguments["path"])),
    ),
    Tool(
        "get_document",
        "One document whole, of any kind. By id or path; it has id, kind, type, title, path, date, tags, its "
        "product (a record's), file "
        "(its absolute path, null where the archive has not recorded the workspace's folder), link, whether it is embedded, and body "
        "(its text). A conversation read from an agent log has its title and opening prompt here, and its "
        "messages in get_conversation.",
        "get_document",
        outputs.Document,
        lambda call: outputs.document_payload(call.rows(), document_not_found(call.arguments["document"])),
    ),
    Tool(
        "search_commands",
        "Commands whose name or whose reports contain the query.",
        "search_commands",
        outputs.Rows,
        _rows,
    ),
    Tool(
        "search",
        "Search everything, with filters, dates and pages. Conversations, reports, memories, records and notes. "
        "Each result's id is its handle: get_document(document=id) returns the document whole; for a "
        "conversation, get_conversation(document=id, offset=message) reads its messages from the one that "
        "matched. The default answer is brief (a snippet per result); output='full' adds paths, tags, longer "
        "excerpts and facet counts.",
        "search",
        outputs.SearchResponse,
        _search,
    ),
    Tool(
        "list_conversations",
        "Conversations, newest first (by last message). Agent-log sessions and "
        "the workspace's own, each with id, title, agent, project, models, branch, started, last, messages (count), "
        "path and parent; with "
        "include=usage, each session's tokens and cost too. Page with offset and limit; read one with "
        "get_conversation.",
        "list_conversations",
        outputs.Rows,
        _conversations,
    ),
    Tool(
        "get_conversation",
        "One conversation's messages, a page at a time: call again with offset=next_offset while has_more. "
        "Each message has seq, role, timestamp, model, text, tool_calls "
        "(name, files, commands, input, and each change to a file as a unified diff: diffs), and usage (tokens, "
        "cost) and attachments where a message has them; the session's price (at the price data's prices), "
        "stated_cost (what its log says) and subagents (the sub-agent sessions it started, and theirs, as a tree "
        "by parent and depth). Read a long "
        "session in pages: start at offset 0, then call again with "
        "offset=next_offset while has_more is true (total says how many messages there are). A conversation "
        "written in the workspace is one message of role 'document'.",
        "get_conversation",
        outputs.Conversation,
        _conversation,
    ),
    Tool(
        "activity",
        "What the agents did, project by project, in a date range. "
        "By default the 30 days to the newest activity; each "
        "project's sessions (the newest with titles and ids for get_conversation), the files their tool calls "
        "touched, the commands they ran, tokens and cost. Answers 'what did we do last week' in one call; narrow "
        "with agents or projects.",
        "project_activity",
        outputs.ActivityRows,
        _activity,
    ),
    Tool(
        "file_history",
        "Every tool call of the agents that read or changed a file, newest first. Each "
        "names the session (id, "
        "title, agent, project), the message (seq: get_conversation's offset), the call's tool, the path as it "
        "named it, its commands, whether it changed the file (changed) and each change as a unified diff (diffs: "
        "diff, diff_lines, diff_cut). changes=true lists only the calls that changed it: what did the agents "
        "change in this file. Give a full path, or a file name alone for every path ending in it. Page "
        "with offset=next_offset while has_more.",
        "file_history",
        outputs.Rows,
        lambda call: outputs.file_history_payload(call.rows()),
    ),
    Tool(
        "usage",
        "Tokens and cost of the agents' model responses. "
        "Tokens (input, output, cache write, cache read) and cost, one row per "
        "day, month, 5-hour block, model, agent, project or session (group_by), within a date range and for some "
        "agents or projects: what did it cost, and where did the tokens go. Cost is at maintained prices "
        "(price_data); a model they do not know is counted in unpriced, never guessed. By session: id (key), "
        "title, agent, project, first, last, models, tokens and cost, newest first; page with offset. An agent "
        "whose logs record no usage in the range is named in no_usage_recorded with its sessions (and, by agent, "
        "is a row with usage_recorded false).",
        "usage",
        outputs.UsageRows,
        _usage,
    ),
    Tool(
        "search_semantic",
        "Semantic search: the documents nearest in meaning. Each with its best passage; it ranks by cosine "
        "similarity of all-MiniLM-L6-v2 embeddings.",
        "search_semantic",
        outputs.Rows,
        _rows,
    ),
    Tool(
        "get_similar",
        "The documents nearest in meaning to one document. Not itself; each with its score.",
        "similar",
        outputs.Rows,
        _rows,
    ),
    Tool(
        "embed_document",
        "Embed the new or changed documents under one path. Unchanged ones are skipped. Sends progress.",
        None,
        outputs.Embedded,
        _embed_document,
        writes=True,
        progress=True,
    ),
    Tool(
        "embed_workspace",
        "Embed every new or changed document of the workspace. Unchanged ones are skipped. Sends progress.",
        None,
        outputs.Embedded,
        _embed_workspace,
        writes=True,
        progress=True,
    ),
    Tool(
        "get_embedding_status",
        "How much of the archive is embedded, and the latest embedding job. It gives total_chunks, num_documents, "
        "pending, db_path, model, recent embeddings, and the latest job.",
        "embedding_status",
        outputs.EmbeddingStatus,
        _embedding_status,
    ),
)


def told(tool: Tool, call: Call) -> dict[str, Any]:
    """The tool's answer, and ``building`` in it while its archive is still being built or after a run
    that stopped (``archive.building``; search's own answer says it already): left out once it is built."""
    payload = tool.work(call)
    if "building" not in payload:
        state = call.workspaces.archive(call.workspace_path).building()
        if state is not None:
            payload = {**payload, "building": state}
    return payload


def add_tool(server: MCPServer, workspaces: Workspaces, tool: Tool) -> None:
    """Register one tool: a function with the tool's declared arguments that runs its work."""

    async def run(ctx: Context | None = None, workspace_path: str | None = None, **arguments: Any) -> CallToolResult:
        progress = Progress(ctx)  # (made on the event loop's thread)
        return await answer(
            lambda cancel: told(tool, Call(workspaces, tool.query, workspace_path, arguments, cancel, progress))
        )

    shape = signature(inputs(tool), context=tool.progress)
    annotations = WRITES_ARCHIVE if tool.writes else READ_ONLY
    server.add_tool(tool_function(tool.name, tool.description, shape, run), annotations=annotations)


def register_tools(server: MCPServer, workspaces: Workspaces, test_fixtures: bool = False) -> None:
    """Register every Archivist tool on an MCP server (and the conformance suite's fixture tool if asked)."""
    apply_error_contract(server)
    server.middleware.append(Untitled())
    for tool in TOOLS:
        add_tool(server, workspaces, tool)
    if test_fixtures:
        server.add_tool(test_tool_with_progress, annotations=READ_ONLY)


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
