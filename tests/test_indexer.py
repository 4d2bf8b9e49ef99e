"""Incremental, transactional indexing, and files that are not what they claim."""

import os
import signal
import subprocess
import sys
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest
import sqlite_utils
from conftest import write_files

from archivist import documents
from archivist.archive import indexer
from archivist.archive.indexer import index_workspace
from archivist.documents import parsing
from archivist.workspace import archive_path

BASE = {
    "conversations/2025-11-10/001-auth/conversation.md": "# Auth\n\nJWT tokens expire.\n",
    "conversations/2025-11-11/002-k8s/conversation.md": "# K8s\n\nPods crash.\n",
    "notes/a.md": "# A\n\nalpha\n",
}


def rows(workspace, sql="select path, title from documents order by path"):
    return sqlite_utils.Database(archive_path(workspace)).execute(sql).fetchall()


def problems(workspace):
    return dict(
        (path, (status, reason))
        for path, status, reason in rows(workspace, "select path, status, reason from index_problems")
    )


def test_a_second_run_reads_nothing_and_changes_nothing(make_workspace):
    workspace = make_workspace(BASE)
    first = index_workspace(workspace)
    ids = rows(workspace, "select id, key, indexed_at from documents order by id")
    second = index_workspace(workspace)
    assert (first.indexed, first.unchanged) == (3, 0)
    assert (second.indexed, second.unchanged, second.removed) == (0, 3, 0)
    assert rows(workspace, "select id, key, indexed_at from documents order by id") == ids


def test_a_touched_but_identical_file_is_unchanged(make_workspace):
    workspace = make_workspace(BASE)
    index_workspace(workspace)
    path = workspace / "notes/a.md"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    summary = index_workspace(workspace)
    assert (summary.indexed, summary.unchanged) == (0, 3)


def test_a_changed_file_is_reindexed_and_keeps_its_id(make_workspace):
    workspace = make_workspace(BASE)
    index_workspace(workspace)
    before = dict(rows(workspace, "select path, id from documents"))
    (workspace / "notes/a.md").write_text("# A changed\n\nbeta\n", encoding="utf-8")
    summary = index_workspace(workspace)
    assert (summary.indexed, summary.unchanged) == (1, 2)
    assert dict(rows(workspace, "select path, id from documents")) == before
    assert rows(workspace, "select title from documents where path = 'notes/a.md'") == [("A changed",)]
    hits = rows(workspace, "select rowid from documents_fts where documents_fts match 'beta'")
    assert hits == [(before["notes/a.md"],)]
    assert rows(workspace, "select rowid from documents_fts where documents_fts match 'alpha'") == []


def test_a_deleted_file_leaves_no_rows(make_workspace):
    workspace = make_workspace(BASE)
    index_workspace(workspace)
    (workspace / "notes/a.md").unlink()
    summary = index_workspace(workspace)
    assert summary.removed == 1
    assert [p for p, _ in rows(workspace)] == [
        "conversations/2025-11-10/001-auth",
        "conversations/2025-11-11/002-k8s",
    ]
    assert rows(workspace, "select count(*) from files where path = 'notes/a.md'") == [(0,)]
    assert rows(workspace, "select rowid from documents_fts where documents_fts match 'alpha'") == []


def test_a_renamed_conversation_folder_moves_its_row(make_workspace):
    workspace = make_workspace(BASE)
    index_workspace(workspace)
    (workspace / "conversations/2025-11-12").mkdir()
    (workspace / "conversations/2025-11-11/002-k8s").rename(workspace / "conversations/2025-11-12/002-k8s")
    summary = index_workspace(workspace)
    assert (summary.indexed, summary.removed) == (1, 1)
    assert rows(workspace, "select path, date from documents where title = 'K8s'") == [
        ("conversations/2025-11-12/002-k8s", "2025-11-12")
    ]
    assert rows(workspace, "select count(*) from files where path like 'conversations/2025-11-11/%'") == [(0,)]


def test_a_file_added_to_a_conversation_reindexes_that_conversation(make_workspace):
    workspace = make_workspace(BASE)
    index_workspace(workspace)
    (workspace / "conversations/2025-11-10/001-auth/02-more.md").write_text("refresh rotation", encoding="utf-8")
    summary = index_workspace(workspace)
    assert summary.indexed == 1
    assert rows(workspace, "select count(*) from documents_fts where documents_fts match 'rotation'") == [(1,)]


def test_a_removed_memory_line_removes_only_that_memory(make_workspace):
    workspace = make_workspace(
        {"memories/m.jsonl": '{"content": "one", "content_hash": "h1"}\n{"content": "two", "content_hash": "h2"}\n'}
    )
    index_workspace(workspace)
    ids = dict(rows(workspace, "select external_id, id from documents"))
    (workspace / "memories/m.jsonl").write_text('{"content": "two", "content_hash": "h2"}\n', encoding="utf-8")
    index_workspace(workspace)
    assert dict(rows(workspace, "select external_id, id from documents")) == {"h2": ids["h2"]}


def test_bad_files_are_recorded_with_their_reason_and_never_crash(make_workspace, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("secret", encoding="utf-8")
    workspace = make_workspace(
        {
            "notes/binary.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00binary",
            "notes/latin1.md": "caf\xe9 au lait".encode("latin-1"),
            "notes/empty.md": "",
            "notes/huge.md": "word " * (documents.MAX_FILE_BYTES // 5 + 1000),
            "notes/picture.png": b"\x89PNG",
            "notes/good.md": "# Good\n",
            "memories/broken.jsonl": '{"content": "fine", "content_hash": "ok"}\nnot json\n',
        }
    )
    (workspace / "notes/escape.md").symlink_to(outside)
    (workspace / "notes/dangling.md").symlink_to(tmp_path / "missing.md")
    summary = index_workspace(workspace)
    assert problems(workspace) == {
        "memories/broken.jsonl": ("degraded", "line 2: invalid JSON (Expecting value); line skipped"),
        "notes/binary.md": ("skipped", "binary file"),
        "notes/dangling.md": ("skipped", "broken symlink"),
        "notes/empty.md": ("skipped", "empty file"),
        "notes/escape.md": ("skipped", "symlink points outside the workspace"),
        "notes/huge.md": ("degraded", "larger than 2 MiB: only the first 2 MiB are indexed"),
        "notes/latin1.md": ("degraded", "not valid UTF-8: decoded with replacement characters"),
        "notes/picture.png": ("skipped", "unsupported file type (.png)"),
    }
    assert (summary.skipped, summary.degraded) == (5, 3)
    assert summary.indexed == 4  # each file counted once: a skipped file is not "indexed" too
    titles = {p for p, _ in rows(workspace)}
    assert titles == {"memories/broken.jsonl", "notes/good.md", "notes/huge.md", "notes/latin1.md"}
    assert rows(workspace, "select body from documents where path = 'notes/latin1.md'") == [("caf\ufffd au lait",)]
    assert (
        len(rows(workspace, "select body from documents where path = 'notes/huge.md'")[0][0])
        <= documents.MAX_FILE_BYTES
    )
    # Problems stay recorded on a no-op run, and go away when the file is fixed.
    again = index_workspace(workspace)
    assert len(problems(workspace)) == 8
    assert (again.indexed, again.unchanged, again.skipped) == (0, 4, 5)
    (workspace / "notes/empty.md").write_text("# Now with content\n", encoding="utf-8")
    index_workspace(workspace)
    assert "notes/empty.md" not in problems(workspace)


def test_the_archive_and_other_tool_folders_are_not_indexed(make_workspace):
    workspace = make_workspace({**BASE, ".git/HEAD.md": "x", "node_modules/pkg/readme.md": "x"})
    index_workspace(workspace)
    assert len(rows(workspace)) == 3
    assert rows(workspace, "select count(*) from files where path like '.archivist/%'") == [(0,)]


def test_a_missing_workspace_is_a_clear_error(tmp_path):
    from archivist.errors import ArchivistError

    with pytest.raises(ArchivistError) as error:
        index_workspace(tmp_path / "nope")
    assert error.value.code == "DIRECTORY_NOT_FOUND"


def test_a_failure_mid_run_leaves_the_previous_archive_intact(make_workspace, monkeypatch):
    workspace = make_workspace(BASE)
    index_workspace(workspace)
    before = rows(workspace, "select * from documents order by id")
    (workspace / "notes/a.md").write_text("# Changed\n", encoding="utf-8")
    (workspace / "notes/b.md").write_text("# New\n", encoding="utf-8")
    real_parse = documents.parse

    def parse_then_die(root, source, key):
        if source.path == "notes/b.md":
            raise KeyboardInterrupt  # what an interrupted run looks like from inside
        return real_parse(root, source, key)

    monkeypatch.setattr(indexer.documents, "parse", parse_then_die)
    with pytest.raises(KeyboardInterrupt):
        index_workspace(workspace)
    assert rows(workspace, "select * from documents order by id") == before
    monkeypatch.setattr(indexer.documents, "parse", real_parse)
    assert index_workspace(workspace).indexed == 2


# Run in a child process: index, and halfway through the writes (the transaction open,
# its pages in the write-ahead log) say so and wait to be killed.
INDEX_THEN_WAIT = """
import sys, time
from archivist.archive import indexer

real_store, stored = indexer._store_documents, 0

def store_then_wait(db, source, documents):
    global stored
    real_store(db, source, documents)
    stored += 1
    if stored == int(sys.argv[2]):
        print("writing", flush=True)
        time.sleep(600)

indexer._store_documents = store_then_wait
indexer.index_workspace(sys.argv[1])
"""


def test_a_killed_index_process_leaves_the_previous_archive_usable(tmp_path):
    chats = {
        f"conversations/2025-11-{n % 28 + 1:02d}/{n:04d}-chat/conversation.md": f"# Chat {n}\n\n{'kubernetes ' * 200}{n}\n"
        for n in range(1000)
    }
    workspace = write_files(tmp_path / "big", {**chats, "notes/first.md": "# First\n"})
    index_workspace(workspace, reports_dir="reports")
    # Make every conversation change, then kill -9 the re-index while it writes.
    for path in workspace.glob("conversations/*/*/conversation.md"):
        path.write_text(path.read_text(encoding="utf-8") + "\nedited\n", encoding="utf-8")
    before = rows(workspace, "select count(*), sum(length(body)) from documents")
    process = subprocess.Popen(
        [sys.executable, "-c", INDEX_THEN_WAIT, str(workspace), "500"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdout.readline() == b"writing\n"
        # half the changes are written, uncommitted: in the writer's page cache (indexer.WRITE_CACHE_KB),
        # and in the log past it
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
        assert children  # a worker process parses the 1,000 sources (and its resource tracker runs)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    # the worker process does not outlive the one it works for (nor, then, the resource tracker)
    deadline = time.monotonic() + 15
    while any(Path(f"/proc/{child}").exists() for child in children) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [child for child in children if Path(f"/proc/{child}").exists()]
    assert rows(workspace, "pragma integrity_check") == [("ok",)]
    assert rows(workspace, "select count(*), sum(length(body)) from documents") == before
    assert index_workspace(workspace).indexed == 1000


def test_a_large_records_file_is_read_whole(make_workspace):
    line = '{"entity_type": "bug", "entity_id": %d, "title": "Bug %d", "body": "%s"}\n'
    text = "".join(line % (n, n, "x" * 500) for n in range(6000))  # about 3 MiB
    assert len(text) > documents.MAX_FILE_BYTES
    workspace = make_workspace({"records/bugs.jsonl": text})
    summary = index_workspace(workspace)
    assert (summary.documents, summary.degraded) == (6000, 0)


def test_an_error_nobody_foresaw_skips_only_its_source(make_workspace, monkeypatch):
    workspace = make_workspace(BASE)
    real_parse_note = parsing._parse_note

    def parse_note_or_fail(source, texts, problems):
        if source.path == "notes/a.md":
            raise RuntimeError("boom")
        return real_parse_note(source, texts, problems)

    monkeypatch.setattr(parsing, "_parse_note", parse_note_or_fail)  # where parse finds it
    (workspace / "notes/b.md").write_text("# B\n", encoding="utf-8")
    summary = index_workspace(workspace)
    assert problems(workspace) == {"notes/a.md": ("skipped", "could not be indexed (RuntimeError: boom)")}
    assert (summary.indexed, summary.skipped) == (3, 1)
    assert [p for p, _ in rows(workspace)] == [
        "conversations/2025-11-10/001-auth",
        "conversations/2025-11-11/002-k8s",
        "notes/b.md",
    ]


def test_a_source_that_cannot_be_stored_is_skipped_alone_but_the_archive_failing_stops_the_run(
    make_workspace, monkeypatch
):
    from sqlite_utils.utils import sqlite3  # the module the archive is written with (pysqlite3 here)

    workspace = make_workspace(BASE)
    index_workspace(workspace)
    (workspace / "notes/a.md").write_text("# A changed\n", encoding="utf-8")
    (workspace / "notes/b.md").write_text("# B\n", encoding="utf-8")
    real_store = indexer._store_documents

    def store_or_fail(db, source, documents, error=None):
        error = error or sqlite3.IntegrityError("bad row")
        if source.path == "notes/a.md" and documents:
            db.execute("DELETE FROM documents WHERE source = 'notes/a.md'")  # half stored: all of it goes
            raise error
        return real_store(db, source, documents)

    monkeypatch.setattr(indexer, "_store_documents", store_or_fail)
    summary = index_workspace(workspace)
    assert problems(workspace) == {"notes/a.md": ("skipped", "could not be stored (IntegrityError: bad row)")}
    assert (summary.indexed, summary.skipped) == (1, 1)
    assert "notes/a.md" not in {p for p, _ in rows(workspace)}  # skipped: nothing of it is left
    assert "notes/b.md" in {p for p, _ in rows(workspace)}

    before = rows(workspace, "select * from documents order by id")
    (workspace / "notes/a.md").write_text("# A again\n", encoding="utf-8")
    monkeypatch.setattr(
        indexer,
        "_store_documents",
        lambda db, source, documents: store_or_fail(db, source, documents, sqlite3.OperationalError("disk I/O error")),
    )
    with pytest.raises(sqlite3.OperationalError):
        index_workspace(workspace)
    assert rows(workspace, "select * from documents order by id") == before


def test_documents_made_by_an_older_parser_are_read_again(make_workspace):
    workspace = make_workspace({**BASE, "notes/pdt.md": "---\ndate: 2025-06-24 17:11:14 PDT\n---\n# PDT\n"})
    index_workspace(workspace)
    ids = rows(workspace, "select id, path from documents order by id")
    db = sqlite_utils.Database(archive_path(workspace))
    # what the parser before version 2 stored: the UTC day
    db.execute("update documents set date = '2025-06-25', day = '2025-06-25' where path = 'notes/pdt.md'")
    db.execute("update archive_meta set value = '1' where key = 'parser_version'")
    db.conn.commit()
    summary = index_workspace(workspace)
    assert (summary.indexed, summary.unchanged) == (4, 0)
    assert rows(workspace, "select date, day from documents where path = 'notes/pdt.md'") == [
        ("2025-06-24", "2025-06-24")
    ]
    assert rows(workspace, "select id, path from documents order by id") == ids
    assert index_workspace(workspace).unchanged == 4


def test_an_archive_from_before_the_problems_table_is_upgraded(make_workspace):
    from archivist.archive import schema

    workspace = make_workspace({**BASE, "notes/empty.md": ""})
    db_path = archive_path(workspace)
    db = schema.open_archive(db_path)
    db.executescript(
        """
        DROP VIEW index_problems;
        DROP TRIGGER files_ad_problems;
        DROP TABLE problems;
        CREATE VIEW index_problems AS SELECT path, status, reason FROM files WHERE status != 'indexed' ORDER BY path;
        INSERT INTO files (path, source, status, reason) VALUES ('notes/empty.md', NULL, 'skipped', 'empty file');
        DELETE FROM _sqlite_migrations WHERE name = 'm010_problems';
        PRAGMA user_version = 0;
        """
    )
    db.close()
    db = schema.open_archive(db_path)
    listed = db.execute("select path, status, reason from index_problems").fetchall()
    assert listed == [("notes/empty.md", "skipped", "empty file")]
    db.close()
    index_workspace(workspace)
    assert problems(workspace) == {"notes/empty.md": ("skipped", "empty file")}


# --- an archive written by an older version -------------------------------------------------


def _as_written_before_m011(workspace):
    """The archive as the version before the workspace_root view left it."""
    db = sqlite_utils.Database(archive_path(workspace))
    db.executescript(
        "DROP VIEW workspace_root; DELETE FROM _sqlite_migrations WHERE name = 'm011_workspace_root'; PRAGMA user_version = 0;"
    )
    db.close()


def test_an_older_archive_is_named_as_such_by_the_queries_and_upgraded_by_every_command(make_workspace):
    from click.testing import CliRunner

    from archivist.cli import cli
    from archivist.errors import ArchivistError
    from archivist.queries.runner import Archive

    workspace = make_workspace(BASE)
    index_workspace(workspace)
    _as_written_before_m011(workspace)
    with pytest.raises(ArchivistError) as older:
        Archive.for_workspace(workspace)
    assert older.value.code == "DIRECTORY_NOT_FOUND" and "older version" in older.value.message
    assert "archivist index" in older.value.message
    for command in (["search", str(workspace), "tokens"], ["status", str(workspace)]):
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 0, result.output
        assert "Upgraded the archive" in result.stderr
        with Archive.for_workspace(workspace) as archive:  # current again
            assert archive.run("find_document", {"document": "notes/a.md"})
        _as_written_before_m011(workspace)


async def test_plain_datasette_upgrades_an_older_archive_when_it_starts(make_workspace):
    from conftest import started_datasette

    workspace = make_workspace(BASE)
    index_workspace(workspace)
    _as_written_before_m011(workspace)
    datasette = await started_datasette(archive_path(workspace))
    response = await datasette.client.get("/archive/find_document.json", params={"document": "notes/a.md"})
    assert response.status_code == 200 and response.json()["rows"], response.text
    assert "workspace_root" in sqlite_utils.Database(archive_path(workspace)).view_names()


def fts_intact(db_path) -> list[str]:
    """The full-text index agrees with the documents (FTS5's own check raises if not); its titles."""
    db = sqlite_utils.Database(db_path)
    db.execute("INSERT INTO documents_fts (documents_fts, rank) VALUES ('integrity-check', 1)")
    return sorted(row[0] for row in db.execute("SELECT title FROM documents_fts"))


def test_the_full_text_index_follows_new_changed_and_removed_documents(make_workspace):
    workspace = make_workspace(BASE)
    index_workspace(workspace)
    db_path = archive_path(workspace)
    before = fts_intact(db_path)
    assert before and before == sorted(title for _, title in rows(workspace))
    (workspace / "notes/a.md").write_text("# A rewritten\nzeppelin\n", encoding="utf-8")
    (workspace / "notes/new.md").write_text("# Brand new\nquokka\n", encoding="utf-8")
    (workspace / "conversations/2025-11-11/002-k8s/conversation.md").unlink()
    index_workspace(workspace)
    assert fts_intact(db_path) == sorted(title for _, title in rows(workspace))
    db = sqlite_utils.Database(db_path)
    match = "SELECT path FROM documents WHERE id IN (SELECT rowid FROM documents_fts WHERE documents_fts MATCH ?)"
    assert [r[0] for r in db.execute(match, ["zeppelin"])] == ["notes/a.md"]
    assert [r[0] for r in db.execute(match, ["quokka"])] == ["notes/new.md"]
    assert db.execute("SELECT count(*) FROM fts_pending").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM fts_deferred").fetchone()[0] == 0


def test_a_document_changed_or_removed_before_it_entered_the_index_leaves_it_whole(tmp_path):
    from archivist.archive import schema

    db = schema.open_archive(tmp_path / "archive.db")
    row = {
        "kind": "note",
        "path": "n.md",
        "source": "n.md",
        "body": "first words",
        "content_hash": "x",
        "indexed_at": "now",
    }
    with db.atomic(), db.deferred_fts():
        kept = db.insert("documents", [{**row, "key": "kept", "title": "Kept"}])
        gone = db.insert("documents", [{**row, "key": "gone", "title": "Gone"}])
        db.update("documents", kept, {"body": "second words"})
        db.execute("DELETE FROM documents WHERE id = ?", [gone])
        assert db.execute("SELECT count(*) FROM documents_fts WHERE documents_fts MATCH 'words'").fetchone()[0] == 0
    assert fts_intact(tmp_path / "archive.db") == ["Kept"]
    assert db.execute("SELECT rowid FROM documents_fts WHERE documents_fts MATCH 'second'").fetchall() == [(kept,)]
    assert db.execute("SELECT count(*) FROM documents_fts WHERE documents_fts MATCH 'first'").fetchone()[0] == 0
    with db.atomic():  # outside a deferral, the triggers keep the index as they go
        db.update("documents", kept, {"body": "third words"})
    assert fts_intact(tmp_path / "archive.db") == ["Kept"]
    assert db.execute("SELECT rowid FROM documents_fts WHERE documents_fts MATCH 'third'").fetchall() == [(kept,)]


def test_a_failed_run_leaves_nothing_pending(make_workspace, monkeypatch):
    workspace = make_workspace(BASE)
    index_workspace(workspace)
    (workspace / "notes/new.md").write_text("# Brand new\n", encoding="utf-8")
    runs = sqlite_utils.Database(archive_path(workspace)).execute("SELECT count(*) FROM index_runs").fetchone()[0]
    monkeypatch.setattr(indexer, "_store_problems", lambda *args: (_ for _ in ()).throw(RuntimeError("disk gone")))
    with pytest.raises(RuntimeError):
        index_workspace(workspace)
    db = sqlite_utils.Database(archive_path(workspace))
    assert db.execute("SELECT count(*) FROM fts_pending").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM fts_deferred").fetchone()[0] == 0
    # the workspace's documents were committed whole before the agent logs were read; the run
    # that failed after them is not recorded, and the next one finds nothing left to do
    assert "notes/new.md" in [path for path, _ in rows(workspace)]
    assert db.execute("SELECT count(*) FROM index_runs").fetchone()[0] == runs
    assert fts_intact(archive_path(workspace)) == sorted(title for _, title in rows(workspace))
    monkeypatch.undo()
    assert index_workspace(workspace).indexed == 0


# --- many sources: parsed by a worker process ------------------------------------------------

MANY = {
    **{
        f"notes/n{n:03d}.md": f"---\ntags: [t{n % 3}]\n---\n# Note {n}\n\nzeppelin {n} docks {'é' * (n % 5)}\n"
        for n in range(40)
    },
    **{
        f"conversations/2025-11-{n + 1:02d}/001-chat/conversation.md": f"# Chat {n}\n\nkubernetes {n}\n"
        for n in range(12)
    },
    "reports/analyze/2025-11-10-report.md": "# Report\n\nfindings\n",
    "memories/m.md": "---\ntype: decision\ntags: [sqlite]\n---\nUse SQLite.\n",
    "notes/binary.md": b"\x00\x01\x02\x03" * 100,
    "notes/latin1.md": "caf\xe9 zeppelin".encode("latin-1"),
    "notes/empty.md": "",
}
STORED = (
    "select path, kind, type, title, body, date, tags, content_hash, filter_tokens from documents order by path, key"
)


def indexed_alike(parallel: Path, sequential: Path) -> None:
    for sql in (STORED, "select path, source, status, reason from files order by path", "select * from index_problems"):
        assert rows(parallel, sql) == rows(sequential, sql), sql
    words = "select path from documents where id in (select rowid from documents_fts where documents_fts match 'zeppelin') order by path"
    assert rows(parallel, words) == rows(sequential, words) and len(rows(parallel, words)) == 41
    db = sqlite_utils.Database(archive_path(parallel))
    db.execute("insert into documents_fts(documents_fts, rank) values ('integrity-check', 1)")


def test_many_sources_are_parsed_by_a_worker_process_into_the_same_archive(tmp_path, monkeypatch):
    sequential = write_files(tmp_path / "one", MANY)
    index_workspace(sequential)
    parallel = write_files(tmp_path / "two", MANY)
    monkeypatch.setattr(indexer, "PARALLEL_SOURCES", 10)
    monkeypatch.setattr(indexer, "PARSE_BATCH", 4)
    monkeypatch.setattr(indexer, "FTS_BATCH", 5)
    parsed_here = []
    real_parse = documents.parse
    monkeypatch.setattr(
        documents, "parse", lambda root, source, key: parsed_here.append(source) or real_parse(root, source, key)
    )
    summary = index_workspace(parallel)
    assert parsed_here == []  # the worker process parsed every source
    assert summary.indexed == 55 and summary.skipped == 2
    indexed_alike(parallel, sequential)


def test_when_the_worker_process_fails_this_one_parses_the_rest(tmp_path, monkeypatch):
    sequential = write_files(tmp_path / "one", MANY)
    index_workspace(sequential)
    parallel = write_files(tmp_path / "two", MANY)

    class Failing:
        """An executor whose worker answers one batch, then dies."""

        def __init__(self, *args, **kwargs):
            pass

        def map(self, function, roots, batches):
            roots, batches = iter(roots), iter(batches)
            yield function(next(roots), next(batches))
            raise BrokenProcessPool("the worker died")

        def shutdown(self, **kwargs):
            pass

    monkeypatch.setattr(indexer, "PARALLEL_SOURCES", 10)
    monkeypatch.setattr(indexer, "PARSE_BATCH", 4)
    monkeypatch.setattr(indexer, "ProcessPoolExecutor", Failing)
    summary = index_workspace(parallel)
    assert summary.indexed == 55
    indexed_alike(parallel, sequential)


def test_the_workspaces_own_settings_are_no_documents_and_no_problems(make_workspace):
    workspace = make_workspace(
        {
            "archivist.toml": '[[hosts]]\nhost = "laptop"\n',
            "datasette.yaml": "settings: {}\n",
            "notes/archivist.toml": "a note that happens to be named so\n",
            "notes/good.md": "# Good\n",
        }
    )
    summary = index_workspace(workspace)
    assert problems(workspace) == {"notes/archivist.toml": ("skipped", "unsupported file type (.toml)")}
    assert (summary.indexed, summary.skipped) == (1, 1)
