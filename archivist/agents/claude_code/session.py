"""One Claude Code session, or sub-agent transcript, built from its lines.

``user``, ``assistant`` and ``system`` lines are messages. An assistant response written
over several lines sharing ``message.id`` is one message; its token usage is its last
line's ``message.usage`` (each line repeats the response's figures so far, ``output_tokens``
growing), set once on that message. A message line whose ``uuid`` was already read (in
this file, or in another file of the project read before it: a resumed session's copy of
its history, a sub-agent's replay of its parent's) is a copy and is dropped, and so is an
assistant line repeating a response another session holds. ``summary``, ``custom-title``
and ``ai-title`` lines give the title; the other known types are bookkeeping.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archivist.agents import Message, Session, Tail, ToolCall, Usage, call_input, iso_utc, short_title, usage
from archivist.agents.claude_code.content import blocks_content, call_edits, result_agent_id, tool_results
from archivist.agents.claude_code.titles import Titles, compaction_text, system_message

KIND = "claude-code"

MESSAGE_TYPES = frozenset({"user", "assistant", "system"})
# Line types that are not messages: titles, summaries and the CLI's bookkeeping.
OTHER_TYPES = frozenset(
    {
        "summary",
        "custom-title",
        "ai-title",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
        "progress",
        "turn_end",
        "pr-link",
        "last-prompt",
        "mode",
        "permission-mode",
        "agent-name",
        "agent-setting",
        "worktree-state",
        "frame-link",
        "result",
        "started",
    }
)
KNOWN_TYPES = MESSAGE_TYPES | OTHER_TYPES

SYNTHETIC_MODEL = "<synthetic>"  # assistant lines the CLI writes itself (API errors)
FILE_INPUTS = ("file_path", "path", "notebook_path")  # tool inputs naming a file or folder
SHELL_TOOLS = ("Bash",)
SUBAGENT_TOOLS = ("Task", "Agent")


class Seen:
    """What a reading has stored so far, so that nothing is stored twice: message lines by
    ``uuid``, and assistant responses by ``message.id`` with the session holding each."""

    def __init__(self) -> None:
        self.uuids: set[str] = set()
        self.responses: dict[str, str] = {}


class Blocks:
    """A response's text (or thinking) blocks in order: a block written again is not added,
    one that grew replaces what it grew from (a line holding the response so far). The set
    beside the list tells a block written again at once, however many the response holds."""

    __slots__ = ("items", "kept")

    def __init__(self) -> None:
        self.items: list[str] = []
        self.kept: set[str] = set()

    def add(self, text: str) -> None:
        if not text.strip() or text in self.kept:
            return
        if self.items and self.items[-1] and text.startswith(self.items[-1]):
            self.kept.discard(self.items[-1])
            self.items[-1] = text
        else:
            self.items.append(text)
        self.kept.add(text)

    def text(self) -> str:
        return "\n\n".join(self.items)


@dataclass(slots=True)
class Response:
    """An assistant response being read: its blocks can come over several lines.

    Its lists are made when first needed: a long session holds many of these at once.
    """

    timestamp: str | None
    model: str | None
    texts: Blocks | None = None
    thinking: Blocks | None = None
    tool_calls: list[ToolCall] | None = None
    tool_ids: set[str] | None = None
    usage: Usage | None = None

    def add_text(self, text: str) -> None:
        if self.texts is None:
            self.texts = Blocks()
        self.texts.add(text)

    def add_thinking(self, text: str) -> None:
        if self.thinking is None:
            self.thinking = Blocks()
        self.thinking.add(text)

    def message(self) -> Message | None:
        """The response as a message; None when it holds nothing (and counted no token)."""
        texts = self.texts.items if self.texts else None
        thinking = self.thinking.items if self.thinking else None
        if not (texts or thinking or self.tool_calls or self.usage):
            return None
        return Message(
            role="assistant",
            text=self.texts.text() if self.texts else "",
            timestamp=self.timestamp,
            model=self.model,
            tool_calls=self.tool_calls or [],
            thinking=self.thinking.text() if self.thinking else "",
            usage=self.usage,
        )


class Builder:
    """One session (or sub-agent transcript) as its lines are read."""

    def __init__(
        self,
        key: str,
        file: Path,
        parent: str | None = None,
        fallback_project: str | None = None,
        description: str | None = None,
        seen: Seen | None = None,
    ) -> None:
        self.key = key
        self.file = file
        self.parent = parent
        self.fallback_project = fallback_project
        # a sub-agent's parent's project, where it is known: its project, wherever it ran (a
        # sub-agent sent into a sub-folder is the parent's work, not a project of its own)
        self.parent_project: str | None = None
        self.description = description  # a sub-agent's task, its title after the log's own
        self.seen = seen if seen is not None else Seen()
        self.messages: list[Message | Response] = []  # in file order
        self.responses: dict[str, Response] = {}  # message.id → its assistant response
        self.uuids: dict[str, int] = {}  # uuid → line position, to drop copies and place summaries
        self.project: str | None = None
        self.branch: str | None = None
        self.models: list[str] = []
        self.session_ids: list[str] = []
        self.titles = Titles()
        self.tasks: dict[str, str] = {}  # Task/Agent tool_use id → its description
        self.agent_titles: dict[str, str] = {}  # a sub-agent's id → the description of its task
        self.task_calls: dict[str, ToolCall] = {}  # Task/Agent tool_use id → the call
        self.agent_calls: dict[str, str] = {}  # a sub-agent's id → the tool_use id of the call that started it
        self.problems: list[str] = []
        self.offsets: list[int] = []  # the byte offset of the line that began each of messages
        self.drained = 0  # the messages taken out before the rest was read (``drain``)
        self.taken: set[str] = set()  # the ids of the responses taken out (a later line of one is a replay)
        self.first_said = ""  # the first text said among them (a title where there is no other)
        self.stamps: tuple[str, str] | None = None  # the first and last time among them
        # a sub-agent transcript's key by its id, and by the id of the Task/Agent call that
        # started it, known before the session is read: its calls name it as they are read
        self.agent_keys: dict[str, str] = {}
        self.call_keys: dict[str, str] = {}

    def take(self, record: dict[str, Any], kind: str) -> bool:
        """Read one line; False when it is malformed for its type."""
        if kind in MESSAGE_TYPES and self._repeated(record, kind):
            self._session_id(record)
            return True
        self._envelope(record)
        if kind == "user":
            return self._user(record)
        if kind == "assistant":
            return self._assistant(record)
        if kind == "system":
            message = system_message(record, iso_utc(record.get("timestamp")))
            if message is not None:
                self.titles.heard(message)
                self.messages.append(message)
            return True
        return self.titles.take(record, kind)

    def _repeated(self, record: dict[str, Any], kind: str) -> bool:
        """Whether a message line is a copy of one already read (and so dropped); a new one
        is remembered."""
        uuid = record.get("uuid")
        message = record.get("message")
        response_id = message.get("id") if kind == "assistant" and isinstance(message, dict) else None
        if isinstance(response_id, str) and self.seen.responses.get(response_id, self.key) != self.key:
            return True  # a response another session holds (a replay of a parent's history)
        if isinstance(uuid, str):
            if uuid in self.uuids or uuid in self.seen.uuids:
                return True
            self.uuids[uuid] = len(self.uuids)
            self.seen.uuids.add(uuid)
        return False

    def _envelope(self, record: dict[str, Any]) -> None:
        cwd, branch = record.get("cwd"), record.get("gitBranch")
        if self.project is None and isinstance(cwd, str) and cwd:
            self.project = cwd
        if self.branch is None and isinstance(branch, str) and branch:
            self.branch = branch
        self._session_id(record)

    def _session_id(self, record: dict[str, Any]) -> None:
        session_id = record.get("sessionId")
        if isinstance(session_id, str) and session_id and session_id not in self.session_ids:
            self.session_ids.append(session_id)

    def _user(self, record: dict[str, Any]) -> bool:
        message = record.get("message")
        if not isinstance(message, dict):
            return False
        content = message.get("content")
        timestamp = iso_utc(record.get("timestamp"))
        if record.get("isCompactSummary"):
            found = blocks_content(content)
            if found.text.strip():
                self.messages.append(Message("system", compaction_text(found.text), timestamp))
            return True
        if record.get("isMeta"):
            return True  # text the CLI adds to the prompt (caveats, skill bodies), not a message
        if isinstance(content, str):
            self._add(self.titles.user_message(content, timestamp))
            return True
        if not isinstance(content, list):
            return False
        results = tool_results(content)
        if results:
            for block in results:
                self._note_agent(block, record.get("toolUseResult"))
            found = blocks_content(content, separator="\n\n")
            self._add(Message("tool", "", timestamp, tool_output=found.text, attachments=found.attachments))
            return True
        found = blocks_content(content, separator="\n\n", skip_reminders=True)
        self._add(self.titles.user_message(found.text, timestamp, found.attachments))
        return True

    def _add(self, message: Message | None) -> None:
        if message is not None:
            self.messages.append(message)

    def _assistant(self, record: dict[str, Any]) -> bool:
        message = record.get("message")
        if not isinstance(message, dict):
            return False
        model = message.get("model")
        model = model if isinstance(model, str) and model and model != SYNTHETIC_MODEL else None
        if model and model not in self.models:
            self.models.append(model)
        if model:
            self.titles.answered()
        draft = self._response(message.get("id"), iso_utc(record.get("timestamp")), model)
        counted = message.get("usage")
        if isinstance(counted, dict) and message.get("model") != SYNTHETIC_MODEL:
            draft.usage = _usage(counted) or draft.usage  # the last line's figures are the response's
        content = message.get("content")
        if isinstance(content, str):
            draft.add_text(content)
            return True
        if not isinstance(content, list):
            return False
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                draft.add_text(block["text"])
            elif kind == "thinking" and isinstance(block.get("thinking"), str):
                draft.add_thinking(block["thinking"])
            elif kind == "tool_use":
                self._tool_use(draft, block)
        return True

    def _response(self, response_id: object, timestamp: str | None, model: str | None) -> Response:
        """The response a line belongs to: the one of its ``message.id``, else a new one."""
        draft = self.responses.get(response_id) if isinstance(response_id, str) else None
        if draft is None and isinstance(response_id, str) and response_id in self.taken:  # (stored already: a replay)
            return Response(timestamp, model)  # (held by nothing: what it adds is left out)
        if draft is None:
            draft = Response(timestamp, model)
            self.messages.append(draft)
            if isinstance(response_id, str):
                self.responses[response_id] = draft
                self.seen.responses[response_id] = self.key
        elif draft.model is None:
            draft.model = model
        return draft

    def _tool_use(self, draft: Response, block: dict[str, Any]) -> None:
        call_id = block.get("id")
        if isinstance(call_id, str):
            if draft.tool_ids is None:
                draft.tool_ids = set()
            elif call_id in draft.tool_ids:
                return  # a block written again
            draft.tool_ids.add(call_id)
        name = block.get("name")
        name = name if isinstance(name, str) and name else "tool"
        given = block.get("input")
        inputs: dict[str, Any] = given if isinstance(given, dict) else {}
        call = ToolCall(name)
        for key in FILE_INPUTS:
            value = inputs.get(key)
            if isinstance(value, str) and value and value not in call.files:
                call.files.append(value)
        command = inputs.get("command")
        held: list[str] = []  # the input's keys whose values the call keeps elsewhere
        if name in SHELL_TOOLS and isinstance(command, str) and command.strip():
            call.commands.append(command)
            held.append("command")
        call.edits, edited = call_edits(name, inputs)
        call.input = call_input(given, without=[*held, *edited])
        description = inputs.get("description")
        if name in SUBAGENT_TOOLS and isinstance(call_id, str) and isinstance(description, str) and description.strip():
            self.tasks[call_id] = description
        if name in SUBAGENT_TOOLS and isinstance(call_id, str):
            self.task_calls[call_id] = call
            call.agent = self.call_keys.get(call_id)
        if draft.tool_calls is None:
            draft.tool_calls = []
        draft.tool_calls.append(call)

    def _note_agent(self, block: dict[str, Any], result: object) -> None:
        """A Task/Agent result names its sub-agent: remember what the sub-agent was asked."""
        call_id = str(block.get("tool_use_id"))
        description = self.tasks.get(call_id)
        agent_id = result_agent_id(block, result) if description or call_id in self.task_calls else None
        if agent_id:
            self.agent_calls[agent_id] = call_id
            self._known_agent(agent_id, call_id)
        if description and agent_id:
            self.agent_titles[agent_id] = description

    def note_progress(self, record: dict[str, Any]) -> None:
        """A ``progress`` line of a running sub-agent names it and the Task/Agent call it runs for."""
        data = record.get("data")
        call_id, agent_id = record.get("parentToolUseID"), data.get("agentId") if isinstance(data, dict) else None
        description = self.tasks.get(call_id) if isinstance(call_id, str) else None
        if isinstance(call_id, str) and call_id in self.task_calls and isinstance(agent_id, str) and agent_id:
            self.agent_calls.setdefault(agent_id, call_id)
            self._known_agent(agent_id, self.agent_calls[agent_id])
        if description and isinstance(agent_id, str) and agent_id:
            self.agent_titles.setdefault(agent_id, description)

    def _known_agent(self, agent_id: str, call_id: str) -> None:
        """A call now known to have started sub-agent ``agent_id``: it names the agent's transcript
        where that was known before the session was read (``agent_keys``)."""
        call = self.task_calls.get(call_id)
        if call is not None and call.agent is None and agent_id in self.agent_keys:
            call.agent = self.agent_keys[agent_id]

    def link_agent(self, key: str, agent_id: str, tool_use_id: str | None) -> None:
        """A sub-agent's session ``key`` on the Task/Agent call that started it: the call its
        metadata names, else the one whose result or progress named the agent's id."""
        call = self.task_calls.get(tool_use_id or "") or self.task_calls.get(self.agent_calls.get(agent_id, ""))
        if call is not None:
            call.agent = key

    def tail(self, start: int = 0, first_seq: int = 0) -> Tail | None:
        """Where to go on reading: at its last assistant response (later lines may continue
        it), else at its last message; ``start``/``first_seq``: where this reading began."""
        if not self.messages:
            return None
        last = max((i for i, item in enumerate(self.messages) if isinstance(item, Response)), default=-1)
        if last < 0:
            last = len(self.messages) - 1
        before = sum(1 for item in self.messages[:last] if not isinstance(item, Response) or item.message())
        at = self.offsets[last] if last < len(self.offsets) else start
        return Tail(self.file, at, first_seq + self.drained + before)

    def drain(self) -> list[Message]:
        """The messages read so far that no later line can change (those before its last
        assistant response, which a later line may continue), taken out of the builder."""
        last = next(
            (i for i in range(len(self.messages) - 1, -1, -1) if isinstance(self.messages[i], Response)),
            len(self.messages),
        )
        done, self.messages, self.offsets = self.messages[:last], self.messages[last:], self.offsets[last:]
        finished = {id(item) for item in done if isinstance(item, Response)}
        if finished:
            self.taken.update(key for key, item in self.responses.items() if id(item) in finished)
            self.responses = {key: item for key, item in self.responses.items() if id(item) not in finished}
        messages = [message for item in done if (message := item.message() if isinstance(item, Response) else item)]
        if messages:
            self.drained += len(messages)
            self.first_said = self.first_said or _first_said(messages)
            stamps = [message.timestamp for message in messages if message.timestamp]
            if stamps:
                held = self.stamps or (min(stamps), max(stamps))
                self.stamps = (min(held[0], *stamps), max(held[1], *stamps))
        return messages

    def session(self, summaries: dict[str, str]) -> Session | None:
        """The session read, or None when it has no message (an empty or interrupted session)."""
        messages = [
            message
            for item in self.messages
            if (message := item.message() if isinstance(item, Response) else item) is not None
        ]
        if not messages and not self.drained:
            return None
        stamps = [message.timestamp for message in messages if message.timestamp] + list(self.stamps or ())
        own = self.titles.own(self.uuids, summaries) or self.description
        title = own or self.titles.first_request or self.first_said or _first_said(messages)
        return Session(
            key=self.key,
            agent=KIND,
            title=short_title(title),
            messages=messages,
            project=self.parent_project or self.project or self.fallback_project,
            models=self.models,
            branch=self.branch,
            started=min(stamps) if stamps else None,
            last=max(stamps) if stamps else None,
            files=[self.file],
            problems=self.problems,
            parent=self.parent,
            titled=bool(own),
        )


def _first_said(messages: list[Message]) -> str:
    """The first text a person or the model wrote: the title of a session with no request
    (never a system line's, such as a compaction's marker or summary)."""
    return next((m.text for m in messages if m.role in ("user", "assistant") and m.text.strip()), "")


def _usage(counted: dict[str, Any]) -> Usage | None:
    """A line's ``message.usage`` as a ``Usage``: the tokens written to the cache are
    ``cache_creation_input_tokens``, else the sum of its ``cache_creation`` breakdown, which
    tells those written for an hour (``ephemeral_1h_input_tokens``: priced apart)."""
    written = counted.get("cache_creation_input_tokens")
    breakdown = counted.get("cache_creation")
    breakdown = breakdown if isinstance(breakdown, dict) else {}
    if not isinstance(written, int):
        parts = [breakdown.get(name) for name in ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")]
        written = sum(part for part in parts if isinstance(part, int) and not isinstance(part, bool))
    return usage(
        input=counted.get("input_tokens"),
        output=counted.get("output_tokens"),
        cache_write=written,
        cache_read=counted.get("cache_read_input_tokens"),
        cache_write_1h=breakdown.get("ephemeral_1h_input_tokens"),
    )


class Sidechains:
    """The sidechain lines inside a session file, one sub-agent transcript per agent."""

    def __init__(self, main: Builder) -> None:
        self.main = main
        self.by_name: dict[str, Builder] = {}
        self.chain_of: dict[str, str] = {}  # uuid → the transcript it is in

    def builder_for(self, record: dict[str, Any]) -> Builder:
        agent_id, uuid, parent_uuid = record.get("agentId"), record.get("uuid"), record.get("parentUuid")
        if isinstance(agent_id, str) and agent_id:
            name = f"sidechain-{agent_id}"
        elif isinstance(parent_uuid, str) and parent_uuid in self.chain_of:
            name = self.chain_of[parent_uuid]
        else:  # an older transcript with no agentId: a new chain starts at its root
            name = f"sidechain-{len(self.by_name) + 1}"
        if isinstance(uuid, str):
            self.chain_of.setdefault(uuid, name)
        builder = self.by_name.get(name)
        if builder is None:
            builder = Builder(f"{self.main.key}/{name}", self.main.file, parent=self.main.key, seen=self.main.seen)
            self.by_name[name] = builder
        return builder

    def builders(self) -> list[Builder]:
        """The transcripts in order of their first line, told what their parent knows of them."""
        for name, builder in self.by_name.items():
            builder.fallback_project = self.main.project or self.main.fallback_project
            builder.parent_project = self.main.parent_project or self.main.project
            agent_id = name[len("sidechain-") :]
            builder.description = self.main.agent_titles.get(agent_id)
            self.main.link_agent(builder.key, agent_id, None)
        return list(self.by_name.values())
