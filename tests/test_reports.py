"""Seed 001: search_reports and its companions, list_command_reports, get_report and search_commands."""

import urllib.parse

import pytest
from conftest import started_datasette

from archivist.archive.indexer import index_workspace
from archivist.errors import ArchivistError
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

ZOOM = "Zoom_Speech_SDK_日志分析报告_20251120_decode_response_v6.md"
PROXY = "proxy-slow-meeting-analysis-command_报告_20251201_172952_v1.md"
FILES = {
    f"reports/analyze_zoom_speech_sdk_log/{ZOOM}": (
        "# 日志分析\n\nWe are analyzing decode response timing. Token validation shows the decode "
        "response arrives late. Decode Response again.\n"
    ),
    "reports/analyze_zoom_speech_sdk_log/older_2025-11-01.md": "# Older\n\nOne decode response here.\n",
    "reports/analyze_zoom_speech_sdk_log/undated.md": "# Undated\n\nOne decode response, no date.\n",
    f"reports/proxy-slow-meeting-analysis-command/{PROXY}": (
        "# Proxy\n\n" + "x" * 300 + " detected proxy timeout issue during meeting join. The WinHTTP call "
        "hit another PROXY TIMEOUT. " + "y" * 300 + "\n"
    ),
    "reports/proxy-slow-meeting-analysis-command/review_2025_11_28.md": "# PAC\n\none proxy timeout\n",
    "reports/k8s/health_20251115.md": "# Health\n\na proxy timeout in ingress; decode response unrelated\n",
    "conversations/2025-11-10/001-x/c.md": "proxy timeout in a conversation is not a report",
}


def test_search_all_reports_ranks_by_match_count_then_newer_date(archive, workspace):
    rows = archive.run("search_reports", {"query": "proxy timeout"})
    assert [(r["report_name"], r["match_count"]) for r in rows] == [
        (PROXY, 2),
        ("review_2025_11_28.md", 1),
        ("health_20251115.md", 1),
    ]
    first = rows[0]
    path = f"{workspace.resolve()}/reports/proxy-slow-meeting-analysis-command/{PROXY}"
    assert first == {
        "report_name": PROXY,
        "command_name": "proxy-slow-meeting-analysis-command",
        "date": "2025-12-01T00:00:00.000Z",
        "excerpt": first["excerpt"],
        "link": "file://" + urllib.parse.quote(path),
        "path": path,
        "match_count": 2,
    }
    assert first["excerpt"].startswith("...") and first["excerpt"].endswith("...")
    assert "detected proxy timeout issue during meeting join. The WinHTTP call" in first["excerpt"]
    assert 200 <= len(first["excerpt"]) <= 240


def test_search_within_one_command(archive):
    rows = archive.run("search_reports", {"query": "decode response", "command_filter": "analyze_zoom_speech_sdk_log"})
    assert [(r["report_name"], r["date"], r["match_count"]) for r in rows] == [
        (ZOOM, "2025-11-20T00:00:00.000Z", 3),
        ("older_2025-11-01.md", "2025-11-01T00:00:00.000Z", 1),
        ("undated.md", None, 1),
    ]
    assert "analyzing decode response timing. Token validation shows" in rows[0]["excerpt"]


def test_matching_is_case_insensitive_substring_including_cjk_and_short_queries(archive):
    assert [r["report_name"] for r in archive.run("search_reports", {"query": "DECODE RESP"})][:1] == [ZOOM]
    assert [r["report_name"] for r in archive.run("search_reports", {"query": "日志"})] == [ZOOM]
    assert [r["report_name"] for r in archive.run("search_reports", {"query": "ti"})]  # two characters


def test_max_results_defaults_to_10_and_accepts_1_to_100(archive):
    assert len(archive.run("search_reports", {"query": "on"})) == 5
    assert len(archive.run("search_reports", {"query": "on", "max_results": 2})) == 2
    for bad in (0, 101, "ten"):
        with pytest.raises(ArchivistError) as error:
            archive.run("search_reports", {"query": "proxy", "max_results": bad})
        assert error.value.code == "INVALID_PARAMETER"


@pytest.mark.parametrize("bad", ["../etc", "a/b", "..", "x;drop", ""])
def test_a_command_filter_must_be_a_plain_name(archive, bad):
    if bad == "":
        assert archive.run("search_reports", {"query": "proxy", "command_filter": bad})
        return
    with pytest.raises(ArchivistError) as error:
        archive.run("search_reports", {"query": "proxy", "command_filter": bad})
    assert error.value.code == "INVALID_COMMAND_FILTER"


def test_an_unknown_command_is_directory_not_found(archive):
    with pytest.raises(ArchivistError) as error:
        archive.run("search_reports", {"query": "proxy", "command_filter": "no_such_command"})
    assert error.value.code == "DIRECTORY_NOT_FOUND"
    assert "analyze_zoom_speech_sdk_log" in error.value.message


def test_an_empty_query_is_invalid(archive):
    with pytest.raises(ArchivistError) as error:
        archive.run("search_reports", {"query": ""})
    assert error.value.code == "INVALID_QUERY"


def test_links_use_the_configured_base_url(workspace):
    configured = Archive(archive_path(workspace), settings={"report_link_base_url": "https://reports.example.com/"})
    rows = configured.run(
        "search_reports", {"query": "decode response", "command_filter": "analyze_zoom_speech_sdk_log"}
    )
    assert rows[0]["link"] == "https://reports.example.com/analyze_zoom_speech_sdk_log/" + urllib.parse.quote(ZOOM)


async def test_links_use_the_plugin_setting_in_datasette(workspace):
    datasette = await started_datasette(archive_path(workspace), {"report_link_base_url": "https://r.example"})
    response = await datasette.client.get("/archive/search_reports.json?query=one+proxy&_shape=array")
    assert response.json()[0]["link"] == "https://r.example/proxy-slow-meeting-analysis-command/review_2025_11_28.md"


async def test_the_environment_sets_the_base_url_for_every_surface_and_the_plugin_setting_wins(workspace, monkeypatch):
    monkeypatch.setenv("ARCHIVIST_REPORT_LINK_BASE_URL", "https://env.example")
    link = "/proxy-slow-meeting-analysis-command/review_2025_11_28.md"
    with Archive(archive_path(workspace)) as archive:  # the CLI and MCP
        assert archive.run("search_reports", {"query": "one proxy"})[0]["link"] == "https://env.example" + link
    served = await started_datasette(archive_path(workspace), {"workspace": str(workspace)})
    response = await served.client.get("/archive/search_reports.json?query=one+proxy&_shape=array")
    assert response.json()[0]["link"] == "https://env.example" + link
    configured = await started_datasette(archive_path(workspace), {"report_link_base_url": "https://r.example"})
    response = await configured.client.get("/archive/search_reports.json?query=one+proxy&_shape=array")
    assert response.json()[0]["link"] == "https://r.example" + link


def test_list_command_reports_is_newest_first_with_undated_last(archive):
    rows = archive.run("list_command_reports", {"command": "analyze_zoom_speech_sdk_log"})
    assert [r["report_name"] for r in rows] == [ZOOM, "older_2025-11-01.md", "undated.md"]
    with pytest.raises(ArchivistError) as error:
        archive.run("list_command_reports", {"command": "nope"})
    assert error.value.code == "DIRECTORY_NOT_FOUND"


def test_get_report_by_relative_or_absolute_path(archive, workspace):
    relative = "reports/k8s/health_20251115.md"
    by_relative = archive.run("get_report", {"path": relative})
    by_absolute = archive.run("get_report", {"path": f"{workspace.resolve()}/{relative}"})
    assert by_relative == by_absolute
    assert by_relative[0]["content"] == "# Health\n\na proxy timeout in ingress; decode response unrelated"


@pytest.mark.parametrize(
    "path", ["reports/k8s/missing.md", "../outside.md", "/etc/passwd", "conversations/2025-11-10/001-x"]
)
def test_get_report_refuses_anything_but_an_indexed_report(archive, path):
    with pytest.raises(ArchivistError) as error:
        archive.run("get_report", {"path": path})
    assert error.value.code == "PATH_NOT_FOUND"


def test_search_commands_matches_names_and_contents(archive):
    rows = archive.run("search_commands", {"query": "proxy"})
    assert [(r["command_name"], r["name_matches"], r["matching_reports"]) for r in rows] == [
        ("proxy-slow-meeting-analysis-command", 1, 2),
        ("k8s", 0, 1),
    ]
    assert archive.run("search_commands", {"query": "zzzz"}) == []


async def test_every_report_query_answers_as_a_page_and_as_json(workspace):
    datasette = await started_datasette(archive_path(workspace))
    urls = [
        "/archive/search_reports?query=proxy",
        "/archive/list_commands",
        "/archive/list_command_reports?command=k8s",
        "/archive/get_report?path=reports/k8s/health_20251115.md",
        "/archive/search_commands?query=proxy",
    ]
    for url in urls:
        page = await datasette.client.get(url)
        assert page.status_code == 200, url
        data = await datasette.client.get(url.replace("?", ".json?", 1) if "?" in url else url + ".json")
        assert data.status_code == 200 and data.json()["ok"] is True and data.json()["rows"], url
    error = await datasette.client.get("/archive/search_reports.json?query=proxy&command_filter=../x")
    assert error.status_code == 400
    assert error.json()["code"] == "INVALID_COMMAND_FILTER"
    page = await datasette.client.get("/archive/get_report?path=../../etc/passwd")
    assert page.status_code == 400 and "Path not found" in page.text


def test_a_workspace_without_reports_says_so(make_workspace):
    workspace = make_workspace({"notes/a.md": "proxy timeout"})
    index_workspace(workspace)
    with Archive.for_workspace(workspace) as archive:
        for name in ("search_reports", "search_commands"):
            with pytest.raises(ArchivistError) as error:
                archive.run(name, {"query": "proxy"})
            assert error.value.code == "DIRECTORY_NOT_FOUND"
            assert "reports/<command_name>/" in error.value.message
