"""Retrieval quality on public test collections, through the project's own canned query.

    python bench/retrieval_quality.py [--collection scifact|cranfield] [--split test|train] [--weights int8|float32]

Loads ../shared/eval/<collection> (BEIR layout) into an archive under bench/out/
(as one records file, read in place each run: indexing and embedding are
incremental, so only the first run pays for them), then runs every judged query
through the `search` canned query in keyword, semantic and hybrid mode and prints
nDCG@10 and Recall@100 for each. ``--weights`` runs the model's int8 graph (the default) or
its float32 export, each in an archive of its own: run both to compare them.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import time
from collections import defaultdict
from pathlib import Path

from archivist.queries.runner import Archive
from archivist.semantic import embeddings, onnx_model
from archivist.workspace import archive_path

ROOT = Path(__file__).resolve().parent.parent
EVAL = ROOT.parent / "shared" / "eval"
OUT = Path(__file__).resolve().parent / "out"
MODES = ("keyword", "semantic", "hybrid")
PUBLISHED = {
    "scifact": "published nDCG@10 (test): BM25 0.665, SQLite FTS5 bm25 0.686, all-MiniLM-L6-v2 ~0.645",
    "cranfield": "",
}


def load_workspace(collection: str, weights: str = onnx_model.WEIGHTS) -> Path:
    """The collection as a workspace: one records file, written only when missing."""
    workspace = OUT / (f"eval-{collection}" if weights == "int8" else f"eval-{collection}-{weights}")
    records = workspace / "records" / "corpus.jsonl"
    if not records.exists():
        records.parent.mkdir(parents=True, exist_ok=True)
        with (
            open(EVAL / collection / "corpus.jsonl", encoding="utf-8") as source,
            open(records, "w", encoding="utf-8") as out,
        ):
            for line in source:
                doc = json.loads(line)
                out.write(
                    json.dumps(
                        {
                            "entity_type": "document",
                            "entity_id": doc["_id"],
                            "title": doc.get("title") or "",
                            "body": doc["text"],
                        }
                    )
                    + "\n"
                )
    return workspace


def judgments(collection: str, split: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with open(EVAL / collection / "qrels" / f"{split}.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if int(row["score"]) > 0:
                qrels[row["query-id"]][row["corpus-id"]] = int(row["score"])
    return qrels


def queries(collection: str) -> dict[str, str]:
    with open(EVAL / collection / "queries.jsonl", encoding="utf-8") as handle:
        return {q["_id"]: q["text"] for q in map(json.loads, handle)}


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    """nDCG with linear gains, as trec_eval and BEIR (pytrec_eval) compute it."""
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(grade / math.log2(i + 2) for i, grade in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int = 100) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="scifact", choices=["scifact", "cranfield"])
    parser.add_argument("--split", default="test")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--weights", default=onnx_model.WEIGHTS, choices=onnx_model.WEIGHT_KINDS)
    args = parser.parse_args()
    onnx_model.WEIGHTS = embeddings.VECTOR_METADATA["weights"] = args.weights

    workspace = load_workspace(args.collection, args.weights)
    started = time.perf_counter()
    result = embeddings.embed_workspace(workspace)
    print(
        f"{args.collection}: {result.embedded} documents embedded now, {result.skipped} already "
        f"({result.chunks_embedded} chunks sent to the model) in {time.perf_counter() - started:.1f}s"
    )
    qrels = judgments(args.collection, args.split)
    texts = queries(args.collection)
    judged = [q for q in qrels if q in texts]
    print(f"{len(judged)} judged queries ({args.split} split)")
    with Archive(archive_path(workspace)) as archive:
        external = {
            row["id"]: row["external_id"] for row in archive.conn.execute("select id, external_id from documents")
        }
        for mode in args.modes.split(","):
            ndcgs, recalls, times = [], [], []
            for query_id in judged:
                began = time.perf_counter()
                rows = archive.search({"query": texts[query_id], "mode": mode, "page_size": 100})["results"]
                times.append((time.perf_counter() - began) * 1000)
                ranked = [external[row["id"]] for row in rows]
                ndcgs.append(ndcg_at(ranked, qrels[query_id]))
                recalls.append(recall_at(ranked, qrels[query_id]))
            print(
                f"  {mode:<9} nDCG@10 {statistics.mean(ndcgs):.4f}   Recall@100 {statistics.mean(recalls):.4f}   "
                f"query p50 {statistics.median(times):.1f} ms"
            )
    if PUBLISHED[args.collection]:
        print(f"  ({PUBLISHED[args.collection]})")


if __name__ == "__main__":
    main()
