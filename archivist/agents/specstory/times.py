"""The times of a SpecStory transcript: those its headers, its heading and its file name write, and
the moment its session starts (see ``specstory`` for the rule and where each form comes from)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

# No pattern here lets a lazy group end anywhere in a run of spaces that a ``\s*`` after it could take.
TIME_RE = re.compile(r"(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:?\d{2})?$")
# What JavaScript's toLocaleString() wrote in the earliest headings: "3/1/2025, 6:53:44 PM",
# "01.03.2025, 18:53:44", "2025/3/1 18:53:44". Matched whole (``fullmatch``), never searched for.
LOCALE_RE = re.compile(
    r"(\d{1,4})([./-])(\d{1,2})\2(\d{1,4}),?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([AaPp])\.?\s?([Mm])\.?)?"
)
NAME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})_(\d{2})-(\d{2})(?:-(\d{2}))?(Z|[+-]\d{4})?(?:-(.+))?\.md$")
MAX_OFFSET = dt.timedelta(hours=14)  # the widest UTC offset of any time zone
QUARTER = dt.timedelta(minutes=15)
MIN_YEAR, MAX_YEAR = 1970, 2200  # a time outside these years is none a session has


@dataclass(frozen=True)
class Written:
    """A time as a transcript writes it: the clock's reading, and its offset from UTC where it says one."""

    local: dt.datetime  # naive: as written
    offset: dt.timedelta | None = None  # None: no zone written

    def utc(self) -> str | None:
        """As ISO 8601 UTC; a time without a zone is kept as written, marked as UTC. None for a
        moment outside the years 1970..2200 (or past the calendar's edge once in UTC)."""
        try:
            moment = self.local - self.offset if self.offset is not None else self.local
        except OverflowError:
            return None
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if MIN_YEAR <= moment.year <= MAX_YEAR else None


@dataclass(frozen=True)
class Named:
    """What a transcript's file name says: its time, and the title words after it."""

    time: Written | None
    title: str | None


def time_of(text: str) -> str | None:
    """A SpecStory time (``2025-10-01 23:30Z``, ``… 13:40:49Z``, ``… 13:40:49-0700``, naive) as ISO UTC."""
    found = written(text)
    return found.utc() if found is not None else None


def written(text: str, near: dt.date | None = None) -> Written | None:
    """The time at the end of ``text``: ISO (with or without a zone), else as a locale writes it (whose
    day and month are told apart by ``near``, the file name's day, where it can)."""
    text = text.strip()
    found = TIME_RE.search(text)
    if found:
        day, minutes, seconds, zone = found.groups()
        try:
            moment = dt.datetime.fromisoformat(f"{day}T{minutes}:{seconds or '00'}")
        except ValueError:
            return None
        return Written(moment, _offset(zone) if zone else None)
    return _locale(text, near)


def named(name: str) -> Named | None:
    """The time and title of a transcript's file name (``2025-12-02_09-41Z-title.md``,
    ``2026-07-02_15-28-22Z.md``, ``…_15-28-22-0700-title.md``, ``2025-05-24_16-36-title.md``), or None."""
    found = NAME_RE.match(name)
    if not found:
        return None
    day, hours, minutes, seconds, zone, title = found.groups()
    try:
        moment: dt.datetime | None = dt.datetime.fromisoformat(f"{day}T{hours}:{minutes}:{seconds or '00'}")
    except ValueError:
        moment = None
    offset = _offset(zone) if zone else None
    if zone and offset is None:  # "-1234" was no zone after all, but the title's first word
        title = f"{zone[1:]}-{title}" if title else zone[1:]
    return Named(Written(moment, offset) if moment else None, title)


def session_start(heading: Written | None, comment: Written | None, name: Written | None) -> str | None:
    """When a session whose messages carry no time began: its heading's (else its comment's) time where it
    has a zone; else that local time less the offset the file name's moment (in UTC, with or without its
    ``Z``) shows against it, to the second; else the name's moment where it has a zone; else the local
    time kept as written."""
    for time in (heading, comment):
        if time is not None and time.offset is not None:
            return time.utc()
    local = heading or comment
    if local is None or name is None:
        time = local or name
        return time.utc() if time is not None else None
    try:
        moment = name.local - (name.offset or dt.timedelta(0))
    except OverflowError:  # a moment at the calendar's edge: no offset to tell from it
        return local.utc()
    offset = local.local.replace(second=0) - moment.replace(second=0)
    if abs(offset) <= MAX_OFFSET and offset % QUARTER == dt.timedelta(0):
        return Written(local.local, offset).utc()
    return name.utc() if name.offset is not None else local.utc()


def _offset(zone: str) -> dt.timedelta | None:
    """``Z``, ``+0100``, ``-07:00`` as an offset from UTC; None for one no time zone has."""
    if zone == "Z":
        return dt.timedelta(0)
    digits = zone[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:])
    if hours > 14 or minutes % 15:
        return None
    offset = dt.timedelta(hours=hours, minutes=minutes)
    return offset if zone[0] == "+" else -offset


def _locale(text: str, near: dt.date | None) -> Written | None:
    found = LOCALE_RE.fullmatch(text)
    if not found:
        return None
    first, _separator, second, third, hours, minutes, seconds, half, _m = found.groups()
    hour = int(hours)
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half in "Pp" else 0)
    clock = dt.time(hour, int(minutes), int(seconds or 0)) if hour < 24 and int(minutes) < 60 else None
    if clock is None or (seconds and int(seconds) > 59):
        return None
    if len(first) == 4:  # year first: 2025/3/1
        days = [_date(int(first), int(second), int(third))]
    elif len(third) == 4:
        month_first = _date(int(third), int(first), int(second))
        day_first = _date(int(third), int(second), int(first))
        # An upper-case AM/PM is en-US (month first); the other locales put the day first.
        us = bool(half) and half.isupper()
        days = [month_first, day_first] if us else [day_first, month_first]
        if near in days:
            days = [near]
    else:
        return None
    day = next((day for day in days if day is not None), None)
    return Written(dt.datetime.combine(day, clock)) if day else None


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None
