"""A Grok CLI session's ``updates.jsonl``: the times of its messages and the usage of its turns.

The chat history's rows have no time; the protocol's notifications the session sent, each with its
Unix ``timestamp``, do. A user message takes the time of the first ``user_message_chunk`` of the
run of chunks whose text is its own, an assistant message that of the ``agent_message_chunk``
run of its text or of the ``tool_call`` of its first call, a tool's output that of the
``tool_call_update`` that completed its call. A message no notification matches keeps no time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import Message

TICKS_PER_DOLLAR = 10**10  # ``costUsdTicks``: ten-billionths of a US dollar
_DONE = ("completed", "failed")


@dataclass
class _Run:
    """A run of message chunks of one side: when it began and its text."""

    role: str
    timestamp: str | None
    text: list[str] = field(default_factory=list)


class Updates(agents.Skipping):
    """The notifications of one session, read into runs of chunks, call times and turns' usage."""

    def __init__(self, file: Path, root: agents.Root) -> None:
        super().__init__()
        self.file = file
        self.root = root
        self.runs: list[_Run] = []
        self.started: dict[str, str] = {}  # a call's id: when it was made
        self.done: dict[str, str] = {}  # a call's id: when its output came
        self.usages: list[agents.Usage] = []
        self.notes: list[str] = []
        self._run: _Run | None = None

    def problems(self) -> list[str]:
        found = agents.skipped_problems(self.skipped)
        return [f"updates.jsonl: {problem}" for problem in found] + self.notes

    def read(self) -> None:
        if not agents.is_file(self.file) or not self.root.allows(self.file):
            return
        try:
            with self.file.open("rb") as handle:
                for line in agents.json_lines(handle, self.skipped):
                    params = line.get("params") if isinstance(line, dict) else None
                    update = params.get("update") if isinstance(params, dict) else None
                    if isinstance(update, dict):
                        self._update(update, agents.iso_utc(line.get("timestamp")))
                    else:
                        self.skip("not a session update")
        except OSError as error:
            self.notes.append(agents.Unread(f"updates.jsonl: reading stopped: {error.strerror or error}"))

    def _update(self, update: dict[str, Any], when: str | None) -> None:
        kind = update.get("sessionUpdate")
        if kind in ("user_message_chunk", "agent_message_chunk"):
            meta = update.get("_meta")
            if isinstance(meta, dict) and meta.get("hostTurn") is True:
                self._run = None  # the host's own turn, no message of the chat
                return
            role = "user" if kind == "user_message_chunk" else "assistant"
            if self._run is None or self._run.role != role:
                self._run = _Run(role, when)
                self.runs.append(self._run)
            content = update.get("content")
            if isinstance(content, dict) and content.get("type") == "text" and isinstance(content.get("text"), str):
                self._run.text.append(content["text"])
        elif kind in ("tool_call", "tool_call_update"):
            self._run = None
            call_id = agents.text_or_none(update.get("toolCallId"))
            if call_id and when and kind == "tool_call":
                self.started.setdefault(call_id, when)
            elif call_id and when and update.get("status") in _DONE:
                self.done[call_id] = when
        if isinstance(update.get("usage"), dict):
            self.usages.append(_usage(update["usage"]) or agents.Usage())

    def give_times(self, messages: list[Message], call_ids: list[list[str]]) -> None:
        """Each message the time of the notification that matches it (see the module's docstring)."""
        at = {"user": 0, "assistant": 0}
        for message, ids in zip(messages, call_ids, strict=True):
            if message.role in at and message.text:
                found = self._match(message.role, message.text, at[message.role])
                if found is not None:
                    message.timestamp = self.runs[found].timestamp
                    at[message.role] = found + 1
            if message.timestamp is None and ids:
                table = self.done if message.role == "tool" else self.started
                message.timestamp = next((table[i] for i in ids if i in table), None)

    def _match(self, role: str, text: str, start: int) -> int | None:
        for index in range(start, len(self.runs)):
            run = self.runs[index]
            joined = ("\n" if role == "user" else "").join(run.text).strip()
            if run.role == role and (joined == text or (role == "user" and text in joined)):
                return index
        return None

    def give_usage(self, messages: list[Message], turns: list[int]) -> None:
        """Each turn's usage to its last assistant message (the n-th usage, the n-th turn's)."""
        bounds = [*turns, len(messages)] if turns else [0, len(messages)]
        for number, found in enumerate(self.usages):
            if not found:
                continue
            turn = min(number, len(bounds) - 2)
            last = next(
                (m for m in reversed(messages[bounds[turn] : bounds[turn + 1]]) if m.role == "assistant"),
                next((m for m in reversed(messages) if m.role == "assistant"), None),
            )
            if last is not None:
                last.usage = found if last.usage is None else last.usage + found


def _usage(given: dict[str, Any]) -> agents.Usage | None:
    """A turn's ``usage``: its models' counts in ``modelUsage`` summed, else its own."""
    by_model = given.get("modelUsage")
    parts = [part for part in by_model.values() if isinstance(part, dict)] if isinstance(by_model, dict) else []
    total = None
    for part in parts or [given]:
        found = _counts(part)
        if found is not None:
            total = found if total is None else total + found
    return total


def _counts(part: dict[str, Any]) -> agents.Usage | None:
    prompt = agents.whole_count(part.get("inputTokens"))
    cached = agents.whole_count(part.get("cachedReadTokens"))
    ticks = agents.whole_count(part.get("costUsdTicks"))
    return agents.usage(
        input=max(prompt - cached, 0),
        output=part.get("outputTokens"),
        cache_read=cached,
        cost=ticks / TICKS_PER_DOLLAR if "costUsdTicks" in part and ticks else None,
    )
