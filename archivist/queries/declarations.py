"""Each canned query, declared once: its title, what it does, and its parameters.

A query's SQL is ``sql/<name>.sql``; everything else about it is declared here: each
parameter's name, rule (``rules``) and one-line description, in the order forms show
them; the checks across parameters; whether its SQL embeds the query (the model is
loaded before the SQL runs); and the names seed systems use for its parameters.

Datasette's canned queries (``catalog.canned_queries``) and the parameter checks that
every surface runs (``validation.QUERIES``) are both derived from these declarations;
tests hold the SQL files, the MCP tools' input schemas and the search page's form to them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from archivist.queries import rules
from archivist.queries.rules import Check

Rule = Callable[[str], str]

QUERY_LIMITS = f"At least 2 characters; at most {rules.MAX_QUERY_WORDS} words and {rules.MAX_QUERY_CHARS} characters."


def _as_given(value: str) -> str:
    return value


@dataclass(frozen=True)
class Param:
    """One parameter of a canned query."""

    name: str
    rule: Rule  # checks the value (as text) and returns it normalised, or raises ArchivistError
    description: str
    # False: accepted from a seed system's callers and checked, but the SQL does not read it
    in_sql: bool = True


@dataclass(frozen=True)
class Query:
    """One canned query: all that is said about it besides its SQL."""

    title: str
    description: str
    params: tuple[Param, ...] = ()
    checks: tuple[Check, ...] = ()  # across parameters, after each one's rule; may read the archive
    embeds: Callable[[dict[str, str]], bool] | None = None  # when its SQL embeds :query
    aliases: dict[str, str] = field(default_factory=dict)  # a seed's name for a parameter -> ours
    hide_sql: bool = True

    @property
    def sql_params(self) -> list[str]:
        """The parameters its SQL reads, in declaration order (Datasette's ``params``)."""
        return [param.name for param in self.params if param.in_sql]

    def param(self, name: str) -> Param:
        return next(param for param in self.params if param.name == name)

    def describe(self) -> str:
        """The description Datasette shows: what the query does, then a line per parameter."""
        lines = [f"{param.name}: {param.description}" for param in self.params if param.in_sql]
        return self.description + ("\n\n" + "\n".join(lines) if lines else "")


def _limit(default: int) -> Param:
    return Param("limit", rules.bounded_int("limit", 1, 100), f"Most results to return, 1 to 100 (default {default}).")


DOCUMENT = (
    "A document id, its path, or the path of any file of it (a conversation folder's chat.md names the "
    "conversation), relative to the workspace or absolute inside it."
)


def _document(description: str = DOCUMENT) -> Param:
    return Param("document", rules.required_text("document", "42"), description)


def _conversation_type(documents: str) -> Param:
    return Param(
        "conversation_type",
        rules.conversation_type,
        f"Only {documents} of this type (brainstorm, debug, plan, review, research, ...); empty: every type.",
    )


SEARCH_DATES = (
    "a document matches when its whole date lies inside (a month-only date needs the whole month), and "
    "documents without a date never match a time filter"
)


CONVERSATION_DATES = (
    "a session matches when it ran at some time inside (between its first and its last message), a workspace "
    "conversation when its whole date lies inside, and conversations without a date never match a time filter"
)


def _date_bound(name: str, matches: str = SEARCH_DATES) -> Param:
    if name == "start_date":
        return Param(
            "start_date",
            rules.date_bound("start_date", end=False),
            'From this date: ISO dates or datetimes, YYYY-MM, YYYY or natural language ("yesterday", '
            f'"last week", "3 days ago"), all in UTC; {matches}.',
        )
    return Param(
        "end_date",
        rules.date_bound("end_date", end=True),
        "Until this date, in the same forms as start_date (e.g. today).",
    )


def _offset(what: str) -> Param:
    return Param(
        "offset",
        rules.bounded_int("offset", 0, rules.MAX_OFFSET, example=0),
        f"How many {what} to skip, for paging: 0 (the default) for the first page.",
    )


QUERIES: dict[str, Query] = {
    "search_workspace": Query(
        title="Search conversations",
        description="Full-text search over conversations (BM25 ranking, every word must match).",
        params=(
            Param(
                "query",
                rules.query_text("search_workspace", "authentication"),
                "Words to find in conversations (every word must match). " + QUERY_LIMITS,
            ),
            Param(
                "date_range",
                rules.date_range,
                "YYYY-MM (a month: matches every day of it, in both the old YYYY-MM/ and new YYYY-MM-DD/ "
                "folder layouts) or YYYY-MM-DD (that day only). Empty means all dates.",
            ),
            _conversation_type("conversations"),
            _limit(20),
        ),
    ),
    "search_reports": Query(
        title="Search analysis reports",
        description="Case-insensitive substring search through analysis reports, across all commands or one "
        "(command_filter). Ranked by number of matches, then newer date first.",
        params=(
            Param(
                "query",
                rules.query_text("search_reports", "proxy timeout"),
                "Text to find in reports (case-insensitive substring). " + QUERY_LIMITS,
            ),
            Param(
                "command_filter",
                rules.command_name("command_filter", required=False),
                "Only reports of this command (a folder name under reports/); empty: every command.",
            ),
            Param("max_results", rules.bounded_int("max_results", 1, 100), "Most results, 1 to 100 (default 10)."),
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
                "A command name, as list_commands, search_commands or search_reports return it.",
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
                "The report's path, as returned by search_reports (absolute) or relative to the workspace.",
            ),
        ),
        checks=(rules.report_exists,),
    ),
    "search_commands": Query(
        title="Find commands",
        description="Commands whose name or whose reports contain the query (case-insensitive).",
        params=(
            Param(
                "query",
                rules.query_text("search_commands", "proxy"),
                "Text to find in command names and their reports. " + QUERY_LIMITS,
            ),
        ),
        checks=(rules.reports_exist,),
    ),
    "search_semantic": Query(
        title="Semantic search",
        description="Documents whose meaning is nearest the query (all-MiniLM-L6-v2 embeddings, cosine "
        "similarity), each with its best-matching passage, down to the similarity floor (0.32: unrelated "
        "text finds nothing). conversation_type and date_range filter before the search. An archive with "
        "no embeddings gives no results, not an error.",
        params=(
            Param(
                "query",
                rules.query_text("search_semantic", "authentication patterns"),
                "What to find, in plain words: documents nearest in meaning. " + QUERY_LIMITS,
            ),
            _conversation_type("documents"),
            Param(
                "date_range",
                rules.date_range,
                "YYYY-MM (a month: every day of it) or YYYY-MM-DD (that day only). Empty means all dates.",
            ),
            _limit(10),
        ),
        embeds=lambda params: True,
    ),
    "find_document": Query(
        title="Find a document",
        description="One document by id, by its path or by the path of any file of it (relative to the workspace, "
        "or absolute).",
        params=(_document(),),
        checks=(rules.document_exists,),
    ),
    "similar": Query(
        title="Similar documents",
        description="The documents nearest in meaning to one document (by id, by its path or by the path of any "
        "file of it), excluding itself, with cosine similarity scores.",
        params=(
            _document(),
            _limit(10),
        ),
        checks=(rules.document_exists,),
        aliases={"source_path": "document"},
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
        "of id, kind, type, entity_type and entity_id (records), tags (memories), agent, title, date, score, "
        "rank, message and a one-line snippet (left out where the title says it all), empty fields left out.",
        params=(
            Param(
                "query",
                rules.optional_query,
                "Words to search for. Optional in the recent, tag, scan, faceted and similar modes; in "
                "recent, tag and faceted every word must match. " + QUERY_LIMITS,
            ),
            Param(
                "mode",
                rules.one_of("mode", rules.MODES),
                "hybrid (default: keyword and semantic rankings fused), keyword (BM25; every word first, and "
                "when fewer than 100 documents hold every word, documents holding some of them fill the list up "
                "to 100), semantic (the 100 nearest documents), similar (the 100 documents nearest to document, "
                "an id or path), tag (tags required, newest first), recent (newest first), scan (like hybrid, "
                "or newest first without a query; with output=full, short excerpts), faceted (every filter; "
                "hybrid ranking with a query, newest first without).",
            ),
            Param(
                "entities",
                rules.text_list,
                "Comma-separated kinds (conversation, report, memory, record, note) or record entity types "
                "(product, feature, test, bug, ...).",
            ),
            Param(
                "types",
                rules.text_list,
                "Comma-separated memory types, entity types, conversation types or report commands.",
            ),
            Param("tags", rules.text_list, "Comma-separated tags: any of them, or all with match_all=true."),
            Param(
                "match_all", rules.boolean("match_all"), "true: every tag must be present; false (default): any tag."
            ),
            _date_bound("start_date"),
            _date_bound("end_date"),
            Param(
                "product_ids",
                rules.id_list("product_ids"),
                "Comma-separated numbers: only records of these products.",
            ),
            Param(
                "agents",
                rules.text_list,
                "Comma-separated agents of conversations: agent-log kinds (claude-code, codex, gemini-cli, "
                "claude-export, chatgpt-export, aider, specstory, llm) or workspace (its own markdown).",
            ),
            Param("projects", rules.text_list, "Comma-separated projects: a full path, or its last folder's name."),
            Param("models", rules.text_list, "Comma-separated models a conversation used."),
            Param(
                "files", rules.text_list, "Comma-separated files a conversation touched: a full path, or a file name."
            ),
            Param(
                "match_mode",
                rules.one_of("match_mode", ("simple", "raw")),
                'simple (default: the words, FTS syntax escaped) or raw (FTS5 syntax: "phrases", prefix*, AND, '
                "OR, NOT, NEAR).",
            ),
            Param(
                "min_similarity",
                rules.number("min_similarity", -1, 1),
                "Drop semantic candidates below this cosine similarity (default 0.32 for semantic and hybrid, "
                "so that unrelated text finds nothing; -1 keeps every candidate).",
            ),
            Param(
                "document",
                _as_given,
                "mode=similar: the document to find the neighbours of: an id, its path or the path of a file of it.",
            ),
            Param("page", rules.bounded_int("page", 1, 10_000, example=1), "Page number, from 1."),
            Param("page_size", rules.bounded_int("page_size", 1, 100), "Results per page, 1 to 100 (default 10)."),
            Param("limit", rules.bounded_int("limit", 1, 100), "Another name for page_size."),
            Param(
                "output",
                rules.one_of("output", rules.OUTPUTS),
                "brief (what a list of results shows: id, kind, type, entity_type and entity_id (records), tags "
                "(memories), agent, title, date, score, rank, the message that matched, a snippet of at most 200 "
                "characters unless the title says it all; the default of /api/search and MCP) or full (the default "
                "here: every field, excerpts, facets and filters).",
            ),
            # seed 002's name with no counterpart: a boost this archive does not use
            Param(
                "encoding_context", _as_given, "Accepted from the memory service's callers; no effect.", in_sql=False
            ),
        ),
        checks=(rules.search_inputs, rules.entities_known, rules.raw_syntax),
        embeds=rules.embeds_search,
        aliases={"kinds": "entities", "memory_type": "types", "k": "page_size", "source_path": "document"},
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
        "when that is set); product is the title of its product record, when there is one.",
        params=(_document(),),
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
            ),
        ),
        checks=(rules.fts_syntax,),
    ),
    "list_conversations": Query(
        title="Conversations, newest first",
        description="Conversations, newest first (by their last message, else their date): the sessions read "
        "from agent logs, and the conversations written in the workspace (agent workspace). Each row: id, title, "
        "agent, project, models (JSON), branch, started, last, messages (how many get_conversation pages "
        "through), date, path and parent (a sub-agent transcript's session, by path). A session matches a "
        "time filter when it ran at some time inside it (from its first message to its last: a session "
        "past midnight matches both days); a workspace conversation when its whole date lies inside. "
        "Page with offset: fewer rows than limit is the last page.",
        params=(
            Param(
                "agents",
                rules.agent_list,
                "Comma-separated agents: " + ", ".join(rules.AGENTS) + " (workspace: the conversations written "
                "in the workspace); empty: every agent.",
            ),
            Param(
                "projects",
                rules.text_list,
                "Comma-separated projects: a project's full path (its working directory) or its last folder "
                "name (api for /home/ana/api); empty: every project. Workspace conversations have no project.",
            ),
            _date_bound("start_date", CONVERSATION_DATES),
            _date_bound("end_date"),
            _limit(20),
            _offset("conversations"),
        ),
        checks=(rules.dates_in_order,),
    ),
    "get_conversation": Query(
        title="A conversation, message by message",
        description="One conversation's messages in order, a page at a time. Each row is one message: seq "
        "(its index, from 0), role, timestamp, model, text and tool_calls (JSON: each call's name, files "
        "and commands), and thinking and tool_output when include names them (null otherwise); and on every "
        "row the paging: document_id, total (messages in the conversation), has_more (1 when messages follow "
        "this page) and next_offset (the offset of the next page, or null). A conversation written in the "
        "workspace is one message of role document: its whole text.",
        params=(
            _document(
                "The conversation: its id or its path (as list_conversations gives them), or the path of any file "
                "of it."
            ),
            _offset("messages"),
            Param(
                "limit",
                rules.bounded_int("limit", 1, 200, example=50),
                "Most messages to return, 1 to 200 (default 50).",
            ),
            Param(
                "include",
                rules.include_list,
                "Comma-separated parts of each message left out by default: thinking, tool_output; empty: neither.",
            ),
        ),
        checks=(rules.conversation_page,),
    ),
}
