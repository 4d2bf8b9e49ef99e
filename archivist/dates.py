"""Dates: where a document's date comes from, and how precise it is.

Every date is stored as a calendar date plus a precision (``month``, ``day`` or
``second``). Dates without a zone are taken as UTC: the archive stores and
compares everything in UTC.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

MONTH = "month"
DAY = "day"
SECOND = "second"

_MONTH_NAMES = {
    name.lower(): number
    for number in range(1, 13)
    for name in (calendar.month_name[number], calendar.month_abbr[number])
}
_MONTH_NAMES["sept"] = 9

DAY_FOLDER_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
MONTH_FOLDER_RE = re.compile(r"^(\d{4})-(\d{2})$")
_ISO_PREFIX_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}")
_YEAR_RE = re.compile(r"^(\d{4})$")
_TWO_DIGITS_RE = re.compile(r"^(\d{1,2})$")

# Full dates inside a file name, most specific first. A time part may follow.
_NAME_PATTERNS = [
    # 2025-06-24_10-17-43_slug, 2026-01-23_17-24-15Z-slug, 2025-06-24T10:17:43
    re.compile(
        r"(?<!\d)(\d{4})-(\d{2})-(\d{2})[_T ](\d{2})[-:](\d{2})[-:](\d{2})(Z?)(?!\d)"
    ),
    # 20251201_172952
    re.compile(r"(?<!\d)(\d{4})(\d{2})(\d{2})[_-](\d{2})(\d{2})(\d{2})()(?!\d)"),
    re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)"),
    re.compile(r"(?<!\d)(\d{4})_(\d{2})_(\d{2})(?!\d)"),
    re.compile(r"(?<!\d)(\d{4})(\d{2})(\d{2})(?!\d)"),
]
_NAME_MONTH_RE = re.compile(r"(?<!\d)(\d{4})-(\d{2})(?!-?\d)")  # CG-2026-08
# Names that only make sense with a year or month from the folders around them.
# CG-02-28, CG-03-20v21 (a two-day meeting), CG-04-02-Subtyping
_PREFIX_MONTH_DAY_RE = re.compile(r"^[A-Za-z]+[-_](\d{1,2})[-_](\d{1,2})(?:v\d{1,2})?(?:[-_][A-Za-z].*)?$")
_PREFIX_MONTH_RE = re.compile(r"^[A-Za-z]+[-_](\d{1,2})$")  # CG-07
_MONTHNAME_DAY_RE = re.compile(r"^([A-Za-z]+)[-_ ]?(\d{1,2})$")  # jan-31, september-23


@dataclass(frozen=True)
class DocDate:
    """A date with its precision; ``value`` is a UTC datetime at the period start."""

    value: dt.datetime
    precision: str

    @property
    def month(self) -> str:
        return self.value.strftime("%Y-%m")

    @property
    def day(self) -> str | None:
        return None if self.precision == MONTH else self.value.strftime("%Y-%m-%d")

    @property
    def date(self) -> str:
        return self.month if self.precision == MONTH else self.value.strftime("%Y-%m-%d")

    @property
    def created_at(self) -> str:
        return self.value.strftime("%Y-%m-%dT%H:%M:%SZ")

    @property
    def timestamp(self) -> float:
        return self.value.timestamp()

    def columns(self) -> dict[str, Any]:
        return {
            "date": self.date,
            "date_precision": self.precision,
            "month": self.month,
            "day": self.day,
            "created_at": self.created_at,
            "timestamp": self.timestamp,
        }


NO_DATE_COLUMNS: dict[str, Any] = {
    "date": None,
    "date_precision": None,
    "month": None,
    "day": None,
    "created_at": None,
    "timestamp": None,
}


def _make(year: int, month: int, day: int = 1, *rest: int, precision: str) -> DocDate | None:
    if not 1970 <= year <= 2200:
        return None
    try:
        value = dt.datetime(year, month, day, *rest, tzinfo=dt.timezone.utc)
    except ValueError:
        return None
    return DocDate(value, precision)


def from_value(value: Any) -> DocDate | None:
    """A date from front matter or a record field: date, datetime, ISO text or unix time."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
        return DocDate(aware.astimezone(dt.timezone.utc).replace(microsecond=0), SECOND)
    if isinstance(value, dt.date):
        return _make(value.year, value.month, value.day, precision=DAY)
    if isinstance(value, (int, float)):
        seconds = value / 1000 if value > 1e11 else value  # milliseconds are common too
        try:
            return DocDate(dt.datetime.fromtimestamp(int(seconds), dt.timezone.utc), SECOND)
        except (OverflowError, OSError, ValueError):
            return None
    text = str(value).strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return from_value(float(text))
    if match := MONTH_FOLDER_RE.match(text):
        return _make(int(match[1]), int(match[2]), precision=MONTH)
    if match := DAY_FOLDER_RE.match(text):
        return _make(int(match[1]), int(match[2]), int(match[3]), precision=DAY)
    try:
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        parsed = _parse_with_zone_name(text)
    return from_value(parsed) if parsed else None


def _parse_with_zone_name(text: str) -> dt.datetime | None:
    """Front matter such as ``2025-06-24 12:22:31 PDT``: an ISO date with a zone name."""
    if not _ISO_PREFIX_RE.match(text):
        return None
    import dateparser  # slow to import: only for the rare dates that need it

    return dateparser.parse(
        text, languages=["en"], settings={"RETURN_AS_TIMEZONE_AWARE": True, "TO_TIMEZONE": "UTC", "DATE_ORDER": "YMD"}
    )


def from_folders(folders: list[str]) -> DocDate | None:
    """The deepest date folder: ``YYYY-MM-DD``, ``YYYY-MM``, ``YYYY/MM`` or ``YYYY/MM/DD``."""
    found: DocDate | None = None
    for index, name in enumerate(folders):
        if match := DAY_FOLDER_RE.match(name):
            found = _make(int(match[1]), int(match[2]), int(match[3]), precision=DAY) or found
        elif match := MONTH_FOLDER_RE.match(name):
            found = _make(int(match[1]), int(match[2]), precision=MONTH) or found
        elif _YEAR_RE.match(name) and index + 1 < len(folders):
            month = _TWO_DIGITS_RE.match(folders[index + 1])
            if not month:
                continue
            day = _TWO_DIGITS_RE.match(folders[index + 2]) if index + 2 < len(folders) else None
            if day:
                found = _make(int(name), int(month[1]), int(day[1]), precision=DAY) or found
            else:
                found = _make(int(name), int(month[1]), precision=MONTH) or found
    return found


def from_name(name: str) -> DocDate | None:
    """A full date written in a file name (a time part may follow)."""
    for pattern in _NAME_PATTERNS:
        for match in pattern.finditer(name):
            numbers = [int(part) for part in match.groups()[:6] if part and part != "Z"]
            precision = SECOND if len(numbers) == 6 else DAY
            found = _make(*numbers, precision=precision)
            if found:
                return found
    for match in _NAME_MONTH_RE.finditer(name):
        found = _make(int(match[1]), int(match[2]), precision=MONTH)
        if found:
            return found
    return None


def _year_context(folders: list[str]) -> int | None:
    for name in reversed(folders):
        if _YEAR_RE.match(name):
            return int(name)
    return None


def _refine(folder_date: DocDate | None, folders: list[str], stem: str) -> DocDate | None:
    """Day names that need their folder: ``2023-01/jan-31.md``, ``2023/CG-02-28.md``."""
    if folder_date is not None and folder_date.precision == MONTH:
        match = _MONTHNAME_DAY_RE.match(stem)
        if match and match[1].lower() in _MONTH_NAMES:
            month = _MONTH_NAMES[match[1].lower()]
            if month == folder_date.value.month:
                return _make(folder_date.value.year, month, int(match[2]), precision=DAY)
        return None
    if folder_date is None and (year := _year_context(folders)) is not None:
        if match := _PREFIX_MONTH_DAY_RE.match(stem):
            return _make(year, int(match[1]), int(match[2]), precision=DAY)
        if match := _PREFIX_MONTH_RE.match(stem):
            return _make(year, int(match[1]), precision=MONTH)
    return None


def from_path(relative_path: str) -> DocDate | None:
    """The date a path says: its date folders first, then its file name."""
    parts = relative_path.split("/")
    folders, name = parts[:-1], parts[-1]
    stem = name.rsplit(".", 1)[0] if "." in name else name
    folder_date = from_folders(folders)
    name_date = from_name(stem)
    if folder_date is None:
        return name_date or _refine(None, folders, stem)
    if name_date is not None and name_date.date.startswith(folder_date.date):
        return name_date  # same period, more precise
    return _refine(folder_date, folders, stem) or folder_date


def from_front_matter(meta: dict[str, Any]) -> DocDate | None:
    for key in ("date", "created", "created_at"):
        if key in meta:
            found = from_value(meta[key])
            if found:
                return found
    return None


# --- dates people type into a search ---------------------------------------

_ISO_LIKE_RE = re.compile(r"^\d{4}(-\d{1,2}){0,2}([T ].*)?$")


def _day_bound(day: dt.date, end: bool) -> dt.datetime:
    time = dt.time(23, 59, 59) if end else dt.time(0, 0, 0)
    return dt.datetime.combine(day, time, tzinfo=dt.timezone.utc)


def parse_bound(text: str, end: bool = False, now: dt.datetime | None = None) -> dt.datetime | None:
    """A start_date or end_date as a UTC instant; ValueError when it is not a date.

    The timezone rule: everything is UTC. ISO datetimes are exact (no zone means UTC);
    a date, a month (``YYYY-MM``) or a year stands for its first instant as a start
    and its last second as an end; natural language ("yesterday", "last week",
    "3 days ago") resolves relative to now in UTC, to the whole day it names.
    """
    text = (text or "").strip()
    if not text:
        return None
    if _ISO_LIKE_RE.match(text):
        return _parse_iso_bound(text, end)
    import dateparser  # slow to import: only for natural language

    now = now or dt.datetime.now(dt.timezone.utc)
    parsed = dateparser.parse(
        text,
        languages=["en"],
        settings={
            "RELATIVE_BASE": now.astimezone(dt.timezone.utc).replace(tzinfo=None),
            "TIMEZONE": "UTC",
            "TO_TIMEZONE": "UTC",
            "RETURN_AS_TIMEZONE_AWARE": True,
            "PREFER_DATES_FROM": "past",
            # "december 2025" starts on the 1st and ends on the 31st, not on today's day
            "PREFER_DAY_OF_MONTH": "last" if end else "first",
        },
    )
    if parsed is None:
        raise ValueError(f"not a date: {text!r}")
    return _day_bound(parsed.date(), end)


def _parse_iso_bound(text: str, end: bool) -> dt.datetime:
    if re.fullmatch(r"\d{4}", text):
        return _day_bound(dt.date(int(text), 12, 31) if end else dt.date(int(text), 1, 1), end)
    if match := re.fullmatch(r"(\d{4})-(\d{1,2})", text):
        year, month = int(match[1]), int(match[2])
        last = calendar.monthrange(year, month)[1] if 1 <= month <= 12 else 0
        return _day_bound(dt.date(year, month, last if end else 1), end)
    if re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", text):
        year, month, day = (int(part) for part in text.split("-"))
        return _day_bound(dt.date(year, month, day), end)
    parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return parsed.replace(tzinfo=dt.timezone.utc) if parsed.tzinfo is None else parsed.astimezone(dt.timezone.utc)


_END_OF_DAY = dt.time(23, 59, 59)


def period_words(start: dt.datetime, end: dt.datetime) -> tuple[list[str], list[str]]:
    """The FTS filter words for the documents dated within ``start`` .. ``end`` (UTC).

    A document matches when its whole date lies inside: a day-precision date when
    its whole day does, a month-only date when its whole month does. Whole years,
    then whole months, then days are covered by the fewest ``y``/``m``/``d`` words.
    Days that the bounds cut (a bound with a time of day) are returned as
    ``edge_days`` too: their words are included, and the caller drops those
    documents on them whose exact time is outside the bounds.
    """
    if start > end:
        return [], []
    edge_days = []
    first_day = start.date()
    if start.time() != dt.time(0, 0, 0):
        edge_days.append(first_day)
        first_day += dt.timedelta(days=1)
    last_day = end.date()
    if end.time() < _END_OF_DAY:
        if last_day not in edge_days:
            edge_days.append(last_day)
        last_day -= dt.timedelta(days=1)
    words = []
    day = first_day
    while day <= last_day:
        year_end = dt.date(day.year, 12, 31)
        month_end = dt.date(day.year, day.month, calendar.monthrange(day.year, day.month)[1])
        if (day.month, day.day) == (1, 1) and year_end <= last_day:
            words.append(f"y{day.year}")
            day = year_end + dt.timedelta(days=1)
        elif day.day == 1 and month_end <= last_day:
            words.append(f"m{day:%Y%m}")
            day = month_end + dt.timedelta(days=1)
        else:
            words.append(f"d{day:%Y%m%d}")
            day += dt.timedelta(days=1)
    words.extend(f"d{day:%Y%m%d}" for day in edge_days)
    return words, [day.isoformat() for day in edge_days]
