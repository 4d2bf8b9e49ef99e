"""Agent logs read in place: what each kind of log yields, one session at a time (docs/contract.md: sources).

Each kind registers itself (``hookspecs.register_agent_kinds``: the built-in ones are the
modules of ``kinds``, a separate package adds one through an entry point of the group
``archivist``), and ``registry`` lists them. A kind's registry entry (``hookspecs.Kind``)
names its reader: a module, loaded when a source of the kind is first checked or read,
with these names:

- ``KIND``: its name on the command line (``--source KIND=PATH``), the entry's name;
- ``check(path) -> str | None``: why ``path`` is not a source of this kind (a sentence
  saying what was expected), or None when it is one;
- ``read(path, problems=None) -> Iterator[Session]``: every session (or exported
  conversation) under ``path``, in a stable order. A bad line, record or file never
  raises: it is skipped and told in the session's ``problems``, or, when no session
  holds it (a file that cannot be read at all), appended to ``problems``.

A kind whose logs are appended to (JSONL) may also have

- ``read_from(path, offset, key, project, models) -> Session | None``: the messages of
  one session file from byte ``offset`` on (where its ``Session.tail`` said to resume), as
  a session keyed ``key`` whose project and models so far were those; None when those
  lines cannot simply follow what was read before (the whole source is read again then).

and a kind whose source is a folder around its logs (a repository, a project) may have

- ``log_files(path) -> list[Path]``: the files and folders of the source that hold its
  logs, whose changes make it read again (without it: the whole source).

Sources are read where they are: nothing here writes, moves or copies a file. Memory stays
bounded whatever a file holds: a line longer than ``MAX_LINE_BYTES`` is skipped (``lines``
reads through it in pieces), and a file larger than ``MAX_FILE_BYTES`` is not read whole
(``too_large`` says why). A source never leaves its folder: its files are listed through
``Root``, which opens no symbolic link that leads out of it. Every line or document is parsed by ``json_value``, which refuses
JSON nested deeper than ``MAX_DEPTH``: no reader, and nothing that walks a value later, can
run out of stack on a hostile line.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

# Every line and document is parsed within a depth budget (json_value), here for the readers.
from archivist.jsonvalues import MAX_DEPTH as MAX_DEPTH
from archivist.jsonvalues import NOT_JSON as NOT_JSON
from archivist.jsonvalues import TOO_DEEP as TOO_DEEP
from archivist.jsonvalues import NotJSON as NotJSON
from archivist.jsonvalues import json_value as json_value
from archivist.jsonvalues import too_deep as too_deep

ROLES = ("user", "assistant", "tool", "system")

MAX_LINE_BYTES = 64 * 1024 * 1024  # a JSONL line longer than this is skipped, never held
MAX_FILE_BYTES = 1024 * 1024 * 1024  # a file read whole (a JSON document, a transcript) may have at most this
_SKIP_BYTES = 1024 * 1024  # read at a time through the rest of a line that is too long


@dataclass
class ToolCall:
    """One tool call of a message: its name, the files it read or changed, the commands it ran."""

    name: str
    files: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)


@dataclass
class Message:
    """One message of a session, in order."""

    role: str  # one of ROLES
    text: str  # what is searched by default
    timestamp: str | None = None  # ISO 8601 in UTC ("2025-11-23T04:53:42Z"), when the log says
    model: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    thinking: str = ""  # kept out of the default search, shown on the page
    tool_output: str = ""  # raw tool output: kept out of the default search, shown on the page


@dataclass
class Tail:
    """Where to go on reading a session that is one file, alone in it, when the file grows.

    Its last assistant response can be continued by lines not yet written, so reading
    resumes at the line that began it (``resume_at``, a byte offset), and what is read
    from there replaces the session's messages from ``resume_seq`` on.
    """

    file: Path
    resume_at: int
    resume_seq: int


@dataclass
class Session:
    """One conversation as an agent log holds it."""

    key: str  # unique and stable within its source (a session id, a file's path in the source)
    agent: str  # the kind
    title: str  # the log's title, a summary, else the first user message shortened
    messages: list[Message] = field(default_factory=list)
    project: str | None = None  # the working directory or project it belongs to
    models: list[str] = field(default_factory=list)
    branch: str | None = None  # git branch, where recorded
    started: str | None = None  # ISO 8601 UTC of its first message
    last: str | None = None  # ISO 8601 UTC of its last message
    files: list[Path] = field(default_factory=list)  # the files it was read from
    problems: list[str] = field(default_factory=list)  # lines or records skipped, and why
    parent: str | None = None  # for a sub-agent transcript: the key of the session it belongs to
    tail: Tail | None = None  # how to read on when its one file grows (kinds with read_from)
    titled: bool = True  # False: the title is only a first message (read_from: keep the stored one)


TITLE_CHARS = 80


def short_title(text: str, limit: int = TITLE_CHARS) -> str:
    """A first user message as a title: one line, at most ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


_ISO_UTC_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\Z")
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?\Z")


def iso_utc(value: object) -> str | None:
    """A log's time as ISO 8601 UTC to the second (``2025-11-23T04:53:42Z``), or None.

    From ISO text (a naive one is UTC; ``Z`` and offsets are read) or Unix time in seconds
    or milliseconds, as a number or as digits; anything else, or a year outside
    1970..2200, is None.
    """
    if isinstance(value, str):
        text = value.strip()
        if _ISO_UTC_RE.match(text):
            return text[:19] + "Z"  # the common case, without parsing
        if _NUMBER_RE.match(text):
            return iso_utc(float(text))
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            return None
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            return None
        try:
            moment = dt.datetime.fromtimestamp(value / 1000 if value > 1e11 else value, tz=dt.UTC)
        except (OverflowError, OSError, ValueError):
            return None
    else:
        return None
    moment = moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if 1970 <= moment.year <= 2200 else None


# --- bounded reading -----------------------------------------------------------------------


def size_text(size: int) -> str:
    """A size in bytes for a sentence: ``64 MB``, ``2 GB``, ``1.1 GB`` (rounded up: never shown as less)."""
    unit, name = (1024**3, "GB") if size >= 1024**3 else (1024**2, "MB")
    if size % unit == 0:
        return f"{size // unit} {name}"
    return f"{math.ceil(size * 10 / unit) / 10:.1f} {name}"


LONG_LINE = f"line over {size_text(MAX_LINE_BYTES)}"  # the reason a line too long is skipped


def lines(handle: BinaryIO, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[bytes | None, int]]:
    """Each line of ``handle`` from where it stands: the line (with its newline, if it has one)
    and its length in bytes.

    A line longer than ``limit`` bytes (its newline counted) is not kept: it is read through
    to its newline (or the end of the file) a piece at a time, and given as None with its
    whole length, so that offsets counted from the lengths stay exact.
    """
    while True:
        line = handle.readline(limit)
        if len(line) < limit or line.endswith(b"\n"):
            if not line:
                return
            yield line, len(line)
            continue
        rest = _skip_line(handle)
        if rest == 0:  # exactly ``limit`` bytes, the last line of the file
            yield line, len(line)
            return
        yield None, len(line) + rest


def _skip_line(handle: BinaryIO) -> int:
    """Read through the rest of a line, up to and with its newline: the bytes read."""
    skipped = 0
    while True:
        piece = handle.read(_SKIP_BYTES)
        if not piece:
            return skipped
        end = piece.find(b"\n")
        if end >= 0:
            handle.seek(end + 1 - len(piece), os.SEEK_CUR)  # the bytes after it are the next lines
            return skipped + end + 1
        skipped += len(piece)


def head_lines(handle: BinaryIO, limit: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The lines of ``handle`` from where it stands, for a peek at a file's first lines: they
    end at the first line longer than ``limit`` bytes, which is not read through."""
    while True:
        line = handle.readline(limit)
        if not line or (len(line) >= limit and not line.endswith(b"\n")):
            return
        yield line


def too_large(path: Path, limit: int = MAX_FILE_BYTES) -> str | None:
    """Why a file that is read whole is not read (it is larger than ``limit`` bytes), or None.

    None too when its size cannot be known: reading it then tells what is wrong.
    """
    try:
        size = path.stat().st_size
    except OSError:
        return None
    if size <= limit:
        return None
    return f"not read: {size_text(size)}, more than the {size_text(limit)} a file read whole may have"


class Unavailable(Exception):
    """A source that cannot be read now (a database another program holds locked, a setting
    that is no value): nothing stored of it changes, and it is read again on the next run.
    The message says why, and what to do."""


class Unread(str):
    """A problem that says a part of the source was not read (a damaged or cut-short file, a
    limit reached, a link that leads out of it): while one is told, nothing the archive holds
    of the source is deleted, since a session not read may be in that part. Equal to its text."""


# --- scanning a text -----------------------------------------------------------------------


def between(text: str, opening: str, closing: str, start: int = 0) -> tuple[int, int] | None:
    """Where the text between the first ``opening`` at or after ``start`` and the first
    ``closing`` after it begins and ends, or None when either is missing.

    What ``re.search(f"{opening}(.*?){closing}", text, re.DOTALL)`` finds, in linear time: the
    pattern tries each opening in turn and reads the rest of the text from every one, which
    takes hours on a line of a few MB holding many openings and no closing.
    """
    begin = text.find(opening, start)
    if begin < 0:
        return None
    begin += len(opening)
    end = text.find(closing, begin)
    return None if end < 0 else (begin, end)


# --- a source's folder -----------------------------------------------------------------------

LINK_OUT = "not opened: a symbolic link that leads out of the source"


class Root:
    """A source's folder as the file system resolves it, and the problems of its reading.

    Nothing under it is opened or entered through a symbolic link that leads out of it
    (to ``/etc/passwd``, to another user's files): such a link is left out of every
    listing and told once in ``problems``. A source that is one file, named by its user,
    is read wherever it leads; the files beside it are judged by its folder.
    """

    def __init__(self, path: Path | str, problems: list[str] | None = None) -> None:
        path = Path(path)
        self.path = path
        self.named = None if path.is_dir() else path
        self.real = os.path.realpath(path.parent if self.named else path)
        self.problems: list[str] = problems if problems is not None else []
        self._told: set[str] = set()  # the links that lead out, told

    def allows(self, path: Path) -> bool:
        """Whether ``path``, found under the source, may be opened: a link only where it stays inside.

        ``path`` is one entry of a folder already allowed (listings give only those).
        """
        if path == self.named or not path.is_symlink():
            return True
        if within(os.path.realpath(path), self.real):
            return True
        if str(path) not in self._told:
            self._told.add(str(path))
            self.problems.append(Unread(f"{self._shown(path)}: {LINK_OUT}"))
        return False

    def entries(self, folder: Path) -> list[Path]:
        """What ``folder`` holds, in name order, without the links that lead out (told); [] if unreadable."""
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return []
        return [entry for entry in (folder / name for name in names) if self.allows(entry)]

    def files(self, folder: Path, suffix: str | None = None) -> list[Path]:
        """The regular files of ``folder`` (ending in ``suffix``, if given), in name order."""
        return [
            entry
            for entry in self.entries(folder)
            if (suffix is None or entry.name.endswith(suffix)) and is_file(entry)
        ]

    def folders(self, folder: Path) -> list[Path]:
        """The folders in ``folder``, in name order."""
        return [entry for entry in self.entries(folder) if _is_dir(entry)]

    def walk(self, folder: Path) -> Iterator[Path]:
        """Every regular file under ``folder``, folders in name order, depth first.

        A link to a folder is not entered (as ``os.walk`` does): a loop stays a link.
        """
        for entry in self.entries(folder):
            if _is_dir(entry):
                if not entry.is_symlink():
                    yield from self.walk(entry)
            elif is_file(entry):
                yield entry

    def left_out(self, problem: str) -> None:
        """A file of the source not read (too large, say): told as Unread."""
        self.problems.append(Unread(problem))

    def _shown(self, path: Path) -> str:
        try:
            return path.relative_to(self.path if self.named is None else self.path.parent).as_posix()
        except ValueError:
            return path.as_posix()


def within(real: str, folder: str) -> bool:
    """Whether a resolved path is the resolved ``folder`` or inside it."""
    return real == folder or real.startswith(folder.rstrip(os.sep) + os.sep)


def is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file (following links); False where it cannot be told."""
    try:
        return path.is_file()
    except OSError:
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False
