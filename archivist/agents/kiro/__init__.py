"""Kiro's agent sessions, read in place (docs/contract.md: sources).

Kiro (kiro.dev, Amazon's IDE built on Code OSS) has kept its agent's chats in three
layouts, all read here:

- Kiro 1.0 and later: ``~/.kiro/sessions/<workspace hash>/<session id>/`` with
  ``session.json`` and an event log ``messages.jsonl`` (``sessions``);
- before 1.0, in the agent extension's storage, ``<Kiro's User folder>/globalStorage/
  kiro.kiroagent``: ``workspace-sessions/<workspace>/<session id>.json``, whose answers are
  resolved from the execution logs beside them (``workspace``);
- the earliest builds: ``<workspace hash>/<file>.chat`` in that same folder, one agent run
  each (``workspace``).

Kiro is closed source: the modules named describe each shape and the public readers it is
taken from. A source is ``~/.kiro`` or its ``sessions`` folder, one workspace's or one
session's folder in it; or ``kiro.kiroagent``, its ``workspace-sessions`` folder or one
workspace's folder in that; or one session file (a workspace session's ``.json``, a
``.chat``, a 1.0 session's ``session.json``). Sessions are keyed by their id (a ``.chat`` by
``<workspace hash>/<file name>``) and read in the order of their paths, the 1.0 ones first.

The Kiro CLI's sessions are read too (``cli``): ``~/.kiro/sessions/cli/<id>.jsonl``, each with
its companion ``<id>.json``, and its SQLite store ``data.sqlite3`` (``~/.local/share/kiro-cli``),
given as a source or as the folder that holds it; a store without conversations is a source
with no session. Not read: Kiro's settings, steering files and specs (the project's files, not
a conversation). What a file that yields no session holds is told in ``problems``; a link
that leads out of the source is never opened; nothing is ever written.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from archivist.agents import Root, Session, file_key, is_dir, is_file, json_file, relative_path
from archivist.agents.kiro import cli
from archivist.agents.kiro import sessions as current
from archivist.agents.kiro import workspace as earlier

KIND = "kiro"
EXPECTED = (
    "expected Kiro's ~/.kiro (sessions/<workspace>/<session>/messages.jsonl), its agent's "
    "globalStorage/kiro.kiroagent folder (workspace-sessions/, *.chat), one folder of either, the Kiro CLI's "
    "sessions/cli folder or its data.sqlite3, or one session file"
)
WORKSPACE_SESSIONS = "workspace-sessions"


@dataclass
class Layout:
    """The session files of a source, by layout, and the folder of its execution logs."""

    folders: list[Path] = field(default_factory=list)  # 1.0 session folders
    workspace: list[Path] = field(default_factory=list)  # workspace-sessions/<workspace>/<id>.json
    chats: list[Path] = field(default_factory=list)  # <workspace hash>/<file>.chat
    cli: list[Path] = field(default_factory=list)  # the Kiro CLI's sessions/cli/<id>.jsonl
    stores: list[Path] = field(default_factory=list)  # the Kiro CLI's data.sqlite3
    home: Path | None = None  # kiro.kiroagent, where the execution logs are

    def __bool__(self) -> bool:
        return bool(self.folders or self.workspace or self.chats or self.cli or self.stores)


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not a source of Kiro's sessions (a sentence saying what was expected), or None."""
    path = Path(path).expanduser()
    if not path.exists():
        return f"{path} does not exist: {EXPECTED}."
    if path.is_file():
        if path.suffix == ".sqlite3" or path.name == cli.STORE:
            why = cli.why_not_store(path)
            return f"{path} {why}: {EXPECTED}." if why else None
        return None if _is_session_file(path) else f"{path} is not a Kiro session file: {EXPECTED}."
    if not path.is_dir():
        return f"{path} is neither a folder nor a file: {EXPECTED}."
    if _layout(Root(path)):
        return None
    if _cli_folder(path) is not None:
        return None  # (the Kiro CLI's sessions folder, with no session yet)
    return f"{path} holds no Kiro session: {EXPECTED}."


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[Session]:
    """Every session under ``path``: the 1.0 ones, then the workspace sessions, then the ``.chat`` files."""
    problems = problems if problems is not None else []
    given = Path(path).expanduser()
    root = Root(given, problems)
    base = given.parent if root.named else given
    layout = _named(given) if root.named else _layout(root)
    used: set[str] = set()
    for folder in layout.folders:
        relative = relative_path(folder, base)
        key = file_key(current.session_id(folder, root) or folder.name, relative, used)
        yield from _kept(current.session(folder, key, KIND, root), relative, key, used, problems)
    if layout.workspace:
        home = layout.home
        runs = earlier.executions(home, root if home == given else Root(home, problems)) if home else {}
        listed: dict[Path, dict[str, object]] = {}
        for file in layout.workspace:
            relative = relative_path(file, base)
            if file.parent not in listed:
                listed[file.parent] = earlier.listed_sessions(file.parent, root)
            key = file_key(file.stem, relative, used)
            found = earlier.workspace_session(file, key, KIND, root, listed[file.parent], runs)
            yield from _kept(found, relative, key, used, problems)
    for file in layout.chats:
        relative = relative_path(file, base)
        key = file_key(f"{file.parent.name}/{file.stem}", relative, used)
        yield from _kept(earlier.chat_session(file, key, KIND, root), relative, key, used, problems)
    for file in layout.cli:
        relative = relative_path(file, base)
        key = file_key(cli.session_id(file, root) or file.stem, relative, used)
        yield from _kept(cli.cli_session(file, key, KIND, root), relative, key, used, problems)
    for database in layout.stores:
        yield from cli.store_sessions(database, KIND, root, relative_path(database, base), used)


def _kept(
    found: tuple[Session | None, list[str]], relative: str, key: str, used: set[str], problems: list[str]
) -> Iterator[Session]:
    session, told = found
    if session is None:
        problems.extend(f"{relative}: {problem}" for problem in told)
        return
    used.add(key)
    yield session


# -- finding the files ------------------------------------------------------------------------------


def _layout(root: Root) -> Layout:
    path = root.path
    layout = Layout()
    base = path / "sessions" if _folder(root, path / "sessions") else path
    layout.folders = sorted(current.session_folders(base, root), key=lambda folder: relative_path(folder, path))
    if path.name == WORKSPACE_SESSIONS:
        workspaces, layout.home = root.folders(path), path.parent
    elif _folder(root, path / WORKSPACE_SESSIONS):
        workspaces, layout.home = root.folders(path / WORKSPACE_SESSIONS), path
    elif path.parent.name == WORKSPACE_SESSIONS:
        workspaces, layout.home = [path], path.parent.parent
    else:
        workspaces = []
    layout.workspace = [file for folder in workspaces for file in _workspace_files(folder, root)]
    if path.parent.name != WORKSPACE_SESSIONS and path.name != WORKSPACE_SESSIONS:
        layout.chats = sorted(earlier.chat_files(path, root), key=lambda file: relative_path(file, path))
    sessions = _cli_folder(path)
    if sessions is not None:
        layout.cli = cli.session_files(sessions, root)
    store = path / cli.STORE
    if os.path.lexists(store) and root.allows(store):
        layout.stores = [store]
    return layout


def _cli_folder(path: Path) -> Path | None:
    """The Kiro CLI's ``sessions/cli`` folder of a source (``~/.kiro``, its ``sessions``, or that
    folder itself), or None."""
    root = Root(path)
    for folder in (path, path / cli.CLI, path / "sessions" / cli.CLI):
        if folder.name == cli.CLI and folder.parent.name == "sessions" and (folder == path or _folder(root, folder)):
            return folder
    return None


def _named(file: Path) -> Layout:
    """The layout of a source that is one file."""
    if file.name in (current.META, current.EVENTS):
        return Layout(folders=[file.parent])
    if file.suffix == ".chat":
        return Layout(chats=[file])
    if file.suffix == ".jsonl":
        return Layout(cli=[file])
    if file.suffix == ".sqlite3" or file.name == cli.STORE:
        return Layout(stores=[file])
    home = file.parent.parent.parent if file.parent.parent.name == WORKSPACE_SESSIONS else None
    return Layout(workspace=[file], home=home)


def _workspace_files(folder: Path, root: Root) -> list[Path]:
    return [
        file for file in root.files(folder, ".json") if file.name != "sessions.json" and not file.name.startswith(".")
    ]


def _folder(root: Root, folder: Path) -> bool:
    return is_dir(folder) and root.allows(folder)


def _is_session_file(file: Path) -> bool:
    if file.name in (current.META, current.EVENTS):
        return current.is_session_folder(file.parent)
    if file.suffix == ".jsonl":
        return cli.is_session_file(file)
    if file.suffix not in (".json", ".chat") or not is_file(file):
        return False
    value = json_file(file, Root(file))
    key = "chat" if file.suffix == ".chat" else "history"
    return isinstance(value, dict) and isinstance(value.get(key), list)
