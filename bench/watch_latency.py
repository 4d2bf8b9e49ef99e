"""Write-to-searchable latency with `archivist watch`: a message appended to a session, until a keyword search finds it.

A workspace with a Claude Code source of --sessions sessions is followed by a real
`archivist watch` process; each of --appends rounds appends one message with a word
nobody wrote before to one session, and times how long until the archive's message
index (message_index, what keyword search reads) matches that word. Prints p50 and p95 (target p95 2 s).
With --megabytes N, one more session of about N MB is written as real ones are
(``agentlog_index.write_session``: tool calls, sub-agents, usage) and every line is appended
to it: the first append, the first whose session's earlier lines its reader needs (read ahead
when the watch starts), is told apart (target: within 0.2 s of the write at 100 MB).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import sqlite_utils
from agentlog_index import scratch, write_session

from archivist.workspace import archive_path

ARCHIVIST = [sys.executable, "-c", "from archivist.cli import cli; cli()"]


def session_line(session: str, uuid: str, parent: str | None, text: str, at: str) -> str:
    return json.dumps(
        {
            "parentUuid": parent,
            "isSidechain": False,
            "type": "user",
            "cwd": "/home/dev/project",
            "sessionId": session,
            "gitBranch": "main",
            "message": {"role": "user", "content": text},
            "uuid": uuid,
            "timestamp": at,
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--messages", type=int, default=40, help="messages per session to start with")
    parser.add_argument("--appends", type=int, default=100)
    parser.add_argument("--megabytes", type=float, default=0, help="one session this large takes every append")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="archivist-watch-"))
    try:
        workspace, project = scratch(root)
        files = []
        for s in range(args.sessions):
            session = f"00000000-0000-4000-8000-{s:012d}"
            lines = [
                session_line(
                    session,
                    f"{s}-{m}",
                    f"{s}-{m - 1}" if m else None,
                    f"message {m} about topic {m % 13}",
                    "2025-11-23T04:00:00Z",
                )
                for m in range(args.messages)
            ]
            path = project / f"{session}.jsonl"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            files.append((session, path))
        if args.megabytes:
            session = "ffffffff-0000-4000-8000-000000000000"
            write_session(project, random.Random(42), session, int(args.megabytes * 1_000_000))
            files = [(session, project / f"{session}.jsonl")]
        subprocess.run(
            [*ARCHIVIST, "index", str(workspace), "--source", f"claude-code={root / 'projects'}"],
            check=True,
            capture_output=True,
        )
        watcher = subprocess.Popen([*ARCHIVIST, "watch", str(workspace)], stderr=subprocess.PIPE, text=True)
        try:
            while watcher.stderr.readline().strip() != "Watching for changes":
                pass
            db = sqlite_utils.Database(archive_path(workspace))
            latencies = []
            for n in range(args.appends):
                session, path = files[n % len(files)]
                word = f"zqx{n:05d}marker"
                started = time.perf_counter()
                with path.open("a", encoding="utf-8") as appended:
                    appended.write(
                        session_line(session, f"new-{n}", None, f"the {word} appears", "2025-11-23T05:00:00Z") + "\n"
                    )
                while not db.execute("SELECT 1 FROM message_index WHERE message_index MATCH ?", [word]).fetchone():
                    time.sleep(0.01)
                latencies.append(time.perf_counter() - started)
        finally:
            watcher.terminate()
            watcher.wait()
        ordered = sorted(latencies)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        print(f"{args.sessions} sessions x {args.messages} messages; {len(latencies)} appends")
        if args.megabytes:
            print(f"each to one session of {files[0][1].stat().st_size / 1e6:.1f} MB (its sub-agents beside it); "
                  f"the first append {latencies[0]:.2f} s")  # fmt: skip
        print(
            f"write-to-searchable: p50 {statistics.median(latencies):.2f} s, p95 {p95:.2f} s, max {ordered[-1]:.2f} s "
            f"(target p95 {'0.2' if args.megabytes else '2'} s)"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
