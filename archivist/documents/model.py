"""What walking and parsing a workspace yield (files, sources, parsed documents, problems),
and values as SQLite stores them."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

from archivist.texts import valid


@dataclass
class FileInfo:
    path: str  # relative to the workspace, with forward slashes, as stored (see safe_path)
    size: int
    mtime_ns: int
    os_path: str | None = None  # the name on disk, where it is not valid UTF-8 and ``path`` escapes it

    @property
    def disk_path(self) -> str:
        return self.os_path or self.path


@dataclass(frozen=True)
class Problem:
    path: str
    status: str  # "skipped" (nothing indexed) or "degraded" (indexed with a caveat)
    reason: str


@dataclass
class Source:
    path: str
    kind: str
    files: list[FileInfo] = field(default_factory=list)
    reports_dir: str = "reports"


@dataclass
class Parsed:
    documents: list[dict[str, Any]]
    problems: list[Problem]
    content_hash: str


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def storable(value: Any) -> Any:
    """``value`` as SQLite stores it whole.

    Strings become valid UTF-8 without NUL (a lone surrogate, from a JSON or YAML
    escape, becomes U+FFFD), keys become text, and NaN and infinity (which
    SQLite's JSON functions reject) become null.
    """
    if isinstance(value, str):
        return valid(value.replace("\x00", "") if "\x00" in value else value)
    if isinstance(value, dict):
        return {storable(str(key)): storable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
