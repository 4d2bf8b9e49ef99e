"""``archivist replicate`` and ``archivist restore``: the archive streamed to a replica with
Litestream, and a working archive made from one on another machine (``archivist.replication``)."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
from pathlib import Path
from typing import NoReturn

import click

from archivist.cli.arguments import db_option, workspace_argument
from archivist.cli.output import fail, is_verbose, refuse
from archivist.cli.workspaces import archive_to_read, run_line, shown, text_path, workspace_folder
from archivist.errors import ArchivistError
from archivist.replication import RESTORE_SECONDS, Replica
from archivist.workspace import SIDECARS, archive_path, secret_key_path

endpoint_option = click.option(
    "--endpoint",
    metavar="URL",
    help="An S3-compatible server's address (MinIO, R2, ...): http(s)://HOST[:PORT]. Default: AWS S3.",
)


def checked_replica(url: str, endpoint: str | None) -> Replica:
    """The replica ``url`` names, or a one-line refusal."""
    from archivist import replication

    try:
        found = replication.replica(url, endpoint)
    except ArchivistError as error:
        fail(error)
    warning = replication.unencrypted(found)
    if warning is not None:
        click.echo(warning, err=True)
    return found


@click.command()
@workspace_argument
@click.option(
    "--to", "url", required=True, metavar="URL", help="Where to: s3://BUCKET/PATH, file:///FOLDER or /FOLDER."
)
@endpoint_option
@db_option
def replicate(workspace: Path | None, url: str, endpoint: str | None, db_path: Path | None) -> None:
    """Stream WORKSPACE's archive to a replica with Litestream, until stopped (Ctrl-C, SIGTERM).

    Each commit reaches the replica within about a second, while `archivist index`, `watch` or
    `serve` write the archive. Credentials come from the environment only, as Litestream reads
    them (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE): a URL that carries them is
    refused. `archivist restore URL --to DIR` makes a working archive from the replica.
    """
    from archivist import replication

    checked_replica(url, endpoint)
    workspace = workspace_folder(workspace, "replicate")
    path = archive_to_read(workspace, db_path, ", then replicate it", upgrade=False)
    try:
        found = replication.checked(url, endpoint, path, workspace)
    except ArchivistError as error:
        fail(error)
    click.echo(f"Replicating {shown(path)} to {found.url} (Ctrl-C stops)")
    try:
        replication.become_litestream(path, found, is_verbose())
    except ArchivistError as error:
        fail(error)


@click.command()
@click.argument("url", metavar="URL")
@click.option(
    "--to",
    "folder",
    required=True,
    metavar="DIR",
    type=click.Path(path_type=Path),
    help="The workspace folder to restore into (made if missing); its archive is DIR/.archivist/archive.db.",
)
@endpoint_option
@click.option(
    "--force", is_flag=True, help="Replace an archive that is there already (not while something holds it open)."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=RESTORE_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help="How long Litestream may take; then the restore stops and leaves nothing behind.",
)
def restore(url: str, folder: Path, endpoint: str | None, force: bool, timeout: float) -> None:
    """Make a working archive in DIR from the replica at URL (what `archivist replicate` wrote).

    The archive is restored beside its place, checked (SQLite's integrity check, and that it is
    an archive this version reads), marked as a restored copy, then put in place whole: an
    archive there already is never replaced without --force, nor while a server, an index or
    Litestream holds it open. A restored copy is read, never indexed into: `archivist serve DIR`
    serves it as it is, and `index`, `watch` and `embed` refuse it.
    """
    from archivist import replication

    found = checked_replica(url, endpoint)
    folder = Path(os.path.expanduser(folder))
    text_path(folder, "workspace")
    if os.path.lexists(folder) and not os.path.isdir(folder):
        refuse(f"Not a folder: {shown(folder)}: --to takes the workspace folder to restore into.", "INVALID_PARAMETER")
    target = archive_path(folder)
    if os.path.lexists(target) and not force:
        refuse(
            f"An archive is there already: {shown(target)}: restore into another folder, or add --force to replace it.",
            "INVALID_PARAMETER",
        )
    if force and replication.in_use(target):
        fail(held_open(target))
    try:
        replication.binary()
    except ArchivistError as error:
        fail(error)
    created = missing_folders(target.parent)
    try:
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        refuse(f"Cannot create {shown(target.parent)}: {error.strerror or error}: give a folder you can write.")
    made = target.with_name(f".{target.name}.restoring-{os.getpid()}-{secrets.token_hex(4)}")
    umask = os.umask(0o077)  # (every file made on the way is its owner's alone, from the start)
    terminated = signal.signal(signal.SIGTERM, interrupted)
    try:
        replication.restore(found, made, timeout)
        counts = checked_restored(made)
        marked(made, found)
        if force and replication.in_use(target):
            raise held_open(target)
        put_in_place(made, target)
    except ArchivistError as error:
        remove_made(made, created)
        fail(error)
    except BaseException:
        remove_made(made, created)
        raise
    finally:
        signal.signal(signal.SIGTERM, terminated)
        os.umask(umask)
    click.echo(f"Restored {found.url} into {shown(target)}: {counts}.")
    click.echo(f"Serve it read-only with {run_line('serve', folder)} (it is never indexed into).")


def interrupted(signum: int, frame: object) -> NoReturn:
    """SIGTERM during a restore: the same cleanup as Ctrl-C (Litestream killed, nothing left behind)."""
    raise KeyboardInterrupt


def held_open(target: Path) -> ArchivistError:
    """INVALID_PARAMETER: the archive --force would replace is held open by another process."""
    return ArchivistError(
        "INVALID_PARAMETER",
        f"The archive at {shown(target)} is in use",
        "A server, an index or `archivist replicate` holds it open, and would go on with the old file.",
        "Stop it, then restore again.",
    )


def marked(made: Path, found: Replica) -> None:
    """The restored file at ``made`` marked as a copy of ``found`` (``replication.mark_restored``)."""
    from archivist import replication
    from archivist.archive.database import not_written, sqlite3

    try:
        replication.mark_restored(made, found)
    except sqlite3.Error as error:
        raise not_written(
            shown(made), error, "The restored copy could not be marked as one.", "Nothing was put in place."
        ) from None


def missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist yet, the deepest first."""
    missing = []
    while not os.path.lexists(folder) and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def remove_made(made: Path, created: list[Path]) -> None:
    """What a restore that failed made: its file, SQLite's and Litestream's beside it (its ``.tmp``),
    and the folders it created."""
    for leftover in [*sidecars(made), *sidecars(made.with_name(made.name + ".tmp"))]:
        leftover.unlink(missing_ok=True)
    for folder in created:
        try:
            folder.rmdir()  # (only if empty: a folder something else wrote into meanwhile stays)
        except OSError:
            break


def sidecars(path: Path) -> list[Path]:
    """The database at ``path`` and SQLite's files beside it."""
    return [path.with_name(path.name + suffix) for suffix in SIDECARS]


def checked_restored(path: Path) -> str:
    """What the restored archive at ``path`` holds, once SQLite's integrity check passes and it is an
    archive this version reads (or upgrades); else DIRECTORY_NOT_FOUND and nothing is put in place."""
    from archivist.archive.database import connect_read_only, sqlite3
    from archivist.archive.schema import archive_problem

    try:
        conn = connect_read_only(path)
        try:
            checked = [row[0] for row in conn.execute("PRAGMA integrity_check")]
            problem = archive_problem(conn) if checked == ["ok"] else None
            readable = problem in (None, "older")
            documents = conn.execute("SELECT count(*) FROM documents").fetchone()[0] if readable else 0
        finally:
            conn.close()
    except sqlite3.Error as error:
        checked, problem, documents = [str(error)], None, 0
    if checked != ["ok"]:
        raise ArchivistError(
            "DIRECTORY_NOT_FOUND",
            "The restored archive is damaged",
            f"SQLite's integrity check says: {'; '.join(checked)[:300]}.",
            "Nothing was put in place. Restore again; if it persists, replicate anew from the machine that indexes.",
        )
    if problem not in (None, "older"):
        raise ArchivistError(
            "DIRECTORY_NOT_FOUND",
            "Not an Archivist archive: the replica holds another database",
            f"The restored database: {problem}.",
            "Nothing was put in place. Check the URL: it is the one `archivist replicate` was given.",
        )
    return f"{documents} documents, integrity check ok"


def put_in_place(made: Path, target: Path) -> None:
    """``made`` becomes the archive at ``target``.

    The old archive, its log and shared memory (which SQLite would otherwise replay onto the new
    file) and its masking key (the old archive's own: a restored copy is never indexed, and
    needs none) are first renamed aside as a set, then ``made`` is renamed in, then the set is
    deleted; a rename that fails puts the set back. Litestream's state for the old file goes too:
    kept, it would be replayed against the new one.
    """
    from archivist import replication

    os.chmod(made, 0o600)  # (one person's history, on another machine: theirs to read)
    aside = target.with_name(f".{target.name}.replaced-{os.getpid()}-{secrets.token_hex(4)}")
    olds = [*sidecars(target), secret_key_path(target)]
    moved: list[tuple[Path, Path]] = []
    try:
        for old in olds:
            away = aside.with_name(aside.name + old.name.removeprefix(target.name))
            if os.path.lexists(old):
                os.rename(old, away)
                moved.append((old, away))
        os.replace(made, target)
    except OSError:
        for old, away in reversed(moved):
            os.rename(away, old)
        raise
    for _, away in moved:
        away.unlink(missing_ok=True)
    for leftover in sidecars(made)[1:]:
        leftover.unlink(missing_ok=True)
    state = replication.state_folder(target)
    if state.is_dir() and not state.is_symlink():
        shutil.rmtree(state, ignore_errors=True)
