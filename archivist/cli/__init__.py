"""The ``archivist`` command line.

The ``cli`` group, its ``-v`` option and the list of its commands are here;
each command lives in the module named for what it does (``COMMANDS``): ``indexing`` (index,
embed, status, watch), ``serving`` (serve), ``mcp_server`` (mcp), ``searching`` and
``search_output`` (search), ``log_sources`` (sources), ``usage`` (usage), ``history`` (history), ``sync`` (sync),
``replication`` (replicate, restore). What they share: ``arguments``
(options), ``workspaces`` (the workspace and its archive) and ``output`` (what is told on
stderr, and logging's one set-up, which the group makes for every command). A command's module
is imported when the command is asked for (``Commands``): a search does not load the indexer's
options, nor ``mcp`` the declarations of the searches' options. Every module imports at its top
only what starting its command needs: the commands import the rest when they run.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator, MutableMapping
from typing import Any

import click

from archivist.cli.output import VERBOSE, interactive, set_up_logging

__all__ = ["SNIPPET_WIDTH", "cli", "log_to_stderr", "snippet_line"]

# Each command by the module of this package that holds it, in the order ``--help`` lists them.
COMMANDS = {
    "index": "indexing",
    "embed": "indexing",
    "serve": "serving",
    "mcp": "mcp_server",
    "search": "searching",
    "sources": "log_sources",
    "status": "indexing",
    "usage": "usage",
    "history": "history",
    "watch": "indexing",
    "replicate": "replication",
    "restore": "replication",
    "sync": "sync",
}
# What the package's modules hold that is asked of the package itself.
ELSEWHERE = {"SNIPPET_WIDTH": "search_output", "snippet_line": "search_output", "log_to_stderr": "output"}


class Commands(MutableMapping[str, click.Command]):
    """The group's commands by name, each imported from its module (``COMMANDS``) when first asked
    for; a command added (``add_command``) is held as it is given."""

    def __init__(self, modules: dict[str, str]) -> None:
        self.modules = dict(modules)
        self.loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self.loaded:
            module = importlib.import_module(f"{__name__}.{self.modules[name]}")
            self.loaded[name] = getattr(module, name)
        return self.loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self.modules.setdefault(name, "")
        self.loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self.modules[name]
        self.loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self.modules)

    def __len__(self) -> int:
        return len(self.modules)

    def __contains__(self, name: object) -> bool:
        return name in self.modules


def __getattr__(name: str) -> Any:
    """A name that the package's modules hold (``ELSEWHERE``), imported when asked for."""
    if name not in ELSEWHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{ELSEWHERE[name]}"), name)


@click.group(commands=Commands(COMMANDS))
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
