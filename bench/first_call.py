"""What an agent feels first: indexing, cold start, warm latency, answer size and memory, over MCP stdio.

    python bench/first_call.py [--workspace WS] [--corpus DIR] [--all-markdown DIR] [--skip-embed]
                               [--qmd PATH/TO/qmd] [--starts [--before CHECKOUT]]

Makes a workspace whose notes are a copy of --corpus (default: the 296 agent reports of
../shared/eval/markdown/humanlayer-thoughts, copied to a temporary folder, never into the
project), or uses --workspace as it is, and measures, each as a whole process:

- keyword indexing of a fresh archive, and the no-op re-index (targets 0.5 s and 0.2 s);
- indexing every file under --all-markdown (default ../shared/eval/markdown, target 3 s);
- embedding the workspace (target 200 s; skipped with --skip-embed or when already embedded);
- `archivist mcp`: spawn to the `initialize` answer, to the `tools/list` answer (target 0.3 s,
  answered from what a first start, not timed, kept in the cache folder),
  to the first keyword result, and, in a fresh server, to the first hybrid result (target 1.5 s),
  the search sent at once (the server answers it before the MCP SDK loads) and sent 0.3 s after
  the list (the SDK loading meanwhile, as when an agent thinks briefly);
- warm keyword, hybrid and semantic searches: median and p95 over the ten QUERIES, five
  rounds (targets 5 ms and 20 ms medians for keyword and hybrid), answered by the SDK's
  session (a `resources/list`, which only the SDK answers, hands the session over first);
- the size of the default answer for 10 results (target 2.5 KB), and of output=full;
- the server's resident memory after the queries (target 300 MB);
- `archivist search WS QUERY --mode keyword`, the whole CLI call (target 0.3 s).

With --qmd (qmd's command; qmd 2.x needs Node 22), the same run measures qmd on the same
notes, with its index in a scratch home folder, where it can do without its models (which
it would download): `qmd collection add` (fresh index), `qmd update` (no-op), `qmd mcp`
(spawn to initialize, tools/list and first keyword result; warm keyword searches through
its `query` tool with a `lex` search and no reranking; answer size; memory) and
`qmd search`. Each of those figures is then printed with Archivist's as a ratio
(Archivist / qmd: below 1, Archivist is faster or smaller). The two run interleaved.

With --starts, only what starting costs, over --repeat rounds (7 by default there): spawn to the
`tools/list` answer, `archivist search WS QUERY` with --mode keyword and without (hybrid once the
workspace is embedded) and `import archivist.cli`, each a whole process; with --before, the same
of another checkout's source (a worktree of an earlier commit, put first on PYTHONPATH), and with
--qmd, qmd's `mcp` handshake and `qmd search`: all in turn within each round, so that a busy
machine weighs on each alike. Each median is printed with its ratios (after / before, after / qmd).

The machine's load is printed with the figures.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
ROUNDS = 5  # warm searches: the ten queries, this many times


def timed(*command: str, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - started


def median_of(runs: list[float]) -> str:
    return f"{statistics.median(runs):.2f} s (runs: {', '.join(f'{r:.2f}' for r in runs)})"


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


class Server:
    """An MCP server over stdio, spoken to in JSON-RPC lines; ``call(query, **extra)`` makes its search's request."""

    def __init__(self, command: list[str], env: dict[str, str], call: Callable[..., dict[str, Any]]) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
        )
        self.call = call
        self.next_id = 10

    def send(self, message: dict) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def answer(self) -> dict:
        assert self.process.stdout is not None
        while True:
            message = json.loads(self.process.stdout.readline())
            if "id" in message:  # (not a notification)
                return message

    def hand_over(self) -> None:
        """Wait for the MCP SDK's session: archivist answers a first search itself while the SDK loads."""
        self.send({"jsonrpc": "2.0", "id": "hand-over", "method": "resources/list"})
        self.answer()

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

    def search(self, query: str, **extra: object) -> tuple[float, str]:
        """Seconds to the answer, and the answer's text (what a client shows the model)."""
        self.next_id += 1
        started = time.perf_counter()
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": self.call(query, **extra)})
        message = self.answer()
        seconds = time.perf_counter() - started
        result = message.get("result") or {}
        if result.get("isError") or "error" in message:
            raise SystemExit(f"search {query!r} failed: {json.dumps(message)[:500]}")
        return seconds, result["content"][0]["text"]

    def rss_mb(self) -> float:
        """Resident memory of the server and its child processes (a launcher script starts one)."""
        pids = [self.process.pid]
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        if children.exists():
            pids += [int(pid) for pid in children.read_text().split()]
        total = 0
        for pid in pids:
            status = Path(f"/proc/{pid}/status").read_text()
            total += next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
        return total / 1024

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def archivist_call(query: str, mode: object = "hybrid", **extra: object) -> dict[str, Any]:
    return {"name": "search", "arguments": {"query": query, "mode": mode, "page_size": 10, **extra}}


def qmd_call(query: str, **extra: object) -> dict[str, Any]:
    """qmd's keyword search through MCP: BM25 alone, no query expansion or reranking (they need its models)."""
    return {"name": "query", "arguments": {"searches": [{"type": "lex", "query": query}], "limit": 10, "rerank": False}}


class Qmd:
    """qmd on the same notes, its configuration and index in a home folder of its own."""

    def __init__(self, command: str, notes: Path, scratch: Path) -> None:
        self.command = command
        self.notes = notes
        self.home = scratch / "qmd-home"
        self.env = {**os.environ, "HOME": str(self.home), "XDG_CONFIG_HOME": "", "XDG_CACHE_HOME": ""}
        self.env = {key: value for key, value in self.env.items() if value}

    def fresh_index(self) -> float:
        shutil.rmtree(self.home, ignore_errors=True)
        self.home.mkdir(parents=True)
        return timed(self.command, "collection", "add", str(self.notes), "--name", "notes", env=self.env)

    def update(self) -> float:
        return timed(self.command, "update", env=self.env)

    def server(self) -> Server:
        return Server([self.command, "mcp"], self.env, qmd_call)

    def cli(self, query: str) -> float:
        return timed(self.command, "search", query, env=self.env)


def ratio(ours: float, theirs: float | None) -> str:
    return f"; qmd {theirs:.3g}, ratio {ours / theirs:.2f}" if theirs else ""


def interleaved(rounds: int, ours: Callable[[], float], theirs: Callable[[], float] | None, target: str) -> str:
    """Seconds of ``ours`` (and of ``theirs``, in turn, when given) over ``rounds`` rounds: the
    median and each run, the target, and the ratio to theirs."""
    runs: list[float] = []
    their_runs: list[float] = []
    for _ in range(rounds):
        runs.append(ours())
        if theirs is not None:
            their_runs.append(theirs())
    their = statistics.median(their_runs) if their_runs else None
    return f"{median_of(runs)}; target {target}{ratio(statistics.median(runs), their)}"


def warm(server: Server, **extra: object) -> tuple[list[float], int]:
    """Seconds of each search of ROUNDS rounds of the queries, after one round to warm up; how many searches."""
    for query in QUERIES:  # statements prepared, pages cached (and the model loaded)
        server.search(query, **extra)
    times = [server.search(query, **extra)[0] for _ in range(ROUNDS) for query in QUERIES]
    return times, len(times) + len(QUERIES)


def start_figures(workspace: Path, env: dict[str, str], qmd: Qmd | None, before: Path | None, rounds: int) -> None:
    """The start figures (--starts): each side in turn within each round, their medians and ratios."""
    sides = {"after": env, **({"before": {**env, "PYTHONPATH": str(before.resolve())}} if before else {})}
    command = [ARCHIVIST, "mcp", str(workspace)]

    def listed(server: Server) -> float:
        try:
            return server.handshake()[1]
        finally:
            server.close()

    for side_env in sides.values():  # the SDK's answers kept for each side's source, not timed
        listed(Server(command, side_env, archivist_call))

    measures: dict[str, dict[str, Callable[[], float]]] = {
        "spawn -> tools/list answered": {
            **{side: (lambda e=e: listed(Server(command, e, archivist_call))) for side, e in sides.items()},
            **({"qmd": lambda: listed(qmd.server())} if qmd else {}),
        },
        "`archivist search WS QUERY --mode keyword`": {
            **{
                side: (lambda e=e: timed(ARCHIVIST, "search", str(workspace), QUERIES[0], "--mode", "keyword", env=e))
                for side, e in sides.items()
            },
            **({"qmd": lambda: qmd.cli(QUERIES[0])} if qmd else {}),
        },
        "`archivist search WS QUERY` (its default mode)": {
            **{
                side: (lambda e=e: timed(ARCHIVIST, "search", str(workspace), QUERIES[0], env=e))
                for side, e in sides.items()
            },
            **({"qmd": lambda: qmd.cli(QUERIES[0])} if qmd else {}),
        },
        "`python -P -c 'import archivist.cli'`": {
            side: (lambda e=e: timed(sys.executable, "-P", "-c", "import archivist.cli", env=e))
            for side, e in sides.items()
        },
    }
    runs: dict[str, dict[str, list[float]]] = {what: {side: [] for side in by} for what, by in measures.items()}
    loads = [os.getloadavg()[0]]
    for _ in range(rounds):
        for what, by in measures.items():
            for side, measure in by.items():
                runs[what][side].append(measure())
        loads.append(os.getloadavg()[0])
    print(f"load average over the rounds: {min(loads):.2f} to {max(loads):.2f}")
    for what, by in runs.items():
        medians = {side: statistics.median(seconds) for side, seconds in by.items()}
        told = "; ".join(f"{side} {median_of(seconds)}" for side, seconds in by.items())
        ratios = [f"{side} / {other} {medians[side] / medians[other]:.2f}"
                  for side, other in (("after", "before"), ("after", "qmd"), ("before", "qmd"))
                  if side in medians and other in medians]  # fmt: skip
        print(f"{what} (whole process): {told}" + (f"; ratios {', '.join(ratios)}" if ratios else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workspace", type=Path, help="an existing workspace, used as it is (embedding it adds only what is new)"
    )
    parser.add_argument("--corpus", type=Path, default=EVAL / "humanlayer-thoughts")
    parser.add_argument("--all-markdown", type=Path, default=EVAL)
    parser.add_argument("--skip-embed", action="store_true", help="measure no embedding (hybrid figures need it)")
    parser.add_argument("--qmd", help="qmd's command, to measure it on the same notes in the same run")
    parser.add_argument("--repeat", type=int, help="rounds of each figure (default 3; with --starts, 7)")
    parser.add_argument("--starts", action="store_true", help="measure only what starting costs (see above)")
    parser.add_argument("--before", type=Path, help="with --starts: another checkout's source, measured in turn")
    args = parser.parse_args()
    args.repeat = args.repeat or (7 if args.starts else 3)
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    scratch = Path(tempfile.mkdtemp(prefix="archivist-first-call-"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    try:
        if args.workspace:
            workspace = args.workspace
        else:
            workspace = scratch / "workspace"
            shutil.copytree(args.corpus, workspace / "notes")
        qmd = Qmd(args.qmd, workspace / "notes", scratch) if args.qmd else None
        if args.starts:
            subprocess.run([ARCHIVIST, "index", str(workspace)], check=True, stdout=subprocess.DEVNULL, env=env)
            if qmd:
                qmd.fresh_index()
            start_figures(workspace, env, qmd, args.before, args.repeat)
            return
        if not args.workspace:
            files = sum(1 for _ in (workspace / "notes").rglob("*.md"))

            def fresh_index() -> float:
                shutil.rmtree(workspace / ".archivist", ignore_errors=True)
                return timed(ARCHIVIST, "index", str(workspace))

            figures = interleaved(args.repeat, fresh_index, qmd.fresh_index if qmd else None, "0.5 s")
            print(f"keyword index, fresh, {files} files (whole process): {figures}")
        figures = interleaved(
            args.repeat, lambda: timed(ARCHIVIST, "index", str(workspace)), qmd.update if qmd else None, "0.2 s"
        )
        print(f"re-index, nothing changed (whole process): {figures}")
        if args.all_markdown.is_dir() and not args.workspace:
            everything = scratch / "everything"
            shutil.copytree(args.all_markdown, everything / "notes")
            files = sum(1 for _ in (everything / "notes").rglob("*.md"))
            print(f"index {files} files of {args.all_markdown.name}/ (whole process): "
                  f"{timed(ARCHIVIST, 'index', str(everything)):.2f} s; target 3 s")  # fmt: skip
        if not args.skip_embed:
            seconds = timed(ARCHIVIST, "embed", str(workspace))
            print(f"embed the workspace (whole process): {seconds:.1f} s; target 200 s")

        command = [ARCHIVIST, "mcp", str(workspace)]
        first = Server(command, env, archivist_call)
        first.handshake()  # the SDK lists the tools, and its answers are kept for the starts timed
        first.close()
        starts: list[tuple[float, float, float]] = []
        theirs_start: list[tuple[float, float, float]] = []
        for _ in range(args.repeat):
            for side, runs in ((Server(command, env, archivist_call), starts),
                               *(((qmd.server(), theirs_start),) if qmd else ())):  # fmt: skip
                initialized, listed = side.handshake()
                side.search(QUERIES[0], mode="keyword")
                runs.append((initialized, listed, side.since_spawn()))
                side.close()
        for n, (what, target) in enumerate(
            (("initialize answered", ""), ("tools/list answered", "; target 0.3 s"), ("first keyword result", ""))
        ):
            ours = [start[n] for start in starts]
            their = statistics.median(start[n] for start in theirs_start) if theirs_start else None
            print(f"spawn -> {what}: {median_of(ours)}{target}{ratio(statistics.median(ours), their)}")
        for pause, when in ((0.0, "sent at once"), (0.3, "sent 0.3 s after the list")):
            hybrid_starts = []
            for _ in range(args.repeat):
                server = Server(command, env, archivist_call)
                server.handshake()
                time.sleep(pause)
                server.search(QUERIES[1], mode="hybrid")
                hybrid_starts.append(server.since_spawn())
                server.close()
            print(f"spawn -> first hybrid result, {when}: {median_of(hybrid_starts)}; target 1.5 s")

        theirs_warm: list[float] = []
        their_size = their_rss = None
        if qmd:
            server = qmd.server()
            server.handshake()
            theirs_warm, _ = warm(server)
            their_size = statistics.median(len(server.search(query)[1].encode()) for query in QUERIES)
            their_rss = server.rss_mb()
            server.close()
        queries = 0
        server = Server(command, env, archivist_call)
        server.handshake()
        server.hand_over()
        for mode in ("keyword", "hybrid", "semantic"):
            times, count = warm(server, mode=mode)
            queries += count
            median, high = statistics.median(times) * 1000, p95(times) * 1000
            their = statistics.median(theirs_warm) * 1000 if mode == "keyword" and theirs_warm else None
            print(f"warm {mode}, median / p95 over {len(times)}: {median:.1f} / {high:.1f} ms{ratio(median, their)}")
            if mode == "keyword":
                sizes = [len(server.search(query, mode=mode)[1].encode()) for query in QUERIES]
                print(f"answer size for 10 keyword results, default: median {statistics.median(sizes) / 1024:.2f} KB"
                      f"{ratio(statistics.median(sizes) / 1024, their_size / 1024 if their_size else None)}")  # fmt: skip
                rss = server.rss_mb()
                print(f"server memory after {count} keyword queries: {rss:.0f} MB RSS{ratio(rss, their_rss)}")
            if mode == "hybrid":
                sizes = [len(server.search(query, mode=mode)[1].encode()) for query in QUERIES]
                full = [len(server.search(query, mode=mode, output="full")[1].encode()) for query in QUERIES]
                print(f"answer size for 10 hybrid results, default: median {statistics.median(sizes) / 1024:.2f} KB, "
                      f"largest {max(sizes) / 1024:.2f} KB; target 2.5 KB (output=full: {statistics.median(full) / 1024:.1f} KB)")  # fmt: skip
        print(f"server memory after {queries} queries (keyword, hybrid, then semantic): "
              f"{server.rss_mb():.0f} MB RSS; target 300 MB")  # fmt: skip
        server.close()

        figures = interleaved(
            5,
            lambda: timed(ARCHIVIST, "search", str(workspace), QUERIES[0], "--mode", "keyword"),
            (lambda: qmd.cli(QUERIES[0])) if qmd else None,
            "0.3 s",
        )
        print(f"`archivist search WS QUERY --mode keyword` (whole process): {figures}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
