"""Roo Code's tasks, read in place (``archivist.agents.cline.tasks``): the VS Code extension's
``globalStorage/rooveterinaryinc.roo-cline/tasks``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from archivist.agents import Session
from archivist.agents.cline import tasks as cline_tasks

KIND = "roo-code"
EXPECTED = "Roo Code's folder holding tasks/ (globalStorage/rooveterinaryinc.roo-cline), its tasks folder, or one task's folder"


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of Roo Code's tasks (a sentence), or None."""
    return cline_tasks.check(path, EXPECTED)


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Every task under ``path``, as a session (``cline.tasks.read``)."""
    return cline_tasks.read(path, KIND, problems)
