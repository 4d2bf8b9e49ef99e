"""A search hit in a conversation read from an agent log names the message that matched, on every surface."""

import json
import re

import pytest
from conftest import started_datasette, write_files
from mcp.client import Client
from test_agentlogs_sources import SESSION, line, write_session

from archivist.archive.indexer import index_workspace
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
    texts = [f"message {n} about {TOPICS[n % len(TOPICS)]}" for n in range(12)]
    texts[5] = "the zeppelin hangar doors jam when the proxy times out"
    index_workspace(workspace, log_sources=[("claude-code", write_session(root, texts))])
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


def test_a_raw_query_names_its_message_unless_it_names_a_column(workspace):
    with Archive.for_workspace(workspace) as archive:
        raw = archive.search({"query": "zeppelin AND doors", "mode": "keyword", "match_mode": "raw"})
        titled = archive.search({"query": "body: zeppelin", "mode": "keyword", "match_mode": "raw"})
        recent = archive.search({"mode": "recent", "entities": "conversation"})
    (hit,) = raw["results"]
    assert hit["path"].startswith("claude-code:") and hit["message"]["index"] == 5
    # a column of documents: the workspace's markdown conversation only, no message named
    assert [hit["path"] for hit in titled["results"]] == ["conversations/2025-11-10/001-plan"]
    assert all(hit["message"] is None for hit in titled["results"] + recent["results"])


async def test_the_page_the_api_and_mcp_name_the_same_message(workspace):
    params = {"query": "zeppelin hangar", "mode": "keyword"}
    datasette = await started_datasette(archive_path(workspace))
    api = (await datasette.client.get("/api/search", params=params)).json()
    async with Client(create_server(archive_path(workspace), workspace)) as client:
        result = await client.call_tool("search", params)
    assert json.loads(result.content[0].text) == api

    (session,) = [hit for hit in api["results"] if hit.get("message") is not None]
    assert session["message"] == 5  # brief: the message's index, get_conversation's offset
    full = (await datasette.client.get("/api/search", params={**params, "output": "full"})).json()
    (named,) = [hit for hit in full["results"] if hit["message"]]
    assert named["id"] == session["id"] and named["message"]["index"] == 5

    page = (await datasette.client.get("/search", params=params)).text
    link = re.search(r'<a href="([^"]+)">Message #5</a>', page)
    assert link, page
    assert link[1] == f"/document/{session['id']}?m=5#m5" == named["message"]["link"]
    target = (await datasette.client.get(link[1].split("#")[0])).text
    assert 'id="m5"' in target and "zeppelin hangar doors" in target


def titled_session(root, title, texts):
    """A Claude Code session of these messages whose log gives it its own title (``custom-title``)."""
    source = write_session(root, texts)
    (log,) = source.rglob("*.jsonl")
    record = {"type": "custom-title", "customTitle": title, "sessionId": SESSION}
    log.write_text(log.read_text(encoding="utf-8") + json.dumps(record) + "\n", encoding="utf-8")
    return source


@pytest.mark.parametrize(
    ("texts", "named"),
    [
        # no message holds every word: the first with some of them
        (["hello there", "the hangar is empty", "zeppelin zeppelin zeppelin", "bye"], 1),
        # one message holds every word, after one with some: that one
        (["hello there", "zeppelin zeppelin zeppelin", "a hangar for the zeppelin", "hangar"], 2),
    ],
)
def test_a_session_found_by_its_title_names_the_first_message_with_every_word_else_some(tmp_path, texts, named):
    workspace = write_files(tmp_path / "ws", {"notes/other.md": "# Other\n\nnothing of it\n"})
    index_workspace(workspace, log_sources=[("claude-code", titled_session(tmp_path, "zeppelin hangar", texts))])
    with Archive.for_workspace(workspace) as archive:
        for mode in ("keyword", "recent"):
            response = archive.search({"query": "zeppelin hangar", "mode": mode, "output": "full"})
            (hit,) = response["results"]
            assert hit["title"] == "zeppelin hangar"
            message = hit["message"]
            assert message["index"] == named, (mode, message)
            assert "<mark>" in message["snippet"]


@pytest.mark.parametrize(
    ("filters", "paths"),
    [
        ({"agents": "claude-code"}, {"claude-code"}),
        ({"agents": "workspace"}, {"conversations/2025-11-10/001-plan"}),
        ({"agents": "codex"}, set()),
        ({"projects": "proj"}, {"claude-code"}),
        ({"projects": "/home/ana/proj/"}, {"claude-code"}),
        ({"models": "claude-sonnet-4-5-20250929"}, {"claude-code"}),
        ({"models": "gpt-5"}, set()),
    ],
)
async def test_conversations_filter_by_agent_project_and_model_on_every_surface(workspace, filters, paths):
    params = {"query": "zeppelin", "mode": "keyword", "output": "full", **filters}
    with Archive.for_workspace(workspace) as archive:
        response = archive.search(params)
    assert {path.split(":")[0] for path in hits(response)} == paths
    assert {key: response["filters"][key] for key in filters} == {
        key: [value.lower() if key == "agents" else value] for key, value in filters.items()
    }
    datasette = await started_datasette(archive_path(workspace))
    assert (await datasette.client.get("/api/search", params=params)).json() == response
    async with Client(create_server(archive_path(workspace), workspace)) as client:
        result = await client.call_tool("search", params)
    assert json.loads(result.content[0].text) == response
    page = (await datasette.client.get("/search", params=params)).text
    (key, value) = next(iter(filters.items()))
    assert f"{dict(agents='agent', projects='project', models='model')[key]}: {value}" in page


def test_a_session_past_midnight_is_found_on_both_days_and_by_the_files_it_touched(tmp_path):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n"})
    project = tmp_path / "projects" / "-home-ana-proj"
    project.mkdir(parents=True)
    tool_use = {"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "/home/ana/proj/src/app.py"}}
    lines = [
        line("user", "n1", None, "late night fix", "2025-11-23T23:50:00.000Z"),
        line("assistant", "n2", "n1", [{"type": "text", "text": "editing"}, tool_use], "2025-11-24T00:10:00.000Z"),
    ]
    (project / f"{SESSION}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    index_workspace(workspace, log_sources=[("claude-code", tmp_path / "projects")])
    with Archive.for_workspace(workspace) as archive:

        def found(**filters):
            return archive.search({"mode": "recent", "entities": "conversation", **filters})["total"]

        assert found(start_date="2025-11-23", end_date="2025-11-23") == 1
        assert found(start_date="2025-11-24", end_date="2025-11-24") == 1
        assert found(start_date="2025-11-25", end_date="2025-11-25") == 0
        assert found(files="app.py") == found(files="/home/ana/proj/src/app.py") == 1
        assert found(files="other.py") == 0


@pytest.mark.parametrize(
    ("filters", "found"),
    [
        ({"agents": "claude-code", "projects": "proj", "start_date": "2025-11-23", "end_date": "2025-11-23"}, True),
        ({"projects": "/home/ana/proj", "start_date": "2025-11"}, True),
        ({"types": "claude-code", "start_date": "2025-11-23T05:00:00Z"}, True),
        ({"agents": "claude-code", "projects": "proj", "start_date": "2025-10-01", "end_date": "2025-10-31"}, False),
        ({"agents": "claude-code", "end_date": "2025-11-22"}, False),
        ({"entities": "report", "agents": "claude-code"}, False),
        ({"tags": "plans", "agents": "claude-code"}, False),
    ],
)
def test_an_agent_or_project_with_a_date_finds_the_messages_of_those_days(workspace, filters, found):
    with Archive.for_workspace(workspace) as archive:
        response = archive.search({"query": "zeppelin doors", "mode": "keyword", **filters})
    sessions = [hit for hit in response["results"] if hit["path"].startswith("claude-code:")]
    assert bool(sessions) is found
    for hit in sessions:
        assert hit["message"]["index"] == 5 and hit["message"]["timestamp"].startswith("2025-11-23")


def test_a_snippet_of_a_huge_message_reads_only_its_start():
    from archivist.queries import excerpts

    near = "intro words " * 10 + "the zeppelin hangar " + "tail " * 100
    assert excerpts.snippet(near, "zeppelin", 8) == "...words the <mark>zeppelin</mark> hangar tail tail tail tail..."
    # past the scanned stretch a word of the query is not looked for: the message's start stands in
    huge = "filler " * (excerpts.SNIPPET_SCAN // 7 + 10) + "zeppelin"
    assert excerpts.snippet(huge, "zeppelin", 4) == "filler filler filler filler..."


async def test_the_readme_and_the_declaration_say_what_message_is_in_each_output(workspace):
    """Brief: the message's index (get_conversation's offset); full: an object; null elsewhere."""
    from conftest import ROOT

    from archivist.queries.search_params import SEARCH_PARAMS

    params = {"query": "zeppelin hangar", "mode": "keyword"}
    with Archive.for_workspace(workspace) as archive:
        brief = archive.search({**params, "output": "brief"})
        full = archive.search({**params, "output": "full"})
    named = [hit["message"] for hit in full["results"] if hit["message"]]
    readme = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
    keys = re.search(r'in the full output as\s+`"message": \{([^}]*)\}`', readme)
    assert keys and [key.strip(' "') for key in keys[1].split(",")] == list(named[0])
    assert re.search(r"in the brief output \(.*?\) as its index alone\s+\(`\"message\": 5`", readme, re.DOTALL)
    assert [hit["message"] for hit in brief["results"] if "message" in hit] == [m["index"] for m in named]
    assert all(hit["message"] is None for hit in full["results"] if hit["path"].startswith("conversations/"))
    output = next(param for param in SEARCH_PARAMS if param.name == "output").description
    assert "message (the index of an agent log's matching message: get_conversation's offset)" in output
    assert "message as an object (index, role, timestamp, snippet, link)" in output


def test_a_message_is_found_by_the_commands_and_files_of_its_calls_never_by_their_output(tmp_path):
    """What an agent ran and touched is searchable though no word of the message says it; the
    excerpt names it; what the command printed stays out of the search."""
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n"})
    project = tmp_path / "projects" / "-home-ana-proj"
    project.mkdir(parents=True)
    bash = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -x tests/test_gizmo.py"}}
    edit = {"type": "tool_use", "id": "t2", "name": "Edit",
            "input": {"file_path": "/home/ana/proj/src/sprocket.py", "old_string": "a", "new_string": "b"}}  # fmt: skip
    output = {"type": "tool_result", "tool_use_id": "t1", "content": "3 passed, flibbertigibbet warnings"}
    lines = [
        line("user", "n1", None, "fix the failing check", "2025-11-23T10:00:00.000Z"),
        line("assistant", "n2", "n1", [bash], "2025-11-23T10:01:00.000Z"),
        line("user", "n3", "n2", [output], "2025-11-23T10:02:00.000Z"),
        line("assistant", "n4", "n3", [{"type": "text", "text": "now the fix"}, edit], "2025-11-23T10:03:00.000Z"),
    ]
    (project / f"{SESSION}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    index_workspace(workspace, log_sources=[("claude-code", tmp_path / "projects")])
    with Archive.for_workspace(workspace) as archive:
        found = archive.search({"query": "pytest", "mode": "keyword", "output": "full"})
        assert found["total"] == 1
        (hit,) = found["results"]
        assert (
            hit["message"]["index"] == 1 and "<mark>pytest</mark> -x tests/test_gizmo.py" in hit["message"]["snippet"]
        )
        found = archive.search({"query": "test_gizmo", "mode": "keyword"})["results"]
        assert [r["message"]["index"] for r in found] == [1] and "<mark>test_gizmo</mark>" in found[0]["message"][
            "snippet"
        ]
        (brief,) = archive.search({"query": "test_gizmo", "mode": "keyword", "output": "brief"})["results"]
        assert brief["snippet"] == "pytest -x tests/test_gizmo.py"  # (the brief line: plain)
        sprocket = archive.search({"query": "sprocket", "mode": "keyword", "output": "full"})["results"]
        assert [r["message"]["index"] for r in sprocket] == [3]
        assert archive.search({"query": "flibbertigibbet", "mode": "keyword"})["total"] == 0
