"""Nearest-neighbour routes compared on the same vectors: sqlite-vec against the cached matrix.

    python bench/vector_speed.py [--vectors 100000]

Seeded random unit vectors (384-d, float32, the format llm stores) in a scratch
archive under bench/out/. Times top-200 by cosine similarity with
sqlite-vec's vec_distance_cosine over the stored blobs, with a sqlite-vec vec0
table (KNN), and with archivist's route (archivist_nearest: one matrix product
over a cached float32 matrix), and checks the three agree.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from archivist.queries import vector_search
from archivist.queries.runner import connect
from archivist.semantic import vectors

OUT = Path(__file__).resolve().parent / "out"
SETUP_SQL = """
CREATE TABLE IF NOT EXISTS archive_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS collections (id INTEGER PRIMARY KEY, name TEXT, model TEXT);
CREATE TABLE IF NOT EXISTS embeddings (
    collection_id INTEGER, id TEXT, embedding BLOB, content TEXT, content_blob BLOB,
    content_hash BLOB, metadata TEXT, updated INTEGER, PRIMARY KEY (collection_id, id)
);
"""


def build(path: Path, count: int) -> None:
    from sqlite_utils.utils import sqlite3

    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    vector_search.load_sqlite_vec(conn)
    conn.executescript(SETUP_SQL)
    conn.execute("INSERT INTO collections VALUES (1, 'archivist_chunks', 'archivist-minilm-l6-v2')")
    rng = np.random.default_rng(42)
    matrix = rng.standard_normal((count, 384)).astype("<f4")
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    conn.executemany(
        "INSERT INTO embeddings (collection_id, id, embedding) VALUES (1, ?, ?)",
        ((str(n), matrix[n].tobytes()) for n in range(count)),
    )
    conn.execute("CREATE VIRTUAL TABLE vec_chunks USING vec0(embedding float[384] distance_metric=cosine)")
    conn.execute("INSERT INTO vec_chunks (rowid, embedding) SELECT CAST(id AS INTEGER), embedding FROM embeddings")
    conn.execute("INSERT INTO archive_meta VALUES ('embeddings_version', 'bench')")
    conn.commit()
    conn.close()


def timed(label: str, run, repeat: int) -> list[str]:
    times, ids = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        ids = run()
        times.append((time.perf_counter() - started) * 1000)
    print(f"  {label:<46} p50 {statistics.median(times):8.2f} ms")
    return ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    path = OUT / f"vectors-{args.vectors}.db"
    build(path, args.vectors)
    conn = connect(path)
    query = np.random.default_rng(1).standard_normal(384).astype("<f4")
    query = (query / np.linalg.norm(query)).tobytes()
    print(f"top 200 of {args.vectors} vectors (384-d float32):")
    scan = timed(
        "sqlite-vec vec_distance_cosine, full scan",
        lambda: [
            r[0]
            for r in conn.execute(
                "SELECT id FROM embeddings WHERE collection_id = 1 ORDER BY vec_distance_cosine(embedding, :q) LIMIT 200",
                {"q": query},
            )
        ],
        args.repeat,
    )
    knn = timed(
        "sqlite-vec vec0 KNN",
        lambda: [
            str(r[0])
            for r in conn.execute(
                "SELECT rowid FROM vec_chunks WHERE embedding MATCH :q AND k = 200 ORDER BY distance", {"q": query}
            )
        ],
        args.repeat,
    )
    vectors.matrix(str(path.resolve()), "archivist_chunks")  # the cache is built once per change
    ours = timed(
        "archivist_nearest (cached matrix, one product)",
        lambda: [
            r[0]
            for r in json.loads(
                conn.execute("SELECT archivist_nearest(:q, 'archivist_chunks', 200)", {"q": query}).fetchone()[0]
            )
        ],
        args.repeat,
    )
    print(f"  same top 200: vec_distance_cosine {scan == ours}, vec0 {knn == ours}")


if __name__ == "__main__":
    main()
