"""How long the home, search and document pages take to render, through the real app.

    python bench/page_speed.py [--documents 1000000] [--seed 42] [--repeat 5]
    python bench/page_speed.py --workspace sample-workspace

Uses the seeded synthetic workspace of bench/faceted_speed.py (generated and indexed
once under bench/out/), or any workspace given, and times each page as a browser
would get it: the page's own canned queries through Datasette, then the template.
Prints p50 / p95 per page and the status of every answer (Datasette stops a query
after its SQL time limit, so a slow query shows up as an error page, not a figure).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_speed import percentile
from synth import generate_mixed

from archivist.archive.indexer import index_workspace
from archivist.queries.runner import Archive
from archivist.web.app import make_datasette, start
from archivist.workspace import archive_path

OUT = Path(__file__).resolve().parent / "out"


def pages(archive: Archive) -> dict[str, str]:
    """The URLs to time, with values taken from the archive."""
    newest = archive.search({"mode": "recent", "page_size": 100})["results"]
    dated = next(item for item in newest if item["date"])
    word = next(w for item in newest for w in item["title"].lower().split() if w.isalpha() and len(w) > 4)
    month = dated["date"][:7]
    return {
        "home": "/",
        "search, no words (newest first)": "/search",
        "search, one word (keyword)": f"/search?query={word}&mode=keyword",
        "search, word + kind + month": f"/search?query={word}&mode=keyword&entities={dated['kind']}&start_date={month}&end_date={month}",
        "search, a month's days": f"/search?start_date={month}&end_date={month}",
        "document": f"/document/{dated['id']}",
    }


async def measure(db_path: Path, urls: dict[str, str], repeat: int) -> None:
    datasette = await start(make_datasette(db_path))
    for name, url in urls.items():
        timings, statuses = [], set()
        for _ in range(repeat + 1):  # the first run warms caches and is not counted
            began = time.perf_counter()
            response = await datasette.client.get(url)
            timings.append((time.perf_counter() - began) * 1000)
            statuses.add(response.status_code)
        timings = timings[1:]
        print(
            f"{name:<34} p50 {statistics.median(timings):8.1f} ms  p95 {percentile(timings, 95):8.1f} ms"
            f"  status {','.join(map(str, sorted(statuses)))}  {url}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workspace", type=Path, help="time this workspace instead of the synthetic one")
    args = parser.parse_args()

    workspace = args.workspace or OUT / f"mixed-{args.documents}-{args.seed}"
    if args.workspace is None:
        generate_mixed(workspace, args.documents, args.seed)
    print(index_workspace(workspace).line())
    with Archive.for_workspace(workspace) as archive:
        urls = pages(archive)
        documents = archive.conn.execute("select count(*) from documents").fetchone()[0]
    print(f"{documents:,} documents; {args.repeat} runs per page after one warm-up")
    asyncio.run(measure(archive_path(workspace), urls, args.repeat))


if __name__ == "__main__":
    main()
