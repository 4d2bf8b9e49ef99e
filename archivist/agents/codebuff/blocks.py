"""One Codebuff chat's messages (``chat-messages.json``) read into the archive's messages.

A ``user`` message is the person's ``content`` with its images; an ``ai`` or ``agent`` message
is read block by block, in order: text goes to the assistant's text (or its thinking, for a
``reasoning`` text), each ``tool`` block is a call of the assistant's message followed by a tool
message holding its ``output``, and an ``agent`` block's own blocks are read in its place, the
sub-agent's name written before its words. An ``error`` message is a system message. A message
without blocks is its ``content``. What the interface alone shows (``plan``, ``mode-divider``,
``agent-list``, ``ask-user``, ``gate-state``, ``html`` blocks) is skipped; a message or block of
no known shape, and a sub-agent nested more than 20 deep, are counted in the session's ``problems``.
"""

from __future__ import annotations

from typing import Any

from archivist import agents
from archivist.agents import Message, ToolCall, tool_edits

_QUIET_BLOCKS = {"plan", "mode-divider", "agent-list", "ask-user", "gate-state", "html"}
_FILE_KEYS = ("path", "paths", "file_path", "filePath")
_DEPTH = 20  # sub-agents within sub-agents, as deep as a chat nests them


class Chat(agents.Skipping):
    """The messages of one chat, and the session they make."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[Message] = []
        self.models: list[str] = []

    def problems(self) -> list[str]:
        return agents.skipped_problems(self.skipped, "part")

    def read(self, value: Any) -> None:
        if not isinstance(value, list):
            self.skip("not a list of messages")
            return
        for item in value:
            if isinstance(item, dict):
                self._message(item)
            else:
                self.skip("not a JSON object")

    def session(self, key: str, project: str | None, relative: str, used: set[str]) -> agents.Session | None:
        if not self.messages:
            return None
        said = next((m.text for m in self.messages if m.role == "user" and m.text), "")
        times = [m.timestamp for m in self.messages if m.timestamp]
        return agents.Session(
            key=agents.file_key(key, relative, used),
            agent="codebuff",
            title=agents.short_title(said) if said else "Untitled chat",
            messages=self.messages,
            project=project,
            models=self.models,
            started=min(times) if times else None,
            last=max(times) if times else None,
            problems=self.problems(),
        )

    def _message(self, item: dict[str, Any]) -> None:
        variant = item.get("variant")
        when = agents.iso_utc(item.get("timestamp"))
        given, listed = item.get("content"), item.get("blocks")
        content: str = given if isinstance(given, str) else ""
        blocks: list[Any] = listed if isinstance(listed, list) else []
        if variant == "user":
            attached = [image for block in blocks if (image := _image(block)) is not None]
            text = "\n".join([content.strip(), *(image.placeholder() for image in attached)]).strip()
            if text:
                self.messages.append(Message(role="user", text=text, timestamp=when, attachments=attached))
        elif variant in ("ai", "agent"):
            start = len(self.messages)
            reply = Reply(self, when)
            if blocks:
                reply.blocks(blocks, 0)
            elif content.strip():
                reply.text(content)
            reply.close()
            self._spent(item.get("metadata"), start)
        elif variant == "error":
            if content.strip():
                self.messages.append(Message(role="system", text=content.strip(), timestamp=when))
        else:
            self.skip("unknown variant")

    def _spent(self, metadata: Any, start: int) -> None:
        """A reply's ``metadata.model`` and ``metadata.usage``, on its first assistant message."""
        if not isinstance(metadata, dict):
            return
        model = agents.text_or_none(metadata.get("model"))
        if model and model not in self.models:
            self.models.append(model)
        used = metadata.get("usage")
        spent = None
        if isinstance(used, dict):
            spent = agents.usage(
                input=used.get("inputTokens"),
                output=used.get("outputTokens"),
                cache_write=used.get("cacheCreationInputTokens"),
                cache_read=used.get("cacheReadInputTokens"),
            )
        first = next((m for m in self.messages[start:] if m.role == "assistant"), None)
        if first is not None:
            first.model = model or first.model
            first.usage = spent or first.usage


class Reply:
    """An ``ai`` message's blocks read in order into assistant and tool messages."""

    def __init__(self, chat: Chat, when: str | None) -> None:
        self.chat = chat
        self.when = when
        self.texts: list[str] = []
        self.thoughts: list[str] = []
        self.calls: list[ToolCall] = []
        self.outputs: list[str] = []

    def text(self, text: str) -> None:
        if text.strip():
            self.texts.append(text.strip())

    def blocks(self, blocks: list[Any], depth: int) -> None:
        for block in blocks:
            if not isinstance(block, dict):
                self.chat.skip("a block that is not a JSON object")
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("content"), str):
                (self.thoughts if block.get("textType") == "reasoning" else self.texts).append(block["content"].strip())
            elif kind == "tool":
                self._tool(block)
            elif kind == "agent" and depth >= _DEPTH:
                self.chat.skip("a sub-agent nested too deeply")
            elif kind == "agent":
                name = agents.text_or_none(block.get("agentName")) or agents.text_or_none(block.get("agentType"))
                inner = block.get("blocks")
                if name:
                    self.text(f"{name}:")
                if isinstance(inner, list) and inner:
                    self.blocks(inner, depth + 1)
                elif isinstance(block.get("content"), str):
                    self.text(block["content"])
            elif kind == "image":
                pass  # an image the agent showed: the person's images are kept with their messages
            elif not (isinstance(kind, str) and kind in _QUIET_BLOCKS):
                self.chat.skip("unknown block")

    def _tool(self, block: dict[str, Any]) -> None:
        name = agents.text_or_none(block.get("toolName")) or "tool"
        given = tool_edits.parsed_arguments(block.get("input"))
        self.calls.append(_call(name, given))
        output = block.get("output")
        self.outputs.append(output if isinstance(output, str) else "")
        self.close()

    def close(self) -> None:
        """The assistant's message so far, and the output of each of its calls."""
        text = "\n\n".join(piece for piece in self.texts if piece)
        thinking = "\n\n".join(piece for piece in self.thoughts if piece)
        if text or thinking or self.calls:
            self.chat.messages.append(
                Message(role="assistant", text=text, timestamp=self.when, thinking=thinking, tool_calls=self.calls)
            )
        for output in self.outputs:
            self.chat.messages.append(Message(role="tool", text="", timestamp=self.when, tool_output=output.strip()))
        self.texts, self.thoughts, self.calls, self.outputs = [], [], [], []


def _call(name: str, given: Any) -> ToolCall:
    """A tool block's call: the files and command its input names, and its edits (Codebuff's
    ``str_replace`` gives ``replacements`` of ``old`` by ``new``; ``write_file`` its ``content``)."""
    if not isinstance(given, dict):
        return ToolCall(name=name, input=agents.call_input(given))
    command = agents.text_or_none(given.get("command"))
    files = agents.named_files(given, _FILE_KEYS)
    edits, held = _replacements(given) if name == "str_replace" else tool_edits.edits_of(name, given)
    if command:
        held = held | {"command"}
    return ToolCall(
        name=name,
        files=list(dict.fromkeys([*files, *(edit.file for edit in edits)])),
        commands=[command] if command else [],
        input=agents.call_input(given, without=held),
        edits=edits,
    )


def _replacements(given: dict[str, Any]) -> tuple[list[agents.Edit], set[str]]:
    items = given.get("replacements")
    path = given.get("path")
    edits = []
    for item in items if isinstance(items, list) else []:
        edit = agents.text_edit(path, item.get("old"), item.get("new")) if isinstance(item, dict) else None
        if edit is None or edit.old is None:
            return [], set()
        edits.append(edit)
    return edits, {"replacements"} if edits else set()


def _image(block: Any) -> agents.Attachment | None:
    """An ``image`` block: its media type and its base64 ``image`` measured, never kept."""
    if not isinstance(block, dict) or block.get("type") != "image":
        return None
    return agents.attachment(block.get("mediaType") or "image", name=block.get("filename"), data=block.get("image"))
