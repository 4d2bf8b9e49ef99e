"""A Claude Code file's lines, streamed into the sessions they belong to, and what their reading skipped.

Files are read line by line (a line over 64 MB is skipped and counted), bytes that are
not UTF-8 are replaced, and lines that are not JSON objects, or of an unknown type, are
counted in the session's problems; the last line of a file still being written (no
newline yet) is left for the next read.

A file read on from where its last reading stopped (``read_prefix``) has what its lines
before that point decide looked at again, without parsing each one: the ``uuid`` of every
line (a later copy of one is dropped), its title lines, and its lines up to its first
request (until then, a later line can still decide the title); after it, its lines are looked
at a block at a time, each block searched once for each of these. What that look found is kept
for the file's next reading on (``Looked``, the last few files), so that a file followed as it
grows has only its lines since then looked at, not all of them again.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
from collections import Counter, OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from archivist.agents import LONG_LINE, NOT_JSON, NotJSON, json_value, lines, skipped_problems
from archivist.agents.claude_code.session import KNOWN_TYPES, Builder, Seen, Sidechains
from archivist.agents.claude_code.titles import Titles

UUID_RE = re.compile(rb'"uuid"\s*:\s*"([^"\\]{1,200})"')  # a line's uuid, found without parsing it
SESSION_ID_RE = re.compile(rb'"sessionId"\s*:\s*"([^"\\]{1,200})"')
ID_RE = re.compile(rb'"id"\s*:\s*"([^"\\]{1,200})"')  # in an assistant line: its message.id (and its blocks' ids)
TITLE_MARKS = (b'"summary"', b'"custom-title"', b'"ai-title"')  # in every line that can be a title line
# a line's uuid, session id and ids as above, found in a block of whole lines: never across a line's end
BLOCK_UUID_RE = re.compile(rb'"uuid"[ \t\r\f\v]*:[ \t\r\f\v]*"([^"\\\n]{1,200})"')
BLOCK_SESSION_ID_RE = re.compile(rb'"sessionId"[ \t\r\f\v]*:[ \t\r\f\v]*"([^"\\\n]{1,200})"')
BLOCK_ID_RE = re.compile(rb'"id"[ \t\r\f\v]*:[ \t\r\f\v]*"([^"\\\n]{1,200})"')
BLOCK_TITLE_MARKS = (b'"summary"', b'-title"')  # in a block holding a title line (two searches, not three)
BLOCK_BYTES = 8 << 20  # the lines looked at together once the first request is known
LOOKED_FILES = 4  # the files whose earlier lines' look is kept for their next reading on
EDGE_BYTES = 4096  # the bytes before where a look stopped, and a file's first: a rewrite changes them


@dataclass
class Tally:
    """What a file's reading skipped or repaired, told as the session's problems."""

    skipped: Counter[str] = field(default_factory=Counter)
    replaced: int = 0
    stopped: str | None = None
    line_at: int = 0  # the byte offset of the line being read

    def problems(self) -> list[str]:
        problems = skipped_problems(self.skipped)
        if self.replaced:
            problems.append(
                f"{self.replaced} {'line has' if self.replaced == 1 else 'lines have'} bytes that are not UTF-8 (replaced)"
            )
        if self.stopped:
            problems.append(self.stopped)
        return problems


def _records(path: Path, tally: Tally, start: int = 0) -> Iterator[dict[str, Any]]:
    """The JSON objects of a file's lines from byte ``start``, streamed; what is not one is
    counted in ``tally``, and ``tally.line_at`` is the offset of the line just yielded.

    A last line with no newline that does not parse is a line still being written: left
    for the next read, not a problem.
    """
    number = 0
    try:
        with path.open("rb") as handle:
            handle.seek(start)
            position = start
            pending: tuple[bytes | None, int] | None = None  # a line and its length, parsed once the next is read
            for line in lines(handle):
                if pending is not None:
                    number += 1
                    record = _parse(pending[0], tally, last=False)
                    if record is not None:
                        tally.line_at = position
                        yield record
                    position += pending[1]
                pending = line
            if pending is not None:
                number += 1
                raw = pending[0]
                record = _parse(raw, tally, last=raw is not None and not raw.endswith(b"\n"))
                if record is not None:
                    tally.line_at = position
                    yield record
    except OSError as error:
        tally.stopped = f"reading stopped after line {number}: {error.strerror or error}"


def _parse(raw: bytes | None, tally: Tally, last: bool) -> dict[str, Any] | None:
    """A line's JSON object (None: not one, counted in ``tally``); ``raw`` is None for a line
    too long to be read, which is counted even as the last line."""
    if raw is None:
        tally.skipped[LONG_LINE] += 1
        return None
    if not raw.strip():
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        tally.replaced += 1
    try:
        record = json_value(text)
    except NotJSON as error:
        if not last or str(error) != NOT_JSON:  # a last line not yet whole is left for the next read
            tally.skipped[str(error)] += 1
        return None
    if not isinstance(record, dict):
        tally.skipped["not a JSON object"] += 1
        return None
    return record


def read_lines_into(path: Path, main: Builder, sidechains: Sidechains | None, start: int = 0) -> bool:
    """Read one file's lines from byte ``start`` into ``main`` (and its inline sidechains
    into ``sidechains``); whether any line was a sidechain's."""
    lines = Lines(path, main, sidechains, start)
    for _ in lines:
        pass
    return lines.sidechain


class Lines:
    """One file's lines from byte ``start`` read into ``main`` (and its inline sidechains into
    ``sidechains``) as it is iterated: the byte offset of each line read, so that a reader can
    take the messages read so far (``Builder.drain``) before it reads on."""

    def __init__(self, path: Path, main: Builder, sidechains: Sidechains | None, start: int = 0) -> None:
        self.path, self.main, self.sidechains, self.start = path, main, sidechains, start
        self.sidechain = False  # whether a line was a sidechain's

    def __iter__(self) -> Iterator[int]:
        tally = Tally()
        for record in _records(self.path, tally, self.start):
            yield tally.line_at
            self._take(record, tally)
        self.main.problems.extend(tally.problems())

    def _take(self, record: dict[str, Any], tally: Tally) -> None:
        main, sidechains = self.main, self.sidechains
        kind = record.get("type")
        if not isinstance(kind, str):
            tally.skipped["with no type"] += 1
            return
        if kind not in KNOWN_TYPES:
            tally.skipped[f"unknown type {kind!r}"] += 1
            return
        builder = main
        if kind == "progress":
            main.note_progress(record)
        if record.get("isSidechain") is True:
            self.sidechain = True
            if sidechains is not None:
                builder = sidechains.builder_for(record)
        if not builder.take(record, kind):
            tally.skipped[f"malformed {kind!r}"] += 1
        builder.offsets.extend([tally.line_at] * (len(builder.messages) - len(builder.offsets)))


@dataclass
class Prefix:
    """What a file's lines before the point its reading resumes at name: the session ids, and
    the ids in its assistant lines (each response's ``message.id`` among them; once its first
    request is known, those of its other lines too: ``Look.block``)."""

    session_ids: set[str] = field(default_factory=set)
    ids: set[str] = field(default_factory=set)


@dataclass
class Looked:
    """What a file's lines before ``end`` were found to hold (``read_prefix``), and the file's
    identity then (device, inode, and a digest of its first bytes and of those before ``end``)."""

    end: int
    identity: tuple[int, int, str]
    uuids: dict[str, int]
    titles: Titles
    prefix: Prefix


_looked: OrderedDict[Path, Looked] = OrderedDict()


def _identity(path: Path, end: int) -> tuple[int, int, str] | None:
    """A file's device, inode, and a digest of its first bytes and of those before byte ``end``."""
    try:
        with path.open("rb") as handle:
            status = os.fstat(handle.fileno())
            digest = hashlib.sha256(handle.read(min(end, EDGE_BYTES)))
            start = max(0, end - EDGE_BYTES)
            handle.seek(start)
            digest.update(handle.read(end - start))
    except OSError:
        return None
    return status.st_dev, status.st_ino, digest.hexdigest()


def _looked_before(path: Path, end: int) -> Looked | None:
    """The look kept for ``path``, where it stopped at or before ``end`` in the same file, unchanged."""
    looked = _looked.get(path)
    if looked is None or looked.end > end or _identity(path, looked.end) != looked.identity:
        return None
    return looked


def _keep(path: Path, end: int, builder: Builder, prefix: Prefix) -> None:
    """Keep what a file's lines before ``end`` hold, for its next reading on, where its first
    request is known (a look that stopped before it would need a whole builder's state)."""
    identity = _identity(path, end)
    if identity is None or not builder.titles.settled:
        _looked.pop(path, None)
        return
    kept = Prefix(set(prefix.session_ids), set(prefix.ids))
    _looked[path] = Looked(end, identity, dict(builder.uuids), copy.deepcopy(builder.titles), kept)
    _looked.move_to_end(path)
    while len(_looked) > LOOKED_FILES:
        _looked.popitem(last=False)


def read_prefix(path: Path, end: int, builder: Builder) -> Prefix | None:
    """Look again at a file's lines before byte ``end`` (where its reading resumes) for what
    they decide of ``builder``: the uuids it holds, its title lines, its first request; the
    ids they name. None when the file cannot be read; nothing is told (these lines were
    read, and told, before). A look kept from the file's last reading on is gone on from
    where it stopped."""
    looked = _looked_before(path, end)
    prefix, start = Prefix(), 0
    if looked is not None:
        builder.uuids, builder.titles = dict(looked.uuids), copy.deepcopy(looked.titles)
        prefix, start = Prefix(set(looked.prefix.session_ids), set(looked.prefix.ids)), looked.end
    if not _look(path, start, end, builder, prefix):
        _looked.pop(path, None)
        return None
    _keep(path, end, builder, prefix)
    return prefix


class Look:
    """A look at a file's earlier lines: what they hold goes into ``builder`` and ``prefix``; a
    scout reads whole lines until the first request is known, then only title lines are read
    whole, and the lines between them are looked at a block at a time."""

    def __init__(self, path: Path, builder: Builder, prefix: Prefix) -> None:
        self.builder, self.prefix = builder, prefix
        self.scout = Builder(builder.key, path, seen=Seen())
        self.scout.titles, self.scout.uuids = builder.titles, builder.uuids

    def lines(self, handle: BinaryIO, position: int, end: int, settle: bool = False, count: int = 0) -> int:
        """The lines from ``position`` (where ``handle`` stands) looked at one at a time, until
        ``end``, until the first request is known (``settle``), or ``count`` of them (0: any
        number): the position after them."""
        for looked, (raw, length) in enumerate(lines(handle), 1):
            if position >= end or (settle and self.scout.titles.settled):
                break
            position += length
            if raw is not None:
                self.line(raw)
            if looked == count:
                break
        return position

    def line(self, raw: bytes) -> None:
        prefix, builder = self.prefix, self.builder
        prefix.session_ids.update(found.decode("utf-8", "replace") for found in SESSION_ID_RE.findall(raw))
        if b'"assistant"' in raw:
            prefix.ids.update(found.decode("utf-8", "replace") for found in ID_RE.findall(raw))
        if self.scout.titles.settled and not any(mark in raw for mark in TITLE_MARKS):
            for found in UUID_RE.findall(raw):
                builder.uuids.setdefault(found.decode("utf-8", "replace"), len(builder.uuids))
            return
        record = _parse(raw, Tally(), last=False)
        kind = record.get("type") if record is not None else None
        if isinstance(kind, str) and kind in KNOWN_TYPES and record is not None:
            self.scout.take(record, kind)

    def block(self, block: bytes) -> None:
        """Whole lines, once the first request is known: what each line gives, found in them all
        at once; the ids of every line among them, not only of its assistant lines (an id that
        is no response's matches none read on)."""
        if any(mark in block for mark in BLOCK_TITLE_MARKS):
            for raw in block.split(b"\n"):
                if raw:
                    self.line(raw)
            return
        for found in set(BLOCK_SESSION_ID_RE.findall(block)):
            self.prefix.session_ids.add(found.decode("utf-8", "replace"))
        for found in set(BLOCK_ID_RE.findall(block)):
            self.prefix.ids.add(found.decode("utf-8", "replace"))
        uuids = self.builder.uuids
        for found in BLOCK_UUID_RE.findall(block):
            uuids.setdefault(found.decode("utf-8", "replace"), len(uuids))


def _look(path: Path, start: int, end: int, builder: Builder, prefix: Prefix) -> bool:
    """Look at a file's lines from byte ``start`` to ``end`` into ``builder`` and ``prefix``;
    False when the file cannot be read."""
    look = Look(path, builder, prefix)
    try:
        with path.open("rb") as handle:
            handle.seek(start)
            position = look.lines(handle, start, end, settle=True)
            while position < end:
                handle.seek(position)
                block = handle.read(min(BLOCK_BYTES, end - position))
                whole = block.rfind(b"\n") + 1
                if whole:
                    look.block(block[:whole])
                    position += whole
                    continue
                handle.seek(position)  # a line longer than a block, or going on past ``end``
                after = look.lines(handle, position, end, count=1)
                if after == position:
                    break  # (the file is shorter than it was)
                position = after
    except OSError:
        return False
    return True
