"""Each canned query, declared once: its title, what it does, and its parameters.

A query's SQL is ``sql/<name>.sql``; everything else about it is declared here: its
parameters (each a ``params.Param``: name, JSON type, default, rule, description, and
where the surfaces show it), in the order forms show them; the checks across
parameters; whether its SQL embeds the query (the model is loaded before the SQL
runs); and the names seed systems use for its parameters (``params.Alias``). The MCP
tools' parameters that are no query's (which workspace; the embedding API's) are
declared here too (``WORKSPACE``, ``TOOL_PARAMS``), and the command line's own (``CLI_PARAMS``).

Every surface is derived from these declarations: Datasette's canned queries
(``catalog.canned_queries``), the parameter checks (``validation.QUERIES``), the MCP
tools' input schemas (``archivist.mcp.signatures``), the options of ``archivist search``
(``archivist.cli.searching``), the search page's form (``archivist.web.urls``) and
docs/search.md's tables of parameters; tests hold each surface to them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from archivist.queries import params, rules
from archivist.queries.params import (
    CONVERSATION_DATES,
    QUERY_LIMITS,
    WORKSPACE_PATH,
    Alias,
    Param,
    Surface,
    as_given,
    fields,
)
from archivist.queries.rules import Check
from archivist.queries.search_params import SEARCH_ALIASES, SEARCH_PARAMS
from archivist.queries.totals import USAGE_BY, USAGE_SESSIONS

__all__ = ["CLI_PARAMS", "QUERIES", "QUERY_LIMITS", "TOOL_PARAMS", "WORKSPACE", "Alias", "Param", "Query"]


@dataclass(frozen=True)
class Query:
    """One canned query: all that is said about it besides its SQL."""

    title: str
    description: str
    params: tuple[Param, ...] = ()
    checks: tuple[Check, ...] = ()  # across parameters, after each one's rule; may read the archive
    embeds: Callable[[dict[str, str]], bool] | None = None  # when its SQL embeds :query
    seed_names: tuple[Alias, ...] = ()  # the names seed systems use for some of its parameters
    hide_sql: bool = True

    @property
    def aliases(self) -> dict[str, str]:
        """A seed's name for a parameter -> ours."""
        return {alias.name: alias.target for alias in self.seed_names}

    @property
    def inputs(self) -> tuple[Param, ...]:
        """Every name it takes: its parameters, then the seeds' names for them."""
        return fields(self.params, self.seed_names)

    @property
    def sql_params(self) -> list[str]:
        """The parameters its SQL reads, in declaration order (Datasette's ``params``)."""
        return [param.name for param in self.params if param.in_sql]

    def param(self, name: str) -> Param:
        return next(param for param in self.inputs if param.name == name)

    def describe(self, surface: Surface = "canned") -> str:
        """The description Datasette shows: what the query does, then a line per parameter."""
        lines = [f"{param.name}: {param.described(surface)}" for param in self.params if param.in_sql]
        return self.description + ("\n\n" + "\n".join(lines) if lines else "")


QUERIES: dict[str, Query] = {
    "search_workspace": Query(
        title="Search conversations",
        description="Full-text search over conversations (BM25 ranking, every word must match).",
        params=(
            params.query(
                "search_workspace",
                "authentication",
                "Words to find in conversations (every word must match).",
                flags=("QUERY",),
                brief="Every word must match.",
            ),
            params.date_range(flags=("--date-range",)),
            params.conversation_type("conversations", flags=("--type",)),
            params.limit(20, flags=("--limit",)),
        ),
    ),
    "search_reports": Query(
        title="Search analysis reports",
        description="Case-insensitive substring search through analysis reports, across all commands or one "
        "(command_filter). Ranked by number of matches, then newer date first.",
        params=(
            params.query(
                "search_reports",
                "proxy timeout",
                "Text to find in analysis reports (case-insensitive substring).",
                flags=("QUERY",),
                brief="A case-insensitive substring.",
            ),
            Param(
                "command_filter",
                rules.command_name("command_filter", required=False),
                "Only reports of this command (a folder name under reports/); empty: every command.",
                brief="Only reports of this command.",
                flags=("--command",),
                metavar="COMMAND",
            ),
            params.limit(10, flags=("--limit",), name="max_results"),
        ),
        checks=(rules.reports_exist, rules.filter_command_exists),
    ),
    "list_commands": Query(
        title="Report commands",
        description="Every command that has reports, with how many and the newest report date.",
    ),
    "list_command_reports": Query(
        title="Reports of one command",
        description="Every report of one command, newest first (undated reports last).",
        params=(
            Param(
                "command",
                rules.command_name("command", required=True),
                "A command name, as search_commands, search_reports or the list_commands query return it.",
                required=True,
                brief="As search_commands gives it.",
            ),
        ),
        checks=(rules.listed_command_exists,),
    ),
    "get_report": Query(
        title="Get one report",
        description="The full text of one report.",
        params=(
            Param(
                "path",
                rules.workspace_path,
                "The report's path, as search_reports returns it (absolute) or relative to the workspace.",
                required=True,
                brief="As search_reports gives it.",
            ),
        ),
        checks=(rules.report_exists,),
    ),
    "search_commands": Query(
        title="Find commands",
        description="Commands whose name or whose reports contain the query (case-insensitive).",
        params=(params.query("search_commands", "proxy", "Text to find in command names and their reports."),),
        checks=(rules.reports_exist,),
    ),
    "search_semantic": Query(
        title="Semantic search",
        description="Documents whose meaning is nearest the query (all-MiniLM-L6-v2 embeddings, cosine "
        "similarity), each with its best-matching passage, down to the similarity floor (0.32: unrelated "
        "text finds nothing). conversation_type and date_range filter before the search. An archive with "
        "no embeddings gives no results, not an error.",
        params=(
            params.query(
                "search_semantic",
                "authentication patterns",
                "What to find, in plain words: documents nearest in meaning.",
                brief="In plain words.",
            ),
            params.conversation_type("documents"),
            params.date_range(),
            params.limit(10),
        ),
        embeds=lambda params: True,
    ),
    "find_document": Query(
        title="Find a document",
        description="One document by id, by its path or by the path of any file of it (relative to the workspace, "
        "or absolute).",
        params=(params.document(),),
        checks=(rules.document_exists,),
    ),
    "similar": Query(
        title="Similar documents",
        description="The documents nearest in meaning to one document (by id, by its path or by the path of any "
        "file of it), excluding itself, with cosine similarity scores.",
        params=(params.document(), params.limit(10)),
        checks=(rules.document_exists,),
        seed_names=(Alias("source_path", "document"),),
    ),
    "embedding_status": Query(
        title="Embedding status",
        description="How much of the archive is embedded: chunks, embedded documents, documents still pending "
        "(new or changed since they were embedded), the archive file, the model, and the most recently "
        "embedded documents.",
    ),
    "search": Query(
        title="Search everything",
        description="The unified faceted search over every kind of document. It returns one row: the whole "
        "response as JSON, the same JSON that GET /api/search and the MCP search tool return for the same "
        "parameters. With output=full (the default here): query, mode, total, page, page_size, total_pages, "
        "has_more, results (every field, a highlighted excerpt, the matching message of an agent log), "
        "facets (counts over the first 200 results in order) and filters. With output=brief (the default of "
        "/api/search and of the MCP tool): query, mode, total, page, page_size, total_pages, has_more and results "
        "of id, kind, type, entity_type and entity_id (every result's), tags (memories), agent, title, date, score, "
        "rank, message and a one-line snippet (left out where the title says it all), empty fields left out.",
        params=SEARCH_PARAMS,
        checks=(rules.search_inputs, rules.entities_known, rules.raw_syntax),
        embeds=rules.embeds_search,
        seed_names=SEARCH_ALIASES,
    ),
    "document_counts": Query(
        title="Documents by kind and type",
        description="How many documents of each kind and type the archive holds.",
    ),
    "get_document": Query(
        title="A document, whole",
        description="One document by id or path (its own, or any file's of it), with its body, metadata and tags: "
        "what the document page shows. "
        "file is its absolute path on this machine, link a URL for it (reports: under report_link_base_url "
        "when that is set), both null where the archive has not recorded the workspace's folder (an index run "
        "records it with the workspace's documents); product is the title of its product record, when there is one.",
        params=(params.document(),),
        checks=(rules.document_exists,),
    ),
    "activity": Query(
        title="Activity over time",
        description="How many documents of each kind are dated in each month or each day. Undated documents are "
        "not counted.",
        params=(
            Param(
                "by",
                rules.one_of("by", ("month", "day")),
                "month (the default) or day; by day, documents dated only by month are left out.",
                default="month",
            ),
            Param("kind", rules.one_of("kind", rules.KINDS), "Only documents of this kind; empty: every kind."),
        ),
    ),
    "check_search_syntax": Query(
        title="Check FTS5 query syntax",
        description="Runs a raw FTS5 query (match_mode=raw of search) once, to report a syntax error before a "
        "search runs it. Returns 1 when the query matches something, else 0.",
        params=(
            Param(
                "query",
                rules.query_text("check_search_syntax", "proxy NEAR(timeout)"),
                "A query in FTS5 syntax.",
                required=True,
            ),
        ),
        checks=(rules.fts_syntax,),
    ),
    "list_conversations": Query(
        title="Conversations, newest first",
        description="Conversations, newest first (by their last message, else their date): the sessions read "
        "from agent logs, and the conversations written in the workspace (agent workspace). Each row: id, title, "
        "agent, project, models (JSON), branch, started, last, messages (how many get_conversation pages "
        "through), date, path, parent (a sub-agent transcript's session, by path), and tokens and cost (with "
        "include=usage; else null). A session matches a "
        "time filter when it ran at some time inside it (from its first message to its last: a session "
        "past midnight matches both days); a workspace conversation when its whole date lies inside. "
        "Page with offset: fewer rows than limit is the last page.",
        params=(
            params.agents("conversations"),
            Param(
                "projects",
                rules.text_list,
                "Only these projects: a project's full path (the session's working directory) or its last folder "
                "name (api for /home/ana/api); empty: every project. Workspace conversations have no project.",
                many=True,
                brief="Full paths or last folder names.",
            ),
            *params.dates(CONVERSATION_DATES),
            params.limit(20, "conversations"),
            params.offset(
                "How many conversations to skip (default 0). Next page: offset + limit; fewer results than limit "
                "is the last page.",
                brief="Next page: offset + limit.",
            ),
            Param(
                "include",
                rules.choice_list(
                    ("usage",),
                    "Cannot include ",
                    "include names what each conversation leaves out by default: usage (its tokens and cost).",
                    "Try include=usage, or leave include empty for the conversations alone.",
                ),
                "usage: each session's tokens and cost too (its responses', at the price data's prices); empty: "
                "neither.",
                many=True,
                brief="usage: each session's tokens and cost too.",
            ),
        ),
        checks=(rules.dates_in_order,),
    ),
    "get_conversation": Query(
        title="A conversation, message by message",
        description="One conversation's messages in order, a page at a time. Each row is one message: seq "
        "(its index, from 0), role, timestamp, model, text and tool_calls (JSON: each call's name, files "
        "and commands), usage (JSON: the tokens of the model response it is, input, output, cache_write, "
        "cache_read and cost where the log states one; null where none is recorded), attachments (JSON: "
        "each image or file attached, its type, name and size), and thinking and tool_output when include "
        "names them (null otherwise); and on every "
        "row the paging: document_id, total (messages in the conversation), has_more (1 when messages follow "
        "this page) and next_offset (the offset of the next page, or null). A conversation written in the "
        "workspace is one message of role document: its whole text.",
        params=(
            params.document(
                "The conversation: its id or its path, as list_conversations or search give them, or the path of "
                "any file of it.",
                brief="Its id or its path.",
            ),
            params.offset(
                "Index of the first message to return (default 0). Next page: the answer's next_offset.",
                brief="First message; next page: next_offset.",
            ),
            Param(
                "limit",
                rules.bounded_int("limit", 1, 200, example=50),
                "Most messages to return, 1 to 200 (default 50).",
                type="integer",
                default=50,
                brief="Most messages.",
            ),
            Param(
                "include",
                rules.include_list,
                "Parts of each message left out by default to keep answers small: "
                f"{', '.join(rules.INCLUDABLE)} (the raw tool results); empty: neither.",
                many=True,
                brief=f"Also each message's {' and '.join(rules.INCLUDABLE)}.",
            ),
        ),
        checks=(rules.conversation_page,),
    ),
    "file_history": Query(
        title="File history: the sessions and tool calls that read or changed a file",
        description="Every tool call of the agent logs that read or changed a file, newest first: the file by its "
        "full path as the log recorded it, or by its name alone (every path that ends in it). Each row: "
        "document_id, title, agent and project of the session; seq, timestamp and role of the message "
        "(get_conversation's offset); tool (the call's name: an edit, a write, a read, a command), file (the "
        "path as the call named it, with / for a backslash), commands (JSON), changed (1 when the call's edits "
        "changed the file) and edits (JSON: where it changed the file, the changes the call made, each a file "
        "with its old and new text or a patch; else []); and on every row the paging: total, has_more and "
        "next_offset.",
        params=(
            Param(
                "path",
                rules.file_path("path", "src/app.py"),
                "The file: its full path as the logs recorded it (/home/ana/api/src/app.py), or its name alone "
                "(app.py: every path that ends in it).",
                required=True,
                brief="Full path, or name alone.",
            ),
            Param(
                "changes",
                rules.boolean("changes"),
                "True: only the calls that changed the file (their edits). False (default): every call that read "
                "or changed it.",
                type="boolean",
                brief="true: only the calls that changed it.",
            ),
            params.limit(50, "tool calls"),
            params.offset(
                "How many tool calls to skip (default 0). Next page: the answer's next_offset.",
                brief="Next page: next_offset.",
            ),
        ),
    ),
    "project_activity": Query(
        title="What the agents did, project by project",
        description="What the agents did in a time range (by default the 30 days to the newest day with a message), one row per project, "
        "the most recently active first: project, agents and models (JSON), sessions (how many) and newest "
        "(JSON: the newest 20, each with id, title, agent, started, last and messages), messages, files_touched "
        "(JSON: the files their tool calls read or changed, the most touched first, each with how many sessions "
        "touched it), commands (how many were run) and top_commands (JSON), tokens and cost (their responses' "
        "in the range, at the price data's prices), first and last. A session counts when it ran at some time "
        "inside the range.",
        params=(
            *params.dates(
                "all in UTC; by default the 30 days to the newest day with a message (a start not given: 30 days before the end); a session counts when it ran at some time inside"
            ),
            *params.log_filters("the sessions"),
        ),
        checks=(rules.dates_in_order,),
    ),
    "activity_periods": Query(
        title="Sessions, messages, tokens and cost per day or week",
        description="What the agents did per day or week in a time range (by default the 30 days to the newest day with a message), one row "
        "per period with a message, in order: key (the day, or the Monday that starts the week, in UTC), "
        "sessions (how many had a message in it), messages (every role), responses (with usage), input_tokens, "
        "output_tokens, cache_write_tokens, cache_read_tokens, total_tokens and cost (at the price data's "
        "prices; null where none could be priced).",
        params=(
            Param(
                "group_by",
                rules.one_of("group_by", rules.ACTIVITY_PERIODS),
                f"One row per: {' or '.join(rules.ACTIVITY_PERIODS)} (a week from Monday). Default day.",
                default="day",
            ),
            *params.dates(
                "all in UTC; by default the 30 days to the newest day with a message (a start not given: 30 days before the end); messages are counted by the hour, so a "
                "bound within an hour takes that hour whole"
            ),
            *params.log_filters("the messages"),
        ),
        checks=(rules.dates_in_order,),
    ),
    "usage": Query(
        title="Tokens and cost, by day, month, 5-hour block, model, agent or project",
        description="The tokens that the agent logs' model responses used (input not read from the cache, "
        "output, cache write, cache read, and total_tokens) and what they cost, one row per group: key (the "
        "day, month or block start in UTC, or the model, agent or project), cost (US dollars at the prices of "
        "the price data named in price_data; null where no response of the group could be priced), "
        "stated_cost (what the logs themselves say, where they do), responses, unpriced (responses of a model "
        "the price data does not know: their cost is never guessed), sessions, models (JSON), first, last, "
        "agent, title and project (a session's), and usage_recorded. Each response is counted once, as its log "
        "records it. By session: the newest last response first, a page by limit and offset. By agent, an "
        "agent with sessions in the range whose logs record no usage there is one more row, last: "
        "usage_recorded 0, key and agent its name, sessions how many, tokens and cost null.",
        params=(
            Param(
                "group_by",
                rules.one_of("group_by", USAGE_BY),
                f"One row per: {', '.join(USAGE_BY)} (block: five hours from the first response "
                "that no earlier block holds, as ccusage reports them). Default day.",
                default="day",
                brief="One row per group (block: 5 hours).",
            ),
            *params.dates(
                "all in UTC; a response counts when its hour lies inside (a bound within an hour takes that hour "
                "whole: usage is kept by the hour)"
            ),
            *params.log_filters("the responses"),
            params.limit(USAGE_SESSIONS, "sessions (by session only)"),
            params.offset(
                "How many sessions to skip (by session only; default 0). Next page: offset + limit; fewer "
                "sessions than limit is the last page.",
                brief="By session; next page: offset + limit.",
            ),
        ),
        checks=(rules.dates_in_order,),
    ),
}

# --- the MCP tools' parameters that are no canned query's --------------------------------------

# which archive a tool reads: every tool takes it
WORKSPACE = Param("workspace_path", as_given, WORKSPACE_PATH, default=None, brief="Another allowed workspace.")
EMBED_WAIT_SECONDS = 45.0  # the longest an embedding call waits: below the 60 s common MCP clients wait

# the embedding API's tools, which run no canned query
TOOL_PARAMS: dict[str, tuple[Param, ...]] = {
    "embed_document": (
        Param(
            "path",
            as_given,
            "A file or folder inside the workspace (relative, or absolute).",
            required=True,
            brief="A file or folder in the workspace.",
        ),
    ),
    "embed_workspace": (
        Param(
            "background",
            rules.boolean("background"),
            f"True: start the job and answer at once. False (default): wait up to {EMBED_WAIT_SECONDS:g} s, with "
            "progress; a longer job goes on in the background. get_embedding_status shows a job's state.",
            type="boolean",
            brief="true: answer at once, the job going on.",
        ),
    ),
}

# --- the command line's parameters that are no canned query's ----------------------------------

# archivist history prints every page of file_history it asks for: its limit is the calls printed
HISTORY_LIMIT = Param(
    "limit",
    rules.bounded_int("limit", 1, 10_000, example=50),
    f"Most calls to print, 1 to 10000 (default 50): asked of file_history {params.MAX_LIMIT} at a time.",
    type="integer",
    default=50,
    metavar="N",
)
CLI_PARAMS: dict[str, tuple[Param, ...]] = {"history": (HISTORY_LIMIT,)}
