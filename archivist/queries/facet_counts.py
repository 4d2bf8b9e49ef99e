"""The aggregate that counts a search's facets in one pass (``archivist_facets``)."""

from __future__ import annotations

import json
from typing import Any

from archivist.queries import filters

FACETS = tuple(facet.name for facet in filters.FACETS)  # in the order of archivist_facets' arguments
LIST_FACETS = frozenset(facet.name for facet in filters.FACETS if facet.many)  # JSON arrays: each value counts
ALL_VALUES = frozenset(facet.name for facet in filters.FACETS if facet.every_value)  # others: the first 50
FACET_VALUES = 50
PERIODS = frozenset(facet.name for facet in filters.PERIODS)  # newest first; the others: most first, then by value


def _sql_order(value: Any) -> tuple[int, Any]:
    """SQLite's order of values: numbers before text."""
    return (1, value) if isinstance(value, str) else (0, value)


class FacetCounts:
    """``archivist_facets(...)``, one argument per facet (``filters.FACETS``): an aggregate of
    the documents of a search, answering each facet's counts as one JSON object, every facet
    named: ``{"kind": {"note": 12, ...}, "type": {...}, ...}``.

    Each facet's values come most first (months and days: newest first), then by value; 50
    at most, but for the facets that list every value. NULLs are not counted; a list facet's
    value is a JSON array, each of whose values counts.
    """

    def __init__(self) -> None:
        self.counts: dict[str, dict[Any, int]] = {facet: {} for facet in FACETS}

    def step(self, *values: Any) -> None:
        for facet, value in zip(FACETS, values, strict=False):
            if value is None:
                continue
            counts = self.counts[facet]
            if facet not in LIST_FACETS:
                counts[value] = counts.get(value, 0) + 1
                continue
            if value == "[]":
                continue
            try:
                found = json.loads(value)
            except ValueError:  # not JSON: the text is the one value
                found = [value]
            for item in found if isinstance(found, list) else [found]:
                if item is None:
                    continue
                if isinstance(item, bool):  # json_each's 1 and 0
                    item = int(item)
                elif isinstance(item, (list, dict)):
                    item = json.dumps(item, separators=(",", ":"))
                counts[item] = counts.get(item, 0) + 1

    def finalize(self) -> str:
        parts = []
        for facet in FACETS:
            counts = self.counts[facet]
            if facet in PERIODS:
                ordered = sorted(counts.items(), key=lambda item: _sql_order(item[0]), reverse=True)
            else:
                ordered = sorted(counts.items(), key=lambda item: (-item[1], _sql_order(item[0])))
            if facet not in ALL_VALUES:
                ordered = ordered[:FACET_VALUES]
            values = ",".join(f"{json.dumps(str(value), ensure_ascii=False)}:{n}" for value, n in ordered)
            parts.append(f'"{facet}":{{{values}}}')
        return "{" + ",".join(parts) + "}"
