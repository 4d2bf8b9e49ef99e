"""Datasette integration: parameter checks in front of the canned queries, and the app itself."""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import json
import logging
import re
import weakref
from collections.abc import Awaitable, Callable
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote

from datasette.database import Database
from datasette.plugins import pm
from datasette.utils.asgi import Base400, Response
from datasette.views.base import DatasetteError
from markupsafe import Markup, escape

from archivist.archive import building
from archivist.archive.database import connect_read_only, primary_code, sqlite3
from archivist.archive.schema import ARCHIVE_TABLES, archive_problem, migrate
from archivist.errors import ArchivistError, took_too_long
from archivist.queries import runner, validation
from archivist.queries.catalog import sql_for
from archivist.queries.line import Line
from archivist.queries.rules import API_OUTPUT
from archivist.web.guard import Guard, content_security_policy, parse_origin
from archivist.workspace import DATABASE_NAME

if TYPE_CHECKING:
    from datasette.app import Datasette

ASGIApp = Callable[..., Awaitable[None]]
logger = logging.getLogger(__name__)


def _route(path: str) -> tuple[str, str, str] | None:
    """(database, query, format) when the path is one of our canned runner."""
    parts = path.strip("/").split("/")
    if len(parts) != 2:
        return None
    database, name = parts
    name, _, extension = name.partition(".")
    if name not in validation.QUERIES:
        return None
    return database, name, extension or "html"


def _prepare_on(conn: Any, name: str, params: dict[str, str]) -> dict[str, str]:
    """Validate on one of Datasette's own connections (checks may look things up)."""

    def execute(query: str, values: dict[str, str]) -> list[dict[str, Any]]:
        cursor = conn.execute(sql_for(query), values)
        columns = [column[0] for column in cursor.description]
        return [dict(zip(columns, row)) for row in cursor.fetchall()]

    return validation.prepare(name, params, execute, strict=False)


async def _send(send: Callable, status: int, content_type: str, body: str, busy: bool = False) -> None:
    headers = [[b"content-type", content_type.encode()]]
    if busy:
        headers.append([b"retry-after", RETRY_AFTER.encode()])
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body.encode("utf-8")})


async def _reply_error(datasette: Datasette, send: Callable, html: bool, status: int, error: ArchivistError) -> None:
    if html:
        await datasette.invoke_startup()
        page = await datasette.render_template(
            "error.html", {"ok": False, "error": error.message, "status": status, "title": "Invalid input"}
        )
        return await _send(send, status, "text/html; charset=utf-8", page, error.code == "SEARCH_BUSY")
    body = json.dumps(error.to_dict(), ensure_ascii=False)
    await _send(send, status, "application/json; charset=utf-8", body, error.code == "SEARCH_BUSY")


# Each served archive's line (``queries.line``): its canned queries take turns, as many at once as
# Datasette has SQL threads, and one that found no turn within the SQL time limit is told SEARCH_BUSY.
LINES: weakref.WeakKeyDictionary[Datasette, Line] = weakref.WeakKeyDictionary()
RETRY_AFTER = "1"  # seconds: what a SEARCH_BUSY answer asks a client to wait before it asks again


def check_parameters(datasette: Datasette) -> Callable[[ASGIApp], ASGIApp]:
    """An ASGI wrapper for the archive's canned queries: bad parameters answer 400 with the docs/errors.md body,
    and Datasette's own failures (its time limit, say) are told in the same terms, never with their SQL; and
    a query's JSON says whether the archive is still being built (``_BuildingTeller``)."""

    def wrap(app: ASGIApp) -> ASGIApp:
        line = LINES.get(datasette) or LINES.setdefault(  # one for the server and datasette.client alike
            datasette, Line(datasette.setting("num_sql_threads"), datasette.setting("sql_time_limit_ms") / 1000)
        )

        async def checked(scope: dict, receive: Callable, send: Callable) -> None:
            route = _route(scope.get("path", "")) if scope.get("type") == "http" else None
            if route is None or route[0] != DATABASE_NAME or not await is_archive(datasette):
                return await app(scope, receive, send)  # not one of the archive's canned queries
            database, name, extension = route
            params: dict[str, str] = {}
            for key, value in parse_qsl(
                scope.get("query_string", b"").decode("utf-8", "replace"), keep_blank_values=True
            ):
                if not key.startswith("_"):
                    params.setdefault(key, value)  # Datasette runs a repeated parameter's first value: check that one
            if extension == "html" and not params:
                return await app(scope, receive, send)  # the empty form
            html = extension == "html"
            try:
                async with line.turn():
                    await _run_checked(datasette, app, (scope, receive, send), (database, name, html), params)
            except ArchivistError as error:
                if error.code != "SEARCH_BUSY":  # the query's own failures are told in its turn
                    raise
                await _reply_error(datasette, send, html, status_of(error), error)

        return checked

    return wrap


async def _run_checked(
    datasette: Datasette,
    app: ASGIApp,
    call: tuple[dict, Callable, Callable],
    query: tuple[str, str, bool],
    params: dict,
) -> None:
    """One canned query, in its turn: its parameters checked, then run, its failure told in our terms."""
    scope, receive, send = call
    database, name, html = query
    db = datasette.get_database(database)
    try:
        prepared = await db.execute_fn(lambda conn: _prepare_on(conn, name, params))
        if validation.QUERIES[name].needs_model(prepared):
            await asyncio.to_thread(runner.warm, db.path, prepared["query"])
    except ArchivistError as error:
        return await _reply_error(datasette, send, html, 400, error)
    if not html:
        told = await db.execute_fn(building.told)
        send = _BuildingTeller(send, told).send if told is not None else send
    failure = _FailureCatcher(send)
    await app(scope, receive, failure.send)
    if failure.status is not None:
        failed = query_failure(datasette, failure.message())
        await _reply_error(datasette, send, html, status_of(failed), failed)


class _FailureCatcher:
    """Passes a successful response through; holds back a failed one so that it can be told differently."""

    def __init__(self, send: Callable) -> None:
        self._send = send
        self.status: int | None = None
        self._body: list[bytes] = []

    async def send(self, message: dict) -> None:
        if message["type"] == "http.response.start" and message["status"] >= 400:
            self.status = message["status"]
        if self.status is None:
            return await self._send(message)
        if message["type"] == "http.response.body":
            self._body.append(message.get("body", b""))

    def message(self) -> Any:
        text = b"".join(self._body).decode("utf-8", "replace")
        try:
            return json.loads(text)
        except ValueError:
            return text


class _BuildingTeller:
    """A canned query's JSON while an index run is still storing agent logs, or after one that stopped
    (``archive.building``): ``building`` first, beside its ``rows``. A ``_shape=array`` answer is the rows
    alone, and is passed on as it is."""

    def __init__(self, send: Callable, told: dict[str, Any]) -> None:
        self._send = send
        self._told = json.dumps({"building": told}).encode()
        self._start: dict | None = None
        self._body: list[bytes] = []

    async def send(self, message: dict) -> None:
        if message["type"] == "http.response.start" and message["status"] == 200:
            self._start = message  # held until the body is whole
            return None
        if self._start is None or message["type"] != "http.response.body":
            return await self._send(message)
        self._body.append(message.get("body", b""))
        if message.get("more_body"):
            return None
        body = b"".join(self._body)
        if body[:1] == b"{" and body[1:].lstrip()[:1] not in (b"}", b""):
            body = self._told[:-1] + b", " + body[1:]  # {"building": {...}, "ok": true, "rows": ...}
        headers = [(key, value) for key, value in self._start.get("headers", []) if key.lower() != b"content-length"]
        await self._send({**self._start, "headers": headers})
        await self._send({"type": "http.response.body", "body": body})


def tidy_requests(app: ASGIApp) -> ASGIApp:
    """Caller mistakes that Datasette would answer with a 500: repeated slashes, a time limit that is no number."""

    async def tidied(scope: dict, receive: Callable, send: Callable) -> None:
        if scope.get("type") == "http":
            path = scope.get("path", "")
            if "//" in path:
                tidy = "/" + "/".join(part for part in path.split("/") if part)
                # raw_path is what came over the wire: ASCII, anything else percent-encoded
                raw = quote(tidy.encode("utf-8", "surrogateescape"), safe="/:@!$&'()*+,;=-._~")
                scope = {**scope, "path": tidy, "raw_path": raw.encode("ascii")}
            for key, value in parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True):
                if key == "_timelimit" and not (value.isascii() and value.isdigit()):
                    error = ArchivistError(
                        "INVALID_PARAMETER",
                        f"Invalid _timelimit {value[:40]!r}",
                        "_timelimit is a whole number of milliseconds.",
                        "Try _timelimit=500",
                    )
                    return await _send(
                        send, 400, "application/json; charset=utf-8", json.dumps(error.to_dict(), ensure_ascii=False)
                    )
        await app(scope, receive, send)

    return tidied


async def error_response(datasette: Datasette, request: Any, exception: Exception) -> Response:
    """Datasette's errors, told without tracebacks: its deliberate ones as the caller's (4xx), anything else as ours.

    Datasette raises its own messages ("Cannot sort table by x", "You may only POST to a
    canned query") with status 500 by default; they answer a request, not a bug. An
    unexpected exception is logged here and its text, which may hold SQL, is not shown.
    """
    title = None
    if isinstance(exception, Base400):
        status, message = exception.status, str(exception.args[0] if exception.args else exception)
    elif isinstance(exception, DatasetteError):
        status = 400 if exception.status == 500 else exception.status
        message = Markup(exception.message) if exception.message_is_html else exception.message
        title = exception.title
    elif isinstance(exception, AssertionError) and "only POST to a canned query" in str(exception):
        status, message = 405, "Only canned queries take POST requests; this is a table."
    else:
        logger.error("Unexpected error for %s", request.path, exc_info=exception)
        status, message = 500, "An unexpected error; the server's log has the details."
    info = {"ok": False, "error": message, "status": status, "title": title}
    if request.path.split("?")[0].endswith(".json"):
        return Response.json(info, status=status)
    await datasette.invoke_startup()
    page = await datasette.render_template([f"{status}.html", "error.html"], info, request=request)
    return Response.html(page, status=status)


def unknown_search_parameters(keys: Any) -> ArchivistError | None:
    """The error for parameters that ``search`` does not take, if any were given."""
    spec = validation.QUERIES["search"]
    allowed = [*spec.params, *spec.aliases]
    unknown = sorted(key for key in keys if key not in allowed)
    if not unknown:
        return None
    return ArchivistError(
        "INVALID_PARAMETER",
        f"Unknown parameter{'s' if len(unknown) > 1 else ''} for search: {', '.join(unknown)}",
        f"search takes: {', '.join(allowed)}.",
        "Remove the unknown parameter.",
    )


async def api_search(datasette: Datasette, request: Any) -> Response:
    """GET /api/search: the ``search`` canned query's response, unwrapped (docs/contract.md: surfaces).

    Lists may be comma-separated (``entities=feature,bug``) or repeated
    (``entities=feature&entities=bug``). The query runs through Datasette's own
    JSON API, so the parameter checks and the SQL are the ones every surface uses. Its
    output is the MCP tool's: brief unless output=full is asked for.
    """
    if not await is_archive(datasette):
        failure = not_an_archive(datasette)
        return Response.json(failure.to_dict(), status=not_an_archive_status(failure))
    unknown = unknown_search_parameters(request.args)
    if unknown is not None:
        return Response.json(unknown.to_dict(), status=400)
    try:
        params = validation.unalias(
            validation.QUERIES["search"], {key: ",".join(request.args.getlist(key)) for key in request.args}
        )
        params["output"] = params.get("output") or API_OUTPUT
        validation.check_sizes(params)
    except ArchivistError as error:
        return Response.json(error.to_dict(), status=400)
    response = await datasette.client.get(
        datasette.urls.path(f"/{DATABASE_NAME}/search.json"), params={**params, "_shape": "array"}
    )
    body = response.json()
    if response.status_code == 200:
        return Response.json(runner.response_of(body))
    if isinstance(body, dict) and body.get("success") is False:
        retry = response.headers.get("retry-after")
        return Response.json(body, status=response.status_code, headers={"retry-after": retry} if retry else None)
    failed = query_failure(datasette, body)
    return Response.json(failed.to_dict(), status=status_of(failed))


def query_failure(datasette: Datasette, body: Any) -> ArchivistError:
    """Datasette's own error for a canned query (its SQL time limit, say), in our terms.

    Datasette's message is HTML with the SQL in it: neither reaches a user. A query
    that passed its checks and still failed is a bug: INTERNAL_ERROR, told in the log.
    """
    error = str(body.get("error") if isinstance(body, dict) else body)
    if "took too long" in error or "interrupted" in error.lower():
        return took_too_long(datasette.setting("sql_time_limit_ms"))
    logger.error("A canned query failed: %s", error[:2000])
    return ArchivistError(
        "INTERNAL_ERROR",
        "The search could not run",
        "An unexpected error; the server's log has the details.",
        "Report this.",
    )


def status_of(error: ArchivistError) -> int:
    """The HTTP status of a failed query's error: 500 for a bug, 503 for a search stopped at its time limit
    or refused a turn, else 400."""
    return {"INTERNAL_ERROR": 500, "SEARCH_TIMED_OUT": 503, "SEARCH_BUSY": 503}.get(error.code, 400)


def highlighted(value: Any) -> Markup | None:
    """An excerpt's ``<mark>`` highlights as HTML, everything else escaped."""
    if not isinstance(value, str) or "<mark>" not in value:
        return None
    escaped = str(escape(value))
    return Markup(escaped.replace("&lt;mark&gt;", "<mark>").replace("&lt;/mark&gt;", "</mark>"))


def pretty_json(value: Any) -> Markup | None:
    """A JSON document (the search response) indented in a ``<pre>``, escaped."""
    if not isinstance(value, str) or not value.startswith("{"):
        return None
    try:
        document = json.loads(value)
    except json.JSONDecodeError:
        return None
    return (
        Markup('<pre class="archivist-json">')
        + escape(json.dumps(document, indent=2, ensure_ascii=False))
        + Markup("</pre>")
    )


async def similar_documents(
    datasette: Datasette, database: str, document_id: str, limit: int = 8
) -> list[dict[str, Any]]:
    """The ``similar`` canned query for one document, through Datasette's own JSON API."""
    response = await datasette.client.get(
        datasette.urls.path(f"/{database}/similar.json"),
        params={"document": document_id, "limit": str(limit), "_shape": "array"},
    )
    return response.json() if response.status_code == 200 else []


# The tables `archivist index` creates: a database without them is not an archive.
_ARCHIVE_TABLES_SQL = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ({})".format(
    ", ".join(f"'{name}'" for name in ARCHIVE_TABLES)
)
_archives: weakref.WeakSet[Database] = weakref.WeakSet()  # databases found to be archives (they stay archives)
# Why a database could not be read when last looked at (a full disk, say): told by ``not_an_archive``.
_unread: weakref.WeakKeyDictionary[Database, BaseException] = weakref.WeakKeyDictionary()


class ArchiveDatabase(Database):
    """The archive as Datasette serves it: its read connections are opened as every surface opens
    one (``connect_read_only``), so that an intact archive is served on a full disk too, where
    SQLite's own read-only connection fails. Its write connection is Datasette's."""

    def connect(self, write: bool = False) -> Any:
        if write or self.is_memory or not self.path or not self.is_mutable:
            return super().connect(write=write)
        conn = connect_read_only(self.path, check_same_thread=False)
        self._all_file_connections.append(conn)
        return conn


async def is_archive(datasette: Datasette) -> bool:
    """Whether Datasette serves an Archivist archive as ``archive`` (``datasette WORKSPACE/.archivist/archive.db``).

    Any other database, or none by that name, is Datasette's as usual: the canned queries
    are not offered on it, and the Archivist pages say what to run (``not_an_archive``).
    A database that is not one yet is looked at again on each request: it may be indexed
    while it is served.
    """
    db = datasette.databases.get(DATABASE_NAME)
    if db is None:
        return False
    if db in _archives:
        return True
    try:
        found = (await db.execute(_ARCHIVE_TABLES_SQL)).single_value()
    except Exception as error:  # not SQLite, or not readable now: not_an_archive says which
        logger.debug("Could not read the schema of the database %s", DATABASE_NAME, exc_info=True)
        _unread[db] = error
        return False
    _unread.pop(db, None)
    if found == len(ARCHIVE_TABLES):
        _archives.add(db)
        return True
    return False


async def upgrade_archive(datasette: Datasette) -> None:
    """An archive written by an older version gets this version's schema (its pending migrations).

    ``archivist serve`` indexes first, which does the same; this is for plain ``datasette``.
    An archive served read-only (``-i``) is left as it is: its queries say to run ``archivist index``.
    """
    db = datasette.databases[DATABASE_NAME]
    if not db.is_mutable or not db.path:
        return

    if await db.execute_fn(archive_problem) == "older":
        await db.execute_write_fn(migrate, block=True)
        logger.warning("Upgraded the archive %s to this version's schema", db.path)


def known_archive(datasette: Datasette) -> bool:
    """Whether ``is_archive`` has found the database served as ``archive`` to be an archive (no I/O)."""
    db = datasette.databases.get(DATABASE_NAME)
    return db is not None and db in _archives


def served_databases(datasette: Datasette) -> list[str]:
    """The names of the databases Datasette serves, its internal ones left out."""
    return [name for name in datasette.databases if not name.startswith("_")]


def not_an_archive(datasette: Datasette) -> ArchivistError:
    """What the Archivist pages and /api/search answer when no archive is served as ``archive``.

    The code is DIRECTORY_NOT_FOUND, as for a workspace that has no archive everywhere else
    (the CLI, MCP): the archive the pages read is not there.
    """
    hint = (
        "Run: archivist index WORKSPACE, then datasette WORKSPACE/.archivist/archive.db "
        "(or archivist serve WORKSPACE, which does both)."
    )
    db = datasette.databases.get(DATABASE_NAME)
    if db is None:
        others = served_databases(datasette)
        served = f"Datasette serves {', '.join(others)}" if others else "Datasette serves no database file"
        return ArchivistError(
            "DIRECTORY_NOT_FOUND",
            "No Archivist archive is served here",
            f"{served}; the Archivist pages read the database named {DATABASE_NAME}, "
            "the file WORKSPACE/.archivist/archive.db that archivist index writes.",
            hint,
        )
    shown = f" ({Path(db.path).name})" if db.path else ""
    error = _unread.get(db)
    if error is not None and db.path and primary_code(error) != sqlite3.SQLITE_NOTADB:
        return runner.unreadable(db.path, error, "reload the page.")  # a full disk, say: never a foreign file
    return ArchivistError(
        "DIRECTORY_NOT_FOUND",
        f"The database {DATABASE_NAME}{shown} is not an Archivist archive",
        "It is not a database file."
        if error is not None
        else f"It lacks the tables that archivist index creates ({', '.join(ARCHIVE_TABLES)}).",
        hint,
    )


def not_an_archive_status(error: ArchivistError) -> int:
    """The HTTP status of ``not_an_archive``'s error: 503 where the archive cannot be read now (a full
    disk), else 404 (no archive is served)."""
    return 503 if error.code == "ARCHIVE_NOT_WRITTEN" else 404


def make_datasette(
    db_path: Path, plugin_settings: dict[str, Any] | None = None, config_dir: Path | None = None
) -> Datasette:
    """A Datasette serving one archive as ``archive``, with the Archivist plugin (pages, queries, SQL functions).

    ``plugin_settings`` is the ``archivist`` plugin block (``workspace``,
    ``allowed_workspaces``, ``allowed_hosts``, ``report_link_base_url``): it wins over the
    same keys of ``config_dir``, a Datasette configuration folder served over the package's
    defaults. Datasette reads the folder itself (its templates, searched first, its plugins and
    its static files); its metadata and settings are read here (``config_folder``), where
    Datasette merges the metadata over the package's (the ``get_metadata`` hook).
    """
    from datasette.app import Datasette
    from datasette.utils import StartupError

    register_plugin()
    site = config_folder(config_dir) if config_dir is not None else {}
    metadata = site.get("metadata", {})
    if plugin_settings:
        metadata = _merged(metadata, {"plugins": {"archivist": dict(plugin_settings)}})
    settings = {"sql_time_limit_ms": runner.TIME_LIMIT_MS, **site.get("settings", {})}
    folder = config_dir.resolve() if config_dir is not None else None
    try:
        datasette = Datasette(metadata=metadata or None, settings=settings, memory=True, config_dir=folder)
    except StartupError as error:
        raise ArchivistError(
            "INVALID_PARAMETER",
            f"Datasette cannot serve the configuration folder {config_dir}: {error}",
            "Datasette refuses a configuration folder it cannot read.",
            "Change the file it names.",
        ) from error
    _drop_folder_databases(datasette)
    datasette.add_database(ArchiveDatabase(datasette, path=str(db_path), is_mutable=True), name=DATABASE_NAME)
    return datasette


def _drop_folder_databases(datasette: Datasette) -> None:
    """Leave out the database files Datasette finds in a configuration folder: the archive is
    the one database served."""
    for name, database in list(datasette.databases.items()):
        if database.path is not None and str(database.path) in datasette.files:
            datasette.remove_database(name)
    datasette.files = ()


# What a configuration folder holds that Datasette 0.65 leaves to its caller once a caller gives
# metadata and settings, and datasette.yaml, where Datasette 1.0 keeps settings, plugin blocks and
# table options that 0.65 reads from the metadata.
_METADATA_FILES = ("metadata.json", "metadata.yaml", "metadata.yml")
_CONFIG_FILES = ("datasette.json", "datasette.yaml", "datasette.yml")


def config_folder(folder: Path) -> dict[str, Any]:
    """A configuration folder's metadata and settings: its metadata file and settings.json, as
    ``datasette DIR`` reads them, and its datasette.yaml, whose ``settings`` are settings and
    whose other blocks (``plugins``, ``databases``...) are merged over the metadata, where
    Datasette 0.65 reads them."""
    from datasette.app import DEFAULT_SETTINGS

    metadata = _config_file(folder, _METADATA_FILES)
    config = _config_file(folder, _CONFIG_FILES)
    given = config.pop("settings", None) or {}
    settings = {**_config_file(folder, ("settings.json",)), **(given if isinstance(given, dict) else {})}
    unknown = sorted(set(settings) - set(DEFAULT_SETTINGS))
    if unknown or not isinstance(given, dict):
        raise ArchivistError(
            "INVALID_PARAMETER",
            f"Not Datasette settings in {folder}: {', '.join(unknown) or repr(given)[:80]}",
            "datasette.yaml's settings block and settings.json name Datasette's settings, each with its value.",
            "See datasette --help-settings.",
        )
    return {"metadata": _merged(metadata, config), "settings": settings}


def _config_file(folder: Path, names: tuple[str, ...]) -> dict[str, Any]:
    """The first of the files ``names`` in ``folder`` that exists, read as JSON or YAML; {} when none does."""
    from datasette.utils import BadMetadataError, parse_metadata

    path = next((folder / name for name in names if (folder / name).is_file()), None)
    if path is None:
        return {}
    try:
        content = parse_metadata(path.read_text(encoding="utf-8"))
    except (BadMetadataError, UnicodeDecodeError):
        content = "unreadable"
    if content is None:  # empty, or comments only
        return {}
    if not isinstance(content, dict):
        raise ArchivistError(
            "INVALID_PARAMETER",
            f"Could not read {path}",
            "A Datasette configuration file is one JSON or YAML object in UTF-8.",
            "Check its syntax.",
        )
    return content


def _merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` merged into a copy of ``base``, nested objects key by key, as Datasette merges metadata."""
    merged = dict(base)
    for key, value in over.items():
        both = isinstance(value, dict) and isinstance(merged.get(key), dict)
        merged[key] = _merged(merged[key], value) if both else value
    return merged


@functools.cache
def plugin_name() -> str:
    """The name Datasette serves the plugin's static files under: its distribution's, or its module's."""
    from datasette.plugins import get_plugins

    static = str(files("archivist.web") / "static")
    for plugin in get_plugins():
        if plugin.get("static_path") == static:
            return plugin["name"]
    return "archivist"


def unregister_default_error_handler() -> None:
    default = pm.get_plugin("datasette.handle_exception")
    if default is not None:
        pm.unregister(default)


def register_plugin() -> None:
    """Register the plugin with Datasette if its ``datasette`` entry point has not (as under a test runner)."""
    import archivist.web as plugin

    if not pm.is_registered(plugin):
        pm.register(plugin, name="archivist")
    unregister_default_error_handler()


def host_guard(datasette: Datasette) -> Guard:
    """The Host and Origin checks of every request, Datasette's own internal ones included, and
    the Content-Security-Policy of every page, under ``archivist serve`` and plain ``datasette`` alike.

    The token is checked outside the app (``archivist serve``): Datasette's internal
    requests, which the pages make to its JSON API, carry none.
    """
    settings = datasette.plugin_config("archivist") or {}
    origins = list(settings.get("allowed_origins") or ())
    for origin in origins:
        if parse_origin(origin.strip()) is None:
            logger.warning("allowed_origins: %r is not an origin (scheme://host[:port]); it allows nothing", origin)
    policy = content_security_policy(inline_script_hashes(datasette))
    return Guard.of(settings.get("allowed_hosts") or (), allowed_origins=origins, policy=policy)


_INLINE_SCRIPT = re.compile(r"<script(?P<attributes>[^>]*)>(?P<body>.*?)</script>", re.S | re.I)
# Template variables that an inline script of Datasette's is made of, with every value each takes.
_SCRIPT_VALUES = {"{{ datasette_allow_facet }}": ("true", "false")}


def _script_texts(body: str) -> list[str]:
    """The texts an inline script of a template renders to; none when it holds other template code."""
    texts = [body]
    for placeholder, values in _SCRIPT_VALUES.items():
        if placeholder in body:
            texts = [text.replace(placeholder, value) for text in texts for value in values]
    return [text for text in texts if not any(mark in text for mark in ("{{", "{%", "{#"))]


def inline_script_hashes(datasette: Datasette) -> set[str]:
    """The SHA-256 (base64) of each inline script that the templates Datasette renders write as they are.

    Datasette's own templates put a few scripts inline (closing the menus, the SQL editor, the
    facet switch), so the policy names them by their hashes rather than allowing any inline
    script. A script a plugin writes differently on each request is not among them and is
    blocked: datasette-enrichments' progress bar on a table with a running job (its
    extra_body_script hook) and on a job's page; the job runs all the same.
    """
    environment = datasette.jinja_env
    hashes = set()
    for name in environment.list_templates(extensions=["html"]):
        source, _, _ = environment.loader.get_source(environment, name)
        for script in _INLINE_SCRIPT.finditer(source.replace("\r\n", "\n")):
            if "src=" in script["attributes"]:
                continue
            for text in _script_texts(script["body"]):
                hashes.add(base64.b64encode(hashlib.sha256(text.encode()).digest()).decode())
    return hashes


def allowed_workspaces(datasette: Datasette) -> list[Path]:
    """The workspaces besides the served archive's own that its MCP tools may read."""
    settings = datasette.plugin_config("archivist") or {}
    return [Path(folder) for folder in settings.get("allowed_workspaces") or ()]


async def start(datasette: Datasette) -> Datasette:
    """Run Datasette's startup, which builds its internal catalog (the plugin's startup hook),
    before the first request."""
    await datasette.invoke_startup()
    return datasette
