"""``archivist serve``: the archive in Datasette; and who may call a server (the allowed
origins, the token and what is said of it), which ``archivist mcp --http`` shares."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from archivist.cli.arguments import (
    ALLOW_ORIGINS_ENV,
    allow_host_option,
    allow_origin_option,
    allow_workspace_option,
    config_dir_option,
    db_option,
    discover_option,
    no_token_option,
    replicate_options,
    reports_option,
    source_option,
    watch_option,
    workspace_argument,
)
from archivist.cli.indexing import index_while_serving, refuse_restored, restored_copy, run_embed, start_following
from archivist.cli.output import fail, is_verbose, refuse, with_request_lines
from archivist.cli.workspaces import (
    archive_to_read,
    check_archive_to_write,
    checked_sources,
    checked_workspaces,
    discovered_sources,
    replicating,
    workspace_folder,
)
from archivist.workspace import archive_path


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


@click.command()
@workspace_argument
@db_option
@reports_option
@click.option("-h", "--host", default="127.0.0.1", show_default=True)
@click.option("-p", "--port", default=8001, show_default=True, type=int)
@click.option("--no-index", is_flag=True, help="Serve the archive as it is, without indexing first.")
@click.option("--root", is_flag=True, help="Print a sign-in URL for the root user (needed to run enrichments).")
@click.option("--embed", is_flag=True, help="Also embed new and changed documents before serving.")
@source_option
@discover_option
@click.option(
    "--open/--no-open",
    "open_browser",
    default=None,
    help="Open the served pages in a web browser once the server listens "
    "(default: with --discover, when run in a terminal).",
)
@watch_option
@allow_workspace_option
@allow_host_option
@allow_origin_option
@no_token_option
@config_dir_option
@replicate_options("serving")
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
    discover: bool,
    open_browser: bool | None,
    watch: bool,
    allowed_workspaces: tuple[Path, ...],
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    no_token: bool,
    config_dir: Path | None,
    replicate_to: str | None,
    replicate_endpoint: str | None,
) -> None:
    """Index WORKSPACE, then serve its archive in Datasette (--watch: and keep it up to date).

    Closed by default: every request must carry a token, made at each start (or
    ARCHIVIST_TOKEN's). The printed URL carries it and signs a browser in; other clients
    send Authorization: Bearer <token>. --no-token serves without one, on purpose.
    Bound to loopback (the default), it answers only requests addressed to localhost or
    127.0.0.1 (--allow-host adds names), and only pages of its own origin (the same
    scheme, host and port) may call it (--allow-origin adds origins). Every page sends a
    Content-Security-Policy that allows only the app's own resources.
    --config-dir serves a Datasette configuration folder over the package's defaults.
    It prints its URL, warnings and errors; with -v, one line per request too.
    --discover also reads every agent's logs found in their default locations and needs no
    WORKSPACE: `archivist serve --discover` indexes one's own history (kept in the platform's
    data folder), the newest sessions first, serves it and opens a browser on it.
    --replicate-to streams the archive to a replica while it serves (docs/replication.md);
    a copy restored from a replica (`archivist restore`) is served as it is, never indexed into.
    """
    import asyncio
    from urllib.parse import quote

    from archivist.errors import ArchivistError
    from archivist.web.app import make_datasette, start
    from archivist.web.guard import guarded

    if no_index and discover:
        refuse(
            "--discover reads the agents' logs, and --no-index reads nothing: give one or the other.", "INVALID_SOURCE"
        )
    workspace = workspace_folder(workspace, "serve", discover)
    if config_dir is not None and not config_dir.is_dir():
        refuse(
            f"No folder {config_dir}: --config-dir takes a Datasette configuration folder "
            "(metadata.yml, datasette.yaml, templates/, plugins/).",
        )
    if no_index and source_arguments:
        refuse("--source adds a source to read, and --no-index reads nothing: give one or the other.", "INVALID_SOURCE")
    log_sources = checked_sources(source_arguments)
    if discover:
        log_sources += discovered_sources()
    origins = checked_origins(allowed_origins)
    token = server_token(no_token)
    restored = restored_copy(db_path or archive_path(workspace))
    if restored is not None and (watch or embed or source_arguments or discover):
        refuse_restored(workspace, db_path, "serve --watch" if watch else "serve --embed" if embed else "serve")
    if restored is not None and not no_index:
        click.echo(
            f"Serving a copy restored from {restored} as it is (--no-index): it is never indexed into.", err=True
        )
        no_index = True
    if no_index:
        db_path = archive_to_read(workspace, db_path, ", or serve without --no-index")
        replicating(workspace, db_path, replicate_to, replicate_endpoint)
    else:
        check_archive_to_write(workspace, db_path)
        replicating(workspace, db_path, replicate_to, replicate_endpoint)

        def then() -> None:  # once the index is done
            if embed:
                run_embed(workspace, None, db_path)
            if watch:
                start_following(workspace, db_path)

        index_while_serving(workspace, db_path, reports_dir, log_sources, then)
        db_path = db_path or archive_path(workspace)
    allowed = checked_workspaces(allowed_workspaces)
    settings = {
        "workspace": str(workspace.resolve()),
        "allowed_workspaces": [str(folder) for folder in allowed],
        "allowed_hosts": list(allowed_hosts),
        "allowed_origins": origins,
    }
    try:
        datasette = make_datasette(db_path, settings, config_dir)
    except ArchivistError as error:
        fail(error)
    asyncio.run(start(datasette))
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
    signed_in = url + (f"?token={quote(token, safe='')}" if token else "")
    click.echo(f"Serving {workspace} at {signed_in}")
    tell_token(token, port)
    if root:  # Datasette's own sign-in, behind ours: the browser needs our cookie first
        click.echo(
            f"Sign in as root (after opening the URL above): "
            f"http://{host}:{port}/-/auth-token?token={datasette._root_token}"
        )
    sys.stdout.flush()
    app = datasette.app()  # its plugin checks Host and Origin; the token is checked outside it (see web.host_guard)
    if watch and no_index:
        start_following(workspace, db_path)
    served = guarded(app, allowed_hosts, token, origins) if token else app
    if open_browser or (open_browser is None and discover and sys.stdout.isatty()):
        open_when_listening(signed_in, host, port)
    run_server(served, host, port)


BROWSER_PATIENCE = 60.0  # how long the browser waits for the server to listen


def open_when_listening(url: str, host: str, port: int) -> None:
    """Open ``url`` in the person's web browser (BROWSER names another), once the server listens on ``port``."""
    import socket
    import threading
    import time
    import webbrowser

    address = "127.0.0.1" if host in ("0.0.0.0", "") else "::1" if host == "::" else host

    def wait_then_open() -> None:
        deadline = time.monotonic() + BROWSER_PATIENCE
        while time.monotonic() < deadline:
            try:
                with socket.create_connection((address, port), timeout=0.5):
                    break
            except OSError:
                time.sleep(0.2)
        else:
            return
        if not webbrowser.open(url):
            click.echo(f"Could not open a browser: open {url}", err=True)

    threading.Thread(target=wait_then_open, name="archivist-browser", daemon=True).start()


def run_server(app: Any, host: str, port: int) -> None:
    """uvicorn on ``app``, its loggers left to the command's one set-up (``output.set_up_logging``)
    rather than configured its own way; with -v, one line per request (``output.with_request_lines``)."""
    import uvicorn

    served = with_request_lines(app) if is_verbose() else app
    uvicorn.run(served, host=host, port=port, log_config=None, log_level="warning", access_log=False)
