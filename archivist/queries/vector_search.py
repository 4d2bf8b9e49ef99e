"""Search by meaning from SQL: the query's vector, the nearest chunks, and sqlite-vec's functions."""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Callable
from typing import Any

DATABASE_LIST_SQL = "PRAGMA database_list"


def database_file(conn: Any) -> str:
    """The file behind a connection's main database ('' for an in-memory one)."""
    for _seq, name, path in conn.execute(DATABASE_LIST_SQL).fetchall():
        if name == "main":
            return path or ""
    return ""


def make_embed(db_file: str) -> Callable[[str | None], bytes | None]:
    def embed_query(text: str | None) -> bytes | None:
        """The query's vector; none for an archive without vectors (nothing to search by meaning
        there: the model is not loaded for it)."""
        from archivist.semantic import vectors

        if db_file and not vectors.searchable(db_file):
            return None
        from archivist.semantic.onnx_model import query_vector  # the model loads on the first query, not before

        return query_vector(text or "")

    return embed_query


def model_id() -> str:
    """The embedding model's id, as llm knows it (the model itself is not loaded)."""
    from archivist.semantic.onnx_model import MODEL_ID

    return MODEL_ID


def make_nearest(db_file: str) -> Callable[..., str]:
    def nearest(query: bytes | None, collection: str, k: Any, allowed: str | None = None) -> str:
        if query is None:
            return "[]"  # nothing to search by meaning (a keyword search): the vectors are not needed
        from archivist.semantic import vectors

        return vectors.nearest(db_file, query, collection, int(k or 10), allowed)

    return nearest


def load_sqlite_vec(conn: Any) -> None:
    """sqlite-vec's functions (vec_distance_cosine, …) for hand-written SQL; needs pysqlite3."""
    if not hasattr(conn, "enable_load_extension"):
        return
    conn.enable_load_extension(True)
    try:
        conn.load_extension(sqlite_vec_path())
    finally:
        conn.enable_load_extension(False)


@functools.cache
def sqlite_vec_path() -> str:
    """``sqlite_vec.loadable_path()``, found without importing sqlite_vec: it imports numpy, a
    sixth of a second before any first query of a new process."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or spec.origin is None:
        raise ImportError("sqlite-vec is not installed")
    return os.path.join(os.path.dirname(spec.origin), "vec0")


# Semantic matches below this cosine similarity are dropped by default: the highest floor that
# clears every nonsense query of bench/similarity_floor.py while keeping 96% of SciFact's
# relevant train documents (hybrid test nDCG@10 0.722 with it, 0.721 without).
SIMILARITY_FLOOR = 0.32
