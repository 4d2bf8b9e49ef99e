"""The archive's vectors in llm's own tables: rows as llm writes them, found by llm, made through llm.

The chunk vectors are stored by llm's own writer; the document vectors (means of chunk
vectors, which no model makes from a text) by our own row writer. These tests fail if a
new llm release changes the row format that writer copies, or the encoding the vector
search reads.
"""

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator

import llm
import numpy as np
import pytest
import sqlite_utils
from conftest import write_files

from archivist.archive import schema
from archivist.archive.indexer import index_workspace
from archivist.queries.runner import Archive
from archivist.semantic import chunking, embeddings, vectors
from archivist.semantic.onnx_model import MODEL_ID
from archivist.workspace import archive_path

NOTES = {
    "notes/jwt.md": "# JWT tokens\n\nValidating JWT access tokens: signature checks, expiry and refresh tokens.",
    "notes/oauth.md": "# OAuth login\n\nThe OAuth2 authorization code flow with PKCE, so users sign in with Google.",
    "notes/sessions.md": "# Session cookies\n\nServer-side sessions and secure httpOnly cookies keep users logged in.",
    "notes/bread.md": "# Sourdough\n\nFeeding the starter, proofing the dough overnight, baking at 250 degrees.",
    "notes/garden.md": "# Tomatoes\n\nWatering tomatoes, pruning suckers and fighting blight in a rainy summer.",
}
AUTH = {"notes/jwt.md", "notes/oauth.md", "notes/sessions.md"}
VECTOR = [0.1 * n - 1.9 for n in range(40)]  # not exactly float32: the encoding rounds them


class Fixed(llm.EmbeddingModel):
    """A stand-in model: the same vector for every text."""

    model_id = "test-fixed"

    def embed_batch(self, items: Iterable[str | bytes], *, key: str | None = None) -> Iterator[list[float]]:
        for _ in items:
            yield VECTOR


def stored(db: sqlite_utils.Database, collection: int, id_: str) -> dict:
    (row,) = db.query("select * from embeddings where collection_id = ? and id = ?", [collection, id_])
    return row


def test_a_document_vector_row_is_the_row_llm_writes_for_the_same_vector(tmp_path):
    db = sqlite_utils.Database(tmp_path / "rows.db")
    theirs = llm.Collection("theirs", db, model=Fixed())
    metadata = {"title": "A title", "path": "notes/a.md", "chunks": 2}
    theirs.embed("17", "a text", metadata=metadata)
    expected = stored(db, theirs.id, "17")
    ours = llm.Collection("ours", db, model=Fixed())
    row = embeddings._vector_row(
        ours.id, "17", llm.encode(VECTOR), llm.Collection.content_hash("a text"), metadata, expected["updated"]
    )
    assert set(row) == set(db["embeddings"].columns_dict)  # every column of llm's table, and no other
    db["embeddings"].insert(row)
    written = stored(db, ours.id, "17")
    assert {**written, "collection_id": None} == {**expected, "collection_id": None}
    types = "select {} from embeddings where collection_id = ?".format(", ".join(f"typeof([{c}])" for c in row))
    assert db.execute(types, [ours.id]).fetchone() == db.execute(types, [theirs.id]).fetchone()
    # llm reads our row back as it reads its own
    (found,) = llm.Collection("ours", db).similar_by_vector(VECTOR, number=1)
    assert (found.id, found.metadata, round(found.score, 6)) == ("17", metadata, 1.0)


def test_the_vector_search_reads_llms_encoding(tmp_path):
    db = sqlite_utils.Database(tmp_path / "vectors.db")
    db.execute("create table archive_meta (key text primary key, value text)")
    collection = llm.Collection("some_vectors", db, model=Fixed())
    collection.embed("one", "a text")
    db.conn.commit()
    matrix = vectors.matrix(str(tmp_path / "vectors.db"), "some_vectors")
    decoded = np.array(llm.decode(stored(db, collection.id, "one")["embedding"]))
    assert matrix.ids == ["one"]
    np.testing.assert_allclose(matrix.vectors[0], decoded / np.linalg.norm(decoded), rtol=1e-6)


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    workspace = write_files(tmp_path_factory.mktemp("llm-tables"), NOTES)
    index_workspace(workspace)
    db = sqlite_utils.Database(archive_path(workspace))
    assert db["collections"].count == 0  # made when embedding starts, not by the schema
    embeddings.embed_workspace(workspace)
    return workspace


@pytest.fixture
def db(embedded):
    db = sqlite_utils.Database(archive_path(embedded))
    yield db
    db.close()


def document_id(db: sqlite_utils.Database, path: str) -> str:
    return str(db.execute("select id from documents where path = ?", [path]).fetchone()[0])


def test_the_collections_are_llms_own(db):
    assert [(c["id"], c["name"], c["model"]) for c in db["collections"].rows] == [
        (1, schema.CHUNKS_COLLECTION, MODEL_ID),
        (2, schema.DOCUMENTS_COLLECTION, MODEL_ID),
    ]
    for name in (schema.CHUNKS_COLLECTION, schema.DOCUMENTS_COLLECTION):
        assert llm.Collection(name, db, create=False).count() == len(NOTES)


def test_chunk_vectors_are_what_llm_stores_for_their_texts(db):
    chunks = llm.Collection(schema.CHUNKS_COLLECTION, db, create=False)
    for path in NOTES:
        doc = document_id(db, path)
        title, body = db.execute("select title, body from documents where id = ?", [doc]).fetchone()
        (piece,) = chunking.chunk(body, title)
        row = stored(db, chunks.id, f"{doc}-0")
        assert row["content_hash"] == llm.Collection.content_hash(piece.text)
        # (and the weights that made it: onnx_model.WEIGHTS; llm's similar() below embeds with them too)
        assert json.loads(row["metadata"]) == {"document_id": int(doc), "seq": 0, "path": path, "weights": "int8"}
        (nearest,) = chunks.similar(piece.text, number=1)  # llm embeds the text with the model itself
        assert nearest.id == f"{doc}-0" and nearest.score > 0.9999


def test_llm_finds_the_documents_nearest_to_a_document(db):
    documents = llm.Collection(schema.DOCUMENTS_COLLECTION, db, create=False)
    found = documents.similar_by_id(document_id(db, "notes/jwt.md"), number=2)
    assert {entry.metadata["path"] for entry in found} == AUTH - {"notes/jwt.md"}


@pytest.mark.parametrize("collection", [schema.DOCUMENTS_COLLECTION, schema.CHUNKS_COLLECTION])
def test_the_llm_command_finds_them_in_the_archive(db, embedded, collection):
    llm_cli = os.path.join(os.path.dirname(sys.executable), "llm")
    doc = document_id(db, "notes/oauth.md")
    item = doc if collection == schema.DOCUMENTS_COLLECTION else f"{doc}-0"
    result = subprocess.run(
        [llm_cli, "similar", collection, item, "-d", str(archive_path(embedded)), "-n", "2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    paths = {json.loads(line)["metadata"]["path"] for line in result.stdout.splitlines()}
    assert paths == AUTH - {"notes/oauth.md"}


def test_a_never_embedded_archive_has_no_collections_and_its_queries_find_nothing(make_workspace):
    workspace = make_workspace(NOTES)
    index_workspace(workspace)
    vectors.warm(str(archive_path(workspace)))
    with Archive.for_workspace(workspace) as archive:
        assert archive.run("search_semantic", {"query": "login tokens"}) == []
        assert archive.run("similar", {"document": "notes/jwt.md"}) == []
        assert archive.run("find_document", {"document": "notes/jwt.md"})[0]["embedded"] == 0
        (status,) = archive.run("embedding_status")
        assert (status["total_chunks"], status["num_documents"], status["pending"]) == (0, 0, len(NOTES))
        assert status["model"] == MODEL_ID  # the model that will embed it, as before any embedding
        assert json.loads(status["recent_embeddings"]) == []
        assert archive.search({"query": "tokens", "mode": "semantic"})["results"] == []
        hybrid = archive.search({"query": "tokens", "mode": "hybrid"})["results"]
        assert {row["path"] for row in hybrid} == {"notes/jwt.md"}  # keyword matches alone
    assert sqlite_utils.Database(archive_path(workspace))["collections"].count == 0


def test_an_archive_whose_schema_made_the_collections_keeps_them(make_workspace):
    workspace = make_workspace(NOTES)
    index_workspace(workspace)
    db = sqlite_utils.Database(archive_path(workspace))
    # archives made before the collections were made through llm have them from the start,
    # and this one in the other order: the collections are found by name, never by id
    db["collections"].insert_all(
        [
            {"id": 7, "name": schema.DOCUMENTS_COLLECTION, "model": MODEL_ID},
            {"id": 9, "name": schema.CHUNKS_COLLECTION, "model": MODEL_ID},
        ]
    )
    db.close()
    result = embeddings.embed_workspace(workspace)
    assert (result.embedded, result.chunks_embedded) == (len(NOTES), len(NOTES))
    db = sqlite_utils.Database(archive_path(workspace))
    assert [(c["id"], c["name"]) for c in db["collections"].rows] == [
        (7, schema.DOCUMENTS_COLLECTION),
        (9, schema.CHUNKS_COLLECTION),
    ]
    assert db.execute("select collection_id, count(*) from embeddings group by 1 order by 1").fetchall() == [
        (7, len(NOTES)),
        (9, len(NOTES)),
    ]
    with Archive.for_workspace(workspace) as archive:
        found = archive.run("similar", {"document": "notes/jwt.md", "limit": 2})
        assert {row["path"] for row in found} == AUTH - {"notes/jwt.md"}
        (status,) = archive.run("embedding_status")
        assert (status["num_documents"], status["pending"], status["model"]) == (len(NOTES), 0, MODEL_ID)


def test_a_collection_made_by_another_run_at_the_same_moment_is_used(make_workspace, monkeypatch):
    workspace = make_workspace(NOTES)
    index_workspace(workspace)
    db_file = archive_path(workspace)
    look = sqlite_utils.db.Table.rows_where
    raced = []

    def look_then_lose_the_race(self, where=None, where_args=None, *args, **kwargs):
        rows = list(look(self, where, where_args, *args, **kwargs))
        if self.name == "collections" and not rows:  # another run makes it just after llm looked
            other = sqlite_utils.Database(db_file)
            other["collections"].insert({"name": where_args[0], "model": MODEL_ID})
            other.close()
            raced.append(where_args[0])
        return iter(rows)

    monkeypatch.setattr(sqlite_utils.db.Table, "rows_where", look_then_lose_the_race)
    db = sqlite_utils.Database(schema.open_archive(db_file).conn)
    assert embeddings._collections(db) == (1, 2)
    assert raced == [schema.CHUNKS_COLLECTION, schema.DOCUMENTS_COLLECTION]
