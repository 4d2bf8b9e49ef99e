"""When a session last spoke, read from its file's end: its newest line's time, not the time the
file was last touched; the file's modification time where its tail holds no time to read."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
from conftest import write_files
from test_newest_first import titles, write_source

from archivist.agents import claude_code, last_moment
from archivist.agents.last_moment import line_moment, newest_first
from archivist.archive.indexer import index_workspace


def line(at: object, **more: object) -> str:
    return json.dumps({"type": "user", "timestamp": at, **more}) + "\n"


def written(path: Path, text: str | bytes, touched: int) -> Path:
    """``path`` holding ``text``, last modified at ``touched`` (seconds since the epoch)."""
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    os.utime(path, (touched, touched))
    return path


def seconds(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def test_the_newest_line_time_of_the_tail_not_the_file_time(tmp_path):
    path = written(tmp_path / "a.jsonl", line("2025-10-01T09:00:00Z") + line("2025-10-03T10:30:00.250Z"), 1_000)
    assert last_moment.last_moment(path) == seconds("2025-10-03T10:30:00.250Z")
    # lines out of order (a sub-agent's result written after): the newest of the last lines
    out_of_order = written(tmp_path / "b.jsonl", line("2025-10-05T00:00:00Z") + line("2025-10-04T00:00:00Z"), 1_000)
    assert last_moment.last_moment(out_of_order) == seconds("2025-10-05T00:00:00Z")


def test_an_old_file_whose_session_spoke_last_comes_first(tmp_path):
    recent_file = written(tmp_path / "recent.jsonl", line("2025-01-01T00:00:00Z"), 1_900_000_000)
    old_file = written(tmp_path / "old.jsonl", line("2025-12-01T00:00:00Z"), 1_000_000_000)
    timeless = written(tmp_path / "timeless.jsonl", '{"type": "summary"}\n', 1_800_000_000)
    assert newest_first([recent_file, timeless, old_file]) == [timeless, old_file, recent_file]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json\n",
        '["a list"]\n',
        line(None),
        line(True),
        line(["2025-10-01"]),
        line("yesterday"),
        line("2025-10-01T09:00:00Z" * 10),
        line(-5),
        line(10**30),
        '{"timestamp": "2025-10-01T09:00:00Z", ' + "[" * 100_000 + "\n",
        b'{"timestamp": "\xff\xfe"}\n',
    ],
)
def test_a_tail_without_a_time_to_read_falls_back_to_the_file_time(tmp_path, text):
    path = written(tmp_path / "s.jsonl", text, 1_234_567_890)
    assert last_moment.last_moment(path) == 1_234_567_890


def test_a_last_line_being_written_is_passed_over(tmp_path):
    path = written(tmp_path / "s.jsonl", line("2025-10-02T00:00:00Z") + '{"timestamp": "2025-10-09T00:', 1_000)
    assert last_moment.last_moment(path) == seconds("2025-10-02T00:00:00Z")


def test_only_the_tail_is_read_growing_where_the_last_lines_are_long(tmp_path, monkeypatch):
    monkeypatch.setattr(last_moment, "TAIL_BYTES", 1_024)
    monkeypatch.setattr(last_moment, "MOST_BYTES", 8_192)
    early = line("2025-01-01T00:00:00Z") * 1_000  # (a time far from the end: never read)
    long_last = line("2025-10-07T00:00:00Z", text="x" * 3_000)
    path = written(tmp_path / "s.jsonl", line("2026-01-01T00:00:00Z") + early + long_last, 1_000)
    assert last_moment.last_moment(path) == seconds("2025-10-07T00:00:00Z")
    too_long = written(tmp_path / "t.jsonl", early + line("2025-10-07T00:00:00Z", text="x" * 9_000), 1_000)
    assert last_moment.last_moment(too_long) == 1_000  # (longer than MOST_BYTES: the file's time)


def test_times_as_written_elsewhere_and_a_missing_file(tmp_path):
    assert line_moment(b'{"timestamp": 1760000000}') == 1_760_000_000
    assert line_moment(b'{"timestamp": 1760000000500}') == 1_760_000_000.5
    assert line_moment(b'{"timestamp": "2025-10-01T11:00:00+02:00"}') == seconds("2025-10-01T09:00:00Z")
    assert line_moment(b'{"timestamp": "2025-10-01T09:00:00"}') == seconds("2025-10-01T09:00:00Z")
    assert last_moment.last_moment(tmp_path / "missing.jsonl") == 0.0
    assert last_moment.last_moment(tmp_path) == 0.0  # (a folder: nothing to read)


def test_a_large_source_stores_first_the_session_that_spoke_last_though_its_file_is_old(tmp_path, monkeypatch, large):
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n"})
    source = write_source(tmp_path / "logs")
    oldest = source / "-home-ana-proj" / "00000000-0000-4000-8000-000000000000.jsonl"
    touched = oldest.stat().st_mtime
    oldest.write_text(oldest.read_text().replace("2025-10-01T09:00:00Z", "2025-12-24T09:00:00Z"))
    os.utime(oldest, (touched, touched))  # (copied back from a backup: its file time is the oldest)
    first_seen: list[list[str]] = []
    whole_read = claude_code.read

    def watched(path, problems=None):
        first_seen.append(titles(workspace))
        yield from whole_read(path, problems)

    monkeypatch.setattr(claude_code, "read", watched)
    index_workspace(workspace, log_sources=[("claude-code", source)])
    assert first_seen[0] == sorted(f"question number {n} about the zeppelin hangar" for n in (0, 10, 11))
