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

from collections.abc import Generator, Iterable, Iterator
from pathlib import Path

from archivist.agents import NotJSON, Root, Session, head_lines, json_value, too_large
from archivist.agents.claude_code_lines import read_lines_into
from archivist.agents.claude_code_session import AGENT_PREFIX, SUBAGENTS_FOLDER, Builder, Sidechains
from archivist.agents.claude_code_session import KIND as KIND

EXPECTED = (
    "a Claude Code projects folder (~/.claude/projects), one project's folder in it, or one session's .jsonl file"
)

CHECK_LINES = 5  # lines looked at to tell a Claude Code file
CHECK_FILES = 5  # files looked at to tell a Claude Code folder
HEAD_LINES = 200  # leading summary lines looked at in each file of a project
SESSION_ID_LINES = 20  # lines looked at to find the session an agent-<id>.jsonl belongs to


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


def _owned_by(owner: str | None, parent: Builder, stems: set[str]) -> bool:
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
) -> Generator[Session, None, Builder]:
    """A session file's session, its inline sidechains, then its subagents/ transcripts.

    Returns the session's builder (its key, ids and project), for the agent files beside it.
    """
    key = f"{project}/{path.stem}"
    main = Builder(key, path, fallback_project=project)
    sidechains = Sidechains(main)
    read_lines_into(path, main, sidechains)
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
    builder = Builder(key, path, fallback_project=project)
    if read_lines_into(path, builder, None, offset):
        return None
    session = builder.session({})
    if session is None:
        session = Session(key, KIND, "", project=project, files=[path], problems=builder.problems, titled=False)
    session.tail = builder.tail(offset)
    return session


def _read_agent_file(
    path: Path, project: str, parent_key: str | None, parent: Builder | None, root: Root
) -> Session | None:
    """An ``agent-<id>.jsonl`` beside the sessions: one sub-agent transcript."""
    builder = Builder(
        f"{project}/{path.stem}",
        path,
        parent=parent_key,
        fallback_project=parent.project if parent and parent.project else project,
        description=parent.agent_titles.get(path.stem[len(AGENT_PREFIX) :]) if parent else None,
    )
    read_lines_into(path, builder, None)
    return _session_of(builder, {}, root)


def _subagent_builder(path: Path, parent_key: str, project: str, parent: Builder | None, root: Root) -> Builder:
    """A ``<session>/subagents/agent-<id>.jsonl`` transcript, read."""
    agent_id = path.stem[len(AGENT_PREFIX) :]
    meta = path.with_name(f"{path.stem}.meta.json")
    description = _meta_description(meta) if root.allows(meta) else None
    if description is None and parent is not None:
        description = parent.agent_titles.get(agent_id)
    builder = Builder(
        f"{parent_key}/{path.stem}",
        path,
        parent=parent_key,
        fallback_project=parent.project if parent and parent.project else project,
        description=description,
    )
    read_lines_into(path, builder, None)
    return builder


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


# --- what the first lines of files tell --------------------------------------------------


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
