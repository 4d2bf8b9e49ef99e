"""The unified `search` at scale: keyword + filters, filter-only and tag queries.

    python bench/faceted_speed.py [--documents 1000000] [--seed 42] [--repeat 5]

Generates (once) a seeded synthetic workspace of every kind under bench/out/
(bench/synth.py --documents: a tenth conversations, the rest memories and
tracker records), indexes it with `archivist index`, then times the `search`
canned query (parameter checks included, as every surface runs it) for each
family of queries, printing p50 / p95 against the targets and the query plan's
table accesses beside the figures.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_speed import percentile
from synth import GENERAL_TAGS, MEMORY_TYPES, TOPICS, generate_mixed

from archivist.archive.indexer import index_workspace
from archivist.queries import runner
from archivist.queries.catalog import sql_for
from archivist.queries.runner import Archive
from archivist.queries.validation import QUERIES
from archivist.workspace import archive_path

OUT = Path(__file__).resolve().parent / "out"


def month_window(rng: random.Random) -> tuple[str, str]:
    year, month = rng.randint(2023, 2025), rng.randint(1, 10)
    return f"{year}-{month:02d}", f"{year}-{month + rng.randint(0, 2):02d}"


def families(seed: int, count: int = 20) -> dict[str, tuple[str, list[dict]]]:
    """Seeded cases per family: (target, [search parameters])."""
    rng = random.Random(seed)
    keyword, selective, broad, tags = [], [], [], []
    for n in range(count):
        topic_name = rng.choice(list(TOPICS))
        start, end = month_window(rng)
        typed = {"types": rng.choice(sorted(set(MEMORY_TYPES)))} if n % 2 else {"entities": rng.choice(["bug", "test"])}
        keyword.append(
            {"query": rng.choice(TOPICS[topic_name]), "mode": "keyword", "start_date": start, "end_date": end, **typed}
        )
        selective.append({"mode": "faceted", "start_date": start, "end_date": start, **typed})
        broad.append({"mode": "recent", "entities": rng.choice(["memory", "record", "conversation", "bug"])})
        tags.append({"mode": "tag", "match_all": "true", "tags": ",".join([topic_name, *rng.sample(GENERAL_TAGS, 2)])})
    return {
        "keyword + date + type filters": ("p50 <= 10 ms, p95 <= 100 ms", keyword),
        "filter-only, newest first (type + month)": ("p50 <= 10 ms", selective),
        "filter-only, newest first (one kind, broad)": ("none set; shown for scale", broad),
        "tags AND over three tags, newest first": ("p50 <= 20 ms", tags),
    }


def plan_lines(archive: Archive, params: dict) -> list[str]:
    """The plan's table accesses: how documents_fts, filters_by_time, documents and chunks are reached."""
    full = {name: "" for name in QUERIES["search"].params}
    full.update({key: str(value) for key, value in params.items()})
    rows = archive.conn.execute("EXPLAIN QUERY PLAN " + sql_for("search"), full).fetchall()
    return [row[3] for row in rows if any(table in row[3] for table in ("documents", "chunks", "filters_by_time"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    workspace = OUT / f"mixed-{args.documents}-{args.seed}"
    started = time.perf_counter()
    generate_mixed(workspace, args.documents, args.seed)
    summary = index_workspace(workspace)
    print(f"workspace ready in {time.perf_counter() - started:.1f}s: {summary.line()}")

    with Archive(archive_path(workspace)) as archive:
        documents = archive.conn.execute("SELECT count(*) FROM documents").fetchone()[0]
        print(f"{documents:,} documents\n")
        for name, (target, cases) in families(args.seed).items():
            archive.search(cases[0])  # warm the page cache for this family
            times, totals = [], []
            for params in cases:
                for _ in range(args.repeat):
                    began = time.perf_counter()
                    response = archive.search(params)
                    times.append((time.perf_counter() - began) * 1000)
                totals.append(response["total"])
            print(f"{name}  [target: {target}]")
            print(
                f"  p50 {statistics.median(times):.1f} ms   p95 {percentile(times, 0.95):.1f} ms   "
                f"({len(cases)} queries x {args.repeat}; matches per query: median {int(statistics.median(totals)):,}, "
                f"max {max(totals):,})"
            )
            print(f"  e.g. {cases[0]}")
            print("  plan (table accesses):")
            for line in plan_lines(archive, cases[0]):
                print(f"    {line}")
            print()
    print(
        f"preparing the search on a new connection: {prepare_ms(archive_path(workspace)):.0f} ms CPU [target: < 100 ms]"
    )


def prepare_ms(path: Path) -> float:
    """The least CPU time, of three new connections, that preparing the search statement takes
    (its rankings read once each: about 300 ms before they were)."""
    sql = sql_for("search")
    params = {name: "" for name in re.findall(r":(\w+)", sql)} | {"query": "zeppelin", "mode": "keyword"}
    spent = []
    for _ in range(3):
        conn = runner.connect(path)
        began = time.thread_time()
        conn.execute("EXPLAIN " + sql, params).fetchall()
        spent.append((time.thread_time() - began) * 1000)
        conn.close()
    return min(spent)


if __name__ == "__main__":
    main()
