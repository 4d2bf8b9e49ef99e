"""claude.ai data exports: one session per exported conversation.

An export is the folder or the ``.zip`` that claude.ai's "Export data" gives. It holds
``conversations.json`` (team exports split it into ``conversations-0000.json``, …), a JSON
list of conversations ``{uuid, name, summary, created_at, updated_at, chat_messages}``.
Each chat message has a ``sender`` (``human`` or ``assistant``), a ``created_at``, its
plain ``text`` and, in newer exports, typed ``content`` blocks (``text``, ``thinking``,
``tool_use``, ``tool_result``), plus ``attachments`` (with their extracted text) and
``files`` (names only).

What a session holds:

- key: the conversation's ``uuid``; title: its ``name``, else its first user message
  shortened, else its ``summary``;
- messages on the conversation's current branch: edits and regenerations leave every
  branch in ``chat_messages``; where messages link to their parent
  (``parent_message_uuid``), the chain from the newest leaf back to the root is read,
  else the list in its order;
- a human message is a ``user`` message, its attachments' extracted text kept below its
  text after an ``[attachment: NAME]`` line and its other files named by ``[file: NAME]``;
- an assistant message becomes one ``assistant`` message per stretch of blocks between
  tool results: text, thinking, tool calls (with the files they touched and the shell
  commands they ran; the text of an artifact or of a created file is kept in the message
  text after an ``[artifact: TITLE]`` or ``[created file: PATH]`` line, since claude.ai
  shows it in the answer); each ``tool_result`` block is a ``tool`` message whose output
  is kept apart from the text;
- no model (the export does not say which) and no project (the export does not link
  conversations to its projects).

The export container is shared with ``chatgpt_export``: the folder or zip, its
``conversations*.json`` files in their numbered order, each read once as a stream, and
the problems of a read: a damaged file is read up to the damage, a conversation that
cannot be read is skipped, and both are told in the ``problems`` list the caller gives.
Memory stays bounded whatever an export holds. A conversation is held whole only to be
parsed, and only when it has at most ``MAX_CONVERSATION_BYTES`` (a setting,
``ARCHIVIST_EXPORT_MAX_CONVERSATION_BYTES``) and nests at most ``MAX_DEPTH`` levels; a
larger or deeper one is scanned through to its end without being held, told, and
reading goes on with the next. A zip is read in place, never extracted, within the
limits of ``archives`` (its members' names, the bytes it inflates, its compression
ratio, the time it takes). A file of the folder, or of the zip, that is a symbolic link
leading out of the export is not opened. Nothing is written.
"""

from __future__ import annotations

import codecs
import datetime as dt
import fnmatch
import io
import json
import math
import os
import re
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from archivist.agents import (
    LINK_OUT,
    MAX_DEPTH,
    TOO_DEEP,
    Message,
    Root,
    Session,
    ToolCall,
    Unread,
    archives,
    is_file,
    iso_utc,
    short_title,
    too_deep,
    within,
)

KIND = "claude-export"
CHATGPT_KIND = "chatgpt-export"

# How each export kind is named and what a source of it must be.
KIND_NAMES = {KIND: "a claude.ai export", CHATGPT_KIND: "a ChatGPT export"}
EXPECTED = {
    KIND: (
        "a claude.ai data export: the folder or .zip that claude.ai's “Export data” gives, holding "
        "conversations.json (a JSON list of conversations with chat_messages)"
    ),
    CHATGPT_KIND: (
        "a ChatGPT data export: the folder or .zip that ChatGPT's “Export data” gives, holding "
        "conversations.json (a JSON list of conversations, each a message tree under mapping)"
    ),
}
# Files beside conversations.json that only one kind of export has: they decide an export with no conversations.
_MARKERS = {KIND: ("users.json", "projects.json"), CHATGPT_KIND: ("chat.html", "user.json", "message_feedback.json")}

CONVERSATION_FILES = "conversations*.json"
CHUNK_CHARS = 1 << 20  # characters read at a time from a conversations file
NUMBER_TAIL = 2  # characters a number cut short can end with that it does not parse ("e-" of "1e-5")
# A conversation is held as text, then as the objects it parses into, then as a session, masked and
# stored: many times its size, four times more again where one character beyond the BMP (an emoji)
# widens its strings. Measured through a whole index run: one of 16 MB so widened peaks near 300 MB,
# one of 31 MB near 570 MB. Real conversations are well under: a claude.ai one ends at its context
# window (under a few MB of JSON); a long ChatGPT one, with its branches, a few MB.
MAX_CONVERSATION_BYTES = 16 * archives.MB
ENV_MAX_CONVERSATION_BYTES = archives.ENV_MAX_CONVERSATION_BYTES
PEEK_ITEMS = 20  # items check() looks at for a conversation of a known shape
PROBLEMS_PER_FILE = 10  # conversations skipped in one file that are told one by one; the rest are counted
UNTITLED = "Untitled conversation"

# What reading an export can raise, besides our own ExportError: a damaged zip, an unreadable file.
READ_ERRORS = (
    OSError,
    ValueError,
    RuntimeError,
    EOFError,
    NotImplementedError,
    zipfile.BadZipFile,
    zlib.error,
)


class ExportError(ValueError):
    """An export, or one of its files, that cannot be read: the message says what is wrong."""


def conversation_limit() -> int:
    """The most characters of one conversation held to be parsed, as its setting gives it (SettingError if bad)."""
    text = os.environ.get(ENV_MAX_CONVERSATION_BYTES, "").strip()
    if not text:
        return MAX_CONVERSATION_BYTES
    try:
        limit = archives.parse_size(text)
    except ValueError:
        limit = 0
    if limit <= 0:
        raise archives.SettingError(
            f"the setting {ENV_MAX_CONVERSATION_BYTES}={text!r} is not a size such as 64MB: unset it, or give one"
        )
    return limit


# ---------------------------------------------------------------------------------------------
# The container: a folder or a zip holding conversations*.json


class Readable(Protocol):
    """Text read a piece at a time (a text file, ``io.StringIO``)."""

    def read(self, size: int, /) -> str: ...


class _Text:
    """Bytes read as text: UTF-8, a BOM dropped, bad bytes replaced, newlines as they are."""

    def __init__(self, raw: io.RawIOBase) -> None:
        self.raw = raw
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self.done = False

    def read(self, size: int, /) -> str:
        while not self.done:
            data = self.raw.read(size) or b""
            self.done = not data
            text = self.decoder.decode(data, final=self.done)
            if text:
                return text
        return ""


@dataclass(frozen=True)
class ExportFile:
    """One conversations file of an export."""

    name: str  # its name inside the export ("conversations.json", "data/conversations-0001.json")
    path: Path  # the file on disk it is read from: itself, or the zip that holds it
    member: archives.Member | None = None  # where it is in the zip
    folder: str | None = None  # the export folder as the file system resolves it, which a link may not leave

    @contextmanager
    def open_text(self, budget: archives.Budget | None = None) -> Iterator[Readable]:
        """The file as text (UTF-8, a BOM dropped, bad bytes replaced), read in place.

        A zip's member is inflated within ``budget`` (a new one, from the settings, if None).
        """
        raw: io.RawIOBase
        if self.member is not None:
            raw = archives.open_member(self.member, budget if budget is not None else archives.Budget())
        else:
            raw = _open_plain(self.path, self.folder)
        with raw:
            yield _Text(raw)


def _open_plain(path: Path, folder: str | None) -> io.RawIOBase:
    """A file of an export folder, opened only where it stays inside it and is a regular file."""
    if folder is not None and path.is_symlink() and not within(os.path.realpath(path), folder):
        raise ExportError(LINK_OUT)  # it was a plain file when listed, and is a link out now
    # Not blocking: a file replaced by a pipe since it was listed is refused, not waited on.
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise ExportError("is not read: it is not a regular file")
        return os.fdopen(descriptor, "rb", buffering=0)
    except BaseException:
        os.close(descriptor)
        raise


def _natural(name: str) -> list[Any]:
    """conversations-2.json before conversations-10.json."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _is_conversations(name: str) -> bool:
    return fnmatch.fnmatchcase(name, CONVERSATION_FILES)


@dataclass
class Export:
    """An export's conversations files, the names of the other files beside them, and what was left out."""

    files: list[ExportFile]
    siblings: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)  # files not opened (links out, members refused), and why
    limits: archives.Limits | None = None  # a zip's: what reading it may cost

    def budget(self) -> archives.Budget | None:
        """A budget for one reading of the export (a zip's), or None (a folder's files are read as they are)."""
        return archives.Budget(self.limits) if self.limits is not None else None


def open_export(path: Path) -> Export:
    """The conversations files of the export at ``path`` (a folder or a zip), in their order.

    Raises ExportError with a sentence saying what ``path`` is instead.
    """
    if not path.exists():
        raise ExportError(f"{path} does not exist")
    if path.is_dir():
        return _open_folder(path)
    if _is_conversations(path.name):
        raise ExportError(
            f"{path} is a conversations file, not an export: give the folder that holds it ({path.parent})"
        )
    try:
        is_zip = zipfile.is_zipfile(path)
    except OSError as error:
        raise ExportError(f"{path} cannot be read ({error.strerror or error})") from error
    if not is_zip:
        raise ExportError(f"{path} is neither a folder nor a .zip")
    return _open_zip(path)


def _open_folder(path: Path) -> Export:
    try:
        names = sorted(os.listdir(path), key=_natural)
    except OSError as error:
        raise ExportError(f"{path} cannot be listed ({error.strerror or error})") from error
    problems: list[str] = []
    root = Root(path, problems)  # tells each link that leads out of the folder, and opens none
    kept = [name for name in names if root.allows(path / name) and is_file(path / name)]
    files = [ExportFile(name, path / name, folder=root.real) for name in kept if _is_conversations(name)]
    if not files:
        raise ExportError(f"{path} holds no conversations.json" + _because(problems))
    return Export(files, set(kept), problems)


def _open_zip(path: Path) -> Export:
    limits = archives.Limits.from_env()
    try:
        listing = archives.list_zip(path, limits)
    except archives.ArchiveError as error:
        raise ExportError(f"{path} {error}") from error
    # Told: the members refused that would have been read, as some tool may see their names.
    problems = [
        f"{_shown(name)}: not read: {why}"
        for name, why in listing.refused
        if _is_conversations(re.split(r"[/\\:]", name.split("\x00")[0])[-1])
    ]
    # The files at the zip's top, else in a single folder below it (a re-zipped export folder).
    by_folder: dict[str, list[archives.Member]] = {}
    for member in listing.members:
        parts = member.name.split("/")
        if len(parts) <= 2 and not parts[0].startswith("__MACOSX"):
            by_folder.setdefault("/".join(parts[:-1]), []).append(member)
    for folder in sorted(by_folder, key=lambda name: (name != "", name)):
        members = sorted(by_folder[folder], key=lambda member: _natural(member.name))
        found = [member for member in members if _is_conversations(member.name.rsplit("/", 1)[-1])]
        if found:
            files = [ExportFile(member.name, path, member) for member in found]
            return Export(files, {member.name.rsplit("/", 1)[-1] for member in members}, problems, limits)
    raise ExportError(f"{path} is a zip that holds no conversations.json" + _because(problems))


def _shown(name: str) -> str:
    """A member's name in a sentence: as it is when printable, else quoted with escapes."""
    return name if name.isprintable() else repr(name)


def _because(problems: list[str]) -> str:
    return f" it may read ({'; '.join(problems)})" if problems else ""


# ---------------------------------------------------------------------------------------------
# A JSON list read one item at a time, each item held only within limits


@dataclass(frozen=True)
class Skipped:
    """An item of the list passed over without being held whole or kept, and why."""

    reason: str


class _TooLarge(Exception):
    """A JSON value longer than the reader may hold."""


class _Cut(Exception):
    """The text ends inside a value."""


# Inside a list or an object: everything up to the next bracket, whole strings included, or up to a
# string the text read so far does not close. Possessive, and unrolled: what is read is never
# read again, however long a string is.
_INSIDE = re.compile(r'[^"\[\]{}]*+(?:"[^"\\]*+(?:\\[\s\S][^"\\]*+)*+"[^"\[\]{}]*+)*+')
_ATOM = re.compile(r'[^\s,\[\]{}"]*+')  # a number, true, false or null
_SPACE = re.compile(r"[ \t\r\n]*+")


def _backslashes(text: str) -> int:
    """How many backslashes ``text`` ends with."""
    return len(text) - len(text.rstrip("\\"))


def _end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where ``pattern`` (which matches nothing too) ends, matched at ``pos``."""
    match = pattern.match(text, pos)
    return match.end() if match else pos


class _Reader:
    """Text read in chunks, parsed one JSON value at a time with the standard decoder.

    One value is held whole while it is parsed: one longer than ``limit`` characters
    raises _TooLarge (a character is at least a byte: it is more than ``limit`` bytes),
    and ``skip`` then reads through the rest of it without holding it.
    """

    def __init__(self, stream: Readable, chunk: int, limit: int) -> None:
        self.stream = stream
        self.chunk = max(1, chunk)
        self.limit = max(1, limit)
        self.decoder = json.JSONDecoder()
        self.buffer = ""
        self.pos = 0
        self.offset = 0  # characters of the file before the buffer
        self.eof = False

    def position(self) -> int:
        return self.offset + self.pos

    def _fill(self, size: int) -> bool:
        """Read on, keeping what is not consumed yet: False at the end."""
        data = self.stream.read(size) if not self.eof else ""
        if not data:
            self.eof = True
        self.offset += self.pos
        self.buffer = self.buffer[self.pos :] + data
        self.pos = 0
        return bool(data)

    def _more(self) -> None:
        """Read on inside a value: as much again as is held (so a large value is parsed a
        bounded number of times), never more than ``limit`` characters of it and one."""
        held = len(self.buffer) - self.pos
        if held > self.limit:
            raise _TooLarge
        self._fill(min(max(self.chunk, len(self.buffer)), self.limit + 1 - held))

    def peek(self) -> str:
        """The next character that is not white space ("" at the end of the file)."""
        while True:
            self.pos = _end(_SPACE, self.buffer, self.pos)
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if self.eof or not self._fill(self.chunk):
                return ""

    def _maybe_cut(self, error: json.JSONDecodeError) -> bool:
        """Whether the decoder may have failed only because the buffer ends inside the value."""
        return error.msg.startswith("Unterminated string") or error.pos >= len(self.buffer) - 16

    def value(self) -> tuple[Any, int, int]:
        """The JSON value that starts at the next character, the characters of its text and how many
        brackets they open (JSONDecodeError where there is none; RecursionError where it nests past
        Python's limit)."""
        if self.peek() == "":
            raise json.JSONDecodeError("Expecting value", self.buffer, self.pos)
        while True:
            try:
                item, end = self.decoder.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as error:
                if self.eof or not self._maybe_cut(error):
                    raise
                self._more()
                continue
            if isinstance(item, int | float) and end + NUMBER_TAIL >= len(self.buffer) and not self.eof:
                self._more()  # a number may go on past the buffer ("3" of "3.25" cut after "3.")
                continue
            opened = self.buffer.count("[", self.pos, end) + self.buffer.count("{", self.pos, end)
            size, self.pos = end - self.pos, end
            return item, size, opened

    def skip(self, depth: int) -> bool:
        """Read through the value that starts here without holding it: whether it nests deeper than
        ``depth`` levels. Raises _Cut where the file ends inside it."""
        first = self.buffer[self.pos]
        if first not in '[{"':
            while (pos := _end(_ATOM, self.buffer, self.pos)) == len(self.buffer):
                self.pos = pos
                if not self._fill(self.chunk):
                    return False
            self.pos = pos
            return False
        self.pos += 1
        in_string, level, deepest = first == '"', int(first != '"'), 1
        while level or in_string:
            if in_string:
                in_string = self._through_string()
            else:
                char = self._to_bracket()
                if char == '"':
                    in_string = True
                else:
                    level += 1 if char in "[{" else -1
                    deepest = max(deepest, level)
        return deepest > depth

    def _through_string(self) -> bool:
        """Read on inside a string: False once past its closing quote, True where more is to be read.

        Quotes are found with ``str.find`` (a string of gigabytes goes by at memory speed); one
        after an odd run of backslashes is escaped.
        """
        buffer, pos = self.buffer, self.pos
        while (quote := buffer.find('"', pos)) >= 0:
            if buffer[quote - 1] != "\\" or _backslashes(buffer[pos:quote]) % 2 == 0:
                self.pos = quote + 1
                return False
            pos = quote + 1
        # No closing quote yet: all is read but a backslash whose escaped character is still to come.
        self.pos = len(buffer) - (_backslashes(buffer[pos:]) % 2 if buffer.endswith("\\") else 0)
        if not self._fill(self.chunk):
            raise _Cut
        return True

    def _to_bracket(self) -> str:
        """Read on to the next bracket, or to a quote that opens a string the buffer does not close: that character."""
        while (pos := _end(_INSIDE, self.buffer, self.pos)) == len(self.buffer):
            self.pos = pos
            if not self._fill(self.chunk):
                raise _Cut
        self.pos = pos + 1
        return self.buffer[pos]


def iter_json_list(
    stream: Readable, chunk: int | None = None, limit: int | None = None, depth: int = MAX_DEPTH
) -> Iterator[Any]:
    """The items of the JSON list in ``stream``, one at a time, each parsed once.

    An item longer than ``limit`` characters (``MAX_CONVERSATION_BYTES``) or nested deeper
    than ``depth`` levels is given as Skipped, read through without being held, and the
    items after it are read. A file that is no JSON list, is damaged or cut short raises
    ExportError after the items before the damage are given.
    """
    limit = limit or MAX_CONVERSATION_BYTES
    reader = _Reader(stream, chunk or CHUNK_CHARS, limit)
    first = reader.peek()
    if first == "":
        raise ExportError("is empty")
    if first != "[":
        raise ExportError("is not a JSON list" + (" (it is a JSON object)" if first == "{" else ""))
    reader.pos += 1
    if reader.peek() == "]":
        return
    count = 0
    while True:
        yield _item(reader, count + 1, depth)
        count += 1
        after = reader.peek()
        if after == ",":
            reader.pos += 1
        elif after == "]":
            return
        elif after == "":
            raise ExportError(f"ends after conversation {count}, before the list is closed (the file is cut short)")
        else:
            raise ExportError(
                f"has {after!r} after conversation {count} at character {reader.position()}, "
                "where a comma or the end of the list belongs: the rest of the file is skipped"
            )


def _item(reader: _Reader, number: int, depth: int) -> Any:
    """Item ``number`` of the list, from the next character: its value, or Skipped."""
    try:
        try:
            item, size, opened = reader.value()
        except _TooLarge:
            deep = reader.skip(depth)
            return Skipped(TOO_DEEP if deep else _too_large(reader.limit))
        except RecursionError:
            reader.skip(depth)
            return Skipped(TOO_DEEP)
        except json.JSONDecodeError:
            raise
        except ValueError:  # the decoder's other refusal: a number of more digits than Python converts
            reader.skip(depth)
            return Skipped("it holds a number too long to read")
    except (json.JSONDecodeError, _Cut) as error:
        if isinstance(error, _Cut) or (reader.eof and reader._maybe_cut(error)):
            raise ExportError(f"ends inside conversation {number} (the file is cut short): it is skipped") from None
        raise ExportError(
            f"has invalid JSON in conversation {number} at character {reader.offset + error.pos} "
            f"({error.msg}): it and the rest of the file are skipped"
        ) from error
    if opened > depth and too_deep(item, depth):  # counting brackets, at C speed, spares most walks
        return Skipped(TOO_DEEP)
    if size > reader.limit:  # read whole with the chunk it was in: the limit holds all the same
        return Skipped(_too_large(reader.limit))
    return item


def _too_large(limit: int) -> str:
    return (
        f"over {archives.amount(limit)}, more than one conversation read whole may have; raise it with "
        f"{ENV_MAX_CONVERSATION_BYTES}={archives.setting_size(2 * limit)}"
    )


# ---------------------------------------------------------------------------------------------
# Telling the two kinds apart (check) and reading conversations (read)


def shape_of(item: Any) -> str | None:
    """The kind of export a conversation of this shape comes from, or None."""
    if isinstance(item, dict):
        if isinstance(item.get("mapping"), dict):
            return CHATGPT_KIND
        if isinstance(item.get("chat_messages"), list):
            return KIND
    return None


_SHAPES = {
    KIND: "its conversations have chat_messages",
    CHATGPT_KIND: "its conversations are message trees under mapping",
}


def check_export(path: str | Path, kind: str) -> str | None:
    """Why ``path`` is not an export of ``kind`` (a sentence), or None when it is one.

    Conversations too large or too deep to hold are passed over: the ones after them tell.
    """
    path = Path(path)
    expected = EXPECTED[kind]
    try:
        export = open_export(path)
        limit = conversation_limit()
    except ExportError as error:
        return f"{error}: expected {expected}."
    except archives.SettingError as error:
        return f"{error}."
    except archives.LimitError as error:  # no wrong kind: what to raise is the point
        return f"{path} {error}."
    budget = export.budget()
    first_error: str | None = None
    unknown = False
    for file in export.files:
        try:
            shape, seen = _peek_shape(file, budget, limit)
        except READ_ERRORS as error:
            # A limit is no wrong kind: what to raise is the point, not what was expected.
            ending = "." if isinstance(error, archives.LimitError) else f": expected {expected}."
            first_error = first_error or f"{path}: {file.name} {_reason(error)}{ending}"
            if isinstance(error, archives.BudgetSpent):
                break
            continue
        if shape is not None:
            return _wrong_kind(path, kind, shape)
        unknown = unknown or seen
    if first_error is not None:
        return first_error
    if unknown:
        return (
            f"{path}: the items of {export.files[0].name} are not conversations of a known shape: expected {expected}."
        )
    # Only empty lists (or conversations passed over): the files beside them tell the kinds apart.
    own = any(name in export.siblings for name in _MARKERS[kind])
    for other, markers in _MARKERS.items():
        if other != kind and not own and any(name in export.siblings for name in markers):
            return _wrong_kind(path, kind, other)
    return None


def _peek_shape(file: ExportFile, budget: archives.Budget | None, limit: int) -> tuple[str | None, bool]:
    """The shape of the first conversation of a known shape among the file's first items, and whether
    items of no known shape were seen."""
    unknown = False
    with file.open_text(budget) as stream:
        for position, item in enumerate(iter_json_list(stream, limit=limit)):
            if not isinstance(item, Skipped):
                shape = shape_of(item)
                if shape is not None:
                    return shape, unknown
                unknown = True
            if position + 1 >= PEEK_ITEMS:
                break
    return None, unknown


def _wrong_kind(path: Path, kind: str, shape: str) -> str | None:
    if shape == kind:
        return None
    return (
        f"{path} looks like {KIND_NAMES[shape]} ({_SHAPES[shape]}), not {KIND_NAMES[kind]}: add it as {shape}={path}."
    )


def _reason(error: BaseException) -> str:
    if isinstance(error, ExportError | archives.ArchiveError | archives.LimitError):
        return str(error)
    if isinstance(error, OSError):
        return f"cannot be read ({error.strerror or error})"
    return f"cannot be read ({type(error).__name__}: {error})"


ToSession = Callable[[Any, ExportFile, int], Session | None]


def read_export(path: str | Path, to_session: ToSession, problems: list[str] | None = None) -> Iterator[Session]:
    """Every conversation of the export at ``path`` as a session, in the files' order.

    ``to_session(item, file, index)`` makes one (None: nothing to read in it) and raises
    for a conversation it cannot read; skipped conversations and repeated keys are added to
    ``problems``. What is not read is told as Unread (the archive keeps what it holds of the
    export): an export that cannot be opened (a zip cut short, a folder without its
    conversations, a setting that is no value), a file damaged or cut short (read up to the
    damage), a member refused, a limit on reading compressed input reached (the export a
    bomb, or larger than its settings allow: nothing more of it is read).
    """
    problems = problems if problems is not None else []
    path = Path(path)
    try:
        limit = conversation_limit()
        export = open_export(path)
    except (ExportError, archives.SettingError, archives.LimitError) as error:
        problems.append(Unread(f"{path} {error}" if isinstance(error, archives.LimitError) else str(error)))
        return
    problems.extend(Unread(problem) for problem in export.problems)  # members refused: not read
    budget = export.budget()
    seen: set[str] = set()
    for file in export.files:
        try:
            yield from _read_file(file, to_session, budget, limit, seen, problems)
        except archives.LimitError as error:  # nothing more of it is read
            problems.append(Unread(f"{file.name} {error}"))
            return
        except READ_ERRORS as error:
            problems.append(Unread(f"{file.name} {_reason(error)}"))


def _read_file(
    file: ExportFile,
    to_session: ToSession,
    budget: archives.Budget | None,
    limit: int,
    seen: set[str],
    problems: list[str],
) -> Iterator[Session]:
    """The sessions of one conversations file; conversations skipped and repeated keys told in ``problems``."""
    skipped = 0

    def skip(index: int, why: str) -> None:
        nonlocal skipped
        skipped += 1
        if skipped <= PROBLEMS_PER_FILE:
            problems.append(f"{file.name}: conversation {index + 1} skipped: {why}")

    try:
        with file.open_text(budget) as stream:
            for index, item in enumerate(iter_json_list(stream, limit=limit)):
                if isinstance(item, Skipped):
                    skip(index, item.reason)
                    continue
                try:
                    session = to_session(item, file, index)
                except Exception as error:  # a conversation never stops the read
                    skip(index, _why(error))
                    continue
                if session is None:
                    continue
                if session.key in seen:
                    problems.append(f"{file.name}: conversation {index + 1} skipped: its key {session.key} came before")
                    continue
                seen.add(session.key)
                paused: AbstractContextManager[None] = budget.paused() if budget is not None else nullcontext()
                with paused:  # the time the caller takes to store it is not reading time
                    yield session
    finally:
        if skipped > PROBLEMS_PER_FILE:
            problems.append(f"{file.name}: {skipped - PROBLEMS_PER_FILE} more conversations skipped")


def _why(error: Exception) -> str:
    return str(error) if isinstance(error, ValueError) and str(error) else f"{type(error).__name__}: {error}"


# ---------------------------------------------------------------------------------------------
# Values


def parse_time(value: Any) -> dt.datetime | None:
    """An instant from an ISO 8601 text (a naive one is UTC) or unix seconds, or None."""
    if isinstance(value, bool) or value is None:
        return None
    moment: dt.datetime
    try:
        if isinstance(value, int | float):
            if not math.isfinite(value):
                return None
            moment = dt.datetime.fromtimestamp(value, dt.UTC)
        elif isinstance(value, str) and value.strip():
            text = value.strip()
            try:
                moment = dt.datetime.fromisoformat(text)
            except ValueError:
                return parse_time(float(text)) if re.fullmatch(r"\d+(\.\d+)?", text) else None
            moment = moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)
        else:
            return None
    except (OverflowError, OSError, ValueError):
        return None
    return moment if 1970 <= moment.year <= 2200 else None


def text_of(value: Any) -> str:
    """A string value stripped, anything else empty."""
    return value.strip() if isinstance(value, str) else ""


def unique(values: list[str]) -> list[str]:
    """The values that are not empty, each once, in their order."""
    return list(dict.fromkeys(value for value in values if value))


def json_type(value: Any) -> str:
    """What a JSON value is, in words."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


# ---------------------------------------------------------------------------------------------
# A claude.ai conversation

ROOT_PARENT = "00000000-0000-4000-8000-000000000000"  # the parent of a conversation's first message
_SENDERS = {"human": "user", "user": "user", "assistant": "assistant"}
_QUIET_BLOCKS = {"token_budget"}  # blocks with nothing to read, not worth a problem
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "notebook_path")
_SHELL_WORDS = ("bash", "shell", "terminal", "run_command", "execute_command")


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a claude.ai export (a sentence), or None when it is one."""
    return check_export(path, KIND)


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Every conversation of the claude.ai export at ``path`` (folder or zip), in file order.

    Files read only up to some damage, and conversations skipped, are added to
    ``problems`` when a list is given; a conversation's own skipped parts are in its
    session's ``problems``.
    """
    return read_export(path, _session, problems)


def _session(item: Any, file: ExportFile, index: int) -> Session | None:
    if not isinstance(item, dict):
        raise ValueError(f"it is {json_type(item)}, not a conversation")
    raw_messages = item.get("chat_messages")
    if not isinstance(raw_messages, list):
        raise ValueError("it has no chat_messages list")
    problems: list[str] = []
    key = text_of(item.get("uuid"))
    if not key:
        key = f"{file.name}#{index + 1}"
        problems.append("the conversation has no uuid: it is keyed by its place in the export")
    messages: list[Message] = []
    unknown: dict[str, int] = {}
    for position, raw in _current_branch(raw_messages, problems):
        messages.extend(_messages(raw, position, problems, unknown))
    for block_type, count in unknown.items():
        problems.append(f"{count} content block(s) of unknown type {block_type!r} skipped")
    if not messages:
        return None
    first_user = next((message.text for message in messages if message.role == "user" and message.text), "")
    name = " ".join(text_of(item.get("name")).split())
    title = name or short_title(first_user) or short_title(text_of(item.get("summary"))) or UNTITLED
    stamps = [message.timestamp for message in messages if message.timestamp]
    return Session(
        key=key,
        agent=KIND,
        title=title,
        messages=messages,
        started=stamps[0] if stamps else iso_utc(item.get("created_at")),
        last=stamps[-1] if stamps else iso_utc(item.get("updated_at")),
        files=[file.path],
        problems=problems,
    )


def _current_branch(raw_messages: list[Any], problems: list[str]) -> list[tuple[int, dict[str, Any]]]:
    """The messages of the current branch in order, each with its place in ``chat_messages``."""
    linear: list[tuple[int, dict[str, Any]]] = []
    for position, raw in enumerate(raw_messages):
        if isinstance(raw, dict):
            linear.append((position, raw))
        else:
            problems.append(f"message {position + 1} is not an object: skipped")
    linked = all(
        isinstance(raw.get("uuid"), str) and isinstance(raw.get("parent_message_uuid"), str) for _, raw in linear
    )
    by_uuid = {raw["uuid"]: (position, raw) for position, raw in linear} if linked else {}
    if not linear or not linked or len(by_uuid) != len(linear):
        return linear
    parents = {raw["parent_message_uuid"] for _, raw in linear}
    leaves = [entry for entry in linear if entry[1]["uuid"] not in parents]
    if not leaves:
        problems.append("the messages' parent links form a loop: read in their order")
        return linear

    def newest(entry: tuple[int, dict[str, Any]]) -> tuple[float, int]:
        moment = parse_time(entry[1].get("created_at"))
        return (moment.timestamp() if moment else -math.inf, entry[0])

    entry = max(leaves, key=newest)
    chain = [entry]
    seen = {entry[1]["uuid"]}
    while True:
        parent = entry[1]["parent_message_uuid"]
        if parent == ROOT_PARENT or parent == "":
            break
        if parent not in by_uuid:
            if entry[0] == linear[0][0]:
                break  # the first message, whatever its parent is called
            problems.append("a message's parent is missing from the export: the messages are read in their order")
            return linear
        if parent in seen:
            problems.append("the messages' parent links form a loop: read in their order")
            return linear
        seen.add(parent)
        entry = by_uuid[parent]
        chain.append(entry)
    chain.reverse()
    return chain


@dataclass
class _Part:
    """One message being built from a stretch of content blocks."""

    role: str
    timestamp: str | None
    texts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_output: str = ""

    def message(self) -> Message | None:
        text = "\n\n".join(part for part in self.texts if part.strip()).strip()
        thinking = "\n\n".join(part for part in self.thinking if part.strip()).strip()
        if not (text or thinking or self.tool_calls or self.tool_output):
            return None
        return Message(
            role=self.role,
            text=text,
            timestamp=self.timestamp,
            tool_calls=self.tool_calls,
            thinking=thinking,
            tool_output=self.tool_output,
        )


def _messages(raw: dict[str, Any], position: int, problems: list[str], unknown: dict[str, int]) -> list[Message]:
    """The messages one chat message becomes (a tool result splits an assistant message)."""
    sender = raw.get("sender")
    role = _SENDERS.get(sender) if isinstance(sender, str) else None
    if role is None:
        problems.append(f"message {position + 1} has an unknown sender {sender!r}: skipped")
        return []
    created = iso_utc(raw.get("created_at"))
    content = raw.get("content")
    blocks = [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []
    parts = [_Part(role, created)]
    used_text = False
    for block in blocks:
        block_type = block.get("type")
        if block_type in _QUIET_BLOCKS:
            continue
        part = parts[-1]
        if part.timestamp is None:
            part.timestamp = iso_utc(block.get("start_timestamp")) or created
        if block_type == "text":
            part.texts.append(_str(block.get("text")))
            used_text = True
        elif block_type == "thinking":
            thought = _str(block.get("thinking"))
            if not thought.strip() and isinstance(block.get("summaries"), list):
                thought = "\n".join(_str(s.get("summary")) for s in block["summaries"] if isinstance(s, dict))
            part.thinking.append(thought)
        elif block_type == "tool_use":
            call, shown = _tool_call(block)
            part.tool_calls.append(call)
            if shown:
                part.texts.append(shown)
            used_text = True
        elif block_type == "tool_result":
            stamp = iso_utc(block.get("start_timestamp")) or created
            output = _tool_output(block.get("content"))
            if block.get("is_error") is True:
                output = f"[error] {output}" if output else "[error]"
            parts.append(_Part("tool", stamp, tool_output=output or "[no output]"))
            parts.append(_Part(role, None))
        elif isinstance(block.get("text"), str) and block["text"].strip():
            part.texts.append(block["text"])  # a block of another kind that carries text (a voice note)
            used_text = True
        else:
            name = block_type if isinstance(block_type, str) else "(none)"
            unknown[name] = unknown.get(name, 0) + 1
    if not used_text:
        parts[0].texts.append(_str(raw.get("text")))  # old exports, or content without text blocks
    extra = _attachments(raw)
    if extra:
        parts[0].texts.extend(extra)
    return [message for part in parts if (message := part.message()) is not None]


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _attachments(raw: dict[str, Any]) -> list[str]:
    """The extracted text of a message's attachments, and the names of its other files."""
    shown: list[str] = []
    for attachment in raw.get("attachments") or []:
        if not isinstance(attachment, dict):
            continue
        name = text_of(attachment.get("file_name")) or "attachment"
        content = _str(attachment.get("extracted_content"))
        shown.append(f"[attachment: {name}]\n{content}" if content.strip() else f"[attachment: {name}]")
    for file in raw.get("files") or raw.get("files_v2") or []:
        if isinstance(file, dict) and text_of(file.get("file_name")):
            shown.append(f"[file: {text_of(file.get('file_name'))}]")
    return shown


def _tool_call(block: dict[str, Any]) -> tuple[ToolCall, str]:
    """A tool_use block as a tool call, and what of its input claude.ai shows in the answer."""
    name = text_of(block.get("name")) or "tool"
    tool_input: dict[str, Any] = block["input"] if isinstance(block.get("input"), dict) else {}
    files = unique([text_of(tool_input.get(key)) for key in _PATH_KEYS])
    commands: list[str] = []
    command = tool_input.get("command")
    if isinstance(command, str) and command.strip() and any(word in name.lower() for word in _SHELL_WORDS):
        commands.append(command.strip())
    shown = ""
    if name == "artifacts":
        title = text_of(tool_input.get("title")) or text_of(tool_input.get("id")) or "artifact"
        body = _str(tool_input.get("content")) or _str(tool_input.get("new_str"))
        if body.strip():
            shown = f"[artifact: {title}]\n{body}"
    elif isinstance(tool_input.get("file_text"), str) and tool_input["file_text"].strip():
        shown = f"[created file: {files[0] if files else name}]\n{tool_input['file_text']}"
    return ToolCall(name=name, files=files, commands=commands), shown


def _tool_output(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    pieces: list[str] = []
    for item in content:
        if isinstance(item, str):
            pieces.append(item)
        elif isinstance(item, dict):
            if isinstance(item.get("text"), str):
                pieces.append(item["text"])
            elif item.get("type") == "image":
                pieces.append("[image]")
            elif isinstance(item.get("title"), str) or isinstance(item.get("url"), str):
                pieces.append(" ".join(text_of(item.get(key)) for key in ("title", "url") if text_of(item.get(key))))
    return "\n".join(piece for piece in pieces if piece)
