"""OpenHands' conversations, read in place: one session per conversation folder (docs/contract.md: sources).

The OpenHands CLI (OpenHands/OpenHands-CLI, on the OpenHands software agent SDK) keeps each
conversation in ``~/.openhands/conversations/<conversation id>/`` (``OPENHANDS_CONVERSATIONS_DIR``
moves the folder): ``base_state.json``, the conversation's state (its ``id``, its agent's
``llm.model``, its ``workspace.working_dir``, and ``stats.usage_to_metrics``: each LLM's token
counts and cost), and ``events/event-<index>-<event id>.json``, one JSON document per event in
the order of their indexes. The shape is learned from the SDK's own source
(OpenHands/software-agent-sdk ``openhands-sdk/openhands/sdk/event``, ``conversation/state.py``,
``conversation/persistence_const.py``, ``llm/utils/metrics.py``), the CLI's store
(``openhands_cli/conversations/store/local.py``, ``locations.py``) and agentsview's reader
(wesm/agentsview ``internal/parser/openhands.go`` and its tests); the events are read in
``archivist.agents.openhands.events``. An event's ``timestamp`` is the machine's local time
without its zone, read as UTC.

The source is ``~/.openhands`` or its ``conversations`` folder, or one conversation's folder.
Each response's tokens (``token_usages``, by its ``response_id``) go on the message the response
made; what no message claims (a condenser's calls, a store without response ids: the
``accumulated_token_usage``) and the cost (``accumulated_cost``, never per response) go on the
last assistant message. A conversation folder without events is skipped; one whose events
yield no message is told in ``problems``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from archivist import agents
from archivist.agents.openhands.events import Conversation

KIND = "openhands"

_EVENT = re.compile(r"event-(\d+)-.*\.json\Z")
_EXPECTED = (
    "expected OpenHands' ~/.openhands or its conversations folder "
    "(conversations/<id>/base_state.json and events/event-<index>-<id>.json), or one conversation's folder"
)


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not OpenHands' folder, its conversations or one conversation, or None when it is one."""
    root = Path(path).expanduser()
    if reason := agents.no_source(root, _EXPECTED):
        return reason
    if agents.is_file(root):
        return f"{root} is a file: {_EXPECTED}."
    if _folders(agents.Root(root)):
        return None
    if root.name == "conversations" or agents.is_dir(root / "conversations"):
        return f"{root} holds no OpenHands conversation yet: {_EXPECTED}."
    return f"{root} holds no OpenHands conversations folder: {_EXPECTED}."


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every conversation under ``path``, one session each, in the order of their folders' names."""
    root = agents.Root(Path(path).expanduser(), problems)
    if not agents.is_dir(root.path):
        return
    used: set[str] = set()
    for folder in _folders(root):
        relative = agents.relative_path(folder, root.path) if folder != root.path else folder.name
        conversation = Conversation(root)
        events = _events(root, folder)
        for file in events:
            conversation.event(agents.json_file(file, root))
        state = agents.json_file(folder / "base_state.json", root)
        session = conversation.session(state if isinstance(state, dict) else {}, folder.name, relative, used)
        if session is not None:
            used.add(session.key)
            held = [folder / "base_state.json"] if agents.is_file(folder / "base_state.json") else []
            session.files = [*held, *events]
            yield session
        elif problems is not None:
            problems.extend(f"{relative}: {problem}" for problem in conversation.problems() or ["no message"])


def _folders(root: agents.Root) -> list[Path]:
    """The conversation folders of the source (each holds ``events``): itself, or those in it."""
    path = root.path
    if _is_conversation(path):
        return [path]
    if path.name != "conversations" and agents.is_dir(path / "conversations") and root.allows(path / "conversations"):
        path = path / "conversations"
    return [folder for folder in root.folders(path) if _is_conversation(folder) and root.allows(folder / "events")]


def _is_conversation(folder: Path) -> bool:
    return agents.is_dir(folder / "events")


def _events(root: agents.Root, folder: Path) -> list[Path]:
    """A conversation's event files, in the order of their indexes."""
    found = [(int(match[1]), file) for file in root.files(folder / "events") if (match := _EVENT.match(file.name))]
    return [file for _, file in sorted(found)]
