"""Goose's messages as the archive's: the content parts of each message, in order (read by ``goose``).

A Goose message (block/goose ``crates/goose/src/conversation/message.rs``) is ``role`` (user
or assistant), ``created`` (Unix seconds), ``content`` (a list of parts, each tagged by
``type``) and ``metadata`` (``userVisible``, ``agentVisible``). The parts read here:

- ``text``: the message's text, unless its ``annotations.audience`` leaves the user out (text
  Goose adds for the model alone);
- ``image``: an attachment (``mimeType``; the base64 ``data`` only gives its size), its
  placeholder in the text;
- ``toolRequest`` and ``frontendToolRequest``: a tool call, ``toolCall`` being
  ``{"status": "success", "value": {"name", "arguments"}}``: the files its ``path`` names
  (the developer extension's ``text_editor`` and file tools), the ``command`` of a shell
  tool (``developer__shell``); a call that failed to parse (``"status": "error"``) is none;
- ``toolResponse``: ``toolResult`` as ``{"status": "success", "value": {"content": [...]}}``
  (older sessions: ``value`` is the list itself; ``crates/goose/src/conversation/
  tool_result_serde.rs``) or ``{"status": "error", "error"}``: a tool message with that
  output (none where it is empty), of the items the model was given (the user's copy,
  annotated for the user alone, repeats them), an image among them an attachment;
- ``thinking`` (``thinking``) and ``redactedThinking`` (encrypted: only said to be there):
  the message's thinking.

Confirmation requests, elicitations, system notifications and the compaction markers are
Goose's own, and left out; a message Goose keeps from the user (``userVisible`` false: a
compaction summary and its prompts) too. A part of another type (or a ``type`` that is no text)
is skipped and counted.

The older session files (``<session id>.jsonl``: a first line of metadata, then one message a
line) are read here too (``from_file``), a line at a time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import LONG_LINE, lines
from archivist.agents.tool_edits import with_input

KIND = "goose"
FILE_ARGUMENTS = ("path", "file_path", "filePath", "paths")
SHELL_TOOLS = ("shell", "bash", "run_shell_command")
CALLS = ("toolRequest", "frontendToolRequest")
LEFT_OUT = frozenset(
    {
        "toolConfirmationRequest",
        "actionRequired",
        "systemNotification",
        "contextLengthExceeded",
        "summarizationRequested",
        "conversationCompacted",
    }
)
REDACTED = "[redacted thinking]"


@dataclass
class Record:
    """One message as Goose stored it, its values not yet judged."""

    role: Any
    created: Any
    content: Any
    metadata: Any = None


@dataclass
class Info:
    """What a session's row (or a session file's first line) says of it."""

    key: str
    title: str | None = None
    project: str | None = None
    model: str | None = None
    created: Any = None
    updated: Any = None
    tokens: agents.Usage | None = None


@dataclass
class _Counts:
    messages: dict[str, int] = field(default_factory=dict)
    parts: dict[str, int] = field(default_factory=dict)

    @staticmethod
    def add(counts: dict[str, int], reason: str) -> None:
        counts[reason] = counts.get(reason, 0) + 1


def session(
    info: Info, records: Iterable[Record | str], files: list[Any], problems: list[str]
) -> agents.Session | None:
    """A session of these records (a string: a record not read, and why), or None where none
    holds anything to read (Goose's empty sessions; one whose records were all skipped is told
    in ``problems``)."""
    counts = _Counts()
    messages: list[agents.Message] = []
    for record in records:
        if isinstance(record, str):
            counts.add(counts.messages, record)
        elif isinstance(record.metadata, dict) and record.metadata.get("userVisible") is False:
            continue  # Goose's own, never shown
        elif record.role not in ("user", "assistant"):
            counts.add(counts.messages, "of no known role")
        elif not isinstance(record.content, list):
            counts.add(counts.messages, "with no list of content")
        else:
            messages.extend(_messages(record, info.model, counts))
    own = agents.skipped_problems(counts.messages, "message") + agents.skipped_problems(counts.parts, "part")
    if not any(message.text or message.tool_calls or message.tool_output for message in messages):
        if own:
            problems.append(f"{info.key}: no message read ({'; '.join(own)})")
        return None
    last = next((message for message in reversed(messages) if message.role == "assistant"), None)
    if last is not None:
        last.usage = info.tokens  # Goose counts a session's tokens, not a message's
    times = [message.timestamp for message in messages if message.timestamp]
    if not times:
        times = sorted(time for time in (agents.iso_utc(info.created), agents.iso_utc(info.updated)) if time)
    first = next((message.text for message in messages if message.role == "user" and message.text), "")
    return agents.Session(
        key=info.key,
        agent=KIND,
        title=agents.short_title(info.title or first),
        messages=messages,
        project=info.project,
        models=[info.model] if info.model else [],
        started=min(times) if times else None,
        last=max(times) if times else None,
        files=files,
        problems=own,
        titled=info.title is not None,
    )


def tokens(accumulated_input: Any, accumulated_output: Any, last_input: Any, last_output: Any) -> agents.Usage | None:
    """A session's tokens: those accumulated over its responses, else (older sessions) the
    counts Goose kept of its last response."""
    if accumulated_input is not None or accumulated_output is not None:
        return agents.usage(input=accumulated_input, output=accumulated_output)
    return agents.usage(input=last_input, output=last_output)


def _messages(record: Record, model: str | None, counts: _Counts) -> list[agents.Message]:
    """A message, followed by a tool message for each tool result it holds."""
    timestamp = agents.iso_utc(record.created)
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[agents.ToolCall] = []
    attachments: list[agents.Attachment] = []
    results: list[agents.Message] = []
    for part in record.content:
        kind = part.get("type") if isinstance(part, dict) else None
        if not isinstance(part, dict):
            counts.add(counts.parts, "not an object")
        elif kind == "text":
            text = part.get("text")
            if isinstance(text, str) and _for_user(part) and text.strip():
                texts.append(text.strip())
        elif kind == "image":
            image = agents.attachment(agents.text_or_none(part.get("mimeType")) or "image", data=part.get("data"))
            attachments.append(image)
            texts.append(image.placeholder())
        elif kind in CALLS:
            call = _call(part.get("toolCall"))
            if call is not None:
                calls.append(call)
        elif kind == "toolResponse":
            output, shown = _output(part.get("toolResult"))
            if output or shown:
                results.append(agents.Message("tool", "", timestamp, tool_output=output, attachments=shown))
        elif kind == "thinking":
            text = part.get("thinking")
            if isinstance(text, str) and text.strip():
                thinking.append(text.strip())
        elif kind == "redactedThinking":
            thinking.append(REDACTED)
        elif not (isinstance(kind, str) and kind in LEFT_OUT):  # (a list or an object is no type)
            counts.add(counts.parts, "of no known type")
    made: list[agents.Message] = []
    if texts or calls or thinking:
        made.append(
            agents.Message(
                record.role,
                "\n\n".join(texts),
                timestamp,
                model if record.role == "assistant" else None,
                calls,
                thinking="\n\n".join(thinking),
                attachments=attachments,
            )
        )
    return made + results


def _for_user(part: dict[str, Any]) -> bool:
    """Whether a text part is the user's to see: no ``annotations.audience``, or one naming the user."""
    annotations = part.get("annotations")
    audience = annotations.get("audience") if isinstance(annotations, dict) else None
    return not isinstance(audience, list) or "user" in audience


def _for_model(item: dict[str, Any]) -> bool:
    """Whether a tool result's item was given to the model: no ``annotations.audience``, or one naming it."""
    annotations = item.get("annotations")
    audience = annotations.get("audience") if isinstance(annotations, dict) else None
    return not isinstance(audience, list) or "assistant" in audience


def _call(value: Any) -> agents.ToolCall | None:
    """A tool call as ``toolCall`` gives it (None: one Goose could not parse)."""
    call = value.get("value") if isinstance(value, dict) and value.get("status") == "success" else None
    if not isinstance(call, dict):
        return None
    name = agents.text_or_none(call.get("name")) or "tool"
    given = call.get("arguments")
    arguments: dict[str, Any] = given if isinstance(given, dict) else {}
    base = name.rsplit("__", 1)[-1].lower()
    command = arguments.get("command") if base in SHELL_TOOLS or base.endswith("shell") else None
    found = agents.ToolCall(
        name=name,
        files=agents.named_files(arguments, FILE_ARGUMENTS),
        commands=[command.strip()] if isinstance(command, str) and command.strip() else [],
    )
    return with_input(found, given)


def _output(result: Any) -> tuple[str, list[agents.Attachment]]:
    """A tool result's output text and the images it holds."""
    if not isinstance(result, dict):
        return "", []
    if result.get("status") == "error":
        return (result["error"].strip() if isinstance(result.get("error"), str) else ""), []
    value = result.get("value")
    items = value.get("content") if isinstance(value, dict) else value
    texts: list[str] = []
    shown: list[agents.Attachment] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not _for_model(item):
            continue
        if item.get("type") == "text" and isinstance(item.get("text"), str):
            texts.append(item["text"].strip())
        elif item.get("type") == "image":
            found = agents.attachment(agents.text_or_none(item.get("mimeType")) or "image", data=item.get("data"))
            shown.append(found)
            texts.append(found.placeholder())
        elif item.get("type") == "resource" and isinstance(item.get("resource"), dict):
            texts.append(_resource(item["resource"], shown))
    return "\n".join(text for text in texts if text), shown


def _resource(resource: dict[str, Any], shown: list[agents.Attachment]) -> str:
    """An embedded resource's text, or (a blob) its placeholder."""
    if isinstance(resource.get("text"), str):
        return str(resource["text"]).strip()
    uri = agents.text_or_none(resource.get("uri"))
    found = agents.attachment(
        agents.text_or_none(resource.get("mimeType")) or "file",
        uri.rsplit("/", 1)[-1] if uri else None,
        data=resource.get("blob"),
    )
    shown.append(found)
    return found.placeholder()


# --- the older session files ----------------------------------------------------------------------


def looks_like_session(file: Path) -> bool:
    """Whether a file starts as an older session file does (its metadata, or a message)."""
    try:
        with file.open("rb") as handle:
            first = next(agents.head_lines(handle), b"")
        value = agents.json_value(first.decode("utf-8", "replace").lstrip("\ufeff"))
    except (OSError, agents.NotJSON):
        return False
    return isinstance(value, dict) and ("message_count" in value or ("role" in value and "content" in value))


def from_file(file: Path, root: agents.Root) -> agents.Session | None:
    """A session file: its first line's metadata, then its messages; None (told as Unread) where its
    reading stops."""
    records: list[Record | str] = []
    metadata: dict[str, Any] = {}
    replaced = 0
    try:
        with file.open("rb") as handle:
            for number, (raw, _) in enumerate(lines(handle)):
                if raw is None:
                    records.append(LONG_LINE)
                    continue
                text, bad = _decode(raw)
                if not text.strip():
                    continue
                try:
                    value = agents.json_value(text.lstrip("\ufeff"))
                except agents.NotJSON as error:
                    records.append(str(error))
                    continue
                replaced += bad
                if number == 0 and isinstance(value, dict) and "role" not in value and "content" not in value:
                    metadata = value
                elif isinstance(value, dict):
                    records.append(
                        Record(value.get("role"), value.get("created"), value.get("content"), value.get("metadata"))
                    )
                else:
                    records.append("not a JSON object")
    except OSError as error:  # a session read in part never replaces the one the archive holds
        root.problems.append(agents.Unread(f"{file.name}: reading stopped ({error.strerror or error})"))
        return None
    info = Info(
        key=file.stem,
        title=agents.text_or_none(metadata.get("description")),
        project=agents.text_or_none(metadata.get("working_dir")),
        tokens=tokens(
            metadata.get("accumulated_input_tokens"),
            metadata.get("accumulated_output_tokens"),
            metadata.get("input_tokens"),
            metadata.get("output_tokens"),
        ),
    )
    found = session(info, records, [file], root.problems)
    if found is not None:
        found.problems.extend(agents.replaced_problems(replaced))
    return found


def _decode(data: bytes) -> tuple[str, int]:
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace"), 1
