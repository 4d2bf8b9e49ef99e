"""Embedding an archive: incremental by content hash, resumable, memory flat in corpus size.

Documents are compared by a signature (title, body hash, model, chunker); only
changed documents are chunked again, and only chunks whose text is new reach the
model (a chunk whose hash is already stored is copied). Work is committed every
batch, so a killed run resumes where it stopped.

The vectors live in the ``llm`` library's own tables, so ``llm similar
archivist_documents ID -d archive.db`` works on an archive. The archive's schema
creates those tables with llm's own migrations; the two collections are made here,
through ``llm.Collection``, when embedding first starts (an archive never embedded
has none, and its queries find nothing):

- ``archivist_chunks``, one vector per chunk, is written by llm's own writer,
  ``Collection.embed_multi_with_metadata``. The model runs first, outside the write
  transaction (a long forward pass never holds the archive's write lock), on the
  texts whose vectors are not stored yet; llm's writer is then handed those vectors,
  and the stored ones, by text hash (``_ChunkWriter``), and stores every row itself.
- ``archivist_documents``, one vector per document, is the normalised mean of its
  chunks' vectors: no model makes it from a text, so llm's writer cannot store it.
  ``_vector_row`` writes it in llm's row format: the vector encoded by ``llm.encode``,
  and as content hash the document's own (so a changed document reads as pending).
  tests/test_llm_tables.py checks that row against one that llm's ``Collection``
  stores itself, and that llm finds the documents.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import llm
import sqlite_utils
from sqlite_utils.utils import sqlite3

from archivist.archive import schema
from archivist.errors import ArchivistError
from archivist.semantic import chunking, onnx_model, vectors
from archivist.semantic.onnx_model import MODEL_ID

logger = logging.getLogger(__name__)

# newest first (a session by its start): semantic search covers recent work first, the rest as it follows
DOCUMENT_SIGNATURES_SQL = (
    "SELECT id, title, content_hash, path FROM documents ORDER BY timestamp IS NULL, timestamp DESC, id DESC"
)
EMBEDDED_SIGNATURES_SQL = """
SELECT id, content_hash, metadata ->> 'model', coalesce(metadata ->> 'weights', 'float32'), metadata ->> 'chunker'
FROM embeddings WHERE collection_id = :collection
"""
# a conversation from an agent log is its messages (migrations.MESSAGE_INDEX_SQL), other documents their body
DOCUMENT_BODIES_SQL = "SELECT id, title, body FROM document_texts WHERE id IN (SELECT value FROM json_each(:ids))"
CHUNK_VECTORS_BY_HASH_SQL = """
SELECT content_hash, embedding FROM embeddings
WHERE collection_id = :collection AND content_hash IN (SELECT unhex(value) FROM json_each(:hashes))
  AND coalesce(metadata ->> 'weights', 'float32') = :weights  -- (made by the weights that run now)
"""
OLD_CHUNKS_SQL = "SELECT id FROM chunks WHERE document_id IN (SELECT value FROM json_each(:ids))"
DELETE_EMBEDDING_SQL = "DELETE FROM embeddings WHERE collection_id = :collection AND id = :id"
DELETE_EMBEDDINGS_SQL = (
    "DELETE FROM embeddings WHERE collection_id = :collection AND id IN (SELECT value FROM json_each(:ids))"
)
DELETE_CHUNKS_SQL = "DELETE FROM chunks WHERE document_id IN (SELECT value FROM json_each(:ids))"
DELETE_CHUNK_SQL = "DELETE FROM chunks WHERE id = :id"
ORPHAN_CHUNKS_SQL = "SELECT id FROM chunks WHERE document_id NOT IN (SELECT id FROM documents)"
ORPHAN_DOCUMENT_VECTORS_SQL = """
SELECT id FROM embeddings WHERE collection_id = :collection
AND CAST(id AS INTEGER) NOT IN (SELECT id FROM documents)
"""

BATCH_CHUNKS = 256  # chunks per model call, and per commit


@dataclass
class Result:
    embedded: int = 0  # documents (re-)embedded in this run
    skipped: int = 0  # documents already up to date
    chunks_embedded: int = 0  # texts sent to the model
    chunks_reused: int = 0  # chunks whose vector was already stored
    seconds: float = 0.0
    total_files: int = 0
    removed: int = 0

    def to_dict(self, with_total_files: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"success": True, "embedded": self.embedded, "skipped": self.skipped}
        if with_total_files:
            out["total_files"] = self.total_files
        return out


@dataclass
class _Pending:
    id: int
    signature: bytes
    path: str = ""
    title: str = ""
    chunks: list[chunking.Chunk] = field(default_factory=list)
    hashes: list[bytes] = field(default_factory=list)


def signature(content_hash: str) -> bytes:
    """What a document vector records of its source: the document's content hash (title and body)."""
    return bytes.fromhex(content_hash)


# what made a vector: one made otherwise is stale (``plan``), a document embedded anew
VECTOR_METADATA = {"model": MODEL_ID, "weights": onnx_model.WEIGHTS, "chunker": chunking.VERSION}


def chunk_hash(text: str | bytes) -> bytes:
    return llm.Collection.content_hash(text)  # the hash llm itself stores


def _collection(db: sqlite_utils.Database, name: str) -> int:
    """A collection's id, the collection made through llm if the archive has none by that name yet."""
    try:
        return llm.Collection(name, db, model_id=MODEL_ID).id
    except sqlite3.IntegrityError:  # another run made it between llm's look and its insert
        return llm.Collection(name, db, create=False).id


def _collections(db: sqlite_utils.Database) -> tuple[int, int]:
    """The chunks and documents collections (made in that order, as archives always had them)."""
    return _collection(db, schema.CHUNKS_COLLECTION), _collection(db, schema.DOCUMENTS_COLLECTION)


class _ChunkWriter(llm.EmbeddingModel):
    """llm's own writer for the chunks collection; its model is the vectors already embedded, by text hash."""

    model_id = MODEL_ID

    def __init__(self, db: sqlite_utils.Database) -> None:
        self._at_hand: dict[bytes, bytes] = {}  # chunk hash -> llm-encoded vector
        self.collection = llm.Collection(schema.CHUNKS_COLLECTION, db, model=self, create=False)

    def embed_batch(self, items: Iterable[str | bytes], *, key: str | None = None) -> Iterator[list[float]]:
        for item in items:
            yield list(llm.decode(self._at_hand[chunk_hash(item)]))

    def store(self, entries: list[tuple[str, str, dict[str, Any]]], at_hand: dict[bytes, bytes]) -> None:
        """Rows for (id, text, metadata) entries, each text's vector found in ``at_hand``."""
        self._at_hand = at_hand
        try:
            self.collection.embed_multi_with_metadata(entries, batch_size=BATCH_CHUNKS)
        finally:
            self._at_hand = {}


def in_scope(path: str, scope: str | None) -> bool:
    if not scope:
        return True
    scope = scope.strip("/")
    # a folder holds documents; a file may be part of a conversation folder
    return path == scope or path.startswith(scope + "/") or scope.startswith(path + "/")


def plan(
    db: sqlite_utils.Database, documents_collection: int, scope: str | None = None, only_ids: set[int] | None = None
) -> tuple[list[_Pending], int]:
    """Documents in scope whose vectors are missing or stale, and how many are up to date."""
    current = (VECTOR_METADATA["model"], VECTOR_METADATA["weights"], VECTOR_METADATA["chunker"])
    embedded = {
        id_: digest
        for id_, digest, *made in db.execute(EMBEDDED_SIGNATURES_SQL, {"collection": documents_collection})
        if tuple(made) == current
    }
    pending, up_to_date = [], 0
    for doc_id, title, content_hash, path in db.execute(DOCUMENT_SIGNATURES_SQL).fetchall():
        if not in_scope(path, scope) or (only_ids is not None and doc_id not in only_ids):
            continue
        wanted = signature(content_hash)
        if embedded.get(str(doc_id)) == wanted:
            up_to_date += 1
        else:
            pending.append(_Pending(doc_id, wanted, path, title or ""))
    return pending, up_to_date


def _json(values: Iterable[Any]) -> str:
    return json.dumps(list(values))


def _chunked(db: sqlite_utils.Database, batch: list[_Pending]) -> list[_Pending]:
    by_id = {p.id: p for p in batch}
    ids = _json([p.id for p in batch])
    for doc_id, title, body in db.execute(DOCUMENT_BODIES_SQL, {"ids": ids}).fetchall():
        pending = by_id[doc_id]
        pending.chunks = chunking.chunk(body or "", title)
        pending.hashes = [chunk_hash(c.text) for c in pending.chunks]
    return batch


def _document_batches(pending: list[_Pending], db: sqlite_utils.Database) -> Iterator[list[_Pending]]:
    """Groups of documents holding about BATCH_CHUNKS chunks, bodies read one group at a time."""
    group: list[_Pending] = []
    for start in range(0, len(pending), 16):
        for item in _chunked(db, pending[start : start + 16]):
            group.append(item)
            if sum(len(p.chunks) for p in group) >= BATCH_CHUNKS:
                yield group
                group = []
    if group:
        yield group


def _mean(vectors: list[list[float]]) -> list[float]:
    if not vectors:
        return []
    total = [sum(values) for values in zip(*vectors)]
    norm = sum(v * v for v in total) ** 0.5 or 1.0
    return [v / norm for v in total]


def _store(
    db: sqlite_utils.Database,
    group: list[_Pending],
    model: llm.EmbeddingModel,
    chunk_writer: _ChunkWriter,
    documents_collection: int,
    result: Result,
) -> None:
    chunks_collection = chunk_writer.collection.id
    wanted = {h for p in group for h in p.hashes}
    known = dict(
        db.execute(
            CHUNK_VECTORS_BY_HASH_SQL,
            {"collection": chunks_collection, "hashes": _json(h.hex() for h in wanted), "weights": onnx_model.WEIGHTS},
        ).fetchall()
    )
    texts: dict[bytes, str] = {}
    for item in group:
        for piece, digest in zip(item.chunks, item.hashes):
            if digest not in known:
                texts.setdefault(digest, piece.text)
    if texts:
        for digest, vector in zip(texts, model.embed_multi(list(texts.values()))):
            known[digest] = llm.encode(vector)
    result.chunks_embedded += len(texts)
    result.chunks_reused += sum(len(p.hashes) for p in group) - len(texts)
    now = int(time.time())
    ids = _json(p.id for p in group)
    chunk_rows, document_rows, unembedded = [], [], []
    chunk_entries: list[tuple[str, str, dict[str, Any]]] = []
    for item in group:
        for piece, digest in zip(item.chunks, item.hashes):
            chunk_id = f"{item.id}-{piece.seq}"
            chunk_rows.append(
                {
                    "id": chunk_id,
                    "document_id": item.id,
                    "seq": piece.seq,
                    "start": piece.start,
                    "end": piece.end,
                    "content_hash": digest,
                }
            )
            chunk_entries.append(
                (
                    chunk_id,
                    piece.text,
                    {"document_id": item.id, "seq": piece.seq, "path": item.path, "weights": onnx_model.WEIGHTS},
                )
            )
        mean = _mean([llm.decode(known[d]) for d in item.hashes])
        if mean:
            document_rows.append(
                _vector_row(
                    documents_collection,
                    str(item.id),
                    llm.encode(mean),
                    item.signature,
                    {"title": item.title, "path": item.path, "chunks": len(item.chunks), **VECTOR_METADATA},
                    now,
                )
            )
        else:
            unembedded.append(str(item.id))
    with db.atomic():
        stale = [old_id for (old_id,) in db.execute(OLD_CHUNKS_SQL, {"ids": ids}).fetchall()]
        # the new ids too: llm's writer leaves alone an id already stored with the same text
        stale += [chunk_id for chunk_id, _, _ in chunk_entries]
        db.execute(DELETE_EMBEDDINGS_SQL, {"collection": chunks_collection, "ids": _json(stale)})
        db.execute(DELETE_EMBEDDINGS_SQL, {"collection": documents_collection, "ids": _json(unembedded)})
        db.execute(DELETE_CHUNKS_SQL, {"ids": ids})
        db.table("chunks").insert_all(chunk_rows)
        chunk_writer.store(chunk_entries, known)
        db.table("embeddings").insert_all(document_rows, replace=True)
        vectors.bump_version(db, f"{time.time_ns()}")
    result.embedded += len(group)


def _vector_row(
    collection: int, id: str, blob: bytes, digest: bytes, metadata: dict[str, Any], now: int
) -> dict[str, Any]:
    """A row of llm's ``embeddings`` table, as llm's own writer makes it (tied to it by tests/test_llm_tables.py)."""
    return {
        "collection_id": collection,
        "id": id,
        "embedding": blob,
        "content": None,
        "content_blob": None,
        "content_hash": digest,
        "metadata": json.dumps(metadata),
        "updated": now,
    }


def remove_orphans(db: sqlite_utils.Database, chunks_collection: int, documents_collection: int) -> int:
    """Vectors of documents that are no longer in the archive."""
    removed = 0
    with db.atomic():
        for (chunk_id,) in db.execute(ORPHAN_CHUNKS_SQL).fetchall():
            db.execute(DELETE_EMBEDDING_SQL, {"collection": chunks_collection, "id": chunk_id})
            db.execute(DELETE_CHUNK_SQL, {"id": chunk_id})
        for (doc_id,) in db.execute(ORPHAN_DOCUMENT_VECTORS_SQL, {"collection": documents_collection}).fetchall():
            db.execute(DELETE_EMBEDDING_SQL, {"collection": documents_collection, "id": doc_id})
            removed += 1
        if removed:
            vectors.bump_version(db, f"{time.time_ns()}")
    return removed


def embed_archive(
    db_path: Path,
    scope: str | None = None,
    progress: Callable[[int], Callable[[int, int], None]] | None = None,
    only_ids: set[int] | None = None,
) -> Result:
    """Embed what is new or changed in an archive (only under ``scope``, or only ``only_ids``, if given)."""
    started = time.perf_counter()
    db = sqlite_utils.Database(schema.open_archive(Path(db_path)).conn)  # llm's tables: sqlite-utils' API
    try:
        chunks_collection, documents_collection = _collections(db)
        result = Result(removed=remove_orphans(db, chunks_collection, documents_collection))
        pending, result.skipped = plan(db, documents_collection, scope, only_ids)
        result.total_files = len(pending) + result.skipped
        tick = progress(len(pending)) if progress else None
        if pending:
            model = llm.get_embedding_model(MODEL_ID)
            chunk_writer = _ChunkWriter(db)
            for group in _document_batches(pending, db):
                _store(db, group, model, chunk_writer, documents_collection, result)
                if tick:
                    tick(len(group), result.chunks_embedded)
    finally:
        db.close()
    result.seconds = time.perf_counter() - started
    return result


def resolve_scope(workspace: Path, path: str | None) -> str | None:
    """A caller's path as a path inside the workspace, or PATH_NOT_FOUND."""
    if not path:
        return None
    root = Path(workspace).resolve()
    try:
        candidate = Path(path)
        target = (candidate if candidate.is_absolute() else root / candidate).resolve()
        exists = target.exists()
    except (OSError, RuntimeError, ValueError):  # a NUL byte, a name too long, a symlink loop
        target, exists = None, False
    if target is not None and not target.is_relative_to(root):
        raise ArchivistError(
            "PATH_NOT_FOUND",
            f"Path is outside the workspace: {path[:200]!r}",
            "Only documents inside the workspace can be embedded.",
            "Give a path relative to the workspace, e.g. conversations/2025-11-10/001-topic",
        )
    if target is None or not exists:
        raise ArchivistError(
            "PATH_NOT_FOUND",
            f"Path not found: {path[:200]!r}",
            "No file or folder with that path exists in the workspace.",
            "Give a path relative to the workspace, e.g. conversations/2025-11-10/001-topic",
        )
    return target.relative_to(root).as_posix() if target != root else None


def embed_workspace(
    workspace: Path,
    path: str | None = None,
    db_path: Path | None = None,
    progress: Callable[[int], Callable[[int, int], None]] | None = None,
) -> Result:
    """Index the workspace, then embed its new and changed documents (under ``path`` if given)."""
    from archivist.archive.indexer import index_workspace
    from archivist.workspace import archive_path

    scope = resolve_scope(workspace, path)
    db_path = Path(db_path) if db_path else archive_path(workspace)
    index_workspace(workspace, db_path)
    return embed_archive(db_path, scope, progress)


class BackgroundEmbedder:
    """Embeds what the indexing runs of a watch added, in a thread of its own.

    ``wake()`` after each run: the thread embeds everything new or changed
    (``embed_archive``, committed a batch at a time, the model run outside the write
    transaction), so searches never wait for it; wakes that come while it works make
    one more pass afterwards.
    """

    def __init__(self, db_path: Path, on_result: Callable[[Result], None] | None = None) -> None:
        self.db_path = Path(db_path)
        self.on_result = on_result
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="archivist-vectors", daemon=True)
        self._thread.start()

    def wake(self, *_: object) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                result = embed_archive(self.db_path)
            except Exception:  # a locked archive, say: tried again on the next wake
                logger.exception("Embedding %s in the background failed", self.db_path)
                continue
            if self.on_result:
                self.on_result(result)
