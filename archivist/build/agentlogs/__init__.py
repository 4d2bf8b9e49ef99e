"""Agent logs read in place: what each kind of log yields, one session at a time (SPEC §1.1).

Each kind (``claude-code``, ``codex``, ``gemini-cli``, ``claude-export``,
``chatgpt-export``, ``aider``, ``specstory``, ``llm``) is a module of this package with
the same three names:

- ``KIND``: its name on the command line (``--source KIND=PATH``);
- ``check(path) -> str | None``: why ``path`` is not a source of this kind (a sentence
  saying what was expected), or None when it is one;
- ``read(path, problems=None) -> Iterator[Session]``: every session (or exported
  conversation) under ``path``, in a stable order. A bad line, record or file never
  raises: it is skipped and told in the session's ``problems``, or, when no session
  holds it (a file that cannot be read at all), appended to ``problems``.

A kind whose logs are appended to (JSONL) may also have

- ``read_from(path, offset, key, project) -> Session | None``: the messages of one
  session file from byte ``offset`` on (where its ``Session.tail`` said to resume), as a
  session keyed ``key``; None when those lines cannot simply follow what was read before
  (the whole source is read again then).

Sources are read where they are: nothing here writes, moves or copies a file.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

ROLES = ("user", "assistant", "tool", "system")


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
