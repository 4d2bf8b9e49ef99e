"""``archivist history``: every tool call of a workspace's agent logs that read or changed a file,
newest first (the ``file_history`` canned query, as every other surface runs it)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import click

from archivist.cli.arguments import db_option, declared_option
from archivist.queries.declarations import HISTORY_LIMIT, QUERIES
from archivist.queries.diffs import stored_diffs
from archivist.queries.params import MAX_LIMIT as PAGE  # calls asked for at a time, every page printed

QUERY = QUERIES["file_history"]


@click.command()
@click.argument("workspace", metavar="WORKSPACE", type=click.Path(path_type=Path))
@click.argument("path", metavar="PATH")
@db_option
@declared_option(HISTORY_LIMIT, "--limit")
@declared_option(QUERY.param("changes"), "--changes")
@click.option("--json", "as_json", is_flag=True, help="Print the calls as JSON.")
def history(workspace: Path, path: str, db_path: Path | None, limit: int, changes: bool, as_json: bool) -> None:
    """Every session and tool call of WORKSPACE's agent logs that read or changed PATH, newest first.

    PATH is a file's full path as the logs recorded it, or its name alone (every path that ends in
    it). Each line: when, the agent, the session's title, the message's number in it, the tool and
    the path as the call named it; with --changes, only the calls that changed it, each followed
    by its changes as unified diffs. In JSON every call says whether it changed the file and
    carries its diffs.
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
        if changes:
            params["changes"] = "true"
        rows, told = answer_told(database, functools.partial(_page, params))
        total = rows[0]["total"] if rows else total
        calls += [_call(row) for row in rows]
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
        click.echo(f"No tool call of the archive's agent logs {'changed' if changes else 'names'} {path}.")
        tell_building(told)
        return
    for call in calls:
        when = (call["timestamp"] or "")[:16].replace("T", " ") or "(no time)"
        click.echo(f"{when}  {call['agent']:<12} {call['title']}  #{call['seq']}  {call['tool']}  {call['file']}")
        for shown in call["diffs"] if changes else []:
            click.echo("\n".join(f"    {line}" for line in shown["diff"].splitlines()))
            if shown["diff_cut"]:
                click.echo(f"    … the diff has {shown['diff_lines']:,} lines")
    if total > len(calls):
        click.echo(f"… {total - len(calls)} more: --limit {total}")
    tell_building(told)


def _call(row: dict[str, Any]) -> dict[str, Any]:
    """A row of ``file_history`` as the command gives it: its commands a list, whether it changed
    the file, and its changes to the file as diffs (never the texts whole)."""
    return {
        **{key: value for key, value in row.items() if key != "edits"},
        "commands": json.loads(row["commands"] or "[]"),
        "changed": bool(row.get("changed")),
        "diffs": stored_diffs(row.get("edits"), row["file"]),
    }


def _page(params: dict[str, str], archive: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = archive.run("file_history", params)
    return rows
