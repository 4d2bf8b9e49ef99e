"""Continue's chat sessions, read in place: one session per ``sessions/<id>.json``.

Continue (the VS Code and JetBrains extension, and its ``cn`` command line) keeps each
session in ``~/.continue/sessions/<session id>.json`` (``$CONTINUE_GLOBAL_DIR`` moves
``~/.continue``) and their list in ``sessions/sessions.json``, as its ``HistoryManager``
writes them (continuedev/continue ``core/util/history.ts``, ``core/util/paths.ts``; the
types in ``core/index.d.ts``). The source is ``~/.continue``, its ``sessions`` folder, or
one session file.

- A session: ``title``, ``workspaceDirectory`` (a ``file://`` URI from an editor, a path
  from the command line: the project), ``chatModelTitle`` and the prompt logs' model titles
  (the models), and ``history``: items of a ``message`` (``role`` user, assistant,
  thinking, tool or system; ``content`` a string or parts, an image part an attachment,
  ``[image]`` in the text), an assistant's ``toolCalls`` (a function's name and JSON
  arguments: the files its ``filepath``, ``file_path``, ``dirPath`` or ``path`` name, the
  ``command`` it runs) and ``usage``, its ``reasoning`` (thinking), and ``toolCallStates``
  whose output the command line keeps there rather than in a ``tool`` message.
- Times: messages carry none but their reasoning's (``startAt``, Unix ms). A session starts at
  its ``dateCreated`` in ``sessions.json`` (ms, as a string) and ends at its last reasoning's
  end, else where it starts: never at the file's modification time.
- The title: the session's, else (Continue's default "New Session") the first request.
- Usage: an assistant message's ``usage`` is that answer's (OpenAI's counts: ``promptTokens``
  counts ``promptTokensDetails.cachedTokens``). The command line also keeps the session's
  ``usage`` (``extensions/cli/src/session.ts``: every model call's counts added up, those no
  message keeps too, such as a compaction's, and ``totalCost``, the dollars it priced them
  at). What it counts beyond its messages' usage, and its cost, are put on the session's last
  assistant message: the totals by day are the log's, their split among the session's
  answers is not known where no message says it.

- Context items (``contextItems``: a file, a selection, a page the person attached to a request)
  are attachments of its message, named by their file's path (``uri.value``), else their
  ``description`` or ``name``, ``[file: …]`` in the text; their ``content`` is that message's
  output (each under its name), kept out of the default search.

Skipped: the editor's state, the prompt logs' prompts. The sessions of Continue's first, Python server
(``session_state``) are not read, and said so. A file that is not JSON, or nested too
deeply, is told in the problems; one over 1 GB is not read. Nothing is ever written.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents.tool_edits import parsed_arguments, with_input

KIND = "continue"
EXPECTED = "Continue's folder (~/.continue), its sessions folder, or one session's .json"
LIST = "sessions.json"
DEFAULT_TITLE = "New Session"
FILE_ARGUMENTS = ("filepath", "file_path", "filePath", "dirPath", "dirpath", "directory_path", "path")


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of Continue's sessions (a sentence), or None."""
    path = Path(path).expanduser()
    if not path.exists():
        return f"{path} does not exist: expected {EXPECTED}."
    if path.is_file():
        return None if _looks_like_session(path) else f"{path} is not a Continue session: expected {EXPECTED}."
    if not _session_files(agents.Root(path)):
        return f"{path} holds no Continue session (sessions/<id>.json): expected {EXPECTED}."
    return None


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every session under ``path``, in the order of their ids."""
    problems = problems if problems is not None else []
    root = agents.Root(Path(path).expanduser(), problems)
    files = [root.path] if root.path.is_file() else _session_files(root)
    listed = _listed(files[0].parent / LIST, root) if files else {}
    for file in files:
        session = _session(file, root, listed.get(file.stem, {}), problems)
        if session is not None:
            yield session


def _sessions_folder(root: agents.Root) -> Path:
    folder = root.path / "sessions"
    return folder if agents.is_dir(folder) and root.allows(folder) else root.path


def _session_files(root: agents.Root) -> list[Path]:
    return [file for file in root.files(_sessions_folder(root), ".json") if file.name != LIST]


def _looks_like_session(file: Path) -> bool:
    value = agents.json_file(file, agents.Root(file))
    return isinstance(value, dict) and ("history" in value or "session_state" in value)


def _listed(file: Path, root: agents.Root) -> dict[str, dict[str, Any]]:
    """The sessions' list (``sessions.json``): each entry by session id."""
    entries = agents.json_file(file, root)
    return {
        str(entry["sessionId"]): entry
        for entry in (entries if isinstance(entries, list) else [])
        if isinstance(entry, dict) and isinstance(entry.get("sessionId"), str)
    }


def _session(file: Path, root: agents.Root, entry: dict[str, Any], problems: list[str]) -> agents.Session | None:
    own: list[str] = []
    value = agents.json_file(file, root)
    if isinstance(value, dict) and "session_state" in value:
        problems.append(f"{file.name}: a session of Continue's first (Python) server, not read")
        return None
    if not isinstance(value, dict) or not isinstance(value.get("history"), list):
        problems.extend(own or [f"{file.name}: not a Continue session (no history)"])
        return None
    models = [text for text in [agents.text_or_none(value.get("chatModelTitle"))] if text]
    messages: list[agents.Message] = []
    answered = {
        item["message"]["toolCallId"]
        for item in value["history"]
        if isinstance(item, dict)
        and isinstance(item.get("message"), dict)
        and item["message"].get("role") == "tool"
        and isinstance(item["message"].get("toolCallId"), str)
    }
    skipped = agents.read_items(value["history"], lambda item: _messages(item, answered, models), messages)
    if skipped:
        own.append(f"{skipped} item(s) of no known shape skipped")
    if not any(message.text for message in messages):
        problems.append(f"{file.name}: no message to read")
        return None
    _session_usage(value.get("usage"), messages)
    started = agents.iso_utc(entry.get("dateCreated"))
    times = sorted(time for time in [started, *(message.timestamp for message in messages)] if time)
    title = agents.text_or_none(value.get("title"))
    first = next((message.text for message in messages if message.role == "user" and message.text), "")
    return agents.Session(
        key=file.stem,
        agent=KIND,
        title=agents.short_title(first) if title in (None, DEFAULT_TITLE) else agents.short_title(title or ""),
        messages=messages,
        project=agents.uri_path(value.get("workspaceDirectory") or entry.get("workspaceDirectory")),
        models=models,
        started=started or (times[0] if times else None),
        last=times[-1] if times else None,
        files=[file],
        problems=own,
    )


def _messages(item: dict[str, Any], answered: set[Any], models: list[str]) -> list[agents.Message] | None:
    """One history item's messages (its tool results kept by the command line follow it); None: no known shape."""
    message = item.get("message")
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant", "thinking", "tool", "system"):
        return None
    for log in _list(item.get("promptLogs")):
        model = agents.text_or_none(log.get("modelTitle")) if isinstance(log, dict) else None
        if model and model not in models:
            models.append(model)
    attached: list[agents.Attachment] = []
    role, text = message["role"], _content(message.get("content"), attached)
    given = item.get("reasoning")
    reasoning: dict[str, Any] = given if isinstance(given, dict) else {}
    timestamp = agents.iso_utc(reasoning.get("startAt"))
    context = _context(item.get("contextItems"))
    if role == "tool":
        return [_with_context(agents.Message("tool", "", timestamp, tool_output=text), *context)]
    if role == "thinking":
        return (
            [_with_context(agents.Message("assistant", "", timestamp, thinking=text), *context)]
            if text or context[0]
            else []
        )
    if role != "assistant":
        return [_with_context(agents.Message(role, text, timestamp, attachments=attached), *context)]
    calls = [_call(call) for call in _list(message.get("toolCalls")) if isinstance(call, dict)]
    thinking = agents.text_or_none(reasoning.get("text")) or ""
    found = [
        agents.Message(
            "assistant",
            text,
            agents.iso_utc(reasoning.get("endAt")) or timestamp,
            tool_calls=calls,
            thinking=thinking,
            attachments=attached,
            usage=_usage(message.get("usage")),
        )
    ]
    _with_context(found[0], *context)
    for state in _list(item.get("toolCallStates")):
        if (
            isinstance(state, dict)
            and not (isinstance(state.get("toolCallId"), str) and state["toolCallId"] in answered)
            and isinstance(state.get("output"), list)
        ):
            output = "\n\n".join(_content(part.get("content")) for part in state["output"] if isinstance(part, dict))
            found.append(agents.Message("tool", "", tool_output=output.strip()))
    return found


def _context(items: Any) -> tuple[list[agents.Attachment], str]:
    """The context items attached to a request: each an attachment (named by its file's path, else
    its URI, description or name; sized by its text), and their texts, each under its name."""
    found: list[agents.Attachment] = []
    texts: list[str] = []
    for item in _list(items):
        if not isinstance(item, dict):
            continue
        uri = item.get("uri")
        located = agents.text_or_none(uri.get("value")) if isinstance(uri, dict) else None
        name = (
            (agents.uri_path(located) if located else None)
            or agents.text_or_none(item.get("description"))
            or agents.text_or_none(item.get("name"))
        )
        given = item.get("content")
        content = given if isinstance(given, str) else ""
        if not (name or content.strip()):
            continue
        found.append(agents.attachment("file", name, len(content.encode("utf-8", "replace")) if content else None))
        if content.strip():
            texts.append(f"{name or 'context'}:\n{content.strip()}")
    return found, "\n\n".join(texts)


def _with_context(message: agents.Message, context: list[agents.Attachment], texts: str) -> agents.Message:
    """``message`` with the context items of its request told in its text (their placeholders) and
    their texts kept as its output, out of the default search."""
    if context:
        message.attachments += context
        marks = " ".join(item.placeholder() for item in context)
        message.text = "\n\n".join(part for part in (message.text, marks) if part)
    message.tool_output = "\n\n".join(part for part in (message.tool_output, texts) if part)
    return message


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _content(content: Any, attached: list[agents.Attachment] | None = None) -> str:
    """A message's text: a string, or its parts (an image part as ``[image]``, never its data:
    it is added to ``attached``)."""
    if isinstance(content, str):
        return content.strip()
    parts = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
            parts.append(part["text"])
        elif isinstance(part, dict) and part.get("type") == "imageUrl":
            found = agents.url_attachment(part.get("imageUrl"))
            if attached is not None:
                attached.append(found)
            parts.append(found.placeholder())
    return "\n\n".join(parts).strip()


def _usage(given: Any) -> agents.Usage | None:
    """An assistant message's ``usage``, which Continue keeps as OpenAI's usage object is
    (``core/index.d.ts``: ``promptTokens`` counts the ``promptTokensDetails.cachedTokens``;
    ``cacheWriteTokens`` is Anthropic's, apart)."""
    if not isinstance(given, dict):
        return None
    details = given.get("promptTokensDetails")
    details = details if isinstance(details, dict) else {}
    cached = agents.whole_count(details.get("cachedTokens"))
    return agents.usage(
        input=max(0, agents.whole_count(given.get("promptTokens")) - cached),
        output=given.get("completionTokens"),
        cache_write=details.get("cacheWriteTokens"),
        cache_read=cached,
    )


def _session_usage(given: Any, messages: list[agents.Message]) -> None:
    """The session's ``usage`` (the command line's): what it counts beyond its answers' usage,
    and its ``totalCost``, added to its last assistant message."""
    total = _usage(given)
    answers = [message for message in messages if message.role == "assistant"]
    if not isinstance(given, dict) or not answers:
        return
    held = sum((message.usage for message in answers if message.usage), agents.Usage())
    total = total or agents.Usage()
    rest = agents.usage(
        input=max(0, total.input - held.input),
        output=max(0, total.output - held.output),
        cache_write=max(0, total.cache_write - held.cache_write),
        cache_read=max(0, total.cache_read - held.cache_read),
        cost=given.get("totalCost"),
    )
    if rest is not None:
        answers[-1].usage = (answers[-1].usage or agents.Usage()) + rest


def _call(call: dict[str, Any]) -> agents.ToolCall:
    given = call.get("function")
    function: dict[str, Any] = given if isinstance(given, dict) else {}
    given = parsed_arguments(function.get("arguments"))  # (within the depth budget)
    arguments = given if isinstance(given, dict) else {}
    command = arguments.get("command")
    found = agents.ToolCall(
        name=agents.text_or_none(function.get("name")) or "tool",
        files=agents.named_files(arguments, FILE_ARGUMENTS),
        commands=[command.strip()] if isinstance(command, str) and command.strip() else [],
    )
    return with_input(found, given)
