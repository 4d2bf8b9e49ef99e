"""Hermes Agent's sessions, read in place: its ``state.db`` and the transcripts of its ``sessions`` folder.

Hermes (NousResearch/hermes-agent), in its terminal and on the messaging platforms its gateway
serves, keeps its state in its home folder: ``~/.hermes`` (``%LOCALAPPDATA%\\hermes`` on
Windows; ``HERMES_HOME`` moves it). There:

- ``state.db``, SQLite in WAL mode, opened read-only (``archivist.agents.databases``): each
  session's platform, model, title, parent (a session split by a compaction names the one it
  continues), times, token counts and cost, and its messages (``archivist.agents.hermes.state``);
- ``sessions/<session id>.jsonl``: a transcript, a ``session_meta`` line (the model, the
  platform) then one message a line;
- ``sessions/session_<session id>.json``: a snapshot of a session (its ``platform``, ``model``,
  ``session_start``, ``last_updated`` and ``messages``).

The messages are in the OpenAI chat form in all three (``archivist.agents.hermes.messages``).
A session ``state.db`` holds is read from it, with its messages from it where it holds any,
else from its transcript; a session only a transcript holds is read from it, the ``.jsonl``
before the ``.json`` of the same id. The key is the session id. The shape is learned from
agentsview's reader (kenn-io/agentsview ``internal/parser/hermes.go``,
``hermes_provider.go`` and their tests) and Hermes' own source (``hermes_state.py``,
``hermes_constants.py``). Hermes records no working directory, so a session has no project
(the platform it ran on, ``cli`` or ``telegram``, is none).

Token usage is kept per session in ``state.db`` (input, output, cache read, cache write, and
the cost in US dollars: the one the provider billed, else Hermes' estimate): it goes on the
session's last assistant message. The transcripts record none.

The source is the home folder, its ``sessions`` folder, ``state.db``, or one transcript. A
``state.db`` that cannot be read is told as ``Unread`` and the transcripts are still read.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from archivist import agents
from archivist.agents import Root, Session, Unread, databases
from archivist.agents.hermes import state
from archivist.agents.hermes.messages import Conversation

KIND = "hermes"
DATABASE = "state.db"
_EXPECTED = (
    "expected Hermes' home folder (~/.hermes: state.db and sessions/<id>.jsonl), its sessions folder, "
    "its state.db, or one transcript (<id>.jsonl or session_<id>.json)"
)


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not Hermes' home, its sessions, its ``state.db`` or one transcript, or None."""
    root = Path(path).expanduser()
    if reason := agents.no_source(root, _EXPECTED):
        return reason
    if agents.is_file(root):
        if databases.is_sqlite(root):
            return _check_database(root)
        if _looks_like_transcript(root):
            return None
        return f"{root} is not a Hermes transcript: {_EXPECTED}."
    confined = Root(root)
    database = _database(confined)
    if database is not None and (databases.irregular(database) is not None or _check_database(database) is None):
        return None
    for file in _transcripts(confined):
        return None if _looks_like_transcript(file) else f"{file} is not a Hermes transcript: {_EXPECTED}."
    return f"{root} holds neither {DATABASE} nor Hermes transcripts: {_EXPECTED}."


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[Session]:
    """Every session: those of ``state.db`` in the order they began, then those only a transcript holds."""
    problems = problems if problems is not None else []
    root = Root(Path(path).expanduser(), problems)
    if root.named is not None:
        if databases.is_sqlite(root.path) or root.path.name == DATABASE:
            yield from _stored(root.path, {}, root)
        else:
            found = _from_transcript(root.path, root)
            if found is not None:
                yield found
        return
    transcripts: dict[str, Path] = {}
    for file in _transcripts(root):
        transcripts.setdefault(_id_of(file), file)  # (the .jsonl, listed first, before the .json)
    database = _database(root)
    seen: set[str] = set()
    if database is not None:
        for found in _stored(database, transcripts, root):
            seen.add(found.key)
            yield found
    for key, file in sorted(transcripts.items()):
        if key not in seen:
            found = _from_transcript(file, root)
            if found is not None:
                yield found


def _check_database(database: Path) -> str | None:
    try:
        lacking = state.missing(database)
    except sqlite3.Error as error:
        return f"{database} cannot be opened read-only as a SQLite database ({error}): {_EXPECTED}."
    except OSError as error:
        return f"{database} cannot be read ({error.strerror or error}): {_EXPECTED}."
    return f"{database} {lacking}: {_EXPECTED}." if lacking else None


def _database(root: Root) -> Path | None:
    """The home folder's ``state.db`` (the source's own, or beside no sessions folder), if there."""
    file = root.path / DATABASE
    if not (os.path.lexists(file) and root.allows(file) and file.exists()):
        return None
    return file


def _folder(root: Root) -> Path:
    folder = root.path / "sessions"
    return folder if agents.is_dir(folder) and root.allows(folder) else root.path


def _transcripts(root: Root) -> list[Path]:
    """The transcripts of the source's sessions folder: ``<id>.jsonl``, then ``session_<id>.json``."""
    folder = _folder(root)
    lines = root.files(folder, ".jsonl")
    snapshots = [file for file in root.files(folder, ".json") if file.name.startswith("session_")]
    return [*lines, *snapshots]


def _id_of(file: Path) -> str:
    name = file.name
    if name.endswith(".jsonl"):
        return name.removesuffix(".jsonl")
    return name.removesuffix(".json").removeprefix("session_")


def _looks_like_transcript(file: Path) -> bool:
    """A peek: a ``.jsonl`` whose first line is a message object, or a ``session_*.json``."""
    if file.name.endswith(".jsonl"):
        return agents.first_value_is(file, lambda value: isinstance(value, dict) and isinstance(value.get("role"), str))
    return file.name.startswith("session_") and file.name.endswith(".json")


def _stored(database: Path, transcripts: dict[str, Path], root: Root) -> Iterator[Session]:
    for stored in state.sessions(database, root):
        conversation = Conversation()
        conversation.model(stored.model)
        files = [database]
        if stored.rows:
            for row in stored.rows:
                conversation.add(_row(row))
        elif stored.id in transcripts:
            transcript = transcripts[stored.id]
            _read_transcript(transcript, conversation, root)
            files.append(transcript)
        found = _session(stored.id, conversation, files, stored.title, stored.parent)
        if found is None:
            continue
        if stored.usage is not None:
            _put_usage(found, stored.usage)
        found.started = found.started or agents.iso_utc(stored.started)
        found.last = found.last or agents.iso_utc(stored.ended) or found.started
        yield found


def _row(row: dict[str, object]) -> dict[str, object]:
    """A ``messages`` row as a transcript's message: its columns that hold a value."""
    return {key: value for key, value in row.items() if value is not None}


def _put_usage(session: Session, used: agents.Usage) -> None:
    for message in reversed(session.messages):
        if message.role == "assistant":
            message.usage = used
            return
    session.problems.append("its token usage recorded, but no assistant message to hold it")


def _from_transcript(file: Path, root: Root) -> Session | None:
    conversation = Conversation()
    snapshot = _read_transcript(file, conversation, root)
    found = _session(_id_of(file), conversation, [file], None, None)
    if found is None:
        root.problems.extend(f"{file.name}: {problem}" for problem in conversation.problems() or ["no message"])
        return None
    if snapshot is not None:
        found.started = found.started or agents.iso_utc(snapshot.get("session_start"))
        found.last = found.last or agents.iso_utc(snapshot.get("last_updated")) or found.started
    return found


def _read_transcript(file: Path, conversation: Conversation, root: Root) -> dict[str, object] | None:
    """Read a transcript into ``conversation``; a snapshot's document (its times), else None."""
    if file.name.endswith(".jsonl"):
        try:
            with file.open("rb") as handle:
                for row in agents.json_lines(handle, conversation.skipped):
                    conversation.add(row)
        except OSError as error:
            root.problems.append(Unread(f"{file.name}: reading stopped ({error.strerror or error})"))
        return None
    document = agents.json_file(file, root)
    if not isinstance(document, dict):
        if document is not None:
            root.problems.append(Unread(f"{file.name}: not a JSON object"))
        return None
    conversation.model(document.get("model"))
    messages = document.get("messages")
    for row in messages if isinstance(messages, list) else []:
        conversation.add(row)
    return document


def _session(
    key: str, conversation: Conversation, files: list[Path], title: str | None, parent: str | None
) -> Session | None:
    messages = conversation.messages
    if not messages:
        return None
    first = next((message.text for message in messages if message.role == "user" and message.text), "")
    times = [message.timestamp for message in messages if message.timestamp]
    return Session(
        key=key,
        agent=KIND,
        title=title or agents.short_title(first) or key,
        titled=title is not None,
        messages=messages,
        models=conversation.models,
        started=min(times) if times else None,
        last=max(times) if times else None,
        files=files,
        problems=conversation.problems(),
        parent=parent,
    )
