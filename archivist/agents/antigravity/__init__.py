"""Google Antigravity's conversations, from the plain files of its agent's brain (docs/contract.md: sources).

Antigravity keeps its data in ``~/.gemini/antigravity`` (``~/.gemini/antigravity-ide`` in newer
versions; the same on every system). Each conversation's own stream, ``conversations/<id>.pb``, is
encrypted with a key that is not on disk: it is not read (``unreadable.toml``:
``antigravity-conversations``). What is read is what the agent's brain writes in plain text beside
it, in ``brain/<conversation id>/``:

- its transcript, ``.system_generated/logs/transcript_full.jsonl`` (else ``transcript.jsonl``, else
  an early version's ``overview.txt``): the user's requests, the model's answers with their thinking
  and tool calls, the tools' outputs (``transcript``);
- its artifacts, the Markdown files it writes for the person (``task.md``, ``implementation_plan.md``,
  ``walkthrough.md``...), each with a ``<name>.metadata.json`` of its ``artifactType``, ``summary``
  and ``updatedAt``: one assistant message each, headed by its type and name, at that time.

Beside ``brain``, ``conversation_summaries.db`` (a table ``conversation_summaries`` of
``conversation_id`` and ``title``) gives each conversation its title, and ``history.jsonl``, where a
version writes one (the CLI's layout), the person's prompts (``display``, ``timestamp`` in
milliseconds, ``workspace``, ``conversationId``): the workspace is the conversation's project (else the
working folder of its first command), and the
prompts are its user messages where no transcript holds them. A conversation with artifacts and no
transcript is what its artifacts hold: plans and walkthroughs, without the requests.

The shape is learned from agentsview's readers (kenn-io/agentsview ``internal/parser``:
``antigravity_brain_transcript.go``, ``antigravity_cli.go`` for the artifacts and the history,
``shared_titles.go`` for the titles) and their tests, and from transcripts people published. No
step records tokens: no usage. The model is the one the person chose (a user step's
``<USER_SETTINGS_CHANGE>``). The source is the Antigravity folder, its ``brain`` folder, one
conversation's folder, or one transcript. A session's key is the conversation's id.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import databases, unreadable
from archivist.agents.antigravity import transcript

KIND = "antigravity"
BRAIN = "brain"
LOGS = (".system_generated", "logs")
TRANSCRIPTS = ("transcript_full.jsonl", "transcript.jsonl", "overview.txt")
HISTORY = "history.jsonl"
SUMMARIES = "conversation_summaries.db"
METADATA = ".metadata.json"
STORE = "antigravity-conversations"
EXPECTED = (
    "Antigravity's folder (~/.gemini/antigravity, holding brain/), its brain folder, one conversation's "
    "folder in it (brain/<id>), or one transcript (brain/<id>/.system_generated/logs/transcript.jsonl)"
)


@dataclass
class Conversation:
    """One conversation's files: its id, its brain folder (None for a transcript read alone), its transcript."""

    key: str
    folder: Path | None
    log: Path | None
    artifacts: list[Path] = field(default_factory=list)


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not Antigravity's brain or one of its conversations (a sentence), or None."""
    root = Path(path).expanduser()
    if _encrypted(root):
        return unreadable.stores()[STORE].sentence(root)
    if (reason := agents.no_source(root, EXPECTED)) is not None:
        return reason
    if agents.is_file(root):
        return None if _looks_like(root) else f"{root} is not an Antigravity transcript: expected {EXPECTED}."
    if _conversations(agents.Root(root))[1]:
        return None
    if agents.is_dir(root / "conversations"):
        return f"{root} holds no conversation of Antigravity's brain, and {unreadable.stores()[STORE].sentence()}"
    return f"{root} holds no Antigravity conversation: expected {EXPECTED}."


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every conversation under ``path``, one session each, in the order of their ids."""
    root = agents.Root(Path(path).expanduser(), problems)
    home, conversations = _conversations(root)
    history = _history(home, root) if home else {}
    titles = _titles(home, problems) if home else {}
    for conversation in conversations:
        session = _session(conversation, root, history.get(conversation.key), titles.get(conversation.key))
        if session is not None:
            yield session
        elif problems is not None:
            problems.append(f"{conversation.key}: no message")


def _session(
    conversation: Conversation, root: agents.Root, prompts: Prompts | None, title: str | None
) -> agents.Session | None:
    skipping = agents.Skipping()
    messages: list[agents.Message] = []
    files: list[Path] = []
    if conversation.log is not None and root.allows(conversation.log):
        messages = list(transcript.messages(transcript.steps(_values(conversation.log, skipping), skipping)))
        files.append(conversation.log)
    if prompts is not None:
        if not any(message.role == "user" for message in messages):
            messages[:0] = prompts.messages
        files.append(prompts.file)
    for artifact in conversation.artifacts:
        message = _artifact(artifact, root)
        if message is not None:
            _place(messages, message)
            files.append(artifact)
    if not messages:
        return None
    times = sorted(message.timestamp for message in messages if message.timestamp)
    first = next((message.text for message in messages if message.role == "user" and message.text), None)
    heading = title or first or _heading(messages[0].text)
    return agents.Session(
        key=conversation.key,
        agent=KIND,
        title=agents.short_title(heading),
        messages=messages,
        project=(prompts.workspace if prompts else None) or _first_folder(messages),
        models=list(dict.fromkeys(message.model for message in messages if message.model)),
        started=times[0] if times else None,
        last=times[-1] if times else None,
        files=files,
        problems=[*agents.skipped_problems(skipping.skipped), *agents.replaced_problems(skipping.replaced)],
        titled=bool(title),
    )


def _first_folder(messages: list[agents.Message]) -> str | None:
    """The working folder of the conversation's first command, where no history names its workspace."""
    for message in messages:
        for call in message.tool_calls:
            if call.name == "run_command" and call.input:
                try:
                    args = agents.json_value(call.input)
                except agents.NotJSON:
                    continue
                if isinstance(args, dict) and (folder := agents.text_or_none(args.get("Cwd"))):
                    return folder
    return None


def _values(file: Path, skipping: agents.Skipping) -> Iterator[Any]:
    try:
        with file.open("rb") as handle:
            yield from agents.json_lines(handle, skipping.skipped)
    except OSError as error:
        skipping.skip(f"not read ({error.strerror or error})")


def _place(messages: list[agents.Message], message: agents.Message) -> None:
    """Put an artifact's message before the first message after its time (at the end where it has none)."""
    if message.timestamp:
        for index, other in enumerate(messages):
            if other.timestamp and other.timestamp > message.timestamp:
                messages.insert(index, message)
                return
    messages.append(message)


def _heading(text: str) -> str:
    """An artifact's title: its first line that is text, past its header."""
    lines = [line.strip().lstrip("#").strip() for line in text.splitlines()[1:] if line.strip()]
    return lines[0] if lines else text


def _artifact(file: Path, root: agents.Root) -> agents.Message | None:
    """An artifact as an assistant message: ``[type — name]``, its summary, its text; at its time."""
    reason = agents.too_large(file)
    if reason:
        root.left_out(f"{file.name}: {reason}")
        return None
    try:
        body = file.read_bytes().decode("utf-8", "replace")
    except OSError as error:
        root.left_out(f"{file.name}: not read ({error.strerror or error})")
        return None
    meta_file = file.with_name(file.name + METADATA)
    meta = agents.json_file(meta_file, root) if agents.is_file(meta_file) else None
    meta = meta if isinstance(meta, dict) else {}
    kind = agents.text_or_none(meta.get("artifactType"))
    summary = agents.text_or_none(meta.get("summary"))
    header = f"[{kind} — {file.name}]" if kind else f"[{file.name}]"
    text = "\n".join(part for part in (header, summary and summary + "\n", body) if part)
    return agents.Message(role="assistant", text=text, timestamp=agents.iso_utc(meta.get("updatedAt")))


# --- what the source holds ------------------------------------------------------------------


def _encrypted(path: Path) -> bool:
    """Whether ``path`` is the encrypted store: a ``conversations`` folder beside ``brain``, or a ``.pb`` in one."""
    folder = path if path.name == "conversations" else path.parent if path.suffix == ".pb" else None
    return folder is not None and folder.name == "conversations" and not agents.is_dir(folder / BRAIN)


def _looks_like(file: Path) -> bool:
    """A peek: a file named as a transcript whose first line is a step."""
    return file.name in TRANSCRIPTS and agents.first_value_is(
        file, lambda value: isinstance(value, dict) and ("step_index" in value or "source" in value)
    )


def _conversations(root: agents.Root) -> tuple[Path | None, list[Conversation]]:
    """The Antigravity folder the source is in (where it is one), and its conversations."""
    path = root.path
    if agents.is_file(path):
        logs = path.parent
        folder = logs.parent.parent if (logs.name, logs.parent.name) == LOGS[::-1] else None
        if folder is None:
            return None, [Conversation(path.stem, None, path)]
        home = folder.parent.parent if folder.parent.name == BRAIN else None
        return home, [Conversation(folder.name, folder, path, _artifacts(root, folder))]
    if agents.is_dir(path / BRAIN) and root.allows(path / BRAIN):
        home, folders = path, root.folders(path / BRAIN)
    elif path.name == BRAIN:
        home, folders = path.parent, root.folders(path)
    else:
        home, folders = (path.parent.parent if path.parent.name == BRAIN else None), [path]
    found = [conversation for folder in folders if (conversation := _conversation(root, folder))]
    return home, found


def _conversation(root: agents.Root, folder: Path) -> Conversation | None:
    logs = folder.joinpath(*LOGS)
    log = next((logs / name for name in TRANSCRIPTS if agents.is_file(logs / name) and root.allows(logs / name)), None)
    artifacts = _artifacts(root, folder)
    if log is None and not artifacts:
        return None
    return Conversation(folder.name, folder, log, artifacts)


def _artifacts(root: agents.Root, folder: Path) -> list[Path]:
    """A conversation's artifacts: its Markdown files (in a folder not under ``brain``, those with their metadata)."""
    files = root.files(folder, ".md")
    if folder.parent.name == BRAIN:
        return files
    return [file for file in files if agents.is_file(file.with_name(file.name + METADATA))]


@dataclass
class Prompts:
    """A conversation's prompts in ``history.jsonl``: its user messages, its workspace, the file."""

    file: Path
    messages: list[agents.Message] = field(default_factory=list)
    workspace: str | None = None


def _history(home: Path, root: agents.Root) -> dict[str, Prompts]:
    """The prompts of ``history.jsonl`` by conversation (a line naming none is no conversation's)."""
    file = home / HISTORY
    if not agents.is_file(file) or not root.allows(file):
        return {}
    found: dict[str, Prompts] = {}
    skipped: dict[str, int] = {}
    try:
        with file.open("rb") as handle:
            for value in agents.json_lines(handle, skipped):
                if not isinstance(value, dict) or not isinstance(value.get("conversationId"), str):
                    continue
                prompts = found.setdefault(value["conversationId"], Prompts(file))
                workspace = agents.text_or_none(value.get("workspace"))
                prompts.workspace = workspace or prompts.workspace
                text = agents.text_or_none(value.get("display"))
                if text:
                    stamp = agents.iso_utc(value.get("timestamp"))
                    prompts.messages.append(agents.Message(role="user", text=text, timestamp=stamp))
    except OSError as error:
        root.left_out(f"{HISTORY}: not read ({error.strerror or error})")
    if skipped:
        root.problems.extend(f"{HISTORY}: {problem}" for problem in agents.skipped_problems(skipped))
    return found


def _titles(home: Path, problems: list[str] | None) -> dict[str, str]:
    """Each conversation's title, from ``conversation_summaries.db``; none where it cannot be read (told)."""
    database = home / SUMMARIES
    if not agents.is_file(database):
        return {}
    told = problems if problems is not None else []
    try:
        connection = databases.connect(database, told, shown=SUMMARIES)
        try:
            rows = connection.execute("SELECT conversation_id, title FROM conversation_summaries").fetchall()
        finally:
            connection.close()
    except sqlite3.Error as error:
        told.append(agents.Unread(f"{SUMMARIES}: not read ({error})"))
        return {}
    return {
        key: title.strip() for key, title in rows if isinstance(key, str) and isinstance(title, str) and title.strip()
    }
