"""The canned queries as the exploration pages run them.

Every page (home, search and document pages) is rendered on the server from canned
queries, run through Datasette's own JSON API (the parameter checks and the SQL every
other surface uses), so the pages work without JavaScript; and each tells, at its top,
whether the archive is still being built (``building_state``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from archivist.errors import ArchivistError
from archivist.queries import runner, validation
from archivist.web.app import is_archive, query_failure
from archivist.workspace import DATABASE_NAME

if TYPE_CHECKING:
    from datasette.app import Datasette


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


async def building_state(datasette: Datasette) -> dict[str, Any] | None:
    """What every page tells of an index run still storing agent logs, or of one that stopped
    (``archive.building``): its state, source, percent and since, and the sentence saying it;
    None where the archive is built, or where no archive is served."""
    from archivist.archive import building

    database = datasette.databases.get(DATABASE_NAME)
    if database is None or not await is_archive(datasette):
        return None
    told = await database.execute_fn(building.told)
    return None if told is None else {**told, "sentence": building.sentence(told)}
