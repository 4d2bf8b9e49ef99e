"""An export's container: the folder or ``.zip`` holding its ``conversations*.json`` files.

claude.ai's and ChatGPT's "Export data" give the same container: ``conversations.json``
(or ``conversations-0000.json``, … in their numbered order) beside other files, in a
folder or a zip, at its top or in a single folder below it. A zip is read in place,
never extracted, within the limits of ``archives`` (its members' names, the bytes it
inflates, its compression ratio, the time it takes). A file of the folder, or of the zip,
that is a symbolic link leading out of the export is not opened. Nothing is written.
"""

from __future__ import annotations

import codecs
import fnmatch
import io
import os
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist.agents import LINK_OUT, Root, archives, is_file, within
from archivist.agents.json_list import ENV_MAX_CONVERSATION_BYTES, MAX_CONVERSATION_BYTES, ExportError, Readable

CONVERSATION_FILES = "conversations*.json"

# What reading an export can raise, besides our own ExportError: a damaged zip, an unreadable file.
READ_ERRORS = (
    OSError,
    ValueError,
    RuntimeError,
    EOFError,
    NotImplementedError,
    zipfile.BadZipFile,
    zlib.error,
)


def conversation_limit() -> int:
    """The most characters of one conversation held to be parsed, as its setting gives it (SettingError if bad)."""
    text = os.environ.get(ENV_MAX_CONVERSATION_BYTES, "").strip()
    if not text:
        return MAX_CONVERSATION_BYTES
    try:
        limit = archives.parse_size(text)
    except ValueError:
        limit = 0
    if limit <= 0:
        raise archives.SettingError(
            f"the setting {ENV_MAX_CONVERSATION_BYTES}={text!r} is not a size such as 64MB: unset it, or give one"
        )
    return limit


class _Text:
    """Bytes read as text: UTF-8, a BOM dropped, bad bytes replaced, newlines as they are."""

    def __init__(self, raw: io.RawIOBase) -> None:
        self.raw = raw
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self.done = False

    def read(self, size: int, /) -> str:
        while not self.done:
            data = self.raw.read(size) or b""
            self.done = not data
            text = self.decoder.decode(data, final=self.done)
            if text:
                return text
        return ""


@dataclass(frozen=True)
class ExportFile:
    """One conversations file of an export."""

    name: str  # its name inside the export ("conversations.json", "data/conversations-0001.json")
    path: Path  # the file on disk it is read from: itself, or the zip that holds it
    member: archives.Member | None = None  # where it is in the zip
    folder: str | None = None  # the export folder as the file system resolves it, which a link may not leave

    @contextmanager
    def open_text(self, budget: archives.Budget | None = None) -> Iterator[Readable]:
        """The file as text (UTF-8, a BOM dropped, bad bytes replaced), read in place.

        A zip's member is inflated within ``budget`` (a new one, from the settings, if None).
        """
        raw: io.RawIOBase
        if self.member is not None:
            raw = archives.open_member(self.member, budget if budget is not None else archives.Budget())
        else:
            raw = _open_plain(self.path, self.folder)
        with raw:
            yield _Text(raw)


def _open_plain(path: Path, folder: str | None) -> io.RawIOBase:
    """A file of an export folder, opened only where it stays inside it and is a regular file."""
    if folder is not None and path.is_symlink() and not within(os.path.realpath(path), folder):
        raise ExportError(LINK_OUT)  # it was a plain file when listed, and is a link out now
    # Not blocking: a file replaced by a pipe since it was listed is refused, not waited on.
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise ExportError("is not read: it is not a regular file")
        return os.fdopen(descriptor, "rb", buffering=0)
    except BaseException:
        os.close(descriptor)
        raise


def _natural(name: str) -> list[Any]:
    """conversations-2.json before conversations-10.json."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _is_conversations(name: str) -> bool:
    return fnmatch.fnmatchcase(name, CONVERSATION_FILES)


@dataclass
class Export:
    """An export's conversations files, the names of the other files beside them, and what was left out."""

    files: list[ExportFile]
    siblings: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)  # files not opened (links out, members refused), and why
    limits: archives.Limits | None = None  # a zip's: what reading it may cost

    def budget(self) -> archives.Budget | None:
        """A budget for one reading of the export (a zip's), or None (a folder's files are read as they are)."""
        return archives.Budget(self.limits) if self.limits is not None else None


def open_export(path: Path) -> Export:
    """The conversations files of the export at ``path`` (a folder or a zip), in their order.

    Raises ExportError with a sentence saying what ``path`` is instead.
    """
    if not path.exists():
        raise ExportError(f"{path} does not exist")
    if path.is_dir():
        return _open_folder(path)
    if _is_conversations(path.name):
        raise ExportError(
            f"{path} is a conversations file, not an export: give the folder that holds it ({path.parent})"
        )
    try:
        is_zip = zipfile.is_zipfile(path)
    except OSError as error:
        raise ExportError(f"{path} cannot be read ({error.strerror or error})") from error
    if not is_zip:
        raise ExportError(f"{path} is neither a folder nor a .zip")
    return _open_zip(path)


def _open_folder(path: Path) -> Export:
    try:
        names = sorted(os.listdir(path), key=_natural)
    except OSError as error:
        raise ExportError(f"{path} cannot be listed ({error.strerror or error})") from error
    problems: list[str] = []
    root = Root(path, problems)  # tells each link that leads out of the folder, and opens none
    kept = [name for name in names if root.allows(path / name) and is_file(path / name)]
    files = [ExportFile(name, path / name, folder=root.real) for name in kept if _is_conversations(name)]
    if not files:
        raise ExportError(f"{path} holds no conversations.json" + _because(problems))
    return Export(files, set(kept), problems)


def _open_zip(path: Path) -> Export:
    limits = archives.Limits.from_env()
    try:
        listing = archives.list_zip(path, limits)
    except archives.ArchiveError as error:
        raise ExportError(f"{path} {error}") from error
    # Told: the members refused that would have been read, as some tool may see their names.
    problems = [
        f"{_shown(name)}: not read: {why}"
        for name, why in listing.refused
        if _is_conversations(re.split(r"[/\\:]", name.split("\x00")[0])[-1])
    ]
    # The files at the zip's top, else in a single folder below it (a re-zipped export folder).
    by_folder: dict[str, list[archives.Member]] = {}
    for member in listing.members:
        parts = member.name.split("/")
        if len(parts) <= 2 and not parts[0].startswith("__MACOSX"):
            by_folder.setdefault("/".join(parts[:-1]), []).append(member)
    for folder in sorted(by_folder, key=lambda name: (name != "", name)):
        members = sorted(by_folder[folder], key=lambda member: _natural(member.name))
        found = [member for member in members if _is_conversations(member.name.rsplit("/", 1)[-1])]
        if found:
            files = [ExportFile(member.name, path, member) for member in found]
            return Export(files, {member.name.rsplit("/", 1)[-1] for member in members}, problems, limits)
    raise ExportError(f"{path} is a zip that holds no conversations.json" + _because(problems))


def _shown(name: str) -> str:
    """A member's name in a sentence: as it is when printable, else quoted with escapes."""
    return name if name.isprintable() else repr(name)


def _because(problems: list[str]) -> str:
    return f" it may read ({'; '.join(problems)})" if problems else ""
