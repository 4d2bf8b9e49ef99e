"""What a Claude Code line's content says: texts, attachments, tool output, slash commands.

A message's ``content`` is a string or a list of blocks, as the Anthropic Messages API
has them: ``text``, ``image`` and ``document`` (each with a ``source``: ``base64`` data
and its ``media_type``, plain ``text`` data, or a ``url``), ``tool_result`` (whose own
``content`` is a string or such blocks), and in assistant lines ``thinking`` and
``tool_use``. An image or document is recorded as an ``Attachment`` and stands in the
text as its placeholder (``[image]``, ``[file: report.pdf]``): its data is never kept.

The CLI writes some user lines itself: a slash command as typed
(``<command-name>/foo</command-name><command-args>bar</command-args>``, kept as
``/foo bar``), the output of a local command or of a ``!`` shell command
(``<local-command-stdout>``, ``<bash-stdout>``: tool output), caveats, hook and system
reminders, interruption notices and task notifications: none of these is a request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from archivist.agents import Attachment, Edit, attachment, between, text_edit, text_or_none

# User text the CLI writes, not the person: never a request, never a title.
NOT_A_REQUEST = (
    "<command-",
    "<local-command-",
    "<bash-",
    "<system-reminder>",
    "<user-prompt-submit-hook>",
    "<task-notification>",
    "<user-memory-input>",
    "Caveat:",
    "[Request interrupted",
    "Stop hook feedback:",
    "This session is being continued from a previous conversation",
)
COMMAND_OPENINGS = ("<command-name>", "<command-message>")
OUTPUT_PREFIXES = ("<local-command-stdout>", "<local-command-stderr>", "<bash-stdout>", "<bash-stderr>")
OUTPUT_TAGS_RE = re.compile(r"</?(?:local-command-stdout|local-command-stderr|bash-stdout|bash-stderr)>")
AGENT_ID_RE = re.compile(r"agentId:\s*([0-9A-Za-z_-]+)")
ATTACHED = ("image", "document")  # the blocks recorded as attachments
NOTEBOOK_INSERT = "insert"  # the NotebookEdit mode that adds a cell (the others name no text replaced)


@dataclass
class Content:
    """A content's text (the placeholders of its attachments where they were) and its attachments."""

    text: str = ""
    attachments: list[Attachment] = field(default_factory=list)


def blocks_content(content: object, separator: str = "\n", skip_reminders: bool = False) -> Content:
    """The text and attachments of a string or a list of blocks (tool results included, as text).

    With ``skip_reminders``, a text block that is only a ``<system-reminder>`` is left out
    (the CLI adds them to a prompt).
    """
    if isinstance(content, str):
        return Content(content)
    found = Content()
    if not isinstance(content, list):
        return found
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif not isinstance(block, dict):
            continue
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            if not (skip_reminders and text.lstrip().startswith("<system-reminder>")):
                parts.append(text)
        elif block.get("type") in ATTACHED:
            attached = block_attachment(block)
            found.attachments.append(attached)
            parts.append(attached.placeholder())
        elif block.get("type") == "tool_result":
            inner = blocks_content(block.get("content"))
            found.attachments.extend(inner.attachments)
            parts.append(inner.text)
    found.text = separator.join(part for part in parts if part.strip())
    return found


def block_attachment(block: dict[str, Any]) -> Attachment:
    """An ``image`` or ``document`` block as an attachment: its media type, name and size."""
    what = "image" if block.get("type") == "image" else "file"
    source = block.get("source")
    source = source if isinstance(source, dict) else {}
    kind = text_or_none(source.get("media_type")) or what
    name = text_or_none(block.get("title"))
    data = source.get("data")
    if source.get("type") == "url":
        name = name or text_or_none(source.get("url"))
        return attachment(kind, name)
    if source.get("type") == "text" and isinstance(data, str):
        return attachment(kind, name, size=len(data.encode("utf-8", "replace")))
    return attachment(kind, name, data=data if isinstance(data, str) else None)


def tool_results(content: list[Any]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of a user line's content."""
    return [block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"]


def result_agent_id(block: dict[str, Any], result: object) -> str | None:
    """The sub-agent a Task/Agent result names: ``toolUseResult.agentId``, else ``agentId: …`` in its text."""
    agent_id = result.get("agentId") if isinstance(result, dict) else None
    if isinstance(agent_id, str) and agent_id:
        return agent_id
    found = AGENT_ID_RE.search(blocks_content(block.get("content")).text)
    return found.group(1) if found else None


def call_edits(name: str, inputs: dict[str, Any]) -> tuple[list[Edit], list[str]]:
    """The changes a tool call's input makes to files, and the keys of the input they hold.

    ``Edit`` replaces ``old_string`` with ``new_string`` in ``file_path``; ``MultiEdit`` makes
    each of its ``edits`` (``old_string``, ``new_string``) in it; ``Write`` writes
    ``content`` as the whole file; ``NotebookEdit`` inserting a cell (``edit_mode``
    ``insert``) adds ``new_source`` to ``notebook_path``. A value that is not a text makes no
    edit, and its key stays in the input.
    """
    file = inputs.get("file_path")
    if name == "Edit":
        edit = text_edit(file, inputs.get("old_string"), inputs.get("new_string"))
        return ([edit], ["old_string", "new_string"]) if edit else ([], [])
    if name == "Write":
        edit = text_edit(file, None, inputs.get("content"))
        return ([edit], ["content"]) if edit else ([], [])
    if name == "MultiEdit":
        entries = inputs.get("edits")
        if not isinstance(entries, list):
            return [], []
        edits = [
            text_edit(file, entry.get("old_string"), entry.get("new_string")) if isinstance(entry, dict) else None
            for entry in entries
        ]
        made = [edit for edit in edits if edit is not None]
        return made, ["edits"] if made and len(made) == len(edits) else []
    if name == "NotebookEdit" and inputs.get("edit_mode") == NOTEBOOK_INSERT:
        edit = text_edit(inputs.get("notebook_path"), "", inputs.get("new_source"))
        return ([edit], ["new_source"]) if edit else ([], [])
    return [], []


# --- user text ----------------------------------------------------------------------------


def is_output(text: str) -> bool:
    """Whether a user text is the output of a local or shell command."""
    return text.lstrip().startswith(OUTPUT_PREFIXES)


def output_text(text: str) -> str:
    """A local or shell command's output without its tags."""
    return OUTPUT_TAGS_RE.sub("", text).strip()


def command_text(text: str) -> str | None:
    """A slash command as typed (``/foo bar``), for a text that opens with the CLI's command
    tags; None for any other text."""
    if not text.lstrip().startswith(COMMAND_OPENINGS):
        return None
    name = tag_text(text, "command-name") or tag_text(text, "command-message")
    if not name:
        return None
    name = name if name.startswith("/") else f"/{name.split()[0]}"
    arguments = tag_text(text, "command-args")
    return f"{name} {arguments}" if arguments else name


def is_request(text: str) -> bool:
    """Whether a user text is something the person asked (not a line the CLI wrote)."""
    stripped = text.lstrip()
    return bool(stripped) and not stripped.startswith(NOT_A_REQUEST)


def tag_text(text: str, tag: str) -> str:
    """The text of the first ``<tag>…</tag>`` in ``text``, stripped ("" where there is none)."""
    span = between(text, f"<{tag}>", f"</{tag}>")
    return text[span[0] : span[1]].strip() if span else ""
