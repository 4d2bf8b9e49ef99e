"""The exploration pages (home, search, document), through the real Datasette app.

Every link a test follows is read off the page it is on, as a person would click it.
"""

from __future__ import annotations

import html
import re
import shutil
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import SAMPLE, started_datasette

from archivist.archive.indexer import index_workspace
from archivist.queries.catalog import canned_queries
from archivist.queries.runner import Archive
from archivist.workspace import archive_path


def facet(page: str, name: str) -> dict[str, str]:
    """A facet group's values and the URL each links to."""
    found = re.search(rf'data-facet="{name}">(.*?)</section>', page, re.S)
    assert found, f"no {name} facet"
    return {
        html.unescape(value): html.unescape(href)
        for href, value in re.findall(r'<a href="([^"]+)" data-value="([^"]+)"', found[1])
    }


def hits(page: str) -> list[int]:
    return [int(value) for value in re.findall(r'class="archivist-hit" data-id="(\d+)"', page)]


def link(page: str, text: str) -> str:
    found = re.search(rf'<a [^>]*href="([^"]+)"[^>]*>{re.escape(text)}</a>', page)
    assert found, f"no link {text!r}"
    return html.unescape(found[1])


def params(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


async def api(datasette, url: str) -> dict:
    """The JSON of a state of the search page, from the page's own JSON link (/api/search)."""
    page = await datasette.client.get(url)
    assert page.status_code == 200, page.text
    json_url = link(page.text, "JSON")
    assert json_url.startswith("/api/search")
    response = await datasette.client.get(json_url)
    assert response.status_code == 200, response.text
    return response.json()


def document_id(workspace, path: str) -> int:
    with Archive.for_workspace(workspace) as archive:
        return archive.run("find_document", {"document": path})[0]["id"]


# --- home -----------------------------------------------------------------------------


async def test_the_home_page_shows_the_workspace_at_a_glance(sample_datasette):
    response = await sample_datasette.client.get("/")
    assert response.status_code == 200
    page = response.text
    counts = re.search(r'class="archivist-counts">(.*?)</section>', page, re.S)[1]
    rows = re.findall(r'<a href="([^"]+)">(\w[\w-]*)</a></td>(?:<td></td>)?<td class="n">(\d+)</td>', counts)
    by_name = {name: int(n) for _, name, n in rows}
    assert {k: by_name[k] for k in ("conversation", "memory", "record", "note", "report")} == {
        "conversation": 13,
        "memory": 13,
        "record": 18,
        "note": 5,
        "report": 6,
    }
    assert by_name["k8s-cluster-health"] == 2 and by_name["bug"] == 5
    # a type links to the search narrowed to it
    assert params(html.unescape(next(href for href, name, _ in rows if name == "bug"))) == {
        "entities": "record",
        "types": "bug",
    }
    # recent activity: newest first, then a bar per month
    recent = re.search(r'class="archivist-recent">(.*?)</ul>', page, re.S)[1]
    assert recent.index("Ingress-nginx default proxy-read-timeout") < recent.index(
        "Debugging 504s from the Kubernetes ingress"
    )
    assert re.findall(r'class="bar" href="[^"]+" title="[^"]*" data-period="([\d-]+)"', page) == [
        "2025-09",
        "2025-10",
        "2025-11",
        "2025-12",
    ]
    # embeddings: none yet
    assert "<strong>0%</strong> of documents embedded" in page and "0 of 55" in page
    # skipped files and why
    problems = re.search(r'class="archivist-problems">(.*?)</section>', page, re.S)[1]
    assert "notes/todo.md</td><td>skipped</td><td>empty file" in problems
    assert "notes/whiteboard-photo.png</td><td>skipped</td><td>unsupported file type (.png)" in problems


async def test_the_home_page_shows_embedding_coverage(embedded_datasette):
    page = (await embedded_datasette.client.get("/")).text
    assert "<strong>100%</strong> of documents embedded" in page and "55 of 55" in page


async def test_every_canned_query_is_linked_from_the_home_page_with_working_examples(embedded_datasette):
    page = (await embedded_datasette.client.get("/")).text
    links = {name: html.unescape(href) for href, name in re.findall(r'<a href="([^"]+)" data-query="(\w+)">', page)}
    assert set(links) == set(canned_queries())
    for name, href in links.items():
        assert href.startswith(f"/archive/{name}"), href
        response = await embedded_datasette.client.get(href)
        assert response.status_code == 200, (href, response.text[:500])
        path, _, query = href.partition("?")
        rows = (await embedded_datasette.client.get(f"{path}.json?{query}&_shape=array")).json()
        # (the sample workspace holds no agent log: tests/test_usage.py and tests/test_file_history.py read some)
        assert isinstance(rows, list) and (
            rows or name in ("usage", "file_history", "project_activity", "activity_periods")
        ), f"{href} returned no rows"
    # examples come from this archive, not from a fixed list
    assert params(links["list_command_reports"])["command"] in (
        "k8s-cluster-health",
        "proxy-slow-meeting-analysis-command",
        "analyze_zoom_speech_sdk_log",
    )


async def test_the_home_page_works_on_an_empty_archive(make_workspace, tmp_path):
    workspace = make_workspace({"notes/empty.md": ""})
    index_workspace(workspace)
    datasette = await started_datasette(archive_path(workspace))
    page = (await datasette.client.get("/")).text
    assert "notes/empty.md</td><td>skipped</td><td>empty file" in page
    assert (await datasette.client.get("/search")).status_code == 200


async def test_saved_query_links_work_when_the_archive_lacks_what_an_example_needs(make_workspace):
    # no conversations and no reports: those queries link to their empty forms
    workspace = make_workspace(
        {"memories/m.jsonl": '{"content": "Rotate the signing keys quarterly", "tags": ["ops"]}\n'}
    )
    index_workspace(workspace)
    datasette = await started_datasette(archive_path(workspace))
    page = (await datasette.client.get("/")).text
    links = {name: html.unescape(href) for href, name in re.findall(r'<a href="([^"]+)" data-query="(\w+)">', page)}
    assert set(links) == set(canned_queries())
    assert links["list_command_reports"] == "/archive/list_command_reports"
    assert params(links["search"]) == {"query": "quarterly"}  # its longest word; undated, so no month
    assert "<time>undated</time>" in page  # the recent list
    for href in links.values():
        assert (await datasette.client.get(href)).status_code == 200, href


# --- search -----------------------------------------------------------------------------


async def test_without_words_the_search_page_lists_everything_newest_first(sample_datasette, sample_archive):
    response = await sample_datasette.client.get("/search")
    assert response.status_code == 200
    newest = sample_archive.search({"mode": "recent"})
    assert hits(response.text) == [item["id"] for item in newest["results"]]
    assert "<strong>55</strong> results" in response.text


async def test_the_search_page_shows_what_the_api_returns_for_the_same_url(sample_datasette):
    url = "/search?query=proxy+timeout&mode=keyword"
    page = (await sample_datasette.client.get(url)).text
    expected = await api(sample_datasette, url)
    assert hits(page) == [item["id"] for item in expected["results"]]
    assert f"<strong>{expected['total']}</strong> results for <q>proxy timeout</q>" in page
    assert 'value="proxy timeout"' in page
    assert link(page, "JSON") == "/api/search?query=proxy+timeout&mode=keyword&output=full"
    assert link(page, "as a canned query") == "/archive/search?query=proxy+timeout&mode=keyword"
    assert "<mark>proxy</mark>" in page  # highlighted snippets


async def test_a_facet_click_narrows_and_its_chip_removes_it(sample_datasette):
    url = "/search?query=proxy&mode=keyword"
    page = (await sample_datasette.client.get(url)).text
    kinds = facet(page, "kind")
    assert set(kinds) == {"conversation", "memory", "note", "record", "report"}
    counts = dict(re.findall(r'data-value="(\w+)">\w+</a> <span class="count">(\d+)</span>', page))
    narrowed_url = kinds["memory"]
    assert params(narrowed_url) == {"query": "proxy", "mode": "keyword", "entities": "memory"}
    narrowed = (await sample_datasette.client.get(narrowed_url)).text
    found = await api(sample_datasette, narrowed_url)
    assert found["total"] == int(counts["memory"]) == len(hits(narrowed))
    assert {item["kind"] for item in found["results"]} == {"memory"}
    # the filter shows as a chip; its link takes the filter off again
    assert params(link(narrowed, "kind: memory ✕")) == {"query": "proxy", "mode": "keyword"}
    # a selected facet value links back to the wider search too
    assert params(facet(narrowed, "kind")["memory"]) == {"query": "proxy", "mode": "keyword"}


async def test_month_then_day_facets_and_the_timeline(sample_datasette):
    page = (await sample_datasette.client.get("/search?query=authentication&mode=keyword")).text
    assert "Matches per month" in page
    month_url = facet(page, "month")["2025-11"]
    assert params(month_url)["start_date"] == params(month_url)["end_date"] == "2025-11"
    in_month = (await sample_datasette.client.get(month_url)).text
    days = facet(in_month, "day")
    assert "2025-11-10" in days and "month" not in re.findall(r'data-facet="(\w+)"', in_month)
    assert "Matches per day" in in_month
    bars = dict(re.findall(r'data-period="([\d-]+)"><span class="n">(\d+)</span>', in_month))
    assert bars["2025-11-10"] == "2"
    day = await api(sample_datasette, days["2025-11-10"])
    assert day["total"] == 2 and {item["date"] for item in day["results"]} == {"2025-11-10"}
    # a timeline bar narrows the same way
    bar_url = html.unescape(re.search(r'href="([^"]+)" title="2025-11-10: 2"', in_month)[1])
    assert params(bar_url) == params(days["2025-11-10"])


async def test_tag_facets_narrow_to_documents_with_every_chosen_tag(sample_datasette):
    page = (await sample_datasette.client.get("/search")).text
    kubernetes_url = facet(page, "tags")["kubernetes"]
    kubernetes = (await sample_datasette.client.get(kubernetes_url)).text
    both_url = facet(kubernetes, "tags")["ops"]
    assert params(both_url) == {"tags": "kubernetes,ops", "match_all": "true"}
    found = await api(sample_datasette, both_url)
    assert found["total"] == 2
    assert all({"kubernetes", "ops"} <= set(item["tags"]) for item in found["results"])


async def test_the_product_facet_names_products(sample_datasette):
    page = (await sample_datasette.client.get("/search?query=proxy&mode=keyword")).text
    assert re.search(r'data-value="601">Meeting Rooms</a>', page)
    narrowed = await api(sample_datasette, facet(page, "product")["601"])
    assert {item["product_id"] for item in narrowed["results"]} == {601}


@pytest.mark.parametrize(
    "start, end, dates",
    [
        ("2025-11-10", "2025-11-10", {"2025-11-10"}),
        ("2025-12", "", {"2025-12", "2025-12-01", "2025-12-02", "2025-12-03", "2025-12-04"}),
        ("december 2025", "2025-12-31", {"2025-12", "2025-12-01", "2025-12-02", "2025-12-03", "2025-12-04"}),
    ],
)
async def test_the_date_filter_takes_months_days_and_natural_language(sample_datasette, start, end, dates):
    response = await sample_datasette.client.get("/search", params={"start_date": start, "end_date": end})
    assert response.status_code == 200, response.text
    found = await api(sample_datasette, "/search?" + urlsplit(str(response.url)).query)
    assert {item["date"] for item in found["results"]} == dates
    assert f'name="start_date" value="{start}"' in response.text


async def test_bad_input_shows_the_error_and_keeps_the_form(sample_datasette):
    response = await sample_datasette.client.get("/search?query=auth&start_date=2025-13")
    assert response.status_code == 400
    assert 'data-code="INVALID_DATE"' in response.text and "2025-13" in response.text
    assert 'value="auth"' in response.text and 'name="start_date" value="2025-13"' in response.text
    short = await sample_datasette.client.get("/search?query=x")
    assert short.status_code == 400 and "too short" in short.text
    unknown = await sample_datasette.client.get("/search?query=auth&colour=red")
    assert unknown.status_code == 400 and "colour" in unknown.text


async def test_pages_of_results(sample_datasette):
    first = (await sample_datasette.client.get("/search?page_size=5")).text
    assert len(hits(first)) == 5 and "page 1 of 11" in first
    second_url = link(first, "Next →")
    assert params(second_url) == {"page_size": "5", "page": "2"}
    second = (await sample_datasette.client.get(second_url)).text
    assert len(hits(second)) == 5 and not set(hits(first)) & set(hits(second))
    assert '<ol class="archivist-hits" start="6">' in second
    assert params(link(second, "← Previous")) == {"page_size": "5"}
    assert params(link(second, "11")) == {"page_size": "5", "page": "11"}
    # a facet click starts again at page 1
    assert "page" not in params(facet(second, "kind")["memory"])
    beyond = (await sample_datasette.client.get("/search?page_size=5&page=40")).text
    assert "No results on page 40: there are 11 pages." in beyond
    assert params(link(beyond, "Go to the last page")) == {"page_size": "5", "page": "11"}


async def test_a_new_search_from_a_list_by_another_mode_ranks_words(sample_datasette):
    page = (await sample_datasette.client.get("/search?mode=recent&start_date=2025-11&end_date=2025-11")).text
    form = page.split('class="archivist-search-form"', 1)[1].split("</form>", 1)[0]
    assert '<input type="radio" name="mode" value="hybrid" checked>' in form
    assert 'name="mode" value="recent"' not in form  # a submit sends one mode
    assert '<input type="hidden" name="start_date"' not in form and 'name="start_date" value="2025-11"' in form
    similar = (await sample_datasette.client.get("/search?mode=similar&document=6")).text
    assert params(link(similar, "Clear all filters")) == {}
    assert params(link(similar, "keyword")) == {"mode": "keyword"}  # the document goes with the similar mode


async def test_the_mode_switch(embedded_datasette):
    page = (await embedded_datasette.client.get("/search?query=authentication+patterns&mode=semantic")).text
    assert '<input type="radio" name="mode" value="semantic" checked>' in page
    assert params(link(page, "keyword")) == {"query": "authentication patterns", "mode": "keyword"}
    assert params(link(page, "hybrid")) == {"query": "authentication patterns"}  # the default
    found = await api(embedded_datasette, "/search?query=authentication+patterns&mode=semantic")
    assert hits(page) == [item["id"] for item in found["results"]] and found["results"][0]["score"] > 0.3


async def test_the_pages_load_nothing_from_elsewhere(embedded_datasette, embedded_sample):
    jwt = document_id(embedded_sample, "conversations/2025-11-10/002-debug-auth")
    for url in ("/", "/search?query=proxy", f"/document/{jwt}"):
        page = (await embedded_datasette.client.get(url)).text
        loaded = re.findall(r'<(?:script|img|iframe)[^>]* src="([^"]*)"', page) + re.findall(
            r'<link[^>]* href="([^"]*)"', page
        )
        assert loaded, url
        assert all(item.startswith("/") and not item.startswith("//") for item in loaded), (url, loaded)


# --- documents ---------------------------------------------------------------------------


async def test_a_document_page_renders_its_markdown_metadata_and_file(sample_datasette, sample_workspace):
    jwt = document_id(sample_workspace, "conversations/2025-11-10/002-debug-auth")
    page = (await sample_datasette.client.get(f"/document/{jwt}")).text
    assert "<h1>Debugging intermittent JWT authentication failures</h1>" in page
    assert "<h2>User</h2>" in page and "<code>401 invalid_token</code>" in page  # rendered markdown
    assert "<dt>Type</dt>" in page and ">debug</a>" in page and "<time>2025-11-10</time>" in page
    source = link(page, "conversations/2025-11-10/002-debug-auth/conversation.md")
    served = await sample_datasette.client.get(source)
    assert served.status_code == 200 and served.headers["content-type"].startswith("text/plain")
    assert served.text == (sample_workspace / "conversations/2025-11-10/002-debug-auth/conversation.md").read_text()
    # memories show their tags, linked to the search by tag
    memory = document_id(sample_workspace, "memories/decisions/use-sqlite-archive.md")
    memory_page = (await sample_datasette.client.get(f"/document/{memory}")).text
    assert params(link(memory_page, "#sqlite")) == {"tags": "sqlite"}


async def test_a_document_page_shows_raw_html_as_text(make_workspace):
    workspace = make_workspace(
        {
            "notes/evil.md": "# Evil\n\n<script>alert('x')</script>\n\n<img src=x onerror=alert(1)>\n\n"
            "[click me](javascript:alert(1)) and [fine](https://example.com)\n\n![pixel](https://tracker.example/p.png)\n",
        }
    )
    index_workspace(workspace)
    datasette = await started_datasette(archive_path(workspace))
    page = (await datasette.client.get(f"/document/{document_id(workspace, 'notes/evil.md')}")).text
    body = page.split('class="archivist-body">', 1)[1].split("</article>", 1)[0]
    assert (
        "<script" not in body
        and "<img" not in body
        and "onerror=alert" not in body.replace("&lt;img src=x onerror=alert(1)&gt;", "")
    )
    assert "&lt;script&gt;" in body and "&lt;img src=x onerror=alert(1)&gt;" in body  # shown, as text
    assert 'href="javascript' not in body
    assert '<a href="https://example.com">fine</a>' in body
    # an image is a link to it, not loaded by the page
    assert '<a class="archivist-image" href="https://tracker.example/p.png">[image: pixel]</a>' in body


async def test_a_document_serves_only_its_own_files(sample_datasette, sample_workspace):
    jwt = document_id(sample_workspace, "conversations/2025-11-10/002-debug-auth")
    for bad in ("../../../etc/passwd", "README.md", "conversations/2025-11-10/001-brainstorm-feature/01-user.md"):
        response = await sample_datasette.client.get(f"/document/{jwt}/source", params={"file": bad})
        assert response.status_code == 400 and "conversation.md" in response.text
    brainstorm = document_id(sample_workspace, "conversations/2025-11-10/001-brainstorm-feature")
    page = (await sample_datasette.client.get(f"/document/{brainstorm}")).text
    for name in ("01-user.md", "02-assistant.md"):  # a folder conversation links each of its files
        response = await sample_datasette.client.get(
            link(page, f"conversations/2025-11-10/001-brainstorm-feature/{name}")
        )
        assert response.status_code == 200 and response.text
    assert (await sample_datasette.client.get(f"/document/{brainstorm}/source")).status_code == 400  # which file?
    by_path = await sample_datasette.client.get("/document/notes%2Fideas.txt")  # an id or a path
    assert by_path.status_code == 200 and "<h1>Ideas</h1>" in by_path.text
    missing = await sample_datasette.client.get("/document/99999")
    assert missing.status_code == 404 and "Document not found" in missing.text
    assert (await sample_datasette.client.get("/document/99999/source")).status_code == 404


async def test_a_document_page_lists_similar_and_nearby_documents(embedded_datasette, embedded_sample):
    jwt = document_id(embedded_sample, "conversations/2025-11-10/002-debug-auth")
    page = (await embedded_datasette.client.get(f"/document/{jwt}")).text
    similar = re.search(r'<ol class="archivist-similar">(.*?)</ol>', page, re.S)[1]
    with Archive.for_workspace(embedded_sample) as archive:
        expected = archive.run("similar", {"document": str(jwt), "limit": "8"})
    listed = re.findall(
        r'<span class="score" title="cosine similarity">([\d.]+)</span> <a href="/document/(\d+)">', similar
    )
    assert [(float(score), int(i)) for score, i in listed] == [(round(row["score"], 3), row["id"]) for row in expected]
    assert params(link(page, "More similar documents")) == {"mode": "similar", "document": str(jwt)}
    # the same day, and the same type of conversation
    assert "<h2>More from 2025-11-10</h2>" in page and "Brainstorm: &#34;Recent workspaces&#34; panel" in page
    assert "<h2>More debug conversations</h2>" in page
    # "All N" links the search that lists them, this document among them
    all_day = html.unescape(re.search(r'<a href="([^"]+)">All (\d+)</a>', page)[1])
    day = await api(embedded_datasette, all_day)
    assert params(all_day) == {"start_date": "2025-11-10", "end_date": "2025-11-10"}
    assert f">All {day['total']}</a>" in page and jwt in [item["id"] for item in day["results"]]
    report = document_id(embedded_sample, "reports/k8s-cluster-health/cluster_health_2025_11_15.md")
    report_page = (await embedded_datasette.client.get(f"/document/{report}")).text
    assert "<h2>More from the command k8s-cluster-health</h2>" in report_page
    assert "Baseline cluster metrics (reference)" in report_page
    assert link(report_page, "reports of this command") == "/archive/list_command_reports?command=k8s-cluster-health"
    with Archive.for_workspace(embedded_sample) as archive:
        bugs = archive.search({"mode": "recent", "entities": "bug", "page_size": 100})["results"]
    bug = next(item["id"] for item in bugs if item["entity_id"] == "4431")
    bug_page = (await embedded_datasette.client.get(f"/document/{bug}")).text
    assert "Proxy timeout on join from room controller" in bug_page
    assert "<h2>More for the product Meeting Rooms</h2>" in bug_page


async def test_the_documents_row_page_links_to_the_document_page(sample_datasette, sample_workspace):
    jwt = document_id(sample_workspace, "conversations/2025-11-10/002-debug-auth")
    page = (await sample_datasette.client.get(f"/archive/documents/{jwt}")).text
    assert link(page, "Open the document page") == f"/document/{jwt}"


def test_the_sample_workspace_has_the_files_the_home_page_reports_as_skipped():
    assert (SAMPLE / "notes" / "todo.md").read_bytes() == b""
    assert (SAMPLE / "notes" / "whiteboard-photo.png").read_bytes().startswith(b"\x89PNG")


# --- the queries behind the home page ---------------------------------------------------


def test_activity_counts_dated_documents_per_month_or_day(sample_archive):
    months = sample_archive.run("activity", {"by": "month"})
    assert sum(row["documents"] for row in months) == 45  # 55 less 10 undated
    assert {(row["period"], row["documents"]) for row in months if row["kind"] == "conversation"} == {
        ("2025-10", 2),
        ("2025-11", 8),
        ("2025-12", 3),
    }
    days = sample_archive.run("activity", {"by": "day", "kind": "conversation"})
    assert {row["kind"] for row in days} == {"conversation"}
    assert sum(row["documents"] for row in days) == 9  # four conversations are dated by month only
    assert ("2025-11-10", 2) in {(row["period"], row["documents"]) for row in days}


async def test_embedding_status_counts_changed_documents_as_pending(embedded_sample, tmp_path):
    workspace = tmp_path / "sample"
    shutil.copytree(embedded_sample, workspace)
    note = workspace / "notes" / "ideas.txt"
    note.write_text(note.read_text() + "\nOne more idea.\n")
    (workspace / "notes" / "team-handbook.md").unlink()
    index_workspace(workspace)
    with Archive.for_workspace(workspace) as archive:
        (status,) = archive.run("embedding_status")
    assert (status["num_documents"], status["pending"]) == (55, 1)  # the vector of a removed note is kept until embed
    # the home page counts what is embedded as it is now: 53 of 54
    datasette = await started_datasette(archive_path(workspace))
    page = (await datasette.client.get("/")).text
    assert "<strong>98%</strong> of documents embedded" in page and "53 of 54" in page


async def test_a_query_past_the_sql_time_limit_is_explained_without_its_sql(sample_datasette):
    from archivist.web.app import query_failure

    # a real interrupted query (it never ends: only the time limit stops it);
    # Datasette answers with HTML that holds the SQL
    slow = "with recursive n(i) as (select 1 union all select i + 1 from n) select count(*) from n"
    response = await sample_datasette.client.get("/archive.json", params={"sql": slow, "_shape": "array"})
    assert response.status_code == 400 and "took too long" in response.json()["error"]
    failure = query_failure(sample_datasette, response.json())
    assert failure.message.startswith("❌ The search took too long")
    assert "1000 ms" in failure.message and "recursive" not in failure.message and "<" not in failure.message
