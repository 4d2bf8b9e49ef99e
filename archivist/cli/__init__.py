"""The ``archivist`` command line.

The ``cli`` group, its ``-v`` option and the list of its commands are here;
each command lives in the module named for what it does: ``indexing`` (index, embed,
status, watch), ``serving`` (serve), ``mcp_server`` (mcp), ``searching`` and
``search_output`` (search), ``log_sources`` (sources), ``usage`` (usage), ``history`` (history). What they share: ``arguments``
(options), ``workspaces`` (the workspace and its archive) and ``output`` (what is told on
stderr, and logging's one set-up, which the group makes for every command). Every module
imports at its top only what starting the command line needs: the commands import the
rest when they run.
"""

from __future__ import annotations

import os

import click

from archivist.cli.history import history
from archivist.cli.indexing import embed, index, status, watch
from archivist.cli.log_sources import sources
from archivist.cli.mcp_server import mcp
from archivist.cli.output import VERBOSE, interactive, log_to_stderr, set_up_logging
from archivist.cli.search_output import SNIPPET_WIDTH, snippet_line
from archivist.cli.searching import search
from archivist.cli.serving import serve
from archivist.cli.usage import usage

__all__ = ["SNIPPET_WIDTH", "cli", "log_to_stderr", "snippet_line"]


@click.group(commands=[index, embed, serve, mcp, search, sources, status, usage, history, watch])
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Tell what is being done, one line per step on stderr, and for a server one line per request "
    "(without it: only warnings and errors).",
)
@click.version_option(package_name="archivist")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """Archivist: one searchable SQLite archive of your AI conversations, reports, memories and records.

    Start with `archivist serve --discover`: it finds every agent's logs on this machine (read-only),
    indexes them into an archive in this user's data folder and opens them in the browser.
    """
    if verbose:
        ctx.meta[VERBOSE] = True
    restore = set_up_logging(ctx.invoked_subcommand, verbose)  # logging's one set-up, for every command
    if restore is not None:
        ctx.call_on_close(restore)
    if not interactive():  # the model's libraries draw their progress bars only for a terminal too
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
