"""The views of a heavy user's history at scale: usage by day for a year, 30 days of activity, a file's history.

    python bench/views_speed.py [--sessions 5000] [--messages-per-session 200] [--hot-sessions 1000]
                                [--repeat 20] [--seed 42] [--keep]

Builds a seeded archive of agent-log sessions with the store's own functions (as
bench/message_search.py does: archive.sessions._document and _insert_messages, as `archivist
index` writes a source's sessions): --sessions sessions of --messages-per-session messages
(1,000,000 by default) over four agents, twenty projects and a year; every assistant message
records its usage (priced as indexing prices it) and one in four makes a tool call that reads or
edits a file, one file of them touched by --hot-sessions sessions. Then times, warm, as every
surface runs them (the canned queries, parameter checks included), --repeat times each:

    (a) usage by day for the year (group_by=day)                  target: p50 <= 50 ms
    (b) project_activity for 30 days                               target: p50 <= 50 ms
    (c) file_history of the file --hot-sessions sessions touched   target: p50 <= 20 ms
    (d) activity_periods per day for 30 days (the activity page's    target: p50 <= 50 ms
        charts of sessions, messages, tokens and cost)

printing p50 / p95 and the rows each gave, and checks them against counts read directly.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from message_search import write_sessions

from archivist.agents import Message, Session, ToolCall, Usage, short_title
from archivist.archive import prices, schema
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

AGENTS = {
    "claude-code": ["claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"],
    "codex": ["gpt-5-codex", "gpt-5"],
    "gemini-cli": ["gemini-2.5-pro", "gemini-2.5-flash"],
    "opencode": ["claude-sonnet-4-5", "gpt-4.1"],
}
PROJECTS = 20
YEAR = 2025
HOT = "src/core/engine.py"
WORDS = [
    "proxy",
    "timeout",
    "cache",
    "retry",
    "deploy",
    "build",
    "test",
    "schema",
    "index",
    "query",
    "token",
    "session",
    "cookie",
]


def session(rng: random.Random, number: int, messages: int, hot: bool) -> Session:
    agent = rng.choice(list(AGENTS))
    model = rng.choice(AGENTS[agent])
    project = f"/home/dev/project-{rng.randrange(PROJECTS)}"
    moment = dt.datetime(YEAR, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=rng.randrange(364 * 86400))
    turns = []
    for seq in range(messages):
        moment += dt.timedelta(seconds=rng.randint(5, 240))
        stamp = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
        text = " ".join(rng.choices(WORDS, k=rng.randint(8, 20)))
        if seq % 2 == 0:
            turns.append(Message("user", text, stamp))
            continue
        calls = []
        if seq % 8 == 1:
            file = HOT if hot and seq == 1 else f"src/module_{rng.randrange(500)}.py"
            calls.append(ToolCall(rng.choice(["Read", "Edit"]), files=[file]))
        if seq % 16 == 3:
            calls.append(ToolCall("Bash", commands=[f"pytest tests/test_{rng.randrange(50)}.py -q"]))
        used = Usage(
            input=rng.randint(1, 5000),
            output=rng.randint(10, 2000),
            cache_write=rng.choice([0, 0, rng.randint(100, 5000)]),
            cache_read=rng.randint(0, 50_000),
        )
        turns.append(Message("assistant", text, stamp, model, calls, usage=used))
    return Session(
        key=f"00000000-0000-4000-8000-{number:012d}",
        agent=agent,
        title=short_title(turns[0].text),
        messages=turns,
        project=project,
        models=[model],
        started=turns[0].timestamp,
        last=turns[-1].timestamp,
    )


def build(workspace: Path, count: int, messages: int, hot_sessions: int, seed: int) -> None:
    rng = random.Random(seed)
    hot = set(random.Random(seed + 1).sample(range(count), min(count, hot_sessions)))
    db, _ = write_sessions(
        workspace, AGENTS, lambda number: session(rng, number, messages, number in hot), count, messages
    )
    with db.conn:
        prices.price_again(db)  # (records the price data, as an index run does)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("ANALYZE")
    db.close()


def timed(archive: Archive, name: str, params: dict[str, str], repeat: int) -> tuple[list[float], list[dict]]:
    archive.run(name, params)  # warm
    times, rows = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        rows = archive.run(name, params)
        times.append((time.perf_counter() - started) * 1000)
    return times, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--messages-per-session", type=int, default=200)
    parser.add_argument("--hot-sessions", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--workspace", type=Path, help="time a workspace --keep kept (upgraded first), not a new one")
    args = parser.parse_args()
    total = args.sessions * args.messages_per_session
    if args.workspace:
        folder, workspace = args.workspace.parent, args.workspace
        started = time.perf_counter()
        schema.open_archive(archive_path(workspace)).close()  # (its migrations, if it was written before them)
        print(f"opened {workspace} ({time.perf_counter() - started:.1f} s)")
    else:
        folder = Path(tempfile.mkdtemp(prefix="archivist-views-"))
        workspace = folder / "workspace"
        workspace.mkdir()
        print(f"building {args.sessions} sessions of {args.messages_per_session} messages ({total:,} messages)")
        build(workspace, args.sessions, args.messages_per_session, args.hot_sessions, args.seed)
    print(f"archive: {archive_path(workspace).stat().st_size / 1e9:.2f} GB")
    cases = [
        (
            "(a) usage by day, a year",
            "usage",
            {"group_by": "day", "start_date": f"{YEAR}-01-01", "end_date": f"{YEAR}-12-31"},
            50,
        ),
        ("(b) activity, 30 days", "project_activity", {"start_date": f"{YEAR}-06-01", "end_date": f"{YEAR}-06-30"}, 50),
        (
            "(d) activity per day, 30 days",
            "activity_periods",
            {"group_by": "day", "start_date": f"{YEAR}-06-01", "end_date": f"{YEAR}-06-30"},
            50,
        ),
        ("(c) file history, hot file", "file_history", {"path": HOT, "limit": "50"}, 20),
    ]
    with Archive(archive_path(workspace)) as archive:
        for label, name, params, target in cases:
            times, rows = timed(archive, name, params, args.repeat)
            p50, p95 = statistics.median(times), sorted(times)[int(0.95 * (len(times) - 1))]
            verdict = "ok" if p50 <= target else "over"
            print(f"{label}: p50 {p50:.1f} ms, p95 {p95:.1f} ms (target {target} ms: {verdict}); {len(rows)} rows")
            if name == "usage":
                responses = sum(row["responses"] for row in rows)
                print(f"    {responses:,} responses counted (of {total // 2:,} written)")
            elif name == "file_history":
                print(f"    {rows[0]['total'] if rows else 0} calls of {args.hot_sessions} sessions")
            elif name == "activity_periods":
                print(f"    {sum(row['messages'] for row in rows):,} messages in {len(rows)} days")
            else:
                print(f"    {sum(row['sessions'] for row in rows)} sessions in {len(rows)} projects")
    if args.keep or args.workspace:
        print(f"kept: {workspace}")
    else:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
