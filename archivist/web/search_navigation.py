"""The search page's ways onward: the facet sidebar, the filters in force, the timeline's
bars and the page links, each a URL of the search narrowed, widened or moved on."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from archivist.queries import filters
from archivist.queries.lists import items
from archivist.web import charts
from archivist.web.urls import SearchState


def facet_groups(
    state: SearchState, facets: dict[str, dict[str, int]], products: dict[str, str]
) -> list[dict[str, Any]]:
    """The facet sidebar: groups of (label, count, URL, selected), in the order they narrow (``filters.FACETS``)."""
    groups = []

    def group(name: str, label: str, items: list[dict[str, Any]]) -> None:
        if items:
            groups.append({"name": name, "label": label, "items": items})

    def single(
        key: str, counts: dict[str, int], labels: dict[str, str] | None = None, titled: bool = False
    ) -> list[dict[str, Any]]:
        """One value at a time; ``titled``: a shortened label keeps the whole value as its title."""
        items = []
        for value, count in counts.items():
            href, selected = state.toggle(key, value)
            items.append(
                {
                    "value": value,
                    "label": (labels or {}).get(value, value),
                    "title": value if titled else None,
                    "count": count,
                    "href": href,
                    "selected": selected,
                }
            )
        return items

    for facet in filters.FACETS:
        counts = facets.get(facet.name) or {}
        if facet is filters.PERIODS[0]:
            group(*_dates(state, facets))
        elif facet in filters.PERIODS:
            continue
        elif facet.shown == "tags":
            group(facet.sidebar, facet.label, _tags(state, _FACET_FILTERS[facet.name].name, counts))
        elif facet.shown == "products":
            group(facet.sidebar, facet.label, single(_FACET_FILTERS[facet.name].name, counts, products))
        elif facet.shown == "folders":
            named = project_names(list(counts))
            group(facet.sidebar, facet.label, single(_FACET_FILTERS[facet.name].name, counts, named, True))
        else:
            group(facet.sidebar, facet.label, single(_FACET_FILTERS[facet.name].name, counts))
    return groups


_FACET_FILTERS = {f.facet.name: f for f in filters.FILTERS if f.facet is not None}


def _dates(state: SearchState, facets: dict[str, dict[str, int]]) -> tuple[str, str, list[dict[str, Any]]]:
    """The time filter's group: months, or the days of the month chosen."""
    period = state.period()
    dates = []
    if period is None:
        for month, count in sorted((facets.get("month") or {}).items(), reverse=True):
            dates.append(
                {
                    "value": month,
                    "label": month,
                    "count": count,
                    "href": state.url(start_date=month, end_date=month),
                    "selected": False,
                }
            )
        return "month", "Month", dates
    month = period[:7]
    whole = period == month  # selected: a click removes the date filter
    href = state.url(start_date=None, end_date=None) if whole else state.url(start_date=month, end_date=month)
    dates.append({"value": month, "label": f"All of {month}", "count": None, "href": href, "selected": whole})
    for day, count in sorted((facets.get("day") or {}).items(), reverse=True):
        if day.startswith(month):
            selected = period == day
            href = state.url(start_date=month, end_date=month) if selected else state.url(start_date=day, end_date=day)
            dates.append({"value": day, "label": day, "count": count, "href": href, "selected": selected})
    return "day", "Day", dates


def _tags(state: SearchState, key: str, counts: dict[str, int]) -> list[dict[str, Any]]:
    """Tags: a selected one removed on click, another narrows (every selected tag must be present)."""
    found = []
    current = items(state.params.get(key))
    for tag, count in counts.items():
        if tag in current:
            href, selected = state.url(**{key: ",".join(t for t in current if t != tag)}), True
        else:
            href, selected = (
                state.url(**{key: ",".join([*current, tag]), "match_all": "true" if current else None}),
                False,
            )
        found.append({"value": tag, "label": tag, "count": count, "href": href, "selected": selected})
    return found


def project_name(path: str) -> str:
    """A project by its last folder's name, which the projects filter also takes: "proj" for "/home/ana/proj"."""
    return re.split(r"[/\\]", path.rstrip("/\\"))[-1] or path


def project_names(paths: list[str]) -> dict[str, str]:
    """Projects by as many of their last folders as tell them apart: "ana/workspace" and "bo/workspace"
    for "/home/ana/workspace" and "/home/bo/workspace", "proj" where one project is so named."""
    folders = {path: [part for part in re.split(r"[/\\]", path) if part] or [path] for path in paths}
    names = {}
    for path, parts in folders.items():
        depth = 1
        while depth < len(parts) and any(
            other != path and theirs[-depth:] == parts[-depth:] for other, theirs in folders.items()
        ):
            depth += 1
        names[path] = "/".join(parts[-depth:])
    return names


_PRODUCT_KEYS = frozenset(f.name for f in filters.FILTERS if f.facet is not None and f.facet.shown == "products")

# the list filters, as their chips name them
CHIP_KEYS = tuple((f.name, f.chip) for f in filters.FILTERS)


def cleared(state: SearchState, modes: tuple[str, ...]) -> str:
    """The search without any filter: its words, its mode where the page offers it, its sort."""
    mode = state.params.get("mode")
    wide = dict.fromkeys((key for key, _label in CHIP_KEYS), None)
    return state.url(
        **wide, match_all=None, start_date=None, end_date=None, document=None, mode=mode if mode in modes else None
    )


def active_filters(state: SearchState, products: dict[str, str], similar_to: str | None = None) -> list[dict[str, str]]:
    """Each filter in force, with the URL that removes it; ``similar_to``: the title of the similar mode's document."""
    chips = []
    for key, label in CHIP_KEYS:
        values = items(state.params.get(key))
        for value in values:
            rest = ",".join(v for v in values if v != value)
            text = products.get(value, value) if key in _PRODUCT_KEYS else value
            chips.append({"label": f"{label}: {text}", "href": state.url(**{key: rest})})
    start, end = state.dates()
    if start or end:
        period = state.period()
        text = period or f"{start or '…'} → {end or '…'}"
        chips.append({"label": f"date: {text}", "href": state.url(start_date=None, end_date=None)})
    if state.params.get("document"):
        text = similar_to or state.params["document"]
        chips.append({"label": f"similar to: {text}", "href": state.url(document=None, mode=None)})
    return chips


def bars(state: SearchState, counts: dict[str, int], titles: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Bars of a timeline on a continuous axis (``charts.series``): each period with matches links
    to the search narrowed to it; one without is a bar of nought."""
    selected = state.period()
    rows = [{"key": period, "count": count} for period, count in counts.items()]
    unit = "month" if all(charts.period_unit(period) == "month" for period in counts) else "day"
    shown = charts.series(rows, "count", unit, charts.short)
    for bar in shown:
        bar["title"] = (titles or {}).get(bar["period"]) or bar["title"]
        bar["href"] = None if bar["empty"] else state.url(start_date=bar["period"], end_date=bar["period"])
        bar["selected"] = bar["period"] == selected
    return shown


def timeline(state: SearchState, facets: dict[str, dict[str, int]]) -> dict[str, Any] | None:
    """Matches per month, or per day when they fall in one month: bars that narrow on click."""
    months = facets.get("month") or {}
    days = facets.get("day") or {}
    period = state.period()
    by_day = period is not None or (len(months) == 1 and bool(days))
    counts = days if by_day else months
    if by_day and period:
        counts = {day: n for day, n in counts.items() if day.startswith(period[:7])}
    if not counts:
        return None
    return {"unit": "day" if by_day else "month", "bars": bars(state, counts)}


def pages(state: SearchState, page: int, total_pages: int) -> list[dict[str, Any]]:
    """The search's page links (``page_links``)."""
    return page_links(page, total_pages, state.page_url)


def page_links(page: int, total_pages: int, url: Callable[[int], str]) -> list[dict[str, Any]]:
    """Page links around the current page: first, last, and two either side, with a gap between runs."""
    wanted = sorted({1, total_pages, *range(max(1, page - 2), min(total_pages, page + 2) + 1)})
    links: list[dict[str, Any]] = []
    previous = 0
    for number in wanted:
        if number - previous > 1:
            links.append({"gap": True})
        links.append({"number": number, "href": url(number), "current": number == page})
        previous = number
    return links
