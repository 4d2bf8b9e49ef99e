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
``conversations*.json`` files in their numbered order, each read once as a stream (a
conversation at a time, so a file of hundreds of MB is never held whole; a single
conversation over 1 GB is where the reading of its file stops), and the problems of a
read: a damaged file is read up to the damage, a conversation that cannot be read is
skipped, and both are told in the ``problems`` list the caller gives.
Nothing is written and the zip is read in place, never extracted.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import io
import json
import math
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

from archivist.build.agentlogs import MAX_FILE_BYTES, Message, Session, ToolCall, iso_utc, short_title, size_text

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
PEEK_ITEMS = 20  # items check() looks at for a conversation of a known shape
PROBLEMS_PER_FILE = 10  # conversations skipped in one file that are told one by one; the rest are counted
UNTITLED = "Untitled conversation"

# What reading an export can raise, besides our own ExportError: a damaged zip, an unreadable file, JSON too deep.
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


# ---------------------------------------------------------------------------------------------
# The container: a folder or a zip holding conversations*.json


@dataclass(frozen=True)
class ExportFile:
    """One conversations file of an export."""

    name: str  # its name inside the export ("conversations.json", "data/conversations-0001.json")
    path: Path  # the file on disk it is read from: itself, or the zip that holds it
    member: str | None = None  # its name in the zip

    @contextmanager
    def open_text(self) -> Iterator[TextIO]:
        """The file as text (UTF-8, a BOM dropped, bad bytes replaced), read in place."""
        if self.member is None:
            with open(self.path, encoding="utf-8-sig", errors="replace", newline="") as stream:
                yield stream
        else:
            with zipfile.ZipFile(self.path) as archive, archive.open(self.member) as raw:
                yield io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="")


def _natural(name: str) -> list[Any]:
    """conversations-2.json before conversations-10.json."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _is_conversations(name: str) -> bool:
    return fnmatch.fnmatchcase(name, CONVERSATION_FILES)


@dataclass
class Export:
    """An export's conversations files, and the names of the other files beside them."""

    files: list[ExportFile]
    siblings: set[str] = field(default_factory=set)


def open_export(path: Path) -> Export:
    """The conversations files of the export at ``path`` (a folder or a zip), in their order.

    Raises ExportError with a sentence saying what ``path`` is instead.
    """
    if not path.exists():
        raise ExportError(f"{path} does not exist")
    if path.is_dir():
        try:
            names = sorted((entry.name for entry in path.iterdir() if entry.is_file()), key=_natural)
        except OSError as error:
            raise ExportError(f"{path} cannot be listed ({error.strerror or error})") from error
        files = [ExportFile(name, path / name) for name in names if _is_conversations(name)]
        if not files:
            raise ExportError(f"{path} holds no conversations.json")
        return Export(files, set(names))
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
    try:
        with zipfile.ZipFile(path) as archive:
            members = [info.filename for info in archive.infolist() if not info.is_dir()]
    except (OSError, zipfile.BadZipFile, ValueError, RuntimeError) as error:
        raise ExportError(f"{path} is not a readable zip ({error})") from error
    # The files at the zip's top, else in a single folder below it (a re-zipped export folder).
    by_folder: dict[str, list[str]] = {}
    for member in members:
        posix = PurePosixPath(member)
        folder = str(posix.parent)
        if len(posix.parts) <= 2 and not posix.parts[0].startswith("__MACOSX"):
            by_folder.setdefault("" if folder == "." else folder, []).append(posix.name)
    for folder in sorted(by_folder, key=lambda name: (name != "", name)):
        names = sorted(by_folder[folder], key=_natural)
        found = [name for name in names if _is_conversations(name)]
        if found:
            prefix = f"{folder}/" if folder else ""
            files = [ExportFile(prefix + name, path, prefix + name) for name in found]
            return Export(files, set(names))
    raise ExportError(f"{path} is a zip that holds no conversations.json")


# ---------------------------------------------------------------------------------------------
# A JSON list read one item at a time


class _TooLarge(Exception):
    """A JSON value longer than the reader may hold."""


class _Reader:
    """Text read in chunks, parsed one JSON value at a time with the standard decoder.

    One value is held whole while it is parsed: one longer than ``limit`` characters raises
    _TooLarge (a character is at least a byte: it is more than ``limit`` bytes).
    """

    def __init__(self, stream: TextIO, chunk: int, limit: int) -> None:
        self.stream = stream
        self.chunk = max(1, chunk)
        self.limit = max(1, limit)
        self.decoder = json.JSONDecoder()
        self.buffer = ""
        self.pos = 0
        self.offset = 0  # characters of the file before the buffer
        self.eof = False

    def _fill(self, size: int) -> None:
        data = self.stream.read(size)
        if not data:
            self.eof = True
        self.offset += self.pos
        self.buffer = self.buffer[self.pos :] + data
        self.pos = 0

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
            while self.pos < len(self.buffer) and self.buffer[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if self.eof:
                return ""
            self._fill(self.chunk)

    def _maybe_cut(self, error: json.JSONDecodeError) -> bool:
        """Whether the decoder may have failed only because the buffer ends inside the value."""
        return error.msg.startswith("Unterminated string") or error.pos >= len(self.buffer) - 16

    def value(self) -> Any:
        """The JSON value that starts at the next character (JSONDecodeError where there is none)."""
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
            if end + NUMBER_TAIL >= len(self.buffer) and not self.eof:
                self._more()  # a number may go on past the buffer ("3" of "3.25" cut after "3.")
                continue
            self.pos = end
            return item


def iter_json_list(stream: TextIO, chunk: int | None = None, limit: int | None = None) -> Iterator[Any]:
    """The items of the JSON list in ``stream``, one at a time, each parsed once.

    A file that is no JSON list, is damaged or cut short, or has an item longer than
    ``limit`` characters (``MAX_FILE_BYTES``: an item is held whole to be parsed) raises
    ExportError after the items before it are yielded.
    """
    limit = limit or MAX_FILE_BYTES
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
        try:
            item = reader.value()
        except _TooLarge:
            raise ExportError(
                f"has conversation {count + 1} over {size_text(limit)}, more than one conversation read whole "
                "may have: it and the rest of the file are skipped"
            ) from None
        except json.JSONDecodeError as error:
            if reader.eof and reader._maybe_cut(error):
                raise ExportError(
                    f"ends inside conversation {count + 1} (the file is cut short): it is skipped"
                ) from error
            raise ExportError(
                f"has invalid JSON in conversation {count + 1} at character {reader.offset + error.pos} "
                f"({error.msg}): it and the rest of the file are skipped"
            ) from error
        yield item
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
                f"has {after!r} after conversation {count} at character {reader.offset + reader.pos}, "
                "where a comma or the end of the list belongs: the rest of the file is skipped"
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
    """Why ``path`` is not an export of ``kind`` (a sentence), or None when it is one."""
    path = Path(path)
    expected = EXPECTED[kind]
    try:
        export = open_export(path)
    except ExportError as error:
        return f"{error}: expected {expected}."
    first_error: str | None = None
    unknown = False
    for file in export.files:
        try:
            with file.open_text() as stream:
                for position, item in enumerate(iter_json_list(stream)):
                    shape = shape_of(item)
                    if shape is not None:
                        return _wrong_kind(path, kind, shape)
                    unknown = True
                    if position + 1 >= PEEK_ITEMS:
                        break
        except (*READ_ERRORS, RecursionError) as error:
            first_error = first_error or f"{path}: {file.name} {_reason(error)}"
    if first_error is not None:
        return f"{first_error}: expected {expected}."
    if unknown:
        return (
            f"{path}: the items of {export.files[0].name} are not conversations of a known shape: expected {expected}."
        )
    # Only empty lists: the files beside them tell the kinds apart.
    own = any(name in export.siblings for name in _MARKERS[kind])
    for other, markers in _MARKERS.items():
        if other != kind and not own and any(name in export.siblings for name in markers):
            return _wrong_kind(path, kind, other)
    return None


def _wrong_kind(path: Path, kind: str, shape: str) -> str | None:
    if shape == kind:
        return None
    return (
        f"{path} looks like {KIND_NAMES[shape]} ({_SHAPES[shape]}), not {KIND_NAMES[kind]}: add it as {shape}={path}."
    )


def _reason(error: BaseException) -> str:
    if isinstance(error, ExportError):
        return str(error)
    if isinstance(error, RecursionError):
        return "is nested too deeply to be read"
    if isinstance(error, OSError):
        return f"cannot be read ({error.strerror or error})"
    return f"cannot be read ({type(error).__name__}: {error})"


ToSession = Callable[[Any, ExportFile, int], Session | None]


def read_export(path: str | Path, to_session: ToSession, problems: list[str] | None = None) -> Iterator[Session]:
    """Every conversation of the export at ``path`` as a session, in the files' order.

    ``to_session(item, file, index)`` makes one (None: nothing to read in it) and raises
    for a conversation it cannot read. Files that cannot be read (or only up to some
    damage), skipped conversations and repeated keys are added to ``problems``.
    """
    problems = problems if problems is not None else []
    path = Path(path)
    try:
        export = open_export(path)
    except ExportError as error:
        problems.append(str(error))
        return
    seen: set[str] = set()
    for file in export.files:
        skipped = 0
        try:
            with file.open_text() as stream:
                for index, item in enumerate(iter_json_list(stream)):
                    try:
                        session = to_session(item, file, index)
                    except Exception as error:  # a conversation never stops the read
                        skipped += 1
                        if skipped <= PROBLEMS_PER_FILE:
                            problems.append(f"{file.name}: conversation {index + 1} skipped: {_why(error)}")
                        continue
                    if session is None:
                        continue
                    if session.key in seen:
                        problems.append(
                            f"{file.name}: conversation {index + 1} skipped: its key {session.key} came before"
                        )
                        continue
                    seen.add(session.key)
                    yield session
        except (*READ_ERRORS, RecursionError) as error:
            problems.append(f"{file.name} {_reason(error)}")
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
