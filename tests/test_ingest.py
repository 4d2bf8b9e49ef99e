"""Each layout of docs/contract.md: workspace becomes the right documents."""

import functools
import json

import pytest
import sqlite_utils

from archivist.archive.indexer import index_workspace
from archivist.workspace import archive_path

LAYOUTS = {
    "conversations/2025-11/001-old-conversation/conversation.md": "# Old layout\n\nA month-only conversation.\n",
    "conversations/2025-11-10/001-brainstorm-feature/01-user.md": "# Brainstorm a feature\n\nUser asks.\n",
    "conversations/2025-11-10/001-brainstorm-feature/02-assistant.md": "Assistant answers.\n",
    "conversations/2025-11-12/quick-question.md": "# Quick question\n\nOne file.\n",
    "brainstorm/2025-11-17/001-new-idea/conversation.md": "# New idea\n\nA typed folder.\n",
    "debug/2025-12/001-crash/conversation.md": "# Crash\n\nTyped, month only.\n",
    "reports/analyze_log/report_20251120_v6.md": "# Report\n\ndecode response\n",
    "reports/analyze_log/undated.md": "# Undated report\n",
    "memories/m.jsonl": json.dumps(
        {
            "content": "Use WAL mode",
            "tags": ["sqlite", "Ops"],
            "memory_type": "decision",
            "created_at": 1763800000,
            "content_hash": "hash1",
        }
    )
    + "\n",
    "memories/notes/choice.md": "---\ntitle: A choice\ndate: 2025-11-20\ntags: [decision]\nmemory_type: decision\n---\nWe chose SQLite.\n",
    "records/tracker.jsonl": json.dumps(
        {
            "entity_type": "feature",
            "entity_id": 12345,
            "title": "Borders",
            "body": "b",
            "product_id": 598,
            "timestamp": None,
        }
    )
    + "\n",
    "records/tests.csv": 'entity_type,entity_id,title,body,product_id,timestamp\ntest,7,"Cycle, one",body,601,2025-11-03T14:00:00Z\n',
    "notes/handbook.md": "---\ntitle: Handbook\ntype: handbook\ntags: onboarding, ops\ndate: 2025-09-15\n---\n# Ignored heading\n",
    "notes/ideas.txt": "ideas without a date\n",
}


def documents(workspace):
    db = sqlite_utils.Database(archive_path(workspace))
    keyed = {}
    for row in db["documents"].rows:
        many_per_file = row["path"].endswith((".jsonl", ".csv"))
        keyed[row["path"] + ("#" + row["external_id"] if many_per_file else "")] = row
    return keyed


def test_every_layout_becomes_the_right_kind_type_and_date(make_workspace):
    workspace = make_workspace(LAYOUTS)
    index_workspace(workspace)
    docs = documents(workspace)
    summary = {path: (d["kind"], d["type"], d["date"], d["date_precision"]) for path, d in docs.items()}
    assert summary == {
        "conversations/2025-11/001-old-conversation": ("conversation", None, "2025-11", "month"),
        "conversations/2025-11-10/001-brainstorm-feature": ("conversation", "brainstorm", "2025-11-10", "day"),
        "conversations/2025-11-12/quick-question.md": ("conversation", None, "2025-11-12", "day"),
        "brainstorm/2025-11-17/001-new-idea": ("conversation", "brainstorm", "2025-11-17", "day"),
        "debug/2025-12/001-crash": ("conversation", "debug", "2025-12", "month"),
        "reports/analyze_log/report_20251120_v6.md": ("report", "analyze_log", "2025-11-20", "day"),
        "reports/analyze_log/undated.md": ("report", "analyze_log", None, None),
        "memories/m.jsonl#hash1": ("memory", "decision", "2025-11-22", "second"),
        "memories/notes/choice.md": ("memory", "decision", "2025-11-20", "day"),
        "records/tracker.jsonl#12345": ("record", "feature", None, None),
        "records/tests.csv#7": ("record", "test", "2025-11-03", "second"),
        "notes/handbook.md": ("note", "handbook", "2025-09-15", "day"),
        "notes/ideas.txt": ("note", None, None, None),
    }


def test_a_conversation_folder_is_one_document_holding_all_its_files(make_workspace):
    workspace = make_workspace(LAYOUTS)
    index_workspace(workspace)
    doc = documents(workspace)["conversations/2025-11-10/001-brainstorm-feature"]
    assert doc["title"] == "Brainstorm a feature"
    assert "User asks." in doc["body"] and "Assistant answers." in doc["body"]
    assert json.loads(doc["extra"])["files"] == [
        "conversations/2025-11-10/001-brainstorm-feature/01-user.md",
        "conversations/2025-11-10/001-brainstorm-feature/02-assistant.md",
    ]


def test_front_matter_sets_title_tags_and_type(make_workspace):
    workspace = make_workspace(LAYOUTS)
    index_workspace(workspace)
    doc = documents(workspace)["notes/handbook.md"]
    assert (doc["title"], json.loads(doc["tags"]), doc["type"]) == ("Handbook", ["onboarding", "ops"], "handbook")


def test_memories_and_records_keep_their_fields(make_workspace):
    workspace = make_workspace(LAYOUTS)
    index_workspace(workspace)
    docs = documents(workspace)
    memory = docs["memories/m.jsonl#hash1"]
    assert (memory["body"], json.loads(memory["tags"]), memory["created_at"]) == (
        "Use WAL mode",
        ["sqlite", "ops"],
        "2025-11-22T08:26:40Z",
    )
    record = docs["records/tracker.jsonl#12345"]
    assert (record["title"], record["product_id"], record["timestamp"]) == ("Borders", 598, None)
    assert docs["records/tests.csv#7"]["title"] == "Cycle, one"


def test_a_slug_word_gives_the_conversation_type(make_workspace):
    workspace = make_workspace({"conversations/2025-11-10/003-debugging-auth/c.md": "x y"})
    index_workspace(workspace)
    assert documents(workspace)["conversations/2025-11-10/003-debugging-auth"]["type"] == "debug"


def test_the_sample_workspace_has_every_kind(sample_workspace):
    db = sqlite_utils.Database(archive_path(sample_workspace))
    kinds = dict(db.execute("select kind, count(*) from documents group by kind").fetchall())
    assert set(kinds) == {"conversation", "report", "memory", "record", "note"}
    # the only problems are the two files that are there to be skipped
    assert db.execute("select path, reason from files where status != 'indexed' order by path").fetchall() == [
        ("notes/todo.md", "empty file"),
        ("notes/whiteboard-photo.png", "unsupported file type (.png)"),
    ]


ZONED = {  # written on one calendar day where their authors were, another in UTC (or not)
    "research/2025-06-24_17-11-31_plan.md": "---\ndate: 2025-06-24 17:11:14 PDT\n---\n# Plan\n\nzoned words\n",
    "notes/west.md": "---\ndate: 2025-06-24T23:30:00-0500\n---\n# West\n\nzoned words\n",
    "notes/east.md": "---\ndate: 2025-06-25T01:00:00+02:00\n---\n# East\n\nzoned words\n",
    "memories/m.jsonl": '{"content": "zoned words in UTC", "created_at": "2025-06-24T23:30:00Z", "content_hash": "utc"}\n',
}


def test_calendar_days_are_the_authors_and_the_instant_stays_utc(make_workspace):
    workspace = make_workspace(ZONED)
    index_workspace(workspace)
    db = sqlite_utils.Database(archive_path(workspace))
    columns = {
        row[0]: row[1:]
        for row in db.execute("select title, date, day, month, date_precision, created_at from documents").fetchall()
    }
    assert columns == {
        "Plan": ("2025-06-24", "2025-06-24", "2025-06", "second", "2025-06-25T00:11:14Z"),
        "West": ("2025-06-24", "2025-06-24", "2025-06", "second", "2025-06-25T04:30:00Z"),
        "East": ("2025-06-25", "2025-06-25", "2025-06", "second", "2025-06-24T23:00:00Z"),
        "zoned words in UTC": ("2025-06-24", "2025-06-24", "2025-06", "second", "2025-06-24T23:30:00Z"),
    }

    def titles_with(word):
        return sorted(
            row[0]
            for row in db.execute(
                "select d.title from documents_fts f join documents d on d.id = f.rowid"
                " where documents_fts match :match",
                {"match": f"filter_tokens : {word}"},
            )
        )

    assert titles_with("d20250624") == ["Plan", "West", "zoned words in UTC"]
    assert titles_with("d20250625") == ["East"]


@pytest.fixture
def zoned_archive(make_workspace):
    from archivist.queries.runner import Archive

    workspace = make_workspace(ZONED)
    index_workspace(workspace)
    with Archive.for_workspace(workspace) as archive:
        yield archive


def titles(archive, start: str, end: str) -> list[str]:
    return [r["title"] for r in archive.search({"mode": "recent", "start_date": start, "end_date": end})["results"]]


def test_a_day_filter_finds_the_authors_day_newest_first_by_the_instant(zoned_archive):
    assert titles(zoned_archive, "2025-06-24", "2025-06-24") == ["West", "Plan", "zoned words in UTC"]
    assert titles(zoned_archive, "2025-06-25", "2025-06-25") == ["East"]


def test_a_bound_with_a_time_finds_documents_by_their_instant(zoned_archive):
    # 2025-06-25T00:11:14Z is a 2025-06-24 document; 2025-06-24T23:00:00Z a 2025-06-25 one
    assert titles(zoned_archive, "2025-06-25T00:05:00Z", "2025-06-25T01:00:00Z") == ["Plan"]
    assert titles(zoned_archive, "2025-06-24T22:30:00Z", "2025-06-24T23:15:00Z") == ["East"]


@pytest.mark.parametrize(
    "front, expected, through_libyaml",
    [
        ("title: Plain\ndate: 2025-06-24 12:22:31 PDT\ntags: [a, b]",
         {"title": "Plain", "date": "2025-06-24 12:22:31 PDT", "tags": ["a", "b"]}, True),
        ("title: '*starred*'\ncreated: 2025-01-02", {"title": "*starred*", "created": "2025-01-02"}, False),
        ("title: R&D\nwhen: 2025-01-02T03:04:05Z", {"title": "R&D", "when": "2025-01-02T03:04:05Z"}, False),
        ('title: "tab\\there"', {"title": "tab\there"}, False),
        ("deep: " + "[" * 80 + "]" * 80, {"deep": functools.reduce(lambda inner, _: [inner], range(79), [])}, False),
    ],
)  # fmt: skip
def test_front_matter_reads_the_same_through_either_yaml_reader(front, expected, through_libyaml):
    """libyaml reads plain front matter; text with anchors, '*' or many brackets goes the careful way."""
    from archivist import documents
    from archivist.documents import frontmatter

    assert (frontmatter._front_matter_loader(front) is frontmatter._FastFrontMatterLoader) == through_libyaml
    assert documents.split_front_matter(f"---\n{front}\n---\nbody\n") == (expected, "body\n")
