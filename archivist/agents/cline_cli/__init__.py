"""The Cline CLI's sessions, read in place: one session per messages file (docs/contract.md: sources).

The Cline CLI of 2026 (``cline``, built on the Cline SDK, cline/cline ``apps/cli`` and
``sdk/packages/core``) no longer keeps the extension's task folders: each session is a folder
``~/.cline/data/sessions/<session id>/`` (``$CLINE_DIR`` moves ``~/.cline``, ``$CLINE_DATA_DIR``
the ``data`` folder) holding its manifest ``<id>.json`` and its conversation
``<id>.messages.json``; a sub-agent's or teammate's conversation is a further
``<agent id>.messages.json`` (or ``<agent>__<task>.messages.json``) in its lead session's folder.
The shape is the SDK's own contract (``sdk/packages/core/docs/messages-contract-v1.md``) and
fixtures (``sdk/packages/core/fixtures/session/``):

- the messages file: ``version`` (1), ``sessionId``, ``agent`` (``lead``, ``subagent``,
  ``teammate``), ``updated_at``, ``messages``, ``system_prompt``;
- a message: ``role`` (``user``, ``assistant``), ``content`` (Anthropic-style blocks: ``text``,
  ``thinking``, ``tool_use`` with ``name`` and ``input``, ``tool_result`` with ``content`` and
  ``is_error``, ``file`` with ``path``, ``image``), ``ts`` (Unix ms), an assistant message's
  ``modelInfo.id`` and, on the last message of a turn, ``metrics``: ``inputTokens`` (the whole
  prompt, cache reads and writes included), ``outputTokens``, ``cacheReadTokens``,
  ``cacheWriteTokens`` and the ``cost`` the CLI worked out;
- the manifest: ``cwd`` (else ``workspace_root``), ``model``, ``started_at``, ``ended_at`` and
  ``metadata.title``.

What is read: the person's text (a file or image attached is an attachment, named in the text),
the assistant's text, its thinking apart, its tool calls with their files (``path``, the
``files`` of ``read_files``) and commands (``run_commands``' ``commands``), an ``editor`` call's
old and new text and an ``apply_patch`` call's patch as edits, its model and its usage (the
input counted without the cache's tokens); each tool result is a tool message. The title is the
manifest's, else the first words of the person. Skipped: the system prompt, a block of no
known kind (told); a file that is not JSON or not a messages file is told in the problems.
Nothing is ever written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist.agents import (
    Attachment,
    Edit,
    Message,
    Root,
    Session,
    ToolCall,
    attachment,
    call_input,
    file_key,
    is_dir,
    iso_utc,
    json_file,
    read_items,
    relative_path,
    short_title,
    text_edit,
    text_or_none,
    usage,
)
from archivist.agents.apply_patch import find_patch
from archivist.agents.tool_edits import editor_call

KIND = "cline-cli"
EXPECTED = (
    "expected the Cline CLI's data folder (~/.cline/data), its sessions folder, "
    "one session's folder, or one <id>.messages.json"
)
SESSIONS = "sessions"
SUFFIX = ".messages.json"
FILE_KEYS = ("path", "file_path", "filePath")
LIST_KEYS = ("files", "paths", "file_paths")
MAX_OUTPUT_CHARS = 1_000_000  # a tool result that is no text is kept as JSON up to this


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of the Cline CLI's sessions (a sentence), or None."""
    path = Path(path).expanduser()
    if not path.exists():
        return f"{path} does not exist: {EXPECTED}."
    if path.is_file():
        return (
            None
            if _is_messages(json_file(path, Root(path)))
            else f"{path} is not a Cline CLI messages file: {EXPECTED}."
        )
    if _message_files(Root(path)):
        return None
    return f"{path} holds no Cline CLI session (sessions/<id>/<id>{SUFFIX}): {EXPECTED}."


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Every session under ``path``, one per messages file, in the order of their paths."""
    problems = problems if problems is not None else []
    root = Root(Path(path).expanduser(), problems)
    files = [root.path] if root.path.is_file() else _message_files(root)
    used: set[str] = set()  # the keys given: an id in two files (a copy) keys the second by its path
    for file in files:
        relative = file.name if root.named else relative_path(file, root.path)
        session = _session(file, root, problems, relative, used)
        if session is not None:
            used.add(session.key)
            yield session


def _sessions_folder(root: Root) -> Path:
    """The folder of session folders: ``sessions`` under a data folder, else the source itself."""
    folder = root.path / SESSIONS
    return folder if is_dir(folder) and root.allows(folder) else root.path


def _message_files(root: Root) -> list[Path]:
    """The messages files of the source: those of each session folder, or of the one given."""
    folder = _sessions_folder(root)
    files = root.files(folder, SUFFIX)
    for session in root.folders(folder):
        files.extend(root.files(session, SUFFIX))
    return files


def _is_messages(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("messages"), list)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# -- one session ---------------------------------------------------------------------------------


def _session(file: Path, root: Root, problems: list[str], relative: str, used: set[str]) -> Session | None:
    before = len(root.problems)
    value = json_file(file, root)
    if not _is_messages(value):
        if len(root.problems) == before:  # (not JSON, too deep or too large: told by json_file)
            problems.append(f"{file.name}: not a Cline CLI messages file (no messages)")
        return None
    stem = file.name[: -len(SUFFIX)]
    lead = file.parent.name
    manifest = _manifest(file.parent / f"{lead}.json", root)
    messages: list[Message] = []
    models: list[str] = []
    skipped = read_items(value["messages"], lambda item: _messages(item, models), messages)
    own = [f"{skipped} message{'s' if skipped != 1 else ''} of no known shape skipped"] if skipped else []
    if not messages:
        problems.append(f"{relative}: no message to read")
        return None
    sub = stem != lead and (file.parent / f"{lead}{SUFFIX}").exists()
    given = text_or_none(value.get("sessionId"))
    key = file_key(given or (f"{lead}__{stem}" if sub else stem), relative, used)
    model = text_or_none(manifest.get("model"))
    if model and not models:
        models.append(model)
    times = sorted(time for time in (m.timestamp for m in messages) if time)
    first = next((m.text for m in messages if m.role == "user" and m.text), "")
    title = None if sub else text_or_none(_object(manifest.get("metadata")).get("title"))
    return Session(
        key=key,
        agent=KIND,
        title=short_title(title, 300) if title else (short_title(first) if first else "Untitled session"),
        messages=messages,
        project=text_or_none(manifest.get("cwd")) or text_or_none(manifest.get("workspace_root")),
        models=models,
        started=times[0] if times else iso_utc(manifest.get("started_at")),
        last=times[-1] if times else iso_utc(manifest.get("ended_at")) or iso_utc(value.get("updated_at")),
        files=[file],
        problems=own,
        parent=lead if sub else None,
    )


def _manifest(file: Path, root: Root) -> dict[str, Any]:
    """The session's manifest (``<id>.json`` beside its messages), or {} where there is none."""
    if not file.exists():
        return {}
    return _object(json_file(file, root))


def _messages(item: dict[str, Any], models: list[str]) -> list[Message] | None:
    """A stored message as messages; None for one of no known shape."""
    role = item.get("role")
    content = item.get("content")
    if role not in ("user", "assistant") or not isinstance(content, str | list):
        return None
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    timestamp = iso_utc(item.get("ts"))
    if role == "user":
        return _user(blocks, timestamp)
    model = text_or_none(_object(item.get("modelInfo")).get("id"))
    if model and model not in models:
        models.append(model)
    texts, thinking, calls = [], [], []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            thinking.append(block["thinking"])
        elif kind == "tool_use":
            calls.append(_call(block))
    text = "\n\n".join(piece.strip() for piece in texts if piece.strip())
    thought = "\n\n".join(piece.strip() for piece in thinking if piece.strip())
    counted = _usage(item.get("metrics"))
    if not (text or thought or calls or counted):
        return []
    return [Message("assistant", text, timestamp, model=model, tool_calls=calls, thinking=thought, usage=counted)]


def _usage(metrics: Any) -> Any:
    """A turn's ``metrics`` as usage: its input counted without the tokens read from or written
    to the cache (the CLI counts the whole prompt)."""
    spent = _object(metrics)
    read = spent.get("cacheReadTokens")
    written = spent.get("cacheWriteTokens")
    given = spent.get("inputTokens")
    whole = given if isinstance(given, int) and not isinstance(given, bool) else None
    cached = sum(value for value in (read, written) if isinstance(value, int) and not isinstance(value, bool))
    return usage(
        input=max(whole - cached, 0) if whole is not None else None,
        output=spent.get("outputTokens"),
        cache_write=written,
        cache_read=read,
        cost=spent.get("cost"),
    )


def _user(blocks: list[Any], timestamp: str | None) -> list[Message]:
    """A user message: the person's text and attached files, and one tool message per tool result."""
    texts: list[str] = []
    attachments: list[Attachment] = []
    tools: list[Message] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind in ("file", "image"):
            attachments.append(_attached(block))
            texts.append(attachments[-1].placeholder())
        elif kind == "tool_result":
            output = _output(block.get("content"))
            if block.get("is_error") is True and not output:
                output = "[error]"
            tools.append(Message("tool", "", timestamp, tool_output=output))
    text = "\n\n".join(piece.strip() for piece in texts if piece.strip())
    person = [Message("user", text, timestamp, attachments=attachments)] if text else []
    return person + tools


def _attached(block: dict[str, Any]) -> Attachment:
    """A file or image the person attached: named by its path, its contents never kept."""
    if block.get("type") == "image":
        source = _object(block.get("source"))
        kind = text_or_none(source.get("media_type")) or text_or_none(block.get("mediaType")) or "image"
        return attachment(kind, text_or_none(block.get("path")), data=source.get("data") or block.get("data"))
    content = block.get("content")
    size = len(content.encode("utf-8", "replace")) if isinstance(content, str) else None
    return attachment("file", text_or_none(block.get("path")), size=size)


def _call(block: dict[str, Any]) -> ToolCall:
    """A tool call: its files, its commands, and the edits of ``editor`` and ``apply_patch``."""
    name = text_or_none(block.get("name")) or "tool"
    given = block.get("input")
    arguments: dict[str, Any] = given if isinstance(given, dict) else {}
    files = [text for text in (text_or_none(arguments.get(key)) for key in FILE_KEYS) if text]
    for key in LIST_KEYS:
        files.extend(_listed_files(arguments.get(key)))
    commands = _commands(arguments.get("commands")) + [
        text for text in (text_or_none(arguments.get(key)) for key in ("command", "cmd")) if text
    ]
    if name == "apply_patch":
        patch = arguments.get("input") if arguments else given
        found = find_patch(patch) if isinstance(patch, str) else None
        if found is not None:
            call = editor_call(
                name, {key: value for key, value in arguments.items() if key != "input"}, files, commands
            )
            call.edits = found.edits
            call.files = list(dict.fromkeys([*call.files, *(edit.file for edit in found.edits)]))
            return call
    call = editor_call(name, given, files, commands)
    if "commands" in arguments and len(_commands(arguments["commands"])) == len(_items(arguments["commands"])):
        call.input = call_input(arguments, without={"commands"})  # each one kept as a command
    if name == "editor" and not call.edits:  # a file created whole: no old text, no line to insert at
        created = _created(arguments)
        if created is not None:
            call.edits = [created]
            call.input = call_input(arguments, without={"new_text"})
    return call


def _created(arguments: dict[str, Any]) -> Edit | None:
    """The file an ``editor`` call wrote whole (``new_text`` with no ``old_text`` nor ``insert_line``)."""
    if arguments.get("old_text") or arguments.get("insert_line") is not None:
        return None
    return text_edit(arguments.get("path"), None, arguments.get("new_text"))


def _listed_files(value: Any) -> list[str]:
    """The paths of a ``files`` list: each a path, or a read request holding one."""
    items = value if isinstance(value, list) else [value]
    found = []
    for item in items:
        path = text_or_none(item) if isinstance(item, str) else text_or_none(_object(item).get("path"))
        if path:
            found.append(path)
    return found


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _commands(value: Any) -> list[str]:
    """The commands of ``run_commands``: each a shell line, or an executable and its arguments."""
    found = []
    for item in _items(value):
        if isinstance(item, str) and item.strip():
            found.append(item)
        elif isinstance(item, dict) and isinstance(item.get("command"), str):
            arguments = [part for part in item.get("args") or [] if isinstance(part, str)]
            found.append(" ".join([item["command"], *arguments]))
    return found


def _output(content: Any) -> str:
    """What a tool gave: its text, each query's result of a list, else the content as JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = [_piece(item) for item in content]
        if all(piece is not None for piece in pieces):
            return "\n\n".join(piece for piece in pieces if piece)
    if content is None or content == [] or content == {}:
        return ""
    return json.dumps(content, ensure_ascii=False)[:MAX_OUTPUT_CHARS]


def _piece(item: Any) -> str | None:
    """One part of a tool's result: a text block's text, a query's result, or None for another."""
    if isinstance(item, str):
        return item
    if not isinstance(item, dict):
        return None
    if item.get("type") == "text" and isinstance(item.get("text"), str):
        return str(item["text"])
    result = item.get("result")
    if isinstance(result, str):
        query = text_or_none(item.get("query"))
        return f"{query}\n{result}" if query else result
    error = item.get("error")
    return str(error) if isinstance(error, str) else None
