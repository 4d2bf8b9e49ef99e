"""Cline's tasks, read in place (``archivist.agents.cline.tasks``): the VS Code extension's
``globalStorage/saoudrizwan.claude-dev/tasks``, and its standalone build's ``~/.cline/data/tasks``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from archivist.agents import Session
from archivist.agents.cline import tasks as cline_tasks

KIND = "cline"
EXPECTED = "Cline's folder holding tasks/ (globalStorage/saoudrizwan.claude-dev, ~/.cline/data), its tasks folder, or one task's folder"


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of Cline's tasks (a sentence), or None."""
    return cline_tasks.check(path, EXPECTED)


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Every task under ``path``, as a session (``tasks.read``)."""
    return cline_tasks.read(path, KIND, problems)
