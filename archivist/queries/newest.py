"""Where an archive's newest data is, and the range a view of activity opens on: the 30 days to the
newest day with a message (as the activity queries' ``_activity_range.sql`` has it), said in words,
and what an empty answer says of where the data is and how to reach it."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path
from typing import Any

from archivist import dates

DAYS = 30
NEWEST_SQL = "select substr(max(hour), 1, 10) from message_hours"


def newest_day(db_path: Path | str) -> str | None:
    """The newest day (UTC, YYYY-MM-DD) with a message in the archive; none in an empty one."""
    try:
        conn = sqlite3.connect(Path(db_path).resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        row = conn.execute(NEWEST_SQL).fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return row[0] if row and isinstance(row[0], str) else None


def opening_range(newest: str | None, given: dict[str, Any] | None = None) -> dict[str, str]:
    """The range a view opens on: the dates given, an end not given the newest day (else today), a
    start not given the day 30 days before the end's; a bound that is not a date is left as given."""
    given = given or {}
    end = str(given.get("end_date") or "").strip() or newest or dt.datetime.now(dt.UTC).date().isoformat()
    start = str(given.get("start_date") or "").strip()
    if not start:
        try:
            bound = dates.parse_bound(end, end=True)
        except ValueError:
            return {"end_date": end}
        if bound is not None:
            start = (bound.date() - dt.timedelta(days=DAYS)).isoformat()
    return {"start_date": start, "end_date": end}


def range_told(newest: str | None, given: dict[str, Any] | None = None) -> dict[str, Any]:
    """The range an answer covers: start_date, end_date, whether it is the default one (no date was
    given), the newest day with data, and a sentence that says so."""
    given = given or {}
    shown = opening_range(newest, given)
    default = not any(str(given.get(name) or "").strip() for name in ("start_date", "end_date"))
    return {**shown, "default": default, "newest": newest, "note": range_note(shown, newest, default)}


def range_note(shown: dict[str, str], newest: str | None, default: bool) -> str:
    """The range in words: "the 30 days to 2025-11-24, the newest session"."""
    if default and newest:
        return f"the {DAYS} days to {newest}, the newest session"
    if default:
        return f"the {DAYS} days to today (the archive holds no session yet)"
    return f"{shown.get('start_date') or 'the start'} to {shown.get('end_date') or 'today'}"


def empty_hint(newest: str | None, start_name: str = "start_date=") -> str:
    """What an empty answer says: where the newest data is, and the start that reaches it."""
    if newest is None:
        return "Nothing in this range: the archive holds no session yet (index agent logs with archivist index)"
    start = (dt.date.fromisoformat(newest) - dt.timedelta(days=DAYS)).isoformat()
    return f"Nothing in this range; the newest session is from {newest}: try {start_name}{start}"
