"""Gemini CLI sessions, read in place: one session per session file (docs/contract.md: sources).

Gemini CLI keeps a folder per project under ``~/.gemini/tmp/`` (a hash of the project's
path, or in newer versions a slug with a ``.project_root`` file naming the path), and each
session in its ``chats/`` folder: ``session-<time>-<id>.json`` (one JSON document,
rewritten whole) or ``session-<time>-<id>.jsonl`` (appended). A sub-agent's session is
``chats/<parent session id>/<session id>.jsonl``. The source is ``~/.gemini/tmp`` (or
``~/.gemini``), one project folder, its ``chats`` folder, or one session file.

What is read:

- The metadata (the JSON document's top level, or the first JSONL line and the
  ``{"$set": …}`` lines after it): the session id (the key) and the ``summary`` (the title).
- The messages: ``user`` (its displayed text when the log keeps one, else its content) and
  ``gemini`` (the assistant: its text, ``model``, ``thoughts`` as thinking, and its
  ``toolCalls`` with the files their arguments name and the shell commands they ran; each
  call's result follows as a tool message). In the JSONL form the last line of a message
  id wins (keeping the place of its first), ``{"$rewindTo": id}`` drops that message and
  every later one, and ``$set.messages`` replaces them all.
- The project: ``.project_root`` in the project folder, else the path that
  ``~/.gemini/projects.json`` maps to the folder, else the folder's name.
- The title: the summary, else the first user message, shortened.

- Each response's ``tokens`` (its usage: ``input`` counts the ``cached`` prompt tokens, and
  ``thoughts`` are output), and a user's images and files (``inlineData``, ``fileData``
  parts) as attachments.

Skipped: ``info``, ``error`` and ``warning`` messages (status lines of the CLI), ``logs.json``
and checkpoints. A ``.json`` session that was migrated to a
``.jsonl`` of the same id is read once, from the ``.jsonl``. Lines that are not JSON,
records of no known shape and messages of unknown types are skipped and counted in the
session's ``problems``, and so is a line over 64 MB; a last line cut short (a session being
written) is skipped silently; a JSON document cut short is read up to the damage, and one
over 1 GB is not read. A file that yields no session tells why in ``problems``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import LONG_LINE, MAX_LINE_BYTES
from archivist.agents.tool_edits import with_input

KIND = "gemini-cli"

_SESSION_NAME = re.compile(r"^session-.+\.jsonl?$")
_STATUS_TYPES = {"info", "error", "warning"}
_FILE_KEYS = ("file_path", "absolute_path", "path", "filepath", "file", "paths", "file_paths")
_HEAD_BYTES = 64 * 1024
_EXPECTED = (
    "expected Gemini CLI's ~/.gemini/tmp (a folder per project, with chats/session-*.json or "
    "session-*.jsonl), one project folder, or one session file"
)


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not a Gemini CLI sessions folder or session file, or None when it is one."""
    return agents.check_path(
        path, _EXPECTED, "a Gemini CLI session file", looks_like_session, _session_files, _no_session
    )


def _no_session(root: Path) -> str:
    """What a folder without a session file is, for a sentence about it."""
    if _chats_folders(agents.Root(root)) or _is_gemini_home(root):
        return "holds no Gemini CLI session yet (no chats/session-*.json or .jsonl file)"
    return "holds no Gemini CLI chats folder"


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every session under ``path``, one per session file, in the order of their paths.

    What was skipped in a file that yields no session (a file too large, one with no
    message), and the links that lead out of the source (never opened), go to ``problems``.
    """
    root, files = agents.source_files(path, problems, _session_files)
    projects: dict[Path, str | None] = {}
    used: set[str] = set()
    for file in files:
        record = Record(file)
        record.read()
        session_id = agents.text_or_none(record.meta.get("sessionId"))
        if file.suffix == ".json" and session_id and _migrated(file, session_id):
            continue  # the CLI carried this session on in the .jsonl beside it
        relative = agents.relative_path(file, root) if root.is_dir() else file.name
        key = agents.file_key(session_id, relative, used)
        folder = _project_folder(file)
        if folder is not None and folder not in projects:
            projects[folder] = _project(folder)
        parent = file.parent.name if file.parent.parent.name == "chats" else None
        session = record.session(key, projects.get(folder) if folder else None, parent)
        if session is not None:
            used.add(key)
            yield session
        elif problems is not None:
            problems.extend(f"{relative}: {problem}" for problem in record.problems())


# -- finding files ---------------------------------------------------------------------


def _chats_folders(root: agents.Root) -> list[Path]:
    """The ``chats`` folders of a source: its own, or those of the project folders in it."""
    path = root.path
    if path.name == "chats":
        return [path]
    if _allowed_dir(root, path / "chats"):
        return [path / "chats"]
    base = path / "tmp" if _allowed_dir(root, path / "tmp") else path
    return [folder / "chats" for folder in root.folders(base) if _allowed_dir(root, folder / "chats")]


def _allowed_dir(root: agents.Root, folder: Path) -> bool:
    return folder.is_dir() and root.allows(folder)


def _is_gemini_home(root: Path) -> bool:
    """``~/.gemini``, its ``tmp``, or a project folder there, before any chat was recorded."""
    if root.name == ".gemini" or (root.name == "tmp" and root.parent.name == ".gemini"):
        return True
    base = root / "tmp" if (root / "tmp").is_dir() else root
    markers = (".project_root", "logs.json")
    try:
        folders = [root, *(folder for folder in base.iterdir() if folder.is_dir())]
    except OSError:
        return False
    return any((folder / marker).is_file() for folder in folders for marker in markers)


def _session_files(root: agents.Root) -> list[Path]:
    files: list[Path] = []
    for chats in _chats_folders(root):
        for entry in root.entries(chats):
            if _SESSION_NAME.match(entry.name) and entry.is_file():
                files.append(entry)
            elif entry.is_dir():  # a session's sub-agents
                files.extend(root.files(entry, ".jsonl"))
    return sorted(files, key=lambda file: agents.relative_path(file, root.path))


def looks_like_session(file: Path) -> bool:
    """A peek: a first JSONL line with session metadata or a message, or a JSON document's keys."""
    if file.suffix not in (".json", ".jsonl"):
        return False
    try:
        with file.open("rb") as handle:
            first = b""
            while not first.strip():
                first = handle.readline(MAX_LINE_BYTES)
                if not first:
                    return file.suffix == ".jsonl"  # a session that has not written anything yet
            handle.seek(0)
            head = handle.read(_HEAD_BYTES)
    except OSError:
        return False
    try:
        record = agents.json_value(first.decode("utf-8", "replace").lstrip("\ufeff"))
    except agents.NotJSON:
        record = None
    if isinstance(record, dict):
        return _is_meta(record) or (isinstance(record.get("id"), str) and "type" in record)
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    return bool(re.match(r"\s*\{", text) and re.search(r'"(sessionId|projectHash)"\s*:', text))


def _migrated(file: Path, session_id: str) -> bool:
    """Whether ``X.jsonl`` beside ``X.json`` carries the same session."""
    sibling = file.with_suffix(".jsonl")
    try:
        with sibling.open("rb") as handle:
            first = agents.json_value(handle.readline(MAX_LINE_BYTES).decode("utf-8", "replace").lstrip("\ufeff"))
    except (OSError, agents.NotJSON):
        return False
    return isinstance(first, dict) and first.get("sessionId") == session_id


def _project_folder(file: Path) -> Path | None:
    for folder in file.parents:
        if folder.name == "chats":
            return folder.parent
    return None


def _project(folder: Path) -> str | None:
    """The project's path: ``.project_root``, else ``projects.json``, else the folder's name.

    Neither is read through a link that leads out of its folder.
    """
    marker_file = folder / ".project_root"
    try:
        readable = agents.Root(folder).allows(marker_file) and not agents.too_large(marker_file)
        marker = marker_file.read_bytes().decode("utf-8", "replace").strip() if readable else ""
    except OSError:
        marker = ""
    if marker:
        return marker
    registry = folder.parent.parent / "projects.json" if folder.parent.name == "tmp" else None
    if (
        registry is not None
        and registry.is_file()
        and agents.Root(registry.parent).allows(registry)
        and not agents.too_large(registry)
    ):
        try:
            projects = agents.json_value(registry.read_bytes().decode("utf-8", "replace")).get("projects")
        except (OSError, agents.NotJSON, AttributeError):
            projects = None
        if isinstance(projects, dict):
            for project_path, slug in projects.items():
                if slug == folder.name and isinstance(project_path, str) and project_path:
                    return project_path
    return folder.name


def _is_meta(record: dict[str, Any]) -> bool:
    return "id" not in record and ("sessionId" in record or "projectHash" in record or "messages" in record)


# -- reading one session ---------------------------------------------------------------


class Record(agents.Skipping):
    """One session file, read into its metadata and its messages by id."""

    def __init__(self, file: Path) -> None:
        super().__init__()
        self.file = file
        self.meta: dict[str, Any] = {}
        self.messages: dict[str, dict[str, Any]] = {}  # by id, in the order ids first appeared
        self.skipped_messages: dict[str, int] = {}
        self.notes: list[str] = []

    def read(self) -> None:
        if self.file.suffix == ".json" and self._too_large():
            return
        try:
            with self.file.open("rb") as handle:
                first = True
                for raw, _ in agents.lines(handle):
                    if raw is None:
                        if first and self.file.suffix == ".json":
                            self._read_document()  # one JSON document on one long line
                            return
                        self.skip(LONG_LINE)
                        continue
                    complete = raw.endswith(b"\n")
                    text, replaced = _decode(raw)
                    text = text.lstrip("\ufeff").strip() if first else text.strip()
                    if not text:
                        continue
                    try:
                        value = agents.json_value(text)
                    except agents.NotJSON as error:
                        if first and (self.file.suffix == ".json" or text == "{"):
                            self._read_document()  # not JSONL: one JSON document, pretty-printed or being rewritten
                            return
                        if complete:  # a last line without its newline is still being written
                            self.skip(str(error))
                            self.replaced += replaced
                        continue
                    first = False
                    self.replaced += replaced
                    self._line(value)
        except OSError as error:
            self.notes.append(f"reading stopped: {error.strerror or error}")

    def _too_large(self) -> bool:
        """Whether the file is too large to be read whole (told in its notes)."""
        reason = agents.too_large(self.file)
        if reason is not None:
            self.notes.append(reason)
        return reason is not None

    def _read_document(self) -> None:
        if self._too_large():
            return
        data = self.file.read_bytes()
        text, replaced = _decode(data)
        self.replaced += replaced
        text = text.lstrip("\ufeff")
        try:
            document = agents.json_value(text)
        except agents.NotJSON:
            count = self._salvage(text)
            self.notes.append(
                f"the JSON document is cut short or damaged: read the {count} message{'s' if count != 1 else ''} before the damage"
            )
            return
        if isinstance(document, dict):
            self._set(document)
        else:
            self.notes.append("not a JSON object")

    def _salvage(self, text: str) -> int:
        """The metadata and the whole messages before the point where a document breaks off."""
        for key in ("sessionId", "projectHash", "startTime", "lastUpdated", "summary", "kind"):
            match = re.search(rf'"{key}"\s*:\s*("(?:[^"\\]|\\.)*")', text)
            if match:
                try:
                    self.meta[key] = agents.json_value(match.group(1))
                except agents.NotJSON:
                    pass
        start = re.search(r'"messages"\s*:\s*\[', text)
        if start is None:
            return 0
        decoder = json.JSONDecoder()
        position = start.end()
        count = 0
        while True:
            while position < len(text) and text[position] in " \t\r\n,":
                position += 1
            if position >= len(text) or text[position] == "]":
                break
            try:
                message, position = decoder.raw_decode(text, position)
            except (ValueError, RecursionError):
                break
            if agents.too_deep(message):
                continue  # a message nested too deeply is left out, as json_value leaves it
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                self.messages[message["id"]] = message
                count += 1
        return count

    def _line(self, value: Any) -> None:
        if not isinstance(value, dict):
            self.skip("not a JSON object")
        elif isinstance(value.get("id"), str):
            self.messages[value["id"]] = value  # a re-appended id replaces, keeping its place
        elif "$set" in value:
            if isinstance(value["$set"], dict):
                self._set(value["$set"])
            else:
                self.skip("'$set' without an object")
        elif "$rewindTo" in value:
            self._rewind(value["$rewindTo"])
        elif _is_meta(value):
            self._set(value)
        else:
            self.skip("unknown record")

    def _set(self, fields: dict[str, Any]) -> None:
        messages = fields.get("messages")
        self.meta.update({key: value for key, value in fields.items() if key != "messages"})
        if isinstance(messages, list):
            self.messages = {}
            for message in messages:
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    self.messages[message["id"]] = message
                else:
                    self.skipped_messages["not a message"] = self.skipped_messages.get("not a message", 0) + 1

    def _rewind(self, message_id: Any) -> None:
        if not isinstance(message_id, str) or message_id not in self.messages:
            return
        while self.messages:  # from the end: a rewind drops the latest messages
            dropped = next(reversed(self.messages))
            del self.messages[dropped]
            if dropped == message_id:
                break

    def session(self, key: str, project: str | None, parent: str | None) -> agents.Session | None:
        messages: list[agents.Message] = []
        models: list[str] = []
        for record in self.messages.values():
            kind = record.get("type")
            timestamp = agents.iso_utc(record.get("timestamp"))
            if kind == "user":
                shown = agents.parts_text(record.get("displayContent"), skip_thoughts=True)
                text = (shown or agents.parts_text(record.get("content"), skip_thoughts=True)).strip()
                attached = agents.attachments_of(record.get("content"))
                text = "\n".join([text, *(item.placeholder() for item in attached)]).strip()
                if text:
                    messages.append(agents.Message(role="user", text=text, timestamp=timestamp, attachments=attached))
            elif kind == "gemini":
                model = agents.text_or_none(record.get("model"))
                if model and model not in models:
                    models.append(model)
                messages.extend(assistant_messages(record, timestamp, model))
            elif not (isinstance(kind, str) and kind in _STATUS_TYPES):
                reason = f"unknown type {kind!r}"
                self.skipped_messages[reason] = self.skipped_messages.get(reason, 0) + 1
        if not messages:
            return None
        summary = agents.text_or_none(self.meta.get("summary"))
        first_user = next((m.text for m in messages if m.role == "user"), "")
        first_text = first_user or next((m.text for m in messages if m.text), "")
        title = summary or (agents.short_title(first_text) if first_text else "Untitled session")
        times = [m.timestamp for m in messages if m.timestamp]
        return agents.Session(
            key=key,
            agent=KIND,
            title=title,
            messages=messages,
            project=project,
            models=models,
            branch=None,
            started=min(times) if times else agents.iso_utc(self.meta.get("startTime")),
            last=max(times) if times else agents.iso_utc(self.meta.get("lastUpdated")),
            files=[self.file],
            problems=self.problems(),
            parent=parent,
        )

    def problems(self) -> list[str]:
        return [
            *agents.skipped_problems(self.skipped),
            *agents.skipped_problems(self.skipped_messages, "message"),
            *agents.replaced_problems(self.replaced),
            *self.notes,
        ]


def assistant_messages(record: dict[str, Any], timestamp: str | None, model: str | None) -> list[agents.Message]:
    """A gemini message, then one tool message per tool call that has a result."""
    thoughts = record.get("thoughts")
    thinking = []
    for thought in thoughts if isinstance(thoughts, list) else []:
        if isinstance(thought, dict):
            said = [agents.text_or_none(thought.get("subject")), agents.text_or_none(thought.get("description"))]
            text = "\n".join(line for line in said if line)
        else:
            text = agents.text_or_none(thought) or ""
        if text:
            thinking.append(text)
    calls: list[agents.ToolCall] = []
    results: list[agents.Message] = []
    raw_calls = record.get("toolCalls")
    for call in raw_calls if isinstance(raw_calls, list) else []:
        if not isinstance(call, dict):
            continue
        calls.append(tool_call(call))
        output = _result_text(call)
        if output:
            when = agents.iso_utc(call.get("timestamp")) or timestamp
            results.append(agents.Message(role="tool", text="", timestamp=when, tool_output=output))
    text = agents.parts_text(record.get("content"), skip_thoughts=True).strip()
    if not (text or calls or thinking):
        return []
    message = agents.Message(
        role="assistant",
        text=text,
        timestamp=timestamp,
        model=model,
        tool_calls=calls,
        thinking="\n\n".join(thinking),
        usage=_usage(record.get("tokens")),
    )
    return [message, *results]


def _usage(tokens: Any) -> agents.Usage | None:
    """A response's ``tokens``: its prompt (``input``, which counts what was ``cached``, and
    ``tool``), and its output (``output`` and ``thoughts``: thinking is billed as output)."""
    if not isinstance(tokens, dict):
        return None
    count = {name: agents.whole_count(tokens.get(name)) for name in ("input", "output", "cached", "thoughts", "tool")}
    cached = min(count["cached"], count["input"])
    return agents.usage(
        input=count["input"] - cached + count["tool"], output=count["output"] + count["thoughts"], cache_read=cached
    )


def tool_call(call: dict[str, Any]) -> agents.ToolCall:
    name = agents.text_or_none(call.get("name")) or agents.text_or_none(call.get("displayName")) or "tool"
    given = call.get("args")
    args = given if isinstance(given, dict) else {}
    commands = []
    for key in ("command", "cmd"):
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            commands.append(value.strip())
    found = with_input(agents.ToolCall(name=name, files=agents.named_files(args, _FILE_KEYS), commands=commands), given)
    display = call.get("resultDisplay")
    shown = agents.text_or_none(display.get("filePath")) if isinstance(display, dict) else None
    if shown:  # the absolute path of a file the arguments may name relatively
        found.files = [f for f in found.files if not _names(shown, f)] + [shown]
        for edit in found.edits:
            edit.file = shown if _names(shown, edit.file) else edit.file
    found.files = list(dict.fromkeys(found.files))
    return found


def _names(shown: str, file: str) -> bool:
    """Whether ``file``, as a call's arguments name it, is the file the CLI showed as ``shown``."""
    return file == shown or shown.endswith("/" + file)


def _result_text(call: dict[str, Any]) -> str:
    """What a tool returned: the function responses of its result, else what the CLI displayed."""
    result = call.get("result")
    texts: list[str] = []
    for part in result if isinstance(result, list) else [result]:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            response = part.get("functionResponse")
            if isinstance(response, dict):
                body = response.get("response")
                if isinstance(body, dict):
                    value = body.get("output", body.get("error"))
                    texts.append(value if isinstance(value, str) else json.dumps(body, ensure_ascii=False))
                elif isinstance(body, str):
                    texts.append(body)
            elif isinstance(part.get("text"), str):
                texts.append(part["text"])
    if not any(texts):
        display = call.get("resultDisplay")
        if isinstance(display, str):
            texts.append(display)
        elif isinstance(display, dict) and isinstance(display.get("fileDiff"), str):
            texts.append(display["fileDiff"])
    return "\n".join(text for text in texts if text)


# -- helpers ---------------------------------------------------------------------------


def _decode(data: bytes) -> tuple[str, bool]:
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace"), True
