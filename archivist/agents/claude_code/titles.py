"""A Claude Code session's title, and the user and system lines that decide it.

The title is the log's own: the last ``custom-title`` (the user's ``/rename``), else the
last ``ai-title``, else the ``summary`` whose ``leafUuid`` is the latest message of the
session it names (older versions wrote a session's summary at the top of the next
session's file). Without one, it is the session's first request: the first prompt the
person typed, or the slash command with arguments it opened with (``/review-pr 12``) when
the model answered that command. A command alone that the model answered (``/init``) is
no request: it titles the session only where no request follows, said with what it does
(``/init: set up the project's instructions file``). A local command (``/clear``,
``/model``: answered by the CLI's ``<local-command-stdout>``, not by the model), a caveat,
a tool result, an interruption notice or a compaction summary is never the title.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from archivist.agents import Attachment, Message
from archivist.agents.claude_code.content import command_text, is_output, is_request, output_text

COMPACTION_SUMMARY = "Compaction summary"  # how a compaction's summary of the conversation before it begins
COMPACTED = "Conversation compacted"
SLASH_COMMAND_RE = re.compile(r"/[A-Za-z][\w:.-]*(?:[ \t][^\n]*)?")
COMMANDS = {  # what a command that titles a session alone does
    "/init": "set up the project's instructions file",
    "/review": "review the changes",
    "/security-review": "review the changes for security",
    "/compact": "compact the conversation",
    "/pr-comments": "read the pull request's comments",
}


def is_slash_command(text: str) -> bool:
    """Whether a user text is one slash command as typed (``/init``, ``/model gpt-5``), no request."""
    return SLASH_COMMAND_RE.fullmatch(text.strip()) is not None


def command_title(command: str) -> str:
    """A slash command as a title: said with what it does where that is known (``/init: set up
    the project's instructions file``), else as typed."""
    command = command.strip()
    meaning = COMMANDS.get(command)
    return f"{command}: {meaning}" if meaning else command


class Titles:
    """What a session's lines say of its title, as they are read."""

    def __init__(self) -> None:
        self.custom: str | None = None
        self.ai: str | None = None
        self.summaries: list[tuple[str, str]] = []  # (leafUuid, summary), in file order
        self.request: str | None = None  # the first request: a prompt, or a command with arguments answered
        self.command: str | None = None  # the first command alone (``/init``) the model answered
        self.pending: str | None = None  # the slash command the session opened with, until it is answered

    def take(self, record: dict[str, Any], kind: str) -> bool:
        """A title line (any other line of a known type is bookkeeping); always True."""
        if kind == "summary":
            leaf, summary = record.get("leafUuid"), record.get("summary")
            if isinstance(leaf, str) and isinstance(summary, str) and summary.strip():
                self.summaries.append((leaf, summary))
        elif kind == "custom-title":
            self.custom = _text_or(record.get("customTitle"), self.custom)
        elif kind == "ai-title":
            self.ai = _text_or(record.get("aiTitle"), self.ai)
        return True

    @property
    def first_request(self) -> str | None:
        """The title the session's requests give: its first request, else the first command
        alone the model answered (said with what it does); None where there is neither."""
        return self.request or (command_title(self.command) if self.command else None)

    @property
    def settled(self) -> bool:
        """Whether the first request is known: later lines change it no more."""
        return self.request is not None

    def user_message(self, text: str, timestamp: str | None, attachments: Sequence[Attachment] = ()) -> Message | None:
        """The message a user line's text is: a command's output is tool output, a slash
        command is kept as typed; None for a line with nothing in it."""
        if is_output(text):
            self.pending = None  # the command it answers was a local one
            return Message("tool", "", timestamp, tool_output=output_text(text), attachments=list(attachments))
        command = command_text(text)
        if command is not None:
            if self.request is None:
                self.pending = command
            text = command
        elif self.request is None and is_request(text):
            self.request, self.pending = text, None
        if not text.strip() and not attachments:
            return None
        return Message("user", text, timestamp, attachments=list(attachments))

    def answered(self) -> None:
        """The model answered: a slash command waiting for that was the session's first request
        where it has arguments, and its first command alone where it has none."""
        if self.request is None and self.pending is not None:
            if " " in self.pending.strip():
                self.request = self.pending
            else:
                self.command = self.command or self.pending
            self.pending = None

    def heard(self, message: Message) -> None:
        """A system line: a local command's output there answers the command waiting."""
        if message.role == "tool":
            self.pending = None

    def own(self, uuids: dict[str, int], others: dict[str, str]) -> str | None:
        """The log's own title: a custom one, an AI one, else the summary of this session's
        latest summarised message (``others``: the summaries found in other files)."""
        return self.custom or self.ai or self._summary(uuids, others)

    def _summary(self, uuids: dict[str, int], others: dict[str, str]) -> str | None:
        best, best_position = None, -1
        for leaf, summary in [*others.items(), *self.summaries]:
            position = uuids.get(leaf)
            if position is not None and position >= best_position:
                best, best_position = summary, position
        return best


def compaction_text(summary: str) -> str:
    """A compaction's summary as a system message's text, saying what it is."""
    return f"{COMPACTION_SUMMARY}:\n\n{summary.strip()}"


def system_message(record: dict[str, Any], timestamp: str | None) -> Message | None:
    """A ``system`` line as a message: a compaction marker says what was compacted, a local
    command's output is tool output, any other text is kept; None for one with no text."""
    content = record.get("content")
    if record.get("subtype") == "compact_boundary":
        return Message("system", _compacted(record.get("compactMetadata")), timestamp)
    if not isinstance(content, str) or not content.strip():
        return None
    if is_output(content):
        return Message("tool", "", timestamp, tool_output=output_text(content))
    return Message("system", content, timestamp)


def _compacted(metadata: object) -> str:
    """``Conversation compacted (auto, 156910 tokens before)``, as much as the line tells."""
    details = []
    if isinstance(metadata, dict):
        trigger, tokens = metadata.get("trigger"), metadata.get("preTokens")
        if isinstance(trigger, str) and trigger.strip():
            details.append(trigger.strip()[:40])
        if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0:
            details.append(f"{tokens} tokens before")
    return f"{COMPACTED} ({', '.join(details)})" if details else COMPACTED


def _text_or(value: object, default: str | None) -> str | None:
    return value if isinstance(value, str) and value.strip() else default
