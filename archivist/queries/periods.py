"""A search's time filter: its bounds as Unix times, and the date words that cover them."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from archivist import dates


def time_bound(value: Any, end: Any = 0) -> float | None:
    """A start_date / end_date as a unix time (dates.parse_bound: one UTC rule for every form)."""
    bound = dates.parse_bound(str(value or ""), end=bool(end))
    return None if bound is None else bound.timestamp()


def _utc(timestamp: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(timestamp, dt.UTC)


def date_words(start: float | None, end: float | None, first: float | None, last: float | None) -> str | None:
    """``{"words": [...], "edge_days": [...]}`` for a time filter (dates.period_words), or NULL without one.

    ``first`` and ``last`` are the archive's oldest and newest document times: an
    open bound stops at the years around them, so the words stay few.
    """
    if start is None and end is None:
        return None
    if first is None or last is None:
        return json.dumps({"words": [], "edge_days": []})
    # a document's day is its author's, up to a day either side of its UTC time
    low = dt.datetime(_utc(first - 86400).year, 1, 1, tzinfo=dt.UTC)
    high = dt.datetime(_utc(last + 86400).year, 12, 31, 23, 59, 59, tzinfo=dt.UTC)
    words, edge_days = dates.period_words(
        low if start is None else max(low, _utc(start)), high if end is None else min(high, _utc(end))
    )
    return json.dumps({"words": words, "edge_days": edge_days})
