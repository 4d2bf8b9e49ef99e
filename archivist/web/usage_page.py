"""GET /usage: tokens and cost of the agent logs' model responses, per day, month, 5-hour block,
model, agent, project or session, from the ``usage`` canned query: bars of the groups' tokens, and
a table of each group's tokens, cost and responses; the same range by model and by agent beside.
The agents whose logs record no usage are listed as such, with their sessions.

Its URL is the query's parameters (``?group_by=month&start_date=2025-11``), so a view can be
shared; a bad one is the query's error, with the form to mend it. A URL that names no date opens on
the 30 days to the newest day with a message (``queries.newest``), and says so; an empty date
(``?start_date=``) is all time. An empty answer says where the newest session is, with a link to it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from datasette.utils.asgi import Response

from archivist.queries.declarations import QUERIES
from archivist.queries.newest import opening_range
from archivist.queries.totals import USAGE_BY, USAGE_SESSIONS, recorded, unrecorded, usage_totals
from archivist.web import charts
from archivist.web.activity_page import newest_of, range_context
from archivist.web.page_queries import QueryFailed, canned
from archivist.web.rendering import needs_archive, render_page
from archivist.web.urls import document_url
from archivist.workspace import DATABASE_NAME

if TYPE_CHECKING:
    from datasette.app import Datasette

PARAMS = tuple(param.name for param in QUERIES["usage"].params)
PERIODS = ("day", "month", "block")
BESIDE = ("model", "agent")  # the same range, grouped these ways too


@needs_archive
async def usage_page(datasette: Datasette, request: Any) -> Response:
    """GET /usage: the groups asked for, as bars and a table; a bad parameter is a 400 with its message."""
    given = {name: request.args.get(name, "") for name in PARAMS if request.args.get(name)}
    group_by = given.get("group_by") or "day"
    newest = await newest_of(datasette)
    opened = not any(name in request.args for name in ("start_date", "end_date"))
    told = range_context(datasette, "/usage", given, newest)
    if opened:
        given = {**given, **opening_range(newest)}
    context: dict[str, Any] = {
        **told,
        "opened": opened,
        "all_time": _url(datasette, {**given, "start_date": "", "end_date": ""}),
        "given": given,
        "group_by": group_by,
        "groups": [{"name": name, "href": _url(datasette, {**given, "group_by": name})} for name in USAGE_BY],
        "action": datasette.urls.path("/usage"),
        "json_url": datasette.urls.path(f"/{DATABASE_NAME}/usage.json")
        + "?"
        + urlencode({**given, "_shape": "objects"}),
    }
    try:
        rows = await canned(datasette, "usage", given)
    except QueryFailed as failure:
        return await render_page(datasette, request, "archivist_usage.html", {**context, "failure": failure}, 400)
    beside, by_agent = {}, rows
    for name in BESIDE:
        if name != group_by:
            found = await canned(datasette, "usage", {**given, "group_by": name, "limit": "", "offset": ""})
            by_agent = found if name == "agent" else by_agent
            beside[name] = [_row(datasette, given, name, row) for row in recorded(found)]
    shown = [_row(datasette, given, group_by, row) for row in recorded(rows)]
    context.update(
        rows=shown,
        bars=_bars(shown, group_by),
        totals=usage_totals(shown),
        beside=beside,
        unrecorded=unrecorded(by_agent),
        next_url=_next_page(datasette, given, group_by, len(shown)),
        price_data=next((row["price_data"] for row in rows if row["price_data"]), None),
    )
    return await render_page(datasette, request, "archivist_usage.html", context)


def _bars(shown: list[dict[str, Any]], group_by: str) -> list[dict[str, Any]]:
    """The groups' tokens as a time series: days and months on a continuous axis, blocks as they come."""
    if group_by not in PERIODS:
        return []
    rows = [{**row, "key": row["label"]} for row in shown]
    if group_by == "block":
        bars = charts.categories(rows, "total_tokens", lambda row: row["label"])
        roomy = charts.labelled(len(bars))
        for index, bar in enumerate(bars):
            bar.update(period=bar["label"], height=bar["width"], empty=False, dense=len(bars) > charts.DENSE)
            bar["label"] = bar["label"][5:16] if index in roomy else ""
    else:
        bars = charts.series(rows, "total_tokens", group_by, charts.short)
    for bar in bars:
        if not bar["empty"]:
            bar["title"] += f" tokens, cost {charts.money_text(bar.get('cost'))}"
    return bars


def _row(datasette: Datasette, given: dict[str, str], group_by: str, row: dict[str, Any]) -> dict[str, Any]:
    """A group as the page shows it: its figures, and a link that narrows the view to it."""
    key = row["key"]
    narrowed: dict[str, str] | None = None
    if key is not None and group_by in ("day", "month"):
        narrowed = {**given, "start_date": key, "end_date": key, "group_by": "day" if group_by == "month" else "block"}
    elif key is not None and group_by in ("agent", "project"):
        narrowed = {**given, f"{group_by}s": json.dumps([key])}
    label = "(none)" if key is None else str(key)
    if group_by == "session":
        label = f"{row['title'] or '(untitled)'} ({row['agent']})"
    return {
        **row,
        "label": label,
        "models": json.loads(row["models"] or "[]"),
        "href": _url(datasette, narrowed) if narrowed is not None else _session_url(datasette, group_by, key),
    }


def _session_url(datasette: Datasette, group_by: str, key: str | None) -> str | None:
    """A session's page, where the row is one."""
    return document_url(datasette, key) if group_by == "session" and key is not None else None


def _next_page(datasette: Datasette, given: dict[str, str], group_by: str, shown: int) -> str | None:
    """The next page of sessions, where this one is full."""
    limit = int(given.get("limit") or USAGE_SESSIONS)
    if group_by != "session" or shown < limit:
        return None
    return _url(datasette, {**given, "offset": str(int(given.get("offset") or 0) + limit)})


def _url(datasette: Datasette, params: dict[str, str]) -> str:
    return datasette.urls.path("/usage") + ("?" + urlencode(params) if params else "")
