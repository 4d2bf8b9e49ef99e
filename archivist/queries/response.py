"""The unified search's response, declared once: each field, its JSON type and its value in each answer.

``search.sql`` builds its two answers from ``FIELDS`` (``-- include: response.brief`` and
``response.full``, made by ``catalog``); the MCP ``search`` tool's declared answer
(``mcp.outputs.SearchResponse``, in docs/mcp.md) and the ``output`` parameter's description name the same fields,
and ``tests/test_search_response.py`` fails on a difference. ``RESULT`` names what every result of
either answer carries, whatever its kind (seed 004's result model).
"""

from __future__ import annotations

from dataclasses import dataclass

# every result's fields, whatever its kind: its type (a record's entity type; else its kind) and its id
# where the source names one (a record's tracker id, a memory's), else its id in the archive
RESULT = ("entity_type", "entity_id", "title", "score", "rank")
ENTITY_TYPE = "coalesce(d.type, d.kind)"
ENTITY_ID = "coalesce(d.external_id, d.id)"


@dataclass(frozen=True)
class Field:
    """One field of the search's response: its name, its JSON type and the SQL of its value in each answer."""

    name: str
    type: str  # its JSON type, as a JSON schema names it ("object" or "null" for building)
    brief: str | None  # its value in the brief answer (null values are left out there); None: not in it
    full: str | None  # its value in the full answer; None: not in it


_TOTAL_PAGES = "(listed.total + plan.page_size - 1) / plan.page_size"
_HAS_MORE = "json(case when plan.page * plan.page_size < listed.total then 'true' else 'false' end)"

FIELDS = (
    Field("query", "string", "plan.query", "plan.query"),
    Field("mode", "string", "plan.mode", "plan.mode"),
    Field("total", "integer", "listed.total", "listed.total"),
    # the total split by how the results matched (brief: the counts that are nought left out)
    Field(
        "matched",
        "object",
        "case when listed.matched is not null then json(("
        "select json_group_object(key, value) from json_each(listed.matched) where value > 0)) end",
        "json(listed.matched)",
    ),
    Field("sort", "string", "nullif(plan.sort, 'relevance')", "plan.sort"),
    Field("page", "integer", "plan.page", "plan.page"),
    Field("page_size", "integer", "plan.page_size", "plan.page_size"),
    Field("total_pages", "integer", _TOTAL_PAGES, _TOTAL_PAGES),
    Field("has_more", "boolean", _HAS_MORE, _HAS_MORE),
    Field("results", "array", "json(listed.items)", "json(listed.items)"),
    Field("building", "object", "json(listed.building)", "json(listed.building)"),
    # (no documents: every facet, empty)
    Field(
        "facets",
        "object",
        None,
        "json(coalesce(listed.facets, json_object(\n  -- include: filters.no_facets\n)))",
    ),
    Field(
        "filters",
        "object",
        None,
        "json_object(\n"
        "  -- include: filters.echo\n"
        "  'match_all', json(case when plan.match_all then 'true' else 'false' end),\n"
        "  'start_date', strftime('%Y-%m-%dT%H:%M:%SZ', plan.start_at, 'unixepoch'),\n"
        "  'end_date', strftime('%Y-%m-%dT%H:%M:%SZ', plan.end_at, 'unixepoch'),\n"
        "  'match_mode', case plan.match_mode when 'raw' then 'raw' else 'simple' end,\n"
        "  'min_similarity', plan.min_similarity,\n"
        "  'document', nullif(trim(:document), '')\n"
        ")",
    ),
)


def names(answer: str) -> tuple[str, ...]:
    """The fields of the ``brief`` or the ``full`` answer, in order."""
    return tuple(field.name for field in FIELDS if getattr(field, answer) is not None)


def _pairs(answer: str) -> str:
    return ",\n".join(f"'{field.name}', {getattr(field, answer)}" for field in FIELDS if getattr(field, answer))


SQL_PARTS = {
    "brief": lambda: _pairs("brief"),  # the brief answer's json_object arguments
    "full": lambda: _pairs("full"),  # the full answer's
    "result_ids": lambda: f"'entity_type', {ENTITY_TYPE},\n'entity_id', {ENTITY_ID},",  # each result's
}


def sql_part(name: str) -> str:
    """The part of ``search.sql`` named ``name`` (``-- include: response.<name>``), made from ``FIELDS``."""
    return SQL_PARTS[name]()
