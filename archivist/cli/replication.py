"""``archivist replicate`` and ``archivist restore``: the archive streamed to a replica with
Litestream, and a working archive made from one on another machine (``archivist.replication``)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import click

from archivist.cli.arguments import db_option, workspace_argument
from archivist.cli.output import fail, is_verbose, refuse
from archivist.cli.workspaces import archive_to_read, run_line, shown, text_path, workspace_folder
from archivist.errors import ArchivistError
from archivist.workspace import archive_path

endpoint_option = click.option(
    "--endpoint",
    metavar="URL",
    help="An S3-compatible server's address (MinIO, R2, ...): http(s)://HOST[:PORT]. Default: AWS S3.",
)


def checked_replica(url: str, endpoint: str | None) -> object:
    """The replica ``url`` names (``replication.Replica``), or a one-line refusal."""
    from archivist import replication

    try:
        return replication.replica(url, endpoint)
    except ArchivistError as error:
        fail(error)


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

    found = checked_replica(url, endpoint)
    assert isinstance(found, replication.Replica)
    workspace = workspace_folder(workspace, "replicate")
    path = archive_to_read(workspace, db_path, ", then replicate it", upgrade=False)
    try:
        replication.check_apart(found, path)
        replication.check_archive_path(path)
        replication.binary()
    except ArchivistError as error:
        fail(error)
    click.echo(f"Replicating {shown(path)} to {found.url} (Ctrl-C stops)")
    replication.become_litestream(path, found, is_verbose())


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
@click.option("--force", is_flag=True, help="Replace an archive that is there already.")
def restore(url: str, folder: Path, endpoint: str | None, force: bool) -> None:
    """Make a working archive in DIR from the replica at URL (what `archivist replicate` wrote).

    The archive is restored beside its place, checked (SQLite's integrity check, and that it is
    an archive this version reads), then put in place whole: an archive there already is never
    replaced without --force. Serve it read-only with `archivist serve DIR --no-index`.
    """
    from archivist import replication

    found = checked_replica(url, endpoint)
    assert isinstance(found, replication.Replica)
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
    try:
        replication.restore(found, made)
        counts = checked_restored(made)
        put_in_place(made, target)
    except ArchivistError as error:
        remove_made(made, created)
        fail(error)
    except BaseException:
        remove_made(made, created)
        raise
    click.echo(f"Restored {found.url} into {shown(target)}: {counts}.")
    click.echo(f"Serve it read-only with {run_line('serve', folder, '--no-index')}.")


def missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist yet, the deepest first."""
    missing = []
    while not os.path.lexists(folder) and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def remove_made(made: Path, created: list[Path]) -> None:
    """What a restore that failed made: its file, SQLite's and Litestream's beside it, and the folders it created."""
    for leftover in sidecars(made):
        leftover.unlink(missing_ok=True)
    for folder in created:
        try:
            folder.rmdir()  # (only if empty: a folder something else wrote into meanwhile stays)
        except OSError:
            break


def sidecars(path: Path) -> list[Path]:
    """The database at ``path`` and SQLite's files beside it."""
    return [path.with_name(path.name + suffix) for suffix in ("", "-wal", "-shm", "-journal")]


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
    """``made`` becomes the archive at ``target`` in one rename; an old archive's log and shared memory
    are removed first, since SQLite would otherwise replay that log onto the new file."""
    os.chmod(made, 0o600)  # (one person's history, on another machine: theirs to read)
    for old in sidecars(target)[1:]:
        old.unlink(missing_ok=True)
    os.replace(made, target)
