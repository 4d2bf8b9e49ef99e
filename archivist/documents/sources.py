"""Which files make which sources, of which kind: a conversation folder, or one file."""

from __future__ import annotations

import re

from archivist import dates
from archivist.documents.model import FileInfo, Problem, Source

TEXT_SUFFIXES = {".md", ".markdown", ".txt"}
MARKDOWN_SUFFIXES = {".md", ".markdown"}
CONVERSATION_TYPES = (
    "brainstorm",
    "debug",
    "plan",
    "review",
    "research",
    "design",
    "implement",
    "refactor",
    "retro",
    "spike",
    "support",
    "learn",
)
_NUMBERED_SLUG_RE = re.compile(r"^\d{1,4}[-_].+")


def _suffix(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""


def is_date_folder(name: str) -> bool:
    return bool(dates.DAY_FOLDER_RE.match(name) or dates.MONTH_FOLDER_RE.match(name))


def conversation_unit(parts: list[str]) -> str | None:
    """The conversation a path belongs to, as the path of its folder or single file.

    ``conversations/<date>/<NNN-slug>/…`` and ``<type>/<date>/<NNN-slug>/…`` (a
    known type, or any folder whose entries are numbered), or a single markdown
    file directly inside such a date folder.
    """
    if len(parts) < 3 or not is_date_folder(parts[1]):
        return None
    top = parts[0]
    typed = top == "conversations" or top.lower() in CONVERSATION_TYPES
    if len(parts) == 3:
        if _suffix(parts[2]) in MARKDOWN_SUFFIXES and (typed or _NUMBERED_SLUG_RE.match(parts[2])):
            return "/".join(parts)
        return None
    if typed or _NUMBERED_SLUG_RE.match(parts[2]):
        return "/".join(parts[:3])
    return None


def classify(path: str, reports_dir: str = "reports") -> tuple[str, str] | None:
    """(source path, kind) for a file, or None when it holds no document."""
    parts = path.split("/")
    suffix = _suffix(path)
    unit = conversation_unit(parts)
    if unit is not None:
        return (unit, "conversation") if suffix in MARKDOWN_SUFFIXES else None
    report_parts = reports_dir.strip("/").split("/")
    depth = len(report_parts)
    if parts[:depth] == report_parts and len(parts) >= depth + 2 and suffix in MARKDOWN_SUFFIXES:
        return path, "report"
    if parts[0] == "memories" and suffix in {".jsonl", ".md", ".markdown"}:
        return path, "memory"
    if parts[0] == "records" and suffix in {".jsonl", ".csv"}:
        return path, "record"
    if suffix in TEXT_SUFFIXES:
        return path, "note"
    return None


def group_sources(files: list[FileInfo], reports_dir: str = "reports") -> tuple[dict[str, Source], list[Problem]]:
    sources: dict[str, Source] = {}
    problems: list[Problem] = []
    for info in files:
        found = classify(info.path, reports_dir)
        if found is None:
            problems.append(
                Problem(info.path, "skipped", f"unsupported file type ({_suffix(info.path) or 'no extension'})")
            )
            continue
        path, kind = found
        source = sources.setdefault(path, Source(path, kind, reports_dir=reports_dir))
        source.files.append(info)
    return sources, problems
