"""Agent logs read in place: what each kind of log yields, one session at a time (docs/contract.md: sources).

Each kind registers itself (``hookspecs.register_agent_kinds``: the ones built in are the
packages of this one, ``archivist/agents/<kind>/``, each declared by its ``kind.toml``; a
separate package adds one through an entry point of the group ``archivist``), and
``registry`` lists them. A kind's registry entry (``hookspecs.Kind``) names its reader: a
module, loaded when a source of the kind is first checked or read, that is a
``reader.Reader`` (``KIND``, ``check``, ``read``) and may be a ``reader.ReadsOn``
(``read_from``), a ``reader.NewestFirst`` (``newest``) or a ``reader.LogFiles``
(``log_files``). What several readers share is here and in the modules beside the kinds'
packages (``databases``, ``archives``, ``exports``, ``export_files``, ``json_list``,
``tool_edits``, ``apply_patch``).

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
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

# Every line and document is parsed within a depth budget (json_value), here for the readers.
from archivist.jsonvalues import MAX_DEPTH as MAX_DEPTH
from archivist.jsonvalues import NOT_JSON as NOT_JSON
from archivist.jsonvalues import TOO_DEEP as TOO_DEEP
from archivist.jsonvalues import NotJSON as NotJSON
from archivist.jsonvalues import json_text as json_text
from archivist.jsonvalues import json_value as json_value
from archivist.jsonvalues import too_deep as too_deep
from archivist.texts import valid_unicode

ROLES = ("user", "assistant", "tool", "system")

MAX_LINE_BYTES = 64 * 1024 * 1024  # a JSONL line longer than this is skipped, never held
MAX_FILE_BYTES = 1024 * 1024 * 1024  # a file read whole (a JSON document, a transcript) may have at most this
_SKIP_BYTES = 1024 * 1024  # read at a time through the rest of a line that is too long
WHOLE_SESSION = 64 * 1024 * 1024  # a session holding more (a file's bytes, a text's characters) is read in parts,
SESSION_PART = 8 * 1024 * 1024  # of this much each (``Session.more``): memory holds a part, never the session


@dataclass
class Edit:
    """One change a tool call made to a file, as its log gives it: the text replaced and the text
    put in its place (``old`` and ``new``; ``old`` None where the call wrote the whole file), or a
    patch (``patch``: unified-diff lines, ``-`` removed, ``+`` added, ``@@`` a hunk), never both."""

    file: str
    old: str | None = None
    new: str | None = None
    patch: str | None = None


@dataclass
class ToolCall:
    """One tool call of a message: its name, the files it read or changed, the commands it ran,
    its input as the log gives it, and the changes it made to files.

    ``input`` is the call's arguments as JSON text (``call_input``), less the texts its ``edits``
    hold: an Edit's old and new text are kept once, in the edit.
    """

    name: str
    files: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    agent: str | None = None  # the key of the sub-agent session the call started, where the log tells
    input: str = ""
    edits: list[Edit] = field(default_factory=list)


def call_input(args: Any, without: Iterable[str] = ()) -> str:
    """A tool call's arguments as ``ToolCall.input`` holds them: compact JSON text (a text as it
    is), the keys ``without`` names left out (what an edit holds); "" where there are none."""
    if args is None or args == "" or args == {} or args == []:
        return ""
    if isinstance(args, str):
        return args
    if isinstance(args, Mapping):
        left = set(without)
        args = {str(key): value for key, value in args.items() if key not in left}
        if not args:
            return ""
    return json_text(args)


def text_edit(file: Any, old: Any, new: Any) -> Edit | None:
    """An edit that replaced ``old`` with ``new`` in ``file`` (``old`` None: the file written
    whole), or None where the file is not named or a text is not text."""
    if not isinstance(file, str) or not file.strip():
        return None
    if old is not None and not isinstance(old, str):
        return None
    if not isinstance(new, str):
        return None
    return Edit(file=file, old=old, new=new)


@dataclass
class Usage:
    """The tokens one model response used, as its log counts them: each response once.

    ``input`` is the prompt's tokens not read from the cache; ``cache_read`` those read from
    it, ``cache_write`` those written to it, of which ``cache_write_1h`` for an hour (Anthropic's
    one-hour cache, priced higher than its five minutes), where the log says so. ``cost`` is in
    US dollars, only where the log itself states it (Aider); a price is never guessed here.
    """

    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0
    cost: float | None = None
    cache_write_1h: int = 0

    FIELDS = ("input", "output", "cache_write", "cache_read", "cache_write_1h")

    def __bool__(self) -> bool:
        return any(getattr(self, name) for name in self.FIELDS) or bool(self.cost)

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost is None and other.cost is None else (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            input=self.input + other.input,
            output=self.output + other.output,
            cache_write=self.cache_write + other.cache_write,
            cache_read=self.cache_read + other.cache_read,
            cost=cost,
            cache_write_1h=self.cache_write_1h + other.cache_write_1h,
        )


def usage(
    input: Any = None,
    output: Any = None,
    cache_write: Any = None,
    cache_read: Any = None,
    cost: Any = None,
    cache_write_1h: Any = None,
) -> Usage | None:
    """A log's token counts as a ``Usage``, or None where it counts none (``cache_write_1h``: of
    ``cache_write``, the tokens written for an hour; never more than ``cache_write``).

    Each count is taken where it is a whole number from 0 to 10**12 (a bool, a string, a
    negative or a fraction is no count: 0); ``cost`` where it is a finite number from 0 to 10**6.
    """
    found = Usage(
        input=whole_count(input),
        output=whole_count(output),
        cache_write=whole_count(cache_write),
        cache_read=whole_count(cache_read),
        cost=_cost(cost),
    )
    found.cache_write_1h = min(whole_count(cache_write_1h), found.cache_write)
    return found or None


def whole_count(value: Any) -> int:
    """A log's count (of tokens, of bytes): a whole number from 0 to 10**12, else 0."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10**12 else 0


def _cost(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and 0 <= value <= 10**6:
        return float(value)
    return None


@dataclass
class Attachment:
    """An image or file attached to a message: recorded, never stored (no base64 in a text)."""

    type: str  # a media type ("image/png"), else what the log calls it ("image", "file")
    name: str | None = None
    size: int | None = None  # in bytes: given by the log, or of the data it inlines

    def placeholder(self) -> str:
        """What the message's text says in its place: ``[image: shot.png]``, ``[file: notes.md]``."""
        what = "image" if self.type.startswith("image") else "file"
        return f"[{what}: {self.name}]" if self.name else f"[{what}]"


def attachment(type: Any, name: Any = None, size: Any = None, data: Any = None) -> Attachment:
    """An attachment as a log describes it; ``data`` (base64 text) gives its size when the log
    does not, and is never kept."""
    kind = text_or_none(type) or "file"
    named = text_or_none(name)
    counted = whole_count(size) if size is not None else None
    if counted is None and isinstance(data, str):
        payload = data.split(",", 1)[1] if data.startswith("data:") and "," in data else data
        counted = len(payload.rstrip("=")) * 3 // 4
    return Attachment(kind[:100], named[:300] if named else None, counted)


def url_attachment(url: Any) -> Attachment:
    """An image given by URL (a string, or an object with ``url``): a ``data:`` URL is measured
    and its media type kept, any other is named by its URL."""
    url = url.get("url") if isinstance(url, dict) else url
    if isinstance(url, str) and url.startswith("data:"):
        return attachment(url[5:].split(";", 1)[0].split(",", 1)[0] or "image", data=url)
    return attachment("image", url)


def attachments_of(content: Any) -> list[Attachment]:
    """The images and files among a message's content parts, in the shapes the model APIs give
    them: Anthropic's ``image``/``document`` blocks (a ``source`` with ``media_type`` and
    base64 ``data``), OpenAI's ``input_image``/``image_url``/``input_file`` parts, Gemini's
    ``inlineData``/``fileData``. Their data is measured, never kept."""
    found: list[Attachment] = []
    for part in content if isinstance(content, list) else [content]:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        source = part.get("source")
        inline = part.get("inlineData") or part.get("inline_data")
        linked = part.get("fileData") or part.get("file_data")
        if kind in ("image", "document") and isinstance(source, dict):
            media = source.get("media_type") or kind
            found.append(attachment(media, part.get("title") or source.get("url"), data=source.get("data")))
        elif kind in ("input_image", "image_url"):
            found.append(url_attachment(part.get("image_url")))
        elif kind == "input_file":
            found.append(attachment("file", part.get("filename"), data=part.get("file_data")))
        elif isinstance(inline, dict):
            found.append(attachment(inline.get("mimeType") or inline.get("mime_type"), data=inline.get("data")))
        elif isinstance(linked, dict):
            uri = linked.get("fileUri") or linked.get("file_uri")
            found.append(attachment(linked.get("mimeType") or linked.get("mime_type"), uri))
    return found


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
    usage: Usage | None = None  # the tokens of the model response this message is (assistant messages)
    attachments: list[Attachment] = field(default_factory=list)


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
    host: str | None = None  # the machine its logs were synced from (``archivist sync``); None: this one
    started: str | None = None  # ISO 8601 UTC of its first message
    last: str | None = None  # ISO 8601 UTC of its last message
    files: list[Path] = field(default_factory=list)  # the files it was read from
    problems: list[str] = field(default_factory=list)  # lines or records skipped, and why
    parent: str | None = None  # for a sub-agent transcript: the key of the session it belongs to
    tail: Tail | None = None  # how to read on when its one file grows (kinds with read_from)
    titled: bool = True  # False: the title is only a first message (read_from: keep the stored one)
    # A session too large to be held whole: its further messages, after ``messages``, in parts
    # read as they are taken. Its other fields (title, models, last, problems, tail) are final
    # once the parts are used up (``archive.prepared.prepare_parts`` stores it so).
    more: Iterator[list[Message]] | None = None
    # Of a session read in parts: the same session read again from its start (None: it cannot be
    # now), for a storing that used up its parts only to hash them and found that it changed.
    again: Callable[[], Session | None] | None = None


def valid_session(session: Session) -> Session:
    """``session`` with every text it carries made valid Unicode (``texts.valid_unicode``: a lone
    surrogate, from a JSON escape or a file name that is not UTF-8, becomes U+FFFD), and how many
    were replaced told as one of its problems. Its paths stay as read (``files``, ``tail``): they
    name files to open; what is stored of them is made valid where it is masked.

    Every session a reader yields passes here before it is hashed, masked or stored.
    """
    replaced = _valid_messages(session.messages)
    text = _Valid()
    optional = text.optional
    session.key, session.agent = text(session.key), text(session.agent)
    session.title = valid_unicode(session.title)[0]  # (most often its first message's: counted there)
    session.project, session.branch, session.parent = (
        optional(session.project),
        optional(session.branch),
        optional(session.parent),
    )
    session.started, session.last = optional(session.started), optional(session.last)
    session.models = [text(model) for model in session.models]
    replaced += text.replaced + _valid_problems(session)
    if session.again is not None:
        session.again = _valid_again(session.again)
    if session.more is not None:  # (told once its parts are read)
        session.more = _valid_parts(session, session.more, replaced)
    elif replaced:
        session.problems.append(replaced_surrogates(replaced))
    return session


class _Valid:
    """Texts made valid Unicode, counting the lone surrogates replaced."""

    def __init__(self) -> None:
        self.replaced = 0

    def __call__(self, value: str) -> str:
        value, count = valid_unicode(value)
        self.replaced += count
        return value

    def optional(self, value: str | None) -> str | None:
        return None if value is None else self(value)


def _valid_messages(messages: list[Message]) -> int:
    """Every text of ``messages`` made valid Unicode: the lone surrogates replaced."""
    text = _Valid()
    optional = text.optional
    for message in messages:
        message.text = text(message.text)
        message.thinking = text(message.thinking)
        message.tool_output = text(message.tool_output)
        message.role, message.timestamp, message.model = (
            text(message.role),
            optional(message.timestamp),
            optional(message.model),
        )
        for call in message.tool_calls:
            call.name, call.agent = text(call.name), optional(call.agent)
            call.files = [text(file) for file in call.files]
            call.commands = [text(command) for command in call.commands]
            call.input = text(call.input)
            for edit in call.edits:
                edit.file = text(edit.file)
                edit.old, edit.new, edit.patch = optional(edit.old), optional(edit.new), optional(edit.patch)
        for item in message.attachments:
            item.type, item.name = text(item.type), optional(item.name)
    return text.replaced


def _valid_problems(session: Session) -> int:
    problems = [valid_unicode(problem) for problem in session.problems]
    session.problems = [
        Unread(fixed) if isinstance(problem, Unread) else fixed
        for problem, (fixed, _) in zip(session.problems, problems, strict=True)
    ]
    return sum(count for _, count in problems)


def _valid_again(again: Callable[[], Session | None]) -> Callable[[], Session | None]:
    def valid_again() -> Session | None:
        session = again()
        return None if session is None else valid_session(session)

    return valid_again


def _valid_parts(session: Session, parts: Iterator[list[Message]], replaced: int) -> Iterator[list[Message]]:
    """The parts of a session read in parts, made valid Unicode as they are read; what was
    replaced in them (and ``replaced`` before them) is told once they are used up."""
    for part in parts:
        replaced += _valid_messages(part)
        yield part
    replaced += _valid_problems(session)
    session.title = valid_unicode(session.title)[0]
    session.models = [valid_unicode(model)[0] for model in session.models]
    if replaced:
        session.problems.append(replaced_surrogates(replaced))


def replaced_surrogates(count: int) -> str:
    """Lone surrogates replaced in what was read, as a problem."""
    return f"{count} lone surrogate{'s' if count != 1 else ''} (not Unicode text) replaced with U+FFFD"


def held_whole(session: Session) -> Session:
    """``session`` with the parts it is read in (``more``), if any, read into its messages: for
    what holds a session whole anyway (a test, a small export), never for storing one."""
    if session.more is not None:
        for part in session.more:
            session.messages.extend(part)
        session.more = None
    return session


def read_in_parts(
    read: Iterator[Message],
    made: Callable[[list[Message]], Session],
    finish: Callable[[Session], None],
    whole: int = WHOLE_SESSION,
    part: int = SESSION_PART,
) -> Session | None:
    """A session whose messages ``read`` gives (None where it holds no text): ``made`` from its
    messages where they hold at most ``whole`` characters of text, else from its first ``whole``
    and given the rest in parts of ``part`` (``Session.more``) as they are read; ``finish`` sets
    its fields that need every message read (title, times, usage), before its last part is stored."""
    messages, more = up_to(read, whole)
    if not more and not any(message.text for message in messages):
        return None
    session = made(messages)
    if not more:
        finish(session)
        return session

    def rest() -> Iterator[list[Message]]:
        going_on = True
        while going_on:
            messages, going_on = up_to(read, part)
            if not going_on:  # (read whole: its fields are final before its last part is stored)
                finish(session)
            yield messages

    session.more = rest()
    return session


def up_to(read: Iterator[Message], limit: int) -> tuple[list[Message], bool]:
    """The next messages of ``read``, up to the first that takes them past ``limit`` characters of
    text; and whether it did (False: ``read`` is used up)."""
    messages: list[Message] = []
    held = 0
    for message in read:
        messages.append(message)
        held += len(message.text) + len(message.thinking) + len(message.tool_output)
        if held > limit:
            return messages, True
    return messages, False


def pieces(text: str, size: int) -> Iterator[str]:
    """``text`` in pieces of at most ``size`` characters, each cut after the last white space in
    it where there is one (a word stays whole); the pieces joined are ``text``."""
    start = 0
    while len(text) - start > size:
        cut = max(text.rfind(" ", start, start + size), text.rfind("\n", start, start + size))
        end = cut + 1 if cut >= start else start + size
        yield text[start:end]
        start = end
    if start < len(text) or not text:
        yield text[start:]


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
        if _ISO_UTC_RE.match(text) and 1970 <= int(text[:4]) <= 2200:
            return text[:19] + "Z"  # the common case, without parsing
        if _NUMBER_RE.match(text):
            return iso_utc(float(text))
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            return None
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if isinstance(value, int) and abs(value) > 10**18:  # (math.isfinite overflows on a huge int)
            return None
        if not math.isfinite(value):
            return None
        try:
            moment = dt.datetime.fromtimestamp(value / 1000 if value > 1e11 else value, tz=dt.UTC)
        except (OverflowError, OSError, ValueError):
            return None
    else:
        return None
    try:  # (an offset can take a moment at the calendar's edge past it)
        moment = moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)
    except (OverflowError, ValueError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if 1970 <= moment.year <= 2200 else None


# --- a log's values -------------------------------------------------------------------------


def text_or_none(value: Any) -> str | None:
    """A string value stripped; None for one that is only white space, or any other value."""
    return value.strip() or None if isinstance(value, str) else None


def parts_text(content: Any, skip_thoughts: bool = False) -> str:
    """The text of a message's content: a string, or parts (one, or a list), each a string or
    an object with ``text``; the texts that are not empty, a line apart.

    With ``skip_thoughts``, a part marked ``thought`` (Gemini's thinking) is left out.
    """
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    texts = []
    for part in content:
        thought = skip_thoughts and isinstance(part, dict) and part.get("thought")
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str) and not thought:
            texts.append(part["text"])
    return "\n".join(text for text in texts if text)


def uri_path(value: Any) -> str | None:
    """An editor's ``file://`` URI as a path (``file:///c%3A/x`` is ``c:/x``); any other text as it is."""
    text = text_or_none(value)
    if text is None or not text.startswith("file:"):
        return text
    from urllib.parse import unquote, urlsplit

    try:
        path = unquote(urlsplit(text).path)
    except ValueError:  # not a URI after all ("file://[x")
        return None
    if len(path) > 2 and path[0] == "/" and path[2] == ":":  # /c:/Users/... is a Windows drive
        path = path[1:]
    return path.rstrip("/") or "/"


def named_files(args: Mapping[str, Any], keys: Iterable[str]) -> list[str]:
    """The files that a tool call's arguments name under ``keys`` (a string, or a list of them),
    stripped, in order."""
    files: list[str] = []
    for key in keys:
        value = args.get(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item.strip():
                files.append(item.strip())
    return files


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


def json_lines(handle: BinaryIO, skipped: dict[str, int]) -> Iterator[Any]:
    """The JSON value of each line of ``handle`` from where it stands (bytes that are not UTF-8
    replaced); a line too long or not JSON is counted in ``skipped`` by its reason, a blank one
    passed over."""
    for line, _size in lines(handle):
        if line is None:
            skipped[LONG_LINE] = skipped.get(LONG_LINE, 0) + 1
            continue
        if not line.strip():
            continue
        try:
            yield json_value(line.decode("utf-8", "replace"))
        except NotJSON as error:
            skipped[str(error)] = skipped.get(str(error), 0) + 1


def read_items(
    items: list[Any], read: Callable[[dict[str, Any]], list[Message] | None], messages: list[Message]
) -> int:
    """Add to ``messages`` the messages ``read`` makes of each object of ``items``, in order; how
    many items were skipped: no object, or one of no shape ``read`` knows (it gave None)."""
    skipped = 0
    for item in items:
        found = read(item) if isinstance(item, dict) else None
        if found is None:
            skipped += 1
        else:
            messages.extend(found)
    return skipped


def json_lines_that(
    handle: BinaryIO, skipped: dict[str, int], test: Callable[[Any], bool], reason: str
) -> Iterator[Any]:
    """The values of ``json_lines`` that ``test`` takes; one it does not is counted in ``skipped``
    as ``reason``."""
    for value in json_lines(handle, skipped):
        if test(value):
            yield value
        else:
            skipped[reason] = skipped.get(reason, 0) + 1


def head_lines(handle: BinaryIO, limit: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The lines of ``handle`` from where it stands, for a peek at a file's first lines: they
    end at the first line longer than ``limit`` bytes, which is not read through."""
    while True:
        line = handle.readline(limit)
        if not line or (len(line) >= limit and not line.endswith(b"\n")):
            return
        yield line


def first_value_is(file: Path, test: Callable[[Any], bool]) -> bool:
    """Whether the first line of a JSON-lines ``file`` that is not blank (``head_lines``) is a JSON
    value that ``test`` takes: True where there is none (a file still being written), False where
    the file cannot be read or that line is no JSON."""
    try:
        with file.open("rb") as handle:
            first = next((line for line in head_lines(handle) if line.strip()), None)
    except OSError:
        return False
    if first is None:
        return True
    try:
        return test(json_value(first.decode("utf-8", "replace")))
    except NotJSON:
        return False


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


def json_file(file: Path, root: Root) -> Any:
    """A JSON document of a source read whole, or None: not there, or not to be opened (a link
    that leads out: told by ``root``), too large, not JSON or not readable (told by ``root`` as
    Unread: the source was read only in part, and what the archive holds of it stays)."""
    if not is_file(file) or not root.allows(file):
        return None
    reason = too_large(file)
    if reason:
        root.left_out(f"{file.name}: {reason}")
        return None
    try:
        return json_value(file.read_bytes().decode("utf-8", "replace").lstrip("\ufeff"))
    except NotJSON as error:
        root.left_out(f"{file.name}: {error}")
    except OSError as error:
        root.left_out(f"{file.name}: not read ({error.strerror or error})")
    return None


class Skipping:
    """What a reader of a file counts as it goes: what it skipped, by reason (``skipped``), and the
    lines whose bytes were not UTF-8 and were replaced (``replaced``)."""

    def __init__(self) -> None:
        self.skipped: dict[str, int] = {}
        self.replaced = 0

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def skipped_problems(counts: Mapping[str, int], unit: str = "line") -> list[str]:
    """What a reading skipped, by reason, as a problem (``3 lines skipped: 2 not JSON, 1 line over
    64 MB``); none where nothing was."""
    total = sum(counts.values())
    if not total:
        return []
    reasons = ", ".join(f"{count} {reason}" for reason, count in counts.items())
    return [f"{total} {unit}{'s' if total != 1 else ''} skipped: {reasons}"]


def replaced_problems(count: int) -> list[str]:
    """The lines whose bytes were not UTF-8 (decoded with replacement characters), as a problem;
    none where there were none."""
    if not count:
        return []
    return [f"{count} line{'s' if count != 1 else ''} not valid UTF-8: decoded with replacement characters"]


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
        try:
            if path == self.named or not path.is_symlink():
                return True
            if within(os.path.realpath(path), self.real):
                return True
        except OSError as error:  # (a folder that cannot be entered: nothing under it is read)
            if str(path) not in self._told:
                self._told.add(str(path))
                self.problems.append(Unread(f"{self._shown(path)}: not read ({error.strerror or error})"))
            return False
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


def check_path(
    path: str | os.PathLike[str],
    expected: str,
    what: str,
    looks_like: Callable[[Path], bool],
    find: Callable[[Root], Iterable[Path]],
    none_found: Callable[[Path], str],
) -> str | None:
    """Why ``path`` (``~`` expanded) is not a source that is one log file or a folder of them, or
    None when it is one.

    A file is one where ``looks_like`` takes it for ``what`` (``a Codex rollout file``); a
    folder, where the first file that ``find`` finds in it is one. Of a folder where it finds
    none, ``none_found`` says what it is (``holds no rollout-*.jsonl file``). A reason ends
    with ``expected``.
    """
    root = Path(path).expanduser()
    if not root.exists():
        return f"{root} does not exist: {expected}."
    if root.is_file():
        return None if looks_like(root) else f"{root} is not {what}: {expected}."
    if not root.is_dir():
        return f"{root} is neither a folder nor a file: {expected}."
    for file in find(Root(root)):
        return None if looks_like(file) else f"{file} under {root} is not {what}: {expected}."
    return f"{root} {none_found(root)}: {expected}."


def no_source(path: Path, expected: str) -> str | None:
    """Why ``path`` cannot be a source at all (it does not exist, or is neither a regular file nor a
    folder: a pipe is never opened), a sentence ending with what was ``expected``; None otherwise."""
    if not path.exists():
        return f"{path} does not exist: expected {expected}."
    if not is_dir(path) and not is_file(path):
        return f"{path} is neither a regular file nor a folder: expected {expected}."
    return None


def source_files(
    path: str | os.PathLike[str], problems: list[str] | None, find: Callable[[Root], list[Path]]
) -> tuple[Path, list[Path]]:
    """A source that is one log file or a folder of them: its path (``~`` expanded), and its log
    files: the file itself, or what ``find`` finds in the folder (through a ``Root`` that tells
    the links leading out in ``problems``); none where it is neither."""
    root = Path(path).expanduser()
    confined = Root(root, problems)
    if root.is_file():
        return root, [root]
    if root.is_dir():
        return root, find(confined)
    return root, []


def relative_path(file: Path, root: Path) -> str:
    """A file's path under ``root``, with ``/``; its whole path where it is not under it."""
    try:
        return file.relative_to(root).as_posix()
    except ValueError:
        return file.as_posix()


def file_key(session_id: str | None, path: str, used: set[str]) -> str:
    """The key of a session that is one file: its id, else the file's path in the source; an
    id already ``used`` (the session read from another file) is followed by ``@`` and that path."""
    key = session_id or path
    return f"{key}@{path}" if key in used else key


def log_file(path: Path, name: str) -> Path:
    """The log file of a source that is that file, or a folder holding it as ``name``."""
    return path / name if path.is_dir() else path


def confined_log_file(path: Path, name: str, problems: list[str] | None) -> tuple[Path, Root] | None:
    """The log file of a source that is that file or a folder holding it as ``name`` (``log_file``),
    with the source's ``Root``; None where it is no file, or a link that leads out of the folder
    (told in ``problems`` as Unread: what the archive holds of it stays)."""
    file = log_file(path, name)
    root = Root(path, problems)
    if not file.is_file() or not root.allows(file):
        return None
    return file, root


def within(real: str, folder: str) -> bool:
    """Whether a resolved path is the resolved ``folder`` or inside it."""
    return real == folder or real.startswith(folder.rstrip(os.sep) + os.sep)


def is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file (following links); False where it cannot be told."""
    try:
        return path.is_file()
    except OSError:
        return False


def is_dir(path: Path) -> bool:
    """Whether ``path`` is a folder (following links); False where it cannot be told."""
    return _is_dir(path)


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False
