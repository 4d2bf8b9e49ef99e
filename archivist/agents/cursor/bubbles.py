"""Cursor's messages ("bubbles") as messages: text, thinking, tool calls, usage and images.

A composer's bubble is one JSON object (its shape: see ``archivist.agents.cursor``): ``type``
1 for the person's request, 2 for the assistant's; ``text`` (else the Lexical editor state of
``richText``); ``createdAt`` (ISO text, or Unix ms), else the wall-clock times of
``timingInfo``; ``modelInfo.modelName``; ``thinking.text`` (else ``allThinkingBlocks``);
``toolFormerData`` (one tool call: ``name``, the JSON text of ``rawArgs`` and ``params``, the
JSON text of its ``result``); ``tokenCount`` (``inputTokens``, ``outputTokens``); its images,
``images`` and the request's ``context.selectedImages`` (each with a ``uuid``, the ``path`` of
the image and its ``dimension``): a request of an image alone is a user message whose text is
the image's placeholder. An older chat tab's bubble has ``type`` "user" or "ai", ``text`` or
``rawText``, ``modelType`` and an ``image``.

Left out on purpose: a ``toolFormerData`` that names no tool and holds nothing (no ``name``, no
``tool`` number, no arguments, no result). Cursor gives many answers that call no tool such an
empty one by default (public readers of these files read a tool call only where it has a name):
it is no call, and the bubble's text, thinking and usage are read as they are.

``Conversation`` takes a conversation's bubbles in order and keeps its messages, its models
and what it skipped. No value of the wrong type raises here.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from archivist.agents import (
    Attachment,
    Message,
    NotJSON,
    ToolCall,
    attachment,
    iso_utc,
    json_value,
    named_files,
    text_or_none,
    uri_path,
    usage,
)
from archivist.agents.tool_edits import editor_call

# Cursor's "Auto" model choice is stored as this name: no model.
NO_MODEL = ("default", "auto")
# The arguments that name the file a tool reads or changes (rawArgs is the model's, params Cursor's).
FILE_ARGUMENTS = ("target_file", "targetFile", "file_path", "filePath", "relativeWorkspacePath", "target_notebook")
# Wall-clock times of a bubble's timing (Unix ms); its clientStartTime is a monotonic clock, not a time.
TIMINGS = ("clientRpcSendTime", "clientSettleTime", "clientEndTime")
EARLIEST_MS = 10**12  # a Unix time in ms after 2001: what a wall-clock timing is
USER_TYPES = (1, "user")
ASSISTANT_TYPES = (2, "ai", "assistant")
MAX_NAME = 300


@dataclass(frozen=True)
class Skipped:
    """A bubble not read, and why (``not JSON``, ``not found``, a value too large)."""

    reason: str


@dataclass
class Conversation:
    """A conversation's messages as its bubbles are added, in order."""

    model: str | None = None  # the model the next answer is from, as far as the log tells
    messages: list[Message] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)

    def add_model(self, value: Any) -> str | None:
        """A model name, added to the conversation's models; None for none (or Cursor's Auto)."""
        name = model_name(value)
        if name and name not in self.models:
            self.models.append(name)
        return name

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def add_all(self, bubbles: Iterable[Any]) -> None:
        for bubble in bubbles:
            self.add(bubble)

    def add(self, bubble: Any) -> None:
        """One bubble (a composer's or an older chat tab's): its messages, or what was skipped."""
        if isinstance(bubble, Skipped):
            self.skip(bubble.reason)
            return
        if bubble is None:  # Cursor leaves a removed bubble as null
            return
        if not isinstance(bubble, dict):
            self.skip("not an object")
            return
        kind = bubble.get("type")
        if isinstance(kind, bool) or kind not in (*USER_TYPES, *ASSISTANT_TYPES):
            self.skip("of no known type")
            return
        timestamp = bubble_time(bubble)
        model = self.add_model(_mapping(bubble.get("modelInfo")).get("modelName") or bubble.get("modelType"))
        attachments = images(bubble)
        text = _with_placeholders(bubble_text(bubble), attachments)
        if kind in USER_TYPES:
            self.model = model or self.model
            if text:
                self.messages.append(Message("user", text, timestamp, attachments=attachments))
            return
        thinking = thinking_text(bubble)
        call, output = tool_call(bubble.get("toolFormerData"))
        tokens = _mapping(bubble.get("tokenCount"))
        spent = usage(input=tokens.get("inputTokens"), output=tokens.get("outputTokens"))
        if not (text or thinking or call or spent):
            return  # an empty bubble: a placeholder the editor filled no further
        self.messages.append(
            Message(
                "assistant",
                text,
                timestamp,
                model or self.model,
                [call] if call else [],
                thinking=thinking,
                usage=spent,
                attachments=attachments,
            )
        )
        if output:
            self.messages.append(Message("tool", "", timestamp, tool_output=output))


def model_name(value: Any) -> str | None:
    """A model's name; None for none, or for Cursor's Auto choice."""
    name = text_or_none(value)
    return None if name is None or name.lower() in NO_MODEL else name[:MAX_NAME]


def bubble_time(bubble: dict[str, Any]) -> str | None:
    """When a bubble was written: its ``createdAt``, else a wall-clock time of its timing."""
    created = bubble.get("createdAt") or bubble.get("timestamp")
    if isinstance(created, str | int | float):
        found = iso_utc(created)
        if found:
            return found
    timing = _mapping(bubble.get("timingInfo"))
    for name in TIMINGS:
        value = timing.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= EARLIEST_MS:
            return iso_utc(value)
    return None


def bubble_text(bubble: dict[str, Any]) -> str:
    """A bubble's text: ``text``, else an older one's ``rawText``, else what its rich text holds."""
    for name in ("text", "rawText"):
        text = text_or_none(bubble.get(name))
        if text:
            return text
    delegate = _mapping(bubble.get("delegate")).get("a")
    if text_or_none(delegate):
        return str(delegate).strip()
    for name in ("richText", "initText"):
        text = lexical_text(bubble.get(name))
        if text:
            return text
    return ""


def lexical_text(value: Any) -> str:
    """The text of a Lexical editor state (``{"root": {"children": [...]}}``, or its JSON text):
    its text nodes, a paragraph a line."""
    if isinstance(value, str):
        try:
            value = json_value(value)
        except NotJSON:
            return ""
    root = _mapping(value).get("root")
    if not isinstance(root, dict):
        return ""
    lines: list[str] = []
    for paragraph in _list(root.get("children")):
        pieces: list[str] = []
        _texts(paragraph, pieces, 0)
        lines.append("".join(pieces))
    return "\n".join(lines).strip()


def _texts(node: Any, pieces: list[str], depth: int) -> None:
    """The text nodes under a Lexical node, in order (values come within the JSON depth budget)."""
    if not isinstance(node, dict) or depth > 200:
        return
    if isinstance(node.get("text"), str):
        pieces.append(node["text"])
    for child in _list(node.get("children")):
        _texts(child, pieces, depth + 1)


def thinking_text(bubble: dict[str, Any]) -> str:
    """A bubble's thinking: ``thinking.text``, else the texts of ``allThinkingBlocks``."""
    thinking = bubble.get("thinking")
    text = text_or_none(thinking.get("text") if isinstance(thinking, dict) else thinking)
    if text:
        return text
    blocks = [text_or_none(_mapping(block).get("text")) for block in _list(bubble.get("allThinkingBlocks"))]
    return "\n\n".join(block for block in blocks if block)


def tool_call(data: Any) -> tuple[ToolCall | None, str]:
    """A bubble's ``toolFormerData`` as a call (its name, the files it names, its command, its
    input: the model's ``rawArgs``, else ``params``; the edits it made), and its output; (None, "")
    for none."""
    if not isinstance(data, dict) or not data:
        return None, ""
    tool = data.get("tool")
    number = tool if isinstance(tool, int) and not isinstance(tool, bool) else None
    name = text_or_none(data.get("name"))
    arguments = [_arguments(data.get("rawArgs")), _arguments(data.get("params"))]
    output = _output(data.get("result"))
    if name is None and number is None and not any(arguments) and not output:
        return None, ""  # the empty one Cursor gives an answer that calls no tool
    if name is None:
        name = "tool" if number is None else f"tool {number}"
    files: list[str] = []
    for found in arguments:
        for file in named_files(found, FILE_ARGUMENTS):
            path = uri_path(file) or file
            if path not in files:
                files.append(path)
    command = next(
        (found["command"].strip() for found in arguments if text_or_none(found.get("command"))),
        None,
    )
    given = data.get("rawArgs") if data.get("rawArgs") not in (None, "", {}) else data.get("params")
    call = editor_call(name[:MAX_NAME], given, files, [command] if command else [])
    return call, output


def _arguments(value: Any) -> dict[str, Any]:
    """A tool's arguments: an object, or the JSON text of one; {} for anything else."""
    if isinstance(value, str):
        try:
            value = json_value(value)
        except NotJSON:
            return {}
    return value if isinstance(value, dict) else {}


def _output(value: Any) -> str:
    """What a tool's result says: a terminal's ``output``, a file read's ``contents``, an error, or
    the text itself when it is no JSON."""
    if isinstance(value, str):
        try:
            parsed = json_value(value)
        except NotJSON:
            return value.strip()
        value = parsed
    result = _mapping(value)
    for name in ("output", "contents", "error"):
        text = text_or_none(result.get(name))
        if text:
            return text
    return ""


def images(bubble: dict[str, Any]) -> list[Attachment]:
    """The images of a bubble (``images``, its request's ``context.selectedImages``; an older tab's
    ``image``), each once, named by its path, recorded, never their data."""
    found = []
    seen: set[str] = set()
    items = (
        _list(bubble.get("images"))
        + _list(_mapping(bubble.get("context")).get("selectedImages"))
        + ([bubble["image"]] if isinstance(bubble.get("image"), dict) else [])
    )
    for item in items:
        if not isinstance(item, dict):
            continue
        path = text_or_none(item.get("path")) or text_or_none(item.get("uri"))
        same = {key for key in (text_or_none(item.get("uuid")), path) if key}
        if same & seen:
            continue  # the same image in both lists
        seen |= same
        name = (uri_path(path) or path if path else None) or text_or_none(item.get("name"))
        kind = text_or_none(item.get("mimeType")) or (mimetypes.guess_type(name)[0] if name else None) or "image"
        data = item.get("data") if isinstance(item.get("data"), str) else None
        found.append(attachment(kind, name, item.get("size"), data=data))
    return found


def _with_placeholders(text: str, attachments: list[Attachment]) -> str:
    marks = " ".join(item.placeholder() for item in attachments)
    return "\n\n".join(part for part in (text, marks) if part)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
