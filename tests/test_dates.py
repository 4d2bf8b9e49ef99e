import datetime as dt
import json

import pytest

from archivist import dates


@pytest.mark.parametrize(
    "path, expected_date, precision",
    [
        ("conversations/2025-11-10/001-x/conversation.md", "2025-11-10", "day"),
        ("conversations/2025-11/001-x/conversation.md", "2025-11", "month"),
        ("notes/meetings/2025/11/standup.md", "2025-11", "month"),
        ("notes/2025/11/03/standup.md", "2025-11-03", "day"),
        ("thoughts/shared/research/2025-06-24_10-17-43_thoughts-auto-pull.md", "2025-06-24", "second"),
        (".specstory/history/2026-01-23_17-24-15Z-look-at-the-gh.md", "2026-01-23", "second"),
        ("meetings/2023-01/jan-31.md", "2023-01-31", "day"),
        ("meetings/2025-09/september-23.md", "2025-09-23", "day"),
        ("meetings/2023-01/toc.md", "2023-01", "month"),
        ("main/2023/CG-02-28.md", "2023-02-28", "day"),
        ("stack/2021/sg-11-1.md", "2021-11-01", "day"),
        ("main/2017/CG-07.md", "2017-07", "month"),
        ("main/2026/WG-2026-07-22.md", "2026-07-22", "day"),
        ("reports/cmd/Zoom_Speech_SDK_日志分析报告_20251120_decode_response_v6.md", "2025-11-20", "day"),
        ("reports/cmd/proxy_报告_20251201_172952_v1.md", "2025-12-01", "second"),
        ("reports/cmd/2025-11-28-proxy-pac-review.md", "2025-11-28", "day"),
        ("reports/cmd/cluster_health_2025_11_15.md", "2025-11-15", "day"),
    ],
)
def test_dates_come_from_folders_and_file_names_with_their_precision(path, expected_date, precision):
    found = dates.from_path(path)
    assert found is not None
    assert (found.date, found.precision) == (expected_date, precision)


@pytest.mark.parametrize(
    "path",
    ["reports/cmd/baseline-notes.md", "notes/ideas.txt", "reports/cmd/build_12345678_v2.md", "x/2025-13-40.md"],
)
def test_paths_without_a_real_date_have_none(path):
    assert dates.from_path(path) is None


def test_a_day_folder_wins_over_a_conflicting_file_name_date():
    found = dates.from_path("conversations/2025-11-10/2024-01-01-notes.md")
    assert (found.date, found.precision) == ("2025-11-10", "day")


def test_a_file_name_time_refines_its_own_day_folder():
    found = dates.from_path("conversations/2025-11-10/2025-11-10_14-30-00_chat.md")
    assert (found.created_at, found.precision) == ("2025-11-10T14:30:00Z", "second")


@pytest.mark.parametrize(
    "value, created_at, precision",
    [
        ("2025-11-10T09:15:00Z", "2025-11-10T09:15:00Z", "second"),
        ("2025-11-10T11:15:00+02:00", "2025-11-10T09:15:00Z", "second"),
        (1763800000, "2025-11-22T08:26:40Z", "second"),
        (1763800000000, "2025-11-22T08:26:40Z", "second"),
        ("1763800000", "2025-11-22T08:26:40Z", "second"),
        (dt.date(2025, 11, 20), "2025-11-20T00:00:00Z", "day"),
        ("2025-11-20", "2025-11-20T00:00:00Z", "day"),
        ("2025-11", "2025-11-01T00:00:00Z", "month"),
    ],
)
def test_values_from_front_matter_and_records_are_utc(value, created_at, precision):
    found = dates.from_value(value)
    assert (found.created_at, found.precision) == (created_at, precision)


@pytest.mark.parametrize("value", [None, "", "soon", "2025-02-30", True])
def test_values_that_are_not_dates_give_none(value):
    assert dates.from_value(value) is None


def test_a_month_date_has_no_day():
    found = dates.from_value("2025-11")
    assert found.columns()["day"] is None
    assert found.columns()["month"] == "2025-11"


@pytest.mark.parametrize(
    "path, expected_date, precision",
    [
        ("main/2018/CG-03-20v21.md", "2018-03-20", "day"),
        ("main/2020/CG-04-02-Subtyping.md", "2020-04-02", "day"),
        ("main/2026/CG-2026-08.md", "2026-08", "month"),
        ("main/2017/WG-12-06-process.md", "2017-12-06", "day"),
    ],
)
def test_meeting_names_with_suffixes_keep_their_dates(path, expected_date, precision):
    found = dates.from_path(path)
    assert (found.date, found.precision) == (expected_date, precision)


def test_a_front_matter_date_with_a_zone_name_is_converted_to_utc():
    found = dates.from_value("2025-06-24 12:22:31 PDT")
    assert (found.created_at, found.precision) == ("2025-06-24T19:22:31Z", "second")


@pytest.mark.parametrize("name", sorted(dates.COMMON_ZONES))
def test_a_common_zone_name_reads_as_dateparser_reads_it(name):
    from dateparser.timezone_parser import pop_tz_offset_from_string

    rest, zone = pop_tz_offset_from_string(f" {name}")
    assert not rest.strip() and zone is not None
    assert dates._zone(name).utcoffset(None) == zone.utcoffset(None)


def test_a_zone_name_outside_the_common_ones_is_still_read():
    found = dates.from_value("2025-06-24 12:22:31 IST")  # dateparser's reading: Israel, UTC+2
    assert found.created_at == "2025-06-24T10:22:31Z"
    assert "IST" not in dates.COMMON_ZONES


NOW = dt.datetime(2026, 11, 22, 10, 30, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    "text, end, expected",
    [
        ("2024-01-15", False, "2024-01-15T00:00:00+00:00"),
        ("2024-01-15", True, "2024-01-15T23:59:59+00:00"),
        ("2024-01", False, "2024-01-01T00:00:00+00:00"),
        ("2024-02", True, "2024-02-29T23:59:59+00:00"),
        ("2024", True, "2024-12-31T23:59:59+00:00"),
        ("2024-01-15T10:00:00", False, "2024-01-15T10:00:00+00:00"),
        ("2024-01-15T10:00:00+02:00", False, "2024-01-15T08:00:00+00:00"),
        ("yesterday", False, "2026-11-21T00:00:00+00:00"),
        ("today", True, "2026-11-22T23:59:59+00:00"),
        ("last week", False, "2026-11-15T00:00:00+00:00"),
        ("3 days ago", False, "2026-11-19T00:00:00+00:00"),
        ("december 2025", False, "2025-12-01T00:00:00+00:00"),  # a named month: its first day
        ("february 2024", True, "2024-02-29T23:59:59+00:00"),  # and its last
    ],
)
def test_search_dates_resolve_to_utc_instants(text, end, expected):
    assert dates.parse_bound(text, end=end, now=NOW).isoformat() == expected


@pytest.mark.parametrize("text", ["garbage", "2025-13-01", "2025-13", "2025-02-30", "2025-1-1x"])
def test_search_dates_that_are_not_dates_raise(text):
    with pytest.raises(ValueError):
        dates.parse_bound(text, now=NOW)


def test_an_empty_search_date_is_no_bound():
    assert dates.parse_bound("  ") is None


def _utc(*parts: int) -> dt.datetime:
    return dt.datetime(*parts, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    "start, end, words, edge_days",
    [
        # whole years, then whole months, then days: the fewest words
        (_utc(2023, 1, 1), _utc(2024, 12, 31, 23, 59, 59), ["y2023", "y2024"], []),
        (
            _utc(2024, 5, 30),
            _utc(2024, 8, 1, 23, 59, 59),
            ["d20240530", "d20240531", "m202406", "m202407", "d20240801"],
            [],
        ),
        (_utc(2024, 12, 1), _utc(2026, 2, 28, 23, 59, 59), ["m202412", "y2025", "m202601", "m202602"], []),
        (_utc(2024, 6, 1), _utc(2024, 6, 1, 23, 59, 59), ["d20240601"], []),
        # a bound with a time of day cuts its day: the day's word stays, and the day is an edge,
        # and so is the day outside it (documents filed under their author's day, their instant inside)
        (
            _utc(2024, 6, 1, 12),
            _utc(2024, 6, 2, 23, 59, 59),
            ["d20240602", "d20240601", "d20240531"],
            ["2024-06-01", "2024-05-31"],
        ),
        (
            _utc(2024, 6, 1, 9),
            _utc(2024, 6, 1, 17),
            ["d20240601", "d20240531", "d20240602"],
            ["2024-06-01", "2024-05-31", "2024-06-02"],
        ),
        (
            _utc(2024, 6, 1),
            _utc(2024, 6, 3, 8),
            ["d20240601", "d20240602", "d20240603", "d20240604"],
            ["2024-06-03", "2024-06-04"],
        ),
        (_utc(2024, 6, 2), _utc(2024, 6, 1, 23, 59, 59), [], []),
    ],
)
def test_time_filters_become_the_fewest_period_words(start, end, words, edge_days):
    assert dates.period_words(start, end) == (words, edge_days)


def test_open_time_filters_stop_at_the_archive_years():
    from archivist.queries.periods import date_words

    first, last = _utc(2023, 3, 5).timestamp(), _utc(2025, 7, 1).timestamp()
    spec = json.loads(date_words(_utc(2024, 1, 1).timestamp(), None, first, last))
    assert spec == {"words": ["y2024", "y2025"], "edge_days": []}
    assert json.loads(date_words(None, _utc(2023, 12, 31, 23, 59, 59).timestamp(), first, last))["words"] == ["y2023"]
    assert date_words(None, None, first, last) is None  # no time filter at all
    assert json.loads(date_words(_utc(2024, 1, 1).timestamp(), None, None, None)) == {"words": [], "edge_days": []}


@pytest.mark.parametrize(
    "value, date, created_at",
    [
        # the author's calendar day; the instant in UTC beside it
        ("2025-06-24 17:11:14 PDT", "2025-06-24", "2025-06-25T00:11:14Z"),
        ("2025-07-03T08:15:45PDT", "2025-07-03", "2025-07-03T15:15:45Z"),
        ("2025-06-24T23:30:00-05:00", "2025-06-24", "2025-06-25T04:30:00Z"),  # past midnight in UTC
        ("2025-06-25T15:25:33-0700", "2025-06-25", "2025-06-25T22:25:33Z"),
        ("2025-06-25 01:30:00 +02:00", "2025-06-25", "2025-06-24T23:30:00Z"),  # before midnight in UTC
        ("2025-06-25T00:30:00+0530", "2025-06-25", "2025-06-24T19:00:00Z"),
        ("2025-06-25 00:30:00 Europe/Paris", "2025-06-25", "2025-06-24T22:30:00Z"),  # summer time
        ("2025-01-25 00:30:00 Europe/Paris", "2025-01-25", "2025-01-24T23:30:00Z"),
        # recorded in UTC: the UTC day
        ("2025-06-24T23:30:00Z", "2025-06-24", "2025-06-24T23:30:00Z"),
        (1750807800, "2025-06-24", "2025-06-24T23:30:00Z"),
        ("2025-06-24 23:30:00", "2025-06-24", "2025-06-24T23:30:00Z"),  # no zone: UTC
    ],
)
def test_a_date_keeps_the_calendar_day_its_author_wrote(value, date, created_at):
    found = dates.from_value(value)
    columns = found.columns()
    assert (columns["date"], columns["day"], columns["month"], columns["created_at"]) == (
        date,
        date,
        date[:7],
        created_at,
    )
    assert columns["timestamp"] == dt.datetime.fromisoformat(created_at.replace("Z", "+00:00")).timestamp()


@pytest.mark.parametrize(
    "value, why",
    [
        ("2026-02-30", "day is out of range for month"),
        ("2025-13-01", "month must be in 1..12"),
        ("2025-13", "month must be in 1..12"),
        ("0000-01-01", "year 0 is outside 1970..2200"),
        ("2025-06-24T25:00:00Z", "hour must be in 0..23"),
        ("2025-06-24 10:00:00 +25:00", "time zone offset +25:00 is out of range"),
        ("2025-06-24 10:00:00 XYZ", "unknown time zone 'XYZ'"),
        ("2025-06-24 10:00:00 Mars/Olympus", "unknown time zone 'Mars/Olympus'"),
        (99999999999999999999, "a unix time outside 1970..2200"),
        (10**400, "a unix time outside 1970..2200"),
        (float("nan"), "a unix time outside 1970..2200"),
        (-1, "a unix time outside 1970..2200"),
        ("99999999999999999999", "a unix time outside 1970..2200"),
        (dt.datetime(1969, 12, 31, 23, 0, tzinfo=dt.UTC), "year 1969 is outside 1970..2200"),
        ("soon", "not a date"),
        (True, "not a date"),
        ([2025, 1, 1], "not a date"),
    ],
)
def test_values_that_are_not_dates_are_noted_with_the_reason(value, why):
    invalid: list[dates.InvalidDate] = []
    assert dates.from_value(value, "'created_at'", invalid) is None
    assert [(bad.where, bad.why) for bad in invalid] == [("'created_at'", why)]
    assert str(invalid[0]).startswith("invalid date in 'created_at': '")


@pytest.mark.parametrize(
    "path, noted",
    [
        ("x/2025-13-40.md", "invalid date in the file name: '2025-13-40' (month must be in 1..12)"),
        (
            "reports/cmd/report_2025_02_30.md",
            "invalid date in the file name: '2025_02_30' (day is out of range for month)",
        ),
        ("notes/2025-02-30/x.md", "invalid date in the folder name: '2025-02-30' (day is out of range for month)"),
        ("conversations/2025-00/001-x.md", "invalid date in the folder name: '2025-00' (month must be in 1..12)"),
    ],
)
def test_paths_with_dates_written_wrong_are_noted(path, noted):
    invalid: list[dates.InvalidDate] = []
    assert dates.from_path(path, invalid) is None
    assert [str(bad) for bad in invalid] == [noted]


@pytest.mark.parametrize(
    "path", ["reports/cmd/build_12345678_v2.md", "notes/2025-06-24_25-17-43_late.md", "main/2017/CG-13-45.md"]
)
def test_numbers_that_only_look_like_dates_are_not_noted(path):
    invalid: list[dates.InvalidDate] = []
    dates.from_path(path, invalid)
    assert invalid == []


def test_a_front_matter_date_that_is_none_gives_way_to_the_next_key():
    invalid: list[dates.InvalidDate] = []
    found = dates.from_front_matter({"date": "2026-02-30", "created": "2026-02-28"}, invalid)
    assert found.date == "2026-02-28"
    assert [str(bad) for bad in invalid] == [
        "invalid date in front matter 'date': '2026-02-30' (day is out of range for month)"
    ]
