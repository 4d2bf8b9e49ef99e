"""The ``apply_patch`` envelope read as the changes it makes, one ``Edit`` per file: Codex's
``apply_patch``, and the patch tools of OpenCode and Crush, which write the same.

A patch is the text from ``*** Begin Patch`` to ``*** End Patch``: sections each opened by
``*** Add File: <path>`` (every line after it ``+``: the file written whole, an edit with no
old text), ``*** Delete File: <path>`` (no lines), or ``*** Update File: <path>``, optionally followed by ``*** Move to: <new path>``,
then hunks (``@@`` and context), with lines `` ``, ``-`` and ``+`` and ``*** End of File``
(the Codex CLI's ``apply_patch`` grammar, ``codex-rs/apply-patch``). An edit holds its
section's lines as the patch gives them; a file moved is changed where it was (an edit with
no lines, as a deletion) and where it went (the section's lines). A patch with a line that
fits none of this is not read: nothing of it is taken for an edit.
"""

from __future__ import annotations

from dataclasses import dataclass

from archivist.agents import Edit

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD, DELETE, UPDATE, MOVE = "*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: "
END_OF_FILE = "*** End of File"
HUNK_LINES = (" ", "-", "+", "@@")


@dataclass
class Patch:
    """A patch found in a text: where it stands in it (``start``, ``end``) and its edits."""

    start: int
    end: int
    edits: list[Edit]


def find_patch(text: str) -> Patch | None:
    """The patch in ``text`` (the first ``*** Begin Patch`` … ``*** End Patch``), read; None
    where there is none, or it does not read as a patch."""
    start = text.find(BEGIN)
    if start < 0:
        return None
    end = text.find(END, start)
    if end < 0:
        return None
    edits = patch_edits(text[start + len(BEGIN) : end])
    return Patch(start, end + len(END), edits) if edits else None


def patch_edits(body: str) -> list[Edit] | None:
    """The edits of a patch's lines between its begin and end marks; None where a line fits
    no section (a patch so written is not guessed at)."""
    edits: list[Edit] = []
    kind = ""  # the open section's kind
    lines: list[str] = []  # and its lines
    for line in body.strip("\n").split("\n"):
        line = line.removesuffix("\r")
        header = _header(line)
        if header is not None:
            if header[0] == MOVE:
                if kind != UPDATE or lines or not edits:
                    return None
                moved_from = edits[-1]
                edits.append(Edit(file=header[1], patch=""))
                moved_from.patch = ""
                continue
            _close(edits, kind, lines)
            kind, lines = header[0], []
            edits.append(Edit(file=header[1], patch=""))
        elif not kind or not _fits(kind, line):
            return None
        else:
            lines.append(line)
    _close(edits, kind, lines)
    return edits or None


def _header(line: str) -> tuple[str, str] | None:
    for mark in (ADD, DELETE, UPDATE, MOVE):
        if line.startswith(mark) and line[len(mark) :].strip():
            return mark, line[len(mark) :].strip()
    return None


def _fits(kind: str, line: str) -> bool:
    """Whether ``line`` can stand in a section of ``kind``."""
    if kind == ADD:
        return line.startswith("+")
    if kind == UPDATE:
        return line == "" or line == END_OF_FILE or line.startswith(HUNK_LINES)
    return False  # (a deletion has no lines)


def _close(edits: list[Edit], kind: str, lines: list[str]) -> None:
    if not edits:
        return
    if kind == ADD:  # (a file added: written whole)
        edits[-1].patch, edits[-1].new = None, "\n".join(line[1:] for line in lines)
    elif lines:
        edits[-1].patch = "\n".join(lines)
