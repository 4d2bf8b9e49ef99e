"""Hermes' messages, in the OpenAI chat form its transcripts and its ``state.db`` share, read into the archive's messages.

A message is an object with a ``role``: ``session_meta`` (a transcript's first line: the model,
the platform), ``user``, ``assistant`` (its ``content``, its thinking as ``reasoning``,
``reasoning_content`` or ``reasoning_details``, its ``tool_calls``: each an ``id`` and a
``function`` of a ``name`` and its ``arguments`` as JSON text), ``tool`` (a call's output,
``tool_call_id`` naming the call) or ``system``. Its ``timestamp`` is ISO 8601 text in the
machine's local time without its zone (read as UTC), or Unix seconds in ``state.db``.
"""

from __future__ import annotations

from typing import Any

from archivist import agents
from archivist.agents import Message, ToolCall
from archivist.agents.tool_edits import FILE_KEYS, editor_call, parsed_arguments

_THINKING = ("reasoning", "reasoning_content", "reasoning_details")
_SKILL = '[SYSTEM: The user has invoked the "'
_SKILL_PROMPT = "The user has provided the following instruction alongside the skill invocation: "


class Conversation(agents.Skipping):
    """The messages of one Hermes session as they are read, and its models."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[Message] = []
        self.models: list[str] = []

    def problems(self) -> list[str]:
        return agents.skipped_problems(self.skipped, "message")

    def model(self, value: Any) -> str | None:
        """A model the session used, kept once in the order met."""
        name = agents.text_or_none(value)
        if name and name not in self.models:
            self.models.append(name)
        return name

    def add(self, row: Any) -> None:
        """One message object of a transcript or of ``state.db``; one of no known shape is counted as skipped."""
        if not isinstance(row, dict):
            self.skip("not a JSON object")
            return
        role = row.get("role")
        when = agents.iso_utc(row.get("timestamp"))
        if role == "session_meta":
            self.model(row.get("model"))
        elif role == "user":
            text = _prompt(row.get("content"))
            if text:
                self.messages.append(Message(role="user", text=text, timestamp=when))
        elif role == "assistant":
            self._assistant(row, when)
        elif role == "tool":
            output = _text(row.get("content"))
            self.messages.append(Message(role="tool", text="", timestamp=when, tool_output=output))
        elif role == "system":
            pass  # Hermes' system prompt, the same in every session
        else:
            self.skip("of no known role")

    def _assistant(self, row: dict[str, Any], when: str | None) -> None:
        calls: list[ToolCall] = []
        given = row.get("tool_calls")
        if isinstance(given, str):
            given = parsed_arguments(given)
        for item in given if isinstance(given, list) else []:
            call = _call(item)
            if call is None:
                self.skip("a tool call without a name")
            else:
                calls.append(call)
        text = _text(row.get("content")).strip()
        thinking = next((_text(row.get(key)).strip() for key in _THINKING if _text(row.get(key)).strip()), "")
        if text or calls or thinking:
            model = self.model(row.get("model")) or (self.models[-1] if self.models else None)
            self.messages.append(
                Message(role="assistant", text=text, timestamp=when, model=model, tool_calls=calls, thinking=thinking)
            )


def _call(given: Any) -> ToolCall | None:
    """A call of an assistant message: a ``function`` of a ``name`` and ``arguments``, or those keys themselves."""
    if not isinstance(given, dict):
        return None
    given_function = given.get("function")
    function: dict[str, Any] = given_function if isinstance(given_function, dict) else {}
    name = agents.text_or_none(function.get("name")) or agents.text_or_none(given.get("name"))
    if not name:
        return None
    raw = next((v for v in (function.get("arguments"), given.get("arguments"), given.get("input")) if v), None)
    args = parsed_arguments(raw)
    found = args if isinstance(args, dict) else {}
    command = agents.text_or_none(found.get("command"))
    return editor_call(name, args, agents.named_files(found, FILE_KEYS), [command] if command else [])


def _prompt(content: Any) -> str:
    """A user message's text: what the user typed beside a skill Hermes loaded in front of it."""
    text = _text(content).strip()
    if not text.startswith(_SKILL):
        return text
    _, found, typed = text.partition(_SKILL_PROMPT)
    typed = typed.split("\n\n[Runtime note:", 1)[0].strip()
    if found and typed:
        return typed
    name = text[len(_SKILL) :].split('"', 1)[0]
    return f"[Skill: {name}]" if name else text


def _text(value: Any) -> str:
    """A content's text: a string as it is, a list of parts joined, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return agents.parts_text(value)
    return "" if value is None else agents.json_text(value)
