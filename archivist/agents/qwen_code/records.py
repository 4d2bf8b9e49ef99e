"""One Qwen Code chat file (``chats/<session id>.jsonl``) read into a session (``qwen_code``).

Each line is one record of Qwen Code's ``ChatRecordingService`` (QwenLM/qwen-code
``packages/core/src/services/chatRecordingService.ts``, the ``ChatRecord`` interface): a
``uuid``, its ``parentUuid`` (null for the first), ``sessionId``, ``timestamp`` (ISO),
``type`` (``user``, ``assistant``, ``tool_result`` or ``system``) and ``subtype``, ``cwd``,
``gitBranch``, and ``message``: the Gemini API ``Content`` sent or received (``role`` and
``parts``: ``text``, ``thought`` text, ``functionCall``, ``functionResponse``,
``inlineData``). An assistant record is one model response, with its ``model`` and
``usageMetadata``; a tool result's ``toolCallResult`` keeps what the terminal displayed.

The records are read in the order they were written. Several records of one ``uuid`` are
one message (their parts in order, at the place of the first); a record written again as it
was is read once. A rewind (a ``system`` record of subtype ``rewind``) is written with the
record it goes back to as its ``parentUuid`` (``rewindRecording``): the records after that
one are dropped, as Qwen Code drops them when it rebuilds the conversation from the
``parentUuid`` chain (``sessionService.ts``, ``reconstructHistory``), and a rewind to
before the first turn (a null parent) drops them all. The order of the lines is followed rather than the chain
itself so that a damaged line, or a record whose parent no line holds, loses nothing
written before it.

- ``user``: the person's request (the ``displayText`` the terminal showed, where newer
  versions record one, else the text parts); an image or file part is an attachment.
  A ``notification`` or ``cron`` record (text the CLI injects for a finished background
  task or a scheduled prompt) is a system message.
- ``assistant``: its text, its thought parts as thinking, each ``functionCall`` a tool call
  with the files (``file_path``, ``absolute_path``, ``path``, ``paths``) and shell commands
  (``command``) of its arguments, the model, and its token usage:
  ``promptTokenCount`` less ``cachedContentTokenCount`` is the input, the cached count is
  read from the cache, ``candidatesTokenCount`` is the output (it holds the reasoning tokens
  already for the OpenAI-compatible providers, so ``thoughtsTokenCount`` is not added).
- ``tool_result``: a tool message whose output is the function responses, else the display
  (an image a response inlines is an attachment, named by its placeholder).
- ``system``: ``custom_title`` names the session (the last one wins); the others (slash
  commands, compression checkpoints, telemetry, @-command replays, rewinds) are bookkeeping.

Lines that are not JSON, records without a ``uuid`` or of another ``type``, records of no
known shape and a line over 64 MB are skipped and counted in the session's problems; bytes
that are not UTF-8 are replaced (and counted); a last line without its newline, still being
written, is left for the next reading.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import LONG_LINE
from archivist.agents.gemini_cli import tool_call

RECORD_TYPES = ("user", "assistant", "tool_result", "system")
SYSTEM_PROMPTS = ("notification", "cron")  # user records the CLI writes, not the person
MAX_OUTPUT_CHARS = 1_000_000  # a function response that is no text is kept as JSON up to this


@dataclass
class Parts:
    """What a ``Content``'s parts hold, sorted: text, thinking, tool calls, outputs, attachments."""

    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    calls: list[agents.ToolCall] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    attachments: list[agents.Attachment] = field(default_factory=list)


def read_parts(content: Any) -> Parts:
    """The parts of a message's content (a string, one part, or a list of parts and strings)."""
    found = Parts()
    for part in content if isinstance(content, list) else [content]:
        if isinstance(part, str):
            found.text.append(part)
        elif isinstance(part, dict):
            _part(part, found)
    return found


def _part(part: dict[str, Any], found: Parts) -> None:
    if isinstance(part.get("text"), str):
        (found.thinking if part.get("thought") else found.text).append(part["text"])
    elif isinstance(part.get("functionCall"), dict):
        found.calls.append(tool_call(part["functionCall"]))
    elif isinstance(part.get("functionResponse"), dict):
        found.outputs.append(_response(part["functionResponse"], found))
    elif isinstance(part.get("inlineData"), dict):
        data = part["inlineData"]
        found.attachments.append(
            agents.attachment(data.get("mimeType"), data.get("displayName"), data=data.get("data"))
        )
        found.text.append(found.attachments[-1].placeholder())
    elif isinstance(part.get("fileData"), dict):
        data = part["fileData"]
        name = agents.text_or_none(data.get("displayName")) or agents.text_or_none(data.get("fileUri"))
        found.attachments.append(agents.attachment(data.get("mimeType"), name))
        found.text.append(found.attachments[-1].placeholder())


def _response(response: dict[str, Any], found: Parts) -> str:
    """A function response's text: its ``output`` (else ``error``), else the response as JSON;
    the images it carries are attachments, named in the output where they were."""
    body = response.get("response")
    if isinstance(body, dict):
        value = body.get("output", body.get("error"))
        text = value if isinstance(value, str) else _dumped(body, found.attachments)
    else:
        text = body if isinstance(body, str) else ""
    inner = read_parts(response.get("parts")) if isinstance(response.get("parts"), list) else Parts()
    found.attachments.extend(inner.attachments)
    return "\n".join(piece for piece in [text, *inner.text] if piece)


def _dumped(value: Any, attachments: list[agents.Attachment]) -> str:
    """A response that is no text as JSON, each image or file it inlines (a Gemini ``inlineData``
    part) an attachment, named by its placeholder where it was: its data is never kept."""
    return json.dumps(_without_data(value, attachments), ensure_ascii=False)[:MAX_OUTPUT_CHARS]


def _without_data(value: Any, attachments: list[agents.Attachment]) -> Any:
    """``value`` with the images and files it inlines replaced by their placeholders (added to
    ``attachments``). (A value read is never nested too deep to walk.)"""
    if isinstance(value, list):
        return [_without_data(item, attachments) for item in value]
    if not isinstance(value, dict):
        return value
    inlined = agents.attachments_of(value)
    if inlined:
        attachments.extend(inlined)
        return " ".join(item.placeholder() for item in inlined)
    return {key: _without_data(item, attachments) for key, item in value.items()}


def usage_of(metadata: Any) -> Any:
    """A Gemini ``usageMetadata`` as a ``Usage``: the prompt less its cached part, the output."""
    if not isinstance(metadata, dict):
        return None
    prompt, cached = metadata.get("promptTokenCount"), metadata.get("cachedContentTokenCount")
    whole = prompt if isinstance(prompt, int) and not isinstance(prompt, bool) else None
    part = cached if isinstance(cached, int) and not isinstance(cached, bool) and cached > 0 else 0
    fresh = max(whole - part, 0) if whole is not None else None
    return agents.usage(input=fresh, output=metadata.get("candidatesTokenCount"), cache_read=part)


# -- the file's records ----------------------------------------------------------------------


class Records(agents.Skipping):
    """The records of one chat file by ``uuid``, in the order each uuid first appeared."""

    def __init__(self, file: Path) -> None:
        super().__init__()
        self.file = file
        self.by_uuid: dict[str, dict[str, Any]] = {}
        self.last: dict[str, dict[str, Any]] = {}  # the record of each uuid written last, as written
        self.parts: dict[str, list[Any]] = {}  # the parts of a uuid written in several records, merged
        self.notes: list[str] = []

    def read(self) -> None:
        try:
            with self.file.open("rb") as handle:
                for raw, _ in agents.lines(handle):
                    if raw is None:
                        self.skip(LONG_LINE)
                        continue
                    self._line(raw)
        except OSError as error:
            self.notes.append(f"reading stopped: {error.strerror or error}")

    def _line(self, raw: bytes) -> None:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", "replace")
            self.replaced += 1
        text = text.lstrip("\ufeff").strip()
        if not text:
            return
        try:
            value = agents.json_value(text)
        except agents.NotJSON as error:
            if raw.endswith(b"\n"):  # a last line without its newline is still being written
                self.skip(str(error))
            return
        if not isinstance(value, dict) or not isinstance(value.get("uuid"), str):
            self.skip("a record without a uuid")
        elif value.get("type") not in RECORD_TYPES:
            self.skip("a record of unknown type")
        else:
            self._add(value)

    def _add(self, record: dict[str, Any]) -> None:
        if record["type"] == "system" and record.get("subtype") == "rewind":
            self._rewind(record.get("parentUuid"))
        uuid = record["uuid"]
        known = self.by_uuid.get(uuid)
        if known is None:
            self.by_uuid[uuid] = self.last[uuid] = record
            self.parts.pop(uuid, None)
            return
        if record == self.last[uuid]:
            return  # the same record written again
        self.last[uuid] = record
        if uuid not in self.parts:  # the first record stays as written, to be told from a copy of it
            self.parts[uuid] = list(_parts_of(known))
            known = self.by_uuid[uuid] = {**known}
            if self.parts[uuid]:  # (its message is an object: it has parts)
                known["message"] = {**known["message"], "parts": self.parts[uuid]}
        added = _parts_of(record)  # one message written in several records: its parts in order
        if added:
            if not self.parts[uuid]:
                message = known.get("message")
                known["message"] = {**(message if isinstance(message, dict) else {}), "parts": self.parts[uuid]}
            self.parts[uuid].extend(added)
        for key in ("usageMetadata", "systemPayload"):
            if record.get(key) is not None:
                known[key] = record[key]
        for key in ("model", "toolCallResult"):
            known.setdefault(key, record.get(key))

    def _rewind(self, target: Any) -> None:
        """Drop the records after ``target`` (all of them for None; none for a target not read)."""
        if target is not None and (not isinstance(target, str) or target not in self.by_uuid):
            return
        while self.by_uuid and next(reversed(self.by_uuid)) != target:
            self.by_uuid.popitem()

    def conversation(self) -> list[dict[str, Any]]:
        """The records of the conversation, first to last."""
        return list(self.by_uuid.values())


def _parts_of(record: dict[str, Any]) -> list[Any]:
    message = record.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    return parts if isinstance(parts, list) else []


# -- the session -----------------------------------------------------------------------------


def session(file: Path, key: str, kind: str, parent: str | None = None) -> tuple[agents.Session | None, list[str]]:
    """The session of one chat file, or None and why (its problems) when it holds no message."""
    records = Records(file)
    records.read()
    chain = records.conversation()
    messages: list[agents.Message] = []
    models: list[str] = []
    title: str | None = None
    for record in chain:
        if record["type"] == "system":
            title = _title(record) or title
            continue
        found = _messages(record, models)
        if found is None:
            records.skip("a record of no known shape")
        else:
            messages.extend(found)
    problems = [
        *agents.skipped_problems(records.skipped),
        *agents.replaced_problems(records.replaced),
        *records.notes,
    ]
    if not messages:
        return None, problems or ["no message to read"]
    first = next((m.text for m in messages if m.role == "user" and m.text), "")
    times = [m.timestamp for m in messages if m.timestamp]
    head = chain[0]
    return (
        agents.Session(
            key=key,
            agent=kind,
            title=title or (agents.short_title(first) if first else "Untitled session"),
            messages=messages,
            project=_first_text(chain, "cwd"),
            models=models,
            branch=_first_text(chain, "gitBranch"),
            started=min(times) if times else agents.iso_utc(head.get("timestamp")),
            last=max(times) if times else agents.iso_utc(head.get("timestamp")),
            files=[file],
            problems=problems,
            parent=parent,
        ),
        problems,
    )


def session_id(file: Path) -> str | None:
    """The ``sessionId`` of a chat file's first record that has one (for its key)."""
    try:
        with file.open("rb") as handle:
            for raw, _ in agents.lines(handle):
                if raw is None or not raw.strip():
                    continue
                try:
                    value = agents.json_value(raw.decode("utf-8", "replace").lstrip("\ufeff"))
                except agents.NotJSON:
                    continue
                return agents.text_or_none(value.get("sessionId")) if isinstance(value, dict) else None
    except OSError:
        return None
    return None


def _first_text(records: Iterable[dict[str, Any]], key: str) -> str | None:
    return next((text for text in (agents.text_or_none(record.get(key)) for record in records) if text), None)


def _title(record: dict[str, Any]) -> str | None:
    payload = record.get("systemPayload")
    if record.get("subtype") != "custom_title" or not isinstance(payload, dict):
        return None
    title = agents.text_or_none(payload.get("customTitle"))
    return agents.short_title(title, 300) if title else None


def _messages(record: dict[str, Any], models: list[str]) -> list[agents.Message] | None:
    """A record's messages ([] when it holds nothing to show); None for one of no known shape."""
    message = record.get("message")
    given = message.get("parts") if isinstance(message, dict) else None
    if (message is not None and not isinstance(message, dict)) or (given is not None and not isinstance(given, list)):
        return None
    parts = read_parts(given)
    timestamp = agents.iso_utc(record.get("timestamp"))
    kind = record["type"]
    if kind == "user":
        payload = record.get("systemPayload")
        shown = agents.text_or_none(payload.get("displayText")) if isinstance(payload, dict) else None
        text = shown or "\n".join(piece for piece in parts.text if piece).strip()
        role = "system" if record.get("subtype") in SYSTEM_PROMPTS else "user"
        return (
            [agents.Message(role, text, timestamp, attachments=parts.attachments)] if text or parts.attachments else []
        )
    if kind == "tool_result":
        output = "\n".join(piece for piece in parts.outputs if piece) or _display(record.get("toolCallResult"))
        return [agents.Message("tool", "", timestamp, tool_output=output, attachments=parts.attachments)]
    model = agents.text_or_none(record.get("model"))
    if model and model not in models:
        models.append(model)
    text = "".join(parts.text).strip()
    thinking = "\n\n".join(piece.strip() for piece in parts.thinking if piece.strip())
    spent = usage_of(record.get("usageMetadata"))
    if not (text or thinking or parts.calls or spent):
        return []
    return [
        agents.Message(
            "assistant",
            text,
            timestamp,
            model=model,
            tool_calls=parts.calls,
            thinking=thinking,
            usage=spent,
            attachments=parts.attachments,
        )
    ]


def _display(result: Any) -> str:
    """What the terminal showed of a tool's result: its text, or a file's diff."""
    display = result.get("resultDisplay") if isinstance(result, dict) else None
    if isinstance(display, str):
        return display
    if isinstance(display, dict) and isinstance(display.get("fileDiff"), str):
        return display["fileDiff"]
    error = result.get("error") if isinstance(result, dict) else None
    return error if isinstance(error, str) else ""
