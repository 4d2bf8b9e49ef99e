"""Qoder's sessions (Alibaba's agentic IDE and its CLI), read where Qoder writes them.

Qoder writes each session as Claude Code does (the same JSONL lines: ``user``, ``assistant``,
``system`` and bookkeeping lines, ``message.usage`` on its responses, ``tool_use`` and
``tool_result`` parts), one ``<session-uuid>.jsonl`` per session in a folder per project
(``~/.qoder/projects/<encoded path>/``), or, in its ``SharedClientCache/cli/projects`` folder
of recent versions, directly in the folder; a sub-agent's transcript is
``<session-uuid>/subagents/agent-<id>.jsonl``. Beside a session's file,
``<session-uuid>-session.json`` holds its ``title``, ``working_dir``, and where the session
was forked or started from, ``fork_from`` or ``parent_session_id``. Qoder's code is not public:
this shape is the one kenn-io/agentsview reads (``internal/parser/qoder.go``,
``qoder_paths.go`` and ``qoder_test.go``, which read the lines with its Claude Code parser).

The lines are read by ``archivist.agents.claude_code`` (keys, sub-agents, edits, usage, what is
skipped and why: see there), each session then made Qoder's: its title is the sidecar's
``title`` where it has one, its project the sidecar's ``working_dir`` where the lines name
none, and the sidecar is one of its files. The fork a session came from is not linked (the
archive links sub-agents alone). A sidecar over ``MAX_SIDECAR_BYTES`` or not a JSON object is
told in the session's problems, and the session read without it. Nothing is ever written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from archivist.agents import (
    NotJSON,
    Root,
    Session,
    claude_code,
    is_file,
    json_value,
    short_title,
    text_or_none,
    too_large,
)
from archivist.agents.claude_code.subagents import AGENT_PREFIX

KIND = "qoder"
EXPECTED = (
    "a Qoder projects folder (~/.qoder/projects, or its SharedClientCache/cli/projects), one project's folder "
    "in it, or one session's .jsonl file"
)
SIDECAR = "-session.json"  # beside <session-uuid>.jsonl: <session-uuid>-session.json
MAX_SIDECAR_BYTES = 1024 * 1024


def check(path: Path | str) -> str | None:
    """Why ``path`` is not a source of Qoder's sessions (a sentence), or None."""
    reason = claude_code.check(path)
    if reason is None:
        return None
    said = reason.split(": expected ")[0].replace("Claude Code", "Qoder")
    return f"{said}: expected {EXPECTED}."


def read(path: Path | str, problems: list[str] | None = None) -> Iterator[Session]:
    """Every session under ``path``, sub-agents after their parent, in name order (as Claude Code's)."""
    for session in claude_code.read(path, problems):
        yield _qoder(session)


def newest(path: Path | str, count: int, problems: list[str] | None = None) -> Iterator[Session]:
    """The ``count`` newest sessions under ``path``, newest first, each read alone with its sub-agents."""
    for session in claude_code.newest(path, count, problems):
        yield _qoder(session)


def _qoder(session: Session) -> Session:
    """A session read from Claude Code's lines, made Qoder's: its kind, and what its sidecar says."""
    changed: dict[str, Any] = {"agent": KIND}
    if session.again is not None:
        changed["again"] = _again(session.again)
    file = session.files[0] if session.files else None
    if file is None or session.parent is not None or file.name.startswith(AGENT_PREFIX):
        return dataclasses.replace(session, **changed)
    sidecar = file.with_name(file.stem + SIDECAR)
    meta = _sidecar(sidecar, session.problems)
    if meta is None:
        return dataclasses.replace(session, **changed)
    title = text_or_none(meta.get("title"))
    if title is not None:
        changed |= {"title": short_title(title), "titled": True}
    if session.project is None and (folder := text_or_none(meta.get("working_dir"))):
        changed["project"] = folder
    changed["files"] = [*session.files, sidecar]
    return dataclasses.replace(session, **changed)


def _again(again: Callable[[], Session | None]) -> Callable[[], Session | None]:
    def qoder_again() -> Session | None:
        session = again()
        return _qoder(session) if session is not None else None

    return qoder_again


def _sidecar(sidecar: Path, problems: list[str]) -> dict[str, Any] | None:
    """A session's ``-session.json`` as an object; None where there is none (or a link leading out of
    its folder), or it cannot be read (told in ``problems``)."""
    if not is_file(sidecar) or not Root(sidecar.parent).allows(sidecar):
        return None
    if (reason := too_large(sidecar, MAX_SIDECAR_BYTES)) is not None:
        problems.append(f"{sidecar.name}: {reason}")
        return None
    try:
        value = json_value(sidecar.read_bytes().decode("utf-8", "replace").lstrip("\ufeff"))
    except NotJSON as error:
        problems.append(f"{sidecar.name} not read ({error})")
        return None
    except OSError as error:
        problems.append(f"{sidecar.name} not read ({error.strerror or error})")
        return None
    if not isinstance(value, dict):
        problems.append(f"{sidecar.name} not read (not a JSON object)")
        return None
    return value
