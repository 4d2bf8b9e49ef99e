"""``archivist sources``: a workspace's agent-log sources, listed with their counts,
discovered in their default locations, or removed with their documents."""

from __future__ import annotations

import json
from pathlib import Path

import click

from archivist.cli.arguments import db_option, workspace_argument
from archivist.cli.indexing import run_index
from archivist.cli.output import fail, plural
from archivist.cli.workspaces import archive_to_read, check_archive_to_write, discovered_sources, workspace_folder
from archivist.errors import ArchivistError


class _SourcesCommand(click.Command):
    """Its help names the variables that move each kind's default location, as the kinds register them
    (asked of the registry only when the help is shown: naming them loads the installed plugins)."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from archivist.agents import registry

        self.help = (self.help or "").replace("{variables}", ", ".join(registry.variables()))
        super().format_help_text(ctx, formatter)


@click.command(cls=_SourcesCommand)
@workspace_argument
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the sources as JSON.")
@click.option("--discover", is_flag=True, help="Add the default locations of each kind that exist, then index.")
@click.option("--remove", "removals", multiple=True, metavar="KIND=PATH", help="Forget a source and its documents.")
def sources(
    workspace: Path | None, db_path: Path | None, as_json: bool, discover: bool, removals: tuple[str, ...]
) -> None:
    """List WORKSPACE's agent-log sources with their document counts and last read.

    --discover looks for each kind's default location on this system ({variables}
    move them) and adds those that exist (with no WORKSPACE: into the workspace kept in the
    platform's data folder); --remove drops a source and its documents (also
    of a kind no longer installed). Sources are read where they are, never copied or changed.
    """
    from archivist.archive import building, schema, sessions
    from archivist.archive.database import Database, connect_read_only
    from archivist.cli.search_output import tell_building

    workspace = workspace_folder(workspace, "sources", discover)
    if discover:
        found = discovered_sources()
        check_archive_to_write(workspace, db_path)
        run_index(workspace, db_path, None, found, err=as_json)  # (stdout is the JSON alone)
    path = archive_to_read(workspace, db_path)
    if removals:
        db = schema.open_archive(path)
        try:
            with db.atomic():
                for argument in removals:
                    try:
                        kind, source_path = sessions.parse_argument(argument, registered=False)
                        removed = sessions.remove(db, kind, source_path)
                    except ArchivistError as error:
                        fail(error)
                    click.echo(f"Removed {kind}: {source_path} ({removed} documents)", err=True)
        finally:
            db.close()
    db = Database(connect_read_only(path))  # (listing writes nothing: a full disk still lists)
    try:
        rows = sessions.listing(db)
        told = building.told(db)
    finally:
        db.close()
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        tell_building(told, err=True)  # (the JSON is the list of sources: the line goes to stderr)
        return
    if not rows:
        click.echo("No agent-log sources. Add one with: archivist index WORKSPACE --source KIND=PATH")
    for row in rows:
        click.echo(
            f"{row['kind']:15} {row['path']}  {plural(row['documents'], 'conversation')}, "
            f"{plural(row['messages'], 'message')}, "
            f"last read {row['read_at'] or 'never'}"
        )
    tell_building(told)
