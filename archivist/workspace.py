"""Where things live: a workspace and its archive."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from archivist.errors import ArchivistError

DATABASE_NAME = "archive"

# Linux's limits: a whole path, and one name in it (in bytes).
MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255


APP_NAME = "archivist"


def archive_path(workspace: Path) -> Path:
    return Path(workspace) / ".archivist" / "archive.db"


def default_workspace() -> Path:
    """The workspace of one's own agent history when none is named: Archivist's folder in the
    platform's data folder (XDG_DATA_HOME or ~/.local/share on Linux, ~/Library/Application
    Support on macOS, %LOCALAPPDATA% on Windows). Nothing is created."""
    import platformdirs

    return platformdirs.user_data_path(APP_NAME, appauthor=False)


KEY_BYTES = 32
# A SQLite database's file and the files SQLite keeps beside it: its log, shared memory and journal.
SIDECARS = ("", "-wal", "-shm", "-journal")


def archive_files(archive: Path) -> set[Path]:
    """The archive, SQLite's files beside it and its masking key: never indexed, never served."""
    archive = Path(archive)
    return {
        archive,
        secret_key_path(archive),
        *(archive.with_name(archive.name + suffix) for suffix in SIDECARS[1:]),
    }


def secret_key_path(archive: Path) -> Path:
    """Where the key that tags an archive's masked secrets is kept: beside it, never in it."""
    archive = Path(archive)
    return archive.with_name(archive.name + ".mask-key")


def secret_key(archive: Path, create: bool = True) -> bytes | None:
    """The key that tags the secrets masked in ``archive`` (``build.secrets.Masker``).

    Made at random the first time (``create``), readable by its owner only, and kept beside
    the archive: whoever reads the archive (its SQL, its pages, its tools) never holds it,
    so a tag cannot be tested against a guessed password. Where it cannot be kept (a
    read-only folder), a key for this process alone: tags then hold within one run.
    None when there is none and ``create`` is false.
    """
    path = secret_key_path(archive)
    try:
        return _read_key(path)
    except (OSError, ValueError):
        if not create:
            return None
    key = secrets.token_bytes(KEY_BYTES)
    try:  # written whole beside it, then put in place at once: a run starting now reads it whole or not at all
        made = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        with os.fdopen(os.open(made, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="ascii") as out:
            out.write(key.hex() + "\n")
        try:
            os.link(made, path)  # fails where another run made one first: its key is the key
        except FileExistsError:
            try:
                key = _read_key(path)
            except ValueError:  # damaged: replaced whole
                os.replace(made, path)
        finally:
            made.unlink(missing_ok=True)
    except OSError:
        pass  # a folder it cannot be kept in: this process's key
    return key


def _read_key(path: Path) -> bytes:
    """The key kept at ``path``; ValueError for anything but one."""
    key = bytes.fromhex(path.read_text(encoding="ascii").strip())
    if len(key) != KEY_BYTES:
        raise ValueError(path)
    return key


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
