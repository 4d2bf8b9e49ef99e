"""Long natural-language queries over MCP: SciFact's claims as keyword searches at page_size 100.

    python bench/long_queries.py [--workspace DIR] [--split test] [--rounds 2]

Indexes ../shared/eval/scifact's corpus as one records file (as bench/retrieval_quality.py
does; no embedding: keyword only) into --workspace (bench/out/long-queries by default, reused),
then calls the MCP `search` tool (in process, the SDK's own client) with each judged claim,
mode=keyword, page_size=100, and prints per round the p50 and p95 latency, the keyword nDCG@10
(bench/retrieval_quality.py: 0.6856 with the default weights) and the median total and
matched, and the CPU time of each call (client and server together: a figure a busy machine changes
less than the latency). Target (issue 35): keyword p50 <= 40 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from mcp import Client
from retrieval_quality import judgments, load_workspace, ndcg_at, queries

from archivist.archive.indexer import index_workspace
from archivist.mcp.tools import create_server
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

OUT = Path(__file__).resolve().parent / "out"


async def rounds(workspace: Path, claims: dict[str, str], qrels: dict[str, dict[str, int]], count: int) -> None:
    with Archive(archive_path(workspace)) as archive:
        external = {
            row["id"]: row["external_id"] for row in archive.conn.execute("select id, external_id from documents")
        }
    async with Client(create_server(archive_path(workspace), workspace)) as client:
        for number in range(1, count + 1):
            times, cpu, ndcgs, totals = [], [], [], []
            for query_id, claim in claims.items():
                began, spent = time.perf_counter(), time.process_time()
                result = await client.call_tool("search", {"query": claim, "mode": "keyword", "page_size": 100})
                times.append((time.perf_counter() - began) * 1000)
                cpu.append((time.process_time() - spent) * 1000)
                answer = result.structured_content or {}
                ranked = [external.get(row.get("id"), "") for row in answer.get("results", [])]
                ndcgs.append(ndcg_at(ranked, qrels[query_id]))
                totals.append(answer.get("total", 0))
            times.sort()
            print(
                f"round {number}: keyword p50 {statistics.median(times):.1f} ms, p95 "
                f"{times[int(len(times) * 0.95)]:.1f} ms (target p50 <= 40 ms), CPU p50 {statistics.median(cpu):.1f} ms; nDCG@10 "
                f"{statistics.mean(ndcgs):.4f}; median total {statistics.median(totals):.0f}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", type=Path, default=OUT / "long-queries")
    parser.add_argument("--split", default="test")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if not archive_path(args.workspace).exists():
        source = load_workspace("scifact")
        args.workspace.mkdir(parents=True, exist_ok=True)
        (args.workspace / "records").mkdir(exist_ok=True)
        (args.workspace / "records" / "corpus.jsonl").write_bytes((source / "records" / "corpus.jsonl").read_bytes())
        index_workspace(args.workspace)
    qrels = judgments("scifact", args.split)
    texts = queries("scifact")
    claims = {query_id: texts[query_id] for query_id in qrels if query_id in texts}
    print(f"{len(claims)} claims ({args.split} split) over MCP, mode=keyword, page_size=100")
    asyncio.run(rounds(args.workspace, claims, qrels, args.rounds))


if __name__ == "__main__":
    main()
