"""No string stops a run: hostile text in a log of any kind is stored as valid Unicode, and the run goes on.

A lone surrogate (``\\ud800`` escaped in JSON: JavaScript writes one where it cuts a string between
the two halves of an emoji) once reached the secret scanner, which cannot encode it, and a whole
`archivist index` stopped with a UnicodeEncodeError. Text from any reader is made valid Unicode
where it enters (a lone surrogate becomes U+FFFD, told as a problem of the session), before
masking, storing or searching.

For every kind registered (archivist.agents.registry): a copy of the kind's sample in which one
text a session shows (a message's) ends with hostile text, and an untouched copy, indexed in one
run as `archivist index WS --source KIND=HOSTILE --source KIND=UNTOUCHED` indexes them. Then

- the run completes;
- every session of the untouched copy is stored, and every session of the hostile copy but the
  one holding the hostile text; that one too, and a search of its words finds it, where the
  hostile text is one a reader can read (lone surrogates escaped in JSON, NULs, control
  characters: anything but bytes that are not UTF-8);
- every text stored is UTF-8: no lone surrogate, no byte that is not UTF-8;
- a lone surrogate read from a JSON escape is told as a problem.

The hostile text: each of ``CASES`` in the first text of each kind a session shows, then mixes
drawn by hypothesis (tests/fuzzing.py: ``hostile_pieces``) at any such text. A surrogate goes into
JSON as its escape; into a transcript or a database's text column, which cannot hold one, as the
three bytes UTF-8 refuses.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from fuzzing import (
    SURROGATES,
    Change,
    Spot,
    copy_log_sample,
    fresh_workspace,
    hostile_new,
    hostile_pieces,
    log_kinds,
    log_sample,
    not_utf8_stored,
    read_keys,
    sample_keys,
    spots,
    stored_sessions,
    write_changes,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archivist.agents import Session
from archivist.archive import sessions
from archivist.archive.indexer import index_workspace
from archivist.queries.runner import Archive
from archivist.secrets import Masker
from archivist.workspace import archive_path, secret_key

MARK = "zqhostilemark"  # a word no sample holds: the hostile text follows it, and a search finds it
EXAMPLES = 2  # drawn mixes of each kind (the cases below are run for every kind besides)

CASES = {
    # what JSON can hold: lone surrogates (high, low, reversed, a high one ending the string), NUL, controls
    "lone surrogates, NUL and control characters": (
        *(piece for surrogate in SURROGATES for piece in (surrogate, " ")),
        "a\x00b \x01\x07\x08\x0b\x0c\x1b\x1f\x7f \x85\x9f\u2028\u2029\ufeff cut inside an emoji ",
        "\ud83d",
    ),
    "bytes that are not UTF-8": (b"\xff", "x", b"\xc3", "(", b"\xed\xa0\x80", b"\xc0\xaf"),
}


def _marker(number: int) -> str:
    return f"zqmark{number:05d}x"


def _texts(session: Session) -> list[str]:
    return [message.text for message in session.messages]


@functools.cache
def shown_spots(kind: str) -> tuple[Spot, ...]:
    """The texts of the kind's sample that a session shows as a message's text: each file's texts
    (strings holding a space) marked at once and read, and those whose mark a message holds (a
    file whose marks change what is read, as a transcript's headings do: one text at a time)."""
    found: list[Spot] = []
    for file in log_sample(kind).files:
        candidates = spots(kind, file, texts_only=True)
        marks = [(spot, _marker(number)) for number, spot in enumerate(candidates)]
        texts, keys = _read_marked(kind, marks)
        if keys == sample_keys(kind):
            found += [spot for spot, mark in marks if mark in texts]
        else:  # the marks change what is read (a transcript's headings): one text at a time
            found += [spot for spot, mark in marks if mark in _read_marked(kind, [(spot, mark)])[0]]
    return tuple(found)


def _read_marked(kind: str, marks: list[tuple[Spot, str]]) -> tuple[str, frozenset[str]]:
    """The messages' texts and the sessions' keys of a copy of the sample with each mark after its text."""
    with tempfile.TemporaryDirectory(prefix="archivist-shown-") as scratch:
        source = copy_log_sample(kind, Path(scratch))
        write_changes(Path(scratch) / log_sample(kind).folder, kind, [(spot, _appending(mark)) for spot, mark in marks])
        read = list(sessions.module(kind).read(source, []))
    texts = "\n".join(text for session in read for text in _texts(session))
    return texts, frozenset(session.key for session in read)


def _appending(text: str) -> Change:
    """A change that writes ``text`` after a text."""
    return lambda old: hostile_new((), f"{old} {text}")


@functools.cache
def owners(kind: str, spot: Spot) -> frozenset[str]:
    """The sessions a text at ``spot`` belongs to: those whose messages show it once it is marked (and any
    that marking it changes past recognition)."""
    with tempfile.TemporaryDirectory(prefix="archivist-owner-") as scratch:
        source = copy_log_sample(kind, Path(scratch))
        write_changes(Path(scratch) / log_sample(kind).folder, kind, [(spot, _appending(MARK))])
        read = list(sessions.module(kind).read(source, []))
    shown = {session.key for session in read if any(MARK in text for text in _texts(session))}
    return frozenset(shown | (sample_keys(kind) - {session.key for session in read}))


def _lone_surrogate(text: str) -> bool:
    return any("\ud800" <= character <= "\udfff" for character in text)


def check_hostile_text(kind: str, spot: Spot, pieces: tuple[str | bytes, ...]) -> None:
    """The properties of the module's docstring, for ``pieces`` appended to the text at ``spot``."""
    holders = owners(kind, spot)
    assert holders, f"no session of the {kind} sample shows the text at {spot!r}"
    in_json = spot.path is not None  # a JSON document, line or cell: a surrogate is written as its escape
    raw = any(isinstance(piece, bytes) for piece in pieces) or (
        not in_json and any(_lone_surrogate(piece) for piece in pieces if isinstance(piece, str))
    )
    written = "".join(piece for piece in pieces if isinstance(piece, str))
    surrogate = in_json and not raw and _lone_surrogate(json.loads(json.dumps(written)))
    with tempfile.TemporaryDirectory(prefix="archivist-hostile-") as temporary:
        scratch = Path(temporary)
        hostile = copy_log_sample(kind, scratch / "hostile")
        change = [(spot, lambda old: hostile_new(pieces, f"{old} {MARK} "))]
        write_changes(scratch / "hostile" / log_sample(kind).folder, kind, change)
        untouched = copy_log_sample(kind, scratch / "untouched")
        workspace = fresh_workspace(scratch / "workspace")
        summary = index_workspace(workspace, log_sources=[(kind, hostile), (kind, untouched)])

        db_path = archive_path(workspace)
        assert not_utf8_stored(db_path) == []
        stored = stored_sessions(db_path)
        masker = Masker(secret_key(db_path))

        def missing(keys: frozenset[str], source: Path) -> list[str]:
            return sorted(key for key in keys if masker.name(key) not in stored.get(str(source), set()))

        assert missing(sample_keys(kind), untouched) == [], "sessions of the untouched copy not stored"
        assert missing(sample_keys(kind) - holders, hostile) == [], "sessions without the hostile text not stored"
        if not raw:
            assert missing(holders, hostile) == [], "the session holding the hostile text is not stored"
            with Archive.for_workspace(workspace) as archive:
                found = archive.search({"query": MARK, "mode": "keyword"})
            assert found["total"] >= 1, f"a search for {MARK} finds nothing"
        if surrogate:
            reasons = [problem.reason for problem in summary.problems]
            assert any("surrogate" in reason for reason in reasons), f"the lone surrogate is not told: {reasons}"


def test_every_kind_has_texts_the_hostile_text_reaches() -> None:
    for kind in log_kinds():
        assert shown_spots(kind), f"no text of the {kind} sample shows as a message: nothing reached"
        assert all(owners(kind, spot) for spot in shown_spots(kind)[:1]), kind


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kind", log_kinds())
def test_each_hostile_text_in_each_kind(kind: str, case: str) -> None:
    check_hostile_text(kind, shown_spots(kind)[0], CASES[case])


@pytest.mark.parametrize("kind", log_kinds())
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_hostile_text_anywhere_a_session_shows_text(kind: str, data: st.DataObject) -> None:
    spot = data.draw(st.sampled_from(shown_spots(kind)), label="spot")
    pieces = data.draw(hostile_pieces(), label="pieces")
    check_hostile_text(kind, spot, pieces)


# The line of the report: `archivist index ws --source claude-code=DIR` stopped with a traceback.
LONE_SURROGATE_LINE = (
    '{"type":"user","sessionId":"s1","uuid":"u1","parentUuid":null,"timestamp":"2025-11-24T09:00:01Z",'
    '"cwd":"/p","message":{"role":"user","content":"lone \\ud800 x"}}\n'
)
GOOD_LINE = (
    '{"type":"user","sessionId":"s0","uuid":"u0","parentUuid":null,"timestamp":"2025-11-24T08:00:01Z",'
    '"cwd":"/p","message":{"role":"user","content":"a good question"}}\n'
)


def test_a_lone_surrogate_in_a_claude_code_line_is_indexed_from_the_command_line(tmp_path: Path) -> None:
    from archivist.cli import cli

    logs = tmp_path / "projects"
    (logs / "-p").mkdir(parents=True)
    (logs / "-p" / "s0.jsonl").write_text(GOOD_LINE, encoding="utf-8")
    (logs / "-p" / "s1.jsonl").write_text(LONE_SURROGATE_LINE, encoding="utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = CliRunner().invoke(cli, ["index", str(workspace), "--source", f"claude-code={logs}"])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "UnicodeEncodeError" not in result.output, result.output
    connection = sqlite3.connect(archive_path(workspace))
    try:
        texts = sorted(text for (text,) in connection.execute("SELECT text FROM messages"))
        reasons = [reason for (reason,) in connection.execute("SELECT reason FROM problems")]
    finally:
        connection.close()
    assert texts == ["a good question", "lone \ufffd x"]
    assert any("surrogate" in reason for reason in reasons), reasons
    assert not_utf8_stored(archive_path(workspace)) == []


def test_the_hostile_copy_is_read_as_the_sample_where_nothing_hostile_is_written() -> None:
    """The check's premise: a text marked but not made hostile leaves every session read as before."""
    for kind in log_kinds():
        spot = shown_spots(kind)[0]
        with tempfile.TemporaryDirectory() as scratch:
            source = copy_log_sample(kind, Path(scratch))
            write_changes(Path(scratch) / log_sample(kind).folder, kind, [(spot, _appending(MARK))])
            assert read_keys(kind, source) == set(sample_keys(kind)), kind
