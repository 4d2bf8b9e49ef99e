"""The charts' model (archivist/web/charts.py): continuous time axes, bars as long as their share,
unknown values kept unknown, sparse labels; and the pages that draw them from a real archive."""

from __future__ import annotations

import datetime as dt
import itertools
import math
import re

import pytest
from conftest import started_datasette
from test_activity import logs_archive, run  # noqa: F401  (the fixture)
from test_conversation_page import page_of

from archivist.web import charts
from archivist.workspace import archive_path


def test_a_day_axis_has_every_day_between_the_first_and_the_last():
    assert charts.axis(["2025-07-23", "2025-07-20", "2025-08-02", "2025-07-23"], "day") == [
        (dt.date(2025, 7, 20) + dt.timedelta(days=n)).isoformat() for n in range(14)
    ]


def test_a_week_axis_has_every_monday_and_a_month_axis_every_month_across_years():
    assert charts.axis(["2025-12-29", "2025-12-01"], "week") == [
        "2025-12-01",
        "2025-12-08",
        "2025-12-15",
        "2025-12-22",
        "2025-12-29",
    ]
    assert charts.axis(["2026-02", "2025-11"], "month") == ["2025-11", "2025-12", "2026-01", "2026-02"]


@pytest.mark.parametrize("keys", [[], [None, 3, "", "someday", "2025-13-01", "2025-11-31"], ["2025-11"]])
def test_keys_that_are_not_periods_of_the_unit_make_no_axis(keys):
    assert charts.axis(keys, "day") == []


def test_an_axis_too_long_to_draw_keeps_the_periods_given():
    assert charts.axis(["1900-01-01", "2025-11-10"], "day") == ["1900-01-01", "2025-11-10"]


def test_a_series_fills_the_gaps_with_bars_of_nought_and_keeps_unknown_unknown():
    rows = [
        {"key": "2025-07-23", "cost": 2.0, "href": "/a"},
        {"key": "2025-07-25", "cost": None},
        {"key": "2025-07-26", "cost": 0.5},
    ]
    bars = charts.series(rows, "cost", "day", lambda period: period[5:], charts.money_text)
    assert [bar["key"] for bar in bars] == ["2025-07-23", "2025-07-24", "2025-07-25", "2025-07-26"]
    assert [bar["empty"] for bar in bars] == [False, True, False, False]
    assert [bar["unknown"] for bar in bars] == [False, False, True, False]
    assert [bar["value"] for bar in bars] == [2.0, 0, None, 0.5]
    assert [bar["height"] for bar in bars] == [100, 0, 0, 25]
    assert bars[2]["n"] == "unknown" and bars[2]["title"] == "2025-07-25: unknown"
    assert bars[0]["title"] == "2025-07-23: $2.0000" and bars[0]["href"] == "/a"
    assert "href" not in bars[1]


@pytest.mark.parametrize("hostile", [None, "12", True, -3, math.nan, math.inf, [1], {"a": 1}])
def test_a_value_that_is_no_count_is_unknown_never_nought(hostile):
    bars = charts.categories([{"key": "a", "v": hostile}, {"key": "b", "v": 4}], "v", lambda row: row["key"])
    assert bars[0]["unknown"] and bars[0]["n"] == "unknown" and bars[0]["value"] is None
    assert bars[1]["width"] == 100 and not bars[1]["unknown"]


def test_categorical_bars_are_as_long_as_their_share_and_equal_values_equal_bars():
    rows = [{"key": name, "sessions": n} for name, n in (("a", 8), ("a-much-longer-label", 2), ("b", 2), ("c", 0))]
    bars = charts.categories(rows, "sessions", lambda row: row["key"])
    assert [bar["width"] for bar in bars] == [100, 25, 25, 0]
    assert [bar["title"] for bar in bars] == ["a: 8", "a-much-longer-label: 2", "b: 2", "c: 0"]


@pytest.mark.parametrize(("count", "step"), [(1, 1), (8, 1), (9, 2), (30, 4), (31, 4), (365, 46)])
def test_labels_are_thinned_to_at_most_eight(count, step):
    assert charts.label_step(count) == step
    start = dt.date(2025, 1, 1)
    rows = [{"key": (start + dt.timedelta(days=n)).isoformat(), "n": 1} for n in range(count)]
    bars = charts.series(rows, "n", "day", lambda period: period)
    labelled = [index for index, bar in enumerate(bars) if bar["label"]]
    assert len(labelled) <= charts.MOST_LABELS
    assert all(later - earlier == step for earlier, later in itertools.pairwise(labelled))
    assert labelled[-1] + step <= count  # the last label has the room of a step of bars


async def test_the_activity_page_draws_its_charts_from_the_archive(logs_archive):  # noqa: F811
    datasette = await started_datasette(archive_path(logs_archive))
    page = await page_of(datasette, "/activity?start_date=2025-01-01&end_date=2025-12-31")
    projects = re.search(r'data-chart="project">(.*?)</figure>', page, re.S)
    assert projects
    drawn = re.findall(r'title="([^"]+): (\d+)" data-key="[^"]+" data-value="(\d+)"><span class="label" title="\1">\1</span>'
                       r'<span class="track"><span class="fill" style="width: ([\d.]+)%"', projects[1])  # fmt: skip
    rows = run(logs_archive, "project_activity", start_date="2025-01-01", end_date="2025-12-31")
    highest = max(row["sessions"] for row in rows)
    assert len(drawn) == min(len(rows), 10) >= 2
    for _label, told, value, width in drawn:
        assert told == value and float(width) == pytest.approx(100 * int(value) / highest, abs=0.001)
    periods = run(logs_archive, "activity_periods", group_by="day", start_date="2025-01-01", end_date="2025-12-31")
    unpriced = [period["key"] for period in periods if period["cost"] is None]
    cost = re.search(r'data-chart="cost">(.*?)</figure>', page, re.S)
    assert unpriced and cost
    for day in unpriced:  # a day whose cost no price tells is unknown, not nought
        assert f'data-key="{day}" class="bar unknown" href="' in cost[1]
        assert f'title="{day}: unknown" data-period="{day}"><span class="n">unknown</span>' in cost[1]


def every_day(first: str, last: str) -> list[str]:
    start, end = dt.date.fromisoformat(first), dt.date.fromisoformat(last)
    return [(start + dt.timedelta(days=n)).isoformat() for n in range((end - start).days + 1)]


async def test_the_usage_and_project_pages_draw_every_day_and_tell_unknown_cost(logs_archive):  # noqa: F811
    datasette = await started_datasette(archive_path(logs_archive))
    days = run(logs_archive, "usage", group_by="day", start_date="2025-01-01", end_date="2025-12-31")
    page = await page_of(datasette, "/usage?start_date=2025-01-01&end_date=2025-12-31")
    chart = re.search(r'data-chart="tokens">(.*?)</figure>', page, re.S)
    drawn = re.findall(r'data-period="([^"]+)"', chart[1]) if chart else []
    assert drawn == every_day(days[0]["key"], days[-1]["key"]) and len(drawn) > len(days)
    for day in days:
        cost = "unknown" if day["cost"] is None else f"${day['cost']:,.4f}"
        assert f'title="{day["key"]}: {day["total_tokens"]:,} tokens, cost {cost}"' in chart[1]
    blocks = run(logs_archive, "usage", group_by="block", start_date="2025-01-01", end_date="2025-12-31")
    page = await page_of(datasette, "/usage?group_by=block&start_date=2025-01-01&end_date=2025-12-31")
    chart = re.search(r'data-chart="tokens">(.*?)</figure>', page, re.S)
    assert chart and re.findall(r'data-period="([^"]+)"', chart[1]) == [block["key"] for block in blocks]
    labels = [label for label in re.findall(r'class="label">([^<]*)<', chart[1]) if label]
    assert 1 <= len(labels) <= charts.MOST_LABELS
    assert labels == [block["key"][5:16] for block in blocks][:: charts.label_step(len(blocks))][: len(labels)]
    project = await page_of(datasette, "/project/home/ana/projects/hooks")
    ran = run(logs_archive, "usage", group_by="day", projects="/home/ana/projects/hooks", start_date="1970-01-01")
    chart = re.search(r'data-chart="tokens">(.*?)</figure>', project, re.S)
    assert chart and re.findall(r'data-period="([^"]+)"', chart[1]) == every_day(ran[0]["key"], ran[-1]["key"])


async def test_the_search_timeline_has_every_day_and_links_those_with_matches(sample_datasette):
    page = await page_of(
        sample_datasette, "/search?query=authentication&mode=keyword&start_date=2025-11&end_date=2025-11"
    )
    chart = re.search(r'class="archivist-timeline[^"]*" aria-label="Matches per day">(.*?)</figure>', page, re.S)
    assert chart
    bars = re.findall(r'<(a|span) data-key="([^"]+)" class="bar( empty)?"( href="[^"]+")?', chart[1])
    assert [key for _, key, _, _ in bars] == every_day(bars[0][1], bars[-1][1])
    assert any(empty for _, _, empty, _ in bars)  # a day without matches is a bar of nought
    assert all((tag == "a") == bool(href) == (not empty) for tag, _, empty, href in bars)
