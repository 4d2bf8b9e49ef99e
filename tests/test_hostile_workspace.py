"""A workspace built to break the indexer: nothing in it may stop a run, and every bad entry is listed.

Real files, FIFOs, sockets and symlinks in tmp_path, indexed into a real archive.
"""

import faulthandler
import json
import os
import socket
from pathlib import Path

import pytest
import sqlite_utils
from conftest import write_files

from archivist import documents
from archivist.archive.indexer import index_workspace
from archivist.workspace import archive_path

DEEP = "/".join(["deep"] + ["d"] * 80) + "/leaf.md"
RAGGED_CSV = (
    "entity_type,entity_id,title,timestamp\n"
    "bug,1,Good one,2025-11-03T14:00:00Z\n"
    "bug,2,Too few\n"
    'bug,3,"A title\nover two lines",2025-11-04T09:00:00Z\n'
    "bug,4,Too,many,fields\n"
    "bug,5,Good too,2025-11-05T09:00:00Z\n"
)
MEMORIES = (
    "\n".join(
        json.dumps(record)
        for record in [
            {"content": "Use WAL mode", "content_hash": "wal", "created_at": "2025-11-22T08:26:40Z"},
            {"content": "A leap day that is not", "content_hash": "feb30", "created_at": "2025-02-30T10:00:00Z"},
            {"content": "A unix time from far away", "content_hash": "far", "created_at": 10**20},
            {"content": "Before 1970", "content_hash": "before", "created_at": -1},
            {"content": "Lone \udcff surrogate", "content_hash": "surrogate", "tags": ["ok\udcff"]},
        ]
    )
    + "\n"
    + "[" * 100_000
    + "\n"
    + "1" * 5000
    + "\n"
)
FILES: dict[str, str | bytes] = {
    # the good documents
    "notes/good.md": "# Good\n\nplain words\n",
    "conversations/2025-11-10/001-fine/conversation.md": "# Fine\n\nA fine conversation.\n",
    "reports/cmd/report_2025-11-20.md": "# Report\n\ndecode response\n",
    DEEP: "# Deep\n\nfar down\n",
    "notes/new\nline.md": "# Newline\n",
    "notes/quote\"s' `back`.md": "# Quotes\n",
    "notes/<script>alert(1)<\\script>.md": "# Script\n\n<script>alert(1)</script>\n",
    # dates that are none, from every source
    "notes/feb30.md": "---\ndate: 2026-02-30\n---\n# February 30\n",
    "notes/month13.md": "---\ncreated: 2025-13-01\n---\n# Month 13\n",
    "notes/year0.md": "---\ndate: 0000-01-01\n---\n# Year 0\n",
    "notes/huge-number.md": "---\ndate: 99999999999999999999\n---\n# Huge number\n",
    "notes/someday.md": "---\ndate: someday\n---\n# Someday\n",
    "notes/bad-offset.md": "---\ndate: 2025-06-24 10:00:00 +25:00\n---\n# Bad offset\n",
    "notes/2025-11/fallback.md": "---\ndate: 2025-11-31\n---\n# Falls back on its folder\n",
    "conversations/2025-13-01/001-x/conversation.md": "# Month 13 folder\n",
    "notes/2025-02-30/in-folder.md": "# Day 30 folder\n",
    "reports/cmd/report_2025-02-30.md": "# Report of February 30\n",
    "notes/2025-13-40.md": "# Name\n",
    "memories/m.jsonl": MEMORIES,
    "records/timestamps.jsonl": "\n".join(
        json.dumps(
            {"entity_type": "bug", "entity_id": n, "title": f"Bug {n}", "timestamp": value, "product_id": product}
        )
        for n, value, product in [
            (1, "2026-02-30", 7),
            (2, 99999999999999999999999, 7),
            (3, "not a time", 10**30),
            (4, 1763800000, 7),
        ]
    )
    + "\n",
    # records
    "records/ragged.csv": RAGGED_CSV,
    "records/nul.csv": "entity_type,entity_id,title\nbug,1,Before\x00after\nbug,2,Second\n",
    # files that are not what they say
    "notes/binary.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10",
    "notes/empty.md": "",
    "notes/huge.md": "word " * (documents.MAX_FILE_BYTES // 5 + 1000),
    "notes/alias-bomb.md": "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\ntitle: *b\n---\n# Aliases\n",
    "notes/odd-front-matter.md": '---\ntitle: "bad \\udcff escape"\ntype: [a, list]\ntags: {a: 1}\n---\nbody\n',
    "notes/broken-yaml.md": "---\ntitle: [unclosed\n---\n# Broken YAML\n",
}
GOOD = {
    "notes/good.md",
    "conversations/2025-11-10/001-fine",
    "reports/cmd/report_2025-11-20.md",
    DEEP,
    "notes/new\nline.md",
    "notes/quote\"s' `back`.md",
    "notes/<script>alert(1)<\\script>.md",
    "notes/bad-\\xff-name.md",
    "notes/\\xfe-folder/inside.md",
    "notes/link-to-good.md",
}
# path -> (status, words that its reasons must hold), for each bad entry
EXPECTED = {
    "notes/bad-\\xff-name.md": ("degraded", ["not valid UTF-8"]),
    "notes/\\xfe-folder/inside.md": ("degraded", ["not valid UTF-8"]),
    "notes/feb30.md": ("degraded", ["'2026-02-30'", "day is out of range", "undated"]),
    "notes/month13.md": ("degraded", ["front matter 'created'", "'2025-13-01'", "month must be in 1..12"]),
    "notes/year0.md": ("degraded", ["'0000-01-01'", "year 0"]),
    "notes/huge-number.md": ("degraded", ["'99999999999999999999'", "unix time"]),
    "notes/someday.md": ("degraded", ["'someday'", "not a date"]),
    "notes/bad-offset.md": ("degraded", ["+25:00", "out of range"]),
    "notes/2025-11/fallback.md": ("degraded", ["'2025-11-31'", "ignored"]),
    "conversations/2025-13-01/001-x/conversation.md": ("degraded", ["folder name", "'2025-13-01'", "undated"]),
    "notes/2025-02-30/in-folder.md": ("degraded", ["folder name", "'2025-02-30'"]),
    "reports/cmd/report_2025-02-30.md": ("degraded", ["file name", "'2025-02-30'"]),
    "notes/2025-13-40.md": ("degraded", ["file name", "'2025-13-40'"]),
    "memories/m.jsonl": (
        "degraded",
        [
            "line 2: invalid date in 'created_at': '2025-02-30T10:00:00Z'",
            "line 3:",
            "line 4: invalid date in 'created_at': '-1'",
            "line 6: invalid JSON (nested too deep)",
            "line 7: invalid JSON (Exceeds the limit (4300 digits)",
        ],
    ),
    "records/timestamps.jsonl": (
        "degraded",
        [
            "line 1: invalid date in 'timestamp': '2026-02-30'",
            "line 2: invalid date in 'timestamp'",
            "line 3: invalid date in 'timestamp': 'not a time' (not a date)",
        ],
    ),
    "records/ragged.csv": (
        "degraded",
        [
            "line 3: 3 fields where the header has 4; row skipped",
            "line 6: 5 fields where the header has 4; row skipped",
        ],
    ),
    "records/nul.csv": ("degraded", ["1 NUL byte removed"]),
    "notes/binary.md": ("skipped", ["binary file"]),
    "notes/empty.md": ("skipped", ["empty file"]),
    "notes/huge.md": ("degraded", ["larger than 2 MiB"]),
    "notes/alias-bomb.md": ("degraded", ["front matter is not valid YAML", "aliases are not allowed"]),
    "notes/broken-yaml.md": ("degraded", ["front matter is not valid YAML"]),
    "notes/pipe.md": ("skipped", ["not a regular file (FIFO)"]),
    "notes/socket.md": ("skipped", ["not a regular file (socket)"]),
    "notes/escape.md": ("skipped", ["symlink points outside the workspace"]),
    "notes/dangling.md": ("skipped", ["broken symlink"]),
    "notes/loop.md": ("skipped", ["symlink loop"]),
    "notes/ping.md": ("skipped", ["symlink loop"]),
    "notes/pong.md": ("skipped", ["symlink loop"]),
    "linked-out": ("skipped", ["symlink points outside the workspace (to a folder)"]),
    "notes/alias-of-conversations": ("skipped", ["symlink to a folder: not followed"]),
    "notes/self": ("skipped", ["symlink to a folder: not followed"]),
}


def build(root: Path) -> Path:
    """The hostile workspace, beside an outside folder that must never be read."""
    outside = root / "outside"
    write_files(outside, {"secret.md": "# Secret\n\ntopsecret\n", "folder/inside.md": "# Outside\n\ntopsecret\n"})
    workspace = write_files(root / "workspace", FILES)
    notes = workspace / "notes"
    (notes / os.fsdecode(b"bad-\xff-name.md")).write_text("# Bad name\n\nbytes in the name\n", encoding="utf-8")
    (notes / os.fsdecode(b"\xfe-folder")).mkdir()
    (notes / os.fsdecode(b"\xfe-folder") / "inside.md").write_text("# Inside\n", encoding="utf-8")
    os.mkfifo(notes / "pipe.md")
    (notes / "escape.md").symlink_to(outside / "secret.md")
    (notes / "dangling.md").symlink_to(root / "missing.md")
    (notes / "loop.md").symlink_to("loop.md")
    (notes / "ping.md").symlink_to("pong.md")
    (notes / "pong.md").symlink_to("ping.md")
    (notes / "link-to-good.md").symlink_to("good.md")
    (notes / "alias-of-conversations").symlink_to("../conversations")
    (notes / "self").symlink_to(".")
    (workspace / "linked-out").symlink_to(outside / "folder")
    return workspace


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The workspace, indexed twice; a socket lives while it is."""
    faulthandler.dump_traceback_later(300, exit=True)  # a run that blocks (on a FIFO) fails instead of hanging
    workspace = build(tmp_path_factory.mktemp("hostile"))
    cwd = os.getcwd()
    os.chdir(workspace / "notes")  # a socket's path must be short: bind it relative
    server = socket.socket(socket.AF_UNIX)
    server.bind("socket.md")
    os.chdir(cwd)
    try:
        first = index_workspace(workspace)
        first_problems = problem_rows(workspace)
        second = index_workspace(workspace)
        yield workspace, first, first_problems, second
    finally:
        server.close()
        faulthandler.cancel_dump_traceback_later()


def db(workspace: Path) -> sqlite_utils.Database:
    return sqlite_utils.Database(archive_path(workspace))


def problem_rows(workspace: Path) -> list[tuple[str, str, str]]:
    return db(workspace).execute("select path, status, reason from index_problems").fetchall()


def test_the_run_completes_and_every_good_document_is_there(hostile):
    workspace, first, _, _ = hostile
    paths = {row[0] for row in db(workspace).execute("select path from documents")}
    assert paths >= GOOD
    body = db(workspace).execute("select body from documents where path = 'notes/bad-\\xff-name.md'").fetchone()
    assert body == ("# Bad name\n\nbytes in the name",)
    # several memories or records share their file's path: 5 in m.jsonl, 4 in timestamps.jsonl, 3 + 2 in the CSVs
    assert first.documents == len(paths) + (5 - 1) + (4 - 1) + (3 - 1) + (2 - 1)


def test_nothing_outside_the_workspace_is_read(hostile):
    workspace = hostile[0]
    hits = db(workspace).execute("select path from documents where body like '%topsecret%'").fetchall()
    assert hits == []
    assert db(workspace).execute("select count(*) from files where path like 'linked-out/%'").fetchone() == (0,)


def test_every_bad_entry_is_listed_with_its_reason(hostile):
    workspace, first, _, _ = hostile
    reasons: dict[str, list[str]] = {}
    statuses = dict(db(workspace).execute("select path, status from files where status != 'indexed'").fetchall())
    for path, _status, reason in problem_rows(workspace):
        reasons.setdefault(path, []).append(reason)
    assert set(reasons) == set(EXPECTED)
    for path, (status, words) in EXPECTED.items():
        assert statuses[path] == status, path
        text = "\n".join(reasons[path])
        for word in words:
            assert word in text, (path, word, text)
    assert (first.skipped, first.degraded) == (
        sum(status == "skipped" for status, _ in EXPECTED.values()),
        sum(status == "degraded" for status, _ in EXPECTED.values()),
    )
    assert first.problems == [documents.Problem(*row) for row in problem_rows(workspace)]


def test_a_ragged_csv_keeps_its_good_rows_and_lists_each_bad_one(hostile):
    workspace = hostile[0]
    rows = (
        db(workspace)
        .execute("select external_id, title, line from documents where path = 'records/ragged.csv' order by line")
        .fetchall()
    )
    assert rows == [("1", "Good one", 2), ("3", "A title\nover two lines", 4), ("5", "Good too", 7)]
    listed = [reason for path, _, reason in problem_rows(workspace) if path == "records/ragged.csv"]
    assert len(listed) == 2
    nul = db(workspace).execute("select title from documents where path = 'records/nul.csv' order by line").fetchall()
    assert nul == [("Beforeafter",), ("Second",)]


def test_invalid_dates_leave_documents_undated_or_on_their_next_date(hostile):
    workspace = hostile[0]
    dated = dict(
        (row[0], row[1:])
        for row in db(workspace).execute(
            "select coalesce(external_id, path), date, timestamp from documents"
            " where path in ('notes/feb30.md', 'notes/year0.md', 'notes/2025-11/fallback.md', 'memories/m.jsonl',"
            " 'records/timestamps.jsonl', 'conversations/2025-13-01/001-x', 'notes/2025-13-40.md')"
        )
    )
    assert dated == {
        "notes/feb30.md": (None, None),
        "notes/year0.md": (None, None),
        "notes/2025-11/fallback.md": ("2025-11", 1761955200.0),  # its folder's month
        "conversations/2025-13-01/001-x": (None, None),
        "notes/2025-13-40.md": (None, None),
        "wal": ("2025-11-22", 1763800000.0),
        "feb30": (None, None),
        "far": (None, None),
        "before": (None, None),
        "surrogate": (None, None),
        "1": (None, None),
        "2": (None, None),
        "3": (None, None),
        "4": ("2025-11-22", 1763800000.0),
    }
    assert db(workspace).execute("select product_id from documents where external_id = '3'").fetchone() == (None,)


def test_strings_sqlite_cannot_store_are_cleaned(hostile):
    workspace = hostile[0]
    memory = db(workspace).execute("select body, tags from documents where external_id = 'surrogate'").fetchone()
    assert memory == ("Lone \ufffd surrogate", '["ok\\ufffd"]')
    note = (
        db(workspace).execute("select title, type from documents where path = 'notes/odd-front-matter.md'").fetchone()
    )
    assert note == ("bad \ufffd escape", "['a', 'list']")


def test_a_second_run_is_incremental_and_lists_the_same_problems(hostile):
    workspace, first, first_problems, second = hostile
    assert second.indexed == 0
    assert second.unchanged == first.indexed
    assert (second.skipped, second.degraded) == (first.skipped, first.degraded)
    assert problem_rows(workspace) == first_problems
    assert len(set(first_problems)) == len(first_problems)


def test_problems_go_when_the_file_is_fixed(tmp_path):
    workspace = write_files(
        tmp_path / "w", {"records/ragged.csv": RAGGED_CSV, "notes/feb30.md": FILES["notes/feb30.md"]}
    )
    index_workspace(workspace)
    assert len(problem_rows(workspace)) == 3
    (workspace / "records/ragged.csv").write_text("entity_type,entity_id,title\nbug,1,Fixed\n", encoding="utf-8")
    index_workspace(workspace)
    assert [path for path, _, _ in problem_rows(workspace)] == ["notes/feb30.md"]
    assert db(workspace).execute("select status from files where path = 'records/ragged.csv'").fetchone() == (
        "indexed",
    )


def test_many_bad_rows_are_listed_up_to_a_cap(tmp_path):
    rows = "".join(f"bug,{n}\n" for n in range(documents.MAX_PROBLEMS_PER_FILE + 50))
    workspace = write_files(tmp_path / "w", {"records/short.csv": "entity_type,entity_id,title\n" + rows})
    summary = index_workspace(workspace)
    reasons = [reason for _, _, reason in problem_rows(workspace)]
    assert len(reasons) == documents.MAX_PROBLEMS_PER_FILE + 1
    assert reasons[-1] == "… and 50 more problems like these, not listed"
    assert (summary.degraded, summary.documents) == (1, 0)


def test_an_unreadable_file_is_listed(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("running as root: chmod 000 does not stop root from reading a file")
    workspace = write_files(tmp_path / "w", {"notes/good.md": "# Good\n", "notes/secret.md": "# Secret\n"})
    (workspace / "notes/secret.md").chmod(0)
    try:
        index_workspace(workspace)
        assert problem_rows(workspace) == [("notes/secret.md", "skipped", "unreadable: Permission denied")]
    finally:
        (workspace / "notes/secret.md").chmod(0o644)


def test_a_file_that_vanishes_or_turns_into_a_fifo_after_the_walk_is_listed(tmp_path, monkeypatch):
    """Reading fails for real as root too: the file is gone, or is a FIFO (which must not block the run)."""
    files = {"notes/good.md": "# Good\n", "notes/gone.md": "# Gone\n", "notes/pipe.md": "# Pipe\n"}
    workspace = write_files(tmp_path / "w", files)
    real_walk = documents.walk

    def walk_then_change(root, exclude=None):
        found = real_walk(root, exclude)
        (workspace / "notes/gone.md").unlink()
        (workspace / "notes/pipe.md").unlink()
        os.mkfifo(workspace / "notes/pipe.md")
        return found

    monkeypatch.setattr(documents, "walk", walk_then_change)
    faulthandler.dump_traceback_later(120, exit=True)
    try:
        summary = index_workspace(workspace)
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert problem_rows(workspace) == [
        ("notes/gone.md", "skipped", "unreadable: No such file or directory"),
        ("notes/pipe.md", "skipped", "unreadable: not a regular file (FIFO)"),
    ]
    assert (summary.indexed, summary.skipped, summary.documents) == (1, 2, 1)


def test_a_folder_too_deep_to_open_is_listed(tmp_path):
    """Past the system's longest path (4096 bytes on Linux) a folder cannot be opened by its path."""
    workspace = write_files(tmp_path / "w", {"notes/ok.md": "# OK\n"})
    folder = os.open(workspace / "notes", os.O_RDONLY)
    try:
        for _ in range(45):  # 45 folders of 100 characters: made one inside the other, by descriptor
            os.mkdir("n" * 100, dir_fd=folder)
            inner = os.open("n" * 100, os.O_RDONLY, dir_fd=folder)
            os.close(folder)
            folder = inner
        os.close(os.open("deep.md", os.O_WRONLY | os.O_CREAT, dir_fd=folder))
    finally:
        os.close(folder)
    summary = index_workspace(workspace)
    [(path, status, reason)] = problem_rows(workspace)
    assert (status, reason) == ("skipped", "unreadable folder: File name too long")
    assert path.startswith("notes/" + "n" * 100 + "/") and len(os.fsencode(workspace / path)) > 4096
    assert (summary.indexed, summary.skipped) == (1, 1)
