"""``archivist index``, ``embed``, ``status`` and ``watch``: the archive brought up to date and
shown, with progress on stderr; and the following of a workspace while a server runs (--watch)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from archivist.cli.arguments import (
    db_option,
    discover_option,
    replicate_options,
    reports_option,
    source_option,
    workspace_argument,
)
from archivist.cli.output import fail, info, interactive, one_line, plural, refuse
from archivist.cli.workspaces import (
    _database_problem,
    archive_to_read,
    check_archive_to_write,
    checked_sources,
    discovered_sources,
    replicating,
    run_line,
    shown,
    workspace_folder,
)
from archivist.errors import ArchivistError
from archivist.workspace import archive_path

if TYPE_CHECKING:
    from archivist.archive.indexer import Summary


KINDS_SQL = "SELECT kind, count(*) FROM documents GROUP BY kind ORDER BY kind"
PROBLEM_COUNTS_SQL = "SELECT status, count(*) FROM files WHERE status != 'indexed' GROUP BY status"
LAST_RUN_SQL = "SELECT finished_at FROM index_runs ORDER BY id DESC LIMIT 1"
STATUS_SOURCES_SQL = """
SELECT s.kind, s.path, (SELECT count(*) FROM documents d WHERE d.source = 'log:' || s.id) AS sessions, s.read_at
FROM log_sources s ORDER BY s.id
"""
HOSTS_SQL = "SELECT host, synced_at, files, problem FROM hosts ORDER BY host"


def _progress(label: str) -> Callable[[Iterable[Any]], Iterable[Any]] | None:
    if not interactive():
        return None

    def wrap(items: Iterable[Any]) -> Iterable[Any]:
        items = list(items)
        with click.progressbar(
            items,
            label=label,
            file=sys.stderr,
            show_pos=True,
            show_eta=True,
            item_show_func=lambda s: s.path[-40:] if s else None,
        ) as bar:
            yield from bar

    return wrap


class EmbedProgress:
    """A progress bar over documents, showing chunks embedded and their rate."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.started = time.perf_counter()

    def __call__(self, total: int) -> Callable[[int, int], None]:
        self.started = time.perf_counter()
        self.bar = click.progressbar(
            length=total,
            label="Embedding",
            file=sys.stderr,
            show_eta=True,
            show_pos=True,
            item_show_func=lambda text: text,
        )
        self.bar.__enter__()
        return self.tick

    def tick(self, documents: int, chunks: int) -> None:
        rate = chunks / max(time.perf_counter() - self.started, 1e-9)
        self.bar.update(documents, current_item=f"{chunks} chunks, {rate:.1f}/s")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


class SourceProgress:
    """A progress bar per agent-log source read whole, over its bytes, with the time left."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.label = ""
        self.shown = 0

    def __call__(self, label: str, done: int, total: int) -> None:
        if label != self.label:
            self.close()
            self.label, self.shown = label, 0
            self.bar = click.progressbar(
                length=max(total, 1),
                label=f"Reading {label[-60:]}",
                file=sys.stderr,
                show_eta=True,
                show_percent=True,
                item_show_func=lambda text: text,
            )
            self.bar.__enter__()
        if done > self.shown:
            self.bar.update(done - self.shown, current_item=f"{done / 1e6:,.0f} of {total / 1e6:,.0f} MB")
            self.shown = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


def run_embed(workspace: Path, path: str | None, db_path: Path | None) -> None:
    from archivist.semantic import embeddings

    info(f"Embedding the new and changed documents of {workspace}" + (f" under {path}" if path else ""))
    progress = EmbedProgress() if interactive() else None
    try:
        result = embeddings.embed_workspace(workspace, path, db_path, progress)
    except ArchivistError as error:
        fail(error)
    finally:
        if progress is not None:
            progress.close()
    click.echo(
        f"{workspace}: {result.embedded} documents embedded, {result.skipped} unchanged, "
        f"{result.chunks_embedded} chunks sent to the model, {result.chunks_reused} reused "
        f"({result.seconds:.1f}s)"
    )


def run_index(
    workspace: Path,
    db_path: Path | None,
    reports_dir: str | None,
    log_sources: Iterable[tuple[str, Path]] = (),
    err: bool = False,
) -> Summary:
    """Index ``workspace``; its one-line summary on stdout (``err``: on stderr, where stdout is JSON)."""
    from archivist.archive import indexer  # imported when used: `archivist mcp` starts faster without it

    info(f"Indexing {workspace} into {db_path or archive_path(workspace)}")
    reading = SourceProgress() if interactive() else None
    try:
        summary = indexer.index_workspace(
            workspace,
            db_path,
            reports_dir,
            progress=_progress("Indexing"),
            log_sources=log_sources,
            log_progress=reading,
        )
    except ArchivistError as error:
        fail(error)
    finally:
        if reading is not None:
            reading.close()
    click.echo(f"{workspace}: {summary.line()}", err=err)
    return summary


SERVE_AFTER_SECONDS = 5.0  # how long a server waits for agent logs still being read before it serves


def index_while_serving(
    workspace: Path,
    db_path: Path | None,
    reports_dir: str | None,
    log_sources: Iterable[tuple[str, Path]],
    then: Callable[[], None],
) -> None:
    """Index for a server about to start: the workspace's documents before it starts; the agent
    logs too where they take at most ``SERVE_AFTER_SECONDS`` more, else in the background while
    it serves (what is stored is committed as it goes, the newest sessions first, and the
    answers say that the archive is still being built: ``archive.building``). ``then`` runs
    once the index is done (embedding, following the workspace)."""
    import logging
    import threading

    from archivist.archive import indexer

    info(f"Indexing {workspace} into {db_path or archive_path(workspace)}")
    reading = threading.Event()  # the workspace's documents are stored; the logs are being read
    background = threading.Event()  # the server did not wait for the end
    deciding = threading.Lock()  # (who tells how the run ended: the server's start, or the run)
    ended: list[Summary | Exception] = []

    def heard(label: str, done: int, total: int) -> None:
        reading.set()

    def work() -> None:
        try:
            ended.append(
                indexer.index_workspace(workspace, db_path, reports_dir, log_sources=log_sources, log_progress=heard)
            )
        except Exception as error:  # told below, or by the server's start
            ended.append(error)
        finally:
            reading.set()
        with deciding:
            if not background.is_set():
                return  # (told by the server's start)
        told = ended[0]
        if isinstance(told, ArchivistError):  # the server goes on with what was stored
            click.echo(one_line(told), err=True)
            return
        if isinstance(told, Exception):
            logging.getLogger("archivist.cli").error("indexing in the background failed", exc_info=told)
            return
        click.echo(f"{workspace}: {told.line()}", err=True)
        then()

    indexing = threading.Thread(target=work, name="archivist-index", daemon=True)
    indexing.start()
    reading.wait()
    indexing.join(SERVE_AFTER_SECONDS)
    with deciding:
        if not ended:
            background.set()
    if ended:
        told = ended[0]
        if isinstance(told, ArchivistError) and told.code == "ARCHIVE_NOT_WRITTEN" and _readable(workspace, db_path):
            click.echo(f"{one_line(told)} Serving the archive as it is meanwhile.", err=True)
            return  # (a full disk: the archive is served as it stands, and the server says what to free)
        if isinstance(told, ArchivistError):
            fail(told)
        if isinstance(told, Exception):
            raise told
        click.echo(f"{workspace}: {told.line()}")
        then()
        return
    click.echo(
        "Still reading agent logs: serving what is stored so far (the newest sessions first); "
        "answers say that the archive is being built until it is.",
        err=True,
    )


def _readable(workspace: Path, db_path: Path | None) -> bool:
    """Whether the archive is there to be served, as it stands, without writing to it."""
    path = db_path or archive_path(workspace)
    return path.is_file() and _database_problem(path, tables=True) is None


def restored_copy(path: Path) -> str | None:
    """The replica the archive at ``path`` was restored from; None for one indexed here, or none."""
    if not path.is_file():
        return None
    from archivist.replication import restored_from

    return restored_from(path)


def refuse_restored(workspace: Path, db_path: Path | None, command: str) -> None:
    """A one-line refusal where the archive is a copy restored from a replica (``archivist restore``):
    an index here finds none of the sources it was indexed from, and would empty it (and, with
    --replicate-to, the replica too)."""
    path = db_path or archive_path(workspace)
    source = restored_copy(path)
    if source is not None:
        refuse(
            f"Not indexed: {shown(path)} is a copy restored from {source}, read as it is, never indexed into "
            f"(`archivist {command}` would find none of its sources here): serve it with "
            f"{run_line('serve', workspace, '--no-index')}, or `archivist restore` again for newer sessions.",
            "INVALID_PARAMETER",
        )


@click.command()
@workspace_argument
@db_option
@reports_option
@click.option("--show-problems", is_flag=True, help="List every skipped or degraded file with its reason.")
@click.option("--embed", is_flag=True, help="Also embed new and changed documents.")
@source_option
@discover_option
@replicate_options("indexing")
def index(
    workspace: Path | None,
    db_path: Path | None,
    reports_dir: str | None,
    show_problems: bool,
    embed: bool,
    source_arguments: tuple[str, ...],
    discover: bool,
    replicate_to: str | None,
    replicate_endpoint: str | None,
) -> None:
    """Index WORKSPACE, and its agent-log sources, into its archive (incremental, one transaction).

    --discover also reads every agent's logs found in their default locations, and needs no
    WORKSPACE: `archivist index --discover` keeps one's own history in the platform's data folder.
    --replicate-to streams the archive to a replica while it indexes (docs/replication.md).
    """
    workspace = workspace_folder(workspace, "index", discover)
    log_sources = checked_sources(source_arguments)
    if discover:
        log_sources += discovered_sources()
    check_archive_to_write(workspace, db_path)
    refuse_restored(workspace, db_path, "index")
    replicating(workspace, db_path, replicate_to, replicate_endpoint, strict=True)
    summary = run_index(workspace, db_path, reports_dir, log_sources)
    if show_problems:
        for problem in summary.problems:
            click.echo(f"  {problem.status}: {problem.path}: {problem.reason}")
    if embed:
        run_embed(workspace, None, db_path)


@click.command()
@workspace_argument
@click.argument("path", required=False)
@db_option
def embed(workspace: Path | None, path: str | None, db_path: Path | None) -> None:
    """Embed WORKSPACE's new and changed documents (only those under PATH, if given).

    Unchanged chunks never reach the model; an interrupted run resumes where it stopped.
    It indexes WORKSPACE first, so an unindexed folder gets its archive.
    """
    workspace = workspace_folder(workspace, "embed")
    check_archive_to_write(workspace, db_path)
    refuse_restored(workspace, db_path, "embed")
    run_embed(workspace, path, db_path)


@click.command()
@workspace_argument
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(workspace: Path | None, db_path: Path | None, as_json: bool) -> None:
    """Show what WORKSPACE's archive holds: documents by kind, each agent-log source, every file not read and why."""
    import sqlite_utils

    from archivist.archive.database import connect_read_only
    from archivist.archive.indexer import PROBLEMS_SQL

    workspace = workspace_folder(workspace, "status")
    path = archive_to_read(workspace, db_path)
    db = sqlite_utils.Database(connect_read_only(path))  # (it writes nothing: on a full disk too)
    kinds = dict(db.execute(KINDS_SQL).fetchall())
    problems = dict(db.execute(PROBLEM_COUNTS_SQL).fetchall())
    last = db.execute(LAST_RUN_SQL).fetchone()
    from archivist.archive import building
    from archivist.cli.search_output import tell_building

    told = building.told(db)
    sources = _rows(db, STATUS_SOURCES_SQL, ("kind", "path", "sessions", "read_at"))
    unread = _rows(db, PROBLEMS_SQL, ("path", "status", "reason"))
    synced = _rows(db, HOSTS_SQL, ("host", "synced_at", "files", "problem"))
    report = {
        "db_path": str(path),
        "documents": kinds,
        "problems": problems,
        "last_indexed_at": last[0] if last else None,
        "building": told,
        "sources": sources,
        "hosts": synced,
        "unread": unread,
    }
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(f"Archive: {path}")
    click.echo(f"Last indexed: {report['last_indexed_at']}")
    tell_building(told)
    for kind, count in kinds.items():
        click.echo(f"  {kind}: {count}")
    for state, count in problems.items():
        click.echo(f"  {state} files: {count}")
    _tell_sources(sources)
    _tell_hosts(synced)
    _tell_unread(unread)


def _rows(db: Any, sql: str, names: tuple[str, ...]) -> list[dict[str, Any]]:
    """The rows of ``sql`` as dictionaries of ``names``."""
    return [dict(zip(names, row)) for row in db.execute(sql).fetchall()]


def _tell_sources(sources: list[dict[str, Any]]) -> None:
    """Each agent-log source: its kind, its path, its sessions and when it was last read."""
    if not sources:
        click.echo("Sources: none (add one with: archivist sources --discover, or index --source KIND=PATH)")
        return
    click.echo("Sources:")
    for source in sources:
        click.echo(
            f"  {source['kind']:15} {source['path']}  {plural(source['sessions'], 'session')}, "
            f"last read {source['read_at'] or 'never'}"
        )


def _tell_hosts(synced: list[dict[str, Any]]) -> None:
    """Each machine synced over SSH (``archivist sync``): its last sync, the files it listed, and
    what failed of its last try, if it failed."""
    if not synced:
        return
    from archivist.hosts import one_line

    click.echo("Hosts:")
    for host in synced:
        line = f"  {one_line(host['host'])}  last synced {host['synced_at'] or 'never'}, {plural(host['files'] or 0, 'file')}"
        if host["problem"]:
            line += f"; last sync failed: {one_line(host['problem'])}"
        click.echo(line)


def _tell_unread(unread: list[dict[str, Any]]) -> None:
    """Every file that could not be read, or was read only in part, with why."""
    if not unread:
        return
    click.echo("Files not read (skipped) or read in part (degraded):")
    for problem in unread:
        click.echo(f"  {problem['status']}: {problem['path']}: {problem['reason']}")


@click.command()
@workspace_argument
@db_option
@click.option("--polling", is_flag=True, help="Poll for changes instead of waiting for filesystem events.")
def watch(workspace: Path | None, db_path: Path | None, polling: bool) -> None:
    """Follow WORKSPACE and its agent-log sources: index again as soon as a file changes (Ctrl-C stops)."""
    from archivist.archive.watch import follow

    workspace = workspace_folder(workspace, "watch")
    check_archive_to_write(workspace, db_path)
    refuse_restored(workspace, db_path, "watch")
    click.echo(f"Following {workspace} (Ctrl-C stops)", err=True)
    embed = vectors_follow(workspace, db_path)

    def report(summary: Summary) -> None:
        click.echo(f"{time.strftime('%H:%M:%S')} {summary.line()}", err=True)
        if embed:
            embed(summary)

    def ready() -> None:
        click.echo("Watching for changes", err=True)

    try:
        follow(workspace, db_path, on_run=report, force_polling=polling or None, on_ready=ready)
    except ArchivistError as error:
        fail(error)


def start_following(workspace: Path, db_path: Path | None) -> None:
    """Keep the archive up to date in the background while a server runs (--watch)."""
    from archivist.archive.watch import follow_in_background

    follow_in_background(workspace, db_path, on_run=vectors_follow(workspace, db_path))


def vectors_follow(workspace: Path, db_path: Path | None) -> Callable[[Any], None] | None:
    """For a watch of an archive that has been embedded: what wakes its embedding in the background."""
    from archivist.archive.schema import is_embedded
    from archivist.semantic.embeddings import BackgroundEmbedder

    db_file = Path(db_path) if db_path else archive_path(workspace)
    return BackgroundEmbedder(db_file).wake if is_embedded(db_file) else None
