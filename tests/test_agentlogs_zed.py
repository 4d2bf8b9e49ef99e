"""Zed's agent threads: what is read (messages, thinking, tool calls with their edits and
commands, titles, projects, sub-agents, usage), what is skipped and why, and hostile input."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import zstandard

from archivist.agents import Session, zed

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "zed" / "threads"
MAIN = "6b1f0c2e-3d4a-4e5b-9c6d-7e8f9a0b1c2d"
SUB = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"


def read(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(zed.read(path, problems)), problems


def copy(tmp_path: Path) -> Path:
    folder = tmp_path / "zed" / "threads"
    folder.mkdir(parents=True)
    shutil.copy(SAMPLE / "threads.db", folder / "threads.db")
    return folder


def run(folder: Path, sql: str, *values: object) -> None:
    with closing(sqlite3.connect(folder / "threads.db")) as connection:
        connection.execute(sql, values)
        connection.commit()


def add(folder: Path, key: str, data: bytes, data_type: str = "zstd", **columns: object) -> None:
    names = ["id", "summary", "updated_at", "data_type", "data", *columns]
    values = [key, "", "2025-11-27T09:00:00+00:00", data_type, data, *columns.values()]
    run(folder, f"INSERT INTO threads ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", *values)


def packed(document: object) -> bytes:
    return zstandard.ZstdCompressor(level=3).compress(json.dumps(document).encode())


def test_the_sample_is_read_with_its_thread_and_its_sub_agent() -> None:
    (main, sub), problems = read(SAMPLE)
    assert problems == [] and main.problems == [] and sub.problems == []
    assert (main.key, main.agent, main.title, main.project, main.branch, main.models, main.parent) == (
        MAIN,
        "zed",
        "Fix the flaky forecast test",
        "/home/ana/src/weather-api",
        "fix-flaky-forecast",
        ["claude-sonnet-4-5"],
        None,
    )
    assert (main.started, main.last) == ("2025-11-26T10:02:11Z", "2025-11-26T10:07:45Z")
    assert [m.role for m in main.messages] == ["user", "assistant", "tool", "assistant", "tool", "user", "assistant"]
    first = main.messages[0]
    assert first.text.startswith("The forecast test fails one run in ten. Look at @/home/ana/src/weather-api/tests/")
    assert first.tool_output.endswith("assert forecast(now()) == cached()\n")  # the mention's content, kept apart
    assert main.messages[1].thinking.startswith("The test compares against the clock")
    (terminal,) = main.messages[1].tool_calls
    assert (terminal.name, terminal.commands, terminal.input) == (
        "terminal",
        ["pytest -q tests/test_forecast.py --count 10"],
        '{"cd":"weather-api"}',
    )
    assert main.messages[2].tool_output.startswith("1 failed, 9 passed")
    (edit_call,) = main.messages[3].tool_calls
    (edit,) = edit_call.edits
    assert (edit.file, edit.old) == ("weather-api/tests/test_forecast.py", "    assert forecast(now()) == cached()")
    assert edit.new == "    moment = now()\n    assert forecast(moment) == cached(moment)"
    assert edit_call.files == ["weather-api/tests/test_forecast.py"] and "edits" not in edit_call.input
    usages = [
        (m.usage.input, m.usage.output, m.usage.cache_write, m.usage.cache_read) for m in main.messages if m.usage
    ]
    assert usages == [(5210, 388, 1200, 3900), (6120, 64, 0, 5600)]  # each turn's, on its last agent message
    assert (sub.parent, sub.models, sub.title) == (MAIN, ["claude-haiku-4-5"], "Find the cache helpers")
    (grep,) = sub.messages[1].tool_calls
    assert grep.input == '{"regex":"def cached","include_pattern":"**/*.py"}'  # the later wrapped input
    assert sub.messages[-1].usage is not None and sub.messages[-1].usage.input == 1830  # the thread's total


def test_check_takes_the_threads_folder_the_data_folder_or_the_database(tmp_path: Path) -> None:
    assert zed.check(SAMPLE) is None and zed.check(SAMPLE.parent) is None and zed.check(SAMPLE / "threads.db") is None
    assert "holds no threads.db" in (zed.check(tmp_path) or "")
    other = tmp_path / "threads.db"
    with closing(sqlite3.connect(other)) as connection:
        connection.execute("CREATE TABLE notes (id TEXT)")
    assert "has no threads table" in (zed.check(other) or "")
    (tmp_path / "text.db").write_text("no database", encoding="utf-8")
    assert "not a SQLite database" in (zed.check(tmp_path / "text.db") or "")


def test_a_plain_json_row_of_the_first_schema_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "threads"
    folder.mkdir()
    with closing(sqlite3.connect(folder / "threads.db")) as connection:
        connection.execute(
            "CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, updated_at TEXT NOT NULL, "
            "data_type TEXT NOT NULL, data BLOB NOT NULL)"
        )
        connection.commit()
    document = {"messages": [{"User": {"id": "u", "content": [{"Text": "hello"}]}}, "Resume"], "version": "0.3.0"}
    add(folder, "old", json.dumps(document).encode(), "json")
    (found,), problems = read(folder)
    assert problems == [] and found.project is None
    assert [m.text for m in found.messages] == ["hello", "Continue where you left off"]
    assert (found.title, found.started) == ("hello", "2025-11-27T09:00:00Z")


def test_rows_that_cannot_be_read_are_skipped_and_told(tmp_path: Path) -> None:
    folder = copy(tmp_path)
    add(folder, "not-zstd", b"plain bytes")
    add(folder, "odd-type", b"{}", "brotli")
    add(folder, "no-json", packed("just a text"))
    run(folder, "ALTER TABLE threads ADD COLUMN merged_into TEXT")  # (a later version's column)
    add(folder, "merged", packed({"messages": [{"User": {"content": [{"Text": "dup"}]}}]}), merged_into=MAIN)
    found, problems = read(folder)
    assert [s.key for s in found] == [MAIN, SUB]
    assert len(problems) == 1 and problems[0].startswith("threads.db: 3 threads skipped")


def test_a_database_without_the_threads_columns_is_unread(tmp_path: Path) -> None:
    folder = tmp_path / "threads"
    folder.mkdir()
    with closing(sqlite3.connect(folder / "threads.db")) as connection:
        connection.execute("CREATE TABLE threads (id TEXT, summary TEXT)")
    found, problems = read(folder)
    assert found == [] and problems == ["threads.db: its threads table has no updated_at, data_type, data: not read"]


def test_hostile_documents_never_raise(tmp_path: Path) -> None:
    folder = copy(tmp_path)
    hostile = [
        {"messages": "not a list"},
        {"messages": [{"Agent": {"content": [{"ToolUse": {"name": 3, "input": {"edits": "[{"}}}], "tool_results": 7}}]},
        {"messages": [{"User": {"content": [{"Mention": {"uri": None}}, {"Image": {"source": 5}}]}}, 12, None]},
        {"messages": [{"User": {"content": [{"Text": "\ud800 lone"}]}}], "request_token_usage": [], "model": "x"},
    ]
    for number, document in enumerate(hostile):
        add(folder, f"hostile-{number}", packed(document))
    found, _problems = read(folder)
    assert {MAIN, SUB} <= {s.key for s in found}
