"""GitHub Copilot's chat sessions, read in place: VS Code's Copilot Chat and the Copilot CLI.

VS Code keeps a window's chat sessions in ``<User>/workspaceStorage/<id>/chatSessions/``
(``<User>/globalStorage/emptyWindowChatSessions/`` for a window without a folder), as its
own chat code writes them (microsoft/vscode ``contrib/chat/common/model/chatModel.ts``,
``chatSessionStore.ts``, ``objectMutationLog.ts``):

- ``<session id>.json``: the session whole (``version`` 3, or older ones);
- from VS Code 1.109, ``<session id>.jsonl``: its first line the session (``kind`` 0), each
  next line a change: set a value at a path (1), truncate an array and append to it (2),
  delete a value (3). Where both files are there, the log is read.

A session: ``customTitle``, ``creationDate`` (ms) and ``requests``; each request a user's
``message.text`` at its ``timestamp`` (ms), its ``modelId``, and the ``response`` parts: markdown
(a ``value`` without a ``kind``, or a string), ``thinking`` (thinking), ``toolInvocationSerialized``
(a call: its ``toolId``, a terminal command's ``commandLine``, the files of its
``resultDetails`` or its input's ``filePath``; a terminal's output is a tool message) and
``textEditGroup`` (an edit of its ``uri``). The workspace is the ``folder`` of ``workspace.json``
beside ``chatSessions``.

The Copilot CLI keeps each session in ``~/.copilot/session-state/<id>/events.jsonl``
(vscode-copilot-chat ``chatSessions/copilotcli``): ``session.start`` (the working directory,
the model), ``user.message``, ``assistant.message`` (its ``toolRequests`` are calls, its
``reasoningText`` thinking) and ``tool.execution_complete`` (a result: a tool message).

The source is VS Code's ``User`` folder, its ``workspaceStorage``, one ``chatSessions``
folder, ``~/.copilot`` or its ``session-state``, or one session file. Other parts (references,
progress messages, confirmations) are skipped; an attachment is never kept. A file that is not
JSON, a log line of no known change, a line over 64 MB are told in the session's problems; a
file over 1 GB read whole is not read. Nothing is ever written.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist.agents import (
    LONG_LINE,
    Message,
    NotJSON,
    Root,
    Session,
    ToolCall,
    is_dir,
    is_file,
    iso_utc,
    json_file,
    json_value,
    lines,
    named_files,
    short_title,
    text_or_none,
    too_large,
    uri_path,
)

KIND = "copilot"
EXPECTED = (
    "VS Code's User folder (its workspaceStorage/*/chatSessions), a chatSessions folder, the Copilot CLI's "
    "~/.copilot/session-state, or one session file"
)
SESSION_FOLDERS = ("chatSessions", "emptyWindowChatSessions", "transferredChatSessions")
CLI_EVENTS = "events.jsonl"
FILE_INPUTS = ("filePath", "path", "file_path", "uri")


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of Copilot's chat sessions (a sentence), or None."""
    path = Path(path).expanduser()
    if not path.exists():
        return f"{path} does not exist: expected {EXPECTED}."
    if path.is_file():
        if path.name == CLI_EVENTS or (path.parent.name in SESSION_FOLDERS and path.suffix in (".json", ".jsonl")):
            return None
        return f"{path} is not a Copilot chat session file: expected {EXPECTED}."
    if not session_files(Root(path)):
        return f"{path} holds no Copilot chat session: expected {EXPECTED}."
    return None


def session_files(root: Root) -> list[Path]:
    """The session files under a source, each once (a session's log rather than its older whole file)."""
    path = root.path
    if path.is_file():
        return [path]
    folders = [path] if path.name in SESSION_FOLDERS else []
    for holder in (path, path / "workspaceStorage"):
        if is_dir(holder) and root.allows(holder):
            folders += [folder / "chatSessions" for folder in root.folders(holder) if is_dir(folder / "chatSessions")]
    shared = path / "globalStorage"
    if is_dir(shared) and root.allows(shared):
        folders += [shared / name for name in SESSION_FOLDERS if is_dir(shared / name)]
    found: list[Path] = []
    for folder in dict.fromkeys(folders):
        if not root.allows(folder):
            continue
        files = root.files(folder)
        logs = {file.stem for file in files if file.suffix == ".jsonl"}
        found += [
            file for file in files if file.suffix == ".jsonl" or (file.suffix == ".json" and file.stem not in logs)
        ]
    for holder in (path, path / "session-state"):
        if is_dir(holder) and root.allows(holder):
            found += [folder / CLI_EVENTS for folder in root.folders(holder) if is_file(folder / CLI_EVENTS)]
    return found


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Every session under ``path``: VS Code's by workspace, then the CLI's."""
    problems = problems if problems is not None else []
    root = Root(Path(path).expanduser(), problems)
    for file in session_files(root):
        if not root.allows(file):
            continue
        reason = too_large(file) if file.suffix == ".json" else None
        if reason:
            root.left_out(f"{file.name}: {reason}")
            continue
        session = _cli_session(file) if file.name == CLI_EVENTS else _editor_session(file, root)
        if session is not None:
            yield session


# --- VS Code ------------------------------------------------------------------------------------


def _editor_session(file: Path, root: Root) -> Session | None:
    problems: list[str] = []
    data = _replay(file, problems) if file.suffix == ".jsonl" else json_file(file, root)
    if data is None and file.suffix == ".json":
        return None  # (json_file told why)
    if not isinstance(data, dict) or not isinstance(data.get("requests"), list):
        root.problems.append(f"{file.name}: not a chat session ({'; '.join(problems) or 'no requests'})")
        return None
    messages: list[Message] = []
    models: list[str] = []
    for request in data["requests"]:
        if isinstance(request, dict):
            messages += _request(request, models)
    if not any(message.text for message in messages):
        return None
    completed = [_mapping(_mapping(request).get("modelState")).get("completedAt") for request in data["requests"]]
    times = sorted(
        t for t in [iso_utc(data.get("creationDate")), *(m.timestamp for m in messages), *map(iso_utc, completed)] if t
    )
    first = next((message.text for message in messages if message.role == "user" and message.text), "")
    return Session(
        key=f"{file.parent.parent.name}/{file.stem}" if file.parent.name == "chatSessions" else file.stem,
        agent=KIND,
        title=short_title(text_or_none(data.get("customTitle")) or first),
        messages=messages,
        project=_workspace(file.parent.parent / "workspace.json", root) if _inside(file.parent.parent, root) else None,
        models=models,
        started=times[0] if times else None,
        last=times[-1] if times else None,
        files=[file],
        problems=problems,
    )


def _replay(file: Path, problems: list[str]) -> Any:
    """A session's log replayed: its first state, then each change in order."""
    state: Any = None
    skipped: dict[str, int] = {}
    try:
        with file.open("rb") as handle:
            for line, _size in lines(handle):
                reason = _apply(line, state)
                if isinstance(reason, tuple):
                    state = reason[0]
                elif reason:
                    skipped[reason] = skipped.get(reason, 0) + 1
    except OSError as error:
        problems.append(f"{file.name}: not read ({error.strerror or error})")
    problems += [f"{count} line(s) skipped: {reason}" for reason, count in skipped.items()]
    return state


def _apply(line: bytes | None, state: Any) -> tuple[Any] | str | None:
    """One line of a log applied to ``state``: (a new state,), None when applied, else why not."""
    if line is None:
        return LONG_LINE
    if not line.strip():
        return None
    try:
        entry = json_value(line.decode("utf-8", "replace"))
    except NotJSON as error:
        return str(error)
    kind = entry.get("kind") if isinstance(entry, dict) else None
    if kind == 0:
        return (entry.get("v"),)
    keys = entry.get("k") if isinstance(entry, dict) else None
    if kind not in (1, 2, 3) or not isinstance(keys, list) or not keys:
        return "a change of no known shape"
    holder = state
    for key in keys[:-1]:
        holder = _child(holder, key)
    last = keys[-1]
    if kind == 2:
        target = _child(holder, last)
        if not isinstance(target, list):
            return "a change of a path that is not there"
        if isinstance(entry.get("i"), int) and entry["i"] >= 0:
            del target[entry["i"] :]
        target.extend(entry.get("v") if isinstance(entry.get("v"), list) else [])
        return None
    if isinstance(holder, dict) and isinstance(last, str):
        if kind == 1:
            holder[last] = entry.get("v")
        else:
            holder.pop(last, None)
        return None
    if isinstance(holder, list) and isinstance(last, int) and 0 <= last <= len(holder):
        if kind == 3:
            if last < len(holder):
                holder[last] = None
        elif last == len(holder):
            holder.append(entry.get("v"))
        else:
            holder[last] = entry.get("v")
        return None
    return "a change of a path that is not there"


def _child(holder: Any, key: Any) -> Any:
    if isinstance(holder, dict) and isinstance(key, str):
        return holder.get(key)
    if isinstance(holder, list) and isinstance(key, int) and 0 <= key < len(holder):
        return holder[key]
    return None


def _inside(folder: Path, root: Root) -> bool:
    """Whether a session's workspace folder is the source or in it (a source never leaves its folder)."""
    return root.path.is_dir() and (folder == root.path or root.path in folder.parents)


def _workspace(file: Path, root: Root) -> str | None:
    if not is_file(file) or not root.allows(file) or too_large(file, 1024 * 1024):
        return None
    value = json_file(file, root)
    return uri_path(value.get("folder") or value.get("workspace")) if isinstance(value, dict) else None


def _request(request: dict[str, Any], models: list[str]) -> list[Message]:
    """A request: the user's message, then the response's text, thinking and tool calls, then tool output."""
    timestamp = iso_utc(request.get("timestamp"))
    model = text_or_none(request.get("modelId"))
    if model and model not in models:
        models.append(model)
    message = request.get("message")
    asked = message.get("text") if isinstance(message, dict) else message
    found = [Message("user", asked.strip(), timestamp)] if isinstance(asked, str) and asked.strip() else []
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[ToolCall] = []
    outputs: list[str] = []
    parts = request.get("response")
    for part in parts if isinstance(parts, list) else []:
        kind = part.get("kind") if isinstance(part, dict) else None
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and kind is None and isinstance(part.get("value"), str):
            texts.append(part["value"])
        elif kind == "thinking" and isinstance(part.get("value"), str):
            thinking.append(part["value"].strip())
        elif kind == "toolInvocationSerialized":
            call, output = _tool(part)
            calls.append(call)
            outputs += [output] if output else []
        elif kind == "textEditGroup":
            edited = uri_path(_uri(part.get("uri")))
            calls.append(ToolCall("edit", files=[edited] if edited else []))
    if texts or calls or thinking:
        text = "".join(texts).strip()
        found.append(
            Message("assistant", text, timestamp, model, calls, thinking="\n\n".join(t for t in thinking if t))
        )
    return found + [Message("tool", "", timestamp, tool_output=output) for output in outputs]


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _uri(value: Any) -> Any:
    """A serialized URI (``{scheme, path, …}``) as ``file://`` text; text as it is."""
    if isinstance(value, dict) and isinstance(value.get("path"), str):
        return "file://" + value["path"] if value.get("scheme", "file") == "file" else value["path"]
    return value


def _tool(part: dict[str, Any]) -> tuple[ToolCall, str]:
    """A tool invocation: its call (name, files, command), and a terminal's output."""
    data = _mapping(part.get("toolSpecificData"))
    commands: list[str] = []
    output = ""
    if data.get("kind") == "terminal":
        line = data.get("commandLine")
        command = line.get("original") if isinstance(line, dict) else data.get("command")
        commands = [command.strip()] if isinstance(command, str) and command.strip() else []
        shown = _mapping(data.get("terminalCommandOutput")).get("text")
        output = shown.strip() if isinstance(shown, str) else ""
    files: list[str] = []
    details = part.get("resultDetails")
    for item in details if isinstance(details, list) else []:
        path = uri_path(_uri(item.get("uri") if isinstance(item, dict) and "uri" in item else item))
        files += [path] if path else []
    given = data.get("rawInput") if data.get("kind") == "input" else None
    files += [uri_path(file) or file for file in named_files(given if isinstance(given, dict) else {}, FILE_INPUTS)]
    return ToolCall(text_or_none(part.get("toolId")) or "tool", files=files, commands=commands), output


# --- the Copilot CLI ------------------------------------------------------------------------------


def _cli_session(file: Path) -> Session | None:
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
                    calls = [_cli_call(request) for request in requests if isinstance(request, dict)]
                    text = text_or_none(data.get("content")) or ""
                    thinking = text_or_none(data.get("reasoningText")) or ""
                    messages.append(Message("assistant", text, when, models[-1] if models else None, calls, thinking))
                elif kind == "tool.execution_complete":
                    content = _mapping(data.get("result")).get("content")
                    messages.append(
                        Message("tool", "", when, tool_output=content.strip() if isinstance(content, str) else "")
                    )
    except OSError as error:
        problems.append(f"{file.name}: not read ({error.strerror or error})")
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


def _cli_call(request: dict[str, Any]) -> ToolCall:
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
