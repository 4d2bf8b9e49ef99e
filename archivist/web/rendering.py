"""How the exploration pages become HTML: a document's markdown (sanitized, shortened when
long), the templates with the site's navigation, and the page shown when no archive is served."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from datasette.utils.asgi import Response
from markupsafe import Markup, escape

from archivist.web.app import is_archive, not_an_archive, not_an_archive_status, served_databases
from archivist.web.page_queries import QueryFailed
from archivist.workspace import DATABASE_NAME

if TYPE_CHECKING:
    from datasette.app import Datasette


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


# --- pages ----------------------------------------------------------------------------


async def render_page(
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
    status = not_an_archive_status(failure)
    databases = [{"name": name, "href": datasette.urls.database(name)} for name in served_databases(datasette)]
    context = {"failure": QueryFailed(status, failure.code, failure.message), "databases": databases}
    html = await datasette.render_template("archivist_not_archive.html", context, request=request)
    return Response.html(html, status=status)


def _nav(datasette: Datasette) -> list[dict[str, str]]:
    path = datasette.urls.path
    return [
        {"label": "Home", "href": path("/")},
        {"label": "Search", "href": path("/search")},
        {"label": "Activity", "href": path("/activity")},
        {"label": "Usage", "href": path("/usage")},
        {"label": "Documents", "href": path(f"/{DATABASE_NAME}/documents")},
        {"label": "Saved queries", "href": path("/") + "#saved-queries"},
        {"label": "SQL", "href": path(f"/{DATABASE_NAME}")},
    ]
