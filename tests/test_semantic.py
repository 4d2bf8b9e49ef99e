"""Seed 003 and the semantic layer: the real model on small workspaces."""

import json
import os
import signal
import subprocess
import sys

import llm
import pytest
import sqlite_utils
from conftest import write_files

from archivist.archive.indexer import index_workspace
from archivist.errors import ArchivistError
from archivist.queries.runner import Archive
from archivist.semantic import chunking, embeddings
from archivist.semantic.onnx_model import DIMENSIONS, MODEL_ID
from archivist.workspace import archive_path

CONVERSATIONS = {
    "conversations/2025-11-10/001-jwt-auth/conversation.md": "# JWT authentication\n\nValidating JWT access tokens, signature checks, expiry and refresh tokens for user login.",
    "conversations/2025-11-11/002-oauth/conversation.md": "# OAuth login flow\n\nOAuth2 authorization code flow with PKCE so users sign in with their Google account.",
    "conversations/2025-11-12/003-sessions/conversation.md": "# Session cookies\n\nServer-side sessions and secure, httpOnly cookies to keep users authenticated.",
    "conversations/2025-11-13/004-api-security/conversation.md": "# API security\n\nProtecting the REST API: authenticating clients with API keys and bearer tokens, rate limits.",
    "plan/2025-11-14/001-api-design/conversation.md": "# API design plan\n\nPlanning resource names, pagination and versioning of the public API design.",
    "conversations/2025-10-02/005-sourdough/conversation.md": "# Sourdough bread\n\nFeeding the starter, proofing the dough overnight and baking at 250 degrees.",
    "conversations/2025-10-03/006-garden/conversation.md": "# Tomato garden\n\nWatering tomatoes, pruning suckers and dealing with blight in a rainy summer.",
    "debug/2025-10-04/001-k8s/conversation.md": "# Kubernetes pods crash\n\nPods in CrashLoopBackOff after the deployment; kubectl describe shows OOMKilled.",
    "conversations/2025-11-20/007-kubernetes/conversation.md": "# Kubernetes autoscaling\n\nThe kubernetes HPA scales the deployment on CPU; nodes added by the cluster autoscaler.",
    "brainstorm/2025-11-17/001-new-idea/conversation.md": "# New idea\n\nA searchable archive of our AI conversations with semantic search.",
}
# a collection's id, by name
CHUNKS = "(select id from collections where name = 'archivist_chunks')"
DOCUMENTS = "(select id from collections where name = 'archivist_documents')"
AUTH = {
    "conversations/2025-11-10/001-jwt-auth",
    "conversations/2025-11-11/002-oauth",
    "conversations/2025-11-12/003-sessions",
    "conversations/2025-11-13/004-api-security",
}


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    workspace = write_files(tmp_path_factory.mktemp("seed003"), CONVERSATIONS)
    embeddings.embed_workspace(workspace)
    return workspace


@pytest.fixture(scope="module")
def archive(embedded):
    with Archive.for_workspace(embedded) as archive:
        yield archive


def test_the_model_is_an_llm_embedding_model_loaded_from_its_package():
    model = llm.get_embedding_model(MODEL_ID)
    vector = model.embed("hello world")
    assert len(vector) == DIMENSIONS
    assert abs(sum(v * v for v in vector) - 1.0) < 1e-4


def test_the_model_never_touches_the_network(tmp_path):
    poisoned = {
        **os.environ,
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "ALL_PROXY": "http://127.0.0.1:9",
        "HF_ENDPOINT": "http://127.0.0.1:9",
        "HF_HOME": str(tmp_path / "hf-home"),
        "SENTENCE_TRANSFORMERS_HOME": str(tmp_path / "st-home"),
    }
    poisoned.pop("HF_HUB_OFFLINE", None)
    poisoned.pop("TRANSFORMERS_OFFLINE", None)
    script = f"import llm; print(len(llm.get_embedding_model({MODEL_ID!r}).embed('offline')))"
    result = subprocess.run([sys.executable, "-c", script], env=poisoned, capture_output=True, text=True, timeout=180)
    assert result.stdout.strip() == str(DIMENSIONS), result.stderr[-2000:]
    assert not (tmp_path / "hf-home").exists()


def test_embed_document_embeds_one_conversation(make_workspace):
    workspace = make_workspace(CONVERSATIONS)
    result = embeddings.embed_workspace(workspace, "brainstorm/2025-11-17/001-new-idea")
    assert result.to_dict(with_total_files=True) == {"success": True, "embedded": 1, "skipped": 0, "total_files": 1}
    again = embeddings.embed_workspace(workspace, "brainstorm/2025-11-17/001-new-idea/conversation.md")
    assert again.to_dict(with_total_files=True) == {"success": True, "embedded": 0, "skipped": 1, "total_files": 1}


def test_embed_workspace_skips_what_is_already_embedded(make_workspace):
    workspace = make_workspace(CONVERSATIONS)
    for path in sorted(CONVERSATIONS)[:5]:
        embeddings.embed_workspace(workspace, path)
    result = embeddings.embed_workspace(workspace)
    assert result.to_dict() == {"success": True, "embedded": 5, "skipped": 5}


@pytest.mark.parametrize("path", ["nonexistent/path", "../outside", "/etc"])
def test_embedding_a_missing_or_outside_path_is_refused(make_workspace, path):
    workspace = make_workspace(CONVERSATIONS)
    with pytest.raises(ArchivistError) as error:
        embeddings.embed_workspace(workspace, path)
    assert error.value.code == "PATH_NOT_FOUND"
    assert error.value.to_dict()["success"] is False
    assert not archive_path(workspace).exists()  # refused before anything was written


def test_unchanged_chunks_never_reach_the_model(make_workspace):
    paragraphs = [f"Paragraph {n} talks about topic {n} " + "with several more words " * 12 for n in range(12)]
    workspace = make_workspace({"notes/long.md": "# Long\n\n" + "\n\n".join(paragraphs), **CONVERSATIONS})
    first = embeddings.embed_workspace(workspace)
    total = sqlite_utils.Database(archive_path(workspace))["chunks"].count
    assert first.chunks_embedded == total > 12  # the long note made several chunks
    unchanged = embeddings.embed_workspace(workspace)
    assert (unchanged.embedded, unchanged.chunks_embedded) == (0, 0)
    paragraphs[-1] = "A different closing paragraph about something else entirely."
    (workspace / "notes/long.md").write_text("# Long\n\n" + "\n\n".join(paragraphs), encoding="utf-8")
    changed = embeddings.embed_workspace(workspace)
    assert changed.embedded == 1
    assert 1 <= changed.chunks_embedded <= 2 and changed.chunks_reused >= 1


def test_vectors_made_by_other_weights_are_made_again_and_never_reused(make_workspace):
    """An archive embedded with the float32 graph (its vectors name no weights) is embedded again,
    every chunk by the model: a vector of the old weights is never copied for the same text."""
    workspace = make_workspace(CONVERSATIONS)
    first = embeddings.embed_workspace(workspace)
    db = sqlite_utils.Database(archive_path(workspace))
    db.execute("UPDATE embeddings SET metadata = json_remove(metadata, '$.weights')")
    db.conn.commit()
    again = embeddings.embed_workspace(workspace)
    assert again.embedded == first.embedded == len(CONVERSATIONS) and again.skipped == 0
    assert again.chunks_embedded == first.chunks_embedded and again.chunks_reused == 0
    weights = {row[0] for row in db.execute("SELECT metadata ->> 'weights' FROM embeddings")}
    assert weights == {"int8"}
    assert embeddings.embed_workspace(workspace).embedded == 0


def test_the_newest_documents_are_embedded_first(make_workspace):
    workspace = make_workspace(CONVERSATIONS)
    index_workspace(workspace)
    db = sqlite_utils.Database(archive_path(workspace))
    pending, _ = embeddings.plan(db, embeddings._collections(db)[1])
    stamps = [db.execute("SELECT timestamp FROM documents WHERE id = ?", [p.id]).fetchone()[0] for p in pending]
    dated = [stamp for stamp in stamps if stamp is not None]
    assert len(dated) >= 5 and dated == sorted(dated, reverse=True) and stamps[: len(dated)] == dated


def test_deleted_documents_lose_their_vectors(make_workspace):
    workspace = make_workspace(CONVERSATIONS)
    embeddings.embed_workspace(workspace)
    (workspace / "conversations/2025-10-02/005-sourdough/conversation.md").unlink()
    result = embeddings.embed_workspace(workspace)
    assert result.removed == 1
    db = sqlite_utils.Database(archive_path(workspace))
    assert db.execute("select count(*) from chunks where document_id not in (select id from documents)").fetchone() == (
        0,
    )
    assert db.execute(
        f"select count(*) from embeddings where id not in (select id from chunks) and collection_id = {CHUNKS}"
    ).fetchone() == (0,)


def test_search_semantic_ranks_auth_conversations_first(archive):
    rows = archive.run("search_semantic", {"query": "authentication patterns"})
    top = {row["source_path"] for row in rows[:4]}
    assert top == AUTH
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    assert set(rows[0]) >= {"conversation", "score", "text", "source_path"}
    assert "conversations/2025-10-02/005-sourdough" not in {row["source_path"] for row in rows}  # below the floor
    unfloored = archive.search(
        {"query": "authentication patterns", "mode": "semantic", "min_similarity": -1, "page_size": 100}
    )
    scores = {row["path"]: row["score"] for row in unfloored["results"]}
    assert min(scores[p] for p in AUTH) > scores["conversations/2025-10-02/005-sourdough"]


def test_search_semantic_filters_by_conversation_type(archive):
    rows = archive.run("search_semantic", {"query": "api design", "conversation_type": "plan"})
    assert [row["source_path"] for row in rows] == ["plan/2025-11-14/001-api-design"]


def test_search_semantic_filters_by_date_range(archive):
    rows = archive.run("search_semantic", {"query": "kubernetes", "date_range": "2025-11"})
    assert rows and all(row["date"].startswith("2025-11") for row in rows)
    assert rows[0]["source_path"] == "conversations/2025-11-20/007-kubernetes"
    day = archive.run("search_semantic", {"query": "kubernetes", "date_range": "2025-10-04"})
    assert [row["source_path"] for row in day] == ["debug/2025-10-04/001-k8s"]


def test_search_semantic_without_embeddings_is_an_empty_success(make_workspace):
    workspace = make_workspace(CONVERSATIONS)
    index_workspace(workspace)
    with Archive.for_workspace(workspace) as archive:
        assert archive.run("search_semantic", {"query": "anything at all"}) == []
        # keyword search works while nothing is embedded
        assert archive.run("search_workspace", {"query": "kubernetes"})
        assert archive.search({"query": "kubernetes", "mode": "keyword"})["results"]


def test_similar_finds_the_other_auth_conversations(archive):
    rows = archive.run("similar", {"document": "conversations/2025-11-10/001-jwt-auth", "limit": 3})
    assert {row["path"] for row in rows} == AUTH - {"conversations/2025-11-10/001-jwt-auth"}
    assert all(0 < row["score"] <= 1 for row in rows)
    by_id = archive.run("similar", {"document": str(rows[0]["id"]), "limit": 1})
    assert by_id[0]["path"] != rows[0]["path"]


def test_similar_to_an_unknown_document_is_document_not_found(archive):
    with pytest.raises(ArchivistError) as error:
        archive.run("similar", {"document": "conversations/nope"})
    assert error.value.code == "DOCUMENT_NOT_FOUND"
    assert error.value.message.startswith("❌ Document not found: conversations/nope")


def test_embedding_status_reports_coverage_and_recent_embeddings(archive, embedded):
    (status,) = archive.run("embedding_status")
    assert status["num_documents"] == 10 and status["pending"] == 0
    assert status["total_chunks"] >= 10
    assert status["db_path"] == str(archive_path(embedded).resolve())
    assert status["model"] == MODEL_ID
    recent = json.loads(status["recent_embeddings"])
    assert len(recent) == 10 and all(item["embedded_at"].endswith("Z") for item in recent)


def test_hybrid_fuses_keyword_and_semantic_rankings(archive):
    keyword, semantic, hybrid = (
        archive.search({"query": "tokens", "mode": mode, "page_size": 100})["results"]
        for mode in ("keyword", "semantic", "hybrid")
    )
    assert {r["id"] for r in hybrid} == {r["id"] for r in keyword} | {r["id"] for r in semantic}
    both = {r["id"] for r in keyword} & {r["id"] for r in semantic}
    assert hybrid[0]["id"] in both


def test_chunks_follow_headings_and_carry_offsets():
    body = "# One\n\n" + "alpha " * 100 + "\n\n## Two\n\n" + "beta " * 300
    pieces = chunking.chunk(body, "Title")
    assert pieces[1].text.startswith("Title\n## Two")  # a section starts a chunk
    for piece in pieces:
        assert body[piece.start : piece.end] in piece.text
        assert len(piece.text.split()) <= chunking.MAX_WORDS + 1


# Run in a child process: embed, and in the second batch, its transaction open and the
# first batch committed, say so and wait to be killed.
EMBED_THEN_WAIT = """
import sys, time
from archivist.semantic import embeddings

real_store, real_row, batches = embeddings._store, embeddings._vector_row, []

def store(*args, **kwargs):
    batches.append(1)
    return real_store(*args, **kwargs)

def row(*args, **kwargs):
    if len(batches) == 2:
        print("writing", flush=True)
        time.sleep(600)
    return real_row(*args, **kwargs)

embeddings._store, embeddings._vector_row = store, row
embeddings.embed_workspace(sys.argv[1])
"""


def test_a_killed_embedding_run_resumes_with_nothing_lost(tmp_path):
    notes = {f"notes/note-{n:03d}.md": f"# Note {n}\n\nNote number {n} is about topic {n % 17}." for n in range(400)}
    workspace = write_files(tmp_path / "many", notes)
    index_workspace(workspace)
    db_file = archive_path(workspace)
    process = subprocess.Popen(
        [sys.executable, "-c", EMBED_THEN_WAIT, str(workspace)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    count_sql = f"select count(*) from embeddings where collection_id = {DOCUMENTS}"
    try:
        assert process.stdout.readline() == b"writing\n"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    committed = sqlite_utils.Database(db_file).execute(count_sql).fetchone()[0]
    assert 0 < committed < 400
    resumed = embeddings.embed_workspace(workspace)
    assert (resumed.embedded, resumed.skipped) == (400 - committed, committed)
    db = sqlite_utils.Database(db_file)
    assert db.execute(count_sql).fetchone()[0] == 400
    assert db["chunks"].count == 400
    assert db.execute(f"select count(*) from embeddings where collection_id = {CHUNKS}").fetchone()[0] == 400


def test_llm_similar_works_on_the_archive(embedded):
    llm_cli = os.path.join(os.path.dirname(sys.executable), "llm")
    db = str(archive_path(embedded))
    with Archive.for_workspace(embedded) as archive:
        jwt = archive.run("find_document", {"document": "conversations/2025-11-10/001-jwt-auth"})[0]["id"]
    result = subprocess.run(
        [llm_cli, "similar", "archivist_documents", str(jwt), "-d", db, "-n", "3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    paths = {json.loads(line)["metadata"]["path"] for line in result.stdout.splitlines()}
    assert paths <= AUTH and len(paths) == 3


def test_the_cli_embeds_and_reports_counts(make_workspace):
    from click.testing import CliRunner

    from archivist.cli import cli

    workspace = make_workspace(CONVERSATIONS)
    first = CliRunner().invoke(cli, ["index", str(workspace), "--embed"])
    assert first.exit_code == 0
    assert "10 documents embedded, 0 unchanged, 10 chunks sent to the model, 0 reused" in first.stdout
    again = CliRunner().invoke(cli, ["embed", str(workspace), "plan"])
    assert "0 documents embedded, 1 unchanged, 0 chunks sent to the model" in again.stdout
    missing = CliRunner().invoke(cli, ["embed", str(workspace), "nope"])
    assert missing.exit_code == 1 and "[PATH_NOT_FOUND]" in missing.stderr


SEARCH_THEN_TELL = """
import json, sys
from archivist.queries.runner import Archive
with Archive.for_workspace(sys.argv[1]) as archive:
    hybrid = archive.search({"query": "kubernetes migration", "mode": "hybrid", "output": "brief"})
    semantic = archive.run("search_semantic", {"query": "kubernetes migration"})
    keyword = archive.search({"query": "kubernetes migration", "mode": "keyword", "output": "brief"})
print(json.dumps({
    "hybrid": [r["id"] for r in hybrid["results"]],
    "keyword": [r["id"] for r in keyword["results"]],
    "semantic": len(semantic),
    "model": "onnxruntime" in sys.modules,
}))
"""


@pytest.mark.parametrize("embedded", [False, True])
def test_an_archive_without_vectors_loads_no_model_to_search_by_meaning(sample_workspace, embedded_sample, embedded):
    """Nothing is searched by meaning there: hybrid ranks by the words alone, and no model loads for it."""
    workspace = embedded_sample if embedded else sample_workspace
    found = subprocess.run(
        [sys.executable, "-c", SEARCH_THEN_TELL, str(workspace)], capture_output=True, text=True, timeout=120
    )
    assert found.returncode == 0, found.stderr[-3000:]
    out = json.loads(found.stdout)
    assert out["model"] is embedded
    assert out["keyword"]
    if not embedded:
        assert out["hybrid"] == out["keyword"] and out["semantic"] == 0
    else:
        assert out["semantic"] > 0
