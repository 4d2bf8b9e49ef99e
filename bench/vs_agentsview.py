"""Archivist against agentsview, its closest peer, on the same Claude Code sessions: indexing, HTTP, MCP and CLI search.

    python bench/vs_agentsview.py [--megabytes 300] [--rounds 5] [--agentsview-venv DIR]

agentsview (a PyPI wheel of a Go binary) is never a dependency of the project: it is installed
in a scratch venv (--agentsview-venv, default bench/out/agentsview-venv; made with
``python -m venv DIR && DIR/bin/pip install agentsview`` where missing) and its Go binary runs
with its own HOME, a folder of this bench (bench/out/vs-agentsview-<MB>/home), so it never
reads the real home.

1. Writes about --megabytes MB of Claude Code sessions with bench/agentlog_index.py's generator
   into <home>/.claude/projects/-home-dev-project (kept and reused by later runs).
2. Indexes them afresh with both: `archivist index WORKSPACE --source claude-code=PROJECTS` and
   `AGENTSVIEW_NO_DAEMON=1 agentsview sync` (its one-shot sync without a daemon): wall time and
   peak resident memory (the highest sum over the process tree, sampled every 50 ms, and the
   VmHWM of the process started).
3. Serves both on free 127.0.0.1 ports (`archivist serve WORKSPACE --no-index` with a token;
   `agentsview serve --no-sync`), warms them, then for each of 10 queries runs --rounds rounds
   alternating the tools query by query, each a fresh HTTP GET (a new connection, one httpx client):
   archivist GET /api/search?query=Q, agentsview GET /api/v1/search?q=Q&limit=10 (its FTS5
   session search). Median and p95 per tool, answers other than 200, the ratio.
4. MCP over stdio with the SDK's client: archivist's `search` tool and agentsview's
   `search_sessions` (its MCP server forwards to the serve process), the same queries,
   0.2 s between calls as an agent makes them.
5. CLI, one search a process: `archivist search WORKSPACE Q` against
   `agentsview session search Q --fts --limit 10 --server URL` (its FTS over messages, asked
   of the running server as its CLI does when one runs), alternating, one run per query.
6. Prints every figure with the load average, and the targets: HTTP and MCP search median and
   p95 at or below agentsview's, no query refused; a CLI search <= 300 ms a process.

The phrase query is sent as FTS5 syntax to both (`"proxy timeout"`: archivist with
match_mode=raw, agentsview quotes a phrase itself). Hits are counted from each tool's first
page (at most 10) to show that both found something.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agentlog_index import child_pids, rss, write_sessions

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
ARCHIVIST = str(Path(sys.executable).parent / "archivist")
TOKEN = secrets.token_urlsafe(32)
AUTHORIZATION = {"Authorization": f"Bearer {TOKEN}"}

# (label, query, raw FTS5 syntax): words the generated sessions hold (agentlog_index's WORDS, the
# tool calls' fixed texts and paths), and one they never hold ("error")
QUERIES: list[tuple[str, str, bool]] = [
    ("rare word (Bash commands)", "pytest", False),
    ("rare word (tool results)", "successfully", False),
    ("phrase", '"proxy timeout"', True),
    ("common words", "the file", False),
    ("absent word", "error", False),
    ("common word", "test", False),
    ("identifier", "module_12", False),
    ("three words", "kubernetes readiness probe", False),
    ("one word", "handshake", False),
    ("two words", "token refresh", False),
]


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def agentsview_binary(venv: Path) -> Path:
    """The Go binary inside the wheel (installing the wheel into ``venv`` where missing)."""
    found = sorted(venv.glob("lib/python*/site-packages/agentsview/bin/agentsview"))
    if not found:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "agentsview"], check=True)
        found = sorted(venv.glob("lib/python*/site-packages/agentsview/bin/agentsview"))
    return found[0]


def agentsview_env(home: Path) -> dict[str, str]:
    """A bare environment: its own HOME, none of the variables that point agentsview elsewhere."""
    return {"HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def archivist_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARCHIVIST_")}
    return {**env, "HF_HUB_OFFLINE": "1", "ARCHIVIST_TOKEN": TOKEN}


def tree_pids(root: int) -> list[int]:
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo.extend(child_pids(pid))
    return pids


def vm_hwm_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def timed_run(command: list[str], env: dict[str, str]) -> tuple[float, int, int, str]:
    """Runs ``command``: (seconds, peak bytes of its process tree's summed RSS, VmHWM bytes of its
    own process, its output's last lines)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = [0, 0]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], sum(rss(pid) for pid in tree_pids(process.pid)))
            peak[1] = max(peak[1], vm_hwm_kib(process.pid) * 1024)
            done.wait(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    output = process.stdout.read()
    # (VmHWM is read until the process is reaped: it is a zombie, its status gone, after exit)
    process.wait()
    seconds = time.perf_counter() - started
    done.set()
    watcher.join()
    if process.returncode:
        raise RuntimeError(f"{' '.join(command)} exited with {process.returncode}:\n{output[-2000:]}")
    return seconds, peak[0], peak[1], "\n".join(output.strip().splitlines()[-3:])


def wait_listening(process: subprocess.Popen, port: int, what: str) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on {port}")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def summary(name: str, values: list[float], failed: int) -> str:
    if not values:
        return f"  {name:<10} no answer ({failed} failed)"
    return (f"  {name:<10} median {statistics.median(values):7.1f} ms  p95 {percentile(values, 0.95):7.1f} ms  "
            f"({len(values)} answered, {failed} refused/failed)")  # fmt: skip


def compare(title: str, times: dict[str, list[float]], failed: dict[str, int], target: str) -> None:
    print(f"{title} ({load()})")
    print(summary("archivist", times["archivist"], failed["archivist"]))
    print(summary("agentsview", times["agentsview"], failed["agentsview"]))
    if times["archivist"] and times["agentsview"]:
        a, b = times["archivist"], times["agentsview"]
        median = statistics.median(a) / statistics.median(b)
        p95 = percentile(a, 0.95) / percentile(b, 0.95)
        met = median <= 1 and p95 <= 1 and not failed["archivist"]
        print(f"  ratio archivist/agentsview: median {median:.2f}x, p95 {p95:.2f}x  "
              f"[{target}: {'met' if met else 'NOT met'}]")  # fmt: skip


def per_query(rows: dict[str, dict[str, list[float]]], hits: dict[str, dict[str, int | str]]) -> None:
    print(f"  {'query':<32} {'archivist ms':>13} {'agentsview ms':>14}   hits on page 1 (archivist / agentsview)")
    for label, query, _ in QUERIES:
        a, b = rows["archivist"].get(query, []), rows["agentsview"].get(query, [])
        am = f"{statistics.median(a):.1f}" if a else "-"
        bm = f"{statistics.median(b):.1f}" if b else "-"
        print(f"  {(query + ' (' + label + ')')[:32]:<32} {am:>13} {bm:>14}   "
              f"{hits['archivist'].get(query, '?')} / {hits['agentsview'].get(query, '?')}")  # fmt: skip


# -- HTTP -------------------------------------------------------------------------------------


HTTP = httpx.Client(timeout=60, headers={"Connection": "close"})  # (one client: no SSL context made per request)


def http_request(tool: str, base: str, query: str, raw: bool) -> tuple[float, int, int]:
    """A fresh GET (a new connection, closed after the answer): (milliseconds, status, hits on the page)."""
    if tool == "archivist":
        url, params, headers = f"{base}/api/search", {"query": query}, AUTHORIZATION
        if raw:
            params["match_mode"] = "raw"
    else:
        url, params, headers = f"{base}/api/v1/search", {"q": query, "limit": "10"}, {}
    started = time.perf_counter()
    try:
        response = HTTP.get(url, params=params, headers=headers)
    except httpx.HTTPError:
        return (time.perf_counter() - started) * 1000, 0, 0
    ms = (time.perf_counter() - started) * 1000
    found = 0
    if response.status_code == 200:
        body = response.json()
        found = len(body.get("results") or [])
    return ms, response.status_code, found


def http_bench(bases: dict[str, str], rounds: int) -> None:
    for _ in range(2):  # warm: every query once
        for _, query, raw in QUERIES:
            for tool, base in bases.items():
                http_request(tool, base, query, raw)
    times: dict[str, list[float]] = {"archivist": [], "agentsview": []}
    rows: dict[str, dict[str, list[float]]] = {"archivist": {}, "agentsview": {}}
    failed = {"archivist": 0, "agentsview": 0}
    hits: dict[str, dict[str, int | str]] = {"archivist": {}, "agentsview": {}}
    statuses: dict[str, set[int]] = {"archivist": set(), "agentsview": set()}
    for r in range(rounds):
        for _, query, raw in QUERIES:
            order = list(bases) if r % 2 == 0 else list(reversed(bases))
            for tool in order:
                ms, status, found = http_request(tool, bases[tool], query, raw)
                if status == 200:
                    times[tool].append(ms)
                    rows[tool].setdefault(query, []).append(ms)
                    hits[tool][query] = found
                else:
                    failed[tool] += 1
                    statuses[tool].add(status)
    compare(f"HTTP search, {rounds} rounds x {len(QUERIES)} queries, a fresh GET each", times, failed,
            "target: median and p95 <= agentsview's, none refused")  # fmt: skip
    for tool, codes in statuses.items():
        if codes:
            print(f"  {tool} answered {sorted(codes)} (0: no answer)")
    per_query(rows, hits)


# -- MCP --------------------------------------------------------------------------------------


def mcp_hits(text: str) -> int | str:
    try:
        return len(json.loads(text).get("results") or [])
    except (ValueError, AttributeError):
        return "?"


async def mcp_bench(workspace: Path, binary: Path, home: Path, server: str, rounds: int) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    servers = {
        "archivist": StdioServerParameters(command=ARCHIVIST, args=["mcp", str(workspace)], env=archivist_env()),
        "agentsview": StdioServerParameters(
            command=str(binary), args=["mcp", "--server", server], env=agentsview_env(home)
        ),
    }

    def arguments(tool: str, query: str, raw: bool) -> tuple[str, dict[str, Any]]:
        if tool == "archivist":
            return "search", {"query": query, **({"match_mode": "raw"} if raw else {})}
        return "search_sessions", {"query": query, "limit": 10}

    times: dict[str, list[float]] = {"archivist": [], "agentsview": []}
    rows: dict[str, dict[str, list[float]]] = {"archivist": {}, "agentsview": {}}
    failed = {"archivist": 0, "agentsview": 0}
    hits: dict[str, dict[str, int | str]] = {"archivist": {}, "agentsview": {}}
    errors: dict[str, str] = {}
    with open(OUT / "vs-agentsview-mcp-stderr.log", "w") as errlog:
        async with AsyncExitStack() as stack:
            sessions = {}
            for tool, params in servers.items():
                read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                sessions[tool] = session
            for _, query, raw in QUERIES:  # warm: every query once
                for tool, session in sessions.items():
                    await session.call_tool(*arguments(tool, query, raw))
            for r in range(rounds):
                for _, query, raw in QUERIES:
                    order = list(sessions) if r % 2 == 0 else list(reversed(sessions))
                    for tool in order:
                        await asyncio.sleep(0.2)
                        started = time.perf_counter()
                        try:
                            result = await sessions[tool].call_tool(*arguments(tool, query, raw))
                            ms = (time.perf_counter() - started) * 1000
                            error = getattr(result, "is_error", None) or getattr(result, "isError", False)
                            text = "".join(getattr(part, "text", "") for part in result.content)
                        except Exception as exc:  # a failed call is counted, not fatal
                            error, text, ms = True, repr(exc), 0.0
                        if error:
                            failed[tool] += 1
                            errors.setdefault(tool, text[:200])
                        else:
                            times[tool].append(ms)
                            rows[tool].setdefault(query, []).append(ms)
                            hits[tool][query] = mcp_hits(text)
    compare(f"MCP search over stdio, {rounds} rounds x {len(QUERIES)} queries, 0.2 s apart "
            "(archivist `search`, agentsview `search_sessions`)", times, failed,
            "target: median and p95 <= agentsview's, none refused")  # fmt: skip
    for tool, text in errors.items():
        print(f"  {tool} first error: {text}")
    per_query(rows, hits)


# -- CLI --------------------------------------------------------------------------------------


def cli_bench(workspace: Path, binary: Path, home: Path, server: str) -> None:
    commands = {
        "archivist": lambda q, raw: ([ARCHIVIST, "search", str(workspace), q, *(["--match-mode", "raw"] if raw else [])],
                                     archivist_env()),
        "agentsview": lambda q, raw: ([str(binary), "session", "search", q, "--fts", "--limit", "10", "--server", server],
                                      agentsview_env(home)),
    }  # fmt: skip
    for make in commands.values():  # warm the file cache once each
        command, env = make("handshake", False)
        subprocess.run(command, env=env, capture_output=True)
    times: dict[str, list[float]] = {"archivist": [], "agentsview": []}
    failed = {"archivist": 0, "agentsview": 0}
    for n, (_, query, raw) in enumerate(QUERIES):
        order = list(commands) if n % 2 == 0 else list(reversed(commands))
        for tool in order:
            command, env = commands[tool](query, raw)
            started = time.perf_counter()
            done = subprocess.run(command, env=env, capture_output=True)
            ms = (time.perf_counter() - started) * 1000
            if done.returncode == 0:
                times[tool].append(ms)
            else:
                failed[tool] += 1
                print(f"  {tool} {query!r} exited {done.returncode}: {done.stderr.decode(errors='replace')[-200:]}")
    print(f"CLI search, one process a search, {len(QUERIES)} runs each alternating ({load()})")
    print(summary("archivist", times["archivist"], failed["archivist"]))
    print(summary("agentsview", times["agentsview"], failed["agentsview"]))
    if times["archivist"]:
        median = statistics.median(times["archivist"])
        print(f"  archivist median {median:.0f} ms a process [target <= 300 ms: {'met' if median <= 300 else 'NOT met'}]"
              + (f"; ratio archivist/agentsview {median / statistics.median(times['agentsview']):.1f}x"
                 if times["agentsview"] else ""))  # fmt: skip


# -- main -------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=300)
    parser.add_argument("--sessions", type=int, help="default: 2 a megabyte, as agentlog_index's default")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--agentsview-venv", type=Path, default=OUT / "agentsview-venv")
    parser.add_argument("--skip-index", action="store_true", help="reuse the archives of the last run")
    args = parser.parse_args()

    binary = agentsview_binary(args.agentsview_venv.resolve())
    version = subprocess.run([str(binary), "version"], capture_output=True, text=True).stdout.strip()
    root = OUT / f"vs-agentsview-{args.megabytes}"
    home = root / "home"
    projects = home / ".claude" / "projects"
    project = projects / "-home-dev-project"
    workspace = root / "workspace"
    print(f"archivist against {version}; {os.cpu_count()} CPUs; {load()}")

    if not (root / "written").exists():
        shutil.rmtree(root, ignore_errors=True)
        project.mkdir(parents=True)
        started = time.perf_counter()
        write_sessions(project, random.Random(42), args.sessions or 2 * args.megabytes, args.megabytes)
        (root / "written").write_text("")
        print(f"wrote the sessions in {time.perf_counter() - started:.0f} s")
    (workspace / "notes").mkdir(parents=True, exist_ok=True)
    (workspace / "notes" / "readme.md").write_text("# Notes\n", encoding="utf-8")
    files = list(project.rglob("*.jsonl"))
    total = sum(path.stat().st_size for path in files)
    mains = len(list(project.glob("*.jsonl")))
    print(f"{mains} sessions ({len(files) - mains} sub-agent transcripts), {total / 1e6:.0f} MB in {projects}")

    archive_dir = workspace / ".archivist"
    data_dir = home / ".agentsview"
    if not args.skip_index:
        shutil.rmtree(archive_dir, ignore_errors=True)
        shutil.rmtree(data_dir, ignore_errors=True)
        print(f"indexing afresh ({load()})")
        runs = {
            "archivist": ([ARCHIVIST, "index", str(workspace), "--source", f"claude-code={projects}"], archivist_env()),
            "agentsview": ([str(binary), "sync"], {**agentsview_env(home), "AGENTSVIEW_NO_DAEMON": "1"}),
        }
        for tool, (command, env) in runs.items():
            seconds, tree_peak, hwm, tail = timed_run(command, env)
            print(f"  {tool:<10} {seconds:6.1f} s, {total / 1e6 / seconds:5.1f} MB/s; peak RSS {tree_peak / 1e6:5.0f} MB "
                  f"(process tree, summed), VmHWM {hwm / 1e6:5.0f} MB (its own process)  ({load()})")  # fmt: skip
            for line in tail.splitlines():
                print(f"      | {line}")
        sizes = {
            "archivist": sum(p.stat().st_size for p in archive_dir.glob("archive.db*")),
            "agentsview": sum(p.stat().st_size for p in data_dir.glob("sessions.db*")),
        }
        print("  database size: " + ", ".join(f"{tool} {size / 1e6:.0f} MB" for tool, size in sizes.items()))

    ports = {"archivist": free_port(), "agentsview": free_port()}
    servers = {
        "archivist": subprocess.Popen(
            [ARCHIVIST, "serve", str(workspace), "--no-index", "--port", str(ports["archivist"]), "--no-open"],
            env=archivist_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        "agentsview": subprocess.Popen(
            [str(binary), "serve", "--no-sync", "--no-browser", "--no-update-check", "--port", str(ports["agentsview"])],
            env=agentsview_env(home), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
    }  # fmt: skip
    bases = {tool: f"http://127.0.0.1:{port}" for tool, port in ports.items()}
    try:
        for tool, process in servers.items():
            started = time.perf_counter()
            wait_listening(process, ports[tool], tool)
            print(f"{tool} serve listening after {time.perf_counter() - started:.1f} s")
        print()
        http_bench(bases, args.rounds)
        print()
        asyncio.run(mcp_bench(workspace, binary, home, bases["agentsview"], args.rounds))
        print()
        cli_bench(workspace, binary, home, bases["agentsview"])
    finally:
        for process in servers.values():
            stop(process)
    print()
    print(
        "targets: HTTP and MCP search median and p95 <= agentsview's, no query refused; "
        f"CLI <= 300 ms a process ({load()})"
    )


if __name__ == "__main__":
    main()
