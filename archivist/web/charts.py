"""The pages' charts, drawn as HTML and CSS without scripts: a time series on a continuous axis
(every day, ISO week or month between the first and the last period shown, an empty one a bar of
nought, labelled sparsely so that labels never overlap), and categorical bars (by project, agent,
model) whose length is their value's share of the chart's highest. A value not known (a cost
without a price, tokens a log does not record) stays unknown: never drawn as nought."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Iterable
from typing import Any

MOST_LABELS = 8  # labels under a time series: a label has the room of the bars up to the next
DENSE = 12  # a time series of more bars than this keeps its values to their titles
LONGEST_AXIS = 3700  # periods on one axis: ten years of days


def period_unit(key: str) -> str | None:
    """The unit a period's key is written in (``2025-11``: month, ``2025-11-10``: day), or none."""
    try:
        if len(key) == 7:
            dt.date.fromisoformat(key + "-01")
            return "month"
        if len(key) == 10:
            dt.date.fromisoformat(key)
            return "day"
    except (TypeError, ValueError):
        return None
    return None


def following(key: str, unit: str) -> str:
    """The period after ``key``: the next day, the next week's Monday, or the next month."""
    if unit == "month":
        year, month = int(key[:4]), int(key[5:7])
        return f"{year + month // 12:04d}-{month % 12 + 1:02d}"
    return (dt.date.fromisoformat(key) + dt.timedelta(days=7 if unit == "week" else 1)).isoformat()


def axis(keys: Iterable[str], unit: str) -> list[str]:
    """Every period from the first key to the last, in order; keys not of the unit are left out,
    and an axis longer than ``LONGEST_AXIS`` periods keeps only the periods given."""
    written = "month" if unit == "month" else "day"
    given = sorted({key for key in keys if isinstance(key, str) and period_unit(key) == written})
    if unit == "week":
        given = [key for key in given if dt.date.fromisoformat(key).weekday() == 0]
    if not given:
        return []
    periods, key = [given[0]], given[0]
    while key < given[-1]:
        key = following(key, unit)
        periods.append(key)
        if len(periods) > LONGEST_AXIS:
            return given
    return periods


def label_step(count: int, most: int = MOST_LABELS) -> int:
    """Label every how many bars of ``count``, so that no more than ``most`` labels show."""
    return max(1, math.ceil(count / most))


def short(period: str) -> str:
    """A period's label under a chart: its month and day (``11-10``), or a month as written."""
    return period[5:] if len(period) == 10 else period


def labelled(count: int) -> set[int]:
    """Which of ``count`` bars are labelled: every ``label_step``-th that has the room of a step of
    bars after it, so that a label never runs past the chart's end."""
    step = label_step(count)
    return {index for index in range(0, count, step) if index + step <= count}


def known(value: Any) -> float | None:
    """A value a bar can be drawn from: a number that is finite and not negative, or none."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return None
    return value


def share(value: float | None, highest: float) -> float:
    """How much of the chart's highest ``value`` is, in percent (none and nought: nothing)."""
    return round(100 * value / highest, 3) if value and highest else 0.0


def series(
    rows: Iterable[dict[str, Any]],
    value: str,
    unit: str,
    label: Callable[[str], str],
    text: Callable[[float | None], str] = lambda number: count_text(number),
    key: str = "key",
) -> list[dict[str, Any]]:
    """A time series of ``rows``' ``value`` on a continuous axis of ``unit``: a bar per period, a
    period without a row a bar of nought (``empty``), a row without the value ``unknown``; a label
    (``label``) every ``label_step`` bars where the bars up to the next leave it room; each bar's
    value as ``text`` writes it (``n``), and in its ``title`` after its period."""
    found = {row[key]: row for row in rows if isinstance(row.get(key), str)}
    periods = axis(found, unit)
    values = {period: known(found[period].get(value)) if period in found else 0 for period in periods}
    highest = max((number for number in values.values() if number is not None), default=0)
    roomy = labelled(len(periods))
    return [
        {
            **found.get(period, {}),
            "key": period,
            "period": period,
            "value": values[period],
            "unknown": values[period] is None,
            "empty": period not in found,
            "dense": len(periods) > DENSE,
            "height": share(values[period], highest),
            "label": label(period) if index in roomy else "",
            "n": text(values[period]),
            "title": f"{period}: {text(values[period])}",
        }
        for index, period in enumerate(periods)
    ]


def categories(
    rows: Iterable[dict[str, Any]],
    value: str,
    label: Callable[[dict[str, Any]], str],
    text: Callable[[float | None], str] = lambda number: count_text(number),
) -> list[dict[str, Any]]:
    """Bars of ``rows``' ``value`` in their order, each as long as its share of the highest
    (``width``, in percent: equal values, equal bars); a value not known is ``unknown``; each
    bar's value as ``text`` writes it (``n``), and in its ``title`` after its label."""
    rows = list(rows)
    values = [known(row.get(value)) for row in rows]
    highest = max((number for number in values if number is not None), default=0)
    return [
        {
            **row,
            "label": label(row),
            "value": number,
            "unknown": number is None,
            "width": share(number, highest),
            "n": text(number),
            "title": f"{label(row)}: {text(number)}",
        }
        for row, number in zip(rows, values, strict=True)
    ]


def count_text(number: float | None) -> str:
    """A count as a chart prints it: ``1,234``, or ``unknown``."""
    return "unknown" if number is None else f"{number:,.0f}"


def money_text(number: float | None) -> str:
    """A cost in US dollars as a chart prints it: ``$0.1234``, or ``unknown``."""
    return "unknown" if number is None else f"${number:,.4f}"
