"""Kiro's sessions before its 1.0 release, read from the extension's ``globalStorage/kiro.kiroagent``
folder (``kiro``): workspace sessions with their execution logs, and the earlier ``.chat`` files.

The shapes are those public readers of these files agree on (kenn-io/agentsview
``internal/parser/kiro_ide.go``; DevOps-Nirvana/Kiro-Ception ``src/kiro_ception/ide_loader.py``;
voidcraft-dev/memory-forge-rs ``src-tauri/src/platforms/kiro_ide.rs``; getagentseal/codeburn
``src/providers/kiro.ts``); Kiro itself is closed source.

- ``workspace-sessions/<workspace>/<session id>.json``: ``sessionId``, ``title``,
  ``workspaceDirectory`` (or ``workspacePath``), ``selectedModel`` and ``history``: entries
  of a ``message`` (``role`` user or assistant, ``content`` a string or ``text`` blocks) and,
  for an assistant's, the ``executionId`` of the agent run that answered (its own content is
  often only "On it.") and ``promptLogs`` (their ``completion``). ``sessions.json`` beside it
  lists the sessions with their ``dateCreated`` (Unix ms) and ``workspaceDirectory``; the
  folder's name is the workspace's path in URL-safe base64.
- Execution logs, ``<workspace hash>/<32 hex>/<file>`` (no extension): ``executionId``,
  ``chatSessionId``, ``startTime``/``endTime``, ``modelId`` and ``actions``: a ``say``
  action's ``output.message`` is what the agent said, a ``displayError``'s ``errorMessage``
  an error, and the others (``readCode``, ``replace``, ``create``, running a command…) are its
  tool calls, with the files (``file``, ``path``…) and ``command`` of their ``input``; a
  ``specAgent`` action names the child execution that did the work (``output.executionId``).
  An assistant entry's text is its execution's, else its prompt logs' completions, else its
  own content; its time is its execution's end, and the request before it is dated by the
  execution's start (the history itself records no time).
- ``<workspace hash>/<file>.chat``: one agent run, ``chat`` (``role`` human, bot or tool;
  ``content`` text) and ``metadata`` (``modelId``, ``startTime``, ``endTime``). The system
  prompt and rules Kiro sends as human messages, and the bot's acknowledgement of them, are
  left out; a ``<tool_use>`` written in a bot's text is a tool call (its ``<name>``, the
  ``<path>`` and ``<command>`` in it) and leaves the text; a tool message's content is output.

Skipped: the execution logs' copies of the conversation (``input``, ``context``), a tool's
output in an execution log (not recorded as text), ``.migrated-*`` markers, ``dev_data``,
``index``. Tokens are not recorded (Kiro counts credits): no usage.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist.agents import (
    Message,
    Root,
    Session,
    ToolCall,
    between,
    iso_utc,
    json_file,
    named_files,
    short_title,
    text_or_none,
)
from archivist.agents.tool_edits import editor_call

NOT_WORKSPACES = ("workspace-sessions", "dev_data", "index", "default")
HEX32 = re.compile(r"^[0-9a-f]{32}$")
FILE_KEYS = ("file", "path", "filePath", "file_path", "files", "paths", "targetFile")
SYSTEM_PREFIXES = (
    "# System Prompt",
    "# Identity",
    "<identity>",
    "## Included Rules",
    "You are operating in a workspace",
    "<steering-reminder>",
)
ACKNOWLEDGEMENTS = ("I will follow these instructions.", "Understood.")


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def content_text(content: Any) -> str:
    """A Kiro message's text: a string, or the ``text`` of its blocks ([image] for an image)."""
    if isinstance(content, str):
        return content.strip()
    pieces = []
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, str):
            pieces.append(block)
        elif isinstance(block, dict) and isinstance(block.get("text"), str) and block.get("type") in (None, "text"):
            pieces.append(block["text"])
        elif isinstance(block, dict) and block.get("type") in ("image", "image_url"):
            pieces.append("[image]")
    return "\n".join(piece.strip() for piece in pieces if piece.strip())


# -- execution logs ------------------------------------------------------------------------------


@dataclass
class Run:
    """What one execution log says of its agent run."""

    texts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    times: list[str] = field(default_factory=list)
    model: str | None = None
    child: str | None = None  # the execution a specAgent action handed the work to


def executions(home: Path, root: Root) -> dict[str, Run]:
    """The agent runs of the execution logs under ``home`` (``<hash>/<32 hex>/<file>``), by id."""
    runs: dict[str, Run] = {}
    for workspace in root.folders(home):
        if workspace.name in NOT_WORKSPACES or workspace.name.startswith("."):
            continue
        for folder in root.folders(workspace):
            if HEX32.match(folder.name):
                for file in root.files(folder):
                    if not file.suffix:
                        _run(json_file(file, root), runs)
    return runs


def _run(log: Any, runs: dict[str, Run]) -> None:
    if not isinstance(log, dict) or not isinstance(log.get("executionId"), str):
        return
    run = runs.setdefault(log["executionId"], Run())
    run.model = text_or_none(log.get("modelId")) or run.model
    run.times += [time for time in (iso_utc(log.get("startTime")), iso_utc(log.get("endTime"))) if time]
    actions = log.get("actions")
    for action in actions if isinstance(actions, list) else []:
        if isinstance(action, dict):
            _action(action, run)


def _action(action: dict[str, Any], run: Run) -> None:
    kind = text_or_none(action.get("actionType"))
    output = _object(action.get("output"))
    time = iso_utc(action.get("emittedAt"))
    if time:
        run.times.append(time)
    if kind == "say":
        text = text_or_none(output.get("message"))
        if text:
            run.texts.append(text)
    elif kind == "displayError":
        run.texts.append(text_or_none(action.get("errorMessage")) or "An unexpected error occurred.")
    elif kind == "specAgent":
        run.child = text_or_none(output.get("executionId")) or run.child
    elif kind:
        given = action.get("input")
        arguments: dict[str, Any] = given if isinstance(given, dict) else {}
        command = text_or_none(arguments.get("command"))
        run.calls.append(
            editor_call(
                kind, given, list(dict.fromkeys(named_files(arguments, FILE_KEYS))), [command] if command else []
            )
        )


def _resolved(execution: Any, runs: dict[str, Run]) -> Run | None:
    run = runs.get(execution) if isinstance(execution, str) else None
    if run is not None and not run.texts and run.child in runs:
        child = runs[run.child]
        return Run(child.texts, run.calls + child.calls, run.times + child.times, child.model or run.model)
    return run


# -- workspace sessions -----------------------------------------------------------------------------


def workspace_session(
    file: Path, key: str, kind: str, root: Root, listed: dict[str, Any], runs: dict[str, Run]
) -> tuple[Session | None, list[str]]:
    """One ``workspace-sessions`` file as a session, or None and why."""
    value = json_file(file, root)
    if not isinstance(value, dict) or not isinstance(value.get("history"), list):
        return None, [] if value is None else ["not a Kiro session (no history)"]
    entry = listed.get(text_or_none(value.get("sessionId")) or file.stem, {})
    models = [model for model in [text_or_none(value.get("selectedModel"))] if model]
    messages: list[Message] = []
    skipped = 0
    for item in value["history"]:
        item = _object(item)
        message = _object(item.get("message"))
        role = message.get("role")
        if role == "user":
            text = content_text(message.get("content"))
            if text:
                messages.append(Message("user", text))
        elif role == "assistant":
            run = _resolved(item.get("executionId"), runs)
            if run and run.times and messages and messages[-1].role == "user" and messages[-1].timestamp is None:
                messages[-1].timestamp = min(run.times)  # the request started the run
            messages.extend(_answer(item, message, run, models))
        elif role != "tool":  # (a tool's result, as the history repeats it: the run holds the calls)
            skipped += 1
    problems = [f"{skipped} history entr{'ies' if skipped != 1 else 'y'} of no known shape skipped"] if skipped else []
    if not any(m.text for m in messages):
        return None, problems + ["no message to read"]
    created = iso_utc(entry.get("dateCreated"))
    project = (
        text_or_none(value.get("workspaceDirectory"))
        or text_or_none(value.get("workspacePath"))
        or text_or_none(entry.get("workspaceDirectory"))
        or decoded_workspace(file.parent.name)
    )
    session = titled_session(
        kind,
        key,
        text_or_none(value.get("title")) or text_or_none(entry.get("title")),
        messages,
        project=project,
        models=models,
        files=[file],
        problems=problems,
        also_at=created,
    )
    return session, problems


def titled_session(
    kind: str,
    key: str,
    title: str | None,
    messages: list[Message],
    *,
    project: str | None,
    models: list[str],
    files: list[Path],
    problems: list[str],
    started: str | None = None,
    created: str | None = None,
    updated: str | None = None,
    also_at: str | None = None,
) -> Session:
    """A Kiro session of ``messages`` (the workspace's, 1.0's or the CLI's) that has a title of its
    own: ``title`` (up to 300 characters), else its first user message shortened. It starts at
    ``started``, else at the earliest of its messages' times and ``also_at``, else at ``created``;
    it ends at the latest of those, else at ``updated``."""
    first = next((m.text for m in messages if m.role == "user" and m.text), "")
    times = sorted(time for time in [also_at, *(m.timestamp for m in messages)] if time)
    return Session(
        key=key,
        agent=kind,
        title=short_title(title, 300) if title else short_title(first),
        messages=messages,
        project=project,
        models=models,
        started=started or (times[0] if times else None) or created,
        last=(times[-1] if times else None) or updated,
        files=files,
        problems=problems,
    )


def _answer(item: dict[str, Any], message: dict[str, Any], run: Run | None, models: list[str]) -> list[Message]:
    logs = item.get("promptLogs")
    completions = [
        text
        for text in (
            text_or_none(log.get("completion"))
            for log in (logs if isinstance(logs, list) else [])
            if isinstance(log, dict)
        )
        if text
    ]
    text = (
        "\n\n".join(run.texts)
        if run and run.texts
        else "\n\n".join(completions) or content_text(message.get("content"))
    )
    if run and run.model and run.model not in models:
        models.append(run.model)
    calls = run.calls if run else []
    if not (text or calls):
        return []
    when = max(run.times) if run and run.times else None
    return [Message("assistant", text, when, model=run.model if run else None, tool_calls=calls)]


def listed_sessions(folder: Path, root: Root) -> dict[str, Any]:
    """A workspace's ``sessions.json``: each entry by session id."""
    entries = json_file(folder / "sessions.json", root)
    return {
        entry["sessionId"]: entry
        for entry in (entries if isinstance(entries, list) else [])
        if isinstance(entry, dict) and isinstance(entry.get("sessionId"), str)
    }


def decoded_workspace(name: str) -> str | None:
    """A ``workspace-sessions`` folder's name as the path it encodes (URL-safe base64), or None."""
    text = name.rstrip("_=?")
    try:
        path = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return path if path.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", path) else None


# -- .chat files -------------------------------------------------------------------------------------


def chat_session(file: Path, key: str, kind: str, root: Root) -> tuple[Session | None, list[str]]:
    """One ``.chat`` file (one agent run) as a session, or None and why."""
    value = json_file(file, root)
    if not isinstance(value, dict) or not isinstance(value.get("chat"), list):
        return None, [] if value is None else ["not a Kiro chat (no chat list)"]
    meta = _object(value.get("metadata"))
    model = text_or_none(meta.get("modelId"))
    messages: list[Message] = []
    skipped = 0
    for item in value["chat"]:
        role = item.get("role") if isinstance(item, dict) else None
        text = content_text(item.get("content")) if isinstance(item, dict) else ""
        if role == "human":
            text = _unwrapped(text)
            if text and not text.startswith(SYSTEM_PREFIXES):
                messages.append(Message("user", text))
        elif role == "bot":
            text, calls = _tool_uses(text)
            if (text or calls) and text not in ACKNOWLEDGEMENTS:
                messages.append(Message("assistant", text, model=model, tool_calls=calls))
        elif role == "tool":
            messages.append(Message("tool", "", tool_output=text))
        else:
            skipped += 1
    problems = [f"{skipped} chat message{'s' if skipped != 1 else ''} of no known shape skipped"] if skipped else []
    if not any(m.text for m in messages):
        return None, problems + ["no message to read"]
    first = next((m.text for m in messages if m.role == "user"), "")
    return (
        Session(
            key=key,
            agent=kind,
            title=short_title(first) if first else "Untitled session",
            messages=messages,
            models=[model] if model else [],
            started=iso_utc(meta.get("startTime")),
            last=iso_utc(meta.get("endTime")) or iso_utc(meta.get("startTime")),
            files=[file],
            problems=problems,
        ),
        problems,
    )


def _unwrapped(text: str) -> str:
    span = between(text, "<kiro-ide-message>", "</kiro-ide-message>")
    return text[span[0] : span[1]].strip() if span else text


def _tool_uses(text: str) -> tuple[str, list[ToolCall]]:
    """A bot's text without the ``<tool_use>`` blocks written in it, and those as tool calls."""
    calls: list[ToolCall] = []
    kept: list[str] = []
    start = 0
    while (span := between(text, "<tool_use>", "</tool_use>", start)) is not None:
        block = text[span[0] : span[1]]
        kept.append(text[start : span[0] - len("<tool_use>")])
        calls.append(ToolCall(_tag(block, "name") or "tool", _tags(block, "path"), _tags(block, "command")))
        start = span[1] + len("</tool_use>")
    kept.append(text[start:])
    return "".join(kept).strip(), calls


def _tag(block: str, name: str) -> str | None:
    span = between(block, f"<{name}>", f"</{name}>")
    return block[span[0] : span[1]].strip() or None if span else None


def _tags(block: str, name: str) -> list[str]:
    found, start = [], 0
    while (span := between(block, f"<{name}>", f"</{name}>", start)) is not None:
        if block[span[0] : span[1]].strip():
            found.append(block[span[0] : span[1]].strip())
        start = span[1]
    return found


def chat_files(home: Path, root: Root) -> Iterator[Path]:
    """The ``.chat`` files of the workspace folders under ``home`` (or of ``home`` itself)."""
    yield from root.files(home, ".chat")
    for workspace in root.folders(home):
        if workspace.name not in NOT_WORKSPACES and not workspace.name.startswith("."):
            yield from root.files(workspace, ".chat")
