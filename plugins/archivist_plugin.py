"""Datasette hooks for Archivist: wiring only, the logic lives in the archivist package."""

from pathlib import Path

import datasette.handle_exception
from datasette import hookimpl
from datasette.plugins import pm

from archivist import sqlfunctions, web


@hookimpl
def prepare_connection(conn, datasette):
    """Register the SQL functions the canned queries call."""
    sqlfunctions.register(conn, datasette.plugin_config("archivist") or {})


@hookimpl
def asgi_wrapper(datasette):
    """Host, Origin and token first; then canned-query parameters, before Datasette runs the SQL."""
    check_parameters = web.check_parameters(datasette)

    def wrap(app):
        return web.host_guard(datasette).wrap(web.tidy_requests(check_parameters(app)))

    return wrap


# Datasette's default handler prints each error's traceback with its local variables
# (request headers, tokens included) to the console, and itself fails on a 404 that was
# never raised when rich is installed. Ours below answers every error; it replaces it.
if pm.is_registered(datasette.handle_exception):
    pm.unregister(datasette.handle_exception)


@hookimpl
def handle_exception(datasette, request, exception):
    """Errors as plain messages: no traceback, no SQL, and a caller's mistake is never a 500."""

    async def inner():
        return await web.error_response(datasette, request, exception)

    return inner


@hookimpl
def register_routes():
    """The exploration pages, and GET /api/search: the unified search as plain JSON (SPEC §4)."""
    from archivist import ui

    return [
        (r"^/$", ui.home_page),
        (r"^/search$", ui.search_page),
        (r"^/document/(?P<id>[^/]+)$", ui.document_page),
        (r"^/document/(?P<id>[^/]+)/source$", ui.document_source),
        (r"^/api/search$", web.api_search),
    ]


@hookimpl
def menu_links(datasette):
    """Datasette's own pages link back to the search and home pages."""
    return [
        {"href": datasette.urls.path("/search"), "label": "Search the archive"},
        {"href": datasette.urls.path("/"), "label": "Archive at a glance"},
    ]


@hookimpl
def render_cell(value, column):
    """Show search highlights in excerpts, and the search response as indented JSON."""
    if column == "excerpt":
        return web.highlighted(value)
    if column == "response":
        return web.pretty_json(value)
    return None


@hookimpl
def extra_template_vars(view_name, table, database, request, datasette):
    """A document's page lists its most similar documents."""
    if view_name != "row" or table != "documents" or request is None:
        return {}

    async def inner():
        document_id = request.url_vars.get("pks", "")
        return {
            "similar_documents": await web.similar_documents(datasette, database, document_id),
            "document_id": document_id,
        }

    return inner


@hookimpl
def register_mcp_tools(datasette, mcp):
    """Archivist's MCP tools at /-/mcp too, beside datasette-mcp's read-only SQL tools."""
    from archivist.mcp_tools import register_tools, Workspaces
    from archivist.workspace import DATABASE_NAME

    def archive():  # looked up per call: datasette-mcp builds its server before the archive is added
        database = datasette.databases.get(DATABASE_NAME)
        return database.path if database is not None and database.path else "/nonexistent/archive.db"

    settings = datasette.plugin_config("archivist") or {}
    workspace = Path(settings["workspace"]) if settings.get("workspace") else None
    workspaces = Workspaces(
        archive, workspace, allowed=lambda: web.allowed_workspaces(datasette),
        time_limit_ms=datasette.setting("sql_time_limit_ms"),
    )
    register_tools(mcp, workspaces)


@hookimpl
def register_enrichments():
    """Embed selected documents from the table UI (datasette-enrichments)."""
    from archivist.enrichment import EmbedDocuments

    return [EmbedDocuments()]
