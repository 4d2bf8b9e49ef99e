"""Speed of the semantic layer: pipeline throughput, query latency at 100k chunks, no-op re-embedding.

    python bench/semantic_speed.py [--conversations 56500] [--throughput-docs 150]

1. Throughput: the same chunk texts through raw `model.encode` and through the
   embedding pipeline (chunking, hashing, llm, SQLite writes), in one run; prints
   the ratio (target >= 0.9).
2. Latency: search_semantic and search (hybrid) p50/p95 over an archive
   of the synthetic workspace (bench/synth.py): 56,500 conversations make about 100k
   chunks (1.8 per conversation), every one with a vector; model warm (each query is
   embedded inside the timing). Embedding 100k chunks takes over an hour on two cores, and query time does
   not depend on what the vectors say, so these vectors are seeded random unit
   vectors written in the pipeline's own format: timing only, not quality.
3. Re-embedding the unchanged archive: texts sent to the model and seconds.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import sqlite_utils

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synth import TOPICS, generate

from archivist.archive import schema
from archivist.archive.indexer import index_workspace
from archivist.queries.runner import Archive
from archivist.semantic import (
    chunking,
    embeddings,
    onnx_model,
    vectors,
)
from archivist.semantic import model as embedding_model
from archivist.workspace import archive_path

OUT = Path(__file__).resolve().parent / "out"


def throughput(documents: int) -> None:
    workspace = OUT / "throughput"
    shutil.rmtree(workspace, ignore_errors=True)
    generate(workspace, documents, seed=7)
    index_workspace(workspace)
    db = schema.open_archive(archive_path(workspace))
    texts = [
        piece.text
        for _id, title, body in db.execute("select id, title, body from documents order by id").fetchall()
        for piece in chunking.chunk(body, title)
    ]
    db.close()
    embedding_model.encode(texts[:8])  # warm: load the model before timing either side
    started = time.perf_counter()
    embedding_model.encode(texts)  # what the pipeline runs: ONNX Runtime, one thread per core
    raw = len(texts) / (time.perf_counter() - started)
    started = time.perf_counter()
    result = embeddings.embed_archive(archive_path(workspace))
    pipeline = result.chunks_embedded / (time.perf_counter() - started)
    embedding_model.encode_torch(texts[:8])  # the same model in sentence-transformers, for comparison
    started = time.perf_counter()
    embedding_model.encode_torch(texts)
    torch_rate = len(texts) / (time.perf_counter() - started)
    print(f"throughput on {len(texts)} chunks of {documents} documents:")
    print(f"  raw model encode (ONNX Runtime)  {raw:7.1f} chunks/s")
    print(f"  embedding pipeline               {pipeline:7.1f} chunks/s  ({result.chunks_embedded} sent to the model)")
    print(f"  ratio {pipeline / raw:.2f} (target >= 0.9)")
    print(f"  (sentence-transformers and torch, same chunks: {torch_rate:.1f} chunks/s)")


def synthetic_vectors(db_path: Path, seed: int = 42) -> int:
    """Chunk rows and seeded random unit vectors for every document."""
    db = schema.open_archive(db_path)
    chunk_collection = embeddings._collection(sqlite_utils.Database(db.conn), schema.CHUNKS_COLLECTION)
    existing = db.execute("select count(*) from chunks").fetchone()[0]
    if existing:
        db.close()
        return existing
    rng = np.random.default_rng(seed)
    rows, vector_rows, written = [], [], 0
    for doc_id, title, body in db.execute("select id, title, body from documents order by id"):
        for piece in chunking.chunk(body, title):
            vector = rng.standard_normal(onnx_model.DIMENSIONS).astype("<f4")
            vector /= np.linalg.norm(vector)
            chunk_id = f"{doc_id}-{piece.seq}"
            digest = embeddings.chunk_hash(piece.text)
            rows.append(
                {
                    "id": chunk_id,
                    "document_id": doc_id,
                    "seq": piece.seq,
                    "start": piece.start,
                    "end": piece.end,
                    "content_hash": digest,
                }
            )
            vector_rows.append(
                embeddings._vector_row(chunk_collection, chunk_id, vector.tobytes(), digest, {"document_id": doc_id}, 0)
            )
            written += 1
    with db.atomic():
        db.insert("chunks", rows, replace=True)
        db.insert("embeddings", vector_rows, replace=True)
        vectors.bump_version(db, f"synthetic-{written}")
    db.close()
    return written


def latency(conversations: int, repeat: int) -> None:
    workspace = OUT / f"synth-{conversations}-42"
    generate(workspace, conversations, 42)
    index_workspace(workspace)
    written = synthetic_vectors(archive_path(workspace))
    rng = random.Random(3)
    cases = [" ".join(rng.sample(TOPICS[rng.choice(list(TOPICS))], 2)) for _ in range(20)]
    with Archive(archive_path(workspace)) as archive:
        archive.run("search_semantic", {"query": cases[0]})  # model loaded, vector matrix cached
        print(
            f"latency at {written} chunk vectors of {conversations} conversations (synthetic, timing only), "
            f"{len(cases)} queries x {repeat}:"
        )
        embeds = []
        for query in cases:
            onnx_model.query_vector.cache_clear()
            started = time.perf_counter()
            onnx_model.query_vector(query)
            embeds.append((time.perf_counter() - started) * 1000)
        print(f"  {'(embedding a query alone)':<36} p50 {statistics.median(embeds):7.2f} ms")
        for label, name, extra, target in [
            ("search_semantic", "search_semantic", {}, 30),
            ("search_semantic, date_range month", "search_semantic", {"date_range": "2024-05"}, None),
            ("search hybrid", "search", {"mode": "hybrid"}, 50),
            ("search keyword", "search", {"mode": "keyword"}, None),
        ]:
            times = []
            for query in cases:
                for _ in range(repeat):
                    onnx_model.query_vector.cache_clear()  # every call embeds its query
                    started = time.perf_counter()
                    archive.run(name, {"query": query, **extra})
                    times.append((time.perf_counter() - started) * 1000)
            p50 = statistics.median(times)
            p95 = sorted(times)[int(0.95 * (len(times) - 1))]
            goal = f"   target p50 <= {target} ms: {'met' if p50 <= target else 'NOT met'}" if target else ""
            print(f"  {label:<36} p50 {p50:7.2f} ms   p95 {p95:7.2f} ms{goal}")


def noop() -> None:
    sci = OUT / "eval-scifact"
    if archive_path(sci).exists():
        started = time.perf_counter()
        result = embeddings.embed_archive(archive_path(sci))
        chunks = schema.open_archive(archive_path(sci))["chunks"].count
        print(
            f"re-embedding the unchanged SciFact archive ({chunks} chunks): {result.chunks_embedded} texts sent "
            f"to the model, {time.perf_counter() - started:.2f}s (target 0 texts, <= 1 s for 10k chunks)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=56_500)
    parser.add_argument("--throughput-docs", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    throughput(args.throughput_docs)
    latency(args.conversations, args.repeat)
    noop()


if __name__ == "__main__":
    main()
