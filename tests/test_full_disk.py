"""A full disk is told as a full disk, on every surface: an intact archive is read on one
(status, search, an MCP tool call, the search page and /api/search answer from it), what has
to write (index) says that the disk is full, how much it has free and how much the archive
takes; nothing calls the archive a foreign file or says to move it aside. Only a file that is
not an archive is called one.

Run as a script (``python tests/test_full_disk.py WORKSPACE OUT.json``), this file asks each
surface about WORKSPACE and writes what each said: the tests run it inside the namespace where
a small tmpfs is mounted (``conftest.on_small_disk``)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ARCHIVIST, on_small_disk, write_files
from mcp import Client
from test_building import big_source
from test_mcp import stdio

from archivist.archive import database
from archivist.archive.indexer import index_workspace
from archivist.cli import cli
from archivist.mcp.tools import create_server
from archivist.web.app import make_datasette, start
from archivist.workspace import archive_path

NOTE = {"notes/a.md": "# A\n\nzeppelin notes\n"}
# What is never said of an archive that is there and intact.
FOREIGN = ("Not an Archivist archive", "not an Archivist archive", "move it aside", "Traceback")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cli_told(*arguments: str) -> dict:
    done = subprocess.run([ARCHIVIST, *arguments], capture_output=True, text=True, timeout=120)
    return {"code": done.returncode, "out": done.stdout, "err": done.stderr}


async def mcp_told(workspace: Path) -> dict:
    """The search tool's answer, over stdio, from `archivist mcp WORKSPACE`."""
    async with Client(stdio(workspace)) as client:
        result = await client.call_tool("search", {"query": "zeppelin"})
        return {"error": result.is_error, "answer": result.structured_content or json.loads(result.content[0].text)}


async def web_told(workspace: Path) -> dict:
    """The search page and /api/search, from the app `archivist serve` runs."""
    datasette = await start(make_datasette(archive_path(workspace), {"workspace": str(workspace)}))
    page = await datasette.client.get("/search?query=zeppelin")
    api = await datasette.client.get("/api/search?query=zeppelin")
    return {"page": {"code": page.status_code, "text": page.text}, "api": {"code": api.status_code, "body": api.json()}}


def every_surface(workspace: Path) -> dict:
    """What each surface says of WORKSPACE's archive: the reading ones, then an index run, then status again."""
    told = {
        "status": cli_told("status", str(workspace)),
        "search": cli_told("search", str(workspace), "zeppelin"),
        "sources": cli_told("sources", str(workspace)),
        "mcp": asyncio.run(mcp_told(workspace)),
        "web": asyncio.run(web_told(workspace)),
        "index": cli_told("index", str(workspace)),
    }
    told["status after index"] = cli_told("status", str(workspace), "--json")
    return told


SURFACES_SCRIPT = """
# an archive indexed while there was room, then a disk filled by something else
mkdir -p "$DISK/filled/notes" && printf '# A\\n\\nzeppelin notes\\n' > "$DISK/filled/notes/a.md"
"$ARCHIVIST" index "$DISK/filled" > /dev/null 2>&1 || exit 3
dd if=/dev/zero of="$DISK/filler" bs=4k 2>/dev/null
df -k "$DISK" | tail -1 > "$OUT/filled.df"
"$PYTHON" "$TEST" "$DISK/filled" "$OUT/filled.json" || exit 4
ls -a "$DISK/filled/.archivist" > "$OUT/filled.files"
# serve, which indexes first: it says the disk is full and serves the archive as it is
ARCHIVIST_TOKEN=T "$ARCHIVIST" serve "$DISK/filled" --port "$PORT" > /dev/null 2> "$OUT/serve.err" &
SERVER=$!
for i in $(seq 1 100); do
  "$PYTHON" -c "import urllib.request as u; print(u.urlopen(u.Request('http://127.0.0.1:$PORT/api/search?query=zeppelin', headers={'Authorization': 'Bearer T'}), timeout=2).read().decode())" > "$OUT/serve.json" 2>/dev/null && break
  sleep 0.2
done
kill $SERVER; wait $SERVER 2>/dev/null
# a disk filled by the index run itself, reading agent logs
rm -rf "$DISK/filled" "$DISK/filler"
mkdir -p "$DISK/run/notes" && printf '# A\\n\\nzeppelin notes\\n' > "$DISK/run/notes/a.md"
"$ARCHIVIST" index "$DISK/run" --source "claude-code=$SOURCE" > /dev/null 2> "$OUT/run.err"
echo $? > "$OUT/run.code"
"$PYTHON" "$TEST" "$DISK/run" "$OUT/run.json" || exit 5
"""


def test_on_a_full_disk_every_surface_answers_from_the_archive_and_index_says_what_to_free(tmp_path):
    source = big_source(tmp_path / "logs", 40)
    environment = {"TEST": str(Path(__file__).resolve()), "SOURCE": str(source), "PORT": str(free_port())}
    out = on_small_disk(tmp_path, SURFACES_SCRIPT, environment, size="2m")
    assert out.joinpath("filled.df").read_text().split()[3] == "0"  # nothing free
    run_error = out.joinpath("run.err").read_text()
    assert out.joinpath("run.code").read_text().strip() == "1" and "the disk is full" in run_error
    for case in ("filled", "run"):
        told = json.loads(out.joinpath(f"{case}.json").read_text())
        everything = json.dumps(told, ensure_ascii=False)
        assert not [words for words in FOREIGN if words in everything], (case, everything[:3000])
        assert told["status"]["code"] == 0 and "note: 1" in told["status"]["out"], told["status"]
        assert told["search"]["code"] == 0 and "notes/a.md" in told["search"]["out"], told["search"]
        assert told["sources"]["code"] == 0, told["sources"]
        assert not told["mcp"]["error"] and told["mcp"]["answer"]["total"] >= 1, told["mcp"]
        assert told["web"]["page"]["code"] == 200 and "notes/a.md" in told["web"]["page"]["text"]
        assert told["web"]["api"]["code"] == 200 and told["web"]["api"]["body"]["total"] >= 1
        index = told["index"]
        assert index["code"] == 1 and len(index["err"].strip().splitlines()) == 1, index
        assert "could not be written: the disk is full" in index["err"] and "[ARCHIVE_NOT_WRITTEN]" in index["err"]
        assert "has 0 bytes free; the archive takes" in index["err"], index["err"]
        assert "Free some space on that disk" in index["err"] and "keep the archive" in index["err"]
        assert told["status after index"]["code"] == 0, told["status after index"]
        assert json.loads(told["status after index"]["out"])["documents"]["note"] == 1
    assert out.joinpath("filled.files").read_text().split().count("archive.db") == 1  # where it was
    served = out.joinpath("serve.err").read_text()
    assert "the disk is full" in served and "Serving the archive as it is meanwhile" in served, served
    assert not [words for words in FOREIGN if words in served], served
    assert json.loads(out.joinpath("serve.json").read_text())["total"] >= 1  # (it serves)


def _nothing_read_on_a_full_disk(monkeypatch):
    """Every connection that reads an archive fails as on a full disk where SQLite cannot even make its
    shared-memory file (an I/O error, 0 bytes free); writing connections are left alone."""
    connect = database.sqlite3.connect

    def failing(target, *args, **options):
        if options.get("uri") and ("mode=ro" in str(target) or "immutable=1" in str(target)):
            error = database.sqlite3.OperationalError("disk I/O error")
            error.sqlite_errorcode = database.sqlite3.SQLITE_IOERR  # type: ignore[attr-defined]
            raise error
        return connect(target, *args, **options)

    monkeypatch.setattr(database.sqlite3, "connect", failing)
    monkeypatch.setattr(database, "free_bytes", lambda path: 0)


async def test_an_archive_that_cannot_be_read_now_is_told_so_with_what_to_free_never_as_a_foreign_file(
    tmp_path, monkeypatch
):
    workspace = write_files(tmp_path / "ws", NOTE)
    index_workspace(workspace)
    _nothing_read_on_a_full_disk(monkeypatch)
    runner = CliRunner()
    for command in (["status", str(workspace)], ["search", str(workspace), "zeppelin"]):
        result = runner.invoke(cli, command)
        assert result.exit_code == 1, result.output
        line = result.output.strip()
        assert "could not be read: the disk is full" in line and line.endswith("[ARCHIVE_NOT_WRITTEN]"), line
        assert "0 bytes free; the archive takes" in line and "Free some space on that disk" in line
        assert not [words for words in FOREIGN if words in line], line
    async with Client(create_server(archive_path(workspace), workspace)) as client:
        result = await client.call_tool("search", {"query": "zeppelin"})
    assert result.is_error and result.structured_content["code"] == "ARCHIVE_NOT_WRITTEN"
    assert "could not be read: the disk is full" in result.structured_content["error"]
    datasette = await start(make_datasette(archive_path(workspace), {"workspace": str(workspace)}))
    page = await datasette.client.get("/search?query=zeppelin")
    assert page.status_code == 503 and "<title>The archive cannot be read now" in page.text
    assert "the disk is full" in page.text and not [words for words in FOREIGN if words in page.text]
    api = await datasette.client.get("/api/search?query=zeppelin")
    assert api.status_code == 503 and api.json()["code"] == "ARCHIVE_NOT_WRITTEN"


@pytest.mark.parametrize("content", [b"not a database\n" * 64, b"SQLite format 3\x00" + b"\xff" * 200])
def test_only_a_file_that_is_not_sqlite_is_called_no_archive(tmp_path, content):
    workspace = write_files(tmp_path / "ws", {**NOTE, ".archivist/archive.db": content})
    for command in (["status", str(workspace)], ["index", str(workspace)]):
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 1 and "Not an Archivist archive" in result.output, result.output
        assert "move it aside" in result.output  # (a foreign file, which the archive's place holds)


if __name__ == "__main__":
    Path(sys.argv[2]).write_text(json.dumps(every_surface(Path(sys.argv[1]))), encoding="utf-8")
