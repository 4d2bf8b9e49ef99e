"""A Copilot CLI session (``~/.copilot/session-state/<id>/events.jsonl``, as the CLI's SDK writes its
session events; vscode-copilot-chat ``src/extension/chatSessions/copilotcli`` reads them): ``session.start``
(the working directory, the model), ``user.message``, ``assistant.message`` (its ``toolRequests`` are
calls, its ``reasoningText`` thinking, its ``model`` the model that wrote it), ``tool.execution_complete`` (a
result: a tool message), ``session.model_change`` (``newModel``: the model from then on) and
``session.shutdown``.

Usage: the CLI's ``assistant.usage`` events, one per model call, are ephemeral (never written to the file).
What the file keeps is an ``assistant.message``'s ``outputTokens`` (kept as that message's output) and, at
each ``session.shutdown`` (one per run of the CLI: a resumed session has one for each), ``modelMetrics``:
per model, the run's ``usage`` totals (``inputTokens`` counts every prompt token, the cache's too,
``cacheReadTokens`` and ``cacheWriteTokens`` apart; ``outputTokens`` counts reasoning) and ``requests``
(``cost`` is a premium-request multiplier, not dollars: never read as a cost). A run's totals of a model,
less the output its messages already hold, are put on the run's last assistant message of that model, or,
where the run has none (a model only a sub-agent called), on an assistant message with no text standing
for that model's calls at the shutdown's time: the totals by day and by model are the log's, the
split among the run's hours is not known. A session still running (no shutdown yet) has only its
messages' output.

The title is the first request: a slash command (``/clear``, ``/init``, ``/model gpt-5``) is no request,
and titles a session only where no request follows it (``/init`` with what it does)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from archivist.agents import (
    Message,
    NotJSON,
    Session,
    ToolCall,
    Unread,
    Usage,
    iso_utc,
    json_lines,
    json_value,
    named_files,
    short_title,
    text_or_none,
    usage,
    whole_count,
)
from archivist.agents.claude_code.titles import COMMANDS, command_title, is_slash_command
from archivist.agents.tool_edits import editor_call

KIND = "copilot"


def cli_session(file: Path, unread: list[str]) -> Session | None:
    """The session of an ``events.jsonl``; None where it holds no message, or where its reading
    stopped (told in ``unread`` as Unread: a session read in part never replaces the one stored)."""
    problems: list[str] = []
    skipped: dict[str, int] = {}
    messages: list[Message] = []
    models: list[str] = []
    model: str | None = None  # the model in use, as the session's start or its last change says
    run = 0  # where the messages of the CLI's current run begin (after the last shutdown)
    project = None
    times: list[str] = []
    try:
        with file.open("rb") as handle:
            for event in json_lines(handle, skipped):
                if not isinstance(event, dict) or not isinstance(event.get("data"), dict):
                    skipped["an event of no known shape"] = skipped.get("an event of no known shape", 0) + 1
                    continue
                kind, data, when = event.get("type"), event["data"], iso_utc(event.get("timestamp"))
                times += [when] if when else []
                if kind == "session.start":
                    context = _mapping(data.get("context"))
                    project = text_or_none(context.get("cwd")) or project
                    model = _model(data.get("selectedModel"), models) or model
                elif kind == "session.model_change":
                    model = _model(data.get("newModel"), models) or model
                elif kind == "user.message" and text_or_none(data.get("content")):
                    messages.append(Message("user", str(data["content"]).strip(), when))
                elif kind == "assistant.message":
                    requests = data.get("toolRequests") if isinstance(data.get("toolRequests"), list) else []
                    calls = [_call(request) for request in requests if isinstance(request, dict)]
                    text = text_or_none(data.get("content")) or ""
                    thinking = text_or_none(data.get("reasoningText")) or ""
                    said = _model(data.get("model"), models) or model
                    messages.append(Message("assistant", text, when, said, calls, thinking))
                    messages[-1].usage = usage(output=data.get("outputTokens"))
                elif kind == "session.shutdown":
                    _shutdown(_mapping(data.get("modelMetrics")), messages, run, when, models)
                    run = len(messages)
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
    times.sort()
    return Session(
        key=f"cli/{file.parent.name}",
        agent=KIND,
        title=short_title(_title([message.text for message in messages if message.role == "user"])),
        messages=messages,
        project=project,
        models=models,
        started=times[0] if times else None,
        last=times[-1] if times else None,
        files=[file],
        problems=problems,
    )


def _title(requests: list[str]) -> str:
    """The first request that is no slash command; else the first command whose work is known
    (``/init``, said with what it does), else the first command."""
    first = next((text for text in requests if not is_slash_command(text)), None)
    if first is not None or not requests:
        return first or ""
    return next((command_title(text) for text in requests if text.strip() in COMMANDS), requests[0])


def _model(value: Any, models: list[str]) -> str | None:
    """A model the log names, added to the session's models; None where it names none."""
    model = text_or_none(value)
    if model and model not in models:
        models.append(model)
    return model


def _shutdown(metrics: dict[str, Any], messages: list[Message], run: int, when: str | None, models: list[str]) -> None:
    """A run's ``modelMetrics``: each model's totals, less the output its messages hold, put on the
    run's last assistant message of that model (or on a message standing for its calls)."""
    for name, metric in metrics.items():
        model = _model(name, models)
        counted = _mapping(_mapping(metric).get("usage"))
        if not model or not counted:
            continue
        read, written = whole_count(counted.get("cacheReadTokens")), whole_count(counted.get("cacheWriteTokens"))
        prompt = whole_count(counted.get("inputTokens"))
        own = [message for message in messages[run:] if message.role == "assistant" and message.model == model]
        said = sum(message.usage.output for message in own if message.usage)
        rest = usage(
            input=prompt - read - written if prompt >= read + written else prompt,
            output=max(0, whole_count(counted.get("outputTokens")) - said),
            cache_write=written,
            cache_read=read,
        )
        if rest is None:
            continue
        if not own:
            messages.append(Message("assistant", "", when, model))
            own = [messages[-1]]
        own[-1].usage = (own[-1].usage or Usage()) + rest


EDITORS = ("str_replace_editor",)  # its ``command`` says what it does to a file: no shell command


def _call(request: dict[str, Any]) -> ToolCall:
    """A tool request: its name, the files and the command its arguments name, its input and its edits."""
    given = request.get("arguments")
    arguments = given
    if isinstance(arguments, str):
        try:
            arguments = json_value(arguments)
        except NotJSON:
            arguments = {}
    arguments = arguments if isinstance(arguments, dict) else {}
    name = text_or_none(request.get("name")) or "tool"
    command = arguments.get("command") if name not in EDITORS else None
    return editor_call(
        name,
        given,
        named_files(arguments, ("path", "file_path", "filePath")),
        [command.strip()] if isinstance(command, str) and command.strip() else [],
    )


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
