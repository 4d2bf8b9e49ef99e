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
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from archivist.agents.kinds import KINDS as LOG_KINDS
from archivist.errors import ArchivistError
from archivist.workspace import archive_path

if TYPE_CHECKING:
    from archivist.archive.indexer import Summary

T = TypeVar("T")

KINDS_SQL = "SELECT kind, count(*) FROM documents GROUP BY kind ORDER BY kind"
PROBLEM_COUNTS_SQL = "SELECT status, count(*) FROM files WHERE status != 'indexed' GROUP BY status"
LAST_RUN_SQL = "SELECT finished_at FROM index_runs ORDER BY id DESC LIMIT 1"
_MARK_RE = re.compile(r"<mark>(.*?)</mark>", re.S)

WORKSPACE_ENV = "ARCHIVIST_WORKSPACE"

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
    help="A host name (besides localhost and 127.0.0.1) that requests may be addressed to (repeatable).",
)


ALLOW_ORIGINS_ENV = "ARCHIVIST_ALLOW_ORIGINS"


class _Origins(click.types.StringParamType):
    """Origins as given on the command line; ARCHIVIST_ALLOW_ORIGINS separates them by commas or spaces."""

    def split_envvar_value(self, rv: str) -> list[str]:
        return rv.replace(",", " ").split()


allow_origin_option = click.option(
    "--allow-origin",
    "allowed_origins",
    multiple=True,
    metavar="ORIGIN",
    envvar=ALLOW_ORIGINS_ENV,
    type=_Origins(),
    help="An origin (scheme://host[:port]) besides the server's own whose pages may call it (repeatable; "
    f"{ALLOW_ORIGINS_ENV} lists them separated by commas or spaces). Any other Origin is refused.",
)
no_token_option = click.option(
    "--no-token",
    is_flag=True,
    help="Serve without a token, on purpose: anyone who can reach the port can read the archive (warned at each start).",
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
    """An error of the work itself: what was wrong, why and what to try, on one line of stderr; exit status 1."""
    click.echo(one_line(error), err=True)
    sys.exit(1)


def one_line(error: ArchivistError) -> str:
    """The error's problem, why and hint (the ❌ / ℹ️ / 💡 lines elsewhere) as one line, with its code."""
    problem = " ".join(error.problem.split()).rstrip(".")
    rest = " ".join(" ".join(part.split()) for part in (error.why, error.hint) if part)
    return f"❌ {problem}" + (f": {rest}" if rest else "") + f" [{error.code}]"


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
        return text_path(folder, "workspace")
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

    from archivist.archive.database import read_only_uri

    if not os.path.isfile(path):
        return "not a file"
    try:
        conn = sqlite3.connect(read_only_uri(path), uri=True)
        try:
            found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'documents'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as error:
        return str(error)
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


def checked_origins(origins: Iterable[str]) -> list[str]:
    """The operator's allowed origins, each a scheme, a host and maybe a port, as a browser writes it."""
    from archivist.web.guard import parse_origin, shown_origin

    found = []
    for origin in origins:
        parsed = parse_origin(origin.strip())
        if parsed is None:
            refuse(
                f"Not an origin: {origin!r}: --allow-origin and {ALLOW_ORIGINS_ENV} take what a browser "
                f"sends as Origin, a scheme, a host and an optional port: try --allow-origin http://127.0.0.1:3000.",
                "INVALID_PARAMETER",
            )
        found.append(shown_origin(parsed))
    return found


def server_token(no_token: bool) -> str | None:
    """The token every request must carry: ARCHIVIST_TOKEN's, else a new one made now; None with --no-token."""
    from archivist.web.guard import TOKEN_ENV, new_token, token_from_environment

    given = token_from_environment()
    if no_token and given:
        refuse(
            f"--no-token and {TOKEN_ENV} disagree: --no-token serves without a token, {TOKEN_ENV} sets one: "
            f"unset {TOKEN_ENV}, or leave out --no-token.",
            "INVALID_PARAMETER",
        )
    return None if no_token else given or new_token()


def tell_token(token: str | None, port: int) -> None:
    """On stderr: where a token made at this start comes from, or that there is none (every start)."""
    from archivist.web.guard import token_from_environment

    if token is None:
        click.echo(
            f"Warning: --no-token: this server asks for no token; anyone who can reach port {port} "
            "can read the archive.",
            err=True,
        )
    elif token_from_environment() is None:
        click.echo("(a new token at each start: set ARCHIVIST_TOKEN to keep one)", err=True)


class _CurrentStderr:
    """sys.stderr as it is when a line is written (a test runner may swap it between commands)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def log_to_stderr() -> Callable[[], None]:
    """The ``archivist`` logger's INFO, and every logger's warnings and errors, each as one plain
    line on stderr; libraries' INFO stays out. Returns what puts the loggers back as they were.

    Without it (no -v), Python's own last resort shows warnings and errors alike, one plain line
    each: so the commands configure logging only when asked, and a command that logs nothing
    never imports it. The handler on the root logger also keeps a library's own
    ``logging.basicConfig`` (the MCP SDK's, at INFO) from adding a second, formatted handler.
    """
    import logging

    def wanted(record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or record.name.split(".")[0] == "archivist"

    handler = logging.StreamHandler(_CurrentStderr())
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.addFilter(wanted)
    root, ours = logging.getLogger(), logging.getLogger("archivist")
    levels = root.level, ours.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    ours.setLevel(logging.INFO)

    def restore() -> None:
        root.removeHandler(handler)
        root.setLevel(levels[0])
        ours.setLevel(levels[1])

    return restore


def interactive() -> bool:
    """Whether a person watches stderr (a terminal): progress bars are drawn only for one."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


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
    workspace: Path, db_path: Path | None, reports_dir: str | None, log_sources: Iterable[tuple[str, Path]] = ()
) -> Summary:
    from archivist.archive import indexer  # imported when used: `archivist mcp` starts faster without it

    info(f"Indexing {workspace} into {db_path or archive_path(workspace)}")
    try:
        summary = indexer.index_workspace(
            workspace, db_path, reports_dir, progress=_progress("Indexing"), log_sources=log_sources
        )
    except ArchivistError as error:
        fail(error)
    click.echo(f"{workspace}: {summary.line()}")
    return summary


@click.group()
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Tell what is being done, one line per step on stderr (without it: only warnings and errors).",
)
@click.version_option(package_name="archivist")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """Archivist: one searchable SQLite archive of your AI conversations, reports, memories and records."""
    if verbose:
        ctx.meta[VERBOSE] = True
    # `archivist mcp` tells its client's log when the embedding model is ready: a person reads that log
    if verbose or ctx.invoked_subcommand == "mcp":
        ctx.call_on_close(log_to_stderr())
    if not interactive():  # the model's libraries draw their progress bars only for a terminal too
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


VERBOSE = "archivist.verbose"  # in the command's context: -v was given


def info(message: str) -> None:
    """A step of the command, told on stderr with -v (the archivist logger's INFO); without -v, nothing."""
    context = click.get_current_context(silent=True)
    if context is not None and context.meta.get(VERBOSE):
        import logging

        logging.getLogger("archivist.cli").info(message)


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
@allow_origin_option
@no_token_option
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
    allowed_origins: tuple[str, ...],
    no_token: bool,
) -> None:
    """Index WORKSPACE, then serve its archive in Datasette (--watch: and keep it up to date).

    Closed by default: every request must carry a token, made at each start (or
    ARCHIVIST_TOKEN's). The printed URL carries it and signs a browser in; other clients
    send Authorization: Bearer <token>. --no-token serves without one, on purpose.
    Bound to loopback (the default), it answers only requests addressed to localhost or
    127.0.0.1 (--allow-host adds names), and only pages of its own origin (the same
    scheme, host and port) may call it (--allow-origin adds origins). Every page sends a
    Content-Security-Policy that allows only the app's own resources.
    """
    import asyncio
    from urllib.parse import quote

    import uvicorn

    from archivist.web.app import make_datasette, start
    from archivist.web.guard import guarded

    workspace = workspace_folder(workspace, "serve")
    if no_index and source_arguments:
        refuse("--source adds a source to read, and --no-index reads nothing: give one or the other.", "INVALID_SOURCE")
    log_sources = checked_sources(source_arguments)
    origins = checked_origins(allowed_origins)
    token = server_token(no_token)
    if no_index:
        db_path = archive_to_read(workspace, db_path, ", or serve without --no-index")
    else:
        check_archive_to_write(workspace, db_path)
        run_index(workspace, db_path, reports_dir, log_sources)
        if embed:
            run_embed(workspace, None, db_path)
        db_path = db_path or archive_path(workspace)
    allowed = checked_workspaces(allowed_workspaces)
    settings = {
        "workspace": str(workspace.resolve()),
        "allowed_workspaces": [str(folder) for folder in allowed],
        "allowed_hosts": list(allowed_hosts),
        "allowed_origins": origins,
    }
    datasette = make_datasette(db_path, settings)
    asyncio.run(start(datasette))
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
    click.echo(f"Serving {workspace} at {url}" + (f"?token={quote(token, safe='')}" if token else ""))
    tell_token(token, port)
    if root:  # Datasette's own sign-in, behind ours: the browser needs our cookie first
        click.echo(
            f"Sign in as root (after opening the URL above): "
            f"http://{host}:{port}/-/auth-token?token={datasette._root_token}"
        )
    sys.stdout.flush()
    app = datasette.app()  # its plugin checks Host and Origin; the token is checked outside it (see web.host_guard)
    if watch:
        start_following(workspace, db_path)
    served = guarded(app, allowed_hosts, token, origins) if token else app
    uvicorn.run(served, host=host, port=port, log_level="warning")


@cli.command()
@click.argument("workspace", required=False, envvar=WORKSPACE_ENV, type=click.Path(path_type=Path))
@db_option
@click.option("--http", is_flag=True, help="Serve streamable HTTP at /mcp instead of stdio.")
@click.option("-p", "--port", default=8765, show_default=True, type=int, help="With --http: the port (on 127.0.0.1).")
@allow_workspace_option
@allow_host_option
@allow_origin_option
@no_token_option
@click.option("--conformance-fixtures", is_flag=True, hidden=True, help="Add the MCP conformance suite's fixture tool.")
@watch_option
def mcp(
    workspace: Path | None,
    db_path: Path | None,
    http: bool,
    port: int,
    allowed_workspaces: tuple[Path, ...],
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    no_token: bool,
    conformance_fixtures: bool,
    watch: bool,
) -> None:
    """Serve WORKSPACE's archive to MCP clients (stdio by default).

    Without WORKSPACE, the ARCHIVIST_WORKSPACE environment variable names it (MCP
    clients start servers from a working directory of their own). Tools read WORKSPACE and the workspaces given with
    --allow-workspace, nothing else.
    With --http it is closed by default: every request must carry
    Authorization: Bearer <token>, a token made at each start (or ARCHIVIST_TOKEN's) and
    printed on stderr with the URL; --no-token serves without one, on purpose. Requests
    must come for 127.0.0.1 or localhost (DNS rebinding protection; --allow-host adds
    names), and a request with an Origin must come from the server's own origin (the
    same scheme, host and port; --allow-origin adds origins). Nothing but protocol is
    written to stdout.
    """
    workspace = workspace_folder(workspace, "mcp")
    given = click.get_current_context().get_parameter_source
    for name, flag in (("allowed_origins", "--allow-origin"), ("no_token", "--no-token")):
        if not http and given(name) == click.core.ParameterSource.COMMANDLINE:
            refuse(
                f"{flag} is for the HTTP server: give --http too, or leave it out (stdio has no origin nor token).",
                "INVALID_PARAMETER",
            )
    origins = checked_origins(allowed_origins) if http else []
    token = server_token(no_token) if http else None
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
    from archivist.web.guard import guarded

    server = create_server(db_path, workspace.resolve(), allowed, conformance_fixtures)
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        host="127.0.0.1",
        # the guard below checks Host, Origin and the token, as it does for archivist serve
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    # stderr: stdout may be a client's protocol stream
    click.echo(f"MCP (streamable HTTP) for {workspace} at http://127.0.0.1:{port}/mcp", err=True)
    if token is not None:
        click.echo(f"Send the header Authorization: Bearer {token}", err=True)
    tell_token(token, port)
    served = guarded(app, allowed_hosts, token, origins)
    uvicorn.run(served, host="127.0.0.1", port=port, log_level="warning")


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


SNIPPET_WIDTH = 160  # characters of a result's one-line snippet
TITLE_WIDTH = 100  # and of its title (a memory's title is its text)


def snippet_line(excerpt: str | None, width: int = SNIPPET_WIDTH) -> str:
    """An excerpt on one line of at most ``width`` characters, its ``<mark>`` words highlighted."""
    parts = _MARK_RE.split(" ".join((excerpt or "").split()))  # plain, marked, plain, marked, ...
    shown, left = [], width
    for index, part in enumerate(parts):
        cut = part[:left]
        if cut:
            shown.append(click.style(cut, fg="yellow", bold=True) if index % 2 else cut)
        left -= len(cut)
        if left <= 0 and (len(cut) < len(part) or any(parts[index + 1 :])):  # more text follows
            shown.append("…")
            break
    return "".join(shown)


def _agent(row: dict[str, Any]) -> str | None:
    """The agent of a conversation read from an agent log: its path starts with the log's kind."""
    kind, colon, _ = str(row.get("path") or "").partition(":")
    return kind if colon and row.get("kind") == "conversation" and kind in LOG_KINDS else None


def _score(value: Any) -> str | None:
    return f"score {value:.3g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def print_search(response: dict[str, Any]) -> None:
    """The unified search's page as a compact list, then where the page lies among all results."""
    results = response["results"]
    if not response["total"]:
        click.echo("No results.", err=True)
        return
    for row in results:
        facts = [row["kind"], row.get("entity_type"), _agent(row), row.get("date"), _score(row.get("score"))]
        title = " ".join(str(row.get("title") or row.get("path") or "").split())
        title = title if len(title) <= TITLE_WIDTH else title[: TITLE_WIDTH - 1] + "…"
        click.echo(
            click.style(f"{row['rank']}. {title}", bold=True)
            + f"  [{' · '.join(dict.fromkeys(str(fact) for fact in facts if fact))}]"
        )
        message = row.get("message") or {}
        text = snippet_line(message.get("snippet") or row.get("excerpt"))
        if text:
            click.echo(f"   {text}")
        where = f"   {row['path']} · id {row['id']}"
        click.echo(where + (f" · message #{message['index']}" if message.get("index") is not None else ""))
    page, pages, total = response["page"], response["total_pages"], response["total"]
    line = f"Page {page} of {pages} · {plural(total, 'result')}"
    if response["has_more"]:
        line += f" · next: --page {page + 1}"
    elif not results:
        line += f" · the last page is {pages}"
    click.echo(line)


# The search's options that take lists: each is the /api/search parameter of the same name.
SEARCH_LISTS = ("entities", "types", "tags", "product_ids", "agents", "projects", "models", "files")
# What only the unified search takes, as its options are named.
UNIFIED_ONLY = {
    "mode": "--mode",
    "entities": "--kind",
    "tags": "--tag",
    "match_all": "--match-all",
    "start_date": "--start-date",
    "end_date": "--end-date",
    "product_ids": "--product-id",
    "agents": "--agent",
    "projects": "--project",
    "models": "--model",
    "files": "--file",
    "match_mode": "--match-mode",
    "min_similarity": "--min-similarity",
    "document": "--document",
    "page": "--page",
    "page_size": "--page-size",
    "output": "--output",
}
# The options that --conversations and --reports do not take.
NOT_TAKEN = {
    "--conversations": UNIFIED_ONLY,
    "--reports": {**UNIFIED_ONLY, "date_range": "--date-range", "types": "--type"},
}


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

    if not schema.upgrade(path):
        return False
    click.echo(f"Upgraded the archive at {shown(path)} to this version's schema.", err=True)
    return True


def listed(values: Iterable[str]) -> str:
    """A list option as /api/search takes it: the values of each use, comma-separated."""
    return ",".join(value for value in values if value.strip())


def search_params(query: str, mode: str | None, db_path: Path, options: dict[str, Any]) -> dict[str, str]:
    """The unified search's parameters, as /api/search takes them; only those given."""
    if mode is None:
        from archivist.archive.schema import is_embedded

        mode = "" if is_embedded(db_path) else "keyword"  # "": the search's own default, hybrid
        info("Mode: " + ("hybrid" if not mode else "keyword (the archive has no embeddings yet: `archivist embed`)"))
    params = {"query": query, "mode": mode}
    options = dict(options)
    date_range = options.pop("date_range")
    if date_range:
        if options["start_date"] or options["end_date"]:
            refuse(
                "--date-range sets both --start-date and --end-date: give --date-range, or the two bounds.",
                "INVALID_PARAMETER",
            )
        from archivist.queries import rules

        try:
            options["start_date"] = options["end_date"] = rules.date_range(date_range)
        except ArchivistError as error:
            fail(error)
    for name, value in options.items():
        given = listed(value) if name in SEARCH_LISTS else ("true" if value is True else value)
        if given:
            params[name] = given
    return {name: value for name, value in params.items() if value}


@cli.command()
@workspace_argument
@click.argument("query", required=False, metavar="[QUERY]")
@db_option
@click.option(
    "--mode",
    default=None,
    metavar="MODE",
    help="hybrid (keyword and semantic rankings fused; the default once the archive is embedded), keyword (BM25; "
    "the default before), semantic, similar (with --document), tag (with --tag), recent, scan or faceted.",
)
@click.option(
    "--kind",
    "--kinds",
    "--entities",
    "entities",
    multiple=True,
    metavar="KIND",
    help="Only these kinds: conversation, report, memory, record, note, or record entity types "
    "(product, feature, test, bug). Repeat it, or separate them with commas (so for every list option).",
)
@click.option(
    "--type",
    "--types",
    "types",
    multiple=True,
    metavar="TYPE",
    help="Only these types: conversation types (debug, plan, ...), memory types, entity types or report commands. "
    "With --conversations: one conversation type.",
)
@click.option("--tag", "--tags", "tags", multiple=True, metavar="TAG", help="Only documents with any of these tags.")
@click.option("--match-all", is_flag=True, help="With --tag: every tag must be present.")
@click.option(
    "--start-date",
    default="",
    metavar="DATE",
    help='From this date: ISO date or datetime, YYYY-MM, YYYY, or plain English ("last week", "yesterday").',
)
@click.option("--end-date", default="", metavar="DATE", help="Until this date, in the same forms (e.g. today).")
@click.option(
    "--date-range",
    default="",
    metavar="YYYY-MM|YYYY-MM-DD",
    help="One month (every day of it) or one day: both bounds at once.",
)
@click.option(
    "--product-id", "--product-ids", "product_ids", multiple=True, metavar="N", help="Only records of these products."
)
@click.option(
    "--agent",
    "--agents",
    "agents",
    multiple=True,
    metavar="AGENT",
    help="Only conversations of these agents: " + ", ".join(LOG_KINDS) + ", or workspace (its own markdown).",
)
@click.option(
    "--project",
    "--projects",
    "projects",
    multiple=True,
    metavar="PROJECT",
    help="Only conversations of these projects: a full path, or its last folder's name.",
)
@click.option(
    "--model", "--models", "models", multiple=True, metavar="MODEL", help="Only conversations that used these models."
)
@click.option(
    "--file",
    "--files",
    "files",
    multiple=True,
    metavar="FILE",
    help="Only conversations that touched these files: a full path, or a file name.",
)
@click.option(
    "--match-mode",
    default="",
    metavar="simple|raw",
    help='simple (the default: plain words) or raw (FTS5 syntax: "phrases", prefix*, AND, OR, NOT, NEAR).',
)
@click.option(
    "--min-similarity",
    default="",
    metavar="X",
    help="Drop semantic candidates below this cosine similarity, -1 to 1 (default: a floor that keeps unrelated text out).",
)
@click.option(
    "--document", default="", metavar="ID|PATH", help="With --mode similar: the document to find neighbours of."
)
@click.option("--page", default="", metavar="N", help="Page number, from 1.")
@click.option("--page-size", default="", metavar="N", help="Results per page, 1 to 100 (default 10).")
@click.option(
    "--limit",
    default="",
    metavar="N",
    help="Another name for --page-size; with --conversations or --reports, the most results (1 to 100).",
)
@click.option(
    "--conversations",
    is_flag=True,
    help="Conversations only, as earlier versions searched (search_workspace): with --date-range, --type and --limit.",
)
@click.option("--reports", is_flag=True, help="Analysis reports only, by substring (search_reports).")
@click.option("--command", "command_filter", default="", help="With --reports: only this command's reports.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the JSON that GET /api/search returns for the same parameters "
    '(with --conversations or --reports: {"results": [...]}).',
)
@click.option(
    "--output",
    type=click.Choice(["brief", "full"]),
    default=None,
    help="With --json: brief (the default, as /api/search: what is needed to choose) or full "
    "(paths, tags, excerpts, facets and timeline).",
)
def search(
    workspace: Path | None,
    query: str | None,
    db_path: Path | None,
    mode: str | None,
    types: tuple[str, ...],
    date_range: str,
    limit: str,
    conversations: bool,
    reports: bool,
    command_filter: str,
    as_json: bool,
    **filters: Any,
) -> None:
    """Search everything in WORKSPACE's archive for QUERY: conversations, reports, memories, records and notes.

    It runs the search that GET /api/search and the MCP search tool run, with the same
    filters, and prints each result's title, kind, date, score, a snippet and the path and
    id to open it, then the page. Without QUERY, --mode recent, tag or faceted list by the
    filters alone. --conversations and --reports run the searches of earlier versions.
    """
    workspace = workspace_folder(workspace, "search")
    if query is None and (mode is None or conversations or reports):
        refuse(
            "No query given: run `archivist search WORKSPACE QUERY` "
            "(or list by filters alone: --mode recent, --mode faceted).",
            "INVALID_QUERY",
        )
    if conversations or reports:
        which = "--reports" if reports else "--conversations"
        if conversations and reports:
            refuse("--conversations and --reports are two searches: give one of them.", "INVALID_PARAMETER")
        values = {**filters, "mode": mode is not None, "date_range": date_range, "types": types}
        misplaced = [option for name, option in NOT_TAKEN[which].items() if values[name]]
        if misplaced:
            refuse(
                f"{which} takes no {', '.join(misplaced)}: leave {which} out to search everything.",
                "INVALID_PARAMETER",
            )
    elif command_filter:
        refuse(
            "--command goes with --reports (to search everything: --kind report --type COMMAND).", "INVALID_PARAMETER"
        )
    if filters.get("output") and not as_json:
        refuse(
            "--output chooses what --json prints: give --json too (the list printed is always whole).",
            "INVALID_PARAMETER",
        )
    db_path = archive_to_read(workspace, db_path, upgrade=False)
    if reports or conversations:
        if reports:
            name, params = "search_reports", {"query": query, "command_filter": command_filter, "max_results": limit}
        else:
            name = "search_workspace"
            params = {"query": query, "date_range": date_range, "conversation_type": listed(types), "limit": limit}
        rows = answer(db_path, lambda archive: archive.run(name, params))
        if as_json:
            click.echo(json.dumps({"results": rows}, indent=2, ensure_ascii=False))
        elif not rows:
            click.echo("No results.", err=True)
        else:
            (_print_reports if reports else _print_conversations)(rows)
        return
    options = {**filters, "types": types, "date_range": date_range, "limit": limit}
    given = search_params(query or "", mode, db_path, options)
    # the list printed here shows paths; the JSON is /api/search's, brief unless asked
    from archivist.queries.rules import API_OUTPUT

    given["output"] = (filters.get("output") or API_OUTPUT) if as_json else "full"
    info(f"Searching {db_path}: " + " ".join(f"{name}={value!r}" for name, value in given.items()))
    started = time.perf_counter()
    response = answer(db_path, lambda archive: archive.search(given))
    info(f"{plural(response['total'], 'result')} in {time.perf_counter() - started:.2f}s")
    if as_json:
        click.echo(json.dumps(response, indent=2, ensure_ascii=False))
    else:
        print_search(response)


def answer(db_path: Path, ask: Callable[[Any], T]) -> T:
    """What ``ask`` gets from the archive's canned queries; an ArchivistError is the command's one-line error."""
    archive = open_archive(db_path)
    try:
        return ask(archive)
    except ArchivistError as error:
        fail(error)
    finally:
        archive.close()


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


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
    from archivist.archive import schema, sessions

    workspace = workspace_folder(workspace, "sources")
    if discover:
        found = sessions.discover()
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
                        kind, source_path = sessions.parse_argument(argument)
                        removed = sessions.remove(db, kind, source_path)
                    except ArchivistError as error:
                        fail(error)
                    click.echo(f"Removed {kind}: {source_path} ({removed} documents)", err=True)
        finally:
            db.close()
    db = schema.open_archive(path)
    try:
        rows = sessions.listing(db)
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
    from archivist.archive.watch import follow

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
