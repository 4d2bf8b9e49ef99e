"""A Codex rollout that grows is read on from its last user message, and stores what a whole read stores."""

import json
import shutil
from pathlib import Path

import pytest
import sqlite_utils
from conftest import write_files
from test_agentlogs_codex import event, normal_session, turn, turn_context

from archivist.agents import codex
from archivist.archive.indexer import index_workspace
from archivist.workspace import archive_path

SAMPLE = sorted((Path(__file__).parent.parent / "sample-agent-logs" / "codex" / "sessions").rglob("*.jsonl"))[0]
MESSAGE_COLUMNS = (
    "seq, role, timestamp, model, text, thinking, tool_output, tool_calls, secrets, "
    "input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost, attachments"
)


def without_folders(extra):
    """The files a session was read from, by name: the two archives compared read them in two folders."""
    return {**extra, "files": [Path(file).name for file in extra["files"]]}


def stored(workspace):
    db = sqlite_utils.Database(archive_path(workspace))
    documents = [
        {**row, "extra": without_folders(json.loads(row["extra"])), "filter_tokens": set(row["filter_tokens"].split())}
        for row in db.query("select title, body, extra, filter_tokens from documents where source like 'log:%'")
    ]
    messages = [dict(row) for row in db.query(f"select {MESSAGE_COLUMNS} from messages order by id")]
    return documents, messages, db.execute("select count(*) from message_index").fetchone()[0]


def indexed_whole(tmp_path, lines):
    sessions = tmp_path / "whole" / "sessions" / "2025" / "11" / "20"
    sessions.mkdir(parents=True)
    (sessions / SAMPLE.name).write_text("".join(lines), encoding="utf-8")
    workspace = write_files(tmp_path / "whole-ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[("codex", tmp_path / "whole" / "sessions")])
    return stored(workspace)


def grown(tmp_path, monkeypatch, lines, cuts):
    """The rollout indexed with its first cuts[0] lines, then after each later cut (read on only)."""
    sessions = tmp_path / "grown" / "sessions" / "2025" / "11" / "20"
    sessions.mkdir(parents=True)
    rollout = sessions / SAMPLE.name
    rollout.write_text("".join(lines[: cuts[0]]), encoding="utf-8")
    workspace = write_files(tmp_path / "grown-ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[("codex", tmp_path / "grown" / "sessions")])
    if not stored(workspace)[0]:
        return None  # nothing to read on from yet
    with monkeypatch.context() as patched:
        patched.setattr(codex, "read", lambda *a, **k: pytest.fail("the whole source was read again"))
        for start, end in zip(cuts, [*cuts[1:], len(lines)]):
            with rollout.open("a", encoding="utf-8") as handle:
                handle.write("".join(lines[start:end]))
            index_workspace(workspace)
    return stored(workspace)


def check_every_cut(tmp_path, monkeypatch, lines):
    expected = indexed_whole(tmp_path, lines)
    assert expected[1], "the rollout holds messages"
    compared = 0
    for cut in range(1, len(lines)):
        case = tmp_path / f"cut-{cut}"
        case.mkdir()
        result = grown(case, monkeypatch, lines, [cut, (cut + len(lines)) // 2])
        shutil.rmtree(case)
        if result is None:
            continue
        assert result == expected, f"cut after line {cut}"
        compared += 1
    assert compared >= len(lines) // 2


def test_the_sample_rollout_grown_line_by_line_stores_what_a_whole_read_stores(tmp_path, monkeypatch):
    check_every_cut(tmp_path, monkeypatch, SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True))


def test_a_rollout_with_model_changes_and_mirrors_grown_stores_what_a_whole_read_stores(tmp_path, monkeypatch):
    text = normal_session() + turn("and the second question", "the second answer", 50, model="gpt-5")
    text += turn_context("o3", "2025-10-29T01:10:00.000Z") + "\n"
    text += turn("a third one", "the third answer", 58, model="o3")
    check_every_cut(tmp_path, monkeypatch, [line + "\n" for line in text.splitlines() if line.strip()])


def test_a_rolled_back_turn_reads_the_rollout_again(tmp_path):
    text = normal_session() + turn("a turn to undo", "undone", 50)
    sessions = tmp_path / "sessions" / "2025" / "10" / "29"
    sessions.mkdir(parents=True)
    rollout = sessions / SAMPLE.name
    rollout.write_text(text, encoding="utf-8")
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[("codex", tmp_path / "sessions")])
    with rollout.open("a", encoding="utf-8") as handle:
        handle.write(event("2025-10-29T01:20:00.000Z", type="thread_rolled_back", num_turns=1) + "\n")
    index_workspace(workspace)
    texts = [m["text"] for m in stored(workspace)[1]]
    assert "a turn to undo" not in texts and "undone" not in texts
