"""Nearest-neighbour search over an archive's llm collections, callable from SQL.

sqlite-vec's brute-force distance over the stored blobs takes ~150-200 ms at
100k chunks on two cores (bench/vector_speed.py); a cached float32 matrix and
one matrix product take a few milliseconds. The vectors stay in llm's
``embeddings`` table: the matrix is only a cache, rebuilt when an embedding run
changes the ``embeddings_version`` in ``archive_meta``.
"""

from __future__ import annotations

import json
import os
import sqlite3 as stdlib_sqlite3
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from archivist.archive.database import connect_read_only, sqlite3

VERSION_SQL = "SELECT value FROM archive_meta WHERE key = 'embeddings_version'"
VECTORS_SQL = """
SELECT e.id, e.embedding FROM embeddings e
JOIN collections c ON c.id = e.collection_id
WHERE c.name = :collection
"""
BUMP_VERSION_SQL = """
INSERT INTO archive_meta (key, value) VALUES ('embeddings_version', :version)
ON CONFLICT (key) DO UPDATE SET value = excluded.value
"""


@dataclass
class Matrix:
    version: str | None
    ids: list[str]
    rows: dict[str, int]
    vectors: np.ndarray  # (n, d) float32, unit length


_lock = threading.Lock()
_cache: dict[tuple[str, str], Matrix] = {}


def _read(db_path: str, collection: str) -> Matrix:
    conn = connect_read_only(db_path)
    try:
        row = conn.execute(VERSION_SQL).fetchone()
        version = row[0] if row else None
        ids, blobs = [], []
        for id_, blob in conn.execute(VECTORS_SQL, {"collection": collection}):
            ids.append(id_)
            blobs.append(blob)
    finally:
        conn.close()
    if not blobs:
        return Matrix(version, [], {}, np.zeros((0, 0), dtype=np.float32))
    vectors = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1, norms)
    return Matrix(version, ids, {id_: n for n, id_ in enumerate(ids)}, vectors.astype(np.float32))


def _current_version(db_path: str) -> str | None:
    try:
        conn = connect_read_only(db_path)
    except (sqlite3.OperationalError, stdlib_sqlite3.OperationalError):
        return None
    try:
        row = conn.execute(VERSION_SQL).fetchone()
    except (sqlite3.OperationalError, stdlib_sqlite3.OperationalError):
        return None
    finally:
        conn.close()
    return row[0] if row else None


def _file_state(db_path: str) -> tuple:
    """Cheap evidence that nothing was written: the database and WAL file sizes and times."""
    state: list[tuple[int, int] | None] = []
    for suffix in ("", "-wal"):
        try:
            stat = os.stat(db_path + suffix)
            state.append((stat.st_size, stat.st_mtime_ns))
        except OSError:
            state.append(None)
    return tuple(state)


_seen_state: dict[str, tuple] = {}
_seen_version: dict[str, str | None] = {}


def matrix(db_path: str, collection: str) -> Matrix:
    """The collection's vectors, read once and re-read only after they change."""
    key = (db_path, collection)
    state = _file_state(db_path)
    with _lock:
        if _seen_state.get(db_path) != state:
            _seen_version[db_path] = _current_version(db_path)
            _seen_state[db_path] = state
        version = _seen_version[db_path]
        cached = _cache.get(key)
        if cached is None or cached.version != version:
            cached = _cache[key] = _read(db_path, collection)
        return cached


def nearest(db_path: str, query: bytes | None, collection: str, k: int, allowed: str | None = None) -> str:
    """JSON ``[[id, similarity], ...]``, best first; ``allowed`` (a JSON list of ids) restricts the search."""
    if not db_path or query is None:
        return "[]"
    found = matrix(db_path, collection)
    if not found.ids:
        return "[]"
    vector = np.frombuffer(query, dtype="<f4")
    vector = vector / (np.linalg.norm(vector) or 1.0)
    if allowed is not None:
        rows = np.array([found.rows[i] for i in json.loads(allowed) if i in found.rows], dtype=np.int64)
        if rows.size == 0:
            return "[]"
        scores = found.vectors[rows] @ vector
    else:
        rows = None
        scores = found.vectors @ vector
    k = max(1, min(int(k), scores.shape[0]))
    top = np.argpartition(-scores, k - 1)[:k] if k < scores.shape[0] else np.arange(scores.shape[0])
    top = top[np.argsort(-scores[top])]
    positions = rows[top] if rows is not None else top
    return json.dumps([[found.ids[p], round(float(scores[t]), 6)] for p, t in zip(positions, top)])


def bump_version(db: Any, version: str) -> None:
    db.execute(BUMP_VERSION_SQL, {"version": version})


def warm(db_path: str) -> bool:
    """Read the archive's vectors now (if they changed), before a query with a time limit needs them;
    whether it has any passage's vector (``searchable``)."""
    from archivist.archive.schema import DOCUMENTS_COLLECTION

    found = searchable(db_path)
    if found:
        matrix(db_path, DOCUMENTS_COLLECTION)
    return found


def searchable(db_path: str) -> bool:
    """Whether the archive has vectors of passages to search by meaning (read once, as ``matrix``)."""
    from archivist.archive.schema import CHUNKS_COLLECTION

    try:
        return bool(matrix(db_path, CHUNKS_COLLECTION).ids)
    except (sqlite3.OperationalError, stdlib_sqlite3.OperationalError):
        return False  # an archive from before embeddings
