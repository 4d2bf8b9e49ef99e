"""JSON read within a depth budget: what a hostile line or document nests never runs a reader,
nor anything that walks a value later, out of stack.

Values are parsed with msgspec (three times the speed of ``json`` on agent-log lines), and
what it refuses that ``json`` reads (a lone surrogate escaped, ``NaN``, a float past its range)
with ``json``, so that everything read before is read the same.

Python's parser recurses and stops near 1,000 levels with a RecursionError; every later walk
of a value (masking its strings, storing it) recurses as well. ``json_value`` refuses what
nests deeper than ``MAX_DEPTH``, with a reason to tell.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import msgspec

_decode = msgspec.json.Decoder().decode

# Real logs and records nest a few dozen levels at most (a tool's input holding JSON).
MAX_DEPTH = 100
NOT_JSON = "not JSON"
TOO_DEEP = f"JSON nested deeper than {MAX_DEPTH} levels"


class NotJSON(ValueError):
    """A line or document that is not read; its message is the reason (``NOT_JSON``, ``TOO_DEEP``)."""


def json_value(text: str | bytes) -> Any:
    """The JSON value of a line or a document, nested at most ``MAX_DEPTH`` levels.

    Raises NotJSON, whose message says why: not JSON (numbers too long to convert
    included), or nested too deeply. Nothing else escapes, whatever ``text`` holds (a value
    of another type, from a database column, is not JSON either).
    """
    if not isinstance(text, str | bytes):
        raise NotJSON(NOT_JSON)
    try:
        value = _decode(text)
    # or what msgspec refuses and json allows: the standard way (a text holding a lone surrogate
    # itself, which msgspec cannot encode to read, included)
    except (msgspec.MsgspecError, RecursionError, UnicodeEncodeError):
        try:
            value = json.loads(text)
        except RecursionError:
            raise NotJSON(TOO_DEEP) from None
        except ValueError:
            raise NotJSON(NOT_JSON) from None
    if over_budget(text, value):
        raise NotJSON(TOO_DEEP)
    return value


def over_budget(text: str | bytes, value: Any) -> bool:
    """Whether ``value``, parsed from ``text`` by another parser, nests deeper than ``MAX_DEPTH``
    (walked only where the text opens that many brackets)."""
    return _openers(text) > MAX_DEPTH and too_deep(value)


def _openers(text: str | bytes) -> int:
    """How many brackets open in ``text`` (inside strings too): a bound on its depth, counted at C speed."""
    if isinstance(text, str):
        return text.count("[") + text.count("{")
    return text.count(b"[") + text.count(b"{")


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests lists and objects more than ``limit`` levels (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


_encode = msgspec.json.Encoder().encode


def json_text(value: Any) -> str:
    """``value`` (as ``json_value`` reads it) written back as compact JSON text: msgspec's, else
    the standard way (a lone surrogate, NaN or a number too large for msgspec), never failing."""
    try:
        return _encode(value).decode("utf-8")
    except (msgspec.MsgspecError, TypeError, ValueError, OverflowError, UnicodeError, RecursionError):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def json_list(value: Any) -> list[Any]:
    """A JSON array as the archive stores it (a column's text, or a value already read) as a list;
    [] for anything else."""
    try:
        found = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return []
    return found if isinstance(found, list) else []
