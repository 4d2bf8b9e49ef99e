"""Cursor's chats and agent conversations, read in place from the editor's state databases.

Cursor is a fork of VS Code, and keeps its state as VS Code does
(microsoft/vscode ``src/vs/base/parts/storage/node/storage.ts``): SQLite files named
``state.vscdb``, whose ``ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`` holds
JSON values, in WAL mode while the editor has them open. They are opened read-only through
``archivist.agents.databases``. Cursor's own code is not public: the shape below is the one
that the public readers of these files agree on (michaeldhood/chatrxiv
``docs/cursor/storage-reference.md``; jverre/agents-for-cursor
``docs/cursor-tool-bubble-format.md``; Dicklesworthstone/coding_agent_session_search
``src/connectors/cursor.rs``; somogyijanos/cursor-chat-export ``src/export.py``;
stwalsh4118/clio ``docs/api-specs/cursor/cursor-api.md``):

- ``<User>/globalStorage/state.vscdb``, table ``cursorDiskKV (key, value)``: a conversation
  (a "composer": chat, ask or agent) is ``composerData:<composerId>``, with ``name``,
  ``createdAt`` and ``lastUpdatedAt`` (Unix ms), ``modelConfig.modelName``, and its messages
  ("bubbles") in order: ``fullConversationHeadersOnly`` (``{bubbleId, type}``, each message
  the value ``bubbleId:<composerId>:<bubbleId>``, or an entry of ``conversationMap``), or in
  older versions inline in ``conversation``. A bubble's fields: ``archivist.agents.cursor.bubbles``.
- ``<User>/workspaceStorage/<id>/state.vscdb``: its ``workspace.json`` names the window's
  folder (``folder``, or a ``workspace`` file, as a ``file://`` URI); its ItemTable's
  ``composer.composerData`` lists that workspace's composers (``allComposers``:
  ``composerId``, ``name``, …), which is how a composer's project is known (a head that still
  holds its ``conversation`` inline, from older versions, is read as a composer); and
  ``workbench.panel.aichat.view.aichat.chatdata`` holds the chats of versions before the
  composer: ``tabs``, each with ``tabId``, ``chatTitle``, ``lastSendTime`` and ``bubbles``.

The source is the ``User`` folder, its ``globalStorage`` or ``workspaceStorage`` folder, one
workspace's folder, or one ``state.vscdb``. A composer is one session, keyed by its id; an
older chat tab is one keyed ``chat:<tabId>``; composers come first, by id, then the tabs by
workspace. A request is a user message (its images as attachments, a placeholder in its text; a
request of an image alone is kept, its text the placeholder); each assistant bubble is an
assistant message: its text, its thinking apart, its tool call (the files its arguments name, a
terminal's command; the result's output a tool message after it) and its ``tokenCount`` as
usage. The models are the composer's ``modelConfig`` and the requests' ``modelInfo`` (Cursor's
"default", its Auto choice, is none); an answer's model is its request's. The title is the
composer's name (unless a default one: "New Chat", "New Agent"), else the first request. Times
are the log's own: the composer's, the bubbles', a tab's last send, never a file's. Only the
keys named here are read: ItemTable's other keys hold settings and sign-in tokens.

Skipped, and why: ``aiService.prompts`` and ``aiService.generations`` (requests alone, without
answers or conversation); a composer's context (its requests' images apart), code blocks,
diffs and checkpoints (what the editor showed or changed, not what was said); a
``toolFormerData`` that names no tool and holds nothing (the empty one Cursor gives an answer
that calls no tool: no call); a value over ``MAX_VALUE_BYTES`` or not JSON (a bubble: told in
its session's problems; a composer: told as Unread); a removed (null) bubble. The Cursor CLI's
chats
(``~/.cursor/chats/<hash>/<id>/store.db``: a ``meta`` table of hex-encoded JSON and a
content-addressed ``blobs`` table of binary records with no public schema, as
yashas-salankimatt/sidecar ``docs/plans/cursor-cli-adapter.md`` describes them) are not read:
``check`` says so. A database locked past a brief wait is
``Unavailable``; a damaged one, a ``state.vscdb`` that is no regular file (a pipe is never
opened), or a source that is none, is ``Unread``, and the source's other databases are read.
A database whose rollback journal (``state.vscdb-journal``) holds a write the editor did not
finish (it was stopped in the middle of it) is read as it was before that write, from a private
copy in which SQLite undoes it, and the problems say so. Nothing is ever written.

The agent's transcripts (``~/.cursor/projects/<project>/agent-transcripts``) are Cursor's
conversations too, and a source of this kind: ``~/.cursor``, its ``projects``, one project's
folder, its ``agent-transcripts`` or one transcript is read by
``archivist.agents.cursor.transcripts`` (where ``~/.cursor`` holds them, its CLI chats are not
looked at).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist.agents import (
    NotJSON,
    Root,
    Session,
    Unread,
    databases,
    is_file,
    iso_utc,
    json_value,
    no_source,
    relative_path,
    short_title,
    size_text,
    skipped_problems,
    text_or_none,
)
from archivist.agents.cursor import transcripts as cursor_transcripts
from archivist.agents.cursor.bubbles import Conversation, Skipped
from archivist.agents.cursor.places import DATABASE, WORKSPACE_FILE, Workspace, cli_store, global_databases, workspaces

KIND = "cursor"
EXPECTED = (
    "Cursor's User folder (~/.config/Cursor/User, ~/Library/Application Support/Cursor/User or "
    "~/AppData/Roaming/Cursor/User), its globalStorage or workspaceStorage folder, or one state.vscdb; "
    "or the agent's transcripts: ~/.cursor, its projects folder, one project's folder or agent-transcripts "
    "folder, or one transcript (.jsonl)"
)
KEYS = "cursorDiskKV"
ITEMS = "ItemTable"
COMPOSER = "composerData:"
HEADS = "composer.composerData"
CHAT_DATA = "workbench.panel.aichat.view.aichat.chatdata"
DEFAULT_TITLES = ("New Chat", "New Agent", "New Composer")
MAX_VALUE_BYTES = databases.MAX_VALUE_BYTES  # one JSON value read whole (a bubble with a file's contents in it)


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of Cursor's conversations (a sentence), or None."""
    path = Path(path).expanduser()
    if (reason := no_source(path, EXPECTED)) is not None:
        return reason
    if (reason := _transcripts_check(path)) is not None:
        return reason or None
    store = cli_store(path)
    if store is not None:
        return (
            f"{store} is a Cursor CLI chat: its messages are binary records in a content-addressed table of "
            f"blobs, whose format has no public schema, so it is not read: expected {EXPECTED}."
        )
    if path.is_file():
        found = databases.tables_of(path)
        if isinstance(found, str):
            return f"{found}: expected {EXPECTED}."
        if not found & {KEYS, ITEMS}:
            return f"{path} has neither a cursorDiskKV nor an ItemTable table: expected {EXPECTED}."
        return None
    root = Root(path)
    windows = workspaces(root)
    if global_databases(root, windows) or any(window.database for window in windows):
        return None
    return f"{path} holds no {DATABASE} (globalStorage/{DATABASE}, workspaceStorage/*/{DATABASE}): expected {EXPECTED}."


def _transcripts_check(path: Path) -> str | None:
    """Of a source of the agent's transcripts: "" where it is one, why it is not (a sentence);
    None where it is no such source (the editor's databases are looked for then)."""
    if path.is_file():
        return "" if cursor_transcripts.is_transcript(path) else None
    root = Root(path)
    if cursor_transcripts.transcript_folders(root) is None:
        return None
    files = cursor_transcripts.transcripts(root)
    if not files:
        return f"{path} holds no agent transcript ({cursor_transcripts.FOLDER}/*/*.jsonl): expected {EXPECTED}."
    if not cursor_transcripts.is_transcript(files[0]):
        return f"{files[0]} under {path} is not a Cursor agent transcript: expected {EXPECTED}."
    return ""


def log_files(path: Path) -> list[Path]:
    """The files that hold a source's conversations: its databases (with the log of what the editor
    has written and not yet moved into one) and the workspaces' ``workspace.json``."""
    root = Root(Path(path).expanduser())
    windows = workspaces(root)
    found: list[Path] = []
    for database in global_databases(root, windows) + [w.database for w in windows if w.database]:
        found.append(database)
        wal = database.with_name(database.name + "-wal")
        found += [wal] if is_file(wal) and root.allows(wal) else []
    found += [w.folder / WORKSPACE_FILE for w in windows if w.project is not None]
    return found or [root.path]


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Every conversation: the composers, by id, then those kept whole in a workspace's list, then
    the older chat tabs, by workspace. A database's list and tabs are read again when their sessions
    are made, rather than held all at once."""
    problems = problems if problems is not None else []
    root = Root(Path(path).expanduser(), problems)
    if _transcripts_check(root.path) == "":
        yield from cursor_transcripts.read(root)
        return
    if root.named is not None and not is_file(root.path):  # (a pipe would never end)
        root.problems.append(Unread(f"{root.path.name} is not a regular file: not read"))
        return
    windows = workspaces(root)
    state = _State(root)
    places: list[tuple[Path, Workspace | None]] = [(database, None) for database in global_databases(root, windows)]
    places += [(window.database, window) for window in windows if window.database]
    for database, _ in places:
        state.irregular(database)
    for database, window in places:
        _read_heads(database, window, state)
    for database, window in places:
        yield from _composers(database, window, state)
    for database, window in places:
        if database in state.kept_whole.values():
            yield from _kept_whole(database, window, state)
    for database, window in places:
        yield from _tabs(database, window, state)
    state.tell()


# --- reading a database ------------------------------------------------------------------------------


@dataclass
class _State:
    """What a reading has found so far, and what it could not read."""

    root: Root
    projects: dict[str, str] = field(default_factory=dict)  # composer id: its workspace's project
    listed: set[str] = field(default_factory=set)  # the composers a workspace's list names
    kept_whole: dict[str, Path] = field(default_factory=dict)  # composer id: the database listing it whole
    seen: set[str] = field(default_factory=set)
    unread: dict[str, int] = field(default_factory=dict)  # composers not read, by reason
    broken: set[Path] = field(default_factory=set)

    def project(self, composer_id: str, workspace: Workspace | None) -> str | None:
        return self.projects.get(composer_id) or (workspace.project if workspace else None)

    def failed(self, database: Path, error: sqlite3.Error | OSError) -> None:
        """A database that could not be read: Unavailable while another program holds it locked,
        else told once as Unread (what the archive holds of it stays)."""
        if isinstance(error, sqlite3.Error) and databases.locked(error):
            raise databases.unavailable(database, error) from None
        if database not in self.broken:
            self.broken.add(database)
            reason = str(error)
            if isinstance(error, OSError) and error.strerror:
                reason = error.strerror
            self.root.problems.append(Unread(f"{self.shown(database)} cannot be read ({reason})"))

    def irregular(self, database: Path) -> None:
        """A database that is no regular file (a pipe): told, and never opened."""
        told = databases.irregular(database, self.shown(database))
        if told is not None and database not in self.broken:
            self.broken.add(database)
            self.root.problems.append(told)

    def connect(self, database: Path) -> sqlite3.Connection:
        """A read-only connection to ``database`` (a write it must undo in a copy, told once)."""
        return databases.connect(database, self.root.problems, shown=self.shown(database))

    def shown(self, file: Path) -> str:
        return file.name if self.root.named is not None else relative_path(file, self.root.path)

    def tell(self) -> None:
        for problem in skipped_problems(self.unread, "conversation"):
            self.root.problems.append(Unread(problem))


def _value(connection: sqlite3.Connection, table: str, key: str) -> Any:
    """The JSON value of a key; ``Skipped`` (why) where there is none, or it is too large or no JSON.
    A blob's size is known without reading it, and a value too large is never read twice."""
    row = connection.execute(
        f"SELECT CASE WHEN {databases.byte_size('value')} <= ? THEN value END, typeof(value) FROM {table} WHERE key = ?",
        [MAX_VALUE_BYTES, key],
    ).fetchone()
    if row is None:
        return Skipped("not found")
    value, stored = row
    if stored == "null":
        return None
    if value is None:
        return Skipped(f"value over {size_text(MAX_VALUE_BYTES)}")
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    try:
        return json_value(value)
    except NotJSON as error:
        return Skipped(str(error))


def _item(database: Path, key: str, what: str, state: _State, tell: bool = True) -> Any:
    """The value of a key of a database's ItemTable; None where it has none, or it is not read
    (told, unless ``tell`` is false: a value read again)."""
    if database in state.broken:
        return None
    try:
        with closing(state.connect(database)) as connection:
            value = _value(connection, ITEMS, key) if ITEMS in databases.tables(connection) else None
    except (sqlite3.Error, OSError) as error:
        state.failed(database, error)
        return None
    if isinstance(value, Skipped):
        if tell and value.reason != "not found":
            state.root.problems.append(Unread(f"{state.shown(database)}: {what} not read ({value.reason})"))
        return None
    return value


def _heads(value: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """The composers a workspace's list names: (id, head)."""
    listed = value.get("allComposers") if isinstance(value, dict) else value
    for head in listed if isinstance(listed, list) else []:
        composer_id = text_or_none(head.get("composerId")) if isinstance(head, dict) else None
        if composer_id:
            yield composer_id, head


def _read_heads(database: Path, workspace: Workspace | None, state: _State) -> None:
    """A database's list of composers: their project, and which of them it keeps whole."""
    for composer_id, head in _heads(_item(database, HEADS, "its list of composers", state)):
        if workspace is not None and workspace.project:
            state.projects.setdefault(composer_id, workspace.project)
        if composer_id not in state.listed:
            state.listed.add(composer_id)
            if isinstance(head.get("conversation"), list):
                state.kept_whole[composer_id] = database


def _kept_whole(database: Path, workspace: Workspace | None, state: _State) -> Iterator[Session]:
    """The composers a database's list keeps whole (older versions) and cursorDiskKV does not hold."""
    for composer_id, head in _heads(_item(database, HEADS, "its list of composers", state, tell=False)):
        if state.kept_whole.get(composer_id) == database and composer_id not in state.seen:
            state.seen.add(composer_id)
            conversation = head.get("conversation")
            project = state.project(composer_id, workspace)
            session = _session(
                composer_id, head, conversation if isinstance(conversation, list) else [], project, database
            )
            if session is not None:
                yield session


def _tabs(database: Path, workspace: Workspace | None, state: _State) -> Iterator[Session]:
    """A database's older chat tabs."""
    chats = _item(database, CHAT_DATA, "its older chats", state)
    tabs = chats.get("tabs") if isinstance(chats, dict) else None
    for index, tab in enumerate(tabs if isinstance(tabs, list) else []):
        session = _tab_session(tab, index, database, workspace, state)
        if session is not None:
            yield session


def _composers(database: Path, workspace: Workspace | None, state: _State) -> Iterator[Session]:
    """The composers of a database's cursorDiskKV, by id."""
    if database in state.broken:
        return
    try:
        with closing(state.connect(database)) as connection:
            if KEYS not in databases.tables(connection):
                return
            keys = connection.execute(
                f"SELECT key FROM {KEYS} WHERE key > ? AND key < ? ORDER BY key", [COMPOSER, COMPOSER[:-1] + ";"]
            ).fetchall()
            for (key,) in keys:
                composer_id = key[len(COMPOSER) :]
                if not composer_id or composer_id in state.seen:
                    continue
                composer = _value(connection, KEYS, key)
                if isinstance(composer, Skipped):
                    state.unread[composer.reason] = state.unread.get(composer.reason, 0) + 1
                    continue
                state.seen.add(composer_id)
                if not isinstance(composer, dict):
                    continue  # (an empty entry: null)
                fetch = _fetcher(connection, composer_id)
                bubbles = _bubbles(composer, fetch)
                session = _session(composer_id, composer, bubbles, state.project(composer_id, workspace), database)
                if session is not None:
                    yield session
    except (sqlite3.Error, OSError) as error:
        state.failed(database, error)


def _fetcher(connection: sqlite3.Connection, composer_id: str) -> Callable[[str], Any]:
    def fetch(bubble_id: str) -> Any:
        return _value(connection, KEYS, f"bubbleId:{composer_id}:{bubble_id}")

    return fetch


def _bubbles(composer: dict[str, Any], fetch: Callable[[str], Any]) -> Iterator[Any]:
    """A composer's bubbles in order: by its headers (each its own value, or in ``conversationMap``),
    else its inline ``conversation``."""
    headers = composer.get("fullConversationHeadersOnly")
    if not isinstance(headers, list) or not headers:
        conversation = composer.get("conversation")
        yield from conversation if isinstance(conversation, list) else []
        return
    inline = composer.get("conversationMap")
    inline = inline if isinstance(inline, dict) else {}
    for header in headers:
        bubble_id = header.get("bubbleId") if isinstance(header, dict) else header
        if not isinstance(bubble_id, str) or not bubble_id:
            yield Skipped("a header of no known shape")
        elif isinstance(inline.get(bubble_id), dict):
            yield inline[bubble_id]
        else:
            yield fetch(bubble_id)


# --- sessions --------------------------------------------------------------------------------------


def _session(
    key: str, composer: dict[str, Any], bubbles: Iterable[Any], project: str | None, database: Path
) -> Session | None:
    conversation = Conversation()
    config = composer.get("modelConfig")
    conversation.model = conversation.add_model(config.get("modelName") if isinstance(config, dict) else None)
    conversation.add_all(bubbles)
    title = text_or_none(composer.get("name"))
    times = [iso_utc(composer.get("createdAt")), iso_utc(composer.get("lastUpdatedAt"))]
    return _made(key, conversation, title, times, project, database)


def _tab_session(tab: Any, index: int, database: Path, workspace: Workspace | None, state: _State) -> Session | None:
    """An older chat tab of a workspace, as a session keyed by its tab's id."""
    if not isinstance(tab, dict):
        return None
    tab_id = text_or_none(tab.get("tabId"))
    key = f"chat:{tab_id}" if tab_id else f"chat:{workspace.folder.name if workspace else database.name}/{index}"
    if key in state.seen:
        return None
    state.seen.add(key)
    conversation = Conversation()
    bubbles = tab.get("bubbles")
    conversation.add_all(bubbles if isinstance(bubbles, list) else [])
    title = text_or_none(tab.get("chatTitle"))
    project = workspace.project if workspace else None
    return _made(key, conversation, title, [iso_utc(tab.get("lastSendTime"))], project, database)


def _made(
    key: str,
    conversation: Conversation,
    title: str | None,
    times: list[str | None],
    project: str | None,
    database: Path,
) -> Session | None:
    messages = conversation.messages
    if not any(message.text for message in messages if message.role in ("user", "assistant")):
        return None
    found = sorted(time for time in [*times, *(message.timestamp for message in messages)] if time)
    if title is None or title in DEFAULT_TITLES:
        asked = [message.text for message in messages if message.role == "user" and message.text]
        title = (asked or [message.text for message in messages if message.text])[0]
    return Session(
        key=key,
        agent=KIND,
        title=short_title(title),
        messages=messages,
        project=project,
        models=conversation.models,
        started=found[0] if found else None,
        last=found[-1] if found else None,
        files=[database],
        problems=skipped_problems(conversation.skipped, "message"),
    )
