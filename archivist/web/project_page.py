"""GET /project/<name>: one project's history (its path, without its leading ``/``, or its last
folder's name: ``/project/home/ana/api``, ``/project/api``), from the
``project_activity`` and ``usage`` canned queries over all its time (or the range asked for): its
sessions, the files most touched (linked to their history), the commands most run, its agents and
models, and its tokens and cost by day."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlencode

from datasette.utils.asgi import Response

from archivist.queries.totals import recorded
from archivist.web import charts
from archivist.web.activity_page import LISTS, NO_USAGE, session_usage
from archivist.web.page_queries import QueryFailed, canned
from archivist.web.rendering import needs_archive, render_page
from archivist.web.urls import document_url, file_url

if TYPE_CHECKING:
    from datasette.app import Datasette

ALL_TIME = "1970-01-01"  # a project's page covers all its time unless a range is asked for


@needs_archive
async def project_page(datasette: Datasette, request: Any) -> Response:
    """GET /project/<name>: the project's sessions, files, commands and usage; none is a 404."""
    project = unquote(request.url_vars["name"])
    # a path is named without its leading "/" (project_url): either is the project
    names = [project, "/" + project] if "/" in project else [project]
    given = {
        "projects": json.dumps(names),
        "start_date": request.args.get("start_date") or ALL_TIME,
        **({"end_date": request.args["end_date"]} if request.args.get("end_date") else {}),
    }
    context: dict[str, Any] = {"project": project, "given": given}
    try:
        rows = await canned(datasette, "project_activity", given)
        days = recorded(await canned(datasette, "usage", {**given, "group_by": "day"}))
        used = await session_usage(datasette, given)
    except QueryFailed as failure:
        return await render_page(datasette, request, "archivist_project.html", {**context, "failure": failure}, 400)
    if not rows:
        missing = QueryFailed(404, "PROJECT_NOT_FOUND", f"No agent session of the project {project} in this range.")
        return await render_page(datasette, request, "archivist_project.html", {**context, "failure": missing}, 404)
    found = [{**row, **{key: json.loads(row[key] or "[]") for key in LISTS}} for row in rows]
    for row in found:
        for session in row["newest"]:
            session["href"] = document_url(datasette, session["id"])
            session.update(used.get(str(session["id"]), NO_USAGE))
        for touched in row["files_touched"]:
            touched["href"] = file_url(datasette, touched["file"])
    bars = charts.series(days, "total_tokens", "day", charts.short)
    for bar in bars:
        if not bar["empty"]:
            bar["title"] += f" tokens, cost {charts.money_text(bar.get('cost'))}"
    usage_url = datasette.urls.path("/usage") + "?" + urlencode({**given, "group_by": "model"})
    shown = found[0]["project"] if len(found) == 1 and found[0]["project"] else project  # its path as recorded
    context.update(project=shown, projects=found, bars=bars, usage_url=usage_url)
    return await render_page(datasette, request, "archivist_project.html", context)
