"""A tool call's changes to files as unified diffs: what the conversation page, the file page and
MCP ``file_history`` show of an edit (``messages.tool_calls``: a call's ``edits``, each
``{"file", "old", "new"}`` or ``{"file", "patch"}``).

The diff is made when it is shown, never stored: an edit keeps the texts its log gives, once.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Mapping
from typing import Any

DIFF_LINES = 400  # a diff longer than this is shown cut, saying how many lines it has
LINE_CHARS = 1_000  # a diff line longer than this is shown cut, ending in … (a minified file is one line)
_DIFF_TEXT_CHARS = 200_000  # a text longer than this is diffed as lines removed and added, not compared


def edits_of(call: Any, file: str | None = None) -> list[dict[str, Any]]:
    """The edits a stored tool call made (to ``file`` alone, given one: the path as the call
    named it, / for \\), each a dict with ``file`` and ``old``/``new`` or ``patch`` texts."""
    if not isinstance(call, Mapping):
        return []
    found = []
    for edit in call.get("edits") or []:
        if not isinstance(edit, Mapping) or not isinstance(edit.get("file"), str) or not _texts(edit):
            continue
        if file is not None and edit["file"].replace("\\", "/") != file:
            continue
        found.append(dict(edit))
    return found


def _texts(edit: Mapping[str, Any]) -> bool:
    """Whether an edit's texts are texts: a patch, or a new text (and an old one, or none)."""
    if "patch" in edit:
        return isinstance(edit["patch"], str)
    return isinstance(edit.get("new"), str) and (edit.get("old") is None or isinstance(edit["old"], str))


def diff_lines(edit: Mapping[str, Any]) -> list[str]:
    """An edit as unified-diff lines: ``---``/``+++`` naming the file, then its hunks; a patch as
    the log gave it, under the same header."""
    file = str(edit.get("file") or "")
    header = [f"--- {file}", f"+++ {file}"]
    patch = edit.get("patch")
    if isinstance(patch, str):
        body = [line for line in patch.splitlines() if not line.startswith(("--- ", "+++ "))]
        return header + body
    old, new = edit.get("old"), edit.get("new")
    old_lines = old.splitlines() if isinstance(old, str) else []
    new_lines = new.splitlines() if isinstance(new, str) else []
    if old is None:  # the file written whole: every line added
        return ["--- /dev/null", f"+++ {file}", f"@@ -0,0 +1,{len(new_lines)} @@", *(f"+{line}" for line in new_lines)]
    if len(old) + len(new or "") > _DIFF_TEXT_CHARS:  # (difflib's time grows faster than the texts)
        return header + [
            f"@@ -1,{len(old_lines)} +1,{len(new_lines)} @@",
            *(f"-{line}" for line in old_lines),
            *(f"+{line}" for line in new_lines),
        ]
    return header + list(_hunks(old_lines, new_lines))


def _hunks(old: list[str], new: list[str]) -> Iterator[str]:
    for line in difflib.unified_diff(old, new, lineterm="", n=3):
        if not line.startswith(("--- ", "+++ ")):
            yield line


def diff_text(edit: Mapping[str, Any], limit: int = DIFF_LINES) -> tuple[str, int]:
    """An edit's diff as text, at most ``limit`` lines (each at most LINE_CHARS), and how many
    lines it has in all."""
    lines = diff_lines(edit)
    return "\n".join(cut_line(line) for line in lines[:limit]), len(lines)


def shown_diff(edit: Mapping[str, Any]) -> dict[str, Any]:
    """An edit as an answer shows it: its file, its diff (at most ``DIFF_LINES`` lines), how many
    lines the diff has (``diff_lines``) and whether it was cut (``diff_cut``)."""
    text, count = diff_text(edit)
    return {"file": edit["file"], "diff": text, "diff_lines": count, "diff_cut": count > DIFF_LINES}


def stored_diffs(edits: Any, file: str | None = None) -> list[dict[str, Any]]:
    """The edits a query gives as JSON text (``file_history``'s ``edits``), to ``file`` alone given
    one, each as ``shown_diff`` shows it."""
    try:
        found = json.loads(edits) if isinstance(edits, str) else edits
    except ValueError:
        return []
    return [shown_diff(edit) for edit in edits_of({"edits": found if isinstance(found, list) else []}, file)]


def cut_line(line: str) -> str:
    """A diff line as it is shown: at most LINE_CHARS characters, ending in … where it was cut."""
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + "…"


def line_kind(line: str) -> str:
    """What a diff line is, for the page to colour: ``added``, ``removed``, ``hunk``, ``file`` or ``context``."""
    if line.startswith(("+++ ", "--- ")):
        return "file"
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "added"
    if line.startswith("-"):
        return "removed"
    return "context"
