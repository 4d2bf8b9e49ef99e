"""Datasette integration: parameter checks in front of the canned queries, and the app itself."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from pathlib import Path
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qsl

from datasette.app import Datasette
from datasette.database import Database
from datasette.utils.asgi import Response
from markupsafe import Markup, escape

from . import queries, validation
from .errors import ArchivistError
from .queries import sql_for
from .workspace import CONFIG_DIR, DATABASE_NAME

ASGIApp = Callable[..., Awaitable[None]]


def _route(path: str) -> tuple[str, str, str] | None:
    """(database, query, format) when the path is one of our canned queries."""
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


async def _send(send: Callable, status: int, content_type: str, body: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [[b"content-type", content_type.encode()]],
        }
    )
    await send({"type": "http.response.body", "body": body.encode("utf-8")})


def check_parameters(datasette: Datasette) -> Callable[[ASGIApp], ASGIApp]:
    """An ASGI wrapper: canned queries with bad parameters answer 400 with the SPEC §5 body."""

    def wrap(app: ASGIApp) -> ASGIApp:
        async def checked(scope: dict, receive: Callable, send: Callable) -> None:
            route = _route(scope.get("path", "")) if scope.get("type") == "http" else None
            if route is None or route[0] != DATABASE_NAME or DATABASE_NAME not in datasette.databases:
                return await app(scope, receive, send)  # not one of the archive's canned queries
            database, name, extension = route
            raw = dict(parse_qsl(scope.get("query_string", b"").decode("utf-8"), keep_blank_values=True))
            params = {k: v for k, v in raw.items() if not k.startswith("_")}
            if extension == "html" and not params:
                return await app(scope, receive, send)  # the empty form
            try:
                prepared = await datasette.get_database(database).execute_fn(lambda conn: _prepare_on(conn, name, params))
                if validation.QUERIES[name].needs_model(prepared):
                    # Embed the query outside SQL: loading the model can take longer than
                    # Datasette's SQL time limit. The SQL function then finds it cached.
                    from .embedding_model import query_vector

                    await asyncio.to_thread(query_vector, prepared["query"])
            except ArchivistError as error:
                if extension == "html":
                    await datasette.invoke_startup()
                    page = await datasette.render_template(
                        "error.html", {"ok": False, "error": error.message, "status": 400, "title": "Invalid input"}
                    )
                    return await _send(send, 400, "text/html; charset=utf-8", page)
                return await _send(send, 400, "application/json; charset=utf-8", json.dumps(error.to_dict()))
            return await app(scope, receive, send)

        return checked

    return wrap


def unknown_search_parameters(keys: Any) -> ArchivistError | None:
    """The error for parameters that ``search`` does not take, if any were given."""
    allowed = validation.QUERIES["search"].params
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
    """GET /api/search: the ``search`` canned query's response, unwrapped (SPEC §4).

    Lists may be comma-separated (``entities=feature,bug``) or repeated
    (``entities=feature&entities=bug``). The query runs through Datasette's own
    JSON API, so the parameter checks and the SQL are the ones every surface uses.
    """
    unknown = unknown_search_parameters(request.args)
    if unknown is not None:
        return Response.json(unknown.to_dict(), status=400)
    params = {key: ",".join(request.args.getlist(key)) for key in request.args}
    response = await datasette.client.get(
        datasette.urls.path(f"/{DATABASE_NAME}/search.json"), params={**params, "_shape": "array"}
    )
    body = response.json()
    if response.status_code == 200:
        return Response.json(queries.response_of(body))
    if isinstance(body, dict) and body.get("success") is False:
        return Response.json(body, status=response.status_code)
    return Response.json(query_failure(datasette, body).to_dict(), status=400)


def query_failure(datasette: Datasette, body: Any) -> ArchivistError:
    """Datasette's own error for a canned query (its SQL time limit, say), in our terms.

    Datasette's message is HTML with the SQL in it: neither reaches a user.
    """
    error = str(body.get("error") if isinstance(body, dict) else body)
    if "took too long" in error:
        limit = datasette.setting("sql_time_limit_ms")
        return ArchivistError(
            "INVALID_PARAMETER",
            "The search took too long",
            f"It ran past the app's SQL time limit ({limit} ms): ranking every match of very common words in a large archive can.",
            "Narrow it (a filter, a shorter date range, rarer words) and try again.",
        )
    return ArchivistError(
        "INVALID_PARAMETER",
        "The search could not run",
        re.sub(r"<[^>]+>|\s+", " ", error.split("<textarea", 1)[0]).strip(),
        "Narrow it (a filter, a shorter date range, rarer words) and try again.",
    )


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
    return Markup('<pre class="archivist-json">') + escape(json.dumps(document, indent=2, ensure_ascii=False)) + Markup("</pre>")


async def similar_documents(datasette: Datasette, database: str, document_id: str, limit: int = 8) -> list[dict[str, Any]]:
    """The ``similar`` canned query for one document, through Datasette's own JSON API."""
    response = await datasette.client.get(
        datasette.urls.path(f"/{database}/similar.json"),
        params={"document": document_id, "limit": str(limit), "_shape": "array"},
    )
    return response.json() if response.status_code == 200 else []


def make_datasette(db_path: Path, plugin_settings: dict[str, Any] | None = None) -> Datasette:
    """This repository's Datasette (metadata, plugins, templates) serving one archive as ``archive``.

    ``plugin_settings`` overrides the ``archivist`` plugin block of metadata.yml.
    """
    metadata = None
    if plugin_settings:
        metadata = copy.deepcopy(queries.metadata())
        metadata.setdefault("plugins", {})["archivist"] = {**queries.plugin_settings(), **plugin_settings}
    datasette = Datasette(config_dir=CONFIG_DIR, metadata=metadata)
    datasette.add_database(Database(datasette, path=str(db_path), is_mutable=True), name=DATABASE_NAME)
    return datasette


async def start(datasette: Datasette) -> Datasette:
    """Run Datasette's startup and build its internal catalog before the first request.

    datasette-enrichments starts a background task on the first request that reads
    every database's tables; if Datasette is creating its ``_internal`` tables at
    that moment, the request fails with "database table is locked". Building the
    catalog first removes the race.
    """
    await datasette.invoke_startup()
    await datasette.refresh_schemas()
    return datasette
