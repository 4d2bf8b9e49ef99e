"""Kimi CLI's sessions, read in place: one session per session folder (docs/contract.md: sources).

Kimi CLI (Moonshot AI's ``kimi``) keeps its data in ``~/.kimi`` (``KIMI_SHARE_DIR`` moves it):
``kimi.json`` lists the work directories it was run in, and ``sessions/<md5 of the work
directory>/<session id>/`` holds each session: ``wire.jsonl``, the events of its turns as the
terminal showed them, each line ``{"timestamp": <Unix seconds>, "message": {"type", "payload"}}``
after a first ``{"type": "metadata", "protocol_version"}`` line; ``context.jsonl``, the messages
sent to the model, without times; and ``state.json``, with the title the user gave it. Versions
before the wire log kept only the context, as ``sessions/<md5>/<session id>.jsonl``. The shape
is learned from Kimi CLI's own source (``src/kimi_cli/session.py``, ``soul/context.py``,
``wire/file.py`` and ``wire/types.py`` of MoonshotAI/kimi-cli) and from agentsview's reader of
it (``internal/parser/kimi.go``). The source is ``~/.kimi``, its ``sessions`` folder, one work
directory's folder, one session's folder, or one ``wire.jsonl`` or context file.

What is read:

- From the wire log: ``TurnBegin`` and ``SteerInput`` as user messages (their ``user_input``,
  text and images); each step (``StepBegin``) as one assistant message holding its
  ``ContentPart`` texts, its thinking (``think`` parts) and its ``ToolCall``s (the files and
  commands their arguments name; ``StrReplaceFile``'s replacements and ``WriteFile``'s content
  as edits); each ``ToolResult`` as a tool message; a ``StatusUpdate``'s ``token_usage`` as the
  usage of its step's message.
- Without a wire log: the context's ``user``, ``assistant`` (with ``tool_calls``) and ``tool``
  messages, which have no times.
- The title: ``custom_title`` of ``state.json`` (or ``title`` of an older ``metadata.json``),
  else the first user message, shortened. The project: the work directory of ``kimi.json``
  whose MD5 names the session's folder.

Skipped: the wire's bookkeeping events (``TurnEnd``, approvals, hooks, MCP loading, retries,
compaction marks, notifications, sub-agent events, which the sub-agent's own files repeat), the
context's records of its own (``_system_prompt``, ``_checkpoint``, ``_usage``) and the
``<system>CHECKPOINT n</system>`` messages Kimi adds to it. Neither log names the model.
Lines that are not JSON, and records of no known shape, are counted in the session's
``problems``; a file that yields no session tells why in ``problems``.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import Edit, Message, ToolCall, Usage
from archivist.agents.tool_edits import parsed_arguments, with_input

KIND = "kimi-cli"

WIRE = "wire.jsonl"
CONTEXT = "context.jsonl"
_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z._-]*\Z")
_CHECKPOINT = re.compile(r"<system>CHECKPOINT \d+</system>\Z")
_FILE_KEYS = ("path", "file_path", "directory")
# events of the wire that hold no message: read past, never counted as skipped
_BOOKKEEPING = {
    "TurnEnd",
    "StepInterrupted",
    "StepRetry",
    "CompactionBegin",
    "CompactionEnd",
    "HookTriggered",
    "HookResolved",
    "HookRequest",
    "HookResponse",
    "MCPLoadingBegin",
    "MCPLoadingEnd",
    "Notification",
    "ApprovalRequest",
    "ApprovalResponse",
    "ApprovalRequestResolved",
    "QuestionRequest",
    "QuestionResponse",
    "ToolCallRequest",
    "ToolCallPart",
    "SubagentEvent",
    "PlanDisplay",
    "BtwBegin",
    "BtwEnd",
}
_EXPECTED = (
    "expected Kimi CLI's ~/.kimi (sessions/<work directory hash>/<session id>/wire.jsonl or "
    "context.jsonl), its sessions folder, one session's folder, or one wire.jsonl"
)


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not Kimi CLI's data, sessions or session file, or None when it is one."""
    return agents.check_path(path, _EXPECTED, "a Kimi CLI session log", _looks_like_log, _log_files, _no_session)


def _no_session(root: Path) -> str:
    if root.name == "sessions" or (root / "sessions").is_dir() or (root / "kimi.json").is_file():
        return "holds no Kimi CLI session yet"
    return "holds no Kimi CLI sessions folder"


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every session under ``path``, one per session folder (or older context file), in the order of their paths."""
    root, files = agents.source_files(path, problems, _log_files)
    folders: dict[Path, str | None] = {}
    used: set[str] = set()
    for file in files:
        work_dir = file.parent.parent if file.name in (WIRE, CONTEXT) else file.parent
        if work_dir not in folders:
            folders[work_dir] = _work_dir(work_dir)
        relative = agents.relative_path(file, root) if root.is_dir() else file.name
        session_id = file.parent.name if file.name in (WIRE, CONTEXT) else file.stem
        key = agents.file_key(session_id if _ID.match(session_id) else None, relative, used)
        log = Log(file)
        session = log.session(key, folders[work_dir])
        if session is not None:
            used.add(key)
            yield session
        elif problems is not None:
            problems.extend(f"{relative}: {problem}" for problem in log.problems() or ["no message"])


# -- finding files ---------------------------------------------------------------------


def _log_files(root: agents.Root) -> list[Path]:
    """The log of each session: its wire log, else its context; an older session's context file."""
    path = root.path
    if _session_log(root, path) is not None:
        return [log for log in [_session_log(root, path)] if log is not None]
    if path.name != "sessions" and agents.is_dir(path / "sessions"):
        path = path / "sessions"
    work_dirs = [path] if _holds_sessions(root, path) and path.name != "sessions" else root.folders(path)
    found: list[Path] = []
    for work_dir in work_dirs:
        for entry in root.entries(work_dir):
            if agents.is_dir(entry):
                log = _session_log(root, entry)
                if log is not None:
                    found.append(log)
            elif entry.suffix == ".jsonl" and agents.is_file(entry) and not agents.is_dir(entry.with_suffix("")):
                found.append(entry)  # a context file older versions kept beside the session folders
    return sorted(found, key=lambda file: agents.relative_path(file, root.path))


def _session_log(root: agents.Root, folder: Path) -> Path | None:
    for name in (WIRE, CONTEXT):
        file = folder / name
        if agents.is_file(file) and root.allows(file):
            return file
    return None


def _holds_sessions(root: agents.Root, folder: Path) -> bool:
    """Whether ``folder`` is one work directory's folder: session folders or older context files in it."""
    return any(
        (agents.is_dir(entry) and _session_log(root, entry) is not None) or entry.suffix == ".jsonl"
        for entry in root.entries(folder)
    )


def _looks_like_log(file: Path) -> bool:
    """A peek: a JSONL file whose first line is the wire's metadata or record, or a context record."""
    return file.suffix == ".jsonl" and agents.first_value_is(
        file,
        lambda value: (
            isinstance(value, dict) and ("role" in value or "message" in value or "protocol_version" in value)
        ),
    )


def _work_dir(folder: Path) -> str | None:
    """The work directory whose MD5 names ``folder``, as ``kimi.json`` beside ``sessions`` lists it."""
    if folder.parent.name != "sessions":
        return None
    registry = folder.parent.parent / "kimi.json"
    document = agents.json_file(registry, agents.Root(registry.parent)) if agents.is_file(registry) else None
    listed = document.get("work_dirs") if isinstance(document, dict) else None
    for entry in listed if isinstance(listed, list) else []:
        path = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(path, str) or not path:
            continue
        digest = hashlib.md5(path.encode("utf-8", "replace"), usedforsecurity=False).hexdigest()
        kaos = entry.get("kaos")
        if folder.name in (digest, f"{kaos}_{digest}"):
            return path
    return None


# -- reading one session -----------------------------------------------------------------


class Log(agents.Skipping):
    """One session's log read into its messages."""

    def __init__(self, file: Path) -> None:
        super().__init__()
        self.file = file
        self.messages: list[Message] = []
        self.notes: list[str] = []
        self.step: Message | None = None  # the assistant message of the step being read

    def session(self, key: str, project: str | None) -> agents.Session | None:
        self._read()
        if not self.messages:
            return None
        first_user = next((m.text for m in self.messages if m.role == "user" and m.text), "")
        given = _given_title(self.file.parent) if self.file.name in (WIRE, CONTEXT) else None
        title = given or (agents.short_title(first_user) if first_user else "Untitled session")
        times = [m.timestamp for m in self.messages if m.timestamp]
        return agents.Session(
            key=key,
            agent=KIND,
            title=title,
            messages=self.messages,
            project=project,
            started=min(times) if times else None,
            last=max(times) if times else None,
            files=[self.file],
            problems=self.problems(),
        )

    def problems(self) -> list[str]:
        return [*agents.skipped_problems(self.skipped), *self.notes]

    def _read(self) -> None:
        wire = self.file.name == WIRE
        try:
            with self.file.open("rb") as handle:
                for value in agents.json_lines(handle, self.skipped):
                    if not isinstance(value, dict):
                        self.skip("not a JSON object")
                    elif wire:
                        self._event(value)
                    else:
                        self._context(value)
        except OSError as error:
            self.notes.append(agents.Unread(f"reading stopped: {error.strerror or error}"))

    # the wire log

    def _event(self, record: dict[str, Any]) -> None:
        if record.get("type") == "metadata":
            return
        message = record.get("message")
        kind = message.get("type") if isinstance(message, dict) else None
        payload = message.get("payload") if isinstance(message, dict) else None
        if not isinstance(kind, str) or not isinstance(payload, dict):
            self.skip("unknown record")
            return
        when = agents.iso_utc(record.get("timestamp"))
        if kind in ("TurnBegin", "SteerInput"):
            self.step = None
            self._user(payload.get("user_input"), when)
        elif kind == "StepBegin":
            self.step = None
        elif kind == "ContentPart":
            self._part(payload, when)
        elif kind == "ToolCall":
            self._assistant(when).tool_calls.append(tool_call(payload))
        elif kind == "ToolResult":
            self._result(payload, when)
        elif kind == "StatusUpdate":
            spent = _usage(payload.get("token_usage"))
            if spent is not None and self.step is not None:
                self.step.usage = spent if self.step.usage is None else self.step.usage + spent
        elif kind not in _BOOKKEEPING:
            self.skip(f"unknown event {kind[:40]!r}")

    def _assistant(self, when: str | None) -> Message:
        if self.step is None:
            self.step = Message(role="assistant", text="", timestamp=when)
            self.messages.append(self.step)
        return self.step

    def _user(self, content: Any, when: str | None) -> None:
        text = _text(content)
        attached = agents.attachments_of(content)
        text = "\n".join([text, *(item.placeholder() for item in attached)]).strip()
        if text:
            self.messages.append(Message(role="user", text=text, timestamp=when, attachments=attached))

    def _part(self, part: dict[str, Any], when: str | None) -> None:
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            if part["text"].strip():
                step = self._assistant(when)
                step.text = f"{step.text}\n\n{part['text']}" if step.text else part["text"]
        elif part.get("type") == "think" and isinstance(part.get("think"), str):
            if part["think"].strip():
                step = self._assistant(when)
                step.thinking = f"{step.thinking}\n\n{part['think']}" if step.thinking else part["think"]
        elif part.get("type") in ("image_url", "audio_url", "video_url"):
            pass  # (media the model answered with: none of Kimi's models do)
        else:
            self.skip("unknown content part")

    def _result(self, payload: dict[str, Any], when: str | None) -> None:
        value = payload.get("return_value")
        if not isinstance(value, dict):
            self.skip("tool result without its return value")
            return
        said = agents.text_or_none(value.get("message"))  # the tool's note to the model, which reads it first
        output = "\n".join(text for text in (said, _text(value.get("output"))) if text)
        if not output and value.get("is_error") is True:
            output = "error"
        self.messages.append(Message(role="tool", text="", timestamp=when, tool_output=output))

    # the context, without a wire log

    def _context(self, record: dict[str, Any]) -> None:
        role = record.get("role")
        if isinstance(role, str) and role.startswith("_"):
            return  # the context's own records: the system prompt, checkpoints, token counts
        content = record.get("content")
        if role == "user":
            if not _CHECKPOINT.match(_text(content).strip()):
                self._user(content, None)
        elif role == "assistant":
            message = Message(role="assistant", text=_text(content), thinking=_thinking(content))
            calls = record.get("tool_calls")
            message.tool_calls = (
                [tool_call(call) for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []
            )
            if message.text or message.thinking or message.tool_calls:
                self.messages.append(message)
        elif role == "tool":
            self.messages.append(Message(role="tool", text="", tool_output=_text(content)))
        elif role == "system":
            pass  # (a system message in the middle of the context: Kimi's own reminders)
        else:
            self.skip("unknown role")


def tool_call(call: dict[str, Any]) -> ToolCall:
    """A ``ToolCall`` record: its function's name and arguments (a JSON text)."""
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    name = agents.text_or_none(function.get("name")) or "tool"
    given = parsed_arguments(function.get("arguments"))
    args = given if isinstance(given, dict) else {}
    command = agents.text_or_none(args.get("command"))
    found = ToolCall(name=name, files=agents.named_files(args, _FILE_KEYS), commands=[command] if command else [])
    edits, held = _edits(name, args)
    if edits:
        found.input = agents.call_input(args, without=held | ({"command"} if command else set()))
        found.edits = edits
        return found
    return with_input(found, given)


def _edits(name: str, args: dict[str, Any]) -> tuple[list[Edit], set[str]]:
    """``StrReplaceFile``'s replacements (``edit``: one, or a list) and ``WriteFile``'s content,
    which ``append`` adds at the file's end (a patch of added lines)."""
    file = agents.text_or_none(args.get("path"))
    if file is None:
        return [], set()
    if name == "StrReplaceFile":
        given = args.get("edit")
        items = given if isinstance(given, list) else [given]
        edits = [
            agents.text_edit(file, item.get("old"), item.get("new")) if isinstance(item, dict) else None
            for item in items
        ]
        if items and all(edit is not None and edit.old is not None for edit in edits):
            return [edit for edit in edits if edit is not None], {"edit"}
    elif name == "WriteFile" and isinstance(args.get("content"), str):
        content = args["content"]
        if args.get("mode") == "append":
            lines = content.splitlines() or [""]
            patch = "\n".join([f"@@ +{len(lines)} @@", *(f"+{line}" for line in lines)])
            return [Edit(file, patch=patch)], {"content"}
        return [Edit(file, None, content)], {"content"}
    return [], set()


def _usage(tokens: Any) -> Usage | None:
    """A step's ``token_usage``: ``input_other`` (the prompt not read from the cache), ``output``,
    ``input_cache_read`` and ``input_cache_creation``."""
    if not isinstance(tokens, dict):
        return None
    return agents.usage(
        input=tokens.get("input_other"),
        output=tokens.get("output"),
        cache_read=tokens.get("input_cache_read"),
        cache_write=tokens.get("input_cache_creation"),
    )


def _text(content: Any) -> str:
    """The text parts of a content (a string, or parts), a line apart."""
    if isinstance(content, list):
        content = [part for part in content if not (isinstance(part, dict) and part.get("type") == "think")]
    return agents.parts_text(content).strip()


def _thinking(content: Any) -> str:
    parts = content if isinstance(content, list) else []
    return "\n\n".join(
        part["think"]
        for part in parts
        if isinstance(part, dict) and isinstance(part.get("think"), str) and part["think"]
    )


def _given_title(folder: Path) -> str | None:
    """The title the user gave the session: ``custom_title`` of ``state.json``, else ``title`` of an
    older ``metadata.json`` (where it is not Kimi's "Untitled")."""
    root = agents.Root(folder)
    for name, key in (("state.json", "custom_title"), ("metadata.json", "title")):
        document = agents.json_file(folder / name, root) if agents.is_file(folder / name) else None
        title = agents.text_or_none(document.get(key)) if isinstance(document, dict) else None
        if title and title != "Untitled":
            return title
    return None
