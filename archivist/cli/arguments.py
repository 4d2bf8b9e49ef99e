"""The arguments and options that several commands share: the workspace, its archive,
agent-log sources, following changes, and what a server allows; and an option made from a declared
parameter (``declared_option``), with the declaration's bounds, choices, default and help."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from archivist.queries.params import Param

F = TypeVar("F", bound=Callable[..., Any])

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


class KindsOption(click.Option):
    """An option whose help ends with the kinds of agent log registered when it is read (asked of the
    registry then, not when the command line starts: naming them loads the installed plugins)."""

    @property
    def help(self) -> str:
        from archivist.agents import registry

        return f"{self.said} Kinds: {', '.join(registry.names())}."

    @help.setter
    def help(self, said: str | None) -> None:
        self.said = said or ""


source_option = click.option(
    "--source",
    "source_arguments",
    cls=KindsOption,
    multiple=True,
    metavar="KIND=PATH",
    help="Also read an agent log where it is (remembered for later runs).",
)
discover_option = click.option(
    "--discover",
    is_flag=True,
    help="Also read every agent's logs found in their default locations on this machine (read-only); "
    "with no WORKSPACE, the archive is kept in the platform's data folder, created if missing.",
)
reports_option = click.option(
    "--reports-dir",
    default=None,
    help="Folder of the workspace holding <command>/*.md reports (default: as last indexed, else 'reports').",
)


def replicate_options(what: str) -> Callable[[F], F]:
    """--replicate-to and --replicate-endpoint: the archive streamed to a replica with Litestream while
    the command ``what`` (serving, indexing) runs, as `archivist replicate` does (docs/replication.md)."""

    def decorate(command: F) -> F:
        command = click.option(
            "--replicate-endpoint", metavar="URL", help="The S3-compatible server of --replicate-to, if not AWS S3."
        )(command)
        return click.option(
            "--replicate-to",
            "replicate_to",
            metavar="URL",
            help=f"Also stream the archive to this replica with Litestream while {what} (as `archivist replicate` does).",
        )(command)

    return decorate


config_dir_option = click.option(
    "--config-dir",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="A Datasette configuration folder, served over the package's defaults: its metadata.yml (merged over "
    "the archive's descriptions), datasette.yaml (settings and plugin blocks), templates/ (searched first), "
    "plugins/ (loaded) and static/.",
)


class DeclaredOption(click.Option):
    """An option that gives declared parameters (``archivist.queries.params.Param``; ``archivist search``'s
    may give one to each search it runs): its bounds, choices, default and help are the declaration's."""

    def __init__(self, *args: Any, declared: tuple[Param, ...], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.declared = declared


def declared_type(param: Param) -> click.ParamType | None:
    """The click type of a declared parameter's value: a range from its bounds, a choice from its choices."""
    if param.type == "integer" and (param.minimum is not None or param.maximum is not None):
        low, high = param.minimum, param.maximum
        return click.IntRange(None if low is None else int(low), None if high is None else int(high))
    if param.choices and not param.many:
        return click.Choice(param.choices)
    return None


def declared_option(param: Param, *flags: str, metavar: str | None = None) -> Callable[[F], F]:
    """The option ``flags`` of a command, as ``param`` declares it (a list: the option repeated)."""
    flag = param.type == "boolean"
    default: Any = () if param.many else param.default if param.default not in ("", None) else None
    return click.option(
        *flags,
        param.name,
        cls=DeclaredOption,
        declared=(param,),
        type=None if flag else declared_type(param),
        multiple=param.many,
        is_flag=flag,
        default=False if flag else default,
        show_default=default not in (None, ()) and not flag,
        metavar=None if flag or (param.choices and not param.many) else metavar or param.metavar,
        help=param.described("cli"),
    )
