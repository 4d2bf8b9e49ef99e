"""The stdio transport (archivist.mcp.transport): pipes on the event loop, files in a thread, hostile lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest
from test_mcp_stdio import INITIALIZED, initialize, request

from archivist.mcp import stdio, transport
from archivist.mcp.tools import create_server
from archivist.workspace import archive_path

ARCHIVIST = str(Path(sys.executable).parent / "archivist")
INITIALIZE = initialize()
HAND_OVER = request(2, "resources/list")  # only the SDK answers it


def lines_of(*messages: dict | str) -> bytes:
    return "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in messages).encode()


def answers_until(out: int, last_id: object) -> list[dict]:
    """The answers read from ``out`` up to the one of ``last_id``."""
    answers: list[dict] = []
    with open(out, encoding="utf-8", closefd=False) as reader:
        while not answers or answers[-1].get("id") != last_id:
            line = reader.readline()
            assert line, f"the server stopped before answering {last_id}: {answers}"
            answers.append(json.loads(line))
    return answers


def test_a_line_over_the_limit_is_refused_and_the_session_goes_on(sample_workspace, monkeypatch):
    monkeypatch.setattr(transport, "LINE_LIMIT", 4096)
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    server = create_server(archive_path(sample_workspace))._lowlevel_server
    serving = threading.Thread(
        target=anyio.run, args=(transport.serve, server, [], stdio.Lines(in_read), out_write, set()), daemon=True
    )
    serving.start()
    try:
        huge = json.dumps(request(3, "ping", {"pad": "x" * 100_000}))
        ping = request(4, "ping")
        os.write(in_write, lines_of(INITIALIZE, INITIALIZED, huge, ping))
        answers = answers_until(out_read, 4)
        # the long line got no answer as a ping (it was not read as one), and what followed it was
        assert [a.get("id") for a in answers if "result" in a] == [1, 4]
        call = {"name": "search", "arguments": {"query": "kubernetes migration", "mode": "keyword"}}
        os.write(in_write, lines_of(request(5, "tools/call", call)))
        assert answers_until(out_read, 5)[-1]["result"]["structuredContent"]["total"] >= 1
    finally:
        os.close(in_write)
        serving.join(10)
        os.close(out_write)
        os.close(out_read)
        os.close(in_read)
    assert not serving.is_alive()


def test_a_client_that_writes_everything_before_it_reads_gets_every_answer(embedded_sample):
    """Far more requests and answers than a pipe holds: reading goes on while answers wait to be read."""
    process = subprocess.Popen(
        [ARCHIVIST, "mcp", str(embedded_sample)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(lines_of(INITIALIZE, INITIALIZED, HAND_OVER))
        process.stdin.flush()
        assert [json.loads(process.stdout.readline())["id"] for _ in range(2)] == [1, 2]
        pad = {"anything": "x" * 2000}  # requests of 2 KB, answers of about 8 KB (output=full)
        requests = [
            {"jsonrpc": "2.0", "id": 100 + n, "method": "tools/call", "params": {"name": "search", "arguments": {
                "query": "kubernetes migration", "mode": "keyword", "output": "full", "encoding_context": pad}}}
            for n in range(150)
        ]  # fmt: skip
        data = lines_of(*requests)
        assert len(data) > 256 * 1024
        writer = threading.Thread(target=lambda: (process.stdin.write(data), process.stdin.flush()), daemon=True)
        writer.start()
        writer.join(120)
        assert not writer.is_alive(), "the server stopped reading while its answers waited"
        answers = [json.loads(process.stdout.readline()) for _ in requests]
        assert sorted(a["id"] for a in answers) == [r["id"] for r in requests]
        assert all(a["result"]["structuredContent"]["total"] >= 1 for a in answers)
        assert sum(len(json.dumps(a)) for a in answers) > 1024 * 1024
    finally:
        process.kill()
        process.wait(10)


@pytest.mark.parametrize("stdout_is_a_file", [True, False])
def test_stdin_from_a_file_is_served_in_a_thread(embedded_sample, tmp_path, stdout_is_a_file):
    """Not a pipe (a file given as stdin, or as stdout): lines are read and written in a worker thread."""
    requests = tmp_path / "requests.jsonl"
    ping = request(3, "ping")
    requests.write_bytes(lines_of(INITIALIZE, INITIALIZED, HAND_OVER, "not json", ping))
    answers_file = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers_file.open("wb") as file:
        finished = subprocess.run(
            [ARCHIVIST, "mcp", str(embedded_sample)],
            stdin=stdin,
            stdout=file if stdout_is_a_file else subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=60,
        )
    assert finished.returncode == 0
    written = answers_file.read_bytes() if stdout_is_a_file else finished.stdout
    answers = [json.loads(line) for line in written.splitlines()]
    # each request answered once, in order; the ping read as stdin ended races the end of the
    # session (as under the SDK's own transport): answered, answered "Connection closed", or not
    ids = [a["id"] for a in answers]
    assert ids in ([1, 2], [1, 2, 3]), ids
    assert answers[1]["result"] == {"resources": []}
    if ids == [1, 2, 3]:
        assert answers[2].get("result") == {} or "Connection closed" in answers[2]["error"]["message"]
