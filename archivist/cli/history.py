"""``archivist history``: every tool call of a workspace's agent logs that read or changed a file,
newest first (the ``file_history`` canned query, as every other surface runs it)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import click

from archivist.cli.arguments import db_option
from archivist.queries.params import MAX_LIMIT as PAGE  # calls asked for at a time, every page printed


@click.command()
@click.argument("workspace", metavar="WORKSPACE", type=click.Path(path_type=Path))
@click.argument("path", metavar="PATH")
@db_option
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True, help="Most calls to print.")
@click.option("--json", "as_json", is_flag=True, help="Print the calls as JSON.")
def history(workspace: Path, path: str, db_path: Path | None, limit: int, as_json: bool) -> None:
    """Every session and tool call of WORKSPACE's agent logs that read or changed PATH, newest first.

    PATH is a file's full path as the logs recorded it, or its name alone (every path that ends in
    it). Each line: when, the agent, the session's title, the message's number in it, the tool and
    the path as the call named it.
    """
    from archivist.cli.search_output import tell_building, with_building
    from archivist.cli.searching import answer_told
    from archivist.cli.workspaces import archive_to_read, workspace_folder

    database = archive_to_read(workspace_folder(workspace, "history"), db_path)
    calls: list[dict[str, Any]] = []
    total = 0
    told: dict[str, Any] | None = None
    while len(calls) < limit:
        params = {"path": path, "limit": str(min(PAGE, limit - len(calls))), "offset": str(len(calls))}
        rows, told = answer_told(database, functools.partial(_page, params))
        total = rows[0]["total"] if rows else total
        calls += [{**row, "commands": json.loads(row["commands"] or "[]")} for row in rows]
        if not rows or not rows[-1]["has_more"]:
            break
    for call in calls:
        for paging in ("total", "has_more", "next_offset"):
            call.pop(paging, None)
    if as_json:
        answered = with_building({"path": path, "total": total, "calls": calls}, told)
        click.echo(json.dumps(answered, indent=2, ensure_ascii=False))
        return
    if not calls:
        click.echo(f"No tool call of the archive's agent logs names {path}.")
        tell_building(told)
        return
    for call in calls:
        when = (call["timestamp"] or "")[:16].replace("T", " ") or "(no time)"
        click.echo(f"{when}  {call['agent']:<12} {call['title']}  #{call['seq']}  {call['tool']}  {call['file']}")
    if total > len(calls):
        click.echo(f"… {total - len(calls)} more: --limit {total}")
    tell_building(told)


def _page(params: dict[str, str], archive: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = archive.run("file_history", params)
    return rows
