"""Kiro's sessions since its 1.0 release, read from ``~/.kiro/sessions`` (``kiro``).

Kiro 1.0 (and the Kiro CLI from 3.0, which shares the layout) keeps one folder per session,
``~/.kiro/sessions/<workspace hash>/<session id>/``, holding ``session.json`` (``id``,
``title``, ``modelId``, ``workspacePaths``, ``createdAt``, ``lastModifiedAt``) and
``messages.jsonl``, an event log appended to: one ``{id, timestamp, payload}`` per line.
Kiro is closed source; the shape is the one public readers of it agree on
(voidcraft-dev/memory-forge-rs ``src-tauri/src/platforms/kiro_ide.rs``; the harness layouts
that describe ``session.json`` and ``messages.jsonl`` as Kiro 1.0's):

- ``user``: the person's request (``content``: a string or ``text`` blocks);
- ``assistant``: what the agent said (``operationType`` ``Say`` or ``Summary``) or its
  reasoning (``Reasoning``: thinking, kept apart);
- ``tool_call``: a tool call (``toolName``, ``args``: the files ``path``, ``filePath``,
  ``file``… name and the ``command`` it runs), on the agent's message of the moment;
- ``tool_result``: what the tool returned (``content``), a tool message (an image or
  document it inlines is an attachment, never its data);
- ``turn_end``: the end of a turn, bookkeeping.

The ``cli`` folder beside the workspaces is the Kiro CLI's (another shape, read by
``cli``). Lines that are not JSON, events of other types and a line over 64 MB are
skipped and counted in the session's problems; a last line still being written is left
for the next reading. Tokens are not recorded (Kiro counts credits): no usage.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import LONG_LINE
from archivist.agents.kiro.workspace import FILE_KEYS, content_text, titled_session
from archivist.agents.tool_edits import editor_call

META, EVENTS = "session.json", "messages.jsonl"
CLI = "cli"  # the Kiro CLI's sessions, another shape (``cli``)
SAID = ("Say", "Summary")
MAX_ARGUMENT_CHARS = 1_000_000


def is_session_folder(folder: Path, root: agents.Root | None = None) -> bool:
    """Whether ``folder`` holds a 1.0 session (``session.json`` or ``messages.jsonl``); one that
    cannot be entered (another user's) is told to ``root`` as Unread, and is not read."""
    try:
        return (folder / META).is_file() or (folder / EVENTS).is_file()
    except OSError as error:
        if root is not None:
            root.left_out(f"{agents.relative_path(folder, root.path)}: not read ({error.strerror or error})")
        return False


def session_folders(base: Path, root: agents.Root) -> list[Path]:
    """The session folders of ``~/.kiro/sessions`` (``base``), of one workspace's folder in it,
    or ``base`` itself."""
    if is_session_folder(base, root):
        return [base]
    found = [folder for folder in root.folders(base) if is_session_folder(folder, root)]
    if found:
        return found
    return [
        folder
        for workspace in root.folders(base)
        if workspace.name != CLI
        for folder in root.folders(workspace)
        if is_session_folder(folder, root)
    ]


def read_lines(file: Path, take: Callable[[Any], str | None]) -> list[str]:
    """The JSON value of each line of a JSONL file given to ``take``, which says why it skipped it,
    if it did; what was skipped (a line that is not JSON: unless it is a last line with no newline,
    still being written), a line that is not UTF-8 (decoded with replacement characters) and a
    reading that stopped, as problems."""
    skipped: dict[str, int] = {}
    replaced = 0
    try:
        with file.open("rb") as handle:
            for raw, _ in agents.lines(handle):
                if raw is None:
                    skipped[LONG_LINE] = skipped.get(LONG_LINE, 0) + 1
                    continue
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    text, replaced = raw.decode("utf-8", "replace"), replaced + 1
                reason = _line(text, raw.endswith(b"\n"), take)
                if reason:
                    skipped[reason] = skipped.get(reason, 0) + 1
    except OSError as error:
        skipped[f"reading stopped ({error.strerror or error})"] = 1
    return [*agents.skipped_problems(skipped), *agents.replaced_problems(replaced)]


def _line(text: str, complete: bool, take: Callable[[Any], str | None]) -> str | None:
    text = text.lstrip("\ufeff").strip()
    if not text:
        return None
    try:
        value = agents.json_value(text)
    except agents.NotJSON as error:
        return str(error) if complete else None  # a last line without its newline is still being written
    return take(value)


def session(folder: Path, key: str, kind: str, root: agents.Root) -> tuple[agents.Session | None, list[str]]:
    """One session folder as a session, or None and why."""
    meta = agents.json_file(folder / META, root)
    meta = meta if isinstance(meta, dict) else {}
    events = folder / EVENTS
    messages: list[agents.Message] = []
    problems: list[str] = []
    if agents.is_file(events) and root.allows(events):
        problems = read_lines(events, lambda event: _event(event, messages))
    if not any(m.text for m in messages):
        return None, problems + ["no message to read"]
    model = agents.text_or_none(meta.get("modelId"))
    paths = meta.get("workspacePaths")
    session = titled_session(
        kind,
        key,
        agents.text_or_none(meta.get("title")),
        messages,
        project=agents.text_or_none(paths[0]) if isinstance(paths, list) and paths else None,
        models=[model] if model else [],
        files=[file for file in (folder / META, events) if agents.is_file(file)],
        problems=problems,
        created=agents.iso_utc(meta.get("createdAt")),
        updated=agents.iso_utc(meta.get("lastModifiedAt")),
    )
    return session, problems


def session_id(folder: Path, root: agents.Root) -> str | None:
    meta = agents.json_file(folder / META, root)
    return agents.text_or_none(meta.get("id")) if isinstance(meta, dict) else None


def _event(event: Any, messages: list[agents.Message]) -> str | None:
    """Add one line's event to ``messages``; why it was skipped, if it was."""
    payload = event.get("payload") if isinstance(event, dict) else None
    if not isinstance(payload, dict):
        return "an event without a payload"
    kind, when = payload.get("type"), agents.iso_utc(event.get("timestamp"))
    if kind == "user":
        said = content_text(payload.get("content"))
        if said:
            messages.append(agents.Message("user", said, when))
    elif kind == "assistant":
        said = content_text(payload.get("content"))
        operation = payload.get("operationType", "Say")
        if said and operation in SAID:
            messages.append(agents.Message("assistant", said, when))
        elif said and operation == "Reasoning":
            messages.append(agents.Message("assistant", "", when, thinking=said))
        elif said:
            return "an assistant event of unknown operation"
    elif kind == "tool_call":
        _call(payload, when, messages)
    elif kind == "tool_result":
        output, attachments = _output(payload.get("content"))
        messages.append(agents.Message("tool", "", when, tool_output=output, attachments=attachments))
    elif kind != "turn_end":
        return "an event of unknown type"
    return None


def _call(payload: dict[str, Any], when: str | None, messages: list[agents.Message]) -> None:
    given = payload.get("args")
    arguments: dict[str, Any] = given if isinstance(given, dict) else {}
    command = agents.text_or_none(arguments.get("command"))
    name = agents.text_or_none(payload.get("toolName")) or agents.text_or_none(payload.get("actionType")) or "tool"
    call = editor_call(
        name, given, list(dict.fromkeys(agents.named_files(arguments, FILE_KEYS))), [command] if command else []
    )
    last = messages[-1] if messages else None
    if last is not None and last.role == "assistant":
        last.tool_calls.append(call)
    else:
        messages.append(agents.Message("assistant", "", when, tool_calls=[call]))


def _output(content: Any) -> tuple[str, list[agents.Attachment]]:
    """What a tool returned: its text, else its content as JSON; the images and files it inlines
    are attachments, named by their placeholders where they were (their data is never kept)."""
    found: list[agents.Attachment] = []
    bare = _without_data(content, found)
    if content_text(content) or content is None or isinstance(content, str):
        return content_text(bare), found
    return json.dumps(bare, ensure_ascii=False)[:MAX_ARGUMENT_CHARS], found


def _without_data(value: Any, found: list[agents.Attachment]) -> Any:
    """``value`` with each image or file it inlines replaced by its placeholder (added to ``found``):
    the model APIs' content parts, and the Bedrock ``{"image": {"format", "source": {"bytes"}}}``
    (or ``document``) blocks Kiro's tools return. (A value read is never nested too deep to walk.)"""
    if isinstance(value, list):
        return [_without_data(item, found) for item in value]
    if not isinstance(value, dict):
        return value
    inlined = agents.attachments_of(value) or _bedrock(value)
    if inlined:
        found.extend(inlined)
        return " ".join(item.placeholder() for item in inlined)
    return {key: _without_data(item, found) for key, item in value.items()}


def _bedrock(block: dict[str, Any]) -> list[agents.Attachment]:
    for kind in ("image", "document"):
        inner = block.get(kind)
        source = inner.get("source") if isinstance(inner, dict) else None
        if isinstance(inner, dict) and isinstance(source, dict) and isinstance(source.get("bytes"), str):
            media = agents.text_or_none(inner.get("format"))
            named = f"{kind}/{media}" if media and kind == "image" else media or kind
            return [agents.attachment(named, inner.get("name"), data=source["bytes"])]
    return []
