"""Indexing Claude Code sessions as a source, against reading the same bytes with json.loads line by line.

Writes --sessions synthetic sessions totalling about --megabytes MB, made as Claude Code
writes them: user prompts; assistant responses of the models people use (Sonnet, Opus, Haiku)
written a content block a line (thinking, text, a tool call), each line with its
``message.usage`` (input, output, cache write (five minutes or an hour) and cache read tokens,
varying with the conversation's context); tool calls with their inputs (Read, Edit, Write,
Bash, Grep, TodoWrite) and their results (``toolUseResult`` too, as the files have it);
now and then a ``Task`` call whose sub-agent writes its own transcript
(``<session>/subagents/agent-<id>.jsonl`` and its ``.meta.json``); timestamps over half a year.
Then times `index_workspace` with them as a `claude-code` source (a fresh archive), a no-op
re-index, a re-index after one line is appended to one session of --append-megabytes MB among
them, and a plain loop of `json.loads` over every line. Prints the times, the throughput and
the ratio (targets: ≥ 40 MB/s, ≤ 8× json.loads; one appended line ≤ 0.2 s); when 100
sessions were first there for another connection (a search), and how many of them were the
100 newest (target: within 5 s); the archive's size per message and per byte of log, and
how many responses were priced. --profile writes a cProfile of the first index run; --memory
samples the resident memory of this process and of its worker processes through the first
index run and prints their peaks (the whole run's: the sum at its highest).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import json
import os
import pstats
import random
import resource
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from archivist.agents.last_moment import newest_first
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
MODELS = {  # the models a session answers with, and how often
    "claude-sonnet-4-5-20250929": 6,
    "claude-opus-4-1-20250805": 2,
    "claude-opus-4-5-20251101": 2,
    "claude-haiku-4-5-20251001": 1,
}
SUBAGENT_MODEL = "claude-haiku-4-5-20251001"
TOOLS = {"Read": 8, "Bash": 5, "Edit": 5, "Grep": 2, "Write": 1, "TodoWrite": 1, "Task": 1}  # how often each is called
FIRST_DAY = dt.datetime(2025, 6, 1, tzinfo=dt.UTC)
PROJECT = "/home/dev/project"


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def code(rng: random.Random, lines: int) -> str:
    """A file's text, as Read shows it (numbered lines)."""
    return "\n".join(
        f"{n:>6}\t    {rng.choice(WORDS)} = {sentence(rng, rng.randint(2, 9))}" for n in range(1, lines + 1)
    )


def a_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


class Transcript:
    """The lines of one transcript (a session, or a sub-agent's), written as Claude Code writes them:
    each line chained to the last, its time a little after the last's."""

    def __init__(self, rng: random.Random, session: str, model: str, at: dt.datetime, agent: str | None = None):
        self.rng, self.model, self.at = rng, model, at
        self.envelope: dict[str, Any] = {"isSidechain": agent is not None, "userType": "external", "cwd": PROJECT,
                                         "sessionId": session, "version": "2.0.50", "gitBranch": "main"}  # fmt: skip
        if agent is not None:
            self.envelope["agentId"] = agent
        self.lines: list[str] = []
        self.size = 0
        self.parent: str | None = None
        self.context = rng.randint(12_000, 20_000)  # tokens in the cache: the system prompt and tools
        self.one_hour = rng.random() < 0.2  # (a session whose cache is written for an hour)

    def write(self, record: dict[str, Any]) -> None:
        self.at += dt.timedelta(milliseconds=self.rng.randint(300, 40_000))
        record = {"parentUuid": self.parent, **self.envelope, **record, "uuid": a_uuid(self.rng),
                  "timestamp": self.at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.at.microsecond // 1000:03d}Z"}  # fmt: skip
        self.parent = record["uuid"]
        line = json.dumps(record, separators=(",", ":"))
        self.lines.append(line)
        self.size += len(line) + 1

    def prompt(self, text: str) -> None:
        self.write({"type": "user", "message": {"role": "user", "content": text}})

    def answer(self, blocks: list[dict[str, Any]]) -> None:
        """One response, a line for each of its blocks, each with the usage so far (the last line's is the response's)."""
        rng = self.rng
        written = rng.randint(50, 4000)
        if self.context > 180_000:  # (a compaction: the conversation starts again from its summary)
            self.context = rng.randint(15_000, 30_000)
        output = sum(len(json.dumps(block)) for block in blocks) // 4 + rng.randint(0, 300)
        message_id = f"msg_01{rng.getrandbits(100):025x}"
        request = f"req_011C{rng.getrandbits(100):025x}"
        for n, block in enumerate(blocks, 1):
            last = n == len(blocks)
            usage = {"input_tokens": rng.randint(1, 12), "cache_creation_input_tokens": written,
                     "cache_read_input_tokens": self.context,
                     "cache_creation": {"ephemeral_5m_input_tokens": 0 if self.one_hour else written,
                                        "ephemeral_1h_input_tokens": written if self.one_hour else 0},
                     "output_tokens": output if last else rng.randint(1, 30), "service_tier": "standard"}  # fmt: skip
            message = {"id": message_id, "type": "message", "role": "assistant", "model": self.model,
                       "content": [block], "stop_reason": "tool_use" if last and block["type"] == "tool_use" else None,
                       "stop_sequence": None, "usage": usage}  # fmt: skip
            self.write({"type": "assistant", "message": message, "requestId": request})
        self.context += written + output

    def result(self, call: dict[str, Any], output: str, result: dict[str, Any]) -> None:
        block = {"tool_use_id": call["id"], "type": "tool_result", "content": output}
        self.write({"type": "user", "message": {"role": "user", "content": [block]}, "toolUseResult": result})


def tool_call(rng: random.Random, name: str) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """A call of the tool ``name`` with its input, its result's text and its ``toolUseResult``."""
    path = f"{PROJECT}/src/module_{rng.randint(0, 49)}.py"
    if name == "Read":
        text = code(rng, rng.randint(8, 120))
        done: tuple[dict[str, Any], str, dict[str, Any]] = (
            {"file_path": path}, text,
            {"type": "text", "file": {"filePath": path, "content": text, "numLines": text.count("\n") + 1,
                                      "startLine": 1, "totalLines": text.count("\n") + 1}})  # fmt: skip
    elif name == "Bash":
        out = "\n".join(sentence(rng, rng.randint(4, 14)) for _ in range(rng.randint(1, 40)))
        done = ({"command": f"uv run pytest tests/test_{rng.choice(WORDS)}.py -q", "description": sentence(rng, 5)},
                out, {"stdout": out, "stderr": "", "interrupted": False, "isImage": False})  # fmt: skip
    elif name == "Edit":
        old, new = sentence(rng, rng.randint(10, 60)), sentence(rng, rng.randint(10, 80))
        text = f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n{code(rng, 12)}"
        done = ({"file_path": path, "old_string": old, "new_string": new}, text,
                {"filePath": path, "oldString": old, "newString": new, "replaceAll": False, "userModified": False})  # fmt: skip
    elif name == "Write":
        content = code(rng, rng.randint(10, 80))
        done = ({"file_path": path, "content": content}, f"File created successfully at: {path}",
                {"type": "create", "filePath": path, "content": content})  # fmt: skip
    elif name == "Grep":
        found = "\n".join(f"{PROJECT}/src/module_{rng.randint(0, 49)}.py:{rng.randint(1, 400)}:{sentence(rng, 8)}"
                          for _ in range(rng.randint(2, 30)))  # fmt: skip
        done = ({"pattern": rng.choice(WORDS), "path": PROJECT, "output_mode": "content", "-n": True}, found,
                {"mode": "content", "numFiles": 0, "filenames": [], "content": found})  # fmt: skip
    else:
        todos = [{"content": sentence(rng, 6), "status": rng.choice(["pending", "in_progress", "completed"]),
                  "activeForm": sentence(rng, 6)} for _ in range(rng.randint(2, 6))]  # fmt: skip
        done = ({"todos": todos}, "Todos have been modified successfully.", {"oldTodos": [], "newTodos": todos})
    call = {"type": "tool_use", "id": f"toolu_01{rng.getrandbits(100):025x}", "name": name, "input": done[0]}
    return call, done[1], done[2]


def turn(conversation: Transcript, tools: dict[str, int]) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """A response that calls a tool (thinking first, mostly, and a sentence), and the call made."""
    rng = conversation.rng
    name = rng.choices(list(tools), weights=list(tools.values()))[0]
    call, output, result = tool_call(rng, name if name != "Task" else "Read")
    blocks: list[dict[str, Any]] = []
    if rng.random() < 0.6:
        blocks.append({"type": "thinking", "thinking": sentence(rng, rng.randint(20, 200)), "signature": "E" * 340})
    blocks.append({"type": "text", "text": sentence(rng, rng.randint(5, 40))})
    if name == "Task":
        call = {"type": "tool_use", "id": call["id"], "name": "Task",
                "input": {"description": sentence(rng, 4), "prompt": sentence(rng, 40), "subagent_type": "Explore"}}  # fmt: skip
    conversation.answer([*blocks, call])
    return call, output, result


def subagent(parent: Transcript, session: str, call: dict[str, Any]) -> tuple[str, Transcript, str]:
    """The transcript of the sub-agent a Task call starts (a few calls of reading tools), its id and its answer."""
    rng = parent.rng
    agent = f"{rng.getrandbits(32):08x}"
    transcript = Transcript(rng, session, SUBAGENT_MODEL, parent.at, agent)
    transcript.prompt(call["input"]["prompt"])
    for _ in range(rng.randint(2, 8)):
        found, output, result = turn(transcript, {"Read": 3, "Grep": 2, "Bash": 1})
        transcript.result(found, output, result)
    answer = sentence(rng, rng.randint(40, 160))
    transcript.answer([{"type": "text", "text": answer}])
    parent.at = transcript.at
    return agent, transcript, answer


def write_session(project: Path, rng: random.Random, session: str, target_bytes: int) -> None:
    """One session of about ``target_bytes`` in all (its sub-agents' transcripts among them), from a day of the half year."""
    model = rng.choices(list(MODELS), weights=list(MODELS.values()))[0]
    started = FIRST_DAY + dt.timedelta(seconds=rng.randint(0, 180 * 86400))
    main = Transcript(rng, session, model, started)
    written = 0
    while main.size + written < target_bytes:
        main.prompt(sentence(rng, rng.randint(8, 60)))
        for _ in range(rng.randint(1, 8)):
            call, output, result = turn(main, TOOLS)
            if call["name"] == "Task":
                agent, transcript, output = subagent(main, session, call)
                folder = project / session / "subagents"
                folder.mkdir(parents=True, exist_ok=True)
                (folder / f"agent-{agent}.jsonl").write_text("\n".join(transcript.lines) + "\n", "utf-8")
                meta = {"agentType": "Explore", "description": call["input"]["description"], "spawnDepth": 1,
                        "toolUseId": call["id"]}  # fmt: skip
                (folder / f"agent-{agent}.meta.json").write_text(json.dumps(meta), "utf-8")
                written += transcript.size
                result = {"status": "completed", "prompt": call["input"]["prompt"], "agentId": agent,
                          "content": [{"type": "text", "text": output}], "totalDurationMs": rng.randint(5000, 90000)}  # fmt: skip
            main.result(call, output, result)
        main.answer([{"type": "text", "text": sentence(rng, rng.randint(20, 120))}])
    (project / f"{session}.jsonl").write_text("\n".join(main.lines) + "\n", "utf-8")


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
        write_session(project, rng, session, size)


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


class MemoryPeak:
    """The resident memory of this process and of its child processes (Linux's /proc), sampled
    every 50 ms until stopped: the peak of their sum, of this process and of the children."""

    def __init__(self) -> None:
        self.total = self.own = self.children = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> MemoryPeak:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()

    def _watch(self) -> None:
        while True:
            own = rss(os.getpid())
            children = sum(rss(pid) for pid in child_pids(os.getpid()))
            self.own, self.children = max(self.own, own), max(self.children, children)
            self.total = max(self.total, own + children)
            if self.done.wait(0.05):
                return


def rss(pid: int) -> int:
    """The resident bytes of process ``pid``, or 0 where it is gone."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def child_pids(parent: int) -> list[int]:
    """The processes whose parent is ``parent``."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == parent:
                found.append(int(entry.name))
    return found


def cpu_seconds() -> tuple[float, float]:
    """The CPU time spent so far by this process, and by the worker processes it has waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@contextmanager
def profiled(what: str, wanted: bool) -> Iterator[None]:
    """Runs the block under cProfile where ``wanted``, then prints where its time went (the 20 most costly functions)."""
    if not wanted:
        yield
        return
    profile = cProfile.Profile()
    profile.enable()
    try:
        yield
    finally:
        profile.disable()
        print(f"profile of {what}:")
        pstats.Stats(profile).sort_stats("tottime").print_stats(20)


def read_and_prepare(projects: Path) -> None:
    """Reads every session and makes its rows, as the worker process of an index run does."""
    from archivist.archive.prepared import new_masker, prepare_parts
    from archivist.archive.session_worker import read_here

    masker = new_masker(None)
    now = dt.datetime.now(dt.UTC).isoformat()
    known: dict[str, str] = {}
    for session in read_here("claude-code", projects, []):
        if session is not None:
            for _ in prepare_parts(session, "log:claude-code", known.get, now, masker):
                pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--megabytes", type=int, default=1000)
    parser.add_argument("--append-megabytes", type=int, default=100, help="the session a line is appended to")
    parser.add_argument("--profile", action="store_true", help="profile the index run, and reading and preparing alone")
    parser.add_argument("--memory", action="store_true", help="the peak resident memory of the first index run")
    args = parser.parse_args()
    rng = random.Random(42)
    root = Path(tempfile.mkdtemp(prefix="archivist-agentlogs-"))
    try:
        workspace, project = scratch(root)
        write_sessions(project, rng, args.sessions, args.megabytes)
        largest = project / "ffffffff-0000-4000-8000-000000000000.jsonl"
        write_session(project, rng, largest.stem, args.append_megabytes * 1_000_000)
        files = sorted(project.rglob("*.jsonl"))
        total = sum(path.stat().st_size for path in files)

        started = time.perf_counter()
        lines = 0
        for path in files:
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    json.loads(line)
                    lines += 1
        baseline = time.perf_counter() - started

        sessions = newest_first(list(project.glob("*.jsonl")))  # by their own last moment, as the reader orders them
        newest = {f"-home-dev-project/{path.stem}" for path in sessions[:100]}
        watch = FirstSessions(archive_path(workspace), newest)
        cpu = cpu_seconds()
        started = time.perf_counter()
        watch.start(started)
        with profiled("writing (this process)", args.profile), MemoryPeak() as memory:
            summary = index_workspace(workspace, log_sources=[("claude-code", root / "projects")])
        indexed = time.perf_counter() - started
        (own, workers), (own_before, workers_before) = cpu_seconds(), cpu
        cpu = (own - own_before, workers - workers_before)
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
        priced = watch.count("SELECT count(*) FROM messages WHERE price IS NOT NULL")
        print(
            f"{len(sessions)} sessions ({len(files) - len(sessions)} sub-agents), {total / 1e6:.0f} MB, {lines} lines; {summary.documents} documents"
        )
        print(f"json.loads line by line: {baseline:.1f} s")
        print(f"index as a claude-code source: {indexed:.1f} s, {total / 1e6 / indexed:.1f} MB/s "
              f"({indexed / baseline:.1f}x json.loads; target >= 40 MB/s, <= 8x)")  # fmt: skip
        print(f"its CPU time: {cpu[0]:.1f} s in this process, {cpu[1]:.1f} s in the worker "
              f"({total / 1e6 / max(cpu):.1f} MB a CPU-second of the busier)")  # fmt: skip
        if watch.first is not None:
            print(f"the 100 newest sessions searchable {watch.first:.1f} s after the start "
                  f"({watch.newest_then} of the first 100 stored are the newest; target <= 5 s)")  # fmt: skip
        print(f"archive: {size / 1e6:.0f} MB for {messages:,} messages: {size / max(messages, 1):,.0f} bytes a message, "
              f"{size / total:.2f} bytes a byte of log")  # fmt: skip
        print(f"{priced:,} responses priced")
        if args.memory:
            print(f"peak resident memory of the index run: {memory.total / 1e6:.0f} MB "
                  f"(this process {memory.own / 1e6:.0f} MB, its workers {memory.children / 1e6:.0f} MB; target <= 500 MB)")  # fmt: skip
        print(f"no-op re-index: {noop:.2f} s")
        print(f"re-index after one line appended to the largest session ({largest.stat().st_size / 1e6:.1f} MB): "
              f"{appended_seconds:.2f} s (target <= 0.2 s)")  # fmt: skip
        if args.profile:
            with profiled("reading and preparing (the worker's part, here in process)", True):
                read_and_prepare(root / "projects")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
