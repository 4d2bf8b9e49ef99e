"""The pi coding agent's sessions, read in place: one session per file (docs/contract.md: sources).

Pi (badlogic/pi-mono, ``@mariozechner/pi-coding-agent``) keeps its sessions in
``~/.pi/agent/sessions`` (``PI_CODING_AGENT_DIR`` moves ``~/.pi/agent``): a folder per working
directory, named for it (``--home-dev-src-app--``), holding a ``<time>_<session id>.jsonl`` file
per session. The file is pi's session format, the one OpenClaw writes too, so it is read with
OpenClaw's reader (``archivist.agents.openclaw.Transcript``): a header line ``{"type": "session",
"version", "id", "timestamp", "cwd"}``, then its entries (messages with their tool calls,
thinking and usage, compactions, branch summaries, model changes, the ``session_info`` name that
is the title). The shape is learned from pi's description of it (badlogic/pi-mono
``packages/coding-agent/docs/session.md`` and ``src/core/session-manager.ts``) and agentsview's
reader (wesm/agentsview ``internal/parser/pi.go`` and its tests).

Beyond OpenClaw's transcripts, pi's older sessions are read as pi still loads them: version 1
(a header naming the session's ``provider`` and ``modelId`` and sometimes no ``id``, entries
without ids: the key is then the session id of the file's name) and version 2 (an extension's
message has the role ``hookMessage``, later ``custom``: not the conversation). The source is
``~/.pi/agent`` or its ``sessions`` folder, one working directory's folder, or one session file.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import openclaw

KIND = "pi"

_EXPECTED = (
    "expected pi's ~/.pi/agent or its sessions folder (sessions/--<working directory>--/<time>_<id>.jsonl), "
    "one working directory's folder, or one session file"
)


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not pi's folder, its sessions, one directory's sessions or one session, or None."""
    return agents.check_path(path, _EXPECTED, "a pi session file", _looks_like_session, _sessions, _none)


def _none(root: Path) -> str:
    if root.name == "sessions" or (root / "sessions").is_dir() or root.name.startswith("--"):
        return "holds no pi session yet"
    return "holds no pi sessions folder"


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every session under ``path``, one per file, in the order of their paths."""
    root, files = agents.source_files(path, problems, _sessions)
    used: set[str] = set()
    for file in files:
        relative = agents.relative_path(file, root) if root.is_dir() else file.name
        transcript = PiSession(file)
        session = transcript.session(relative, used)
        if session is not None:
            used.add(session.key)
            yield dataclasses.replace(session, agent=KIND)
        elif problems is not None:
            problems.extend(f"{relative}: {problem}" for problem in transcript.problems() or ["no message"])


def _sessions(root: agents.Root) -> list[Path]:
    """The session files of the source: those of its folder, and of each folder in it."""
    path = root.path
    for inner in (path / "agent" / "sessions", path / "sessions"):
        if agents.is_dir(inner) and root.allows(inner.parent) and root.allows(inner):
            path = inner
            break
    found = root.files(path, ".jsonl")
    for folder in root.folders(path):
        found.extend(root.files(folder, ".jsonl"))
    return sorted(found, key=lambda file: agents.relative_path(file, root.path))


def _looks_like_session(file: Path) -> bool:
    """A peek: a ``.jsonl`` file whose first line is a session header or an entry."""
    return file.name.endswith(".jsonl") and agents.first_value_is(
        file, lambda value: isinstance(value, dict) and isinstance(value.get("type"), str)
    )


class PiSession(openclaw.Transcript):
    """One pi session file: an OpenClaw transcript, with pi's older versions read too."""

    def _entry(self, entry: dict[str, Any]) -> None:
        if entry.get("type") == "session" and not self.header:
            self.header = {**entry, "id": agents.text_or_none(entry.get("id")) or _id_of(self.file)}
            self._model(entry.get("modelId"))  # version 1 names the model in its header
        elif entry.get("type") == "message" and _role(entry) == "hookMessage":
            pass  # version 2's extension message (``custom`` since version 3): not the conversation
        else:
            super()._entry(entry)


def _role(entry: dict[str, Any]) -> Any:
    message = entry.get("message")
    return message.get("role") if isinstance(message, dict) else None


def _id_of(file: Path) -> str | None:
    """The session id in a session file's name (``<time>_<id>.jsonl``), None where it has none."""
    stem = file.name.removesuffix(".jsonl")
    return stem.partition("_")[2] or None
