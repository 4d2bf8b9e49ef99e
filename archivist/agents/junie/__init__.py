"""JetBrains Junie's sessions, read in place: one session per session folder (docs/contract.md: sources).

Junie (the ``junie`` command, and the IDE plugin working through it) keeps its state in ``~/.junie``
(``$JUNIE_HOME`` moves it) and its sessions in ``sessions/``: a folder per session, named
``session-<YYMMDD>-<HHMMSS>-<4 characters>``, whose ``events.jsonl`` is the session's event log
(read by ``events``, whose docstring describes it), and ``sessions/index.jsonl``, a line per
session (a later line of the same ``sessionId`` replaces an earlier one): its ``taskName`` (the
title), ``projectDir`` (the working directory), ``createdAt`` and ``updatedAt`` (milliseconds since
1970). The shape is learned from agentsview's reader and its tests (kenn-io/agentsview
``internal/parser/junie.go``, ``junie_provider.go``), the Junie session browser of
Haehnchen/idea-de-espend-ml-llm (``JunieSessionParser.kt`` and its tests), and the event lines
captured from Junie CLI by Irrlicht (ingo-eichhorst/Irrlicht
``core/adapters/inbound/agents/junie/testdata``): Junie CLI's releases of 2026, the older ones
writing no ``timestampMs`` on their events (their sessions' times are then the index's).

The source is ``~/.junie``, its ``sessions`` folder, one session's folder, or its ``events.jsonl``.
Skipped: a session's ``task-*`` folders (the agent's working state), ``state.json``, the prompt
history, settings, credentials and logs. A session with no message tells why in ``problems``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents.junie.events import Events

KIND = "junie"
EVENTS, INDEX = "events.jsonl", "index.jsonl"
_EXPECTED = (
    "expected Junie's ~/.junie or its sessions folder (sessions/session-<id>/events.jsonl, with index.jsonl), "
    "one session's folder, or its events.jsonl"
)


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not Junie's folder, its sessions or one session, or None when it is one."""
    return agents.check_path(path, _EXPECTED, "a Junie event log", _looks_like, _logs, _none)


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every session under ``path``, one per session folder, in the order of their names."""
    root, files = agents.source_files(path, problems, _logs)
    confined = agents.Root(root, problems)
    index: dict[str, dict[str, Any]] | None = None
    used: set[str] = set()
    for file in files:
        if index is None:
            index = _index(file.parent.parent / INDEX, confined)
        relative = agents.relative_path(file.parent, root) if root.is_dir() else file.name
        session, told = _session(file, relative, index, used)
        if session is None:
            if problems is not None:
                problems.extend(f"{relative}: {problem}" for problem in told)
            continue
        used.add(session.key)
        yield session


# -- finding files ------------------------------------------------------------------------------


def _logs(root: agents.Root) -> list[Path]:
    """The event logs of the source: of one session's folder, or of each folder of its sessions."""
    path = root.path
    if agents.is_file(path / EVENTS):
        return [path / EVENTS]
    if path.name != "sessions" and agents.is_dir(path / "sessions") and root.allows(path / "sessions"):
        path = path / "sessions"
    return [folder / EVENTS for folder in root.folders(path) if _holds_log(root, folder)]


def _holds_log(root: agents.Root, folder: Path) -> bool:
    return agents.is_file(folder / EVENTS) and root.allows(folder / EVENTS)


def _none(root: Path) -> str:
    if root.name in (".junie", "sessions") or agents.is_dir(root / "sessions"):
        return "holds no Junie session yet"
    return "holds no Junie sessions folder"


def _looks_like(file: Path) -> bool:
    """A peek: an ``events.jsonl`` whose first line is a JSON object with a ``kind``."""
    return file.name == EVENTS and agents.first_value_is(
        file, lambda value: isinstance(value, dict) and isinstance(value.get("kind"), str)
    )


def _index(file: Path, root: agents.Root) -> dict[str, dict[str, Any]]:
    """The index's line for each session id, the last one kept; {} where there is no index."""
    found: dict[str, dict[str, Any]] = {}
    if not agents.is_file(file) or not root.allows(file):
        return found
    skipped: dict[str, int] = {}
    try:
        with file.open("rb") as handle:
            for value in agents.json_lines(handle, skipped):
                if isinstance(value, dict) and isinstance(value.get("sessionId"), str):
                    found[value["sessionId"]] = value
                else:
                    skipped["no session's line"] = skipped.get("no session's line", 0) + 1
    except OSError as error:
        root.left_out(f"{INDEX}: not read ({error.strerror or error})")
    for problem in agents.skipped_problems(skipped):
        root.problems.append(f"{INDEX}: {problem}")
    return found


# -- one session ----------------------------------------------------------------------------------


def _session(
    file: Path, relative: str, index: dict[str, dict[str, Any]], used: set[str]
) -> tuple[agents.Session | None, list[str]]:
    log = Events(file)
    log.read()
    if not log.messages:
        return None, log.problems() or ["no message"]
    folder = file.parent.name
    entry = index.get(folder, {})
    key = agents.file_key(folder if folder.startswith("session-") else None, relative, used)
    first = next((m.text for m in log.messages if m.role == "user" and m.text), "")
    title = log.title or agents.text_or_none(entry.get("taskName")) or (agents.short_title(first) if first else None)
    times = [*log.times, *(t for t in (_time(entry.get("createdAt")), _time(entry.get("updatedAt"))) if t)]
    return (
        agents.Session(
            key=key,
            agent=KIND,
            title=agents.short_title(title, 300) if title else "Untitled session",
            messages=log.messages,
            project=agents.text_or_none(entry.get("projectDir")) or log.directory,
            models=log.models,
            started=min(times) if times else None,
            last=max(times) if times else None,
            files=[file],
            problems=log.problems(),
        ),
        [],
    )


def _time(value: Any) -> str | None:
    return agents.iso_utc(value) if isinstance(value, int | float | str) and not isinstance(value, bool) else None
