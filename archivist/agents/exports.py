"""Exports of conversations (claude.ai's, ChatGPT's): telling their kinds apart, and reading their conversations.

Both kinds share the container (``export_files``) and its conversations files, each read
once as a stream (``json_list``); what tells them apart is the shape of a conversation,
else the files beside ``conversations.json``. A damaged file is read up to the damage, a
conversation that cannot be read is skipped, and both are told in the ``problems`` list
the caller gives. Memory stays bounded whatever an export holds: a conversation is held
whole only to be parsed, and only within its limits.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from archivist.agents import Message, Session, Unread, archives, iso_utc, short_title
from archivist.agents.export_files import READ_ERRORS, ExportFile, conversation_limit, open_export
from archivist.agents.json_list import ExportError, Skipped, iter_json_list

CLAUDE_KIND = "claude-export"
CHATGPT_KIND = "chatgpt-export"

# How each export kind is named and what a source of it must be.
KIND_NAMES = {CLAUDE_KIND: "a claude.ai export", CHATGPT_KIND: "a ChatGPT export"}
EXPECTED = {
    CLAUDE_KIND: (
        "a claude.ai data export: the folder or .zip that claude.ai's “Export data” gives, holding "
        "conversations.json (a JSON list of conversations with chat_messages)"
    ),
    CHATGPT_KIND: (
        "a ChatGPT data export: the folder or .zip that ChatGPT's “Export data” gives, holding "
        "conversations.json (a JSON list of conversations, each a message tree under mapping)"
    ),
}
# Files beside conversations.json that only one kind of export has: they decide an export with no conversations.
_MARKERS = {
    CLAUDE_KIND: ("users.json", "projects.json"),
    CHATGPT_KIND: ("chat.html", "user.json", "message_feedback.json"),
}
PEEK_ITEMS = 20  # items check() looks at for a conversation of a known shape
PROBLEMS_PER_FILE = 10  # conversations skipped in one file that are told one by one; the rest are counted
UNTITLED = "Untitled conversation"


def shape_of(item: Any) -> str | None:
    """The kind of export a conversation of this shape comes from, or None."""
    if isinstance(item, dict):
        if isinstance(item.get("mapping"), dict):
            return CHATGPT_KIND
        if isinstance(item.get("chat_messages"), list):
            return CLAUDE_KIND
    return None


_SHAPES = {
    CLAUDE_KIND: "its conversations have chat_messages",
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


ToSession = Callable[[dict[str, Any], ExportFile, int], Session | None]


def read_export(path: str | Path, to_session: ToSession, problems: list[str] | None = None) -> Iterator[Session]:
    """Every conversation of the export at ``path`` as a session, in the files' order.

    ``to_session(item, file, index)`` makes one of a conversation, an object (None: nothing to
    read in it), and raises for one it cannot read; conversations skipped (a value that is no
    object, or one ``to_session`` cannot read) and repeated keys are added to ``problems``.
    What is not read is told as Unread (the archive keeps what it holds of the export): an
    export that cannot be opened (a zip cut short, a folder without its conversations, a
    setting that is no value), a file damaged or cut short (read up to the damage), a member
    refused, a limit on reading compressed input reached (the export a bomb, or larger than
    its settings allow: nothing more of it is read).
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
                if not isinstance(item, dict):
                    skip(index, f"it is {json_type(item)}, not a conversation")
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
# A conversation


def conversation_key(
    item: dict[str, Any], fields: tuple[str, ...], file: ExportFile, index: int, problems: list[str]
) -> str:
    """A conversation's key: the first of its ``fields`` that holds one, else its place in the
    export (told in ``problems``)."""
    for name in fields:
        key = text_of(item.get(name))
        if key:
            return key
    problems.append(f"the conversation has no {fields[0]}: it is keyed by its place in the export")
    return f"{file.name}#{index + 1}"


# How a conversation's messages are read: ``(item, problems, unknown)``, telling problems in
# ``problems`` and counting in ``unknown`` what of a type it does not know it skipped (by type);
# it raises for a conversation it cannot read.
MessagesOf = Callable[[dict[str, Any], list[str], dict[str, int]], list[Message]]


def conversation_session(
    kind: str,
    item: dict[str, Any],
    file: ExportFile,
    index: int,
    messages_of: MessagesOf,
    *,
    keys: tuple[str, ...],
    unknown_as: str,
    title: str,
    summary: str | None = None,
    created: str,
    updated: str,
    project: str | None = None,
    default_model: str | None = None,
) -> Session | None:
    """The conversation ``item`` (the ``index``-th of ``file``) as a session of ``kind``, None
    when it has no message to read.

    Its key: the first of its ``keys`` fields that holds one (``conversation_key``). Its
    messages: ``messages_of``'s, each type skipped as unknown told as "N ``unknown_as`` 'type'
    skipped". Its title: the conversation's ``title`` field (white space folded), else its first
    user message shortened, else its ``summary`` field shortened, else ``UNTITLED``. It starts and
    ends at its earliest and latest message's times (a branch laid out after the current one is
    older than its end), else at the conversation's ``created`` and ``updated`` fields. Its
    models: its messages', else its ``default_model`` field's.
    """
    problems: list[str] = []
    key = conversation_key(item, keys, file, index, problems)
    unknown: dict[str, int] = {}
    messages = messages_of(item, problems, unknown)
    for name, count in unknown.items():
        problems.append(f"{count} {unknown_as} {name!r} skipped")
    if not messages:
        return None
    models = unique([message.model or "" for message in messages])
    if not models and default_model is not None:
        models = unique([text_of(item.get(default_model))])
    stamps = [message.timestamp for message in messages if message.timestamp]
    return Session(
        key=key,
        agent=kind,
        title=_title(item, messages, title, summary),
        messages=messages,
        project=project,
        models=models,
        started=min(stamps) if stamps else iso_utc(item.get(created)),
        last=max(stamps) if stamps else iso_utc(item.get(updated)),
        files=[file.path],
        problems=problems,
    )


def _title(item: dict[str, Any], messages: list[Message], title: str, summary: str | None) -> str:
    """A conversation's title: its ``title`` field (white space folded), else its first user
    message shortened, else its ``summary`` field shortened, else ``UNTITLED``."""
    first_user = next((message.text for message in messages if message.role == "user" and message.text), "")
    return (
        " ".join(text_of(item.get(title)).split())
        or short_title(first_user)
        or (short_title(text_of(item.get(summary))) if summary is not None else "")
        or UNTITLED
    )


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
