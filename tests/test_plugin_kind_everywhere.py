"""A kind of agent log installed from a separate package (a distribution on the path whose entry point
of the group ``archivist`` registers it) is seen everywhere: in ``archivist mcp``'s ``tools/list``
(answered by the SDK, then from what a start kept, and never from a listing kept before the
package was installed), in the command line's help, and by ``/api/search``, which finds its
sessions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ARCHIVIST

KIND = "example"
MODULE = "archivist_kind_example"
PLUGIN = f'''"""A package adding the {KIND} kind: its plugin and its reader, one .ex file a session."""

from pathlib import Path

from archivist.agents import Message, Session
from archivist.agents.hookspecs import Kind, hookimpl

KIND = "{KIND}"


@hookimpl
def register_agent_kinds(register):
    register(Kind(KIND, __name__, "example logs, one .ex file a session"))


def check(path):
    if not Path(path).is_dir() or not any(Path(path).glob("*.ex")):
        return f"{{path}} holds no .ex file: expected a folder of them."
    return None


def read(path, problems=None):
    for file in sorted(Path(path).glob("*.ex")):
        said = [line.partition(": ") for line in file.read_text(encoding="utf-8").splitlines() if ": " in line]
        messages = [Message(role, text, "2025-11-23T05:00:00Z") for role, _, text in said]
        yield Session(key=file.stem, agent=KIND, title=messages[0].text, messages=messages, files=[file])
'''
API = """
import asyncio, json, sys
from pathlib import Path
from archivist.web.app import make_datasette, start

async def main():
    datasette = await start(make_datasette(Path(sys.argv[1])))
    response = await datasette.client.get("/api/search", params={"query": "zeppelin", "agents": sys.argv[2]})
    print(json.dumps({"status": response.status_code, "body": response.json()}))

asyncio.run(main())
"""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}
SESSION = [
    INITIALIZE,
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """The folder on PYTHONPATH that holds the package and its distribution's metadata."""
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / f"{MODULE}.py").write_text(PLUGIN, encoding="utf-8")
    info = folder / f"{MODULE}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: archivist-kind-example\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[archivist]\n{KIND} = {MODULE}\n")
    return folder


def run(*command: str, env: dict[str, str], given: str = "") -> str:
    done = subprocess.run(command, input=given, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def agents_described(workspace: Path, env: dict[str, str]) -> str:
    """The schema of search's ``agents`` in ``archivist mcp``'s answer to ``tools/list`` (its items' enum names
    the agents), as JSON."""
    # as a client does: its requests sent, stdin kept open until they are answered
    with subprocess.Popen(
        [ARCHIVIST, "mcp", str(workspace)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    ) as server:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write("".join(json.dumps(message) + "\n" for message in SESSION))
        server.stdin.flush()
        answers = [json.loads(server.stdout.readline()) for _ in range(2)]
        server.stdin.close()
        assert server.wait(timeout=60) == 0
    assert [answer["id"] for answer in answers] == [1, 2]
    search = next(tool for tool in answers[1]["result"]["tools"] if tool["name"] == "search")
    return json.dumps(search["inputSchema"]["properties"]["agents"])


def test_a_kind_from_another_package_is_seen_everywhere(sample_workspace: Path, package: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    plain = {**os.environ, "ARCHIVIST_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    plain.pop("PYTHONPATH", None)
    with_package = {**plain, "PYTHONPATH": str(package)}
    logs = tmp_path / "example-logs"
    logs.mkdir()
    (logs / "one.ex").write_text("user: where did the zeppelin land\nassistant: on the roof\n", encoding="utf-8")

    # a start without the package keeps a listing without the kind, twice (the SDK's, then the kept one)
    assert f'"{KIND}"' not in agents_described(sample_workspace, plain)
    assert f'"{KIND}"' not in agents_described(sample_workspace, plain)
    # once installed, the kind is in the listing, whether the SDK gives it or a start kept it
    first = agents_described(sample_workspace, with_package)
    assert f'"{KIND}"' in first and '"claude-code"' in first
    assert agents_described(sample_workspace, with_package) == first
    assert len(json.loads((cache / "mcp-listing.json").read_text(encoding="utf-8"))) == 2

    helped = run(ARCHIVIST, "search", "--help", env={**with_package, "COLUMNS": "1000"})
    assert f" {KIND}," in helped and f" {KIND}," not in run(
        ARCHIVIST, "search", "--help", env={**plain, "COLUMNS": "1000"}
    )

    run(ARCHIVIST, "index", str(sample_workspace), "--source", f"{KIND}={logs}", env=with_package)
    db_path = sample_workspace / ".archivist" / "archive.db"
    found = json.loads(run(sys.executable, "-c", API, str(db_path), KIND, env=with_package))
    assert found["status"] == 200
    assert [result["title"] for result in found["body"]["results"]] == ["where did the zeppelin land"]
    others = json.loads(run(sys.executable, "-c", API, str(db_path), "claude-code", env=with_package))
    assert others["status"] == 200 and others["body"]["results"] == []
