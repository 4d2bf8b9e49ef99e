"""Indexing Claude Code sessions as a source, against reading the same bytes with json.loads line by line.

Writes --sessions synthetic sessions totalling about --megabytes MB (user prompts,
assistant text with thinking and tool calls (a Read, or every third turn an Edit with its old
and new text), tool results with file contents, as
Claude Code writes them), then times `index_workspace` with them as a `claude-code`
source (a fresh archive), a no-op re-index, a re-index after one line is appended to
one session of --append-megabytes MB among them, and a plain loop of `json.loads` over
every line. Prints the times, the throughput and the ratio (targets: ≥ 40 MB/s, ≤ 8×
json.loads; one appended line ≤ 0.2 s); when 100 sessions were first there for another
connection (a search), and how many of them were the 100 newest (target: within 5 s);
and the archive's size per message and per byte of log.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

from archivist.archive.database import sqlite3
from archivist.archive.indexer import index_workspace
from archivist.workspace import archive_path

WORDS = [
    "proxy",
    "timeout",
    "kubernetes",
    "pod",
    "restart",
    "readiness",
    "probe",
    "token",
    "refresh",
    "session",
    "cookie",
    "header",
    "retry",
    "backoff",
    "latency",
    "socket",
    "handshake",
    "certificate",
    "deploy",
    "rollback",
    "migration",
    "schema",
    "index",
]


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def tool_use(rng: random.Random, n: int) -> dict[str, object]:
    """The n-th turn's tool call: every third an Edit (its old and new text), else a Read."""
    path = f"/home/dev/project/src/module_{n % 50}.py"
    if n % 3:
        return {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"file_path": path}}
    edit = {"file_path": path, "old_string": sentence(rng, 30), "new_string": sentence(rng, 40)}
    return {"type": "tool_use", "id": f"toolu_{n}", "name": "Edit", "input": edit}


def session_lines(rng: random.Random, session: str, target_bytes: int) -> Iterator[str]:
    """The lines of one session of about ``target_bytes``, as they are made."""
    size, parent, n = 0, None, 0
    envelope = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/project", "sessionId": session,
                "version": "2.0.49", "gitBranch": "main"}  # fmt: skip
    while size < target_bytes:
        n += 1
        at = f"2025-11-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00.000Z"
        user = {**envelope, "type": "user", "parentUuid": parent, "uuid": f"{session}-u{n}", "timestamp": at,
                "message": {"role": "user", "content": sentence(rng, 30)}}  # fmt: skip
        assistant = {**envelope, "type": "assistant", "parentUuid": user["uuid"], "uuid": f"{session}-a{n}",
                     "timestamp": at, "message": {"id": f"msg_{session}_{n}", "type": "message", "role": "assistant",
                     "model": "claude-sonnet-4-5-20250929", "content": [
                         {"type": "thinking", "thinking": sentence(rng, 60), "signature": "x" * 40},
                         {"type": "text", "text": sentence(rng, 80)},
                         tool_use(rng, n)]}}  # fmt: skip
        result = {**envelope, "type": "user", "parentUuid": assistant["uuid"], "uuid": f"{session}-t{n}",
                  "timestamp": at, "message": {"role": "user", "content": [
                      {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": sentence(rng, 400)}]}}  # fmt: skip
        parent = result["uuid"]
        for record in (user, assistant, result):
            line = json.dumps(record)
            yield line
            size += len(line) + 1


def scratch(root: Path) -> tuple[Path, Path]:
    """A workspace of one note under ``root``, and a Claude Code project folder beside it
    (``root/projects/-home-dev-project``): the workspace and the project."""
    workspace = root / "workspace"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes" / "readme.md").write_text("# Notes\n", encoding="utf-8")
    project = root / "projects" / "-home-dev-project"
    project.mkdir(parents=True)
    return workspace, project


def write_sessions(project: Path, rng: random.Random, sessions: int, megabytes: float) -> None:
    """``sessions`` sessions of about ``megabytes`` MB in all (each 0.2 to 1.8 times its share)."""
    per_session = int(megabytes * 1_000_000) // sessions
    for s in range(sessions):
        session = f"00000000-0000-4000-8000-{s:012d}"
        size = int(per_session * rng.uniform(0.2, 1.8))
        (project / f"{session}.jsonl").write_text("\n".join(session_lines(rng, session, size)) + "\n", "utf-8")


class FirstSessions:
    """Watches, from another connection as a search would, when 100 sessions are first there,
    and how many of them are the newest."""

    def __init__(self, db_path: Path, newest: set[str]) -> None:
        self.db_path = db_path
        self.newest = newest
        self.first: float | None = None
        self.newest_then = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def start(self, started: float) -> None:
        self.started = started
        self.thread.start()

    def stop(self) -> None:
        self.done.set()
        self.thread.join()

    def count(self, sql: str) -> int:
        with closing(sqlite3.connect(self.db_path)) as conn:
            return int(conn.execute(sql).fetchone()[0])

    def _watch(self) -> None:
        while not self.done.wait(0.1):
            if not self.db_path.exists():
                continue
            try:
                with closing(sqlite3.connect(self.db_path)) as conn:
                    keys = [row[0] for row in conn.execute("SELECT key FROM documents WHERE source LIKE 'log:%'")]
            except sqlite3.Error:
                continue
            if len(keys) >= 100:
                self.first = time.perf_counter() - self.started
                self.newest_then = len({key.split(":", 2)[-1] for key in keys} & self.newest)
                return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--megabytes", type=int, default=1000)
    parser.add_argument("--append-megabytes", type=int, default=100, help="the session a line is appended to")
    args = parser.parse_args()
    rng = random.Random(42)
    root = Path(tempfile.mkdtemp(prefix="archivist-agentlogs-"))
    try:
        workspace, project = scratch(root)
        write_sessions(project, rng, args.sessions, args.megabytes)
        largest = project / "ffffffff-0000-4000-8000-000000000000.jsonl"
        largest.write_text("\n".join(session_lines(rng, largest.stem, args.append_megabytes * 1_000_000)) + "\n")
        files = sorted(project.glob("*.jsonl"))
        total = sum(path.stat().st_size for path in files)

        started = time.perf_counter()
        lines = 0
        for path in files:
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    json.loads(line)
                    lines += 1
        baseline = time.perf_counter() - started

        newest = {f"-home-dev-project/{path.stem}" for path in sorted(files, key=lambda p: -p.stat().st_mtime_ns)[:100]}
        watch = FirstSessions(archive_path(workspace), newest)
        started = time.perf_counter()
        watch.start(started)
        summary = index_workspace(workspace, log_sources=[("claude-code", root / "projects")])
        indexed = time.perf_counter() - started
        watch.stop()
        started = time.perf_counter()
        index_workspace(workspace)
        noop = time.perf_counter() - started
        with largest.open("a", encoding="utf-8") as appended:
            appended.write(json.dumps({"type": "user", "sessionId": largest.stem, "uuid": "appended",
                                       "timestamp": "2025-12-01T00:00:00Z", "cwd": "/home/dev/project",
                                       "message": {"role": "user", "content": "one more line"}}) + "\n")  # fmt: skip
        started = time.perf_counter()
        index_workspace(workspace)
        appended_seconds = time.perf_counter() - started

        size = sum(path.stat().st_size for path in archive_path(workspace).parent.glob("archive.db*"))
        messages = watch.count("SELECT count(*) FROM messages")
        print(f"{len(files)} sessions, {total / 1e6:.0f} MB, {lines} lines; {summary.documents} documents")
        print(f"json.loads line by line: {baseline:.1f} s")
        print(f"index as a claude-code source: {indexed:.1f} s, {total / 1e6 / indexed:.1f} MB/s "
              f"({indexed / baseline:.1f}x json.loads; target >= 40 MB/s, <= 8x)")  # fmt: skip
        if watch.first is not None:
            print(f"the 100 newest sessions searchable {watch.first:.1f} s after the start "
                  f"({watch.newest_then} of the first 100 stored are the newest; target <= 5 s)")  # fmt: skip
        print(f"archive: {size / 1e6:.0f} MB for {messages:,} messages: {size / max(messages, 1):,.0f} bytes a message, "
              f"{size / total:.2f} bytes a byte of log")  # fmt: skip
        print(f"no-op re-index: {noop:.2f} s")
        print(f"re-index after one line appended to the largest session ({largest.stat().st_size / 1e6:.1f} MB): "
              f"{appended_seconds:.2f} s (target <= 0.2 s)")  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
