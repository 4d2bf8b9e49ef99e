"""A Codex rollout's token counts: each response's usage, counted once.

Codex writes a ``token_count`` event (``event_msg``) after a response: ``info`` carries the
session's running total (``total_token_usage``) and the last response's
(``last_token_usage``), each with ``input_tokens`` (which count the ``cached_input_tokens``),
``output_tokens`` (which count the ``reasoning_output_tokens``) and ``total_tokens``
(openai/codex ``codex-rs/protocol/src/protocol.rs``: ``TokenUsageInfo``). It writes most
events twice, and some responses get no event of their own, so summing
``last_token_usage`` counts some responses twice and misses others: a response's tokens
here are how far the running total moved since the event before, an event that does not
move it is a copy, and the session's total is its last event's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

from archivist.agents import MAX_LINE_BYTES, NotJSON, Usage, json_value, usage, whole_count

FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens")
SCAN_BYTES = 16 * 1024 * 1024  # read back from where reading resumes, for the running total there
CHUNK_BYTES = 64 * 1024

Counts = dict[str, int]


class Tokens:
    """The running total of one reading of a rollout, from the start or from a byte offset."""

    def __init__(self, file: Path, start: int = 0) -> None:
        # Read on from where a reading stopped, the total there is the last event's before it;
        # where none is found that far back (None), the first event counts its last_token_usage.
        self.total: Counts | None = dict.fromkeys(FIELDS, 0) if start == 0 else total_before(file, start)

    def count(self, info: Any) -> Usage | None:
        """The usage of the response a token_count event's ``info`` follows; None for a copy, or none."""
        if not isinstance(info, dict) or not isinstance(total := info.get("total_token_usage"), dict):
            return None
        counts = _counts(total)
        if self.total is None:
            last = info.get("last_token_usage")
            step = _counts(last) if isinstance(last, dict) else counts
        elif counts == self.total or any(counts[name] < self.total[name] for name in FIELDS):
            self.total = counts  # a copy (or a total that started again): nothing new
            return None
        else:
            step = {name: counts[name] - self.total[name] for name in FIELDS}
        self.total = counts
        cached = min(step["cached_input_tokens"], step["input_tokens"])
        return usage(input=step["input_tokens"] - cached, output=step["output_tokens"], cache_read=cached)


def total_before(file: Path, start: int) -> Counts | None:
    """The running total at byte ``start``: the last token_count event's before it, read back
    from there (at most ``SCAN_BYTES``); 0 where the file has none before it; None where none
    was found that far back, or the file cannot be read."""
    try:
        with file.open("rb") as handle:
            return _scan_back(handle, start)
    except OSError:
        return None


def _scan_back(handle: BinaryIO, start: int) -> Counts | None:
    """The last token_count total among the lines before ``start``, read back a chunk at a time.

    Lines end at ``\\n`` only (a bare ``\\r`` is white space in JSON, as the whole reading
    takes it). The front of a chunk, a line the chunk's start cuts, is carried on to the chunk
    before it, and each step moves back; a line longer than ``MAX_LINE_BYTES`` is skipped.
    """
    end = start
    front: list[bytes] = []  # the pieces of the line cut at ``end``, the last piece first
    held = 0  # their length
    skipping = False  # the line cut at ``end`` is too long: its pieces are not kept
    while end > 0 and start - end < SCAN_BYTES:
        begin = max(0, end - CHUNK_BYTES)
        handle.seek(begin)
        chunk = handle.read(end - begin)
        if len(chunk) != end - begin:
            return None  # the file changed under the reading
        end = begin
        pieces = chunk.split(b"\n")
        if len(pieces) > 1 or begin == 0:
            tail = b"" if skipping else pieces[-1] + b"".join(reversed(front))
            whole = pieces[:-1] if begin == 0 else pieces[1:-1]  # at the file's start no line is cut
            for line in [tail, *reversed(whole)]:
                total = event_total(line)
                if total is not None:
                    return total
            front, held, skipping = [pieces[0]], len(pieces[0]), False
        elif not skipping:
            front.append(chunk)
            held += len(chunk)
            if held > MAX_LINE_BYTES:
                front, held, skipping = [], 0, True
    return dict.fromkeys(FIELDS, 0) if end == 0 else None


def event_total(line: bytes) -> Counts | None:
    """The running total of a line that is a token_count event with one, else None."""
    if b'"token_count"' not in line or b"total_token_usage" not in line:
        return None
    try:
        record = json_value(line.decode("utf-8", "replace"))
    except NotJSON:
        return None
    payload = record.get("payload") if isinstance(record, dict) else None
    info = payload.get("info") if isinstance(payload, dict) and payload.get("type") == "token_count" else None
    total = info.get("total_token_usage") if isinstance(info, dict) else None
    return _counts(total) if isinstance(total, dict) else None


def _counts(counts: dict[str, Any]) -> Counts:
    return {name: whole_count(counts.get(name)) for name in FIELDS}
