"""One Zed agent thread's document (the JSON of a ``threads`` row's ``data``) as a session.

The document is Zed's ``DbThread`` serialized by serde (zed-industries/zed
``crates/agent/src/db.rs`` and the message types of ``crates/agent/src/thread.rs``):
``title``, ``messages``, ``updated_at``, ``model`` (``provider``, ``model``),
``cumulative_token_usage``, ``request_token_usage`` (by the id of a user message),
``initial_project_snapshot``, ``subagent_context``, ``version`` ``0.3.0``. Each message is
an externally tagged enum: ``{"User": {"id", "content"}}`` whose parts are ``{"Text": …}``,
``{"Mention": {"uri", "content"}}`` or ``{"Image": {"source", "size"}}``; ``{"Agent":
{"content", "tool_results"}}`` whose parts are ``{"Text": …}``, ``{"Thinking": {"text",
"signature"}}``, ``{"RedactedThinking": …}`` or ``{"ToolUse": {"id", "name", "raw_input",
"input", …}}`` and whose ``tool_results`` map each call's id to its ``content`` (a text, a
``{"Text": …}``, or a list of them), ``is_error`` and ``output``; the text ``"Resume"`` (Zed
asked the model to go on); and, in later versions, ``{"Compaction": {"Summary": …}}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from archivist import agents
from archivist.agents import Edit, Message, Session, ToolCall, Usage, call_input, named_files

RESUME = "Continue where you left off"  # what Zed sends the model for a "Resume" message
FILE_KEYS = ("path", "source_path", "destination_path", "abs_path")
COMMAND_TOOLS = ("terminal",)


@dataclass
class Row:
    """What the ``threads`` row says beside its document."""

    key: str
    summary: str | None = None
    project: str | None = None
    parent: str | None = None
    created: str | None = None
    updated: str | None = None
    files: list[Any] = field(default_factory=list)


def session(row: Row, document: dict[str, Any]) -> Session | None:
    """The session of a thread; None where it holds no message of any text."""
    problems: list[str] = []
    model = _model(document.get("model"))
    messages, turns = _messages(document.get("messages"), model, problems)
    if not any(message.text or message.tool_calls for message in messages):
        return None
    _put_usage(document, messages, turns)
    snapshot = _snapshot(document.get("initial_project_snapshot"))
    first = next((message.text for message in messages if message.role == "user" and message.text), "")
    title = row.summary or agents.text_or_none(document.get("title"))
    started = row.created or agents.iso_utc(document.get("updated_at")) or row.updated
    last = row.updated or agents.iso_utc(document.get("updated_at")) or started
    return Session(
        key=row.key,
        agent="zed",
        title=title or agents.short_title(first),
        titled=title is not None,
        messages=messages,
        project=row.project or snapshot[0],
        branch=snapshot[1],
        models=[model] if model else [],
        started=min(started, last) if started and last else started,
        last=max(started, last) if started and last else last,
        files=row.files,
        problems=problems,
        parent=row.parent or _parent(document.get("subagent_context")),
    )


def _model(value: Any) -> str | None:
    return agents.text_or_none(value.get("model")) if isinstance(value, dict) else None


def _parent(value: Any) -> str | None:
    return agents.text_or_none(value.get("parent_thread_id")) if isinstance(value, dict) else None


def _snapshot(value: Any) -> tuple[str | None, str | None]:
    """The first worktree's path and branch of the thread's first snapshot of its project."""
    trees = value.get("worktree_snapshots") if isinstance(value, dict) else None
    first = trees[0] if isinstance(trees, list) and trees and isinstance(trees[0], dict) else {}
    git = first.get("git_state")
    branch = agents.text_or_none(git.get("current_branch")) if isinstance(git, dict) else None
    return agents.text_or_none(first.get("worktree_path")), branch


def _messages(items: Any, model: str | None, problems: list[str]) -> tuple[list[Message], dict[str, Message]]:
    """The thread's messages, and for each user message's id the last agent message of its turn."""
    messages: list[Message] = []
    turns: dict[str, Message] = {}
    turn: str | None = None
    skipped = 0
    for item in items if isinstance(items, list) else []:
        if item == "Resume":
            messages.append(Message("user", RESUME))
            continue
        if not isinstance(item, dict) or len(item) != 1:
            skipped += 1
            continue
        ((tag, body),) = item.items()
        if tag == "User" and isinstance(body, dict):
            messages.append(_user(body))
            turn = body.get("id") if isinstance(body.get("id"), str) else None
        elif tag == "Agent" and isinstance(body, dict):
            said = _agent(body, model)
            messages.extend(said)
            if turn is not None:
                turns[turn] = said[0]
        elif tag == "Compaction":
            summary = body.get("Summary") if isinstance(body, dict) else None
            if isinstance(summary, str) and summary.strip():
                messages.append(Message("system", summary))
        else:
            skipped += 1
    if skipped:
        problems.append(f"{skipped} message{'s' if skipped != 1 else ''} of no known shape skipped")
    return messages, turns


def _user(body: dict[str, Any]) -> Message:
    """A user message: its texts, each mention as its link (what it attached as its output), images."""
    texts: list[str] = []
    attached: list[str] = []
    message = Message("user", "")
    parts = body.get("content")
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict) or len(part) != 1:
            continue
        ((tag, value),) = part.items()
        if tag == "Text" and isinstance(value, str):
            texts.append(value)
        elif tag == "Mention" and isinstance(value, dict):
            link = _mention(value.get("uri"))
            texts.append(link)
            content = value.get("content")
            if isinstance(content, str) and content.strip():
                attached.append(f"{link}\n{content}")
        elif tag == "Image" and isinstance(value, dict):
            item = agents.attachment("image/png", data=value.get("source"))
            message.attachments.append(item)
            texts.append(item.placeholder())
    message.text = "".join(texts).strip()
    message.tool_output = "\n\n".join(attached)
    return message


def _mention(uri: Any) -> str:
    """A mention as Zed links it: ``@`` and the path, URL or name it names."""
    if isinstance(uri, str):
        return f"@{uri}"
    if not isinstance(uri, dict) or len(uri) != 1:
        return "@mention"
    ((kind, value),) = uri.items()
    if isinstance(value, dict):
        for key in ("abs_path", "path", "url", "name"):
            named = agents.text_or_none(value.get(key))
            if named:
                return f"@{named}"
    return f"@{kind}"


def _agent(body: dict[str, Any], model: str | None) -> list[Message]:
    """An agent message: its text, thinking and tool calls, then one tool message for each result."""
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[ToolCall] = []
    parts = body.get("content")
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict) or len(part) != 1:
            continue
        ((tag, value),) = part.items()
        if tag == "Text" and isinstance(value, str):
            texts.append(value)
        elif tag == "Thinking" and isinstance(value, dict) and isinstance(value.get("text"), str):
            thinking.append(value["text"])
        elif tag == "ToolUse" and isinstance(value, dict):
            calls.append(_call(value, body.get("tool_results")))
    said = Message("assistant", "\n".join(t for t in texts if t).strip(), model=model, tool_calls=calls)
    said.thinking = "\n".join(t for t in thinking if t).strip()
    results = body.get("tool_results")
    outputs = [
        Message("tool", "", tool_output=_result_text(result))
        for result in (results.values() if isinstance(results, dict) else [])
        if isinstance(result, dict)
    ]
    return [said, *[output for output in outputs if output.tool_output]]


def _input(value: dict[str, Any]) -> Any:
    """A call's arguments: ``input`` (later versions wrap it as ``{"type": "json", "value": …}``),
    else its ``raw_input`` read as JSON, else that text."""
    given = value.get("input")
    if isinstance(given, dict) and set(given) == {"type", "value"} and given.get("type") in ("json", "text"):
        given = given["value"]
    if given is not None:
        return given
    raw = value.get("raw_input")
    if isinstance(raw, str) and raw.strip():
        try:
            return agents.json_value(raw)
        except agents.NotJSON:
            return raw
    return None


def _call(value: dict[str, Any], results: Any) -> ToolCall:
    name = agents.text_or_none(value.get("name")) or "tool"
    args = _input(value)
    call = ToolCall(name)
    if not isinstance(args, Mapping):
        call.input = call_input(args)
        return call
    call.files = named_files(args, FILE_KEYS)
    without: set[str] = set()
    command = agents.text_or_none(args.get("command"))
    if name in COMMAND_TOOLS and command:
        call.commands.append(command)
        without.add("command")
    call.edits, held = _edits(args, call.files)
    without |= held
    if not call.edits:
        result = results.get(value.get("id")) if isinstance(results, dict) else None
        call.edits = _output_edits(result.get("output") if isinstance(result, dict) else None, call.files)
    for edit in call.edits:
        if edit.file not in call.files:
            call.files.append(edit.file)
    call.input = call_input(args, without=without)
    return call


def _edits(args: Mapping[str, Any], files: list[str]) -> tuple[list[Edit], set[str]]:
    """The edits a call's input holds (``edits[]`` of old and new texts, or a file's whole
    ``content``), and the keys that hold them."""
    file = files[0] if files else None
    edits = args.get("edits")
    if isinstance(edits, str):  # (a model that wrote the list as JSON text)
        try:
            edits = agents.json_value(edits)
        except agents.NotJSON:
            edits = None
    if isinstance(edits, list) and file:
        found = [
            edit
            for item in edits
            if isinstance(item, dict)
            and (edit := agents.text_edit(file, item.get("old_text"), item.get("new_text"))) is not None
        ]
        if found:
            return found, {"edits"}
    content = args.get("content")
    if file and isinstance(content, str) and args.get("mode") in ("write", "create", "overwrite"):
        edit = agents.text_edit(file, None, content)
        if edit is not None:
            return [edit], {"content"}
    return [], set()


def _output_edits(output: Any, files: list[str]) -> list[Edit]:
    """The edit an ``edit_file`` call's output tells (its file's ``diff``, else the whole file
    before and after it), for a call whose input holds no text of it."""
    if not isinstance(output, dict):
        return []
    file = agents.text_or_none(output.get("input_path")) or agents.text_or_none(output.get("original_path"))
    file = file or (files[0] if files else None)
    if not file:
        return []
    diff = output.get("diff")
    if isinstance(diff, str) and diff.strip():
        return [Edit(file, patch=diff)]
    edit = agents.text_edit(file, output.get("old_text"), output.get("new_text"))
    return [edit] if edit is not None else []


def _result_text(result: dict[str, Any]) -> str:
    """A tool result's text for the model (its ``content``), marked where it was an error."""
    text = "\n".join(_content_texts(result.get("content"))).strip()
    if result.get("is_error") is True and text:
        return f"[error] {text}"
    return text


def _content_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [text for item in content for text in _content_texts(item)]
    if isinstance(content, dict):
        for key, value in content.items():
            if key.lower() == "text" and isinstance(value, str):
                return [value]
            if key.lower() == "image":
                return ["[image]"]
    return []


def _put_usage(document: dict[str, Any], messages: list[Message], turns: dict[str, Message]) -> None:
    """The tokens the thread used: its ``cumulative_token_usage`` (every request of the thread) on
    its last agent message; where that is empty (versions that did not count it), each turn's
    ``request_token_usage`` (its last request, which Zed keeps) on that turn's agent message."""
    total = _usage(document.get("cumulative_token_usage"))
    if total is not None:
        last = next((message for message in reversed(messages) if message.role == "assistant"), None)
        if last is not None:
            last.usage = total
        return
    per_turn = document.get("request_token_usage")
    for user_id, counts in per_turn.items() if isinstance(per_turn, dict) else []:
        message = turns.get(user_id)
        if message is not None:
            message.usage = _usage(counts)


def _usage(value: Any) -> Usage | None:
    if not isinstance(value, dict):
        return None
    return agents.usage(
        input=value.get("input_tokens"),
        output=value.get("output_tokens"),
        cache_write=value.get("cache_creation_input_tokens"),
        cache_read=value.get("cache_read_input_tokens"),
    )
