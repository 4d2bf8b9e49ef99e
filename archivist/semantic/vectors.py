"""Nearest-neighbour search over an archive's llm collections, callable from SQL.

sqlite-vec's brute-force distance over the stored blobs takes ~150-200 ms at
100k chunks on two cores (bench/vector_speed.py); a cached matrix and one
matrix product take a few milliseconds. The vectors stay in llm's ``embeddings``
table, float32: the matrix is only a cache, rebuilt when an embedding run
changes the ``embeddings_version`` in ``archive_meta``. It keeps each unit vector
in int8 with one scale (384 bytes a chunk, 288 MB at 750,000 chunks, where
float32 took 1.15 GB), and the best candidates it finds are scored again from
their float32 vectors, read back from the archive: the nearest are those, and in
that order, that float32 gives.
"""

from __future__ import annotations

import json
import os
import sqlite3 as stdlib_sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from archivist.archive.database import connect_read_only, sqlite3

VERSION_SQL = "SELECT value FROM archive_meta WHERE key = 'embeddings_version'"
COUNT_SQL = """
SELECT count(*) FROM embeddings e
JOIN collections c ON c.id = e.collection_id
WHERE c.name = :collection
"""
VECTORS_SQL = """
SELECT e.id, e.embedding FROM embeddings e
JOIN collections c ON c.id = e.collection_id
WHERE c.name = :collection
"""
SOME_VECTORS_SQL = """
SELECT e.id, e.embedding FROM embeddings e
WHERE e.collection_id = (SELECT id FROM collections WHERE name = :collection)
  AND e.id IN (SELECT value FROM json_each(:ids))
"""
BUMP_VERSION_SQL = """
INSERT INTO archive_meta (key, value) VALUES ('embeddings_version', :version)
ON CONFLICT (key) DO UPDATE SET value = excluded.value
"""
# Rows read and quantized at a time while the matrix is built (6 MB of float32 at 384-d).
READ_BATCH = 4096
# Rows multiplied at a time: a block stays in cache and below the size at which OpenBLAS
# splits a product across threads (5-10x slower on a busy machine: bench/hybrid_scale.py).
PRODUCT_BLOCK = 1024
# Candidates scored again beyond the k asked for, at the least.
EXTRA_CANDIDATES = 64
# How far an int8 score may be from float32's, in units of a vector's scale (the rounding
# error of a unit query's product has a standard deviation of 0.29 scales: this is 7 of them).
ERROR_SCALES = 2.0
# The most candidates scored again from the archive for one search.
MOST_CANDIDATES = 20_000


@dataclass
class Matrix:
    """A collection's unit vectors as int8 codes, each with the scale that gives its float32
    components back (``codes[n] * scales[n]``), and their ids."""

    version: str | None
    ids: list[str]
    rows: dict[str, int]
    codes: np.ndarray  # (n, d) int8
    scales: np.ndarray  # (n,) float32
    db_path: str = ""
    collection: str = ""

    @property
    def dimensions(self) -> int:
        return int(self.codes.shape[1])

    @property
    def vectors(self) -> np.ndarray:
        """The rows' float32 unit vectors, read back from the archive (the search keeps only their
        codes); a row whose vector is no longer there as it was is zero."""
        found = np.zeros((len(self.ids), self.dimensions), dtype=np.float32)
        ids, units = stored_units(self.db_path, self.collection, self.ids, self.dimensions)
        found[[self.rows[id_] for id_ in ids]] = units
        return found


_lock = threading.Lock()
_cache: dict[tuple[str, str], Matrix] = {}


def unit_vectors(blobs: list[bytes], dimensions: int) -> tuple[np.ndarray, np.ndarray]:
    """The blobs as float32 unit vectors, and which of them could be read as such (a finite,
    non-zero vector of ``dimensions`` components)."""
    fits = np.array([isinstance(blob, bytes) and len(blob) == dimensions * 4 for blob in blobs], dtype=bool)
    found = np.zeros((len(blobs), dimensions), dtype=np.float32)
    if fits.any():
        found[fits] = np.frombuffer(b"".join(b for b, f in zip(blobs, fits) if f), dtype="<f4").reshape(-1, dimensions)
    with np.errstate(all="ignore"):
        norms = np.linalg.norm(found, axis=1)
        usable = fits & np.isfinite(norms) & (norms > 0)
        found /= np.where(usable, norms, 1)[:, None]
    return found, usable


def quantized(units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors as int8 codes (the largest component of each at +-127) and their scales."""
    scales = np.abs(units).max(axis=1) / 127 if units.size else np.zeros(len(units), dtype=np.float32)
    codes = np.rint(units / np.where(scales == 0, 1, scales)[:, None])
    return codes.astype(np.int8), scales.astype(np.float32)


def _dimensions(blobs: Iterable[Any]) -> int:
    """The length of the first blob that holds float32 components: the collection's."""
    for blob in blobs:
        if isinstance(blob, bytes) and blob and len(blob) % 4 == 0:
            return len(blob) // 4
    return 0


def _read(db_path: str, collection: str) -> Matrix:
    """The collection's vectors, read in batches into a matrix of codes allocated once."""
    conn = connect_read_only(db_path)
    try:
        conn.execute("BEGIN")
        row = conn.execute(VERSION_SQL).fetchone()
        version = row[0] if row else None
        count = conn.execute(COUNT_SQL, {"collection": collection}).fetchone()[0]
        cursor = conn.execute(VECTORS_SQL, {"collection": collection})
        ids: list[str] = []
        codes = scales = None
        dimensions = 0
        while batch := cursor.fetchmany(READ_BATCH):
            dimensions = dimensions or _dimensions(blob for _id, blob in batch)
            if not dimensions:
                continue
            if codes is None or scales is None:
                codes = np.zeros((count, dimensions), dtype=np.int8)
                scales = np.zeros(count, dtype=np.float32)
            units, usable = unit_vectors([blob for _id, blob in batch], dimensions)
            kept = [str(id_) for (id_, _blob), fits in zip(batch, usable) if fits][: count - len(ids)]
            block_codes, block_scales = quantized(units[usable][: len(kept)])
            codes[len(ids) : len(ids) + len(kept)] = block_codes
            scales[len(ids) : len(ids) + len(kept)] = block_scales
            ids.extend(kept)
    finally:
        conn.close()
    if codes is None or scales is None or not ids:
        codes, scales = np.zeros((0, 0), dtype=np.int8), np.zeros(0, dtype=np.float32)
    elif len(ids) < count:
        codes, scales = codes[: len(ids)].copy(), scales[: len(ids)].copy()
    return Matrix(version, ids, {id_: n for n, id_ in enumerate(ids)}, codes, scales, db_path, collection)


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
    """JSON ``[[id, similarity], ...]``, best first; ``allowed`` (a JSON list of ids) restricts the search.

    A query that is not a vector of the collection's dimensions finds nothing."""
    if not db_path or query is None:
        return "[]"
    found = matrix(db_path, collection)
    vector = query_unit(query, found.dimensions) if found.ids else None
    if vector is None:
        return "[]"
    rows = allowed_rows(found, allowed)
    if rows is not None and rows.size == 0:
        return "[]"
    approximate = approximate_scores(found, vector, rows)
    k = max(1, min(int(k), approximate.shape[0]))
    scales = found.scales if rows is None else found.scales[rows]
    best = best_scored(db_path, collection, found, vector, approximate, scales, rows, k)
    return json.dumps([[id_, round(score, 6)] for id_, score in best])


def query_unit(query: Any, dimensions: int) -> np.ndarray | None:
    """The query as a float32 unit vector; none where it is not a finite vector of ``dimensions``."""
    if not isinstance(query, bytes) or len(query) != dimensions * 4:
        return None
    vector = np.frombuffer(query, dtype="<f4").astype(np.float32)
    norm = float(np.linalg.norm(vector))
    if not np.isfinite(norm):
        return None
    return vector / (norm or 1.0)


def allowed_rows(found: Matrix, allowed: Any) -> np.ndarray | None:
    """The matrix rows of the ids in ``allowed`` (a JSON list), ids it lacks and values that are
    no id left out; none (every row) where ``allowed`` is none."""
    if allowed is None:
        return None
    try:
        listed = json.loads(allowed)
    except (TypeError, ValueError):
        listed = []
    if not isinstance(listed, list):
        listed = []
    rows = [found.rows.get(id_) for id_ in listed if isinstance(id_, str)]
    return np.array([row for row in rows if row is not None], dtype=np.int64)


def approximate_scores(found: Matrix, vector: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """Each row's similarity to the unit ``vector`` from its int8 codes, a block of rows at a time."""
    count = found.codes.shape[0] if rows is None else rows.shape[0]
    scores = np.empty(count, dtype=np.float32)
    for start in range(0, count, PRODUCT_BLOCK):
        end = min(start + PRODUCT_BLOCK, count)
        block = found.codes[start:end] if rows is None else found.codes[rows[start:end]]
        np.matmul(block.astype(np.float32), vector, out=scores[start:end])
    scores *= found.scales if rows is None else found.scales[rows]
    return scores


def best_scored(
    db_path: str,
    collection: str,
    found: Matrix,
    vector: np.ndarray,
    approximate: np.ndarray,
    scales: np.ndarray,
    rows: np.ndarray | None,
    k: int,
) -> list[tuple[str, float]]:
    """The ``k`` best ids and their float32 similarities, best first.

    The best ``k`` and some more by their int8 scores are scored again from their float32
    vectors; then every other row whose int8 score is within its rounding error of the k-th
    float32 score is too, so that none that float32 puts in the k best is missed."""
    order = _top(approximate, min(approximate.shape[0], k + max(k // 2, EXTRA_CANDIDATES)))
    exact = _exact_scores(db_path, collection, found, vector, order, rows)
    kth = sorted(exact.values(), reverse=True)[k - 1] if len(exact) >= k else None
    if kth is not None and order.shape[0] < approximate.shape[0]:
        margin = ERROR_SCALES * float(scales.max())
        close = np.flatnonzero(approximate >= kth - margin)
        more = np.setdiff1d(close, order)[:MOST_CANDIDATES]
        if more.size:
            exact.update(_exact_scores(db_path, collection, found, vector, more, rows))
            order = np.concatenate([order, more])
    scored = {found.ids[_row(order_n, rows)]: float(approximate[order_n]) for order_n in order}
    scored.update(exact)
    return sorted(scored.items(), key=lambda item: (-item[1], item[0]))[:k]


def _top(scores: np.ndarray, count: int) -> np.ndarray:
    """The positions of the ``count`` highest scores, in no order."""
    if count >= scores.shape[0]:
        return np.arange(scores.shape[0])
    return np.argpartition(-scores, count - 1)[:count]


def _row(position: Any, rows: np.ndarray | None) -> int:
    return int(position if rows is None else rows[position])


def _exact_scores(
    db_path: str, collection: str, found: Matrix, vector: np.ndarray, positions: np.ndarray, rows: np.ndarray | None
) -> dict[str, float]:
    """The float32 similarities of the rows at ``positions``, their vectors read back from the
    archive; those it no longer holds as such are left out (their int8 scores stand)."""
    ids, units = stored_units(
        db_path, collection, [found.ids[_row(position, rows)] for position in positions], found.dimensions
    )
    return dict(zip(ids, (units @ vector).tolist())) if ids else {}


def stored_units(db_path: str, collection: str, ids: list[str], dimensions: int) -> tuple[list[str], np.ndarray]:
    """The float32 unit vectors the archive holds for ``ids`` (those it holds as such), and their ids."""
    try:
        conn = connect_read_only(db_path)
    except (sqlite3.Error, stdlib_sqlite3.Error):
        return [], np.zeros((0, dimensions), dtype=np.float32)
    try:
        stored = conn.execute(SOME_VECTORS_SQL, {"collection": collection, "ids": json.dumps(ids)}).fetchall()
    except (sqlite3.Error, stdlib_sqlite3.Error):
        stored = []
    finally:
        conn.close()
    units, usable = unit_vectors([blob for _id, blob in stored], dimensions)
    return [str(id_) for (id_, _blob), fits in zip(stored, usable) if fits], units[usable]


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
