"""One Codex rollout file read into messages: its records, line by line, in the order written."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist.agents import (
    LONG_LINE,
    NOT_JSON,
    Attachment,
    Message,
    NotJSON,
    Session,
    Skipping,
    Tail,
    ToolCall,
    Usage,
    attachments_of,
    between,
    call_input,
    iso_utc,
    json_value,
    lines,
    parts_text,
    replaced_problems,
    short_title,
    skipped_problems,
    text_or_none,
    too_large,
    url_attachment,
)
from archivist.agents.codex.tokens import Tokens
from archivist.agents.codex.values import (
    ENVELOPE_TYPES,
    ITEM_TYPES,
    ITEMS_NOT_READ,
    OUTPUT_TYPES,
    TYPES_NOT_READ,
    forked_from,
    is_injected,
    meta_fields,
    output_text,
    parent_of,
    tool_call,
    user_shell,
    users_words,
)

KIND = "codex"


class Lines(Skipping):
    """The JSON values of a JSONL file, line by line, with what had to be skipped."""

    def __init__(self) -> None:
        super().__init__()
        self.error: str | None = None
        self.line_at = 0  # the byte offset of the line being read

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
        problems = skipped_problems(self.skipped) + replaced_problems(self.replaced)
        if self.error:
            problems.append(self.error)
        return problems


class Rollout:
    """One rollout file, read into messages."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.lines = Lines()
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
        self._last_said: tuple[str, str] | None = None  # the role and source of the text said last
        self._tokens: Tokens | None = None  # the running token total, while reading
        self._unclaimed: Usage | None = None  # usage counted before any assistant message
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
        self._tokens = Tokens(self.file, start)
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
        elif kind in ENVELOPE_TYPES and isinstance(payload, dict):
            if kind == "session_meta":
                self._session_meta(payload, timestamp)
            elif kind == "turn_context":
                self._turn_context(payload)
            elif kind == "response_item":
                self._response_item(payload, timestamp)
            elif kind == "event_msg":
                self._event(payload, timestamp)
            # compacted: a summary of what is already in the file
        elif kind in ITEM_TYPES and not isinstance(payload, dict):
            self._response_item(record, timestamp)
        elif kind not in TYPES_NOT_READ:
            self.lines.skip(f"unknown type {kind!r}" if kind not in ENVELOPE_TYPES else f"{kind!r} without payload")

    # -- records -----------------------------------------------------------------------

    def _session_meta(self, payload: dict[str, Any], timestamp: str | None) -> None:
        self.metas += 1
        if self.metas > 1:
            return  # a parent's meta, copied with its history
        meta = meta_fields(payload)
        self.session_id = text_or_none(meta.get("id")) or text_or_none(meta.get("session_id"))
        self.started = iso_utc(meta.get("timestamp")) or timestamp
        self.project = text_or_none(meta.get("cwd"))
        git = payload.get("git") if isinstance(payload.get("git"), dict) else meta.get("git")
        if isinstance(git, dict):
            self.branch = text_or_none(git.get("branch"))
        self.forked_from = forked_from(meta)
        self.parent = parent_of(meta)
        self.use_model(text_or_none(meta.get("model")))

    def _turn_context(self, payload: dict[str, Any]) -> None:
        self.use_model(text_or_none(payload.get("model")))
        self.context_cwd = self.context_cwd or text_or_none(payload.get("cwd"))

    def use_model(self, model: str | None) -> None:
        """The model the next messages are written by (a session read on starts with the last one before)."""
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
            text = parts_text(item.get("content"))
            if role == "user":
                self._user_item(text, timestamp, attachments_of(item.get("content")))
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
            name = text_or_none(item.get("name")) or kind
            self._call(tool_call(name, raw), timestamp)
        elif kind == "local_shell_call":
            action = item.get("action")
            self._call(tool_call("local_shell", action if isinstance(action, dict) else {}), timestamp)
        elif kind in ("web_search_call", "tool_search_call"):
            name = str(kind).removesuffix("_call")
            self._call(ToolCall(name=name, input=call_input(item.get("action") or item.get("arguments"))), timestamp)
        elif kind == "image_generation_call":  # (its result is the image: not kept)
            self._call(ToolCall(name="image_generation"), timestamp)
        elif kind in OUTPUT_TYPES:
            output = output_text(item.get("output"))
            if output:
                self._add(Message(role="tool", text="", timestamp=timestamp, tool_output=output))
        elif kind not in ITEMS_NOT_READ:
            self.lines.skip(f"unknown type {kind!r}")

    def _user_item(self, text: str, timestamp: str | None, attached: list[Attachment]) -> None:
        stripped = text.strip()
        shell = user_shell(stripped)
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
        if is_injected(stripped):
            if stripped.startswith("<environment_context>"):
                cwd = between(stripped, "<cwd>", "</cwd>")
                if cwd and not self.context_cwd:
                    self.context_cwd = stripped[cwd[0] : cwd[1]].strip()
            return
        self._say("user", users_words(stripped), timestamp, "item", attached)

    def _event(self, payload: dict[str, Any], timestamp: str | None) -> None:
        kind = payload.get("type")
        if kind == "user_message":
            text = parts_text(payload.get("message")).strip()
            images = payload.get("images")
            attached = [url_attachment(image) for image in images] if isinstance(images, list) else []
            if not is_injected(text):
                self._say("user", users_words(text), timestamp, "event", attached)
        elif kind == "agent_message":
            self._say("assistant", parts_text(payload.get("message")).strip(), timestamp, "event")
        elif kind in ("agent_reasoning", "agent_reasoning_raw_content"):
            self._think(payload.get("text"))
        elif kind == "item_completed":  # paginated rollouts write turn items instead of the two above
            self._turn_item(payload.get("item"), timestamp)
        elif kind == "thread_name_updated":
            self.title = text_or_none(payload.get("thread_name")) or self.title
        elif kind == "thread_rolled_back":
            turns = payload.get("num_turns")
            if isinstance(turns, int) and not isinstance(turns, bool) and turns > 0:
                self._roll_back(turns)
        elif kind == "token_count":
            self._count_tokens(payload.get("info"))
        # task and exec events… repeat or add nothing a conversation shows

    def _count_tokens(self, info: Any) -> None:
        """A response's tokens (``tokens``), on the assistant message it made: the last one,
        unless a user spoke since (then on the next)."""
        found = self._tokens.count(info) if self._tokens is not None else None
        if found is None:
            return
        target = next((m for m in reversed(self.messages) if m.role == "assistant"), None)
        if target is None or self.messages[-1].role == "user":
            self._unclaimed = found if self._unclaimed is None else self._unclaimed + found
            return
        target.usage = found if target.usage is None else target.usage + found

    def _turn_item(self, item: Any, timestamp: str | None) -> None:
        if not isinstance(item, dict):
            return
        kind = str(item.get("type", "")).replace("_", "").lower()
        if kind == "usermessage":
            text = parts_text(item.get("content")).strip()
            if not is_injected(text):
                self._say("user", users_words(text), timestamp, "event")
        elif kind == "agentmessage":
            text = parts_text(item.get("content")) or parts_text(item.get("text"))
            self._say("assistant", text.strip(), timestamp, "event")
        elif kind == "reasoning":
            for part in ("summary_text", "raw_content"):
                value = item.get(part)
                for text in value if isinstance(value, list) else []:
                    self._think(text)

    # -- building messages ---------------------------------------------------------------

    def _add(self, message: Message) -> None:
        if message.role == "assistant" and self._unclaimed is not None:
            message.usage, self._unclaimed = self._unclaimed, None
        self.messages.append(message)
        self.offsets.append(self.lines.line_at)

    def _say(
        self, role: str, text: str, timestamp: str | None, source: str, attached: list[Attachment] | None = None
    ) -> None:
        """A user or assistant text, unless it is the other copy of one already said.

        Codex writes most messages twice, as a response item and as an event, one after the
        other: a copy pairs with the other source's copy of its role said just before it (and
        not paired yet), by its place, when their texts are alike though not the same (the two
        differ where an image was pasted, and between versions: ``_alike``). The first copy is kept,
        with the images that either copy carries (``attached``).
        """
        if not text:
            return
        waiting = self._mirrors[role]
        other = "event" if source == "item" else "item"
        if waiting[other] and self._last_said == (role, other) and _alike(waiting[other][-1], text):
            waiting[other].pop()
            self._last_said = None
            kept = next((m for m in reversed(self.messages) if m.role == role), None)
            if attached and kept is not None and not kept.attachments:
                kept.attachments = attached
            return
        waiting[source] = [text]  # (only the copy said last can be paired)
        waiting[other] = []
        self._last_said = (role, source)
        self._mirrors["assistant" if role == "user" else "user"] = {"item": [], "event": []}
        if role == "user":
            self._flush_thinking()
            self._thinking_seen.clear()
            self._add(Message(role="user", text=text, timestamp=timestamp, attachments=attached or []))
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
        self._last_said = None

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


def _alike(first: str, second: str) -> bool:
    """Whether two copies of a message say the same thing: one holds the other's words, or most
    of them are the same (markup, an image's placeholder or a version's wording apart)."""
    a, b = _words(first), _words(second)
    if not a or not b:
        return not a and not b
    shared = len(a & b)
    return shared == min(len(a), len(b)) or shared >= 0.5 * max(len(a), len(b))


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))
