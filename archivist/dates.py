"""Dates: where a document's date comes from, and how precise it is.

Every date is stored as a calendar date plus a precision (``month``, ``day`` or
``second``). Calendar days are the author's: ``2025-06-24 17:11:14 PDT`` is a
2025-06-24 document (its date, day, month and filter words), while its instant in
UTC (``created_at``, ``timestamp``) orders documents and answers bounds given with
a time. Times without a zone, and unix times, are taken as UTC.

A value shaped like a date that is none (``2026-02-30``, month 13, year 0, a unix
time in the year 5000) dates nothing. The functions that read dates note such a
value as an ``InvalidDate`` in the list they are given, for the indexer to report.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
import zoneinfo
from dataclasses import dataclass
from typing import Any

from archivist import vocabulary

MONTH = "month"
DAY = "day"
SECOND = "second"
# The archive keys documents by unix time from 1970 (migrations.TIME_KEY); later than 2200 is a typo.
MIN_YEAR, MAX_YEAR = 1970, 2200
_MAX_UNIX_TIME = dt.datetime(MAX_YEAR, 12, 31, 23, 59, 59, tzinfo=dt.UTC).timestamp()

_MONTH_NAMES = {
    name.lower(): number
    for number in range(1, 13)
    for name in (calendar.month_name[number], calendar.month_abbr[number])
}
_MONTH_NAMES["sept"] = 9

DAY_FOLDER_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
MONTH_FOLDER_RE = re.compile(r"^(\d{4})-(\d{2})$")
_YEAR_RE = re.compile(r"^(\d{4})$")
_TWO_DIGITS_RE = re.compile(r"^(\d{1,2})$")
_NUMBER_RE = re.compile(r"\d+(\.\d+)?")
# A date as text: YYYY-MM-DD, then maybe a time, then maybe its zone (Z, +02:00, -0700, PDT, Europe/Paris).
_DATE_TEXT_RE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?[ \t]*(.*))?")
_OFFSET_RE = re.compile(r"(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?")  # +02:00, -0700, -07, +2

# Full dates inside a file name, most specific first. A time part may follow.
# The second of each pair says whether a match that is no date is reported: a
# separated ``2025-13-40`` is a date written wrong, ``12345678`` is just a number.
_NAME_PATTERNS = [
    # 2025-06-24_10-17-43_slug, 2026-01-23_17-24-15Z-slug, 2025-06-24T10:17:43
    (re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})[_T ](\d{2})[-:](\d{2})[-:](\d{2})(Z?)(?!\d)"), True),
    # 20251201_172952
    (re.compile(r"(?<!\d)(\d{4})(\d{2})(\d{2})[_-](\d{2})(\d{2})(\d{2})()(?!\d)"), False),
    (re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)"), True),
    (re.compile(r"(?<!\d)(\d{4})_(\d{2})_(\d{2})(?!\d)"), True),
    (re.compile(r"(?<!\d)(\d{4})(\d{2})(\d{2})(?!\d)"), False),
]
_NAME_MONTH_RE = re.compile(r"(?<!\d)(\d{4})-(\d{2})(?!-?\d)")  # CG-2026-08
# Names that only make sense with a year or month from the folders around them.
# CG-02-28, CG-03-20v21 (a two-day meeting), CG-04-02-Subtyping
_PREFIX_MONTH_DAY_RE = re.compile(r"^[A-Za-z]+[-_](\d{1,2})[-_](\d{1,2})(?:v\d{1,2})?(?:[-_][A-Za-z].*)?$")
_PREFIX_MONTH_RE = re.compile(r"^[A-Za-z]+[-_](\d{1,2})$")  # CG-07
_MONTHNAME_DAY_RE = re.compile(r"^([A-Za-z]+)[-_ ]?(\d{1,2})$")  # jan-31, september-23


@dataclass(frozen=True)
class InvalidDate:
    """A value written as a date that is none: it dates nothing, and is reported."""

    where: str  # "front matter 'date'", "the folder name", "the file name", "'created_at'"
    value: str
    why: str

    def __str__(self) -> str:
        shown = self.value if len(self.value) <= 60 else self.value[:59] + "…"
        return f"invalid date in {self.where}: {shown!r} ({self.why})"


# Where the functions below note invalid dates (None: nowhere).
Invalid = list[InvalidDate] | None


@dataclass(frozen=True)
class DocDate:
    """A date with its precision.

    ``value`` is the instant in UTC (a period's first instant). ``local`` is the
    same instant on its author's clock, in their zone, when that zone is not UTC:
    the calendar day, month and date are read from it.
    """

    value: dt.datetime
    precision: str
    local: dt.datetime | None = None

    @property
    def written(self) -> dt.datetime:
        """The date and time as the author wrote them."""
        return self.local or self.value

    @property
    def month(self) -> str:
        return self.written.strftime("%Y-%m")

    @property
    def day(self) -> str | None:
        return None if self.precision == MONTH else self.written.strftime("%Y-%m-%d")

    @property
    def date(self) -> str:
        return self.month if self.precision == MONTH else self.written.strftime("%Y-%m-%d")

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


def _note(invalid: Invalid, where: str, value: Any, why: str) -> None:
    if invalid is not None:
        invalid.append(InvalidDate(where, str(value), why))


def _checked(year: int, month: int, day: int = 1, *rest: int, precision: str) -> DocDate:
    """The date (UTC) these numbers make, or ValueError saying what is wrong with them."""
    if not MIN_YEAR <= year <= MAX_YEAR:
        raise ValueError(f"year {year} is outside {MIN_YEAR}..{MAX_YEAR}")
    hour, minute, second = (*rest, 0, 0, 0)[:3]
    return DocDate(dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.UTC), precision)


def _make(*numbers: int, precision: str) -> DocDate | None:
    try:
        return _checked(*numbers, precision=precision)
    except ValueError:
        return None


def _noted(text: str, where: str, invalid: Invalid, *numbers: int, precision: str) -> DocDate | None:
    """``_make``, noting in ``invalid`` why ``text`` (written as a date) is none."""
    try:
        return _checked(*numbers, precision=precision)
    except ValueError as error:
        _note(invalid, where, text, str(error))
        return None


def from_value(value: Any, where: str = "a value", invalid: Invalid = None) -> DocDate | None:
    """A date from front matter or a record field: date, datetime, ISO text or unix time.

    ``where`` names the field for ``invalid``, where any other value that is not
    empty is noted.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float, dt.date)):
        _note(invalid, where, value, "not a date")
        return None
    if isinstance(value, dt.datetime):
        return _from_datetime(value, where, invalid)
    if isinstance(value, dt.date):
        return _noted(value.isoformat(), where, invalid, value.year, value.month, value.day, precision=DAY)
    if isinstance(value, (int, float)):
        return _from_unix_time(value, where, invalid)
    text = value.strip()
    if _NUMBER_RE.fullmatch(text):
        return _from_unix_time(float(text), where, invalid)
    if match := MONTH_FOLDER_RE.match(text):
        return _noted(text, where, invalid, int(match[1]), int(match[2]), precision=MONTH)
    if match := _DATE_TEXT_RE.fullmatch(text):
        return _from_text(match, where, invalid)
    try:
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))  # other ISO 8601 forms
    except ValueError:
        _note(invalid, where, text, "not a date")
        return None
    return _from_datetime(parsed, where, invalid)


def _from_unix_time(number: int | float, where: str, invalid: Invalid) -> DocDate | None:
    """Seconds (or, as often, milliseconds) since 1970: an instant recorded in UTC."""
    try:
        seconds = float(number)
    except OverflowError:
        seconds = float("inf")
    if seconds > 1e11:  # the year 5138 in seconds: these are milliseconds
        seconds /= 1000
    if not 0 <= seconds <= _MAX_UNIX_TIME:  # NaN fails too
        _note(invalid, where, number, f"a unix time outside {MIN_YEAR}..{MAX_YEAR}")
        return None
    return DocDate(dt.datetime.fromtimestamp(int(seconds), dt.UTC), SECOND)


def _from_datetime(value: dt.datetime, where: str, invalid: Invalid) -> DocDate | None:
    """A date and time; one written in a zone other than UTC keeps it (``local``) for its day."""
    if not MIN_YEAR <= value.year <= MAX_YEAR:
        _note(invalid, where, value.isoformat(), f"year {value.year} is outside {MIN_YEAR}..{MAX_YEAR}")
        return None
    value = value.replace(microsecond=0)
    if value.utcoffset() in (None, dt.timedelta(0)):
        return DocDate(value.replace(tzinfo=dt.UTC), SECOND)
    instant = value.astimezone(dt.UTC)
    if not 0 <= instant.timestamp() <= _MAX_UNIX_TIME:
        _note(invalid, where, value.isoformat(), f"outside {MIN_YEAR}..{MAX_YEAR} in UTC")
        return None
    return DocDate(instant, SECOND, local=value)


def _from_text(match: re.Match[str], where: str, invalid: Invalid) -> DocDate | None:
    """``YYYY-MM-DD``, maybe with a time, maybe with the zone it was written in."""
    numbers = [int(part) for part in match.groups()[:6] if part is not None]
    precision = DAY if len(numbers) == 3 else SECOND
    found = _noted(match[0], where, invalid, *numbers, precision=precision)
    if found is None or precision == DAY:
        return found
    try:
        zone = _zone(match[7])
    except ValueError as error:
        _note(invalid, where, match[0], str(error))
        return None
    return _from_datetime(found.value.replace(tzinfo=zone), where, invalid)


# The zone abbreviations most often written, in minutes east of UTC, as dateparser reads
# them (a test checks each against it): importing dateparser costs a third of a second,
# more than indexing a few hundred notes. Ambiguous ones (IST, BST) are left to it.
COMMON_ZONES = {
    "UTC": 0, "GMT": 0, "WET": 0, "WEST": 60, "CET": 60, "CEST": 120, "EET": 120, "EEST": 180,
    "HST": -600, "AKST": -540, "AKDT": -480, "PST": -480, "PDT": -420, "MST": -420, "MDT": -360,
    "CST": -360, "CDT": -300, "EST": -300, "EDT": -240,
    "SGT": 480, "HKT": 480, "AWST": 480, "JST": 540, "KST": 540, "ACST": 570, "ACDT": 630,
    "AEST": 600, "AEDT": 660, "NZST": 720, "NZDT": 780,
}  # fmt: skip


def _zone(name: str) -> dt.tzinfo:
    """The zone of a written time: none or ``Z`` (UTC), an offset, an abbreviation or an IANA name."""
    name = name.strip()
    if name in ("", "Z", "z"):
        return dt.UTC
    if match := _OFFSET_RE.fullmatch(name):
        offset = dt.timedelta(hours=int(match[2]), minutes=int(match[3] or 0))
        if offset >= dt.timedelta(hours=24) or int(match[3] or 0) >= 60:
            raise ValueError(f"time zone offset {name} is out of range")
        return dt.timezone(-offset if match[1] == "-" else offset)
    if "/" in name:
        try:
            return zoneinfo.ZoneInfo(name)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {name!r}") from None
    if name in COMMON_ZONES:
        return dt.timezone(dt.timedelta(minutes=COMMON_ZONES[name]), name)
    from dateparser.timezone_parser import pop_tz_offset_from_string  # slow to import: only for rarer names

    rest, zone = pop_tz_offset_from_string(f" {name}")
    if zone is None or rest.strip():
        raise ValueError(f"unknown time zone {name!r}")
    return dt.timezone(zone.utcoffset(None), name)


def from_folders(folders: list[str], invalid: Invalid = None) -> DocDate | None:
    """The deepest date folder: ``YYYY-MM-DD``, ``YYYY-MM``, ``YYYY/MM`` or ``YYYY/MM/DD``.

    A ``YYYY-MM-DD`` or ``YYYY-MM`` folder that is no date is noted in ``invalid``.
    """
    found: DocDate | None = None
    where = "the folder name"
    for index, name in enumerate(folders):
        if match := DAY_FOLDER_RE.match(name):
            found = _noted(name, where, invalid, int(match[1]), int(match[2]), int(match[3]), precision=DAY) or found
        elif match := MONTH_FOLDER_RE.match(name):
            found = _noted(name, where, invalid, int(match[1]), int(match[2]), precision=MONTH) or found
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


def from_name(name: str, invalid: Invalid = None) -> DocDate | None:
    """A full date written in a file name (a time part may follow).

    When the name has no date but one written wrong (``2025-13-40``), that one is
    noted in ``invalid``.
    """
    wrong: list[InvalidDate] = []
    for pattern, reported in _NAME_PATTERNS:
        for match in pattern.finditer(name):
            numbers = [int(part) for part in match.groups()[:6] if part and part != "Z"]
            precision = SECOND if len(numbers) == 6 else DAY
            found = _noted(match[0], "the file name", wrong if reported else None, *numbers, precision=precision)
            if found:
                return found
    for match in _NAME_MONTH_RE.finditer(name):
        found = _make(int(match[1]), int(match[2]), precision=MONTH)
        if found:
            return found
    if invalid is not None:
        invalid.extend(wrong[:1])
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


def from_path(relative_path: str, invalid: Invalid = None) -> DocDate | None:
    """The date a path says: its date folders first, then its file name."""
    parts = relative_path.split("/")
    folders, name = parts[:-1], parts[-1]
    stem = name.rsplit(".", 1)[0] if "." in name else name
    folder_date = from_folders(folders, invalid)
    name_date = from_name(stem, invalid)
    if folder_date is None:
        return name_date or _refine(None, folders, stem)
    if name_date is not None and name_date.date.startswith(folder_date.date):
        return name_date  # same period, more precise
    return _refine(folder_date, folders, stem) or folder_date


FRONT_MATTER_DATE_KEYS = ("date", "created", "created_at")


def from_front_matter(meta: dict[str, Any], invalid: Invalid = None) -> DocDate | None:
    """The date of the first of ``FRONT_MATTER_DATE_KEYS`` that holds one."""
    for key in FRONT_MATTER_DATE_KEYS:
        if key in meta:
            found = from_value(meta[key], f"front matter {key!r}", invalid)
            if found:
                return found
    return None


# --- dates people type into a search ---------------------------------------

_ISO_LIKE_RE = re.compile(r"^\d{4}(-\d{1,2}){0,2}([T ].*)?$")


def _day_bound(day: dt.date, end: bool) -> dt.datetime:
    time = dt.time(23, 59, 59) if end else dt.time(0, 0, 0)
    return dt.datetime.combine(day, time, tzinfo=dt.UTC)


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

    now = now or dt.datetime.now(dt.UTC)
    parsed = dateparser.parse(
        text,
        languages=["en"],
        settings={
            "RELATIVE_BASE": now.astimezone(dt.UTC).replace(tzinfo=None),
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
    return parsed.replace(tzinfo=dt.UTC) if parsed.tzinfo is None else parsed.astimezone(dt.UTC)


_END_OF_DAY = dt.time(23, 59, 59)


def period_words(start: dt.datetime, end: dt.datetime) -> tuple[list[str], list[str]]:
    """The FTS filter words for the documents dated within ``start`` .. ``end`` (UTC).

    A document matches when its whole date lies inside: a day-precision date when
    its whole day does, a month-only date when its whole month does. Whole years,
    then whole months, then days are covered by the fewest ``y``/``m``/``d`` words.
    Days that the bounds cut (a bound with a time of day) are returned as
    ``edge_days`` too: their words are included, and the caller drops those
    documents on them whose exact time is outside the bounds. Documents are filed
    under their author's day, which is the day before or after their UTC instant's
    when their zone is far from UTC: so the day outside each cut day is an edge
    day too, where the documents kept are those whose instant is inside.
    """
    if start > end:
        return [], []
    one_day = dt.timedelta(days=1)
    edge_days = []
    first_day = start.date()
    if start.time() != dt.time(0, 0, 0):
        edge_days += [first_day, first_day - one_day]
        first_day += one_day
    last_day = end.date()
    if end.time() < _END_OF_DAY:
        edge_days += [day for day in (last_day, last_day + one_day) if day not in edge_days]
        last_day -= one_day
    words = []
    day = first_day
    while day <= last_day:
        year_end = dt.date(day.year, 12, 31)
        month_end = dt.date(day.year, day.month, calendar.monthrange(day.year, day.month)[1])
        if (day.month, day.day) == (1, 1) and year_end <= last_day:
            words.append(vocabulary.YEAR.word(f"{day.year:04d}"))
            day = year_end + dt.timedelta(days=1)
        elif day.day == 1 and month_end <= last_day:
            words.append(vocabulary.MONTH.word(day.isoformat()[:7]))
            day = month_end + dt.timedelta(days=1)
        else:
            words.append(vocabulary.DAY.word(day.isoformat()))
            day += one_day
    words.extend(vocabulary.DAY.word(day.isoformat()) for day in edge_days)
    return words, [day.isoformat() for day in edge_days]
