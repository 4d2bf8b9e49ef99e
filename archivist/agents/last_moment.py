"""When a session written a JSON line at a time last spoke, read from its file's end: the newest
``timestamp`` of its last lines, so that "newest first" means the session's own time, not the
time its file was last touched (a copy, a restore, a sync sets that).

Only the file's tail is read (``TAIL_BYTES``, up to ``MOST_BYTES`` where its last lines are
long), never the whole file; a file whose tail holds no time it can read falls back to its
modification time.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

TAIL_BYTES = 16_384  # read from a file's end first
MOST_BYTES = 1_048_576  # at most, where its last lines are longer than that
LINES = 4  # the last lines whose times are looked at


def last_moment(path: Path) -> float:
    """When the session in ``path`` last spoke, in seconds since the epoch: the newest time of its
    last complete lines, else the file's modification time (0 where it cannot be looked at)."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            found = _tail_moment(handle, size)
            return found if found is not None else os.fstat(handle.fileno()).st_mtime
    except OSError:
        return 0.0


def newest_first(paths: Iterable[Path]) -> list[Path]:
    """``paths`` ordered by ``last_moment``, newest first (the same moment: by name)."""
    dated = [(last_moment(path), str(path), path) for path in paths]
    dated.sort(key=lambda item: (-item[0], item[1]))
    return [path for _, _, path in dated]


def _tail_moment(handle: BinaryIO, size: int) -> float | None:
    """The newest time of the last ``LINES`` complete lines within the file's tail, read in blocks
    that double from ``TAIL_BYTES`` until a line ends within them or ``MOST_BYTES`` is read."""
    span = TAIL_BYTES
    while True:
        start = max(0, size - span)
        handle.seek(start)
        tail = handle.read(size - start)
        lines = tail.split(b"\n")
        if start > 0:
            lines = lines[1:]  # (the first is cut: its beginning lies before the block)
        whole = [line for line in lines if line.strip()]
        if whole or start == 0 or span >= MOST_BYTES:
            times = [moment for line in whole[-LINES:] if (moment := line_moment(line)) is not None]
            return max(times) if times else None
        span *= 2


def line_moment(line: bytes) -> float | None:
    """The ``timestamp`` of one JSON line (an ISO 8601 text, or seconds or milliseconds since the
    epoch), in seconds since the epoch; None where it has none that can be read."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    value = record.get("timestamp")
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        return float(seconds) if 0 <= seconds < 1e11 else None
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    try:
        return moment.timestamp()
    except (OverflowError, OSError, ValueError):
        return None
