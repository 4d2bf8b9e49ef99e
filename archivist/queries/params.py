"""A parameter, declared once: every fact about it that any surface needs.

A canned query's parameters (``declarations``) and the MCP tools' own (which workspace,
the embedding API's) are each one ``Param``: its name, the JSON type of its value (of
each item, for a list), its default, its rule (``rules``), its one description, and
where the surfaces show it: the ``archivist search`` flags, the search page's field.
A seed system's other name for a parameter is an ``Alias``, described from its target.

Every surface is derived from these: Datasette's canned queries (``catalog``), the
checks (``validation``), the MCP tools' input schemas (``archivist.mcp.signatures``),
the search command's options (``archivist.cli.searching``), the search page's form
(``archivist.web.urls``) and docs/search.md's tables of parameters; a test holds each of them
to the declarations. Below the model: the parameters that several queries take, each
made by a function that the declarations call with the query's own wording.
Nothing here imports more than the standard library and the rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from archivist.queries import rules

JsonType = Literal["string", "integer", "number", "boolean", "object"]
Value = str | int | float | bool | None
Rule = rules.Rule
# the surfaces: MCP tools, the command line, GET /api/search (and the search page's URLs), Datasette
Surface = Literal["mcp", "cli", "api", "canned"]
FORM_FIELDS = ("search", "radio", "text", "hidden")  # the kinds of field the search page shows


@dataclass(frozen=True)
class ListForms:
    """The forms in which one surface takes a list: each says so after a list's description."""

    array: bool = False  # a JSON array
    repeated: bool = False  # the parameter (or option) given again
    sentence: str = "Comma-separated."


# Every surface takes a list as one text, comma-separated; some also in another form.
LIST_FORMS: dict[Surface, ListForms] = {
    "mcp": ListForms(array=True, sentence="A list, or one string of comma-separated values."),
    "cli": ListForms(repeated=True, sentence="Repeat the option, or separate the values with commas."),
    "api": ListForms(repeated=True, sentence="Comma-separated, or the parameter repeated."),
    "canned": ListForms(),
}


class _Empty:
    """The default of a parameter declared without one: the empty value of its type."""

    def __repr__(self) -> str:
        return "EMPTY"


EMPTY = _Empty()


def first_sentence(text: str) -> str:
    """A text's first sentence: up to its first full stop that ends a word before a space (not "e.g.")."""
    return re.split(r"(?<=[^.\s]{3}\.)\s", text, maxsplit=1)[0]


def as_given(value: str) -> str:
    """The rule of a parameter its query checks itself, or not at all."""
    return value


@dataclass(frozen=True)
class Param:
    """One parameter: what it is, how it is checked, what it means, and where it is shown."""

    name: str
    rule: Rule  # checks the value (as text) and returns it normalised, or raises ArchivistError
    description: str  # one line, the same on every surface but MCP's listing (``brief``) and docs/mcp.md
    type: JsonType = "string"  # of the value; of each item when ``many``
    many: bool = False  # a list (LIST_FORMS: how each surface takes one)
    # what leaving it out means, as the MCP input schema and docs/search.md show it; without one, the
    # empty value of its type ("", None, False): the query's own default, which the description says
    default: Value | _Empty = EMPTY
    also: tuple[JsonType, ...] = ()  # other JSON types MCP accepts for it (a document: an id as a number)
    required: bool = False  # a call without it is refused (MCP: required in the input schema)
    # ``archivist search``: its option names, or the name of its argument (no dashes); none: not there
    flags: tuple[str, ...] = ()
    metavar: str | None = None  # what --help shows for the option's value
    form: str | None = None  # the search page's field for it (FORM_FIELDS); None: not on the form
    # False: accepted from a seed system's callers and checked, but the SQL does not read it
    in_sql: bool = True
    brief: str = ""  # what MCP's listing says of it, in a few words; empty: its description's first sentence

    def __post_init__(self) -> None:
        if isinstance(self.default, _Empty):
            empty = "" if self.type == "string" and not self.many else False if self.type == "boolean" else None
            object.__setattr__(self, "default", empty)
        if self.form is not None and self.form not in FORM_FIELDS:
            raise ValueError(f"{self.name}: no such form field: {self.form}")
        if "\n" in self.description:
            raise ValueError(f"{self.name}: a description is one line")

    @property
    def minimum(self) -> float | None:
        """The least value it takes, where its rule bounds it."""
        return self.rule.minimum if isinstance(self.rule, rules.Limits) else None

    @property
    def maximum(self) -> float | None:
        """The greatest value it takes, where its rule bounds it."""
        return self.rule.maximum if isinstance(self.rule, rules.Limits) else None

    @property
    def choices(self) -> tuple[str, ...]:
        """The values it takes (each item's, for a list), where its rule names them; else any."""
        return self.rule.choices if isinstance(self.rule, rules.Limits) else ()

    @property
    def omitted(self) -> Value:
        """What a surface passes on when a caller leaves it out: its default, but a number's is left to the
        query (its SQL says it too), so that another name for it (limit for page_size) never disagrees with
        a default that no caller gave."""
        return None if self.type in ("integer", "number") else self.default  # type: ignore[return-value]

    def described(self, surface: Surface) -> str:
        """Its description as ``surface`` shows it: a list's says how that surface takes one; MCP's listing
        says it in a few words (its input schema shows the list's forms), and docs/mcp.md in full."""
        if surface == "mcp":
            return self.brief or first_sentence(self.description)
        return f"{self.description} {LIST_FORMS[surface].sentence}" if self.many else self.description

    @property
    def option(self) -> bool:
        """Whether ``archivist search`` takes it as an option (else as its argument, or not at all)."""
        return bool(self.flags) and self.flags[0].startswith("--")


@dataclass(frozen=True)
class Alias:
    """A seed system's name for a parameter: taken where the parameter is, with the parameter's type."""

    name: str
    target: str
    seed: str | None = None  # whose name it is, when one seed's alone

    @property
    def description(self) -> str:
        return f"Another name for {self.target}" + (f" (the {self.seed}'s)." if self.seed else ".")

    @property
    def brief(self) -> str:
        """What MCP's listing says of it: whose name it is, docs/mcp.md says."""
        return f"Another name for {self.target}."

    def of(self, target: Param) -> Param:
        """The alias as a parameter of its own: the target's type, the empty default, never required."""
        return Param(
            self.name,
            target.rule,
            self.description,
            type=target.type,
            many=target.many,
            also=target.also,
            in_sql=False,
            brief=self.brief,
        )


# --- what several parameters say ----------------------------------------------------------------

QUERY_LIMITS = f"At least 2 characters; at most {rules.MAX_QUERY_WORDS} words and {rules.MAX_QUERY_CHARS} characters."

DOCUMENT = (
    "The document: its id (as search and list_conversations give it), its path, or the path of any file of it "
    "(a conversation folder's chat.md names the conversation), relative to the workspace or absolute inside it."
)
DATE_RANGE = (
    "Filter by date range. Supports YYYY-MM (month) or YYYY-MM-DD (day) format. Month format matches all days "
    "within that month (in both the YYYY-MM/ and YYYY-MM-DD/ folder layouts). Examples: '2025-11' or '2025-11-10'. "
    "Empty: all dates. That is: YYYY-MM (a month: matches every day of it) or YYYY-MM-DD (that day only)."
)
DATE_FORMS = 'ISO dates or datetimes, YYYY-MM, YYYY or natural language ("yesterday", "last week", "3 days ago")'
SEARCH_DATES = (
    "a plain date, month or year is the calendar day as the documents were written, a time of day and natural "
    "language are in UTC; a document matches when its whole date lies inside (a month-only date needs the whole "
    "month), and documents without a date never match a time filter"
)
CONVERSATION_DATES = (
    "all in UTC; a session matches when it ran at some time inside (between its first and its last message: one "
    "past midnight matches both days), a workspace conversation when its whole date lies inside, and "
    "conversations without a date never match a time filter"
)
WORKSPACE_PATH = (
    "Another workspace to search instead of the server's own: one of those the server's operator allowed "
    "(--allow-workspace), indexed with `archivist index`. Default: the server's workspace."
)


def fields(params: tuple[Param, ...], aliases: tuple[Alias, ...] = ()) -> tuple[Param, ...]:
    """A query's parameters and, after them, its aliases as parameters of their own."""
    by_name = {param.name: param for param in params}
    return params + tuple(alias.of(by_name[alias.target]) for alias in aliases)


# --- parameters that several queries take, each query with its own wording ---------------------


AGENTS = (
    f"{', '.join(rules.LOG_KINDS)} (agent-log kinds) or {rules.WORKSPACE_AGENT} (the conversations written in the "
    "workspace itself)"
)


def agents(what: str, flags: tuple[str, ...] = (), metavar: str | None = None, form: str | None = None) -> Param:
    """The agents whose ``what`` a query reads: each a known agent (INVALID_PARAMETER naming them else)."""
    return Param(
        "agents",
        rules.agent_list,
        f"Only {what} of these agents: {AGENTS}; empty: every agent.",
        many=True,
        brief=f"Only {what} of these agents ({rules.WORKSPACE_AGENT}: its own).",
        flags=flags,
        metavar=metavar,
        form=form,
    )


def log_filters(what: str) -> tuple[Param, Param]:
    """The agents and projects of the agent logs a query reads (usage, project_activity)."""
    return (
        agents(what),
        Param(
            "projects",
            rules.text_list,
            "Only these projects: a project's full path or its last folder name; empty: every project.",
            many=True,
            brief="Full paths or last folder names.",
        ),
    )


def query(name: str, example: str, description: str, flags: tuple[str, ...] = (), brief: str = "") -> Param:
    """The words a query ``name`` searches for: required, within the query limits."""
    rule = rules.query_text(name, example)
    return Param("query", rule, f"{description} {QUERY_LIMITS}", required=True, flags=flags, brief=brief)


MAX_LIMIT = 100  # the most rows a list query answers at once


def limit(default: int, what: str = "results", flags: tuple[str, ...] = (), name: str = "limit") -> Param:
    """How many rows at most, 1 to ``MAX_LIMIT``."""
    return Param(
        name,
        rules.bounded_int(name, 1, MAX_LIMIT),
        f"Most {what} to return, 1 to {MAX_LIMIT} (default {default}).",
        type="integer",
        brief=f"Most {what}.",
        default=default,
        flags=flags,
        metavar="N",
    )


def document(description: str = DOCUMENT, brief: str = "Its id or its path.") -> Param:
    """The document a query reads: an id (a string or a number) or a path."""
    rule = rules.required_text("document", "42")
    return Param("document", rule, description, also=("integer",), required=True, brief=brief)


def conversation_type(documents: str, flags: tuple[str, ...] = ()) -> Param:
    """One type of the documents a query finds."""
    return Param(
        "conversation_type",
        rules.conversation_type,
        f"Only {documents} of this type (brainstorm, debug, plan, review, research, design, ...); empty: every type.",
        flags=flags,
        brief="Only this type (debug, plan, ...).",
        metavar="TYPE",
    )


def date_range(flags: tuple[str, ...] = ()) -> Param:
    """One month or one day."""
    brief = (  # (seed 000's callers read these sentences in the listing)
        "Filter by date range. Supports YYYY-MM (month) or YYYY-MM-DD (day) format. Month format matches all days "
        "within that month. Examples: '2025-11' or '2025-11-10'."
    )
    return Param("date_range", rules.date_range, DATE_RANGE, flags=flags, metavar="YYYY-MM|YYYY-MM-DD", brief=brief)


def dates(matches: str, flags: bool = False) -> tuple[Param, Param]:
    """start_date and end_date; ``flags``: options of ``archivist search`` and fields of the search page."""
    metavar, form = ("DATE", "text") if flags else (None, None)
    return (
        Param(
            "start_date",
            rules.date_bound("start_date", end=False),
            f"From this date: {DATE_FORMS}; {matches}.",
            flags=("--start-date",) if flags else (),
            brief='ISO, YYYY-MM, YYYY or words ("last week").',
            metavar=metavar,
            form=form,
        ),
        Param(
            "end_date",
            rules.date_bound("end_date", end=True),
            "Until this date, in the same forms as start_date (e.g. today).",
            flags=("--end-date",) if flags else (),
            brief="As start_date.",
            metavar=metavar,
            form=form,
        ),
    )


def offset(description: str, brief: str = "") -> Param:
    """How many rows to skip, for paging."""
    rule = rules.bounded_int("offset", 0, rules.MAX_OFFSET, example=0)
    return Param("offset", rule, description, type="integer", default=0, brief=brief)
