"""``archivist sync``: the agent logs of other machines brought over SSH (``archivist.hosts``) and
read into the archive, after this machine's own sources."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from archivist.cli.arguments import db_option, workspace_argument
from archivist.cli.indexing import refuse_restored, run_index
from archivist.cli.output import fail, plural
from archivist.cli.workspaces import check_archive_to_write, workspace_folder
from archivist.errors import ArchivistError
from archivist.workspace import archive_path

if TYPE_CHECKING:
    from archivist.hosts import Synced

HOST_SQL = """
INSERT INTO hosts (host, synced_at, files, problem) VALUES (:host, :synced_at, :files, :problem)
ON CONFLICT (host) DO UPDATE SET
    synced_at = coalesce(excluded.synced_at, hosts.synced_at),
    files = CASE WHEN excluded.synced_at IS NULL THEN hosts.files ELSE excluded.files END,
    problem = excluded.problem
"""


@click.command()
@workspace_argument
@db_option
@click.option("--host", "host_name", metavar="HOST", help="Sync this host only (as ssh names it: ~/.ssh/config works).")
@click.option("--user", metavar="USER", help="The user to log in as on HOST (ssh -l).")
@click.option("--port", type=int, metavar="PORT", help="HOST's SSH port (ssh -p).")
def sync(
    workspace: Path | None, db_path: Path | None, host_name: str | None, user: str | None, port: int | None
) -> None:
    """Read the agent logs of other machines over SSH into WORKSPACE's archive.

    With --host, that machine alone; else this machine's sources, then each host of
    WORKSPACE/archivist.toml ([[hosts]] host = "laptop" user = "me" port = 22). Only the files
    changed since the last sync are brought over (into .archivist/hosts/HOST); the remote needs
    a POSIX shell and tar, and nothing is written there. ssh runs with BatchMode (keys and
    agent only); ARCHIVIST_SSH_COMMAND replaces `ssh`. A host that fails is told in one line
    and the others go on; the exit status is 1 if any failed.
    """
    from archivist import hosts

    workspace = workspace_folder(workspace, "sync")
    try:
        if host_name is not None:
            chosen = [hosts.check_host(hosts.Host(host_name, user, port))]
        else:
            if user is not None or port is not None:
                raise hosts.invalid(
                    "--user and --port need --host", "They say how to reach one host.", "Add --host HOST."
                )
            chosen = hosts.configured_hosts(workspace)
    except ArchivistError as error:
        fail(error)
    check_archive_to_write(workspace, db_path)
    refuse_restored(workspace, db_path, "sync")
    archive = db_path or archive_path(workspace)
    if host_name is None and not chosen:
        click.echo(f"No hosts in {workspace / hosts.CONFIG_NAME}: this machine's sources only.", err=True)
    failed = 0
    synced: list[tuple[hosts.Synced, list[tuple[str, Path]]]] = []
    for host in chosen:
        try:
            done = hosts.sync(host, archive, _now())
        except Exception as error:  # (one host's failure, whatever it is, is its one line: the others go on)
            said = str(error) if isinstance(error, hosts.HostFailed) else f"{type(error).__name__}: {error}"
            line = hosts.one_line(said)[:500]
            click.echo(f"❌ {host.name}: {line}", err=True)
            _remember(archive, host.name, None, 0, line, [])
            failed += 1
            continue
        found = _sources(done, hosts.sync_folder(archive, host.name) / "home")
        problem = hosts.one_line(done.problem)[:500] if done.problem else None
        if problem:
            click.echo(f"❌ {host.name}: {problem}", err=True)
            failed += 1
        _remember(archive, host.name, _now(), done.listed, problem, found)
        synced.append((done, found))
    run_index(workspace, db_path, None)
    for done, found in synced:
        refused = ""
        if done.refused:
            refused = f"; {plural(done.refused, 'name')} refused, e.g. {hosts.one_line(done.refused_names[0])[:120]}"
        click.echo(
            f"{done.host}: {plural(len(found), 'source')}, {plural(done.listed, 'file')} listed, "
            f"{done.fetched} brought over ({done.fetched_bytes} bytes), {done.deleted} deleted, "
            f"in {done.seconds:.1f} s{refused}"
        )
    if failed:
        sys.exit(1)


def _sources(done: Synced, home: Path) -> list[tuple[str, Path]]:
    """The sources of the folders found on a host: each kind's, where its reader takes the folder."""
    from archivist import hosts
    from archivist.archive import sources

    kinds = hosts.kinds_by_folder()
    found = []
    for folder in done.folders:
        path = home / folder
        for kind in kinds.get(folder, []):
            if path.exists() and sources._holds(kind, path):
                found.append((kind, path))
    return found


def _remember(
    archive: Path, host: str, synced_at: str | None, files: int, problem: str | None, found: list[tuple[str, Path]]
) -> None:
    """The host's last sync in the archive, and its sources (``log_sources.host``)."""
    from archivist.archive import schema, sources

    db = schema.open_archive(archive)
    try:
        with db.atomic():
            db.execute(HOST_SQL, {"host": host, "synced_at": synced_at, "files": files, "problem": problem})
            for kind, path in found:  # (a folder read before as this machine's takes its host)
                sources.add(db, kind, path)
                db.execute("UPDATE log_sources SET host = ? WHERE kind = ? AND path = ?", [host, kind, str(path)])
    finally:
        db.close()


def _now() -> str:
    from archivist.archive.sources import now

    return now()
