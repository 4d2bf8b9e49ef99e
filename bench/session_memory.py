"""The memory of indexing one huge session: a Claude Code session of --megabytes MB in one file,
and an OpenCode session whose messages hold --parts parts of --part-megabytes MB each.

Each is indexed by `archivist index WORKSPACE --source KIND=PATH` in a fresh process, as a
user runs it; its process tree (the command and the worker it starts) is sampled every 20 ms,
and the peak of their resident memory summed is printed beside the time and the session's
size. Target: at most 1 GB for a 2 GB session and for the OpenCode session of five 60 MB parts.

    python bench/session_memory.py                      # 2,000 MB; 5 parts of 60 MB
    python bench/session_memory.py --megabytes 500 --parts 0
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentlog_index import scratch, sentence, session_lines

ARCHIVIST = Path(sys.executable).with_name("archivist")


def tree_rss(pid: int, peaks: dict[int, int] | None = None) -> int:
    """The resident memory of a process and all its descendants, in bytes (0 once it is gone);
    ``peaks`` keeps each process's highest."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        stack.extend(children.get(current, []))
        try:
            with open(f"/proc/{current}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        resident = int(line.split()[1]) * 1024
                        total += resident
                        if peaks is not None:
                            peaks[current] = max(peaks.get(current, 0), resident)
        except OSError:
            continue
    return total


def index(workspace: Path, source: str) -> tuple[float, int, str]:
    """Index ``source`` into ``workspace``'s archive in a fresh process: its seconds, its tree's peak
    resident memory, and what it printed last."""
    environment = {**os.environ, "HF_HUB_OFFLINE": "1"}
    started = time.perf_counter()
    process = subprocess.Popen(
        [str(ARCHIVIST), "index", str(workspace), "--source", source],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=environment,
        text=True,
    )
    peak = 0
    peaks: dict[int, int] = {}
    while process.poll() is None:
        peak = max(peak, tree_rss(process.pid, peaks))
        time.sleep(0.02)
    seconds = time.perf_counter() - started
    output = process.stdout.read() if process.stdout else ""
    print("  each process's peak: " + ", ".join(f"{value / 1e6:,.0f} MB" for value in peaks.values()))
    if process.returncode != 0:
        raise SystemExit(f"archivist index failed ({process.returncode}):\n{output}")
    return seconds, peak, output.strip().splitlines()[-1] if output.strip() else ""


def claude_session(project: Path, megabytes: int) -> Path:
    """One Claude Code session of about ``megabytes`` MB, written as it is made."""
    rng = random.Random(7)
    file = project / "00000000-0000-4000-8000-000000000001.jsonl"
    with file.open("w", encoding="utf-8") as handle:
        for line in session_lines(rng, file.stem, megabytes * 1_000_000):
            handle.write(line + "\n")
    return file


def opencode_session(folder: Path, parts: int, part_megabytes: int) -> Path:
    """An OpenCode database of one session whose assistant message holds ``parts`` text parts of
    ``part_megabytes`` MB each, after a user's request."""
    rng = random.Random(8)
    folder.mkdir(parents=True)
    database = folder / "opencode.db"
    with sqlite3.connect(database) as db:
        db.executescript(
            """
            CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT,
              directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, cost REAL, tokens_input INTEGER,
              tokens_output INTEGER, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
            CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
              time_updated INTEGER NOT NULL, data TEXT NOT NULL);
            CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
              time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
            """
        )
        at = 1764200000000
        db.execute(
            "INSERT INTO session VALUES ('ses_1', 'p', NULL, 's', '/home/dev/project', 'A huge session', '1.2.4',"
            " 0, 0, 0, ?, ?)",
            [at, at],
        )
        user = {"role": "user", "time": {"created": at}}
        answer = {"role": "assistant", "time": {"created": at + 1000}, "modelID": "claude-sonnet-4-5"}
        db.execute("INSERT INTO message VALUES ('msg_1', 'ses_1', ?, ?, ?)", [at, at, json.dumps(user)])
        db.execute("INSERT INTO message VALUES ('msg_2', 'ses_1', ?, ?, ?)", [at, at, json.dumps(answer)])
        db.execute(
            "INSERT INTO part VALUES ('prt_0', 'msg_1', 'ses_1', ?, ?, ?)",
            [at, at, json.dumps({"type": "text", "text": "Summarise the logs."})],
        )
        words = max(1, part_megabytes * 1_000_000 // 8)
        for n in range(parts):
            text = sentence(rng, words)
            db.execute(
                "INSERT INTO part VALUES (?, 'msg_2', 'ses_1', ?, ?, ?)",
                [f"prt_{n + 1}", at, at, json.dumps({"type": "text", "text": text})],
            )
    return database


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=int, default=2000, help="the Claude Code session (0: none)")
    parser.add_argument("--parts", type=int, default=5, help="the OpenCode session's parts (0: none)")
    parser.add_argument("--part-megabytes", type=int, default=60)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="archivist-session-memory-"))
    try:
        if args.megabytes:
            workspace, project = scratch(root / "claude")
            file = claude_session(project, args.megabytes)
            size = file.stat().st_size
            seconds, peak, said = index(workspace, f"claude-code={project.parent}")
            print(f"claude-code, one session of {size / 1e6:,.0f} MB: peak {peak / 1e6:,.0f} MB "
                  f"({peak / size:.2f} bytes a byte of log; target <= 1,000 MB), {seconds:.1f} s, "
                  f"{size / 1e6 / seconds:.1f} MB/s")  # fmt: skip
            print(f"  {said}")
        if args.parts:
            workspace, _ = scratch(root / "opencode")
            database = opencode_session(root / "opencode" / "data", args.parts, args.part_megabytes)
            size = database.stat().st_size
            seconds, peak, said = index(workspace, f"opencode={database.parent}")
            print(f"opencode, one session of {args.parts} parts of {args.part_megabytes} MB ({size / 1e6:,.0f} MB): "
                  f"peak {peak / 1e6:,.0f} MB (target <= 1,000 MB), {seconds:.1f} s")  # fmt: skip
            print(f"  {said}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
