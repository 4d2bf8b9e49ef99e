"""The search page's agent, project and model facets: conversations read from agent logs narrow by each."""

import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import started_datasette, write_files
from test_agentlogs_sources import line

from archivist.archive.indexer import index_workspace
from archivist.workspace import archive_path

HOSTILE = "/home/x/<script>alert(1)</script>"
SESSIONS = {  # project folder: (session id, cwd, the first message's words)
    "-home-ana-proj": ("11111111-1111-4111-8111-111111111111", "/home/ana/proj", "the zeppelin hangar doors jam"),
    "-home-x-hostile": ("22222222-2222-4222-8222-222222222222", HOSTILE, "the zeppelin mooring mast leans"),
}
MODEL = "claude-sonnet-4-5-20250929"  # the model of every assistant line `line` writes


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("conversation-facets")
    workspace = write_files(root / "ws", {"notes/a.md": "# A\n\nzeppelin notes in the workspace\n"})
    for folder, (session, cwd, words) in SESSIONS.items():
        lines = [
            line("user", "u1", None, words, "2025-11-23T05:00:00.000Z", cwd=cwd, sessionId=session),
            line(
                "assistant",
                "a1",
                "u1",
                [{"type": "text", "text": "Let me look."}],
                "2025-11-23T05:01:00.000Z",
                cwd=cwd,
                sessionId=session,
            ),
        ]
        project = root / "projects" / folder
        project.mkdir(parents=True)
        (project / f"{session}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    index_workspace(workspace, log_sources=[("claude-code", root / "projects")])
    return workspace


@pytest.fixture
async def datasette(workspace):
    return await started_datasette(archive_path(workspace))


def facet(page: str, name: str) -> dict[str, dict[str, str]]:
    """A facet group's values: each one's label, count, title and the URL it links to."""
    found = re.search(rf'data-facet="{name}">(.*?)</section>', page, re.S)
    assert found, f"no {name} facet"
    entries = re.findall(
        r'<a href="([^"]+)" data-value="([^"]+)"(?: title="([^"]*)")?>([^<]*)</a> <span class="count">(\d+)</span>',
        found[1],
    )
    return {
        html.unescape(value): {
            "href": html.unescape(href),
            "title": html.unescape(title),
            "label": label,
            "count": count,
        }
        for href, value, title, label, count in entries
    }


def params(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def hits(page: str) -> list[str]:
    return [html.unescape(path) for path in re.findall(r'<span class="path">([^<]*)</span>', page)]


async def test_the_agent_project_and_model_facets_count_the_conversations(datasette):
    page = (await datasette.client.get("/search?query=zeppelin&mode=keyword")).text
    agents, projects, models = facet(page, "agent"), facet(page, "project"), facet(page, "model")
    assert {value: item["count"] for value, item in agents.items()} == {"claude-code": "2"}
    assert {value: item["count"] for value, item in models.items()} == {MODEL: "2"}
    assert {value: item["count"] for value, item in projects.items()} == {"/home/ana/proj": "1", HOSTILE: "1"}
    # a project shows by its folder's name, its whole path as the title; the filter is the path
    assert projects["/home/ana/proj"]["label"] == "proj"
    assert projects["/home/ana/proj"]["title"] == "/home/ana/proj"
    # each link adds its filter to the query, URL-encoded, and starts again at page 1
    assert params(agents["claude-code"]["href"]) == {"query": "zeppelin", "mode": "keyword", "agents": "claude-code"}
    assert params(models[MODEL]["href"]) == {"query": "zeppelin", "mode": "keyword", "models": MODEL}
    assert params(projects[HOSTILE]["href"]) == {"query": "zeppelin", "mode": "keyword", "projects": HOSTILE}
    assert "projects=%2Fhome%2Fana%2Fproj" in projects["/home/ana/proj"]["href"]
    assert "projects=%2Fhome%2Fx%2F%3Cscript%3Ealert%281%29%3C%2Fscript%3E" in projects[HOSTILE]["href"]
    # the markdown notes of the workspace are no agent's conversation: counted in no such facet
    assert "notes/a.md" in hits(page)


async def test_a_project_link_narrows_to_that_project_and_shows_as_a_chip(datasette):
    page = (await datasette.client.get("/search?query=zeppelin&mode=keyword&page=1")).text
    url = facet(page, "project")["/home/ana/proj"]["href"]
    assert "page" not in params(url)
    narrowed = (await datasette.client.get(url)).text
    (path,) = hits(narrowed)
    assert path.startswith("claude-code:")
    assert "hangar" in narrowed and "mooring" not in narrowed
    assert "project: /home/ana/proj ✕" in narrowed
    # the narrowed page counts only that project, and its link now takes the filter off
    projects = facet(narrowed, "project")
    assert set(projects) == {"/home/ana/proj"}
    assert params(projects["/home/ana/proj"]["href"]) == {"query": "zeppelin", "mode": "keyword"}
    # a new search from the form keeps the filter; clearing all filters drops it
    form = narrowed.split('class="archivist-search-form"', 1)[1].split("</form>", 1)[0]
    assert '<input type="hidden" name="projects" value="/home/ana/proj">' in form
    clear = re.search(r'<a href="([^"]+)">Clear all filters</a>', narrowed)
    assert clear and params(html.unescape(clear[1])) == {"query": "zeppelin", "mode": "keyword"}


async def test_the_hostile_project_link_narrows_to_it(datasette):
    page = (await datasette.client.get("/search?query=zeppelin&mode=keyword")).text
    narrowed = (await datasette.client.get(facet(page, "project")[HOSTILE]["href"])).text
    (path,) = hits(narrowed)
    assert path.startswith("claude-code:") and "mooring" in narrowed and "hangar" not in narrowed


async def test_a_hostile_project_renders_escaped(datasette):
    for url in ("/search?query=zeppelin&mode=keyword", "/search?query=mooring&mode=keyword"):
        page = (await datasette.client.get(url)).text
        assert "<script>alert(1)" not in page and "alert(1)</script>" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        # the label is its last folder's name: "script>" after the last slash, escaped too
        assert facet(page, "project")[HOSTILE]["label"] == "script&gt;"


async def test_no_facet_without_values(datasette):
    page = (await datasette.client.get("/search?query=notes&mode=keyword")).text
    assert "notes/a.md" in hits(page)
    assert not {"agent", "project", "model"} & set(re.findall(r'data-facet="(\w+)"', page))
