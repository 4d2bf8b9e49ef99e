"""Running a server as a deployment does: what it prints (its URL, warnings and errors; with -v,
one line per request), and the Datasette configuration folder it serves with (the repository's
top level: metadata.yml, datasette.yaml, templates/, plugins/) over the package's defaults."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml
from click.testing import CliRunner
from conftest import ROOT, free_port
from test_mcp import Running, launcher, wait_for

from archivist.cli import cli
from archivist.workspace import archive_path

PACKAGE_METADATA = ROOT / "archivist" / "web" / "metadata.yml"
REQUEST_LINE = r"(GET|POST) (\S+) (\d{3}) \d+ ms"


@pytest.fixture
def launched(tmp_path):
    with launcher(tmp_path) as start:
        yield start


def stopped(server: Running) -> list[str]:
    """What the server printed, once it has stopped as Ctrl-C stops it (requests in flight finish first)."""
    server.process.terminate()
    server.process.wait(timeout=30)
    return server.output().splitlines()


def request_lines(lines: list[str]) -> list[tuple[str, str, str]]:
    return [found.groups() for line in lines if (found := re.fullmatch(REQUEST_LINE, line))]


# --- what a running server prints --------------------------------------------------------


def test_serve_prints_its_url_and_only_with_v_one_line_per_request(launched, sample_workspace):
    quiet = launched("serve", str(sample_workspace), "--no-index")
    told = launched("-v", "serve", str(sample_workspace), "--no-index")
    for server in (quiet, told):
        token = server.token
        assert httpx.get(f"{server.base}/?token={token}").status_code == 200  # the home page: eight requests inside
        for path in ("/search?query=proxy&mode=keyword", "/archive/documents.json?_size=1", "/nope"):
            httpx.get(server.base + path, headers=server.headers)
        assert httpx.get(server.base + "/").status_code == 401
    url = f"Serving {sample_workspace} at http://127.0.0.1:{quiet.port}/?token={quiet.token}"
    assert stopped(quiet) == [url, "(a new token at each start: set ARCHIVIST_TOKEN to keep one)"]
    lines = stopped(told)
    assert lines[:2] == [
        f"Serving {sample_workspace} at http://127.0.0.1:{told.port}/?token={told.token}",
        "(a new token at each start: set ARCHIVIST_TOKEN to keep one)",
    ]
    assert request_lines(lines) == [
        ("GET", "/?token=…", "200"),  # the token is not printed again
        ("GET", "/search?query=proxy&mode=keyword", "200"),
        ("GET", "/archive/documents.json?_size=1", "200"),
        ("GET", "/nope", "404"),
        ("GET", "/", "401"),
    ]
    assert len(lines) == 2 + 5, lines


def test_mcp_http_prints_its_url_and_only_with_v_one_line_per_request(launched, sample_workspace):
    quiet = launched("mcp", str(sample_workspace), "--http")
    told = launched("-v", "mcp", str(sample_workspace), "--http")
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
    }
    accept = {"accept": "application/json, text/event-stream"}
    for server in (quiet, told):
        answered = httpx.post(f"{server.base}/mcp", json=initialize, headers={**accept, **server.headers}, timeout=60)
        assert answered.status_code == 200
        assert httpx.post(f"{server.base}/mcp", json=initialize, headers=accept).status_code == 401
    for server, requests in ((quiet, []), (told, [("POST", "/mcp", "200"), ("POST", "/mcp", "401")])):
        token = server.token
        lines = stopped(server)
        assert lines[:3] == [
            f"MCP (streamable HTTP) for {sample_workspace} at http://127.0.0.1:{server.port}/mcp",
            f"Send the header Authorization: Bearer {token}",
            "(a new token at each start: set ARCHIVIST_TOKEN to keep one)",
        ]
        assert request_lines(lines) == requests and len(lines) == 3 + len(requests), lines


# --- the package's metadata and the site's ------------------------------------------------


def leaves(tree: object, path: tuple = ()) -> dict[tuple, object]:
    """Every value of a metadata tree that is no object, by its path (a list's items by their place)."""
    if isinstance(tree, dict):
        return {found: value for key, child in tree.items() for found, value in leaves(child, (*path, key)).items()}
    if isinstance(tree, list):
        return {found: value for i, child in enumerate(tree) for found, value in leaves(child, (*path, i)).items()}
    return {path: tree}


def test_the_site_says_what_only_a_site_says_and_restates_nothing_of_the_package():
    package = yaml.safe_load(PACKAGE_METADATA.read_text(encoding="utf-8"))
    site = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
    site_facts = {"title", "description", "description_html", "license", "license_url", "source", "source_url"}
    assert {"title", "description_html", "license", "source"} <= set(site)
    assert not site_facts & set(package), "a site's title, description, licence and source are the site's own"
    package_leaves, site_leaves = leaves(package), leaves(site)
    restated = {path for path, value in site_leaves.items() if package_leaves.get(path) == value}
    assert not restated, f"the site's metadata.yml restates the package's: {restated}"
    texts = {value for value in package_leaves.values() if isinstance(value, str) and len(value) > 20}
    copied = {value for value in site_leaves.values() if value in texts}
    assert not copied, f"written in both metadata files: {copied}"


def test_the_site_settings_change_what_they_name():
    from datasette.app import DEFAULT_SETTINGS

    from archivist.queries.runner import TIME_LIMIT_MS

    settings = yaml.safe_load((ROOT / "datasette.yaml").read_text(encoding="utf-8"))["settings"]
    defaults = {**DEFAULT_SETTINGS, "sql_time_limit_ms": TIME_LIMIT_MS}  # Datasette's, and archivist serve's
    assert set(settings) <= set(DEFAULT_SETTINGS)
    assert not {name for name, value in settings.items() if defaults[name] == value}


def test_the_site_folders_hold_only_what_the_site_changes():
    import datasette

    package = ROOT / "archivist" / "web" / "templates"
    datasettes = Path(datasette.__file__).parent / "templates"
    for folder in ("templates", "plugins"):
        files = sorted(path.name for path in (ROOT / folder).iterdir())
        assert "README.md" in files, f"{folder}/ says what goes there"
    for template in (ROOT / "templates").glob("*.html"):
        for original in (package / template.name, datasettes / template.name):
            assert not original.is_file() or original.read_bytes() != template.read_bytes(), f"{template} is a copy"


async def test_the_package_describes_every_table_and_column_that_datasette_shows(sample_datasette):
    described = yaml.safe_load(PACKAGE_METADATA.read_text(encoding="utf-8"))["databases"]["archive"]["tables"]
    shown = (await sample_datasette.client.get("/archive.json")).json()
    columns = {table["name"]: table["columns"] for table in shown["tables"] if not table["hidden"]}
    for view in shown["views"]:
        found = await sample_datasette.client.get(f"/archive/{view['name']}.json", params={"_size": "0"})
        columns[view["name"]] = found.json()["columns"]
    undescribed = {
        f"{table}.{column}"
        for table, names in columns.items()
        for column in names
        if column not in (described.get(table, {}).get("columns") or {})
    }
    assert not undescribed
    assert all(described[table].get("description") for table in columns)
    hidden = {table["name"] for table in shown["tables"] if table["hidden"]}
    replicated = {name for name in described if name.startswith("_litestream_")}  # (Litestream's, where it ran)
    assert set(described) - replicated <= set(columns) | hidden, "a description of a table the archive lacks"
    assert all(described[name] == {"hidden": True} for name in replicated)
    assert all(
        set(options.get("columns") or ()) <= set(columns[table])
        for table, options in described.items()
        if table in columns
    ), "a description of a column the archive lacks"


# --- serving with a configuration folder -----------------------------------------------------

SITE_PLUGIN = """
from datasette import hookimpl
from datasette.utils.asgi import Response


@hookimpl
def register_routes():
    return [(r"^/-/site-plugin$", lambda: Response.text("the site's own plugin"))]
"""


def test_a_config_dir_serves_its_templates_plugins_settings_and_metadata_over_the_packages(
    launched, sample_workspace, tmp_path
):
    site = tmp_path / "site"
    (site / "templates").mkdir(parents=True)
    home = (ROOT / "archivist" / "web" / "templates" / "archivist_home.html").read_text(encoding="utf-8")
    marked = home.replace("{% block content %}", '{% block content %}<p id="site-marker">Our own home</p>')
    assert marked != home
    (site / "templates" / "archivist_home.html").write_text(marked, encoding="utf-8")
    (site / "plugins").mkdir()
    (site / "plugins" / "site_plugin.py").write_text(SITE_PLUGIN, encoding="utf-8")
    metadata = {"title": "A site of its own", "databases": {"archive": {"tables": {"files": {"description": "Ours."}}}}}
    (site / "metadata.yml").write_text(yaml.safe_dump(metadata), encoding="utf-8")
    (site / "datasette.yaml").write_text("settings:\n  default_page_size: 7\n", encoding="utf-8")

    server = launched("serve", str(sample_workspace), "--no-index", "--config-dir", str(site))
    with httpx.Client(base_url=server.base, headers=server.headers) as client:
        page = client.get("/").text
        assert '<p id="site-marker">Our own home</p>' in page  # its template, before the package's
        assert "<h1>A site of its own</h1>" in page and "archivist-search-form" in page
        assert client.get("/-/site-plugin").text == "the site's own plugin"
        settings = client.get("/-/settings.json").json()
        assert (settings["default_page_size"], settings["sql_time_limit_ms"]) == (7, 1000)
        assert "Ours." in client.get("/archive/files").text  # its description wins
        documents = client.get("/archive/documents").text
        assert "Every document of the workspace" in documents and "Its number; /document/" in documents  # the package's


def test_the_repository_top_level_is_the_sites_configuration_for_archivist_serve_and_plain_datasette(
    launched, sample_workspace, tmp_path
):
    title = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))["title"]
    served = launched("serve", str(sample_workspace), "--no-index", "--config-dir", str(ROOT))
    home = httpx.get(served.base + "/", headers=served.headers).text
    assert f"<h1>{title}</h1>" in home and f"<title>{title}</title>" in home
    assert "Data license:" in home and "archivist-search-form" in home

    port, log = free_port(), tmp_path / "datasette.log"
    datasette = str(Path(sys.executable).parent / "datasette")
    command = [datasette, str(archive_path(sample_workspace)), "-m", "metadata.yml"]
    command += ["--template-dir", "templates", "--plugins-dir", "plugins", "-p", str(port)]
    with log.open("wb") as output:
        process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT)
    try:
        wait_for(port, process)
        home = httpx.get(f"http://127.0.0.1:{port}/").text
        assert f"<h1>{title}</h1>" in home and "archivist-search-form" in home
        documents = httpx.get(f"http://127.0.0.1:{port}/archive/documents").text
        assert "Every document of the workspace" in documents
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_serve_refuses_a_config_dir_that_is_not_a_folder_or_names_no_setting(sample_workspace, tmp_path):
    runner = CliRunner()
    missing = runner.invoke(cli, ["serve", str(sample_workspace), "--no-index", "--config-dir", str(tmp_path / "no")])
    assert missing.exit_code == 1 and "[DIRECTORY_NOT_FOUND]" in missing.stderr, missing.output
    site = tmp_path / "site"
    site.mkdir()
    (site / "datasette.yaml").write_text("settings:\n  page_size_of_dreams: 7\n", encoding="utf-8")
    wrong = runner.invoke(cli, ["serve", str(sample_workspace), "--no-index", "--config-dir", str(site)])
    assert wrong.exit_code == 1 and "page_size_of_dreams" in wrong.stderr and "[INVALID_PARAMETER]" in wrong.stderr
