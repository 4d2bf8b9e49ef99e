"""GET /activity: what the agents did in a time range (by default the 30 days to the newest day with a
message, said on the page: ``queries.newest``), per day or
week (``group_by``) and project by project: sessions, messages, tokens and cost per period as
charts and a table (``activity_periods``); by agent, model and project as charts and tables
(``usage``); the busiest projects and files; then each project's newest sessions (linked), the
files they touched (linked to their history), the commands they ran, tokens and cost
(``project_activity``). Its URL is the queries' parameters, so a view can be shared; a bad one
is the query's error; an empty one says where the newest session is, with a link to it."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from datasette.utils.asgi import Response

from archivist.queries.declarations import QUERIES
from archivist.queries.newest import NEWEST_SQL, empty_hint, opening_range, range_told
from archivist.queries.rules import ACTIVITY_PERIODS
from archivist.queries.totals import recorded, unrecorded
from archivist.web import charts
from archivist.web.page_queries import QueryFailed, canned
from archivist.web.rendering import needs_archive, render_page
from archivist.web.urls import document_url, file_url, project_url
from archivist.workspace import DATABASE_NAME

if TYPE_CHECKING:
    from datasette.app import Datasette

PARAMS = tuple(param.name for param in QUERIES["project_activity"].params)
BUSIEST = 10  # files listed across the projects
LISTS = ("agents", "models", "newest", "files_touched", "top_commands")
PERIOD_CHARTS = (  # (what, its caption) of each chart per period
    ("sessions", "Sessions"),
    ("messages", "Messages"),
    ("total_tokens", "Tokens"),
    ("cost", "Cost (US$)"),
)


def period_end(key: str, group_by: str) -> str:
    """The last day of the period a key starts: itself, or the Sunday after a week's Monday."""
    return (dt.date.fromisoformat(key) + dt.timedelta(days=6)).isoformat() if group_by == "week" else key


NO_USAGE = {"tokens": None, "cost": None}


async def newest_of(datasette: Datasette) -> str | None:
    """The newest day with a message in the served archive (``queries.newest``)."""
    rows = await datasette.get_database(DATABASE_NAME).execute(NEWEST_SQL)
    found = rows.first()
    return found[0] if found and isinstance(found[0], str) else None


def range_context(datasette: Datasette, path: str, given: dict[str, str], newest: str | None) -> dict[str, Any]:
    """The range a page shows, in words (range), and where an empty answer's data is: its hint and
    a link that shows it (the other choices kept)."""
    reach = {**given, **opening_range(newest)}
    return {
        "range": range_told(newest, given),
        "hint": empty_hint(newest),
        "hint_href": datasette.urls.path(path) + "?" + urlencode(reach) if newest else None,
    }


async def session_usage(datasette: Datasette, given: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The tokens and cost of the sessions in a range (the newest hundred with usage), by session id."""
    rows = await canned(datasette, "usage", {**given, "group_by": "session", "limit": "100"})
    return {row["key"]: {"tokens": row["total_tokens"], "cost": row["cost"]} for row in recorded(rows)}


@needs_archive
async def activity_page(datasette: Datasette, request: Any) -> Response:
    """GET /activity: a section per project; a bad parameter is a 400 with its message."""
    given = {name: request.args.get(name, "") for name in PARAMS if request.args.get(name)}
    group_by = request.args.get("group_by") or "day"
    newest = await newest_of(datasette)
    # the range the project_activity query defaults to, for the usage queries beside it
    ranged = {**given, **opening_range(newest, given)}
    action = datasette.urls.path("/activity")
    context: dict[str, Any] = {
        **range_context(datasette, "/activity", {**given, "group_by": group_by}, newest),
        "given": given,
        "group_by": group_by,
        "action": action,
        "usage_url": datasette.urls.path("/usage") + "?" + urlencode(ranged),
        "period_links": {name: action + "?" + urlencode({**given, "group_by": name}) for name in ACTIVITY_PERIODS},
    }
    try:
        periods = await canned(datasette, "activity_periods", {**given, "group_by": group_by})
        rows = await canned(datasette, "project_activity", given)
        by_agent = await canned(datasette, "usage", {**ranged, "group_by": "agent"})
        used = await session_usage(datasette, ranged)
        models = recorded(await canned(datasette, "usage", {**ranged, "group_by": "model"}))
    except QueryFailed as failure:
        return await render_page(datasette, request, "archivist_activity.html", {**context, "failure": failure}, 400)
    for period in periods:  # each period's bar narrows the view to it
        period["href"] = (
            action
            + "?"
            + urlencode(
                {
                    **given,
                    "start_date": period["key"],
                    "end_date": period_end(period["key"], group_by),
                    "group_by": "day",
                }
            )
        )
    projects = []
    for row in rows:
        project = {**row, **{key: json.loads(row[key] or "[]") for key in LISTS}}
        for session in project["newest"]:
            session["href"] = document_url(datasette, session["id"])
            session.update(used.get(str(session["id"]), NO_USAGE))
        for touched in project["files_touched"]:
            touched["href"] = file_url(datasette, touched["file"])
        project["label"] = row["project"] or "(no project)"
        project["href"] = project_url(datasette, row["project"]) if row["project"] else None
        projects.append(project)
    agents = recorded(by_agent)
    busiest: dict[str, int] = {}
    for project in projects:
        for touched in project["files_touched"]:
            busiest[touched["file"]] = busiest.get(touched["file"], 0) + touched["sessions"]
    context.update(
        projects=projects,
        periods=periods,
        sessions=sum(project["sessions"] for project in projects),
        messages=sum(project["messages"] or 0 for project in projects),
        tokens=sum(project["tokens"] or 0 for project in projects),
        cost=sum(project["cost"] or 0 for project in projects),
        charts=[
            {
                "caption": f"{caption} per {group_by}",
                "name": name,
                "bars": charts.series(
                    periods, name, group_by, charts.short, charts.money_text if name == "cost" else charts.count_text
                ),
            }
            for name, caption in PERIOD_CHARTS
            if any(period[name] for period in periods)
        ],
        groups=[
            {
                "heading": heading,
                "rows": found,
                "bars": charts.categories(found, "total_tokens", lambda row: row["key"] or "(none)"),
            }
            for heading, found in (("Agent", agents), ("Model", models))
            if found
        ],
        unrecorded=unrecorded(by_agent),
        busiest_projects=charts.categories(
            sorted(projects, key=lambda project: (-project["sessions"], -(project["messages"] or 0)))[:BUSIEST],
            "sessions",
            lambda project: project["label"],
        ),
        busiest=[
            {"file": file, "sessions": count, "href": file_url(datasette, file)}
            for file, count in sorted(busiest.items(), key=lambda item: (-item[1], item[0]))[:BUSIEST]
        ],
    )
    return await render_page(datasette, request, "archivist_activity.html", context)
