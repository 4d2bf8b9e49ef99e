"""Aider chat histories, read where aider writes them (``.aider.chat.history.md``).

A source is a repository folder holding ``.aider.chat.history.md``, or that file itself
(aider's ``--chat-history-file`` may give it another name: any file with an
"aider chat started at" header is accepted). The file is appended to by every aider run,
so it holds many sessions: each ``# aider chat started at YYYY-MM-DD HH:MM:SS`` header
starts one. The grammar is aider's writer's (``aider/io.py``):

- ``#### `` lines are what the person typed, each ended with two spaces (a markdown line
  break); consecutive ones are one message (a multi-line input), ``#### <blank>`` an empty
  input. A ``#### `` line without them is the model's own heading, part of its reply; in a
  session with no marked input at all (a history whose trailing spaces an editor removed)
  every ``#### `` line is taken as input. Slash commands that run something
  (``/run``, ``/test``, ``/git``, ``!``) also become tool calls with their command.
- ``> `` lines are aider's own output (tool output, warnings, questions and answers):
  consecutive ones, with the unquoted lines that directly continue a multi-line output,
  are one ``tool`` message whose text stays out of the search (``tool_output``).
  ``> Running CMD`` gives a command, ``> Added FILE to the chat`` and
  ``> Applied edit to FILE`` give files, ``> Main model: NAME with …`` (``> Model:`` in
  older versions) the model of the replies that follow, and ``> Tokens: … Cost: $…`` the
  reply's usage and cost (its counts as rounded as aider prints them: ``6.1k``).
- Everything else is the assistant's reply; code fences in a reply are tracked, so a
  ``####`` or ``>`` line inside one is part of the reply. A reasoning model's
  ``<thinking-content-ID>`` … ``</thinking-content-ID>`` block is its thinking, apart.

Times: the header is the local time of the person who ran aider, without a zone. It is
kept as written, marked as UTC (``2025-05-12 14:03:27`` becomes ``2025-05-12T14:03:27Z``),
so the day and hour are the ones the person saw (a calendar day is the author's); the
instant is off by their UTC offset. The header is the session's start; its messages carry
no time of their own, so a session ends where it starts: never at the file's modification
time, which a copied or cloned history changes.

The session's key is the header's timestamp as written (a repeated one gets ``#2``,
``#3`` …), its project the folder holding the file, its title the first thing the person
typed that is not a slash command. Sessions with nothing from the person or the
assistant (an ``aider --help`` run, an interrupted start) are not yielded. Text before the
first header is skipped and counted. The file is read line by line (a line over 64 MB is
skipped and told in its session's problems), bytes that are not UTF-8 are replaced, and
nothing is ever written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from archivist.agents import (
    LONG_LINE,
    Message,
    Session,
    ToolCall,
    Usage,
    confined_log_file,
    lines,
    log_file,
    short_title,
    usage,
)

KIND = "aider"

HISTORY_NAME = ".aider.chat.history.md"
EXPECTED = f"a repository folder holding {HISTORY_NAME}, or an aider chat history file"
CHECK_BYTES = 64 * 1024  # looked at to tell an aider history that has another name

HEADER_RE = re.compile(r"^# aider chat started at (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\s*$")
USER_RE = re.compile(r"^####(?: (.*))?$")
TOOL_RE = re.compile(r"^>(?: (.*))?$")
FENCE_RE = re.compile(r"^\s*(`{3,}|~{3,})")
TAG_FENCE_RE = re.compile(r"^\s*<(source|code|pre|codeblock|sourcecode)>\s*$")
BLANK_INPUT = "<blank>"

# A user's slash command that runs something: its tool call name, and the command it ran.
RUN_COMMANDS = {"/run": "run", "/test": "test", "/git": "git"}
COMMAND_RE = re.compile(r"^(/[a-z][a-z-]*)(?:\s+(.*))?$")
# Aider's own output lines that say what it did.
RUNNING_RE = re.compile(r"^Running:? (.+)$")
ADDED_RE = re.compile(r"^Added (.+?) to the chat\.?$")
ADDED_READ_ONLY_RE = re.compile(r"^Added (.+?) to read-only files\.?$")
OUTPUT_LINES_RE = re.compile(r"^\d+ lines? of output$")
EDIT_RE = re.compile(r"^Applied edit to (.+)$")
MODEL_RE = re.compile(r"^(?:Main model|Model|Models): (\S+)")
TOKENS_RE = re.compile(r"^> Tokens: ")  # written after every reply: an unclosed fence ends there
# What a reply used, as aider writes it after the reply (``base_coder.py``): "Tokens: 6.1k sent,
# 1.2k cache write, 3.4k cache hit, 412 received. Cost: $0.02 message, $0.05 session."
USAGE_RE = re.compile(r"^Tokens: (?P<counts>.*?)\.(?: Cost: \$(?P<cost>\d+(?:\.\d+)?) message|\s*$)")
COUNT_RE = re.compile(r"(\d+(?:\.\d+)?)(k|M)? (sent|received|cache write|cache hit)\b")
USER_END = "  "  # how aider ends each line of an input (a markdown line break)
THINKING_OPEN = (
    "<thinking-content-"  # a reasoning model's thinking, in a reply: <thinking-content-ID>…</thinking-content-ID>
)


def check(path: Path | str) -> str | None:
    """Why ``path`` is not an aider source (a sentence saying what was expected), or None."""
    path = Path(path)
    if not path.exists():
        return f"{path} does not exist: expected {EXPECTED}."
    if path.is_dir():
        history = path / HISTORY_NAME
        if history.is_file():
            return None
        return f"{path} has no {HISTORY_NAME}: expected {EXPECTED}."
    if not path.is_file():
        return f"{path} is not a file or a folder: expected {EXPECTED}."
    if path.name == HISTORY_NAME:
        return None
    try:
        with path.open("rb") as handle:
            head = handle.read(CHECK_BYTES)
    except OSError as error:
        return f"{path} cannot be read ({error.strerror or error}): expected {EXPECTED}."
    text = head.decode("utf-8", errors="replace")
    if any(HEADER_RE.match(line.rstrip("\r")) for line in text.split("\n")):
        return None
    return f'{path} has no "# aider chat started at" header: expected {EXPECTED}.'


def log_files(path: Path) -> list[Path]:
    """What of a source holds its logs: a repository's chat history, not the repository around it."""
    return [log_file(path, HISTORY_NAME)]


def read(path: Path | str, problems: list[str] | None = None) -> Iterator[Session]:
    """Every session of the chat history, in the order of the file."""
    found = confined_log_file(Path(path), HISTORY_NAME, problems)
    if found is None:
        return
    history = found[0]
    project = os.path.abspath(history.parent)
    keys: dict[str, int] = {}
    current: _Session | None = None
    skipped_before = 0
    try:
        handle = history.open("rb")
    except OSError:
        return
    with handle:
        for raw, _ in lines(handle):
            if raw is None:
                if current is None:
                    skipped_before += 1
                else:
                    current.problems.append(f"a {LONG_LINE} skipped")
                continue
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            header = HEADER_RE.match(line)
            if header:
                if current is not None:
                    session = current.session()
                    if session is not None:
                        yield session
                stamp = header.group(1)
                keys[stamp] = keys.get(stamp, 0) + 1
                key = stamp if keys[stamp] == 1 else f"{stamp}#{keys[stamp]}"
                current = _Session(key=key, started=stamp.replace(" ", "T") + "Z", project=project, file=history)
                if skipped_before:
                    current.problems.append(f"{skipped_before} lines before the first session header skipped")
                    skipped_before = 0
            elif current is None:
                if line.strip():
                    skipped_before += 1
            else:
                current.add(line)
    if current is not None:
        session = current.session()
        if session is not None:
            yield session


@dataclass
class _Block:
    role: str
    lines: list[str] = field(default_factory=list)
    model: str | None = None


class _Session:
    """One session as its lines are read: blocks of one role, then messages."""

    def __init__(self, key: str, started: str, project: str, file: Path) -> None:
        self.key = key
        self.started = started
        self.project = project
        self.file = file
        self.problems: list[str] = []
        self.messages: list[Message] = []
        self.models: list[str] = []
        self.model: str | None = None
        self.block: _Block | None = None
        self.fence: str | None = None  # the closing fence while inside a reply's code block
        self.after_blank = True  # the previous line was blank (or this is the first)
        self.lines: list[str] = []

    def add(self, line: str) -> None:
        """A line of the session: read when the session ends (``session``), once it is known
        whether aider marked its inputs (``USER_END``)."""
        self.lines.append(line)

    def _read(self, line: str, marked: bool) -> None:
        blank = not line.strip()
        if self.block is not None and self.block.role == "assistant" and self.fence is not None:
            if TOKENS_RE.match(line):
                # aider writes this right after a reply: a fence still open is never closed
                self.problems.append("a code fence in a reply was never closed")
                self.fence = None
            else:
                self._fence(line)
                self.block.lines.append(line)
                self.after_blank = blank
                return
        # (a line of a multi-line input that lost its mark is still the input's)
        continues = self.block is not None and self.block.role == "user"
        user = USER_RE.match(line) if not marked or line.endswith(USER_END) or continues else None
        tool = None if user else TOOL_RE.match(line)
        if user:
            self._start("user")
            assert self.block is not None
            self.block.lines.append((user.group(1) or "").rstrip())
        elif tool:
            self._start("tool")
            assert self.block is not None
            self.block.lines.append((tool.group(1) or "").rstrip())
        elif blank:
            if self.block is not None and self.block.role == "assistant":
                self.block.lines.append("")
            elif self.block is not None:
                self._close()
        elif self.block is not None and self.block.role == "tool" and not self.after_blank:
            # the second and later lines of a multi-line output are written without "> "
            self.block.lines.append(line.rstrip())
        else:
            self._start("assistant")
            assert self.block is not None
            self._fence(line)
            self.block.lines.append(line)
        self.after_blank = blank

    def _fence(self, line: str) -> None:
        """Follow code fences in a reply: open one, or close the one that is open."""
        stripped = line.strip()
        if self.fence is None:
            opening = FENCE_RE.match(line)
            if opening:
                self.fence = opening.group(1)
                return
            tag = TAG_FENCE_RE.match(line)
            if tag:
                self.fence = f"</{tag.group(1)}>"
            return
        if self.fence.startswith("</"):
            if stripped == self.fence:
                self.fence = None
        elif stripped.startswith(self.fence[0] * len(self.fence)) and not stripped.strip(self.fence[0]):
            self.fence = None

    def _start(self, role: str) -> None:
        if self.block is not None and self.block.role == role:
            return
        self._close()
        self.block = _Block(role, model=self.model if role == "assistant" else None)

    def _close(self) -> None:
        block, self.block = self.block, None
        self.fence = None
        if block is None:
            return
        if block.role == "user":
            self._user(block.lines)
        elif block.role == "tool":
            self._tool(block.lines)
        else:
            text, thinking = _thinking("\n".join(block.lines))
            if text or thinking:
                self.messages.append(Message(role="assistant", text=text, model=block.model, thinking=thinking))

    def _user(self, lines: list[str]) -> None:
        text = "\n".join("" if line == BLANK_INPUT else line for line in lines).strip()
        if not text:
            return
        calls: list[ToolCall] = []
        first = lines[0].strip() if lines else ""
        if first.startswith("!") and len(first) > 1:
            calls.append(ToolCall(name="run", commands=[first[1:].strip()]))
        else:
            command = COMMAND_RE.match(first)
            if command and command.group(1) in RUN_COMMANDS and command.group(2):
                name = RUN_COMMANDS[command.group(1)]
                argument = command.group(2).strip()
                calls.append(ToolCall(name=name, commands=[f"git {argument}" if name == "git" else argument]))
        self.messages.append(Message(role="user", text=text, tool_calls=calls))

    def _tool(self, lines: list[str]) -> None:
        output = "\n".join(lines).strip()
        if not output:
            return
        calls: list[ToolCall] = []
        for line in lines:
            line = line.strip()
            model = MODEL_RE.match(line)
            if model:
                self.model = model.group(1)
                continue
            running = RUNNING_RE.match(line)
            if running:
                calls.append(ToolCall(name="run", commands=[running.group(1).strip()]))
                continue
            added = ADDED_RE.match(line)
            if added and not OUTPUT_LINES_RE.match(added.group(1)):
                calls.append(ToolCall(name="add", files=[added.group(1).strip()]))
                continue
            read_only = ADDED_READ_ONLY_RE.match(line)
            if read_only:
                calls.append(ToolCall(name="read", files=[read_only.group(1).strip()]))
                continue
            edit = EDIT_RE.match(line)
            if edit:
                calls.append(ToolCall(name="edit", files=[edit.group(1).strip()]))
                continue
            used = USAGE_RE.match(line)
            reply = self.messages[-1] if self.messages and self.messages[-1].role == "assistant" else None
            if used and reply is not None and reply.usage is None:
                reply.usage = _usage(used)
        self.messages.append(Message(role="tool", text="", tool_calls=calls, tool_output=output))

    def session(self) -> Session | None:
        # Aider ends each line of an input with two spaces; a model's own "#### " heading has
        # none. A history whose trailing spaces were lost (an editor's doing) has no marked
        # input at all: its "#### " lines are all taken as inputs, as before the marks were read.
        marked = any(line.startswith("####") and line.endswith(USER_END) for line in self.lines)
        for line in self.lines:
            self._read(line, marked)
        self._close()
        if not any(message.role in ("user", "assistant") for message in self.messages):
            return None
        models: list[str] = []
        for message in self.messages:
            if message.model and message.model not in models:
                models.append(message.model)
        users = [message.text for message in self.messages if message.role == "user"]
        prompts = [text for text in users if not text.startswith(("/", "!"))]
        title = short_title((prompts or users)[0]) if users else f"aider chat {self.key}"
        return Session(
            key=self.key,
            agent=KIND,
            title=title,
            messages=self.messages,
            project=self.project,
            models=models,
            started=self.started,
            last=self.started,
            files=[self.file],
            problems=self.problems,
        )


def _usage(found: re.Match[str]) -> Usage | None:
    """A reply's usage from aider's "Tokens: …" line, its counts as rounded as aider prints them
    (``6.1k`` is 6,100). What it sent counts the cache's tokens: the input is the rest."""
    counts = dict.fromkeys(("sent", "received", "cache write", "cache hit"), 0)
    for number, scale, name in COUNT_RE.findall(found["counts"]):
        counts[name] = round(float(number) * {"k": 1_000, "M": 1_000_000}.get(scale, 1))
    cached = counts["cache write"] + counts["cache hit"]
    return usage(
        input=max(0, counts["sent"] - cached),
        output=counts["received"],
        cache_write=counts["cache write"],
        cache_read=counts["cache hit"],
        cost=float(found["cost"]) if found["cost"] else None,
    )


def _thinking(text: str) -> tuple[str, str]:
    """A reply's text without its ``<thinking-content-ID>`` blocks, and those blocks' text, in one pass."""
    kept: list[str] = []
    thoughts: list[str] = []
    position = 0
    while (start := text.find(THINKING_OPEN, position)) != -1:
        head_end = text.find(">", start)
        closing = f"</{text[start + 1 : head_end]}>" if head_end != -1 else ""
        end = text.find(closing, head_end) if head_end != -1 else -1
        if end == -1:
            break  # never closed: what follows stays the reply's
        kept.append(text[position:start])
        thoughts.append(text[head_end + 1 : end].strip())
        position = end + len(closing)
    kept.append(text[position:])
    return "".join(kept).strip(), "\n\n".join(thought for thought in thoughts if thought)
