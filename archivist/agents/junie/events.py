"""One Junie session's ``events.jsonl``: its events, read as the session's messages.

Each line is an event with a ``kind`` and, since mid-2026, its ``timestampMs`` (milliseconds since
1970). The events read:

- ``UserPromptEvent``: the user's prompt (``presentablePrompt``, as typed, else ``prompt``), with
  its ``requestId``; a prompt whose ``delivery`` is ``Failed``, or whose id a later
  ``UserMessagesDroppedFromHistory`` or ``UserMessagesFailedInHistory`` names, never reached the
  agent and is left out. ``UserResponseEvent`` (``prompt``) and ``UserAsyncResponseEvent``
  (``entries`` of a ``question`` and its ``answer``) are the user's answers to the agent.
- ``SessionTitleSetEvent``: the session's title (``name``).
- ``SystemMessageEvent`` (``text``, ``details``) and ``AgentTaskFailedEvent``: system messages.
- ``SessionA2uxEvent``: what the agent showed, its ``event.agentEvent`` of a ``kind``:
  ``LlmResponseMetadataEvent`` (``modelUsage``: each model call's ``model``, ``inputTokens``
  without the cached ones, ``cacheInputTokens``, ``cacheCreateTokens``, ``outputTokens`` and
  ``cost`` in US dollars), ``AgentThoughtBlockUpdatedEvent`` (thinking), ``MarkdownBlockUpdatedEvent``
  and ``ResultBlockUpdatedEvent`` (the agent's text; a cancelled result is no answer),
  ``ToolBlockUpdatedEvent`` (a tool: ``toolType``, its label ``text``, ``details``, ``output``),
  ``TerminalBlockUpdatedEvent`` (a command, its ``output``), ``ViewFilesBlockUpdatedEvent`` (the
  ``files`` read), ``FileChangesBlockUpdatedEvent`` (``changes``: each file's path before and
  after, and its text before and after), ``AgentFailureEvent`` (an error), and
  ``CurrentDirectoryUpdatedEvent`` (the working directory). A block is sent again as it changes
  (``IN_PROGRESS``, then ``COMPLETED``) under one ``stepId``: it is read once, where it first
  appears, as it was last sent.

A model call's usage is given to the assistant message that follows it in the same turn (the one
its response made), else to the turn's last one. What is skipped: the agent's state snapshots
(``AgentStateUpdatedEvent``, megabytes each), its status lines, plans, environment, context-window
reports, tips and questions (the answer keeps the question), task bookkeeping. A line that is not
JSON, or an event of no known kind, is counted in the session's problems.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist import agents

ANSWER_MARK = "<!-- ANSWER -->"  # what Junie puts before a final answer's text
BLOCKS = (
    "AgentThoughtBlockUpdatedEvent",
    "MarkdownBlockUpdatedEvent",
    "ResultBlockUpdatedEvent",
    "ToolBlockUpdatedEvent",
    "TerminalBlockUpdatedEvent",
    "ViewFilesBlockUpdatedEvent",
    "FileChangesBlockUpdatedEvent",
)
SKIPPED_AGENT_EVENTS = frozenset(
    {
        "AgentStateUpdatedEvent",
        "AgentCurrentStatusUpdatedEvent",
        "AgentPlanUpdatedEvent",
        "AgentPatchCreatedEvent",
        "AgentTaskNameUpdatedEvent",
        "AskAsyncRequestUpdatedEvent",
        "ContextWindowReportEvent",
        "CustomAgentBlockUpdatedEvent",
        "EnvironmentVariablesUpdatedEvent",
        "TipSuggestionCreatedEvent",
    }
)
SKIPPED_EVENTS = frozenset(
    {"TaskStartedEvent", "TaskState", "SkillsStatusEvent", "UserMessagesCommittedToHistory", "SendToAgentEvent"}
)
DROPPED = ("UserMessagesDroppedFromHistory", "UserMessagesFailedInHistory")


@dataclass
class _Slot:
    """One message to be, in the order of the log: a prompt, a system line, or a block (by its step)."""

    role: str
    event: dict[str, Any]
    time: str | None
    request: str | None = None
    usage: agents.Usage | None = None
    model: str | None = None


@dataclass
class Events:
    """What one ``events.jsonl`` holds, read by ``read``."""

    file: Path
    messages: list[agents.Message] = field(default_factory=list)
    title: str | None = None
    directory: str | None = None
    models: list[str] = field(default_factory=list)
    times: list[str] = field(default_factory=list)
    skipping: agents.Skipping = field(default_factory=agents.Skipping)
    unread: str | None = None

    def read(self) -> None:
        """Read the file's events into messages; a file that cannot be read is told in ``problems``."""
        slots: list[_Slot] = []
        steps: dict[tuple[str, str], _Slot] = {}
        dropped: set[str] = set()
        try:
            with self.file.open("rb") as handle:
                for value in agents.json_lines(handle, self.skipping.skipped):
                    self._event(value, slots, steps, dropped)
        except OSError as error:
            self.unread = f"not read ({error.strerror or error})"
            return
        self.messages = _messages([slot for slot in slots if slot.request is None or slot.request not in dropped])

    def problems(self) -> list[str]:
        found = agents.skipped_problems(self.skipping.skipped)
        return [agents.Unread(self.unread), *found] if self.unread else found

    def _event(self, value: Any, slots: list[_Slot], steps: dict[tuple[str, str], _Slot], dropped: set[str]) -> None:
        if not isinstance(value, dict) or not isinstance(value.get("kind"), str):
            self.skipping.skip("no event")
            return
        kind, time = value["kind"], _time(value.get("timestampMs"))
        if time:
            self.times.append(time)
        if kind == "UserPromptEvent":
            request = agents.text_or_none(value.get("requestId"))
            if value.get("delivery") == "Failed" and request:
                dropped.add(request)
            slots.append(_Slot("user", value, time, request=request))
        elif kind in ("UserResponseEvent", "UserAsyncResponseEvent"):
            slots.append(_Slot("user", value, time))
        elif kind in DROPPED:
            ids = value.get("userMessageIds")
            if isinstance(ids, list):
                dropped.update(item for item in ids if isinstance(item, str))
        elif kind == "SessionTitleSetEvent":
            self.title = agents.text_or_none(value.get("name")) or self.title
        elif kind in ("SystemMessageEvent", "AgentTaskFailedEvent"):
            slots.append(_Slot("system", value, time))
        elif kind == "SessionA2uxEvent":
            self._agent_event(value, time, slots, steps)
        elif kind not in SKIPPED_EVENTS:
            self.skipping.skip(f"unknown kind {kind[:80]!r}")

    def _agent_event(
        self, value: dict[str, Any], time: str | None, slots: list[_Slot], steps: dict[tuple[str, str], _Slot]
    ) -> None:
        outer = value.get("event")
        event = outer.get("agentEvent") if isinstance(outer, dict) else None
        kind = event.get("kind") if isinstance(event, dict) else None
        if not isinstance(event, dict) or not isinstance(kind, str):
            self.skipping.skip("an agent event without a kind")
            return
        if kind == "LlmResponseMetadataEvent":
            slots.append(self._usage(event, time))
        elif kind == "CurrentDirectoryUpdatedEvent":
            self.directory = agents.text_or_none(event.get("currentDirectory")) or self.directory
        elif kind == "AgentFailureEvent":
            slots.append(_Slot("system", event, time))
        elif kind in BLOCKS:
            step = event.get("stepId")
            slot = steps.get((kind, step)) if isinstance(step, str) else None
            if slot is None:
                slot = _Slot("assistant", event, time)
                slots.append(slot)
                if isinstance(step, str):
                    steps[(kind, step)] = slot
            else:
                slot.event, slot.time = event, time or slot.time
        elif kind not in SKIPPED_AGENT_EVENTS:
            self.skipping.skip(f"unknown agent event {kind[:80]!r}")

    def _usage(self, event: dict[str, Any], time: str | None) -> _Slot:
        """A model call's usage: every ``modelUsage`` entry summed, named for its largest one."""
        total: agents.Usage | None = None
        model, largest = None, -1
        entries = event.get("modelUsage")
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                continue
            found = agents.usage(
                input=entry.get("inputTokens"),
                output=entry.get("outputTokens"),
                cache_write=entry.get("cacheCreateTokens"),
                cache_read=entry.get("cacheInputTokens"),
                cost=entry.get("cost"),
            )
            name = agents.text_or_none(entry.get("model"))
            size = (found.input + found.cache_read + found.cache_write) if found else 0
            if name and size > largest:
                model, largest = name, size
            if name and name not in self.models:
                self.models.append(name)
            if found:
                total = found if total is None else total + found
        return _Slot("usage", event, time, usage=total, model=model)


def _time(value: Any) -> str | None:
    """An event's ``timestampMs`` as ISO 8601 UTC, or None."""
    return agents.iso_utc(value) if isinstance(value, int | float) and value > 1e11 else None


# -- slots to messages --------------------------------------------------------------------------


def _messages(slots: list[_Slot]) -> list[agents.Message]:
    """The messages of the slots, in order; each model call's usage on the assistant message after it."""
    messages: list[agents.Message] = []
    pending: agents.Usage | None = None
    model: str | None = None
    turn: list[agents.Message] = []  # the assistant messages since the last user message
    for slot in slots:
        if slot.role == "usage":
            if slot.usage:
                pending = slot.usage if pending is None else pending + slot.usage
            model = slot.model or model
            continue
        if slot.role == "user":
            _leave(pending, turn)
            pending, turn = None, []
        for message in _made(slot, model):
            if message.role == "assistant" and pending is not None:
                message.usage, pending = pending, None
            if message.role == "assistant" and _thought_alone(messages) and not message.thinking:
                _merge(messages[-1], message)
                continue
            if message.role == "assistant":
                turn.append(message)
            messages.append(message)
    _leave(pending, turn)
    return messages


def _thought_alone(messages: list[agents.Message]) -> bool:
    """Whether the last message is an assistant's thinking alone (the message it leads to comes next)."""
    last = messages[-1] if messages else None
    return last is not None and last.role == "assistant" and not last.text and not last.tool_calls


def _merge(thought: agents.Message, message: agents.Message) -> None:
    """The thinking and the text or call it led to, as one message."""
    thought.text, thought.tool_calls = message.text, message.tool_calls
    if message.usage is not None:
        thought.usage = message.usage if thought.usage is None else thought.usage + message.usage


def _leave(pending: agents.Usage | None, turn: list[agents.Message]) -> None:
    """Usage no assistant message followed goes to the turn's last one."""
    if pending is not None and turn:
        last = turn[-1]
        last.usage = pending if last.usage is None else last.usage + pending


def _made(slot: _Slot, model: str | None) -> list[agents.Message]:
    event, time = slot.event, slot.time
    if slot.role == "user":
        text = _user_text(event)
        return [agents.Message("user", text, time)] if text else []
    if slot.role == "system":
        text = _system_text(event)
        return [agents.Message("system", text, time)] if text else []
    return _block(event, time, model)


def _user_text(event: dict[str, Any]) -> str:
    if event.get("kind") == "UserAsyncResponseEvent":
        entries = event.get("entries")
        answers = [
            "\n".join(t for t in (_text(entry.get("question")), _text(entry.get("answer"))) if t)
            for entry in (entries if isinstance(entries, list) else [])
            if isinstance(entry, dict)
        ]
        return "\n\n".join(answer for answer in answers if answer)
    return (_text(event.get("presentablePrompt")) or _text(event.get("prompt"))).strip()


def _system_text(event: dict[str, Any]) -> str:
    kind = event.get("kind")
    if kind == "AgentTaskFailedEvent":
        return "Agent task failed"
    if kind == "AgentFailureEvent":
        return _text(event.get("message")).strip() or "Agent failed"
    text, details = _text(event.get("text")).strip(), _text(event.get("details")).strip()
    return f"{text}\n\n{details}".strip() if details and details != text else text


def _block(event: dict[str, Any], time: str | None, model: str | None) -> list[agents.Message]:
    kind = event.get("kind")
    if kind == "AgentThoughtBlockUpdatedEvent":
        thought = _text(event.get("text")).strip()
        return [agents.Message("assistant", "", time, model=model, thinking=thought)] if thought else []
    if kind in ("MarkdownBlockUpdatedEvent", "ResultBlockUpdatedEvent"):
        text = _text(event.get("text" if kind == "MarkdownBlockUpdatedEvent" else "result"))
        text = text.strip().removeprefix(ANSWER_MARK).strip()
        if not text or event.get("cancelled") is True:
            return []
        return [agents.Message("assistant", text, time, model=model)]
    call, output = _call(event)
    if call is None:
        return []
    made = [agents.Message("assistant", "", time, model=model, tool_calls=[call])]
    if output:
        made.append(agents.Message("tool", "", time, tool_output=output))
    return made


def _call(event: dict[str, Any]) -> tuple[agents.ToolCall | None, str]:
    """A tool block as a call, and its output."""
    kind = event.get("kind")
    output = _text(event.get("output"))
    if kind == "TerminalBlockUpdatedEvent":
        command = _text(event.get("command"))
        if not command:
            return None, ""
        return agents.ToolCall("terminal", commands=[command]), output
    if kind == "ViewFilesBlockUpdatedEvent":
        files = _paths(event.get("files"), "relativePath")
        return agents.ToolCall("view_files", files=files, input=agents.call_input({"files": files})), _text(
            event.get("details")
        )
    if kind == "FileChangesBlockUpdatedEvent":
        return _changes(event), _text(event.get("details"))
    name = _text(event.get("toolType")) or "tool"
    args = {key: event[key] for key in ("text", "details") if isinstance(event.get(key), str) and event[key]}
    return agents.ToolCall(name, input=agents.call_input(args)), output


def _changes(event: dict[str, Any]) -> agents.ToolCall | None:
    """The files a change block changed, each as an edit: its text before (None: a new file) and after."""
    changes = event.get("changes")
    edits: list[agents.Edit] = []
    files: list[str] = []
    moved: list[dict[str, str]] = []
    for change in changes if isinstance(changes, list) else []:
        if not isinstance(change, dict):
            continue
        before, after = _text(change.get("beforeRelativePath")), _text(change.get("afterRelativePath"))
        path = after or before
        if not path:
            continue
        files.append(path)
        if before and after and before != after:
            moved.append({"from": before, "to": after})
        if not after:
            moved.append({"deleted": before})
            continue
        old = _content(change.get("beforeContent")) if before else None
        edit = agents.text_edit(path, old, _content(change.get("afterContent")))
        if edit is not None and edit.old != edit.new:
            edits.append(edit)
    if not files:
        return None
    return agents.ToolCall(
        "file_changes", files=list(dict.fromkeys(files)), edits=edits, input=agents.call_input(moved)
    )


def _content(value: Any) -> str | None:
    return value.get("text") if isinstance(value, dict) and isinstance(value.get("text"), str) else None


def _paths(items: Any, key: str) -> list[str]:
    found = [_text(item.get(key)) for item in (items if isinstance(items, list) else []) if isinstance(item, dict)]
    return list(dict.fromkeys(path for path in found if path))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
