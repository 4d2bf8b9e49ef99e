"""Qwen Code sessions, read in place: one session per chat file (docs/contract.md: sources).

Qwen Code (QwenLM/qwen-code), a fork of Gemini CLI, has recorded its chats in two shapes:

- Since version 0.4 (December 2025): one JSONL file per session,
  ``~/.qwen/projects/<project>/chats/<session id>.jsonl``, where ``<project>`` is the
  project's path with every character that is not a letter or a digit made ``-``
  (``Storage.getProjectDir`` in ``packages/core/src/config/storage.ts``;
  ``$QWEN_RUNTIME_DIR`` moves ``~/.qwen``). Its records are read by ``records``,
  whose docstring describes them. A background sub-agent's transcript is
  ``projects/<project>/subagents/<session id>/agent-<id>.jsonl`` (records of the same shape,
  ``packages/core/src/agents/agent-transcript.ts``), with ``agent-<id>.meta.json`` beside it:
  it is a session of its own, keyed ``<session key>/agent-<id>``, whose ``parent`` is the
  session and whose title is the meta's ``description``.
- Versions 0.1 to 0.3 (October to December 2025) kept Gemini CLI's shape:
  ``~/.qwen/tmp/<sha256 of the project's path>/chats/session-<time>-<id>.json``, one JSON
  document rewritten whole (``chatRecordingService.ts`` of that time), whose assistant
  messages have the ``type`` ``qwen`` where Gemini CLI writes ``gemini``. These are read with
  the Gemini CLI reader's own record and message functions (``gemini_cli``), and each
  assistant message's ``tokens`` (``input`` holding the cached ``cached``) give its usage.
  The project is the path whose hash names the folder, where a JSONL session of the same
  source was recorded there, else the hash.

The source is ``~/.qwen`` (both shapes), its ``projects`` or ``tmp`` folder, one project's
folder, its ``chats`` folder, or one chat file. Skipped: Qwen Code's other files (settings,
``logs.json``, checkpoints, debug logs, plans, the file history). What a file that yields
no session holds is told in ``problems``; a link that leads out of the source is never
opened; nothing is ever written.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import MAX_LINE_BYTES
from archivist.agents.gemini_cli import Record, assistant_messages, looks_like_session
from archivist.agents.qwen_code import records

KIND = "qwen-code"
EXPECTED = (
    "expected Qwen Code's folder (~/.qwen: projects/<project>/chats/<session id>.jsonl, or the older "
    "tmp/<project hash>/chats/session-*.json), one project's folder, its chats folder, or one chat file"
)
CHATS, SUBAGENTS = "chats", "subagents"
_LEGACY_NAME = re.compile(r"^session-.+\.json$")
_AGENT_NAME = re.compile(r"^agent-.+\.jsonl$")
_STATUS_TYPES = ("info", "error", "warning")


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not a Qwen Code source (a sentence saying what was expected), or None."""
    return agents.check_path(path, EXPECTED, "a Qwen Code chat file", _looks_like, _files, _none_found)


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every session under ``path``: the JSONL chats and sub-agents, then the older JSON ones.

    What a file that yields no session holds, and the links that lead out of the source
    (never opened), go to ``problems``.
    """
    root, files = agents.source_files(path, problems, _files)
    confined = agents.Root(root)
    used: set[str] = set()
    projects: dict[str, str] = {}  # the sha256 of a project's path (as the older versions named it): the path
    keys: dict[str, str] = {}  # a session id: its key (for its sub-agents)
    for file in files:
        if file.suffix == ".json":
            continue
        relative = agents.relative_path(file, root) if root.is_dir() else file.name
        if file.parent.parent.name == SUBAGENTS:
            parent = keys.get(file.parent.name, file.parent.name)
            key = agents.file_key(None, f"{parent}/{file.stem}", used)
            session, told = records.session(file, key, KIND, parent)
            meta = agents.json_file(file.with_name(file.stem + ".meta.json"), confined)
            if session is not None and isinstance(meta, dict) and agents.text_or_none(meta.get("description")):
                session.title = agents.short_title(meta["description"], 300)
        else:
            sid = records.session_id(file) or file.stem
            key = agents.file_key(sid, relative, used)
            keys.setdefault(file.stem, key)
            session, told = records.session(file, key, KIND)
        if session is None:
            _tell(problems, relative, told)
            continue
        used.add(key)
        if session.project:
            for name in (session.project, session.project.lower()):
                projects.setdefault(hashlib.sha256(name.encode("utf-8", "replace")).hexdigest(), session.project)
        yield session
    for file in files:
        if file.suffix == ".json":
            relative = agents.relative_path(file, root) if root.is_dir() else file.name
            session, told = _legacy(file, relative, used, projects)
            if session is None:
                _tell(problems, relative, told)
            else:
                used.add(session.key)
                yield session


def _tell(problems: list[str] | None, relative: str, told: list[str]) -> None:
    if problems is not None:
        problems.extend(f"{relative}: {problem}" for problem in told)


# -- finding files ---------------------------------------------------------------------------


def _files(root: agents.Root) -> list[Path]:
    """The chat files of a source, in the order of their paths in it."""
    path = root.path
    found: list[Path] = []
    if path.name == CHATS:
        found = _chat_files(root, path)
    elif path.name == SUBAGENTS:
        found = _agent_files(root, path)
    else:
        for project in _projects(root):
            found += _chat_files(root, project / CHATS) + _agent_files(root, project / SUBAGENTS)
    return sorted(found, key=lambda file: agents.relative_path(file, path))


def _projects(root: agents.Root) -> list[Path]:
    path = root.path
    if _holds(root, path):
        return [path]
    bases = [path / name for name in ("projects", "tmp") if _folder(root, path / name)] or [path]
    return [folder for base in bases for folder in root.folders(base) if _holds(root, folder)]


def _holds(root: agents.Root, folder: Path) -> bool:
    return _folder(root, folder / CHATS) or _folder(root, folder / SUBAGENTS)


def _folder(root: agents.Root, folder: Path) -> bool:
    """Whether ``folder`` is a folder of the source to read; where that cannot be told (the folder
    holding it is not to be entered: another user's), that folder is told once as Unread."""
    try:
        found = folder.is_dir()
    except OSError as error:
        problem = f"{agents.relative_path(folder.parent, root.path)}: not read ({error.strerror or error})"
        if problem not in root.problems:
            root.left_out(problem)
        return False
    return found and root.allows(folder)


def _chat_files(root: agents.Root, chats: Path) -> list[Path]:
    if not _folder(root, chats):
        return []
    return [file for file in root.files(chats) if file.suffix == ".jsonl" or _LEGACY_NAME.match(file.name)]


def _agent_files(root: agents.Root, subagents: Path) -> list[Path]:
    if not _folder(root, subagents):
        return []
    return [file for folder in root.folders(subagents) for file in root.files(folder) if _AGENT_NAME.match(file.name)]


def _none_found(path: Path) -> str:
    if path.name == ".qwen" or _folder(agents.Root(path), path / "projects"):
        return "holds no Qwen Code chat yet (no projects/<project>/chats/*.jsonl)"
    return "holds no Qwen Code chats folder"


def _looks_like(file: Path) -> bool:
    """A peek: a JSONL file whose first record has a ``uuid`` and a record type, or an older
    JSON session document."""
    if file.suffix == ".json":
        return looks_like_session(file)
    if file.suffix != ".jsonl":
        return False
    try:
        with file.open("rb") as handle:
            first = next((line for line in agents.head_lines(handle, MAX_LINE_BYTES) if line.strip()), None)
    except OSError:
        return False
    if first is None:
        return True  # a session that has not written anything yet
    try:
        value = agents.json_value(first.decode("utf-8", "replace").lstrip("\ufeff"))
    except agents.NotJSON:
        return False
    return isinstance(value, dict) and isinstance(value.get("uuid"), str) and value.get("type") in records.RECORD_TYPES


# -- the older JSON sessions -------------------------------------------------------------------


def _legacy(
    file: Path, relative: str, used: set[str], projects: dict[str, str]
) -> tuple[agents.Session | None, list[str]]:
    """A session document of Qwen Code 0.1 to 0.3, read with the Gemini CLI reader's functions."""
    document = Record(file)
    document.read()
    messages: list[agents.Message] = []
    models: list[str] = []
    for item in document.messages.values():
        kind, timestamp = item.get("type"), agents.iso_utc(item.get("timestamp"))
        if kind == "user":
            parts = records.read_parts(item.get("displayContent") or item.get("content"))
            text = "\n".join(piece for piece in parts.text if piece).strip()
            if text or parts.attachments:
                messages.append(agents.Message("user", text, timestamp, attachments=parts.attachments))
        elif kind in ("qwen", "gemini"):
            model = agents.text_or_none(item.get("model"))
            if model and model not in models:
                models.append(model)
            found = assistant_messages(item, timestamp, model)
            if found:
                found[0].usage = _tokens(item.get("tokens"))
            messages.extend(found)
        elif kind not in _STATUS_TYPES:
            reason = f"unknown type {kind!r}" if isinstance(kind, str) else "a message without a type"
            document.skipped_messages[reason] = document.skipped_messages.get(reason, 0) + 1
    if not messages:
        return None, document.problems() or ["no message to read"]
    meta = document.meta
    key = agents.file_key(agents.text_or_none(meta.get("sessionId")), relative, used)
    folder = file.parent.parent.name if file.parent.name == CHATS else None
    first = next((m.text for m in messages if m.role == "user" and m.text), "")
    times = [m.timestamp for m in messages if m.timestamp]
    return (
        agents.Session(
            key=key,
            agent=KIND,
            title=agents.text_or_none(meta.get("summary"))
            or (agents.short_title(first) if first else "Untitled session"),
            messages=messages,
            project=projects.get(folder, folder) if folder else None,
            models=models,
            started=min(times) if times else agents.iso_utc(meta.get("startTime")),
            last=max(times) if times else agents.iso_utc(meta.get("lastUpdated")),
            files=[file],
            problems=document.problems(),
        ),
        [],
    )


def _tokens(tokens: Any) -> Any:
    """The older shape's token counts (``input`` with the ``cached`` ones in it) as a ``Usage``."""
    if not isinstance(tokens, dict):
        return None
    return records.usage_of(
        {
            "promptTokenCount": tokens.get("input"),
            "cachedContentTokenCount": tokens.get("cached"),
            "candidatesTokenCount": tokens.get("output"),
        }
    )
