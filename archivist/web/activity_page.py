"""GET /activity: what the agents did, project by project, in a time range (by default the last 30
days), from the ``project_activity`` canned query: each project's newest sessions (linked), the
files they touched (linked to their history), the commands they ran, tokens and cost. Its URL is
the query's parameters, so a view can be shared; a bad one is the query's error."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from datasette.utils.asgi import Response

from archivist.queries.declarations import QUERIES
from archivist.web.page_queries import QueryFailed, canned
from archivist.web.rendering import needs_archive, render_page
from archivist.web.urls import document_url, file_url, project_url

if TYPE_CHECKING:
    from datasette.app import Datasette

PARAMS = tuple(param.name for param in QUERIES["project_activity"].params)
DEFAULT_START, DEFAULT_END = "30 days ago", "today"  # project_activity's own range, when none is given
BUSIEST = 10  # files listed across the projects
LISTS = ("agents", "models", "newest", "files_touched", "top_commands")


@needs_archive
async def activity_page(datasette: Datasette, request: Any) -> Response:
    """GET /activity: a section per project; a bad parameter is a 400 with its message."""
    given = {name: request.args.get(name, "") for name in PARAMS if request.args.get(name)}
    # the range the project_activity query defaults to, for the usage queries beside it
    ranged = {"start_date": DEFAULT_START, "end_date": DEFAULT_END, **given}
    context: dict[str, Any] = {
        "given": given,
        "action": datasette.urls.path("/activity"),
        "usage_url": datasette.urls.path("/usage") + "?" + urlencode(ranged),
    }
    try:
        rows = await canned(datasette, "project_activity", given)
        days = await canned(datasette, "usage", {**ranged, "group_by": "day"})
        agents = await canned(datasette, "usage", {**ranged, "group_by": "agent"})
        models = await canned(datasette, "usage", {**ranged, "group_by": "model"})
    except QueryFailed as failure:
        return await render_page(datasette, request, "archivist_activity.html", {**context, "failure": failure}, 400)
    projects = []
    for row in rows:
        project = {**row, **{key: json.loads(row[key] or "[]") for key in LISTS}}
        for session in project["newest"]:
            session["href"] = document_url(datasette, session["id"])
        for touched in project["files_touched"]:
            touched["href"] = file_url(datasette, touched["file"])
        project["label"] = row["project"] or "(no project)"
        project["href"] = project_url(datasette, row["project"]) if row["project"] else None
        projects.append(project)
    busiest: dict[str, int] = {}
    for project in projects:
        for touched in project["files_touched"]:
            busiest[touched["file"]] = busiest.get(touched["file"], 0) + touched["sessions"]
    highest = max((day["total_tokens"] for day in days), default=0)
    context.update(
        projects=projects,
        sessions=sum(project["sessions"] for project in projects),
        tokens=sum(project["tokens"] or 0 for project in projects),
        bars=[{**day, "height": max(2, round(100 * day["total_tokens"] / highest)) if highest else 0} for day in days],
        by_agent=agents,
        by_model=models,
        busiest=[
            {"file": file, "sessions": count, "href": file_url(datasette, file)}
            for file, count in sorted(busiest.items(), key=lambda item: (-item[1], item[0]))[:BUSIEST]
        ],
    )
    return await render_page(datasette, request, "archivist_activity.html", context)
