"""One Claude Code session, or sub-agent transcript, built from its lines.

``user``, ``assistant`` and ``system`` lines are messages (an assistant response written
over several lines sharing ``message.id`` is one message; a line whose ``uuid`` was
already read is a copy and is dropped); ``summary``, ``custom-title`` and ``ai-title``
lines give the title; the other known types are bookkeeping.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archivist.agents import Message, Session, Tail, ToolCall, between, iso_utc, short_title

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
AGENT_PREFIX = "agent-"
SUBAGENTS_FOLDER = "subagents"

# User text the CLI writes, not the person: never a title.
NOT_A_PROMPT = (
    "<command-",
    "<local-command-",
    "<bash-",
    "<system-reminder>",
    "<user-prompt-submit-hook>",
    "Caveat:",
    "[Request interrupted",
)
COMMAND_TAGS = ("command-name", "command-args")  # what a slash command is kept as: its name and arguments
OUTPUT_TAGS_RE = re.compile(r"</?(?:local-command-stdout|local-command-stderr|bash-stdout|bash-stderr)>")
OUTPUT_PREFIXES = ("<local-command-stdout>", "<local-command-stderr>", "<bash-stdout>", "<bash-stderr>")
AGENT_ID_RE = re.compile(r"agentId:\s*([0-9A-Za-z_-]+)")


@dataclass(slots=True)
class Response:
    """An assistant response being read: its blocks can come over several lines.

    Its lists are made when first needed: a long session holds many of these at once.
    """

    timestamp: str | None
    model: str | None
    texts: list[str] | None = None
    thinking: list[str] | None = None
    tool_calls: list[ToolCall] | None = None
    tool_ids: set[str] | None = None

    def add_text(self, text: str) -> None:
        if not text.strip():
            return
        if self.texts is None:
            self.texts = [text]
        elif text not in self.texts:  # a block written again
            self.texts.append(text)

    def add_thinking(self, text: str) -> None:
        if not text.strip():
            return
        if self.thinking is None:
            self.thinking = [text]
        elif text not in self.thinking:
            self.thinking.append(text)

    def message(self) -> Message | None:
        if not (self.texts or self.thinking or self.tool_calls):
            return None
        return Message(
            role="assistant",
            text="\n\n".join(self.texts) if self.texts else "",
            timestamp=self.timestamp,
            model=self.model,
            tool_calls=self.tool_calls or [],
            thinking="\n\n".join(self.thinking) if self.thinking else "",
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
    ) -> None:
        self.key = key
        self.file = file
        self.parent = parent
        self.fallback_project = fallback_project
        self.description = description  # a sub-agent's task, its title after the log's own
        self.messages: list[Message | Response] = []  # in file order
        self.responses: dict[str, Response] = {}  # message.id → its assistant response
        self.uuids: dict[str, int] = {}  # uuid → line position, to drop copies and place summaries
        self.project: str | None = None
        self.branch: str | None = None
        self.models: list[str] = []
        self.session_ids: list[str] = []
        self.custom_title: str | None = None
        self.ai_title: str | None = None
        self.summaries: list[tuple[str, str]] = []  # (leafUuid, summary), in file order
        self.first_prompt: str | None = None
        self.tasks: dict[str, str] = {}  # Task/Agent tool_use id → its description
        self.agent_titles: dict[str, str] = {}  # a sub-agent's id → the description of its task
        self.problems: list[str] = []
        self.offsets: list[int] = []  # the byte offset of the line that began each of messages

    def take(self, record: dict[str, Any], kind: str) -> bool:
        """Read one line; False when it is malformed for its type."""
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.uuids:
                return True  # a copy of a line already read (a resumed session)
            self.uuids[uuid] = len(self.uuids)
        self._envelope(record)
        if kind == "user":
            return self._user(record)
        if kind == "assistant":
            return self._assistant(record)
        if kind == "system":
            content = record.get("content")
            if isinstance(content, str) and content.strip():
                self.messages.append(Message("system", content, iso_utc(record.get("timestamp"))))
            return True
        if kind == "summary":
            leaf, summary = record.get("leafUuid"), record.get("summary")
            if isinstance(leaf, str) and isinstance(summary, str) and summary.strip():
                self.summaries.append((leaf, summary))
        elif kind == "custom-title":
            self.custom_title = _text_or(record.get("customTitle"), self.custom_title)
        elif kind == "ai-title":
            self.ai_title = _text_or(record.get("aiTitle"), self.ai_title)
        return True

    def _envelope(self, record: dict[str, Any]) -> None:
        cwd, branch, session_id = record.get("cwd"), record.get("gitBranch"), record.get("sessionId")
        if self.project is None and isinstance(cwd, str) and cwd:
            self.project = cwd
        if self.branch is None and isinstance(branch, str) and branch:
            self.branch = branch
        if isinstance(session_id, str) and session_id and session_id not in self.session_ids:
            self.session_ids.append(session_id)

    def _user(self, record: dict[str, Any]) -> bool:
        message = record.get("message")
        if not isinstance(message, dict):
            return False
        content = message.get("content")
        timestamp = iso_utc(record.get("timestamp"))
        if record.get("isCompactSummary"):
            text = _blocks_text(content)
            if text.strip():
                self.messages.append(Message("system", text, timestamp))
            return True
        if record.get("isMeta"):
            return True  # text the CLI adds to the prompt (caveats, skill bodies), not a message
        if isinstance(content, str):
            self._user_text(content, timestamp)
            return True
        if not isinstance(content, list):
            return False
        results = [block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"]
        if results:
            outputs = []
            for block in results:
                outputs.append(_blocks_text(block.get("content")))
                self._note_agent(block, record.get("toolUseResult"))
            outputs.extend(text for text in _texts(content) if text.strip())
            self.messages.append(Message("tool", "", timestamp, tool_output="\n\n".join(outputs)))
            return True
        texts = [text for text in _texts(content) if text.strip() and not text.lstrip().startswith("<system-reminder>")]
        if texts:
            self._user_text("\n\n".join(texts), timestamp)
        return True

    def _user_text(self, text: str, timestamp: str | None) -> None:
        stripped = text.lstrip()
        if stripped.startswith(OUTPUT_PREFIXES):
            self.messages.append(Message("tool", "", timestamp, tool_output=OUTPUT_TAGS_RE.sub("", text).strip()))
            return
        if "<command-name>" in text:  # a slash command: kept as typed
            parts = (_tag_text(text, tag) for tag in COMMAND_TAGS)
            text = " ".join(part for part in parts if part) or text
        elif self.first_prompt is None and stripped and not stripped.startswith(NOT_A_PROMPT):
            self.first_prompt = text
        if text.strip():
            self.messages.append(Message("user", text, timestamp))

    def _assistant(self, record: dict[str, Any]) -> bool:
        message = record.get("message")
        if not isinstance(message, dict):
            return False
        model = message.get("model")
        model = model if isinstance(model, str) and model and model != SYNTHETIC_MODEL else None
        if model and model not in self.models:
            self.models.append(model)
        response_id = message.get("id")
        draft = self.responses.get(response_id) if isinstance(response_id, str) else None
        if draft is None:
            draft = Response(iso_utc(record.get("timestamp")), model)
            self.messages.append(draft)
            if isinstance(response_id, str):
                self.responses[response_id] = draft
        elif draft.model is None:
            draft.model = model
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
        if name in SHELL_TOOLS and isinstance(command, str) and command.strip():
            call.commands.append(command)
        if name in SUBAGENT_TOOLS and isinstance(call_id, str) and isinstance(inputs.get("description"), str):
            self.tasks[call_id] = inputs["description"]
        if draft.tool_calls is None:
            draft.tool_calls = []
        draft.tool_calls.append(call)

    def _note_agent(self, block: dict[str, Any], result: object) -> None:
        """A Task/Agent result names its sub-agent: remember what the sub-agent was asked."""
        description = self.tasks.get(str(block.get("tool_use_id")))
        if description is None:
            return
        agent_id = result.get("agentId") if isinstance(result, dict) else None
        if not isinstance(agent_id, str):
            found = AGENT_ID_RE.search(_blocks_text(block.get("content")))
            agent_id = found.group(1) if found else None
        if agent_id:
            self.agent_titles[agent_id] = description

    def _summary(self, others: dict[str, str]) -> str | None:
        """The summary of this session's latest summarised message, if any."""
        best, best_position = None, -1
        for leaf, summary in [*others.items(), *self.summaries]:
            position = self.uuids.get(leaf)
            if position is not None and position >= best_position:
                best, best_position = summary, position
        return best

    def tail(self, start: int = 0, first_seq: int = 0) -> Tail | None:
        """Where to go on reading: at its last assistant response (later lines may continue
        it), else at its last message; ``start``/``first_seq``: where this reading began."""
        if not self.messages:
            return None
        last = max((i for i, item in enumerate(self.messages) if isinstance(item, Response)), default=-1)
        if last < 0:
            last = len(self.messages) - 1
        before = sum(1 for item in self.messages[:last] if not isinstance(item, Response) or item.message())
        return Tail(self.file, self.offsets[last] if last < len(self.offsets) else start, first_seq + before)

    def session(self, summaries: dict[str, str]) -> Session | None:
        """The session read, or None when it has no message (an empty or interrupted session)."""
        messages = [
            message
            for item in self.messages
            if (message := item.message() if isinstance(item, Response) else item) is not None
        ]
        if not messages:
            return None
        stamps = [message.timestamp for message in messages if message.timestamp]
        fallback = next((message.text for message in messages if message.text.strip()), "")
        title = (
            self.custom_title
            or self.ai_title
            or self._summary(summaries)
            or self.description
            or self.first_prompt
            or fallback
        )
        return Session(
            key=self.key,
            agent=KIND,
            title=short_title(title),
            messages=messages,
            project=self.project or self.fallback_project,
            models=self.models,
            branch=self.branch,
            started=min(stamps) if stamps else None,
            last=max(stamps) if stamps else None,
            files=[self.file],
            problems=self.problems,
            parent=self.parent,
            titled=bool(self.custom_title or self.ai_title or self._summary(summaries) or self.description),
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
            builder = Builder(f"{self.main.key}/{name}", self.main.file, parent=self.main.key)
            self.by_name[name] = builder
        return builder

    def builders(self) -> list[Builder]:
        """The transcripts in order of their first line, told what their parent knows of them."""
        for name, builder in self.by_name.items():
            builder.fallback_project = self.main.project or self.main.fallback_project
            agent_id = name[len("sidechain-") :]
            builder.description = self.main.agent_titles.get(agent_id)
        return list(self.by_name.values())


# --- values ------------------------------------------------------------------------------


def _texts(blocks: list[Any]) -> list[str]:
    return [
        block["text"]
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]


def _blocks_text(content: object) -> str:
    """A string, or the text of a list of blocks (tool results, compact summaries)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") == "image":
                parts.append("[image]")
    return "\n".join(parts)


def _tag_text(text: str, tag: str) -> str:
    """The text of the first ``<tag>…</tag>`` in ``text``, stripped ("" where there is none)."""
    span = between(text, f"<{tag}>", f"</{tag}>")
    return text[span[0] : span[1]].strip() if span else ""


def _text_or(value: object, default: str | None) -> str | None:
    return value if isinstance(value, str) and value.strip() else default
