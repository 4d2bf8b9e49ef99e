"""Claude Code sessions, read where Claude Code writes them (``~/.claude/projects``).

A source is the projects folder (one folder per project), one project's folder, or one
session's ``.jsonl`` file. Each ``<session-uuid>.jsonl`` is one session, keyed
``<project folder>/<uuid>`` whatever form the source takes. Its sub-agent transcripts are
sessions of their own whose ``parent`` is that key, in all three layouts Claude Code has
used: sidechain lines inside the session file (``<parent key>/sidechain-<agentId>``),
``agent-<id>.jsonl`` beside it (``<project folder>/agent-<id>``), and
``<uuid>/subagents/agent-<id>.jsonl`` (``<parent key>/agent-<id>``).

Each line is one JSON object with a ``type``. ``user``, ``assistant`` and ``system`` lines
are messages (an assistant response written over several lines sharing ``message.id`` is
one message; a line whose ``uuid`` was already read is a copy and is dropped); ``summary``,
``custom-title`` and ``ai-title`` lines give the title; the other known types are
bookkeeping. Unknown types and lines that are not JSON are skipped and counted in the
session's problems; the last line of a file still being written (no newline yet) is left
for the next read. Files are read line by line (a line over 64 MB is skipped and counted),
bytes that are not UTF-8 are replaced, and nothing is ever written.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist.agents import (
    LONG_LINE,
    NOT_JSON,
    Message,
    NotJSON,
    Root,
    Session,
    Tail,
    ToolCall,
    between,
    head_lines,
    iso_utc,
    json_value,
    lines,
    short_title,
    too_large,
)

KIND = "claude-code"

EXPECTED = (
    "a Claude Code projects folder (~/.claude/projects), one project's folder in it, or one session's .jsonl file"
)

MESSAGE_TYPES = frozenset({"user", "assistant", "system"})
# Line types that are not messages: titles, summaries and the CLI's bookkeeping.
OTHER_TYPES = frozenset(
    {
        "summary",
        "custom-title",
        "ai-title",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
        "progress",
        "turn_end",
        "pr-link",
        "last-prompt",
        "mode",
        "permission-mode",
        "agent-name",
        "agent-setting",
        "worktree-state",
        "frame-link",
        "result",
        "started",
    }
)
KNOWN_TYPES = MESSAGE_TYPES | OTHER_TYPES

SYNTHETIC_MODEL = "<synthetic>"  # assistant lines the CLI writes itself (API errors)
FILE_INPUTS = ("file_path", "path", "notebook_path")  # tool inputs naming a file or folder
SHELL_TOOLS = ("Bash",)
SUBAGENT_TOOLS = ("Task", "Agent")
AGENT_PREFIX = "agent-"
SUBAGENTS_FOLDER = "subagents"

CHECK_LINES = 5  # lines looked at to tell a Claude Code file
CHECK_FILES = 5  # files looked at to tell a Claude Code folder
HEAD_LINES = 200  # leading summary lines looked at in each file of a project
SESSION_ID_LINES = 20  # lines looked at to find the session an agent-<id>.jsonl belongs to

# User text the CLI writes, not the person: never a title.
NOT_A_PROMPT = (
    "<command-",
    "<local-command-",
    "<bash-",
    "<system-reminder>",
    "<user-prompt-submit-hook>",
    "Caveat:",
    "[Request interrupted",
)
COMMAND_TAGS = ("command-name", "command-args")  # what a slash command is kept as: its name and arguments
OUTPUT_TAGS_RE = re.compile(r"</?(?:local-command-stdout|local-command-stderr|bash-stdout|bash-stderr)>")
OUTPUT_PREFIXES = ("<local-command-stdout>", "<local-command-stderr>", "<bash-stdout>", "<bash-stderr>")
AGENT_ID_RE = re.compile(r"agentId:\s*([0-9A-Za-z_-]+)")


# --- check -------------------------------------------------------------------------------


def check(path: Path | str) -> str | None:
    """Why ``path`` is not a Claude Code source (a sentence), or None when it is one."""
    path = Path(path)
    try:
        if not path.exists():
            return f"{path} does not exist: expected {EXPECTED}."
        if path.is_file():
            return _check_file(path)
        if not path.is_dir():
            return f"{path} is neither a file nor a folder: expected {EXPECTED}."
        root = Root(path)
        files = root.files(path, ".jsonl")
        if not files:  # a projects folder: its project folders hold the sessions
            files = [file for project in root.folders(path) for file in root.files(project, ".jsonl")]
    except OSError as error:
        return f"{path} cannot be read ({error.strerror or error}): expected {EXPECTED}."
    if not files:
        hint = " (its projects folder may be the one meant)" if (path / "projects").is_dir() else ""
        return f"{path} holds no Claude Code session files (<project>/<session>.jsonl){hint}: expected {EXPECTED}."
    verdicts = [(file, _looks_like_claude_code(file)) for file in files[:CHECK_FILES]]
    if any(verdict is True for _, verdict in verdicts) or all(verdict is None for _, verdict in verdicts):
        return None
    example = next(file for file, verdict in verdicts if verdict is False)
    return f"{path} holds .jsonl files that are not Claude Code sessions (such as {example.name}): expected {EXPECTED}."


def _check_file(path: Path) -> str | None:
    if path.suffix != ".jsonl":
        return f"{path} is not a .jsonl file: expected {EXPECTED}."
    verdict = _looks_like_claude_code(path)
    if verdict is None:
        return f"{path} has no lines to read: expected {EXPECTED}."
    if verdict is False:
        return (
            f"{path} is not a Claude Code session (none of its first lines is a JSON object with "
            f"Claude Code's type, sessionId and message fields): expected {EXPECTED}."
        )
    return None


def _looks_like_claude_code(path: Path) -> bool | None:
    """Whether one of the first lines is a Claude Code line; None when there is no line to tell."""
    seen = 0
    try:
        with path.open("rb") as handle:
            for raw in head_lines(handle):
                if not raw.strip():
                    continue
                seen += 1
                try:
                    record = json_value(raw.decode("utf-8", errors="replace"))
                except NotJSON:
                    record = None
                if _is_claude_code_line(record):
                    return True
                if seen >= CHECK_LINES:
                    break
    except OSError:
        return None
    return False if seen else None


def _is_claude_code_line(record: object) -> bool:
    if not isinstance(record, dict) or not isinstance(record.get("type"), str):
        return False
    if "sessionId" in record or "message" in record:
        return True
    return record["type"] == "summary" and "leafUuid" in record


# --- read --------------------------------------------------------------------------------


def read(path: Path | str, problems: list[str] | None = None) -> Iterator[Session]:
    """Every session under ``path`` (see ``check``), sub-agents after their parent, in name order.

    What was skipped in a file that yields no session (it has no message), and the links
    that lead out of the source (never opened), go to ``problems``.
    """
    path = Path(path)
    root = Root(path, problems)
    try:
        if path.is_file():
            yield from _read_single_file(path, root)
        elif path.is_dir() and root.files(path, ".jsonl"):
            yield from _read_project(path, root)
        elif path.is_dir():
            for project in root.folders(path):
                yield from _read_project(project, root)
    except OSError:
        return


def _read_project(folder: Path, root: Root) -> Iterator[Session]:
    """One project's folder: each session, then its sub-agents; agent files with no session last."""
    files = root.files(folder, ".jsonl")
    sessions = [file for file in files if not file.name.startswith(AGENT_PREFIX)]
    agent_files = [file for file in files if file.name.startswith(AGENT_PREFIX)]
    summaries = _leading_summaries(sessions)
    owners = {file: _first_session_id(file) for file in agent_files}
    stems = {file.stem for file in sessions}
    left = list(agent_files)
    for file in sessions:
        parent = yield from _read_session_file(file, folder.name, summaries, root)
        mine = [agent for agent in left if _owned_by(owners[agent], parent, stems)]
        for agent in mine:
            left.remove(agent)
            yield from _maybe(_read_agent_file(agent, folder.name, parent.key, parent, root))
    for agent in left:
        owner = owners[agent]
        parent_key = f"{folder.name}/{owner}" if owner else None
        yield from _maybe(_read_agent_file(agent, folder.name, parent_key, None, root))


def _owned_by(owner: str | None, parent: _Builder, stems: set[str]) -> bool:
    """Whether an agent file naming session ``owner`` belongs to ``parent``: its own id, or
    one of its earlier ids (a resumed session) that has no file of its own."""
    return owner is not None and (owner == parent.file.stem or (owner in parent.session_ids and owner not in stems))


def _read_single_file(path: Path, root: Root) -> Iterator[Session]:
    """One .jsonl file: a session (with its sub-agents), or one sub-agent transcript."""
    if not path.name.startswith(AGENT_PREFIX):
        project = path.parent.name
        siblings = root.files(path.parent, ".jsonl")
        summaries = _leading_summaries([file for file in siblings if not file.name.startswith(AGENT_PREFIX)])
        parent = yield from _read_session_file(path, project, summaries, root)
        stems = {file.stem for file in siblings if not file.name.startswith(AGENT_PREFIX)}
        for agent in siblings:
            if agent.name.startswith(AGENT_PREFIX) and _owned_by(_first_session_id(agent), parent, stems):
                yield from _maybe(_read_agent_file(agent, project, parent.key, parent, root))
    elif path.parent.name == SUBAGENTS_FOLDER:
        session_folder = path.parent.parent
        project = session_folder.parent.name
        builder = _subagent_builder(path, f"{project}/{session_folder.name}", project, None, root)
        yield from _maybe(_session_of(builder, {}, root))
    else:
        project = path.parent.name
        owner = _first_session_id(path)
        yield from _maybe(_read_agent_file(path, project, f"{project}/{owner}" if owner else None, None, root))


def _read_session_file(
    path: Path, project: str, summaries: dict[str, str], root: Root
) -> Generator[Session, None, _Builder]:
    """A session file's session, its inline sidechains, then its subagents/ transcripts.

    Returns the session's builder (its key, ids and project), for the agent files beside it.
    """
    key = f"{project}/{path.stem}"
    main = _Builder(key, path, fallback_project=project)
    sidechains = _Sidechains(main)
    _read_lines_into(path, main, sidechains)
    session = _session_of(main, summaries, root)
    if session is not None and not sidechains.by_name:
        session.tail = main.tail()  # alone in its file: an append can be read on its own
    yield from _maybe(session)
    for builder in sidechains.builders():
        yield from _maybe(builder.session({}))
    subagents = path.parent / path.stem / SUBAGENTS_FOLDER
    if root.allows(path.parent / path.stem) and root.allows(subagents):
        for agent in root.files(subagents, ".jsonl"):
            if agent.name.startswith(AGENT_PREFIX):
                yield from _maybe(_session_of(_subagent_builder(agent, key, project, main, root), {}, root))
    return main


def read_from(
    path: Path | str, offset: int, key: str, project: str | None, models: list[str] | None = None
) -> Session | None:
    """A session file's lines from byte ``offset`` (its ``Tail.resume_at``) as session ``key``.

    None when they cannot simply follow what was read before: the file is shorter than
    ``offset``, or a sub-agent's sidechain lines appeared in it. (``models``: each line
    names its own, so those used before are not needed.)
    """
    path = Path(path)
    try:
        if path.stat().st_size < offset:
            return None
    except OSError:
        return None
    builder = _Builder(key, path, fallback_project=project)
    if _read_lines_into(path, builder, None, offset):
        return None
    session = builder.session({})
    if session is None:
        session = Session(key, KIND, "", project=project, files=[path], problems=builder.problems, titled=False)
    session.tail = builder.tail(offset)
    return session


def _read_agent_file(
    path: Path, project: str, parent_key: str | None, parent: _Builder | None, root: Root
) -> Session | None:
    """An ``agent-<id>.jsonl`` beside the sessions: one sub-agent transcript."""
    builder = _Builder(
        f"{project}/{path.stem}",
        path,
        parent=parent_key,
        fallback_project=parent.project if parent and parent.project else project,
        description=parent.agent_titles.get(path.stem[len(AGENT_PREFIX) :]) if parent else None,
    )
    _read_lines_into(path, builder, None)
    return _session_of(builder, {}, root)


def _subagent_builder(path: Path, parent_key: str, project: str, parent: _Builder | None, root: Root) -> _Builder:
    """A ``<session>/subagents/agent-<id>.jsonl`` transcript, read."""
    agent_id = path.stem[len(AGENT_PREFIX) :]
    meta = path.with_name(f"{path.stem}.meta.json")
    description = _meta_description(meta) if root.allows(meta) else None
    if description is None and parent is not None:
        description = parent.agent_titles.get(agent_id)
    builder = _Builder(
        f"{parent_key}/{path.stem}",
        path,
        parent=parent_key,
        fallback_project=parent.project if parent and parent.project else project,
        description=description,
    )
    _read_lines_into(path, builder, None)
    return builder


def _session_of(builder: _Builder, summaries: dict[str, str], root: Root) -> Session | None:
    """The session a file was read into; when there is none (no message), what its reading
    skipped is told in the source's problems, since no session holds it."""
    session = builder.session(summaries)
    if session is None:
        root.problems.extend(f"{builder.key}: {problem}" for problem in builder.problems)
    return session


def _maybe(session: Session | None) -> Iterator[Session]:
    if session is not None:
        yield session


# --- files and lines ---------------------------------------------------------------------


@dataclass
class _Tally:
    """What a file's reading skipped or repaired, told as the session's problems."""

    skipped: Counter[str] = field(default_factory=Counter)
    replaced: int = 0
    stopped: str | None = None
    line_at: int = 0  # the byte offset of the line being read

    def problems(self) -> list[str]:
        problems = []
        total = sum(self.skipped.values())
        if total:
            reasons = ", ".join(f"{count} {reason}" for reason, count in self.skipped.items())
            problems.append(f"{total} {'line' if total == 1 else 'lines'} skipped: {reasons}")
        if self.replaced:
            problems.append(
                f"{self.replaced} {'line has' if self.replaced == 1 else 'lines have'} bytes that are not UTF-8 (replaced)"
            )
        if self.stopped:
            problems.append(self.stopped)
        return problems


def _records(path: Path, tally: _Tally, start: int = 0) -> Iterator[dict[str, Any]]:
    """The JSON objects of a file's lines from byte ``start``, streamed; what is not one is
    counted in ``tally``, and ``tally.line_at`` is the offset of the line just yielded.

    A last line with no newline that does not parse is a line still being written: left
    for the next read, not a problem.
    """
    number = 0
    try:
        with path.open("rb") as handle:
            handle.seek(start)
            position = start
            pending: tuple[bytes | None, int] | None = None  # a line and its length, parsed once the next is read
            for line in lines(handle):
                if pending is not None:
                    number += 1
                    record = _parse(pending[0], tally, last=False)
                    if record is not None:
                        tally.line_at = position
                        yield record
                    position += pending[1]
                pending = line
            if pending is not None:
                number += 1
                raw = pending[0]
                record = _parse(raw, tally, last=raw is not None and not raw.endswith(b"\n"))
                if record is not None:
                    tally.line_at = position
                    yield record
    except OSError as error:
        tally.stopped = f"reading stopped after line {number}: {error.strerror or error}"


def _parse(raw: bytes | None, tally: _Tally, last: bool) -> dict[str, Any] | None:
    """A line's JSON object (None: not one, counted in ``tally``); ``raw`` is None for a line
    too long to be read, which is counted even as the last line."""
    if raw is None:
        tally.skipped[LONG_LINE] += 1
        return None
    if not raw.strip():
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        tally.replaced += 1
    try:
        record = json_value(text)
    except NotJSON as error:
        if not last or str(error) != NOT_JSON:  # a last line not yet whole is left for the next read
            tally.skipped[str(error)] += 1
        return None
    if not isinstance(record, dict):
        tally.skipped["not a JSON object"] += 1
        return None
    return record


def _read_lines_into(path: Path, main: _Builder, sidechains: _Sidechains | None, start: int = 0) -> bool:
    """Read one file's lines from byte ``start`` into ``main`` (and its inline sidechains
    into ``sidechains``); whether any line was a sidechain's."""
    tally = _Tally()
    sidechain = False
    for record in _records(path, tally, start):
        kind = record.get("type")
        if not isinstance(kind, str):
            tally.skipped["with no type"] += 1
            continue
        if kind not in KNOWN_TYPES:
            tally.skipped[f"unknown type {kind!r}"] += 1
            continue
        builder = main
        if record.get("isSidechain") is True:
            sidechain = True
            if sidechains is not None:
                builder = sidechains.builder_for(record)
        if not builder.take(record, kind):
            tally.skipped[f"malformed {kind!r}"] += 1
        builder.offsets.extend([tally.line_at] * (len(builder.messages) - len(builder.offsets)))
    main.problems.extend(tally.problems())
    return sidechain


def _leading_summaries(files: Iterable[Path]) -> dict[str, str]:
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


def _first_session_id(path: Path) -> str | None:
    """The ``sessionId`` of a sub-agent transcript: its parent session's id."""
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


def _meta_description(path: Path) -> str | None:
    """The ``description`` of an ``agent-<id>.meta.json`` (what the sub-agent was asked to do)."""
    if too_large(path):
        return None  # only a title: not worth telling
    try:
        meta = json_value(path.read_bytes().decode("utf-8", errors="replace"))
    except (OSError, NotJSON):
        return None
    description = meta.get("description") if isinstance(meta, dict) else None
    return description if isinstance(description, str) and description.strip() else None


# --- sessions ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Response:
    """An assistant response being read: its blocks can come over several lines.

    Its lists are made when first needed: a long session holds many of these at once.
    """

    timestamp: str | None
    model: str | None
    texts: list[str] | None = None
    thinking: list[str] | None = None
    tool_calls: list[ToolCall] | None = None
    tool_ids: set[str] | None = None

    def add_text(self, text: str) -> None:
        if not text.strip():
            return
        if self.texts is None:
            self.texts = [text]
        elif text not in self.texts:  # a block written again
            self.texts.append(text)

    def add_thinking(self, text: str) -> None:
        if not text.strip():
            return
        if self.thinking is None:
            self.thinking = [text]
        elif text not in self.thinking:
            self.thinking.append(text)

    def message(self) -> Message | None:
        if not (self.texts or self.thinking or self.tool_calls):
            return None
        return Message(
            role="assistant",
            text="\n\n".join(self.texts) if self.texts else "",
            timestamp=self.timestamp,
            model=self.model,
            tool_calls=self.tool_calls or [],
            thinking="\n\n".join(self.thinking) if self.thinking else "",
        )


class _Builder:
    """One session (or sub-agent transcript) as its lines are read."""

    def __init__(
        self,
        key: str,
        file: Path,
        parent: str | None = None,
        fallback_project: str | None = None,
        description: str | None = None,
    ) -> None:
        self.key = key
        self.file = file
        self.parent = parent
        self.fallback_project = fallback_project
        self.description = description  # a sub-agent's task, its title after the log's own
        self.messages: list[Message | _Response] = []  # in file order
        self.responses: dict[str, _Response] = {}  # message.id → its assistant response
        self.uuids: dict[str, int] = {}  # uuid → line position, to drop copies and place summaries
        self.project: str | None = None
        self.branch: str | None = None
        self.models: list[str] = []
        self.session_ids: list[str] = []
        self.custom_title: str | None = None
        self.ai_title: str | None = None
        self.summaries: list[tuple[str, str]] = []  # (leafUuid, summary), in file order
        self.first_prompt: str | None = None
        self.tasks: dict[str, str] = {}  # Task/Agent tool_use id → its description
        self.agent_titles: dict[str, str] = {}  # a sub-agent's id → the description of its task
        self.problems: list[str] = []
        self.offsets: list[int] = []  # the byte offset of the line that began each of messages

    def take(self, record: dict[str, Any], kind: str) -> bool:
        """Read one line; False when it is malformed for its type."""
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.uuids:
                return True  # a copy of a line already read (a resumed session)
            self.uuids[uuid] = len(self.uuids)
        self._envelope(record)
        if kind == "user":
            return self._user(record)
        if kind == "assistant":
            return self._assistant(record)
        if kind == "system":
            content = record.get("content")
            if isinstance(content, str) and content.strip():
                self.messages.append(Message("system", content, iso_utc(record.get("timestamp"))))
            return True
        if kind == "summary":
            leaf, summary = record.get("leafUuid"), record.get("summary")
            if isinstance(leaf, str) and isinstance(summary, str) and summary.strip():
                self.summaries.append((leaf, summary))
        elif kind == "custom-title":
            self.custom_title = _text_or(record.get("customTitle"), self.custom_title)
        elif kind == "ai-title":
            self.ai_title = _text_or(record.get("aiTitle"), self.ai_title)
        return True

    def _envelope(self, record: dict[str, Any]) -> None:
        cwd, branch, session_id = record.get("cwd"), record.get("gitBranch"), record.get("sessionId")
        if self.project is None and isinstance(cwd, str) and cwd:
            self.project = cwd
        if self.branch is None and isinstance(branch, str) and branch:
            self.branch = branch
        if isinstance(session_id, str) and session_id and session_id not in self.session_ids:
            self.session_ids.append(session_id)

    def _user(self, record: dict[str, Any]) -> bool:
        message = record.get("message")
        if not isinstance(message, dict):
            return False
        content = message.get("content")
        timestamp = iso_utc(record.get("timestamp"))
        if record.get("isCompactSummary"):
            text = _blocks_text(content)
            if text.strip():
                self.messages.append(Message("system", text, timestamp))
            return True
        if record.get("isMeta"):
            return True  # text the CLI adds to the prompt (caveats, skill bodies), not a message
        if isinstance(content, str):
            self._user_text(content, timestamp)
            return True
        if not isinstance(content, list):
            return False
        results = [block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"]
        if results:
            outputs = []
            for block in results:
                outputs.append(_blocks_text(block.get("content")))
                self._note_agent(block, record.get("toolUseResult"))
            outputs.extend(text for text in _texts(content) if text.strip())
            self.messages.append(Message("tool", "", timestamp, tool_output="\n\n".join(outputs)))
            return True
        texts = [text for text in _texts(content) if text.strip() and not text.lstrip().startswith("<system-reminder>")]
        if texts:
            self._user_text("\n\n".join(texts), timestamp)
        return True

    def _user_text(self, text: str, timestamp: str | None) -> None:
        stripped = text.lstrip()
        if stripped.startswith(OUTPUT_PREFIXES):
            self.messages.append(Message("tool", "", timestamp, tool_output=OUTPUT_TAGS_RE.sub("", text).strip()))
            return
        if "<command-name>" in text:  # a slash command: kept as typed
            parts = (_tag_text(text, tag) for tag in COMMAND_TAGS)
            text = " ".join(part for part in parts if part) or text
        elif self.first_prompt is None and stripped and not stripped.startswith(NOT_A_PROMPT):
            self.first_prompt = text
        if text.strip():
            self.messages.append(Message("user", text, timestamp))

    def _assistant(self, record: dict[str, Any]) -> bool:
        message = record.get("message")
        if not isinstance(message, dict):
            return False
        model = message.get("model")
        model = model if isinstance(model, str) and model and model != SYNTHETIC_MODEL else None
        if model and model not in self.models:
            self.models.append(model)
        response_id = message.get("id")
        draft = self.responses.get(response_id) if isinstance(response_id, str) else None
        if draft is None:
            draft = _Response(iso_utc(record.get("timestamp")), model)
            self.messages.append(draft)
            if isinstance(response_id, str):
                self.responses[response_id] = draft
        elif draft.model is None:
            draft.model = model
        content = message.get("content")
        if isinstance(content, str):
            draft.add_text(content)
            return True
        if not isinstance(content, list):
            return False
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                draft.add_text(block["text"])
            elif kind == "thinking" and isinstance(block.get("thinking"), str):
                draft.add_thinking(block["thinking"])
            elif kind == "tool_use":
                self._tool_use(draft, block)
        return True

    def _tool_use(self, draft: _Response, block: dict[str, Any]) -> None:
        call_id = block.get("id")
        if isinstance(call_id, str):
            if draft.tool_ids is None:
                draft.tool_ids = set()
            elif call_id in draft.tool_ids:
                return  # a block written again
            draft.tool_ids.add(call_id)
        name = block.get("name")
        name = name if isinstance(name, str) and name else "tool"
        given = block.get("input")
        inputs: dict[str, Any] = given if isinstance(given, dict) else {}
        call = ToolCall(name)
        for key in FILE_INPUTS:
            value = inputs.get(key)
            if isinstance(value, str) and value and value not in call.files:
                call.files.append(value)
        command = inputs.get("command")
        if name in SHELL_TOOLS and isinstance(command, str) and command.strip():
            call.commands.append(command)
        if name in SUBAGENT_TOOLS and isinstance(call_id, str) and isinstance(inputs.get("description"), str):
            self.tasks[call_id] = inputs["description"]
        if draft.tool_calls is None:
            draft.tool_calls = []
        draft.tool_calls.append(call)

    def _note_agent(self, block: dict[str, Any], result: object) -> None:
        """A Task/Agent result names its sub-agent: remember what the sub-agent was asked."""
        description = self.tasks.get(str(block.get("tool_use_id")))
        if description is None:
            return
        agent_id = result.get("agentId") if isinstance(result, dict) else None
        if not isinstance(agent_id, str):
            found = AGENT_ID_RE.search(_blocks_text(block.get("content")))
            agent_id = found.group(1) if found else None
        if agent_id:
            self.agent_titles[agent_id] = description

    def _summary(self, others: dict[str, str]) -> str | None:
        """The summary of this session's latest summarised message, if any."""
        best, best_position = None, -1
        for leaf, summary in [*others.items(), *self.summaries]:
            position = self.uuids.get(leaf)
            if position is not None and position >= best_position:
                best, best_position = summary, position
        return best

    def tail(self, start: int = 0, first_seq: int = 0) -> Tail | None:
        """Where to go on reading: at its last assistant response (later lines may continue
        it), else at its last message; ``start``/``first_seq``: where this reading began."""
        if not self.messages:
            return None
        last = max((i for i, item in enumerate(self.messages) if isinstance(item, _Response)), default=-1)
        if last < 0:
            last = len(self.messages) - 1
        before = sum(1 for item in self.messages[:last] if not isinstance(item, _Response) or item.message())
        return Tail(self.file, self.offsets[last] if last < len(self.offsets) else start, first_seq + before)

    def session(self, summaries: dict[str, str]) -> Session | None:
        """The session read, or None when it has no message (an empty or interrupted session)."""
        messages = [
            message
            for item in self.messages
            if (message := item.message() if isinstance(item, _Response) else item) is not None
        ]
        if not messages:
            return None
        stamps = [message.timestamp for message in messages if message.timestamp]
        fallback = next((message.text for message in messages if message.text.strip()), "")
        title = (
            self.custom_title
            or self.ai_title
            or self._summary(summaries)
            or self.description
            or self.first_prompt
            or fallback
        )
        return Session(
            key=self.key,
            agent=KIND,
            title=short_title(title),
            messages=messages,
            project=self.project or self.fallback_project,
            models=self.models,
            branch=self.branch,
            started=min(stamps) if stamps else None,
            last=max(stamps) if stamps else None,
            files=[self.file],
            problems=self.problems,
            parent=self.parent,
            titled=bool(self.custom_title or self.ai_title or self._summary(summaries) or self.description),
        )


class _Sidechains:
    """The sidechain lines inside a session file, one sub-agent transcript per agent."""

    def __init__(self, main: _Builder) -> None:
        self.main = main
        self.by_name: dict[str, _Builder] = {}
        self.chain_of: dict[str, str] = {}  # uuid → the transcript it is in

    def builder_for(self, record: dict[str, Any]) -> _Builder:
        agent_id, uuid, parent_uuid = record.get("agentId"), record.get("uuid"), record.get("parentUuid")
        if isinstance(agent_id, str) and agent_id:
            name = f"sidechain-{agent_id}"
        elif isinstance(parent_uuid, str) and parent_uuid in self.chain_of:
            name = self.chain_of[parent_uuid]
        else:  # an older transcript with no agentId: a new chain starts at its root
            name = f"sidechain-{len(self.by_name) + 1}"
        if isinstance(uuid, str):
            self.chain_of.setdefault(uuid, name)
        builder = self.by_name.get(name)
        if builder is None:
            builder = _Builder(f"{self.main.key}/{name}", self.main.file, parent=self.main.key)
            self.by_name[name] = builder
        return builder

    def builders(self) -> list[_Builder]:
        """The transcripts in order of their first line, told what their parent knows of them."""
        for name, builder in self.by_name.items():
            builder.fallback_project = self.main.project or self.main.fallback_project
            agent_id = name[len("sidechain-") :]
            builder.description = self.main.agent_titles.get(agent_id)
        return list(self.by_name.values())


# --- values ------------------------------------------------------------------------------


def _texts(blocks: list[Any]) -> list[str]:
    return [
        block["text"]
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]


def _blocks_text(content: object) -> str:
    """A string, or the text of a list of blocks (tool results, compact summaries)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") == "image":
                parts.append("[image]")
    return "\n".join(parts)


def _tag_text(text: str, tag: str) -> str:
    """The text of the first ``<tag>…</tag>`` in ``text``, stripped ("" where there is none)."""
    span = between(text, f"<{tag}>", f"</{tag}>")
    return text[span[0] : span[1]].strip() if span else ""


def _text_or(value: object, default: str | None) -> str | None:
    return value if isinstance(value, str) and value.strip() else default
