"""Claude Code sessions, read where Claude Code writes them (``~/.claude/projects``).

A source is the projects folder (one folder per project), one project's folder, or one
session's ``.jsonl`` file. Each ``<session-uuid>.jsonl`` is one session, keyed
``<project folder>/<uuid>`` whatever form the source takes. Its sub-agent transcripts are
sessions of their own whose ``parent`` is that key, in all three layouts Claude Code has
used: sidechain lines inside the session file (``<parent key>/sidechain-<agentId>``),
``agent-<id>.jsonl`` beside it (``<project folder>/agent-<id>``), and
``<uuid>/subagents/agent-<id>.jsonl`` (``<parent key>/agent-<id>``; one another sub-agent
started has that agent's key as its ``parent``), and the project of its parent, wherever it
ran (a sub-agent sent into a sub-folder is its parent's work). A sub-agent is titled by the
``description`` of the ``Task``/``Agent`` call that started it: its ``agent-<id>.meta.json``
says it and names the call (``toolUseId``), else the parent's call is found by the
``agentId`` its result or its ``progress`` lines name (``subagents``); that call
names the sub-agent's key (``ToolCall.agent``), and so does a sub-agent's call that started
another (``parentAgentId``).

Each line is one JSON object with a ``type``. ``user``, ``assistant`` and ``system`` lines
are messages: an assistant response written over several lines sharing ``message.id`` is
one message, whose token usage is its last line's; a message line already read (the same
``uuid`` again, in the file or in the session a resumed file continues; a sub-agent's
replay of its parent's responses) is a copy and is dropped (``session``). A
compaction's summary is a system message saying what it is; images and documents are
attachments, and a tool call keeps its input and the changes an ``Edit``, ``MultiEdit``,
``Write`` or ``NotebookEdit`` insert made, their texts once (``content``); ``summary``, ``custom-title`` and ``ai-title`` lines
give the title, else the first request (``titles``). The other known types
are bookkeeping. Unknown types and lines that are not JSON are skipped and counted in the
session's problems; the last line of a file still being written (no newline yet) is left
for the next read. Files are read line by line (a line over 64 MB is skipped and counted),
bytes that are not UTF-8 are replaced, and nothing is ever written.

Claude Code's own source is not public: this shape is the files' own, as its published
change log (anthropics/claude-code: ``CHANGELOG.md``) and public readers of these files
describe them: ccusage (ryoppippi/ccusage: ``rust/crates/ccusage/src/adapter/claude/daily.rs``
and ``rust/crates/ccusage/src/types.rs``: ``message.usage``, counted once per ``message.id``
and ``requestId``; its ``adapter/claude/README.md``: sidechain replays of a parent's
responses) and agentsview (wesm/agentsview: ``internal/parser/claude.go``: command
envelopes, compaction summaries, ``agent_progress`` lines naming a sub-agent's call).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from archivist.agents import (
    SESSION_PART,
    WHOLE_SESSION,
    Message,
    NotJSON,
    Root,
    Session,
    Unread,
    head_lines,
    json_value,
)
from archivist.agents.claude_code.lines import Lines, Prefix, read_lines_into, read_prefix
from archivist.agents.claude_code.session import KIND as KIND
from archivist.agents.claude_code.session import Builder, Seen, Sidechains
from archivist.agents.claude_code.subagents import (
    AGENT_PREFIX,
    SUBAGENTS_FOLDER,
    agent_id,
    agent_meta,
    first_session_id,
    internal_title,
    leading_summaries,
    reading_order,
)
from archivist.agents.last_moment import newest_first

EXPECTED = (
    "a Claude Code projects folder (~/.claude/projects), one project's folder in it, or one session's .jsonl file"
)

WHOLE_BYTES = WHOLE_SESSION  # a session file larger than this is read and stored in parts, never held whole
PART_BYTES = SESSION_PART  # of lines, each part
CHECK_LINES = 5  # lines looked at to tell a Claude Code file
CHECK_FILES = 5  # files looked at to tell a Claude Code folder


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
    """Every session under ``path`` (see ``check``), sub-agents after their parent, in name order
    (a resumed session's file after the session it continues).

    What was skipped in a file that yields no session (it has no message), the links that
    lead out of the source (never opened) and a reading stopped by the file system (as
    ``Unread``) go to ``problems``.
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
    except OSError as error:  # what was not yielded is told, so that what the archive holds of it stays
        root.problems.append(Unread(f"{path}: reading stopped ({error.strerror or error})"))


def newest(path: Path | str, count: int, problems: list[str] | None = None) -> Iterator[Session]:
    """The ``count`` newest sessions under ``path`` (by the time of their last lines, else their file's), newest
    first, each read alone with its sub-agents (``archivist.agents``: ``newest``): a title that
    another file's summary gives is left for the whole read."""
    path = Path(path)
    root = Root(path, problems)
    try:
        if path.is_dir() and root.files(path, ".jsonl"):
            folders = [path]
        elif path.is_dir():
            folders = root.folders(path)
        else:
            return
        files = [file for folder in folders for file in root.files(folder, ".jsonl")]
        # (one read in parts is read with the rest: it would hold the newest back)
        whole = [file for file in files if not file.name.startswith(AGENT_PREFIX) and _size(file) <= WHOLE_BYTES]
        for file in newest_first(whole)[:count]:
            yield from _read_session_file(file, file.parent.name, {}, root, Seen(), lambda parent: [])
    except OSError as error:
        root.problems.append(Unread(f"{path}: reading stopped ({error.strerror or error})"))


def _read_project(folder: Path, root: Root) -> Iterator[Session]:
    """One project's folder: each session, then its sub-agents; agent files with no session last.

    A message is kept once in a session and its sub-agents, and in a session and the files
    that continue it (a resumed session's): by the one read first.
    """
    files = root.files(folder, ".jsonl")
    sessions = reading_order([file for file in files if not file.name.startswith(AGENT_PREFIX)])
    agent_files = [file for file in files if file.name.startswith(AGENT_PREFIX)]
    summaries = leading_summaries(file for file, _ in sessions)
    owners = {file: first_session_id(file) for file in agent_files}
    stems = {file.stem for file, _ in sessions}
    continued = {earlier for _, earlier in sessions if earlier is not None}
    seens: dict[Path, Seen] = {}  # what a session and the files continuing it hold: each message kept once
    left = list(agent_files)

    def mine(parent: Builder) -> list[Path]:
        """The agent files beside the sessions that belong to ``parent``, taken from those left."""
        found = [agent for agent in left if _owned_by(owners[agent], parent, stems)]
        for agent in found:
            left.remove(agent)
        return found

    for file, earlier in sessions:
        seen = seens.get(earlier, Seen()) if earlier is not None else Seen()
        if file in continued:
            seens[file] = seen
        yield from _read_session_file(file, folder.name, summaries, root, seen, mine)
    for agent in left:
        owner = owners[agent]
        parent_key = f"{folder.name}/{owner}" if owner else None
        yield from _maybe(_read_agent_file(agent, folder.name, parent_key, None, root, Seen()))


def _owned_by(owner: str | None, parent: Builder, stems: set[str]) -> bool:
    """Whether an agent file naming session ``owner`` belongs to ``parent``: its own id, or
    one of its earlier ids (a resumed session) that has no file of its own."""
    return owner is not None and (owner == parent.file.stem or (owner in parent.session_ids and owner not in stems))


def _read_single_file(path: Path, root: Root) -> Iterator[Session]:
    """One .jsonl file: a session (with its sub-agents), or one sub-agent transcript."""
    seen = Seen()
    if not path.name.startswith(AGENT_PREFIX):
        project = path.parent.name
        siblings = root.files(path.parent, ".jsonl")
        summaries = leading_summaries([file for file in siblings if not file.name.startswith(AGENT_PREFIX)])
        stems = {file.stem for file in siblings if not file.name.startswith(AGENT_PREFIX)}

        def mine(parent: Builder) -> list[Path]:
            return [
                agent
                for agent in siblings
                if agent.name.startswith(AGENT_PREFIX) and _owned_by(first_session_id(agent), parent, stems)
            ]

        yield from _read_session_file(path, project, summaries, root, seen, mine)
    elif path.parent.name == SUBAGENTS_FOLDER:
        session_folder = path.parent.parent
        project = session_folder.parent.name
        builder = _subagent_builder(path, f"{project}/{session_folder.name}", project, None, root, seen)
        yield from _maybe(_session_of(builder, {}, root))
    else:
        project = path.parent.name
        owner = first_session_id(path)
        parent_key = f"{project}/{owner}" if owner else None
        yield from _maybe(_read_agent_file(path, project, parent_key, None, root, seen))


def _read_session_file(
    path: Path,
    project: str,
    summaries: dict[str, str],
    root: Root,
    seen: Seen,
    beside: Callable[[Builder], list[Path]],
) -> Iterator[Session]:
    """A session file's session, its inline sidechains, then its subagents/ transcripts and the
    agent files ``beside`` finds for it.

    The sub-agents are read before the session is given, so that each Task/Agent call names
    the session it started (``ToolCall.agent``).
    """
    key = f"{project}/{path.stem}"
    main = Builder(key, path, fallback_project=project, seen=seen)
    sidechains = Sidechains(main)
    subagents = path.parent / path.stem / SUBAGENTS_FOLDER
    transcripts: list[Path] = []
    if root.allows(path.parent / path.stem) and root.allows(subagents):
        transcripts = [agent for agent in root.files(subagents, ".jsonl") if agent.name.startswith(AGENT_PREFIX)]
    session: Session | None = None
    if _size(path) > WHOLE_BYTES:  # read in parts, each stored before the next is read
        earlier = Seen()  # (what was seen before it, for a reading again)
        earlier.uuids, earlier.responses = set(seen.uuids), dict(seen.responses)

        def again() -> Session | None:
            builder = Builder(key, path, fallback_project=project, seen=Seen())
            builder.seen.uuids, builder.seen.responses = set(earlier.uuids), dict(earlier.responses)
            return _in_parts(builder, Sidechains(builder), summaries, root, transcripts)

        session = _in_parts(main, sidechains, summaries, root, transcripts)
        if session is not None and session.more is not None:
            session.again = again
            yield session  # (its parts are used up before the reading goes on)
            session = None
    else:
        read_lines_into(path, main, sidechains)
        session = _session_of(main, summaries, root)
        if session is not None and not sidechains.by_name:
            session.tail = main.tail()  # alone in its file: an append can be read on its own
    builders = [_subagent_builder(agent, key, project, main, root, seen) for agent in transcripts]
    _link_nested(builders, root)
    agents = [_session_of(builder, {}, root) for builder in builders]
    agents += [_read_agent_file(agent, project, main.key, main, root, seen) for agent in beside(main)]
    inline = sidechains.builders()
    yield from _maybe(session)
    for builder in inline:
        yield from _maybe(builder.session({}))
    for found in agents:
        yield from _maybe(found)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _in_parts(
    main: Builder, sidechains: Sidechains, summaries: dict[str, str], root: Root, transcripts: list[Path]
) -> Session | None:
    """A session file too large to be held whole (``WHOLE_BYTES``), given as a session whose
    first part is its messages and whose ``more`` reads the rest, a part of ``PART_BYTES`` at a
    time.

    Its Task/Agent calls name the sub-agent transcripts known before it is read (those of its
    ``subagents`` folder, and the agent files beside it that name it); a sidechain of the file
    itself names its call only where the call was not yet taken out.
    """
    project = main.file.parent.name
    for agent in transcripts:
        meta = agent_meta(agent, root)
        agent_key = f"{main.key}/{agent.stem}"
        main.agent_keys[agent_id(agent)] = agent_key
        if meta.tool_use_id and not meta.parent_agent_id:
            main.call_keys[meta.tool_use_id] = agent_key
    for agent in root.files(main.file.parent, ".jsonl"):
        if agent.name.startswith(AGENT_PREFIX) and first_session_id(agent) == main.file.stem:
            main.agent_keys.setdefault(agent_id(agent), f"{project}/{agent.stem}")
    lines = iter(Lines(main.file, main, sidechains))
    parts = _parts(lines, main)
    first = next(parts, None)
    if first is None:  # (nothing to take out before its end: held whole after all)
        whole = _session_of(main, summaries, root)
        if whole is not None and not sidechains.by_name:
            whole.tail = main.tail()
        return whole
    session = Session(main.key, KIND, "", first, project=main.project or project, files=[main.file])
    session.models, session.problems = main.models, main.problems

    def rest() -> Iterator[list[Message]]:
        yield from parts
        last = main.session(summaries)
        assert last is not None  # (messages were taken out)
        session.title, session.titled, session.project = last.title, last.titled, last.project
        session.branch, session.started, session.last = last.branch, last.started, last.last
        session.models, session.problems = last.models, last.problems
        session.tail = main.tail() if not sidechains.by_name else None
        yield last.messages

    session.more = rest()
    return session


def _parts(lines: Iterator[int], main: Builder) -> Iterator[list[Message]]:
    """The messages of a file read, taken out of ``main`` each ``PART_BYTES`` of lines."""
    mark = 0
    for at in lines:
        if at - mark >= PART_BYTES:
            mark = at
            part = main.drain()
            if part:
                yield part


def read_from(
    path: Path | str, offset: int, key: str, project: str | None, models: list[str] | None = None
) -> Session | None:
    """A session file's lines from byte ``offset`` (its ``Tail.resume_at``) as session ``key``,
    titled as a whole reading would title it (``titled`` only where its own title or first
    request was found: a title taken from the text read on alone is not the session's).

    None when they cannot simply follow what was read before: the file is shorter than
    ``offset``, a sub-agent's sidechain lines appeared in it, it continues another session's
    file (whose messages its copies of them give way to), a line read on continues a
    response begun before ``offset``, or a Task/Agent call read on names a sub-agent (which
    only a whole reading links it to). (``models``: each line names its own, so those used
    before are not needed.)
    """
    path = Path(path)
    try:
        if path.stat().st_size < offset:
            return None
    except OSError:
        return None
    builder = Builder(key, path, fallback_project=project)
    prefix = read_prefix(path, offset, builder) if offset > 0 else Prefix()
    if prefix is None or any(
        other != path.stem and (path.parent / f"{other}.jsonl").is_file() for other in prefix.session_ids
    ):
        return None
    if read_lines_into(path, builder, None, offset):
        return None
    if builder.task_calls or not prefix.ids.isdisjoint(builder.responses):
        return None
    siblings = [] if builder.titles.custom or builder.titles.ai else _session_files(path.parent)
    session = builder.session(leading_summaries(siblings))
    if session is None:
        session = Session(key, KIND, "", project=project, files=[path], problems=builder.problems, titled=False)
    else:  # its lines before ``offset`` were looked at again for the title
        session.titled = session.titled or builder.titles.first_request is not None
    session.tail = builder.tail(offset)
    return session


def _session_files(folder: Path) -> list[Path]:
    """The session files of a project's folder (not its agent files)."""
    root = Root(folder)
    return [file for file in root.files(folder, ".jsonl") if not file.name.startswith(AGENT_PREFIX)]


def _read_agent_file(
    path: Path, project: str, parent_key: str | None, parent: Builder | None, root: Root, seen: Seen
) -> Session | None:
    """An ``agent-<id>.jsonl`` beside the sessions: one sub-agent transcript."""
    builder = Builder(
        f"{project}/{path.stem}",
        path,
        parent=parent_key,
        fallback_project=parent.project if parent and parent.project else project,
        description=(parent.agent_titles.get(agent_id(path)) if parent else None) or internal_title(path),
        seen=seen,
    )
    builder.parent_project = parent.parent_project or parent.project if parent is not None else None
    read_lines_into(path, builder, None)
    if parent is not None:
        parent.link_agent(builder.key, agent_id(path), None)
    return _session_of(builder, {}, root)


def _subagent_builder(
    path: Path, session_key: str, project: str, parent: Builder | None, root: Root, seen: Seen
) -> Builder:
    """A ``<session>/subagents/agent-<id>.jsonl`` transcript, read: titled by the Task/Agent
    call that started it, whose parent is the session (or, nested, the sub-agent) that made it."""
    meta = agent_meta(path, root)
    description = meta.description
    if description is None and parent is not None:
        called = parent.tasks.get(meta.tool_use_id) if meta.tool_use_id else None
        description = called or parent.agent_titles.get(agent_id(path))
    parent_key = f"{session_key}/{AGENT_PREFIX}{meta.parent_agent_id}" if meta.parent_agent_id else session_key
    builder = Builder(
        f"{session_key}/{path.stem}",
        path,
        parent=parent_key,
        fallback_project=parent.project if parent and parent.project else project,
        description=description or internal_title(path),
        seen=seen,
    )
    builder.parent_project = parent.parent_project or parent.project if parent is not None else None
    read_lines_into(path, builder, None)
    if parent is not None and not meta.parent_agent_id:  # (a nested agent's call is its parent agent's)
        parent.link_agent(builder.key, agent_id(path), meta.tool_use_id)
    return builder


def _link_nested(builders: list[Builder], root: Root) -> None:
    """Each agent another sub-agent started (its metadata's ``parentAgentId``) on the Task/Agent
    call of that agent's transcript that started it."""
    by_id = {agent_id(builder.file): builder for builder in builders}
    for builder in builders:
        meta = agent_meta(builder.file, root)
        started_by = by_id.get(meta.parent_agent_id) if meta.parent_agent_id else None
        if started_by is not None:
            started_by.link_agent(builder.key, agent_id(builder.file), meta.tool_use_id)


def _session_of(builder: Builder, summaries: dict[str, str], root: Root) -> Session | None:
    """The session a file was read into; when there is none (no message), what its reading
    skipped is told in the source's problems, since no session holds it."""
    session = builder.session(summaries)
    if session is None:
        root.problems.extend(f"{builder.key}: {problem}" for problem in builder.problems)
    return session


def _maybe(session: Session | None) -> Iterator[Session]:
    if session is not None:
        yield session
