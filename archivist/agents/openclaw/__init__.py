"""OpenClaw's sessions, read in place: one session per transcript (docs/contract.md: sources).

OpenClaw (formerly Clawdbot) keeps its state in ``~/.openclaw`` (``OPENCLAW_STATE_DIR`` moves
it), and each agent's sessions in ``agents/<agent id>/sessions/``: a ``<session id>.jsonl``
transcript per session (``*.jsonl.reset.<time>`` and ``*.jsonl.deleted.<time>`` once reset or
deleted) beside ``sessions.json``, the index of its chat keys. A transcript is in the session
format of the pi coding agent that OpenClaw runs (version 3): a header line ``{"type":
"session", "id", "timestamp", "cwd"}``, then entries with an ``id``, a ``parentId`` and an ISO
``timestamp``. The shape is learned from pi's description of it (badlogic/pi-mono
``packages/coding-agent/docs/session.md``), OpenClaw's layout of its state folder, and
agentsview's reader (wesm/agentsview ``internal/parser/openclaw.go`` and its tests). The
source is ``~/.openclaw``, its ``agents`` folder, one agent's folder, its ``sessions``
folder, or one transcript.

What is read:

- ``message`` entries: ``user`` (text and images), ``assistant`` (text, ``thinking``, its
  ``toolCall`` parts with the files and commands their arguments name and the edits they
  made, its ``model`` and ``usage``: input, output, cache read and write tokens and the cost
  it states), ``toolResult`` as a tool message, and ``bashExecution`` (a command the user ran
  with ``!``) as the user's message with its output.
- ``compaction`` and ``branch_summary`` entries as system messages holding their summary.
- ``model_change`` entries name the session's models; the last ``session_info`` entry's
  ``name`` is the title, else the first user message (not a command), shortened. The header's ``cwd`` is the
  project.

Every entry is read in the order of the file, the branches the user left included. Skipped:
``thinking_level_change``, ``label``, ``custom`` and ``custom_message`` entries (settings and
extensions' state), and ``sessions.json``. Lines that are not JSON, and entries of no known
shape, are counted in the session's ``problems``; a file that yields no session tells why in
``problems``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import Message, ToolCall
from archivist.agents.tool_edits import with_input

KIND = "openclaw"

_TRANSCRIPT = re.compile(r".+\.jsonl(?:\.(?:reset|deleted)\..+)?\Z")
_FILE_KEYS = ("path", "file_path", "filePath", "file")
_SETTINGS = {"thinking_level_change", "label", "custom", "custom_message"}
_EXPECTED = (
    "expected OpenClaw's ~/.openclaw (agents/<agent>/sessions/<session id>.jsonl), its agents folder, "
    "one agent's folder or sessions folder, or one transcript"
)


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not OpenClaw's state, agents, sessions or transcript, or None when it is one."""
    return agents.check_path(path, _EXPECTED, "an OpenClaw transcript", _looks_like_transcript, _transcripts, _none)


def _none(root: Path) -> str:
    if (root / "agents").is_dir() or root.name in ("agents", "sessions") or (root / "sessions").is_dir():
        return "holds no OpenClaw transcript yet"
    return "holds no OpenClaw agents folder"


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every session under ``path``, one per transcript, in the order of their paths."""
    root, files = agents.source_files(path, problems, _transcripts)
    used: set[str] = set()
    for file in files:
        relative = agents.relative_path(file, root) if root.is_dir() else file.name
        transcript = Transcript(file)
        session = transcript.session(relative, used)
        if session is not None:
            used.add(session.key)
            yield session
        elif problems is not None:
            problems.extend(f"{relative}: {problem}" for problem in transcript.problems() or ["no message"])


# -- finding files ---------------------------------------------------------------------


def _transcripts(root: agents.Root) -> list[Path]:
    """The transcripts of every agent's ``sessions`` folder under the source."""
    path = root.path
    if path.name != "agents" and agents.is_dir(path / "agents"):
        path = path / "agents"
    if path.name == "sessions":
        folders = [path]
    elif agents.is_dir(path / "sessions"):
        folders = [path / "sessions"]
    else:
        folders = [agent / "sessions" for agent in root.folders(path) if agents.is_dir(agent / "sessions")]
    found = [
        file for folder in folders if root.allows(folder) for file in root.files(folder) if _TRANSCRIPT.match(file.name)
    ]
    return sorted(found, key=lambda file: agents.relative_path(file, root.path))


def _looks_like_transcript(file: Path) -> bool:
    """A peek: a first line that is a session header or an entry."""
    return bool(_TRANSCRIPT.match(file.name)) and agents.first_value_is(
        file, lambda value: isinstance(value, dict) and isinstance(value.get("type"), str)
    )


# -- reading one transcript ----------------------------------------------------------------


class Transcript(agents.Skipping):
    """One transcript read into its header, its messages and its title."""

    def __init__(self, file: Path) -> None:
        super().__init__()
        self.file = file
        self.header: dict[str, Any] = {}
        self.messages: list[Message] = []
        self.models: list[str] = []
        self.name: str | None = None
        self.commands: set[str] = set()  # the user's messages that are commands run with ``!``
        self.notes: list[str] = []

    def session(self, relative: str, used: set[str]) -> agents.Session | None:
        self._read()
        if not self.messages:
            return None
        session_id = agents.text_or_none(self.header.get("id"))
        said = [m.text for m in self.messages if m.role == "user" and m.text]
        first_user = next((text for text in said if text not in self.commands), said[0] if said else "")
        title = self.name or (agents.short_title(first_user) if first_user else "Untitled session")
        times = [m.timestamp for m in self.messages if m.timestamp]
        started = agents.iso_utc(self.header.get("timestamp"))
        return agents.Session(
            key=agents.file_key(session_id, relative, used),
            agent=KIND,
            title=title,
            messages=self.messages,
            project=agents.text_or_none(self.header.get("cwd")),
            models=self.models,
            started=min([*times, *([started] if started else [])]) if times or started else None,
            last=max(times) if times else started,
            files=[self.file],
            problems=self.problems(),
        )

    def problems(self) -> list[str]:
        return [*agents.skipped_problems(self.skipped), *self.notes]

    def _read(self) -> None:
        try:
            with self.file.open("rb") as handle:
                for entry in agents.json_lines(handle, self.skipped):
                    if isinstance(entry, dict):
                        self._entry(entry)
                    else:
                        self.skip("not a JSON object")
        except OSError as error:
            self.notes.append(agents.Unread(f"reading stopped: {error.strerror or error}"))

    def _entry(self, entry: dict[str, Any]) -> None:
        kind = entry.get("type")
        when = agents.iso_utc(entry.get("timestamp"))
        if kind == "session":
            self.header = self.header or entry
        elif kind == "message" and isinstance(entry.get("message"), dict):
            self._message(entry["message"], when)
        elif kind in ("compaction", "branch_summary") and isinstance(entry.get("summary"), str):
            if entry["summary"].strip():
                self.messages.append(Message(role="system", text=entry["summary"].strip(), timestamp=when))
        elif kind == "model_change":
            self._model(entry.get("modelId"))
        elif kind == "session_info":
            self.name = agents.text_or_none(entry.get("name")) or self.name
        elif not (isinstance(kind, str) and kind in _SETTINGS):
            self.skip("unknown entry")

    def _model(self, value: Any) -> str | None:
        model = agents.text_or_none(value)
        if model and model not in self.models:
            self.models.append(model)
        return model

    def _message(self, message: dict[str, Any], when: str | None) -> None:
        role = message.get("role")
        when = when or agents.iso_utc(message.get("timestamp"))
        content = message.get("content")
        if role == "user":
            attached = _images(content)
            text = "\n".join([agents.parts_text(content).strip(), *(item.placeholder() for item in attached)]).strip()
            if text:
                self.messages.append(Message(role="user", text=text, timestamp=when, attachments=attached))
        elif role == "assistant":
            self._assistant(message, when)
        elif role == "toolResult":
            output = _text(content)
            if message.get("isError") is True and not output:
                output = "error"
            self.messages.append(Message(role="tool", text="", timestamp=when, tool_output=output))
        elif role == "bashExecution" and isinstance(message.get("command"), str):
            ran = message.get("output")
            self.commands.add(f"!{message['command']}")
            self.messages.append(
                Message(
                    role="user",
                    text=f"!{message['command']}",
                    timestamp=when,
                    tool_output=ran if isinstance(ran, str) else "",
                )
            )
        elif role in ("compactionSummary", "branchSummary") and isinstance(message.get("summary"), str):
            self.messages.append(Message(role="system", text=message["summary"].strip(), timestamp=when))
        elif role == "custom":
            pass  # an extension's message to the model
        else:
            self.skip("unknown message role")

    def _assistant(self, message: dict[str, Any], when: str | None) -> None:
        content = message.get("content")
        parts = content if isinstance(content, list) else [content]
        calls = [
            tool_call(part) for part in parts if isinstance(part, dict) and part.get("type") in ("toolCall", "tool_use")
        ]
        thinking = "\n\n".join(
            part["thinking"].strip()
            for part in parts
            if isinstance(part, dict) and part.get("type") == "thinking" and isinstance(part.get("thinking"), str)
            if part["thinking"].strip()
        )
        text = _text(content)
        error = agents.text_or_none(message.get("errorMessage"))
        if error and error not in text:
            text = f"{text}\n\n{error}".strip()
        if not (text or thinking or calls):
            return
        self.messages.append(
            Message(
                role="assistant",
                text=text,
                timestamp=when,
                model=self._model(message.get("model")),
                tool_calls=calls,
                thinking=thinking,
                usage=_usage(message.get("usage")),
            )
        )


def tool_call(part: dict[str, Any]) -> ToolCall:
    """A ``toolCall`` part (``name``, ``arguments``), or the older ``tool_use`` (``input``)."""
    name = agents.text_or_none(part.get("name")) or "tool"
    given = part.get("arguments") if "arguments" in part else part.get("input")
    args = given if isinstance(given, dict) else {}
    command = agents.text_or_none(args.get("command"))
    found = ToolCall(name=name, files=agents.named_files(args, _FILE_KEYS), commands=[command] if command else [])
    return with_input(found, given)


def _usage(usage: Any) -> agents.Usage | None:
    """An assistant message's ``usage``: ``input`` (not read from the cache), ``output``,
    ``cacheRead``, ``cacheWrite``, and the ``total`` of its ``cost`` in US dollars."""
    if not isinstance(usage, dict):
        return None
    cost = usage.get("cost")
    return agents.usage(
        input=usage.get("input"),
        output=usage.get("output"),
        cache_read=usage.get("cacheRead"),
        cache_write=usage.get("cacheWrite"),
        cost=cost.get("total") if isinstance(cost, dict) else None,
    )


def _text(content: Any) -> str:
    """The ``text`` parts of a content (a string, or parts), a line apart."""
    if isinstance(content, list):
        content = [part for part in content if not isinstance(part, dict) or part.get("type") in (None, "text")]
    return agents.parts_text(content).strip()


def _images(content: Any) -> list[agents.Attachment]:
    """The ``image`` parts of a content (``mimeType`` and base64 ``data``), measured, never kept."""
    parts = content if isinstance(content, list) else []
    return [
        agents.attachment(part.get("mimeType") or "image", data=part.get("data"))
        for part in parts
        if isinstance(part, dict) and part.get("type") == "image"
    ]
