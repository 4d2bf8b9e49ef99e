"""Grok CLI's sessions, read in place: one session per session folder (docs/contract.md: sources).

Grok CLI (xAI's Grok Build, the ``grok`` command) keeps its state in ``~/.grok`` (``$GROK_HOME``
moves it) and each session in ``sessions/<working directory, URL-encoded>/<session id>/``. The
shape is learned from Grok Build's files as agentsview reads them (kenn-io/agentsview
``internal/parser/grok.go``, its tests, and its goldens made with Grok Build's own types in
``internal/parser/testdata/grok-build``: chat format 1 and the older format 0), and from
grok-lens, a dashboard of those folders (monomyth/grok-lens). A session folder holds:

- ``chat_history.jsonl``: the conversation, a row a line. Format 1 (``chat_format_version`` 1)
  types its rows: ``system`` (the system prompt), ``user`` (its ``content`` a text or text parts;
  a ``synthetic_reason`` other than ``interjection`` marks context Grok injected, not typed),
  ``reasoning`` (``summary`` parts: the thinking of the assistant row after it), ``assistant``
  (``content``, ``tool_calls`` of ``id``, ``name`` and JSON ``arguments``, ``model_id``),
  ``tool_result`` (``tool_call_id``, ``content``) and ``backend_tool_call`` (a search the
  server ran: ``kind.tool_type``, ``kind.action``). Format 0 gives each row a ``role``
  (``system``, ``user``, ``assistant``, ``tool``), calls as ``function`` objects and the
  thinking as ``reasoning_content``.
- ``summary.json``: the session's id and working directory (``info``), its title
  (``generated_title``, else ``session_summary``), times (``created_at``, ``last_active_at``),
  model (``current_model_id``), branch (``head_branch``), and ``parent_session_id``.
- ``updates.jsonl``: the protocol's ``session/update`` notifications as they were sent, each
  with its Unix ``timestamp``. Their ``user_message_chunk``, ``agent_message_chunk``,
  ``tool_call`` and ``tool_call_update`` give the messages their times (matched by text and by
  call id: the chat rows have none), and each turn's ``usage`` (``inputTokens`` with the
  ``cachedReadTokens`` in them, ``outputTokens``, ``costUsdTicks``: ten-billionths of a US dollar,
  by model in ``modelUsage``) is the usage of that turn's last assistant message.

The source is ``~/.grok``, its ``sessions`` folder, one working directory's folder, one
session's folder, or its ``chat_history.jsonl``. Skipped: ``events.jsonl``, ``signals.json``,
``prompt_context.json``, ``hunk_records.jsonl``, the prompt history and the search index
(telemetry, counters and indexes of what the chat holds). Lines that are not JSON and rows of no
known shape are counted in the session's ``problems``; a folder that yields no session tells
why in ``problems``.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents.grok_cli.history import History
from archivist.agents.grok_cli.updates import Updates

KIND = "grok-cli"
CHAT = "chat_history.jsonl"
_SESSION_ID = re.compile(r"\A[0-9A-Za-z][0-9A-Za-z._-]{0,200}\Z")
_EXPECTED = (
    "expected Grok CLI's ~/.grok (sessions/<working directory>/<session id>/chat_history.jsonl), its sessions "
    "folder, one working directory's folder, one session's folder, or its chat_history.jsonl"
)


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not Grok CLI's folder, sessions or session, or None when it is one."""
    return agents.check_path(path, _EXPECTED, "a Grok CLI chat history", _looks_like, _chats, _none)


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every session under ``path``, one per session folder, in the order of their paths."""
    root, files = agents.source_files(path, problems, _chats)
    confined = agents.Root(root, problems)
    used: set[str] = set()
    for file in files:
        relative = agents.relative_path(file.parent, root) if root.is_dir() else file.name
        session, told = _session(file, relative, confined, used)
        if session is None:
            if problems is not None:
                problems.extend(f"{relative}: {problem}" for problem in told)
            continue
        used.add(session.key)
        yield session


# -- finding files ------------------------------------------------------------------------


def _chats(root: agents.Root) -> list[Path]:
    """The chat histories under the source: of its session folders, at any of the layout's levels."""
    path = root.path
    if agents.is_file(path / CHAT):
        return [path / CHAT]
    if path.name != "sessions" and agents.is_dir(path / "sessions") and root.allows(path / "sessions"):
        path = path / "sessions"
    found = [folder / CHAT for folder in root.folders(path) if _holds_chat(root, folder)]
    if not found:
        found = [
            session / CHAT
            for project in root.folders(path)
            for session in root.folders(project)
            if _holds_chat(root, session)
        ]
    return sorted(found, key=lambda file: agents.relative_path(file, root.path))


def _holds_chat(root: agents.Root, folder: Path) -> bool:
    return agents.is_file(folder / CHAT) and root.allows(folder / CHAT)


def _none(root: Path) -> str:
    if root.name in (".grok", "sessions") or agents.is_dir(root / "sessions"):
        return "holds no Grok CLI session yet"
    return "holds no Grok CLI sessions folder"


def _looks_like(file: Path) -> bool:
    """A peek: a chat history whose first row is a JSON object with a ``type`` or a ``role``."""
    return file.name == CHAT and agents.first_value_is(
        file, lambda value: isinstance(value, dict) and isinstance(value.get("type", value.get("role")), str)
    )


# -- one session ------------------------------------------------------------------------------


def _session(file: Path, relative: str, root: agents.Root, used: set[str]) -> tuple[agents.Session | None, list[str]]:
    folder = file.parent
    history = History(file)
    history.read()
    if not history.messages:
        return None, history.problems() or ["no message"]
    summary = _dict(agents.json_file(folder / "summary.json", root))
    info = _dict(summary.get("info"))
    updates = Updates(folder / "updates.jsonl", root)
    updates.read()
    updates.give_times(history.messages, history.call_ids)
    updates.give_usage(history.messages, history.turns)
    session_id = agents.text_or_none(info.get("id")) or (folder.name if _SESSION_ID.match(folder.name) else None)
    key = agents.file_key(session_id, relative, used)
    project = agents.text_or_none(info.get("cwd")) or _decoded(folder.parent.name)
    models = list(dict.fromkeys(m.model for m in history.messages if m.model))
    current = agents.text_or_none(summary.get("current_model_id"))
    if current and not models:
        models = [current]
    first = next((m.text for m in history.messages if m.role == "user" and m.text), "")
    title = (
        agents.text_or_none(summary.get("generated_title"))
        or agents.text_or_none(summary.get("session_summary"))
        or (agents.short_title(first) if first else "Untitled session")
    )
    times = [m.timestamp for m in history.messages if m.timestamp]
    created = agents.iso_utc(summary.get("created_at"))
    active = agents.iso_utc(summary.get("last_active_at")) or agents.iso_utc(summary.get("updated_at"))
    bounds = [*times, *(t for t in (created, active) if t)]
    parent = agents.text_or_none(summary.get("parent_session_id"))
    return (
        agents.Session(
            key=key,
            agent=KIND,
            title=agents.short_title(title, 300),
            messages=history.messages,
            project=project,
            models=models,
            branch=agents.text_or_none(summary.get("head_branch")),
            started=min(bounds) if bounds else None,
            last=max(bounds) if bounds else None,
            files=[file, *(f for f in (folder / "summary.json", folder / "updates.jsonl") if agents.is_file(f))],
            problems=[*history.problems(), *updates.problems()],
            parent=parent if summary.get("session_kind") == "subagent" else None,
        ),
        [],
    )


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _decoded(name: str) -> str | None:
    """A working directory's folder name (the path URL-encoded), decoded; None where it is no path."""
    path = urllib.parse.unquote(name)
    return path if path != name or name.startswith("/") else None
