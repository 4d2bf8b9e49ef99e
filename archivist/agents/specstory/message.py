"""One message of a SpecStory transcript: its header, and its lines told apart into text,
thinking, tool calls and their output (see ``specstory`` for what each form is)."""

from __future__ import annotations

import html
import itertools
import re
from dataclasses import dataclass, field

from archivist.agents import Attachment, Message, ToolCall, between
from archivist.agents.specstory.parts import SUMMARY_TOOL_RE, Tool, inline_images, legacy_part, legacy_summary
from archivist.agents.specstory.times import TIME_RE, time_of

# No pattern here lets a lazy group end anywhere in a run of spaces that a ``\s*`` or ``\s+`` after it
# could take (every split of the run was tried, for hours on a long line): what a group ends with is
# stripped where it is used.
FENCE_RE = re.compile(r"^\s*(`{3,}|~{3,})")
COMMENT_RE = re.compile(r"^<!--.*-->\s*$")
SEPARATOR = "---"
# The earliest layout's header of each further part of a reply (often written escaped).
CONTINUED = ("_****_", "_\\*\\*\\*\\*_")
CANCELLED = "Cancelled"  # what the earliest layout shows of a tool call that was cancelled

BARE_TOOL_RE = re.compile(r"^Tool use: \*\*(.+?)\*\*(.*)$")
SUMMARY = ("<summary>", "</summary>")
TOOL_NAME_ATTR_RE = re.compile(r'data-tool-name="([^"]*)"')
TOOL_TYPE_ATTR_RE = re.compile(r'data-tool-type="([^"]*)"')
LEADING_TAGS_RE = re.compile(r"^\s*(?:<think>|<details\b[^>]*>|<tool-use\b[^>]*>)+")
CLOSING_TAGS = ("</details>", "</think>", "</tool-use>")


def follow_fence(line: str, fence: str | None) -> str | None:
    """The code fence open after ``line``: opened, closed, or as it was."""
    stripped = line.strip()
    if fence is None:
        opening = FENCE_RE.match(line)
        return opening.group(1) if opening else None
    if stripped.startswith(fence) and not stripped.strip(fence[0]):
        return None
    return fence


@dataclass
class Draft:
    """One message's header and lines, before its parts are told apart."""

    role: str
    timestamp: str | None = None
    model: str | None = None
    lines: list[str] = field(default_factory=list)

    @classmethod
    def from_header(cls, who: str, inside: str | None) -> Draft:
        role = "user" if who == "User" else "assistant"
        timestamp = model = None
        if inside:
            inside = inside.strip()
            found = TIME_RE.search(inside)
            if found:
                timestamp = time_of(found.group(0))
                inside = inside[: found.start()].strip()
            if inside.startswith("model "):
                inside = inside[len("model ") :].split(",", 1)[0].strip()
            if role == "assistant" and inside:
                model = inside
        return cls(role=role, timestamp=timestamp, model=model)

    def message(self, problems: list[str], legacy: bool = False) -> Message | None:
        """The message its lines make (None: nothing in them), what could not be read told in ``problems``.

        ``legacy``: the transcript is in the extension's earliest layout, whose replies show a tool
        call as a part of their own (``Read file: …``, a shell or diff block) rather than a block."""
        reading = _Reading(self.lines, problems, legacy and self.role == "assistant")
        reading.read()
        return reading.message(self.role, self.timestamp, self.model)


class _Reading:
    """One message's lines told apart, as they are read, into text, thinking, tool calls and their output."""

    def __init__(self, lines: list[str], problems: list[str], legacy: bool = False) -> None:
        self.lines = lines
        self.problems = problems
        self.legacy = legacy
        self.texts: list[str] = []
        self.thinking: list[str] = []
        self.calls: list[ToolCall] = []
        self.outputs: list[str] = []
        self.text: list[str] = []  # the lines of the text being read
        self.bare: Tool | None = None  # a bare "Tool use: **name**" line and what follows it
        self.details: _Details | None = None  # made at the first <details>

    def read(self) -> None:
        lines, index = self.lines, 0
        fence: str | None = None
        while index < len(lines):
            line = lines[index]
            if fence is None and (after := self._markup(index, line.strip())) is not None:
                index = after
                continue
            fence = follow_fence(line, fence)
            (self.bare.body if self.bare is not None else self.text).append(line)
            index += 1
        self._end_text()
        self._end_bare()

    def message(self, role: str, timestamp: str | None, model: str | None) -> Message | None:
        body, attached = inline_images("\n\n".join(self.texts))
        output, shown = inline_images("\n\n".join(self.outputs))
        if not (body or self.thinking or self.calls):
            return None
        attachments: list[Attachment] = attached + shown
        return Message(
            role=role,
            text=body,
            timestamp=timestamp,
            model=model,
            tool_calls=self.calls,
            thinking="\n\n".join(self.thinking),
            tool_output=output,
            attachments=attachments,
        )

    def _markup(self, index: int, stripped: str) -> int | None:
        """Where reading goes on after the markup that line ``index`` starts; None where it starts none (text)."""
        if stripped == SEPARATOR or stripped in CONTINUED:
            self._end_text()
            self._end_bare()
            return index + 1
        if COMMENT_RE.match(stripped) and not self.text:
            return index + 1
        if stripped.startswith("<think>"):
            self._end_text()
            block, after = self._block(index, "</think>", "a <think> block was never closed")
            self._think("\n".join(block))
            return after
        if stripped.startswith("<tool-use"):
            self._end_text()
            self._end_bare()
            block, after = self._block(index, "</tool-use>", "a <tool-use> block was never closed")
            self._call(_tool_block(block))
            return after
        if stripped.startswith("<details") and (end := self._details(index)) is not None:
            return end
        bare_start = BARE_TOOL_RE.match(stripped)
        if bare_start:
            self._end_text()
            self._end_bare()
            self.bare = Tool(name=bare_start.group(1).strip(), summary=html.unescape(stripped))
            return index + 1
        return None

    def _details(self, index: int) -> int | None:
        """The ``<details>`` block on line ``index`` as thinking, a tool call (named by "Tool use:", or by what
        its summary says it did in the earliest layout), or the rest of a bare tool's:
        where reading goes on after it; None where it is none of these (it is text)."""
        self.details = self.details or _Details(self.lines)
        end, closed = self.details.block(index)
        summary = self.details.summary(index, end)
        named = SUMMARY_TOOL_RE.match(summary)
        thought = summary.startswith("Thought Process")
        earliest = None if named or thought else legacy_summary(summary)
        if not (thought or named or earliest or self.bare is not None):
            return None
        if not closed:
            self.problems.append("a <details> block was never closed")
        joined = "\n".join(self.lines[index:end])
        self._end_text()
        if thought:
            self._think(joined)
        elif self.bare is not None:
            body = _strip_tags(joined)
            self.bare.body.append("\n".join(part for part in (summary, body) if part))
        elif named is not None:
            self._call(Tool(name=named.group(1).strip(), summary=summary, body=[_strip_tags(joined)]))
        elif earliest is not None:
            self._add(earliest, "\n".join(part for part in (summary, _strip_tags(joined)) if part))
        return end

    def _block(self, index: int, closing: str, unclosed: str) -> tuple[list[str], int]:
        """The lines of the block line ``index`` opens, and the index after it: to the end if it is never closed
        (told as ``unclosed``)."""
        block, after = _block(self.lines, index, closing)
        if block is None:
            self.problems.append(unclosed)
            return self.lines[after:], len(self.lines)
        return block, after

    def _think(self, text: str) -> None:
        thinking = _strip_tags(text)
        if thinking:
            self.thinking.append(thinking)

    def _call(self, tool: Tool) -> None:
        self._add(*tool.call())

    def _add(self, call: ToolCall, output: str) -> None:
        self.calls.append(call)
        if output:
            self.outputs.append(output)

    def _end_text(self) -> None:
        joined = "\n".join(self.text).strip()
        self.text.clear()
        if not joined:
            return
        legacy = legacy_part(joined) if self.legacy else None
        if legacy is not None:
            self._add(*legacy)
        elif self.legacy and joined == CANCELLED:
            self.outputs.append(joined)
        else:
            self.texts.append(joined)

    def _end_bare(self) -> None:
        if self.bare is not None:
            self._call(self.bare)
            self.bare = None


def _block(lines: list[str], start: int, closing: str) -> tuple[list[str] | None, int]:
    """The lines from ``start`` to the one holding ``closing`` (outside code fences), and the index after it."""
    fence: str | None = None
    for index in range(start, len(lines)):
        line = lines[index]
        if fence is None and closing in line:
            return lines[start : index + 1], index + 1
        fence = follow_fence(line, fence)
    return None, start


class _Details:
    """Where the ``<details>`` blocks of a message's lines end, and their summaries, in linear time.

    A ``<details>`` that is neither thinking nor a tool is read as text, line by line, so
    another one can start on the next line: looking from each for its closing and its summary
    read the rest of the message again from every one (hours, for a few MB of them). So a
    closing found from an earlier line is taken as the closing of an opening below it and above
    the closing (the lines between are text, read with the same code fences either way), and
    each string is looked for in the message's text from where it was last found.
    """

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.text = "\n".join(lines)
        self.starts = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))  # of each line
        self.last: tuple[int, int, bool] | None = None  # the last block looked for: start, end, closed
        self.found: dict[str, tuple[int, int]] = {}  # a string → where it was looked for from, and found (-1: not)

    def block(self, start: int) -> tuple[int, bool]:
        """The index after the block of the ``<details>`` on line ``start``, and whether it is closed."""
        if self.last is not None and self.last[0] < start < self.last[1]:
            return self.last[1], self.last[2]
        lines, end = _block(self.lines, start, "</details>")
        closed = lines is not None
        self.last = (start, end if closed else len(self.lines), closed)
        return self.last[1], closed

    def summary(self, start: int, end: int) -> str:
        """The text of the first ``<summary>`` of lines ``start`` to ``end`` (not included), or ""."""
        opening, closing = SUMMARY
        limit = self.starts[end] - 1  # where the lines' text ends
        begin = self._find(opening, self.starts[start])
        if begin < 0 or begin + len(opening) > limit:
            return ""
        begin += len(opening)
        finish = self._find(closing, begin)
        if finish < 0 or finish + len(closing) > limit:
            return ""
        return html.unescape(self.text[begin:finish].strip())

    def _find(self, string: str, start: int) -> int:
        looked_from, found = self.found.get(string, (len(self.text) + 1, -1))
        if looked_from <= start and (found < 0 or found >= start):
            return found  # nothing between where it was looked for from and where it was found
        found = self.text.find(string, start)
        self.found[string] = (start, found)
        return found


def _tool_block(block: list[str]) -> Tool:
    joined = "\n".join(block)
    name = TOOL_NAME_ATTR_RE.search(block[0])
    kind = TOOL_TYPE_ATTR_RE.search(block[0])
    summary = between(joined, *SUMMARY)
    summary_text = html.unescape(joined[summary[0] : summary[1]].strip()) if summary else ""
    named = SUMMARY_TOOL_RE.match(summary_text)
    tool_name = name.group(1) if name and name.group(1) else (named.group(1) if named else "tool")
    return Tool(
        name=html.unescape(tool_name).strip(),
        kind=kind.group(1) if kind else "",
        summary=summary_text,
        body=[_strip_tags(joined)],
    )


def _strip_tags(text: str) -> str:
    """A block's content without the tags around it and its ``<summary>`` (those inside its code are kept)."""
    text = LEADING_TAGS_RE.sub("", text, count=1)
    text = _without_closing_tags(text)
    summary = between(text, *SUMMARY)
    if summary:
        start, end = summary[0] - len(SUMMARY[0]), summary[1] + len(SUMMARY[1])
        fence = text.find("```")
        if fence < 0 or start < fence:
            text = text[:start] + text[end:]
    return text.strip()


def _without_closing_tags(text: str) -> str:
    """``text`` without the closing tags that end it (and the white space after them), taken
    off one by one from the end (a pattern looking for them anywhere was quadratic in them)."""
    kept = end = len(text.rstrip())
    while tag := next((tag for tag in CLOSING_TAGS if text.endswith(tag, 0, kept)), None):
        kept -= len(tag)
    return text[:kept] if kept < end else text
