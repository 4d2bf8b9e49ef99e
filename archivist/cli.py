"""The ``archivist`` command line."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from archivist.errors import ArchivistError
from archivist.workspace import archive_path

if TYPE_CHECKING:
    from archivist.build.indexer import Summary

KINDS_SQL = "SELECT kind, count(*) FROM documents GROUP BY kind ORDER BY kind"
PROBLEM_COUNTS_SQL = "SELECT status, count(*) FROM files WHERE status != 'indexed' GROUP BY status"
LAST_RUN_SQL = "SELECT finished_at FROM index_runs ORDER BY id DESC LIMIT 1"
_MARK_RE = re.compile(r"<mark>(.*?)</mark>", re.S)

WORKSPACE_ENV = "ARCHIVIST_WORKSPACE"
# The kinds of agent logs (archivist.build.agentlogs.store.KINDS), named here so that --help does not import them.
LOG_KINDS = ("claude-code", "codex", "gemini-cli", "claude-export", "chatgpt-export", "aider", "specstory", "llm")

# Checked by the command itself (workspace_folder), so that a missing, absent or wrong
# workspace is one line and exit status 1 rather than click's usage error.
workspace_argument = click.argument("workspace", required=False, metavar="WORKSPACE", type=click.Path(path_type=Path))
db_option = click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Archive file (default: WORKSPACE/.archivist/archive.db).",
)
allow_workspace_option = click.option(
    "--allow-workspace",
    "allowed_workspaces",
    multiple=True,
    envvar="ARCHIVIST_ALLOW_WORKSPACES",
    type=click.Path(file_okay=False, path_type=Path),
    help="Another indexed workspace that MCP callers may select with workspace_path (repeatable; "
    "ARCHIVIST_ALLOW_WORKSPACES lists them separated by ':'). No other folder is ever read.",
)
allow_host_option = click.option(
    "--allow-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="A host name (besides localhost and 127.0.0.1) that requests may be addressed to, and pages served from (repeatable).",
)
watch_option = click.option(
    "--watch", is_flag=True, help="Follow the workspace and its sources: index again as soon as a file changes."
)
source_option = click.option(
    "--source",
    "source_arguments",
    multiple=True,
    metavar="KIND=PATH",
    help="Also read an agent log where it is (remembered for later runs). Kinds: " + ", ".join(LOG_KINDS) + ".",
)
reports_option = click.option(
    "--reports-dir",
    default=None,
    help="Folder of the workspace holding <command>/*.md reports (default: as last indexed, else 'reports').",
)


def fail(error: ArchivistError) -> NoReturn:
    click.echo(f"{error.message}\n[{error.code}]", err=True)
    sys.exit(1)


def refuse(problem: str, code: str = "DIRECTORY_NOT_FOUND") -> NoReturn:
    """Bad input on the command line itself: one line on stderr, exit status 1, nothing done."""
    click.echo(f"❌ {problem} [{code}]", err=True)
    sys.exit(1)


def shown(path: Path | str) -> str:
    """A path as a message names it: absolute, on one line."""
    text = os.path.abspath(path)
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def run_line(*words: Path | str) -> str:
    """`archivist WORDS...` as a user can paste it into a shell."""
    return "`" + " ".join(["archivist", *(shlex.quote(shown(w) if isinstance(w, Path) else w) for w in words)]) + "`"


# What each command takes, for the message when its workspace is left out.
USAGE = {"embed": "WORKSPACE [PATH]", "search": "WORKSPACE QUERY"}


def workspace_folder(workspace: Path | None, command: str) -> Path:
    """WORKSPACE (``~`` expanded) if it is an existing folder; otherwise a one-line error."""
    if workspace is None:
        if command == "mcp":
            refuse(
                f"No workspace given: pass it as the argument (archivist mcp /path/to/workspace) "
                f"or set {WORKSPACE_ENV}=/path/to/workspace.",
                "INVALID_PARAMETER",
            )
        refuse(f"No workspace given: run `archivist {command} {USAGE.get(command, 'WORKSPACE')}`.", "INVALID_PARAMETER")
    folder = Path(os.path.expanduser(workspace))
    if os.path.isdir(folder):
        return folder
    if not os.path.exists(folder):
        if command in ("index", "embed", "serve"):
            refuse(f"Workspace not found: no folder at {shown(folder)}: check the path, or create the folder first.")
        refuse(
            f"Workspace not found: no folder at {shown(folder)}: check the path "
            f"(a folder is searchable once `archivist index FOLDER` has run)."
        )
    what = "a file" if os.path.isfile(folder) else "not a folder"
    refuse(
        f"Workspace is not a folder: {shown(folder)} is {what}: give the workspace's folder "
        f"(an archive file goes with --db)."
    )


def _database_problem(path: Path, tables: bool) -> str | None:
    """Why the file at ``path`` is not an archive to read (tables=True) or to index into; None if it is."""
    import sqlite3  # the check only reads the schema: the interpreter's own SQLite will do

    if not os.path.isfile(path):
        return "not a file"
    try:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
        try:
            found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'documents'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as error:
        return str(error)
    return "it has no documents table" if tables and not found else None


def archive_to_read(workspace: Path, db_path: Path | None, note: str = "") -> Path:
    """The archive a reading command opens: it must exist and be an archive. Nothing is created."""
    path = db_path or archive_path(workspace)
    if not os.path.lexists(path):
        if db_path is not None:
            refuse(f"No archive at {shown(path)}: run {run_line('index', workspace, '--db', path)} first{note}.")
        refuse(f"No archive in {shown(workspace)}: run {run_line('index', workspace)} first{note}.")
    problem = _database_problem(path, tables=True)
    if problem is not None:
        refuse(f"Not an Archivist archive: {shown(path)} ({problem}): {_rebuild_hint(workspace, db_path)}.")
    from archivist.build import schema

    if schema.upgrade(path):  # written by an older version: its schema catches up, nothing is lost
        click.echo(f"Upgraded the archive at {shown(path)} to this version's schema.", err=True)
    return path


def check_archive_to_write(workspace: Path, db_path: Path | None) -> None:
    """An archive that indexing would open: absent (it is created) or a SQLite database."""
    path = db_path or archive_path(workspace)
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


def _progress(label: str) -> Callable[[Iterable[Any]], Iterable[Any]]:
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


def run_embed(workspace: Path, path: str | None, db_path: Path | None) -> None:
    from archivist.semantic import embeddings

    progress = EmbedProgress()
    try:
        result = embeddings.embed_workspace(workspace, path, db_path, progress)
    except ArchivistError as error:
        fail(error)
    finally:
        progress.close()
    click.echo(
        f"{workspace}: {result.embedded} documents embedded, {result.skipped} unchanged, "
        f"{result.chunks_embedded} chunks sent to the model, {result.chunks_reused} reused "
        f"({result.seconds:.1f}s)"
    )


def run_index(
    workspace: Path, db_path: Path | None, reports_dir: str | None, log_sources: Iterable[tuple[str, Path]] = ()
) -> Summary:
    from archivist.build import indexer  # imported when used: `archivist mcp` starts faster without it

    try:
        summary = indexer.index_workspace(
            workspace, db_path, reports_dir, progress=_progress("Indexing"), log_sources=log_sources
        )
    except ArchivistError as error:
        fail(error)
    click.echo(f"{workspace}: {summary.line()}")
    return summary


@click.group()
@click.version_option(package_name="archivist")
def cli() -> None:
    """Archivist: one searchable SQLite archive of your AI conversations, reports, memories and records."""


@cli.command()
@workspace_argument
@db_option
@reports_option
@click.option("--show-problems", is_flag=True, help="List every skipped or degraded file with its reason.")
@click.option("--embed", is_flag=True, help="Also embed new and changed documents.")
@source_option
def index(
    workspace: Path | None,
    db_path: Path | None,
    reports_dir: str | None,
    show_problems: bool,
    embed: bool,
    source_arguments: tuple[str, ...],
) -> None:
    """Index WORKSPACE, and its agent-log sources, into its archive (incremental, one transaction)."""
    workspace = workspace_folder(workspace, "index")
    log_sources = checked_sources(source_arguments)
    check_archive_to_write(workspace, db_path)
    summary = run_index(workspace, db_path, reports_dir, log_sources)
    if show_problems:
        for problem in summary.problems:
            click.echo(f"  {problem.status}: {problem.path}: {problem.reason}")
    if embed:
        run_embed(workspace, None, db_path)


@cli.command()
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
    run_embed(workspace, path, db_path)


@cli.command()
@workspace_argument
@db_option
@reports_option
@click.option("-h", "--host", default="127.0.0.1", show_default=True)
@click.option("-p", "--port", default=8001, show_default=True, type=int)
@click.option("--no-index", is_flag=True, help="Serve the archive as it is, without indexing first.")
@click.option("--root", is_flag=True, help="Print a sign-in URL for the root user (needed to run enrichments).")
@click.option("--embed", is_flag=True, help="Also embed new and changed documents before serving.")
@source_option
@watch_option
@allow_workspace_option
@allow_host_option
def serve(
    workspace: Path | None,
    db_path: Path | None,
    reports_dir: str | None,
    host: str,
    port: int,
    no_index: bool,
    root: bool,
    embed: bool,
    source_arguments: tuple[str, ...],
    watch: bool,
    allowed_workspaces: tuple[Path, ...],
    allowed_hosts: tuple[str, ...],
) -> None:
    """Index WORKSPACE, then serve its archive in Datasette (--watch: and keep it up to date).

    Bound to loopback (the default), it answers only requests addressed to localhost or
    127.0.0.1 and from its own pages (--allow-host adds names). With ARCHIVIST_TOKEN set,
    every request must carry the token; the printed URL signs a browser in.
    """
    import asyncio

    import uvicorn

    from archivist.web.app import make_datasette, start
    from archivist.web.guard import guarded, token_from_environment

    workspace = workspace_folder(workspace, "serve")
    if no_index and source_arguments:
        refuse("--source adds a source to read, and --no-index reads nothing: give one or the other.", "INVALID_SOURCE")
    log_sources = checked_sources(source_arguments)
    if no_index:
        db_path = archive_to_read(workspace, db_path, ", or serve without --no-index")
    else:
        check_archive_to_write(workspace, db_path)
        run_index(workspace, db_path, reports_dir, log_sources)
        if embed:
            run_embed(workspace, None, db_path)
        db_path = db_path or archive_path(workspace)
    allowed = checked_workspaces(allowed_workspaces)
    token = token_from_environment()
    settings = {
        "workspace": str(workspace.resolve()),
        "allowed_workspaces": [str(folder) for folder in allowed],
        "allowed_hosts": list(allowed_hosts),
    }
    datasette = make_datasette(db_path, settings)
    asyncio.run(start(datasette))
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
    click.echo(f"Serving {workspace} at {url}" + (f"?token={token}" if token else ""), err=False)
    if root:
        click.echo(f"Sign in as root: http://{host}:{port}/-/auth-token?token={datasette._root_token}")
    sys.stdout.flush()
    app = datasette.app()  # its plugin checks Host and Origin; the token is checked outside it (see web.host_guard)
    if watch:
        start_following(workspace, db_path)
    uvicorn.run(guarded(app, allowed_hosts, token) if token else app, host=host, port=port, log_level="warning")


@cli.command()
@click.argument("workspace", required=False, envvar=WORKSPACE_ENV, type=click.Path(path_type=Path))
@db_option
@click.option("--http", is_flag=True, help="Serve streamable HTTP at /mcp instead of stdio.")
@click.option("-p", "--port", default=8765, show_default=True, type=int, help="With --http: the port (on 127.0.0.1).")
@allow_workspace_option
@allow_host_option
@click.option("--conformance-fixtures", is_flag=True, hidden=True, help="Add the MCP conformance suite's fixture tool.")
@watch_option
def mcp(
    workspace: Path | None,
    db_path: Path | None,
    http: bool,
    port: int,
    allowed_workspaces: tuple[Path, ...],
    allowed_hosts: tuple[str, ...],
    conformance_fixtures: bool,
    watch: bool,
) -> None:
    """Serve WORKSPACE's archive to MCP clients (stdio by default).

    Without WORKSPACE, the ARCHIVIST_WORKSPACE environment variable names it (MCP
    clients start servers from a working directory of their own). Tools read WORKSPACE and the workspaces given with
    --allow-workspace, nothing else.
    With --http, requests must come for 127.0.0.1 or localhost (DNS rebinding
    protection; --allow-host adds names) and, when ARCHIVIST_TOKEN is set, carry it
    as a bearer token. Nothing but protocol is written to stdout.
    """
    workspace = workspace_folder(workspace, "mcp")
    db_path = archive_to_read(workspace, db_path)
    allowed = checked_workspaces(allowed_workspaces)
    if watch:
        start_following(workspace, db_path)
    if not http:
        from archivist.mcp.stdio import serve as serve_stdio  # answers initialize before the MCP SDK loads

        serve_stdio(db_path, workspace.resolve(), allowed, conformance_fixtures)
        return
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from archivist.mcp.tools import create_server
    from archivist.web.guard import guarded, token_from_environment

    server = create_server(db_path, workspace.resolve(), allowed, conformance_fixtures)
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        host="127.0.0.1",
        # the guard below checks Host, Origin and the token, as it does for archivist serve
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    click.echo(f"MCP (streamable HTTP) for {workspace} at http://127.0.0.1:{port}/mcp", err=True)
    uvicorn.run(guarded(app, allowed_hosts, token_from_environment()), host="127.0.0.1", port=port, log_level="warning")


def _print_conversations(rows: list[dict[str, Any]]) -> None:
    for number, row in enumerate(rows, start=1):
        facts = " · ".join(str(v) for v in (row["type"], row["date"]) if v)
        click.echo(click.style(f"{number}. {row['conversation']}", bold=True) + (f"  [{facts}]" if facts else ""))
        click.echo(f"   {row['path']}")
        excerpt = " ".join((row.get("excerpt") or "").split())
        click.echo("   " + _MARK_RE.sub(lambda m: click.style(m[1], fg="yellow", bold=True), excerpt))


def _print_reports(rows: list[dict[str, Any]]) -> None:
    for number, row in enumerate(rows, start=1):
        when = (row["date"] or "undated")[:10]
        click.echo(
            click.style(f"{number}. {row['report_name']}", bold=True)
            + f"  [{row['command_name']} · {when} · {row['match_count']} matches]"
        )
        click.echo(f"   {row['excerpt']}")
        click.echo(f"   {row['link']}")


@cli.command()
@workspace_argument
@click.argument("query", required=False, metavar="QUERY")
@db_option
@click.option("--date-range", default="", help="YYYY-MM (a whole month) or YYYY-MM-DD (one day).")
@click.option("--type", "conversation_type", default="", help="Conversation type, e.g. debug, plan, brainstorm.")
@click.option("--limit", default="", help="Maximum results, 1 to 100 (default 20).")
@click.option("--reports", is_flag=True, help="Search analysis reports (search_reports) instead of conversations.")
@click.option("--command", "command_filter", default="", help="With --reports: only this command's reports.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def search(
    workspace: Path | None,
    query: str | None,
    db_path: Path | None,
    date_range: str,
    conversation_type: str,
    limit: str,
    reports: bool,
    command_filter: str,
    as_json: bool,
) -> None:
    """Search WORKSPACE's conversations (or, with --reports, its reports) for QUERY."""
    workspace = workspace_folder(workspace, "search")
    if query is None:
        refuse("No query given: run `archivist search WORKSPACE QUERY`.", "INVALID_QUERY")
    db_path = archive_to_read(workspace, db_path)
    if reports:
        name, params = "search_reports", {"query": query, "command_filter": command_filter, "max_results": limit}
    else:
        name = "search_workspace"
        params = {"query": query, "date_range": date_range, "conversation_type": conversation_type, "limit": limit}
    try:
        from archivist.queries.runner import Archive

        with Archive(db_path) as archive:
            rows = archive.run(name, params)
    except ArchivistError as error:
        fail(error)
    if as_json:
        click.echo(json.dumps({"results": rows}, indent=2, ensure_ascii=False))
    elif not rows:
        click.echo("No results.", err=True)
    else:
        (_print_reports if reports else _print_conversations)(rows)


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def start_following(workspace: Path, db_path: Path | None) -> None:
    """Keep the archive up to date in the background while a server runs (--watch)."""
    from archivist.build.watch import follow_in_background

    follow_in_background(workspace, db_path, on_run=vectors_follow(workspace, db_path))


def vectors_follow(workspace: Path, db_path: Path | None) -> Callable[[Any], None] | None:
    """For a watch of an archive that has been embedded: what wakes its embedding in the background."""
    from archivist.semantic.embeddings import BackgroundEmbedder, has_vectors

    db_file = Path(db_path) if db_path else archive_path(workspace)
    return BackgroundEmbedder(db_file).wake if has_vectors(db_file) else None


def checked_sources(arguments: Iterable[str]) -> list[tuple[str, Path]]:
    """Each KIND=PATH of the command line, checked: INVALID_SOURCE (nothing added) unless all are sources."""
    from archivist.build.agentlogs import store

    checked = []
    for argument in arguments:
        try:
            kind, path = store.parse_argument(argument)
            store.check(kind, path)
        except ArchivistError as error:
            fail(error)
        checked.append((kind, path))
    return checked


@cli.command()
@workspace_argument
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the sources as JSON.")
@click.option("--discover", is_flag=True, help="Add the default locations of each kind that exist, then index.")
@click.option("--remove", "removals", multiple=True, metavar="KIND=PATH", help="Forget a source and its documents.")
def sources(
    workspace: Path | None, db_path: Path | None, as_json: bool, discover: bool, removals: tuple[str, ...]
) -> None:
    """List WORKSPACE's agent-log sources with their document counts and last read.

    --discover looks for each kind's default location under the home folder
    (CLAUDE_CONFIG_DIR, CODEX_HOME and LLM_USER_PATH are honoured) and adds those that
    exist; --remove drops a source and its documents. Sources are read where they are,
    never copied or changed.
    """
    from archivist.build import schema
    from archivist.build.agentlogs import store

    workspace = workspace_folder(workspace, "sources")
    if discover:
        found = store.discover()
        for kind, path in found:
            click.echo(f"Found {kind}: {path}", err=True)
        if not found:
            click.echo("Found no agent logs in their default locations.", err=True)
        check_archive_to_write(workspace, db_path)
        run_index(workspace, db_path, None, found)
    path = archive_to_read(workspace, db_path)
    if removals:
        db = schema.open_archive(path)
        try:
            with db.atomic():
                for argument in removals:
                    try:
                        kind, source_path = store.parse_argument(argument)
                        removed = store.remove(db, kind, source_path)
                    except ArchivistError as error:
                        fail(error)
                    click.echo(f"Removed {kind}: {source_path} ({removed} documents)", err=True)
        finally:
            db.close()
    db = schema.open_archive(path)
    try:
        rows = store.listing(db)
    finally:
        db.close()
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("No agent-log sources. Add one with: archivist index WORKSPACE --source KIND=PATH")
    for row in rows:
        click.echo(
            f"{row['kind']:15} {row['path']}  {plural(row['documents'], 'conversation')}, "
            f"{plural(row['messages'], 'message')}, "
            f"last read {row['read_at'] or 'never'}"
        )


@cli.command()
@workspace_argument
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(workspace: Path | None, db_path: Path | None, as_json: bool) -> None:
    """Show what WORKSPACE's archive holds."""
    import sqlite_utils

    workspace = workspace_folder(workspace, "status")
    path = archive_to_read(workspace, db_path)
    db = sqlite_utils.Database(path)
    kinds = dict(db.execute(KINDS_SQL).fetchall())
    problems = dict(db.execute(PROBLEM_COUNTS_SQL).fetchall())
    last = db.execute(LAST_RUN_SQL).fetchone()
    report = {
        "db_path": str(path),
        "documents": kinds,
        "problems": problems,
        "last_indexed_at": last[0] if last else None,
    }
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(f"Archive: {path}")
    click.echo(f"Last indexed: {report['last_indexed_at']}")
    for kind, count in kinds.items():
        click.echo(f"  {kind}: {count}")
    for state, count in problems.items():
        click.echo(f"  {state} files: {count}")


@cli.command()
@workspace_argument
@db_option
@click.option("--polling", is_flag=True, help="Poll for changes instead of waiting for filesystem events.")
def watch(workspace: Path | None, db_path: Path | None, polling: bool) -> None:
    """Follow WORKSPACE and its agent-log sources: index again as soon as a file changes (Ctrl-C stops)."""
    from archivist.build.watch import follow

    workspace = workspace_folder(workspace, "watch")
    check_archive_to_write(workspace, db_path)
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
