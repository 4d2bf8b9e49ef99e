"""Message-level keyword search at scale: agent-log messages, searched one by one with filters.

    python bench/message_search.py [--sessions 5000] [--messages-per-session 200] [--seed 42]
                                   [--queries 50] [--repeat 3] [--keep] [--archive FOLDER]

Builds a seeded archive of agent-log conversations in a temporary workspace with the
store's own functions (session_rows.document_rows and sessions._insert_messages, as `archivist
index` writes a source's sessions): --sessions sessions of --messages-per-session
messages each (1,000,000 by default), over four agents, twenty projects, several
models and twelve months, user and assistant turns of 10 to 40 words from a
vocabulary of a few hundred (some of them rare). Then times the `search` canned query
(parameter checks included, as every surface runs it) for

    (a) words, mode=keyword, with an agent + project + month filter  target: p50 <= 10 ms
    (b) the same words alone, mode=keyword                           target: p50 <= 30 ms, p95 <= 80 ms
    (c) agent + project filters alone, mode=recent (newest first)    none set; shown for scale

printing p50 / p95 of wall and of CPU time, how many queries found something (and the median total of
sessions found), and checks that every result of (a) and (c) is of the requested
agent and project, and that the message each result of (a) names is of the requested
month and holds the words. The temporary workspace is removed at the end (--keep
keeps it, to look into the query plan; --archive FOLDER builds it there once and reuses it on every
later run with the same FOLDER, as a 5M archive takes long to build). And the peak memory of a fresh process that opens
the archive and runs every query, as `serve` and `mcp` do (target: at most 1 GB).
"""

from __future__ import annotations

import argparse
import calendar
import datetime as dt
import itertools
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_speed import percentile

from archivist.agents import Message, Session, short_title
from archivist.archive import prepared, schema, session_rows, sessions
from archivist.archive.database import Database
from archivist.queries.catalog import sql_for
from archivist.queries.runner import Archive
from archivist.queries.validation import QUERIES
from archivist.secrets import Masker
from archivist.workspace import archive_path

AGENTS = {
    "claude-code": ["claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805"],
    "codex": ["gpt-5-codex", "gpt-5"],
    "gemini-cli": ["gemini-2.5-pro", "gemini-2.5-flash"],
    "aider": ["deepseek-chat", "gpt-4.1"],
}
PROJECTS = 20
YEAR = 2025  # twelve months of sessions, January to December

# What developers and agents say to each other: common words (most common first), less
# common ones, then rare ones, a paragraph each, drawn Zipf-like.
VOCABULARY = """
the to and a of in is it that this for we on with be can you not file function test
should use need add fix error code let me check now run change update make here will
return value call new from as but if when what so then first also just see looks
line type class method config build branch commit module import path data list string
name set get read write start stop try again issue problem case working works failing
passed output input result results log logs message version default option flag user
server client request response handler route endpoint api query database table column
row index key cache session token header cookie timeout retry backoff latency socket
connection pool thread worker queue job task event loop async await promise callback
schema migration deploy rollback release tag merge rebase diff patch review comment
docs readme example sample script command shell terminal package dependency install
upgrade lock pin cargo npm pip venv python rust typescript javascript golang java
struct enum trait interface generic field property argument parameter variable constant
array map dict tuple vector slice pointer reference memory leak panic exception stack
trace debug print assert mock fixture snapshot coverage lint format style refactor
rename extract inline split merge helper util wrapper adapter factory builder parser
lexer token tree node graph edge path walk visit search sort filter reduce fold scan
batch stream chunk buffer reader writer encoder decoder json yaml toml csv xml html css
layout render component state props hook effect store reducer action dispatch router
page view model controller service repository entity record form field validation

kubernetes docker container image registry proxy nginx certificate handshake tls dns
webhook cron scheduler metrics tracing span histogram dashboard alert pager oncall
postgres sqlite redis kafka rabbitmq elasticsearch vacuum checkpoint replica shard
partition quorum raft consensus leader follower gossip heartbeat lease mutex semaphore
deadlock livelock starvation contention throughput bottleneck profiler flamegraph
allocation garbage compaction tombstone bloom filterbank trie skiplist btree hashring

quokka zeppelin marzipan obsidian fjord kumquat tessellate palimpsest gossamer
xylophone bergamot calliope halcyon juniper labyrinth nebula orchid quasar saffron
tundra umbra vermilion wisteria yarrow zircon
"""
COMMON, MIDDLE, RARE = (list(dict.fromkeys(part.split())) for part in VOCABULARY.strip().split("\n\n"))
WORDS = list(dict.fromkeys(COMMON + MIDDLE + RARE))
# the n-th word is drawn about 1/(n + 10) as often as the first; a rare word a twentieth of that
CUMULATIVE = list(itertools.accumulate(1 / (n + 10) * (0.05 if word in RARE else 1) for n, word in enumerate(WORDS)))


def text(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, cum_weights=CUMULATIVE, k=rng.randint(10, 40)))


def iso(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def session(rng: random.Random, number: int, messages: int) -> Session:
    """One synthetic session: its agent, project, model, start within the year, turns minutes apart."""
    agent = rng.choice(list(AGENTS))
    project = f"/home/dev/project-{rng.randrange(PROJECTS)}"
    model = rng.choice(AGENTS[agent])
    moment = dt.datetime(YEAR, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=rng.randrange(365 * 86400 - 86400))
    turns = []
    for seq in range(messages):
        moment += dt.timedelta(seconds=rng.randint(5, 240))
        role = "user" if seq % 2 == 0 else "assistant"
        turns.append(Message(role, text(rng), iso(moment), model if role == "assistant" else None))
    return Session(
        key=f"00000000-0000-4000-8000-{number:012d}",
        agent=agent,
        title=short_title(turns[0].text),
        messages=turns,
        project=project,
        models=[model],
        branch="main",
        started=turns[0].timestamp,
        last=turns[-1].timestamp,
    )


def write_sessions(
    workspace: Path, agents: Iterable[str], make: Callable[[int], Session], count: int, messages: int
) -> tuple[Database, dict[int, Session]]:
    """An archive of ``count`` sessions that ``make`` makes (of ``messages`` messages each), written as
    the store writes a source's, a tenth at a time in a transaction each: the archive (open), and each
    document's session as stored."""
    db = schema.open_archive(archive_path(workspace))
    sources = {}
    for agent in agents:
        sessions.add(db, agent, workspace.parent / "logs" / agent)
        sources[agent] = "log:{}".format(db.execute("SELECT id FROM log_sources WHERE kind = ?", [agent]).fetchone()[0])
    now = sessions._now()
    masker = Masker(b"bench key" * 4)
    written: dict[int, Session] = {}
    batch = max(1, count // 10)
    started = time.perf_counter()
    for first in range(0, count, batch):
        with db.conn:
            for number in range(first, min(count, first + batch)):
                read, found = prepared.mask_session(make(number), masker)
                document, rows = session_rows.document_rows(
                    read, sources[read.agent], now, prepared.session_hash(read), found
                )
                document["id"] = document_id = db.insert("documents", [document])
                sessions._insert_messages(db, document_id, rows, document, whole=True)
                written[document_id] = read
        done = min(count, first + batch)
        print(f"  {done} sessions, {done * messages} messages ({time.perf_counter() - started:.0f}s)", flush=True)
    return db, written


def build(workspace: Path, count: int, messages: int, seed: int) -> dict[int, tuple[str, str, str]]:
    """The archive, written as the store writes a source; each document's (agent, project, first month)."""
    rng = random.Random(seed)
    db, written = write_sessions(workspace, AGENTS, lambda number: session(rng, number, messages), count, messages)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return {id_: (read.agent, read.project or "", (read.started or "")[:7]) for id_, read in written.items()}


def month_bounds(month: str) -> tuple[str, str]:
    year, number = int(month[:4]), int(month[5:7])
    return f"{month}-01", f"{month}-{calendar.monthrange(year, number)[1]:02d}"


def cases(written: dict[int, tuple[str, str, str]], seed: int, count: int) -> dict[str, list[dict[str, str]]]:
    """Seeded queries: words (one or two, common to rare) over filters that some session has."""
    rng = random.Random(seed + 1)
    held = sorted(set(written.values()))
    filtered, alone, listing = [], [], []
    for n in range(count):
        pool = [word for word in [COMMON[:60], COMMON[60:], MIDDLE, RARE][n % 4] if len(word) > 1]  # a query has 2+
        query = rng.choice(pool) if n % 3 else " ".join(rng.sample(COMMON[20:] + MIDDLE, 2))
        agent, project, month = rng.choice(held)
        start, end = month_bounds(month)
        name = project.rsplit("/", 1)[-1]
        filtered.append(
            {"query": query, "mode": "keyword", "agents": agent, "projects": name, "start_date": start, "end_date": end}
        )
        alone.append({"query": query, "mode": "keyword"})
        listing.append({"mode": "recent", "agents": agent, "projects": name})
    return {
        "(a) words + agent + project + month": filtered,
        "(b) words alone": alone,
        "(c) agent + project, newest first": listing,
    }


def time_family(
    archive: Archive, family: list[dict[str, str]], repeat: int
) -> tuple[list[float], list[float], list[dict]]:
    """Each query's wall time and CPU time (ms), ``repeat`` runs each, and the first run's answers."""
    times, cpu, responses = [], [], []
    for params in family:
        for attempt in range(repeat):
            started, started_cpu = time.perf_counter(), time.process_time()
            response = archive.search(params)
            times.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
            if attempt == 0:
                responses.append(response)
    return times, cpu, responses


def check(family: list[dict[str, str]], responses: list[dict], written: dict[int, tuple[str, str, str]]) -> list[str]:
    """What is wrong with filtered results: a result of another agent or project, a message of another
    month or without the words."""
    wrong = []
    for params, response in zip(family, responses):
        start, end = params.get("start_date", ""), params.get("end_date", "\uffff")
        for result in response["results"]:
            agent, project, _ = written.get(result["id"], ("", "", ""))
            if result["entity_type"] != params["agents"] or agent != params["agents"]:
                wrong.append(f"{params}: result {result['id']} is of agent {result['entity_type']}")
            if project.rsplit("/", 1)[-1] != params["projects"]:
                wrong.append(f"{params}: result {result['id']} is of project {project}")
            message = result.get("message")
            if message is None:
                continue  # matched by its title or opening prompt
            if not start <= message["timestamp"][:10] <= end:
                wrong.append(f"{params}: result {result['id']}'s message is of {message['timestamp']}")
            if "<mark>" not in message["snippet"]:
                wrong.append(f"{params}: result {result['id']}'s message does not hold the words")
    return wrong


SERVING_SCRIPT = """
import json, sys
from pathlib import Path
from archivist.queries.runner import Archive
families = json.loads(sys.stdin.read())
with Archive.for_workspace(Path(sys.argv[1])) as archive:
    for family in families.values():
        for params in family:
            archive.search(params)
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child would report its parent's
print(int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) // 1024)
"""


def serving_memory(workspace: Path, families: dict[str, list[dict[str, str]]]) -> str:
    """The peak memory of a fresh process that opens the archive and runs every query once, as
    a server's process does (its connections' page caches, the statements, the answers)."""
    import json
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", SERVING_SCRIPT, str(workspace)],
        input=json.dumps(families),
        capture_output=True,
        text=True,
        check=True,
    )
    return f"{int(done.stdout.strip()):,} MB at most (target <= 1 GB)"


def plan_lines(archive: Archive, params: dict[str, str]) -> list[str]:
    """The plan's accesses to the FTS tables and messages."""
    full = {name: "" for name in QUERIES["search"].params}
    full.update(params)
    rows = archive.conn.execute("EXPLAIN QUERY PLAN " + sql_for("search"), full).fetchall()
    return [row[3] for row in rows if any(name in row[3] for name in ("message_index", "documents_fts", "messages"))]


def built(root: Path, workspace: Path, args: argparse.Namespace) -> dict[int, tuple[str, str, str]]:
    """The archive built afresh in ``workspace`` (its sessions' facts kept in ``root``, for a later run to reuse)."""
    shutil.rmtree(workspace, ignore_errors=True)
    workspace.mkdir(parents=True)
    total = args.sessions * args.messages_per_session
    print(f"building {args.sessions} sessions x {args.messages_per_session} messages = {total} messages")
    started = time.perf_counter()
    written = build(workspace, args.sessions, args.messages_per_session, args.seed)
    seconds = time.perf_counter() - started
    size = sum(path.stat().st_size for path in archive_path(workspace).parent.iterdir() if path.is_file())
    print(f"build: {seconds:.1f}s ({total / seconds:,.0f} messages/s); archive {size / 1e6:,.0f} MB")
    shape = [args.sessions, args.messages_per_session, args.seed]
    (root / "written.json").write_text(json.dumps({"shape": shape, "written": written}))
    return written


def reused(root: Path, args: argparse.Namespace) -> dict[int, tuple[str, str, str]] | None:
    """The sessions' facts of an archive built in ``root`` before with the same shape, or None (build it)."""
    try:
        kept = json.loads((root / "written.json").read_text())
    except (OSError, ValueError):
        return None
    if kept.get("shape") != [args.sessions, args.messages_per_session, args.seed]:
        return None
    print(f"reusing the archive built in {root}")
    return {int(id_): (agent, project, month) for id_, (agent, project, month) in kept["written"].items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--messages-per-session", type=int, default=200)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--queries", type=int, default=50, help="queries per family")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each query")
    parser.add_argument("--keep", action="store_true", help="keep the temporary workspace")
    parser.add_argument("--archive", type=Path, help="a folder to build the archive in once and reuse after")
    args = parser.parse_args()

    root = args.archive or Path(tempfile.mkdtemp(prefix="archivist-messages-"))
    try:
        workspace = root / "workspace"
        written = reused(root, args) if args.archive else None
        if written is None:
            written = built(root, workspace, args)

        families = cases(written, args.seed, args.queries)
        with Archive.for_workspace(workspace) as archive:
            messages = archive.conn.execute("SELECT count(*) FROM messages").fetchone()[0]
            print(f"{messages} messages in {len(written)} conversations")
            first = next(iter(families.values()))[0]
            print(f"query plan of {first}:")
            for line in plan_lines(archive, first):
                print(f"    {line}")
            for family in families.values():
                archive.search(family[0])  # the first call prepares the statement
            print(f"search, {args.queries} queries x {args.repeat} runs per family:")
            medians = {}
            for label, family in families.items():
                times, cpu, responses = time_family(archive, family, args.repeat)
                found = sum(1 for response in responses if response["results"])
                hits = [response["total"] for response in responses]
                medians[label] = p50 = statistics.median(times)
                target = {"(a)": "   target p50 <= 10 ms", "(b)": "   target p50 <= 30 ms, p95 <= 80 ms"}.get(
                    label[:3], ""
                )
                print(
                    f"  {label:<38} p50 {p50:7.2f} ms   p95 {percentile(times, 0.95):7.2f} ms"
                    f"   {found}/{len(family)} found something, median total {statistics.median(hits):.0f} sessions{target}"
                )
                print(
                    f"  {'':<38} CPU p50 {statistics.median(cpu):7.2f} ms   p95 {percentile(cpu, 0.95):7.2f} ms"
                    " (a loaded machine's wall time is more than the search's own)"
                )
                if "agents" in family[0]:
                    wrong = check(family, responses, written)
                    results = [result for response in responses for result in response["results"]]
                    named = sum(1 for result in results if result.get("message"))
                    print(
                        f"    checked {len(results)} results ({named} naming a message): "
                        f"{len(wrong)} of another agent, project or month, or without the words"
                    )
                    for line in wrong[:5]:
                        print(f"      {line}")
                    if found < len(family) * 0.8:
                        print("    WARNING: fewer than 80% of the filtered queries found something")
        print(f"the searching process's memory, as serve and mcp answer these: {serving_memory(workspace, families)}")
        a = medians["(a) words + agent + project + month"]
        b = medians["(b) words alone"]
        print(f"filtered / unfiltered p50: {a / b:.2f}x")
        print(
            f"target p50 <= 10 ms with agent + project + month filters: {'met' if a <= 10 else 'NOT met'} ({a:.2f} ms)"
        )
    finally:
        if args.keep or args.archive:
            print(f"kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
