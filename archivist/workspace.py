"""Where things live: a workspace and its archive."""

from __future__ import annotations

from pathlib import Path

from archivist.errors import ArchivistError

DATABASE_NAME = "archive"

# Linux's limits: a whole path, and one name in it (in bytes).
MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255


def archive_path(workspace: Path) -> Path:
    return Path(workspace) / ".archivist" / "archive.db"


def _not_a_folder(
    value: str, why: str, hint: str = "Leave workspace_path out to use the server's workspace."
) -> ArchivistError:
    shown = value if len(value) <= 120 else value[:117] + "..."
    return ArchivistError("DIRECTORY_NOT_FOUND", f"Workspace not found: {shown!r}", why, hint)


def malformed(value: str) -> str | None:
    """Why ``value`` cannot be a path on this machine (a NUL byte, too long), or None."""
    if "\x00" in value:
        return "A path cannot contain a NUL byte."
    encoded = value.encode("utf-8", "surrogatepass")
    if len(encoded) > MAX_PATH_BYTES or any(len(part) > MAX_NAME_BYTES for part in encoded.split(b"/")):
        return f"The path is too long (at most {MAX_PATH_BYTES} bytes, {MAX_NAME_BYTES} per name)."
    return None


def resolve_folder(value: str) -> Path | None:
    """Where a caller's folder path leads (home folder, symlinks and '..' resolved); None if to no folder.

    A malformed path (a NUL byte, too long, an unknown ~user) is DIRECTORY_NOT_FOUND.
    Nothing is created and nothing but metadata is read.
    """
    if why := malformed(value):
        raise _not_a_folder(value.replace("\x00", "\\x00"), why)
    path = Path(value)
    if value.startswith("~"):
        try:
            path = path.expanduser()
        except RuntimeError:  # ~user for a user this machine does not know
            raise _not_a_folder(value, "No such user's home folder on this machine.") from None
    try:
        folder = path.resolve(strict=True)
        return folder if folder.is_dir() else None
    except (OSError, RuntimeError, ValueError):  # missing, a symlink loop, a name the OS refuses
        return None
