"""A Claude Code session followed as it grows: each reading on gives what a whole reading gives,
and looks at the earlier lines again only from where the last look stopped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_agentlogs_claude_code import PROJECT, SID, answer, read, u, user

from archivist.agents import claude_code
from archivist.agents.claude_code import lines
from archivist.agents.claude_code.session import Builder


def append(file: Path, records: list[dict[str, Any]]) -> None:
    with file.open("ab") as handle:
        handle.write(b"".join(json.dumps(record).encode() + b"\n" for record in records))


def main_session(file: Path) -> Any:
    [session] = [s for s in read(file) if s.parent is None]
    return session


def grown_session(tmp_path: Path) -> tuple[Path, Any]:
    """A session file of one turn, read whole, then grown by a second turn: the file and that first reading."""
    file = tmp_path / PROJECT / f"{SID}.jsonl"
    file.parent.mkdir(parents=True)
    append(file, [user("fix the failing test", u(1), None, "2025-11-23T04:53:42Z"), answer(2, "2025-11-23T04:53:45Z")])
    first = main_session(file)
    append(file, [user("now the linter", u(3), u(2), "2025-11-23T04:54:00Z"), answer(4, "2025-11-23T04:54:05Z")])
    return file, first


def test_each_reading_on_keeps_its_look_and_the_next_drops_what_repeats_the_earlier_lines(tmp_path: Path) -> None:
    file, first = grown_session(tmp_path)
    on = claude_code.read_from(file, first.tail.resume_at, first.key, first.project)
    assert on is not None and on.tail is not None
    assert lines._looked[file].end == first.tail.resume_at
    stored = first.messages[: first.tail.resume_seq] + on.messages
    seq = first.tail.resume_seq + on.tail.resume_seq
    # a compaction writes the conversation before it again: those lines lie before the kept look's end
    repeated = [user("fix the failing test", u(1), None, "2025-11-23T04:53:42Z"), answer(2, "2025-11-23T04:53:45Z")]
    append(
        file, [*repeated, user("and the docs", u(5), u(4), "2025-11-23T04:55:00Z"), answer(6, "2025-11-23T04:55:05Z")]
    )
    again = claude_code.read_from(file, on.tail.resume_at, first.key, first.project)
    assert again is not None and again.tail is not None
    assert lines._looked[file].end == on.tail.resume_at
    whole = main_session(file)
    assert stored[:seq] + again.messages == whole.messages
    assert [m.text for m in whole.messages].count("fix the failing test") == 1
    assert (again.tail.resume_at, seq + again.tail.resume_seq) == (whole.tail.resume_at, whole.tail.resume_seq)


def test_a_file_rewritten_since_the_look_was_kept_is_looked_at_whole_again(tmp_path: Path) -> None:
    file, first = grown_session(tmp_path)
    assert claude_code.read_from(file, first.tail.resume_at, first.key, first.project) is not None
    assert u(1) in lines._looked[file].uuids
    # the same length, another uuid: a look kept of the old lines would drop the line appended below
    file.write_text(file.read_text().replace(u(1), u(91)))
    append(file, [user("fix the failing test", u(1), u(4), "2025-11-23T04:56:00Z"), answer(5, "2025-11-23T04:56:05Z")])
    on = claude_code.read_from(file, first.tail.resume_at, first.key, first.project)
    assert on is not None
    assert first.messages[: first.tail.resume_seq] + on.messages == main_session(file).messages
    assert [m.text for m in on.messages].count("fix the failing test") == 1


def test_a_title_in_a_kept_look_outranks_one_appended_after_it(tmp_path: Path) -> None:
    file = tmp_path / PROJECT / f"{SID}.jsonl"
    file.parent.mkdir(parents=True)
    custom = {"type": "custom-title", "customTitle": "Flaky test hunt", "sessionId": SID}
    append(
        file,
        [user("fix the failing test", u(1), None, "2025-11-23T04:53:42Z"), custom, answer(2, "2025-11-23T04:53:45Z")],
    )
    first = main_session(file)
    append(file, [user("now the linter", u(3), u(2), "2025-11-23T04:54:00Z"), answer(4, "2025-11-23T04:54:05Z")])
    on = claude_code.read_from(file, first.tail.resume_at, first.key, first.project)
    assert on is not None and on.tail is not None and on.title == "Flaky test hunt"
    ai = {"type": "ai-title", "aiTitle": "Fixing a test", "sessionId": SID}
    append(file, [ai, answer(5, "2025-11-23T04:55:05Z")])
    again = claude_code.read_from(file, on.tail.resume_at, first.key, first.project)
    assert again is not None and again.titled and again.title == "Flaky test hunt" == main_session(file).title


def test_only_the_last_few_files_looks_are_kept(tmp_path: Path) -> None:
    files = []
    for n in range(lines.LOOKED_FILES + 1):
        file = tmp_path / PROJECT / f"{SID[:-1]}{n}.jsonl"
        file.parent.mkdir(parents=True, exist_ok=True)
        append(file, [user(f"task {n}", u(1), None, "2025-11-23T04:53:42Z"), answer(2, "2025-11-23T04:53:45Z")])
        first = main_session(file)
        append(file, [user("go on", u(3), u(2), "2025-11-23T04:54:00Z")])
        assert claude_code.read_from(file, first.tail.resume_at, first.key, first.project) is not None
        files.append(file)
    assert files[0] not in lines._looked and all(file in lines._looked for file in files[1:])
    assert len(lines._looked) <= lines.LOOKED_FILES


def looked_line_by_line(file: Path, end: int) -> tuple[dict[str, int], dict[str, Any], lines.Prefix]:
    builder, prefix = Builder("k", file), lines.Prefix()
    look = lines.Look(file, builder, prefix)
    with file.open("rb") as handle:
        look.lines(handle, 0, end)
    return builder.uuids, vars(builder.titles), prefix


def looked_in_blocks(file: Path, end: int) -> tuple[dict[str, int], dict[str, Any], lines.Prefix]:
    builder = Builder("k", file)
    lines._looked.pop(file, None)
    prefix = lines.read_prefix(file, end, builder)
    assert prefix is not None
    return builder.uuids, vars(builder.titles), prefix


ODD_LINES = [
    b'{"type": "user", "uuid" : "spaced-1", "sessionId":\t"s-2", "message": {"role": "user", "content": "spaced"}}',
    b'{"type":"assistant","message":{"id":"msg_cut","content":[]},"uuid":"cut-3',  # cut off
    b'{"uuid":"first-key-4","type":"user","message":{"role":"user","content":"x"}}',
    b'{"type":"summary","summary":"Flaky tests","leafUuid":"' + u(2).encode() + b'"}',
    b"\xff\xfe not JSON, not UTF-8",
    b'{"type":"user","uuid":"' + b"z" * 300 + b'","message":{"role":"user","content":"a uuid too long to be one"}}',
]


@pytest.mark.parametrize("block_bytes", [lines.BLOCK_BYTES, 64, 300])
def test_a_look_a_block_at_a_time_finds_what_a_look_line_by_line_finds(tmp_path, monkeypatch, block_bytes) -> None:
    monkeypatch.setattr(lines, "BLOCK_BYTES", block_bytes)
    file = tmp_path / PROJECT / f"{SID}.jsonl"
    file.parent.mkdir(parents=True)
    append(file, [user("fix the failing test", u(1), None, "2025-11-23T04:53:42Z"), answer(2, "2025-11-23T04:53:45Z")])
    with file.open("ab") as handle:
        handle.write(b"\n".join(ODD_LINES) + b"\n")
    append(file, [user("now the linter", u(3), u(2), "2025-11-23T04:54:00Z"), answer(4, "2025-11-23T04:54:05Z")])
    samples = Path(__file__).parent.parent / "sample-agent-logs" / "claude-code"
    for path in [file, *sorted(samples.rglob("*.jsonl"))]:
        end = path.stat().st_size
        (uuids, titles, prefix), (one_by_one, titled, by_line) = (
            looked_in_blocks(path, end),
            looked_line_by_line(path, end),
        )
        assert (uuids, titles, prefix.session_ids) == (one_by_one, titled, by_line.session_ids)
        assert by_line.ids <= prefix.ids  # (a block's are those of all its lines)
    uuids, titles, _ = looked_in_blocks(file, file.stat().st_size)
    assert {"spaced-1", "first-key-4", u(3)} <= set(uuids) and titles["summaries"] == [(u(2), "Flaky tests")]
