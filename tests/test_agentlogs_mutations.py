"""The readers of agent logs under damage: each kind's sample logs, mutated by hypothesis.

A property per kind: a copy of the kind's sample logs is damaged once (cut short, a deeply
nested line, a huge string, a value of the wrong type, bytes that are not UTF-8, lines or
conversations reordered, a database row changed or deleted; in markdown, where there are no
types, lines of the grammar out of place), and reading it

- never raises (RecursionError and MemoryError included), nor runs for long: a pattern that
  scans again and again is stopped after ``READ_SECONDS`` (a reader stuck for hours on one
  line loses everything after it as surely as one that raises);
- keeps the good records before the damage.

"Before the damage" is what a reader was given before it met anything damaged:

- for a text log (JSONL, a pretty-printed JSON document, markdown), the lines before the
  first line the damage changed. The reference is what ``read`` gives for the file cut to
  those lines; each of its sessions must be read from the damaged file too, under the same
  key, with its messages in order (matched on role and text), all but its last, which the
  lines after the cut may continue;
- for an export (one JSON list of conversations), the conversations before the damaged
  one, read whole; where the damage leaves the rest of the list valid JSON, those after it
  too;
- for llm's database, every conversation the damaged row does not belong to, read exactly
  as before.

Huge lines that made a reader's patterns scan for hours (one found by this damage, the others
by trying each pattern the readers match on a text) are cases of their own (``HOSTILE_LINES``).

Each example works in a fresh temporary folder (hypothesis does not reset pytest's
``tmp_path`` between examples). A failure prints the blob that reproduces it
(``@reproduce_failure``); ``ARCHIVIST_MUTATION_EXAMPLES`` sets a longer run.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import json
import os
import shutil
import signal
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archivist.agents import (
    Session,
    aider,
    chatgpt_export,
    claude_code,
    claude_export,
    codex,
    gemini_cli,
    llm_logs,
    specstory,
)

SAMPLES = Path(__file__).resolve().parent.parent / "sample-agent-logs"

LONG_RUN = os.environ.get("ARCHIVIST_MUTATION_EXAMPLES")  # e.g. 3000 for a long run; the suite's is short


def examples(count: int) -> settings:
    """Hypothesis settings for ``count`` examples (``ARCHIVIST_MUTATION_EXAMPLES`` instead, where set)."""
    return settings(
        max_examples=int(LONG_RUN) if LONG_RUN else count,
        deadline=None,
        database=None,  # nothing written into the repository; a failure prints its blob instead
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )


# Examples per test: the whole file runs in some 20 s (a long run finds more: see LONG_RUN).
TEXT_EXAMPLES = 150
EXPORT_EXAMPLES = 40  # per kind of damage
LLM_EXAMPLES = 400

MB = 1024 * 1024
MAX_BRACKETS = 100_000  # a line of nothing but openers: far past any parser's recursion limit
MAX_NESTED_LINES = 20_000  # lines of a markdown opener never closed
# Valid JSON nested past MAX_DEPTH, up to past Python's recursion limit (which hypothesis
# raises by some 2,000 frames while a test runs: at 1,000 the parser would stop sooner).
DEEP_LEVELS = (150, 5_000)
HUGE_MB = (1, 3)
# Pieces a huge string is made of: plain text, and what parsers and regular expressions look for
# (each kind adds the markers of its own grammar).
HUGE_PIECES = ("x", " ", "a b ", "\t", "\n", "\\", '"', "(", ")", "<", ">", "`", "*", "#", "é", "😀", "{[", "</")
# Bytes that are never UTF-8: a lone continuation byte, a lead byte cut short, a surrogate, an overlong form.
INVALID_UTF8 = (b"\x80", b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf8\x88\x80\x80\x80", b"\xfe")
DEEP_MARK = "\x00deep\x00"  # stands for a deeply nested value until the text is written (json.dumps would recurse)


# --- damage ------------------------------------------------------------------------------


class Damage:
    """What a mutation did (shown when an example fails) and the damaged bytes (not shown: they can be MBs)."""

    def __init__(self, what: str, data: bytes) -> None:
        self.what = what
        self.data = data

    def __repr__(self) -> str:
        return self.what


def split_lines(data: bytes) -> list[bytes]:
    """The lines of ``data`` as the readers split them (on ``\\n`` only), each with its newline."""
    pieces = data.split(b"\n")
    lines = [piece + b"\n" for piece in pieces[:-1]]
    return lines + [pieces[-1]] if pieces[-1] else lines


def first_difference(before: list[bytes], after: list[bytes]) -> int:
    """The index of the first line of ``before`` that ``after`` does not have as it was."""
    for index, (old, new) in enumerate(zip(before, after)):
        if old != new:
            return index
    return min(len(before), len(after))


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (its root first), as the keys and indexes that lead there."""
    found = [prefix]
    children: Iterable[tuple[Any, Any]] = ()
    if isinstance(value, dict):
        children = value.items()
    elif isinstance(value, list):
        children = enumerate(value)
    for key, child in children:
        found.extend(paths(child, (*prefix, key)))
    return found


def at(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """A copy of ``value`` with what is at ``path`` replaced by ``new``."""
    if not path:
        return new
    result = copy.deepcopy(value)
    at(result, path[:-1])[path[-1]] = new
    return result


def deep_text(levels: int, opener: str) -> str:
    """A JSON value nested ``levels`` deep: ``[[[0]]]`` or ``{"a": {"a": 0}}``."""
    if opener == "[":
        return "[" * levels + "0" + "]" * levels
    return '{"a": ' * levels + "0" + "}" * levels


def dumps(value: Any, deep: str = "", indent: int | None = None) -> str:
    """``value`` as JSON, with the deeply nested value ``deep`` where ``DEEP_MARK`` is."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return text.replace(json.dumps(DEEP_MARK), deep) if deep else text


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
JSON_VALUES = st.one_of(
    JSON_SCALARS,
    st.lists(JSON_SCALARS, max_size=3),
    st.dictionaries(st.text(max_size=8), JSON_SCALARS, max_size=3),
)


@st.composite
def other_typed(draw: st.DrawFn, old: Any) -> Any:
    """A JSON value of another type than ``old``."""
    return draw(JSON_VALUES.filter(lambda new: json_type(new) != json_type(old)))


@st.composite
def huge_string(draw: st.DrawFn, pieces: tuple[str, ...] = (), newlines: bool = True) -> str:
    """A string of a few MB: a piece, then a unit of a few pieces repeated, then a piece.

    The pieces are ``HUGE_PIECES`` and ``pieces`` (what a reader looks for): a pattern that
    reads the rest of the text from each of many openings, or tries every way to split a long
    run, takes hours on such a string.
    """
    choices = tuple(piece for piece in (*HUGE_PIECES, *pieces) if newlines or "\n" not in piece)
    head = draw(st.sampled_from(("", *choices)))
    unit = "".join(draw(st.lists(st.sampled_from(choices), min_size=1, max_size=3)))
    tail = draw(st.sampled_from(("", *choices)))
    size = draw(st.integers(*HUGE_MB)) * MB
    return head + unit * (size // len(unit)) + tail


READ_SECONDS = 30  # a read of a few MB takes well under a second; a pattern gone quadratic, hours


class TooSlow(AssertionError):
    """A read that went on past ``READ_SECONDS``."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Stop what runs inside after ``seconds`` (a stuck regular expression too: it checks for signals).

    Where there is no SIGALRM, or off the main thread, nothing is timed.
    """
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield
        return
    expired = []

    def stop(_signal: int, _frame: object) -> None:
        expired.append(True)
        raise TooSlow(f"reading took over {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    # A reader that catches every exception of a record may have swallowed the one raised.
    assert not expired, f"reading took over {seconds} s"


def read_all(module: ModuleType, path: Path) -> list[Session]:
    """Every session of a source, read to the end: any exception, or a read past ``READ_SECONDS``, fails."""
    problems: list[str] = []
    with time_limit(READ_SECONDS):
        return list(module.read(path, problems))


# --- text logs (JSONL, a JSON document, markdown) ---------------------------------------------


@dataclass(frozen=True)
class TextKind:
    """A kind whose logs are text files: where its sample is, and how its reader may differ."""

    module: ModuleType
    folder: str  # the kind's folder in sample-agent-logs, copied whole
    source: str  # the source read, in that folder
    targets: tuple[str, ...]  # glob patterns of the files a mutation damages, in that folder
    form: str  # "jsonl", "document" (one pretty-printed JSON document) or "markdown"
    markers: tuple[str, ...] = ()  # lines of the kind's grammar, put where they do not belong
    pieces: tuple[str, ...] = ()  # what its reader looks for in a text, for huge strings
    # Whether later lines may add text to an earlier message (not only to the last one).
    continued: bool = False

    def files(self) -> list[str]:
        base = SAMPLES / self.folder
        found = sorted({path for pattern in self.targets for path in base.glob(pattern)})
        assert found, f"no sample file for {self.module.KIND}"
        return [path.relative_to(base).as_posix() for path in found]


CLAUDE_CODE = TextKind(
    claude_code,
    "claude-code",
    "projects",
    ("projects/*/*.jsonl", "projects/*/*/subagents/*.jsonl"),
    "jsonl",
    pieces=("<command-name>", "</command-name>", "<command-args>", "<local-command-stdout>", "agentId: "),
    # An assistant response is written over several lines sharing its message.id, and a line
    # of that id read later (a reordered one) adds its text to the response, wherever it is.
    continued=True,
)
CODEX = TextKind(
    codex,
    "codex",
    "sessions",
    ("sessions/**/*.jsonl",),
    "jsonl",
    pieces=(
        "<environment_context>",
        "<user_instructions>",
        "<cwd>",
        "<user_shell_command>",
        "<command>",
        "</command>",
        "<result>",
        "*** Begin Patch\n",
        "*** Add File: ",
        "a_b ",
    ),
)
GEMINI_CLI = TextKind(gemini_cli, "gemini-cli", "tmp", ("tmp/*/chats/*.json",), "document")
AIDER = TextKind(
    aider,
    "aider",
    ".",
    (".aider.chat.history.md",),
    "markdown",
    markers=(
        "# aider chat started at 2025-01-01 00:00:00",
        "#### ",
        "####",
        "#### /run ls",
        "#### !ls",
        "> ",
        ">",
        "> Tokens: 1k sent, 2 received.",
        "> Main model: x with diff edit format",
        "> Added a.py to the chat.",
        "```",
        "````python",
        "~~~",
        "<source>",
        "</source>",
    ),
    pieces=("#### ", "> ", "```", "Added ", " to the chat", "Running "),
)
SPECSTORY = TextKind(
    specstory,
    "specstory",
    ".",
    (".specstory/history/*.md",),
    "markdown",
    markers=(
        "_**User**_",
        "_**Assistant**_",
        "_**Agent (model x 2025-01-01 00:00Z)**_",
        "_**Agent - sidechain**_",
        "---",
        "```",
        "~~~~",
        "<think>",
        "</think>",
        "<details>",
        "<details><summary>Thought Process</summary>",
        "<summary>Tool use: **x**</summary>",
        "</details>",
        '<tool-use data-tool-name="x" data-tool-type="shell">',
        "</tool-use>",
        "Tool use: **x**",
        "<!-- a comment -->",
        "# A title (2025-01-01 00:00Z)",
        "<!-- Generated by SpecStory -->",
        "<!-- cursor Session 1234 (2025-01-01 00:00Z) -->",
    ),
    pieces=(
        "<summary>",
        "</summary>",
        "</details>",
        "</think>",
        "<!-- ",
        "Session ",
        "Read file: ",
        "```bash\n",
        "_**",
    ),
)


@st.composite
def cut(draw: st.DrawFn, data: bytes) -> Damage:
    at_byte = draw(st.integers(0, max(0, len(data) - 1)))
    return Damage(f"cut at byte {at_byte}", data[:at_byte])


@st.composite
def inserted_line(draw: st.DrawFn, data: bytes, line: bytes, what: str) -> Damage:
    lines = split_lines(data)
    index = draw(st.integers(0, len(lines)))
    before = lines[:index]
    if before and not before[-1].endswith(b"\n"):
        before[-1] += b"\n"
    return Damage(f"{what} inserted as line {index}", b"".join([*before, line, *lines[index:]]))


@st.composite
def brackets(draw: st.DrawFn, data: bytes) -> Damage:
    count = draw(st.integers(1, MAX_BRACKETS))
    opener = draw(st.sampled_from(["[", "{", '{"a":', '[{"a":']))
    return draw(inserted_line(data, (opener * count).encode() + b"\n", f"{count} × {opener!r}"))


@st.composite
def invalid_utf8(draw: st.DrawFn, data: bytes) -> Damage:
    offset = draw(st.integers(0, len(data)))
    bad = draw(st.sampled_from(INVALID_UTF8))
    return Damage(f"{bad!r} inserted at byte {offset}", data[:offset] + bad + data[offset:])


@st.composite
def reordered(draw: st.DrawFn, data: bytes) -> Damage:
    lines = split_lines(data)
    index = draw(st.integers(0, max(0, len(lines) - 1)))
    rest = [line if line.endswith(b"\n") else line + b"\n" for line in lines[index:]]
    shuffled = draw(st.permutations(rest))
    return Damage(f"lines from {index} reordered", b"".join([*lines[:index], *shuffled]))


@st.composite
def changed_json_line(draw: st.DrawFn, data: bytes, how: str, pieces: tuple[str, ...] = ()) -> Damage:
    """A JSON line of a JSONL file with one value replaced: of another type, a huge string, nested deeply."""
    lines = split_lines(data)
    candidates = []
    for index, line in enumerate(lines):
        try:
            candidates.append((index, json.loads(line)))
        except ValueError:
            continue
    index, record = draw(st.sampled_from(candidates))
    text, what = draw(changed_value(record, how, pieces=pieces))
    end = b"\n" if lines[index].endswith(b"\n") else b""
    return Damage(f"line {index}: {what}", b"".join([*lines[:index], text.encode() + end, *lines[index + 1 :]]))


@st.composite
def changed_document(draw: st.DrawFn, data: bytes, how: str, pieces: tuple[str, ...] = ()) -> Damage:
    """A pretty-printed JSON document (written as the sample is) with one value replaced."""
    document = json.loads(data)
    assert dumps(document, indent=2) + "\n" == data.decode(), "the sample is not written as json.dumps(indent=2)"
    text, what = draw(changed_value(document, how, indent=2, pieces=pieces))
    return Damage(what, (text + "\n").encode())


@st.composite
def changed_value(
    draw: st.DrawFn, value: Any, how: str, indent: int | None = None, pieces: tuple[str, ...] = ()
) -> tuple[str, str]:
    """``value`` as JSON text with one place changed ``how``, and a description."""
    places = paths(value)
    texts = [place for place in places if isinstance(at(value, place), str)]
    if how == "huge" and len(texts) > 0 and draw(st.booleans()):
        places = texts  # half the time in place of a text, where the readers look for things
    place = draw(st.sampled_from(places))
    if how == "type":
        new = draw(other_typed(at(value, place)))
        return dumps(replaced(value, place, new), indent=indent), f"{list(place)} = {new!r}"
    if how == "huge":
        huge = draw(huge_string(pieces))
        return dumps(replaced(value, place, huge), indent=indent), f"{list(place)} = {_huge_shown(huge)}"
    levels = draw(st.integers(*DEEP_LEVELS))
    opener = draw(st.sampled_from("[{"))
    text = dumps(replaced(value, place, DEEP_MARK), deep_text(levels, opener), indent=indent)
    return text, f"{list(place)} nested {levels} levels deep"


def _huge_shown(huge: str) -> str:
    return f"a string of {len(huge)} chars: {huge[:40]!r}…{huge[-20:]!r}"


@st.composite
def markdown_lines(draw: st.DrawFn, data: bytes, kind: TextKind) -> Damage:
    """Lines of the grammar where they do not belong: a marker, many nested openers, or a huge line."""
    how = draw(st.sampled_from(["marker", "nested", "huge", "text"]))
    if how == "marker":
        marker = draw(st.sampled_from(kind.markers))
        return draw(inserted_line(data, marker.encode() + b"\n", repr(marker)))
    if how == "nested":
        opener = draw(st.sampled_from([marker for marker in kind.markers if not marker.startswith("</")]))
        count = draw(st.integers(1, MAX_NESTED_LINES))
        return draw(inserted_line(data, (opener + "\n").encode() * count, f"{count} × {opener!r}"))
    if how == "huge":
        huge = draw(huge_string(kind.markers + kind.pieces, newlines=False))
        return draw(inserted_line(data, (huge + "\n").encode(), _huge_shown(huge)))
    line = draw(st.text(max_size=80).map(lambda text: text.replace("\n", " ").replace("\r", " ")))
    return draw(inserted_line(data, (line + "\n").encode(), repr(line)))


def text_damages(kind: TextKind, data: bytes) -> st.SearchStrategy[Damage]:
    common = [cut(data), brackets(data), invalid_utf8(data), reordered(data)]
    if kind.form == "markdown":
        return st.one_of(*common, markdown_lines(data, kind))
    change = changed_document if kind.form == "document" else changed_json_line
    deep = change(data, "deep")
    if kind.form == "jsonl":  # a whole line of valid JSON nested deeply, put between the lines
        deep = st.one_of(deep, deep_line(data))
    return st.one_of(*common, change(data, "type"), change(data, "huge", kind.pieces), deep)


@st.composite
def deep_line(draw: st.DrawFn, data: bytes) -> Damage:
    levels = draw(st.integers(*DEEP_LEVELS))
    line = dumps({"type": "user", "message": DEEP_MARK}, deep_text(levels, draw(st.sampled_from("[{"))))
    return draw(inserted_line(data, line.encode() + b"\n", f"a line nested {levels} levels deep"))


def copy_sample(kind_folder: str, into: Path) -> Path:
    target = into / kind_folder
    shutil.copytree(SAMPLES / kind_folder, target)
    return target


def in_order(wanted: list[tuple[str, str]], found: list[tuple[str, str]], continued: bool) -> bool:
    """Whether ``wanted`` is a subsequence of ``found`` (where responses are ``continued``, an assistant's
    text read further starts with the text read before)."""
    rest = iter(found)
    for role, text in wanted:
        grown = continued and role == "assistant"
        for other_role, other_text in rest:
            if other_role == role and (other_text == text or (grown and other_text.startswith(text))):
                break
        else:
            return False
    return True


def assert_kept(reference: list[Session], damaged: list[Session], continued: bool) -> None:
    found = {session.key: session for session in damaged}
    for session in reference:
        assert session.key in found, f"session {session.key} is lost: read {sorted(found)}"
        wanted = [(message.role, message.text) for message in session.messages[:-1]]
        have = [(message.role, message.text) for message in found[session.key].messages]
        assert in_order(wanted, have, continued), (
            f"session {session.key} lost messages before the damage:\nwanted {wanted}\nread {have}"
        )


def check_text_kind(kind: TextKind, data: st.DataObject) -> None:
    target = data.draw(st.sampled_from(kind.files()), label="file")
    original = (SAMPLES / kind.folder / target).read_bytes()
    damage = data.draw(text_damages(kind, original), label="damage")
    lines = split_lines(original)
    kept = b"".join(lines[: first_difference(lines, split_lines(damage.data))])
    with tempfile.TemporaryDirectory() as temporary:
        reference_copy = copy_sample(kind.folder, Path(temporary) / "reference")
        (reference_copy / target).write_bytes(kept)
        damaged_copy = copy_sample(kind.folder, Path(temporary) / "damaged")
        (damaged_copy / target).write_bytes(damage.data)
        reference = read_all(kind.module, reference_copy / kind.source)
        damaged = read_all(kind.module, damaged_copy / kind.source)
    assert_kept(reference, damaged, kind.continued)


@examples(TEXT_EXAMPLES)
@given(st.data())
def test_a_damaged_claude_code_session_keeps_every_message_before_the_damage(data: st.DataObject) -> None:
    check_text_kind(CLAUDE_CODE, data)


@examples(TEXT_EXAMPLES)
@given(st.data())
def test_a_damaged_codex_rollout_keeps_every_message_before_the_damage(data: st.DataObject) -> None:
    check_text_kind(CODEX, data)


@examples(TEXT_EXAMPLES)
@given(st.data())
def test_a_damaged_gemini_cli_session_keeps_every_message_before_the_damage(data: st.DataObject) -> None:
    check_text_kind(GEMINI_CLI, data)


@examples(TEXT_EXAMPLES)
@given(st.data())
def test_a_damaged_aider_history_keeps_every_message_before_the_damage(data: st.DataObject) -> None:
    check_text_kind(AIDER, data)


@examples(TEXT_EXAMPLES)
@given(st.data())
def test_a_damaged_specstory_transcript_keeps_every_message_before_the_damage(data: st.DataObject) -> None:
    check_text_kind(SPECSTORY, data)


# Lines that once made a reader scan the rest of a text again and again (from each of many
# openings, or for each way to split a long run of spaces): each took hours.
HOSTILE_CHARS = 1_000_000
HOSTILE_SECONDS = 10  # what a read of one of these may take (it takes well under a second)


def _claude_user(text: str) -> bytes:
    record = {"type": "user", "uuid": "hostile", "sessionId": "s", "message": {"role": "user", "content": text}}
    return json.dumps(record).encode() + b"\n"


def _codex_user(text: str) -> bytes:
    content = [{"type": "input_text", "text": text}]
    payload = {"type": "message", "role": "user", "content": content}
    return (
        json.dumps({"timestamp": "2025-11-20T10:15:00Z", "type": "response_item", "payload": payload}).encode() + b"\n"
    )


def _codex_call(arguments: dict[str, str]) -> bytes:
    payload = {"type": "function_call", "name": "apply_patch", "arguments": json.dumps(arguments)}
    return (
        json.dumps({"timestamp": "2025-11-20T10:15:00Z", "type": "response_item", "payload": payload}).encode() + b"\n"
    )


def _spaced(before: str, after: str) -> str:
    return before + " " * HOSTILE_CHARS + after


def _many(opening: str, before: str = "", after: str = "") -> str:
    return before + opening * (HOSTILE_CHARS // len(opening)) + after


HOSTILE_LINES = [
    pytest.param(CLAUDE_CODE, 3, _claude_user(_many("<command-name>")), id="claude-code-command-names-never-closed"),
    pytest.param(
        CLAUDE_CODE,
        3,
        _claude_user(_many("<command-args>", after="<command-name>x</command-name>")),
        id="claude-code-command-args-never-closed",
    ),
    pytest.param(CODEX, 3, _codex_user(_many(" a", before="<a")), id="codex-a-tag-name-of-many-words"),
    pytest.param(
        CODEX,
        3,
        _codex_user(_many("</command>", before="<user_shell_command><command>")),
        id="codex-a-shell-command-of-many-ends",
    ),
    pytest.param(
        CODEX,
        3,
        _codex_user(_many("<result>", "<user_shell_command><command>ls</command>", "</user_shell_command>")),
        id="codex-shell-results-never-closed",
    ),
    pytest.param(CODEX, 3, _codex_user(_many("<cwd>", before="<environment_context>")), id="codex-cwds-never-closed"),
    pytest.param(
        CODEX,
        3,
        _codex_call({"input": _spaced("*** Begin Patch\n*** Add File: a", "b")}),
        id="codex-a-patched-file-name-of-many-spaces",
    ),
    pytest.param(SPECSTORY, 0, _spaced("# a", "b").encode() + b"\n", id="specstory-a-heading-of-many-spaces"),
    pytest.param(
        SPECSTORY,
        0,
        _spaced("# a", "(2025-01-01 00:00Z)").encode() + b"\n",
        id="specstory-a-dated-heading-of-many-spaces",
    ),
    pytest.param(SPECSTORY, 0, _spaced("<!-- a", "b -->").encode() + b"\n", id="specstory-a-comment-of-many-spaces"),
    pytest.param(
        SPECSTORY,
        42,
        b"Tool use: **read_file**\n\n" + _spaced("Read file: a", "b").encode() + b"\n",
        id="specstory-a-file-name-of-many-spaces",
    ),
    pytest.param(SPECSTORY, 42, b"<details>\n" * 20_000, id="specstory-details-never-closed"),
    pytest.param(
        SPECSTORY, 42, _many("<summary>", before="<details>").encode() + b"\n", id="specstory-summaries-never-closed"
    ),
    pytest.param(
        SPECSTORY, 42, _many("</think>", "<think>", "x").encode() + b"\n", id="specstory-closing-tags-then-text"
    ),
]


@pytest.mark.parametrize(("kind", "line", "hostile"), HOSTILE_LINES)
def test_a_hostile_line_does_not_make_a_reader_scan_for_hours(kind: TextKind, line: int, hostile: bytes) -> None:
    target = kind.files()[0]
    with tempfile.TemporaryDirectory() as temporary:
        copied = copy_sample(kind.folder, Path(temporary))
        lines = split_lines((copied / target).read_bytes())
        (copied / target).write_bytes(b"".join([*lines[:line], hostile, *lines[line:]]))
        with time_limit(HOSTILE_SECONDS):
            sessions = list(kind.module.read(copied / kind.source, []))
    assert sessions


# --- exports (one JSON list of conversations) ------------------------------------------------


@dataclass(frozen=True)
class ExportKind:
    module: ModuleType
    folder: str
    keys: tuple[str, ...]  # the fields that make a conversation another one (its key)


CLAUDE_EXPORT = ExportKind(claude_export, "claude-export", ("uuid",))
CHATGPT_EXPORT = ExportKind(chatgpt_export, "chatgpt-export", ("conversation_id", "id"))
EXPORT_FILE = "conversations.json"


@functools.cache
def export_items(kind: ExportKind) -> tuple[str, ...]:
    """The sample's conversations and as many copies under other keys: a list long enough to
    have conversations before and after the damaged one (each as its JSON text)."""
    items = json.loads((SAMPLES / kind.folder / EXPORT_FILE).read_bytes())
    copies = []
    for item in items:
        twin = copy.deepcopy(item)
        for key in kind.keys:
            if isinstance(twin.get(key), str):
                twin[key] += "-copy"
        copies.append(twin)
    return tuple(dumps(item) for item in items + copies)


def export_text(items: list[str]) -> tuple[bytes, list[tuple[int, int]]]:
    """A conversations file of ``items``, one a line, and where each one's bytes are."""
    data, spans = b"[\n", []
    for index, item in enumerate(items):
        encoded = item.encode()
        spans.append((len(data), len(data) + len(encoded)))
        data += encoded + (b",\n" if index < len(items) - 1 else b"\n")
    return data + b"]\n", spans


class ExportDamage(Damage):
    """A damaged conversations file: which conversation is damaged, and what is left of the others."""

    def __init__(self, what: str, index: int, data: bytes, rest_valid: bool, order: tuple[int, ...] = ()) -> None:
        super().__init__(what, data)
        self.index = index  # the conversation damaged
        self.rest_valid = rest_valid  # whether the conversations after it are still valid JSON
        self.order = order  # the conversations' order in the damaged file, where it changed


@st.composite
def export_damage(draw: st.DrawFn, items: tuple[str, ...], how: str) -> ExportDamage:
    index = draw(st.integers(0, len(items) - 1))
    item = json.loads(items[index])
    changed = list(items)
    if how == "brackets":
        levels = draw(st.integers(1, MAX_BRACKETS))
        changed[index] = deep_text(levels, draw(st.sampled_from("[{")))
        what = f"conversation {index} is {levels} levels of nesting"
    elif how in ("type", "huge", "deep"):
        changed[index], what = draw(changed_value(item, how))
        what = f"conversation {index}: {what}"
    elif how == "reorder":
        order = tuple(range(index)) + tuple(draw(st.permutations(range(index, len(items)))))
        data, _ = export_text([items[position] for position in order])
        return ExportDamage(f"conversations from {index} reordered as {order}", index, data, True, order)
    else:
        data, spans = export_text(list(items))
        start, end = spans[index]
        offset = draw(st.integers(start, end - 1))
        if how == "cut":
            return ExportDamage(f"cut in conversation {index} at byte {offset}", index, data[:offset], False)
        bad = draw(st.sampled_from(INVALID_UTF8))
        damaged = data[:offset] + bad + data[offset:]
        return ExportDamage(f"{bad!r} in conversation {index} at byte {offset}", index, damaged, False)
    data, _ = export_text(changed)
    return ExportDamage(what, index, data, True)


def export_key(kind: ExportKind, item: dict[str, Any]) -> str:
    return next(item[key] for key in kind.keys if isinstance(item.get(key), str) and item[key])


def check_export_kind(kind: ExportKind, how: str, data: st.DataObject) -> None:
    items = export_items(kind)
    damage = data.draw(export_damage(items, how), label="damage")
    keys = [export_key(kind, json.loads(item)) for item in items]
    with tempfile.TemporaryDirectory() as temporary:
        reference_copy = copy_sample(kind.folder, Path(temporary) / "reference")
        (reference_copy / EXPORT_FILE).write_bytes(export_text(list(items))[0])
        damaged_copy = copy_sample(kind.folder, Path(temporary) / "damaged")
        (damaged_copy / EXPORT_FILE).write_bytes(damage.data)
        reference = {session.key: session for session in read_all(kind.module, reference_copy)}
        damaged = {session.key: session for session in read_all(kind.module, damaged_copy)}
    whole = keys[: damage.index]
    if damage.order:
        whole = keys  # reordered, every conversation is whole
    elif damage.rest_valid:
        whole = whole + keys[damage.index + 1 :]
    for key in whole:
        if key not in reference:
            continue  # a conversation the reader yields nothing for
        assert key in damaged, f"conversation {key} is lost: read {sorted(damaged)}"
        assert damaged[key].messages == reference[key].messages, f"conversation {key} is not read whole"


EXPORT_DAMAGES = ["cut", "utf8", "type", "reorder", "huge", "deep", "brackets"]


@pytest.mark.parametrize("how", EXPORT_DAMAGES)
@examples(EXPORT_EXAMPLES)
@given(data=st.data())
def test_a_damaged_claude_export_keeps_every_conversation_before_the_damage(how: str, data: st.DataObject) -> None:
    check_export_kind(CLAUDE_EXPORT, how, data)


@pytest.mark.parametrize("how", EXPORT_DAMAGES)
@examples(EXPORT_EXAMPLES)
@given(data=st.data())
def test_a_damaged_chatgpt_export_keeps_every_conversation_before_the_damage(how: str, data: st.DataObject) -> None:
    check_export_kind(CHATGPT_EXPORT, how, data)


# --- llm's database ------------------------------------------------------------------------------

# Rows of llm up to 0.35 added to the sample (which holds only the 0.36 message tree), and a
# thread whose first message refers to a fragment: every table the reader reads has rows.
LEGACY_ROWS: dict[str, list[dict[str, Any]]] = {
    "conversations": [
        {"id": "conv-a", "name": "Cheesecakes", "model": "gpt-4o-mini"},
        {"id": "conv-b", "name": None, "model": "gpt-4o"},
    ],
    "fragments": [
        {"id": 1, "hash": "h1", "content": "Name ten cheesecakes."},
        {"id": 2, "hash": "h2", "content": "You are a baker."},
    ],
    "responses": [
        {
            "id": "r1",
            "model": "gpt-4o-mini",
            "prompt": "Ten names for cheesecakes",
            "system": "You are a baker",
            "response": "1. Cheesy Delight",
            "conversation_id": "conv-a",
            "datetime_utc": "2025-05-20T18:45:12",
        },
        {
            "id": "r2",
            "model": "gpt-4o-mini",
            "response": "Delight, Bliss",
            "reasoning": "Shorter names.",
            "conversation_id": "conv-a",
            "datetime_utc": "2025-05-20T18:46:00",
        },
        {
            "id": "r3",
            "model": "gpt-4o",
            "prompt": "What time is it?",
            "response": "",
            "conversation_id": "conv-b",
            "datetime_utc": "2025-05-21T09:00:00",
        },
        {
            "id": "r4",
            "model": "gpt-4o",
            "response": "09:00.",
            "conversation_id": "conv-b",
            "datetime_utc": "2025-05-21T09:00:02",
        },
        {"id": "r5", "model": "gpt-4o", "prompt": "Alone", "response": "Alone.", "datetime_utc": "2025-05-23T11:00:00"},
    ],
    "prompt_fragments": [{"response_id": "r2", "fragment_id": 1, "order": 0}],
    "system_fragments": [{"response_id": "r2", "fragment_id": 2, "order": 0}],
    "tool_calls": [
        {"response_id": "r3", "name": "clock", "arguments": '{"command": "date -u", "path": "/etc/localtime"}'},
    ],
    "tool_results": [{"response_id": "r4", "name": "clock", "output": "09:00", "exception": None}],
    "messages": [
        {"hash": "b2:ref-user", "parent_hash": None, "role": "user"},
        {"hash": "b2:ref-answer", "parent_hash": "b2:ref-user", "role": "assistant"},
    ],
    "parts": [
        {
            "message_hash": "b2:ref-user",
            "position": 0,
            "type": "text",
            "payload": '{"text_ref": [{"literal": "Please: "}, {"fragment": 1}]}',
        },
        {"message_hash": "b2:ref-answer", "position": 0, "type": "reasoning", "text": "Easy."},
        {"message_hash": "b2:ref-answer", "position": 1, "type": "text", "text": "Done."},
    ],
    "threads": [{"id": "thread-ref", "name": None, "tip_message_hash": "b2:ref-answer"}],
    "turns": [
        {
            "id": "turn-ref",
            "thread_id": "thread-ref",
            "parent_message_hash": "b2:ref-user",
            "tip_message_hash": "b2:ref-answer",
            "model": "gpt-4.1",
            "datetime_utc": "2025-06-02T08:00:00+00:00",
        }
    ],
}
READ_TABLES = (
    "conversations",
    "responses",
    "tool_calls",
    "tool_results",
    "fragments",
    "prompt_fragments",
    "system_fragments",
    "threads",
    "turns",
    "messages",
    "parts",
)
JSON_COLUMNS = {("parts", "payload"), ("tool_calls", "arguments")}


@functools.cache
def llm_database() -> bytes:
    """The sample's logs.db with the rows above, as bytes (each example writes its own copy)."""
    with tempfile.TemporaryDirectory() as temporary:
        path = Path(temporary) / "logs.db"
        shutil.copyfile(SAMPLES / "llm" / "logs.db", path)
        connection = sqlite3.connect(path)
        with connection:
            # Full-text triggers only slow the damage down: the reader never reads those tables.
            for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
                connection.execute(f'DROP TRIGGER "{name}"')
            for table, rows in LEGACY_ROWS.items():
                for row in rows:
                    columns = ", ".join(f'"{column}"' for column in row)
                    marks = ", ".join("?" * len(row))
                    connection.execute(f'INSERT INTO "{table}" ({columns}) VALUES ({marks})', list(row.values()))
        connection.close()
        return path.read_bytes()


@functools.cache
def llm_reference() -> dict[str, Session]:
    with tempfile.TemporaryDirectory() as temporary:
        path = Path(temporary) / "logs.db"
        path.write_bytes(llm_database())
        return {session.key: without_files(session) for session in read_all(llm_logs, path)}


def without_files(session: Session) -> Session:
    return dataclasses.replace(session, files=[])


def rows_of(connection: sqlite3.Connection, table: str) -> list[int]:
    return [rowid for (rowid,) in connection.execute(f'SELECT rowid FROM "{table}" ORDER BY rowid')]


def damageable_columns(connection: sqlite3.Connection, table: str) -> list[str]:
    """The columns of a table, but for an INTEGER PRIMARY KEY (the rowid itself: it can only be an integer)."""
    return [
        name
        for _cid, name, kind, _notnull, _default, key in connection.execute(f'PRAGMA table_info("{table}")')
        if not (key == 1 and kind.upper() == "INTEGER")
    ]


def belongs_to(connection: sqlite3.Connection, table: str, rowid: int) -> set[str]:
    """The keys of the sessions a row of the undamaged database is part of."""
    row = dict(connection.execute(f'SELECT * FROM "{table}" WHERE rowid = ?', [rowid]).fetchone())
    if table in ("conversations", "threads"):
        return {str(row["id"])}
    if table in ("responses", "turns"):
        owner = row["conversation_id"] if table == "responses" else row["thread_id"]
        return {str(owner or row["id"])}
    if table in ("tool_calls", "tool_results", "prompt_fragments", "system_fragments"):
        return response_keys(connection, [row["response_id"]])
    if table == "messages":
        return message_keys(connection, row["hash"])
    if table == "parts":
        return message_keys(connection, row["message_hash"])
    # fragments: the responses that use one, and the thread parts that refer to it
    users = connection.execute(
        "SELECT response_id FROM prompt_fragments WHERE fragment_id = ?"
        " UNION SELECT response_id FROM system_fragments WHERE fragment_id = ?",
        [row["id"], row["id"]],
    ).fetchall()
    keys = response_keys(connection, [user for (user,) in users])
    for (message,) in connection.execute("SELECT message_hash FROM parts WHERE payload LIKE '%text_ref%'"):
        keys |= message_keys(connection, message)
    return keys


def response_keys(connection: sqlite3.Connection, ids: list[Any]) -> set[str]:
    keys = set()
    for id_ in ids:
        for conversation, found in connection.execute("SELECT conversation_id, id FROM responses WHERE id = ?", [id_]):
            keys.add(str(conversation or found))
    return keys


def message_keys(connection: sqlite3.Connection, hash_: Any) -> set[str]:
    """The threads (and lone turns) whose messages reach ``hash_`` from their tip or a turn's ends."""
    parents = dict(connection.execute("SELECT hash, parent_hash FROM messages").fetchall())
    starts = [(str(id_), tip) for id_, tip in connection.execute("SELECT id, tip_message_hash FROM threads")]
    for id_, thread, given_, tip in connection.execute(
        "SELECT id, thread_id, parent_message_hash, tip_message_hash FROM turns"
    ):
        starts += [(str(thread or id_), given_), (str(thread or id_), tip)]
    keys = set()
    for key, start in starts:
        current, seen = start, set()
        while current is not None and current not in seen:
            if current == hash_:
                keys.add(key)
                break
            seen.add(current)
            current = parents.get(current)
    return keys


class RowDamage:
    """A change to one row: what it is (shown when an example fails), and how it is made."""

    def __init__(self, what: str, apply: Callable[[sqlite3.Connection], None]) -> None:
        self.what = what
        self.apply = apply

    def __repr__(self) -> str:
        return self.what


@st.composite
def llm_value(draw: st.DrawFn, old: Any, json_column: bool) -> tuple[str, Any, bool]:
    """A value for a column: (what it is, the value, whether it is stored as text of its bytes)."""
    how = draw(
        st.sampled_from(
            ["null", "integer", "real", "text", "blob", "bad text", "huge", "deep"] + ["json"] * json_column
        )
    )
    if how == "null":
        return "NULL", None, False
    if how == "integer":
        number = draw(st.integers(-(2**63), 2**63 - 1))
        return f"{number}", number, False
    if how == "real":
        real = draw(st.floats(allow_nan=False))
        return f"{real!r}", real, False
    if how == "text":
        text = draw(st.text(max_size=30))
        return repr(text), text, False
    if how in ("blob", "bad text"):  # bytes that are not UTF-8, as a blob or as text SQLite holds
        raw = draw(st.binary(max_size=20)) + draw(st.sampled_from(INVALID_UTF8)) + draw(st.binary(max_size=20))
        return f"{how} {raw!r}", raw, how == "bad text"
    if how == "huge":
        huge = draw(huge_string())
        return _huge_shown(huge), huge, False
    if how == "deep":
        levels = draw(st.integers(DEEP_LEVELS[0], MAX_BRACKETS))
        return f"JSON nested {levels} levels", deep_text(levels, draw(st.sampled_from("[{"))), False
    try:
        value = json.loads(old)
    except (TypeError, ValueError):
        value = {}
    text, what = draw(changed_value(value, draw(st.sampled_from(["type", "deep"]))))
    return f"JSON with {what}", text, False


@st.composite
def row_damage(draw: st.DrawFn, connection: sqlite3.Connection) -> tuple[RowDamage, set[str]]:
    # A row drawn among all rows (not a table first): the tables with many rows get more damage.
    rows = [(table, rowid) for table in READ_TABLES for rowid in rows_of(connection, table)]
    table, rowid = draw(st.sampled_from(rows))
    keys = belongs_to(connection, table, rowid)
    if draw(st.integers(0, 9)) == 0:
        return RowDamage(f"{table} row {rowid} deleted", lambda db: _delete(db, table, rowid)), keys
    columns = damageable_columns(connection, table)
    json_columns = [column for column in columns if (table, column) in JSON_COLUMNS]
    if len(json_columns) > 0 and draw(st.booleans()):
        columns = json_columns  # the JSON a column holds is damaged in more ways: half the draws
    column = draw(st.sampled_from(columns))
    (old,) = connection.execute(f'SELECT "{column}" FROM "{table}" WHERE rowid = ?', [rowid]).fetchone()
    what, value, as_text = draw(llm_value(old, (table, column) in JSON_COLUMNS))
    return RowDamage(
        f"{table} row {rowid}: {column} = {what}", lambda db: _update(db, table, rowid, column, value, as_text)
    ), keys


def _delete(connection: sqlite3.Connection, table: str, rowid: int) -> None:
    connection.execute(f'DELETE FROM "{table}" WHERE rowid = ?', [rowid])


def _update(connection: sqlite3.Connection, table: str, rowid: int, column: str, value: Any, as_text: bool) -> None:
    mark = "CAST(? AS TEXT)" if as_text else "?"
    connection.execute(f'UPDATE OR IGNORE "{table}" SET "{column}" = {mark} WHERE rowid = ?', [value, rowid])


@examples(LLM_EXAMPLES)
@given(st.data())
def test_a_damaged_llm_row_leaves_every_other_conversation_as_it_was(data: st.DataObject) -> None:
    reference = llm_reference()
    with tempfile.TemporaryDirectory() as temporary:
        path = Path(temporary) / "logs.db"
        path.write_bytes(llm_database())
        connection = sqlite3.connect(path)
        connection.row_factory = sqlite3.Row
        damage, keys = data.draw(row_damage(connection), label="damage")
        with connection:
            damage.apply(connection)
        connection.close()
        damaged = {session.key: without_files(session) for session in read_all(llm_logs, path)}
    for key, session in reference.items():
        if key not in keys:
            assert damaged.get(key) == session, f"conversation {key} changed, though the damaged row is not in it"


def test_the_llm_reference_has_every_kind_of_row() -> None:
    """The damaged database covers the legacy responses and the message tree alike."""
    reference = llm_reference()
    assert {"conv-a", "conv-b", "r5", "thread-ref"} <= set(reference)
    assert [message.text for message in reference["thread-ref"].messages] == ["Please: Name ten cheesecakes.", "Done."]
