"""The exploration pages: home, search and document pages.

Every page is rendered on the server from canned queries, run through Datasette's
own JSON API (the parameter checks and the SQL every other surface uses), so the
pages work without JavaScript. The search page takes the parameters of
``GET /api/search`` unchanged: each state of the page is a URL, and the same
query string gives the JSON at ``/api/search``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlencode

from datasette.utils.asgi import Response
from markupsafe import Markup, escape

from archivist.archive.schema import MESSAGE_IDS
from archivist.documents import IGNORED_DIRS
from archivist.errors import ArchivistError
from archivist.queries import catalog, runner, validation
from archivist.queries.sqlfunctions import items
from archivist.web.app import (
    highlighted,
    is_archive,
    not_an_archive,
    query_failure,
    served_databases,
    unknown_search_parameters,
)
from archivist.workspace import DATABASE_NAME, archive_files, secret_key

if TYPE_CHECKING:
    from datasette.app import Datasette

SEARCH_PARAMS = tuple(validation.QUERIES["search"].params)
PAGE_MODES = ("hybrid", "keyword", "semantic")
FACET_WINDOW = 200  # the search response counts its facets over this many results
_WORD_RE = re.compile(r"[A-Za-z]{4,}")


class QueryFailed(Exception):
    """A canned query answered with an error: its status, code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    @property
    def lines(self) -> list[str]:
        return self.message.splitlines()


async def canned(datasette: Datasette, name: str, params: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The rows of a canned query, through Datasette's JSON API; QueryFailed on an error."""
    return await _json(datasette, f"/{DATABASE_NAME}/{name}.json", params)


async def table_rows(datasette: Datasette, table: str, params: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Rows of a table or view of the archive, through Datasette's table API."""
    return await _json(datasette, f"/{DATABASE_NAME}/{table}.json", params)


async def _json(datasette: Datasette, path: str, params: dict[str, str] | None) -> list[dict[str, Any]]:
    try:
        validation.check_sizes(params or {})
    except ArchivistError as error:
        raise QueryFailed(400, error.code, error.message) from None
    response = await datasette.client.get(datasette.urls.path(path), params={**(params or {}), "_shape": "array"})
    body = response.json()
    if response.status_code == 200:
        return body
    if isinstance(body, dict) and body.get("success") is False:
        raise QueryFailed(response.status_code, body.get("code", ""), body.get("error", ""))
    failure = query_failure(datasette, body)
    raise QueryFailed(response.status_code, failure.code, failure.message)


async def search(datasette: Datasette, params: dict[str, str]) -> dict[str, Any]:
    """The ``search`` canned query's response, decoded."""
    return runner.response_of(await canned(datasette, "search", params))


# --- markdown -------------------------------------------------------------------


@functools.cache
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    # html=False: raw HTML in a document is shown as text, never run; markdown-it also
    # refuses javascript:, vbscript: and file: links.
    renderer = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(["table", "strikethrough"])
    renderer.add_render_rule("image", _image_as_link)
    return renderer


def _image_as_link(self: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    """An image becomes a link to it: the page loads nothing from elsewhere."""
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    return f'<a class="archivist-image" href="{escape(token.attrGet("src") or "")}">[image: {escape(alt)}]</a>'


# A document page renders at most this much of a body (the source link has the rest):
# markdown-it takes about a second per megabyte here.
PAGE_CHARS = 100_000
SOURCE_MAX_BYTES = 16 * 2**20  # a document's source file, served as text, at most


def shorten(text: str, limit: int = PAGE_CHARS) -> tuple[str, dict[str, int] | None]:
    """The first ``limit`` characters of a long text, cut at a line end, and what was cut."""
    if len(text) <= limit:
        return text, None
    cut = text.rfind("\n", 0, limit)
    shown = text[: cut if cut > limit // 2 else limit]
    return shown, {"shown": len(shown), "total": len(text)}


def render_markdown(text: str) -> Markup:
    """A document body as sanitized HTML: markdown rendered, raw HTML escaped."""
    return Markup(_markdown().render(text or ""))


# --- URLs -------------------------------------------------------------------------


def search_params(args: Any) -> dict[str, str]:
    """The search parameters of a request: lists comma-joined, empty values dropped."""
    params = {}
    for key in args:
        value = ",".join(v.strip() for v in args.getlist(key) if v.strip())
        if value:
            params[key] = value
    return params


class SearchState:
    """The search page's parameters, and the URLs of every state one click away."""

    def __init__(self, datasette: Datasette, params: dict[str, str]) -> None:
        self.datasette = datasette
        self.params = params

    def query_string(self, **changes: str | None) -> str:
        """This state's parameters with some changed (None or '' removes one); back to page 1."""
        params: dict[str, str | None] = {key: value for key, value in self.params.items() if key != "page"}
        params.update(changes)
        ordered = [(key, params[key]) for key in SEARCH_PARAMS if params.get(key)]
        return "?" + urlencode(ordered) if ordered else ""

    def url(self, **changes: str | None) -> str:
        return self.datasette.urls.path("/search") + self.query_string(**changes)

    def page_url(self, page: int) -> str:
        return self.url(page=str(page) if page > 1 else None)

    def dates(self) -> tuple[str, str]:
        return self.params.get("start_date", ""), self.params.get("end_date", "")

    def period(self) -> str | None:
        """The month or day the date filter is exactly, when it is one."""
        start, end = self.dates()
        return start if start and start == end and re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", start) else None

    def toggle(self, key: str, value: str) -> tuple[str, bool]:
        """(URL, selected): a facet value narrows to it; a selected one is removed."""
        current = items(self.params.get(key))
        if value in current:
            return self.url(**{key: ",".join(item for item in current if item != value)}), True
        return self.url(**{key: value}), False


def facet_groups(
    state: SearchState, facets: dict[str, dict[str, int]], products: dict[str, str]
) -> list[dict[str, Any]]:
    """The facet sidebar: groups of (label, count, URL, selected), in the order they narrow."""
    groups = []

    def group(name: str, label: str, items: list[dict[str, Any]]) -> None:
        if items:
            groups.append({"name": name, "label": label, "items": items})

    def single(
        key: str, counts: dict[str, int], labels: dict[str, str] | None = None, titled: bool = False
    ) -> list[dict[str, Any]]:
        """One value at a time; ``titled``: a shortened label keeps the whole value as its title."""
        items = []
        for value, count in counts.items():
            href, selected = state.toggle(key, value)
            items.append(
                {
                    "value": value,
                    "label": (labels or {}).get(value, value),
                    "title": value if titled else None,
                    "count": count,
                    "href": href,
                    "selected": selected,
                }
            )
        return items

    group("kind", "Kind", single("entities", facets.get("kind") or {}))
    group("type", "Type", single("types", facets.get("type") or {}))
    period = state.period()
    dates = []
    if period is None:
        for month, count in sorted((facets.get("month") or {}).items(), reverse=True):
            dates.append(
                {
                    "value": month,
                    "label": month,
                    "count": count,
                    "href": state.url(start_date=month, end_date=month),
                    "selected": False,
                }
            )
        group("month", "Month", dates)
    else:
        month = period[:7]
        whole = period == month  # selected: a click removes the date filter
        href = state.url(start_date=None, end_date=None) if whole else state.url(start_date=month, end_date=month)
        dates.append({"value": month, "label": f"All of {month}", "count": None, "href": href, "selected": whole})
        for day, count in sorted((facets.get("day") or {}).items(), reverse=True):
            if day.startswith(month):
                selected = period == day
                href = (
                    state.url(start_date=month, end_date=month) if selected else state.url(start_date=day, end_date=day)
                )
                dates.append({"value": day, "label": day, "count": count, "href": href, "selected": selected})
        group("day", "Day", dates)
    tags = []
    current = items(state.params.get("tags"))
    for tag, count in (facets.get("tags") or {}).items():
        if tag in current:
            href, selected = state.url(tags=",".join(t for t in current if t != tag)), True
        else:  # another tag narrows: every selected tag must be present
            href, selected = state.url(tags=",".join([*current, tag]), match_all="true" if current else None), False
        tags.append({"value": tag, "label": tag, "count": count, "href": href, "selected": selected})
    group("tags", "Tags", tags)
    group("product", "Product", single("product_ids", facets.get("product_id") or {}, products))
    # conversations read from agent logs: by agent, project (shown by its folder) and model
    group("agent", "Agent", single("agents", facets.get("agent") or {}))
    projects = facets.get("project") or {}
    group("project", "Project", single("projects", projects, {path: project_name(path) for path in projects}, True))
    group("model", "Model", single("models", facets.get("model") or {}))
    return groups


def project_name(path: str) -> str:
    """A project by its last folder's name, which the projects filter also takes: "proj" for "/home/ana/proj"."""
    return re.split(r"[/\\]", path.rstrip("/\\"))[-1] or path


def active_filters(state: SearchState, products: dict[str, str]) -> list[dict[str, str]]:
    """Each filter in force, with the URL that removes it."""
    chips = []
    chip_keys = (
        ("entities", "kind"),
        ("types", "type"),
        ("tags", "tag"),
        ("product_ids", "product"),
        ("agents", "agent"),
        ("projects", "project"),
        ("models", "model"),
        ("files", "file"),
    )
    for key, label in chip_keys:
        values = items(state.params.get(key))
        for value in values:
            rest = ",".join(v for v in values if v != value)
            text = products.get(value, value) if key == "product_ids" else value
            chips.append({"label": f"{label}: {text}", "href": state.url(**{key: rest})})
    start, end = state.dates()
    if start or end:
        period = state.period()
        text = period or f"{start or '…'} → {end or '…'}"
        chips.append({"label": f"date: {text}", "href": state.url(start_date=None, end_date=None)})
    if state.params.get("document"):
        chips.append({"label": f"similar to: {state.params['document']}", "href": state.url(document=None, mode=None)})
    return chips


def bars(state: SearchState, counts: dict[str, int], titles: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Bars of a timeline, in period order: each links to the search narrowed to its period."""
    highest = max(counts.values(), default=0)
    selected = state.period()
    return [
        {
            "period": period,
            "count": count,
            "label": period[5:] if len(period) == 10 else period,  # days by month and day
            "title": (titles or {}).get(period) or f"{period}: {count}",
            "height": max(4, round(100 * count / highest)),
            "href": state.url(start_date=period, end_date=period),
            "selected": period == selected,
        }
        for period, count in sorted(counts.items())
    ]


def timeline(state: SearchState, facets: dict[str, dict[str, int]]) -> dict[str, Any] | None:
    """Matches per month, or per day when they fall in one month: bars that narrow on click."""
    months = facets.get("month") or {}
    days = facets.get("day") or {}
    period = state.period()
    by_day = period is not None or (len(months) == 1 and bool(days))
    counts = days if by_day else months
    if by_day and period:
        counts = {day: n for day, n in counts.items() if day.startswith(period[:7])}
    if not counts:
        return None
    return {"unit": "day" if by_day else "month", "bars": bars(state, counts)}


def pages(state: SearchState, page: int, total_pages: int) -> list[dict[str, Any]]:
    """Page links around the current page: first, last, and two either side."""
    wanted = sorted({1, total_pages, *range(max(1, page - 2), min(total_pages, page + 2) + 1)})
    links: list[dict[str, Any]] = []
    previous = 0
    for number in wanted:
        if number - previous > 1:
            links.append({"gap": True})
        links.append({"number": number, "href": state.page_url(number), "current": number == page})
        previous = number
    return links


async def product_names(datasette: Datasette) -> dict[str, str]:
    """Product ids to the titles of their product records."""
    found = await search(datasette, {"mode": "recent", "entities": "product", "page_size": "100"})
    return {str(item["entity_id"]): item["title"] for item in found["results"] if item.get("entity_id")}


# --- pages ----------------------------------------------------------------------------


async def _render(
    datasette: Datasette, request: Any, template: str, context: dict[str, Any], status: int = 200
) -> Response:
    html = await datasette.render_template(template, {"nav": _nav(datasette), **context}, request=request)
    return Response.html(html, status=status)


Page = Callable[["Datasette", Any], Awaitable[Response]]


def needs_archive(page: Page) -> Page:
    """A page of the archive: when Datasette serves none (``datasette other.db``), it says so and what to run, with a 404."""

    @functools.wraps(page)
    async def checked(datasette: Datasette, request: Any) -> Response:
        if not await is_archive(datasette):
            return await not_an_archive_page(datasette, request)
        return await page(datasette, request)

    return checked


async def not_an_archive_page(datasette: Datasette, request: Any) -> Response:
    """No archive is served: the message, and links to the databases Datasette serves (its own pages work)."""
    failure = not_an_archive(datasette)
    databases = [{"name": name, "href": datasette.urls.database(name)} for name in served_databases(datasette)]
    context = {"failure": QueryFailed(404, failure.code, failure.message), "databases": databases}
    html = await datasette.render_template("archivist_not_archive.html", context, request=request)
    return Response.html(html, status=404)


def _nav(datasette: Datasette) -> list[dict[str, str]]:
    path = datasette.urls.path
    return [
        {"label": "Home", "href": path("/")},
        {"label": "Search", "href": path("/search")},
        {"label": "Documents", "href": path(f"/{DATABASE_NAME}/documents")},
        {"label": "Saved queries", "href": path("/") + "#saved-queries"},
        {"label": "SQL", "href": path(f"/{DATABASE_NAME}")},
    ]


@needs_archive
async def search_page(datasette: Datasette, request: Any) -> Response:
    """GET /search: query box, modes, facets, timeline, results and pages."""
    params = search_params(request.args)
    state = SearchState(datasette, params)
    mode = params.get("mode", "hybrid")
    # the form ranks words by one of the page's modes; a list by another mode (recent,
    # similar, ...) is left by a new search, which starts as hybrid
    context: dict[str, Any] = {
        "state": state,
        "params": params,
        "modes": PAGE_MODES,
        "mode": mode,
        "form_mode": mode if mode in PAGE_MODES else "hybrid",
    }
    unknown = unknown_search_parameters(params)
    if unknown is not None:
        failure = QueryFailed(400, unknown.code, unknown.message)
        return await _render(datasette, request, "archivist_search.html", {**context, "failure": failure}, status=400)
    # without words the page lists newest first, whatever ranking is chosen for words
    wanted = dict(params, mode="recent") if not params.get("query") and context["mode"] in PAGE_MODES else params
    try:
        response = await search(datasette, {**wanted, "output": "full"})  # the page shows facets and paths
        products = (
            await product_names(datasette)
            if (response["facets"].get("product_id") or params.get("product_ids"))
            else {}
        )
    except QueryFailed as failure:
        return await _render(
            datasette, request, "archivist_search.html", {**context, "failure": failure}, status=failure.status
        )
    for result in response["results"]:
        result["excerpt_html"] = highlighted(result.get("excerpt")) or result.get("excerpt") or ""
        result["href"] = document_url(datasette, result["id"])
        if message := result.get("message"):  # the message of a session that matched: a link straight to it
            seq = message["index"]
            message["href"] = f"{result['href']}?{urlencode({'m': seq})}#m{seq}"
            message["snippet_html"] = highlighted(message.get("snippet")) or message.get("snippet") or ""
    context.update(
        response=response,
        facet_groups=facet_groups(state, response["facets"], products),
        filters=active_filters(state, products),
        timeline=timeline(state, response["facets"]),
        pages=pages(state, response["page"], response["total_pages"]) if response["total_pages"] > 1 else [],
        previous_url=state.page_url(response["page"] - 1) if response["page"] > 1 else None,
        next_url=state.page_url(response["page"] + 1) if response["has_more"] else None,
        partial_facets=response["total"] > FACET_WINDOW,
        mode_urls={mode: state.url(mode=None if mode == "hybrid" else mode, document=None) for mode in PAGE_MODES},
        api_url=datasette.urls.path("/api/search")
        + SearchState(datasette, wanted).query_string(page=params.get("page"), output="full"),
        canned_url=datasette.urls.path(f"/{DATABASE_NAME}/search")
        + SearchState(datasette, wanted).query_string(page=params.get("page")),
    )
    return await _render(datasette, request, "archivist_search.html", context)


def document_url(datasette: Datasette, document_id: Any) -> str:
    return datasette.urls.path(f"/document/{document_id}")


async def _document(datasette: Datasette, document_id: str) -> dict[str, Any]:
    rows = await canned(datasette, "get_document", {"document": document_id})
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


# --- conversations read from agent logs ------------------------------------------------

MESSAGES_PER_PAGE = 200  # a session of 5,000 messages is read and shown a page at a time
MESSAGE_CHARS = 20_000  # a message's text (or thinking) rendered at most; its row has the rest
TOOL_OUTPUT_CHARS = 4_000  # raw tool output shown at most
SUMMARY_COMMAND_CHARS = 120  # a command in a tool call's summary line (the fold has it whole)
SUMMARY_FILES = 4  # files named in a tool call's summary line (the fold lists them all)
ROLES = ("user", "assistant", "tool", "system")
_NUMBER_RE = re.compile(r"[0-9]{1,9}")


async def session_messages(datasette: Datasette, document_id: int, offset: int, limit: int) -> list[dict[str, Any]]:
    """Messages ``offset`` to ``offset + limit - 1`` of a session, in order, thinking and tool output included."""
    return await canned(
        datasette,
        "get_conversation",
        {"document": str(document_id), "offset": str(offset), "limit": str(limit), "include": "thinking,tool_output"},
    )


def session_of(document: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any] | None:
    """What an agent-log session's header shows, or None for any other document (a markdown conversation)."""
    count = extra.get("messages")
    if document["kind"] != "conversation" or not extra.get("agent") or not isinstance(count, int) or count < 1:
        return None
    project = extra.get("project") or ""
    return {
        "agent": extra["agent"],
        "project": project,
        "project_name": project_name(project),
        "models": [model for model in extra.get("models") or [] if model],
        "branch": extra.get("branch"),
        "started": extra.get("started"),
        "last": extra.get("last"),
        "period": period(extra.get("started"), extra.get("last")),
        "messages": count,
        "parent_key": extra.get("parent"),
        "read_from": [str(path) for path in extra.get("files") or []],
    }


def moment(timestamp: str | None) -> tuple[str, str]:
    """An ISO timestamp as (day, time of day): ``2025-11-23T04:53:42.362Z`` → (2025-11-23, 04:53:42)."""
    found = re.match(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d(?::\d\d)?)", timestamp or "")
    return (found[1], found[2]) if found else (timestamp or "", "")


def period(started: str | None, last: str | None) -> str:
    """A session's span: ``2025-11-23 04:53:42 – 06:10:05 UTC``; the day again only when it changes."""
    (day, time), (last_day, last_time) = moment(started), moment(last)
    if not day:
        return ""
    start = f"{day} {time}".strip()
    if not last_day or (last_day, last_time) == (day, time):
        return f"{start} UTC" if time else start
    end = last_time if last_day == day else f"{last_day} {last_time}".strip()
    return f"{start} – {end} UTC" if time else f"{start} – {end}"


def session_page_of(args: Any, total: int) -> tuple[int, int | None]:
    """The page to show (from 1) and the message named by ``?m=``; ``?m=`` picks the page holding it."""
    pages = max(1, -(-total // MESSAGES_PER_PAGE))
    wanted, page = args.get("m"), args.get("page")
    if wanted is not None and wanted.strip() != "":
        if not _NUMBER_RE.fullmatch(wanted.strip()) or int(wanted) >= total:
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"There is no message {wanted[:40]!r} in this conversation",
                f"m names a message by its number: 0 to {total - 1} here.",
                "Open the conversation without ?m= to read it from the start.",
            )
        return int(wanted) // MESSAGES_PER_PAGE + 1, int(wanted)
    if page is not None and page.strip() != "":
        if not _NUMBER_RE.fullmatch(page.strip()) or not 1 <= int(page) <= pages:
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"There is no page {page[:40]!r} of this conversation",
                f"Its {total:,} messages are shown {MESSAGES_PER_PAGE} a page: pages 1 to {pages}.",
                "Open the conversation without ?page= to read it from the start.",
            )
        return int(page), None
    return 1, None


def shown(text: str, limit: int) -> tuple[str, str | None]:
    """A text cut to ``limit`` characters, and a note saying how much is shown, when it was cut."""
    cut, shortened = shorten(text or "", limit)
    if shortened is None:
        return cut, None
    return cut, f"shown: the first {shortened['shown']:,} of {shortened['total']:,} characters"


def tool_call_view(call: Any) -> dict[str, Any] | None:
    """One tool call as its fold shows it: name, and its files and commands, in full and in short."""
    if not isinstance(call, dict):
        return None
    files = [str(file) for file in call.get("files") or [] if file]
    commands = [str(command) for command in call.get("commands") or [] if command]
    short_commands = []
    for command in commands:
        first = command.strip().splitlines()[0] if command.strip() else command
        short, _ = shorten(first, SUMMARY_COMMAND_CHARS)
        short_commands.append(short + ("…" if short != command.strip() else ""))
    return {
        "name": str(call.get("name") or "tool"),
        "files": files,
        "commands": commands,
        "summary_commands": short_commands,
        "summary_files": files[:SUMMARY_FILES],
        "more_files": max(0, len(files) - SUMMARY_FILES),
    }


def message_view(datasette: Datasette, document_id: int, row: dict[str, Any], previous_day: str) -> dict[str, Any]:
    """One message as the page shows it: role, time, model, text, and its folds."""
    seq = int(row["seq"])
    role = str(row.get("role") or "")
    text, text_cut = shown(row.get("text") or "", MESSAGE_CHARS)
    thinking, thinking_cut = shown(row.get("thinking") or "", MESSAGE_CHARS)
    output, output_cut = shown(row.get("tool_output") or "", TOOL_OUTPUT_CHARS)
    calls = row.get("tool_calls") or "[]"
    try:
        calls = json.loads(calls) if isinstance(calls, str) else calls
    except ValueError:
        calls = []
    day, time = moment(row.get("timestamp"))
    return {
        "seq": seq,
        "role": role,
        "role_class": role if role in ROLES else "other",
        "timestamp": row.get("timestamp") or "",
        "day": day if day != previous_day else "",
        "time": time or day,
        "model": row.get("model") or "",
        "text_html": render_markdown(text) if text.strip() else "",
        "text_cut": text_cut,
        "thinking_html": render_markdown(thinking) if thinking.strip() else "",
        "thinking_chars": len(row.get("thinking") or ""),
        "thinking_cut": thinking_cut,
        "tool_calls": [view for call in calls or [] if (view := tool_call_view(call))],
        "output": output if output.strip() else "",
        "output_chars": len(row.get("tool_output") or ""),
        "output_cut": output_cut,
        "href": message_url(datasette, document_id, seq),
        "row_href": datasette.urls.row(DATABASE_NAME, "messages", str(int(document_id) * MESSAGE_IDS + int(seq))),
    }


def message_url(datasette: Datasette, document_id: Any, seq: int) -> str:
    """A message's own link: ``?m=`` picks the page holding it, the fragment scrolls to it."""
    return f"{document_url(datasette, document_id)}?m={seq}#m{seq}"


def session_page_url(datasette: Datasette, document_id: Any, page: int) -> str:
    return document_url(datasette, document_id) + (f"?page={page}" if page > 1 else "")


async def conversation(
    datasette: Datasette, request: Any, document: dict[str, Any], session: dict[str, Any]
) -> dict[str, Any]:
    """A page of a session's messages, its page links, and the message asked for."""
    total = session["messages"]
    page, selected = session_page_of(request.args, total)
    pages_count = max(1, -(-total // MESSAGES_PER_PAGE))
    offset = (page - 1) * MESSAGES_PER_PAGE
    rows = await session_messages(datasette, document["id"], offset, MESSAGES_PER_PAGE)
    messages, day = [], ""
    for row in rows:
        view = message_view(datasette, document["id"], row, day)
        day = moment(row.get("timestamp"))[0] or day
        view["selected"] = view["seq"] == selected
        messages.append(view)
    wanted = sorted({1, pages_count, *range(max(1, page - 2), min(pages_count, page + 2) + 1)})
    links: list[dict[str, Any]] = []
    previous = 0
    for number in wanted:
        if number - previous > 1:
            links.append({"gap": True})
        url = session_page_url(datasette, document["id"], number)
        links.append({"number": number, "href": url, "current": number == page})
        previous = number
    # A link by fragment alone (/document/<id>#m300, as search hits give) reaches page 1:
    # each later message gets an anchor here that, when it is the target, links to its page.
    later = range(offset + len(rows), total) if not request.args and pages_count > 1 else range(0)
    return {
        "messages": messages,
        "page": page,
        "pages": pages_count,
        "first": offset,
        "last": offset + len(rows) - 1,
        "page_links": links if pages_count > 1 else [],
        "previous_url": session_page_url(datasette, document["id"], page - 1) if page > 1 else None,
        "next_url": session_page_url(datasette, document["id"], page + 1) if page < pages_count else None,
        "later": later,
        "base_url": document_url(datasette, document["id"]),
    }


async def parent_session(datasette: Datasette, session: dict[str, Any]) -> dict[str, Any] | None:
    """The session a sub-agent belongs to: its title and link, or only its key when it is not archived."""
    key = session.get("parent_key")
    if not key:
        return None
    try:
        found = await canned(datasette, "find_document", {"document": f"{session['agent']}:{key}"})
    except QueryFailed:
        found = []
    if not found:
        return {"key": key, "title": None, "href": None}
    return {"key": key, "title": found[0]["title"], "href": document_url(datasette, found[0]["id"])}


@needs_archive
async def document_page(datasette: Datasette, request: Any) -> Response:
    """GET /document/{id}: the document rendered, its metadata, similar and nearby documents."""
    try:
        document = await _document(datasette, unquote(request.url_vars["id"]))
    except QueryFailed as failure:
        status = 404 if failure.code == "DOCUMENT_NOT_FOUND" else failure.status
        return await _render(datasette, request, "archivist_document.html", {"failure": failure}, status=status)
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
            return await _render(datasette, request, "archivist_document.html", {"failure": problem}, status=400)
        except QueryFailed as failure:
            return await _render(
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
    return await _render(datasette, request, "archivist_document.html", context)


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


def examples(recent: list[dict[str, Any]]) -> dict[str, dict[str, str] | None]:
    """Example parameters for every canned query, taken from the archive's own documents.

    A query whose example needs something the archive lacks (no reports) gets None.
    """
    conversation = next((d for d in recent if d["kind"] == "conversation"), None)
    report = next((d for d in recent if d["kind"] == "report"), None)
    any_document = conversation or (recent[0] if recent else None)

    def word(text: Any, fallback: Any = "") -> str:
        found = _WORD_RE.findall(text or "")
        return max(found, key=len).lower() if found else fallback

    topic = word(conversation and conversation["title"]) or word(any_document and any_document["title"])
    month = ((conversation or {}).get("date") or "")[:7]
    command: str = (report["entity_type"] or "") if report else ""
    return {
        "search": ({"query": topic, "start_date": month} if month else {"query": topic})
        if topic
        else {"mode": "recent"},
        "search_workspace": {"query": topic, "date_range": month} if conversation and topic else None,
        "search_semantic": {"query": conversation["title"]} if conversation else None,
        "search_reports": {"query": word(report["title"], word(report["excerpt"], command))} if report else None,
        "list_commands": {},
        "list_command_reports": {"command": command} if report else None,
        "get_report": {"path": report["path"]} if report else None,
        "search_commands": {"query": word(command, command)} if report else None,
        "find_document": {"document": any_document["path"]} if any_document else None,
        "get_document": {"document": str(any_document["id"])} if any_document else None,
        "list_conversations": {"limit": "10"},
        "get_conversation": {"document": str(conversation["id"]), "limit": "50"} if conversation else None,
        "similar": {"document": str(any_document["id"]), "limit": "5"} if any_document else None,
        "embedding_status": {},
        "document_counts": {},
        "activity": {"by": "month"},
        "check_search_syntax": {"query": f"{topic}*"} if topic else None,
    }


def first_sentence(text: str) -> str:
    """A description's first sentence, its line breaks undone."""
    paragraph = " ".join(text.split("\n\n")[0].split())
    end = paragraph.find(". ")
    return paragraph[: end + 1] if end >= 0 else paragraph


def saved_queries(datasette: Datasette, recent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every canned query: its title, description and an example URL (page and JSON)."""
    found = examples(recent)
    listed = []
    for name, query in catalog.canned_queries().items():
        params = found.get(name)
        base = datasette.urls.path(f"/{DATABASE_NAME}/{name}")
        suffix = "?" + urlencode(params) if params else ""
        listed.append(
            {
                "name": name,
                "title": query.get("title", name),
                "summary": first_sentence(query.get("description") or ""),
                "params": query.get("params") or [],
                "example": urlencode(params) if params else "",
                "href": base + suffix if params is not None else base,
                "json": base + ".json" + suffix if params is not None else None,
            }
        )
    return listed


@needs_archive
async def home_page(datasette: Datasette, request: Any) -> Response:
    """GET /: the workspace at a glance. A part whose query fails says so; the rest still shows."""
    failures: dict[str, QueryFailed] = {}

    async def attempt(part: str, call: Any, default: Any) -> Any:
        try:
            return await call
        except QueryFailed as failure:
            failures[part] = failure
            return default

    everything = SearchState(datasette, {})
    kinds: dict[str, dict[str, Any]] = {}
    for row in await attempt("counts", canned(datasette, "document_counts"), []):
        kind = kinds.setdefault(
            row["kind"],
            {"kind": row["kind"], "documents": 0, "types": [], "href": everything.url(entities=row["kind"])},
        )
        kind["documents"] += row["documents"]
        href = everything.url(entities=row["kind"], types=row["type"]) if row["type"] else None
        kind["types"].append({"type": row["type"], "documents": row["documents"], "href": href})
    total = sum(kind["documents"] for kind in kinds.values())
    recent = (await attempt("recent", search(datasette, {"mode": "recent", "page_size": "10"}), {"results": []}))[
        "results"
    ]
    for item in recent:
        item["href"] = document_url(datasette, item["id"])
    # the newest conversation and report give the saved queries their example parameters
    newest = []
    for newest_kind in ("conversation", "report"):
        found = await attempt(
            "recent",
            search(datasette, {"mode": "recent", "entities": newest_kind, "page_size": "1"}),
            {"results": []},
        )
        newest.extend(found["results"])
    activity: dict[str, dict[str, Any]] = {}
    for row in await attempt("activity", canned(datasette, "activity", {"by": "month"}), []):
        month = activity.setdefault(row["period"], {"period": row["period"], "documents": 0, "kinds": {}})
        month["documents"] += row["documents"]
        month["kinds"][row["kind"]] = row["documents"]
    titles = {
        period: f"{period}: " + ", ".join(f"{n} {kind}" for kind, n in month["kinds"].items())
        for period, month in activity.items()
    }
    months = bars(everything, {period: month["documents"] for period, month in activity.items()}, titles)
    embedding = (await attempt("embeddings", canned(datasette, "embedding_status"), [None]))[0]
    # embedded as they are now: num_documents also counts vectors kept for removed documents
    embedded = total - embedding["pending"] if embedding else 0
    coverage = round(100 * embedded / total) if total else 0
    problems = await attempt("problems", table_rows(datasette, "index_problems", {"_size": "100"}), [])
    runs = await attempt("runs", table_rows(datasette, "index_runs", {"_sort_desc": "id", "_size": "1"}), [])
    context = {
        "kinds": sorted(kinds.values(), key=lambda kind: -kind["documents"]),
        "total": total,
        "recent": recent,
        "months": months,
        "embedding": embedding,
        "coverage": coverage,
        "embedded": embedded,
        "problems": problems,
        "problems_url": datasette.urls.table(DATABASE_NAME, "index_problems"),
        "last_run": runs[0] if runs else None,
        "saved_queries": saved_queries(datasette, newest + recent),
        "search_url": datasette.urls.path("/search"),
        "failures": failures,
    }
    return await _render(datasette, request, "archivist_home.html", context)
