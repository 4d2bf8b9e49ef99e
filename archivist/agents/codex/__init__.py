"""Codex CLI sessions, read in place: one session per rollout file (docs/contract.md: sources).

Codex writes each session to ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``
(``archived_sessions/`` holds archived ones, flat). The source is that folder, any folder
under it, the Codex home itself, or one rollout file.

What is read, line by line:

- ``session_meta`` (the first one): the session id (the key), its cwd (the project), the
  git branch, and its lineage: a sub-agent names its parent (``parent_thread_id``, or
  ``source.subagent.thread_spawn.parent_thread_id``), a fork names the session it was
  forked from (``forked_from_id``). A fork or sub-agent that replays its parent's history
  first has that copied history cut off when the parent is in the same source.
- ``turn_context``: the model (and the cwd when the meta has none).
- ``response_item``: ``message`` (user and assistant text), ``reasoning`` (thinking),
  ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` / ``web_search_call``
  (tool calls, with the shell commands they ran, the files they name or patch, their
  arguments as input, and an ``apply_patch`` patch as one edit per file: ``apply_patch``),
  and their ``*_output`` (tool messages whose output is kept apart from the text).
- ``event_msg``: ``user_message`` / ``agent_message`` / ``item_completed`` only where it
  is not the other copy of a ``response_item``: Codex writes most messages both ways, one
  after the other, and each copy pairs with the other kind's unpaired one of its role by
  its place, not its text (a pasted image or a later version makes them differ);
  ``agent_reasoning`` where it adds thinking, ``thread_name_updated`` (the title),
  ``thread_rolled_back`` (the turns it drops are dropped).
- The title: the thread's name (in the file, else ``session_index.jsonl`` of the Codex
  home), else the first user message, shortened.

Older files: a first line without ``type`` is the session meta, bare response items
follow, ``{"record_type": "state"}`` lines are skipped; the cwd then comes from the first
``<environment_context>``. The oldest CLI's ``rollout-*.json`` (one JSON document with
``session`` and ``items``) is read too.

Skipped without a word: context the harness injects as user or developer messages
(``<environment_context>``, ``<user_instructions>``, ``# AGENTS.md instructions…``,
permissions and collaboration-mode blocks), token counts and other events, ``compacted``
summaries, encrypted reasoning. Lines that are not JSON and records of unknown types are
skipped and counted in the session's ``problems``, and so is a line over 64 MB; a last line
cut short (a session being written) is skipped silently. A ``.json`` document over 1 GB is
not read, and a file that yields no session tells what it skipped in ``problems``.
Compressed (``.zst``) rollouts are not read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import MAX_LINE_BYTES
from archivist.agents.codex.rollout import KIND as KIND
from archivist.agents.codex.rollout import Lines, Rollout
from archivist.agents.codex.values import (
    ENVELOPE_TYPES,
    ITEM_TYPES,
    TYPES_NOT_READ,
    forked_from,
    meta_fields,
    parent_of,
)

_ROLLOUT_NAME = re.compile(r"^rollout-.+\.jsonl?$")
_HEAD_BYTES = 64 * 1024
_INDEX_LEVELS = 5  # sessions/YYYY/MM/DD/rollout-….jsonl is four folders below the Codex home
_EXPECTED = (
    "expected a Codex sessions folder (~/.codex/sessions, holding YYYY/MM/DD/rollout-*.jsonl), "
    "a folder under it, or one rollout-*.jsonl file"
)


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not a Codex sessions folder or rollout file, or None when it is one."""
    return agents.check_path(path, _EXPECTED, "a Codex rollout file", _looks_like_rollout, _walk_rollouts, _no_rollout)


def _no_rollout(root: Path) -> str:
    """What a folder without a rollout file is, for a sentence about it."""
    if root.name in ("sessions", "archived_sessions") or (root / "sessions").is_dir():
        return "holds no Codex session yet (no rollout-*.jsonl file)"
    return "holds no rollout-*.jsonl file"


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every session under ``path``, one per rollout file, in the order of their paths.

    What was skipped in a file that yields no session, and the links that lead out of the
    source (never opened), go to ``problems``.
    """
    root, files = agents.source_files(path, problems, _rollout_files)
    if not files:
        return
    thread_names = _thread_names(root)

    # Who descends from whom, from each file's first line, so that copied history can be cut.
    first_file: dict[str, Path] = {}
    lineage: set[str] = set()
    for file in files:
        session_id, ancestor = _identity(file)
        if session_id:
            first_file.setdefault(session_id, file)
        if ancestor:
            lineage.add(ancestor)
    prints: dict[str, list[int]] = {}  # the messages of sessions that others descend from

    used: set[str] = set()
    for file in files:
        rollout = Rollout(file)
        rollout.read()
        own = [_fingerprint(message) for message in rollout.messages]
        if rollout.session_id in lineage and rollout.session_id not in prints:
            prints[rollout.session_id] = own
        ancestor = rollout.ancestor
        if ancestor and ancestor != rollout.session_id and ancestor in first_file:
            if ancestor not in prints:
                parent = Rollout(first_file[ancestor])
                parent.read()
                prints[ancestor] = [_fingerprint(message) for message in parent.messages]
            copied = _common_prefix(own, prints[ancestor])
            if copied and (rollout.replayed or copied >= 2):
                del rollout.messages[:copied]
                del rollout.offsets[:copied]
        relative = agents.relative_path(file, root) if root.is_dir() else file.name
        key = agents.file_key(rollout.session_id, relative, used)
        session = rollout.session(key, thread_names)
        if session is not None:
            used.add(key)
            yield session
        elif problems is not None:
            problems.extend(f"{relative}: {problem}" for problem in rollout.lines.problems())


def read_from(
    path: str | os.PathLike[str], offset: int, key: str, project: str | None, models: list[str] | None = None
) -> agents.Session | None:
    """A rollout's lines from byte ``offset`` (its ``Tail.resume_at``: a user message) as session
    ``key``, the last of ``models`` in use until a turn names its own. None when they cannot
    simply follow what was read before: a rollback, a session's meta, nothing read."""
    file = Path(path)
    try:
        if file.suffix != ".jsonl" or file.stat().st_size < offset:
            return None
    except OSError:
        return None
    rollout = Rollout(file)
    rollout.project = project
    for model in models or []:
        rollout.use_model(model)
    rollout.read(offset)
    if rollout.rolled_back or rollout.metas:
        return None
    session = rollout.session(key, {})
    if session is None:
        return None
    session.tail = rollout.tail(offset)
    return session


# -- finding files ---------------------------------------------------------------------


def _walk_rollouts(root: agents.Root) -> Iterator[Path]:
    for file in root.walk(root.path):
        if _ROLLOUT_NAME.match(file.name):
            yield file


def _rollout_files(root: agents.Root) -> list[Path]:
    return sorted(_walk_rollouts(root), key=lambda file: agents.relative_path(file, root.path))


def _looks_like_rollout(file: Path) -> bool:
    """A peek at the first lines: Codex records, or the oldest CLI's JSON document."""
    texts: list[str] = []
    try:
        with file.open("rb") as handle:
            if file.suffix == ".json":
                head = handle.read(_HEAD_BYTES).decode("utf-8", "replace")
                return bool(re.match(r'\s*\{\s*"session"\s*:', head.lstrip("\ufeff")))
            for raw in agents.head_lines(handle):  # a first line holds the instructions: long, but not too long
                line = raw.decode("utf-8", "replace").lstrip("\ufeff").strip()
                if line:
                    texts.append(line)
                if len(texts) >= 5:
                    break
    except OSError:
        return False
    if not texts:
        return bool(_ROLLOUT_NAME.match(file.name))  # a session that has not written anything yet
    for line in texts:
        try:
            record = agents.json_value(line)
        except agents.NotJSON:
            continue
        if isinstance(record, dict):
            return _record_kind(record) is not None
    return False


def _record_kind(record: dict[str, Any]) -> str | None:
    kind = record.get("type")
    if isinstance(kind, str):
        if kind in ENVELOPE_TYPES or kind in TYPES_NOT_READ:
            return kind
        if kind in ITEM_TYPES:
            return "response_item"
        return None
    if "record_type" in record:
        return "state"
    if isinstance(record.get("id"), str) and "timestamp" in record:
        return "session_meta"
    return None


def _identity(file: Path) -> tuple[str | None, str | None]:
    """The session id and the id of the session it descends from, from the first line."""
    if file.suffix != ".jsonl":
        return None, None
    try:
        with file.open("rb") as handle:
            line = handle.readline(MAX_LINE_BYTES)
        record = agents.json_value(line.decode("utf-8", "replace").lstrip("\ufeff"))
    except (OSError, agents.NotJSON):
        return None, None
    if not isinstance(record, dict):
        return None, None
    payload = record.get("payload") if record.get("type") == "session_meta" else record
    if not isinstance(payload, dict) or record.get("type") not in ("session_meta", None):
        return None, None
    meta = meta_fields(payload)
    return agents.text_or_none(meta.get("id")), forked_from(meta) or parent_of(meta)


def _thread_names(root: Path) -> dict[str, str]:
    """Names the user gave threads, from ``session_index.jsonl`` in the Codex home."""
    start = root if root.is_dir() else root.parent
    for level, folder in enumerate([start, *start.parents]):
        if level > _INDEX_LEVELS:
            break
        index = folder / "session_index.jsonl"
        is_home = folder == start or (folder / "sessions").is_dir() or (folder / "archived_sessions").is_dir()
        if is_home and index.is_file() and agents.Root(folder).allows(index):
            names: dict[str, str] = {}
            for record in Lines().records(index):
                if isinstance(record, dict):
                    session_id, name = (
                        agents.text_or_none(record.get("id")),
                        agents.text_or_none(record.get("thread_name")),
                    )
                    if session_id and name:
                        names[session_id] = name
            return names
    return {}


# -- copied history ------------------------------------------------------------------


def _fingerprint(message: agents.Message) -> int:
    """What tells a message from another, to find the history a fork or sub-agent copied."""
    calls = tuple((call.name, tuple(call.files), tuple(call.commands)) for call in message.tool_calls)
    return hash((message.role, message.text, message.thinking, message.tool_output, calls))


def _common_prefix(left: list[int], right: list[int]) -> int:
    """How many messages two sessions begin with alike."""
    count = 0
    for a, b in zip(left, right):
        if a != b:
            break
        count += 1
    return count
