"""One Forge conversation's ``context``: its messages, read into the archive's messages (see the package's docstring)."""

from __future__ import annotations

import re
from typing import Any

from archivist import agents
from archivist.agents import Message, ToolCall, Usage
from archivist.agents.tool_edits import FILE_KEYS, editor_call, parsed_arguments

_ROLES = {"system": "system", "user": "user", "assistant": "assistant"}
_FRACTION = re.compile(r"(\.\d{6})\d+")
_CWD = ("<current_working_directory>", "</current_working_directory>")


def when(value: Any) -> str | None:
    """A Forge time (RFC 3339 or SQLite's ``YYYY-MM-DD HH:MM:SS``, to the nanosecond) as ISO 8601 UTC."""
    if isinstance(value, str):
        value = _FRACTION.sub(r"\1", value.strip())
    return agents.iso_utc(value)


class Context(agents.Skipping):
    """The messages of one conversation as they are read, its models and its working directory."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[Message] = []
        self.models: list[str] = []
        self.cwd: str | None = None

    def problems(self) -> list[str]:
        return agents.skipped_problems(self.skipped, "message")

    def read(self, context: Any) -> bool:
        """Read a ``context`` document; False where it holds no list of messages."""
        entries = context.get("messages") if isinstance(context, dict) else None
        if not isinstance(entries, list):
            return False
        for entry in entries:
            self._entry(entry)
        return True

    def _entry(self, entry: Any) -> None:
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict):
            self.skip("not a message entry")
            return
        if isinstance(message.get("text"), dict):
            self._text(message["text"], entry.get("usage"))
        elif isinstance(message.get("tool"), dict):
            self._tool(message["tool"])
        elif "image" in message:
            self._image(message["image"])
        else:
            self.skip("of no known kind")

    def _text(self, text: dict[str, Any], used: Any) -> None:
        role = _ROLES.get(str(text.get("role")).lower())
        body = _body(text)
        model = agents.text_or_none(text.get("model"))
        if model and model not in self.models:
            self.models.append(model)
        stamp = when(text.get("timestamp"))
        if role == "system":
            if self.cwd is None:
                self.cwd = _cwd(body)
        elif role == "user":
            if body:
                self.messages.append(Message(role="user", text=body, timestamp=stamp))
        elif role == "assistant":
            calls = self._calls(text.get("tool_calls"))
            thinking = _thinking(text.get("reasoning_details"))
            if body or calls or thinking:
                self.messages.append(
                    Message(
                        role="assistant",
                        text=body,
                        timestamp=stamp,
                        model=model,
                        tool_calls=calls,
                        thinking=thinking,
                        usage=usage(used),
                    )
                )
        else:
            self.skip("of no known role")

    def _calls(self, given: Any) -> list[ToolCall]:
        calls: list[ToolCall] = []
        for item in given if isinstance(given, list) else []:
            name = agents.text_or_none(item.get("name")) if isinstance(item, dict) else None
            if not name or not isinstance(item, dict):
                self.skip("a tool call without a name")
                continue
            args = parsed_arguments(item.get("arguments"))
            found = args if isinstance(args, dict) else {}
            command = agents.text_or_none(found.get("command"))
            calls.append(editor_call(name, args, agents.named_files(found, FILE_KEYS), [command] if command else []))
        return calls

    def _tool(self, tool: dict[str, Any]) -> None:
        output = tool.get("output")
        values = output.get("values") if isinstance(output, dict) else None
        if isinstance(values, list):
            texts = [
                value["text"] for value in values if isinstance(value, dict) and isinstance(value.get("text"), str)
            ]
            shown = "".join(texts)
        elif output is None:
            shown = ""
        else:
            shown = output if isinstance(output, str) else agents.json_text(output)
        self.messages.append(Message(role="tool", text="", tool_output=shown))

    def _image(self, image: Any) -> None:
        given = image if isinstance(image, dict) else {}
        found = agents.attachment(given.get("mime_type") or "image", data=given.get("data"))
        self.messages.append(Message(role="user", text="", attachments=[found]))


def usage(used: Any) -> Usage | None:
    """A response's ``usage``: each count an ``{"actual": n}`` (an ``approx`` estimate is not a count);
    the prompt's tokens hold the cached ones, kept apart here as read from the cache."""
    if not isinstance(used, dict):
        return None
    prompt = _actual(used.get("prompt_tokens"))
    cached = _actual(used.get("cached_tokens"))
    return agents.usage(
        input=max(prompt - cached, 0),
        output=_actual(used.get("completion_tokens")),
        cache_read=cached,
        cost=used.get("cost"),
    )


def _actual(count: Any) -> int:
    return agents.whole_count(count.get("actual")) if isinstance(count, dict) else 0


def _body(text: dict[str, Any]) -> str:
    """A message's text: what the user typed (``raw_content``), else its ``content``."""
    raw = text.get("raw_content")
    typed = raw.get("Text") if isinstance(raw, dict) else None
    if isinstance(typed, str) and typed.strip():
        return typed.strip()
    content = text.get("content")
    return content.strip() if isinstance(content, str) else ""


def _thinking(details: Any) -> str:
    """The thinking of ``reasoning_details``: the text of each part."""
    if not isinstance(details, list):
        return ""
    parts = [item.get("text") for item in details if isinstance(item, dict)]
    return "\n\n".join(part.strip() for part in parts if isinstance(part, str) and part.strip())


def _cwd(text: str) -> str | None:
    found = agents.between(text, *_CWD)
    return text[found[0] : found[1]].strip() or None if found else None
