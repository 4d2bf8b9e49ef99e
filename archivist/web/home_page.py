"""GET /: the workspace at a glance, and every saved (canned) query with an example taken
from the archive's own documents."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from datasette.utils.asgi import Response

from archivist.queries import catalog
from archivist.web.page_queries import QueryFailed, canned, search, table_rows
from archivist.web.rendering import needs_archive, render_page
from archivist.web.search_navigation import bars
from archivist.web.urls import SearchState, document_url
from archivist.workspace import DATABASE_NAME

if TYPE_CHECKING:
    from datasette.app import Datasette


_WORD_RE = re.compile(r"[A-Za-z]{4,}")


def examples(recent: list[dict[str, Any]]) -> dict[str, dict[str, str] | None]:
    """Example parameters for every canned query, taken from the archive's own documents.

    A query whose example needs something the archive lacks (no reports) gets None.
    """
    conversation = next((d for d in recent if d["kind"] == "conversation"), None)
    report = next((d for d in recent if d["kind"] == "report"), None)
    any_document = conversation or (recent[0] if recent else None)

    def word(text: Any, fallback: Any = "") -> str:
        found = _WORD_RE.findall(text or "")
        return max(found, key=len).lower() if found else fallback

    topic = word(conversation and conversation["title"]) or word(any_document and any_document["title"])
    month = ((conversation or {}).get("date") or "")[:7]
    command: str = (report["entity_type"] or "") if report else ""
    return {
        "search": ({"query": topic, "start_date": month} if month else {"query": topic})
        if topic
        else {"mode": "recent"},
        "search_workspace": {"query": topic, "date_range": month} if conversation and topic else None,
        "search_semantic": {"query": conversation["title"]} if conversation else None,
        "search_reports": {"query": word(report["title"], word(report["excerpt"], command))} if report else None,
        "list_commands": {},
        "list_command_reports": {"command": command} if report else None,
        "get_report": {"path": report["path"]} if report else None,
        "search_commands": {"query": word(command, command)} if report else None,
        "find_document": {"document": any_document["path"]} if any_document else None,
        "get_document": {"document": str(any_document["id"])} if any_document else None,
        "list_conversations": {"limit": "10", "include": "usage"},
        "get_conversation": {"document": str(conversation["id"]), "limit": "50"} if conversation else None,
        "similar": {"document": str(any_document["id"]), "limit": "5"} if any_document else None,
        "embedding_status": {},
        "document_counts": {},
        "activity": {"by": "month"},
        "usage": {"group_by": "model"},
        "file_history": {"path": "app.py"},
        "project_activity": {"start_date": "2025-01-01"},
        "activity_periods": {"group_by": "week", "start_date": "2025-01-01"},
        "check_search_syntax": {"query": f"{topic}*"} if topic else None,
    }


def first_sentence(text: str) -> str:
    """A description's first sentence, its line breaks undone."""
    paragraph = " ".join(text.split("\n\n")[0].split())
    end = paragraph.find(". ")
    return paragraph[: end + 1] if end >= 0 else paragraph


def saved_queries(datasette: Datasette, recent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every canned query: its title, description and an example URL (page and JSON)."""
    found = examples(recent)
    listed = []
    for name, query in catalog.canned_queries().items():
        params = found.get(name)
        base = datasette.urls.path(f"/{DATABASE_NAME}/{name}")
        suffix = "?" + urlencode(params) if params else ""
        listed.append(
            {
                "name": name,
                "title": query.get("title", name),
                "summary": first_sentence(query.get("description") or ""),
                "params": query.get("params") or [],
                "example": urlencode(params) if params else "",
                "href": base + suffix if params is not None else base,
                "json": base + ".json" + suffix if params is not None else None,
            }
        )
    return listed


@needs_archive
async def home_page(datasette: Datasette, request: Any) -> Response:
    """GET /: the workspace at a glance. A part whose query fails says so; the rest still shows."""
    failures: dict[str, QueryFailed] = {}

    async def attempt(part: str, call: Any, default: Any) -> Any:
        try:
            return await call
        except QueryFailed as failure:
            failures[part] = failure
            return default

    everything = SearchState(datasette, {})
    kinds: dict[str, dict[str, Any]] = {}
    for row in await attempt("counts", canned(datasette, "document_counts"), []):
        kind = kinds.setdefault(
            row["kind"],
            {"kind": row["kind"], "documents": 0, "types": [], "href": everything.url(entities=row["kind"])},
        )
        kind["documents"] += row["documents"]
        href = everything.url(entities=row["kind"], types=row["type"]) if row["type"] else None
        kind["types"].append({"type": row["type"], "documents": row["documents"], "href": href})
    total = sum(kind["documents"] for kind in kinds.values())
    recent = (await attempt("recent", search(datasette, {"mode": "recent", "page_size": "10"}), {"results": []}))[
        "results"
    ]
    for item in recent:
        item["href"] = document_url(datasette, item["id"])
    # the newest conversation and report give the saved queries their example parameters
    newest = []
    for newest_kind in ("conversation", "report"):
        found = await attempt(
            "recent",
            search(datasette, {"mode": "recent", "entities": newest_kind, "page_size": "1"}),
            {"results": []},
        )
        newest.extend(found["results"])
    activity: dict[str, dict[str, Any]] = {}
    for row in await attempt("activity", canned(datasette, "activity", {"by": "month"}), []):
        month = activity.setdefault(row["period"], {"period": row["period"], "documents": 0, "kinds": {}})
        month["documents"] += row["documents"]
        month["kinds"][row["kind"]] = row["documents"]
    titles = {
        period: f"{period}: " + ", ".join(f"{n} {kind}" for kind, n in month["kinds"].items())
        for period, month in activity.items()
    }
    months = bars(everything, {period: month["documents"] for period, month in activity.items()}, titles)
    embedding = next(iter(await attempt("embeddings", canned(datasette, "embedding_status"), [])), None)
    # embedded as they are now: num_documents also counts vectors kept for removed documents
    embedded = total - embedding["pending"] if embedding else 0
    coverage = round(100 * embedded / total) if total else 0
    problems = await attempt("problems", table_rows(datasette, "index_problems", {"_size": "100"}), [])
    runs = await attempt("runs", table_rows(datasette, "index_runs", {"_sort_desc": "id", "_size": "1"}), [])
    context = {
        "kinds": sorted(kinds.values(), key=lambda kind: -kind["documents"]),
        "total": total,
        "recent": recent,
        "months": months,
        "embedding": embedding,
        "coverage": coverage,
        "embedded": embedded,
        "problems": problems,
        "problems_url": datasette.urls.table(DATABASE_NAME, "index_problems"),
        "last_run": runs[0] if runs else None,
        "saved_queries": saved_queries(datasette, newest + recent),
        "search_url": datasette.urls.path("/search"),
        "failures": failures,
    }
    return await render_page(datasette, request, "archivist_home.html", context)
