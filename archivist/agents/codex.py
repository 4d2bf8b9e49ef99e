"""Codex CLI sessions, read in place: one session per rollout file (SPEC §1.1).

Codex writes each session to ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``
(``archived_sessions/`` holds archived ones, flat). The source is that folder, any folder
under it, the Codex home itself, or one rollout file.

What is read, line by line:

- ``session_meta`` (the first one): the session id (the key), its cwd (the project), the
  git branch, and its lineage: a sub-agent names its parent (``parent_thread_id``, or
  ``source.subagent.thread_spawn.parent_thread_id``), a fork names the session it was
  forked from (``forked_from_id``). A fork or sub-agent that replays its parent's history
  first has that copied history cut off when the parent is in the same source.
- ``turn_context``: the model (and the cwd when the meta has none).
- ``response_item``: ``message`` (user and assistant text), ``reasoning`` (thinking),
  ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` / ``web_search_call``
  (tool calls, with the shell commands they ran and the files they name or patch), and
  their ``*_output`` (tool messages whose output is kept apart from the text).
- ``event_msg``: ``user_message`` / ``agent_message`` / ``item_completed`` only where the
  same text is not already there as a ``response_item`` (the two usually mirror each
  other), ``agent_reasoning`` where it adds thinking, ``thread_name_updated`` (the title),
  ``thread_rolled_back`` (the turns it drops are dropped).
- The title: the thread's name (in the file, else ``session_index.jsonl`` of the Codex
  home), else the first user message, shortened.

Older files: a first line without ``type`` is the session meta, bare response items
follow, ``{"record_type": "state"}`` lines are skipped; the cwd then comes from the first
``<environment_context>``. The oldest CLI's ``rollout-*.json`` (one JSON document with
``session`` and ``items``) is read too.

Skipped without a word: context the harness injects as user or developer messages
(``<environment_context>``, ``<user_instructions>``, ``# AGENTS.md instructions…``,
permissions and collaboration-mode blocks), token counts and other events, ``compacted``
summaries, encrypted reasoning. Lines that are not JSON and records of unknown types are
skipped and counted in the session's ``problems``, and so is a line over 64 MB; a last line
cut short (a session being written) is skipped silently. A ``.json`` document over 1 GB is
not read, and a file that yields no session tells what it skipped in ``problems``.
Compressed (``.zst``) rollouts are not read.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist.agents import iso_utc

from . import (
    LONG_LINE,
    MAX_LINE_BYTES,
    NOT_JSON,
    Message,
    NotJSON,
    Root,
    Session,
    Tail,
    ToolCall,
    between,
    head_lines,
    json_value,
    lines,
    short_title,
    too_large,
)

KIND = "codex"

_ROLLOUT_NAME = re.compile(r"^rollout-.+\.jsonl?$")
_ENVELOPE_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
# Newer record types that hold nothing a conversation shows.
_TYPES_NOT_READ = {"world_state", "inter_agent_communication", "inter_agent_communication_metadata"}
# Response items written bare (without the envelope) by the older CLIs.
_ITEM_TYPES = {
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "local_shell_call_output",
    "web_search_call",
    "tool_search_call",
    "tool_search_output",
    "image_generation_call",
    "compaction",
    "compaction_summary",
    "ghost_snapshot",
}
_ITEMS_NOT_READ = {"compaction", "compaction_summary", "ghost_snapshot"}
_OUTPUT_TYPES = {"function_call_output", "custom_tool_call_output", "local_shell_call_output", "tool_search_output"}
# The name of a block of harness context a user message can be: <environment_context>…</environment_context>.
_BLOCK_NAME = re.compile(r"[a-z]+(?:[_ ][a-z]+)+")
_INJECTED_PREFIXES = ("# AGENTS.md instructions for", "<user_instructions>", "<environment_context>")
_REQUEST_MARK = "## My request for Codex:"
_USER_SHELL = ("<user_shell_command>", "</user_shell_command>")
# The rest of the line is the name (stripped where it is used: ``(.+?)\s*$`` would try every
# split of a long run of spaces, for hours).
_PATCH_FILE = re.compile(r"^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$", re.MULTILINE)
_PATCH_START = "*** Begin Patch"
_FILE_KEYS = (
    "path",
    "file_path",
    "filepath",
    "file",
    "filename",
    "absolute_path",
    "target_file",
    "paths",
    "file_paths",
)
_SHELL_FLAGS = {"-c", "-lc", "-ic", "-lic", "-Command", "-command", "/c", "/C"}
_HEAD_BYTES = 64 * 1024
_INDEX_LEVELS = 5  # sessions/YYYY/MM/DD/rollout-….jsonl is four folders below the Codex home


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not a Codex sessions folder or rollout file, or None when it is one."""
    root = Path(path).expanduser()
    expected = (
        "expected a Codex sessions folder (~/.codex/sessions, holding YYYY/MM/DD/rollout-*.jsonl), "
        "a folder under it, or one rollout-*.jsonl file"
    )
    if not root.exists():
        return f"{root} does not exist: {expected}."
    if root.is_file():
        return None if _looks_like_rollout(root) else f"{root} is not a Codex rollout file: {expected}."
    if not root.is_dir():
        return f"{root} is neither a folder nor a file: {expected}."
    for rollout in _walk_rollouts(Root(root)):
        if _looks_like_rollout(rollout):
            return None
        return f"{rollout} under {root} is not a Codex rollout file: {expected}."
    if root.name in ("sessions", "archived_sessions") or (root / "sessions").is_dir():
        return f"{root} holds no Codex session yet (no rollout-*.jsonl file): {expected}."
    return f"{root} holds no rollout-*.jsonl file: {expected}."


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[Session]:
    """Every session under ``path``, one per rollout file, in the order of their paths.

    What was skipped in a file that yields no session, and the links that lead out of the
    source (never opened), go to ``problems``.
    """
    root = Path(path).expanduser()
    confined = Root(root, problems)
    if root.is_file():
        files = [root]
    elif root.is_dir():
        files = sorted(_walk_rollouts(confined), key=lambda file: _relative(file, root))
    else:
        return
    thread_names = _thread_names(root)

    # Who descends from whom, from each file's first line, so that copied history can be cut.
    first_file: dict[str, Path] = {}
    lineage: set[str] = set()
    for file in files:
        session_id, ancestor = _identity(file)
        if session_id:
            first_file.setdefault(session_id, file)
        if ancestor:
            lineage.add(ancestor)
    prints: dict[str, list[int]] = {}  # the messages of sessions that others descend from

    used: set[str] = set()
    for file in files:
        rollout = _Rollout(file)
        rollout.read()
        own = [_fingerprint(message) for message in rollout.messages]
        if rollout.session_id in lineage and rollout.session_id not in prints:
            prints[rollout.session_id] = own
        ancestor = rollout.ancestor
        if ancestor and ancestor != rollout.session_id and ancestor in first_file:
            if ancestor not in prints:
                parent = _Rollout(first_file[ancestor])
                parent.read()
                prints[ancestor] = [_fingerprint(message) for message in parent.messages]
            copied = _common_prefix(own, prints[ancestor])
            if copied and (rollout.replayed or copied >= 2):
                del rollout.messages[:copied]
                del rollout.offsets[:copied]
        relative = _relative(file, root) if root.is_dir() else file.name
        key = rollout.session_id or relative
        if key in used:
            key = f"{key}@{relative}"
        session = rollout.session(key, thread_names)
        if session is not None:
            used.add(key)
            yield session
        elif problems is not None:
            problems.extend(f"{relative}: {problem}" for problem in rollout.lines.problems())


def read_from(
    path: str | os.PathLike[str], offset: int, key: str, project: str | None, models: list[str] | None = None
) -> Session | None:
    """A rollout's lines from byte ``offset`` (its ``Tail.resume_at``: a user message) as session
    ``key``, the last of ``models`` in use until a turn names its own. None when they cannot
    simply follow what was read before: a rollback, a session's meta, nothing read."""
    file = Path(path)
    try:
        if file.suffix != ".jsonl" or file.stat().st_size < offset:
            return None
    except OSError:
        return None
    rollout = _Rollout(file)
    rollout.project = project
    for model in models or []:
        rollout._use_model(model)
    rollout.read(offset)
    if rollout.rolled_back or rollout.metas:
        return None
    session = rollout.session(key, {})
    if session is None:
        return None
    session.tail = rollout.tail(offset)
    return session


# -- finding files ---------------------------------------------------------------------


def _walk_rollouts(root: Root) -> Iterator[Path]:
    for file in root.walk(root.path):
        if _ROLLOUT_NAME.match(file.name):
            yield file


def _relative(file: Path, root: Path) -> str:
    try:
        return file.relative_to(root).as_posix()
    except ValueError:
        return file.as_posix()


def _looks_like_rollout(file: Path) -> bool:
    """A peek at the first lines: Codex records, or the oldest CLI's JSON document."""
    texts: list[str] = []
    try:
        with file.open("rb") as handle:
            if file.suffix == ".json":
                head = handle.read(_HEAD_BYTES).decode("utf-8", "replace")
                return bool(re.match(r'\s*\{\s*"session"\s*:', head.lstrip("\ufeff")))
            for raw in head_lines(handle):  # a first line holds the instructions: long, but not too long
                line = raw.decode("utf-8", "replace").lstrip("\ufeff").strip()
                if line:
                    texts.append(line)
                if len(texts) >= 5:
                    break
    except OSError:
        return False
    if not texts:
        return bool(_ROLLOUT_NAME.match(file.name))  # a session that has not written anything yet
    for line in texts:
        try:
            record = json_value(line)
        except NotJSON:
            continue
        if isinstance(record, dict):
            return _record_kind(record) is not None
    return False


def _record_kind(record: dict[str, Any]) -> str | None:
    kind = record.get("type")
    if isinstance(kind, str):
        if kind in _ENVELOPE_TYPES or kind in _TYPES_NOT_READ:
            return kind
        if kind in _ITEM_TYPES:
            return "response_item"
        return None
    if "record_type" in record:
        return "state"
    if isinstance(record.get("id"), str) and "timestamp" in record:
        return "session_meta"
    return None


def _identity(file: Path) -> tuple[str | None, str | None]:
    """The session id and the id of the session it descends from, from the first line."""
    if file.suffix != ".jsonl":
        return None, None
    try:
        with file.open("rb") as handle:
            line = handle.readline(MAX_LINE_BYTES)
        record = json_value(line.decode("utf-8", "replace").lstrip("\ufeff"))
    except (OSError, NotJSON):
        return None, None
    if not isinstance(record, dict):
        return None, None
    payload = record.get("payload") if record.get("type") == "session_meta" else record
    if not isinstance(payload, dict) or record.get("type") not in ("session_meta", None):
        return None, None
    meta = _meta_fields(payload)
    return _text(meta.get("id")), _forked_from(meta) or _parent(meta)


def _thread_names(root: Path) -> dict[str, str]:
    """Names the user gave threads, from ``session_index.jsonl`` in the Codex home."""
    start = root if root.is_dir() else root.parent
    for level, folder in enumerate([start, *start.parents]):
        if level > _INDEX_LEVELS:
            break
        index = folder / "session_index.jsonl"
        is_home = folder == start or (folder / "sessions").is_dir() or (folder / "archived_sessions").is_dir()
        if is_home and index.is_file() and Root(folder).allows(index):
            names: dict[str, str] = {}
            for record in _Lines().records(index):
                if isinstance(record, dict):
                    session_id, name = _text(record.get("id")), _text(record.get("thread_name"))
                    if session_id and name:
                        names[session_id] = name
            return names
    return {}


# -- reading one rollout ---------------------------------------------------------------


class _Lines:
    """The JSON values of a JSONL file, line by line, with what had to be skipped."""

    def __init__(self) -> None:
        self.skipped: dict[str, int] = {}
        self.replaced = 0
        self.error: str | None = None
        self.line_at = 0  # the byte offset of the line being read

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def records(self, file: Path, start: int = 0) -> Iterator[Any]:
        """The file's JSON values from byte ``start``; ``line_at`` is where each one's line starts."""
        try:
            with file.open("rb") as handle:
                handle.seek(start)
                first, position = start == 0, start
                for raw, length in lines(handle):
                    self.line_at, position = position, position + length
                    if raw is None:
                        self.skip(LONG_LINE)
                        first = False
                        continue
                    complete = raw.endswith(b"\n")
                    try:
                        text = raw.decode("utf-8")
                        replaced = False
                    except UnicodeDecodeError:
                        text = raw.decode("utf-8", "replace")
                        replaced = True
                    if first:
                        text = text.lstrip("\ufeff")
                        first = False
                    text = text.strip()
                    if not text:
                        continue
                    try:
                        value = json_value(text)
                    except NotJSON as error:
                        if complete:  # a last line without its newline is still being written
                            self.skip(str(error))
                            self.replaced += replaced
                        continue
                    self.replaced += replaced
                    yield value
        except OSError as error:
            self.error = f"reading stopped: {error.strerror or error}"

    def problems(self) -> list[str]:
        problems = []
        total = sum(self.skipped.values())
        if total:
            reasons = ", ".join(f"{count} {reason}" for reason, count in self.skipped.items())
            problems.append(f"{total} line{'s' if total != 1 else ''} skipped: {reasons}")
        if self.replaced:
            problems.append(
                f"{self.replaced} line{'s' if self.replaced != 1 else ''} not valid UTF-8: "
                "decoded with replacement characters"
            )
        if self.error:
            problems.append(self.error)
        return problems


class _Rollout:
    """One rollout file, read into messages."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.lines = _Lines()
        self.messages: list[Message] = []
        self.offsets: list[int] = []  # where the line that began each message starts
        self.rolled_back = False
        self.session_id: str | None = None
        self.started: str | None = None
        self.project: str | None = None
        self.context_cwd: str | None = None  # from turn_context, else <environment_context>
        self.branch: str | None = None
        self.parent: str | None = None
        self.forked_from: str | None = None
        self.metas = 0
        self.title: str | None = None
        self.models: list[str] = []
        self.model: str | None = None
        self.bare = False  # the older format: no envelope, no timestamps
        self._thinking: list[str] = []
        self._thinking_seen: set[str] = set()
        # Texts met once as a response item or once as an event, waiting for their mirror.
        self._mirrors: dict[str, dict[str, list[str]]] = {
            "user": {"item": [], "event": []},
            "assistant": {"item": [], "event": []},
        }

    @property
    def ancestor(self) -> str | None:
        return self.forked_from or self.parent

    @property
    def replayed(self) -> bool:
        """A second session_meta: the parent's history was copied into this file."""
        return self.metas > 1

    def read(self, start: int = 0) -> None:
        if self.file.suffix == ".json":
            self._read_document()
        else:
            for record in self.lines.records(self.file, start):
                self._record(record)
        self._flush_thinking()

    def _read_document(self) -> None:
        """The oldest CLI: ``{"session": {...}, "items": [...]}``, rewritten whole."""
        self.bare = True
        self.lines.error = too_large(self.file)
        if self.lines.error:
            return
        try:
            data = self.file.read_bytes()
        except OSError as error:
            self.lines.error = f"reading stopped: {error.strerror or error}"
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("utf-8", "replace")
            self.lines.replaced += 1
        try:
            document = json_value(text.lstrip("\ufeff"))
        except NotJSON as error:
            self.lines.error = (
                "not a JSON document (cut short or damaged)" if str(error) == NOT_JSON else f"not read: {error}"
            )
            return
        if not isinstance(document, dict):
            self.lines.error = "not a JSON object"
            return
        session = document.get("session")
        if isinstance(session, dict):
            self._session_meta(session, None)
        items = document.get("items")
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get("type"), str):
                self._response_item(item, iso_utc(item.get("timestamp")))
            else:
                self.lines.skip("record without a type")

    def _record(self, record: Any) -> None:
        if not isinstance(record, dict):
            self.lines.skip("not a JSON object")
            return
        kind = record.get("type")
        timestamp = iso_utc(record.get("timestamp"))
        payload = record.get("payload")
        if not isinstance(kind, str):
            if "record_type" in record:
                if record.get("record_type") != "state":
                    self.lines.skip(f"unknown type {record.get('record_type')!r}")
            elif isinstance(record.get("id"), str):
                self.bare = True
                self._session_meta(record, timestamp)
            else:
                self.lines.skip("record without a type")
        elif kind in _ENVELOPE_TYPES and isinstance(payload, dict):
            if kind == "session_meta":
                self._session_meta(payload, timestamp)
            elif kind == "turn_context":
                self._turn_context(payload)
            elif kind == "response_item":
                self._response_item(payload, timestamp)
            elif kind == "event_msg":
                self._event(payload, timestamp)
            # compacted: a summary of what is already in the file
        elif kind in _ITEM_TYPES and not isinstance(payload, dict):
            self._response_item(record, timestamp)
        elif kind not in _TYPES_NOT_READ:
            self.lines.skip(f"unknown type {kind!r}" if kind not in _ENVELOPE_TYPES else f"{kind!r} without payload")

    # -- records -----------------------------------------------------------------------

    def _session_meta(self, payload: dict[str, Any], timestamp: str | None) -> None:
        self.metas += 1
        if self.metas > 1:
            return  # a parent's meta, copied with its history
        meta = _meta_fields(payload)
        self.session_id = _text(meta.get("id")) or _text(meta.get("session_id"))
        self.started = iso_utc(meta.get("timestamp")) or timestamp
        self.project = _text(meta.get("cwd"))
        git = payload.get("git") if isinstance(payload.get("git"), dict) else meta.get("git")
        if isinstance(git, dict):
            self.branch = _text(git.get("branch"))
        self.forked_from = _forked_from(meta)
        self.parent = _parent(meta)
        self._use_model(_text(meta.get("model")))

    def _turn_context(self, payload: dict[str, Any]) -> None:
        self._use_model(_text(payload.get("model")))
        self.context_cwd = self.context_cwd or _text(payload.get("cwd"))

    def _use_model(self, model: str | None) -> None:
        if model:
            self.model = model
            if model not in self.models:
                self.models.append(model)

    def _response_item(self, item: dict[str, Any], timestamp: str | None) -> None:
        kind = item.get("type")
        if not isinstance(kind, str):
            self.lines.skip("record without a type")
        elif kind == "message":
            role = item.get("role")
            text = _content_text(item.get("content"))
            if role == "user":
                self._user_item(text, timestamp)
            elif role == "assistant":
                self._say("assistant", text.strip(), timestamp, "item")
            # developer and system messages are the harness's instructions
        elif kind == "reasoning":
            for part in ("summary", "content"):
                value = item.get(part)
                for entry in value if isinstance(value, list) else [value]:
                    self._think(entry.get("text") if isinstance(entry, dict) else entry)
        elif kind in ("function_call", "custom_tool_call"):
            raw = item.get("arguments") if kind == "function_call" else item.get("input")
            name = _text(item.get("name")) or kind
            self._call(_tool_call(name, raw), timestamp)
        elif kind == "local_shell_call":
            action = item.get("action")
            argv = action.get("command") if isinstance(action, dict) else None
            self._call(_tool_call("local_shell", {"command": argv}), timestamp)
        elif kind in ("web_search_call", "tool_search_call", "image_generation_call"):
            self._call(ToolCall(name=str(kind).removesuffix("_call")), timestamp)
        elif kind in _OUTPUT_TYPES:
            output = _output_text(item.get("output"))
            if output:
                self._add(Message(role="tool", text="", timestamp=timestamp, tool_output=output))
        elif kind not in _ITEMS_NOT_READ:
            self.lines.skip(f"unknown type {kind!r}")

    def _user_item(self, text: str, timestamp: str | None) -> None:
        stripped = text.strip()
        shell = _user_shell(stripped)
        if shell:  # the user ran a command themselves (``!cmd``)
            command, rest = shell
            result = between(rest, "<result>", "</result>")
            self._flush_thinking()
            self._add(
                Message(
                    role="user",
                    text="",
                    timestamp=timestamp,
                    tool_calls=[ToolCall(name="user_shell", commands=[command.strip()])],
                    tool_output=rest[result[0] : result[1]].strip() if result else rest.strip(),
                )
            )
            return
        if _is_injected(stripped):
            if stripped.startswith("<environment_context>"):
                cwd = between(stripped, "<cwd>", "</cwd>")
                if cwd and not self.context_cwd:
                    self.context_cwd = stripped[cwd[0] : cwd[1]].strip()
            return
        self._say("user", _users_words(stripped), timestamp, "item")

    def _event(self, payload: dict[str, Any], timestamp: str | None) -> None:
        kind = payload.get("type")
        if kind == "user_message":
            text = _content_text(payload.get("message")).strip()
            if not _is_injected(text):
                self._say("user", _users_words(text), timestamp, "event")
        elif kind == "agent_message":
            self._say("assistant", _content_text(payload.get("message")).strip(), timestamp, "event")
        elif kind in ("agent_reasoning", "agent_reasoning_raw_content"):
            self._think(payload.get("text"))
        elif kind == "item_completed":  # paginated rollouts write turn items instead of the two above
            self._turn_item(payload.get("item"), timestamp)
        elif kind == "thread_name_updated":
            self.title = _text(payload.get("thread_name")) or self.title
        elif kind == "thread_rolled_back":
            turns = payload.get("num_turns")
            if isinstance(turns, int) and not isinstance(turns, bool) and turns > 0:
                self._roll_back(turns)
        # token counts, task and exec events… repeat or add nothing a conversation shows

    def _turn_item(self, item: Any, timestamp: str | None) -> None:
        if not isinstance(item, dict):
            return
        kind = str(item.get("type", "")).replace("_", "").lower()
        if kind == "usermessage":
            text = _content_text(item.get("content")).strip()
            if not _is_injected(text):
                self._say("user", _users_words(text), timestamp, "event")
        elif kind == "agentmessage":
            text = _content_text(item.get("content")) or _content_text(item.get("text"))
            self._say("assistant", text.strip(), timestamp, "event")
        elif kind == "reasoning":
            for part in ("summary_text", "raw_content"):
                value = item.get(part)
                for text in value if isinstance(value, list) else []:
                    self._think(text)

    # -- building messages ---------------------------------------------------------------

    def _add(self, message: Message) -> None:
        self.messages.append(message)
        self.offsets.append(self.lines.line_at)

    def _say(self, role: str, text: str, timestamp: str | None, source: str) -> None:
        """A user or assistant text, unless it mirrors one already said (event vs item)."""
        if not text:
            return
        key = " ".join(text.split())
        waiting = self._mirrors[role]
        other = "event" if source == "item" else "item"
        if key in waiting[other]:
            waiting[other].remove(key)
            return
        waiting[source].append(key)
        self._mirrors["assistant" if role == "user" else "user"] = {"item": [], "event": []}
        if role == "user":
            self._flush_thinking()
            self._thinking_seen.clear()
            self._add(Message(role="user", text=text, timestamp=timestamp))
        else:
            self._add(
                Message(
                    role="assistant", text=text, timestamp=timestamp, model=self.model, thinking=self._take_thinking()
                )
            )

    def _call(self, call: ToolCall, timestamp: str | None) -> None:
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == "assistant" and not self._thinking:
            last.tool_calls.append(call)
            return
        self._add(
            Message(
                role="assistant",
                text="",
                timestamp=timestamp,
                model=self.model,
                tool_calls=[call],
                thinking=self._take_thinking(),
            )
        )

    def _think(self, value: Any) -> None:
        text = value.strip() if isinstance(value, str) else ""
        if text and text not in self._thinking_seen:
            self._thinking_seen.add(text)
            self._thinking.append(text)

    def _take_thinking(self) -> str:
        text = "\n\n".join(self._thinking)
        self._thinking = []
        return text

    def _flush_thinking(self) -> None:
        if self._thinking:
            self._add(Message(role="assistant", text="", model=self.model, thinking=self._take_thinking()))

    def _roll_back(self, turns: int) -> None:
        """Drop the last ``turns`` user turns, as Codex does when a thread is rolled back."""
        starts = [index for index, message in enumerate(self.messages) if message.role == "user" and message.text]
        if starts:
            del self.messages[starts[max(0, len(starts) - turns)] :]
            del self.offsets[starts[max(0, len(starts) - turns)] :]
        self.rolled_back = True
        self._thinking = []
        self._mirrors = {"user": {"item": [], "event": []}, "assistant": {"item": [], "event": []}}

    def session(self, key: str, thread_names: dict[str, str]) -> Session | None:
        messages = [m for m in self.messages if m.text or m.tool_calls or m.thinking or m.tool_output]
        if not messages:
            return None
        first_user = next((m.text for m in messages if m.role == "user" and m.text), "")
        title = self.title or (thread_names.get(self.session_id) if self.session_id else None)
        if not title:
            first_text = first_user or next((m.text for m in messages if m.text), "")
            title = short_title(first_text) if first_text else "Untitled session"
        times = [m.timestamp for m in messages if m.timestamp]
        started = min(times) if times else self.started
        last = max(times) if times else (self._modified() if self.bare else None) or started
        return Session(
            key=key,
            agent=KIND,
            title=title,
            messages=messages,
            project=self.project or self.context_cwd,
            models=list(self.models),
            branch=self.branch,
            started=started,
            last=last,
            files=[self.file],
            problems=self.lines.problems(),
            parent=self.parent,
            tail=self.tail(),
            titled=bool(self.title),
        )

    def tail(self, start: int = 0) -> Tail | None:
        """Where to read on when the file grows: at its last user message (nothing before one
        is changed by later lines, but for a rollback, which reads the file whole again)."""
        if self.bare or self.file.suffix != ".jsonl" or not self.messages:
            return None
        users = [i for i, m in enumerate(self.messages) if m.role == "user"]
        last = users[-1] if users else 0
        kept = sum(1 for m in self.messages[:last] if m.text or m.tool_calls or m.thinking or m.tool_output)
        return Tail(self.file, self.offsets[last] if last < len(self.offsets) else start, kept)

    def _modified(self) -> str | None:
        try:
            return iso_utc(self.file.stat().st_mtime)
        except OSError:
            return None


# -- helpers ---------------------------------------------------------------------------


def _meta_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """A session meta's fields (an early variant nests them under ``meta``)."""
    nested = payload.get("meta")
    return {**payload, **nested} if isinstance(nested, dict) else payload


def _forked_from(meta: dict[str, Any]) -> str | None:
    return _text(meta.get("forked_from_id"))


def _parent(meta: dict[str, Any]) -> str | None:
    """The session a sub-agent's transcript belongs to."""
    parent = _text(meta.get("parent_thread_id"))
    source = meta.get("source")
    if parent is None and isinstance(source, dict):
        subagent = source.get("subagent")
        spawn = subagent.get("thread_spawn") if isinstance(subagent, dict) else None
        if isinstance(spawn, dict):
            parent = _text(spawn.get("parent_thread_id"))
    return parent


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _content_text(content: Any) -> str:
    """The text of a message's content: a string, or parts with ``text``."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    texts = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(text for text in texts if text)


def _is_injected(text: str) -> bool:
    return text.startswith(_INJECTED_PREFIXES) or _is_block(text)


def _is_block(text: str) -> bool:
    """Whether ``text`` is one block of harness context, ``<name …>…</name>``.

    Its name is read from the closing tag, which ends the text. (A regular expression whose
    name could end at any word, the rest of the opening tag being attributes, tried every
    split of a long run of words: hours on one line.)
    """
    if not (text.startswith("<") and text.endswith(">")):
        return False
    close = text.rfind("</")
    name = text[close + 2 : -1]
    if close < 1 or not _BLOCK_NAME.fullmatch(name) or not text.startswith(name, 1):
        return False
    after = 1 + len(name)  # where the opening tag ends (">"), or its attributes start
    if text[after] == ">":
        return after < close
    return text[after].isspace() and 0 <= text.find(">", after) < close


def _user_shell(text: str) -> tuple[str, str] | None:
    """The command and the rest (its output) of ``<user_shell_command><command>…</command>…</user_shell_command>``."""
    opening, closing = _USER_SHELL
    if not (text.startswith(opening) and text.endswith(closing)) or len(text) < len(opening) + len(closing):
        return None
    inner = text[len(opening) : -len(closing)].lstrip()
    command = between(inner, "<command>", "</command>")
    if command is None or not inner.startswith("<command>"):
        return None
    return inner[command[0] : command[1]], inner[command[1] + len("</command>") :]


def _users_words(text: str) -> str:
    """The user's own request in a message that an editor wrapped in its context."""
    mark = text.find(_REQUEST_MARK)
    return text[mark + len(_REQUEST_MARK) :].strip() if mark >= 0 else text


def _tool_call(name: str, raw: Any) -> ToolCall:
    """A tool call with the files its arguments name or patch and the commands it runs."""
    args: Any = raw
    if isinstance(raw, str):
        try:
            args = json_value(raw)
        except NotJSON:
            args = {"input": raw}
    if not isinstance(args, dict):
        args = {"input": args}
    files: list[str] = []
    commands: list[str] = []
    for key in _FILE_KEYS:
        value = args.get(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item.strip():
                files.append(item.strip())
    for key in ("command", "cmd"):
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            commands.append(value.strip())
        elif isinstance(value, list) and value and all(isinstance(item, str) for item in value):
            commands.append(_argv_command(value))
    strings = [value for value in args.values() if isinstance(value, str)]
    for value in args.values():
        if isinstance(value, list):
            strings.extend(item for item in value if isinstance(item, str))
    for value in strings:
        if _PATCH_START in value:
            files.extend(match.strip() for match in _PATCH_FILE.findall(value))
    return ToolCall(name=name, files=list(dict.fromkeys(files)), commands=commands)


def _argv_command(argv: list[str]) -> str:
    """``["bash", "-lc", "pytest -q"]`` → ``pytest -q``; other argv lists joined as a shell would read them."""
    if len(argv) >= 3 and argv[-2] in _SHELL_FLAGS:
        return argv[-1].strip()
    return shlex.join(argv)


def _output_text(output: Any) -> str:
    """A tool's output: plain text, ``{"output": …, "metadata": …}`` as JSON text, or content parts."""
    if isinstance(output, str):
        if output.startswith("{"):
            try:
                decoded = json_value(output)
            except NotJSON:
                return output
            if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
                return str(decoded["output"])
        return output
    if isinstance(output, dict):
        for key in ("output", "content"):
            if isinstance(output.get(key), str | list):
                return _output_text(output[key])
        return json.dumps(output, ensure_ascii=False)
    if isinstance(output, list):
        return _content_text(output)
    return ""


def _fingerprint(message: Message) -> int:
    calls = tuple((call.name, tuple(call.files), tuple(call.commands)) for call in message.tool_calls)
    return hash((message.role, message.text, message.thinking, message.tool_output, calls))


def _common_prefix(left: list[int], right: list[int]) -> int:
    count = 0
    for a, b in zip(left, right):
        if a != b:
            break
        count += 1
    return count
