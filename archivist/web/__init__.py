"""The web surface: Archivist as a Datasette plugin.

Registered through the ``datasette`` entry point, so that ``datasette archive.db``
serves what ``archivist serve`` does: the canned queries, the SQL functions they
call, the pages (``home_page``, ``search_page``, ``document_page``), ``/api/search``
and the MCP tools at ``/-/mcp``.
This module is wiring only; ``templates/`` and ``static/`` beside it are the
plugin's own, found by Datasette.
"""

import copy
import functools
from importlib.resources import files
from pathlib import Path

import yaml
from datasette import hookimpl

from archivist.archive import packed
from archivist.queries import catalog, sqlfunctions
from archivist.workspace import DATABASE_NAME

# Datasette loads this module while it imports its own plugin manager, so the hooks
# below import the modules that need Datasette's app (archivist.web.app, the pages)
# when they are called, never here.


@functools.cache
def _metadata() -> dict:
    return yaml.safe_load((files("archivist.web") / "metadata.yml").read_text(encoding="utf-8"))


@hookimpl
def get_metadata(datasette, key, database, table):
    """Each archive table's and column's description, sort order and facets; a site's own metadata
    (``-m metadata.yml``, ``archivist serve --config-dir``) is merged over them by Datasette.

    Only while an Archivist archive is served: another database's tables keep Datasette's defaults
    (the archive's sort order and facets name columns they need not have).
    """
    from archivist.web import app

    if not app.known_archive(datasette):
        return {}
    return copy.deepcopy(_metadata())  # Datasette merges into what it is given


@hookimpl
def canned_queries(datasette, database, actor):
    """Every canned query, for the database served as ``archive`` when it is an Archivist archive.

    Any other database is Datasette's as usual: the queries would only fail on it.
    """
    if database != DATABASE_NAME:
        return None
    from archivist.web import app

    async def inner():
        if not await app.is_archive(datasette):
            return None
        return {name: dict(query) for name, query in catalog.canned_queries().items()}

    return inner


@hookimpl
def extra_css_urls(datasette):
    from archivist.web import app

    return [datasette.urls.static_plugins(app.plugin_name(), "archivist.css")]


@hookimpl
def prepare_connection(conn, datasette):
    """Register the SQL functions the canned queries call, ``archivist_text`` among them."""
    sqlfunctions.register(conn, {**catalog.default_settings(), **(datasette.plugin_config("archivist") or {})})
    packed.register(conn)


@hookimpl
def asgi_wrapper(datasette):
    """Host and Origin first, and the Content-Security-Policy on every response (under plain ``datasette``
    too; ``archivist serve`` checks its token outside the app); then canned-query parameters, before
    Datasette runs the SQL."""
    from archivist.web import app

    check_parameters = app.check_parameters(datasette)

    def wrap(inner_app):
        return app.host_guard(datasette).wrap(app.tidy_requests(check_parameters(inner_app)))

    return wrap


@hookimpl
def startup(datasette):
    """Ours answers every error (below), so Datasette's default handler goes: it prints each
    error's traceback with its local variables (request headers, tokens included) to the
    console, and itself fails on a 404 that was never raised when rich is installed.

    Datasette's internal catalog is built here, before the first request, also under the plain
    ``datasette`` command: datasette-enrichments starts a task on the first request that reads
    every database's tables, and were Datasette creating its ``_internal`` tables at that
    moment, the request would fail with "database table is locked"."""
    from archivist.web import app

    app.unregister_default_error_handler()

    async def inner():
        if await app.is_archive(datasette):  # known from the first request on (get_metadata)
            await app.upgrade_archive(datasette)
        try:
            await datasette.refresh_schemas()
        except Exception:  # a database that cannot be read now (a full disk): the pages say so (not_an_archive)
            app.logger.debug("Could not read the schemas of the databases served", exc_info=True)

    return inner


@hookimpl
def handle_exception(datasette, request, exception):
    """Errors as plain messages: no traceback, no SQL, and a caller's mistake is never a 500."""
    from archivist.web import app

    async def inner():
        return await app.error_response(datasette, request, exception)

    return inner


@hookimpl
def register_routes():
    """The exploration pages, and GET /api/search: the unified search as plain JSON (docs/contract.md: surfaces)."""
    from archivist.web import (
        activity_page,
        app,
        document_page,
        file_page,
        home_page,
        project_page,
        search_page,
        usage_page,
    )

    return [
        (r"^/$", home_page.home_page),
        (r"^/search$", search_page.search_page),
        (r"^/usage$", usage_page.usage_page),
        (r"^/activity$", activity_page.activity_page),
        (r"^/file$", file_page.file_page),
        (r"^/project/(?P<name>.+)$", project_page.project_page),
        (r"^/document/(?P<id>[^/]+)$", document_page.document_page),
        (r"^/document/(?P<id>[^/]+)/source$", document_page.document_source),
        (r"^/api/search$", app.api_search),
    ]


@hookimpl
def menu_links(datasette):
    """Datasette's own pages link back to the search and home pages."""
    return [
        {"href": datasette.urls.path("/search"), "label": "Search the archive"},
        {"href": datasette.urls.path("/"), "label": "Archive at a glance"},
    ]


@hookimpl
def render_cell(value, column, table):
    """Show search highlights in excerpts, the search response as indented JSON, and a message's
    packed thinking or tool output as its text (``archive.packed``)."""
    from archivist.web import app

    if table == "messages" and column in packed.PACKED_COLUMNS and isinstance(value, bytes):
        text = packed.unpacked(value)
        return text if isinstance(text, str) else None  # (bytes zlib did not make: Datasette's own rendering)
    if column == "excerpt":
        return app.highlighted(value)
    if column == "response":
        return app.pretty_json(value)
    return None


@hookimpl
def extra_template_vars(template, view_name, table, database, request, datasette):
    """The plugin's own pages show the site's metadata (title, description, licence, source) as
    Datasette's home page does; they and the canned queries' pages say whether the archive is still
    being built (``archivist_building``, shown by ``_archivist_building.html``); a document's page
    lists its most similar documents."""
    from archivist.web import app, page_queries

    own = isinstance(template, str) and template.startswith("archivist_")  # (a page rendered from a string has none)
    if own or (template == "query-archive.html" and database == DATABASE_NAME):

        async def page_vars():
            told = {"archivist_building": await page_queries.building_state(datasette)}
            return {"metadata": datasette.metadata(), **told} if own else told

        return page_vars
    if view_name != "row" or table != "documents" or database != DATABASE_NAME or request is None:
        return {}

    async def inner():
        if not await app.is_archive(datasette):
            return {"archivist_archive": False}
        document_id = request.url_vars.get("pks", "")
        return {
            "archivist_archive": True,
            "similar_documents": await app.similar_documents(datasette, database, document_id),
            "document_id": document_id,
        }

    return inner


@hookimpl
def register_mcp_tools(datasette, mcp):
    """Archivist's MCP tools at /-/mcp too, beside datasette-mcp's read-only SQL tools."""
    from archivist.mcp.calls import Workspaces
    from archivist.mcp.tools import register_tools
    from archivist.web import app

    def archive():  # looked up per call: datasette-mcp builds its server before the archive is added
        database = datasette.databases.get(DATABASE_NAME)
        return database.path if database is not None and database.path else "/nonexistent/archive.db"

    settings = datasette.plugin_config("archivist") or {}
    workspace = Path(settings["workspace"]) if settings.get("workspace") else None
    workspaces = Workspaces(
        archive,
        workspace,
        allowed=lambda: app.allowed_workspaces(datasette),
        time_limit_ms=datasette.setting("sql_time_limit_ms"),
    )
    register_tools(mcp, workspaces)


@hookimpl
def register_enrichments():
    """Embed selected documents from the table UI (datasette-enrichments)."""
    from archivist.web.enrichment import EmbedDocuments

    return [EmbedDocuments()]
