"""Codebuff's chats, read in place: one session per chat (docs/contract.md: sources).

Codebuff's CLI (CodebuffAI/codebuff ``cli/``, formerly Manicode) keeps its data in
``~/.config/manicode`` on every system: ``projects/<project>/chats/<chat id>/chat-messages.json``,
where ``<project>`` is the name of the project's folder (not its path) and the chat id the time
the chat began (``2025-12-20T12-00-00.000Z``). The file is the list of the chat's messages as the
CLI shows them (``ChatMessage``): ``id``, ``variant`` (``user``, ``ai``, ``agent``, ``error``),
``content``, ``timestamp`` (ISO), and ``blocks``: ``text`` (``textType`` ``reasoning`` is
thinking), ``tool`` (``toolName``, ``input``, ``output``), ``agent`` (a sub-agent's
``agentName`` and its own ``blocks``), ``image`` (base64 ``image`` and ``mediaType``), and
blocks of the interface (plans, mode dividers, lists of agents, questions) that are no
conversation. The shape is learned from the CLI's own source (``cli/src/types/chat.ts``,
``cli/src/utils/chat-history.ts``, ``cli/src/utils/config-dir.ts``); the usage, ``metadata.model``
and ``metadata.usage`` (``inputTokens``, ``outputTokens``, ``cacheCreationInputTokens``,
``cacheReadInputTokens``), from a usage reader's tests (tokmesh ``codebuff`` tests). A
message's ``credits`` are Codebuff's credits, not dollars: not read.

The source is ``~/.config/manicode``, its ``projects`` folder, one project's folder, its ``chats``
folder, one chat's folder, or one ``chat-messages.json``. A session's key is the project's name
and the chat's id (``<project>/<chat id>``); its project, the project's name; its title, its
first user message, shortened. The npm ``codebuff`` package's older chats (``messages.json``)
are not read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from archivist import agents
from archivist.agents.codebuff.blocks import Chat

KIND = "codebuff"
MESSAGES = "chat-messages.json"

_EXPECTED = (
    "expected Codebuff's ~/.config/manicode (projects/<project>/chats/<chat id>/chat-messages.json), "
    "its projects folder, one project's folder or chats folder, one chat's folder, or one chat-messages.json"
)


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not Codebuff's folder, projects, chats or one chat, or None when it is one."""
    return agents.check_path(path, _EXPECTED, "a Codebuff chat-messages.json", _looks_like_chat, _chats, _none)


def _none(root: Path) -> str:
    if root.name in ("projects", "chats") or (root / "projects").is_dir() or (root / "chats").is_dir():
        return "holds no Codebuff chat yet"
    return "holds no Codebuff projects folder"


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every chat under ``path``, one session each, in the order of their paths."""
    root, files = agents.source_files(path, problems, _chats)
    confined = agents.Root(root, problems)
    used: set[str] = set()
    for file in files:
        relative = agents.relative_path(file, root) if root.is_dir() else file.name
        chat_id = file.parent.name
        project = file.parent.parent.parent.name if file.parent.parent.name == "chats" else None
        chat = Chat()
        value = agents.json_file(file, confined)
        if value is not None:
            chat.read(value)
        session = chat.session(f"{project}/{chat_id}" if project else chat_id, project, relative, used)
        if session is not None:
            used.add(session.key)
            session.files = [file]
            yield session
        elif problems is not None and value is not None:
            problems.extend(f"{relative}: {problem}" for problem in chat.problems() or ["no message"])


def _chats(root: agents.Root) -> list[Path]:
    """The ``chat-messages.json`` of every chat under the source, whichever of its folders it is."""
    path = root.path
    if agents.is_file(path / MESSAGES):
        return [path / MESSAGES]
    if path.name != "projects" and agents.is_dir(path / "projects") and root.allows(path / "projects"):
        path = path / "projects"
    if path.name == "chats":
        chat_folders = root.folders(path)
    elif agents.is_dir(path / "chats") and root.allows(path / "chats"):
        chat_folders = root.folders(path / "chats")
    else:
        chat_folders = [
            chat
            for project in root.folders(path)
            if agents.is_dir(project / "chats")
            for chat in root.folders(project / "chats")
        ]
    found = [
        folder / MESSAGES
        for folder in chat_folders
        if agents.is_file(folder / MESSAGES) and root.allows(folder / MESSAGES)
    ]
    return sorted(found, key=lambda file: agents.relative_path(file, root.path))


def _looks_like_chat(file: Path) -> bool:
    """A peek: a file named ``chat-messages.json`` that begins as a JSON list."""
    if file.name != MESSAGES:
        return False
    try:
        with file.open("rb") as handle:
            return handle.read(64).lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[") or file.stat().st_size == 0
    except OSError:
        return False
