"""A Copilot CLI session (``~/.copilot/session-state/<id>/events.jsonl``, as the CLI's SDK writes its
session events; vscode-copilot-chat ``src/extension/chatSessions/copilotcli`` reads them): ``session.start``
(the working directory, the model), ``user.message``, ``assistant.message`` (its ``toolRequests`` are
calls, its ``reasoningText`` thinking) and ``tool.execution_complete`` (a result: a tool message). The
CLI's ``assistant.usage`` events are ephemeral (never written to the file): no usage is read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from archivist.agents import (
    LONG_LINE,
    Message,
    NotJSON,
    Session,
    ToolCall,
    Unread,
    iso_utc,
    json_value,
    lines,
    named_files,
    short_title,
    text_or_none,
)

KIND = "copilot"


def cli_session(file: Path, unread: list[str]) -> Session | None:
    """The session of an ``events.jsonl``; None where it holds no message, or where its reading
    stopped (told in ``unread`` as Unread: a session read in part never replaces the one stored)."""
    problems: list[str] = []
    skipped: dict[str, int] = {}
    messages: list[Message] = []
    models: list[str] = []
    project = None
    times: list[str] = []
    try:
        with file.open("rb") as handle:
            for line, _size in lines(handle):
                if line is None:
                    skipped[LONG_LINE] = skipped.get(LONG_LINE, 0) + 1
                    continue
                if not line.strip():
                    continue
                try:
                    event = json_value(line.decode("utf-8", "replace"))
                except NotJSON as error:
                    skipped[str(error)] = skipped.get(str(error), 0) + 1
                    continue
                if not isinstance(event, dict) or not isinstance(event.get("data"), dict):
                    skipped["an event of no known shape"] = skipped.get("an event of no known shape", 0) + 1
                    continue
                kind, data, when = event.get("type"), event["data"], iso_utc(event.get("timestamp"))
                times += [when] if when else []
                if kind == "session.start":
                    context = _mapping(data.get("context"))
                    project = text_or_none(context.get("cwd")) or project
                    model = text_or_none(data.get("selectedModel"))
                    models += [model] if model and model not in models else []
                elif kind == "user.message" and text_or_none(data.get("content")):
                    messages.append(Message("user", str(data["content"]).strip(), when))
                elif kind == "assistant.message":
                    requests = data.get("toolRequests") if isinstance(data.get("toolRequests"), list) else []
                    calls = [_call(request) for request in requests if isinstance(request, dict)]
                    text = text_or_none(data.get("content")) or ""
                    thinking = text_or_none(data.get("reasoningText")) or ""
                    messages.append(Message("assistant", text, when, models[-1] if models else None, calls, thinking))
                elif kind == "tool.execution_complete":
                    content = _mapping(data.get("result")).get("content")
                    messages.append(
                        Message("tool", "", when, tool_output=content.strip() if isinstance(content, str) else "")
                    )
    except OSError as error:
        unread.append(Unread(f"{file.parent.name}/{file.name}: reading stopped ({error.strerror or error})"))
        return None
    problems += [f"{count} line(s) skipped: {reason}" for reason, count in skipped.items()]
    if not any(message.text for message in messages):
        return None
    first = next((message.text for message in messages if message.role == "user"), "")
    times.sort()
    return Session(
        key=f"cli/{file.parent.name}",
        agent=KIND,
        title=short_title(first),
        messages=messages,
        project=project,
        models=models,
        started=times[0] if times else None,
        last=times[-1] if times else None,
        files=[file],
        problems=problems,
    )


def _call(request: dict[str, Any]) -> ToolCall:
    arguments = request.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json_value(arguments)
        except NotJSON:
            arguments = {}
    arguments = arguments if isinstance(arguments, dict) else {}
    command = arguments.get("command")
    return ToolCall(
        text_or_none(request.get("name")) or "tool",
        files=named_files(arguments, ("path", "file_path", "filePath")),
        commands=[command.strip()] if isinstance(command, str) and command.strip() else [],
    )


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
