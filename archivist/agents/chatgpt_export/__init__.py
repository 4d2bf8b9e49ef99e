"""ChatGPT data exports: one session per exported conversation, its current branch first.

An export is the folder or the ``.zip`` that ChatGPT's "Export data" gives. It holds
``conversations.json`` (newer exports split it into ``conversations-000.json``, …), a JSON
list of conversations. A conversation is a tree: ``mapping`` holds its nodes
``{id, message, parent, children}``; an edited or regenerated message has several
children, and ``current_node`` is the leaf of the branch the user sees.

What a session holds:

- key: ``conversation_id`` (else ``id``); title: ``title``, else the first user message
  shortened; project: ``conversation_template_id`` when it names a ChatGPT project
  (``g-p-…``), the only link to a project the export has;
- the messages from the root to ``current_node`` (when it is missing or not in the tree,
  to the leaf written last), leaving out nodes without a message, messages hidden from
  the conversation (``metadata.is_visually_hidden_from_conversation``: the system prompt,
  the memory), system messages of weight 0, reasoning recaps ("Thought for 5s") and
  messages left empty; the user's custom instructions (``user_editable_context``, hidden
  too) as a ``system`` message, since the model was given them;
- then each other branch (its messages left when one was edited or regenerated), from
  where it leaves down to its leaf written last, after a ``system`` marker that says how
  many messages it holds and which message of the session they followed; a branch off a
  branch after it;
- role from ``author.role``; text from ``content.parts`` (strings; an image, audio or
  video part is shown as ``[image]``, ``[audio]``, ``[video]``, and the message's uploads
  (``metadata.attachments``, else its image parts) are its attachments; a voice transcription as
  its text); ``code`` (what the assistant sends a tool, e.g. Python) as a fenced block
  with a tool call named by its ``recipient``; ``execution_output``, browsing results,
  quotes and tool errors, and every text of a ``tool`` message, as tool output;
  ``thoughts`` and the ``analysis`` channel as thinking;
- model: the message's ``metadata.model_slug`` (else its ``default_model_slug``); the
  session's models are those of its messages, else the conversation's
  ``default_model_slug``; times: ``create_time`` (unix seconds) in UTC.

The export container (folder or zip, ``conversations*.json`` read once as a stream, one
conversation held at a time and only within its limits, the zip within those of
``archives``, the problems of a read) is the one of ``claude_export``: ``export_files``,
``json_list`` and ``exports``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist.agents import ROLES, Attachment, Message, Session, ToolCall, attachment, iso_utc
from archivist.agents.export_files import ExportFile
from archivist.agents.exports import (
    CHATGPT_KIND,
    check_export,
    conversation_session,
    parse_time,
    read_export,
    text_of,
)

KIND = CHATGPT_KIND

# Content that is not part of the conversation as the user sees it.
_HIDDEN_CONTENT = {"model_editable_context", "reasoning_recap"}
_TOOL_OUTPUT_CONTENT = {"execution_output", "tether_browsing_display", "tether_quote", "system_error"}


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a ChatGPT export (a sentence), or None when it is one."""
    return check_export(path, KIND)


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Every conversation of the ChatGPT export at ``path`` (folder or zip), in file order (``read_export``)."""
    return read_export(path, _session, problems)


def _session(item: dict[str, Any], file: ExportFile, index: int) -> Session | None:
    template = text_of(item.get("conversation_template_id"))
    return conversation_session(
        KIND,
        item,
        file,
        index,
        _messages,
        keys=("conversation_id", "id"),
        unknown_as="message(s) of unknown content type",
        title="title",
        created="create_time",
        updated="update_time",
        project=template if template.startswith("g-p-") else None,
        default_model="default_model_slug",
    )


def _messages(item: dict[str, Any], problems: list[str], unknown: dict[str, int]) -> list[Message]:
    """The messages of the conversation's current branch, laid out (``_Layout``)."""
    mapping = item.get("mapping")
    if not isinstance(mapping, dict):
        raise ValueError("it has no mapping (its message tree)")
    return _Layout(mapping, problems, unknown).messages(_current_branch(item, mapping, problems))


def _current_branch(item: dict[str, Any], mapping: dict[str, Any], problems: list[str]) -> list[str]:
    """The nodes from the root to the current node, in order."""
    node_id = item.get("current_node")
    if not isinstance(node_id, str) or not isinstance(mapping.get(node_id), dict):
        leaf = _latest_leaf(mapping)
        if leaf is None:
            return []
        where = "missing" if node_id is None else f"{node_id!r}, not in the tree"
        problems.append(f"its current_node is {where}: the branch written last is read")
        node_id = leaf
    chain: list[str] = []
    seen: set[str] = set()
    while isinstance(node_id, str):
        if node_id in seen:
            problems.append("the tree's parent links form a loop: the branch is read up to it")
            break
        node = mapping.get(node_id)
        if not isinstance(node, dict):
            problems.append(f"node {node_id!r} is missing from the tree: the branch is read from below it")
            break
        seen.add(node_id)
        chain.append(node_id)
        node_id = node.get("parent")
    chain.reverse()
    return chain


class _Layout:
    """A conversation's messages laid out: its current branch, then each other branch (left when a message
    was edited or regenerated), after a marker saying which message it followed and how many it holds."""

    def __init__(self, mapping: dict[str, Any], problems: list[str], unknown: dict[str, int]) -> None:
        self.mapping = mapping
        self.problems = problems
        self.unknown = unknown
        self.placed: set[str] = set()
        self.shown: dict[str, int] = {}  # a node: how many messages the session shows up to it
        self.forks: deque[tuple[str, str]] = deque()  # (a node, a child of it no branch read yet holds)
        self.laid: list[Message] = []

    def messages(self, chain: list[str]) -> list[Message]:
        self.placed.update(chain)
        self.laid.extend(self._lay(chain, 0))
        while self.forks:
            fork, start = self.forks.popleft()
            if start in self.placed:
                continue
            followed = self.shown.get(fork, 0)
            branch = self._lay(self._down_to_leaf(start), len(self.laid) + 1)
            if branch:
                self.laid.append(_branch_marker(len(branch), followed))
                self.laid.extend(branch)
        return self.laid

    def _lay(self, nodes: list[str], first: int) -> list[Message]:
        """The messages of a run of nodes, the session showing ``first`` messages before them; each child
        off the run noted as a fork."""
        found: list[Message] = []
        for node_id in nodes:
            raw = self.mapping[node_id].get("message")
            message = _message(raw, self.problems, self.unknown) if isinstance(raw, dict) else None
            if message is not None:
                found.append(message)
            self.shown[node_id] = first + len(found)
            self.forks.extend(
                (node_id, child) for child in _children(self.mapping, node_id) if child not in self.placed
            )
        return found

    def _down_to_leaf(self, start: str) -> list[str]:
        """The nodes from ``start`` down to a leaf, by the child written last at each fork."""
        nodes = [start]
        self.placed.add(start)
        while children := [child for child in _children(self.mapping, nodes[-1]) if child not in self.placed]:
            nodes.append(max(reversed(children), key=lambda child: _written(self.mapping[child])))
            self.placed.add(nodes[-1])
        return nodes


def _children(mapping: dict[str, Any], node_id: str) -> list[str]:
    """The children of a node that are nodes of the tree."""
    found = mapping[node_id].get("children")
    children = found if isinstance(found, list) else []
    return [child for child in children if isinstance(child, str) and isinstance(mapping.get(child), dict)]


def _written(node: dict[str, Any]) -> float:
    """When a node's message was written, in unix seconds (-inf where it does not say)."""
    message = node.get("message")
    moment = parse_time(message.get("create_time")) if isinstance(message, dict) else None
    return moment.timestamp() if moment else -math.inf


def _branch_marker(count: int, followed: int) -> Message:
    """The note before another branch's messages: how many follow, and which message of the session
    they followed before it was edited or regenerated."""
    where = f"followed message {followed}" if followed else "began the conversation"
    return Message(
        role="system",
        text=f"[another branch, not the current one: the next {count} message(s) {where} before an edit "
        "or a regeneration there]",
    )


def _latest_leaf(mapping: dict[str, Any]) -> str | None:
    """The leaf whose message was written last (the deepest one where times tie)."""

    def children(node: dict[str, Any]) -> list[Any]:
        found = node.get("children")
        return found if isinstance(found, list) else []

    def depth(node_id: str) -> int:
        seen: set[str] = set()
        current: Any = node_id
        while isinstance(current, str) and current not in seen and isinstance(mapping.get(current), dict):
            seen.add(current)
            current = mapping[current].get("parent")
        return len(seen)

    def written(node_id: str) -> tuple[float, int]:
        return (_written(mapping[node_id]), depth(node_id))

    leaves = [
        node_id
        for node_id, node in mapping.items()
        if isinstance(node, dict) and not any(isinstance(child, str) and child in mapping for child in children(node))
    ]
    return max(leaves, key=written) if leaves else None


def _message(raw: dict[str, Any], problems: list[str], unknown: dict[str, int]) -> Message | None:
    """A node's message as the conversation shows it, or None where it shows nothing."""
    author = raw.get("author") if isinstance(raw.get("author"), dict) else {}
    metadata: dict[str, Any] = raw["metadata"] if isinstance(raw.get("metadata"), dict) else {}
    content: dict[str, Any] = raw["content"] if isinstance(raw.get("content"), dict) else {}
    if content.get("content_type") == "user_editable_context":
        return _custom_instructions(content, metadata, raw)
    if metadata.get("is_visually_hidden_from_conversation") is True:
        return None
    role = author.get("role") if isinstance(author, dict) else None
    if role not in ROLES:
        problems.append(f"a message by {role!r} (not user, assistant, tool or system) skipped")
        return None
    if role == "system" and raw.get("weight") == 0:
        return None
    content_type = content.get("content_type")
    if content_type in _HIDDEN_CONTENT:
        return None
    text = thinking = output = ""
    if content_type in ("text", "multimodal_text"):
        text = _parts(content.get("parts"))
    elif content_type == "code":
        text = _code(content)
    elif content_type == "thoughts":
        thinking = _thoughts(content)
    elif content_type in _TOOL_OUTPUT_CONTENT:
        output = _tool_output(content_type, content)
    elif isinstance(content.get("parts"), list):
        text = _parts(content["parts"])  # a newer kind of content that still has parts
    elif isinstance(content.get("text"), str):
        text = content["text"]
    else:
        name = content_type if isinstance(content_type, str) else "(none)"
        unknown[name] = unknown.get(name, 0) + 1
        return None
    if role == "tool":
        output, text = "\n\n".join(piece for piece in (output, text) if piece.strip()), ""
    elif role == "assistant" and raw.get("channel") == "analysis":
        thinking, text = "\n\n".join(piece for piece in (thinking, text) if piece.strip()), ""
    recipient = text_of(raw.get("recipient"))
    tool_calls = [ToolCall(name=recipient)] if role == "assistant" and recipient not in ("", "all") else []
    if not (text.strip() or thinking.strip() or output.strip() or tool_calls):
        return None
    model = None
    if role == "assistant":
        model = text_of(metadata.get("model_slug")) or text_of(metadata.get("default_model_slug")) or None
    return Message(
        role=role,
        text=text.strip(),
        timestamp=iso_utc(raw.get("create_time")),
        model=model,
        tool_calls=tool_calls,
        thinking=thinking.strip(),
        tool_output=output,
        attachments=_attachments(metadata, content.get("parts")),
    )


def _custom_instructions(content: dict[str, Any], metadata: dict[str, Any], raw: dict[str, Any]) -> Message | None:
    """The user's custom instructions (``user_editable_context``) as the system message the model was given:
    what the user said of themselves and how they wanted answers, as ChatGPT wrote them (else as the user
    typed them, in ``metadata.user_context_message_data``); None where both are empty."""
    texts = [text_of(content.get(key)) for key in ("user_profile", "user_instructions")]
    if not any(texts):
        typed = metadata.get("user_context_message_data")
        typed = typed if isinstance(typed, dict) else {}
        texts = [text_of(typed.get(key)) for key in ("about_user_message", "about_model_message")]
    text = "\n\n".join(text for text in texts if text)
    return Message(role="system", text=text, timestamp=iso_utc(raw.get("create_time"))) if text else None


def _attachments(metadata: dict[str, Any], parts: Any) -> list[Attachment]:
    """A message's files: those its ``metadata.attachments`` name (an upload's name, size and type),
    else its image parts (``image_asset_pointer``: their size)."""
    named = metadata.get("attachments")
    if isinstance(named, list) and named:
        return [
            attachment(item.get("mime_type") or item.get("mimeType") or "file", item.get("name"), item.get("size"))
            for item in named
            if isinstance(item, dict)
        ]
    return [
        attachment("image", None, part.get("size_bytes"))
        for part in (parts if isinstance(parts, list) else [])
        if isinstance(part, dict) and "image" in text_of(part.get("content_type"))
    ]


def _parts(parts: Any) -> str:
    """The text of ``content.parts``: strings as they are, media as a marker."""
    pieces: list[str] = []
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, str):
            pieces.append(part)
        elif isinstance(part, dict):
            kind = text_of(part.get("content_type"))
            if isinstance(part.get("text"), str) and part["text"].strip():
                pieces.append(part["text"])  # a voice message's transcription
            elif "image" in kind:
                pieces.append("[image]")
            elif "audio" in kind:
                pieces.append("[audio]")
            elif "video" in kind:
                pieces.append("[video]")
    return "\n\n".join(piece for piece in pieces if piece.strip())


def _code(content: dict[str, Any]) -> str:
    code = content.get("text")
    if not isinstance(code, str) or not code.strip():
        return ""
    language = text_of(content.get("language"))
    language = "" if language == "unknown" else language
    return f"```{language}\n{code.rstrip()}\n```"


def _thoughts(content: dict[str, Any]) -> str:
    thoughts = content.get("thoughts")
    if not isinstance(thoughts, list):
        return _parts(content.get("parts"))
    pieces: list[str] = []
    for thought in thoughts:
        if isinstance(thought, dict):
            pieces.append(
                "\n".join(text_of(thought.get(key)) for key in ("summary", "content") if text_of(thought.get(key)))
            )
        elif isinstance(thought, str):
            pieces.append(thought)
    return "\n\n".join(piece for piece in pieces if piece.strip())


def _tool_output(content_type: str, content: dict[str, Any]) -> str:
    if content_type == "tether_browsing_display":
        return text_of(content.get("result")) or text_of(content.get("summary"))
    if content_type == "tether_quote":
        source = "\n".join(text_of(content.get(key)) for key in ("title", "url") if text_of(content.get(key)))
        return "\n\n".join(piece for piece in (source, text_of(content.get("text"))) if piece)
    if content_type == "system_error":
        name, text = text_of(content.get("name")), text_of(content.get("text"))
        return f"{name}: {text}" if name and text else name or text
    output = content.get("text")
    return output if isinstance(output, str) else ""
