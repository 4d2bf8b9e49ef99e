"""One OpenHands conversation's events read into messages, and its state into the session.

Each event is a JSON document with a ``kind`` (``archivist.agents.openhands`` says where they
are):

- ``MessageEvent``: ``llm_message`` (``role`` ``user`` or ``assistant``; ``content``, its
  ``text`` parts and ``image`` parts with ``image_urls``), and the model's ``thinking_blocks``
  or ``reasoning_content``; the person's first message is the title, shortened.
- ``ActionEvent``: a tool call of the agent: ``tool_name``, ``tool_call.arguments`` (a JSON
  text; else the ``action``), the ``thought`` said with it, its thinking, and the
  ``llm_response_id`` of the response that made it (the calls of one response are one
  assistant message). The terminal's ``command`` is the call's command; the file editor's
  ``path`` its file, and its ``create``, ``str_replace`` and ``insert`` commands its edits.
- ``ObservationEvent`` (the tool's ``observation.content``), ``UserRejectObservation`` (the
  ``rejection_reason``) and ``AgentErrorEvent`` (the ``error``): tool messages.
- ``Condensation`` and ``CondensationSummaryEvent``: their ``summary`` as a system message.

Skipped as no part of the conversation: the system prompt (``SystemPromptEvent``), pauses,
state updates, condensation requests, hooks' runs, LLM logs and streamed tokens. An event of no
known kind, or a file that is no event, is counted in the session's ``problems``.
"""

from __future__ import annotations

from typing import Any

from archivist import agents
from archivist.agents import Message, ToolCall, tool_edits

_QUIET = {
    "SystemPromptEvent",
    "PauseEvent",
    "ConversationStateUpdateEvent",
    "CondensationRequest",
    "HookExecutionEvent",
    "LLMCompletionLogEvent",
    "TokenEvent",
    "StreamingDeltaEvent",
    "ConversationErrorEvent",
}
_FILE_KEYS = ("path", "file_path", "filePath")
# the SDK's file editor is the CLIs' text editor: a ``command`` says what it does
_EDITORS = {"file_editor": "str_replace_editor"}


class Conversation(agents.Skipping):
    """The messages of one conversation's events, read one at a time, and the session they make."""

    def __init__(self, root: agents.Root) -> None:
        super().__init__()
        self.root = root
        self.messages: list[Message] = []
        self.responses: dict[str, Message] = {}  # the message each LLM response made, by its id
        self.working_dir: str | None = None

    def problems(self) -> list[str]:
        return agents.skipped_problems(self.skipped, "event")

    def event(self, event: Any) -> None:
        """One event file's document (None: not read, told by the source's ``Root``)."""
        if event is None:
            return
        if not isinstance(event, dict):
            self.skip("not a JSON object")
            return
        kind = event.get("kind")
        when = agents.iso_utc(event.get("timestamp"))
        if kind == "MessageEvent" and isinstance(event.get("llm_message"), dict):
            self._said(event, event["llm_message"], when)
        elif kind == "ActionEvent":
            self._action(event, when)
        elif kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
            self._observed(event, when)
        elif kind in ("Condensation", "CondensationSummaryEvent"):
            summary = agents.text_or_none(event.get("summary"))
            if summary:
                self.messages.append(Message(role="system", text=summary.strip(), timestamp=when))
        elif not (isinstance(kind, str) and kind in _QUIET):
            self.skip("unknown event")

    def session(self, state: dict[str, Any], name: str, relative: str, used: set[str]) -> agents.Session | None:
        """The session these messages make, with the conversation's ``base_state.json``."""
        if not self.messages:
            return None
        model = _model(state)
        for message in self.messages:
            if message.role == "assistant":
                message.model = model
        _spend(self, state.get("stats"))
        said = next((m.text for m in self.messages if m.role == "user" and m.text), "")
        times = [m.timestamp for m in self.messages if m.timestamp]
        workspace = state.get("workspace")
        project = agents.text_or_none(workspace.get("working_dir")) if isinstance(workspace, dict) else None
        return agents.Session(
            key=agents.file_key(agents.text_or_none(state.get("id")) or _uuid(name), relative, used),
            agent="openhands",
            title=agents.short_title(said) if said else "Untitled conversation",
            messages=self.messages,
            project=project or self.working_dir,
            models=[model] if model else [],
            started=min(times) if times else None,
            last=max(times) if times else None,
            problems=self.problems(),
        )

    def _said(self, event: dict[str, Any], said: dict[str, Any], when: str | None) -> None:
        role = said.get("role")
        if role not in ("user", "assistant"):
            self.skip("unknown message role")
            return
        content = said.get("content")
        attached = _images(content)
        text = "\n".join([_text(content), *(item.placeholder() for item in attached)]).strip()
        thinking = _thinking(event) or _thinking(said)
        if not (text or thinking):
            return
        message = Message(role=role, text=text, timestamp=when, thinking=thinking, attachments=attached)
        self.messages.append(message)
        self._responded(event, message)

    def _action(self, event: dict[str, Any], when: str | None) -> None:
        call = _call(event)
        if call is None:
            self.skip("an action without its tool")
            return
        response = agents.text_or_none(event.get("llm_response_id"))
        last = self.messages[-1] if self.messages else None
        if response and last is not None and last.role == "assistant" and self.responses.get(response) is last:
            last.tool_calls.append(call)  # another call of the same response
            return
        message = Message(
            role="assistant",
            text=_text(event.get("thought")),
            timestamp=when,
            thinking=_thinking(event),
            tool_calls=[call],
        )
        self.messages.append(message)
        self._responded(event, message)

    def _observed(self, event: dict[str, Any], when: str | None) -> None:
        observation = event.get("observation")
        if isinstance(observation, dict):
            output = _text(observation.get("content"))
            if not output and observation.get("is_error") is True:
                output = "error"
            metadata = observation.get("metadata")
            if isinstance(metadata, dict):
                self.working_dir = self.working_dir or agents.text_or_none(metadata.get("working_dir"))
        else:
            output = agents.text_or_none(event.get("rejection_reason")) or agents.text_or_none(event.get("error")) or ""
        self.messages.append(Message(role="tool", text="", timestamp=when, tool_output=output.strip()))

    def _responded(self, event: dict[str, Any], message: Message) -> None:
        response = agents.text_or_none(event.get("llm_response_id"))
        if response and response not in self.responses:
            self.responses[response] = message


def _call(event: dict[str, Any]) -> ToolCall | None:
    """An action event's tool call: its name, its arguments (the call's JSON text, else the
    action without its ``kind``), the command it ran and the files it named or edited."""
    given = event.get("tool_call")
    given = given if isinstance(given, dict) else {}
    name = agents.text_or_none(event.get("tool_name")) or agents.text_or_none(given.get("name"))
    if name is None:
        return None
    args = tool_edits.parsed_arguments(given.get("arguments"))
    if not isinstance(args, dict):
        action = event.get("action")
        args = {key: value for key, value in action.items() if key != "kind"} if isinstance(action, dict) else args
    if not isinstance(args, dict):
        return ToolCall(name=name, input=agents.call_input(args))
    command = agents.text_or_none(args.get("command")) if name != "file_editor" else None
    edits, held = tool_edits.edits_of(_EDITORS.get(name, name), args)
    files = agents.named_files(args, _FILE_KEYS)
    if command:
        held = held | {
            key for key, value in args.items() if isinstance(value, str) and value.strip() == command.strip()
        }
    return ToolCall(
        name=name,
        files=list(dict.fromkeys([*files, *(edit.file for edit in edits)])),
        commands=[command] if command else [],
        input=agents.call_input(args, without=held),
        edits=edits,
    )


def _text(content: Any) -> str:
    """The ``text`` parts of a content (a string, or parts), a line apart."""
    if isinstance(content, list):
        content = [part for part in content if not isinstance(part, dict) or part.get("type") in (None, "text")]
    return agents.parts_text(content).strip()


def _images(content: Any) -> list[agents.Attachment]:
    """The images of a content's ``image`` parts (their ``image_urls``), measured, never kept."""
    parts = content if isinstance(content, list) else []
    return [
        agents.url_attachment(url)
        for part in parts
        if isinstance(part, dict) and part.get("type") == "image" and isinstance(part.get("image_urls"), list)
        for url in part["image_urls"]
    ]


def _thinking(holder: dict[str, Any]) -> str:
    """The thinking of an event or message: its ``thinking_blocks``, else its ``reasoning_content``."""
    blocks = holder.get("thinking_blocks")
    said = [
        block["thinking"].strip()
        for block in (blocks if isinstance(blocks, list) else [])
        if isinstance(block, dict) and isinstance(block.get("thinking"), str) and block["thinking"].strip()
    ]
    return "\n\n".join(said) or (agents.text_or_none(holder.get("reasoning_content")) or "").strip()


def _model(state: dict[str, Any]) -> str | None:
    agent = state.get("agent")
    llm = agent.get("llm") if isinstance(agent, dict) else None
    return agents.text_or_none(llm.get("model")) if isinstance(llm, dict) else None


def _uuid(name: str) -> str:
    """A conversation folder's name (the id's 32 hex digits) written as the id is (with its dashes)."""
    if len(name) == 32 and all(c in "0123456789abcdefABCDEF" for c in name):
        return f"{name[:8]}-{name[8:12]}-{name[12:16]}-{name[16:20]}-{name[20:]}"
    return name


def _spend(conversation: Conversation, stats: Any) -> None:
    """Each response's tokens on the message it made; the rest, and the cost, on the last reply."""
    metrics = stats.get("usage_to_metrics") if isinstance(stats, dict) else None
    rest: agents.Usage | None = None
    for metric in metrics.values() if isinstance(metrics, dict) else []:
        if not isinstance(metric, dict):
            continue
        usages = metric.get("token_usages")
        usages = [usage for usage in usages if isinstance(usage, dict)] if isinstance(usages, list) else []
        for usage in usages or [metric.get("accumulated_token_usage")]:
            spent = _tokens(usage)
            if spent is None:
                continue
            message = conversation.responses.get(usage.get("response_id") or "") if isinstance(usage, dict) else None
            if message is not None and message.role == "assistant":
                message.usage = message.usage + spent if message.usage else spent
            else:
                rest = rest + spent if rest else spent
        cost = agents.usage(cost=metric.get("accumulated_cost"))
        if cost is not None:
            rest = rest + cost if rest else cost
    replies = [m for m in conversation.messages if m.role == "assistant"]
    if rest is not None and replies:
        replies[-1].usage = replies[-1].usage + rest if replies[-1].usage else rest


def _tokens(usage: Any) -> agents.Usage | None:
    """A ``TokenUsage``: ``prompt_tokens`` counts the cache's reads and writes, kept apart here."""
    if not isinstance(usage, dict):
        return None
    prompt, read, written = (
        agents.whole_count(usage.get(key)) for key in ("prompt_tokens", "cache_read_tokens", "cache_write_tokens")
    )
    return agents.usage(
        input=max(prompt - read - written, 0),
        output=usage.get("completion_tokens"),
        cache_read=read,
        cache_write=written,
    )
