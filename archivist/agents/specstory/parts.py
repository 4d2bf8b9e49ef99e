"""The parts of a SpecStory message that are not its text: the tool calls its blocks show (in each
layout SpecStory has written) and the images its text inlines (see ``specstory`` for the forms)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from archivist.agents import Attachment, ToolCall, attachment

SUMMARY_TOOL_RE = re.compile(r"^\s*Tool use: \*\*(.+?)\*\*(.*)$", re.S)
INLINE_CODE_LINE_RE = re.compile(r"^\s*`([^`\n]+)`\s*$")
INLINE_CODE_RE = re.compile(r"`([^`\n]+)`")
# The file is the rest of the line, stripped where it is used.
FILE_LINE_RE = re.compile(r"\b(?:Read|Edit|Edited|Write|Wrote|Create|Created|Delete|Deleted) file:\s*(.+)$", re.M)
# Each pattern here takes a run of white space once: none is tried again from every place in it.
# A shell block's opening line, and the line that closes it (any line opening with ```, as before).
SHELL_FENCE_RE = re.compile(r"^[^\S\n]*```(?:bash|sh|shell|zsh|powershell|console)[^\S\n]*\n", re.M)
CLOSING_FENCE_RE = re.compile(r"\n[^\S\n]*```")
OPENING_RE = re.compile(r"\s*+(`{3,}+|~{3,}+)\s*+([\w+-]*+)\s*+\Z")  # a code block's opening line, matched whole

SHELL_TYPES = {"shell"}
FILE_TYPES = {"read", "write"}
SHELL_NAMES = {"bash", "shell", "powershell", "run_terminal_cmd", "run_terminal_command", "run_shell_command"}
FILE_NAMES = {
    "read",
    "read_file",
    "write",
    "write_file",
    "edit",
    "edit_file",
    "multiedit",
    "search_replace",
    "view_file",
    "write_to_file",
    "replace_file_content",
    "multi_replace_file_content",
    "delete_file",
    "notebookedit",
}

# The extension's earliest blocks (before "Tool use:" named the tool): what their summary starts
# with, and the name Cursor gave that tool then.
LEGACY_SUMMARIES = (
    ("Searched codebase", "codebase_search"),
    ("Grep search for", "grep_search"),
    ("Searched web", "web_search"),
    ("Listed current directory", "list_dir"),
    ("Listed directory", "list_dir"),
)
LEGACY_READ = "Read file:"
SHELL_LANGUAGES = {"bash", "sh", "shell", "zsh", "powershell", "pwsh", "cmd", "console"}
COUNTED_RE = re.compile(r"•\s*+\*\*\d++\*\*")  # " • **5** results" after a summary's subject
NO_FILE = {"", "undefined"}

DATA_URL_RE = re.compile(r"data:([\w.+-]+/[\w.+-]+)?((?:;[\w.+=-]+)*);base64,")
BASE64_RE = re.compile(r"[A-Za-z0-9+/=_-]*")
MARKDOWN_IMAGE_RE = re.compile(r"!\[([^\]\n]{0,300})\]\($")  # what opens a markdown image before its URL
MIN_BASE64 = 64  # a shorter payload is an example someone wrote, not a file


@dataclass
class Tool:
    """A tool block as a transcript shows it: its name, type, summary line and content."""

    name: str
    kind: str = ""  # data-tool-type, where the block says
    summary: str = ""
    body: list[str] = field(default_factory=list)

    def call(self) -> tuple[ToolCall, str]:
        """The tool call the block shows, and its content as raw output."""
        body = "\n".join(self.body).strip()
        detail = self.summary
        named = SUMMARY_TOOL_RE.match(self.summary)
        if named:
            detail = named.group(2)
        detail = detail.lstrip(" •").strip()
        call = ToolCall(name=self.name)
        lowered = self.name.lower().removesuffix("_v2")
        if self.kind in SHELL_TYPES or lowered in SHELL_NAMES:
            command = _command(detail, body)
            if command:
                call.commands.append(command)
        elif self.kind in FILE_TYPES or lowered in FILE_NAMES:
            file = _file(detail, body)
            if file:
                call.files.append(file)
        output = "\n".join(part for part in (self.summary, body) if part)
        return call, output


def legacy_summary(summary: str) -> ToolCall | None:
    """The call an earliest ``<details>`` block shows by its summary (``Listed directory src • **5**
    results``); None for any other summary."""
    for start, name in LEGACY_SUMMARIES:
        if summary.startswith(start):
            call = ToolCall(name)
            if start == "Listed directory":
                folder = _uncounted(summary[len(start) :]).strip()
                call.files += [] if folder in NO_FILE else [folder]
            return call
    return None


def _uncounted(subject: str) -> str:
    """A summary's subject without the count after it (`` • **5** results`` and what follows)."""
    counted = COUNTED_RE.search(subject)
    return subject[: counted.start()] if counted else subject


def legacy_part(text: str) -> tuple[ToolCall, str] | None:
    """The call a part of an earliest transcript's reply is, when it is one: ``Read file: PATH`` alone,
    a shell block (and the block of its output after it), or a diff block alone (an edit: the file is
    not named). None for any other text."""
    if text.startswith(LEGACY_READ) and "\n" not in text:
        file = text[len(LEGACY_READ) :].strip()
        return ToolCall("read_file", files=[] if file in NO_FILE else [file]), text
    blocks = _fenced(text.split("\n"))
    if not blocks:
        return None
    (language, lines), rest = blocks[0], blocks[1:]
    if language in SHELL_LANGUAGES and (not rest or (len(rest) == 1 and not rest[0][0])):
        command = "\n".join(lines).strip()
        output = "\n".join(rest[0][1]).strip() if rest else ""
        return ToolCall("run_terminal_cmd", commands=[command] if command else []), output
    if language == "diff" and not rest:
        return ToolCall("edit_file"), text
    return None


def _fenced(lines: list[str]) -> list[tuple[str, list[str]]]:
    """The code blocks that make all of ``lines`` (blank lines between them): each one's language and
    lines; [] where anything else is there, or a block is never closed."""
    blocks: list[tuple[str, list[str]]] = []
    index = 0
    while index < len(lines):
        if not lines[index].strip():
            index += 1
            continue
        opening = OPENING_RE.match(lines[index])
        if not opening:
            return []
        fence, language = opening.groups()
        end = index + 1
        while end < len(lines) and not _closes(lines[end], fence):
            end += 1
        if end == len(lines):
            return []
        blocks.append((language.lower(), lines[index + 1 : end]))
        index = end + 1
    return blocks


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and not stripped.strip(fence[0])


def inline_images(text: str) -> tuple[str, list[Attachment]]:
    """``text`` with each base64 ``data:`` URL in it (a pasted image, a markdown image) replaced by its
    attachment's placeholder, and the attachments, measured: their data is never kept."""
    if "data:" not in text:
        return text, []
    found: list[Attachment] = []
    kept: list[str] = []
    start = 0
    while (at := text.find("data:", start)) >= 0:
        header = DATA_URL_RE.match(text, at)
        payload = BASE64_RE.match(text, header.end()) if header else None
        if header is None or payload is None or payload.end() - header.end() < MIN_BASE64:
            kept.append(text[start : at + 5])
            start = at + 5
            continue
        end, name, begin = payload.end(), None, at
        opened = MARKDOWN_IMAGE_RE.search(text, max(start, at - 310), at)
        if opened and text.startswith(")", end):
            begin, end, name = opened.start(), end + 1, opened.group(1).strip() or None
        item = attachment(header.group(1) or "file", name, data=text[header.end() : payload.end()])
        found.append(item)
        kept += [text[start:begin], item.placeholder()]
        start = end
    kept.append(text[start:])
    return "".join(kept), found


def _command(detail: str, body: str) -> str | None:
    code = INLINE_CODE_RE.search(detail)
    if code:
        return code.group(1).strip()
    for line in body.split("\n"):
        single = INLINE_CODE_LINE_RE.match(line)
        if single:
            return single.group(1).strip()
    return _shell_block(body)


def _shell_block(body: str) -> str | None:
    """The code of the first shell block in ``body`` (from its opening line to the next line opening
    with a fence), stripped; None where there is none, or it holds nothing. Were the first opening
    never closed, no later one could be: nothing after it is looked at again."""
    opening = SHELL_FENCE_RE.search(body)
    closing = CLOSING_FENCE_RE.search(body, opening.end()) if opening else None
    code = body[opening.end() : closing.start()].strip() if opening and closing else ""
    return code or None


def _file(detail: str, body: str) -> str | None:
    for text in (detail, body):
        named = FILE_LINE_RE.search(text)
        if named:
            return named.group(1).strip().strip("`\"' ")
    code = INLINE_CODE_RE.search(detail)
    if code:
        return code.group(1).strip()
    first = next((line for line in body.split("\n") if line.strip()), "")
    single = INLINE_CODE_LINE_RE.match(first)
    if single:
        return single.group(1).strip()
    return None
