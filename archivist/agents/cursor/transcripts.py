"""Cursor's agent transcripts: the JSONL files its agent (the editor's and the ``cursor-agent``
command line's) writes for each conversation under ``~/.cursor/projects/<project>/agent-transcripts``.

They belong to the kind ``cursor``: they are Cursor's conversations, and a user who names
``~/.cursor`` or its ``projects`` as a Cursor source expects them read (``sources --discover``
lists that folder beside the editor's ``User`` folder). A conversation the editor keeps in its
state database may also have a transcript: they are sessions of two sources, each whole.

The shape is the one the public readers of these files agree on (the hooks' ``transcript_path``;
obsession's connector notes, agentsview's and agent-history tools' Cursor parsers):
``agent-transcripts/<id>/<id>.jsonl`` (earlier ``agent-transcripts/<id>.jsonl``), one line per
message, ``{"role": "user" | "assistant", "message": {"content": [...]}}``, its content
Anthropic's blocks: ``text`` (a request's wrapped in ``<user_query>``, which is taken off),
``tool_use`` (``name``, ``input``: a call, with the files its input names and its ``command``) and
``tool_result`` (its ``content``: a tool message's output). A line ``{"type": "turn_ended"}`` ends a
turn and says nothing. The lines carry no id, time, model or usage: a transcript is one session,
keyed ``transcript:<id>``, titled by its first request, dated by its file's modification time
(when the agent last wrote it); its project is its ``projects`` folder's name (Cursor's path of
the working directory with ``/`` made ``-``: not turned back, since ``-`` was in names too).

Not read: the oldest transcripts, plain text (``<id>.txt``), whose markers a message's own text can
hold. A line that is not JSON, or not a message, is skipped and told in its session's problems.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents.tool_edits import editor_call

FOLDER = "agent-transcripts"
PROJECTS = "projects"
FILE_KEYS = ("path", "file_path", "filePath", "target_file", "targetFile", "paths", "target_directory")
COMMAND_KEYS = ("command", "command_line")
NO_MESSAGE = "a line that is no message (a role and a message)"


def transcript_folders(root: agents.Root) -> list[Path] | None:
    """The ``agent-transcripts`` folders of a source, or None where it is none of Cursor's transcript
    sources (``~/.cursor``, its ``projects``, one project's folder, or an ``agent-transcripts`` folder)."""
    path = root.path
    if path.name == FOLDER:
        return [path]
    if agents.is_dir(path / FOLDER):
        return [path / FOLDER] if root.allows(path / FOLDER) else []
    projects = path if path.name == PROJECTS else path / PROJECTS
    if projects != path and not (agents.is_dir(projects) and root.allows(projects)):
        return None
    found = [project / FOLDER for project in root.folders(projects) if agents.is_dir(project / FOLDER)]
    if not found and projects != path:
        return None
    return [folder for folder in found if root.allows(folder)]


def is_transcript(file: Path) -> bool:
    """Whether a file is an agent transcript: a ``.jsonl`` under ``agent-transcripts`` whose first line
    is a message."""
    if file.suffix != ".jsonl" or FOLDER not in file.parts:
        return False
    return agents.first_value_is(file, _is_line)


def _is_line(value: Any) -> bool:
    return isinstance(value, dict) and (
        (isinstance(value.get("role"), str) and "message" in value) or value.get("type") == "turn_ended"
    )


def transcripts(root: agents.Root) -> list[Path]:
    """The transcripts of a source that is a folder: every ``.jsonl`` under its ``agent-transcripts``."""
    folders = transcript_folders(root) or []
    return [file for folder in folders for file in root.walk(folder) if file.suffix == ".jsonl"]


def read(root: agents.Root) -> Iterator[agents.Session]:
    """Every transcript's session: those of each project in turn, by their files' paths."""
    files = [root.path] if root.named is not None else transcripts(root)
    used: set[str] = set()
    for file in files:
        session = _session(file, root.problems)
        if session is not None:
            session.key = agents.file_key(session.key, agents.relative_path(file, root.path), used)
            used.add(session.key)
            yield session


def _project(file: Path) -> str | None:
    parts = file.parts
    if FOLDER in parts:
        index = len(parts) - 1 - parts[::-1].index(FOLDER)
        if index >= 1:
            return parts[index - 1]
    return None


def _session(file: Path, unread: list[str]) -> agents.Session | None:
    messages: list[agents.Message] = []
    skipped: dict[str, int] = {}
    try:
        with file.open("rb") as handle:
            for value in agents.json_lines_that(handle, skipped, _is_line, NO_MESSAGE):
                if value.get("type") != "turn_ended":
                    _message(value, messages)
    except OSError as error:
        unread.append(agents.Unread(f"{file.name}: reading stopped ({error.strerror or error})"))
        return None
    if not any(message.text or message.tool_calls for message in messages):
        return None
    try:
        modified = agents.iso_utc(file.stat().st_mtime)
    except OSError:
        modified = None
    requests = [message.text for message in messages if message.role == "user" and message.text]
    return agents.Session(
        key=f"transcript:{file.stem}",
        agent="cursor",
        title=agents.short_title(requests[0]) if requests else file.stem,
        messages=messages,
        project=_project(file),
        started=modified,
        last=modified,
        files=[file],
        problems=agents.skipped_problems(skipped),
        titled=bool(requests),
    )


def _message(value: dict[str, Any], messages: list[agents.Message]) -> None:
    """One line's message (and the tool messages of its results) added to ``messages``."""
    role = value["role"]
    body = value.get("message")
    content = body.get("content") if isinstance(body, dict) else body
    blocks = content if isinstance(content, list) else [content]
    texts: list[str] = []
    calls: list[agents.ToolCall] = []
    outputs: list[str] = []
    for block in blocks:
        if isinstance(block, str):
            texts.append(block)
        elif not isinstance(block, dict):
            continue
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "tool_use":
            given = block.get("input")
            arguments: dict[str, Any] = given if isinstance(given, dict) else {}
            name = agents.text_or_none(block.get("name")) or "tool"
            commands = [text for key in COMMAND_KEYS if (text := agents.text_or_none(arguments.get(key)))][:1]
            calls.append(editor_call(name, given, agents.named_files(arguments, FILE_KEYS), commands))
        elif block.get("type") == "tool_result":
            outputs.append(agents.parts_text(block.get("content")))
    text = "\n".join(text for text in texts if text.strip()).strip()
    if role == "user":
        text = _query(text)
    if text or calls:
        messages.append(agents.Message("assistant" if role == "assistant" else "user", text, tool_calls=calls))
    messages.extend(agents.Message("tool", "", tool_output=output) for output in outputs if output.strip())


def _query(text: str) -> str:
    """A request's text without the ``<user_query>`` tags Cursor wraps it in."""
    start, end = text.find("<user_query>"), text.rfind("</user_query>")
    if start >= 0 and end > start:
        return text[start + len("<user_query>") : end].strip()
    return text
