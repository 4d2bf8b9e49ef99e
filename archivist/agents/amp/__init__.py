"""Amp's threads, read in place: one session per thread file (docs/contract.md: sources).

Amp (Sourcegraph's coding agent, ampcode.com) is closed source. Its CLI and editor
extensions kept every thread as one JSON document, ``~/.local/share/amp/threads/T-<uuid>.json``
(``$XDG_DATA_HOME`` moves ``~/.local/share``), rewritten whole as the thread grows. The shape
below is the one public readers of those files agree on (wesm/agentsview
``internal/parser/amp.go``; block/thread-manager-for-amp ``server/lib/threadTypes.ts``;
ccusage ``rust/adapters/amp/src/parser.rs``; getagentseal/codeburn ``src/providers/amp.ts``):

- the thread: ``id`` (``T-<uuid>``, the key; a second file of the same id is keyed
  ``<id>@<its path>``), ``title``, ``created`` (Unix ms),
  ``env.initial.trees[]`` (the workspace: a ``file://`` ``uri`` and a ``displayName``; its
  ``repository``'s ``ref``, the branch),
  ``messages``;
- a message: ``role`` (``user``, ``assistant``, ``info``), ``content`` (a string or
  Anthropic-style blocks: ``text``, ``thinking``, ``redacted_thinking``, ``image`` with a
  base64 ``source``, ``tool_use`` with ``name`` and ``input``, and ``tool_result`` with
  ``toolUseID`` and the tool's ``run``: ``status``, ``result``, ``progress``, ``error``);
  a user message's ``meta.sentAt`` (Unix ms); an assistant message's ``usage``: ``model``,
  ``inputTokens`` (the prompt not read from the cache), ``outputTokens``,
  ``cacheCreationInputTokens``, ``cacheReadInputTokens``, ``timestamp`` (ISO).

What is read: the person's text (an image is an attachment named by its ``sourcePath``, the
file it was attached from, ``[image: …]`` in the text), the
assistant's text, its thinking apart, its tool calls with the files (``path``, ``filePath``,
``file_path``, ``paths``) and commands (``cmd``, ``command``) of their input, its model and
token usage (each assistant message is one model response); each tool result is a tool
message whose output is the run's result (its text, else its ``output`` or ``content``,
else the result as JSON; an image in it is an attachment, named by its placeholder), else
its progress or error. A tool use has one tool message: a ``tool_result`` whose ``toolUseID``
an earlier block already gave (the same run written again in a later user message, or twice
in one) adds none, and what it says, the run's later state, replaces what the first said. A session starts and ends at its messages' own times, else at the
thread's ``created``.

An ``info`` message (Amp's note in the thread) is a system message of its texts and its
summaries (``summary.summary``), each said to be Amp's summary. Skipped: redacted thinking, the thread's ``usageLedger`` (the billing events: the assistant messages' usage
already counts each response once, and the ledger's other events show no message), its
``meta.traces`` and ``relationships``. A file that is not JSON, nested too deeply or not a
thread is told in the problems; one over 1 GB is not read.

Since spring 2026 Amp keeps threads on its own servers: newer versions leave no thread
document in ``threads/`` (only ``.log`` files under ``~/.cache/amp/logs``, written on demand,
not the conversation). A folder holding only those is not a source, and ``check`` says so:
what was recorded before is read; what Amp keeps only on its servers cannot be. A folder of
thread documents in another place (the VS Code extension's former ``threads3`` folder in its
``globalStorage``) can be named as the source. Nothing is ever written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist.agents import (
    Attachment,
    Message,
    Root,
    Session,
    ToolCall,
    attachment,
    attachments_of,
    file_key,
    is_dir,
    iso_utc,
    json_file,
    named_files,
    read_items,
    relative_path,
    short_title,
    text_or_none,
    uri_path,
    usage,
)
from archivist.agents.tool_edits import editor_call

KIND = "amp"
EXPECTED = (
    "expected Amp's data folder (~/.local/share/amp), its threads folder of T-<id>.json files, or one thread's .json"
)
THREADS = "threads"
FILE_KEYS = ("path", "filePath", "file_path", "paths", "filePaths")
COMMAND_KEYS = ("cmd", "command")
SUMMARY = "Amp's summary of the thread so far"
MAX_OUTPUT_CHARS = 1_000_000  # a tool result that is no text is kept as JSON up to this


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of Amp's threads (a sentence), or None."""
    path = Path(path).expanduser()
    if not path.exists():
        return f"{path} does not exist: {EXPECTED}."
    if path.is_file():
        return None if _is_thread(json_file(path, Root(path))) else f"{path} is not an Amp thread: {EXPECTED}."
    root = Root(path)
    files = _thread_files(root)
    if files:
        return None
    folder = _threads_folder(root)
    if any(file.suffix == ".log" for file in root.files(folder)):
        return (
            f"{folder} holds only .log files, no thread document: newer Amp versions keep threads on Amp's servers "
            f"and leave no conversation here to read; {EXPECTED}."
        )
    return f"{path} holds no Amp thread (T-<id>.json): {EXPECTED}."


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Every thread under ``path``, one session each, in the order of their file names."""
    problems = problems if problems is not None else []
    root = Root(Path(path).expanduser(), problems)
    files = [root.path] if root.path.is_file() else _thread_files(root)
    used: set[str] = set()  # the keys given: a thread's id in two files (a copy) keys the second by its path
    for file in files:
        relative = file.name if root.named else relative_path(file, root.path)
        session = _session(file, root, problems, relative, used)
        if session is not None:
            used.add(session.key)
            yield session


def _threads_folder(root: Root) -> Path:
    folder = root.path / THREADS
    return folder if is_dir(folder) and root.allows(folder) else root.path


def _thread_files(root: Root) -> list[Path]:
    return root.files(_threads_folder(root), ".json")


def _is_thread(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("messages"), list) and "id" in value


# -- one thread ----------------------------------------------------------------------------------


def _session(file: Path, root: Root, problems: list[str], relative: str, used: set[str]) -> Session | None:
    before = len(root.problems)
    value = json_file(file, root)
    if not _is_thread(value):
        if len(root.problems) == before:  # (not JSON, too deep or too large: told by json_file)
            problems.append(f"{file.name}: not an Amp thread (no id and messages)")
        return None
    messages: list[Message] = []
    models: list[str] = []
    results: dict[str, Message] = {}  # each tool use's result given, by its toolUseID
    skipped = read_items(value["messages"], lambda item: _messages(item, models, results), messages)
    own = [f"{skipped} message{'s' if skipped != 1 else ''} of no known shape skipped"] if skipped else []
    if not messages:
        problems.append(f"{file.name}: no message to read")
        return None
    created = iso_utc(value.get("created"))
    times = sorted(time for time in (m.timestamp for m in messages) if time)
    first = next((m.text for m in messages if m.role == "user" and m.text), "")
    title = text_or_none(value.get("title"))
    return Session(
        key=file_key(text_or_none(value.get("id")) or file.stem, relative, used),
        agent=KIND,
        title=short_title(title, 300) if title else (short_title(first) if first else "Untitled thread"),
        messages=messages,
        project=_project(value.get("env")),
        branch=_branch(value.get("env")),
        models=models,
        started=times[0] if times else created,
        last=times[-1] if times else created,
        files=[file],
        problems=own,
    )


def _project(env: Any) -> str | None:
    """The thread's workspace: its first tree's folder (a ``file://`` URI), else its name."""
    initial = env.get("initial") if isinstance(env, dict) else None
    if not isinstance(initial, dict):
        return None
    cwd = text_or_none(initial.get("cwd"))
    trees = initial.get("trees")
    tree = trees[0] if isinstance(trees, list) and trees and isinstance(trees[0], dict) else {}
    return cwd or uri_path(tree.get("uri")) or text_or_none(tree.get("displayName"))


def _branch(env: Any) -> str | None:
    """The branch the thread began on: its first tree's repository ``ref`` (``refs/heads/`` left out)."""
    trees = _object(_object(env).get("initial")).get("trees")
    tree = _object(trees[0]) if isinstance(trees, list) and trees else {}
    ref = text_or_none(_object(tree.get("repository")).get("ref"))
    return ref.removeprefix("refs/heads/") or None if ref else None


def _messages(item: dict[str, Any], models: list[str], results: dict[str, Message]) -> list[Message] | None:
    """A thread message as messages ([] for Amp's own notes); None for one of no known shape."""
    role = item.get("role")
    content = item.get("content")
    if role == "info":
        return _note(content, iso_utc(_meta(item).get("sentAt")))
    if role not in ("user", "assistant") or not isinstance(content, str | list):
        return None
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if role == "user":
        return _user(blocks, iso_utc(_meta(item).get("sentAt")), results)
    spent = _object(item.get("usage"))
    model = text_or_none(spent.get("model")) or text_or_none(item.get("model"))
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
    counted = usage(
        input=spent.get("inputTokens"),
        output=spent.get("outputTokens"),
        cache_write=spent.get("cacheCreationInputTokens"),
        cache_read=spent.get("cacheReadInputTokens"),
    )
    text = "\n\n".join(piece.strip() for piece in texts if piece.strip())
    thought = "\n\n".join(piece.strip() for piece in thinking if piece.strip())
    if not (text or thought or calls or counted):
        return []
    timestamp = iso_utc(spent.get("timestamp")) or iso_utc(_meta(item).get("sentAt"))
    return [Message("assistant", text, timestamp, model=model, tool_calls=calls, thinking=thought, usage=counted)]


def _note(content: Any, timestamp: str | None) -> list[Message]:
    """Amp's own note in the thread (an ``info`` message) as a system message: its summaries
    (``summary.summary``, said to be one) and texts; [] for one that says nothing."""
    texts = []
    for block in content if isinstance(content, list) else [{"type": "text", "text": content}]:
        kind = block.get("type") if isinstance(block, dict) else None
        summary = _object(block.get("summary")).get("summary") if kind == "summary" else None
        if isinstance(summary, str) and summary.strip():
            texts.append(f"{SUMMARY}:\n\n{summary.strip()}")
        elif kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            texts.append(block["text"].strip())
    return [Message("system", "\n\n".join(texts), timestamp)] if texts else []


def _meta(item: dict[str, Any]) -> dict[str, Any]:
    return _object(item.get("meta"))


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _user(blocks: list[Any], timestamp: str | None, results: dict[str, Message]) -> list[Message]:
    """A user message: the person's text and images, and one tool message per tool use. A result
    whose ``toolUseID`` was given before is the same run told again: no second tool message, and
    what it says (its later state) replaces what the first said, where it says anything."""
    texts: list[str] = []
    attachments: list[Attachment] = []
    tools: list[Message] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "image":
            attachments.append(_image(block))
            texts.append(attachments[-1].placeholder())
        elif kind == "tool_result":
            output, images = _output(block.get("run"))
            use = text_or_none(block.get("toolUseID"))
            given = results.get(use) if use else None
            if given is not None:
                if output or images:
                    given.tool_output, given.attachments = output, images
                continue
            message = Message("tool", "", timestamp, tool_output=output, attachments=images)
            tools.append(message)
            if use:
                results[use] = message
    text = "\n\n".join(piece.strip() for piece in texts if piece.strip())
    person = [Message("user", text, timestamp, attachments=attachments)] if text else []
    return person + tools


def _image(block: dict[str, Any]) -> Attachment:
    source = _object(block.get("source"))
    kind = text_or_none(source.get("mediaType")) or text_or_none(source.get("media_type"))
    return attachment(
        kind or text_or_none(block.get("mediaType")) or "image",
        text_or_none(block.get("sourcePath")),
        data=source.get("data"),
    )


def _call(block: dict[str, Any]) -> ToolCall:
    given = block.get("input")
    arguments: dict[str, Any] = given if isinstance(given, dict) else {}
    commands = [text for text in (text_or_none(arguments.get(key)) for key in COMMAND_KEYS) if text]
    return editor_call(
        text_or_none(block.get("name")) or "tool",
        given,
        list(dict.fromkeys(named_files(arguments, FILE_KEYS))),
        commands,
    )


def _output(run: Any) -> tuple[str, list[Attachment]]:
    """What a tool's run gave: its result, else its progress, else its error or status; the
    images it returned are attachments, named by their placeholders (their data never kept)."""
    if not isinstance(run, dict):
        return "", []
    for value in (run.get("result"), run.get("progress")):
        images: list[Attachment] = []
        text = _text(_without_data(value, images))
        if text:
            return text, images
    error = run.get("error")
    message = text_or_none(error.get("message")) if isinstance(error, dict) else text_or_none(error)
    status = text_or_none(run.get("status"))
    return message or (f"[{status}]" if status and status != "done" else ""), []


def _without_data(value: Any, images: list[Attachment]) -> Any:
    """``value`` with each image or file it inlines (an ``image`` block with a base64 ``source``)
    replaced by its placeholder, added to ``images``. (A value read is never nested too deep to walk.)"""
    if isinstance(value, list):
        return [_without_data(item, images) for item in value]
    if not isinstance(value, dict):
        return value
    inlined = [_image(value)] if value.get("type") == "image" else attachments_of(value)
    if inlined:
        images.extend(inlined)
        return " ".join(item.placeholder() for item in inlined)
    return {key: _without_data(item, images) for key, item in value.items()}


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(piece, str) for piece in value):
        return "\n".join(value)
    if isinstance(value, dict):
        for key in ("output", "content", "text", "diff"):
            if isinstance(value.get(key), str):
                return str(value[key])
    if value is None or value == [] or value == {}:
        return ""
    return json.dumps(value, ensure_ascii=False)[:MAX_OUTPUT_CHARS]
