"""The pages' URLs: the search page's state and the URLs of every state one click away,
and a document's page.

The search page takes the parameters of ``GET /api/search`` unchanged: each state of
the page is a URL, and the same query string gives the JSON at ``/api/search``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from archivist.queries.declarations import QUERIES
from archivist.queries.lists import items

if TYPE_CHECKING:
    from datasette.app import Datasette

    from archivist.queries.params import Param


SEARCH_PARAMS = tuple(param.name for param in QUERIES["search"].params)  # in the order URLs name them
# The search page's form: a field for each parameter declared with one (``Param.form``); a new
# search keeps the hidden ones, the filters in force.
FORM: dict[str, Param] = {param.name: param for param in QUERIES["search"].params if param.form}
KEPT = tuple(name for name, param in FORM.items() if param.form == "hidden")
DEFAULT_MODE = str(QUERIES["search"].param("mode").default)
DEFAULT_SORT = str(QUERIES["search"].param("sort").default)


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


def project_url(datasette: Datasette, project: str) -> str:
    """A project's page: ``/project/home/ana/api`` (a path's leading ``/`` left out: a server folds
    the slashes a path begins with), or ``/project/api`` by its last folder's name."""
    return datasette.urls.path("/project/" + quote(project[1:] if project.startswith("/") else project, safe="/"))


def file_url(datasette: Datasette, path: str, offset: int = 0) -> str:
    """The history page of a file (a path or a name): ``/file?path=…``."""
    params = {"path": path, **({"offset": str(offset)} if offset else {})}
    return datasette.urls.path("/file") + "?" + urlencode(params)


def document_url(datasette: Datasette, document_id: Any) -> str:
    return datasette.urls.path(f"/document/{document_id}")
