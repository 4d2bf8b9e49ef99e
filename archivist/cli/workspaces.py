"""Where a command reads and writes: the workspace folder, its archive (checked, brought up to
date, opened), the other workspaces a server allows and the agent-log sources given as KIND=PATH."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from archivist.cli.arguments import WORKSPACE_ENV
from archivist.cli.output import fail, refuse
from archivist.errors import ArchivistError
from archivist.workspace import archive_path, default_workspace


def shown(path: Path | str) -> str:
    """A path as a message names it: absolute, on one line."""
    text = os.path.abspath(path)
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def run_line(*words: Path | str) -> str:
    """`archivist WORDS...` as a user can paste it into a shell."""
    return "`" + " ".join(["archivist", *(shlex.quote(shown(w) if isinstance(w, Path) else w) for w in words)]) + "`"


# What each command takes, for the message when its workspace is left out.
USAGE = {"embed": "WORKSPACE [PATH]", "search": "WORKSPACE QUERY"}


# The commands that take --discover: with it, the workspace is made where it is missing.
DISCOVERING = ("index", "serve", "sources")
# The commands that read an archive and take nothing after WORKSPACE: without one named, they
# read one's own history's archive, once `archivist serve --discover` (or index) has made it.
OWN_HISTORY = ("mcp", "status", "usage")


def workspace_folder(workspace: Path | None, command: str, discover: bool = False) -> Path:
    """WORKSPACE (``~`` expanded) if it is an existing folder; otherwise a one-line error.

    With ``discover`` (--discover), a missing WORKSPACE is created, and none named is one's own
    history's workspace in the platform's data folder (``archivist.workspace.default_workspace``);
    the commands of ``OWN_HISTORY`` read that workspace too when none is named and its archive exists.
    """
    if workspace is None:
        own = default_workspace()  # (asked only here: platformdirs costs a start some milliseconds)
        if discover or (command in OWN_HISTORY and archive_path(own).is_file()):
            workspace = own
    if workspace is None:
        if command == "mcp":
            refuse(
                f"No workspace given: pass it as the argument (archivist mcp /path/to/workspace) "
                f"or set {WORKSPACE_ENV}=/path/to/workspace; `archivist serve --discover` first makes "
                "your own history's archive, which `archivist mcp` then serves without either.",
                "INVALID_PARAMETER",
            )
        also = f", or `archivist {command} --discover` for your agents' own logs" if command in DISCOVERING else ""
        refuse(
            f"No workspace given: run `archivist {command} {USAGE.get(command, 'WORKSPACE')}`{also}.",
            "INVALID_PARAMETER",
        )
    folder = Path(os.path.expanduser(workspace))
    if discover and not os.path.lexists(folder):
        made(folder)
    if os.path.isdir(folder):
        return text_path(folder, "workspace")
    if not os.path.exists(folder):
        refuse(f"Workspace not found: no folder at {shown(folder)}: {_how_to_make(folder, command)}.")
    what = "a file" if os.path.isfile(folder) else "not a folder"
    refuse(
        f"Workspace is not a folder: {shown(folder)} is {what}: give the workspace's folder "
        f"(an archive file goes with --db)."
    )


def _how_to_make(folder: Path, command: str) -> str:
    """What a missing workspace's message says to do: make the folder, or let --discover make it."""
    if command not in ("index", "embed", "serve"):
        return "check the path (a folder is searchable once `archivist index FOLDER` has run)"
    make = f"check the path, or create the folder (mkdir -p {shlex.quote(shown(folder))}) and run the command again"
    if command == "embed":
        return make
    return f"{make}; or run {run_line(command, folder, '--discover')}, which creates it and reads your agents' logs"


def made(folder: Path) -> None:
    """Create the workspace ``folder`` (and its parents), readable by its owner only; a one-line error if it cannot be."""
    text_path(folder, "workspace")
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        refuse(f"Cannot create the workspace {shown(folder)}: {error.strerror or error}: give a folder you can write.")
    click.echo(f"Created the workspace {shown(folder)}", err=True)


def discovered_sources() -> list[tuple[str, Path]]:
    """The agent logs found in each kind's default location on this machine, each told on stderr."""
    from archivist.archive import sessions

    found = sessions.discover()
    for kind, path in found:
        click.echo(f"Found {kind}: {path}", err=True)
    for sentence in sessions.unreadable_found():
        click.echo(f"Not read: {sentence}", err=True)
    if not found:
        click.echo("Found no agent logs in their default locations.", err=True)
    return found


def _database_problem(path: Path, tables: bool) -> str | None:
    """Why the file at ``path`` is not an archive to read (tables=True) or to index into; None if it is.

    Only a file that is not an SQLite database, or (tables) one without an archive's tables, is
    not an archive. One that cannot be read now (a full disk, a failing or read-only one, its
    permissions, a lock) or is damaged is told as such, as a one-line error.
    """
    from archivist.archive.database import connect_read_only, primary_code, sqlite3

    if not os.path.isfile(path):
        return "not a file"
    try:
        conn = connect_read_only(path)  # (on a full disk too, where SQLite's own read-only connection fails)
        try:
            found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'documents'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as error:
        if primary_code(error) == sqlite3.SQLITE_NOTADB:
            return str(error)
        from archivist.queries.runner import unreadable

        fail(unreadable(shown(path), error, "run the command again."))
    return "it has no documents table" if tables and not found else None


def text_path(path: Path, what: str) -> Path:
    """``path``, when its absolute form is valid UTF-8 (the archive records paths as text); else a one-line error."""
    try:
        os.path.abspath(path).encode("utf-8")
    except UnicodeEncodeError:
        refuse(
            f"The {what}'s path is not valid UTF-8: {shown(path)}: rename it, or reach it through a link "
            "whose path is.",
            "INVALID_PARAMETER",
        )
    return path


def archive_to_read(workspace: Path, db_path: Path | None, note: str = "", upgrade: bool = True) -> Path:
    """The archive a reading command opens: it must exist and be an archive. Nothing is created.

    An archive written by an older version catches up (upgrade=False: the caller sees to it).
    """
    path = text_path(db_path, "archive") if db_path else archive_path(workspace)
    if not os.path.lexists(path):
        if db_path is not None:
            refuse(f"No archive at {shown(path)}: run {run_line('index', workspace, '--db', path)} first{note}.")
        refuse(f"No archive in {shown(workspace)}: run {run_line('index', workspace)} first{note}.")
    problem = _database_problem(path, tables=True)
    if problem is not None:
        refuse(f"Not an Archivist archive: {shown(path)} ({problem}): {_rebuild_hint(workspace, db_path)}.")
    if upgrade:
        upgraded(path)  # written by an older version: its schema catches up, nothing is lost
    return path


def check_archive_to_write(workspace: Path, db_path: Path | None) -> None:
    """An archive that indexing would open: absent (it is created) or a SQLite database."""
    path = text_path(db_path, "archive") if db_path else archive_path(workspace)
    if os.path.lexists(path):
        problem = _database_problem(path, tables=False)
        if problem is not None:
            refuse(f"Not an Archivist archive: {shown(path)} ({problem}): {_rebuild_hint(workspace, db_path)}.")


def _rebuild_hint(workspace: Path, db_path: Path | None) -> str:
    if db_path is not None:
        return "give --db an archive written by `archivist index`, or a new file"
    return f"move it aside, then run {run_line('index', workspace)}"


def checked_workspaces(folders: Iterable[Path]) -> list[Path]:
    """The operator's allowed workspaces, each an existing folder (it may be indexed later)."""
    from archivist.workspace import resolve_folder

    found = []
    for folder in folders:
        try:
            resolved = resolve_folder(str(folder))
        except ArchivistError as error:
            refuse(f"Allowed workspace not found: {error.problem.removeprefix('Workspace not found: ')}: {error.why}")
        if resolved is None:
            refuse(
                f"Allowed workspace not found: no folder at {shown(folder)}: "
                f"--allow-workspace and ARCHIVIST_ALLOW_WORKSPACES take existing folders."
            )
        if not archive_path(resolved).exists():
            click.echo(f"Note: {resolved} is allowed but not indexed yet (run: archivist index {resolved})", err=True)
        found.append(resolved)
    return found


def open_archive(path: Path) -> Any:
    """The archive's canned queries (archivist.queries.runner.Archive); an older archive is upgraded on the way.

    The archive checks its own schema: the migrations (and their library) load only when
    that check finds an older archive.
    """
    from archivist.queries.runner import Archive

    try:
        return Archive(path)
    except ArchivistError as error:
        if not upgraded(path):
            fail(error)
    try:
        return Archive(path)
    except ArchivistError as error:
        fail(error)


def upgraded(path: Path) -> bool:
    """Whether the archive at ``path`` was written by an older version and has just caught up (it says so)."""
    from archivist.archive import schema
    from archivist.archive.database import disk_full, not_written, sqlite3, unwritable

    try:
        if not schema.upgrade(path):
            return False
    except sqlite3.Error as error:
        if unwritable(error) or disk_full(path, error):
            fail(
                not_written(
                    shown(path),
                    error,
                    "It was written by an older version, and this version's schema could not be written "
                    "into it; it is as it was.",
                    "run the command again: it catches up then.",
                )
            )
        from archivist.queries.runner import unreadable

        fail(unreadable(shown(path), error, "run the command again."))
    click.echo(f"Upgraded the archive at {shown(path)} to this version's schema.", err=True)
    return True


def checked_sources(arguments: Iterable[str]) -> list[tuple[str, Path]]:
    """Each KIND=PATH of the command line, checked: INVALID_SOURCE (nothing added) unless all are sources."""
    from archivist.archive import sessions

    checked = []
    for argument in arguments:
        try:
            kind, path = sessions.parse_argument(argument)
            sessions.check(kind, path)
        except ArchivistError as error:
            fail(error)
        checked.append((kind, path))
    return checked


def replicating(
    workspace: Path, db_path: Path | None, url: str | None, endpoint: str | None, strict: bool = False
) -> None:
    """Litestream streaming the command's archive to ``url`` (``--replicate-to``), started now, before
    the command starts any thread, and stopped as the command ends, however it ends; the replica
    checked first, a one-line refusal if it is none. Nothing where neither option is given.

    Where the replica may lack the last commits (Litestream did not catch up, or ended badly), a
    one-line warning on stderr as the command ends; ``strict`` (a command that ends on its own,
    like index) also exits with status 1 then. A Litestream that dies while the command runs is
    told on stderr when it is noticed (``watch_replicator``).
    """
    if url is None and endpoint is None:
        return
    from contextlib import ExitStack

    from archivist import replication
    from archivist.cli.output import is_verbose

    if url is None:
        refuse("--replicate-endpoint names the server of --replicate-to: give --replicate-to too.", "INVALID_PARAMETER")
    path = text_path(db_path, "archive") if db_path else archive_path(workspace)
    replicas = ExitStack()
    try:
        found = replication.checked(url, endpoint, path, workspace)
        if not os.path.lexists(path):
            created_for_replication(path)
        replicator = replicas.enter_context(replication.replicating(path, found, is_verbose()))
    except ArchivistError as error:
        fail(error)
    click.echo(f"Replicating {path} to {found.url}", err=True)
    warning = replication.unencrypted(found)
    if warning is not None:
        click.echo(warning, err=True)
    watch_replicator(replicator, found.url)

    def stopped() -> None:
        replicas.close()
        if not replicator.whole:
            how = "it did not catch up" if not replicator.caught_up else f"it ended with status {replicator.status}"
            click.echo(
                f"❌ Replication to {found.url} ended badly ({how}): the replica may lack the last commits; "
                "check the URL, the endpoint and the credentials, then run the command again with -v.",
                err=True,
            )
            if strict:
                sys.exit(1)

    click.get_current_context().call_on_close(stopped)


REPLICATOR_CHECK_SECONDS = 5.0


def watch_replicator(replicator: Any, url: str) -> None:
    """A daemon thread that tells on stderr, once, if Litestream ends while the command still runs."""
    import threading
    import time

    def check() -> None:
        while replicator.process.poll() is None:
            time.sleep(REPLICATOR_CHECK_SECONDS)
        if replicator.caught_up is None:  # (not stopped by the command itself)
            click.echo(
                f"❌ Litestream stopped (status {replicator.process.returncode}): the archive is no longer "
                f"replicated to {url}; restart the command to replicate again (-v shows Litestream's reasons).",
                err=True,
            )

    threading.Thread(target=check, name="archivist-replicator", daemon=True).start()


def created_for_replication(path: Path) -> None:
    """The archive at ``path`` created with its schema (``schema.open_archive``), as the first index
    would create it, before Litestream opens it: Litestream opening a file that does not exist yet
    would make it an empty database of SQLite's default page size, not the archive's."""
    from archivist.archive import schema
    from archivist.archive.database import not_written, sqlite3

    try:
        schema.open_archive(path).close()
    except (sqlite3.Error, OSError) as error:
        fail(
            not_written(
                shown(path), error, "The archive could not be created to replicate it.", "Nothing was replicated."
            )
        )
