"""What the installed distributions say, kept between runs: a package's version, a group's entry points.

``archivist mcp`` starts for every agent session, and before it answers it asks two things of
the installed packages: the MCP SDK's version and the plugins of the ``archivist`` entry-point
group (the kinds of agent log they add), both of which shape the tools it lists (whether the
SDK's answers kept in the cache folder are this installation's: ``archivist.mcp.stdio``).
``importlib.metadata`` answers both by reading every installed distribution, and importing it
costs a start some 17 ms (it brings ``email`` and ``zipfile``). The answers are kept in the
cache folder (``cache_dir``) with the modification times of the folders on ``sys.path``:
installing, upgrading or removing a package changes its folder's, and they are read again.
A cache that cannot be read or written only costs the reading.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

GROUP = "archivist"  # the entry-point group of Archivist's plugins
PACKAGES = ("mcp",)  # the packages whose versions are asked at start
FILE = "installed.json"


def cache_dir() -> Path:
    """Archivist's cache folder: $ARCHIVIST_CACHE_DIR, else $XDG_CACHE_HOME/archivist, else ~/.cache/archivist."""
    if os.environ.get("ARCHIVIST_CACHE_DIR"):
        return Path(os.environ["ARCHIVIST_CACHE_DIR"]).expanduser()
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "archivist"
    return Path.home() / ".cache" / "archivist"


def version(package: str) -> str | None:
    """The installed version of ``package`` (one of ``PACKAGES``), None when it is not installed."""
    found = _facts()["versions"].get(package)
    return found if isinstance(found, str) else None


def entry_points() -> list[tuple[str, str]]:
    """The entry points of the ``archivist`` group: (name, module), in the order the distributions give them."""
    return [(name, value) for name, value in _facts()["entry_points"]]


# The sets of answers kept: one for each way of starting (a command, a test runner, a checkout on
# PYTHONPATH, another virtual environment ...), so that several used in turn do not push one another out.
KEPT = 16
_known: dict[str, Any] | None = None


def _facts() -> dict[str, Any]:
    """The facts, from this process's memory, else the cache file while ``sys.path`` is as it was, else read."""
    global _known
    stamp = _stamp()
    if _known is not None and _known["stamp"] == stamp:
        return _known
    path = cache_dir() / FILE
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        kept = None
    entries = [entry for entry in kept if _valid(entry)] if isinstance(kept, list) else []
    found = next((entry for entry in entries if entry["stamp"] == stamp), None)
    if found is not None:
        _known = found
        return found
    _known = {"stamp": stamp, **_read()}
    with contextlib.suppress(OSError):  # a read-only cache only costs the reading next time
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{FILE}.{os.getpid()}")
        temporary.write_text(json.dumps([_known, *entries][:KEPT]), encoding="utf-8")
        os.replace(temporary, path)
    return _known


def _stamp() -> list[list[Any]]:
    """Each folder on ``sys.path`` with its modification time (0 for one that is not there)."""
    stamp: list[list[Any]] = []
    for entry in sys.path:
        try:
            stamp.append([entry, os.stat(entry or ".").st_mtime_ns])
        except (OSError, ValueError):
            stamp.append([entry, 0])
    return stamp


def _read() -> dict[str, Any]:
    """The facts, from the installed distributions themselves."""
    from importlib import metadata

    versions: dict[str, str | None] = {}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    points = [[point.name, point.value] for point in metadata.entry_points(group=GROUP)]
    return {"versions": versions, "entry_points": points}


def _valid(kept: Any) -> bool:
    """Whether a cache file's content has the facts' shape (anything else is read again)."""
    return (
        isinstance(kept, dict)
        and isinstance(kept.get("stamp"), list)
        and isinstance(kept.get("versions"), dict)
        and isinstance(kept.get("entry_points"), list)
        and all(
            isinstance(point, list) and len(point) == 2 and all(isinstance(part, str) for part in point)
            for point in kept["entry_points"]
        )
    )
