"""``archivist usage``: the tokens and cost of a workspace's agent logs, by day, month, 5-hour block,
model, agent, project or session (the ``usage`` canned query, as every other surface runs it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from archivist.cli.arguments import db_option, declared_option, workspace_argument
from archivist.queries.declarations import QUERIES
from archivist.queries.newest import empty_hint, newest_day, opening_range, range_note, range_told
from archivist.queries.totals import (
    USAGE_TOKENS,
    recorded,
    unrecorded,
    unrecorded_line,
    usage_totals,
)

QUERY = QUERIES["usage"]
# each token column of a usage row, and its heading
TOKEN_COLUMNS = tuple(zip(USAGE_TOKENS, ("input", "output", "cache write", "cache read", "total"), strict=True))


@click.command()
@workspace_argument
@db_option
@declared_option(QUERY.param("start_date"), "--since", metavar="DATE")
@declared_option(QUERY.param("end_date"), "--until", metavar="DATE")
@declared_option(QUERY.param("group_by"), "--by")
@declared_option(QUERY.param("agents"), "--agent", metavar="KIND")
@declared_option(QUERY.param("projects"), "--project", metavar="PROJECT")
@declared_option(QUERY.param("limit"), "--limit")
@declared_option(QUERY.param("offset"), "--offset")
@click.option("--json", "as_json", is_flag=True, help="Print the rows and their totals as JSON.")
def usage(
    workspace: Path | None,
    db_path: Path | None,
    start_date: str | None,
    end_date: str | None,
    group_by: str,
    agents: tuple[str, ...],
    projects: tuple[str, ...],
    limit: int,
    offset: int,
    as_json: bool,
) -> None:
    """Tokens (input, output, cache write, cache read) and cost of WORKSPACE's agent logs, one row per
    day, month, 5-hour block, model, agent, project or session (newest first, a page by --limit and
    --offset). An agent whose logs record no usage is listed as such, with its sessions.

    With no date it shows the 30 days to the newest day with a message, and says so; --since ''
    shows all time. An empty answer says where the newest session is.

    Cost is at the prices of maintained price data (genai-prices, named below the table); a model
    the data does not know is counted as unpriced, never guessed. What a log itself says a response
    cost is its stated cost.
    """
    from archivist.cli.search_output import tell_building, with_building
    from archivist.cli.searching import answer_told
    from archivist.cli.workspaces import archive_to_read, workspace_folder

    path = archive_to_read(workspace_folder(workspace, "usage"), db_path)
    newest = newest_day(path)
    opened = start_date is None and end_date is None
    bounds = opening_range(newest) if opened else {"start_date": start_date or "", "end_date": end_date or ""}
    params = {
        "group_by": group_by,
        **bounds,
        "agents": ",".join(agents),
        "projects": json.dumps(list(projects)) if projects else "",
        "limit": str(limit),
        "offset": str(offset),
    }
    rows, told = answer_told(path, lambda archive: archive.run("usage", params))
    rows = [usage_row(row) for row in rows]
    by_agent = rows if group_by == "agent" else answer_told(path, lambda a: a.run("usage", _by_agent(params)))[0]
    silent_agents = [{"agent": row["agent"], "sessions": row["sessions"]} for row in unrecorded(by_agent)]
    totals = usage_totals(rows)
    if as_json:
        answered = {
            "group_by": group_by,
            "rows": rows,
            "totals": totals,
            "no_usage_recorded": silent_agents,
            "range": range_told(newest)
            if opened
            else {**bounds, "default": False, "newest": newest, "note": range_note(bounds, newest, False)},
        }
        if not rows:
            answered["hint"] = empty_hint(newest, "--since ")
        click.echo(json.dumps(with_building(answered, told), indent=2, ensure_ascii=False))
        return
    silent = unrecorded_line(unrecorded(by_agent))
    rows = recorded(rows)
    if not rows:
        click.echo(silent or "No usage recorded in this range: no agent log of these kinds records its tokens.")
        if not silent:
            click.echo(empty_hint(newest, "--since ") + ".")
        _tell_range(newest, opened)
        tell_building(told)
        return
    click.echo(_table(group_by, rows, totals))
    if silent:
        click.echo(silent)
    data = next((row["price_data"] for row in rows if row["price_data"]), None)
    unpriced = totals["unpriced"]
    note = f"Cost at {data} prices" if data else "No price data"
    if unpriced:
        note += f"; {unpriced} response{'s' if unpriced != 1 else ''} of models it does not know: unpriced"
    click.echo(note + ".")
    _tell_range(newest, opened)
    tell_building(told)


def _tell_range(newest: str | None, opened: bool) -> None:
    """The range shown when no date was given, and how to see all time."""
    if opened:
        click.echo(f"Shown: {range_told(newest)['note']} (--since '' for all time).")


def _by_agent(params: dict[str, str]) -> dict[str, str]:
    """The same range and filters, one row per agent (where an agent that records no usage is told)."""
    return {**params, "group_by": "agent", "limit": "", "offset": ""}


def usage_row(row: dict[str, Any]) -> dict[str, Any]:
    """A usage row as JSON says it: its models a list, usage_recorded true or false."""
    return {**row, "models": json.loads(row["models"] or "[]"), "usage_recorded": bool(row["usage_recorded"])}


def _table(group_by: str, rows: list[dict[str, Any]], totals: dict[str, Any]) -> str:
    about = ["agent", "title"] if group_by == "session" else []
    header = [group_by, *about, *(name for _, name in TOKEN_COLUMNS), "cost", "responses"]
    lines = [
        [
            str(row["key"] if row["key"] is not None else "(none)"),
            *(_short(row[column]) for column in about),
            *_figures(row),
            str(row["responses"]),
        ]
        for row in rows
    ]
    lines.append(["total", *("" for _ in about), *_figures(totals), str(totals["responses"])])
    widths = [max(len(line[index]) for line in [header, *lines]) for index in range(len(header))]

    def shown(cells: list[str]) -> str:
        return "  ".join(
            cell.ljust(width) if index <= len(about) else cell.rjust(width)
            for index, (cell, width) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join([shown(header), *(shown(line) for line in lines)])


def _short(text: str | None, most: int = 40) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= most else text[: most - 1] + "…"


def _figures(row: dict[str, Any]) -> list[str]:
    cost = row["cost"]
    return [f"{row[column]:,}" for column, _ in TOKEN_COLUMNS] + ["—" if cost is None else f"${cost:,.4f}"]
