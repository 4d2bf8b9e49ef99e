"""The canned queries, as the package ships them: each one's SQL file and its declaration.

A query's SQL is ``sql/<name>.sql``; its title, description and parameters are declared
once, in ``declarations``. ``canned_queries()`` puts the two together in Datasette's form.

SQL that several queries need is written once:

- without parameters, as a view of the archive, created by a migration (archive.migrations):
  ``workspace_root``, the one row holding the workspace's absolute path;
- with a parameter, as a fragment file ``sql/_<fragment>.sql`` that a query includes,
  as the body of one of its CTEs (or as columns of its select list: ``_report_fields.sql``),
  with a line of its own::

      target as (
        -- include: _document_id.sql
      ),

  The catalog replaces that line with the file when it loads the query, so the SQL
  that runs (and that Datasette shows) is whole. A view would not do for
  ``_document_id.sql`` (the document that ``:document`` names, by id, path or
  absolute path): a query filtering a view of every document's names would compare
  computed values (the id as text, the absolute path) that no index holds, and read
  every document; the fragment keeps each lookup on an index, and the include line
  shows where it goes.

The parts of ``search.sql`` that name its filters are made from ``filters.FILTERS`` the same way,
from a line that names the part (``-- include: filters.inputs``), so that the SQL names no filter;
and its two answers from ``response.FIELDS`` (``-- include: response.brief``), the response's one shape.
"""

from __future__ import annotations

import functools
import os
import re
from importlib.resources import files
from typing import Any

from archivist.errors import ArchivistError
from archivist.queries import filters, response
from archivist.queries.declarations import QUERIES

# The environment variable that sets report_link_base_url for every surface: links in
# search_reports results point under it (<base>/<command>/<file>) when it is set, and
# are file:// URLs of the report on this machine otherwise. Datasette's plugin setting
# (plugins: archivist: report_link_base_url) wins where it is given.
REPORT_LINK_ENV = "ARCHIVIST_REPORT_LINK_BASE_URL"


def default_settings() -> dict[str, Any]:
    """The settings of the ``archivist`` plugin block that the queries read, from the environment."""
    return {"report_link_base_url": os.environ.get(REPORT_LINK_ENV) or None}


_INCLUDE_RE = re.compile(
    r"^(?P<indent>[ \t]*)-- include: (?:(?P<file>_\w+\.sql)|(?P<module>filters|response)\.(?P<part>\w+))[ \t]*$", re.M
)


def _sql_file(filename: str) -> str:
    return (files("archivist.queries") / "sql" / filename).read_text(encoding="utf-8")


def query_files() -> list[str]:
    """The names of the query files in sql/ (fragments, whose names start with _, left out)."""
    folder = files("archivist.queries") / "sql"
    return sorted(
        entry.name.removesuffix(".sql")
        for entry in folder.iterdir()
        if entry.name.endswith(".sql") and not entry.name.startswith("_")
    )


_MADE = {"filters": filters.sql_part, "response": response.sql_part}  # the parts made from declarations


def _expand(sql: str) -> str:
    def include(match: re.Match[str]) -> str:
        made = _MADE[match["module"]](match["part"]) if match["part"] else _sql_file(match["file"])
        fragment = _expand(made).rstrip("\n")
        return "\n".join(match["indent"] + line if line else line for line in fragment.split("\n"))

    return _INCLUDE_RE.sub(include, sql)


@functools.cache
def load_sql(name: str) -> str:
    """The SQL of canned query ``name``, as it runs: its file, with its fragments included."""
    return _expand(_sql_file(f"{name}.sql")).rstrip("\n")


@functools.cache
def canned_queries() -> dict[str, dict[str, Any]]:
    """Every canned query by name, in Datasette's form (title, description, params, hide_sql, sql)."""
    return {
        name: {
            "title": query.title,
            "description": query.describe(),
            "params": query.sql_params,
            "hide_sql": query.hide_sql,
            "sql": load_sql(name),
        }
        for name, query in QUERIES.items()
    }


def sql_for(name: str) -> str:
    try:
        return str(canned_queries()[name]["sql"])
    except KeyError:
        raise ArchivistError(
            "INVALID_PARAMETER",
            f"Unknown query '{name}'",
            "Canned queries: " + ", ".join(sorted(canned_queries())) + ".",
            "Use one of the names above.",
        ) from None
