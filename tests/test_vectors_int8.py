"""The vectors searched as int8 codes: the nearest found, and their order, are float32's."""

import json
import time

import numpy as np
import pytest
import sqlite_utils

from archivist.archive.indexer import index_workspace
from archivist.archive.schema import CHUNKS_COLLECTION
from archivist.semantic import embeddings, vectors
from archivist.semantic.onnx_model import DIMENSIONS, query_vector
from archivist.workspace import archive_path

QUERIES = ["login with a token", "the tests fail", "deploy to production", "a slow database query", "refactor"]


def write_vectors(db: sqlite_utils.Database, found: dict[str, bytes | str | None]) -> None:
    """``found`` as the archive's chunk vectors (as llm stores them), in place of any others."""
    chunks_collection, _documents = embeddings._collections(db)
    db.execute("DELETE FROM embeddings")
    with db.conn:
        db.conn.executemany(
            "INSERT INTO embeddings (collection_id, id, embedding, content_hash, metadata, updated) "
            "VALUES (?, ?, ?, ?, '{}', ?)",
            [(chunks_collection, id_, blob, id_.encode(), int(time.time())) for id_, blob in found.items()],
        )
        vectors.bump_version(db, f"{time.time_ns()}")


def float32_nearest(stored: dict[str, bytes], query: bytes, k: int, allowed: list[str] | None = None) -> list:
    """The ``k`` nearest as float32 ranks them: every unit vector's cosine with the query, best first."""
    ids = [id_ for id_ in stored if allowed is None or id_ in allowed]
    matrix = np.array([np.frombuffer(stored[id_], dtype="<f4") for id_ in ids], dtype=np.float64)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    vector = np.frombuffer(query, dtype="<f4").astype(np.float64)
    scores = matrix @ (vector / np.linalg.norm(vector))
    order = np.argsort(-scores, kind="stable")[:k]
    return [[ids[n], float(scores[n])] for n in order]


def same_nearest(found: list, expected: list) -> None:
    assert [id_ for id_, _score in found] == [id_ for id_, _score in expected]
    np.testing.assert_allclose([s for _id, s in found], [s for _id, s in expected], atol=2e-6)


@pytest.fixture(scope="module")
def random_archive(tmp_path_factory):
    """An archive made by the indexer, holding 20,000 random unit chunk vectors of the model's size."""
    workspace = tmp_path_factory.mktemp("int8")
    (workspace / "notes.md").write_text("# Notes\n\nSomething to index.\n")
    index_workspace(workspace)
    rng = np.random.default_rng(35)
    found = rng.standard_normal((20_000, DIMENSIONS)).astype(np.float32)
    stored = {f"chunk-{n}": vector.astype("<f4").tobytes() for n, vector in enumerate(found)}
    write_vectors(sqlite_utils.Database(archive_path(workspace)), stored)
    return str(archive_path(workspace).resolve()), stored, rng


def test_the_matrix_keeps_a_byte_a_component(random_archive):
    db_path, stored, _rng = random_archive
    found = vectors.matrix(db_path, CHUNKS_COLLECTION)
    assert found.codes.dtype == np.int8
    assert found.codes.nbytes == len(stored) * DIMENSIONS
    assert found.scales.shape == (len(stored),)


def test_random_queries_find_float32s_nearest_in_float32s_order(random_archive):
    db_path, stored, rng = random_archive
    for _ in range(10):
        query = rng.standard_normal(DIMENSIONS).astype("<f4").tobytes()
        for k in (10, 300):
            found = json.loads(vectors.nearest(db_path, query, CHUNKS_COLLECTION, k))
            same_nearest(found, float32_nearest(stored, query, k))


def test_int8_scores_alone_would_misorder_the_nearest(random_archive):
    """What the float32 scoring again is for: the int8 order is not float32's on these vectors."""
    db_path, stored, rng = random_archive
    found = vectors.matrix(db_path, CHUNKS_COLLECTION)
    misordered = 0
    for _ in range(10):
        query = rng.standard_normal(DIMENSIONS).astype("<f4")
        approximate = vectors.approximate_scores(found, query / np.linalg.norm(query), None)
        int8_order = [found.ids[n] for n in np.argsort(-approximate)[:300]]
        misordered += int8_order != [id_ for id_, _ in float32_nearest(stored, query.tobytes(), 300)]
    assert misordered > 0


def test_a_query_near_a_stored_vector_finds_it_first_by_a_margin(random_archive):
    db_path, stored, rng = random_archive
    for id_ in ("chunk-0", "chunk-777", "chunk-19999"):
        vector = np.frombuffer(stored[id_], dtype="<f4")
        query = (vector + rng.standard_normal(DIMENSIONS).astype(np.float32) * 0.02).astype("<f4").tobytes()
        found = json.loads(vectors.nearest(db_path, query, CHUNKS_COLLECTION, 10))
        assert found[0][0] == id_
        same_nearest(found, float32_nearest(stored, query, 10))


def test_the_allowed_ids_alone_are_searched_in_float32s_order(random_archive):
    db_path, stored, rng = random_archive
    allowed = [f"chunk-{n}" for n in rng.choice(len(stored), 3000, replace=False)]
    query = rng.standard_normal(DIMENSIONS).astype("<f4").tobytes()
    found = json.loads(vectors.nearest(db_path, query, CHUNKS_COLLECTION, 300, json.dumps(allowed)))
    same_nearest(found, float32_nearest(stored, query, 300, allowed))


def test_the_samples_nearest_chunks_are_float32s(embedded_sample):
    db_path = str(archive_path(embedded_sample).resolve())
    db = sqlite_utils.Database(db_path)
    stored = dict(
        db.execute(
            "SELECT e.id, e.embedding FROM embeddings e JOIN collections c ON c.id = e.collection_id WHERE c.name = ?",
            [CHUNKS_COLLECTION],
        ).fetchall()
    )
    assert len(stored) > 10
    for text in QUERIES:
        query = query_vector(text)
        found = json.loads(vectors.nearest(db_path, query, CHUNKS_COLLECTION, 10))
        same_nearest(found, float32_nearest(stored, query, 10))


def test_vectors_that_are_no_vectors_are_left_out_and_the_rest_searched(tmp_path):
    workspace = tmp_path / "hostile"
    workspace.mkdir()
    (workspace / "notes.md").write_text("# Notes\n\nSomething to index.\n")
    index_workspace(workspace)
    rng = np.random.default_rng(5)
    good = {f"good-{n}": rng.standard_normal(DIMENSIONS).astype("<f4").tobytes() for n in range(50)}
    bad = {
        "short": b"\x00\x00\x80?" * 10,
        "odd": b"\x01" * 7,
        "zero": np.zeros(DIMENSIONS, dtype="<f4").tobytes(),
        "nan": np.full(DIMENSIONS, np.nan, dtype="<f4").tobytes(),
        "infinite": np.full(DIMENSIONS, np.inf, dtype="<f4").tobytes(),
        "text": "not a vector",
        "none": None,
    }
    write_vectors(sqlite_utils.Database(archive_path(workspace)), {**bad, **good})
    db_path = str(archive_path(workspace).resolve())
    assert sorted(vectors.matrix(db_path, CHUNKS_COLLECTION).ids) == sorted(good)
    query = rng.standard_normal(DIMENSIONS).astype("<f4").tobytes()
    same_nearest(json.loads(vectors.nearest(db_path, query, CHUNKS_COLLECTION, 10)), float32_nearest(good, query, 10))
    for wrong_query in (b"", b"\x00" * 7, query[:-4], np.full(DIMENSIONS, np.nan, dtype="<f4").tobytes(), "text"):
        assert vectors.nearest(db_path, wrong_query, CHUNKS_COLLECTION, 10) == "[]"
    for allowed in ("not json", "{}", "[1, null, [2], {}]", '"good-1"', "[]"):
        assert vectors.nearest(db_path, query, CHUNKS_COLLECTION, 10, allowed) == "[]"
    mixed = json.dumps([1, None, ["good-1"], "good-2", "good-3", "missing"])
    found = json.loads(vectors.nearest(db_path, query, CHUNKS_COLLECTION, 10, mixed))
    same_nearest(found, float32_nearest(good, query, 10, ["good-2", "good-3"]))
