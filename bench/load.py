"""Load on `archivist serve` and `archivist mcp --http`: requests/s, latency, errors and memory under concurrent clients.

    python bench/load.py [--clients 16] [--seconds 30] [--target both|mcp|serve] [--keyword-only] [--workspace DIR]

Starts each server in turn on 127.0.0.1 (a free port, nothing else), on an embedded copy of
the sample workspace (bench/out/load-sample, indexed and embedded once) or the given
workspace, and runs --clients concurrent clients against it for --seconds:

- `archivist mcp WORKSPACE --http`: raw JSON-RPC over streamable HTTP with httpx, one MCP
  session per client, tools/call of `search` (keyword and hybrid) and `search_workspace`;
- `archivist serve WORKSPACE --no-index`: GET /api/search (keyword and hybrid).

With --keyword-only, no hybrid searches: no query reaches the embedding model.

A client told SEARCH_BUSY waits a second before it asks again, as one that reads the web's
Retry-After does. Prints requests/s, p50/p95/max latency (and how soon an error was told), errors (an HTTP status other than 200, a JSON-RPC
error, a tool error, a timeout) and the server's resident memory (VmRSS, and its peak VmHWM)
after warm-up and at the end. Each server is stopped when its run ends.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_speed import percentile

from archivist.workspace import archive_path

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).resolve().parent / "out"
ARCHIVIST = str(Path(sys.executable).parent / "archivist")
WORDS = ("authentication", "proxy timeout", "kubernetes", "borders", "jwt token", "cluster health", "deploy", "memory")
MCP_CALLS = [  # (tool, arguments): the words rotate through them
    ("search", {"mode": "keyword"}),
    ("search", {"mode": "hybrid"}),
    ("search_workspace", {}),
]
API_MODES = ["keyword", "hybrid"]
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
TOKEN = secrets.token_urlsafe(32)  # the servers are closed without one: given them, and sent by every client
AUTHORIZATION = {"Authorization": f"Bearer {TOKEN}"}
RETRY_AFTER = 1  # seconds a client waits after a SEARCH_BUSY answer before it asks again (the web's Retry-After)


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)  # milliseconds, of answered requests
    refused: list[float] = field(default_factory=list)  # milliseconds until a request was told it was refused
    errors: Counter[str] = field(default_factory=Counter)
    memory: list[tuple[float, int]] = field(default_factory=list)  # (seconds into the run, VmRSS KiB)

    def error(self, kind: str) -> None:
        self.errors[kind] += 1


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rss_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process, in KiB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def embedded_sample() -> Path:
    """bench/out/load-sample: the sample workspace, indexed and embedded once."""
    workspace = OUT / "load-sample"
    if not archive_path(workspace).exists():
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.copytree(ROOT / "sample-workspace", workspace, ignore=shutil.ignore_patterns(".archivist"))
        subprocess.run(
            [ARCHIVIST, "index", str(workspace), "--embed"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    return workspace


def start_server(arguments: list[str], port: int) -> subprocess.Popen:
    """An archivist server on 127.0.0.1:port, with this run's token and no other workspaces from the environment."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ARCHIVIST_TOKEN", "ARCHIVIST_MCP_TOKEN", "ARCHIVIST_ALLOW_WORKSPACES")
    }
    process = subprocess.Popen(
        [ARCHIVIST, *arguments, "--port", str(port)],
        env={**env, "HF_HUB_OFFLINE": "1", "ARCHIVIST_TOKEN": TOKEN},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,  # an unread pipe would fill and stall the server
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{' '.join(arguments)} exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"{' '.join(arguments)} did not listen on {port}")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def json_rpc_answer(response: httpx.Response, request_id: int) -> dict[str, Any]:
    """The JSON-RPC answer to ``request_id`` in a streamable HTTP response (JSON or server-sent events)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:"):
                message = json.loads(line[5:])
                if message.get("id") == request_id:
                    return message
        raise ValueError("no answer in the event stream")
    return response.json()


class McpSession:
    """One MCP client over streamable HTTP: initialize, then tools/call."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.headers = dict(ACCEPT)
        self.ids = itertools.count(1)

    async def open(self) -> None:
        request_id = next(self.ids)
        response = await self.http.post(
            self.url,
            headers=self.headers,
            json={
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "bench-load", "version": "1"},
                },
            },
        )
        response.raise_for_status()
        answer = json_rpc_answer(response, request_id)
        if "mcp-session-id" in response.headers:
            self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        self.headers["mcp-protocol-version"] = answer["result"]["protocolVersion"]
        await self.http.post(
            self.url, headers=self.headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
        )

    async def call(self, tool: str, arguments: dict[str, Any]) -> str | None:
        """None, or what went wrong."""
        request_id = next(self.ids)
        response = await self.http.post(
            self.url,
            headers=self.headers,
            json={
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            },
        )
        if response.status_code != 200:
            return http_problem(response)
        answer = json_rpc_answer(response, request_id)
        if "error" in answer:
            return f"JSON-RPC {answer['error'].get('code')}"
        result = answer["result"]
        if result.get("isError"):
            return f"tool error {(result.get('structuredContent') or {}).get('code', '(no code)')}"
        return None


async def timed(stats: Stats, attempt: Callable[[], Awaitable[str | None]]) -> None:
    started = time.perf_counter()
    try:
        problem = await attempt()
    except httpx.TimeoutException:
        problem = "timeout"
    except (httpx.HTTPError, ValueError, KeyError) as error:
        problem = type(error).__name__
    if problem is None:
        stats.latencies.append((time.perf_counter() - started) * 1000)
        return
    stats.error(problem)
    stats.refused.append((time.perf_counter() - started) * 1000)
    if problem.endswith("SEARCH_BUSY"):
        await asyncio.sleep(RETRY_AFTER)  # as a client does that reads Retry-After (an agent waits, too)


async def mcp_client(url: str, number: int, until: float, stats: Stats) -> None:
    async with httpx.AsyncClient(timeout=30, headers=AUTHORIZATION) as http:
        session = McpSession(http, url)
        await session.open()
        for n in itertools.count(number):
            if time.monotonic() >= until:
                return
            tool, extra = MCP_CALLS[n % len(MCP_CALLS)]
            arguments = {"query": WORDS[n % len(WORDS)], **extra}
            await timed(stats, lambda tool=tool, arguments=arguments: session.call(tool, arguments))


async def warm_mcp(url: str) -> None:
    """One call of each kind (the first hybrid search loads the model), before the clock starts."""
    async with httpx.AsyncClient(timeout=120, headers=AUTHORIZATION) as http:
        session = McpSession(http, url)
        await session.open()
        for tool, extra in MCP_CALLS:
            problem = await session.call(tool, {"query": WORDS[0], **extra})
            if problem:
                raise RuntimeError(f"warm-up {tool} {extra}: {problem}")


async def api_search(http: httpx.AsyncClient, n: int) -> str | None:
    response = await http.get(
        "/api/search", params={"query": WORDS[n % len(WORDS)], "mode": API_MODES[n % len(API_MODES)]}
    )
    return None if response.status_code == 200 else http_problem(response)


def http_problem(response: httpx.Response) -> str:
    """'HTTP <status>', with the error code (docs/errors.md) when the body has one."""
    try:
        code = response.json().get("code")
    except (ValueError, AttributeError):
        code = None
    return f"HTTP {response.status_code}" + (f" {code}" if code else "")


async def warm_api(base: str) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=120, headers=AUTHORIZATION) as http:
        for n in range(len(API_MODES)):
            problem = await api_search(http, n)
            if problem:
                raise RuntimeError(f"warm-up /api/search: {problem}")


async def api_client(base: str, number: int, until: float, stats: Stats) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=30, headers=AUTHORIZATION) as http:
        for n in itertools.count(number):
            if time.monotonic() >= until:
                return
            await timed(stats, lambda n=n: api_search(http, n))


def report(label: str, stats: Stats, seconds: float, memory: tuple[tuple[int, int], tuple[int, int]]) -> None:
    done = len(stats.latencies)
    errors = sum(stats.errors.values())
    (rss_start, _), (rss_end, peak) = memory
    print(f"{label}:")
    print(f"  {done} answered in {seconds:.1f}s: {done / seconds:.1f} requests/s")
    if stats.latencies:
        print(
            f"  latency p50 {statistics.median(stats.latencies):.1f} ms, p95 {percentile(stats.latencies, 0.95):.1f} ms, "
            f"max {max(stats.latencies):.1f} ms"
        )
    if stats.refused:
        print(
            f"  told an error after p50 {statistics.median(stats.refused):.1f} ms, "
            f"p95 {percentile(stats.refused, 0.95):.1f} ms, max {max(stats.refused):.1f} ms"
        )
    print(
        f"  errors: {errors}"
        + (f" ({', '.join(f'{kind} {n}' for kind, n in stats.errors.most_common())})" if errors else "")
    )
    print(
        f"  server RSS: {rss_start / 1024:.0f} MiB after warm-up, {rss_end / 1024:.0f} MiB at the end (peak {peak / 1024:.0f} MiB)"
    )
    if stats.memory:
        step = max(1, len(stats.memory) // 10)
        print(
            "  RSS during the run: "
            + ", ".join(f"{t:.0f}s {kib / 1024:.0f}" for t, kib in stats.memory[::step])
            + " MiB"
        )


async def sample_memory(pid: int, until: float, samples: list[tuple[float, int]]) -> None:
    """VmRSS every second until ``until``."""
    started = time.monotonic()
    while time.monotonic() < until:
        samples.append((time.monotonic() - started, rss_kib(pid)[0]))
        await asyncio.sleep(1)


async def run_clients(
    make_client: Callable[[int, float, Stats], Awaitable[None]], clients: int, seconds: float, pid: int
) -> tuple[Stats, float]:
    stats = Stats()
    started = time.monotonic()
    until = started + seconds
    memory = asyncio.create_task(sample_memory(pid, until, stats.memory))
    outcomes = await asyncio.gather(
        *(make_client(number, until, stats) for number in range(clients)), return_exceptions=True
    )
    await memory
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            stats.error(f"client failed: {type(outcome).__name__}")
    return stats, time.monotonic() - started


def load(
    command: list[str],
    label: str,
    target: Callable[[int], tuple[Any, Callable[..., Any]]],
    clients: int,
    seconds: float,
) -> None:
    """Start a server, warm it, run the clients against it, and report; ``target(port)`` gives (warm, client)."""
    port = free_port()
    process = start_server(command, port)
    warm, client = target(port)
    try:
        asyncio.run(warm())
        before = rss_kib(process.pid)
        stats, elapsed = asyncio.run(run_clients(client, clients, seconds, process.pid))
        after = rss_kib(process.pid)
    finally:
        stop(process)
    report(label, stats, elapsed, (before, after))


def load_mcp(workspace: Path, clients: int, seconds: float) -> None:
    def target(port: int) -> tuple[Any, Callable[..., Any]]:
        url = f"http://127.0.0.1:{port}/mcp"
        return (lambda: warm_mcp(url)), (lambda n, until, stats: mcp_client(url, n, until, stats))

    modes = ", ".join(extra.get("mode", "") for tool, extra in MCP_CALLS if tool == "search")
    label = f"archivist mcp --http, {clients} clients, tools/call search ({modes}) and search_workspace"
    load(["mcp", str(workspace), "--http"], label, target, clients, seconds)


def load_serve(workspace: Path, clients: int, seconds: float) -> None:
    def target(port: int) -> tuple[Any, Callable[..., Any]]:
        base = f"http://127.0.0.1:{port}"
        return (lambda: warm_api(base)), (lambda n, until, stats: api_client(base, n, until, stats))

    label = f"archivist serve, {clients} clients, GET /api/search ({', '.join(API_MODES)})"
    load(["serve", str(workspace), "--no-index"], label, target, clients, seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--target", choices=("both", "mcp", "serve"), default="both")
    parser.add_argument("--keyword-only", action="store_true", help="no hybrid searches (no query embedding)")
    parser.add_argument("--workspace", type=Path, help="an indexed workspace (default: an embedded copy of the sample)")
    args = parser.parse_args()
    if args.keyword_only:
        MCP_CALLS.remove(("search", {"mode": "hybrid"}))
        API_MODES.remove("hybrid")
    workspace = args.workspace or embedded_sample()
    print(f"workspace {workspace}, {args.clients} clients, {args.seconds:g}s per server, {os.cpu_count()} CPUs")
    if args.target in ("both", "mcp"):
        load_mcp(workspace, args.clients, args.seconds)
    if args.target in ("both", "serve"):
        load_serve(workspace, args.clients, args.seconds)


if __name__ == "__main__":
    main()
