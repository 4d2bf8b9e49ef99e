"""A VS Code chat session's log (``<session id>.jsonl``, VS Code 1.109 on) replayed into the session's
data: its first line the whole state (``kind`` 0), each next line a change at a path ``k`` (1: set ``v``;
2: truncate the array at ``i`` and append ``v``; 3: delete), as VS Code's ``objectMutationLog.ts`` writes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from archivist.agents import LONG_LINE, NotJSON, Unread, json_value, lines


def replay(file: Path, problems: list[str]) -> Any:
    """A session's log replayed: its first state, then each change in order. A log whose reading
    stopped is told in ``problems`` as Unread (what was read of it is no whole session)."""
    state: Any = None
    skipped: dict[str, int] = {}
    try:
        with file.open("rb") as handle:
            for line, _size in lines(handle):
                reason = _apply(line, state)
                if isinstance(reason, tuple):
                    state = reason[0]
                elif reason:
                    skipped[reason] = skipped.get(reason, 0) + 1
    except OSError as error:
        problems.append(Unread(f"{file.name}: reading stopped ({error.strerror or error})"))
    problems += [f"{count} line(s) skipped: {reason}" for reason, count in skipped.items()]
    return state


def _apply(line: bytes | None, state: Any) -> tuple[Any] | str | None:
    """One line of a log applied to ``state``: (a new state,), None when applied, else why not."""
    if line is None:
        return LONG_LINE
    if not line.strip():
        return None
    try:
        entry = json_value(line.decode("utf-8", "replace"))
    except NotJSON as error:
        return str(error)
    kind = entry.get("kind") if isinstance(entry, dict) else None
    if kind == 0:
        return (entry.get("v"),)
    keys = entry.get("k") if isinstance(entry, dict) else None
    if kind not in (1, 2, 3) or not isinstance(keys, list) or not keys:
        return "a change of no known shape"
    holder = state
    for key in keys[:-1]:
        holder = _child(holder, key)
    last = keys[-1]
    if kind == 2:
        target = _child(holder, last)
        if not isinstance(target, list):
            return "a change of a path that is not there"
        if isinstance(entry.get("i"), int) and entry["i"] >= 0:
            del target[entry["i"] :]
        target.extend(entry.get("v") if isinstance(entry.get("v"), list) else [])
        return None
    if isinstance(holder, dict) and isinstance(last, str):
        if kind == 1:
            holder[last] = entry.get("v")
        else:
            holder.pop(last, None)
        return None
    if isinstance(holder, list) and isinstance(last, int) and 0 <= last <= len(holder):
        if kind == 3:
            if last < len(holder):
                holder[last] = None
        elif last == len(holder):
            holder.append(entry.get("v"))
        else:
            holder[last] = entry.get("v")
        return None
    return "a change of a path that is not there"


def _child(holder: Any, key: Any) -> Any:
    if isinstance(holder, dict) and isinstance(key, str):
        return holder.get(key)
    if isinstance(holder, list) and isinstance(key, int) and 0 <= key < len(holder):
        return holder[key]
    return None
