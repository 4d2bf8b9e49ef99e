"""One VS Code chat session's data (``ISerializableChatData``, whichever file or key holds it) as a
session: its requests, their attachments, responses, tool calls and usage (see ``copilot`` for the
shapes and where they come from)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents.tool_edits import editor_call

KIND = "copilot"
FILE_INPUTS = ("filePath", "path", "file_path", "uri")
ATTACHED = ("image", "file", "notebookOutput")  # the variables that are attachments; the others are context


def chat_session(
    data: Any, key: str, project: str | None, files: list[Path], problems: list[str]
) -> agents.Session | None:
    """The session ``data`` holds (None: no requests, or nothing anyone wrote), keyed ``key``."""
    if not isinstance(data, dict) or not isinstance(data.get("requests"), list):
        return None
    messages: list[agents.Message] = []
    models: list[str] = []
    asked: list[str] = []
    for request in data["requests"]:
        if isinstance(request, dict):
            messages += _request(request, models, asked)
    if not any(message.text for message in messages):
        return None
    completed = [_mapping(_mapping(request).get("modelState")).get("completedAt") for request in data["requests"]]
    times = sorted(
        t
        for t in [
            agents.iso_utc(data.get("creationDate")),
            *(m.timestamp for m in messages),
            *map(agents.iso_utc, completed),
        ]
        if t
    )
    # VS Code once wrote a date a year back as lastMessageDate where it had none: never before the rest.
    latest = agents.iso_utc(data.get("lastMessageDate"))
    times += [latest] if latest and (not times or latest >= times[-1]) else []
    title = agents.text_or_none(data.get("customTitle")) or agents.text_or_none(data.get("computedTitle"))
    return agents.Session(
        key=key,
        agent=KIND,
        title=agents.short_title(title or next(iter(asked), "") or "Copilot chat"),
        messages=messages,
        project=project,
        models=models,
        started=times[0] if times else None,
        last=times[-1] if times else None,
        files=files,
        problems=problems,
    )


def _request(request: dict[str, Any], models: list[str], asked: list[str]) -> list[agents.Message]:
    """A request: the user's message (its attachments told in it), then the response's text, thinking
    and tool calls, then their output."""
    timestamp = agents.iso_utc(request.get("timestamp"))
    model = agents.text_or_none(request.get("modelId"))
    if model and model not in models:
        models.append(model)
    message = request.get("message")
    text = agents.text_or_none(message.get("text") if isinstance(message, dict) else message) or ""
    asked += [text] if text else []
    attached, marks = attachments(request.get("variableData"))
    shown = "\n\n".join(part for part in (text, " ".join(marks)) if part)
    found = [agents.Message("user", shown, timestamp, attachments=attached)] if shown else []
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[agents.ToolCall] = []
    outputs: list[str] = []
    arguments = _tool_arguments(request.get("result"))
    parts = request.get("response")
    for part in [parts] if isinstance(parts, str) else parts if isinstance(parts, list) else []:
        kind = part.get("kind") if isinstance(part, dict) else None
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and kind is None and isinstance(part.get("value"), str):
            texts.append(part["value"])
        elif kind == "inlineReference":
            texts.append(_reference(part))
        elif kind == "thinking" and isinstance(part.get("value"), str):
            thinking.append(part["value"].strip())
        elif kind == "toolInvocationSerialized":
            call, output = _tool(part, arguments)
            calls.append(call)
            outputs += [output] if output else []
        elif kind == "textEditGroup":
            calls.append(_edit_group(part))
    if texts or calls or thinking:
        reply = agents.Message("assistant", "".join(texts).strip(), timestamp, model, calls)
        reply.thinking = "\n\n".join(t for t in thinking if t)
        reply.usage = _usage(request.get("result"))
        found.append(reply)
    return found + [agents.Message("tool", "", timestamp, tool_output=output) for output in outputs]


def _edit_group(part: dict[str, Any]) -> agents.ToolCall:
    """The text edits a response made to one file (a ``textEditGroup``): each that put in whole lines
    is an edit of the file (a patch); any other (a range replaced, whose old text the log does not
    keep) stays in the call's input with its range."""
    edited = agents.uri_path(_uri(part.get("uri")))
    edits: list[agents.Edit] = []
    others: list[Any] = []
    groups = part.get("edits")
    for change in (change for group in _list(groups) for change in _list(group)):
        patch = _inserted_lines(change)
        if edited and patch:
            edits.append(agents.Edit(edited, patch=patch))
        elif change is not None:
            others.append(change)
    return agents.ToolCall(
        "edit",
        files=[edited] if edited else [],
        input=agents.call_input({"edits": others} if others else None),
        edits=edits,
    )


def _inserted_lines(change: Any) -> str | None:
    """A text edit that put whole lines in before a line (its range empty, at the line's start) as a
    patch; None for any other."""
    given = _mapping(change).get("text")
    place = _mapping(_mapping(change).get("range"))
    numbers = [place.get(key) for key in ("startLineNumber", "startColumn", "endLineNumber", "endColumn")]
    counted = [n for n in numbers if isinstance(n, int) and not isinstance(n, bool) and n > 0]
    if not (isinstance(given, str) and given.endswith("\n")) or len(counted) != len(numbers):
        return None
    line, column, end_line, end_column = counted
    if (column, end_line, end_column) != (1, line, 1):
        return None
    lines = given.splitlines()
    return "\n".join([f"@@ -{line - 1},0 +{line},{len(lines)} @@", *(f"+{piece}" for piece in lines)])


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def attachments(variable_data: Any) -> tuple[list[agents.Attachment], list[str]]:
    """The images and files a request attached (its ``variableData``), and the placeholders of those its
    text does not name already (those typed into it, as ``#file:x``, have a ``range``)."""
    variables = _mapping(variable_data).get("variables")
    found: list[agents.Attachment] = []
    marks: list[str] = []
    for variable in variables if isinstance(variables, list) else []:
        if not isinstance(variable, dict) or variable.get("kind") not in ATTACHED:
            continue
        item = _attachment(variable)
        if item is None:
            continue
        found.append(item)
        if not isinstance(variable.get("range"), dict):
            marks.append(item.placeholder())
    return found, marks


def _attachment(variable: dict[str, Any]) -> agents.Attachment | None:
    """An attached variable as an attachment: an image (its data measured, never kept), a file, or a
    notebook cell's output that is an image; None for another output."""
    kind = variable.get("kind")
    value = variable.get("value")
    located = value.get("uri") if isinstance(value, dict) and "uri" in value else value  # a Location: {uri, range}
    path = agents.uri_path(_uri(located)) if kind != "image" else None
    name = agents.text_or_none(variable.get("name")) or (path.rsplit("/", 1)[-1] if path else None)
    media = agents.text_or_none(variable.get("mimeType"))
    if kind == "file":
        return agents.attachment(media or "file", name)
    if kind == "notebookOutput" and not (media or "").startswith("image"):
        return None
    if isinstance(value, dict) and isinstance(value.get("$base64"), str):  # VS Code's export of the bytes
        return agents.attachment(media or "image", name, data=value["$base64"])
    if isinstance(value, str):
        return agents.attachment(media or "image", name, data=value)
    # JSON.stringify of a Uint8Array: {"0": 137, "1": 80, …}; of a plain array: [137, 80, …]
    size = None
    if isinstance(value, list) or (isinstance(value, dict) and all(str(key).isdigit() for key in value)):
        size = len(value)
    return agents.attachment(media or "image", name, size)


def _usage(result: Any) -> agents.Usage | None:
    """The tokens Copilot Chat keeps of a request (its ``result.metadata``): the prompt (the cached
    share not told apart) and the output of the turn's last model call."""
    metadata = _mapping(_mapping(result).get("metadata"))
    return agents.usage(input=metadata.get("promptTokens"), output=metadata.get("outputTokens"))


def _reference(part: dict[str, Any]) -> str:
    """An inline reference as a Markdown link: what VS Code shows of it (its name in backticks, else
    the file's name) linked to the file it names; the name alone where it names no file."""
    name = agents.text_or_none(part.get("name"))
    reference = _mapping(part.get("inlineReference"))
    path = agents.uri_path(_uri(reference.get("uri") if "uri" in reference else reference))
    shown = f"`{name}`" if name else path.rsplit("/", 1)[-1] if path else ""
    if not (path and shown):
        return shown
    return f"[{shown}](<{path}>)" if any(c in path for c in " ()<>") else f"[{shown}]({path})"


def workspace_folder(folder: Path, root: agents.Root) -> str | None:
    """The folder a workspace's storage folder is for (the ``folder`` of its ``workspace.json``), where
    that storage folder is the source, is in it, or holds the one file that is the source (its
    ``state.vscdb``): a source never leaves its folder."""
    if root.named is not None:
        if folder != root.path.parent:
            return None
    elif not (folder == root.path or root.path in folder.parents):
        return None
    file = folder / "workspace.json"
    if not agents.is_file(file) or not root.allows(file) or agents.too_large(file, 1024 * 1024):
        return None
    value = agents.json_file(file, root)
    return agents.uri_path(value.get("folder") or value.get("workspace")) if isinstance(value, dict) else None


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _uri(value: Any) -> Any:
    """A serialized URI (``{scheme, path, …}``) as ``file://`` text; text as it is."""
    if isinstance(value, dict) and isinstance(value.get("path"), str):
        return "file://" + value["path"] if value.get("scheme", "file") == "file" else value["path"]
    return value


def _tool_arguments(result: Any) -> dict[str, tuple[str, Any]]:
    """The name and the arguments (JSON text) of each tool call of a response, by its id, from its
    ``result.metadata.toolCallRounds``."""
    found: dict[str, tuple[str, Any]] = {}
    rounds = _mapping(_mapping(result).get("metadata")).get("toolCallRounds")
    for round_ in rounds if isinstance(rounds, list) else []:
        calls = _mapping(round_).get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            call = _mapping(call)
            if isinstance(call.get("id"), str) and isinstance(call.get("name"), str):
                found[call["id"]] = (call["name"], call.get("arguments"))
    return found


def _tool(part: dict[str, Any], arguments: dict[str, tuple[str, Any]]) -> tuple[agents.ToolCall, str]:
    """A tool invocation: its call (name, files, command; its input and edits from the arguments
    its round gave, by ``toolCallId``, else its ``rawInput``), and a terminal's output."""
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
        path = agents.uri_path(_uri(item.get("uri") if isinstance(item, dict) and "uri" in item else item))
        files += [path] if path else []
    given = data.get("rawInput") if data.get("kind") == "input" else None
    files += [
        agents.uri_path(file) or file
        for file in agents.named_files(given if isinstance(given, dict) else {}, FILE_INPUTS)
    ]
    name = agents.text_or_none(part.get("toolId")) or "tool"
    called, given = arguments.get(str(part.get("toolCallId")), (name, given))
    call = editor_call(called, given, list(dict.fromkeys(files)), commands)
    call.name = name
    return call, output
