"""Kilo Code's tasks, read in place (``archivist.agents.cline.tasks``): the VS Code extension's
``globalStorage/kilocode.kilo-code/tasks``.

Kilo Code began as a fork of Roo Code (itself a fork of Cline) and keeps each task as they do:
``tasks/<task id>/`` holding ``api_conversation_history.json`` (the conversation as sent to the
model), ``ui_messages.json`` (what the panel showed, with each request's tokens and cost in its
``api_req_started`` messages) and ``task_metadata.json`` (only ``files_in_context``). Kilo keeps
its task list in VS Code's own state, not in a file, so the project is the "Current Workspace
Directory" of the environment details sent with the first request.

Kilo names no model in the conversation's records: the environment details it appends to each
user turn hold the mode and the model the request went to (``# Current Mode`` with
``<slug>``, ``<name>`` and ``<model>``). Each reply is given the model of the turn before it,
and the session the models it used. The shape is that of Kilo Code's extension before it was
rebuilt on OpenCode (versions 4.x, up to early 2026).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import Session
from archivist.agents.cline import tasks as cline_tasks

KIND = "kilo-code"
EXPECTED = (
    "Kilo Code's folder holding tasks/ (globalStorage/kilocode.kilo-code), its tasks folder, or one task's folder"
)
# The model named in the environment details' "# Current Mode" section.
_MODEL_RE = re.compile(r"#\s*Current\s+Mode\b[^#]{0,2000}?<model>\s*([^<>\n]{1,300}?)\s*</model>")
MODE_SCAN = 64 * 1024  # the environment details are looked for in a text block's last characters


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of Kilo Code's tasks (a sentence), or None."""
    return cline_tasks.check(path, EXPECTED)


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Every task under ``path``, as a session (``cline.tasks.read``), with the models its
    environment details name."""
    root = agents.Root(Path(path).expanduser(), [])  # (its problems are told by the first reading)
    for session in cline_tasks.read(path, KIND, problems):
        if not session.models:
            _add_models(session, root)
        yield session


def _add_models(session: Session, root: agents.Root) -> None:
    """The models of the turns of a task read from its conversation file: each reply the model
    its request's environment details name, and the session every model named."""
    history = next((file for file in session.files if file.name == cline_tasks.HISTORY), None)
    records = agents.json_file(history, root) if history is not None else None
    if not isinstance(records, list):
        return
    turns = _turn_models(records)
    replies = [message for message in session.messages if message.role == "assistant"]
    if len(turns) == len(replies):
        for reply, model in zip(replies, turns, strict=True):
            reply.model = reply.model or model
    for model in turns:
        if model and model not in session.models:
            session.models.append(model)


def _turn_models(records: list[Any]) -> list[str | None]:
    """For each assistant record of the conversation, the model the last user record before it named."""
    found: list[str | None] = []
    current: str | None = None
    for record in records:
        if not isinstance(record, dict):
            continue
        if record.get("role") == "assistant":
            found.append(current)
        elif record.get("role") == "user":
            current = _model_named(record.get("content")) or current
    return found


def _model_named(content: Any) -> str | None:
    blocks = [content] if isinstance(content, str) else content if isinstance(content, list) else []
    for block in reversed(blocks):
        text = block if isinstance(block, str) else block.get("text") if isinstance(block, dict) else None
        if isinstance(text, str) and "<environment_details>" in text:
            found = _MODEL_RE.search(text[-MODE_SCAN:])
            if found:
                return found[1].strip()
    return None
