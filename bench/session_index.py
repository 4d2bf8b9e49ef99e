"""Sessions ranked first: what a session-level word index would buy words alone and search as you type.

    python bench/session_index.py --archive FOLDER [--queries 50] [--repeat 3] [--seed 42]

Reads an archive that bench/message_search.py built and kept (--archive, the same FOLDER), without
writing to it: builds beside it, in a scratch file, an FTS5 table of one row per session holding its
messages' words (as message_index holds each message's: porter, unicode61, contentless), and times,
for bench/message_search.py's words-alone queries (b) and bench/live_search.py's keystrokes:

    today     the `search` canned query, mode=keyword (the keystrokes as the search page asks them)
    sessions  the page's 10 sessions ranked by BM25 over the session-level index, how many sessions
              match (the total), and each page session's message: the first with every word, else
              with some, by the session's range of message ids (no message is ranked)

printing p50 / p95 of wall and CPU time and their ratio, how alike the two first pages are (the
sessions they share, of 10), and how many more sessions hold every word at the session level than today's every-word count
(a session's words may be in different messages, where today's pass asks them of one message).
The scratch file is removed at the end.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

from live_search import QUERIES, keystrokes
from message_search import cases, reused
from search_speed import percentile

from archivist.archive.database import sqlite3
from archivist.archive.schema import MESSAGE_IDS
from archivist.queries.runner import Archive
from archivist.queries.terms import fts_query
from archivist.web.search_page import asked_by_keystroke
from archivist.workspace import archive_path

SESSION_INDEX = """CREATE VIRTUAL TABLE side.session_index USING fts5(
    text, content='', contentless_delete=1, tokenize='porter unicode61'
)"""
FILL = """INSERT INTO side.session_index (rowid, text)
SELECT document_id, group_concat(text, char(10)) FROM messages WHERE text != '' GROUP BY document_id"""
PAGE = """SELECT rowid FROM side.session_index WHERE session_index MATCH ? ORDER BY rank LIMIT 10"""
TOTAL = "SELECT count(*) FROM side.session_index WHERE session_index MATCH ?"
FIRST_MESSAGE = """SELECT rowid FROM message_index
WHERE message_index MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rowid LIMIT 1"""


def session_first(conn: sqlite3.Connection, every: str, some: str) -> tuple[list[int], int]:
    """The first page of sessions ranked at the session level, each with its message, and the total."""
    page = [row[0] for row in conn.execute(PAGE, [every])]
    for session in page:
        bounds = [session * MESSAGE_IDS, session * MESSAGE_IDS + MESSAGE_IDS - 1]
        conn.execute(FIRST_MESSAGE, [every, *bounds]).fetchone() or conn.execute(
            FIRST_MESSAGE, [some, *bounds]
        ).fetchone()
    return page, conn.execute(TOTAL, [every]).fetchone()[0]


def expression(asked: dict[str, str]) -> tuple[dict[str, str], str, str]:
    """A keystroke's search as the page asks it, and its FTS5 expression (every word, some: the same)."""
    query = asked["query"] if asked["match_mode"] == "raw" else fts_query(asked["query"], "all", "text")
    return {**asked, "output": "full"}, query, query


T = TypeVar("T")


def timed(run: Callable[[], T], repeat: int, wall: list[float], cpu: list[float]) -> T:
    """``run``'s answer, run ``repeat`` times, its wall and CPU times (ms) added to ``wall`` and ``cpu``."""
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        answer = run()
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    return answer


def figures(label: str, wall: list[float], cpu: list[float]) -> str:
    return (
        f"  {label:<28} wall p50 {statistics.median(wall):8.2f} p95 {percentile(wall, 0.95):8.2f} ms"
        f"   CPU p50 {statistics.median(cpu):8.2f} p95 {percentile(cpu, 0.95):8.2f} ms"
    )


def compare(
    archive: Archive, conn: sqlite3.Connection, asked: list[tuple[dict[str, str], str, str]], repeat: int
) -> None:
    """Today's search and the sessions-first one, query by query in turn, and how alike their pages are."""
    today: tuple[list[float], list[float]] = ([], [])
    sessions: tuple[list[float], list[float]] = ([], [])
    shared, more = [], []
    for params, every, some in asked:
        answer: dict[str, Any] = timed(partial(archive.search, params), repeat, *today)
        page, total = timed(partial(session_first, conn, every, some), repeat, *sessions)
        ids = [result["id"] for result in answer["results"]]
        shared.append(len(set(ids) & set(page)) / max(1, min(10, len(ids))))
        more.append(total - (answer.get("matched") or {}).get("all", answer["total"]))
    print(figures("today (search)", *today))
    print(figures("sessions first", *sessions))
    print(
        f"  ratio of p50s: wall {statistics.median(today[0]) / statistics.median(sessions[0]):.1f}x,"
        f" CPU {statistics.median(today[1]) / statistics.median(sessions[1]):.1f}x;"
        f" first pages share {statistics.mean(shared):.0%} of their sessions;"
        f" the session level finds a median {statistics.median(more):.0f} more sessions (max {max(more)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, required=True, help="a folder bench/message_search.py kept")
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--messages-per-session", type=int, default=200)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    written = reused(args.archive, args)
    if written is None:
        sys.exit(f"no archive of that shape in {args.archive}: build it with bench/message_search.py --archive")
    workspace = args.archive / "workspace"
    with tempfile.TemporaryDirectory(prefix="archivist-session-index-") as scratch:
        conn = sqlite3.connect(f"file:{archive_path(workspace)}?mode=ro", uri=True)
        conn.execute("ATTACH ? AS side", [str(Path(scratch) / "side.db")])
        started = time.perf_counter()
        with conn:
            conn.execute(SESSION_INDEX)
            conn.execute(FILL)
        size = (Path(scratch) / "side.db").stat().st_size
        print(f"session-level index: {time.perf_counter() - started:.1f}s to build, {size / 1e6:,.0f} MB")
        words = [
            (params, fts_query(params["query"], "all", "text"), fts_query(params["query"], "any", "text"))
            for params in cases(written, args.seed, args.queries)["(b) words alone"]
        ]
        typed = [expression(asked_by_keystroke({"query": text})) for query in QUERIES for text in keystrokes(query)]
        with Archive(archive_path(workspace)) as archive:
            archive.search(words[0][0])
            print(f"(b) words alone, {len(words)} queries x {args.repeat} runs:")
            compare(archive, conn, words, args.repeat)
            print(f"keystrokes, {len(typed)} x {args.repeat} runs:")
            compare(archive, conn, typed, args.repeat)
        conn.close()


if __name__ == "__main__":
    main()
