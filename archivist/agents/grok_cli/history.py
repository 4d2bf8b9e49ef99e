"""One Grok CLI ``chat_history.jsonl`` read into messages, in both of its formats (see the package's docstring)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import Message, ToolCall
from archivist.agents.tool_edits import FILE_KEYS, editor_call, parsed_arguments

_TYPES = {"system", "user", "reasoning", "backend_tool_call", "assistant", "tool_result"}
_ROLES = {"system": "system", "user": "user", "assistant": "assistant", "tool": "tool_result"}
_TYPED_CALLS = {
    "web_search_call": "web_search",
    "custom_tool_call": "x_search",
    "code_interpreter_call": "code_interpreter",
}


class History(agents.Skipping):
    """The messages of one chat history, with where each turn (a prompt the user typed) begins."""

    def __init__(self, file: Path) -> None:
        super().__init__()
        self.file = file
        self.messages: list[Message] = []
        self.turns: list[int] = []  # the index in ``messages`` of each turn's prompt
        self.calls: set[str] = set()  # the ids of the calls read (a server call is read once)
        self.call_ids: list[list[str]] = []  # of each message, the ids of its calls or of the call it answers
        self.thinking: list[str] = []
        self.notes: list[str] = []

    def problems(self) -> list[str]:
        return [*agents.skipped_problems(self.skipped), *self.notes]

    def read(self) -> None:
        try:
            with self.file.open("rb") as handle:
                for row in agents.json_lines(handle, self.skipped):
                    if isinstance(row, dict):
                        self._row(row)
                    else:
                        self.skip("not a JSON object")
        except OSError as error:
            self.notes.append(agents.Unread(f"reading stopped: {error.strerror or error}"))

    def _add(self, message: Message, ids: list[str]) -> None:
        self.messages.append(message)
        self.call_ids.append(ids)

    def _row(self, row: dict[str, Any]) -> None:
        kind = row.get("type") if row.get("type") in _TYPES else _ROLES.get(str(row.get("role")))
        if kind is None and row.get("type") in _TYPED_CALLS:
            kind = "backend_tool_call"
        if kind == "system":
            return  # Grok's system prompt, the same in every session
        if kind == "user":
            self._user(row)
        elif kind == "reasoning":
            text = _reasoning(row)
            if text:
                self.thinking.append(text)
        elif kind == "backend_tool_call":
            self._backend(row)
        elif kind == "assistant":
            self._assistant(row)
        elif kind == "tool_result":
            self._result(row)
        else:
            self.skip("unknown row")

    def _user(self, row: dict[str, Any]) -> None:
        self.thinking = []
        reason = row.get("synthetic_reason")
        if reason not in (None, "interjection"):
            return  # context Grok injected (instructions, reminders), not typed
        text = _user_text(row.get("content"))
        if not text:
            return
        if reason is None:
            self.turns.append(len(self.messages))
        self._add(Message(role="user", text=text), [])

    def _assistant(self, row: dict[str, Any]) -> None:
        for item in _list(row.get("raw_output")):
            if isinstance(item, dict) and item.get("type") in _TYPED_CALLS and item.get("id") not in self.calls:
                self._backend(item)
        calls: list[ToolCall] = []
        ids: list[str] = []
        for given in _list(row.get("tool_calls")):
            call, call_id = _call(given)
            if call is None:
                self.skip("a tool call without a name")
                continue
            calls.append(call)
            if call_id:
                ids.append(call_id)
        content = row.get("content")
        text = content.strip() if isinstance(content, str) else agents.parts_text(content).strip()
        thinking = _inline_reasoning(row) or "\n\n".join(self.thinking)
        self.thinking = []
        if not (text or calls or thinking):
            return
        model = agents.text_or_none(row.get("model_id"))
        self._add(Message(role="assistant", text=text, model=model, tool_calls=calls, thinking=thinking), ids)
        self.calls.update(ids)

    def _backend(self, row: dict[str, Any]) -> None:
        """A tool the server ran (a web or X search, code run there), as an assistant's call."""
        payload = _dict(row.get("kind")) or row
        name = agents.text_or_none(payload.get("tool_type")) or _TYPED_CALLS.get(str(row.get("type")))
        if not name:
            self.skip("a server tool call without a tool type")
            return
        given = next((payload[key] for key in ("action", "input", "code") if payload.get(key) is not None), None)
        call = ToolCall(name=name, input=agents.call_input(given))
        call_id = agents.text_or_none(payload.get("id"))
        if call_id:
            self.calls.add(call_id)
        self._add(Message(role="assistant", text="", tool_calls=[call]), [call_id] if call_id else [])

    def _result(self, row: dict[str, Any]) -> None:
        self.thinking = []
        content = row.get("content")
        if isinstance(content, str):
            output = content
        elif isinstance(content, list):
            output = agents.parts_text(content)
        else:
            output = "" if content is None else agents.json_text(content)
        call_id = agents.text_or_none(row.get("tool_call_id"))
        self._add(Message(role="tool", text="", tool_output=output), [call_id] if call_id else [])


def _call(given: Any) -> tuple[ToolCall | None, str | None]:
    """A call of an assistant row: ``name`` and ``arguments`` (format 1), or a ``function`` holding them (format 0)."""
    if not isinstance(given, dict):
        return None, None
    function = _dict(given.get("function"))
    name = agents.text_or_none(given.get("name")) or agents.text_or_none(function.get("name"))
    if not name:
        return None, None
    raw = next(
        (v for v in (given.get("arguments"), function.get("arguments"), given.get("input")) if v is not None), None
    )
    args = parsed_arguments(raw)
    found = args if isinstance(args, dict) else {}
    command = agents.text_or_none(found.get("command"))
    call = editor_call(name, args, agents.named_files(found, FILE_KEYS), [command] if command else [])
    return call, agents.text_or_none(given.get("id")) or agents.text_or_none(given.get("tool_call_id"))


def _user_text(content: Any) -> str:
    """A prompt's text: the ``<user_query>`` Grok wrapped it in, where it did, else the whole text."""
    if isinstance(content, list):
        content = [part for part in content if not isinstance(part, dict) or part.get("type") in (None, "text")]
    text = agents.parts_text(content).strip()
    inside = agents.between(text, "<user_query>", "</user_query>")
    return text[inside[0] : inside[1]].strip() if inside else text


def _reasoning(row: dict[str, Any]) -> str:
    """A ``reasoning`` row's text: its ``summary`` and ``content`` parts, or a ``content`` text."""
    parts = [
        part["text"].strip()
        for key in ("summary", "content")
        if isinstance(row.get(key), list)
        for part in row[key]
        if isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"].strip()
    ]
    if parts:
        return "\n\n".join(parts)
    return row["content"].strip() if isinstance(row.get("content"), str) else ""


def _inline_reasoning(row: dict[str, Any]) -> str:
    """The thinking an assistant row holds itself: ``reasoning.text``, ``reasoning`` items of its
    ``raw_output``, or format 0's ``reasoning_content``."""
    reasoning = row.get("reasoning")
    if isinstance(reasoning, dict) and isinstance(reasoning.get("text"), str) and reasoning["text"].strip():
        return reasoning["text"].strip()
    parts = [
        _reasoning(item)
        for item in _list(row.get("raw_output"))
        if isinstance(item, dict) and item.get("type") == "reasoning"
    ]
    if any(parts):
        return "\n\n".join(part for part in parts if part)
    content = row.get("reasoning_content")
    return content.strip() if isinstance(content, str) else ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
