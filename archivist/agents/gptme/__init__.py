"""gptme's conversations: one folder each under its logs folder, ``<logs>/<name>/conversation.jsonl``.

gptme (gptme/gptme: ``gptme/message.py``, ``gptme/logmanager.py``, ``gptme/config/chat.py``,
``gptme/tools/base.py``) keeps each conversation in a folder of its logs folder
(``~/.local/share/gptme/logs`` on Linux, ``~/Library/Application Support/gptme/logs`` on macOS,
``AppData/Local/gptme/gptme/logs`` on Windows; moved by ``GPTME_LOGS_HOME``). Its
``conversation.jsonl`` holds one message a line as ``Message.to_dict`` writes it: ``role``
(``system``, ``user``, ``assistant``), ``content`` (Markdown), ``timestamp`` (ISO 8601 in the
machine's local time, with no offset: read as UTC), and where set ``files`` (paths attached),
``pinned``, ``hide``, ``call_id`` and ``metadata`` (``model``, ``cost`` in USD and ``usage``:
``input_tokens``, ``output_tokens``, ``cache_read_tokens``, ``cache_creation_tokens``; older
versions wrote the token counts beside ``model``). The folder's ``config.toml`` (``[chat]``) names
the conversation (``name``), its ``model`` and its ``workspace``, the project.

gptme's tools are run from what the assistant writes, in one of three forms: a Markdown code
block whose language is the tool and whose info string its arguments (```` ```shell ````,
```` ```save src/app.py ````, ```` ```patch src/app.py ````); the ``tool`` form, a line
``@name(call_id): {json}``; or the XML form, ``<tool-use><name args="…">…</name></tool-use>``.
Each is a tool call of the message, and leaves its text: a shell block's command is a command,
a ``save`` the file written whole, a ``patch``'s ``<<<<<<< ORIGINAL`` / ``=======`` /
``>>>>>>> UPDATED`` blocks edits, a ``read``, ``append`` or ``save``'s argument a file. The
output of a tool is a ``system`` message written after the assistant's: such a message, after an
assistant message that made calls, is a tool message; any other is a system message, but the
system prompt (the hidden system messages before the first user message), which is left out.

A line that is not JSON, or not a message, is skipped and told in the session's problems.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents.tool_edits import editor_call

KIND = "gptme"
EXPECTED = "gptme's logs folder (~/.local/share/gptme/logs), one conversation's folder, or its conversation.jsonl"
CONVERSATION = "conversation.jsonl"
CONFIG = "config.toml"
ROLES = ("system", "user", "assistant")
NO_MESSAGE = "a line that is no message (an object with a role and content)"
CONFIG_BYTES = 1024 * 1024
# the Markdown blocks that gptme runs as tools, by their language
TOOL_BLOCKS = frozenset({"shell", "ipython", "save", "append", "patch", "read", "tmux", "gh", "morph", "computer"})
_FENCE_RE = re.compile(r"^```([A-Za-z][\w.-]*)(?:[ \t]+([^\n]*))?[ \t]*$", re.MULTILINE)
_CLOSE_RE = re.compile(r"^```[ \t]*$", re.MULTILINE)
_AT_CALL_RE = re.compile(r"^@(\w+)\(([\w\-:.]+)\):[ \t]*(?=\{)", re.MULTILINE)
_XML_OPEN_RE = re.compile(r"<tool-use>\s*<(\w+)(?:\s+args=(\"[^\"\n]*\"|'[^'\n]*'))?\s*>")
_PATCH_RE = re.compile(r"^<{7} ORIGINAL[^\n]*\n(.*?)^={7}[^\n]*\n(.*?)^>{7} UPDATED[^\n]*$", re.MULTILINE | re.DOTALL)
JSON_SCAN = 4 * 1024 * 1024  # a tool-form call's JSON is looked for in this many characters


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of gptme's conversations (a sentence), or None."""
    path = Path(path).expanduser()
    if (reason := agents.no_source(path, EXPECTED)) is not None:
        return reason
    if not agents.is_dir(path):
        if path.suffix == ".jsonl" and agents.first_value_is(path, _is_message):
            return None
        return f"{path} is not a gptme conversation: expected {EXPECTED}."
    files = conversations(agents.Root(path))
    if not files:
        return f"{path} holds no conversation (<name>/{CONVERSATION}): expected {EXPECTED}."
    if not agents.first_value_is(files[0], _is_message):
        return f"{files[0]} is not a gptme conversation: expected {EXPECTED}."
    return None


def conversations(root: agents.Root) -> list[Path]:
    """The conversation files of a source that is a folder: its own, or each of its folders'."""
    own = root.path / CONVERSATION
    if agents.is_file(own) and root.allows(own):
        return [own]
    found = []
    for folder in root.folders(root.path):
        file = folder / CONVERSATION
        if not folder.is_symlink() and agents.is_file(file) and root.allows(file):
            found.append(file)
    return found


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and value.get("role") in ROLES and isinstance(value.get("content"), str)


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every conversation under ``path``, in the order of its folders' names."""
    problems = problems if problems is not None else []
    root = agents.Root(Path(path).expanduser(), problems)
    files = [root.path] if root.named is not None else conversations(root) if agents.is_dir(root.path) else []
    for file in files:
        session = _session(file, root, problems)
        if session is not None:
            yield session


def _config(folder: Path, root: agents.Root) -> dict[str, Any]:
    """The ``[chat]`` table of a conversation's ``config.toml`` ({} where there is none to read)."""
    file = folder / CONFIG
    if not agents.is_file(file) or not root.allows(file) or agents.too_large(file, CONFIG_BYTES):
        return {}
    try:
        chat = tomllib.loads(file.read_bytes().decode("utf-8", "replace")).get("chat")
    except (OSError, tomllib.TOMLDecodeError, RecursionError):
        return {}
    return chat if isinstance(chat, dict) else {}


def _session(file: Path, root: agents.Root, unread: list[str]) -> agents.Session | None:
    """The session of one conversation file; None where it holds no message, or where its reading
    stopped (told in ``unread`` as Unread)."""
    chat = _config(file.parent, root)
    messages: list[agents.Message] = []
    skipped: dict[str, int] = {}
    models: list[str] = []
    try:
        with file.open("rb") as handle:
            for record in agents.json_lines_that(handle, skipped, _is_message, NO_MESSAGE):
                _record(record, messages, models)
    except OSError as error:
        unread.append(agents.Unread(f"{file.parent.name}/{file.name}: reading stopped ({error.strerror or error})"))
        return None
    if not messages:
        return None
    configured = agents.text_or_none(chat.get("model"))
    if configured and not models:
        models.append(configured)
    times = sorted(message.timestamp for message in messages if message.timestamp)
    requests = [message.text for message in messages if message.role == "user" and message.text]
    name = agents.text_or_none(chat.get("name"))
    workspace = chat.get("workspace")
    return agents.Session(
        key=file.parent.name,
        agent=KIND,
        title=agents.short_title(name or (requests[0] if requests else file.parent.name)),
        messages=messages,
        project=agents.text_or_none(workspace),
        models=models,
        started=times[0] if times else None,
        last=times[-1] if times else None,
        files=[file, *([file.parent / CONFIG] if chat else [])],
        problems=agents.skipped_problems(skipped),
        titled=bool(name),
    )


def _record(record: dict[str, Any], messages: list[agents.Message], models: list[str]) -> None:
    """One line's message added to ``messages``."""
    role: str = record["role"]
    content: str = record["content"]
    when = agents.iso_utc(record.get("timestamp"))
    if role == "system":
        if record.get("hide") and not any(message.role == "user" for message in messages):
            return  # the system prompt
        after_calls = bool(messages) and messages[-1].role in ("assistant", "tool") and _calls_before(messages)
        if after_calls:
            messages.append(agents.Message("tool", "", when, tool_output=content))
        elif content.strip():
            messages.append(agents.Message("system", content.strip(), when))
        return
    if role == "user":
        attached = [agents.attachment("file", name) for name in _files(record.get("files"))]
        messages.append(agents.Message("user", content.strip(), when, attachments=attached))
        return
    given = record.get("metadata")
    metadata: dict[str, Any] = given if isinstance(given, dict) else {}
    model = agents.text_or_none(metadata.get("model"))
    if model and model not in models:
        models.append(model)
    text, calls = tool_calls(content)
    messages.append(agents.Message("assistant", text, when, model, calls, usage=_usage(metadata)))


def _calls_before(messages: list[agents.Message]) -> bool:
    """Whether the last assistant message, before the tool messages that follow it, made calls."""
    for message in reversed(messages):
        if message.role == "assistant":
            return bool(message.tool_calls)
        if message.role != "tool":
            return False
    return False


def _files(value: Any) -> list[str]:
    return [name for name in value if isinstance(name, str) and name.strip()] if isinstance(value, list) else []


def _usage(metadata: dict[str, Any]) -> agents.Usage | None:
    """A reply's tokens and cost: ``metadata.usage``, or the older counts beside the model."""
    nested = metadata.get("usage")
    counts: dict[str, Any] = nested if isinstance(nested, dict) else metadata
    return agents.usage(
        counts.get("input_tokens"),
        counts.get("output_tokens"),
        counts.get("cache_creation_tokens"),
        counts.get("cache_read_tokens"),
        metadata.get("cost"),
    )


def tool_calls(content: str) -> tuple[str, list[agents.ToolCall]]:
    """An assistant's text without the tools it ran, and their calls, in the order written."""
    found: list[tuple[int, int, agents.ToolCall]] = [*_blocks(content), *_at_calls(content), *_xml_calls(content)]
    found.sort(key=lambda item: item[0])
    kept: list[str] = []
    calls: list[agents.ToolCall] = []
    position = 0
    for start, end, call in found:
        if start < position:
            continue  # (a call written inside another's text)
        kept.append(content[position:start])
        calls.append(call)
        position = end
    kept.append(content[position:])
    return "".join(kept).strip(), calls


def _blocks(content: str) -> Iterator[tuple[int, int, agents.ToolCall]]:
    """The Markdown code blocks that are tools: each one's span and call."""
    position = 0
    while (opening := _FENCE_RE.search(content, position)) is not None:
        closing = _CLOSE_RE.search(content, opening.end())
        if closing is None:
            return
        position = closing.end()
        if opening[1] in TOOL_BLOCKS:
            body = content[opening.end() + 1 : closing.start()].removesuffix("\n")
            yield opening.start(), closing.end(), _call(opening[1], (opening[2] or "").strip(), body)


def _at_calls(content: str) -> Iterator[tuple[int, int, agents.ToolCall]]:
    """The calls in the ``tool`` form, ``@name(call_id): {json}``: each one's span and call."""
    for opening in _AT_CALL_RE.finditer(content):
        end = _json_end(content, opening.end())
        if end is None:
            continue
        try:
            arguments = agents.json_value(content[opening.end() : end])
        except agents.NotJSON:
            continue
        yield opening.start(), end, _named_call(opening[1], arguments)


def _xml_calls(content: str) -> Iterator[tuple[int, int, agents.ToolCall]]:
    """The calls in the XML form, ``<tool-use><name args="…">…</name></tool-use>``."""
    position = 0
    while (opening := _XML_OPEN_RE.search(content, position)) is not None:
        closing = content.find(f"</{opening[1]}>", opening.end())
        if closing == -1:
            position = opening.end()
            continue
        end = content.find("</tool-use>", closing)
        end = end + len("</tool-use>") if end != -1 else closing + len(opening[1]) + 3
        position = end
        body = content[opening.end() : closing].strip("\n")
        yield opening.start(), end, _call(opening[1], (opening[2] or "''")[1:-1].strip(), body)


def _json_end(text: str, start: int) -> int | None:
    """Where the JSON object opening at ``start`` ends, by its braces outside strings; None if it never does."""
    depth = 0
    in_string = escaped = False
    for index in range(start, min(len(text), start + JSON_SCAN)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def _call(tool: str, argument: str, body: str) -> agents.ToolCall:
    """A tool run from a code block (or an XML element): its language, its argument and its text."""
    if tool == "shell":
        return agents.ToolCall(tool, commands=[body.strip()] if body.strip() else [])
    if tool == "save" and argument:
        written = agents.text_edit(argument, None, body)
        return agents.ToolCall(tool, [argument], edits=[written] if written else [])
    if tool == "patch" and argument:
        edits = [
            edit
            for old, new in _PATCH_RE.findall(body)
            if (edit := agents.text_edit(argument, old.removesuffix("\n"), new.removesuffix("\n"))) is not None
        ]
        return agents.ToolCall(tool, [argument], edits=edits, input="" if edits else agents.call_input({"patch": body}))
    given = {key: value for key, value in (("args", argument), ("content", body)) if value}
    return agents.ToolCall(
        tool, [argument] if argument and tool in ("read", "append") else [], input=agents.call_input(given)
    )


def _named_call(tool: str, arguments: Any) -> agents.ToolCall:
    """A tool run in the ``tool`` form, from its name and JSON arguments."""
    given = arguments if isinstance(arguments, dict) else {}
    path = agents.text_or_none(given.get("path"))
    if tool == "shell" and isinstance(given.get("command"), str):
        return _call(tool, "", given["command"])
    text = given.get("content", given.get("patch"))
    if tool in ("save", "patch") and path and isinstance(text, str):
        return _call(tool, path, text)
    return editor_call(tool, arguments, [path] if path else [])
