"""Reading a file's text safely: within a size, never blocking, binary files told from text,
and text decoded as UTF-8 whatever it holds."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from archivist.documents.model import FileInfo, Problem
from archivist.documents.sources import _suffix
from archivist.documents.walking import _file_type, _why

MAX_FILE_BYTES = 2 * 1024 * 1024  # one document's text
MAX_DATA_FILE_BYTES = 128 * 1024 * 1024  # a .jsonl or .csv file holds many documents
DATA_SUFFIXES = {".jsonl", ".csv"}
# Bytes that plain text is made of, for telling binary files from text with a stray NUL.
_TEXT_BYTES = bytes(range(32, 256)) + b"\t\n\r\f\v\b\x1b"


def read_text(root: Path, info: FileInfo, problems: list[Problem]) -> str | None:
    """The file's text, or None (with a problem recorded) when it has none to give.

    Text is capped (a caveat says so), decoded as UTF-8 with replacement, and
    rid of NUL bytes; only a file that looks binary is skipped as such.
    """
    cap = MAX_DATA_FILE_BYTES if _suffix(info.path) in DATA_SUFFIXES else MAX_FILE_BYTES
    try:
        raw = _read_regular(root / info.disk_path, cap + 1)
    except OSError as error:
        problems.append(Problem(info.path, "skipped", f"unreadable: {_why(error)}"))
        return None
    if not raw.strip():
        problems.append(Problem(info.path, "skipped", "empty file"))
        return None
    if _looks_binary(raw[:8192]):
        problems.append(Problem(info.path, "skipped", "binary file"))
        return None
    truncated = len(raw) > cap
    raw = raw[:cap]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        if truncated and error.start >= len(raw) - 4:
            text = raw[: error.start].decode("utf-8", errors="replace")
        else:
            text = raw.decode("utf-8", errors="replace")
            problems.append(Problem(info.path, "degraded", "not valid UTF-8: decoded with replacement characters"))
    if truncated:
        problems.append(
            Problem(
                info.path, "degraded", f"larger than {cap // 2**20} MiB: only the first {cap // 2**20} MiB are indexed"
            )
        )
    if nuls := text.count("\x00"):
        text = text.replace("\x00", "")
        problems.append(Problem(info.path, "degraded", f"{nuls} NUL byte{'s' * (nuls > 1)} removed"))
    return text.lstrip("\ufeff")


def _read_regular(path: Path, limit: int) -> bytes:
    """Up to ``limit`` bytes of a regular file; OSError for anything else.

    Opened without blocking and checked once open: a FIFO put where a file was
    when the workspace was walked never hangs the run.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with open(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"not a regular file ({_file_type(mode)})")
        return handle.read(limit)


def _looks_binary(sample: bytes) -> bool:
    """NUL bytes among many control bytes (more than 1 in 10): binary, not text with a stray NUL."""
    return b"\x00" in sample and len(sample.translate(None, _TEXT_BYTES)) * 10 > len(sample)
