"""A search hit in a conversation read from an agent log names the message that matched, on every surface."""

import json
import re

import pytest
from conftest import started_datasette, write_files
from mcp.client import Client
from test_agentlogs_sources import SESSION, line

from archivist.build.indexer import index_workspace
from archivist.mcp.tools import create_server
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

TOPICS = ["kubernetes pods", "proxy timeouts", "token refresh", "cookie flags", "retry backoff"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("message-search")
    workspace = write_files(
        root / "ws", {"conversations/2025-11-10/001-plan/conversation.md": "# Plan\n\nzeppelin hangar plans\n"}
    )
    lines, parent = [], None
    for n in range(12):
        kind = "user" if n % 2 == 0 else "assistant"
        text = f"message {n} about {TOPICS[n % len(TOPICS)]}"
        if n == 5:
            text = "the zeppelin hangar doors jam when the proxy times out"
        content = text if kind == "user" else [{"type": "text", "text": text}]
        lines.append(line(kind, f"m{n}", parent, content, f"2025-11-23T05:{n:02d}:00.000Z"))
        parent = f"m{n}"
    project = root / "projects" / "-home-ana-proj"
    project.mkdir(parents=True)
    (project / f"{SESSION}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    index_workspace(workspace, log_sources=[("claude-code", root / "projects")])
    return workspace


def hits(response):
    return {hit["path"]: hit for hit in response["results"]}


def test_a_keyword_hit_in_a_session_names_its_message_and_links_to_it(workspace):
    with Archive.for_workspace(workspace) as archive:
        response = archive.search({"query": "zeppelin hangar", "mode": "keyword"})
    found = hits(response)
    (session_path,) = [path for path in found if path.startswith("claude-code:")]
    message = found[session_path]["message"]
    document_id = found[session_path]["id"]
    assert (message["index"], message["role"], message["timestamp"]) == (5, "assistant", "2025-11-23T05:05:00Z")
    assert "<mark>zeppelin</mark>" in message["snippet"]
    assert message["link"] == f"/document/{document_id}?m=5#m5"
    # a markdown conversation of the workspace has no messages to name
    assert found["conversations/2025-11-10/001-plan"]["message"] is None


def test_a_raw_query_or_a_filter_only_search_names_no_message(workspace):
    with Archive.for_workspace(workspace) as archive:
        raw = archive.search({"query": "zeppelin", "mode": "keyword", "match_mode": "raw"})
        recent = archive.search({"mode": "recent", "entities": "conversation"})
    assert raw["total"] == 2 and all(hit["message"] is None for hit in raw["results"])
    assert all(hit["message"] is None for hit in recent["results"])


async def test_the_page_the_api_and_mcp_name_the_same_message(workspace):
    params = {"query": "zeppelin hangar", "mode": "keyword"}
    datasette = await started_datasette(archive_path(workspace))
    api = (await datasette.client.get("/api/search", params=params)).json()
    async with Client(create_server(archive_path(workspace), workspace)) as client:
        result = await client.call_tool("search", params)
    assert json.loads(result.content[0].text) == api

    page = (await datasette.client.get("/search", params=params)).text
    (session,) = [hit for hit in api["results"] if hit["message"]]
    link = re.search(r'<a href="([^"]+)">Message #5</a>', page)
    assert link, page
    assert link[1] == f"/document/{session['id']}?m=5#m5"
    target = (await datasette.client.get(link[1].split("#")[0])).text
    assert 'id="m5"' in target and "zeppelin hangar doors" in target
