"""Compressed inputs read in place and within limits: a zip's members, safely named, inflated as a stream.

A zip is never extracted: a member is inflated straight from the zip a piece at a time,
and nothing is written. What may be read is judged from the zip's central directory
before a byte is inflated, and judged again from the bytes as they come, since a
directory can lie:

- names: a member whose name is absolute (``/conversations.json``), holds a drive
  (``C:``), a ``..``, an empty or ``.`` folder, a backslash or a control character is not
  read (it would land outside the folder it is unpacked to, or means different files to
  different tools); of two members of one name the last is read (the one ``unzip``
  leaves) and the other is told; a symbolic link, an encrypted member, or a compression
  other than stored or deflate is not read. ``list_zip`` says why of each member it refuses.
- limits (``Limits``, read from settings that the sentence refusing names): the bytes
  inflated in one reading of one input, the ratio of a member's inflated size to its
  compressed size (from the directory, then from the bytes actually read against the
  bytes actually inflated), the seconds one reading takes, and the size of the zip's
  directory (which ``zipfile`` holds whole). A limit hit raises LimitError.
- a member that gives more bytes than its header says, fewer, or bytes whose checksum
  does not match raises ArchiveError.
"""

from __future__ import annotations

import io
import os
import re
import stat
import struct
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from archivist.agents import size_text

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

KB, MB, GB = 1024, 1024**2, 1024**3

# Real exports: conversations.json is tens to a few hundred MB (the largest reported, about 1 GB).
# 4 GB inflated in all leaves a margin of 4 to 40 times, and bounds what a zip can cost to read:
# an export is inflated and parsed at some 150 MB/s (a 380 MB one in 2.6 s), 4 GB in under a minute.
MAX_BYTES = 4 * GB
# JSON compresses 5 to 20 times with deflate; a bomb of one repeated byte, about 1,000 times
# (deflate's ceiling). 100 leaves a fivefold margin over the most compressible real export and
# refuses every bomb near deflate's ceiling from its directory, before anything is inflated.
MAX_RATIO = 100.0
# A member may give this much whatever its ratio: a small file compresses unevenly (a list of
# empty conversations, a file of spaces), and no bomb does harm below it.
RATIO_FLOOR = MB
# Reading 4 GB takes under a minute; ten minutes is a wide margin for a slow disk or a busy
# machine, and a bound on an input slow for a reason no other limit sees. The clock stops while
# the caller stores what was read (``Budget.paused``): only reading counts.
MAX_SECONDS = 600.0
# zipfile holds a zip's whole directory, at about 7 times its size in memory: 16 MB is some
# 170,000 members of an export's names (real exports hold a few thousand, with their images)
# and at most about 250 MB held, whatever the names.
MAX_DIRECTORY_BYTES = 16 * MB
READ_BYTES = 64 * KB  # compressed bytes read at a time

ENV_MAX_BYTES = "ARCHIVIST_UNZIP_MAX_BYTES"
ENV_MAX_RATIO = "ARCHIVIST_UNZIP_MAX_RATIO"
ENV_MAX_SECONDS = "ARCHIVIST_UNZIP_MAX_SECONDS"
ENV_MAX_DIRECTORY_BYTES = "ARCHIVIST_UNZIP_MAX_DIRECTORY_BYTES"
ENV_MAX_CONVERSATION_BYTES = "ARCHIVIST_EXPORT_MAX_CONVERSATION_BYTES"  # (read by the export readers)
# Every setting that changes what a reading gives: a source is read again when one changes.
SETTINGS = (ENV_MAX_BYTES, ENV_MAX_RATIO, ENV_MAX_SECONDS, ENV_MAX_DIRECTORY_BYTES, ENV_MAX_CONVERSATION_BYTES)

_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_END = b"PK\x06\x06"
_END = b"PK\x05\x06"
_LOCAL = b"PK\x03\x04"
_LOCAL_SIZE = 30
_UTF8_NAME = 0x800
_ENCRYPTED = 0x1 | 0x40  # traditional and strong encryption
_READABLE = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
_COMPRESSIONS = {9: "Deflate64", 12: "bzip2", 14: "LZMA", 93: "Zstandard", 95: "XZ", 98: "PPMd", 99: "AES"}
_SIZE_RE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)
_DRIVE_RE = re.compile(r"[A-Za-z]:")


class ArchiveError(ValueError):
    """A zip, or a member of it, that cannot be read: the message says what is wrong."""


class LimitError(ValueError):
    """A limit on reading compressed input was hit: the message says which and how to raise it."""


class BudgetSpent(LimitError):
    """The bytes or the time one reading of an input may spend are spent: nothing more of it is read."""


class SettingError(ValueError):
    """A setting of a limit that is not a value of its kind: the message says what was expected."""


# ---------------------------------------------------------------------------------------------
# Limits and their settings


def parse_size(text: str) -> int:
    """A size as a setting gives it: bytes (``1048576``), or with a unit, ``500MB``, ``4GB``, ``1.5 GiB``.

    Units are powers of 1024, as sizes are shown. Raises ValueError for anything else.
    """
    match = _SIZE_RE.fullmatch(text)
    if match is None:
        raise ValueError(text)
    number, unit = match.groups()
    return int(float(number) * 1024 ** " kmgt".index((unit or " ").lower()))


def _setting(environ: Mapping[str, str], name: str, default: float, parse: Callable[[str], float], kind: str) -> float:
    text = environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = parse(text)
    except ValueError:
        value = 0
    if not value > 0:
        raise SettingError(f"the setting {name}={text!r} is not {kind}: unset it, or give one")
    return value


@dataclass(frozen=True)
class Limits:
    """How much one reading of one compressed input may cost."""

    max_bytes: int = MAX_BYTES
    max_ratio: float = MAX_RATIO
    max_seconds: float = MAX_SECONDS
    max_directory_bytes: int = MAX_DIRECTORY_BYTES

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The limits as the settings (environment variables) give them; SettingError for one that is no value."""
        environ = os.environ if environ is None else environ
        size, number = "a size such as 8GB", "a number above 0"
        return cls(
            max_bytes=int(_setting(environ, ENV_MAX_BYTES, MAX_BYTES, parse_size, size)),
            max_ratio=_setting(environ, ENV_MAX_RATIO, MAX_RATIO, float, number),
            max_seconds=_setting(environ, ENV_MAX_SECONDS, MAX_SECONDS, float, number),
            max_directory_bytes=int(_setting(environ, ENV_MAX_DIRECTORY_BYTES, MAX_DIRECTORY_BYTES, parse_size, size)),
        )

    def ratio_over(self, inflated: int, compressed: int) -> float | None:
        """The ratio of ``inflated`` bytes to the ``compressed`` bytes they came from, where it is
        more than a member of a zip may have (one that gives ``RATIO_FLOOR`` or less may have any);
        None within the limit."""
        if inflated <= max(self.max_ratio * compressed, RATIO_FLOOR):
            return None
        return inflated / max(compressed, 1)


def amount(size: int) -> str:
    """A size in a sentence: bytes below a megabyte, else ``size_text``'s MB and GB."""
    return f"{size:,} bytes" if size < MB else size_text(size)


def setting_size(size: int) -> str:
    """A size as a setting may be given (the unit the sentence shows), rounded up."""
    return size_text(max(size, MB)).replace(" ", "")


def _inflates_too_much(limits: Limits, said: str, allow: float, aside: str = "") -> LimitError:
    """The refusal of a member that inflates more times than ``limits`` let one: ``said`` tells
    how many, ``aside`` adds to the limit, and the setting it suggests lets ``allow`` times (at
    least twice the limit)."""
    return LimitError(
        f"{said}, more than the {limits.max_ratio:g} times a member of a zip may{aside} (a zip bomb?); "
        f"raise it with {ENV_MAX_RATIO}={max(2 * limits.max_ratio, allow):.0f} if the zip is trusted"
    )


def _times(ratio: float) -> str:
    return f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:,.1f}"


class Budget:
    """One reading of one compressed input: the bytes it inflated and the time it took, against ``limits``."""

    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits if limits is not None else Limits.from_env()
        self.clock = clock
        self.spent = 0
        self.deadline = clock() + self.limits.max_seconds

    def spend(self, size: int) -> None:
        """Count ``size`` bytes inflated; LimitError once the bytes or the time are spent."""
        self.spent += size
        if self.spent > self.limits.max_bytes:
            raise BudgetSpent(self.bytes_refusal(self.spent))
        self.check_time()

    def check_time(self) -> None:
        if self.clock() > self.deadline:
            limit = self.limits.max_seconds
            raise BudgetSpent(
                f"not read past {amount(self.spent)}: reading took more than the {limit:g} s one compressed input "
                f"may take; raise it with {ENV_MAX_SECONDS}={max(2 * limit, 60):g}"
            )

    def bytes_refusal(self, size: int) -> str:
        limit = self.limits.max_bytes
        return (
            f"not read past {amount(limit)}: it inflates to {amount(size)} or more, more than the "
            f"{amount(limit)} one compressed input may give in all; "
            f"raise it with {ENV_MAX_BYTES}={setting_size(max(2 * limit, size))}"
        )

    @contextmanager
    def paused(self) -> Iterator[None]:
        """While the caller holds what was read (stores it), the clock stops."""
        start = self.clock()
        try:
            yield
        finally:
            self.deadline += self.clock() - start


# ---------------------------------------------------------------------------------------------
# A zip's members


@dataclass(frozen=True)
class Member:
    """One member of a zip that may be read: where its data is and what its directory says of it."""

    zip_path: Path
    name: str
    offset: int  # of its local header
    method: int
    compress_size: int
    file_size: int
    crc: int
    utf8_name: bool


@dataclass
class Listing:
    """A zip's members that may be read (one per name, in the zip's order) and those refused, with why."""

    members: list[Member] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)


def list_zip(path: Path, limits: Limits | None = None) -> Listing:
    """The members of the zip at ``path``, each judged from the directory.

    Raises ArchiveError for a file that is no readable zip, LimitError for a directory too large to hold.
    """
    limits = limits if limits is not None else Limits.from_env()
    try:
        with open(path, "rb") as handle:
            directory = _directory_size(handle)
    except OSError as error:
        raise ArchiveError(f"cannot be read ({error.strerror or error})") from error
    if directory is not None and directory > limits.max_directory_bytes:
        raise LimitError(
            f"not read: its list of files is {amount(directory)}, more than the "
            f"{amount(limits.max_directory_bytes)} a zip's list may be; raise it with "
            f"{ENV_MAX_DIRECTORY_BYTES}={setting_size(max(2 * limits.max_directory_bytes, directory))}"
        )
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except (OSError, EOFError, ValueError, RuntimeError, NotImplementedError, zipfile.BadZipFile) as error:
        raise ArchiveError(f"is not a readable zip ({error})") from error
    return _judged(path, infos)


def _judged(path: Path, infos: list[zipfile.ZipInfo]) -> Listing:
    files = [info for info in infos if not info.orig_filename.endswith("/")]  # a folder holds nothing to read
    refused = {id(info): refusal(info) for info in files}
    last = {info.orig_filename: id(info) for info in files if refused[id(info)] is None}
    listing = Listing()
    for info in files:
        name, why = info.orig_filename, refused[id(info)]
        if why is None and last[name] != id(info):
            why = "another member of the same name comes after it in the zip, and that one is read"
        if why is not None:
            listing.refused.append((name, why))
            continue
        listing.members.append(
            Member(
                zip_path=path,
                name=name,
                offset=info.header_offset,
                method=info.compress_type,
                compress_size=info.compress_size,
                file_size=info.file_size,
                crc=info.CRC,
                utf8_name=bool(info.flag_bits & _UTF8_NAME),
            )
        )
    return listing


def refusal(info: zipfile.ZipInfo) -> str | None:
    """Why a member of a zip is not read, from its directory entry; None when it may be."""
    name = info.orig_filename
    parts = name.split("/")
    if any(ord(char) < 32 or char == "\x7f" for char in name):
        return "its name holds a control character (a NUL, a new line)"
    if "\\" in name:
        return "its name holds a backslash (a zip separates folders with /)"
    if name.startswith("/"):
        return "its name is absolute (it starts with /)"
    if _DRIVE_RE.match(name):
        return "its name starts with a drive"
    if ".." in parts:
        return "its name climbs out of the zip's folder (..)"
    if any(part in ("", ".") for part in parts):
        return "its name holds an empty or . folder"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "it is a symbolic link, which is not followed"
    if info.flag_bits & _ENCRYPTED:
        return "it is encrypted: unzip it with its password and give the folder instead"
    if info.compress_type not in _READABLE:
        method = _COMPRESSIONS.get(info.compress_type, f"method {info.compress_type}")
        return f"it is compressed with {method}, which is not read: zip it again with the usual deflate compression"
    return None


def _directory_size(handle: BinaryIO) -> int | None:
    """The size of a zip's central directory as its end record says, or None where there is no end record."""
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    start = max(0, size - (22 + 0xFFFF))  # the end record, and a comment of at most 64 KB after it
    handle.seek(start)
    tail = handle.read()
    at = tail.rfind(_END)
    if at < 0 or len(tail) - at < 22:
        return None
    (directory,) = struct.unpack_from("<L", tail, at + 12)
    locator = at - 20
    if locator >= 0 and tail[locator : locator + 4] == _ZIP64_LOCATOR:
        (record,) = struct.unpack_from("<Q", tail, locator + 8)
        handle.seek(record)
        end64 = handle.read(56)
        if len(end64) == 56 and end64[:4] == _ZIP64_END:
            (directory,) = struct.unpack_from("<Q", end64, 40)
    return int(directory)


# ---------------------------------------------------------------------------------------------
# Reading a member


def open_member(member: Member, budget: Budget) -> io.RawIOBase:
    """The inflated bytes of ``member``, read as a stream within ``budget``.

    Raises LimitError before reading when the directory already says a limit would be hit,
    and while reading when the bytes say so; ArchiveError for a damaged or forged member.
    """
    limits = budget.limits
    ratio = limits.ratio_over(member.file_size, member.compress_size)
    if ratio is not None:
        raise _inflates_too_much(
            limits,
            f"not read: it would inflate {_times(ratio)} times ({amount(member.file_size)} from "
            f"{amount(member.compress_size)})",
            ratio * 1.1,
        )
    if budget.spent + member.file_size > limits.max_bytes:
        raise BudgetSpent(budget.bytes_refusal(budget.spent + member.file_size))
    budget.check_time()
    handle = open(member.zip_path, "rb")  # noqa: SIM115 (the stream returned owns it)
    try:
        _seek_data(handle, member)
    except BaseException:
        handle.close()
        raise
    return _Inflating(handle, member, budget)


def _seek_data(handle: BinaryIO, member: Member) -> None:
    """Move ``handle`` to the first byte of the member's data, past its local header, which must name it."""
    handle.seek(member.offset)
    header = handle.read(_LOCAL_SIZE)
    if len(header) < _LOCAL_SIZE or header[:4] != _LOCAL:
        raise ArchiveError("is damaged: its local header is missing")
    (flags,) = struct.unpack_from("<H", header, 6)
    name_size, extra_size = struct.unpack_from("<2H", header, 26)
    if flags & _ENCRYPTED:
        raise ArchiveError("is encrypted (its local header says so): unzip it with its password and give the folder")
    raw_name = handle.read(name_size)
    local_name = raw_name.decode("utf-8" if member.utf8_name else "cp437", errors="replace")
    if local_name != member.name:
        raise ArchiveError(f"is damaged or forged: its local header names another file ({local_name!r})")
    handle.seek(extra_size, os.SEEK_CUR)


class _Inflating(io.RawIOBase):
    """A member's data inflated as it is read, checked against its directory entry and the budget."""

    def __init__(self, handle: BinaryIO, member: Member, budget: Budget) -> None:
        super().__init__()
        self._handle = handle
        self._member = member
        self._budget = budget
        self._left = member.compress_size  # compressed bytes not yet read
        self._read = 0  # compressed bytes read
        self._given = 0  # inflated bytes given
        self._crc = 0
        self._inflater = zlib.decompressobj(-15) if member.method == zipfile.ZIP_DEFLATED else None
        self._ended = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        view = memoryview(buffer).cast("B")
        data = self._next(len(view))
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._handle.close()
        super().close()

    def _next(self, size: int) -> bytes:
        while not self._ended and size > 0:
            data = self._compressed(size) if self._inflater is None else self._inflate(size)
            if data:
                self._account(data)
                return data
            if self._inflater is None or self._inflater.eof:
                self._end()
        return b""

    def _inflate(self, size: int) -> bytes:
        assert self._inflater is not None
        if self._inflater.eof:
            return b""
        pending = self._inflater.unconsumed_tail
        if not pending:
            pending = self._compressed(READ_BYTES)
            if not pending:
                raise ArchiveError("is damaged: its compressed data ends before its stream does")
        return self._inflater.decompress(pending, size)

    def _compressed(self, size: int) -> bytes:
        """Up to ``size`` bytes more of the member's data as stored, b"" once all are read."""
        if self._left <= 0:
            return b""
        data = self._handle.read(min(size, self._left))
        if not data:
            raise ArchiveError("is damaged: the zip ends inside it")
        self._left -= len(data)
        self._read += len(data)
        return data

    def _account(self, data: bytes) -> None:
        self._given += len(data)
        self._crc = zlib.crc32(data, self._crc)
        member, limits = self._member, self._budget.limits
        if self._given > member.file_size:
            raise ArchiveError(
                f"is damaged or forged: it inflates to more than the {amount(member.file_size)} its header says"
            )
        ratio = limits.ratio_over(self._given, self._read)
        if ratio is not None:
            raise _inflates_too_much(
                limits,
                f"not read past {amount(self._given)}: it inflated {_times(ratio)} times (from {amount(self._read)})",
                ratio,
                ", whatever its header says",
            )
        self._budget.spend(len(data))

    def _end(self) -> None:
        self._ended = True
        if self._given != self._member.file_size:
            raise ArchiveError(
                f"is damaged: it holds {amount(self._given)} where its header says {amount(self._member.file_size)}"
            )
        if self._crc != self._member.crc:
            raise ArchiveError("is damaged: its checksum does not match its data")
