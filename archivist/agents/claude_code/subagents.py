"""What Claude Code keeps beside a session's lines: its sub-agents' metadata, the session a
file continues, the summaries at the top of files.

A sub-agent run by a ``Task``/``Agent`` tool call writes ``<session>/subagents/agent-<id>.jsonl``
and, since version 2.1, ``agent-<id>.meta.json`` beside it: ``{"agentType": "Explore",
"description": "…", "toolUseId": "toolu_…", "spawnDepth": 1}``, with ``parentAgentId`` for
an agent another sub-agent started. ``description`` is the call's own ``description`` (the
sub-agent's title), ``toolUseId`` the call it answers. The CLI's own forked agents have no
metadata and replay their parent's history: ``agent-acompact-<id>`` summarises the
conversation for a compaction, ``agent-aside_question-<id>`` answers a ``/btw`` side
question.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from archivist.agents import NotJSON, Root, head_lines, is_file, json_value, text_or_none, too_large

AGENT_PREFIX = "agent-"
SUBAGENTS_FOLDER = "subagents"
COMPACTION_AGENT = "acompact-"  # an agent id (after "agent-") of the CLI's compaction agent
COMPACTION_TITLE = "Compaction of the conversation"
HEAD_LINES = 200  # leading summary lines looked at in each file of a project
SESSION_ID_LINES = 20  # lines looked at to find the session a file belongs to


@dataclass
class AgentMeta:
    """A sub-agent's ``agent-<id>.meta.json``: what it was asked, by which call, under which agent."""

    description: str | None = None
    agent_type: str | None = None
    tool_use_id: str | None = None
    parent_agent_id: str | None = None


def agent_meta(path: Path, root: Root) -> AgentMeta:
    """The metadata beside a sub-agent transcript (``agent-<id>.meta.json``); empty where there
    is none, or it cannot be read (it only names the transcript: not worth telling)."""
    meta = path.with_name(f"{path.stem}.meta.json")
    if not is_file(meta) or not root.allows(meta) or too_large(meta):  # (a FIFO would block its reading)
        return AgentMeta()
    try:
        found = json_value(meta.read_bytes().decode("utf-8", errors="replace"))
    except (OSError, NotJSON):
        return AgentMeta()
    if not isinstance(found, dict):
        return AgentMeta()
    return AgentMeta(
        description=text_or_none(found.get("description")),
        agent_type=text_or_none(found.get("agentType")),
        tool_use_id=text_or_none(found.get("toolUseId")),
        parent_agent_id=text_or_none(found.get("parentAgentId")),
    )


def agent_id(path: Path) -> str:
    """The agent id of an ``agent-<id>.jsonl`` transcript."""
    return path.stem[len(AGENT_PREFIX) :]


def internal_title(path: Path) -> str | None:
    """The title of one of the CLI's own agents, which no Task call describes."""
    return COMPACTION_TITLE if agent_id(path).startswith(COMPACTION_AGENT) else None


def first_session_id(path: Path) -> str | None:
    """The ``sessionId`` of a file's first lines: the session a sub-agent transcript belongs
    to, or the one a resumed session's file continues."""
    try:
        with path.open("rb") as handle:
            for count, raw in enumerate(head_lines(handle)):
                if count >= SESSION_ID_LINES:
                    break
                try:
                    record = json_value(raw.decode("utf-8", errors="replace"))
                except NotJSON:
                    continue
                if isinstance(record, dict) and isinstance(record.get("sessionId"), str) and record["sessionId"]:
                    return str(record["sessionId"])
    except OSError:
        return None
    return None


def reading_order(files: list[Path]) -> list[tuple[Path, Path | None]]:
    """Session files in name order, each with the file it continues (its first lines are
    that session's: a resumed session's copy of its history), which comes before it, so
    that what they share is kept by the session it began in."""
    by_stem = {file.stem: file for file in files}
    before: dict[Path, Path] = {}
    for file in files:
        first = first_session_id(file)
        if first and first != file.stem and first in by_stem:
            before[file] = by_stem[first]
    order: list[tuple[Path, Path | None]] = []
    placed: set[Path] = set()
    for file in files:
        chain: list[Path] = []
        link: Path | None = file
        while link is not None and link not in placed and link not in chain:
            chain.append(link)
            link = before.get(link)
        for link in reversed(chain):
            placed.add(link)
            order.append((link, before.get(link)))
    return order


def leading_summaries(files: Iterable[Path]) -> dict[str, str]:
    """``leafUuid`` → summary from the ``summary`` lines that open each file.

    Older versions wrote the summary of a session at the top of the next session's file.
    """
    summaries: dict[str, str] = {}
    for file in files:
        try:
            with file.open("rb") as handle:
                for count, raw in enumerate(head_lines(handle)):
                    if count >= HEAD_LINES or b'"summary"' not in raw:
                        break
                    try:
                        record = json_value(raw.decode("utf-8", errors="replace"))
                    except NotJSON:
                        break
                    if not isinstance(record, dict) or record.get("type") != "summary":
                        break
                    leaf, summary = record.get("leafUuid"), record.get("summary")
                    if isinstance(leaf, str) and isinstance(summary, str) and summary.strip():
                        summaries[leaf] = summary
        except OSError:
            continue
    return summaries
