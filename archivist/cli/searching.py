"""``archivist search``: its options, the /api/search parameters they make, and the
searches of earlier versions (--conversations, --reports)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import click

from archivist.agents.kinds import KINDS as LOG_KINDS
from archivist.cli.arguments import db_option, workspace_argument
from archivist.cli.output import fail, info, plural, refuse
from archivist.cli.search_output import print_conversations, print_reports, print_search
from archivist.cli.workspaces import archive_to_read, open_archive, workspace_folder
from archivist.errors import ArchivistError

T = TypeVar("T")


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


@click.command()
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
            (print_reports if reports else print_conversations)(rows)
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
