"""``archivist mcp``: the archive served to MCP clients, over stdio (the default) or
streamable HTTP. The MCP SDK and the server load only when the command runs, and what only
--http or --watch uses (the HTTP server's options, the indexer) only when it is given."""

from __future__ import annotations

from pathlib import Path

import click

from archivist.cli.arguments import (
    WORKSPACE_ENV,
    allow_host_option,
    allow_origin_option,
    allow_workspace_option,
    db_option,
    no_token_option,
    watch_option,
)
from archivist.cli.output import refuse
from archivist.cli.workspaces import archive_to_read, checked_workspaces, workspace_folder


@click.command()
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
    written to stdout. With --http and -v, one line per request on stderr.
    """
    workspace = workspace_folder(workspace, "mcp")
    given = click.get_current_context().get_parameter_source
    for name, flag in (("allowed_origins", "--allow-origin"), ("no_token", "--no-token")):
        if not http and given(name) == click.core.ParameterSource.COMMANDLINE:
            refuse(
                f"{flag} is for the HTTP server: give --http too, or leave it out (stdio has no origin nor token).",
                "INVALID_PARAMETER",
            )
    if http:
        from archivist.cli.serving import checked_origins, server_token

        origins = checked_origins(allowed_origins)
        token = server_token(no_token)
    db_path = archive_to_read(workspace, db_path)
    allowed = checked_workspaces(allowed_workspaces)
    if watch:
        from archivist.cli.indexing import start_following

        start_following(workspace, db_path)
    if not http:
        from archivist.mcp.stdio import serve as serve_stdio  # answers initialize before the MCP SDK loads

        serve_stdio(db_path, workspace.resolve(), allowed, conformance_fixtures)
        return
    from mcp.server.transport_security import TransportSecuritySettings

    from archivist.cli.serving import run_server, tell_token
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
    run_server(guarded(app, allowed_hosts, token, origins), "127.0.0.1", port)
