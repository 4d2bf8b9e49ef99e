"""The spans of Visual Studio Copilot's trace files, each made a small record, and one
conversation's records made a session.

A trace line is an OpenTelemetry export: ``resourceSpans[].scopeSpans[].spans[]``, each span with
its ``name``, ``traceId``, ``spanId``, start and end (``startTimeUnixNano``, ``endTimeUnixNano``)
and ``attributes`` (``[{"key": …, "value": {"stringValue": …}}]``; a count may be an ``intValue``).
Three kinds of span carry a conversation (``gen_ai.conversation.id``):

- ``chat <model>`` (``gen_ai.operation.name`` ``chat``): one model call. Its
  ``gen_ai.input.messages`` (JSON text: the whole prompt, of which only its last user message is
  read: the person's turn) and ``gen_ai.output.messages`` (the answer's ``text`` and ``tool_call``
  parts), ``gen_ai.request.model`` / ``gen_ai.response.model``, ``gen_ai.usage.input_tokens`` and
  ``gen_ai.usage.output_tokens``. Several model calls of one turn repeat its user message, and
  ``copilot_chat.root_request_id`` names the turn: the user's message is read once per turn.
- ``execute_tool <tool>``: one tool run, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
  ``gen_ai.tool.call.arguments`` (JSON text) and ``gen_ai.tool.call.result``.
- ``invoke_agent GitHub Copilot``: the turn around them, with its mode and model: no message.

A span can be written to more than one trace file as it grows: one chat span (by trace and span
id) and one tool run (by call id) is read once, from its fullest copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import Message, ToolCall, tool_edits
from archivist.agents.apply_patch import find_patch

CONVERSATION = "gen_ai.conversation.id"
_FILE_KEYS = (*tool_edits.FILE_KEYS, "filename", "filePaths", "paths")
_COMMAND_KEYS = ("command", "cmd")
_NANOS = 10**9


@dataclass
class Span:
    """What one span says of its conversation, kept small: the prompt's last user message, never the
    whole prompt."""

    conversation: str
    order: int  # the span's place in the reading, for spans of the same time
    start: str | None
    end: str | None
    chat: str = ""  # the chat span's identity (trace and span id), "" for others
    turn: str = ""  # the turn it belongs to (copilot_chat.root_request_id)
    prompt: str = ""  # the last user message of a chat span's input
    said: str = ""  # a chat span's answer text
    calls: list[tuple[str, str, Any]] = field(default_factory=list)  # a chat span's proposed calls: id, name, args
    model: str | None = None
    usage: agents.Usage | None = None
    tool: str = ""  # an execute_tool span's tool name
    call_id: str = ""
    arguments: Any = None
    result: str | None = None


def attributes(span: dict[str, Any]) -> dict[str, str]:
    """A span's attributes as text by key: a string's, else a number's or a truth's digits."""
    found: dict[str, str] = {}
    listed = span.get("attributes")
    for item in listed if isinstance(listed, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            continue
        value = item.get("value")
        if not isinstance(value, dict):
            continue
        for name in ("stringValue", "intValue", "doubleValue", "boolValue"):
            given = value.get(name)
            if isinstance(given, str | int | float) and not isinstance(given, bool):
                found[item["key"]] = str(given)
                break
    return found


def spans_of(line: Any) -> list[dict[str, Any]] | None:
    """The spans of one trace line (an OpenTelemetry export), or None where it is of no such shape."""
    if not isinstance(line, dict) or not isinstance(line.get("resourceSpans"), list):
        return None
    found: list[dict[str, Any]] = []
    for resource in line["resourceSpans"]:
        scopes = resource.get("scopeSpans") if isinstance(resource, dict) else None
        for scope in scopes if isinstance(scopes, list) else []:
            spans = scope.get("spans") if isinstance(scope, dict) else None
            found.extend(span for span in (spans if isinstance(spans, list) else []) if isinstance(span, dict))
    return found


def record(span: dict[str, Any], order: int) -> Span | None:
    """One span as a record of its conversation; None where it names no conversation."""
    given = attributes(span)
    conversation = agents.text_or_none(given.get(CONVERSATION))
    if conversation is None:
        return None
    found = Span(conversation.lower() if _is_uuid(conversation) else conversation, order, _time(span, "start"), None)
    found.end = _time(span, "end") or found.start
    found.start = found.start or found.end
    given_name = span.get("name")
    name = given_name if isinstance(given_name, str) else ""
    operation = given.get("gen_ai.operation.name", "")
    found.model = agents.text_or_none(given.get("gen_ai.response.model")) or agents.text_or_none(
        given.get("gen_ai.request.model")
    )
    if operation == "chat" or name.startswith("chat "):
        _chat(found, span, given)
    elif given.get("gen_ai.tool.name"):
        found.tool = given["gen_ai.tool.name"].strip()
        found.call_id = given.get("gen_ai.tool.call.id", "").strip()
        found.arguments = tool_edits.parsed_arguments(given.get("gen_ai.tool.call.arguments"))
        found.result = _result(given.get("gen_ai.tool.call.result"))
    return found


def _chat(found: Span, span: dict[str, Any], given: dict[str, str]) -> None:
    ids = (span.get("traceId"), span.get("spanId"))
    found.chat = ":".join(part for part in ids if isinstance(part, str)) or f"#{found.order}"
    found.turn = given.get("copilot_chat.root_request_id", "").strip()
    found.prompt = _last_user(tool_edits.parsed_arguments(given.get("gen_ai.input.messages")))
    found.said, found.calls = _answer(tool_edits.parsed_arguments(given.get("gen_ai.output.messages")))
    found.usage = agents.usage(
        input=_count(given.get("gen_ai.usage.input_tokens")), output=_count(given.get("gen_ai.usage.output_tokens"))
    )


def _last_user(messages: Any) -> str:
    """The text of the last user message of a prompt (``[{"role", "parts": [{"type", "content"}]}]``)."""
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "user":
            text = _parts_text(message.get("parts"))
            if text:
                return text
    return ""


def _answer(messages: Any) -> tuple[str, list[tuple[str, str, Any]]]:
    """An answer's text and the tool calls it proposed."""
    texts: list[str] = []
    calls: list[tuple[str, str, Any]] = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        parts = message.get("parts")
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("content"), str) and part["content"].strip():
                texts.append(part["content"].strip())
            elif part.get("type") == "tool_call" and (name := agents.text_or_none(part.get("name"))):
                given_id = part.get("id")
                ident = given_id if isinstance(given_id, str) else ""
                calls.append((ident, name, tool_edits.parsed_arguments(part.get("arguments"))))
    return "\n\n".join(texts), calls


def _parts_text(parts: Any) -> str:
    texts = [
        part["content"].strip()
        for part in (parts if isinstance(parts, list) else [])
        if isinstance(part, dict) and isinstance(part.get("content"), str) and part["content"].strip()
    ]
    return "\n".join(texts)


def _result(raw: Any) -> str | None:
    """A tool's result: its text, or the text a JSON result holds (``{"Value": …}``), else the JSON as it is."""
    if not isinstance(raw, str) or not raw.strip():
        return None
    value = tool_edits.parsed_arguments(raw)
    for _ in range(8):
        if not isinstance(value, dict):
            break
        inner = next(
            (value[key] for key in ("Content", "content", "Text", "text", "Value", "value") if key in value), None
        )
        if inner is None:
            break
        value = inner
    return value.strip() if isinstance(value, str) and value.strip() else raw.strip()


def _time(span: dict[str, Any], which: str) -> str | None:
    given = span.get(f"{which}TimeUnixNano")
    if isinstance(given, str) and given.isdigit() and len(given) <= 20:
        given = int(given)
    if not isinstance(given, int) or isinstance(given, bool) or given <= 0:
        return None
    return agents.iso_utc(given // _NANOS)


def _count(text: str | None) -> int | None:
    return int(text) if text is not None and text.strip().isdigit() and len(text.strip()) <= 13 else None


def _is_uuid(text: str) -> bool:
    parts = text.split("-")
    return [len(part) for part in parts] == [8, 4, 4, 4, 12] and all(
        c in "0123456789abcdefABCDEF" for part in parts for c in part
    )


# -- a conversation's records made a session --------------------------------------------------


def session(key: str, records: list[Span], files: list[Path], problems: list[str]) -> agents.Session | None:
    """The session of one conversation's records (from every trace file), or None where they hold
    no message."""
    records = sorted(records, key=lambda span: (span.start or "", span.order))
    chats = _fullest_chats(records)
    runs = _fullest_runs(records)
    proposed = {ident for chat in chats.values() for ident, _, _ in chat.calls if ident}
    messages: list[Message] = []
    turns: set[str] = set()
    seen: set[str] = set()
    models: list[str] = []
    for span in records:
        if span.chat:
            if span.prompt and (turn := span.turn or span.prompt) not in turns:
                turns.add(turn)
                messages.append(Message(role="user", text=span.prompt, timestamp=span.start))
            if span.chat in seen:
                continue
            seen.add(span.chat)
            best = chats[span.chat]
            if best.model and best.model not in models:
                models.append(best.model)
            calls = [_call(name, args) for _, name, args in best.calls]
            if best.said or calls or best.usage:
                messages.append(
                    Message(
                        role="assistant",
                        text=best.said,
                        timestamp=span.end,
                        model=best.model,
                        tool_calls=calls,
                        usage=best.usage,
                    )
                )
        elif span.tool:
            ident = span.call_id or f"#{span.order}"
            if ident in seen:
                continue
            seen.add(ident)
            run = runs.get(ident, span)
            if ident not in proposed:
                messages.append(
                    Message(
                        role="assistant", text="", timestamp=span.start, tool_calls=[_call(run.tool, run.arguments)]
                    )
                )
            if run.result is not None:
                messages.append(Message(role="tool", text="", timestamp=run.end, tool_output=run.result))
    if not messages:
        return None
    said = next((m.text for m in messages if m.role == "user" and m.text), "")
    times = [m.timestamp for m in messages if m.timestamp]
    return agents.Session(
        key=key,
        agent="copilot-vs",
        title=agents.short_title(said) if said else "Visual Studio Copilot conversation",
        messages=messages,
        models=models,
        started=min(times) if times else None,
        last=max(times) if times else None,
        files=files,
        problems=problems,
    )


def _fullest_chats(records: list[Span]) -> dict[str, Span]:
    """Each chat span's fullest copy: the most calls, then the longest text, then the most tokens, then the last."""
    best: dict[str, Span] = {}
    for span in records:
        if not span.chat:
            continue
        current = best.get(span.chat)
        if current is None or _fullness(span) >= _fullness(current):
            best[span.chat] = span
    return best


def _fullness(span: Span) -> tuple[int, int, int, int]:
    spent = span.usage or agents.Usage()
    return (len(span.calls), len(span.said), spent.output, spent.input)


def _fullest_runs(records: list[Span]) -> dict[str, Span]:
    """Each tool run's fullest copy, by call id: one with a result, else the last."""
    best: dict[str, Span] = {}
    for span in records:
        if span.tool and span.call_id:
            current = best.get(span.call_id)
            if current is None or span.result is not None or current.result is None:
                best[span.call_id] = span
    return best


def _call(name: str, given: Any) -> ToolCall:
    """A tool call with the files and commands its arguments name, and its edits (an ``apply_patch``'s
    ``patch``, an edit tool's old and new texts, a created file's content)."""
    if not isinstance(given, dict):
        return ToolCall(name=name, input=agents.call_input(given))
    command = next((text for key in _COMMAND_KEYS if (text := agents.text_or_none(given.get(key)))), None)
    files = agents.named_files(given, _FILE_KEYS)
    patch = find_patch(given["patch"]) if isinstance(given.get("patch"), str) else None
    if patch is not None and patch.edits:
        edits, held = patch.edits, {"patch"}
    else:
        edits, held = tool_edits.edits_of(name, given)
    if command:
        held = held | {
            key for key in _COMMAND_KEYS if given.get(key) == command or agents.text_or_none(given.get(key)) == command
        }
    return ToolCall(
        name=name,
        files=list(dict.fromkeys([*files, *(edit.file for edit in edits)])),
        commands=[command] if command else [],
        input=agents.call_input(given, without=held),
        edits=edits,
    )
