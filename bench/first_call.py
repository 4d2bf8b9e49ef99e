"""What an agent feels first: indexing, cold start, warm latency, answer size and memory, over MCP stdio.

    python bench/first_call.py [--workspace WS] [--corpus DIR] [--all-markdown DIR] [--skip-embed]

Makes a workspace whose notes are a copy of --corpus (default: the 296 agent reports of
../shared/eval/markdown/humanlayer-thoughts, copied to a temporary folder, never into the
project), or uses --workspace as it is, and measures, each as a whole process:

- keyword indexing of a fresh archive, and the no-op re-index (targets 0.5 s and 0.2 s);
- indexing every file under --all-markdown (default ../shared/eval/markdown, target 3 s);
- embedding the workspace (target 200 s; skipped with --skip-embed or when already embedded);
- `archivist mcp`: spawn to the `initialize` answer, to the `tools/list` answer (target 0.5 s),
  to the first keyword result, and, in a fresh server, to the first hybrid result (target 1.5 s);
- warm keyword, hybrid and semantic searches: median and p95 over the ten QUERIES, five
  rounds (targets 5 ms and 20 ms medians for keyword and hybrid);
- the size of the default answer for 10 results (target 2 KB), and of output=full;
- the server's resident memory after 50 queries (target 300 MB);
- `archivist search WS QUERY --mode keyword`, the whole CLI call (target 0.3 s).

Runs are interleaved with nothing else; the machine's load is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp_startup import INITIALIZE, INITIALIZED, TOOLS_LIST

ROOT = Path(__file__).resolve().parent.parent
ARCHIVIST = str(Path(sys.executable).parent / "archivist")
EVAL = ROOT.parent / "shared" / "eval" / "markdown"
QUERIES = [
    "pull request review",
    "daemon session state",
    "approval flow",
    "websocket events",
    "sqlite migration",
    "claude code hooks",
    "linear ticket",
    "test coverage",
    "mcp server",
    "release process",
]


def timed(*command: str) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def median_of(runs: list[float]) -> str:
    return f"{statistics.median(runs):.2f} s (runs: {', '.join(f'{r:.2f}' for r in runs)})"


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


class Server:
    """`archivist mcp WS` over stdio, spoken to in JSON-RPC lines."""

    def __init__(self, workspace: Path) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [ARCHIVIST, "mcp", str(workspace)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        self.next_id = 10

    def send(self, message: dict) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def answer(self) -> dict:
        assert self.process.stdout is not None
        return json.loads(self.process.stdout.readline())

    def since_spawn(self) -> float:
        return time.perf_counter() - self.started

    def handshake(self) -> tuple[float, float]:
        self.send(INITIALIZE)
        self.answer()
        initialized = self.since_spawn()
        self.send(INITIALIZED)
        self.send(TOOLS_LIST)
        self.answer()
        return initialized, self.since_spawn()

    def search(self, query: str, mode: str, **extra: object) -> tuple[float, str]:
        """Seconds to the answer, and the answer's structured text."""
        self.next_id += 1
        started = time.perf_counter()
        self.send(
            {
                "jsonrpc": "2.0",
                "id": self.next_id,
                "method": "tools/call",
                "params": {"name": "search", "arguments": {"query": query, "mode": mode, "page_size": 10, **extra}},
            }
        )
        message = self.answer()
        seconds = time.perf_counter() - started
        result = message.get("result") or {}
        if result.get("isError") or "error" in message:
            raise SystemExit(f"search {query!r} ({mode}) failed: {json.dumps(message)[:500]}")
        return seconds, result["content"][0]["text"]

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")) / 1024

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workspace", type=Path, help="an existing workspace, used as it is (embedding it adds only what is new)"
    )
    parser.add_argument("--corpus", type=Path, default=EVAL / "humanlayer-thoughts")
    parser.add_argument("--all-markdown", type=Path, default=EVAL)
    parser.add_argument("--skip-embed", action="store_true", help="measure no embedding (hybrid figures need it)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    scratch = Path(tempfile.mkdtemp(prefix="archivist-first-call-"))
    try:
        if args.workspace:
            workspace = args.workspace
        else:
            workspace = scratch / "workspace"
            shutil.copytree(args.corpus, workspace / "notes")
            files = sum(1 for _ in (workspace / "notes").rglob("*.md"))
            fresh = []
            for _ in range(args.repeat):
                shutil.rmtree(workspace / ".archivist", ignore_errors=True)
                fresh.append(timed(ARCHIVIST, "index", str(workspace)))
            print(f"keyword index, fresh, {files} files (whole process): {median_of(fresh)}; target 0.5 s")
        noop = [timed(ARCHIVIST, "index", str(workspace)) for _ in range(args.repeat)]
        print(f"re-index, nothing changed (whole process): {median_of(noop)}; target 0.2 s")
        if args.all_markdown.is_dir() and not args.workspace:
            everything = scratch / "everything"
            shutil.copytree(args.all_markdown, everything / "notes")
            files = sum(1 for _ in (everything / "notes").rglob("*.md"))
            print(f"index {files} files of {args.all_markdown.name}/ (whole process): "
                  f"{timed(ARCHIVIST, 'index', str(everything)):.2f} s; target 3 s")  # fmt: skip
        if not args.skip_embed:
            seconds = timed(ARCHIVIST, "embed", str(workspace))
            print(f"embed the workspace (whole process): {seconds:.1f} s; target 200 s")

        starts = []
        for _ in range(args.repeat):
            server = Server(workspace)
            initialized, listed = server.handshake()
            server.search(QUERIES[0], "keyword")
            starts.append((initialized, listed, server.since_spawn()))
            server.close()
        print(f"spawn -> initialize answered: {median_of([s[0] for s in starts])}")
        print(f"spawn -> tools/list answered: {median_of([s[1] for s in starts])}; target 0.5 s")
        print(f"spawn -> first keyword result: {median_of([s[2] for s in starts])}")
        hybrid_starts = []
        for _ in range(args.repeat):
            server = Server(workspace)
            server.handshake()
            server.search(QUERIES[1], "hybrid")
            hybrid_starts.append(server.since_spawn())
            server.close()
        print(f"spawn -> first hybrid result: {median_of(hybrid_starts)}; target 1.5 s")

        server = Server(workspace)
        server.handshake()
        for query in QUERIES:  # warm: the model loaded, statements prepared, pages cached
            server.search(query, "hybrid")
        queries = 0
        for mode in ("keyword", "hybrid", "semantic"):
            times = []
            for _ in range(5):
                for query in QUERIES:
                    times.append(server.search(query, mode)[0])
                    queries += 1
            median, high = statistics.median(times) * 1000, p95(times) * 1000
            print(f"warm {mode}, median / p95 over {len(times)}: {median:.1f} / {high:.1f} ms")
        sizes = [len(server.search(query, "hybrid")[1].encode()) for query in QUERIES]
        full = [len(server.search(query, "hybrid", output="full")[1].encode()) for query in QUERIES]
        print(f"answer size for 10 results, default: median {statistics.median(sizes) / 1024:.1f} KB, "
              f"largest {max(sizes) / 1024:.1f} KB; target 2 KB (output=full: {statistics.median(full) / 1024:.1f} KB)")  # fmt: skip
        print(f"server memory after {queries + len(QUERIES) * 3} queries: {server.rss_mb():.0f} MB RSS; target 300 MB")
        server.close()

        cli = [timed(ARCHIVIST, "search", str(workspace), QUERIES[0], "--mode", "keyword") for _ in range(5)]
        print(f"`archivist search WS QUERY --mode keyword` (whole process): {median_of(cli)}; target 0.3 s")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
