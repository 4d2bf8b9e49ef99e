"""The package as a user gets it: a wheel built from the repository, installed (not editable)
into a fresh virtual environment, and every command of docs/configuration.md run from a folder outside
the clone, on a copy of the bundled sample workspace.

The fresh environment reuses the dependencies already installed for the tests (a ``.pth``
file adds their site-packages folder to its path; the ``.pth`` files in that folder are not
processed, so the repository's editable install does not leak in): nothing is downloaded.
While the installed commands run, an audit hook records every file or folder they open
inside the repository, apart from the dependencies' folder: there must be none.
"""

from __future__ import annotations

import configparser
import contextlib
import json
import os
import queue
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import sysconfig
import threading
import time
import tomllib
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, SAMPLE

# The dependencies' folders, as this interpreter (the project's environment) has them.
DEPENDENCIES = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})

# Installed in the fresh environment: records reads inside the repository (see the module's docstring).
REPO_READS = """
import os
import sys

_root = os.environ.get("REPO_READS_ROOT", "")
_allowed = tuple(path for path in os.environ.get("REPO_READS_ALLOWED", "").split(os.pathsep) if path)
_log = os.environ.get("REPO_READS_LOG", "")
_busy = []


def _hook(event, args):
    if _busy or event not in ("open", "os.listdir", "os.scandir") or not args:
        return
    path = args[0]
    if path is None or isinstance(path, int):
        return
    try:
        path = os.path.abspath(os.fsdecode(path))
    except Exception:
        return
    if (path == _root or path.startswith(_root + os.sep)) and not path.startswith(_allowed):
        _busy.append(1)
        try:
            with open(_log, "a", encoding="utf-8") as log:
                log.write(f"{event} {path}\\n")
        finally:
            _busy.pop()


if _root and _log:
    sys.addaudithook(_hook)
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Installed:
    """The fresh environment with the wheel installed, and where the commands run."""

    venv: Path
    python: Path
    bin: Path
    site_packages: Path
    workdir: Path  # the commands' working directory: a temporary folder outside the clone
    env: dict[str, str]
    reads_log: Path

    def run(self, *args: str, timeout: float = 300, check: bool = True) -> subprocess.CompletedProcess:
        """An installed command, from the working directory; fails with its output unless it succeeds."""
        done = subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            cwd=self.workdir,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check:
            assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
        self.assert_no_repository_reads()
        return done

    def assert_no_repository_reads(self) -> None:
        reads = self.reads_log.read_text(encoding="utf-8") if self.reads_log.exists() else ""
        assert not reads, f"the installed package read the repository:\n{reads[:3000]}"


# --- the wheel ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """A copy of what the wheel is built from (the project files and the package, no caches or build
    leftovers): the build writes nothing into the repository, and finds nothing stale there."""
    copy = tmp_path_factory.mktemp("source") / "archivist-src"
    copy.mkdir()
    for item in ROOT.iterdir():
        if item.is_file():
            shutil.copy2(item, copy / item.name)
    shutil.copytree(ROOT / "archivist", copy / "archivist", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return copy


@pytest.fixture(scope="module")
def wheel(source: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--disable-pip-version-check",
            "-w",
            str(out),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PIP_NO_INDEX": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = out.glob("archivist-*.whl")
    return built


def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_the_wheel_carries_every_module_and_the_package_data(wheel, source):
    names = wheel_names(wheel)
    tree = {
        path.relative_to(source).as_posix()
        for path in (source / "archivist").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }

    def matching(*patterns: str) -> set[str]:
        found = {path.relative_to(source).as_posix() for pattern in patterns for path in source.glob(pattern)}
        assert found, f"nothing in the tree matches {patterns}"
        return found

    canned = matching("archivist/queries/*.yml", "archivist/queries/sql/*.sql")  # before and after the split
    expected = {
        "canned queries": canned,
        "templates": matching("archivist/web/templates/*.html"),
        "static files": matching("archivist/web/static/*"),
        "the site metadata": matching("archivist/web/metadata.yml"),
        "py.typed": matching("archivist/py.typed"),
        "every __init__.py": matching("archivist/**/__init__.py"),
        "every module": matching("archivist/**/*.py"),
    }
    # every package's __init__.py: each folder of modules is a package
    packages = {Path(name).parent.as_posix() for name in expected["every module"]}
    assert {f"{package}/__init__.py" for package in packages} <= expected["every __init__.py"]
    for what, files in expected.items():
        assert files <= names, f"{what} missing from the wheel: {sorted(files - names)}"
    # and the package data declared in pyproject.toml, whatever it becomes
    declared = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))
    for package, patterns in declared["tool"]["setuptools"]["package-data"].items():
        folder = source.joinpath(*package.split("."))
        for pattern in patterns:
            files = {path.relative_to(source).as_posix() for path in folder.glob(pattern) if path.is_file()}
            assert files <= names, f"{package}: {pattern} missing from the wheel: {sorted(files - names)}"
    assert tree <= names, f"files of the package missing from the wheel: {sorted(tree - names)}"


def test_the_wheel_declares_the_command_and_the_plugins(wheel):
    with zipfile.ZipFile(wheel) as archive:
        (entry_points_file,) = [name for name in archive.namelist() if name.endswith(".dist-info/entry_points.txt")]
        parser = configparser.ConfigParser()
        parser.read_string(archive.read(entry_points_file).decode("utf-8"))
    entry_points = {group: dict(parser[group]) for group in parser.sections()}
    assert entry_points["console_scripts"]["archivist"] == "archivist.cli:cli"
    assert entry_points["datasette"]["archivist"] == "archivist.web"
    assert entry_points["llm"]["archivist"].startswith("archivist.")


# --- a fresh environment -------------------------------------------------------------------------------


def _launchers(bin_folder: Path, python: Path, *distributions: str) -> None:
    """The console scripts of dependencies (datasette, llm) in the fresh environment, as pip writes them."""
    for name in distributions:
        for entry_point in metadata.distribution(name).entry_points.select(group="console_scripts"):
            module, _, attribute = entry_point.value.partition(":")
            script = bin_folder / entry_point.name
            script.write_text(
                f"#!{python}\nimport sys\nfrom {module} import {attribute.split('.')[0]}\nsys.exit({attribute}())\n",
                encoding="utf-8",
            )
            script.chmod(0o755)


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory) -> Installed:
    home = tmp_path_factory.mktemp("installed")
    venv = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site_packages = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site_packages / "installed-dependencies.pth").write_text("\n".join(DEPENDENCIES) + "\n", encoding="utf-8")
    (site_packages / "repo_reads.py").write_text(REPO_READS, encoding="utf-8")
    (site_packages / "repo_reads.pth").write_text("import repo_reads\n", encoding="utf-8")
    workdir = home / "work"
    workdir.mkdir()
    assert not workdir.resolve().is_relative_to(ROOT)
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "VIRTUAL_ENV") and not key.startswith("ARCHIVIST_")
    }
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PIP_NO_INDEX="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PYTHONNOUSERSITE="1",
        LLM_USER_PATH=str(home / "llm"),
        REPO_READS_ROOT=str(ROOT.resolve()),
        REPO_READS_ALLOWED=os.pathsep.join([*DEPENDENCIES, sys.prefix]),
        REPO_READS_LOG=str(home / "repository-reads.log"),
    )
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=workdir,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    _launchers(venv / "bin", python, "datasette", "llm")
    return Installed(venv, python, venv / "bin", site_packages, workdir, env, home / "repository-reads.log")


def test_the_installed_package_is_the_wheels_copy_and_its_requirements_are_met(installed):
    done = installed.run("python", "-m", "pip", "check")
    assert "No broken requirements" in done.stdout
    where = installed.run(
        "python",
        "-c",
        "import json, archivist, archivist.web, importlib.metadata as m\n"
        "from datasette.plugins import get_plugins\n"
        "dist = m.distribution('archivist')\n"
        "plugin = [p for p in get_plugins() if p['name'] == 'archivist']\n"
        "print(json.dumps({'module': archivist.__file__, 'files': str(dist.locate_file('')),\n"
        "  'direct_url': dist.read_text('direct_url.json'), 'plugin': plugin}))",
    )
    found = json.loads(where.stdout)
    assert Path(found["module"]).is_relative_to(installed.site_packages), found["module"]
    assert Path(found["files"]).resolve() == installed.site_packages.resolve()
    assert '"editable": true' not in (found["direct_url"] or "")
    (plugin,) = found["plugin"]
    assert Path(plugin["static_path"]).is_relative_to(installed.site_packages)
    assert Path(plugin["templates_path"]).is_relative_to(installed.site_packages)
    assert installed.run("archivist", "--version").stdout.strip().endswith(metadata.version("archivist"))


# --- the commands, on a copy of the sample workspace ---------------------------------------------------------


@pytest.fixture(scope="module")
def workspace(installed: Installed) -> Path:
    copy = installed.workdir.parent / "sample"
    shutil.copytree(SAMPLE, copy, ignore=shutil.ignore_patterns(".archivist"))
    return copy


@pytest.fixture(scope="module")
def indexed(installed: Installed, workspace: Path) -> str:
    """`archivist index` (a relative path, as a user types it): its summary line."""
    return installed.run("archivist", "index", os.path.relpath(workspace, installed.workdir)).stdout


@pytest.fixture(scope="module")
def embedded(installed: Installed, workspace: Path, indexed: str) -> str:
    return installed.run("archivist", "embed", str(workspace), timeout=600).stdout


def documents_indexed(summary: str) -> int:
    found = re.search(r"\((\d+) documents", summary)
    assert found, summary
    return int(found[1])


def test_index_search_and_status_from_outside_the_clone(installed, workspace, indexed):
    assert re.search(r"\d+ indexed, 0 unchanged", indexed), indexed
    total = documents_indexed(indexed)
    assert (workspace / ".archivist" / "archive.db").is_file()
    found = json.loads(
        installed.run("archivist", "search", str(workspace), "authentication", "--json", "--output", "full").stdout
    )
    results = found["results"]
    assert results, found
    for result in results:
        assert (workspace / result["path"]).exists(), result["path"]
    assert any("<mark>" in result["excerpt"].lower() for result in results)
    assert any("authentication" in result["title"].lower() for result in results)
    reports = installed.run("archivist", "search", str(workspace), "proxy timeout", "--reports", "--json").stdout
    assert json.loads(reports)["results"]
    status = installed.run("archivist", "status", str(workspace)).stdout
    assert "Archive:" in status
    counts = json.loads(installed.run("archivist", "status", str(workspace), "--json").stdout)["documents"]
    assert sum(counts.values()) == total
    assert {"conversation", "report", "memory", "record", "note"} <= set(counts)


def test_embed_with_the_model_and_llm_similar_through_the_llm_plugin(installed, workspace, indexed, embedded):
    found = re.search(r"(\d+) documents embedded", embedded)
    assert found and int(found[1]) == documents_indexed(indexed), embedded
    again = installed.run("archivist", "embed", str(workspace)).stdout
    assert re.search(r"0 documents embedded, \d+ unchanged", again), again
    document = jwt_document(installed, workspace)
    archive = workspace / ".archivist" / "archive.db"
    lines = installed.run("llm", "similar", "archivist_documents", str(document), "-d", str(archive)).stdout
    similar = [json.loads(line) for line in lines.splitlines() if line.strip()]
    assert similar and str(document) not in [item["id"] for item in similar]
    assert similar[0]["score"] > 0.3
    models = installed.run("llm", "embed-models").stdout
    assert "archivist-minilm-l6-v2" in models


def jwt_document(installed: Installed, workspace: Path) -> int:
    """The id of the sample's JWT debugging conversation, found by a search."""
    found = json.loads(installed.run("archivist", "search", str(workspace), "JWT authentication", "--json").stdout)
    return next(result["id"] for result in found["results"] if "JWT" in result["title"])


# --- servers: archivist serve, datasette on the archive, datasette on another database ----------------------


class Server:
    def __init__(self, name: str, args: list[str], installed: Installed, log: Path) -> None:
        self.name = name
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.last_headers: Any = None  # the last response's headers
        self._log_file = log.open("wb")
        self.process = subprocess.Popen(
            [str(installed.bin / args[0]), *args[1:], "--port", str(self.port)],
            cwd=installed.workdir,
            env=installed.env,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
        )

    def wait(self, seconds: float = 90) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"{self.name} exited {self.process.returncode}:\n{self.output()}"
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"{self.name} did not start:\n{self.output()}")

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-5000:]

    @property
    def headers(self) -> dict[str, str]:
        """The token `archivist serve` printed in its URL (before it listens); plain datasette asks for none."""
        found = re.search(r"/\?token=([\w-]+)", self.log.read_text(encoding="utf-8", errors="replace"))
        return {"Authorization": f"Bearer {found[1]}"} if found else {}

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._log_file.close()

    def get(self, path: str, timeout: float = 120) -> tuple[int, str, str]:
        """(status, content type, body) of a GET; an error status is an answer too."""
        request = urllib.request.Request(self.base + path, headers=self.headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                self.last_headers = response.headers
                return response.status, response.headers.get("content-type", ""), response.read().decode("utf-8")
        except urllib.error.HTTPError as error:
            self.last_headers = error.headers
            return error.code, error.headers.get("content-type", ""), error.read().decode("utf-8", "replace")

    def page(self, path: str) -> str:
        status, content_type, body = self.get(path)
        assert status == 200, f"{self.name} {path}: {status}\n{body[:2000]}\n{self.output()}"
        assert content_type.startswith("text/html"), content_type
        assert "Traceback" not in body
        policy = self.last_headers.get("content-security-policy", "")  # the plugin's, under plain datasette too
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy, (self.name, path, policy)
        return body

    def json(self, path: str):
        status, content_type, body = self.get(path)
        assert status == 200, f"{self.name} {path}: {status}\n{body[:2000]}\n{self.output()}"
        assert "json" in content_type, content_type
        return json.loads(body)


@pytest.fixture(scope="module")
def servers(installed: Installed, workspace: Path, embedded: str):
    """The three servers, started together (each takes seconds to start) and stopped whatever happens."""
    other = _other_database(installed.workdir / "other.db")
    logs = installed.workdir.parent
    with contextlib.ExitStack() as stack:
        started = {}
        for name, args in {
            "archivist serve": ["archivist", "serve", str(workspace)],
            "datasette": ["datasette", str(workspace / ".archivist" / "archive.db")],
            "datasette other.db": ["datasette", str(other)],
        }.items():
            server = Server(name, args, installed, logs / f"{name.replace(' ', '-')}.log")
            stack.callback(server.stop)
            started[name] = server
        for server in started.values():
            server.wait()
        yield started


def _other_database(path: Path) -> Path:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute("INSERT INTO notes (body) VALUES ('not an archive')")
        conn.commit()
    return path


@pytest.fixture(scope="module")
def archive_servers(servers) -> list[Server]:
    return [servers["archivist serve"], servers["datasette"]]


def test_the_pages_and_their_stylesheet(archive_servers):
    for server in archive_servers:
        home = server.page("/")
        assert "<h1>Archivist</h1>" in home
        stylesheets = re.findall(r'<link rel="stylesheet" href="([^"]+)"', home)
        ours = [href for href in stylesheets if href.endswith("archivist.css")]
        assert ours, stylesheets
        status, content_type, css = server.get(ours[0])
        assert status == 200 and content_type.startswith("text/css") and "mark" in css, (server.name, ours[0])
        search = server.page("/search?query=authentication")
        assert "JWT authentication" in search and "<mark>" in search
        canned = server.page("/archive/search_reports?query=proxy+timeout")
        assert "proxy" in canned.lower()


def test_archivist_serve_asks_for_the_token_it_printed_and_plain_datasette_for_none(archive_servers):
    serve, datasette = archive_servers
    assert serve.headers and not datasette.headers
    for server, status in ((serve, 401), (datasette, 200)):
        try:
            with urllib.request.urlopen(server.base + "/api/search?query=proxy", timeout=120) as response:
                answered = response.status
        except urllib.error.HTTPError as error:
            answered = error.code
        assert answered == status, (server.name, answered)


def test_datasette_answers_as_archivist_serve_does(archive_servers, installed, workspace):
    serve, datasette = archive_servers
    document = jwt_document(installed, workspace)
    for path in (
        "/archive/search_reports.json?query=proxy+timeout&_shape=array",
        "/archive/search_workspace.json?query=authentication&date_range=2025-11&_shape=array",
        f"/archive/similar.json?document={document}&limit=5&_shape=array",
        "/api/search?query=proxy+timeout&mode=keyword",
        "/api/search?query=proxy+timeout&entities=memory,record&mode=keyword",
    ):
        answer = serve.json(path)
        assert answer, path
        assert datasette.json(path) == answer, path
    # the SQL functions, through a canned query: archivist_embed and archivist_nearest rank by meaning
    semantic = "/archive/search_semantic.json?query=token+clock+skew&_shape=array"
    rows = datasette.json(semantic)
    assert rows and rows[0]["score"] > 0.3
    served = serve.json(semantic)
    assert rows[0]["id"] == served[0]["id"] and {row["id"] for row in rows} == {row["id"] for row in served}
    # and in hand-written SQL
    sql = urllib.parse.quote("select archivist_list('a, b,,c') as items")
    assert datasette.json(f"/archive.json?_shape=array&sql={sql}") == [{"items": '["a", "b", "c"]'}]
    for server in archive_servers:
        page = server.page(f"/document/{document}")
        assert "JWT" in page and "Similar documents" in page
    api = datasette.json("/api/search?query=authentication")
    assert api["total"] > 0 and api["results"][0]["title"]
    status, _, body = datasette.get("/api/search?query=a")
    assert status == 400 and json.loads(body)["code"] == "INVALID_QUERY"
    plugins = datasette.json("/-/plugins.json")
    assert "archivist" in {plugin["name"] for plugin in plugins}


def test_datasette_on_another_database_works_as_usual_and_the_pages_say_what_to_run(servers):
    other = servers["datasette other.db"]
    assert other.json("/other/notes.json?_shape=array") == [{"id": 1, "body": "not an archive"}]
    assert other.json("/other.json?_shape=array&sql=select+count(*)+as+n+from+notes") == [{"n": 1}]
    assert "notes" in other.page("/other")
    for path in ("/", "/search?query=authentication", "/document/1"):
        status, content_type, body = other.get(path)
        assert status == 404 and content_type.startswith("text/html"), (path, status)
        assert "No Archivist archive is served here" in body
        assert "archivist index WORKSPACE" in body and "datasette WORKSPACE/.archivist/archive.db" in body
        assert 'href="/other"' in body
    status, content_type, body = other.get("/api/search?query=authentication")
    assert status == 404 and "json" in content_type
    error = json.loads(body)
    assert error["success"] is False and error["code"] == "DIRECTORY_NOT_FOUND"
    assert "archivist index WORKSPACE" in error["error"]
    assert "Traceback" not in other.output() and "ERROR" not in other.output()


# --- MCP over stdio -----------------------------------------------------------------------------------------


def test_mcp_over_stdio_answers_a_tool_call(installed, workspace, embedded):
    from mcp.types import LATEST_PROTOCOL_VERSION

    process = subprocess.Popen(
        [str(installed.bin / "archivist"), "mcp", str(workspace)],
        cwd=installed.workdir,
        env=installed.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()

    def send(message: dict) -> None:
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()

    def answer(request_id: int) -> dict:
        while True:
            message = json.loads(lines.get(timeout=120))
            if message.get("id") == request_id:
                return message

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": LATEST_PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "package-test", "version": "1"},
                },
            }
        )
        assert answer(1)["result"]["serverInfo"]["name"]
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "search", "arguments": {"query": "proxy timeout", "mode": "keyword"}},
            }
        )
        result = answer(2)["result"]
        assert not result.get("isError"), result
        found = result["structuredContent"]
        assert found["total"] > 0 and "proxy" in json.dumps(found["results"]).lower()
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    installed.assert_no_repository_reads()


# --- pipx and uv tool, where present --------------------------------------------------------------------------


def _requirements(wheel: Path) -> list[str]:
    """The names of the wheel's own requirements (its extras left out)."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        text = archive.read(name).decode("utf-8")
    found = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]
    return sorted({re.match(r"[A-Za-z0-9_.-]+", req)[0] for req in found if "extra ==" not in req})


def _check_tool_install(
    installed: Installed, workspace: Path, executable: Path, tool_python: Path, env: dict[str, str]
) -> None:
    """The tool's own copy of the package runs a search from outside the clone."""
    env = {**env, "PATH": os.environ.get("PATH", "")}
    env.pop("VIRTUAL_ENV", None)
    where = subprocess.run(
        [str(tool_python), "-c", "import archivist; print(archivist.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=installed.workdir,
    )
    assert where.returncode == 0, where.stderr
    assert not Path(where.stdout.strip()).resolve().is_relative_to(ROOT), where.stdout
    assert not Path(where.stdout.strip()).resolve().is_relative_to(installed.venv), where.stdout
    found = subprocess.run(
        [str(executable), "search", str(workspace), "authentication", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=installed.workdir,
        timeout=300,
    )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"]


def test_uv_tool_install(installed, workspace, indexed, wheel, tmp_path):
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH: `uv tool install` of the wheel is not tried")
    home = tmp_path / "uv"
    # offline: the dependencies are left out (a marker that never holds), then found where pip installed them
    overrides = home / "overrides.txt"
    home.mkdir()
    overrides.write_text(
        "".join(f'{name} ; sys_platform == "never"\n' for name in _requirements(wheel)), encoding="utf-8"
    )
    env = {
        **installed.env,
        "UV_TOOL_DIR": str(home / "tools"),
        "UV_TOOL_BIN_DIR": str(home / "bin"),
        "UV_CACHE_DIR": str(home / "cache"),
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_CONFIG": "1",
    }
    done = subprocess.run(
        [uv, "tool", "install", "--offline", "--no-index", "--python", sys.executable]
        + ["--overrides", str(overrides), str(wheel)],
        capture_output=True,
        text=True,
        env=env,
        cwd=installed.workdir,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    tool = home / "tools" / "archivist"
    tool_python = tool / "bin" / "python"
    purelib = subprocess.run(
        [str(tool_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "installed-dependencies.pth").write_text("\n".join(DEPENDENCIES) + "\n", encoding="utf-8")
    _check_tool_install(installed, workspace, home / "bin" / "archivist", tool_python, installed.env)


def test_pipx_install(installed, workspace, indexed, wheel, tmp_path):
    pipx = shutil.which("pipx")
    if pipx is None:
        pytest.skip("pipx is not on PATH: `pipx install` of the wheel is not tried")
    home = tmp_path / "pipx"
    # offline: the wheel alone; its venv sees the system site-packages, and through them a user site
    # (PYTHONUSERBASE) whose .pth file adds the dependencies pip installed
    user_base = home / "userbase"
    user_site = subprocess.run(
        [sys.executable, "-c", "import site; print(site.getusersitepackages())"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONUSERBASE": str(user_base)},
    ).stdout.strip()
    Path(user_site).mkdir(parents=True)
    Path(user_site, "installed-dependencies.pth").write_text("\n".join(DEPENDENCIES) + "\n", encoding="utf-8")
    env = {
        **installed.env,
        "PIPX_HOME": str(home / "home"),
        "PIPX_BIN_DIR": str(home / "bin"),
        "PIPX_MAN_DIR": str(home / "man"),
        "PIPX_DISABLE_SHARED_LIBS_AUTO_UPGRADE": "1",
        "PYTHONUSERBASE": str(user_base),
    }
    env.pop("PYTHONNOUSERSITE", None)
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(
        [pipx, "install", "--system-site-packages", "--python", sys.executable]
        + ["--pip-args=--no-deps --no-index", str(wheel)],
        capture_output=True,
        text=True,
        env=env,
        cwd=installed.workdir,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    tool_python = home / "home" / "venvs" / "archivist" / "bin" / "python"
    _check_tool_install(installed, workspace, home / "bin" / "archivist", tool_python, env)


def test_nothing_read_the_repository(installed, servers):
    for server in servers.values():
        assert server.process.poll() is None, server.output()
    installed.assert_no_repository_reads()
