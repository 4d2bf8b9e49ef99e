"""Every kind's sample agent logs indexed into one fresh archive: the time it takes, and what each kind yields.

Indexes the bundled sample workspace with every registered kind's sample as a source
(``python -m archivist.agents.registry`` lists them), --runs times into fresh archives,
and prints the median time, then per kind: sessions, messages, responses with usage,
the usage totals (input, output, cache write, cache read), their price at the price data's
prices and the cost the logs themselves state, and the attachments recorded.

    .venv/bin/python bench/sample_logs.py
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import sqlite_utils

from archivist.agents import registry
from archivist.archive.indexer import index_workspace
from archivist.workspace import archive_path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample-workspace"
LOGS = ROOT / "sample-agent-logs"

PER_KIND_SQL = """
SELECT d.type AS kind, count(DISTINCT d.id) AS sessions, count(m.id) AS messages,
       count(m.input_tokens) AS responses, coalesce(sum(m.input_tokens), 0) AS input,
       coalesce(sum(m.output_tokens), 0) AS output, coalesce(sum(m.cache_write_tokens), 0) AS cache_write,
       coalesce(sum(m.cache_read_tokens), 0) AS cache_read, sum(m.price) AS price, sum(m.cost) AS stated,
       coalesce(sum(json_array_length(m.attachments)), 0) AS attachments
FROM documents d LEFT JOIN messages m ON m.document_id = d.id
WHERE d.source LIKE 'log:%'
GROUP BY d.type ORDER BY d.type
"""


def sources() -> list[tuple[str, Path]]:
    kinds = registry.kinds(registry.manager(entry_points=False))
    return [(name, LOGS / kind.sample) for name, kind in sorted(kinds.items()) if kind.sample]


def index_once(folder: Path) -> float:
    workspace = folder / "workspace"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))
    started = time.perf_counter()
    index_workspace(workspace, log_sources=sources())
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    times = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as folder:
            times.append(index_once(Path(folder)))
            kept = Path(folder) / "workspace"
            rows = list(sqlite_utils.Database(archive_path(kept)).query(PER_KIND_SQL))
            size = archive_path(kept).stat().st_size
    print(f"{len(sources())} kinds' samples and the sample workspace, indexed into a fresh archive ({args.runs} runs)")
    print(
        f"  median {statistics.median(times):.2f} s (min {min(times):.2f} s, max {max(times):.2f} s); archive {size / 1e6:.1f} MB"
    )
    header = (
        "kind",
        "sessions",
        "messages",
        "responses",
        "input",
        "output",
        "cache_write",
        "cache_read",
        "price",
        "stated",
        "attachments",
    )
    print("  " + " ".join(f"{name:>12}" for name in header))
    for row in rows:
        money = ["" if row[name] is None else f"${row[name]:.4f}" for name in ("price", "stated")]
        values = [row[name] for name in header[:-3]] + [*money, row["attachments"]]
        print("  " + " ".join(f"{value:>12}" for value in values))
    totals = {name: sum(row[name] for row in rows) for name in header[1:8]}
    print("  total " + json.dumps(totals))


if __name__ == "__main__":
    main()
