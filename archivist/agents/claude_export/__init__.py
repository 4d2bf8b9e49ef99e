"""claude.ai data exports: one session per exported conversation.

An export is the folder or the ``.zip`` that claude.ai's "Export data" gives. It holds
``conversations.json`` (team exports split it into ``conversations-0000.json``, …), a JSON
list of conversations ``{uuid, name, summary, created_at, updated_at, chat_messages}``.
Each chat message has a ``sender`` (``human`` or ``assistant``), a ``created_at``, its
plain ``text`` and, in newer exports, typed ``content`` blocks (``text``, ``thinking``,
``tool_use``, ``tool_result``), plus ``attachments`` (with their extracted text) and
``files`` (names only).

What a session holds:

- key: the conversation's ``uuid``; title: its ``name``, else its first user message
  shortened, else its ``summary``;
- messages on the conversation's current branch: edits and regenerations leave every
  branch in ``chat_messages``; where messages link to their parent
  (``parent_message_uuid``), the chain from the newest leaf back to the root is read,
  else the list in its order;
- a human message is a ``user`` message, its attachments' extracted text kept below its
  text after an ``[attachment: NAME]`` line and its other files named by ``[file: NAME]``;
- an assistant message becomes one ``assistant`` message per stretch of blocks between
  tool results: text, thinking, tool calls (with the files they touched and the shell
  commands they ran; the text of an artifact or of a created file is kept in the message
  text after an ``[artifact: TITLE]`` or ``[created file: PATH]`` line, since claude.ai
  shows it in the answer); each ``tool_result`` block is a ``tool`` message whose output
  is kept apart from the text (a web search's pages by their title, address and quoted text);
- no model (the export does not say which) and no project (the export does not link
  conversations to its projects).

The export container (folder or zip, ``conversations*.json`` read once as a stream, one
conversation held at a time and only within its limits, the zip within those of
``archives``, the problems of a read) is shared with ``chatgpt_export``: ``export_files``,
``json_list`` and ``exports``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist.agents import Attachment, Message, Session, ToolCall, attachment, call_input, iso_utc
from archivist.agents.export_files import ExportFile
from archivist.agents.exports import (
    CLAUDE_KIND,
    check_export,
    conversation_session,
    parse_time,
    read_export,
    text_of,
    unique,
)

# The limit of one conversation, named here too for the tools and tests that read claude.ai exports.
from archivist.agents.json_list import MAX_CONVERSATION_BYTES as MAX_CONVERSATION_BYTES

KIND = CLAUDE_KIND

ROOT_PARENT = "00000000-0000-4000-8000-000000000000"  # the parent of a conversation's first message
_SENDERS = {"human": "user", "user": "user", "assistant": "assistant"}
_QUIET_BLOCKS = {"token_budget"}  # blocks with nothing to read, not worth a problem
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "notebook_path")
_SHOWN_KEYS = ("content", "new_str", "file_text")  # texts of a call's input the answer shows
_SHELL_WORDS = ("bash", "shell", "terminal", "run_command", "execute_command")


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a claude.ai export (a sentence), or None when it is one."""
    return check_export(path, KIND)


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Every conversation of the claude.ai export at ``path`` (folder or zip), in file order (``read_export``)."""
    return read_export(path, _session, problems)


def _session(item: dict[str, Any], file: ExportFile, index: int) -> Session | None:
    return conversation_session(
        KIND,
        item,
        file,
        index,
        _conversation_messages,
        keys=("uuid",),
        unknown_as="content block(s) of unknown type",
        title="name",
        summary="summary",
        created="created_at",
        updated="updated_at",
    )


def _conversation_messages(item: dict[str, Any], problems: list[str], unknown: dict[str, int]) -> list[Message]:
    """The messages of the conversation's current branch, in order."""
    raw_messages = item.get("chat_messages")
    if not isinstance(raw_messages, list):
        raise ValueError("it has no chat_messages list")
    messages: list[Message] = []
    for position, raw in _current_branch(raw_messages, problems):
        messages.extend(_messages(raw, position, problems, unknown))
    return messages


def _current_branch(raw_messages: list[Any], problems: list[str]) -> list[tuple[int, dict[str, Any]]]:
    """The messages of the current branch in order, each with its place in ``chat_messages``."""
    linear: list[tuple[int, dict[str, Any]]] = []
    for position, raw in enumerate(raw_messages):
        if isinstance(raw, dict):
            linear.append((position, raw))
        else:
            problems.append(f"message {position + 1} is not an object: skipped")
    linked = all(
        isinstance(raw.get("uuid"), str) and isinstance(raw.get("parent_message_uuid"), str) for _, raw in linear
    )
    by_uuid = {raw["uuid"]: (position, raw) for position, raw in linear} if linked else {}
    if not linear or not linked or len(by_uuid) != len(linear):
        return linear
    parents = {raw["parent_message_uuid"] for _, raw in linear}
    leaves = [entry for entry in linear if entry[1]["uuid"] not in parents]
    if not leaves:
        problems.append("the messages' parent links form a loop: read in their order")
        return linear

    def newest(entry: tuple[int, dict[str, Any]]) -> tuple[float, int]:
        moment = parse_time(entry[1].get("created_at"))
        return (moment.timestamp() if moment else -math.inf, entry[0])

    entry = max(leaves, key=newest)
    chain = [entry]
    seen = {entry[1]["uuid"]}
    while True:
        parent = entry[1]["parent_message_uuid"]
        if parent == ROOT_PARENT or parent == "":
            break
        if parent not in by_uuid:
            if entry[0] == linear[0][0]:
                break  # the first message, whatever its parent is called
            problems.append("a message's parent is missing from the export: the messages are read in their order")
            return linear
        if parent in seen:
            problems.append("the messages' parent links form a loop: read in their order")
            return linear
        seen.add(parent)
        entry = by_uuid[parent]
        chain.append(entry)
    chain.reverse()
    return chain


@dataclass
class _Part:
    """One message being built from a stretch of content blocks."""

    role: str
    timestamp: str | None
    texts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_output: str = ""
    attachments: list[Attachment] = field(default_factory=list)

    def message(self) -> Message | None:
        text = "\n\n".join(part for part in self.texts if part.strip()).strip()
        thinking = "\n\n".join(part for part in self.thinking if part.strip()).strip()
        if not (text or thinking or self.tool_calls or self.tool_output):
            return None
        return Message(
            role=self.role,
            text=text,
            timestamp=self.timestamp,
            tool_calls=self.tool_calls,
            thinking=thinking,
            tool_output=self.tool_output,
            attachments=self.attachments,
        )


def _messages(raw: dict[str, Any], position: int, problems: list[str], unknown: dict[str, int]) -> list[Message]:
    """The messages one chat message becomes (a tool result splits an assistant message)."""
    sender = raw.get("sender")
    role = _SENDERS.get(sender) if isinstance(sender, str) else None
    if role is None:
        problems.append(f"message {position + 1} has an unknown sender {sender!r}: skipped")
        return []
    created = iso_utc(raw.get("created_at"))
    content = raw.get("content")
    blocks = [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []
    parts = [_Part(role, created)]
    used_text = False
    for block in blocks:
        block_type = block.get("type")
        if block_type in _QUIET_BLOCKS:
            continue
        part = parts[-1]
        if part.timestamp is None:
            part.timestamp = iso_utc(block.get("start_timestamp")) or created
        if block_type == "text":
            part.texts.append(_str(block.get("text")))
            used_text = True
        elif block_type == "thinking":
            thought = _str(block.get("thinking"))
            if not thought.strip() and isinstance(block.get("summaries"), list):
                thought = "\n".join(_str(s.get("summary")) for s in block["summaries"] if isinstance(s, dict))
            part.thinking.append(thought)
        elif block_type == "tool_use":
            call, shown = _tool_call(block)
            part.tool_calls.append(call)
            if shown:
                part.texts.append(shown)
            used_text = True
        elif block_type == "tool_result":
            stamp = iso_utc(block.get("start_timestamp")) or created
            output = _tool_output(block.get("content"))
            if block.get("is_error") is True:
                output = f"[error] {output}" if output else "[error]"
            parts.append(_Part("tool", stamp, tool_output=output or "[no output]"))
            parts.append(_Part(role, None))
        elif isinstance(block.get("text"), str) and block["text"].strip():
            part.texts.append(block["text"])  # a block of another kind that carries text (a voice note)
            used_text = True
        else:
            name = block_type if isinstance(block_type, str) else "(none)"
            unknown[name] = unknown.get(name, 0) + 1
    if not used_text:
        parts[0].texts.append(_str(raw.get("text")))  # old exports, or content without text blocks
    extra, parts[0].attachments = _attachments(raw)
    if extra:
        parts[0].texts.extend(extra)
    return [message for part in parts if (message := part.message()) is not None]


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _attachments(raw: dict[str, Any]) -> tuple[list[str], list[Attachment]]:
    """The extracted text of a message's attachments and the names of its other files, as the
    text shows them; and each one as an attachment (its name, type and size)."""
    shown: list[str] = []
    found: list[Attachment] = []
    for item in raw.get("attachments") or []:
        if not isinstance(item, dict):
            continue
        name = text_of(item.get("file_name")) or "attachment"
        content = _str(item.get("extracted_content"))
        shown.append(f"[attachment: {name}]\n{content}" if content.strip() else f"[attachment: {name}]")
        found.append(attachment(item.get("file_type") or "file", name, item.get("file_size")))
    for file in raw.get("files") or raw.get("files_v2") or []:
        if isinstance(file, dict) and text_of(file.get("file_name")):
            shown.append(f"[file: {text_of(file.get('file_name'))}]")
            found.append(attachment(file.get("file_kind") or "file", file.get("file_name")))
    return shown, found


def _tool_call(block: dict[str, Any]) -> tuple[ToolCall, str]:
    """A tool_use block as a tool call, and what of its input claude.ai shows in the answer."""
    name = text_of(block.get("name")) or "tool"
    tool_input: dict[str, Any] = block["input"] if isinstance(block.get("input"), dict) else {}
    files = unique([text_of(tool_input.get(key)) for key in _PATH_KEYS])
    commands: list[str] = []
    command = tool_input.get("command")
    if isinstance(command, str) and command.strip() and any(word in name.lower() for word in _SHELL_WORDS):
        commands.append(command.strip())
    shown = ""
    if name == "artifacts":
        title = text_of(tool_input.get("title")) or text_of(tool_input.get("id")) or "artifact"
        body = _str(tool_input.get("content")) or _str(tool_input.get("new_str"))
        if body.strip():
            shown = f"[artifact: {title}]\n{body}"
    elif isinstance(tool_input.get("file_text"), str) and tool_input["file_text"].strip():
        shown = f"[created file: {files[0] if files else name}]\n{tool_input['file_text']}"
    given = block.get("input")
    left = [key for key in _SHOWN_KEYS if isinstance(tool_input.get(key), str) and tool_input[key] in shown]
    if commands and tool_input.get("command", "").strip() in commands:
        left.append("command")
    return ToolCall(name=name, files=files, commands=commands, input=call_input(given, without=left)), shown


def _tool_output(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    pieces: list[str] = []
    for item in content:
        if isinstance(item, str):
            pieces.append(item)
        elif isinstance(item, dict):
            if text_of(item.get("title")) or text_of(item.get("url")):
                pieces.append(_found_page(item))
            elif isinstance(item.get("text"), str):
                pieces.append(item["text"])
            elif item.get("type") == "image":
                pieces.append("[image]")
    return "\n".join(piece for piece in pieces if piece)


def _found_page(item: dict[str, Any]) -> str:
    """A page a search found (a ``knowledge`` item of a web search's result): its title, its address and
    the text quoted from it, a line each."""
    return "\n".join(text for key in ("title", "url", "text") if (text := text_of(item.get(key))))
