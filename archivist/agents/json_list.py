"""A JSON list of conversations read one item at a time, each item held only within limits.

An export's ``conversations.json`` can be gigabytes: it is read in chunks, and one
conversation at a time is parsed with the standard decoder. One longer than its limit
(``MAX_CONVERSATION_BYTES``, a setting) or nested deeper than ``MAX_DEPTH`` is read
through without being held, given as ``Skipped``, and the ones after it are read. A file
that is no JSON list, is damaged or cut short raises ExportError after the items before
the damage are given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from archivist.agents import MAX_DEPTH, TOO_DEEP, archives, too_deep

CHUNK_CHARS = 1 << 20  # characters read at a time from a conversations file
NUMBER_TAIL = 2  # characters a number cut short can end with that it does not parse ("e-" of "1e-5")
# A conversation is held as text, then as the objects it parses into, then as a session, masked and
# stored: many times its size, four times more again where one character beyond the BMP (an emoji)
# widens its strings. Measured through a whole index run: one of 16 MB so widened peaks near 300 MB,
# one of 31 MB near 570 MB. Real conversations are well under: a claude.ai one ends at its context
# window (under a few MB of JSON); a long ChatGPT one, with its branches, a few MB.
MAX_CONVERSATION_BYTES = 16 * archives.MB
ENV_MAX_CONVERSATION_BYTES = archives.ENV_MAX_CONVERSATION_BYTES


class ExportError(ValueError):
    """An export, or one of its files, that cannot be read: the message says what is wrong."""


class Readable(Protocol):
    """Text read a piece at a time (a text file, ``io.StringIO``)."""

    def read(self, size: int, /) -> str: ...


@dataclass(frozen=True)
class Skipped:
    """An item of the list passed over without being held whole or kept, and why."""

    reason: str


class _TooLarge(Exception):
    """A JSON value longer than the reader may hold."""


class _Cut(Exception):
    """The text ends inside a value."""


# Inside a list or an object: everything up to the next bracket, whole strings included, or up to a
# string the text read so far does not close. Possessive, and unrolled: what is read is never
# read again, however long a string is.
_INSIDE = re.compile(r'[^"\[\]{}]*+(?:"[^"\\]*+(?:\\[\s\S][^"\\]*+)*+"[^"\[\]{}]*+)*+')
_ATOM = re.compile(r'[^\s,\[\]{}"]*+')  # a number, true, false or null
_SPACE = re.compile(r"[ \t\r\n]*+")


def _backslashes(text: str) -> int:
    """How many backslashes ``text`` ends with."""
    return len(text) - len(text.rstrip("\\"))


def _end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where ``pattern`` (which matches nothing too) ends, matched at ``pos``."""
    match = pattern.match(text, pos)
    return match.end() if match else pos


class _Reader:
    """Text read in chunks, parsed one JSON value at a time with the standard decoder.

    One value is held whole while it is parsed: one longer than ``limit`` characters
    raises _TooLarge (a character is at least a byte: it is more than ``limit`` bytes),
    and ``skip`` then reads through the rest of it without holding it.
    """

    def __init__(self, stream: Readable, chunk: int, limit: int) -> None:
        self.stream = stream
        self.chunk = max(1, chunk)
        self.limit = max(1, limit)
        self.decoder = json.JSONDecoder()
        self.buffer = ""
        self.pos = 0
        self.offset = 0  # characters of the file before the buffer
        self.eof = False

    def position(self) -> int:
        return self.offset + self.pos

    def _fill(self, size: int) -> bool:
        """Read on, keeping what is not consumed yet: False at the end."""
        data = self.stream.read(size) if not self.eof else ""
        if not data:
            self.eof = True
        self.offset += self.pos
        self.buffer = self.buffer[self.pos :] + data
        self.pos = 0
        return bool(data)

    def _more(self) -> None:
        """Read on inside a value: as much again as is held (so a large value is parsed a
        bounded number of times), never more than ``limit`` characters of it and one."""
        held = len(self.buffer) - self.pos
        if held > self.limit:
            raise _TooLarge
        self._fill(min(max(self.chunk, len(self.buffer)), self.limit + 1 - held))

    def peek(self) -> str:
        """The next character that is not white space ("" at the end of the file)."""
        while True:
            self.pos = _end(_SPACE, self.buffer, self.pos)
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if self.eof or not self._fill(self.chunk):
                return ""

    def _maybe_cut(self, error: json.JSONDecodeError) -> bool:
        """Whether the decoder may have failed only because the buffer ends inside the value."""
        return error.msg.startswith("Unterminated string") or error.pos >= len(self.buffer) - 16

    def value(self) -> tuple[Any, int, int]:
        """The JSON value that starts at the next character, the characters of its text and how many
        brackets they open (JSONDecodeError where there is none; RecursionError where it nests past
        Python's limit)."""
        if self.peek() == "":
            raise json.JSONDecodeError("Expecting value", self.buffer, self.pos)
        while True:
            try:
                item, end = self.decoder.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as error:
                if self.eof or not self._maybe_cut(error):
                    raise
                self._more()
                continue
            if isinstance(item, int | float) and end + NUMBER_TAIL >= len(self.buffer) and not self.eof:
                self._more()  # a number may go on past the buffer ("3" of "3.25" cut after "3.")
                continue
            opened = self.buffer.count("[", self.pos, end) + self.buffer.count("{", self.pos, end)
            size, self.pos = end - self.pos, end
            return item, size, opened

    def skip(self, depth: int) -> bool:
        """Read through the value that starts here without holding it: whether it nests deeper than
        ``depth`` levels. Raises _Cut where the file ends inside it."""
        first = self.buffer[self.pos]
        if first not in '[{"':
            while (pos := _end(_ATOM, self.buffer, self.pos)) == len(self.buffer):
                self.pos = pos
                if not self._fill(self.chunk):
                    return False
            self.pos = pos
            return False
        self.pos += 1
        in_string, level, deepest = first == '"', int(first != '"'), 1
        while level or in_string:
            if in_string:
                in_string = self._through_string()
            else:
                char = self._to_bracket()
                if char == '"':
                    in_string = True
                else:
                    level += 1 if char in "[{" else -1
                    deepest = max(deepest, level)
        return deepest > depth

    def _through_string(self) -> bool:
        """Read on inside a string: False once past its closing quote, True where more is to be read.

        Quotes are found with ``str.find`` (a string of gigabytes goes by at memory speed); one
        after an odd run of backslashes is escaped.
        """
        buffer, pos = self.buffer, self.pos
        while (quote := buffer.find('"', pos)) >= 0:
            if buffer[quote - 1] != "\\" or _backslashes(buffer[pos:quote]) % 2 == 0:
                self.pos = quote + 1
                return False
            pos = quote + 1
        # No closing quote yet: all is read but a backslash whose escaped character is still to come.
        self.pos = len(buffer) - (_backslashes(buffer[pos:]) % 2 if buffer.endswith("\\") else 0)
        if not self._fill(self.chunk):
            raise _Cut
        return True

    def _to_bracket(self) -> str:
        """Read on to the next bracket, or to a quote that opens a string the buffer does not close: that character."""
        while (pos := _end(_INSIDE, self.buffer, self.pos)) == len(self.buffer):
            self.pos = pos
            if not self._fill(self.chunk):
                raise _Cut
        self.pos = pos + 1
        return self.buffer[pos]


def iter_json_list(
    stream: Readable, chunk: int | None = None, limit: int | None = None, depth: int = MAX_DEPTH
) -> Iterator[Any]:
    """The items of the JSON list in ``stream``, one at a time, each parsed once.

    An item longer than ``limit`` characters (``MAX_CONVERSATION_BYTES``) or nested deeper
    than ``depth`` levels is given as Skipped, read through without being held, and the
    items after it are read. A file that is no JSON list, is damaged or cut short raises
    ExportError after the items before the damage are given.
    """
    limit = limit or MAX_CONVERSATION_BYTES
    reader = _Reader(stream, chunk or CHUNK_CHARS, limit)
    first = reader.peek()
    if first == "":
        raise ExportError("is empty")
    if first != "[":
        raise ExportError("is not a JSON list" + (" (it is a JSON object)" if first == "{" else ""))
    reader.pos += 1
    if reader.peek() == "]":
        return
    count = 0
    while True:
        yield _item(reader, count + 1, depth)
        count += 1
        after = reader.peek()
        if after == ",":
            reader.pos += 1
        elif after == "]":
            return
        elif after == "":
            raise ExportError(f"ends after conversation {count}, before the list is closed (the file is cut short)")
        else:
            raise ExportError(
                f"has {after!r} after conversation {count} at character {reader.position()}, "
                "where a comma or the end of the list belongs: the rest of the file is skipped"
            )


def _item(reader: _Reader, number: int, depth: int) -> Any:
    """Item ``number`` of the list, from the next character: its value, or Skipped."""
    try:
        try:
            item, size, opened = reader.value()
        except _TooLarge:
            deep = reader.skip(depth)
            return Skipped(TOO_DEEP if deep else _too_large(reader.limit))
        except RecursionError:
            reader.skip(depth)
            return Skipped(TOO_DEEP)
        except json.JSONDecodeError:
            raise
        except ValueError:  # the decoder's other refusal: a number of more digits than Python converts
            reader.skip(depth)
            return Skipped("it holds a number too long to read")
    except (json.JSONDecodeError, _Cut) as error:
        if isinstance(error, _Cut) or (reader.eof and reader._maybe_cut(error)):
            raise ExportError(f"ends inside conversation {number} (the file is cut short): it is skipped") from None
        raise ExportError(
            f"has invalid JSON in conversation {number} at character {reader.offset + error.pos} "
            f"({error.msg}): it and the rest of the file are skipped"
        ) from error
    if opened > depth and too_deep(item, depth):  # counting brackets, at C speed, spares most walks
        return Skipped(TOO_DEEP)
    if size > reader.limit:  # read whole with the chunk it was in: the limit holds all the same
        return Skipped(_too_large(reader.limit))
    return item


def _too_large(limit: int) -> str:
    return (
        f"over {archives.amount(limit)}, more than one conversation read whole may have; raise it with "
        f"{ENV_MAX_CONVERSATION_BYTES}={archives.setting_size(2 * limit)}"
    )
