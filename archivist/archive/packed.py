"""A message's long texts (its thinking, a tool's output) as the archive stores them: compressed
with zlib into a BLOB where that makes them smaller (``packed``), and read back as text by the SQL
function ``archivist_text`` (``unpacked``), registered on every connection that reads the archive.

The texts are masked before they are packed (``archive.prepared``): what is packed holds no secret.
"""

from __future__ import annotations

import zlib
from typing import Any

PACKED_COLUMNS = ("thinking", "tool_output")  # the messages columns whose long texts are packed
SHORTEST = 256  # characters: a shorter text is stored as it is
LEVEL = 3  # zlib's: 3.5 times smaller on the bench's tool output and thinking, packed at about 95 MB a CPU-second
GAIN = 0.9  # a text is packed only where that keeps at most this much of its bytes
SQL_FUNCTION = "archivist_text"


def packed(text: Any) -> Any:
    """A text as the archive stores it: zlib's compressed bytes where it is long and they are
    smaller, else the text as it is (any value that is not a text too)."""
    if not isinstance(text, str) or len(text) < SHORTEST:
        return text
    raw = text.encode("utf-8", "replace")
    small = zlib.compress(raw, LEVEL)
    return small if len(small) <= len(raw) * GAIN else text


def unpacked(value: Any) -> Any:
    """A stored value as it was given to ``packed``: packed bytes as their text; any other value
    (a text, a number, bytes that zlib did not make) as it is."""
    if not isinstance(value, bytes):
        return value
    try:
        return zlib.decompress(value).decode("utf-8", "replace")
    except zlib.error:
        return value


def register(conn: Any) -> None:
    """Register ``archivist_text`` on a sqlite3 connection."""
    conn.create_function(SQL_FUNCTION, 1, unpacked, deterministic=True)
