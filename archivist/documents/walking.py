"""Walking a workspace: every regular file under it, and for anything else there, why it is
passed over."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from archivist.documents.model import FileInfo, Problem

IGNORED_DIRS = {".archivist", ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__"}
# The workspace's own settings at its top (its hosts to sync, Datasette's configuration): no documents.
SETTINGS_FILES = {"archivist.toml", "datasette.json", "datasette.yaml", "datasette.yml"}
_FILE_TYPES = (
    (stat.S_ISFIFO, "FIFO"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
)


class _Skip(Exception):
    """Why an entry of the workspace is not indexed."""


def safe_path(path: str) -> str:
    """``path`` as text that can be stored: bytes of a name that are not UTF-8 become ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _why(error: OSError) -> str:
    return error.strerror or str(error)


def walk(root: Path, exclude: set[Path] | None = None) -> tuple[list[FileInfo], list[Problem]]:
    """Every regular file under ``root``; anything else there is a problem, with its reason.

    Tools' folders (``IGNORED_DIRS``) and the workspace's settings files (``SETTINGS_FILES``)
    are passed over, and ``exclude`` (the archive) too. Folders are read one at a time, however deep. A symlink is followed only to
    a file inside the workspace, never to a folder (whose files are indexed where
    they are, if inside): the walk never leaves the workspace and never loops.
    """
    base = root.resolve()
    exclude = {p.resolve() for p in (exclude or set())}
    files: list[FileInfo] = []
    problems: list[Problem] = []
    folders = [""]
    while folders:
        folders.extend(reversed(_walk_folder(base, folders.pop(), exclude, files, problems)))
    return _unique_names(files, problems), problems


def _walk_folder(
    base: Path, folder: str, exclude: set[Path], files: list[FileInfo], problems: list[Problem]
) -> list[str]:
    """Add ``folder``'s files to ``files`` (and what is wrong to ``problems``); its subfolders."""
    try:
        with os.scandir(base / folder) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as error:
        problems.append(Problem(safe_path(folder) or ".", "skipped", f"unreadable folder: {_why(error)}"))
        return []
    subfolders = []
    for entry in entries:
        relative = f"{folder}/{entry.name}" if folder else entry.name
        try:
            if entry.name in IGNORED_DIRS and entry.is_dir():
                continue
            if not folder and entry.name in SETTINGS_FILES:
                continue
            if entry.is_dir(follow_symlinks=False):
                subfolders.append(relative)
                continue
            info = _regular_file(entry, base, exclude)
        except _Skip as skip:
            problems.append(Problem(safe_path(relative), "skipped", str(skip)))
            continue
        except OSError as error:
            problems.append(Problem(safe_path(relative), "skipped", f"unreadable: {_why(error)}"))
            continue
        if info is not None:
            path = safe_path(relative)
            files.append(FileInfo(path, info.st_size, info.st_mtime_ns, None if path == relative else relative))
    return subfolders


def _regular_file(entry: os.DirEntry, base: Path, exclude: set[Path]) -> os.stat_result | None:
    """The stat of the regular file that ``entry`` is (or links to, inside ``base``); None if excluded.

    Raises ``_Skip`` for anything else: a FIFO or socket (never opened: reading
    one would block), a symlink leaving the workspace, looping or broken.
    """
    if entry.is_symlink():
        target = _link_target(entry, base)
        if target in exclude:
            return None
        info = target.stat()
        if stat.S_ISDIR(info.st_mode):
            raise _Skip("symlink to a folder: not followed (the files inside the workspace are indexed where they are)")
    else:
        if Path(entry.path) in exclude:
            return None
        info = entry.stat(follow_symlinks=False)
    if not stat.S_ISREG(info.st_mode):
        raise _Skip(f"not a regular file ({_file_type(info.st_mode)})")
    return info


def _link_target(entry: os.DirEntry, base: Path) -> Path:
    """Where a symlink leads, when that is inside ``base``; else ``_Skip``."""
    try:
        target = Path(entry.path).resolve(strict=True)
    except FileNotFoundError:
        raise _Skip("broken symlink") from None
    except RuntimeError:  # "Symlink loop" (Python before 3.13)
        raise _Skip("symlink loop") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _Skip("symlink loop") from None
        raise
    if not target.is_relative_to(base):
        folder = " (to a folder)" if target.is_dir() else ""
        raise _Skip(f"symlink points outside the workspace{folder}")
    return target


def _file_type(mode: int) -> str:
    return next((name for test, name in _FILE_TYPES if test(mode)), "unknown type")


def _unique_names(files: list[FileInfo], problems: list[Problem]) -> list[FileInfo]:
    """``files`` less a name not valid UTF-8 whose escaped form is another file's name, written out."""
    seen = {info.path for info in files if info.os_path is None}
    unique = []
    for info in files:
        if info.os_path is not None and info.path in seen:
            reason = "file name is not valid UTF-8, and escaped it is another file's name"
            problems.append(Problem(f"{info.path} (not valid UTF-8)", "skipped", reason))
            continue
        seen.add(info.path)
        unique.append(info)
    return unique
