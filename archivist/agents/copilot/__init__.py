"""GitHub Copilot's chat sessions, read in place: VS Code's Copilot Chat and the Copilot CLI.

VS Code keeps a window's chat sessions in ``<User>/workspaceStorage/<id>/chatSessions/``
(``<User>/globalStorage/emptyWindowChatSessions/`` for a window without a folder), as its
own chat code writes them (microsoft/vscode ``contrib/chat/common/model/chatModel.ts``,
``chatSessionStore.ts``, ``objectMutationLog.ts``):

- ``<session id>.json``: the session whole (``version`` 3, or older ones);
- from VS Code 1.109, ``<session id>.jsonl``: its first line the session (``kind`` 0), each
  next line a change: set a value at a path (1), truncate an array and append to it (2),
  delete a value (3). Where both files are there, the log is read (``log``);
- before early 2025, all of a workspace's sessions as one JSON array under the key
  ``interactive.sessions`` of its ``state.vscdb`` (an SQLite database; an empty window's in
  ``globalStorage/state.vscdb``), read without ever writing it (``state``). VS Code moved
  them to files and left the key: a session that a file holds too is read from the file.

A session (``requests``): ``customTitle`` (``computedTitle`` in version 2),
``creationDate`` and ``lastMessageDate`` (ms; VS Code once filled a missing one with a date a year
back, so it is taken only where it is not before the session's other times) and ``requests``; each request a user's
``message.text`` (a plain string in the oldest) at its ``timestamp`` (ms; missing in the oldest),
its ``modelId``, its ``variableData.variables`` and the ``response`` parts: markdown (a ``value``
without a ``kind``, or a string), ``inlineReference`` (the name VS Code shows, linked to its file in Markdown), ``thinking``
(thinking), ``toolInvocationSerialized`` (a call: its ``toolId``, a terminal command's
``commandLine``, the files of its ``resultDetails`` or its input's ``filePath``; a terminal's output
is a tool message) and ``textEditGroup`` (a call that edited its ``uri``: each text edit that put
whole lines in before a line is an edit, a patch; any other, whose replaced text the log does not
keep, stays in the call's input with its ``range``). The workspace is the ``folder``
of ``workspace.json`` beside ``chatSessions`` (or ``state.vscdb``).

- Attachments: a variable of kind ``image`` (its bytes as JSON writes a ``Uint8Array``, or VS
  Code's ``{"$base64": …}``: measured, never kept), ``file``, or a notebook output that is an
  image (``attachments/chatVariableEntries.ts``) is an attachment of the user's message, and its
  placeholder (``[image: shot.png]``) follows the text unless the text names it already (a
  variable typed into it has a ``range``). The others (the editor's implicit context, symbols,
  tools, instructions) are context, not attachments: skipped.
- Usage: VS Code keeps no token counts of its own in the file (its response's ``usage`` is not
  serialized); Copilot Chat writes ``promptTokens`` and ``outputTokens`` in a request's
  ``result.metadata`` (vscode-copilot-chat ``src/extension/prompt/common/conversation.ts``,
  ``IResultMetadata``; since January 2026, for Anthropic models with context editing): the turn's
  last model call.
  They are the reply's usage, the prompt's tokens as ``input`` (Copilot counts the cached ones in
  them and keeps no split). A summarization call's ``summary.usage`` is skipped.

The Copilot CLI keeps each session in ``~/.copilot/session-state/<id>/events.jsonl``
(``cli``).

The source is VS Code's ``User`` folder, its ``workspaceStorage``, one workspace's folder, one
``chatSessions`` folder, ``~/.copilot`` or its ``session-state``, one session file or one
``state.vscdb``. Other parts (references, progress messages, confirmations) are skipped. A file
that is not JSON, a log line of no known change, a line over 64 MB are told in the session's
problems; a file over 1 GB read whole is not read; a file whose reading stops (an error of the disk)
is Unread and its session not read (one read in part never replaces the one the archive holds). A
``state.vscdb`` another program holds locked is Unavailable (read again on the next run), a damaged
one Unread. Each key is one session's: a session id two files hold (VS Code keeps some in both
``emptyWindowChatSessions`` and ``transferredChatSessions``) is keyed by the second one's path too
(``abc@globalStorage/transferredChatSessions/abc.json``), one that ``interactive.sessions`` holds twice
by its place in the list (``#1``). Nothing is ever written.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from archivist.agents import Root, Session, Unread, file_key, is_dir, is_file, json_file, relative_path, too_large
from archivist.agents.copilot.cli import cli_session
from archivist.agents.copilot.log import replay
from archivist.agents.copilot.requests import KIND as KIND
from archivist.agents.copilot.requests import chat_session, workspace_folder
from archivist.agents.copilot.state import STATE, has_sessions, holds_sessions, state_databases, state_sessions

EXPECTED = (
    "VS Code's User folder (its workspaceStorage/*/chatSessions or state.vscdb), a chatSessions folder, "
    "a state.vscdb, the Copilot CLI's ~/.copilot/session-state, or one session file"
)
SESSION_FOLDERS = ("chatSessions", "emptyWindowChatSessions", "transferredChatSessions")
CLI_EVENTS = "events.jsonl"


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of Copilot's chat sessions (a sentence), or None."""
    path = Path(path).expanduser()
    if not path.exists():
        return f"{path} does not exist: expected {EXPECTED}."
    if path.is_file():
        if path.name == CLI_EVENTS or (path.parent.name in SESSION_FOLDERS and path.suffix in (".json", ".jsonl")):
            return None
        if path.name == STATE:
            reason = holds_sessions(path)
            return f"{reason}: expected {EXPECTED}." if reason else None
        return f"{path} is not a Copilot chat session file: expected {EXPECTED}."
    root = Root(path)
    if not session_files(root) and not any(has_sessions(database) for database in state_databases(root)):
        return f"{path} holds no Copilot chat session: expected {EXPECTED}."
    return None


def session_files(root: Root) -> list[Path]:
    """The session files under a source, each once (a session's log rather than its older whole file)."""
    path = root.path
    if path.is_file():
        return [path]
    folders = [path] if path.name in SESSION_FOLDERS else [path / "chatSessions"]
    for holder in (path, path / "workspaceStorage"):
        if is_dir(holder) and root.allows(holder):
            folders += [folder / "chatSessions" for folder in root.folders(holder) if is_dir(folder / "chatSessions")]
    shared = path / "globalStorage"
    if is_dir(shared) and root.allows(shared):
        folders += [shared / name for name in SESSION_FOLDERS if is_dir(shared / name)]
    found: list[Path] = []
    for folder in dict.fromkeys(folders):
        if not is_dir(folder) or not root.allows(folder):
            continue
        files = root.files(folder)
        logs = {file.stem for file in files if file.suffix == ".jsonl"}
        found += [
            file for file in files if file.suffix == ".jsonl" or (file.suffix == ".json" and file.stem not in logs)
        ]
    for holder in (path, path / "session-state"):
        if is_dir(holder) and root.allows(holder):
            found += [folder / CLI_EVENTS for folder in root.folders(holder) if is_file(folder / CLI_EVENTS)]
    return found


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Every session under ``path``, each key once: VS Code's files by workspace, then the older
    sessions its state databases keep (but those a file holds), then the CLI's.

    Raises Unavailable while another program holds a ``state.vscdb`` locked.
    """
    problems = problems if problems is not None else []
    root = Root(Path(path).expanduser(), problems)
    keys: set[str] = set()
    if root.path.is_file() and root.path.name == STATE:
        yield from _once(state_sessions(root.path, root, set()), keys, root)
        return
    yield from _once(_sessions(root), keys, root)


def _sessions(root: Root) -> Iterator[Session]:
    files = [file for file in session_files(root) if root.allows(file)]
    seen: set[str] = set()
    for file in files:
        if file.name == CLI_EVENTS:
            continue
        reason = too_large(file) if file.suffix == ".json" else None
        if reason:
            root.left_out(f"{file.name}: {reason}")
            continue
        session = _editor_session(file, root)
        if session is not None:
            seen.add(file.stem)
            yield session
    if root.path.is_dir():
        for database in state_databases(root):
            yield from state_sessions(database, root, seen)
    for file in files:
        if file.name == CLI_EVENTS and (session := cli_session(file, root.problems)) is not None:
            yield session


def _once(sessions: Iterable[Session], keys: set[str], root: Root) -> Iterator[Session]:
    """Each session with a key of its own: one whose key another already has (a session VS Code
    keeps in two folders, as ``emptyWindowChatSessions`` and ``transferredChatSessions``) is keyed
    by its id and its file's path in the source."""
    for session in sessions:
        if session.key in keys and session.files:
            session.key = file_key(session.key, relative_path(Path(session.files[0]), root.path), keys)
        if session.key in keys:
            root.problems.append(f"{session.key}: a second session of this key: skipped")
            continue
        keys.add(session.key)
        yield session


def _editor_session(file: Path, root: Root) -> Session | None:
    problems: list[str] = []
    data = replay(file, problems) if file.suffix == ".jsonl" else json_file(file, root)
    if data is None and file.suffix == ".json":
        return None  # (json_file told why)
    unread = [problem for problem in problems if isinstance(problem, Unread)]
    if unread:  # a session read in part never replaces the one the archive holds
        root.problems.extend(unread)
        return None
    if not isinstance(data, dict) or not isinstance(data.get("requests"), list):
        root.problems.append(f"{file.name}: not a chat session ({'; '.join(problems) or 'no requests'})")
        return None
    key = f"{file.parent.parent.name}/{file.stem}" if file.parent.name == "chatSessions" else file.stem
    return chat_session(data, key, workspace_folder(file.parent.parent, root), [file], problems)
